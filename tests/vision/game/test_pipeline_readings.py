"""As many readings as a settle needs (PipelineConfig.max_readings, reuse_sure): more looks for a tile that more looks
could settle, bounded by the readings' schedule and by hands coming back; fewer for a sure table whose picture does
not change. Scripted scenes read back from the pixels (tests/vision/conftest.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from referee.table import Table
from referee.tiles import ALL_LABELS
from tests.vision.game.scripted import SlowReader
from vision.game.pipeline import PipelineConfig
from vision.runtime.reader import Reading

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
"""Player 0 (bottom) opens with 33 points: a clean move, OK when every tile is read certain."""
THREE = PipelineConfig(max_readings=3)
"""Never more readings than the usual three."""


class LookingReader:
    """The pixel reader, with the tile ``label`` read as ``looks`` says, one (label, confidence) per reading from the
    moment they are set: the familiarity cap (the same label at 0.5), another label, then back to the pixel reader's."""

    def __init__(self, inner: Any, label: str = "red-11") -> None:
        self.inner, self.label = inner, label
        self.looks: list[tuple[str, float]] = []

    @property
    def calls(self) -> int:
        return int(self.inner.calls)

    def read(self, image: np.ndarray, region: object = None, on_table: Any = None) -> Reading:
        found = self.inner.read(image, region, on_table=on_table).detections
        if not self.looks:
            return Reading(found)
        label, confidence = self.looks.pop(0)
        hit = np.array([name == self.label for name in found.labels])
        class_id = np.where(hit, ALL_LABELS.index(label), found.class_id)
        return Reading(found.with_(class_id=class_id, confidence=np.where(hit, confidence, found.confidence)))


def opening(
    scenes: Any, looks: list[tuple[str, float]], config: PipelineConfig | None = None, hz: float = 6.0, **reader: Any
) -> Any:
    """Player 0 opens; the opening's readings of red-11 are ``looks``. The feed (``hz`` samples a second: 7.5 is a
    15 fps video's, analysed), stopped as the hands leave."""
    scene = scenes.TableScene()
    scene.show(START)
    looking = LookingReader(scenes.PixelReader(**reader))
    feed = scenes.SceneFeed(scenes.pipeline(scene, reader=looking, config=config), scene, hz)
    feed.run(2.0)
    assert [e["event"] for e in feed.events] == ["table"]
    feed.hands("bottom", OPENED)
    looking.looks = list(looks)  # no reading while the hands are there: these are the settling table's
    return feed, looking


def rulings(feed: Any) -> list[tuple[int, str, str, list[str]]]:
    """Each move's player, kind, verdict and uncertain tiles."""
    found = []
    for move in feed.of_kind("move"):
        after = Table.from_json(move["after"])
        uncertain = sorted(str(after.tile_at(place)) for place in after.uncertain)
        found.append((move["player"], move["kind"], move["ruling"]["verdict"], uncertain))
    return found


CAPPED_TWICE = [("red-11", 0.99), ("red-11", 0.5), ("red-11", 0.5)]
"""The familiarity check's cap on two of the three usual readings (its distance wandering about the threshold)."""
VIDEO_HZ = 7.5
"""A 15 fps video sampled every other frame (issue 16's games): five readings fit in the second after the hands."""


def test_a_tile_capped_in_two_of_three_readings_is_read_again_and_the_clean_move_is_ok(scenes: Any) -> None:
    feed, _ = opening(scenes, CAPPED_TWICE, hz=VIDEO_HZ)
    feed.run(2.0)
    assert rulings(feed) == [(0, "play", "ok", [])]
    assert feed.pipeline.stats.extra == 2  # 0.99, 0.5, 0.5, then 0.97 twice: 3 of 5 certain
    three, _ = opening(scenes, CAPPED_TWICE, THREE, hz=VIDEO_HZ)
    three.run(2.0)
    assert rulings(three) == [(0, "play", "review", ["red-11"])] and three.pipeline.stats.extra == 0


def test_the_move_read_longer_is_still_ruled_within_a_second_of_the_hands_leaving(scenes: Any) -> None:
    feed, _ = opening(scenes, CAPPED_TWICE, hz=VIDEO_HZ)
    shown = feed.time_s - 1 / feed.hz  # the last sample with the hands: they left after it, any time until the next
    feed.run(2.0)
    [move] = feed.of_kind("move")
    assert feed.pipeline.stats.extra == 2  # two quiet samples, then five readings (quiet_s 0.3 waited for three)
    assert move["time_s"] - shown <= 1.0 + 1e-9  # DESIGN: a ruling within 1 s of the table settling


