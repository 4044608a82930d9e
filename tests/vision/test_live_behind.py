"""Never lose a move silently: stretches of the camera nobody looked at make the next move REVIEW (GameKeeper), and
a live session that falls behind the camera says so at once and catches up on the newest frame."""

from __future__ import annotations

from typing import Any

import pytest

from referee.table import Table
from vision.moves import GameKeeper

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
BROKEN = f"{START} [red-10 red-12]"  # an invalid set laid: REVERT when seen


def keeper_after_first_reading() -> GameKeeper:
    keeper = GameKeeper("official", 2)
    keeper.settled(Table.parse(START), time_s=1.0, frame=10, start_s=None, seat=None, hands=False)
    return keeper


def unread(keeper: GameKeeper, from_s: float, to_s: float) -> dict[str, Any]:
    event = {"event": "unread", "time_s": to_s, "from_s": from_s, "seconds": round(to_s - from_s, 3)}
    keeper.apply(event)
    return event


@pytest.mark.parametrize(
    ("after", "hands", "kind", "seen_verdict"),
    [
        (OPENED, True, "play", "ok"),  # an opening seen after an unread stretch
        (START, True, "draw", "ok"),  # hands came and went, table unchanged: a draw... or a move not seen
        (BROKEN, True, "play", "revert"),  # never a REVERT on a move partly unseen
        (OPENED, False, "play", None),  # the table changed while unread, no hands seen: a move, not a re-read
    ],
)
def test_a_move_after_an_unread_stretch_is_review(after: str, hands: bool, kind: str, seen_verdict: str | None) -> None:
    if seen_verdict is not None:  # the same move fully seen is ruled on its own (the case is not REVIEW anyway)
        seen = keeper_after_first_reading()
        [move] = seen.settled(Table.parse(after), time_s=9.0, frame=90, start_s=5.0, seat=0, hands=hands)
        assert move["ruling"]["verdict"] == seen_verdict
    keeper = keeper_after_first_reading()
    unread(keeper, 3.0, 5.5)
    [move] = keeper.settled(Table.parse(after), time_s=9.0, frame=90, start_s=6.0, seat=0 if hands else None,
                            hands=hands)  # fmt: skip
    assert move["event"] == "move" and move["kind"] == kind
    assert move["ruling"]["verdict"] == "review" and move["ruling"]["penalty_tiles"] == 0
    assert any("not read for 2.5 s" in note for note in move["ruling"]["notes"])
    assert keeper.pending is None or not keeper.pending.owed  # nothing is owed on a REVIEW
    assert keeper.unread_s == 0.0


def test_an_unread_stretch_with_no_change_and_no_hands_invents_no_move() -> None:
    keeper = keeper_after_first_reading()
    unread(keeper, 3.0, 5.5)
    assert keeper.settled(Table.parse(START), time_s=9.0, frame=90, start_s=None, seat=None, hands=False) == []
    assert keeper.moves == 0 and keeper.unread_s == 2.5  # still owed to the next move


def test_the_move_after_a_review_for_unread_is_ruled_on_its_own() -> None:
    keeper = keeper_after_first_reading()
    unread(keeper, 3.0, 5.5)
    keeper.settled(Table.parse(OPENED), time_s=9.0, frame=90, start_s=6.0, seat=0, hands=True)
    [draw] = keeper.settled(Table.parse(OPENED), time_s=15.0, frame=150, start_s=12.0, seat=2, hands=True)
    assert (draw["kind"], draw["ruling"]["verdict"], draw["ruling"]["notes"]) == ("draw", "ok", [])


def test_a_clock_press_after_an_unread_stretch_is_review_too() -> None:
    keeper = keeper_after_first_reading()
    keeper.clock(time_s=2.0, frame=20)  # the first press: a draw; from now on the clock ends moves
    unread(keeper, 3.0, 4.2)
    events = keeper.clock(time_s=8.0, frame=80, table=Table.parse(START))
    [move] = [e for e in events if e["event"] == "move"]
    assert (move["kind"], move["ruling"]["verdict"]) == ("draw", "review")


def test_unread_stretches_replay_from_the_log() -> None:
    keeper = keeper_after_first_reading()
    first = Table.parse(START).to_json()
    log = [{"event": "table", "time_s": 1.0, "frame": 10, "reason": "first reading", "table": first}]
    log += [unread(keeper, 3.0, 4.5), unread(keeper, 6.0, 7.0)]
    log += keeper.settled(Table.parse(OPENED), time_s=9.0, frame=90, start_s=6.0, seat=0, hands=True)
    log += [unread(keeper, 10.0, 11.5)]
    replayed = GameKeeper("official", 2)
    replayed.replay(log)
    assert replayed.unread_s == keeper.unread_s == 1.5 and replayed.moves == 1
    assert log[3]["ruling"]["verdict"] == "review" and "not read for 2.5 s" in log[3]["ruling"]["notes"][-1]
