"""The game between moves as a pure state machine: who is on move, who has opened, what must be restored.

(Over 500 lines on purpose: one state machine whose parts, turn order, restore matching, re-rulings and the override
ledger, change the same frozen value; its events and their JSON are in :mod:`referee.events`.)

A :class:`Game` is a frozen value, like a chess library's board: :meth:`Game.apply` takes one typed event and
returns the game after it, for new events and for events replayed from a game log alike, so a game resumed after
a crash is exactly the game that was interrupted. The history the game needs is kept explicitly: the last move
(as ruled, and as the camera read it before a correction) and the ledger of the referee's overrides, which
:class:`Undo` walks back one at a time.

What the table tells the game comes in through the ``on_*`` methods, which answer with the events to log (and
the game after them): :meth:`Game.on_settled` (a new still table after activity), :meth:`Game.on_clock` (the
clock key), :meth:`Game.on_refined`, :meth:`Game.on_activity`.

Two ways to end a move:

- *settle* (the default): hands leave, the table is still again, the move is ruled at once. A stretch of
  activity that leaves the table unchanged (hands came and went: a tile was drawn) is a draw.
- *clock*: once the clock key has been pressed in a game, moves end at the key. Changes in between are the
  same turn; a press with the table unchanged is a draw.

Seats are the camera's business: the game knows each player's seat only as the number its moves are logged with
(:attr:`Game.seats`). The events are typed values (:mod:`referee.events`); JSON exists only at the edge:
:func:`~referee.events.event_from_json` and each event's ``to_json`` (the game log's format, unchanged).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

from referee.events import (
    OVERRIDE_ACTIONS,
    Activity,
    ClockPress,
    Event,
    GameStateError,
    Move,
    Note,
    Override,
    Restore,
    TableRead,
    Undo,
    Unread,
    describe,
    event_from_json,
)
from referee.moves import Ruling, Verdict, check_move, unsure_of_left_out
from referee.profiles import get_profile
from referee.table import LOOSE, Table
from referee.tiles import Tile

__all__ = [
    "Activity", "ClockPress", "Event", "Game", "GameStateError", "Move", "Note", "Override", "OverrideRecord",
    "Pending", "Restore", "TableRead", "Undo", "Unread", "describe", "event_from_json", "looks_restored", "relabel",
]  # fmt: skip

MIN_PLAYERS = 2
USE_PROFILE: Any = object()
"""A time limit not agreed at the table: the profile's."""

# -- state ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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
    overruled: bool = False
    """The referee overruled the revert (the move is OK), so nothing is owed; but a player may have begun
    taking the tiles back before the word came, and the table settling as it was before the move is that
    player putting it back (a restore), not a new move that takes tiles off the table."""


@dataclass(frozen=True, slots=True)
class OverrideState:
    """What an override may change, before and after it (for :class:`Undo`)."""

    pending: Pending | None
    opened: tuple[bool, ...]
    last_move: Move | None


@dataclass(frozen=True, slots=True)
class OverrideRecord:
    override: Override
    before: OverrideState
    after: OverrideState
    undone: bool = False


