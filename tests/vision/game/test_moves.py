"""GameKeeper: settled tables and clock presses in, move / restore / table / clock events with rulings out.

Tables are written in the referee's text form; no imaging here; players are numbered from 0, as in the events.
The official profile: a 30-point opening, 60 s per move, one penalty tile.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from referee.events import ClockPress, Event, Move, Override, Undo, event_from_json
from referee.moves import Verdict
from referee.profiles import Profile, ProfileError, get_profile
from referee.table import LOOSE, Table
from vision.game.moves import GameKeeper, GameStateError

OPENING = "[red-10 red-11 red-12]"
"""33 points: enough to open."""
SECOND_OPENING = "[red-10 red-11 red-12] [black-11 blue-11 orange-11]"


def T(text: str) -> Table:
    return Table.parse(text)


def lines(events: list[Event]) -> list[dict[str, Any]]:
    """The keeper's typed events as the game log writes them (what most of these tests check)."""
    return [event.to_json() for event in events]


def new_keeper(first: str = "", players: int = 2, profile: str | Profile = "official", **options: Any) -> GameKeeper:
    """A keeper that has read its first table at t=0."""
    keeper = GameKeeper(profile, players, **options)
    events = lines(keeper.settled(T(first), time_s=0.0, frame=0, start_s=None, seat=None, hands=False))
    assert [e["event"] for e in events] == ["table"]
    return keeper


def settle(keeper: GameKeeper, text: str, t: float, *, seat: int | None = 0, hands: bool = True) -> list[dict]:
    return lines(keeper.settled(T(text), time_s=t, frame=round(t * 30), start_s=t - 3, seat=seat, hands=hands))


def only_move(events: list[dict]) -> dict:
    assert [e["event"] for e in events] == ["move"], events
    return events[0]


def layout(table_json: dict) -> Table:
    return Table.from_json(table_json)


# -- settle mode ---------------------------------------------------------------------------------------------


def test_the_first_settled_table_is_the_games_starting_table_not_a_move() -> None:
    keeper = GameKeeper("official", 2)
    events = lines(
        keeper.settled(T("[black-5 blue-5 orange-5]"), time_s=1.5, frame=45, start_s=None, seat=None, hands=True)
    )
    assert len(events) == 1 and events[0]["event"] == "table" and events[0]["reason"] == "first reading"
    assert keeper.table is not None and keeper.table.same_layout(T("[black-5 blue-5 orange-5]"))
    assert (keeper.moves, keeper.player, keeper.opened) == (0, 0, [False, False])


def test_the_keeper_hands_out_typed_events_and_the_log_line_is_their_json() -> None:
    keeper = new_keeper()
    [move] = keeper.settled(T(OPENING), time_s=10.0, frame=300, start_s=7.0, seat=0, hands=True)
    assert isinstance(move, Move) and keeper.last_move == move
    assert (move.number, move.player, move.kind, move.ruling.verdict) == (1, 0, "play", Verdict.OK)
    assert event_from_json(json.loads(json.dumps(move.to_json()))) == move  # what a resumed game reads back
    [clock] = keeper.clock(time_s=11.0, frame=330, table=T(OPENING))
    assert isinstance(clock, ClockPress) and clock.confirms == 1


def test_apply_returns_the_event_completed_and_completes_a_log_line_in_place() -> None:
    keeper = new_keeper()
    keeper.settled(T("[red-1 red-2 red-3]"), time_s=10.0, frame=300, start_s=7.0, seat=0, hands=True)  # a revert
    line: dict[str, Any] = {"event": "override", "time_s": 12.0, "action": "ok", "move": 1}
    taken = keeper.apply(line)
    assert isinstance(taken, Override) and taken.action == "ok" and line == taken.to_json()
    undo = keeper.apply(Undo(time_s=13.0))
    assert isinstance(undo, Undo) and undo.undoes == {"action": "ok", "move": 1, "time_s": 12.0}
    assert keeper.last_move is not None and keeper.last_move.ruling.verdict is Verdict.REVERT


