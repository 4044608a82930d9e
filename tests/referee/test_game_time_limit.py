"""A move over time as the camera saw it (issue 17, RULES.md §6): the table when the limit passed and hands over it
after the limit reach the ruling through :class:`referee.game.Game`, and the logged move carries them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from referee.events import GameStateError, Move, describe_at_limit, event_from_json, limit_passed_s
from referee.game import Game
from referee.table import Table

BEFORE = Table.parse("[red-1 red-2 red-3]")
VALID = Table.parse("[red-1 red-2 red-3] [blue-9 blue-10 blue-11]")
MORE = Table.parse("[red-1 red-2 red-3 red-4] [blue-9 blue-10 blue-11]")
HALF = Table.parse("[red-1 red-2 red-3] [blue-9 blue-10]")

# case -> (table at the limit, table when the move ended, hands after the limit)
CASES = {
    "valid-at-limit": (VALID, VALID, False),
    "touched-after-limit": (VALID, MORE, True),
    "unfinished-at-limit": (HALF, VALID, True),
    "hands-over-it-at-limit": (None, VALID, True),
}
# RULES.md §6, profile -> case -> verdict
RULINGS = {
    # "a manipulation not finished when the time runs out" is restored; nothing names a change after it
    "pl-championship": {"valid-at-limit": "ok", "touched-after-limit": "review", "unfinished-at-limit": "revert",
                        "hands-over-it-at-limit": "review"},
    "wejherowo": {"valid-at-limit": "ok", "touched-after-limit": "review", "unfinished-at-limit": "revert",
                  "hands-over-it-at-limit": "review"},
    # rule 15: valid at the limit stands; rule 20: touching after it voids the move
    "przasnysz": {"valid-at-limit": "ok", "touched-after-limit": "revert", "unfinished-at-limit": "revert",
                  "hands-over-it-at-limit": "review"},
    # the box rules restore any move over time
    "official": {"valid-at-limit": "revert", "touched-after-limit": "revert", "unfinished-at-limit": "revert",
                 "hands-over-it-at-limit": "revert"},
    "house": {"valid-at-limit": "ok", "touched-after-limit": "review", "unfinished-at-limit": "revert",
              "hands-over-it-at-limit": "review"},
}  # fmt: skip


def _opened_game(profile: str) -> Game:
    game, _ = Game.start(profile, 2).on_settled(BEFORE, time_s=0.0, frame=0, start_s=None, hands_seat=None, hands=False)
    return replace(game, opened=(True, True))


def _late_move(profile: str, case: str, *, clock: bool = False) -> Move:
    at_limit, after, touched = CASES[case]
    game = _opened_game(profile)
    assert game.time_limit_s is not None
    late = game.time_limit_s + 4.0
    if clock:
        game, _ = game.on_clock(time_s=1.0, frame=1)  # player 1 draws: the clock decides from now on
        game, _ = game.on_settled(after, time_s=1.0 + late - 2, frame=2, start_s=2.0, hands_seat=None, hands=True)
        game, events = game.on_clock(
            time_s=1.0 + late, frame=3, table_at_limit=at_limit, touched_after_limit=touched
        )  # fmt: skip
    else:
        game, events = game.on_settled(
            after, time_s=late, frame=1, start_s=2.0, hands_seat=None, hands=True, table_at_limit=at_limit,
            touched_after_limit=touched,
        )  # fmt: skip
    move = events[-1]
    assert isinstance(move, Move)
    return move


@pytest.mark.parametrize("profile", sorted(RULINGS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_camera_evidence_decides_as_the_profile_says(profile: str, case: str) -> None:
    move = _late_move(profile, case)
    assert move.ruling.verdict.value == RULINGS[profile][case]
    assert move.table_at_limit == CASES[case][0]
    assert move.touched_after_limit is CASES[case][2]
    assert event_from_json(move.to_json()) == move  # the log keeps what the ruling was made on


@pytest.mark.parametrize("profile", ["pl-championship", "przasnysz"])
def test_the_clock_key_ends_a_late_move_with_the_evidence_too(profile: str) -> None:
    # the same table at the limit, ruled when the key is pressed
    assert _late_move(profile, "valid-at-limit", clock=True).ruling.verdict.value == "ok"
    assert _late_move(profile, "unfinished-at-limit", clock=True).ruling.verdict.value == "revert"


def test_evidence_for_a_move_in_time_is_neither_ruled_on_nor_logged() -> None:
    # the camera may report the limit of a turn whose move, ruled earlier, was in time (a waiting clock press)
    game = _opened_game("przasnysz")
    game, events = game.on_settled(
        VALID, time_s=10.0, frame=1, start_s=2.0, hands_seat=None, hands=True, table_at_limit=HALF,
        touched_after_limit=True,
    )  # fmt: skip
    move = events[-1]
    assert isinstance(move, Move)
    assert move.ruling.verdict.value == "ok"
    assert move.table_at_limit is None and move.touched_after_limit is None
    assert "table_at_limit" not in move.to_json() and "touched_after_limit" not in move.to_json()


def test_a_move_logged_before_the_fields_existed_still_loads() -> None:
    line = _late_move("official", "valid-at-limit").to_json()
    del line["table_at_limit"], line["touched_after_limit"]
    move = event_from_json(line)
    assert isinstance(move, Move)
    assert move.table_at_limit is None and move.touched_after_limit is None


@pytest.mark.parametrize("value", ["yes", 1, [True]])
def test_touched_after_limit_that_is_not_a_truth_value_is_refused(value: object) -> None:
    line = _late_move("official", "valid-at-limit").to_json()
    line["touched_after_limit"] = value
    with pytest.raises(GameStateError, match="touched_after_limit"):
        event_from_json(line)


def test_a_table_at_limit_that_cannot_be_read_is_refused() -> None:
    line = _late_move("official", "valid-at-limit").to_json()
    line["table_at_limit"] = {"sets": [["purple-99"]]}
    with pytest.raises(GameStateError, match="tables cannot be read"):
        event_from_json(line)


def test_a_correction_is_ruled_again_on_the_table_at_the_limit_corrected_too() -> None:
    # przasnysz: the table at the limit is the move. blue-11 misread as blue-12 at the limit and after (the same
    # reading: nobody touched the tiles): an invalid set, reverted; corrected, the move stands.
    misread = Table.parse("[red-1 red-2 red-3] [blue-9 blue-10 blue-12]")
    game = _opened_game("przasnysz")
    game, events = game.on_settled(
        misread, time_s=44.0, frame=1, start_s=2.0, hands_seat=None, hands=True, table_at_limit=misread,
        touched_after_limit=False,
    )  # fmt: skip
    move = events[-1]
    assert isinstance(move, Move) and move.ruling.verdict.value == "revert"
    override = event_from_json({"event": "override", "action": "correct", "time_s": 50.0, "move": move.number,
                                "table": "after", "place": [1, 2], "label": "blue-11"})  # fmt: skip
    completed = game.complete(override)
    assert completed.ruling is not None and completed.ruling.verdict.value == "ok"


# case -> what the station and the report say of it (the limit: przasnysz's 40 s, the move 4 s over it)
SAID = {
    "valid-at-limit": "Over the 40 s limit by 4.0 s: the table at the limit: 6 tiles, 2 sets; not touched after the"
    " limit",
    "unfinished-at-limit": "Over the 40 s limit by 4.0 s: the table at the limit: 5 tiles, 2 sets; touched after the"
    " limit",
    "hands-over-it-at-limit": "Over the 40 s limit by 4.0 s: the table at the limit not seen (hands over the table);"
    " touched after the limit",
}


@pytest.mark.parametrize("case", sorted(SAID))
def test_a_move_over_time_says_what_the_camera_saw_at_the_limit(case: str) -> None:
    move = _late_move("przasnysz", case)
    assert describe_at_limit(move, 40.0) == SAID[case]
    assert limit_passed_s(move, 40.0) == 40.0  # the turn started at 0 (the first reading)


def test_a_move_in_time_or_without_a_limit_says_nothing_of_one() -> None:
    move = _late_move("przasnysz", "valid-at-limit")  # 44 s
    assert describe_at_limit(move, 44.0) is None  # exactly on the limit is in time
    assert describe_at_limit(move, None) is None
    unknown = replace(move, touched_after_limit=None)
    assert str(describe_at_limit(unknown, 40.0)).endswith("whether it was touched after the limit is not known")
