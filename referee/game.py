"""The game between moves as a pure state machine: who is on move, who has opened, what must be restored.

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

A move ruled as it settled may turn out unfinished: the same hands go on with it before the turn passes (the player
paused to think). :meth:`Game.on_amended` rules the turn again as one move from the game before it, logged under the
same number as an *amendment* (:attr:`referee.events.Move.amends`); applying it rolls the game back to before that
move (:attr:`Game.before_last`) and takes the whole instead, so a replay reaches the state of the turn as one move.
A log's reader takes the last line of each number (:func:`referee.events.last_rulings`).

The end of the game comes from the referee's word (:class:`PoolEmpty`, :class:`WentOut`), per the profile's seed
(:data:`POOL_ENDINGS`): the box rules and przasnysz (rule 24) give every player one last move, the Polish
Championship and Wejherowo end the game with the pool, the house summary has no rule (recorded, nothing ends);
going out ends the game at once. A :class:`RedealRequest` before the first move is granted where the seed names
it (:data:`REDEALS`) and refused elsewhere.

Seats are the camera's business: the game knows each player's seat only as the number its moves are logged with
(:attr:`Game.seats`). The events are typed values (:mod:`referee.events`); JSON exists only at the edge:
:func:`~referee.events.event_from_json` and each event's ``to_json`` (the game log's format, unchanged).

Size: 1041 lines, over 500 on purpose: one state machine whose parts (turn order, the end of the game, restore matching,
re-rulings, amended moves and the override ledger) change the same frozen value, :class:`Game` (about 700 lines); its
events and their JSON are in :mod:`referee.events`, the rulings in :mod:`referee.moves`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, overload

from referee.events import (
    OVERRIDE_ACTIONS,
    Activity,
    ClockPress,
    Event,
    GameStateError,
    Move,
    Note,
    OpeningDeclared,
    Override,
    PoolEmpty,
    RedealRequest,
    Restore,
    TableRead,
    TableWord,
    Undo,
    Unread,
    WentOut,
    describe,
    event_from_json,
)
from referee.moves import Ruling, Verdict, check_move, unsure_of_left_out
from referee.profiles import PROFILES, Profile, SeedRule, get_profile
from referee.table import LOOSE, Table
from referee.tiles import Tile

__all__ = [
    "Activity", "ClockPress", "Event", "Game", "GameStateError", "Move", "Note", "OpeningDeclared", "Override",
    "OverrideRecord",
    "Pending", "PoolEmpty", "PoolEnding", "RedealRequest", "Restore", "TableRead", "Undo", "Unread", "WentOut",
    "describe", "event_from_json", "looks_restored", "relabel",
]  # fmt: skip

MIN_PLAYERS = 2

# -- the seeds' rules for the end of the pool and the re-deal ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolEnding:
    """What a seed does when the pool runs out before anyone went out (:class:`PoolEmpty`)."""

    last_round: bool
    """Every player has one more move, in turn order, then the game ends (or at once when someone goes out)."""
    ends_at_once: bool
    """The game ends when the pool runs out (no further move is named)."""
    round_time: bool
    """The tournament round's time running out starts the same ending."""
    passing: str
    """What the seed says about a player with no move to make (nothing to draw any more)."""
    source: SeedRule | None
    """The seed's words; None: the seed has no rule for an empty pool."""