def test_an_opening_is_ruled_ok_and_the_player_has_opened() -> None:
    keeper = new_keeper()
    move = only_move(settle(keeper, OPENING, 10.0))
    assert (move["number"], move["player"], move["seat"], move["hands_seat"]) == (1, 0, 0, 0)
    assert (move["kind"], move["ruling"]["verdict"], move["opened"]) == ("play", "ok", False)
    assert sorted(move["ruling"]["played"]) == ["red-10", "red-11", "red-12"]
    assert move["ruling"]["opening_value"] == 33 and move["ended_by"] == "settle"
    assert layout(move["before"]).is_empty() and layout(move["after"]).same_layout(T(OPENING))
    assert keeper.opened == [True, False] and keeper.player == 1 and keeper.moves == 1
    assert keeper.pending is None


def test_an_opening_below_the_threshold_is_sent_back_to_the_layout_before_it() -> None:
    keeper = new_keeper("[black-5 blue-5 orange-5]")
    move = only_move(settle(keeper, "[black-5 blue-5 orange-5] [red-1 red-2 red-3]", 10.0))
    ruling = move["ruling"]
    assert ruling["verdict"] == "revert" and [v["code"] for v in ruling["violations"]] == ["opening-below-threshold"]
    assert ruling["penalty_tiles"] == 1 and sorted(ruling["revert"]["to_rack"]) == ["red-1", "red-2", "red-3"]
    assert layout(ruling["revert"]["restore"]).same_layout(T("[black-5 blue-5 orange-5]"))
    assert keeper.opened == [False, False]  # a reverted opening does not open
    assert keeper.player == 1  # the turn passes all the same
    assert keeper.pending is not None and keeper.pending.table.same_layout(T("[black-5 blue-5 orange-5]"))
    assert layout(keeper.status()["pending_restore"]).same_layout(T("[black-5 blue-5 orange-5]"))


def test_an_extension_after_opening_is_ok() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    only_move(settle(keeper, OPENING, 20.0, seat=2))  # player 1 draws
    move = only_move(settle(keeper, "[red-10 red-11 red-12 red-13]", 30.0))
    assert (move["player"], move["kind"], move["ruling"]["verdict"]) == (0, "play", "ok")
    assert move["ruling"]["played"] == ["red-13"] and move["opened"] is True
    assert move["ruling"]["opening_value"] is None  # not an opening turn


def test_hands_that_come_and_go_leaving_the_table_as_it_was_are_a_draw() -> None:
    keeper = new_keeper(OPENING)
    move = only_move(settle(keeper, OPENING, 12.0))
    assert (move["kind"], move["ruling"]["verdict"], move["ruling"]["played"]) == ("draw", "ok", [])
    assert keeper.player == 1 and keeper.moves == 1


def test_an_unchanged_table_without_hands_is_nothing_at_all() -> None:
    # a lamp switched on, a shadow passing: the table settles again exactly as it was
    keeper = new_keeper(OPENING)
    assert settle(keeper, OPENING, 12.0, seat=None, hands=False) == []
    assert (keeper.moves, keeper.player) == (0, 0)


def test_a_table_that_reads_differently_with_no_hands_seen_is_a_new_reading_not_a_move() -> None:
    keeper = new_keeper(OPENING)
    events = settle(keeper, SECOND_OPENING, 12.0, seat=None, hands=False)
    assert [(e["event"], e["reason"]) for e in events] == [("table", "re-read, no hands seen")]
    assert (keeper.moves, keeper.player) == (0, 0) and keeper.table is not None
    assert keeper.table.same_layout(T(SECOND_OPENING))


def test_an_invalid_set_is_reverted_with_the_exact_layout_to_restore_and_the_restore_is_seen() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    settle(keeper, OPENING, 20.0, seat=2)  # player 1 draws
    move = only_move(settle(keeper, f"{OPENING} [blue-3 blue-4]", 30.0))
    ruling = move["ruling"]
    assert ruling["verdict"] == "revert" and "invalid-set" in [v["code"] for v in ruling["violations"]]
    assert layout(ruling["revert"]["restore"]).same_layout(T(OPENING))
    assert sorted(ruling["revert"]["to_rack"]) == ["blue-3", "blue-4"] and ruling["penalty_tiles"] == 1
    # player 0 takes one tile back: the table is partly restored
    partial = settle(keeper, f"{OPENING} loose: blue-4", 40.0)
    assert [(e["event"], e["complete"], e["after_move"], e["player"]) for e in partial] == [("restore", False, 3, 0)]
    assert keeper.pending is not None and keeper.moves == 3
    # ...then the other: restored, nothing owed any more, and no move was invented on the way
    done = settle(keeper, OPENING, 45.0)
    assert [(e["event"], e["complete"]) for e in done] == [("restore", True)]
    assert layout(done[0]["table"]).same_layout(T(OPENING))
    assert keeper.pending is None and keeper.moves == 3 and keeper.player == 1
    assert keeper.table is not None and keeper.table.same_layout(T(OPENING))


