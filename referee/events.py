"""The game's events as typed, frozen values, and the one place they meet JSON: the game log's lines.

Each event has ``to_json`` (the log's line, format :data:`LOG_FORMAT`) and :func:`event_from_json`
reads a line back, checked (a log is data from a file): ``event_from_json(e.to_json()) == e``. Fields an event does
not model are kept in ``extra``, so a line from another version goes back out as it came in. :func:`describe` says
an event in one line for the console, the station and the report. The game that takes them is
:class:`referee.game.Game`.

Size: 791 lines, one module on purpose: the event types (about 320 lines of frozen dataclasses with their ``to_json``),
the one reader that checks a log's line back into them (with its field checkers) and :func:`describe`, the one text per
event; together so that a new event is added in one file, its type, its JSON and its words side by side.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeGuard, TypeVar

from referee.moves import Ruling, Verdict
from referee.table import LOOSE, Table

_M = TypeVar("_M", bound="Move | Mapping[str, Any]")


class GameStateError(ValueError):
    """A game that cannot be set up, or an event it cannot take (a move out of order, a player not at the table,
    a field missing or not a finite number): a replayed log is data from a file."""


# -- events ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableRead:
    """A reading of the table that is not a move: the first one, a re-read, a refinement, a change in a turn."""

    KIND: ClassVar[str] = "table"
    table: Table
    reason: str = ""
    time_s: float | None = None
    frame: int | None = None
    left_out: int = 0
    """Boxes left out of the reading as most likely not tiles."""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.KIND, **_at(self), "reason": self.reason, "table": _table_json(self.table),
                **self.extra}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Move:
    """A move ruled: the tables before and after it, the player, and the referee's ruling."""

    KIND: ClassVar[str] = "move"
    number: int
    player: int
    time_s: float
    before: Table
    after: Table
    ruling: Ruling
    frame: int | None = None
    opened: bool | None = None
    """The player had opened before this move (None: not logged)."""
    seat: int | None = None
    """The player's seat number (the camera's), as logs write it."""
    hands_seat: int | None = None
    """The seat the hands were seen at (None: not seen, or a clock press)."""
    turn_order_player: int | None = None
    start_s: float | None = None
    turn_started_s: float | None = None
    elapsed_s: float | None = None
    ended_by: str | None = None
    left_out: int = 0
    table_at_limit: Table | None = None
    """The table as the camera read it when the time limit passed, for a move over time (None: not over time, not
    read because hands were over it, or not logged). The ruling is on it where the profile's seed says so."""
    touched_after_limit: bool | None = None
    """For a move over time: hands were over the table after the limit passed (None: not known, or not logged)."""
    amends: int | None = None
    """The move this one rules again as a whole (its own ``number``): the same hands went on with a move already
    ruled as it settled (its table was a pause, the turn not over), so the turn is ruled once more from the game
    before it. The last line of a number is the move (:func:`last_rulings`); None: a move of its own."""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def kind(self) -> str:
        return self.ruling.kind

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.KIND, **_at(self), "number": self.number, "player": self.player}
        if self.amends is not None:
            data["amends"] = self.amends
        for key in ("seat", "hands_seat", "turn_order_player"):
            value = getattr(self, key)
            if value is not None or key == "hands_seat":
                data[key] = value
        data["kind"] = self.kind
        if self.opened is not None:
            data["opened"] = self.opened
        data["start_s"] = self.start_s
        for key in ("turn_started_s", "elapsed_s", "ended_by"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.table_at_limit is not None:
            data["table_at_limit"] = _table_json(self.table_at_limit)
        if self.touched_after_limit is not None:
            data["touched_after_limit"] = self.touched_after_limit
        data |= {"before": _table_json(self.before), "after": _table_json(self.after), "ruling": self.ruling.to_json()}
        return {**data, **self.extra}


@dataclass(frozen=True, slots=True)
class Restore:
    """The table put back (``complete``) or partly put back after move ``after_move`` was sent back."""

    KIND: ClassVar[str] = "restore"
    table: Table
    time_s: float
    after_move: int | None = None
    player: int | None = None
    complete: bool = False
    frame: int | None = None
    left_out: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.KIND, **_at(self), "after_move": self.after_move, "player": self.player,
                "complete": self.complete, "table": _table_json(self.table), **self.extra}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ClockPress:
    """The clock key; ``confirms``: the move it confirms (a press right after a move ruled at settling)."""

    KIND: ClassVar[str] = "clock"
    time_s: float | None = None
    frame: int | None = None
    confirms: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        confirms = {} if self.confirms is None else {"confirms": self.confirms}
        return {"event": self.KIND, **_at(self), **confirms, **self.extra}


