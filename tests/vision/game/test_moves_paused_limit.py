"""A turn's time limit over a move ruled in parts (issue 16, RULES.md §6): a player lays part of a turn (ruled as it
settles), pauses, and the same hands go on; the turn is ruled again as one move (``amends``). Its time limit is the
turn's (the turn's start plus the limit), and the camera's evidence of it (the table when the limit passed, hands
after it: :class:`~vision.game.timelimit.LimitWatch`) is the whole turn's, wherever the limit passed: in the part,
in the pause or in the rest. The profile then rules on it as on any move over time; where the table at the limit was
not seen, REVIEW, never a REVERT on a table read at another moment.

Scripted scenes as in ``test_pipeline_time_limit.py``: 6 samples a second, a limit of 6 s agreed at the table, 2
players, player 0 at the bottom; hands leave (and come back) a quarter second from the limit, so the sample that
first reaches it sees the table quiet, and a pause of 3 samples does not settle.
"""

from __future__ import annotations

from typing import Any

import pytest

from referee.table import Table
from tests.vision.game.scripted import TimedTurn, moves, same

LIMIT_S = 6.0
START = "[black-3 blue-3 orange-3] [red-3 red-4 red-5 red-6]"
PART = "[black-3 blue-3 orange-3] [red-3 red-4 red-5 red-6 red-7]"
"""The part: red-7 laid from the rack, valid, ruled as it settles."""
REARRANGED = "[black-3 blue-3 orange-3 red-3] [red-4 red-5 red-6 red-7]"
"""The rest: red-3 moved from the run to the group, table tiles only (alone: no tile from the rack, REVERT)."""
HALF = f"{PART} [blue-10 blue-11]"
"""The rest unfinished: a set of two."""
WHOLE = f"{PART} [blue-10 blue-11 blue-12]"


class Turn(TimedTurn):
    """A feed whose table (``START``) was read, both players opened; :meth:`until` runs it to a time relative to the
    limit of player 0's turn (fixed as the turn starts)."""

    def __init__(self, scenes: Any, profile: str) -> None:
        super().__init__(scenes, profile, START, LIMIT_S)

    def hands(self, start: float, table: str, leave: float) -> None:
        """Player 0's hands over the table from ``start``, the table ``table`` halfway, off at ``leave`` (seconds
        from the limit)."""
        self.until(start)
        self.scene.arm = "bottom"
        self.until((start + leave) / 2)
        self.scene.show(table)
        self.until(leave)
        self.scene.arm = None

    def part(self) -> None:
        """The part, laid well before the limit and ruled as it settles."""
        self.hands(-4.8, PART, -4.2)
        self.until(-2.5)
        assert [(m["number"], m["ruling"]["verdict"]) for m in moves(self.feed.events)] == [(1, "ok")]

    def turn(self) -> dict[str, Any]:
        """The turn as ruled last (the amendment), after the next player's hands end it."""
        self.feed.run(2.0)
        self.scene.arm = "top"
        self.feed.run(0.5)
        ruled = moves(self.feed.events)
        assert ruled[-1]["number"] == 1 and all(m["number"] == 1 for m in ruled), ruled
        return ruled[-1]


def _limit_in_the_part(turn: Turn) -> None:
    # the part's hands leave just before the limit: it settles after it, valid at it (ruled over time, standing);
    # the same hands go on after the limit
    turn.hands(-1.5, PART, -0.25)
    turn.until(+1.2)
    assert [m.get("amends") for m in moves(turn.feed.events)] == [None]
    turn.hands(+1.5, REARRANGED, +2.5)


def _limit_in_the_pause(turn: Turn) -> None:
    turn.part()
    turn.hands(+0.5, REARRANGED, +1.5)  # the same hands back after the limit passed over the still part


def _limit_in_the_rest_finished(turn: Turn) -> None:
    turn.part()
    turn.hands(-1.6, REARRANGED, -0.25)  # the rest finished before the limit: the table settles after it


def _limit_in_the_rest_unfinished(turn: Turn) -> None:
    turn.part()
    turn.hands(-1.6, HALF, -0.25)  # a pause with a set of two as the limit passes...
    turn.hands(+0.25, WHOLE, +0.9)  # ...then the set is finished