def test_after_a_restore_the_next_move_is_ruled_against_the_restored_table() -> None:
    keeper = new_keeper()
    settle(keeper, "[red-1 red-2 red-3]", 10.0)  # below the threshold: reverted
    settle(keeper, "", 15.0)  # restored
    move = only_move(settle(keeper, "[black-11 blue-11 orange-11]", 25.0, seat=2))
    assert move["player"] == 1 and layout(move["before"]).is_empty() and move["ruling"]["verdict"] == "ok"
    assert move["elapsed_s"] == pytest.approx(10.0)  # the turn began when the table was put back


def test_turn_order_and_opened_status_per_player() -> None:
    keeper = new_keeper(players=3, first_player=1)
    assert keeper.player == 1
    players, opened = [], []
    script = [
        (OPENING, 1),  # player 1 opens
        (OPENING, 2),  # player 2 draws
        (f"{OPENING} [blue-1 blue-2 blue-3]", 0),  # player 0's opening is 6 points: reverted
        (OPENING, 0),  # ...and restored
        ("[red-10 red-11 red-12 red-13]", 1),  # player 1 extends
        ("[red-10 red-11 red-12 red-13] [black-12 blue-12 orange-12]", 2),  # player 2 opens
    ]
    for t, (table, seat) in enumerate(script, start=1):
        for event in settle(keeper, table, 10.0 * t, seat=seat):
            if event["event"] == "move":
                players.append(event["player"])
                opened.append(list(keeper.opened))
    assert players == [1, 2, 0, 1, 2]
    assert opened == [
        [False, True, False],
        [False, True, False],
        [False, True, False],
        [False, True, False],
        [False, True, True],
    ]
    assert keeper.player == 0 and keeper.seat_of(2) == 2 and keeper.player_at(1) == 1


def test_hands_from_another_players_side_make_it_that_players_move() -> None:
    keeper = new_keeper()
    move = only_move(settle(keeper, OPENING, 10.0, seat=2))  # player 0 is on move; player 1 (seat 2) reached in
    assert (move["player"], move["seat"], move["turn_order_player"]) == (1, 2, 0)
    assert keeper.opened == [False, True] and keeper.player == 0


def test_seats_follow_the_number_of_players() -> None:
    two, four = GameKeeper("official", 2), GameKeeper("official", 4)
    assert [two.seat_of(p) for p in range(2)] == [0, 2]  # facing each other
    assert [four.seat_of(p) for p in range(4)] == [0, 1, 2, 3]
    assert two.player_at(2) == 1 and two.player_at(1) is None and two.player_at(None) is None


def test_six_players_take_turns_round_the_table_and_share_the_long_edges() -> None:
    keeper = GameKeeper("official-6p", 6)
    keeper.settled(T(""), time_s=0.0, frame=0, start_s=None, seat=None, hands=False)
    assert [keeper.seat_of(p) for p in range(6)] == [4, 5, 1, 6, 7, 3]
    assert [s.name for s in keeper.seating][:2] == ["bottom left", "bottom right"]
    assert keeper.player_at(0) is None  # the bottom edge's middle: nobody sits there at a table of six
    seats = (4, 5, 1, 6, 7, 3)
    moves = [only_move(settle(keeper, "", 10.0 * (k + 1), seat=seat)) for k, seat in enumerate(seats)]  # draws
    assert [(m["player"], m["seat"], m["turn_order_player"]) for m in moves] == [(p, s, p) for p, s in enumerate(seats)]
    assert keeper.player == 0  # round again