@dataclass(frozen=True, slots=True)
class Activity:
    """Hands came over the table (logged once per move, so a resumed game knows it too)."""

    KIND: ClassVar[str] = "activity"
    time_s: float | None = None
    frame: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.KIND, **_at(self), **self.extra}


@dataclass(frozen=True, slots=True)
class Unread:
    """``seconds`` of the camera's picture nobody looked at (reading fell behind the camera, or the source dropped
    out): a move may have come and gone unseen, so the next move is REVIEW."""

    KIND: ClassVar[str] = "unread"
    seconds: float
    time_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.KIND, **_at(self), "seconds": self.seconds, **self.extra}


OVERRIDE_ACTIONS = ("accept", "ok", "revert", "correct")
"""The overrides a game acts on (and :class:`Undo` can take back)."""


@dataclass(frozen=True, slots=True)
class Override:
    """The referee's word on move ``move`` (see :meth:`Game.apply` for what each ``action`` does).

    ``player``, ``played``, ``restore`` and ``opened`` complete it with what the game needs when the move is no
    longer the last one (the station fills them in); ``table``, ``place`` and ``label`` say which tile a
    ``correct`` reads otherwise, and ``ruling`` is the move's ruling on the corrected tables (written by
    :meth:`Game.complete`, so a replay uses it as it was). An action the game does not know is recorded and
    changes nothing (a log from a later version still replays).
    """

    KIND: ClassVar[str] = "override"
    action: str
    time_s: float | None = None
    move: int | None = None
    player: int | None = None
    played: tuple[str, ...] | None = None
    restore: Table | None = None
    opened: bool | None = None
    table: str | None = None
    place: tuple[Any, ...] | None = None
    label: str | None = None
    ruling: Ruling | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.KIND, **_at(self), "action": self.action}
        for key in ("move", "player", "opened", "table", "label"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.played is not None:
            data["played"] = list(self.played)
        if self.restore is not None:
            data["restore"] = _table_json(self.restore)
        if self.place is not None:
            data["place"] = list(self.place)
        if self.ruling is not None:
            data["ruling"] = self.ruling.to_json()
        return {**data, **self.extra}


@dataclass(frozen=True, slots=True)
class Undo:
    """The last override not yet undone loses its effect (``undoes`` names it; :meth:`Game.complete` fills it)."""

    KIND: ClassVar[str] = "override"
    time_s: float | None = None
    undoes: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        undoes = {} if self.undoes is None else {"undoes": dict(self.undoes)}
        return {"event": self.KIND, **_at(self), "action": "undo", **undoes, **self.extra}


@dataclass(frozen=True, slots=True)
class PoolEmpty:
    """The referee says the pool is empty before anyone went out (``cause`` "pool"), or that the tournament round's
    time is up (``cause`` "round-time", przasnysz rule 24): the game's ending begins as the profile's seed says
    (:meth:`referee.game.Game.apply`). ``player``: who drew the last tile, when known; ``rule``: the seed rule
    applied (written by :meth:`referee.game.Game.complete`)."""

    KIND: ClassVar[str] = "pool-empty"
    time_s: float | None = None
    player: int | None = None
    cause: str = "pool"
    rule: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.KIND, **_at(self), "player": self.player, "cause": self.cause}
        if self.rule is not None:
            data["rule"] = self.rule
        return {**data, **self.extra}


@dataclass(frozen=True, slots=True)
class WentOut:
    """The referee says ``player`` emptied the rack (showed the empty rack, said "Rummikub"): the game is over."""

    KIND: ClassVar[str] = "out"
    player: int
    time_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"event": self.KIND, **_at(self), "player": self.player, **self.extra}


@dataclass(frozen=True, slots=True)
class RedealRequest:
    """``player`` asks for the tiles to be shuffled and dealt again (dealt ``pairs`` identical pairs, when said):
    granted where the profile's seed names it, before the first move (:meth:`referee.game.Game.apply`); ``rule``:
    the seed rule (written by :meth:`referee.game.Game.complete`)."""

    KIND: ClassVar[str] = "redeal"
    player: int
    time_s: float | None = None
    pairs: int | None = None
    rule: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.KIND, **_at(self), "player": self.player}
        if self.pairs is not None:
            data["pairs"] = self.pairs
        if self.rule is not None:
            data["rule"] = self.rule
        return {**data, **self.extra}


