"""The familiarity frame test judges the table's tiles only (issue 16): a rack's or the face-down pool's tiles caught
in the play area's bounding box (``TileReader.read(on_table=...)``) no longer make the table's own tiles unfamiliar,
while a table laid with another edition's tiles still is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from tests.vision.runtime.fakes import FixedBoxes, classified
from vision.runtime.detections import Detections
from vision.runtime.detector import Region
from vision.runtime.familiarity import UNFAMILIAR_CONFIDENCE, Familiarity
from vision.runtime.reader import CUT_CONFIDENCE, TableColour, TileReader

DIMS = 4
TABLE = [[100 + 30 * i, 100, 124 + 30 * i, 132] for i in range(6)]
"""Six tiles in a row on the table (x 100-274)."""
RACK = [[100 + 30 * i, 400, 124 + 30 * i, 432] for i in range(6)]
"""Six tiles standing in a rack below it, inside the detector's region."""


def _familiarity() -> Familiarity:
    """Identity whitening, every label's mean at 0: a tile's score is its squared offset; tiles over 100 are
    unfamiliar, every tile of a frame of 6+ whose median is over 9 too."""
    return Familiarity(np.zeros((len(ALL_LABELS), DIMS), np.float32), np.eye(DIMS, dtype=np.float32), 100.0, 9.0, 6)


class Looks:
    """A classifier reading every box as red-5 at 0.97, its features offset by the box's look (score = offset^2)."""

    labels = ALL_LABELS

    def __init__(self, offsets: list[float]) -> None:
        self.offsets = offsets

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        raise NotImplementedError

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        n = len(detections)
        probs = np.full((n, len(ALL_LABELS)), 0.03 / (len(ALL_LABELS) - 1), np.float32)
        probs[:, ALL_LABELS.index("red-5")] = 0.97
        features = np.zeros((n, DIMS), np.float32)
        features[:, 0] = self.offsets
        return classified(detections, probs, features)

    def load(self) -> None:
        pass


class Reader(TileReader):
    """A :class:`TileReader` over the fakes with the toy statistics (the shipped ones describe the ONNX model)."""

    @property
    def familiarity(self) -> Familiarity | None:
        return _familiarity()


def _reader(offsets: list[float]) -> Reader:
    return Reader(
        Path("/nonexistent"),
        not_a_tile=0.0,
        colour=TableColour(balance=False, check=False),
        detector=FixedBoxes(TABLE + RACK),
        classifier=Looks(offsets),
        second_look=False,  # the fake's features follow the boxes it was first given, not a crop's look
        turned_look=False,  # (nor a turned crop's)
    )


def _table_only(tiles: Detections) -> np.ndarray:
    return tiles.centers[:, 1] < 300


IMAGE = np.full((480, 640, 3), 90, np.uint8)
REGION = Region(0, 0, 640, 480, 640)


def test_rack_tiles_in_the_region_no_longer_make_the_table_unfamiliar() -> None:
    # the table's tiles look familiar (score 4), the rack's, seen from the front, do not (score 64: under the tile
    # threshold, over the frame's): the twelve's median (34) is over the frame threshold, the table's six (4) not
    reader = _reader([2.0] * 6 + [8.0] * 6)
    everything = reader.read(IMAGE, region=REGION).detections
    assert len(everything) == 12 and everything.data["unfamiliar"].all()
    assert (everything.confidence <= UNFAMILIAR_CONFIDENCE).all()
    table = reader.read(IMAGE, region=REGION, on_table=_table_only)
    assert len(table.detections) == 6 and not table.detections.data["unfamiliar"].any()
    assert np.allclose(table.detections.confidence, 0.97) and not len(table.left_out)  # ignored, not left out
    assert (table.detections.centers[:, 1] < 300).all()


def test_another_editions_table_is_still_unfamiliar_beside_familiar_racks() -> None:
    # the table laid with an unfamiliar edition (score 36 each), the racks familiar (score 0): judged with the racks
    # the median (18) is over the threshold too, and judged alone the table still is (no false confidence)
    reader = _reader([6.0] * 6 + [0.0] * 6)
    table = reader.read(IMAGE, region=REGION, on_table=_table_only).detections
    assert len(table) == 6 and table.data["unfamiliar"].all()
    assert (table.confidence <= UNFAMILIAR_CONFIDENCE).all()