_CHAMPIONSHIP_POOL = PoolEnding(
    last_round=False, ends_at_once=True, round_time=False, passing="no move follows",
    source=SeedRule("ZAKOŃCZENIE GRY", "Czasami może się zdarzyć, że w banku zabraknie kostek, zanim ktokolwiek"
                    " zakończy grę. Zwycięzcą zostaje wtedy gracz, który ma najmniej punktów na swojej tabliczce."),
)  # fmt: skip
POOL_ENDINGS: Mapping[str, PoolEnding] = {
    "seeds/004_edb1b3e580c8d7dd.txt": _CHAMPIONSHIP_POOL,
    "seeds/000_d223ae7d75066ede.txt": _CHAMPIONSHIP_POOL,
    "seeds/001_94ad5f67870580e0.txt": PoolEnding(
        last_round=True, ends_at_once=False, round_time=True,
        passing="the seed does not say whether a player may pass: an unchanged table is taken as one, a person decides",
        source=SeedRule("rule 24", "Jeżeli zabraknie kostek lub skończy się czas rundy, zanim którykolwiek z graczy"
                        " zakończy grę, każdy gracz wykonuje po 1 ruchu i gra się kończy."),
    ),
    "seeds/003_ed43451ecbd65de4.txt": PoolEnding(
        last_round=True, ends_at_once=False, round_time=False,
        passing="ZAKOŃCZENIE GRY: 'Gracz, który nie może wykonać ruchu, ma prawo spasować.'",
        source=SeedRule("ZAKOŃCZENIE GRY", "Gracz, który dobrał ostatnią kostkę, rozpoczyna ostatnią rundę, w której"
                        " każdy – również on sam – ma prawo do jednego dodatkowego ruchu. Jeżeli w tej turze któryś z"
                        " graczy opróżni swoją podstawkę, gra kończy się natychmiast."),
    ),
    "seeds/002_5fea8088a58074b7.txt": PoolEnding(
        last_round=False, ends_at_once=False, round_time=False,
        passing="the seed has no rule for an empty pool: a person decides", source=None,
    ),
}  # fmt: skip
"""Seed file -> its ending for an empty pool. The box rules' last round is read as the turn order goes on: the
draw of the last tile begins it, the players after the drawer move once each and the drawer's extra move ("również
on sam") closes it; nobody moves twice in a row."""

REDEAL_PAIRS = 3
"""Pairs of identical tiles in the 14 dealt that allow a re-deal, in every seed that names one ("trzy dublety";
przasnysz: "co najmniej 3 dublety"; the box rules: "z trzema i większą ilością dubletów")."""
REDEALS: Mapping[str, SeedRule] = {
    "seeds/004_edb1b3e580c8d7dd.txt": SeedRule("PRZYGOTOWANIE GRY", "Jeżeli wśród 14 kostek, jakie gracz otrzymał na"
        " początku gry, są trzy dublety [...], gracz ma prawo poprosić o ponowne potasowanie i przydzielenie kostek"
        " wszystkim graczom."),
    "seeds/000_d223ae7d75066ede.txt": SeedRule("PRZYGOTOWANIE GRY", "Jeżeli wśród 14 kostek, jakie gracz otrzymał na"
        " początku gry, są trzy dublety [...], gracz ma prawo poprosić o ponowne potasowanie i przydzielenie kostek"
        " wszystkim graczom."),
    "seeds/001_94ad5f67870580e0.txt": SeedRule("rule 5.6", "Jeżeli po rozdaniu stosów z kostkami, gracz posiada co"
        " najmniej 3 dublety może zażądać ponownego rozdania kostek u wszystkich graczy. Decyzja należy do gracza"
        " zgłaszającego."),
    "seeds/003_ed43451ecbd65de4.txt": SeedRule("PRZYGOTOWANIE GRY", "Jeżeli wśród 14 kostek, jakie gracz otrzymał na"
        " początku gry, są trzy dublety [...], gracz ma prawo poprosić o ponowne potasowanie i przydzielenie kostek"
        " wszystkim graczom. [...] Decyzja należy do gracza."),
}  # fmt: skip
"""Seed file -> its re-deal rule (the house summary, seed 002, names none: a request is refused there)."""

_CHAMPIONSHIP_DECLARATION = SeedRule("ZAKOŃCZENIE GRY", "(Gracz może uniknąć tej kary, jeśli kostkę potrzebną do"
    " otwarcia wziął w ostatniej rundzie i zapowiedział, że w następnym ruchu będzie wykładał otwarcie.) Komunikat"
    " „Wyłożę się w następnej rundzie”.")  # fmt: skip