@dataclass(frozen=True, slots=True)
class OpeningDeclared:
    """``player``, not yet opened, says "Wyłożę się w następnej rundzie" ("I'll open next round"): where the seed
    names it (004, 000 ZAKOŃCZENIE GRY; 001 rule 23; 003), it saves a player who drew the opening's tile in the last
    round from the -200 when another player goes out (:mod:`referee.scoring`). ``rule``: the seed rule (written by
    :meth:`referee.game.Game.complete`)."""

    KIND: ClassVar[str] = "announced-opening"
    player: int
    time_s: float | None = None
    rule: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": self.KIND, **_at(self), "player": self.player}
        if self.rule is not None:
            data["rule"] = self.rule
        return {**data, **self.extra}


@dataclass(frozen=True, slots=True)
class Note:
    """Any other line of a game log (start, calibration, warnings, stream events, end...): the game takes it as
    it is and nothing changes."""

    kind: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    @property
    def time_s(self) -> float | None:
        value = self.fields.get("time_s")
        return float(value) if _is_number(value) else None

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, **self.fields}


Event = (
    TableRead
    | Move
    | Restore
    | ClockPress
    | Activity
    | Unread
    | Override
    | Undo
    | PoolEmpty
    | WentOut
    | RedealRequest
    | OpeningDeclared
    | Note
)

TableWord = PoolEmpty | WentOut | RedealRequest | OpeningDeclared
"""What the referee records about the table that is not a word on a move: the game keeps it in its ledger with
the overrides, so :class:`Undo` takes back the last of either."""


# -- the edge: JSON -----------------------------------------------------------------------------------------

VERDICTS = tuple(v.value for v in Verdict)
TIME_FIELDS = ("time_s", "elapsed_s", "start_s", "turn_started_s")
"""Times an event may carry: each a finite number of seconds when it is there (``start_s`` may be null)."""


def event_from_json(data: Mapping[str, Any]) -> Event:
    """The typed event a game log's line holds; a :class:`GameStateError` naming it when the game could not
    take it (a field missing or of the wrong type, a time that is not a finite number: Python's JSON reads
    ``NaN``). Fields the game does not use are kept (``extra``), so ``to_json`` gives the line back."""
    if not isinstance(data, Mapping):
        raise GameStateError(f"an event is a JSON object, not {type(data).__name__}")
    for key in TIME_FIELDS:
        if key in data:
            _seconds(data, key)
    kind = data.get("event")
    try:
        if kind == "move":
            return _move_from_json(data)
        if kind == "table":
            return TableRead(Table.from_json(data["table"]), str(data.get("reason", "")), _time(data),
                             _frame(data), _count(data, "left_out"), _rest(data, TableRead))  # fmt: skip
        if kind == "restore":
            return Restore(
                Table.from_json(data["table"]), _needed_time(data), _optional_int(data, "after_move"),
                _optional_int(data, "player"), bool(data.get("complete")), _frame(data), _count(data, "left_out"),
                _rest(data, Restore),
            )  # fmt: skip
        if kind == "clock":
            confirms = _optional_int(data, "confirms")
            if confirms is not None and "time_s" not in data:
                raise KeyError("time_s")
            return ClockPress(_time(data), _frame(data), confirms, _rest(data, ClockPress))
        if kind == "activity":
            return Activity(_time(data), _frame(data), _rest(data, Activity))
        if kind == "unread":
            return Unread(float(data["seconds"]), _time(data), _rest(data, Unread))
        if kind == "override":
            return _override_from_json(data)
        if kind == PoolEmpty.KIND:
            cause = data.get("cause", "pool")
            if not isinstance(cause, str):
                raise GameStateError(f"pool-empty event: cause is {cause!r}, not a word")
            return PoolEmpty(_time(data), _optional_int(data, "player"), cause, _optional_str(data, "rule"),
                             _rest(data, PoolEmpty))  # fmt: skip
        if kind == WentOut.KIND:
            return WentOut(_needed_int(data, "player"), _time(data), _rest(data, WentOut))
        if kind == RedealRequest.KIND:
            return RedealRequest(_needed_int(data, "player"), _time(data), _optional_int(data, "pairs"),
                                 _optional_str(data, "rule"), _rest(data, RedealRequest))  # fmt: skip
        if kind == OpeningDeclared.KIND:
            return OpeningDeclared(_needed_int(data, "player"), _time(data), _optional_str(data, "rule"),
                                   _rest(data, OpeningDeclared))  # fmt: skip
    except GameStateError:
        raise
    except KeyError as error:
        raise GameStateError(f"{_what(data)} lacks {error.args[0]!r}") from None
    except (TypeError, ValueError, IndexError, AttributeError) as error:
        raise GameStateError(f"{_what(data)}: {error}") from None
    return Note(str(kind), {k: v for k, v in data.items() if k != "event"})