# case -> (script, the table at the limit logged with the amended move, hands after it, the turn's final table)
CASES = {
    "in-the-part": (_limit_in_the_part, PART, True, REARRANGED),
    "in-the-pause": (_limit_in_the_pause, PART, True, REARRANGED),
    "in-the-rest-finished": (_limit_in_the_rest_finished, REARRANGED, False, REARRANGED),
    "in-the-rest-unfinished": (_limit_in_the_rest_unfinished, HALF, True, WHOLE),
}
# profile -> the amended move's verdict per case (RULES.md §6): przasnysz rules on the table at the limit (valid:
# the move stands; touched after it: void, rule 20; unfinished: rule 14); the Polish Championship restores a
# manipulation unfinished at the limit and names no ruling for a finished one touched after it
RULINGS = {
    "przasnysz": ("revert", "revert", "ok", "revert"),
    "pl-championship": ("review", "review", "ok", "revert"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_amended_move_carries_the_turns_limit(scenes: Any, case: str) -> None:
    script, at_limit, touched, final = CASES[case]
    turn = Turn(scenes, "przasnysz")
    script(turn)
    move = turn.turn()
    assert move["amends"] == 1 and same(move["before"], START) and same(move["after"], final)
    assert move["turn_started_s"] == pytest.approx(turn.limit_s - LIMIT_S) and move["elapsed_s"] > LIMIT_S
    assert Table.from_json(move["table_at_limit"]).same_layout(Table.parse(at_limit))
    assert move["touched_after_limit"] is touched


@pytest.mark.parametrize("profile", list(RULINGS))
def test_each_profile_rules_the_whole_turn_over_time(scenes: Any, profile: str) -> None:
    verdicts = []
    for script, *_ in CASES.values():
        turn = Turn(scenes, profile)
        script(turn)
        verdicts.append(turn.turn()["ruling"]["verdict"])
    assert tuple(verdicts) == RULINGS[profile]


@pytest.mark.parametrize("profile", ["przasnysz", "pl-championship"])
def test_hands_over_the_table_at_the_turns_limit_leave_it_unknown(scenes: Any, profile: str) -> None:
    # the rest is laid with hands over the table as the turn's limit passes; the hands go on for long, past the
    # limit a move made at the part's settling would have (where the rest alone would be over time), and pause
    # there on a set of two: that table is not the table when the turn's time ran out (unknown: a person decides)
    turn = Turn(scenes, profile)
    turn.part()
    part_limit = turn.keeper.time_limit_at_s
    assert part_limit is not None
    later = part_limit - turn.limit_s
    turn.hands(-1.6, HALF, later - 0.25)  # hands over the table across the turn's limit
    turn.hands(later + 0.25, WHOLE, later + 0.9)  # a set of two, quiet, as a move from the part would time out
    move = turn.turn()
    assert move["amends"] == 1 and same(move["after"], WHOLE)
    assert "table_at_limit" not in move and move["touched_after_limit"] is True
    assert move["ruling"]["verdict"] == "review"  # never a REVERT for the set of two read after the limit


def test_a_turn_within_its_time_is_ruled_in_time_and_watched_up_to_its_limit(scenes: Any) -> None:
    turn = Turn(scenes, "przasnysz")
    pipeline = turn.feed.pipeline
    turn.part()
    turn.hands(-2.2, REARRANGED, -1.8)
    turn.until(-0.5)
    [_, amended] = moves(turn.feed.events)
    assert amended["amends"] == 1 and amended["ruling"]["verdict"] == "ok" and amended["elapsed_s"] < LIMIT_S
    assert "table_at_limit" not in amended and "touched_after_limit" not in amended
    # the same hands may still go on with the turn: a recording is sampled at the full rate up to its limit
    assert pipeline.phase == "stable" and pipeline.near_limit
    turn.scene.arm = "top"  # the next player: the turn has passed, the next limit is a whole turn away
    turn.feed.run(0.5)
    assert not pipeline.near_limit
    assert [m["number"] for m in moves(turn.feed.events)] == [1, 1]
