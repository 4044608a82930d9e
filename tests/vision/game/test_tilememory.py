"""The same tile read again (issue 16): a tile lying as it lay when the table last settled is weighed against its
reading then (vision.game.tilememory), in the pipeline's scripted scenes and on drawn pictures.

On the bench a black-9 left in place, read certain after one move, was capped by the familiarity check after the
next, which made every move extending its set a REVIEW; and a red-10 left in place was read red-13 at 0.98, which
would have sent a clean move back had other doubts not made it a REVIEW.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from referee.table import Table
from referee.tiles import ALL_LABELS
from vision.game.tilememory import SAME_BOX_PX, TileMemory, face_change, same_face
from vision.runtime.detections import Detections
from vision.runtime.reader import Reading

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
EXTENDED = f"{START} [red-10 red-11 red-12 red-13]"
"""Both players have opened (set up so); player 0 (bottom) adds red-13 to the run: a clean move."""


def moves(events: list[dict]) -> list[dict]:
    return [e for e in events if e["event"] == "move"]


def tile_of(table_json: dict, label: str) -> dict:
    return next(t for tiles in table_json["sets"] for t in tiles if t["label"] == label)


class MisreadingReader:
    """The pixel reader, with ``misread`` labels read as others (at the confidence the reader reports for them)."""

    def __init__(self, reader: Any) -> None:
        self.reader, self.misread = reader, {}

    def read(self, image: Any, region: Any = None, on_table: Any = None) -> Reading:
        found = self.reader.read(image, region, on_table=on_table).detections
        labels = [self.misread.get(label, label) for label in found.labels]
        return Reading(found.with_(class_id=np.array([ALL_LABELS.index(label) for label in labels])))


def opened_game(scenes: Any, reader: Any) -> Any:
    from vision.game.moves import GameKeeper

    keeper = GameKeeper("official", 2)
    keeper.opened = [True, True]
    scene = scenes.TableScene()
    scene.show(OPENED)
    feed = scenes.SceneFeed(scenes.pipeline(scene, reader=reader, keeper=keeper), scene)
    [first] = feed.run(2.0)
    assert first["event"] == "table" and tile_of(first["table"], "red-11")["confidence"] == pytest.approx(0.97)
    return feed


# -- in the pipeline -------------------------------------------------------------------------------------------


def test_a_tile_left_in_place_keeps_the_certainty_it_was_read_with(scenes: Any) -> None:
    reader = scenes.PixelReader()
    feed = opened_game(scenes, reader)
    reader.confidence["red-11"] = 0.5  # from now on capped, as the familiarity check capped the bench's black-9
    feed.hands("bottom", EXTENDED)
    [move] = moves(feed.run(8.0))
    assert Table.from_json(move["after"]).same_layout(Table.parse(EXTENDED))
    assert move["ruling"]["verdict"] == "ok" and move["ruling"]["played"] == ["red-13"]
    assert tile_of(move["after"], "red-11")["confidence"] == pytest.approx(0.97)


def test_a_tile_read_now_doubtful_that_was_never_certain_stays_doubtful(scenes: Any) -> None:
    reader = scenes.PixelReader({"red-11": 0.5})  # doubted from the first reading on
    from vision.game.moves import GameKeeper

    keeper = GameKeeper("official", 2)
    keeper.opened = [True, True]
    scene = scenes.TableScene()
    scene.show(OPENED)
    feed = scenes.SceneFeed(scenes.pipeline(scene, reader=reader, keeper=keeper), scene)
    feed.run(2.0)
    feed.hands("bottom", EXTENDED)
    [move] = moves(feed.run(8.0))
    assert move["ruling"]["verdict"] == "review"
    assert {(u["table"], u["tile"]) for u in move["ruling"]["uncertain"]} == {("before", "red-11"), ("after", "red-11")}


def test_a_tile_left_in_place_read_certain_as_another_is_uncertain_not_sent_back(scenes: Any) -> None:
    reader = MisreadingReader(scenes.PixelReader())
    feed = opened_game(scenes, reader)
    reader.misread["red-10"] = "red-1"  # as the bench's red-10 read red-13 at 0.98: the run looks invalid
    feed.hands("bottom", EXTENDED)
    [move] = moves(feed.run(8.0))  # (a table ruled REVERT may be held pause_hold_s first)
    assert move["ruling"]["verdict"] == "review"  # not revert: the same tile was read red-10 for certain before
    assert [u["tile"] for u in move["ruling"]["uncertain"]] == ["red-1"]


# -- the memory on drawn pictures ------------------------------------------------------------------------------

BOX = np.array([100.0, 80.0, 124.0, 112.0], np.float32)


def picture(digit: str = "10", shift: tuple[int, int] = (0, 0), noise: int = 0, seed: int = 0) -> np.ndarray:
    """A tile with a digit on a wooden-brown table (BGR), the tile's box at BOX moved by ``shift``."""
    import cv2

    image = np.full((200, 240, 3), (40, 90, 150), np.uint8)
    x0, y0 = int(BOX[0]) + shift[0], int(BOX[1]) + shift[1]
    cv2.rectangle(image, (x0, y0), (x0 + 23, y0 + 31), (225, 230, 235), -1)
    cv2.putText(image, digit, (x0 + 1, y0 + 22), cv2.FONT_HERSHEY_PLAIN, 1.0, (40, 40, 200), 2)
    if noise:
        jitter = np.random.default_rng(seed).integers(-noise, noise + 1, image.shape)
        image = np.clip(image.astype(np.int16) + jitter, 0, 255).astype(np.uint8)
    return image