def _move_from_json(data: Mapping[str, Any]) -> Move:
    number = data.get("number")
    if not _is_int(number):
        raise GameStateError(f"a move's number is {number!r}, not a whole number")
    for key in ("time_s", "player", "ruling", "before", "after"):
        if key not in data:
            raise GameStateError(f"move {number} lacks {key!r}")
    player = data["player"]
    if not _is_int(player):
        raise GameStateError(f"move {number} is by player {player!r}, not one of the players at the table")
    ruling = data["ruling"]
    if not isinstance(ruling, Mapping) or ruling.get("verdict") not in VERDICTS:
        raise GameStateError(f"move {number}'s ruling has no verdict ({', '.join(VERDICTS)})")
    try:
        after = Table.from_json(data["after"])
        before = Table.from_json(data["before"])
        at_limit = None if data.get("table_at_limit") is None else Table.from_json(data["table_at_limit"])
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise GameStateError(f"move {number}'s tables cannot be read: {error}") from None
    touched = data.get("touched_after_limit")
    if touched is not None and not isinstance(touched, bool):
        raise GameStateError(f"move {number}: touched_after_limit is {touched!r}, not true, false or null")
    try:
        typed = Ruling.from_json(dict(ruling))
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as error:
        raise GameStateError(f"move {number}'s ruling cannot be read: {error}") from None
    opened = data.get("opened")
    return Move(
        number=number, player=player, time_s=float(data["time_s"]), before=before, after=after, ruling=typed,
        frame=_frame(data), opened=None if opened is None else bool(opened),
        seat=_optional_int(data, "seat"), hands_seat=_optional_int(data, "hands_seat"),
        turn_order_player=_optional_int(data, "turn_order_player"), start_s=_optional_time(data, "start_s"),
        turn_started_s=_optional_time(data, "turn_started_s"), elapsed_s=_optional_time(data, "elapsed_s"),
        ended_by=None if data.get("ended_by") is None else str(data["ended_by"]), left_out=_count(data, "left_out"),
        table_at_limit=at_limit, touched_after_limit=touched, amends=_amends(data, number),
        extra=_rest(data, Move, also=("kind",)),
    )  # fmt: skip


def _amends(data: Mapping[str, Any], number: int) -> int | None:
    amends = _optional_int(data, "amends")
    if amends is not None and amends != number:
        raise GameStateError(f"move {number} amends move {amends}: an amendment has the number of the move it amends")
    return amends


def last_rulings(moves: Iterable[_M]) -> list[_M]:
    """Each move once, as last ruled: a move that amends an earlier line of its number (:attr:`Move.amends`) takes
    its place. ``moves``: typed moves or a game log's move lines (dictionaries), in the log's order."""
    latest: dict[Any, _M] = {}
    for move in moves:
        number = move.get("number") if isinstance(move, Mapping) else move.number
        latest[number] = move  # a key keeps the place of its first line
    return list(latest.values())


def amendments(moves: Iterable[Move | Mapping[str, Any]]) -> int:
    """How many of ``moves`` (typed, or a game log's lines) amend a move (:attr:`Move.amends`)."""
    return sum(1 for m in moves if (m.get("amends") if isinstance(m, Mapping) else m.amends) is not None)