def test_hands_from_the_other_seat_on_a_shared_edge_make_it_that_players_move() -> None:
    keeper = GameKeeper("official-6p", 5)
    keeper.settled(T(""), time_s=0.0, frame=0, start_s=None, seat=None, hands=False)
    move = only_move(settle(keeper, OPENING, 10.0, seat=5))  # player 0 (bottom left) on move; bottom right reached
    assert (move["player"], move["seat"], move["hands_seat"], move["turn_order_player"]) == (1, 5, 5, 0)
    assert keeper.opened == [False, True, False, False, False]


def test_a_move_on_a_reverted_table_by_the_next_player_is_ruled_not_taken_for_a_restore() -> None:
    keeper = new_keeper()
    settle(keeper, "[red-1 red-2 red-3]", 10.0)  # player 0 reverted; player 1 on move
    move = only_move(settle(keeper, "[red-1 red-2 red-3] [black-11 blue-11 orange-11]", 20.0, seat=2))
    assert move["player"] == 1 and move["number"] == 2


# -- uncertain readings ----------------------------------------------------------------------------------------


def with_uncertain(text: str, label: str) -> Table:
    table = T(text)
    place = next(p for p, t in table.places() if str(t) == label)
    return Table(table.sets, table.loose, frozenset({place}))


def test_an_uncertain_tile_makes_a_bad_looking_move_a_review_never_a_revert() -> None:
    keeper = new_keeper(OPENING)
    after = with_uncertain(f"{OPENING} [blue-3 blue-4 blue-6]", "blue-6")  # blue-6 may really be blue-5
    move = only_move(lines(keeper.settled(after, time_s=10.0, frame=300, start_s=7.0, seat=0, hands=True)))
    ruling = move["ruling"]
    assert ruling["verdict"] == "review" and ruling["penalty_tiles"] == 0
    assert [u["tile"] for u in ruling["uncertain"]] == ["blue-6"]
    # nobody is sent back on a misread tile: no restore is owed until a person decides
    assert (keeper.pending is None or not keeper.pending.owed) and keeper.status()["pending_restore"] is None
    assert keeper.player == 1


def test_after_a_review_the_same_players_next_move_is_still_ruled() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 5.0)  # player 0 opens
    after = with_uncertain(f"{OPENING} [blue-3 blue-4 blue-6]", "blue-6")
    keeper.settled(after, time_s=10.0, frame=300, start_s=7.0, seat=2, hands=True)  # player 1: review
    only_move(settle(keeper, f"{OPENING} [blue-3 blue-4 blue-6]", 20.0))  # player 0 draws
    # player 1's next move is a move, not taken for putting back the reviewed one
    move = only_move(settle(keeper, "[red-10 red-11 red-12 red-13] [blue-3 blue-4 blue-6]", 30.0, seat=2))
    assert (move["number"], move["player"], move["ruling"]["played"]) == (4, 1, ["red-13"])


# -- time limits -----------------------------------------------------------------------------------------------


def test_elapsed_time_counts_from_the_start_of_the_turn() -> None:
    keeper = new_keeper()
    first = only_move(settle(keeper, OPENING, 10.0))
    assert first["elapsed_s"] == pytest.approx(10.0)
    late = only_move(settle(keeper, SECOND_OPENING, 85.0, seat=2))
    assert (late["turn_started_s"], late["elapsed_s"]) == (10.0, 75.0)
    assert late["ruling"]["verdict"] == "revert" and [v["code"] for v in late["ruling"]["violations"]] == ["timeout"]


def test_a_late_draw_is_not_a_timeout() -> None:
    keeper = new_keeper(OPENING)
    move = only_move(settle(keeper, OPENING, 90.0))
    assert move["kind"] == "draw" and move["ruling"]["verdict"] == "ok" and move["ruling"]["violations"] == []


@pytest.mark.parametrize(
    ("limit", "elapsed", "timeout"),
    [
        (None, 500.0, False),  # "none" agreed at the table
        (90.0, 75.0, False),  # a longer agreed limit
        (30.0, 40.0, True),  # a shorter one
        (30.0, 30.0, False),  # exactly on the limit is in time
    ],
)
def test_a_limit_agreed_at_the_table_replaces_the_profiles(limit: float | None, elapsed: float, timeout: bool) -> None:
    keeper = new_keeper(profile=replace(get_profile("official"), time_limit_s=limit))
    move = only_move(settle(keeper, OPENING, elapsed))
    assert ("timeout" in [v["code"] for v in move["ruling"]["violations"]]) is timeout