DECLARATIONS: Mapping[str, SeedRule] = {
    "seeds/004_edb1b3e580c8d7dd.txt": _CHAMPIONSHIP_DECLARATION,
    "seeds/000_d223ae7d75066ede.txt": _CHAMPIONSHIP_DECLARATION,
    "seeds/001_94ad5f67870580e0.txt": SeedRule("rule 23b", "(gracz może uniknąć tej kary, jeśli kostkę potrzebną do"
        " otwarcia wziął w ostatniej rundzie i zapowiedział że w następnym ruchu będzie się wykładał przed kliknięciem"
        " stopera) Komunikat „Wyłożę się w następnej rundzie”."),
    "seeds/003_ed43451ecbd65de4.txt": SeedRule("ZAKOŃCZENIE GRY", "Gracz może uniknąć tej kary, jeśli kostkę"
        " potrzebną do otwarcia wziął w ostatniej rundzie i zapowiedział, że w następnym ruchu będzie wykladał"
        " otwarcie."),
}  # fmt: skip
"""Seed file -> where it names the "I'll open next round" declaration (:class:`OpeningDeclared`), which saves a
player from the -200 (:mod:`referee.scoring`); the house summary, seed 002, has no never-opened penalty and no
declaration: one is recorded there with that note and changes no score."""


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
    moves: int = 0
    player: int = 0
    pool_empty: bool = False
    last_round: tuple[int, ...] | None = None
    over: bool = False
    winner: int | None = None
    redeals: int = 0
    declared: tuple[int, ...] = ()
    table: Table | None = None
    turn_table: Table | None = None
    turn_started_s: float = 0.0


_WORD_FIELDS = ("player", "pool_empty", "last_round", "over", "winner", "redeals", "declared", "table", "turn_table",
                "turn_started_s")  # fmt: skip
"""What a word on the table (:data:`~referee.events.TableWord`) may change, and its undo gives back."""