def _override_from_json(data: Mapping[str, Any]) -> Override | Undo:
    action = data.get("action")
    if action == "undo":
        undoes = data.get("undoes")
        return Undo(_time(data), dict(undoes) if isinstance(undoes, Mapping) else None, _rest(data, Undo, ("action",)))
    if action not in OVERRIDE_ACTIONS:
        return Override(str(action), _time(data), extra={k: v for k, v in data.items() if k not in ("event", "action",
                        "time_s")})  # fmt: skip
    number = data.get("move")
    if action in ("ok", "revert") and "move" not in data:
        raise KeyError("move")
    played = data.get("played")
    restore = data.get("restore")
    ruling = data.get("ruling")
    place = data.get("place")
    table = data.get("table")
    label = data.get("label")
    return Override(
        action, _time(data), move=None if number is None else int(number),
        player=None if data.get("player") is None else int(data["player"]),
        played=None if played is None else tuple(str(t) for t in played),
        restore=None if restore is None else Table.from_json(restore),
        opened=None if data.get("opened") is None else bool(data["opened"]),
        table=table if isinstance(table, str) else None,
        place=tuple(place) if isinstance(place, list | tuple) else None,
        label=label if isinstance(label, str) else None,
        ruling=None if not isinstance(ruling, Mapping) else Ruling.from_json(dict(ruling)),
        extra={k: v for k, v in data.items() if k not in _OVERRIDE_FIELDS or (k == "table" and not isinstance(v, str))
               or (k == "label" and not isinstance(v, str)) or (k == "place" and not isinstance(v, list | tuple))},
    )  # fmt: skip


_OVERRIDE_FIELDS = {"event", "time_s", "action", "move", "player", "played", "restore", "opened", "table", "place",
                    "label", "ruling"}  # fmt: skip


def _rest(data: Mapping[str, Any], kind: type, also: Sequence[str] = ()) -> dict[str, Any]:
    known = {"event", *getattr(kind, "__dataclass_fields__", {}), *also} - {"extra"}
    return {k: v for k, v in data.items() if k not in known}


def _at(event: Any) -> dict[str, Any]:
    """The time, frame and left-out count an event writes (each only when it has one)."""
    at: dict[str, Any] = {}
    if event.time_s is not None:
        at["time_s"] = event.time_s
    if getattr(event, "frame", None) is not None:
        at["frame"] = event.frame
    if getattr(event, "left_out", 0):
        at["left_out"] = event.left_out
    return at


def _table_json(table: Table) -> dict[str, Any]:
    return table.to_json(with_extras=True)


def _time(data: Mapping[str, Any]) -> float | None:
    return None if data.get("time_s") is None else float(data["time_s"])


def _needed_time(data: Mapping[str, Any]) -> float:
    if data.get("time_s") is None:
        raise KeyError("time_s")
    return float(data["time_s"])


def _optional_time(data: Mapping[str, Any], key: str) -> float | None:
    return None if data.get(key) is None else float(data[key])


def _frame(data: Mapping[str, Any]) -> int | None:
    value = data.get("frame")
    return value if _is_int(value) else None


def _count(data: Mapping[str, Any], key: str) -> int:
    return int(data.get(key) or 0)


def _optional_int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not _is_int(value):
        raise GameStateError(f"{_what(data)}: {key} is {value!r}, not a whole number")
    return int(value)


def _needed_int(data: Mapping[str, Any], key: str) -> int:
    value = _optional_int(data, key)
    if value is None:
        raise KeyError(key)
    return value


def _optional_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise GameStateError(f"{_what(data)}: {key} is {value!r}, not text")
    return value


