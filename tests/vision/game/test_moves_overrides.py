"""The referee's overrides (accept, ok, revert, correct, undo) change the game as said, and replay the same."""

from __future__ import annotations

import json
from typing import Any

import pytest

from referee.table import Table
from referee.tiles import TileError
from vision.game.moves import GameKeeper

PROFILE = "pl-championship"
START = Table.parse("[black-1 black-2 black-3]")


class Game:
    """A two-player game driven through the keeper, every event kept as a game log would keep it."""

    def __init__(self) -> None:
        self.keeper = GameKeeper(PROFILE, 2)
        self.events: list[dict[str, Any]] = [{"event": "start", "profile": PROFILE, "players": 2}]
        self.time_s = 0.0
        self.settle(START, hands=False)

    def settle(self, text: str | Table, *, hands: bool = True) -> list[dict[str, Any]]:
        table = Table.parse(text) if isinstance(text, str) else text
        self.time_s += 10.0
        events = [e.to_json() for e in self.keeper.settled(table, time_s=self.time_s, frame=0, start_s=None,
                                                           seat=None, hands=hands)]  # fmt: skip
        self.events += events
        return events

    def settle_json(self, table: dict[str, Any]) -> list[dict[str, Any]]:
        return self.settle(Table.from_json(table))

    def override(self, **details: Any) -> dict[str, Any]:
        """As the live loop does it: the keeper applies the event, then logs it as the game took it (completed)."""
        event = self.keeper.apply({"event": "override", "time_s": self.time_s, **details}).to_json()
        self.events.append(event)
        return event

    def replayed(self) -> GameKeeper:
        keeper = GameKeeper(PROFILE, 2)
        keeper.replay(json.loads(json.dumps(self.events)))  # through JSON, as from the log file
        return keeper


def same_state(a: GameKeeper, b: GameKeeper) -> bool:
    return a.status() == b.status() and last_move(a).get("ruling") == last_move(b).get("ruling")


def last_move(keeper: GameKeeper) -> dict[str, Any]:
    """The keeper's last move as the log writes it ({} before the first)."""
    return {} if keeper.last_move is None else keeper.last_move.to_json()


def test_ok_lifts_a_revert_and_the_player_has_opened() -> None:
    game = Game()
    # An opening of 1+2+3 = 6 points: below the threshold, sent back.
    (move,) = game.settle("[black-1 black-2 black-3] [red-1 red-2 red-3]")
    assert move["ruling"]["verdict"] == "revert" and game.keeper.pending is not None
    assert game.keeper.opened == [False, False]
    game.override(action="ok", move=1)
    assert game.keeper.pending is None and game.keeper.opened == [True, False]
    assert same_state(game.keeper, game.replayed())


def test_revert_sends_an_accepted_opening_back() -> None:
    game = Game()
    (move,) = game.settle("[black-1 black-2 black-3] [red-10 red-11 red-12]")
    assert move["ruling"]["verdict"] == "ok" and game.keeper.opened == [True, False]
    game.override(action="revert", move=1)
    assert game.keeper.pending is not None and game.keeper.pending.table.same_layout(START)
    assert game.keeper.opened == [False, False]
    assert same_state(game.keeper, game.replayed())
    # Putting the table back completes the restore.
    (restore,) = game.settle(START)
    assert restore["event"] == "restore" and restore["complete"] and game.keeper.pending is None


def test_revert_with_the_restore_and_player_given_by_the_station() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 red-12]")
    game.override(action="revert", move=1, player=0, restore=START.to_json(), opened=False)
    assert game.keeper.pending is not None and game.keeper.pending.after_move == 1
    assert same_state(game.keeper, game.replayed())


def test_accept_changes_nothing() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-1 red-2 red-3]")
    before = game.keeper.status()
    game.override(action="accept", move=1)
    assert game.keeper.status() == before


def test_a_corrected_misread_re_rules_the_last_move() -> None:
    game = Game()
    # red-12 misread as blue-12: an invalid run, sent back.
    (move,) = game.settle("[black-1 black-2 black-3] [red-10 red-11 blue-12]")
    assert move["ruling"]["verdict"] == "revert"
    event = game.override(action="correct", move=1, table="after", place=[1, 2], label="r12")
    assert event["ruling"]["verdict"] == "ok"  # written into the event, so the log carries it
    assert game.keeper.pending is None and game.keeper.opened == [True, False]
    tile = last_move(game.keeper)["after"]["sets"][1][2]
    assert tile["label"] == "red-12" and tile["corrected_from"] == "blue-12"
    # The table state stays as the camera reads it (the next reading still sees blue-12).
    assert game.keeper.table is not None and "blue-12" in str(game.keeper.table)
    assert same_state(game.keeper, game.replayed())


def test_replay_uses_the_logged_ruling(monkeypatch: pytest.MonkeyPatch) -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 blue-12]")
    game.override(action="correct", move=1, table="after", place=[1, 2], label="red-12")

    def no_ruling(*_: Any, **__: Any) -> Any:
        raise AssertionError("the replay ruled again instead of reading the log")

    monkeypatch.setattr("referee.game.check_move", no_ruling)
    assert same_state(game.keeper, game.replayed())


def test_a_correction_that_makes_the_move_wrong_orders_a_restore_of_the_table_as_read() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 red-12]")
    event = game.override(action="correct", move=1, table="after", place=[1, 2], label="blue-12")
    assert event["ruling"]["verdict"] == "revert"
    assert game.keeper.pending is not None and game.keeper.pending.table.same_layout(START)
    assert game.keeper.opened == [False, False]
    assert same_state(game.keeper, game.replayed())


