"""From settled tables to moves and rulings: whose turn it is, who has opened, what must be restored.

:class:`GameKeeper` holds the game between snapshots. It is told when the table has settled (a new stable
reading after activity) or when the clock key is pressed, and answers with the events to log: ``move`` (with
the referee's ruling), ``restore`` (the table put back after a ruling that sent it back), ``table`` (the first
reading, or a change inside a turn when the clock key ends moves). Every state change goes through
:meth:`GameKeeper.apply`, for new events and for events replayed from a game log alike, so a game resumed
after a crash is exactly the game that was interrupted.

Two ways to end a move:

- *settle* (the default): hands leave, the table is still again, the move is ruled at once. A stretch of
  activity that leaves the table unchanged (hands came and went: a tile was drawn) is a draw.
- *clock*: once the clock key has been pressed in a game, moves end at the key. Changes in between are the
  same turn; a press with the table unchanged is a draw.

No imaging here: tables in, events (JSON-ready dictionaries) out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from referee.moves import check_move
from referee.profiles import get_profile
from referee.table import Table

SEATS_BY_PLAYERS: dict[int, tuple[int, ...]] = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}
"""Where the players sit: seat 0 at the bottom of the picture, then right, top, left (see vision.motion)."""
_USE_PROFILE = object()


class GameStateError(ValueError):
    """A game log that cannot be replayed (unknown event, move out of order)."""


@dataclass
class Pending:
    """A table the referee sent back, waiting to be restored."""

    table: Table
    player: int
    after_move: int


@dataclass
class GameKeeper:
    profile: str
    players: int
    first_player: int = 0
    time_limit_s: Any = _USE_PROFILE
    """A limit agreed at the table (seconds or None for none); the profile's by default."""
    table: Table | None = None
    """The last settled table."""
    player: int = 0
    """The player on move."""
    opened: list[bool] = field(default_factory=list)
    moves: int = 0
    turn_started_s: float = 0.0
    turn_table: Table | None = None
    """The table when the current turn began (clock mode rules the turn against it)."""
    clock_mode: bool = False
    pending: Pending | None = None
    last_move: dict[str, Any] | None = None
    active_since_move: bool = False
    """Hands were over the table since the last move (a clock press right after a settled move confirms it)."""

    def __post_init__(self) -> None:
        get_profile(self.profile)  # an unknown profile fails here, before any frame is read
        if self.players not in SEATS_BY_PLAYERS:
            raise GameStateError(f"a game has 2 to 4 players, not {self.players}")
        if not self.opened:
            self.opened = [False] * self.players
        self.player = self.first_player % self.players

    # -- views ----------------------------------------------------------------------------------
    def seat_of(self, player: int) -> int:
        return SEATS_BY_PLAYERS[self.players][player]

    def player_at(self, seat: int | None) -> int | None:
        seats = SEATS_BY_PLAYERS[self.players]
        return seats.index(seat) if seat in seats else None

    def status(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "seat": self.seat_of(self.player),
            "opened": list(self.opened),
            "moves": self.moves,
            "clock_mode": self.clock_mode,
            "turn_started_s": self.turn_started_s,
            "pending_restore": None if self.pending is None else self.pending.table.to_json(),
        }

    # -- what the pipeline tells us -------------------------------------------------------------
    def settled(
        self, after: Table, *, time_s: float, frame: int, start_s: float | None, seat: int | None, hands: bool
    ) -> list[dict[str, Any]]:
        """The table is still again after activity (``hands``: an arm was seen over it, from ``seat``)."""
        at = {"time_s": round(time_s, 3), "frame": frame}
        if self.table is None:
            return self._emit([{"event": "table", **at, "reason": "first reading", "table": _json(after)}])
        changed = not after.same_layout(self.table)
        if self.pending is not None:
            events = self._restoring(after, at, seat, changed and hands)
            if events is not None:
                return self._emit(events)
        if self.clock_mode:
            if not changed:
                return []
            return self._emit([{"event": "table", **at, "reason": "changed during the turn", "table": _json(after)}])
        if not changed and not hands:
            return []  # lighting or a passing shadow: nothing happened
        return self._emit([self._move(after, at, start_s=start_s, seat=seat, ended_by="settle")])

    def refine(self, table: Table, *, time_s: float, frame: int) -> list[dict[str, Any]]:
        """The same table read with more certainty (more readings of the still table agree)."""
        if self.table is None or not table.same_layout(self.table):
            return []
        at = {"time_s": round(time_s, 3), "frame": frame}
        return self._emit([{"event": "table", **at, "reason": "refined", "table": _json(table)}])

    def activity(self) -> None:
        """Hands came over the table."""
        self.active_since_move = True

    def clock(self, *, time_s: float, frame: int, table: Table | None = None) -> list[dict[str, Any]]:
        """The clock key: the move of the player on move ends now (``table``: the settled table, if newer).

        The first press of a game switches to clock mode; if it comes right after a move already ruled when
        the table settled (no hands since), it confirms that move instead of adding a draw.
        """
        at = {"time_s": round(time_s, 3), "frame": frame}
        confirms = (
            not self.clock_mode
            and not self.active_since_move
            and self.last_move is not None
            and (table is None or self.table is None or table.same_layout(self.table))
        )
        if confirms:
            assert self.last_move is not None
            return self._emit([{"event": "clock", **at, "confirms": self.last_move["number"]}])
        events: list[dict[str, Any]] = [{"event": "clock", **at}]
        if table is not None and self.table is not None and not table.same_layout(self.table):
            events.append({"event": "table", **at, "reason": "changed during the turn", "table": _json(table)})
        self._emit(events)
        if self.table is None:
            return events
        move = self._move(self.table, at, start_s=self.turn_started_s, seat=None, ended_by="clock")
        return [*events, *self._emit([move])]

    # -- state ----------------------------------------------------------------------------------
    def apply(self, event: dict[str, Any]) -> None:
        """Update the game by one event (new, or replayed from a log)."""
        kind = event.get("event")
        if kind == "table":
            self.table = Table.from_json(event["table"])
            if self.turn_table is None or not self.clock_mode:
                self.turn_table = self.table
        elif kind == "clock":
            self.clock_mode = True
        elif kind == "move":
            self._apply_move(event)
        elif kind == "restore":
            self.table = Table.from_json(event["table"])
            self.turn_table = self.table
            self.turn_started_s = float(event["time_s"])
            if event.get("complete"):
                self.pending = None
        elif kind == "override":
            self._apply_override(event)

    def replay(self, events: Iterable[dict[str, Any]]) -> None:
        for event in events:
            self.apply(event)

    def _emit(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for event in events:
            self.apply(event)
        return events

    def _move(
        self, after: Table, at: dict[str, Any], *, start_s: float | None, seat: int | None, ended_by: str
    ) -> dict[str, Any]:
        before = self.turn_table if self.clock_mode and self.turn_table is not None else self.table
        assert before is not None
        player, opened = self.player, self.opened[self.player]
        elapsed = max(0.0, at["time_s"] - self.turn_started_s)
        limit = {} if self.time_limit_s is _USE_PROFILE else {"time_limit_s": self.time_limit_s}
        ruling = check_move(before, after, opened=opened, profile=self.profile, elapsed_s=elapsed, **limit)
        return {
            "event": "move",
            **at,
            "number": self.moves + 1,
            "player": player,
            "seat": self.seat_of(player),
            "hands_seat": seat,
            "kind": ruling.kind,
            "opened": opened,
            "start_s": None if start_s is None else round(start_s, 3),
            "turn_started_s": round(self.turn_started_s, 3),
            "elapsed_s": round(elapsed, 3),
            "ended_by": ended_by,
            "before": _json(before),
            "after": _json(after),
            "ruling": ruling.to_dict(),
        }

    def _apply_move(self, event: dict[str, Any]) -> None:
        if event["number"] != self.moves + 1:
            raise GameStateError(f"move {event['number']} follows move {self.moves} in the log")
        ruling, player = event["ruling"], int(event["player"])
        after = Table.from_json(event["after"])
        if _opens(ruling):
            self.opened[player] = True
        if ruling["verdict"] != "ok":
            restore = ruling.get("revert") or {}
            target = Table.from_json(restore["restore"]) if restore.get("restore") else Table.from_json(event["before"])
            self.pending = Pending(target, player, event["number"]) if not target.same_layout(after) else None
        else:
            self.pending = None
        self.table = self.turn_table = after
        self.moves = event["number"]
        self.player = (player + 1) % self.players
        self.turn_started_s = float(event["time_s"])
        self.last_move = event
        self.active_since_move = False

    def _restoring(self, after: Table, at: dict[str, Any], seat: int | None, changed: bool) -> list[dict] | None:
        """Events when the settled table is (part of) putting back a reverted move; None when it is not."""
        pending = self.pending
        assert pending is not None
        base = {"event": "restore", **at, "after_move": pending.after_move, "player": pending.player}
        if after.same_layout(pending.table):
            return [{**base, "complete": True, "table": _json(after)}]
        if changed and seat in (None, self.seat_of(pending.player)):
            return [{**base, "complete": False, "table": _json(after)}]
        return None

    def _apply_override(self, event: dict[str, Any]) -> None:
        """The referee's decision on a move: ``accept`` (ruling stands), ``ok`` (no restore owed), ``revert``."""
        if event.get("action") == "ok" and self.pending is not None and self.pending.after_move == event.get("move"):
            self.pending = None
        elif event.get("action") == "revert" and event.get("restore") is not None:
            self.pending = Pending(Table.from_json(event["restore"]), int(event["player"]), int(event["move"]))


def _opens(ruling: dict[str, Any]) -> bool:
    """A move that puts the player on the table: tiles played and not sent back.

    A ``review`` counts as standing (its usual cause is an uncertain reading); the referee's override says
    otherwise when it is not.
    """
    return bool(ruling.get("played")) and ruling["verdict"] != "revert"


def _json(table: Table) -> dict[str, Any]:
    return table.to_json(with_extras=True)