def _seconds(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None and key == "start_s":
        return None
    if not _is_number(value) or not math.isfinite(value):
        raise GameStateError(f"{_what(data)}: {key} is {value!r}, not a finite number of seconds")
    return float(value)


def _what(data: Mapping[str, Any]) -> str:
    """An event as a message names it: "move 3", "restore event"."""
    kind = data.get("event")
    if kind == "move" and _is_int(data.get("number")):
        return f"move {data['number']}"
    return f"{kind} event" if isinstance(kind, str) else "an event"


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


# -- the edge: the start line's time limit --------------------------------------------------------------------

LOG_FORMAT = "rummikub-referee/game-log/2"
"""The game log's format as this version writes it: the start line's ``time_limit_s`` is the move time in force
(the profile's with a limit agreed at the table applied: seconds, or null for no limit), always there."""
OLD_LOG_FORMATS = ("rummikub-referee/game-log/1",)
"""Older formats, still read (a game resumed, reported, scored, a word recorded): see :func:`logged_time_limit`."""


def logged_time_limit(start: Mapping[str, Any], profile_limit_s: float | None) -> float | None:
    """The move time in force in a logged game (seconds, None for no limit), from its ``start`` line;
    ``profile_limit_s``: its profile's own limit.

    The one place where the log's encodings of the time limit are read. Format 2 (:data:`LOG_FORMAT`) has one:
    seconds, or null for no limit. Format 1 (:data:`OLD_LOG_FORMATS`, and a line that names no format) had three:
    a missing or null ``time_limit_s`` was the profile's own limit, ``"none"`` no limit, a number a limit agreed at
    the table. Anything else is a :class:`GameStateError` quoting the value (a log is data from a file).
    """
    old = start.get("format") != LOG_FORMAT  # a line with no format is read as the old ones were
    if old and start.get("time_limit_s") is None:
        return profile_limit_s
    limit = start.get("time_limit_s", _MISSING)
    if limit is None or (old and limit == "none"):
        return None
    if _is_number(limit) and math.isfinite(limit) and limit >= 0:
        return float(limit)
    wanted = 'seconds (finite, >= 0) or "none"' if old else "seconds (finite, >= 0) or null"
    raise GameStateError(f"the start line's time_limit_s is {_quoted(limit)}, not {wanted}")


_MISSING: Any = object()


def _quoted(value: Any) -> str:
    """A value from a log, quoted for a one-line message (missing, or cut short)."""
    if value is _MISSING:
        return "missing"
    try:
        text = repr(value) if isinstance(value, float) else json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- words ----------------------------------------------------------------------------------------------------


def describe(event: Event) -> str:
    """One line for an event, as the console, the station and the report write it."""
    if isinstance(event, Move):
        ruling = event.ruling
        what = "drew a tile" if event.kind == "draw" else "played " + (" ".join(map(str, ruling.played)) or "no tile")
        codes = ", ".join(dict.fromkeys(ruling.codes))
        amended = "" if event.amends is None else " (the whole turn, ruled again)"
        return f"Move {event.number}{amended}: player {event.player + 1} {what}: {ruling.verdict.value.upper()}" + (
            f" ({codes})" if codes else ""
        )
    if isinstance(event, Restore):
        state = "restored" if event.complete else "partly restored"
        return f"Table {state} after move {event.after_move}"
    if isinstance(event, TableRead):
        if event.reason == "first reading":
            return f"Table read: {len(event.table)} tiles"
        return "Reading refined" if event.reason == "refined" else f"Table {event.reason}"
    if isinstance(event, ClockPress):
        return "Clock key" + (f" (confirms move {event.confirms})" if event.confirms else "")
    if isinstance(event, Activity):
        return "Hands over the table"
    if isinstance(event, Unread):
        return f"{event.seconds} s of the camera never read: the next move is REVIEW"
    if isinstance(event, Override | Undo):
        return "Referee: " + describe_override(event)
    if isinstance(event, PoolEmpty):
        what = "the round's time is up" if event.cause == "round-time" else "the pool is empty"
        who = "" if event.player is None else f" (player {event.player + 1} drew the last tile)"
        return f"Referee: {what}{who}" + (f": {event.rule}" if event.rule else "")
    if isinstance(event, WentOut):
        return f"Referee: player {event.player + 1} went out: the game is over"
    if isinstance(event, RedealRequest):
        pairs = "" if event.pairs is None else f" ({event.pairs} pairs dealt)"
        return f"Referee: player {event.player + 1} asks for a re-deal{pairs}" + (
            f": {event.rule}" if event.rule else ""
        )
    if isinstance(event, OpeningDeclared):
        return f"Referee: player {event.player + 1} will open next round"
    text = NOTE_TEXTS.get(event.kind)
    return event.kind if text is None else text(event.fields)


def _end_text(fields: Mapping[str, Any]) -> str:
    moves = fields.get("moves")
    return f"Game ended after {moves} move{'' if moves == 1 else 's'}"


def _whole(value: Any) -> str:
    """A number as a whole number (anything else as it is: a log line written by hand)."""
    return f"{value:.0f}" if isinstance(value, int | float) else str(value)


NOTE_TEXTS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "start": lambda e: f"Game started ({e.get('profile')}, {e.get('players')} players)",
    "resume": lambda e: f"Game resumed after move {e.get('moves')}",
    "end": _end_text,
    "calibration": lambda e: f"Play area found ({e.get('method', 'calibrated')})",
    "occluded": lambda e: f"Something over the table for {e.get('seconds')} s: tiles hidden",
    "glare": lambda e: (
        f"A glare washes out part of the table (about {_whole(e.get('tiles'))} tiles' area): tiles there"
        " cannot be read, moves that reach it are ruled REVIEW"
    ),
    "camera-moved": lambda e: f"Camera moved {e.get('shift_px')} px: {e.get('action')}",
    "dropout": lambda e: "Camera stream lost",
    "reconnected": lambda e: "Camera stream back",
    "gave-up": lambda e: "Camera stream gone",
    "corrupt-frames": lambda e: "Corrupt frames in the video",
    "reading-disagrees": lambda e: "A reading disagrees with the table: checking again",
    "clock-waiting": lambda e: f"Clock key pressed {e.get('seconds')} s ago: waiting for the table to settle",
    "behind": lambda e: f"Reading {e.get('behind_s')} s behind the camera: a move now may be missed",
    "caught-up": lambda e: f"Reading caught up with the camera ({e.get('unread_s')} s never read)",
    "override-refused": lambda e: f"Override refused: {e.get('reason')}",
}
"""What :func:`describe` says for the log's other lines (:class:`Note`: the game's setup, the camera's and the
reading's warnings), one text per kind for the console, the station and the report."""


