"""A move ruled as it settled, then gone on with by the same hands (issue 16): the turn is ruled again as one move,
logged as an *amendment* (:attr:`referee.events.Move.amends`) under the number of the move it replaces, and a replay
of the log reaches the state of the turn as one move.

Two players, ``official``: player 0 lays part of a turn, ruled OK at once; the same player goes on.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from referee.events import (
    Activity,
    Move,
    Override,
    Restore,
    Unread,
    amendments,
    describe,
    event_from_json,
    last_rulings,
)
from referee.game import Game, GameStateError
from referee.table import Table

START = "[black-5 blue-5 orange-5]"
OPENING = f"{START} [red-10 red-11 red-12]"
"""Player 0's first part: an opening of 33 points."""
WHOLE = f"{START} [red-10 red-11 red-12] [blue-10 blue-11 blue-12]"
"""...and the rest, laid after a pause: the whole turn's opening is worth 66."""
MANIPULATED = "[black-5 blue-5 orange-5 red-5] [red-10 red-11 red-12]"
"""...or red-5 added to a set on the table in the opening turn: a manipulation the opening turn may not make."""


def settle(game: Game, table: str, t: float, seat: int = 0) -> tuple[Game, list[Any]]:
    return game.on_settled(Table.parse(table), time_s=t, frame=int(30 * t), start_s=t - 2, hands_seat=seat, hands=True)


def amend(game: Game, table: str, t: float, seat: int = 0, start_s: float = 8.0) -> tuple[Game, list[Any]]:
    return game.on_amended(Table.parse(table), time_s=t, frame=int(30 * t), start_s=start_s, hands_seat=seat)


def first_part() -> tuple[Game, list[Any]]:
    """The game started on START, then player 0's opening ruled OK as it settled at 10 s."""
    game, log = Game.start("official", 2).on_settled(
        Table.parse(START), time_s=1.0, frame=30, start_s=None, hands_seat=None, hands=False
    )
    game, events = settle(game, OPENING, 10.0)
    return game, [*log, *events]


def state(game: Game) -> tuple[Any, ...]:
    return (game.moves, game.player, game.opened, str(game.table), game.pending, game.turn_started_s, game.last_move)


def test_the_same_hands_going_on_rule_the_turn_again_as_one_move() -> None:
    game, log = first_part()
    assert [(m.number, m.ruling.verdict.value, m.ruling.opening_value) for m in log if isinstance(m, Move)] == [
        (1, "ok", 33)
    ]
    game, [amended] = amend(game, WHOLE, 20.0)
    assert isinstance(amended, Move) and (amended.number, amended.amends, amended.player) == (1, 1, 0)
    # from the game before the part: its table before, the whole turn's tiles, opening value and time
    assert amended.before.same_layout(Table.parse(START)) and amended.after.same_layout(Table.parse(WHOLE))
    assert sorted(map(str, amended.ruling.played)) == sorted(
        ["red-10", "red-11", "red-12", "blue-10", "blue-11", "blue-12"]
    )
    assert (amended.ruling.verdict.value, amended.ruling.opening_value, amended.opened) == ("ok", 66, False)
    assert (amended.elapsed_s, amended.start_s) == (20.0, 8.0)  # the turn began with the game, at 0 s
    assert (game.moves, game.player, game.opened) == (1, 1, (True, False))
    assert game.last_move == amended and game.amendable  # it may go on again: amended from the same game
    game, [again] = amend(game, f"{WHOLE} [orange-10 orange-11 orange-12]", 30.0)
    assert (again.number, again.amends, again.before.same_layout(Table.parse(START))) == (1, 1, True)
    assert again.ruling.opening_value == 99


