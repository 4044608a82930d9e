"""The pipeline sees a turn's time limit pass (issue 17, RULES.md §6): the table read at that moment and hands over
the table after it reach the ruling of a move over time, on scripted scenes at 6 samples a second."""

from __future__ import annotations

from typing import Any

import pytest

from referee.table import Table
from tests.vision.game.scripted import TimedTurn

LIMIT_S = 4.0
"""A limit agreed at the table, short so the scenes stay short."""
BEFORE = "[black-5 blue-5 orange-5] [red-10 red-11 red-12]"
VALID = f"{BEFORE} [blue-7 blue-8 blue-9]"
MORE = f"{BEFORE} [blue-7 blue-8 blue-9 blue-10]"
HALF = f"{BEFORE} [blue-7 blue-8]"

# RULES.md §6: profile -> (valid at the limit, touched after it, unfinished at it, hands over it at the limit)
RULINGS = {
    "pl-championship": ("ok", "review", "revert", "review"),
    "wejherowo": ("ok", "review", "revert", "review"),
    "przasnysz": ("ok", "revert", "revert", "review"),
    "official": ("revert", "revert", "revert", "revert"),
    "house": ("ok", "review", "revert", "review"),
}


class LateMove(TimedTurn):
    """A feed whose table (``BEFORE``) was read, both players opened; :meth:`until` runs it to a time relative to
    the limit."""

    def __init__(self, scenes: Any, profile: str) -> None:
        super().__init__(scenes, profile, BEFORE, LIMIT_S)

    def move(self) -> dict[str, Any]:
        self.scene.arm = None
        self.feed.run(3.0)
        moves = self.feed.of_kind("move")
        assert len(moves) == 1, self.feed.events
        return moves[0]


# Hands leave (and come back) half a sample from the limit, so that whichever sample first reaches it (the feed's
# times are sums of 1/6 s) sees the table quiet; settling takes 4 quiet samples, so a pause of 3 stays one move.


def _valid_at_limit(late: LateMove) -> None:
    late.until(-2.5)
    late.scene.arm = "bottom"
    late.until(-1.2)
    late.scene.show(VALID)
    late.until(-0.25)
    late.scene.arm = None  # hands off just before the limit: the table settles after it


def _then_back(table: str) -> Any:
    def script(late: LateMove) -> None:
        late.until(+0.25)
        late.scene.arm = "bottom"
        late.until(+0.5)
        late.scene.show(table)
        late.until(+0.9)

    return script


def _touched_after_limit(late: LateMove) -> None:
    _valid_at_limit(late)
    _then_back(MORE)(late)


def _unfinished_at_limit(late: LateMove) -> None:
    late.until(-2.5)
    late.scene.arm = "bottom"
    late.until(-1.2)
    late.scene.show(HALF)
    late.until(-0.25)
    late.scene.arm = None  # a pause with a set of two, the limit passes...
    _then_back(VALID)(late)  # ...then the set is finished


def _hands_over_it_at_limit(late: LateMove) -> None:
    late.until(-2.5)
    late.scene.arm = "bottom"
    late.until(-1.0)
    late.scene.show(VALID)
    late.until(+1.0)