def test_correcting_an_uncertain_tile_turns_a_review_into_a_ruling() -> None:
    game = Game()
    after = Table.parse("[black-1 black-2 black-3] [red-10 red-11 red-12]").to_json()
    after["sets"][1][2] = {"label": "red-12", "confidence": 0.3, "box": [0, 0, 10, 14]}
    (move,) = game.settle_json(after)
    assert move["ruling"]["verdict"] == "review" and move["ruling"]["uncertain"]
    event = game.override(action="correct", move=1, table="after", place=[1, 2], label="red-12")
    assert event["ruling"]["verdict"] == "ok" and not event["ruling"]["uncertain"]
    assert last_move(game.keeper)["after"]["sets"][1][2]["box"] == [0, 0, 10, 14]  # the reading's box is kept
    assert same_state(game.keeper, game.replayed())


def test_a_correction_of_an_older_move_is_recorded_only() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 red-12]")
    game.settle("[black-1 black-2 black-3] [red-10 red-11 red-12] [blue-1 blue-2 blue-3]")
    before = game.keeper.status()
    event = game.override(action="correct", move=1, table="after", place=[1, 2], label="blue-12")
    assert "ruling" not in event and game.keeper.status() == before
    assert same_state(game.keeper, game.replayed())


@pytest.mark.parametrize(
    "place",
    [
        [5, 0],  # no such set
        [1, 7],  # no such position
        [-1, 0],  # no loose tiles
        [-2, 0],  # not a place
    ],
)
def test_a_correction_at_a_place_off_the_table_changes_nothing(place: list[int]) -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 blue-12]")
    before = game.keeper.status()
    event = game.override(action="correct", move=1, table="after", place=place, label="red-12")
    assert "ruling" not in event and game.keeper.status() == before
    with pytest.raises(IndexError):
        GameKeeper.relabel(last_move(game.keeper)["after"], place, "red-12")


def test_relabel_rejects_an_unknown_label() -> None:
    with pytest.raises(TileError):
        GameKeeper.relabel({"sets": [["red-1"]], "loose": []}, [0, 0], "green-4")


def test_relabel_a_loose_tile() -> None:
    table = GameKeeper.relabel({"sets": [], "loose": ["red-1", "red-2"]}, [-1, 1], "joker")
    assert table["loose"] == ["red-1", {"label": "joker", "confidence": 1.0, "corrected_from": "red-2"}]


def test_undo_walks_back_one_override_at_a_time() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 blue-12]")
    reverted = game.keeper.status()
    game.override(action="correct", move=1, table="after", place=[1, 2], label="red-12")
    corrected = game.keeper.status()
    game.override(action="revert", move=1)
    assert game.keeper.pending is not None

    undo = game.override(action="undo")
    assert undo["undoes"]["action"] == "revert" and game.keeper.status() == corrected
    assert same_state(game.keeper, game.replayed())
    undo = game.override(action="undo")
    assert undo["undoes"]["action"] == "correct" and game.keeper.status() == reverted
    assert last_move(game.keeper)["ruling"]["verdict"] == "revert"
    assert same_state(game.keeper, game.replayed())
    undo = game.override(action="undo")  # nothing left to undo
    assert "undoes" not in undo and game.keeper.status() == reverted


def test_undo_leaves_what_later_moves_set() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-1 red-2 red-3]")
    game.override(action="ok", move=1)
    game.settle("[black-1 black-2 black-3] [red-1 red-2 red-3] [blue-5 blue-6]")  # player 2: invalid set
    pending = game.keeper.pending
    assert pending is not None and pending.after_move == 2
    game.override(action="undo")
    assert game.keeper.pending is pending  # move 2's restore is not the override's to take back
    assert game.keeper.opened == [False, False]
    assert same_state(game.keeper, game.replayed())


def test_an_unknown_action_is_recorded_and_ignored() -> None:
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-1 red-2 red-3]")
    before = game.keeper.status()
    game.override(action="shrug", move=1)
    game.override(action="undo")  # the shrug is not an override to undo
    assert game.keeper.status() == before


def test_an_overrule_given_after_the_tiles_were_taken_back_leaves_the_next_moves_ruled() -> None:
    """Issue 15: the station said REVERT, the player took the tiles back, then the referee overruled (OK). The
    table settling without the tiles was ruled as a new REVERT (tiles returned to the rack), and its owed restore
    took the next two moves for partial restores: they were never ruled."""
    game = Game()
    game.settle("[black-1 black-2 black-3] [red-10 red-11 blue-12]")  # red-12 misread: REVERT
    game.override(action="ok", move=1, by="station", player=0, played=["blue-12", "red-10", "red-11"])
    assert game.keeper.pending is None  # nothing is owed: the station waits for no restore
    (restore,) = game.settle(START)  # the tiles were already coming off the table
    assert (restore["event"], restore["after_move"], restore["complete"]) == ("restore", 1, True)
    assert game.keeper.opened == [False, False] and game.keeper.moves == 1
    (second,) = game.settle("[black-1 black-2 black-3] [blue-10 blue-11 blue-12]")
    (third,) = game.settle("[black-1 black-2 black-3] [blue-10 blue-11 blue-12] [red-10 red-11 red-12]")
    assert [(m["event"], m["number"], m["player"], m["ruling"]["verdict"]) for m in (second, third)] == [
        ("move", 2, 1, "ok"),
        ("move", 3, 0, "ok"),
    ]
    assert same_state(game.keeper, game.replayed())