def test_a_lone_far_tile_on_the_table_is_still_unfamiliar() -> None:
    reader = _reader([2.0] * 5 + [11.0] + [0.0] * 6)  # one table tile over the tile threshold (121 > 100)
    table = reader.read(IMAGE, region=REGION, on_table=_table_only).detections
    assert table.data["unfamiliar"].tolist() == [False] * 5 + [True]


class Steadiness:
    """A classifier reading every crop as red-5, its features offset by its box's look (found by the box's left edge,
    whichever cut): at 0.97 every time (``wavers=False``), or, for the far tile only (offset over 10), at 0.97 from the
    first batch of crops and 0.5 from any later one (a second look's cuts: ``wavers=True``). The near tiles hold over
    every cut: since 9b17f4b a tile read at 0.97 whose cuts' mean falls under 0.8 takes that mean."""

    labels = ALL_LABELS

    def __init__(self, offsets: list[float], *, wavers: bool) -> None:
        self.offset_at = {float(box[0]): offset for box, offset in zip(TABLE, offsets, strict=True)}
        self.wavers = wavers
        self.calls = 0

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        raise NotImplementedError

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        self.calls += 1
        n = len(detections)
        offsets = np.array([self.offset_at[float(x0)] for x0 in detections.xyxy[:, 0]], np.float32)
        top = np.where((offsets > 10) & (self.wavers and self.calls > 1), 0.5, 0.97).astype(np.float32)
        probs = np.repeat(((1 - top) / (len(ALL_LABELS) - 1))[:, None], len(ALL_LABELS), axis=1)
        probs[:, ALL_LABELS.index("red-5")] = top
        features = np.zeros((n, DIMS), np.float32)
        features[:, 0] = offsets
        return classified(detections, probs, features)

    def load(self) -> None:
        pass


@pytest.mark.parametrize(
    ("wavers", "last_tile"),
    [
        (False, 0.97),  # the far tile's reading holds over the second look's cuts: confirmed, kept confident
        (True, UNFAMILIAR_CONFIDENCE),  # it wavers: unfamiliar, capped
    ],
)
def test_the_reader_asks_its_second_look_about_a_tile_unfamiliar_alone(wavers: bool, last_tile: float) -> None:
    reader = Reader(
        Path("/nonexistent"),
        not_a_tile=0.0,
        colour=TableColour(balance=False, check=False),
        detector=FixedBoxes(TABLE),
        classifier=Steadiness([2.0] * 5 + [11.0], wavers=wavers),  # scores 4 and 121: the last over 100
    )
    table = reader.read(IMAGE, region=REGION).detections
    assert table.data["confirmed"].tolist() == [False] * 5 + [not wavers]
    assert table.data["unfamiliar"].tolist() == [False] * 5 + [wavers]
    assert table.confidence.tolist() == pytest.approx([0.97] * 5 + [last_tile])


def test_tiles_the_edge_of_the_picture_may_cut_are_uncertain() -> None:
    # six familiar tiles: one at the photo's left edge, one at its bottom
    boxes = [[0, 100, 24, 132], [100, 100, 124, 132], [200, 100, 224, 132], [300, 100, 324, 132]]
    boxes += [[400, 448, 424, 480], [500, 100, 524, 132]]
    reader = _reader([0.0] * 6)
    reader.detector = FixedBoxes(boxes)
    tiles = reader.read(IMAGE, region=REGION).detections
    assert tiles.data["cut"].tolist() == [True, False, False, False, True, False]
    assert tiles.confidence.tolist() == pytest.approx([CUT_CONFIDENCE, 0.97, 0.97, 0.97, CUT_CONFIDENCE, 0.97])
    assert reader.read(IMAGE).detections.data["cut"].tolist() == [True, False, False, False, True, False]
    past = reader.read(IMAGE, region=Region(-50, -50, 700, 600, 640)).detections  # a region past the photo's edges:
    assert past.data["cut"].tolist() == [True, False, False, False, True, False]  # the photo's edges still cut
    region_edge = reader.read(IMAGE, region=Region(99.5, 0, 640, 480, 640)).detections  # the region's own edge too
    assert region_edge.data["cut"].tolist() == [True, True, False, False, True, False]