# -- clock mode ------------------------------------------------------------------------------------------------


def test_the_first_clock_press_right_after_a_settled_move_confirms_it() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    events = lines(keeper.clock(time_s=11.0, frame=330, table=T(OPENING)))
    assert events == [{"event": "clock", "time_s": 11.0, "frame": 330, "confirms": 1}]
    assert (keeper.moves, keeper.player, keeper.clock_mode) == (1, 1, True)


def test_in_clock_mode_changes_are_one_turn_and_the_press_ends_it() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    keeper.clock(time_s=11.0, frame=330)
    keeper.activity(time_s=1.0, frame=30)
    step = settle(keeper, f"{OPENING} [black-11 blue-11 orange-11]", 20.0, seat=2)
    assert [(e["event"], e["reason"]) for e in step] == [("table", "changed during the turn")]
    step = settle(keeper, f"{SECOND_OPENING} [black-1 black-2 black-3]", 25.0, seat=2)
    assert [e["event"] for e in step] == ["table"] and keeper.moves == 1 and keeper.player == 1
    events = lines(keeper.clock(time_s=30.0, frame=900))
    assert [e["event"] for e in events] == ["clock", "move"]
    move = events[1]
    assert (move["number"], move["player"], move["ended_by"], move["ruling"]["verdict"]) == (2, 1, "clock", "ok")
    # the whole turn is ruled against the table at its start, not against the last settled table
    assert layout(move["before"]).same_layout(T(OPENING))
    assert layout(move["after"]).same_layout(T(f"{SECOND_OPENING} [black-1 black-2 black-3]"))
    assert sorted(move["ruling"]["played"]) == sorted(
        ["black-11", "blue-11", "orange-11", "black-1", "black-2", "black-3"]
    )
    assert move["elapsed_s"] == pytest.approx(19.0)  # from the press that ended the previous turn
    assert keeper.player == 0


def test_in_clock_mode_a_press_with_the_table_unchanged_is_a_draw() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    keeper.clock(time_s=11.0, frame=330)
    keeper.activity(time_s=1.0, frame=30)
    assert settle(keeper, OPENING, 15.0, seat=2) == []  # hands came and went; the table is as it was
    events = lines(keeper.clock(time_s=16.0, frame=480, table=T(OPENING)))
    assert [e["event"] for e in events] == ["clock", "move"]
    assert (events[1]["kind"], events[1]["player"], events[1]["ruling"]["verdict"]) == ("draw", 1, "ok")


def test_a_clock_press_with_a_newer_table_logs_it_and_rules_on_it() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    keeper.clock(time_s=11.0, frame=330)
    keeper.activity(time_s=1.0, frame=30)
    events = lines(keeper.clock(time_s=20.0, frame=600, table=T(SECOND_OPENING)))
    assert [e["event"] for e in events] == ["clock", "table", "move"]
    assert layout(events[2]["after"]).same_layout(T(SECOND_OPENING)) and events[2]["ruling"]["verdict"] == "ok"


def test_a_clock_press_after_hands_were_over_the_table_does_not_confirm_the_old_move() -> None:
    keeper = new_keeper()
    settle(keeper, OPENING, 10.0)
    keeper.activity(time_s=12.0, frame=360)  # player 1 reached over the table, then pressed without changing anything
    events = lines(keeper.clock(time_s=14.0, frame=420))
    assert [e["event"] for e in events] == ["clock", "move"] and "confirms" not in events[0]
    assert (events[1]["number"], events[1]["player"], events[1]["kind"]) == (2, 1, "draw")


# -- refining, replaying ---------------------------------------------------------------------------------------


def test_a_more_certain_reading_of_the_same_table_refines_it_and_a_different_one_does_not() -> None:
    keeper = GameKeeper("official", 2)
    unsure = with_uncertain(OPENING, "red-11")
    keeper.settled(unsure, time_s=1.0, frame=30, start_s=None, seat=None, hands=False)
    assert keeper.table is not None and keeper.table.uncertain
    assert lines(keeper.refine(T(SECOND_OPENING), time_s=4.0, frame=120)) == []
    events = lines(keeper.refine(T(OPENING), time_s=4.0, frame=120))
    assert [(e["event"], e["reason"]) for e in events] == [("table", "refined")]
    assert not keeper.table.uncertain and keeper.moves == 0