def reading(label: str, confidence: float, box: np.ndarray = BOX) -> Detections:
    return Detections.of_boxes([box.tolist()], [confidence], [label])


def remembered(label: str, confidence: float, image: np.ndarray, *, certain: bool = True) -> TileMemory:
    tile = {"label": label, "box": BOX.tolist(), "confidence": confidence, **({} if certain else {"uncertain": True})}
    memory = TileMemory()
    memory.remember(image, Table.from_json({"sets": [[tile]], "loose": []}))
    return memory


@pytest.mark.parametrize(
    "after, same",
    [
        (picture("10", noise=6, seed=1), True),  # the same tile, sensor noise
        (picture("10", shift=(2, -1)), True),  # the camera drifted 2 px
        (picture("13"), False),  # another digit on the same spot
        (picture("8"), False),
    ],
)
def test_same_face(after: np.ndarray, same: bool) -> None:
    assert same_face(picture("10"), after, BOX) is same


def test_a_box_at_the_pictures_edge_is_not_compared() -> None:
    image = picture()
    assert face_change(image, image, np.array([1.0, 80.0, 25.0, 112.0])) is None
    assert not same_face(image, image, np.array([1.0, 80.0, 25.0, 112.0]))


@pytest.mark.parametrize(
    "label, confidence, after, certain, expected",
    [
        ("red-10", 0.5, picture("10"), True, 0.99),  # the same label, now doubted: certain as it was read
        ("red-13", 0.98, picture("10"), True, 0.5),  # another label read certain on the same face: doubted
        ("red-13", 0.98, picture("13"), True, 0.98),  # a new face: a new tile, read on its own
        ("red-10", 0.5, picture("10"), False, 0.5),  # never certain: nothing to keep
        ("red-10", 0.93, picture("10"), True, 0.93),  # certain now too: left as read
    ],
)
def test_weigh(label: str, confidence: float, after: np.ndarray, certain: bool, expected: float) -> None:
    memory = remembered("red-10", 0.99, picture("10"), certain=certain)
    weighed = memory.weigh(after, reading(label, confidence))
    assert float(weighed.confidence[0]) == pytest.approx(expected)
    assert weighed.labels == [label]  # a label is never changed here


def test_a_tile_moved_further_than_a_box_wanders_is_a_new_reading() -> None:
    memory = remembered("red-10", 0.99, picture("10"))
    moved = BOX + np.float32(SAME_BOX_PX + 2)
    assert float(memory.weigh(picture("10"), reading("red-10", 0.5, moved)).confidence[0]) == pytest.approx(0.5)


def test_nothing_remembered_or_forgotten_weighs_nothing() -> None:
    tiles = reading("red-10", 0.5)
    assert TileMemory().weigh(picture(), tiles) is tiles
    memory = remembered("red-10", 0.99, picture())
    memory.forget()
    assert memory.weigh(picture(), tiles) is tiles


def test_a_run_pushed_along_is_no_misreading() -> None:
    """A run extended at its front may be pushed along one place: each spot then shows its neighbour's tile (or the
    new one), read certain, which is no contradiction (drawn tiles may differ too little for the face test)."""
    step = np.array([29.0, 0.0, 29.0, 0.0], np.float32)  # a tile and the gap to the next
    run = [{"label": "red-10", "box": BOX.tolist(), "confidence": 0.99},
           {"label": "red-11", "box": (BOX + step).tolist(), "confidence": 0.99}]  # fmt: skip
    memory = TileMemory()
    memory.remember(picture("10"), Table.from_json({"sets": [run], "loose": []}))
    pushed = Detections.of_boxes([BOX.tolist(), (BOX + step).tolist(), (BOX + 2 * step).tolist()],
                                 [0.98, 0.98, 0.98], ["red-9", "red-10", "red-11"])  # fmt: skip
    weighed = memory.weigh(picture("10"), pushed)  # the same picture at the first spot: only the labels moved
    assert weighed.confidence.tolist() == pytest.approx([0.98, 0.98, 0.98])