@dataclass(frozen=True, slots=True)
class OverrideRecord:
    override: Override | TableWord
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
    pool_empty: bool = False
    """The referee said the pool is empty (or the round's time is up): see :class:`PoolEmpty`."""
    last_round: tuple[int, ...] | None = None
    """The players still to make their last move, in turn order (None: no last round under way)."""
    over: bool = False
    """The game has ended: someone went out, the last round is complete, or the seed ends it with the pool."""
    winner: int | None = None
    """The player who went out (None: nobody did)."""
    redeals: int = 0
    """Re-deals granted before the first move."""
    declared: tuple[int, ...] = ()
    """Players who said "I'll open next round" (:class:`OpeningDeclared`), in the order they said it."""
    before_last: Game | None = field(default=None, repr=False)
    """The game before its last move, while that move may still be amended (:meth:`on_amended`): None before the
    first move, and once the referee's word, a restore or the clock key came after it (the state it was ruled in is
    no longer the game's to roll back)."""

    @classmethod
    def start(
        cls,
        profile: str | Profile,
        players: int,
        *,
        first_player: int = 0,
        seats: Sequence[int] | None = None,
        max_players: int | None = None,
    ) -> Game:
        """A new game: 2 players up to the profile's ``max_players`` (or ``max_players``, when fewer: the
        camera's seats), the first player 0-based. The profile is a registered profile's name, or that profile
        with a time limit agreed at the table applied (``dataclasses.replace(profile, time_limit_s=...)``, seconds
        or None for none): the profile's ``time_limit_s`` is the game's limit."""
        if isinstance(profile, Profile):
            rules = profile
            registered = get_profile(rules.name) if rules.name in PROFILES else None
            if registered is None or replace(rules, time_limit_s=registered.time_limit_s) != registered:
                raise GameStateError(
                    f"a game is played under a registered profile ({', '.join(PROFILES)}), only its time limit"
                    f" replaced, not {rules.name!r} with other rules"
                )
        elif isinstance(profile, str):
            rules = get_profile(profile)  # an unknown profile fails here, before any frame is read
        else:
            raise GameStateError(f"a profile is a name, not {profile!r}")
        most = rules.max_players if max_players is None else min(rules.max_players, max_players)
        if not _is_int(players) or not MIN_PLAYERS <= players <= most:
            raise GameStateError(f"{rules.name} is played by {MIN_PLAYERS} to {most} players, not {players!r}")
        if not _is_int(first_player) or not 0 <= first_player < players:
            raise GameStateError(
                f"the first player is 0 to {players - 1} (0-based) at a {players}-player table, not {first_player!r}"
            )
        limit = rules.time_limit_s
        if limit is not None and not (_is_number(limit) and 0 <= limit < math.inf):
            raise GameStateError(f"a time limit is a finite number of seconds (or none), not {limit!r}")
        numbers = tuple(range(players)) if seats is None else tuple(seats)
        if len(numbers) != players:
            raise GameStateError(f"{players} players need {players} seats, not {len(numbers)}")
        return cls(
            rules.name, players, first_player, None if limit is None else float(limit), numbers,
            player=first_player, opened=(False,) * players,
        )  # fmt: skip

    # -- views ----------------------------------------------------------------------------------------------
    @property
    def rules(self) -> Profile:
        """The rules a move is ruled under: the profile with the game's time limit (``dataclasses.replace``)."""
        return replace(get_profile(self.profile), time_limit_s=self.time_limit_s)

    def seat_of(self, player: int) -> int:
        return self.seats[player]

    def player_at(self, seat: int | None) -> int | None:
        """The player in seat number ``seat``; None for an empty seat (or none given)."""
        return self.seats.index(seat) if seat in self.seats else None

    def status(self) -> dict[str, Any]:
        """Who is on move, who has opened, what is owed: the ``status`` a resume line writes (with the game's
        ending and re-deals once there are any)."""
        ending: dict[str, Any] = {}
        if self.pool_empty or self.over:
            ending = {"pool_empty": self.pool_empty, "last_round": None if self.last_round is None else
                      list(self.last_round), "over": self.over, "winner": self.winner}  # fmt: skip
        if self.redeals:
            ending["redeals"] = self.redeals
        if self.declared:
            ending["declared"] = list(self.declared)
        return {
            "player": self.player,
            "seat": self.seat_of(self.player),
            "opened": list(self.opened),
            "moves": self.moves,
            "clock_mode": self.clock_mode,
            "turn_started_s": self.turn_started_s,
            "pending_restore": None if self.pending is None or not self.pending.owed else self.pending.table.to_json(),
            **ending,
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
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
    ) -> tuple[Game, list[Event]]:
        """The table is still again after activity (``hands``: an arm was seen over it, from ``hands_seat``;
        ``left_out``: boxes left out of the reading as most likely not tiles). ``table_at_limit`` and
        ``touched_after_limit``: what the camera saw of the turn's time limit (see :meth:`_move`)."""
        at: dict[str, Any] = {"time_s": round(time_s, 3), "frame": frame, "left_out": left_out}
        if self.table is None:
            return self._emit([TableRead(after, "first reading", **at)])
        changed = not after.same_layout(self.table)
        if self.pending is not None:
            events = self._restoring(after, at, hands_seat, changed and hands)
            if events is not None:
                return self._emit(events)
        if self.over:
            return self._emit([TableRead(after, "after the end of the game", **at)]) if changed else (self, [])
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
        move = self._move(
            after, at, start_s=start_s, hands_seat=hands_seat, ended_by="settle", table_at_limit=table_at_limit,
            touched_after_limit=touched_after_limit,
        )  # fmt: skip
        return self._emit([move])

    def on_amended(
        self,
        after: Table,
        *,
        time_s: float,
        frame: int,
        start_s: float | None,
        hands_seat: int | None,
        left_out: int = 0,
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
    ) -> tuple[Game, list[Event]]:
        """The same hands went on with the last move after it was ruled (its table was a pause, the turn not over,
        RULES.md §3): the turn ruled again as one move from the game before it (:attr:`before_last`: the table
        before it, the opening status, the time the turn began; ``start_s``: when the hands first came), logged
        under the last move's number with :attr:`Move.amends`. Seconds of the camera left unread since are counted
        in. Nothing, ``(self, [])``, when the last move may not be amended (:attr:`amendable`) or the turn as a whole
        is no move (the table put back as a restore owed before it): the caller rules the table as a move of its own.
        """
        base = self.before_last
        if not self.amendable or base is None:
            return self, []
        base = replace(base, unread_s=base.unread_s + self.unread_s)
        _, events = base.on_settled(
            after, time_s=time_s, frame=frame, start_s=start_s, hands_seat=hands_seat, hands=True, left_out=left_out,
            table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip
        if len(events) != 1 or not isinstance(events[0], Move):
            return self, []
        return self._emit([replace(events[0], amends=self.moves)])

    @property
    def amendable(self) -> bool:
        """The last move may still be amended (:meth:`on_amended`): it is the last event that changed the game
        besides readings, hands and unread seconds, and the game goes on (settle mode, not over)."""
        return (
            self.before_last is not None and self.last_move is not None and not self.clock_mode and not self.over
            and self.last_move.number == self.moves
        )  # fmt: skip

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
        self,
        *,
        time_s: float,
        frame: int,
        table: Table | None = None,
        left_out: int = 0,
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
    ) -> tuple[Game, list[Event]]:
        """The clock key: the move of the player on move ends now (``table``: the settled table, if newer;
        ``table_at_limit``, ``touched_after_limit``: what the camera saw of the time limit, see :meth:`_move`).

        The first press of a game switches to clock mode; if it comes right after a move already ruled when the
        table settled (no hands since), it confirms that move instead of adding a draw.
        """
        at: dict[str, Any] = {"time_s": round(time_s, 3), "frame": frame}
        if self.over:  # no move after the end of the game
            late: list[Event] = [ClockPress(**at)]
            if table is not None and self.table is not None and not table.same_layout(self.table):
                late.append(TableRead(table, "after the end of the game", **at, left_out=left_out))
            return self._emit(late)
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
        move = game._move(
            game.table, at, start_s=game.turn_started_s, hands_seat=None, ended_by="clock",
            table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip
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
            return self._apply_move(event) if event.amends is None else self._apply_amendment(event)
        if isinstance(event, Activity):
            return replace(self, active_since_move=True)
        if isinstance(event, Unread):
            return replace(self, unread_s=self.unread_s + event.seconds)
        if isinstance(event, Note):
            return self
        game = self._apply_word(event)
        return game if game.before_last is None else replace(game, before_last=None)

    def _apply_word(self, event: Event) -> Game:
        """The game after a restore, the clock key, the referee's word (none of which may be amended past)."""
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
        if isinstance(event, Override):
            return self._apply_override(self.complete(event))
        if isinstance(event, Undo):
            return self._undo()
        if isinstance(event, PoolEmpty):
            return self._noted(event, self._pool_empty(event))
        if isinstance(event, WentOut):
            return self._noted(event, self._went_out(event))
        if isinstance(event, RedealRequest):
            return self._noted(event, self._redeal(event))
        if isinstance(event, OpeningDeclared):
            return self._noted(event, self._declared(event))
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
            if not isinstance(undone, Override):  # a word on the table: named by its own line
                return replace(event, undoes={k: v for k, v in undone.to_json().items() if k != "rule"})
            return replace(event, undoes={"action": undone.action, "move": undone.move, "time_s": undone.time_s})
        if isinstance(event, PoolEmpty) and event.rule is None:
            drawer = event.player
            last = self.last_move
            if drawer is None and event.cause == "pool" and last is not None and last.kind == "draw":
                drawer = last.player  # the last move drew the last tile
            return replace(event, player=drawer, rule=self._pool_rule())
        if isinstance(event, RedealRequest) and event.rule is None:
            rule = REDEALS.get(get_profile(self.profile).seed)
            return event if rule is None else replace(event, rule=self._cite(rule))
        if isinstance(event, OpeningDeclared) and event.rule is None:
            rules = get_profile(self.profile)
            declaration = DECLARATIONS.get(rules.seed)
            if declaration is None:
                return replace(event, rule=f"{rules.name}: {rules.seed} names no such declaration: recorded, no score"
                               " changes for it")  # fmt: skip
            return replace(event, rule=self._cite(declaration))
        if isinstance(event, Override) and event.action == "correct" and event.ruling is None:
            fixed = self._corrected(event)
            if fixed is None:
                return event
            move, before, after = fixed
            assert move.elapsed_s is not None  # _corrected checked it
            over = self.time_limit_s is not None and move.elapsed_s > self.time_limit_s
            ruling = check_move(
                before, after, opened=bool(move.opened), profile=self.rules, elapsed_s=float(move.elapsed_s),
                table_at_limit=_at_limit_corrected(move, event) if over else None,
                touched_after_limit=move.touched_after_limit if over else None,
            )  # fmt: skip
            return replace(event, ruling=ruling)
        return event

    # -- the end of the pool, going out, the re-deal ----------------------------------------------------------
    def _cite(self, rule: SeedRule) -> str:
        return f"{rule.cite(get_profile(self.profile))}: '{rule.words}'"

    def _pool_ending(self) -> PoolEnding:
        return POOL_ENDINGS[get_profile(self.profile).seed]

    def _pool_rule(self) -> str:
        ending = self._pool_ending()
        if ending.source is None:
            rules = get_profile(self.profile)
            return f"{rules.name}: {rules.seed} has no rule for an empty pool: a person decides how the game ends"
        return self._cite(ending.source)

    def _pool_empty(self, event: PoolEmpty) -> Game:
        rules = get_profile(self.profile)
        ending = self._pool_ending()
        if self.over:
            raise GameStateError("the pool ran out after the end of the game")
        if self.pool_empty:
            raise GameStateError("the pool was already said to be empty")
        if event.cause not in ("pool", "round-time"):
            raise GameStateError(f"a pool-empty event's cause is 'pool' or 'round-time', not {event.cause!r}")
        if event.cause == "round-time" and not ending.round_time:
            raise GameStateError(f"{rules.name}: {rules.seed} names no end of the game when the round's time is up")
        drawer = event.player
        if drawer is not None and not 0 <= drawer < self.players:
            raise GameStateError(f"player {drawer} is not one of the {self.players} at the table (0-based)")
        game = replace(self, pool_empty=True)
        if ending.ends_at_once:
            return replace(game, over=True)
        if not ending.last_round:
            return game
        first = self.player if drawer is None else (drawer + 1) % self.players
        order = tuple((first + k) % self.players for k in range(self.players))
        return replace(game, player=first, last_round=order)

    def _went_out(self, event: WentOut) -> Game:
        player = event.player
        if not 0 <= player < self.players:
            raise GameStateError(f"player {player} is not one of the {self.players} at the table (0-based)")
        if self.over:
            raise GameStateError(f"player {player + 1} went out after the end of the game")
        if self.pending is not None and self.pending.owed and self.pending.player == player:
            raise GameStateError(
                f"move {self.pending.after_move} is to be put back: player {player + 1} has not gone out"
            )
        return replace(self, over=True, winner=player)

    def _redeal(self, event: RedealRequest) -> Game:
        rules = get_profile(self.profile)
        if rules.seed not in REDEALS:
            raise GameStateError(f"{rules.name}: {rules.seed} names no re-deal: the request is refused")
        if not 0 <= event.player < self.players:
            raise GameStateError(f"player {event.player} is not one of the {self.players} at the table (0-based)")
        if self.moves or self.over:
            raise GameStateError("a re-deal is asked for on the tiles dealt, before the first move")
        if event.pairs is not None and event.pairs < REDEAL_PAIRS:
            raise GameStateError(f"a re-deal needs {REDEAL_PAIRS} pairs among the tiles dealt, not {event.pairs}")
        started = self.turn_started_s if event.time_s is None else float(event.time_s)
        # The tiles are shuffled and dealt again: the table is read afresh, the first player's time starts now.
        return replace(self, redeals=self.redeals + 1, table=None, turn_table=None, turn_started_s=started, declared=())

    def _declared(self, event: OpeningDeclared) -> Game:
        player = event.player
        if not 0 <= player < self.players:
            raise GameStateError(f"player {player} is not one of the {self.players} at the table (0-based)")
        if self.over:
            raise GameStateError(f"player {player + 1} declared an opening after the end of the game")
        if self.opened[player]:
            raise GameStateError(f"player {player + 1} has opened already: there is no opening to declare")
        if player in self.declared:
            return self
        return replace(self, declared=(*self.declared, player))

    def _emit(self, events: list[Event]) -> tuple[Game, list[Event]]:
        game = self
        for event in events:
            game = game.apply(event)
        return game, events

    def _move(
        self,
        after: Table,
        at: Mapping[str, Any],
        *,
        start_s: float | None,
        hands_seat: int | None,
        ended_by: str,
        table_at_limit: Table | None = None,
        touched_after_limit: bool | None = None,
    ) -> Move:
        """The move ending now. ``table_at_limit`` (the table the camera read when the turn's time limit passed;
        None where hands were over it) and ``touched_after_limit`` (hands over the table after the limit; None: not
        known) are ruled on and logged only for a move over time (RULES.md §6); the camera may report them for a
        move that, ended earlier, turns out in time."""
        before = self.turn_table if self.clock_mode and self.turn_table is not None else self.table
        assert before is not None
        seated = self.player_at(hands_seat)
        player = seated if seated is not None else self.player  # the hands' side beats a turn order gone wrong
        opened = self.opened[player]
        elapsed = max(0.0, at["time_s"] - self.turn_started_s)
        if self.time_limit_s is None or elapsed <= self.time_limit_s:
            table_at_limit, touched_after_limit = None, None
        ruling = check_move(
            before, after, opened=opened, profile=self.rules, elapsed_s=elapsed,
            table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip
        ruling = unsure_of_left_out(ruling, at["left_out"] + self.left_out)
        if self.pool_empty and ruling.kind == "draw":
            note = f"the pool is empty: no tile to draw, the player passes ({self._pool_ending().passing})"
            ruling = replace(ruling, notes=(*ruling.notes, note))
        if self.unread_s:
            note = f"the camera was not read for {self.unread_s:.1f} s during this move: a person decides"
            ruling = replace(ruling, verdict=Verdict.REVIEW, penalty_tiles=0, notes=(*ruling.notes, note))
        return Move(
            number=self.moves + 1, player=player, time_s=at["time_s"], before=before, after=after, ruling=ruling,
            frame=at["frame"], opened=opened, seat=self.seat_of(player), hands_seat=hands_seat,
            turn_order_player=self.player, start_s=None if start_s is None else round(start_s, 3),
            turn_started_s=round(self.turn_started_s, 3), elapsed_s=round(elapsed, 3), ended_by=ended_by,
            left_out=at["left_out"], table_at_limit=table_at_limit, touched_after_limit=touched_after_limit,
        )  # fmt: skip

    def _apply_amendment(self, move: Move) -> Game:
        """Move ``move.amends`` ruled again as a whole (:meth:`on_amended`): the game before it takes the move
        instead, so a replay reaches the state the turn as one move leaves."""
        last, base = self.last_move, self.before_last
        if move.amends != self.moves or last is None:
            raise GameStateError(f"move {move.number} amends move {move.amends}, but the last move is {self.moves}")
        if base is None or not self.amendable:
            raise GameStateError(
                f"move {move.number} amends a move the referee's word, a restore or the clock came after: it stands"
            )
        if move.player != last.player:
            raise GameStateError(
                f"move {move.number} by player {move.player} amends a move by player {last.player}: one turn is one"
                " player's"
            )
        return base._apply_move(move)

    def _apply_move(self, move: Move) -> Game:
        if move.number != self.moves + 1:
            raise GameStateError(f"move {move.number} follows move {self.moves} in the log")
        if self.over:
            raise GameStateError(f"move {move.number} comes after the end of the game")
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
        if self.last_round is not None:  # the player's last move is made; the round is complete when all have
            still = tuple(p for p in self.last_round if p != player)
            game = replace(game, last_round=still, over=not still)
        return replace(
            game, pending=pending, table=after, turn_table=after, moves=move.number,
            player=(player + 1) % self.players, turn_started_s=float(move.time_s), last_move=move, as_read=move,
            active_since_move=False, left_out=move.left_out, unread_s=0.0, before_last=replace(self, before_last=None),
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
        return OverrideState(
            self.pending, self.opened, self.last_move, self.moves, self.player, self.pool_empty, self.last_round,
            self.over, self.winner, self.redeals, self.declared, self.table, self.turn_table, self.turn_started_s,
        )  # fmt: skip

    def _noted(self, word: TableWord, game: Game) -> Game:
        """``game`` (this game after ``word``) with the word in the ledger, so :class:`Undo` can take it back."""
        record = OverrideRecord(word, self._override_state(), game._override_state())
        return replace(game, ledger=(*game.ledger, record))

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
        if not isinstance(record.override, Override):
            if self.moves != after.moves:
                raise GameStateError(f"a move came after '{describe(record.override)}': it is no longer undone")
            changed = {k: getattr(before, k) for k in _WORD_FIELDS if getattr(game, k) == getattr(after, k)}
            return replace(game, **changed)
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


def _at_limit_corrected(move: Move, override: Override) -> Table | None:
    """The move's table at the time limit with the override's correction, when it is the corrected table as it was
    read (the same tiles in the same places: a table nobody touched after the limit); else as it was read."""
    at_limit = move.table_at_limit
    which = override.table
    if at_limit is None or which not in ("before", "after") or not at_limit.same_layout(getattr(move, which)):
        return at_limit
    try:
        return relabel(at_limit, override.place, str(override.label))
    except (IndexError, TypeError, ValueError):
        return at_limit


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
