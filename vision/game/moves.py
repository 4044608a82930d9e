"""The camera's side of the game: seats, settled tables and clock presses in, game-log events out.

The game itself (whose turn it is, who has opened, what must be restored, the referee's overrides and their undo)
is :class:`referee.game.Game`, a pure state machine. :class:`GameKeeper` holds the current ``Game`` for the live
loop and the analysis: it maps the side of the table the hands came from to a seat (:mod:`vision.runtime.seats`), hands
the game what the pipeline saw (:meth:`GameKeeper.settled`, :meth:`GameKeeper.clock`, ...) and returns the typed
events of :mod:`referee.events` that happened (each written to the game log as its ``to_json`` line, the only place
they are dictionaries: ``vision.game.gamelog``, ``vision.session.driver``). Every state change goes through
:meth:`GameKeeper.apply`, for new events and for events replayed from a game log alike, so a game resumed after a
crash is exactly the game that was interrupted.

No imaging here: tables in, events out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import replace
from typing import Any

from referee.game import (
    Event,
    Game,
    GameStateError,
    Move,
    Pending,
    event_from_json,
    looks_restored,
)
from referee.moves import Verdict
from referee.profiles import PROFILES, Profile
from referee.table import LOOSE, Table
from referee.tiles import Tile
from vision.runtime.seats import PLAYERS, Orientation, Seat, seating, turn_order

__all__ = ["GameKeeper", "GameStateError", "Pending", "looks_restored"]


class GameKeeper:
    """The game the camera watches: a :class:`referee.game.Game` and the seats its players sit in."""

    def __init__(
        self,
        profile: str | Profile,
        players: int,
        first_player: int = 0,
        *,
        orientation: Orientation | None = None,
    ) -> None:
        self.orientation = orientation
        """How the camera sees the table (the edge player 1 sits at, mirrored or not): the players then sit round
        the table the profile's way (:func:`vision.runtime.seats.turn_order`); None: :func:`seating`'s order, as
        logs always had it."""
        name = profile.name if isinstance(profile, Profile) else profile
        if isinstance(players, int) and not isinstance(players, bool) and PLAYERS[0] <= players <= PLAYERS[-1]:
            seats: tuple[int, ...] | None = tuple(seat.number for seat in self._seating(name, players))
        else:
            seats = None  # Game.start names what is wrong with the number
        self.game = Game.start(
            profile, players, first_player=first_player, seats=seats, max_players=PLAYERS[-1],
        )  # fmt: skip
        # the move time in force is the profile's time_limit_s (a name: the registered profile's; a limit agreed at
        # the table: the profile replaced, as gamelog.GameSetup passes it), held by the game (Game.time_limit_s)

    # -- the game's state, read through ----------------------------------------------------------------------
    @property
    def profile(self) -> str:
        return self.game.profile

    @property
    def players(self) -> int:
        return self.game.players

    @property
    def first_player(self) -> int:
        return self.game.first_player

    @property
    def table(self) -> Table | None:
        return self.game.table

    @property
    def turn_table(self) -> Table | None:
        return self.game.turn_table

    @property
    def player(self) -> int:
        return self.game.player

    @property
    def opened(self) -> list[bool]:
        return list(self.game.opened)

    @opened.setter
    def opened(self, value: Iterable[bool]) -> None:
        """For a test's setup: players who have opened before the game's first move."""
        self.game = replace(self.game, opened=tuple(bool(v) for v in value))

    @property
    def moves(self) -> int:
        return self.game.moves

    @property
    def turn_started_s(self) -> float:
        return self.game.turn_started_s

    @property
    def clock_mode(self) -> bool:
        return self.game.clock_mode

    @property
    def pending(self) -> Pending | None:
        """The restore the table waits for, or may get after a review (None when the referee overruled the
        revert: the game still takes the table put back as a restore, but nobody waits for it)."""
        pending = self.game.pending
        return None if pending is None or pending.overruled else pending

    @property
    def last_move(self) -> Move | None:
        """The last move as ruled now (after corrections)."""
        return self.game.last_move

    @property
    def active_since_move(self) -> bool:
        return self.game.active_since_move

    @property
    def left_out(self) -> int:
        return self.game.left_out

    @property
    def unread_s(self) -> float:
        return self.game.unread_s

    @property
    def time_limit_at_s(self) -> float | None:
        """When the time limit of the turn under way passes (None: no limit, no table yet, or the game is over)."""
        game = self.game
        if game.time_limit_s is None or game.table is None or game.over:
            return None
        return game.turn_started_s + game.time_limit_s

    # -- seats -----------------------------------------------------------------------------------------------
    @property
    def seating(self) -> tuple[Seat, ...]:
        """Each player's seat around the table, in turn order (see :mod:`vision.runtime.seats`)."""
        return self._seating(self.profile, self.players)

    def _seating(self, profile: str, players: int) -> tuple[Seat, ...]:
        if self.orientation is None or profile not in PROFILES:  # an unknown profile: Game.start names it
            return seating(players)
        return turn_order(players, PROFILES[profile].direction, self.orientation)

    def seat_of(self, player: int) -> int:
        """The player's seat number, as the log writes it."""
        return self.game.seat_of(player)

    def player_at(self, seat: int | None) -> int | None:
        """The player in seat number ``seat``; None for an empty seat (or none given)."""
        return self.game.player_at(seat)

    def status(self) -> dict[str, Any]:
        return self.game.status()

    # -- what the pipeline tells us -------------------------------------------------------------------------
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
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
        doubt: str | None = None,
    ) -> list[Event]:
        """The table is still again after activity (``hands``: an arm was seen over it, from ``seat``;
        ``left_out``: boxes left out of the reading as most likely not tiles; ``table_at_limit``: the table read
        when the turn's time limit passed, None where hands were over it; ``touched_after_limit``: hands over the
        table after the limit, None when not known: ruled on for a move over time, RULES.md §6). ``doubt``: why the
        camera cannot tell how to rule the move: it is ruled REVIEW (no penalty), the sentence added to its notes."""
        step = self.game.on_settled(
            after, time_s=time_s, frame=frame, start_s=start_s, hands_seat=seat, hands=hands, left_out=left_out,
            table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip
        if doubt is not None:
            step = self._in_doubt(step[1], doubt)
        return self._take(step)

    def amend(
        self,
        after: Table,
        *,
        time_s: float,
        frame: int,
        start_s: float | None,
        seat: int | None,
        left_out: int = 0,
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
        doubt: str | None = None,
    ) -> list[Event] | None:
        """The same hands went on with the last move after it was ruled: the turn ruled again as one move, an
        amendment of it (:meth:`referee.game.Game.on_amended`; ``start_s``: when the hands first came for the move;
        ``doubt``: as for :meth:`settled`). None when the game cannot amend it (the referee's word came since, the
        whole turn is no move): the caller rules ``after`` as a move of its own."""
        step = self.game.on_amended(
            after, time_s=time_s, frame=frame, start_s=start_s, hands_seat=seat, left_out=left_out,
            table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip
        if not step[1]:
            return None
        if doubt is not None:
            step = self._in_doubt(step[1], doubt)
        return self._take(step)

    @property
    def amendable(self) -> int | None:
        """The number of the last move while it may still be amended (:meth:`amend`), else None."""
        return self.game.moves if self.game.amendable else None

    def _in_doubt(self, events: list[Event], note: str) -> tuple[Game, list[Event]]:
        """``events`` with each move in them ruled REVIEW (no penalty, ``note`` added), applied to this game."""
        doubted: list[Event] = []
        for event in events:
            if isinstance(event, Move) and event.ruling.verdict is not Verdict.REVIEW:
                ruling = event.ruling
                ruling = replace(ruling, verdict=Verdict.REVIEW, penalty_tiles=0, notes=(*ruling.notes, note))
                event = replace(event, ruling=ruling)
            doubted.append(event)
        game = self.game
        for event in doubted:
            game = game.apply(event)
        return game, doubted

    def would_move(
        self,
        after: Table,
        *,
        time_s: float,
        frame: int,
        start_s: float | None,
        seat: int | None,
        hands: bool,
        left_out: int = 0,
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
        game: Game | None = None,
    ) -> Move | None:
        """The move :meth:`settled` would rule ending on ``after`` (None: it would rule no move), asked without
        applying it: the game is a pure state machine, so the step is taken and dropped. ``game``: an earlier state
        of this game to ask instead (before its last move: that move as if it had gone on)."""
        _, events = (game or self.game).on_settled(
            after, time_s=time_s, frame=frame, start_s=start_s, hands_seat=seat, hands=hands, left_out=left_out,
            table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip
        moves = [event for event in events if isinstance(event, Move)]
        return moves[-1] if moves else None

    def would_rule(self, after: Table, **at: Any) -> Verdict | None:
        """The verdict of :meth:`would_move` (same arguments), None for no move."""
        move = self.would_move(after, **at)
        return None if move is None else move.ruling.verdict

    def refine(self, table: Table, *, time_s: float, frame: int) -> list[Event]:
        """The same table read with more certainty (more readings of the still table agree)."""
        return self._take(self.game.on_refined(table, time_s=time_s, frame=frame))

    def activity(self, *, time_s: float, frame: int) -> list[Event]:
        """Hands came over the table: logged once per move, so a resumed game knows it too."""
        return self._take(self.game.on_activity(time_s=time_s, frame=frame))

    def clock(
        self,
        *,
        time_s: float,
        frame: int,
        table: Table | None = None,
        left_out: int = 0,
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
    ) -> list[Event]:
        """The clock key: the move of the player on move ends now (``table``: the settled table, if newer;
        ``table_at_limit``, ``touched_after_limit``: as for :meth:`settled`)."""
        return self._take(
            self.game.on_clock(
                time_s=time_s, frame=frame, table=table, left_out=left_out, table_at_limit=table_at_limit,
                touched_after_limit=touched_after_limit,
            )
        )  # fmt: skip

    def _take(self, step: tuple[Game, list[Event]]) -> list[Event]:
        self.game, events = step
        return events

    # -- state ----------------------------------------------------------------------------------------------
    def apply(self, event: Event | Mapping[str, Any]) -> Event:
        """Update the game by one event (new, or replayed from a log: a game log's line is read with
        :func:`referee.events.event_from_json`); the event as the game took it, to log.

        An event this game cannot take is a :class:`GameStateError` naming it, and the game stays as it was. An
        event is completed before it is logged (:meth:`referee.game.Game.complete`): a correction gets the move's
        new ruling, an undo the override it takes back, a word on the table its seed rule (an empty pool also the
        player who drew the last tile); so a replay uses them as they were. A log line given as a dictionary is
        completed in place too (the fields it lacked are added: the line being written).
        """
        typed = event_from_json(event) if isinstance(event, Mapping) else event
        completed = self.game.complete(typed)
        self.game = self.game.apply(completed)
        if completed is not typed and isinstance(event, MutableMapping):
            for key, value in completed.to_json().items():
                event.setdefault(key, value)
        return completed

    def replay(self, events: Iterable[Event | Mapping[str, Any]]) -> None:
        for event in events:
            self.apply(event)

    @staticmethod
    def relabel(table: dict[str, Any], place: Any, label: str) -> dict[str, Any]:
        """Table JSON with the tile at ``place`` ([set, position]; set -1 for loose) read as ``label`` for certain
        (the station shows a move's tables as logged; :func:`referee.game.relabel` does the same on a ``Table``).

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