def play_a_game(keeper: GameKeeper) -> list[dict]:
    """Moves, a revert and its restore, a review, draws, then clock mode: every event, as a log would hold it."""
    log: list[dict] = [{"event": "start", "profile": "official", "players": 3}]
    log += lines(keeper.settled(T(""), time_s=0.0, frame=0, start_s=None, seat=None, hands=False))
    log.append({"event": "calibration", "time_s": 0.0})  # events the keeper does not know are ignored
    log += settle(keeper, OPENING, 10.0)
    log += settle(keeper, f"{OPENING} [blue-1 blue-2 blue-3]", 20.0, seat=1)  # reverted
    log.append({"event": "dropout", "time_s": 21.0})
    log += settle(keeper, f"{OPENING} loose: blue-1", 25.0, seat=1)  # partly restored
    log += settle(keeper, OPENING, 27.0, seat=2)  # restored (whoever's hands: the layout is what counts)
    unsure = with_uncertain(f"{OPENING} [black-1 black-2 black-4]", "black-4")
    keeper.activity(time_s=1.0, frame=30)
    log += lines(keeper.settled(unsure, time_s=40.0, frame=1200, start_s=35.0, seat=2, hands=True))  # review
    log += lines(keeper.clock(time_s=41.0, frame=1230))  # confirms the review
    keeper.activity(time_s=1.0, frame=30)
    log += settle(keeper, f"{OPENING} [black-1 black-2 black-4] [orange-9 orange-10 orange-11]", 50.0, seat=0)
    log += lines(keeper.clock(time_s=52.0, frame=1560))  # ends player 0's turn
    nxt = f"{OPENING} [black-1 black-2 black-4] [orange-9 orange-10 orange-11] loose: joker"
    log += settle(keeper, nxt, 60.0, seat=1)
    return log


def state(keeper: GameKeeper) -> dict[str, Any]:
    pending = keeper.pending
    return {
        "status": keeper.status(),
        "table": keeper.table.to_json(with_extras=True) if keeper.table else None,
        "turn_table": keeper.turn_table.to_json(with_extras=True) if keeper.turn_table else None,
        "uncertain": sorted(keeper.table.uncertain) if keeper.table else None,
        "pending": None if pending is None else (pending.table.to_json(), pending.player, pending.after_move),
        "last_move": None if keeper.last_move is None else keeper.last_move.to_json(),
    }


def test_replaying_the_events_gives_the_identical_game() -> None:
    played = GameKeeper("official", 3)
    log = play_a_game(played)
    kinds = [e["event"] for e in log]
    assert kinds.count("move") == 4 and kinds.count("restore") == 2 and "clock" in kinds and "table" in kinds
    assert played.clock_mode and played.moves == 4
    resumed = GameKeeper("official", 3)
    resumed.replay([json.loads(json.dumps(event)) for event in log])  # as read back from a log file
    assert state(resumed) == state(played)


def test_replaying_a_log_in_which_a_move_is_missing_fails() -> None:
    log = play_a_game(GameKeeper("official", 3))
    moves = [i for i, e in enumerate(log) if e["event"] == "move"]
    del log[moves[1]]
    with pytest.raises(GameStateError, match="move 3 follows move 1"):
        GameKeeper("official", 3).replay(log)


def test_a_resumed_game_goes_on_where_it_stopped() -> None:
    played = GameKeeper("official", 3)
    log = play_a_game(played)
    resumed = GameKeeper("official", 3)
    resumed.replay([json.loads(json.dumps(event)) for event in log])
    nxt = "[red-9 red-10 red-11 red-12] [black-1 black-2 black-4] [orange-9 orange-10 orange-11] loose: joker"
    assert settle(resumed, nxt, 70.0) == settle(played, nxt, 70.0)  # clock mode: the same table event
    assert lines(resumed.clock(time_s=75.0, frame=2250)) == lines(played.clock(time_s=75.0, frame=2250))


