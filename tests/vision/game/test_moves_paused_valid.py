"""A move paused with a VALID table laid so far (issue 16): the table is ruled OK as it settles (a ruling within a
second, DESIGN), and the same hands back before the turn passes go on with the move. The turn is then ruled again as
one move, an *amendment* of the move ruled (a move line with the same number and ``amends``; readers take the last
line of a number): from the table before it, so a tile laid then taken back or the table rearranged with no tile
from the rack is no false REVERT. Where the whole is at fault and the rest alone would not be (a manipulation in the
opening turn) it is ruled REVIEW, never REVERT nor OK (``PipelineConfig.hold_valid`` holds the valid table instead:
one move, one line).

Scripted scenes as in ``test_moves_paused_midway.py``: 2 players, player 0 at the bottom, player 1 at the top.
"""

from __future__ import annotations

from typing import Any

from referee.events import last_rulings
from tests.vision.game.scripted import moves, same, started, summary
from vision.game.moves import GameKeeper
from vision.game.pipeline import PipelineConfig

START = "[black-3 blue-3 orange-3] [red-3 red-4 red-5 red-6]"
EXTENDED = "[black-3 blue-3 orange-3] [red-3 red-4 red-5 red-6 red-7]"
"""Player 0 has laid red-7 from the rack: valid, a move in itself."""
REARRANGED = "[black-3 blue-3 orange-3 red-3] [red-4 red-5 red-6 red-7]"
"""...then moves red-3 from the run to the group: table tiles only."""
LONG_RUN = f"{START} [red-10 red-11 red-12 red-13]"
SHORT_RUN = f"{START} [red-10 red-11 red-12]"
"""A run of four laid, then red-13 taken back to the rack: within a turn, a player's own tile."""
PAUSE_S = 1.5


def game(scenes: Any, start: str = START, opened: bool = True, **options: Any) -> Any:
    keeper = GameKeeper("official", 2)
    keeper.opened = [opened, opened]
    return started(scenes, start, keeper=keeper, **options)


def paused(feed: Any, first: str, then: str) -> None:
    """Player 0 lays ``first``, the hands leave, the table settles; they come back and make it ``then``."""
    feed.hands("bottom", first)
    feed.run(1.0 + PAUSE_S - 1.0)
    feed.hands("bottom", then)
    feed.run(2.0)


