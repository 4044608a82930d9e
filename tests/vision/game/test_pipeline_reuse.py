"""Readings not made again (PipelineConfig.reuse_unchanged): a table that settles showing the picture the still table
was read from takes that table's readings, and an unchanged still table is not verified, on scripted scenes read
back from the pixels (tests/vision/conftest.py). The same scenes with every reading made rule the same."""

from __future__ import annotations

from typing import Any

from referee.table import Table
from vision.game.pipeline import MAX_STATE_READINGS, PipelineConfig

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
EVERY_READING = PipelineConfig(reuse_unchanged=False)


def game(scenes: Any, reader: Any, config: PipelineConfig | None = None) -> Any:
    scene = scenes.TableScene()
    scene.show(START)
    feed = scenes.SceneFeed(scenes.pipeline(scene, reader=reader, config=config), scene)
    assert [e["event"] for e in feed.run(2.0)] == ["table"]
    return feed


def moves(feed: Any) -> list[tuple[str, str, str]]:
    """Each move's kind, verdict and table after, as the game logged them."""
    found = [e for e in feed.events if e["event"] == "move"]
    return [(e["kind"], e["ruling"]["verdict"], str(Table.from_json(e["after"]))) for e in found]


def test_a_draw_settles_on_the_readings_of_the_table_before_it(scenes: Any) -> None:
    rulings = []
    for config in (None, EVERY_READING):
        reader = scenes.PixelReader()
        feed = game(scenes, reader, config)
        read = reader.calls
        feed.hands("bottom")  # hands over the table, nothing laid: the picture settles as it was
        feed.run(PipelineConfig().pause_hold_s + 2.0)  # a draw is ruled once held that long
        rulings.append(moves(feed))
        stats = feed.pipeline.stats
        if config is None:
            assert reader.calls == read and stats.reused == PipelineConfig().readings
        else:
            assert reader.calls >= read + PipelineConfig().readings and stats.reused == 0
    assert rulings[0] == rulings[1] and [kind for kind, _, _ in rulings[0]] == ["draw"]


def test_a_table_that_changed_is_read_again(scenes: Any) -> None:
    reader = scenes.PixelReader()
    feed = game(scenes, reader)
    read = reader.calls
    feed.hands("bottom", OPENED)
    feed.run(2.0)
    assert moves(feed) == [("play", "ok", str(Table.parse(OPENED)))]
    assert reader.calls == read + PipelineConfig().readings and feed.pipeline.stats.reused == 0
    feed.hands("right")  # the next player draws: the opened table's own readings serve
    feed.run(PipelineConfig().pause_hold_s + 2.0)  # a draw is ruled once held that long
    assert [kind for kind, _, _ in moves(feed)] == ["play", "draw"] and reader.calls == read + 3


def test_an_unchanged_still_table_is_not_verified(scenes: Any) -> None:
    reader = scenes.PixelReader()
    feed = game(scenes, reader)
    read = reader.calls
    feed.run(30.0)
    assert reader.calls == read and feed.pipeline.stats.verifies_skipped >= 30.0 / PipelineConfig().verify_every_s - 1


def test_a_still_table_with_uncertain_tiles_is_verified_until_its_readings_are_all_fused(scenes: Any) -> None:
    reader = scenes.PixelReader(confidence={"blue-5": 0.5})  # one tile the reader is unsure of, every time
    feed = game(scenes, reader)
    read = reader.calls
    feed.run(60.0)
    assert reader.calls - read == MAX_STATE_READINGS - PipelineConfig().readings  # refined, then left alone


def test_a_still_table_whose_picture_changed_is_verified(scenes: Any) -> None:
    reader = scenes.PixelReader()
    feed = game(scenes, reader)
    read = reader.calls
    feed.scene.tiles = {xy: label for xy, label in feed.scene.tiles.items() if label != "orange-5"}  # unseen
    feed.pipeline.meter.set_background(feed.scene.frame())  # as if the meter had missed it
    feed.pipeline.meter.previous = feed.pipeline.meter.small(feed.scene.frame())
    feed.run(12.0)
    assert reader.calls > read and feed.pipeline.stats.verifies_skipped == 0
