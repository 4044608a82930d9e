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

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from referee.moves import Verdict, check_move, unsure_of_left_out
from referee.profiles import get_profile
from referee.table import LOOSE, Table
from referee.tiles import Tile
from vision.seats import PLAYERS, Seat, seating

_USE_PROFILE = object()


class GameStateError(ValueError):
    """A game that cannot be set up, or an event it cannot take (a move out of order, a player not at the table,
    a field missing or not a finite number): a replayed log is data from a file."""


VERDICTS = ("ok", "revert", "review")


@dataclass
class Pending:
    """A table the referee sent back, waiting to be restored."""

    table: Table
    player: int
    after_move: int
    opened_before: bool = False
    """The player's opening status before that move (given back when the table is restored)."""
    owed: bool = True
    """A revert the referee ordered; ``False`` after a review, where the table *may* be put back (a person
    decides): then only the complete layout counts as a restore, never a partial one."""


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
    left_out: int = 0
    """Boxes left out of the last settled table's reading as most likely not tiles (see vision.pipeline)."""
    unread_s: float = 0.0
    """Seconds of the camera's picture nobody looked at since the last move (``unread`` events: reading fell behind
    the camera, or the source dropped out): a move may have come and gone unseen, so the next move is REVIEW."""

    def __post_init__(self) -> None:
        if not isinstance(self.profile, str):
            raise GameStateError(f"a profile is a name, not {self.profile!r}")
        rules = get_profile(self.profile)  # an unknown profile fails here, before any frame is read
        most = min(rules.max_players, PLAYERS[-1])
        if not _is_int(self.players) or not PLAYERS[0] <= self.players <= most:
            raise GameStateError(f"{rules.name} is played by {PLAYERS[0]} to {most} players, not {self.players!r}")
        if not _is_int(self.first_player) or not 0 <= self.first_player < self.players:
            raise GameStateError(
                f"the first player is 0 to {self.players - 1} (0-based) at a {self.players}-player table,"
                f" not {self.first_player!r}"
            )
        limit = self.time_limit_s
        if limit is not _USE_PROFILE and limit is not None and not (_is_number(limit) and 0 <= limit < math.inf):
            raise GameStateError(f"a time limit is a finite number of seconds (or none), not {limit!r}")
        if not self.opened:
            self.opened = [False] * self.players
        self.player = self.first_player

    # -- views ----------------------------------------------------------------------------------
    @property
    def seating(self) -> tuple[Seat, ...]:
        """Each player's seat around the table, in turn order (see :mod:`vision.seats`)."""
        return seating(self.players)

    def seat_of(self, player: int) -> int:
        """The player's seat number, as the log writes it."""
        return self.seating[player].number

    def player_at(self, seat: int | None) -> int | None:
        """The player in seat number ``seat``; None for an empty seat (or none given)."""
        numbers = [s.number for s in self.seating]
        return numbers.index(seat) if seat in numbers else None

    def status(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "seat": self.seat_of(self.player),
            "opened": list(self.opened),
            "moves": self.moves,
            "clock_mode": self.clock_mode,
            "turn_started_s": self.turn_started_s,
            "pending_restore": None if self.pending is None or not self.pending.owed else self.pending.table.to_json(),
        }

    # -- what the pipeline tells us -------------------------------------------------------------
    def settled(
        self,
        after: Table,
        *,
        time_s: float,
        frame: int,
        start_s: float | None,
        seat: int | None,
        hands: bool,
        left_out: int = 0,
    ) -> list[dict[str, Any]]:
        """The table is still again after activity (``hands``: an arm was seen over it, from ``seat``;
        ``left_out``: boxes left out of the reading as most likely not tiles)."""
        at = {"time_s": round(time_s, 3), "frame": frame, **({"left_out": left_out} if left_out else {})}
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
        if not hands and not changed:
            return []  # lighting or a passing shadow: nothing happened
        if not hands and not self.unread_s:
            # Nobody reached over the table, yet it reads differently: a better reading, not a move (unless the
            # camera went unread meanwhile: then hands may have come and gone unseen, and it is a move, REVIEW).
            return self._emit([{"event": "table", **at, "reason": "re-read, no hands seen", "table": _json(after)}])
        return self._emit([self._move(after, at, start_s=start_s, seat=seat, ended_by="settle")])

    def refine(self, table: Table, *, time_s: float, frame: int) -> list[dict[str, Any]]:
        """The same table read with more certainty (more readings of the still table agree)."""
        if self.table is None or not table.same_layout(self.table):
            return []
        at = {"time_s": round(time_s, 3), "frame": frame}
        return self._emit([{"event": "table", **at, "reason": "refined", "table": _json(table)}])

    def activity(self, *, time_s: float, frame: int) -> list[dict[str, Any]]:
        """Hands came over the table: logged once per move, so a resumed game knows it too."""
        if self.active_since_move:
            return []
        return self._emit([{"event": "activity", "time_s": round(time_s, 3), "frame": frame}])

    def clock(
        self, *, time_s: float, frame: int, table: Table | None = None, left_out: int = 0
    ) -> list[dict[str, Any]]:
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
            unseen = {"left_out": left_out} if left_out else {}
            events.append(
                {"event": "table", **at, **unseen, "reason": "changed during the turn", "table": _json(table)}
            )
        self._emit(events)
        if self.table is None:
            return events
        move = self._move(self.table, at, start_s=self.turn_started_s, seat=None, ended_by="clock")
        return [*events, *self._emit([move])]

    # -- state ----------------------------------------------------------------------------------
    def apply(self, event: dict[str, Any]) -> None:
        """Update the game by one event (new, or replayed from a log).

        An event this game cannot take is a :class:`GameStateError` naming it, never a ``KeyError``: a field
        missing or of the wrong type, a player not at the table, a time that is not a finite number (a log is
        JSON, and Python's JSON reads ``NaN``). A move is checked whole before it changes anything.
        """
        kind = event.get("event")
        for key in TIME_FIELDS:
            if key in event:
                _seconds(event, key)
        try:
            self._apply(kind, event)
        except GameStateError:
            raise
        except KeyError as error:
            raise GameStateError(f"{_what(event)} lacks {error.args[0]!r}") from None
        except (TypeError, ValueError, IndexError, AttributeError) as error:
            raise GameStateError(f"{_what(event)}: {error}") from None

    def _apply(self, kind: Any, event: dict[str, Any]) -> None:
        if kind in ("table", "move", "restore"):
            self.left_out = int(event.get("left_out", 0))
        if kind == "table":
            self.table = Table.from_json(event["table"])
            if self.turn_table is None or not self.clock_mode:
                self.turn_table = self.table
        elif kind == "clock":
            self.clock_mode = True
            if event.get("confirms") is not None:
                self.turn_started_s = float(event["time_s"])  # the press, not the settling, ends the turn
        elif kind == "move":
            self._apply_move(event)
        elif kind == "restore":
            self.table = Table.from_json(event["table"])
            self.turn_table = self.table
            self.turn_started_s = float(event["time_s"])
            if event.get("complete"):
                if self.pending is not None:
                    self.opened[self.pending.player] = self.pending.opened_before  # the move is undone
                self.pending = None
        elif kind == "override":
            self._apply_override(event)
        elif kind == "activity":
            self.active_since_move = True
        elif kind == "unread":
            self.unread_s += float(event["seconds"])

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
        seated = self.player_at(seat)
        player = seated if seated is not None else self.player  # the hands' side beats a turn order gone wrong
        opened = self.opened[player]
        elapsed = max(0.0, at["time_s"] - self.turn_started_s)
        limit = {} if self.time_limit_s is _USE_PROFILE else {"time_limit_s": self.time_limit_s}
        ruling = check_move(before, after, opened=opened, profile=self.profile, elapsed_s=elapsed, **limit)
        ruling = unsure_of_left_out(ruling, at.get("left_out", 0) + self.left_out)
        if self.unread_s:
            note = f"the camera was not read for {self.unread_s:.1f} s during this move: a person decides"
            ruling = replace(ruling, verdict=Verdict.REVIEW, penalty_tiles=0, notes=(*ruling.notes, note))
        return {
            "event": "move",
            **at,
            "number": self.moves + 1,
            "player": player,
            "seat": self.seat_of(player),
            "hands_seat": seat,
            "turn_order_player": self.player,
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
        ruling, player, after = self._checked_move(event)
        if _opens(ruling):
            self.opened[player] = True
        if ruling["verdict"] != "ok":
            # A revert is owed; a review may be put back too (a person decides): either way, the table coming
            # back to the layout to restore is a restore, not a move.
            restore, before = ruling.get("revert") or {}, Table.from_json(event["before"])
            target = Table.from_json(restore["restore"]) if restore.get("restore") else before
            if target.same_layout(before):
                target = before  # the reading, with its uncertain tiles (a restore is compared with it)
            opened_before = bool(event.get("opened", self.opened[player]))
            owed = ruling["verdict"] == "revert"
            pending = Pending(target, player, event["number"], opened_before, owed)
            self.pending = pending if not target.same_layout(after) else None
        else:
            self.pending = None
        self.table = self.turn_table = after
        self.moves = event["number"]
        self.player = (player + 1) % self.players
        self.turn_started_s = float(event["time_s"])
        self.last_move = event
        self.active_since_move = False
        self.unread_s = 0.0

    def _checked_move(self, event: dict[str, Any]) -> tuple[dict[str, Any], int, Table]:
        """A move event's ruling, player and table after, once every field the game uses is known good."""
        number = event.get("number")
        if not _is_int(number):
            raise GameStateError(f"a move's number is {number!r}, not a whole number")
        if number != self.moves + 1:
            raise GameStateError(f"move {number} follows move {self.moves} in the log")
        for key in ("time_s", "player", "ruling", "before", "after"):
            if key not in event:
                raise GameStateError(f"move {number} lacks {key!r}")
        _seconds(event, "time_s")
        player = event["player"]
        if not _is_int(player) or not 0 <= player < self.players:
            raise GameStateError(
                f"move {number} is by player {player!r}, not one of the {self.players} at the table (0 to"
                f" {self.players - 1} in the log)"
            )
        ruling = event["ruling"]
        if not isinstance(ruling, dict) or ruling.get("verdict") not in VERDICTS:
            raise GameStateError(f"move {number}'s ruling has no verdict ({', '.join(VERDICTS)})")
        try:
            after = Table.from_json(event["after"])
            Table.from_json(event["before"])
        except (TypeError, ValueError, KeyError, AttributeError) as error:
            raise GameStateError(f"move {number}'s tables cannot be read: {error}") from None
        return ruling, player, after

    def _restoring(self, after: Table, at: dict[str, Any], seat: int | None, changed: bool) -> list[dict] | None:
        """Events when the settled table is (part of) putting back a reverted move; None when it is not."""
        pending = self.pending
        assert pending is not None
        base = {"event": "restore", **at, "after_move": pending.after_move, "player": pending.player}
        if looks_restored(after, pending.table):
            return [{**base, "complete": True, "table": _json(after)}]
        if not changed or seat not in (None, self.seat_of(pending.player)):
            return None
        assert self.table is not None
        if pending.owed or _distance(after, pending.table) < _distance(self.table, pending.table):
            # After a review nothing is owed, but the player who made the move taking tiles back towards the
            # layout before it is putting it back (a legal move never takes tiles off the table).
            return [{**base, "complete": False, "table": _json(after)}]
        return None

    def _apply_override(self, event: dict[str, Any]) -> None:
        """The referee's word on a move (``event["move"]``), from the station or replayed from the log.

        - ``accept``: the ruling stands (recorded, nothing changes).
        - ``ok``: the move is fine: no restore owed, and a player who laid tiles has opened.
        - ``revert``: the referee orders the move undone: the table as it was before it is to be restored
          (``restore``, else the ruling's plan, else the move's ``before``); a player who opened with the last
          move has not opened after all.
        - ``correct``: a tile was misread (``table`` "before"/"after", ``place`` [set, position], set -1 for a
          loose tile, ``label``). On the last move the move is ruled again on the corrected tables; the new
          ruling is written into the event before it is logged (``ruling``), so a replay uses it as it was.
          A restore still waits for the table as the camera read it before the move.
        - ``undo``: the last override not yet undone loses its effect (where the game has not moved on from
          what it set); the event says which one (``undoes``).

        Other actions are recorded and change nothing (a log from a later version still replays).
        """
        action = event.get("action")
        if action == "undo":
            self._undo_override(event)
            return
        if action not in ("accept", "ok", "revert", "correct"):
            return
        state = self._override_state()
        if action == "ok":
            self._override_ok(event)
        elif action == "revert":
            self._override_revert(event)
        elif action == "correct":
            self._override_correct(event)
        self._override_records().append({"event": event, "before": state, "after": self._override_state(),
                                         "undone": False})  # fmt: skip

    def _override_records(self) -> list[dict[str, Any]]:
        """The overrides applied so far with the state they changed (kept beside the fields, for ``undo``)."""
        records: list[dict[str, Any]] = self.__dict__.setdefault("_overrides", [])
        return records

    def _override_state(self) -> dict[str, Any]:
        return {"pending": self.pending, "opened": tuple(self.opened), "last_move": self.last_move}

    def _overridden_move(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """The last move when the override is about it (older moves are not kept)."""
        number = event.get("move")
        if self.last_move is not None and number is not None and int(number) == int(self.last_move["number"]):
            return self.last_move
        return None

    def _set_opened(self, player: int, value: bool) -> None:
        if 0 <= player < self.players and self.opened[player] != value:
            opened = list(self.opened)
            opened[player] = value
            self.opened = opened

    def _override_ok(self, event: dict[str, Any]) -> None:
        move = self._overridden_move(event)
        number = int(event["move"])
        if self.pending is not None and self.pending.after_move == number:
            self.pending = None
        player = event.get("player", None if move is None else move["player"])
        played = event.get("played", [] if move is None else move["ruling"].get("played", []))
        if played and player is not None:
            self._set_opened(int(player), True)

    def _override_revert(self, event: dict[str, Any]) -> None:
        move = self._overridden_move(event)
        number = int(event["move"])
        restore = event.get("restore")
        if restore is None and move is not None:
            plan = move["ruling"].get("revert") or {}
            restore = plan.get("restore") or move["before"]
        player = event.get("player", None if move is None else move["player"])
        if restore is None or player is None:
            return
        target = Table.from_json(restore)
        owed = self.table is None or not target.same_layout(self.table)
        self.pending = Pending(target, int(player), number) if owed else None
        had_opened = event.get("opened", None if move is None else move.get("opened"))
        if move is not None and had_opened is False:
            self._set_opened(int(player), False)

    def _override_correct(self, event: dict[str, Any]) -> None:
        move = self._overridden_move(event)
        which, label = event.get("table"), event.get("label")
        if move is None or which not in ("before", "after") or not isinstance(label, str):
            return
        try:
            corrected_table = self.relabel(move[which], event["place"], label)
        except (KeyError, IndexError, TypeError, ValueError):
            return  # a place that is not on that table: recorded, nothing to re-rule
        fixed = {**move, which: corrected_table, "as_read": move.get("as_read", move)}
        if "ruling" not in event:
            limit = {} if self.time_limit_s is _USE_PROFILE else {"time_limit_s": self.time_limit_s}
            ruling = check_move(
                Table.from_json(fixed["before"]), Table.from_json(fixed["after"]), opened=bool(move["opened"]),
                profile=self.profile, elapsed_s=float(move["elapsed_s"]), **limit,
            )  # fmt: skip
            event["ruling"] = ruling.to_dict()
        fixed["ruling"] = event["ruling"]
        player = int(move["player"])
        self._set_opened(player, bool(move["opened"]) or _opens(event["ruling"]))
        if event["ruling"]["verdict"] == "ok":
            if self.pending is not None and self.pending.after_move == move["number"]:
                self.pending = None
        else:
            target = Table.from_json(fixed["as_read"]["before"])
            owed = self.table is None or not target.same_layout(self.table)
            self.pending = Pending(target, player, int(move["number"])) if owed else None
        self.last_move = fixed

    def _undo_override(self, event: dict[str, Any]) -> None:
        record = next((r for r in reversed(self._override_records()) if not r["undone"]), None)
        if record is None:
            return
        record["undone"] = True
        undone = record["event"]
        event.setdefault("undoes", {key: undone.get(key) for key in ("action", "move", "time_s")})
        before, after = record["before"], record["after"]
        if self.pending is after["pending"]:
            self.pending = before["pending"]
        if self.last_move is after["last_move"]:
            self.last_move = before["last_move"]
        for player, (was, became) in enumerate(zip(before["opened"], after["opened"], strict=True)):
            if was != became and self.opened[player] == became:
                self._set_opened(player, was)

    @staticmethod
    def relabel(table: dict[str, Any], place: Any, label: str) -> dict[str, Any]:
        """Table JSON with the tile at ``place`` ([set, position]; set -1 for loose) read as ``label`` for certain.

        Raises ``IndexError`` for a place that is not on the table and ``TileError`` (a ``ValueError``) for an
        unknown label.
        """
        set_index, position = (int(v) for v in place)
        tile = str(Tile.parse(label))
        if set_index < LOOSE or set_index >= len(table["sets"]):
            raise IndexError(f"no set {set_index} on the table")
        rows = table["loose"] if set_index == LOOSE else table["sets"][set_index]
        if not 0 <= position < len(rows):
            raise IndexError(f"no tile at place {[set_index, position]}")
        old = rows[position]
        fields = dict(old) if isinstance(old, dict) else {"label": old}
        fields.pop("uncertain", None)
        new = {
            **fields,
            "label": tile,
            "confidence": 1.0,
            "corrected_from": fields.get("corrected_from", fields["label"]),
        }
        new_rows = [*rows[:position], new, *rows[position + 1 :]]
        if set_index == LOOSE:
            return {**table, "loose": new_rows}
        return {**table, "sets": [*table["sets"][:set_index], new_rows, *table["sets"][set_index + 1 :]]}


def looks_restored(table: Table, target: Table) -> bool:
    """``table`` is ``target`` as far as the tiles read for sure on both tell: the sets pair up (an uncertain
    tile on either side matching any tile of the other set) and so do the loose tiles read for sure.

    A table put back is read like any other, and so was the layout to restore: a restore must not need two
    perfect readings, or the restore itself is taken for a new move (and ruled).
    """
    if table.same_layout(target):
        return True
    if Counter(_certain_loose(table)) != Counter(_certain_loose(target)) or len(table.sets) != len(target.sets):
        return False
    unmatched = list(range(len(target.sets)))
    for index in range(len(table.sets)):
        match = next((other for other in unmatched if _sets_agree(table, index, target, other)), None)
        if match is None:
            return False
        unmatched.remove(match)
    return True


def _distance(table: Table, target: Table) -> int:
    """Tiles read for sure that are on one table and not on the other."""
    sure = Counter(t for place, t in table.places() if place not in table.uncertain)
    wanted = Counter(t for place, t in target.places() if place not in target.uncertain)
    return sum(((sure - wanted) + (wanted - sure)).values())


def _certain_loose(table: Table) -> list[Tile]:
    return [t for p, t in enumerate(table.loose) if (LOOSE, p) not in table.uncertain]


def _sets_agree(a: Table, i: int, b: Table, j: int) -> bool:
    set_a, set_b = a.sets[i], b.sets[j]
    if len(set_a.tiles) != len(set_b.tiles):
        return False
    unsure_a = {p for s, p in a.uncertain if s == i}
    unsure_b = {p for s, p in b.uncertain if s == j}
    if not unsure_a and not unsure_b:
        return set_a.layout_key == set_b.layout_key
    sure_a = Counter(t for p, t in enumerate(set_a.tiles) if p not in unsure_a)
    sure_b = Counter(t for p, t in enumerate(set_b.tiles) if p not in unsure_b)
    return not sure_a - Counter(set_b.tiles) and not sure_b - Counter(set_a.tiles)


TIME_FIELDS = ("time_s", "elapsed_s", "start_s", "turn_started_s")
"""Times an event may carry: each a finite number of seconds when it is there (``start_s`` may be null)."""


def _seconds(event: dict[str, Any], key: str) -> float | None:
    value = event.get(key)
    if value is None and key == "start_s":
        return None
    if not _is_number(value) or not math.isfinite(value):
        raise GameStateError(f"{_what(event)}: {key} is {value!r}, not a finite number of seconds")
    return float(value)


def _what(event: dict[str, Any]) -> str:
    """An event as a message names it: "move 3", "restore event"."""
    kind = event.get("event")
    if kind == "move" and _is_int(event.get("number")):
        return f"move {event['number']}"
    return f"{kind} event" if isinstance(kind, str) else "an event"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _opens(ruling: dict[str, Any]) -> bool:
    """A move that puts the player on the table: tiles played and not sent back.

    A ``review`` counts as standing (its usual cause is an uncertain reading); the referee's override says
    otherwise when it is not.
    """
    return bool(ruling.get("played")) and ruling["verdict"] != "revert"


def _json(table: Table) -> dict[str, Any]:
    return table.to_json(with_extras=True)