@dataclass(frozen=True, slots=True)
class Game:
    """The game between snapshots. Make one with :meth:`start` (which checks the setup); change it with
    :meth:`apply` (or the ``on_*`` methods, which also say what to log)."""

    profile: str
    players: int
    first_player: int = 0
    time_limit_s: float | None = None
    """The move time in force (the profile's unless a limit was agreed at the table; None: no limit)."""
    seats: tuple[int, ...] = ()
    """Each player's seat number, in turn order, as the camera numbers seats (default: 0, 1, ...)."""
    table: Table | None = None
    """The last settled table."""
    turn_table: Table | None = None
    """The table when the current turn began (clock mode rules the turn against it)."""
    player: int = 0
    """The player on move."""
    opened: tuple[bool, ...] = ()
    moves: int = 0
    turn_started_s: float = 0.0
    clock_mode: bool = False
    pending: Pending | None = None
    last_move: Move | None = None
    """The last move, as ruled now (after the referee's corrections)."""
    as_read: Move | None = None
    """The last move as the camera read it, before any correction."""
    active_since_move: bool = False
    """Hands were over the table since the last move (a clock press right after a settled move confirms it)."""
    left_out: int = 0
    """Boxes left out of the last settled table's reading as most likely not tiles."""
    unread_s: float = 0.0
    """Seconds of the camera's picture nobody looked at since the last move (see :class:`Unread`)."""
    ledger: tuple[OverrideRecord, ...] = ()
    """The overrides applied so far, each with the state it changed (for :class:`Undo`)."""

    @classmethod
    def start(
        cls,
        profile: str,
        players: int,
        *,
        first_player: int = 0,
        time_limit_s: float | None = USE_PROFILE,
        seats: Sequence[int] | None = None,
        max_players: int | None = None,
    ) -> Game:
        """A new game: 2 players up to the profile's ``max_players`` (or ``max_players``, when fewer: the
        camera's seats), the first player 0-based, a time limit agreed at the table (seconds, or None for none)."""
        if not isinstance(profile, str):
            raise GameStateError(f"a profile is a name, not {profile!r}")
        rules = get_profile(profile)  # an unknown profile fails here, before any frame is read
        most = rules.max_players if max_players is None else min(rules.max_players, max_players)
        if not _is_int(players) or not MIN_PLAYERS <= players <= most:
            raise GameStateError(f"{rules.name} is played by {MIN_PLAYERS} to {most} players, not {players!r}")
        if not _is_int(first_player) or not 0 <= first_player < players:
            raise GameStateError(
                f"the first player is 0 to {players - 1} (0-based) at a {players}-player table, not {first_player!r}"
            )
        limit = time_limit_s
        if limit is USE_PROFILE:
            limit = rules.time_limit_s
        elif limit is not None and not (_is_number(limit) and 0 <= limit < math.inf):
            raise GameStateError(f"a time limit is a finite number of seconds (or none), not {limit!r}")
        numbers = tuple(range(players)) if seats is None else tuple(seats)
        if len(numbers) != players:
            raise GameStateError(f"{players} players need {players} seats, not {len(numbers)}")
        return cls(
            profile, players, first_player, None if limit is None else float(limit), numbers,
            player=first_player, opened=(False,) * players,
        )  # fmt: skip

    # -- views ----------------------------------------------------------------------------------------------
    def seat_of(self, player: int) -> int:
        return self.seats[player]

    def player_at(self, seat: int | None) -> int | None:
        """The player in seat number ``seat``; None for an empty seat (or none given)."""
        return self.seats.index(seat) if seat in self.seats else None

    def status(self) -> dict[str, Any]:
        """Who is on move, who has opened, what is owed: the ``status`` a resume line writes."""
        return {
            "player": self.player,
            "seat": self.seat_of(self.player),
            "opened": list(self.opened),
            "moves": self.moves,
            "clock_mode": self.clock_mode,
            "turn_started_s": self.turn_started_s,
            "pending_restore": None if self.pending is None or not self.pending.owed else self.pending.table.to_json(),
        }

    # -- what the table tells the game ------------------------------------------------------------------------
    def on_settled(
        self,
        after: Table,
        *,
        time_s: float,
        frame: int,
        start_s: float | None,
        hands_seat: int | None,
        hands: bool,
        left_out: int = 0,
    ) -> tuple[Game, list[Event]]:
        """The table is still again after activity (``hands``: an arm was seen over it, from ``hands_seat``;
        ``left_out``: boxes left out of the reading as most likely not tiles)."""
        at: dict[str, Any] = {"time_s": round(time_s, 3), "frame": frame, "left_out": left_out}
        if self.table is None:
            return self._emit([TableRead(after, "first reading", **at)])
        changed = not after.same_layout(self.table)
        if self.pending is not None:
            events = self._restoring(after, at, hands_seat, changed and hands)
            if events is not None:
                return self._emit(events)
        if self.clock_mode:
            if not changed:
                return self, []
            return self._emit([TableRead(after, "changed during the turn", **at)])
        if not hands and not changed:
            return self, []  # lighting or a passing shadow: nothing happened
        if not hands and not self.unread_s:
            # Nobody reached over the table, yet it reads differently: a better reading, not a move (unless the
            # camera went unread meanwhile: then hands may have come and gone unseen, and it is a move, REVIEW).
            return self._emit([TableRead(after, "re-read, no hands seen", **at)])
        return self._emit([self._move(after, at, start_s=start_s, hands_seat=hands_seat, ended_by="settle")])

    def on_refined(self, table: Table, *, time_s: float, frame: int) -> tuple[Game, list[Event]]:
        """The same table read with more certainty (more readings of the still table agree)."""
        if self.table is None or not table.same_layout(self.table):
            return self, []
        return self._emit([TableRead(table, "refined", time_s=round(time_s, 3), frame=frame)])

    def on_activity(self, *, time_s: float, frame: int) -> tuple[Game, list[Event]]:
        """Hands came over the table: logged once per move."""
        if self.active_since_move:
            return self, []
        return self._emit([Activity(round(time_s, 3), frame)])

    def on_clock(
        self, *, time_s: float, frame: int, table: Table | None = None, left_out: int = 0
    ) -> tuple[Game, list[Event]]:
        """The clock key: the move of the player on move ends now (``table``: the settled table, if newer).

        The first press of a game switches to clock mode; if it comes right after a move already ruled when the
        table settled (no hands since), it confirms that move instead of adding a draw.
        """
        at: dict[str, Any] = {"time_s": round(time_s, 3), "frame": frame}
        confirms = (
            not self.clock_mode
            and not self.active_since_move
            and self.last_move is not None
            and (table is None or self.table is None or table.same_layout(self.table))
        )
        if confirms:
            assert self.last_move is not None
            return self._emit([ClockPress(**at, confirms=self.last_move.number)])
        events: list[Event] = [ClockPress(**at)]
        if table is not None and self.table is not None and not table.same_layout(self.table):
            events.append(TableRead(table, "changed during the turn", **at, left_out=left_out))
        game, events = self._emit(events)
        if game.table is None:
            return game, events
        at["left_out"] = 0
        move = game._move(game.table, at, start_s=game.turn_started_s, hands_seat=None, ended_by="clock")
        game, more = game._emit([move])
        return game, [*events, *more]

    # -- state ------------------------------------------------------------------------------------------------
    def apply(self, event: Event) -> Game:
        """The game after one event (new, or replayed from a log).

        An event this game cannot take is a :class:`GameStateError` naming it: a move out of order, a player not
        at the table, tables that cannot be read. The game itself never changes (it is a value).

        Overrides (from the station, or replayed from the log):

        - ``accept``: the ruling stands (recorded, nothing changes).
        - ``ok``: the move is fine: no restore owed, and a player who laid tiles has opened. The table settling as
          it was before the move is still the restore of it (:attr:`Pending.overruled`): the player may have been
          taking the tiles back when the word came.
        - ``revert``: the referee orders the move undone: the table as it was before it is to be restored
          (``restore``, else the ruling's plan, else the move's ``before``); a player who opened with the move has
          not opened after all.
        - ``correct``: a tile was misread. On the last move the move is ruled again on the corrected tables
          (:meth:`complete` writes the ruling into the event). A restore still waits for the table as the camera
          read it before the move.
        - :class:`Undo`: the last override not yet undone loses its effect, where the game has not moved on from
          what it set.
        """
        if isinstance(event, TableRead):
            table = event.table
            turn = table if self.turn_table is None or not self.clock_mode else self.turn_table
            return replace(self, table=table, turn_table=turn, left_out=event.left_out)
        if isinstance(event, Move):
            return self._apply_move(event)
        if isinstance(event, Restore):
            game = replace(self, table=event.table, turn_table=event.table, turn_started_s=float(event.time_s),
                           left_out=event.left_out)  # fmt: skip
            if event.complete:
                if game.pending is not None:  # the move is undone
                    game = game._with_opened(game.pending.player, game.pending.opened_before)
                game = replace(game, pending=None)
            return game
        if isinstance(event, ClockPress):
            if event.confirms is not None:  # the press, not the settling, ends the turn
                if event.time_s is None:
                    raise GameStateError("clock event lacks 'time_s'")
                return replace(self, clock_mode=True, turn_started_s=float(event.time_s))
            return replace(self, clock_mode=True)
        if isinstance(event, Activity):
            return replace(self, active_since_move=True)
        if isinstance(event, Unread):
            return replace(self, unread_s=self.unread_s + event.seconds)
        if isinstance(event, Override):
            return self._apply_override(self.complete(event))
        if isinstance(event, Undo):
            return self._undo()
        return self

    def replay(self, events: Iterable[Event]) -> Game:
        game = self
        for event in events:
            game = game.apply(event)
        return game

    @overload
    def complete(self, event: Override) -> Override: ...
    @overload
    def complete(self, event: Event) -> Event: ...
    def complete(self, event: Event) -> Event:
        """The event as it is logged: a correction of the last move with its new ruling, an undo naming the
        override it takes back. Other events (and events already complete) come back as they are."""
        if isinstance(event, Undo) and event.undoes is None:
            record = self._last_override()
            if record is None:
                return event
            undone = record.override
            return replace(event, undoes={"action": undone.action, "move": undone.move, "time_s": undone.time_s})
        if isinstance(event, Override) and event.action == "correct" and event.ruling is None:
            fixed = self._corrected(event)
            if fixed is None:
                return event
            move, before, after = fixed
            assert move.elapsed_s is not None  # _corrected checked it
            ruling = check_move(
                before, after, opened=bool(move.opened), profile=self.profile, elapsed_s=float(move.elapsed_s),
                time_limit_s=self.time_limit_s,
            )  # fmt: skip
            return replace(event, ruling=ruling)
        return event

    def _emit(self, events: list[Event]) -> tuple[Game, list[Event]]:
        game = self
        for event in events:
            game = game.apply(event)
        return game, events

    def _move(
        self, after: Table, at: Mapping[str, Any], *, start_s: float | None, hands_seat: int | None, ended_by: str
    ) -> Move:
        before = self.turn_table if self.clock_mode and self.turn_table is not None else self.table
        assert before is not None
        seated = self.player_at(hands_seat)
        player = seated if seated is not None else self.player  # the hands' side beats a turn order gone wrong
        opened = self.opened[player]
        elapsed = max(0.0, at["time_s"] - self.turn_started_s)
        ruling = check_move(
            before, after, opened=opened, profile=self.profile, elapsed_s=elapsed, time_limit_s=self.time_limit_s
        )
        ruling = unsure_of_left_out(ruling, at["left_out"] + self.left_out)
        if self.unread_s:
            note = f"the camera was not read for {self.unread_s:.1f} s during this move: a person decides"
            ruling = replace(ruling, verdict=Verdict.REVIEW, penalty_tiles=0, notes=(*ruling.notes, note))
        return Move(
            number=self.moves + 1, player=player, time_s=at["time_s"], before=before, after=after, ruling=ruling,
            frame=at["frame"], opened=opened, seat=self.seat_of(player), hands_seat=hands_seat,
            turn_order_player=self.player, start_s=None if start_s is None else round(start_s, 3),
            turn_started_s=round(self.turn_started_s, 3), elapsed_s=round(elapsed, 3), ended_by=ended_by,
            left_out=at["left_out"],
        )  # fmt: skip

    def _apply_move(self, move: Move) -> Game:
        if move.number != self.moves + 1:
            raise GameStateError(f"move {move.number} follows move {self.moves} in the log")
        player = move.player
        if not 0 <= player < self.players:
            raise GameStateError(
                f"move {move.number} is by player {player!r}, not one of the {self.players} at the table (0 to"
                f" {self.players - 1} in the log)"
            )
        ruling, after = move.ruling, move.after
        game = self._with_opened(player, True) if _opens(ruling) else self
        pending = None
        if ruling.verdict is not Verdict.OK:
            # A revert is owed; a review may be put back too (a person decides): either way, the table coming back
            # to the layout to restore is a restore, not a move.
            target = ruling.revert.restore if ruling.revert is not None else move.before
            if target.same_layout(move.before):
                target = move.before  # the reading, with its uncertain tiles (a restore is compared with it)
            opened_before = self.opened[player] if move.opened is None else move.opened
            owed = ruling.verdict is Verdict.REVERT
            candidate = Pending(target, player, move.number, opened_before, owed)
            pending = candidate if not target.same_layout(after) else None
        return replace(
            game, pending=pending, table=after, turn_table=after, moves=move.number,
            player=(player + 1) % self.players, turn_started_s=float(move.time_s), last_move=move, as_read=move,
            active_since_move=False, left_out=move.left_out, unread_s=0.0,
        )  # fmt: skip

    def _restoring(
        self, after: Table, at: Mapping[str, Any], hands_seat: int | None, changed: bool
    ) -> list[Event] | None:
        """Events when the settled table is (part of) putting back a reverted move; None when it is not."""
        pending = self.pending
        assert pending is not None
        base = {**at, "after_move": pending.after_move, "player": pending.player}
        if looks_restored(after, pending.table):
            return [Restore(after, complete=True, **base)]
        if not changed or (hands_seat is not None and self.player_at(hands_seat) != pending.player):
            return None
        assert self.table is not None
        if pending.owed or _distance(after, pending.table) < _distance(self.table, pending.table):
            # After a review nothing is owed, but the player who made the move taking tiles back towards the
            # layout before it is putting it back (a legal move never takes tiles off the table).
            return [Restore(after, complete=False, **base)]
        return None

    # -- overrides --------------------------------------------------------------------------------------------
    def _apply_override(self, override: Override) -> Game:
        if override.action not in OVERRIDE_ACTIONS:
            return self
        game = self
        if override.action == "ok":
            game = self._override_ok(override)
        elif override.action == "revert":
            game = self._override_revert(override)
        elif override.action == "correct":
            game = self._override_correct(override)
        record = OverrideRecord(override, self._override_state(), game._override_state())
        return replace(game, ledger=(*game.ledger, record))

    def _override_state(self) -> OverrideState:
        return OverrideState(self.pending, self.opened, self.last_move)

    def _last_override(self) -> OverrideRecord | None:
        return next((r for r in reversed(self.ledger) if not r.undone), None)

    def _overridden_move(self, override: Override) -> Move | None:
        """The last move when the override is about it (older moves are not kept)."""
        if self.last_move is not None and override.move is not None and override.move == self.last_move.number:
            return self.last_move
        return None

    def _with_opened(self, player: int, value: bool) -> Game:
        if not 0 <= player < self.players or self.opened[player] == value:
            return self
        opened = list(self.opened)
        opened[player] = value
        return replace(self, opened=tuple(opened))

    def _override_ok(self, override: Override) -> Game:
        number = _needed(override, "move")
        move = self._overridden_move(override)
        game = self
        pending = self.pending
        if pending is not None and pending.after_move == number:
            # Nothing is owed now; the table coming back to the layout before the move still is a restore (the
            # player may be taking the tiles back already: the station said REVERT until the referee's word).
            may_restore = self.table is not None and not looks_restored(self.table, pending.table)
            game = replace(game, pending=replace(pending, owed=False, overruled=True) if may_restore else None)
        player = override.player if override.player is not None else None if move is None else move.player
        played = override.played if override.played is not None else () if move is None else move.ruling.played
        if played and player is not None:
            game = game._with_opened(player, True)
        return game

    def _override_revert(self, override: Override) -> Game:
        number = _needed(override, "move")
        move = self._overridden_move(override)
        restore = override.restore
        if restore is None and move is not None:
            restore = move.ruling.revert.restore if move.ruling.revert is not None else move.before
        player = override.player if override.player is not None else None if move is None else move.player
        if restore is None or player is None:
            return self
        owed = self.table is None or not restore.same_layout(self.table)
        pending = Pending(restore, player, number) if owed else None
        game = replace(self, pending=pending)
        had_opened = override.opened if override.opened is not None else None if move is None else move.opened
        if move is not None and had_opened is False:
            game = game._with_opened(player, False)
        return game

    def _corrected(self, override: Override) -> tuple[Move, Table, Table] | None:
        """The last move and its tables with the override's correction; None when it corrects nothing."""
        move = self._overridden_move(override)
        which, label, place = override.table, override.label, override.place
        if move is None or which not in ("before", "after") or not isinstance(label, str):
            return None
        if move.opened is None or move.elapsed_s is None:
            missing = "opened" if move.opened is None else "elapsed_s"
            raise GameStateError(f"move {move.number} lacks {missing!r}: a correction cannot rule it again")
        try:
            corrected = relabel(getattr(move, which), place, label)
        except (IndexError, TypeError, ValueError):
            return None  # a place that is not on that table, a label that is no tile: recorded, nothing to re-rule
        before, after = (corrected, move.after) if which == "before" else (move.before, corrected)
        return move, before, after

    def _override_correct(self, override: Override) -> Game:
        fixed = self._corrected(override)
        if fixed is None or override.ruling is None:
            return self
        move, before, after = fixed
        ruling = override.ruling
        corrected = replace(move, before=before, after=after, ruling=ruling)
        game = self._with_opened(move.player, bool(move.opened) or _opens(ruling))
        as_read = self.as_read if self.as_read is not None and self.as_read.number == move.number else move
        if ruling.verdict is Verdict.OK:
            if game.pending is not None and game.pending.after_move == move.number:
                game = replace(game, pending=None)
        else:
            target = as_read.before
            owed = self.table is None or not target.same_layout(self.table)
            game = replace(game, pending=Pending(target, move.player, move.number) if owed else None)
        return replace(game, last_move=corrected, as_read=as_read)

    def _undo(self) -> Game:
        record = self._last_override()
        if record is None:
            return self
        ledger = tuple(replace(r, undone=True) if r is record else r for r in self.ledger)
        game = replace(self, ledger=ledger)
        before, after = record.before, record.after
        if game.pending == after.pending:
            game = replace(game, pending=before.pending)
        if game.last_move == after.last_move:
            game = replace(game, last_move=before.last_move)
        for player, (was, became) in enumerate(zip(before.opened, after.opened, strict=True)):
            if was != became and game.opened[player] == became:
                game = game._with_opened(player, was)
        return game