@pytest.mark.parametrize(
    ("players", "profile", "error"),
    [
        (5, "official", GameStateError),  # official is played by 2 to 4
        (7, "official-6p", GameStateError),  # no seat for a seventh player
        (1, "official", GameStateError),
        (2, "no-such-rules", ProfileError),  # fails before any frame is read
    ],
)
def test_a_keeper_for_an_impossible_game_fails_at_once(players: int, profile: str, error: type) -> None:
    with pytest.raises(error):
        GameKeeper(profile, players)


def test_loose_tiles_after_a_move_are_an_invalid_set() -> None:
    keeper = new_keeper(OPENING)
    move = only_move(settle(keeper, f"{OPENING} loose: red-7", 10.0))
    assert move["ruling"]["verdict"] == "revert"
    assert LOOSE in move["ruling"]["revert"]["changed_sets"]


def test_a_reviewed_move_put_back_completely_is_a_restore_and_gives_back_the_opening_status() -> None:
    keeper = new_keeper(OPENING)
    after = with_uncertain(f"{OPENING} [blue-3 blue-4 blue-6]", "blue-6")
    move = only_move(lines(keeper.settled(after, time_s=10.0, frame=300, start_s=7.0, seat=0, hands=True)))
    assert move["ruling"]["verdict"] == "review" and keeper.opened[0]
    events = lines(keeper.settled(Table.parse(OPENING), time_s=20.0, frame=600, start_s=15.0, seat=0, hands=True))
    assert [e["event"] for e in events] == ["restore"] and events[0]["complete"]
    assert keeper.pending is None and not keeper.opened[0] and keeper.moves == 1


def test_hands_over_the_table_are_logged_once_and_a_resumed_game_remembers_them() -> None:
    keeper = new_keeper()
    logged = settle(keeper, OPENING, 10.0)
    first = lines(keeper.activity(time_s=12.0, frame=360))
    assert [e["event"] for e in first] == ["activity"] and lines(keeper.activity(time_s=12.5, frame=375)) == []
    resumed = new_keeper()
    resumed.replay([*logged, *first])
    assert resumed.active_since_move  # so a clock press after the restart is a move, not a confirmation
    press, move = resumed.clock(time_s=14.0, frame=420)
    assert isinstance(press, ClockPress) and press.confirms is None and isinstance(move, Move) and move.kind == "draw"


def test_a_table_put_back_but_read_with_a_stray_unsure_tile_is_still_the_restore() -> None:
    keeper = new_keeper(OPENING)
    only_move(settle(keeper, f"{OPENING} [blue-7 blue-8]", 10.0))  # revert: a pair
    # read back: the opening, one of its tiles unsure, plus a weak detection (glare) as an unsure loose tile
    table = T(f"{OPENING} loose: joker")
    read = Table(table.sets, table.loose, frozenset({(0, 2), (LOOSE, 0)}))
    events = lines(keeper.settled(read, time_s=20.0, frame=600, start_s=15.0, seat=0, hands=True))
    assert [(e["event"], e["complete"]) for e in events] == [("restore", True)] and keeper.pending is None
    # a tile read for sure that is not in the layout is not a restore
    events = lines(
        keeper.settled(T(f"{OPENING} [blue-7 blue-8]"), time_s=30.0, frame=900, start_s=25.0, seat=2, hands=True)
    )
    assert only_move(events)["player"] == 1


def test_after_a_review_the_player_taking_tiles_back_is_restoring_not_moving() -> None:
    keeper = new_keeper(OPENING)
    after = with_uncertain(f"{OPENING} [blue-3 blue-4 blue-6] [black-1 black-2 black-3]", "blue-6")
    move = only_move(lines(keeper.settled(after, time_s=10.0, frame=300, start_s=7.0, seat=0, hands=True)))
    assert move["ruling"]["verdict"] == "review"
    events = settle(keeper, f"{OPENING} [blue-3 blue-4 blue-6]", 20.0, seat=0)  # the same player takes a set back
    assert [(e["event"], e["complete"]) for e in events] == [("restore", False)] and keeper.moves == 1
    # the next player adding tiles is a move, even with the layout still owed a person's decision
    move = only_move(settle(keeper, f"{OPENING} [blue-3 blue-4 blue-6] [orange-9 orange-10 orange-11]", 30.0, seat=2))
    assert (move["number"], move["player"]) == (2, 1)