# case -> (script, table the pipeline must report at the limit, hands after it, final table)
CASES = {
    "valid-at-limit": (_valid_at_limit, VALID, False, VALID),
    "touched-after-limit": (_touched_after_limit, VALID, True, MORE),
    "unfinished-at-limit": (_unfinished_at_limit, HALF, True, VALID),
    "hands-over-it-at-limit": (_hands_over_it_at_limit, None, True, VALID),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_table_at_the_limit_and_hands_after_it_are_logged_with_the_move(scenes: Any, case: str) -> None:
    script, at_limit, touched, final = CASES[case]
    late = LateMove(scenes, "przasnysz")
    script(late)
    move = late.move()
    assert move["elapsed_s"] > LIMIT_S
    assert Table.from_json(move["after"]).same_layout(Table.parse(final))
    if at_limit is None:
        assert "table_at_limit" not in move
    else:
        assert Table.from_json(move["table_at_limit"]).same_layout(Table.parse(at_limit))
    assert move["touched_after_limit"] is touched


@pytest.mark.parametrize("profile", list(RULINGS))
def test_each_profile_rules_on_what_the_camera_saw(scenes: Any, profile: str) -> None:
    verdicts = []
    for script, *_ in CASES.values():
        late = LateMove(scenes, profile)
        script(late)
        verdicts.append(late.move()["ruling"]["verdict"])
    assert tuple(verdicts) == RULINGS[profile]


def test_a_move_in_time_carries_nothing_of_the_limit(scenes: Any) -> None:
    late = LateMove(scenes, "przasnysz")
    late.until(-3.5)
    late.scene.arm = "bottom"
    late.until(-2.8)
    late.scene.show(VALID)
    late.until(-2.2)
    move = late.move()
    assert move["elapsed_s"] < LIMIT_S and move["ruling"]["verdict"] == "ok"
    assert "table_at_limit" not in move and "touched_after_limit" not in move


def test_a_still_table_at_the_limit_is_the_table_the_game_holds(scenes: Any) -> None:
    # nothing happens before the limit; the player lays a set after it: the table at the limit is the one before
    late = LateMove(scenes, "przasnysz")
    late.until(+0.5)
    late.scene.arm = "bottom"
    late.until(+1.0)
    late.scene.show(VALID)
    late.until(+1.5)
    move = late.move()
    assert Table.from_json(move["table_at_limit"]).same_layout(Table.parse(BEFORE))
    assert move["touched_after_limit"] is True
    assert move["ruling"]["verdict"] == "revert"  # przasnysz rule 20: touched after the time ran out


def test_the_clock_key_pressed_late_on_a_still_table_rules_on_it(scenes: Any) -> None:
    late = LateMove(scenes, "pl-championship")
    late.feed.clock()  # the first press: player 1 draws, the clock decides from now on
    late.feed.run(0.5)
    limit = late.keeper.time_limit_at_s
    assert limit is not None
    late.limit_s = limit
    _valid_at_limit(late)
    late.feed.run(2.0)  # settled: the same turn, the table changed
    late.until(+1.2)
    late.feed.clock()
    move = late.feed.of_kind("move")[-1]
    assert move["ended_by"] == "clock" and move["elapsed_s"] > LIMIT_S
    assert Table.from_json(move["table_at_limit"]).same_layout(Table.parse(VALID))
    assert move["touched_after_limit"] is False and move["ruling"]["verdict"] == "ok"


def test_a_limit_first_sampled_long_after_it_passed_is_not_known(scenes: Any) -> None:
    # the camera went unread across the limit (a live source fell behind): the first sample after it, 1.5 s late,
    # shows a quiet table that need not be the table when the time ran out
    late = LateMove(scenes, "przasnysz")
    late.until(-2.5)
    late.scene.arm = "bottom"
    late.until(-1.2)
    late.scene.show(VALID)
    late.until(-0.25)
    late.scene.arm = None
    late.feed.time_s = late.limit_s + 1.5  # nothing sampled in between
    move = late.move()
    assert move["elapsed_s"] > LIMIT_S
    assert "table_at_limit" not in move and "touched_after_limit" not in move
    assert move["ruling"]["verdict"] == "review"  # przasnysz: valid now, but at the limit nobody saw


def test_another_players_arm_after_the_limit_is_no_touch_of_the_move(scenes: Any) -> None:
    # player 1 (bottom) finishes just before the limit; player 2 (top) reaches over the table after it, the table
    # unchanged: not known to be the mover's touch, so przasnysz's rule 20 does not void the move
    late = LateMove(scenes, "przasnysz")
    _valid_at_limit(late)
    late.until(+0.25)
    late.scene.arm = "top"
    late.until(+0.9)
    move = late.move()
    assert move["player"] == 0 and move["elapsed_s"] > LIMIT_S
    assert Table.from_json(move["table_at_limit"]).same_layout(Table.parse(VALID))
    assert "touched_after_limit" not in move  # not known
    assert move["ruling"]["verdict"] == "ok"


def test_a_recording_is_sampled_at_the_full_rate_from_just_before_the_limit_to_the_end_of_the_turn(
    scenes: Any,
) -> None:
    from vision.game.pipeline import LIMIT_LOOKAHEAD_S

    late = LateMove(scenes, "przasnysz")
    pipeline = late.feed.pipeline
    late.until(-LIMIT_LOOKAHEAD_S - 0.5)
    assert pipeline.phase == "stable" and not pipeline.near_limit  # a still table far from the limit: sparse
    late.until(-LIMIT_LOOKAHEAD_S + 0.3)
    assert pipeline.near_limit
    late.until(+1.0)
    assert pipeline.phase == "stable" and pipeline.near_limit  # passed, the turn still under way: a touch counts
    late.scene.arm = "bottom"
    late.until(+1.5)
    late.scene.show(VALID)
    move = late.move()
    assert move["ruling"]["verdict"] == "revert"  # przasnysz: the limit passed with nothing laid, then a play
    assert not pipeline.near_limit  # the next turn's limit is a whole turn away