def limit_passed_s(move: Move, time_limit_s: float | None) -> float | None:
    """When the turn's time limit passed during ``move``, in the game's seconds (the video's or the camera's); None
    for a move in time (as the game rules it: over only when longer than the limit), with no limit, or logged without
    its elapsed time."""
    if time_limit_s is None or move.elapsed_s is None or move.elapsed_s <= time_limit_s:
        return None
    started = move.turn_started_s if move.turn_started_s is not None else move.time_s - move.elapsed_s
    return started + time_limit_s


def describe_at_limit(move: Move, time_limit_s: float | None) -> str | None:
    """What the camera saw when the time limit passed during a move over time, in one line (the station's, the
    report's): the table then (:attr:`Move.table_at_limit`, or not seen: hands over the table) and whether the table
    was touched after the limit (:attr:`Move.touched_after_limit`); None for a move in time."""
    if limit_passed_s(move, time_limit_s) is None:
        return None
    assert time_limit_s is not None and move.elapsed_s is not None  # limit_passed_s checked them
    over = f"Over the {time_limit_s:g} s limit by {move.elapsed_s - time_limit_s:.1f} s"
    table = move.table_at_limit
    if table is None:
        seen = "the table at the limit not seen (hands over the table)"
    else:
        sets = len(table.sets)
        seen = f"the table at the limit: {len(table)} tiles, {sets} set{'' if sets == 1 else 's'}"
    touched = {
        True: "touched after the limit",
        False: "not touched after the limit",
        None: "whether it was touched after the limit is not known",
    }[move.touched_after_limit]
    return f"{over}: {seen}; {touched}"


def describe_line(line: Mapping[str, Any]) -> str:
    """:func:`describe` for a game log's line (what listeners and the report read); a line the game cannot take
    is named by its kind."""
    try:
        return describe(event_from_json(line))
    except GameStateError:
        return str(line.get("event", "?"))


def describe_override(event: Override | Undo) -> str:
    """What the referee said, in a few words: "move 3 is reverted", "undo (move 3 is OK)"."""
    if isinstance(event, Undo):
        undone = event.undoes
        if not isinstance(undone, Mapping):
            return "undo"
        if undone.get("event", "override") != "override":  # a word on the table (pool empty, re-deal...)
            try:
                return "undo (" + describe(event_from_json(undone)).removeprefix("Referee: ") + ")"
            except (TypeError, ValueError, KeyError):
                return "undo"
        try:
            return f"undo ({describe_override(_override_from_json({'event': 'override', **undone}))})"
        except (TypeError, ValueError, KeyError):
            return "undo"
    action, move = event.action, event.move
    if action == "accept":
        return f"ruling on move {move} stands"
    if action == "ok":
        return f"move {move} is OK"
    if action == "revert":
        return f"move {move} is reverted"
    if action == "correct":
        where = place_text(str(event.table), event.place or (0, 0))
        was = f"{event.extra['was']} → " if event.extra.get("was") else ""
        return f"move {move}: {where} is {was}{event.label}"
    return str(action)


def place_text(which: str, place: Iterable[Any]) -> str:
    """``after, set 2, tile 3`` for a place on a move's table (``loose`` for set -1)."""
    set_index, position = (int(v) for v in place)
    where = "loose" if set_index == LOOSE else f"set {set_index + 1}"
    return f"{which}, {where}, tile {position + 1}"
