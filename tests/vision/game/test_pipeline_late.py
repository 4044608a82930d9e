"""A settling table whose readings fall behind (a live camera on a busy CPU): hands back before it was read make
the move REVIEW with an ``unread`` line, never a draw (issue 16: never lose a move silently)."""

from __future__ import annotations

from typing import Any

from tests.vision.game.scripted import SlowReader
from vision.game.pipeline import SETTLE_LATE_S, PipelineConfig

START = "[black-5 blue-5 orange-5]"
PAIR = f"{START} [blue-7 blue-8]"
"""Player 0 lays a pair: invalid, a REVERT if the move ended there."""


def play_taken_back(scenes: Any, reading_s: float) -> Any:
    """Player 0 lays a pair, takes the hands off for two samples' worth of readings, then takes the pair back."""
    scene = scenes.TableScene()
    scene.show(START)
    reader = SlowReader(scenes.PixelReader(), reading_s)
    feed = reader.feed = scenes.SceneFeed(scenes.pipeline(scene, reader=reader), scene)
    feed.run(3.0)
    assert [e["event"] for e in feed.events] == ["table"]
    feed.hands("bottom", PAIR)
    while len(feed.pipeline.readings) < 2:  # quiet, then the settling table's first two readings
        feed.run(1 / feed.hz)
    feed.hands("bottom", START)
    feed.run(10.0)  # still: a table as it was is held as a draw, then ruled
    return feed


def test_hands_back_before_a_late_reading_make_the_move_a_review_and_say_so(scenes: Any) -> None:
    feed = play_taken_back(scenes, reading_s=0.5)
    [unread] = feed.of_kind("unread")
    assert unread["cause"] == "the table went still but hands came back before it was read"
    config = PipelineConfig()
    assert unread["seconds"] >= (config.readings - 1) * 0.75 / config.sample_hz + SETTLE_LATE_S
    assert unread["readings"] == 2 and unread["from_s"] < unread["time_s"]
    [move] = feed.of_kind("move")
    assert move["ruling"]["verdict"] == "review"
    assert any("not read" in note for note in move["ruling"]["notes"])
    assert feed.events.index(unread) < feed.events.index(move)


def test_a_short_pause_read_on_schedule_is_one_move_with_no_warning(scenes: Any) -> None:
    """The same hands, with readings that keep up: the pause is too short for the table to settle, so the move
    simply goes on (a play taken back within the turn: the table as it was, a draw)."""
    feed = play_taken_back(scenes, reading_s=0.0)
    assert feed.of_kind("unread") == []
    [move] = feed.of_kind("move")
    assert move["kind"] == "draw" and move["ruling"]["verdict"] == "ok"