# -- events a game cannot take ---------------------------------------------------------------------------------


def a_logged_move() -> dict[str, Any]:
    """Move 1 of a game, as read back from its log."""
    keeper = new_keeper()
    return json.loads(json.dumps(only_move(settle(keeper, OPENING, 10.0))))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"after": None}, "move 1 lacks 'after'"),
        ({"before": None}, "move 1 lacks 'before'"),
        ({"ruling": None}, "move 1 lacks 'ruling'"),
        ({"number": None}, "a move's number is None"),
        ({"number": "1"}, "a move's number is '1'"),
        ({"player": 4}, "move 1 is by player 4, not one of the 2 at the table"),  # player 5 of a 2-player game
        ({"player": -1}, "move 1 is by player -1"),  # would count from the end of the list
        ({"player": True}, "move 1 is by player True"),
        ({"ruling": {"played": []}}, "move 1's ruling has no verdict"),
        ({"ruling": {"verdict": "maybe"}}, "move 1's ruling has no verdict"),
        ({"after": {"sets": [["red-99"]]}}, "move 1's tables cannot be read"),
        ({"after": "a table"}, "move 1's tables cannot be read"),
        ({"time_s": float("nan")}, "move 1: time_s is nan, not a finite number of seconds"),  # json reads NaN
        ({"time_s": float("inf")}, "move 1: time_s is inf"),
        ({"elapsed_s": float("nan")}, "move 1: elapsed_s is nan"),
        ({"time_s": "10"}, "move 1: time_s is '10'"),
        ({"time_s": None}, "move 1 lacks 'time_s'"),
    ],
)
def test_a_move_the_game_cannot_take_is_a_game_state_error_that_changes_nothing(change: dict, message: str) -> None:
    move = a_logged_move()
    broken = {key: value for key, value in {**move, **change}.items() if value is not None or key == "number"}
    keeper = new_keeper()
    before = state(keeper)
    with pytest.raises(GameStateError) as error:
        keeper.apply(broken)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert state(keeper) == before
    keeper.apply(move)  # the good move still goes in afterwards
    assert keeper.moves == 1


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"event": "table", "time_s": 1.0}, "table event lacks 'table'"),
        ({"event": "table", "time_s": 1.0, "table": {"sets": [["purple-3"]]}}, "table event:"),
        ({"event": "table", "time_s": float("nan"), "table": {"sets": []}}, "table event: time_s is nan"),
        ({"event": "restore", "table": {"sets": []}, "complete": True}, "restore event lacks 'time_s'"),
        ({"event": "clock", "time_s": float("-inf"), "confirms": 1}, "clock event: time_s is -inf"),
        ({"event": "override", "action": "ok", "time_s": 3.0}, "override event lacks 'move'"),
        ({"event": "override", "action": "revert", "move": "one", "time_s": 3.0}, "override event:"),
    ],
)
def test_other_events_the_game_cannot_take_are_game_state_errors(event: dict, message: str) -> None:
    with pytest.raises(GameStateError) as error:
        new_keeper().apply(event)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"first_player": 2}, "the first player is 0 to 1"),  # wrapped around to player 0 before
        ({"first_player": -1}, "the first player is 0 to 1"),
        ({"profile": replace(get_profile("official"), time_limit_s=float("nan"))}, "a time limit is a finite number"),
        ({"profile": replace(get_profile("official"), time_limit_s=float("inf"))}, "a time limit is a finite number"),
        ({"profile": replace(get_profile("official"), time_limit_s=-1.0)}, "a time limit is a finite number"),
    ],
)
def test_a_keeper_with_a_player_or_limit_out_of_range_fails_at_once(options: dict, message: str) -> None:
    setup: dict[str, Any] = {"profile": "official", "players": 2, **options}
    with pytest.raises(GameStateError, match=message):
        GameKeeper(**setup)


def test_a_keeper_for_a_profile_that_is_not_a_name_fails_in_one_line() -> None:
    with pytest.raises(GameStateError, match="a profile is a name"):
        GameKeeper([], 2)  # type: ignore[arg-type]  # "profile": [] in a log