def test_samples_too_sparse_for_five_readings_take_only_the_extra_ones_that_rule_within_a_second(scenes: Any) -> None:
    feed, _ = opening(scenes, CAPPED_TWICE)  # 6 samples a second: a fifth reading would rule 7/6 s after the hands
    shown = feed.time_s - 1 / feed.hz
    feed.run(2.0)
    [move] = feed.of_kind("move")
    assert move["time_s"] - shown <= 1.0 + 1e-9
    assert feed.pipeline.stats.extra == 1 and rulings(feed) == [(0, "play", "review", ["red-11"])]  # 2 certain of 4


def test_a_label_split_once_unsurely_is_read_again_and_settled_by_four_of_five(scenes: Any) -> None:
    feed, _ = opening(scenes, [("red-11", 0.97), ("red-13", 0.6), ("red-11", 0.97)], hz=VIDEO_HZ)
    feed.run(2.0)
    assert rulings(feed) == [(0, "play", "ok", [])] and feed.pipeline.stats.extra == 2


def test_a_label_read_confidently_otherwise_stays_uncertain_and_is_not_read_again(scenes: Any) -> None:
    """Two sure labels for one tile: one reading is wrong and more looks cannot say which (REVIEW, never a verdict)."""
    feed, _ = opening(scenes, [("red-11", 0.97), ("red-13", 0.95), ("red-11", 0.97)])
    feed.run(2.0)
    assert rulings(feed) == [(0, "play", "review", ["red-11"])] and feed.pipeline.stats.extra == 0


def test_a_cap_on_every_reading_is_not_read_again_for_nothing(scenes: Any) -> None:
    feed, _ = opening(scenes, [("red-11", 0.5)] * 5)
    feed.run(2.0)
    assert rulings(feed) == [(0, "play", "review", ["red-11"])] and feed.pipeline.stats.extra == 0


def test_readings_behind_their_schedule_settle_on_the_usual_three(scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(START)
    looking = LookingReader(scenes.PixelReader())
    slow = SlowReader(looking, 0.3)  # 0.3 s a reading: the three usual ones end 0.6 s after the first
    feed = slow.feed = scenes.SceneFeed(scenes.pipeline(scene, reader=slow), scene)
    feed.run(3.0)
    feed.hands("bottom", OPENED)
    looking.looks = list(CAPPED_TWICE)
    feed.run(3.0)
    assert rulings(feed) == [(0, "play", "review", ["red-11"])] and feed.pipeline.stats.extra == 0


def test_hands_back_during_the_extra_readings_settle_the_table_on_those_made(scenes: Any) -> None:
    feed, _ = opening(scenes, CAPPED_TWICE)
    pipeline = feed.pipeline
    while len(pipeline.readings) < 3:  # the usual readings made: an extra one is due
        feed.run(1 / feed.hz)
    assert pipeline.phase == "settling"
    feed.hands("top")  # the next player's hands, nothing laid: a draw
    feed.run(PipelineConfig().pause_hold_s + 2.0)
    assert rulings(feed) == [(0, "play", "review", ["red-11"]), (1, "draw", "ok", ["red-11"])]
    assert feed.of_kind("unread") == []


def test_a_sure_table_whose_picture_holds_is_read_once(scenes: Any) -> None:
    feed, reader = opening(scenes, [], default=0.995)  # every tile sure
    read, copied = reader.calls, feed.pipeline.stats.copied
    feed.run(2.0)
    assert rulings(feed) == [(0, "play", "ok", [])]
    assert reader.calls == read + 1 and feed.pipeline.stats.copied == copied + PipelineConfig().readings - 1


def test_a_first_reading_with_a_doubt_is_followed_by_readings_of_their_own(scenes: Any) -> None:
    for looks, config in (([("red-11", 0.97)], None), ([], PipelineConfig(reuse_sure=False))):
        feed, reader = opening(scenes, looks, config, default=0.995)
        read, copied = reader.calls, feed.pipeline.stats.copied
        feed.run(2.0)
        assert rulings(feed) == [(0, "play", "ok", [])]
        assert reader.calls == read + PipelineConfig().readings and feed.pipeline.stats.copied == copied


def test_tiles_that_lay_as_they_lay_read_certain_vouch_for_themselves(scenes: Any) -> None:
    """The tiles of the table before, read 0.97 (certain, not sure) where they lay, vouched for by the tile memory;
    the tiles laid, read sure: the reading is sure. Laid tiles read 0.97: nothing vouches for them, read again."""
    for laid, made in ((0.995, 1), (0.97, PipelineConfig().readings)):
        confidence = dict.fromkeys(["red-10", "red-11", "red-12"], laid)
        feed, reader = opening(scenes, [], confidence=confidence)
        read = reader.calls
        feed.run(2.0)
        assert rulings(feed) == [(0, "play", "ok", [])]
        assert reader.calls == read + made