# -- tables -------------------------------------------------------------------------------------------------


def relabel(table: Table, place: Any, label: str) -> Table:
    """``table`` with the tile at ``place`` ([set, position]; set -1 for loose) read as ``label`` for certain
    (``confidence`` 1, ``corrected_from`` the label read).

    Raises ``IndexError`` for a place that is not on the table and ``TileError`` (a ``ValueError``) for an
    unknown label.
    """
    set_index, position = (int(v) for v in place)
    tile = Tile.parse(label)
    if set_index < LOOSE or set_index >= len(table.sets):
        raise IndexError(f"no set {set_index} on the table")
    rows = table.loose if set_index == LOOSE else table.sets[set_index].tiles
    if not 0 <= position < len(rows):
        raise IndexError(f"no tile at place {[set_index, position]}")
    spot = (set_index, position)
    fields = dict(table.extras.get(spot, {}))
    extras = {**table.extras, spot: {**fields, "confidence": 1.0,
                                     "corrected_from": fields.get("corrected_from", str(rows[position]))}}  # fmt: skip
    new_rows = (*rows[:position], tile, *rows[position + 1 :])
    if set_index == LOOSE:
        return Table(table.sets, new_rows, table.uncertain - {spot}, extras)
    sets = (*table.sets[:set_index], type(table.sets[set_index])(new_rows), *table.sets[set_index + 1 :])
    return Table(sets, table.loose, table.uncertain - {spot}, extras)


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


def _opens(ruling: Ruling) -> bool:
    """A move that puts the player on the table: tiles played and not sent back.

    A ``review`` counts as standing (its usual cause is an uncertain reading); the referee's override says
    otherwise when it is not.
    """
    return bool(ruling.played) and ruling.verdict is not Verdict.REVERT


def _needed(override: Override, key: str) -> Any:
    value = getattr(override, key)
    if value is None:
        raise GameStateError(f"override event lacks {key!r}")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