def test_a_replay_of_the_log_reaches_the_state_of_the_turn_as_one_move() -> None:
    game, log = first_part()
    game, more = amend(game, WHOLE, 20.0)
    log += [Activity(21.0, 630), *more]
    game = game.apply(Activity(21.0, 630))
    game, more = settle(game, f"{WHOLE} [black-1 black-2 black-3]", 30.0, seat=1)  # player 1 opens? 6 points: no
    log += more
    lines = [json.loads(json.dumps(event.to_json())) for event in log]
    replayed = Game.start("official", 2).replay(event_from_json(line) for line in lines)
    assert state(replayed) == state(game)
    one_move, _ = Game.start("official", 2).on_settled(
        Table.parse(START), time_s=1.0, frame=30, start_s=None, hands_seat=None, hands=False
    )
    one_move, _ = settle(one_move, WHOLE, 20.0)
    assert (one_move.moves, one_move.player, one_move.opened, str(one_move.table)) == (
        1,
        1,
        (True, False),
        str(Table.parse(WHOLE)),
    )


def test_a_whole_turn_the_rules_forbid_is_ruled_so_from_the_game_before_the_part() -> None:
    game, _ = first_part()
    _, [rest] = settle(game, MANIPULATED, 20.0)  # ruled alone: player 0 has opened, so it is OK
    assert rest.ruling.verdict.value == "ok"
    game, [amended] = amend(game, MANIPULATED, 20.0)
    assert (amended.ruling.verdict.value, amended.amends) == ("revert", 1)
    assert "opening-manipulation" in amended.ruling.codes
    assert game.pending is not None and game.pending.table.same_layout(Table.parse(START))
    assert game.opened == (False, False)  # the opening was sent back with the turn


def test_unread_seconds_after_the_part_make_the_amendment_review() -> None:
    game, _ = first_part()
    game = game.apply(Unread(2.5, 15.0))
    game, [amended] = amend(game, WHOLE, 20.0)
    assert amended.ruling.verdict.value == "review" and any("not read for 2.5 s" in n for n in amended.ruling.notes)


@pytest.mark.parametrize(
    "word",
    [
        Override("accept", 15.0, move=1),  # the referee's word on the part
        Restore(Table.parse(OPENING), 15.0),
    ],
)
def test_after_the_referees_word_the_part_stands_and_is_not_amended(word: Any) -> None:
    game, _ = first_part()
    game = game.apply(word)
    assert not game.amendable and amend(game, WHOLE, 20.0) == (game, [])
    amendment = Move(1, 0, 20.0, Table.parse(START), Table.parse(WHOLE), first_part()[1][-1].ruling, amends=1)
    with pytest.raises(GameStateError, match="amends a move the referee's word"):
        game.apply(amendment)


def test_an_amendment_is_checked_when_a_log_is_replayed() -> None:
    game, _ = first_part()
    _, [amended] = amend(game, WHOLE, 20.0)
    line = amended.to_json()
    assert line["amends"] == 1 and event_from_json(line) == amended
    with pytest.raises(GameStateError, match="move 2 amends move 1"):
        event_from_json({**line, "number": 2})
    with pytest.raises(GameStateError, match="by player 1 amends a move by player 0"):
        game.apply(event_from_json({**line, "player": 1}))
    with pytest.raises(GameStateError, match="amends move 1, but the last move is 0"):
        Game.start("official", 2).apply(amended)


def test_consumers_take_the_last_line_of_a_number() -> None:
    game, log = first_part()
    game, more = amend(game, WHOLE, 20.0)
    game, later = settle(game.apply(Activity(21.0, 630)), WHOLE, 25.0, seat=1)  # player 1 draws
    moves = [e for e in [*log, *more, *later] if isinstance(e, Move)]
    assert [(m.number, m.amends) for m in last_rulings(moves)] == [(1, 1), (2, None)]
    lines = [m.to_json() for m in moves]
    assert [(m["number"], m.get("amends")) for m in last_rulings(lines)] == [(1, 1), (2, None)]
    assert amendments(lines) == amendments(moves) == 1
    assert describe(more[0]).startswith("Move 1 (the whole turn, ruled again): player 1 played")