def test_the_table_rearranged_after_a_pause_is_no_revert(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom", EXTENDED)
    feed.run(1.0)
    assert summary(feed.events) == [(1, 0, "play", "ok")]  # ruled within a second, as any move
    feed.run(PAUSE_S - 1.0)
    feed.hands("bottom", REARRANGED)
    feed.run(1.0)
    feed.scene.arm = "top"  # the next player: the turn has passed
    feed.run(0.5)
    [_, amended] = moves(feed.events)  # alone: no tile from the rack, REVERT; as one move: OK
    assert (amended["number"], amended["amends"], amended["player"], amended["ruling"]["verdict"]) == (1, 1, 0, "ok")
    assert same(amended["before"], START) and same(amended["after"], REARRANGED)
    assert amended["ruling"]["played"] == ["red-7"]
    assert [m["number"] for m in last_rulings(moves(feed.events))] == [1]
    assert feed.pipeline.keeper.player == 1 and feed.pipeline.keeper.moves == 1


def test_a_tile_taken_back_after_a_pause_is_no_revert(scenes: Any) -> None:
    feed = game(scenes)
    paused(feed, LONG_RUN, SHORT_RUN)
    feed.run(6.0)  # still for pause_hold_s: the turn has passed
    # alone: a tile returned to the rack, REVERT; as one move: a run of three laid
    assert summary(feed.events) == [(1, 0, "play", "ok"), (1, 0, "play", "ok")]
    assert moves(feed.events)[1]["ruling"]["played"] == ["red-10", "red-11", "red-12"]


def test_a_manipulation_in_the_opening_turn_after_a_pause_is_not_lost(scenes: Any) -> None:
    feed = game(scenes, start="[black-5 blue-5 orange-5]", opened=False)
    paused(
        feed,
        "[black-5 blue-5 orange-5] [red-10 red-11 red-12]",
        "[black-5 blue-5 orange-5 red-5] [red-10 red-11 red-12]",
    )
    # the opening (33 points) is OK; red-5 added to a set on the table in the same turn is an opening manipulation,
    # which ruled alone (the player has opened by then) would be OK; the whole at fault is held for the turn to end
    assert summary(feed.events) == [(1, 0, "play", "ok")]
    feed.run(6.0)
    assert summary(feed.events) == [(1, 0, "play", "ok"), (1, 0, "play", "review")]
    amended = moves(feed.events)[1]
    assert amended["amends"] == 1 and amended["ruling"]["penalty_tiles"] == 0
    assert "as one move with it this is revert, alone ok" in " ".join(amended["ruling"]["notes"])


def test_after_the_referees_word_on_the_first_part_the_rest_is_a_move_of_its_own(scenes: Any) -> None:
    # the station's "the ruling stands" came between: the move is not amended past it; the rest alone would be a
    # REVERT (no tile from the rack) where the whole is OK, so it is REVIEW, as before amendments
    feed = game(scenes)
    feed.hands("bottom", EXTENDED)
    feed.run(1.0)
    feed.pipeline.keeper.apply({"event": "override", "action": "accept", "move": 1, "time_s": feed.time_s})
    feed.run(PAUSE_S - 1.0)
    feed.hands("bottom", REARRANGED)
    feed.run(1.0)
    feed.scene.arm = "top"
    feed.run(0.5)
    assert summary(feed.events) == [(1, 0, "play", "ok"), (2, 0, "play", "review")]
    assert "amends" not in moves(feed.events)[1]
    assert "as one move with it this is ok, alone revert" in " ".join(moves(feed.events)[1]["ruling"]["notes"])


def test_after_the_next_players_hands_a_move_is_ruled_alone(scenes: Any) -> None:
    feed = game(scenes)
    feed.hands("bottom", EXTENDED)
    feed.run(1.0)
    feed.hands("top")  # player 1 draws
    feed.run(7.0)
    feed.hands("bottom", REARRANGED)  # player 0 again, a new turn: no tile from the rack
    feed.run(7.0)
    assert summary(feed.events) == [(1, 0, "play", "ok"), (2, 1, "draw", "ok"), (3, 0, "play", "revert")]


def test_a_move_going_on_that_the_rules_rule_alike_is_ruled_as_it_is(scenes: Any) -> None:
    feed = game(scenes)
    paused(feed, EXTENDED, f"{EXTENDED} [blue-10 blue-11 blue-12]")  # more tiles from the rack: OK either way
    assert summary(feed.events) == [(1, 0, "play", "ok"), (1, 0, "play", "ok")]  # at once: no wait for the turn
    assert moves(feed.events)[1]["ruling"]["played"] == ["red-7", "blue-10", "blue-11", "blue-12"]


def test_with_valid_tables_held_the_move_going_on_is_one_move(scenes: Any) -> None:
    feed = game(scenes, config=PipelineConfig(hold_valid=True))
    paused(feed, EXTENDED, REARRANGED)
    assert moves(feed.events) == []  # held: the move may go on
    feed.scene.arm = "top"
    feed.run(0.5)
    assert summary(feed.events) == [(1, 0, "play", "ok")]


def test_the_same_hands_touching_the_table_after_their_move_make_no_draw(scenes: Any) -> None:
    # straightening a tile after the move: the table settles as the move left it, which alone would be a draw
    feed = game(scenes)
    feed.hands("bottom", EXTENDED)
    feed.run(1.5)
    feed.hands("bottom")
    feed.run(8.0)
    assert summary(feed.events) == [(1, 0, "play", "ok")]


def test_a_tile_added_after_a_pause_and_taken_back_again_leaves_the_move_as_ruled(scenes: Any) -> None:
    # valid, paused, a tile more (a set of two: held), paused, taken back: the move is the one ruled OK
    feed = game(scenes)
    paused(feed, EXTENDED, f"{EXTENDED} [blue-10 blue-11]")
    assert summary(feed.events) == [(1, 0, "play", "ok")]
    feed.run(PAUSE_S - 1.0)
    feed.hands("bottom", EXTENDED)
    feed.run(8.0)
    assert summary(feed.events) == [(1, 0, "play", "ok")]


def test_a_move_ruled_in_parts_then_taken_back_whole_keeps_its_fault_and_invents_no_revert(scenes: Any) -> None:
    # g12 of the bench set: a valid half ruled, the invalid rest held, then the whole move taken back; the rest was
    # taken as going on into the table before the move and the injected violation was lost
    feed = game(scenes)
    paused(feed, EXTENDED, f"{EXTENDED} [blue-10 blue-11]")
    feed.run(PAUSE_S - 1.0)
    feed.hands("bottom", START)
    feed.run(8.0)
    assert_the_rest_keeps_its_fault(feed)


def assert_the_rest_keeps_its_fault(feed: Any) -> None:
    ruled = moves(feed.events)
    # the turn amended as one move at fault (REVERT: the table before it to be put back), the table put back its
    # restore, no move more
    assert summary(feed.events) == [(1, 0, "play", "ok"), (1, 0, "play", "revert")]
    assert same(ruled[1]["after"], f"{EXTENDED} [blue-10 blue-11]") and same(ruled[1]["before"], START)
    assert ruled[1]["amends"] == 1
    assert [(r["after_move"], r["complete"]) for r in feed.of_kind("restore")] == [(1, True)]
    assert feed.pipeline.keeper.player == 1 and feed.pipeline.keeper.pending is None


def test_the_turn_goes_on_while_the_same_hands_keep_working(scenes: Any) -> None:
    # g12 again: the rest held 13 s after the first part was ruled, then taken back whole; pause_hold_s counts from
    # the hands' last settling, not from the first part's ruling, or the turn looks passed and the rest is lost
    feed = game(scenes)
    feed.hands("bottom", EXTENDED)
    feed.run(1.0)
    feed.hands("bottom", EXTENDED, seconds=8.0)  # still at work over the table, nothing changed yet
    feed.hands("bottom", f"{EXTENDED} [blue-10 blue-11]")
    feed.run(1.5)
    feed.hands("bottom", START)
    feed.run(8.0)
    assert_the_rest_keeps_its_fault(feed)
