"""Where a move is cut: a move that pauses (hands off the table, the table still, the same hands back) is one move;
a turn that passes (another seat's hands, the clock, a still table) still ends the move (RULES.md §3).

Scripted scenes at 6 samples a second (``tests/vision/conftest.py``), 2 players: player 0 at the bottom, player 1 at
the top. The pause that was ruled twice had the hands off the play area for about 1.1 s; these pause 1.5 s.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.vision.game.scripted import moves, same, started
from vision.game.pipeline import PipelineConfig

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
"""Player 0 (bottom) opens with 33 points."""
PAUSE_S = 1.5


def game(scenes: Any, **options: Any) -> Any:
    """A feed whose pipeline has read the starting table."""
    return started(scenes, START, **options)


def paused_move(feed: Any) -> float:
    """Player 0 reaches in, takes the hands off the table for :data:`PAUSE_S` (nothing laid yet), comes back and
    opens; the time the hands first came."""
    arrived = feed.time_s
    feed.hands("bottom", seconds=1.0)
    feed.run(PAUSE_S)
    feed.hands("bottom", OPENED)
    return arrived


def test_a_move_that_pauses_before_any_tile_is_laid_is_one_move(scenes: Any) -> None:
    feed = game(scenes)
    arrived = paused_move(feed)
    [move] = moves(feed.run(2.0))
    assert (move["number"], move["player"], move["kind"], move["ruling"]["verdict"]) == (1, 0, "play", "ok")
    assert same(move["before"], START) and same(move["after"], OPENED)
    assert move["start_s"] == pytest.approx(arrived, abs=0.2)  # the move began when the hands first came
    assert [e["event"] for e in feed.events] == ["table", "activity", "move"]
    assert feed.pipeline.keeper.player == 1  # and the turn passed once


def test_without_the_hold_the_paused_move_is_ruled_twice(scenes: Any) -> None:
    # the bug as it was: the pause ruled a draw, the rest a second move by the same player
    feed = game(scenes, config=PipelineConfig(pause_hold_s=0.0))
    paused_move(feed)
    feed.run(2.0)
    assert [(m["player"], m["kind"]) for m in moves(feed.events)] == [(0, "draw"), (0, "play")]


def test_a_draw_is_ruled_as_soon_as_the_next_players_hands_come(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom")  # player 0 draws
    feed.run(1.0)  # settled, held: the move may go on
    assert moves(feed.events) == []
    settled_s = feed.time_s
    feed.scene.arm = "top"  # player 1 reaches in
    events = feed.run(0.5)
    [draw] = moves(events)
    assert (draw["number"], draw["player"], draw["kind"], draw["ruling"]["verdict"]) == (1, 0, "draw", "ok")
    assert draw["time_s"] < settled_s  # ruled as it was when it settled, not when the next hands came
    assert [e["event"] for e in events] == ["move", "activity"]  # the next move's activity, logged after it
    feed.scene.show(f"{START} [blue-10 blue-11 blue-12]")  # a valid opening: ruled as it settles (an invalid one
    # is held like the draw, test_moves_paused_midway.py)
    feed.run(1.0)
    feed.scene.arm = None
    [play] = moves(feed.run(2.0))
    assert (play["number"], play["player"], play["hands_seat"], play["kind"]) == (2, 1, 2, "play")
    assert play["turn_started_s"] == draw["time_s"]  # player 1's time ran from the draw


def test_a_draw_left_still_is_ruled_once_the_hold_has_passed(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom")
    feed.run(5.0)
    assert moves(feed.events) == []
    [draw] = moves(feed.run(2.0))  # 6 s (pause_hold_s) after it settled
    assert (draw["player"], draw["kind"]) == (0, "draw")
    # the same hands after that are the next move of a turn order gone wrong, as without the hold
    feed.hands("bottom", OPENED)
    [play] = moves(feed.run(2.0))
    assert (play["number"], play["player"], play["kind"]) == (2, 0, "play")


def test_a_clock_press_after_a_held_draw_rules_it_and_confirms_it(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom")
    feed.run(1.5)
    events = feed.clock()
    assert [e["event"] for e in events] == ["move", "clock"]
    assert events[0]["kind"] == "draw" and events[1]["confirms"] == 1


def test_the_end_of_the_source_rules_a_held_draw(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom")
    feed.run(1.5)
    settled = feed.time_s
    [draw] = moves([e if isinstance(e, dict) else e.to_json() for e in feed.pipeline.finish()])
    assert draw["kind"] == "draw" and draw["time_s"] < settled
    assert feed.pipeline.finish() == []  # once


def test_a_move_that_pauses_twice_is_still_one_move(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom", seconds=1.0)
    feed.run(PAUSE_S)
    feed.hands("bottom", seconds=1.0)
    feed.run(PAUSE_S)
    feed.hands("bottom", OPENED)
    [move] = moves(feed.run(2.0))
    assert (move["number"], move["player"], move["kind"]) == (1, 0, "play")


def test_a_table_quiet_when_the_source_ends_is_settled_and_hands_still_over_it_are_not(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom", OPENED)
    feed.run(0.5)  # the hands have left, the table is quiet: too few readings yet to settle it
    assert moves(feed.events) == [] and feed.pipeline.phase == "settling"
    [move] = moves([e if isinstance(e, dict) else e.to_json() for e in feed.pipeline.finish()])
    assert (move["player"], move["kind"]) == (0, "play") and same(move["after"], OPENED)

    feed = game(scenes)
    feed.scene.arm = "bottom"
    feed.run(1.0)
    feed.scene.show(OPENED)
    feed.run(0.5)  # the video ends with the hands still over the table: the move is not over
    assert feed.pipeline.phase == "active" and feed.pipeline.finish() == []


def test_a_move_that_pauses_after_a_review_is_one_move(scenes: Any) -> None:
    # a review may be put back (the game waits for a restore that is not owed): the next player's pause is no restore
    feed = game(scenes, reader=scenes.PixelReader({"red-12": 0.4}))
    feed.hands("bottom", OPENED)
    feed.run(2.0)
    feed.hands("top", seconds=1.0)
    feed.run(PAUSE_S)
    feed.hands("top", f"{OPENED} [blue-10 blue-11 blue-12]")
    feed.run(2.0)
    summary = [(m["number"], m["player"], m["kind"], m["ruling"]["verdict"]) for m in moves(feed.events)]
    assert summary == [(1, 0, "play", "review"), (2, 1, "play", "ok")]
