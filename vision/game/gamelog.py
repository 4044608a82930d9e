"""The game log: one JSON object per line, appended and flushed to disk as each event happens.

The first line is the ``start`` event (format, the game's setup: :class:`GameSetup`, the source); then ``table``
readings, ``move`` (with its ruling; ``left_out`` counts boxes left out of the reading as not tiles), ``restore``,
``clock``, ``activity`` (hands over the table, once per move), ``calibration``, warnings (``occluded``, ``glare``,
``clock-waiting``, ``reading-disagrees``, ``camera-moved``), stream events (``dropout``, ``reconnected``),
``override``, ``end``. Nothing is kept only in memory, so a crash loses at most the line being written;
:func:`read_log` skips a torn last line and :meth:`GameLog.resume` continues the same file. The lines are the only
place the game's events are dictionaries: :func:`read_events` gives them as :mod:`referee.events` values.

The start line is read in one place, :meth:`GameSetup.from_start`: the game's profile with the move time in force
applied (``dataclasses.replace(profile, time_limit_s=...)``), written as one value, ``time_limit_s``: seconds, or null
for no limit (format :data:`LOG_FORMAT`). Older logs (:data:`OLD_LOG_FORMATS`) are resumed, reported and scored as
they were written: their other encodings of the limit are read there too, by :func:`referee.events.logged_time_limit`,
and nowhere else.

One process writes a log at a time: the writer holds an exclusive lock (``flock``) on the open file for as long
as it is open, so a second ``live`` on the same log is refused instead of interleaving its moves with the first's.
Readers (the station, ``tail -f``, a report) take no lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from referee.events import LOG_FORMAT, OLD_LOG_FORMATS, GameStateError, logged_time_limit
from referee.profiles import Profile
from vision.runtime.seats import PLAYERS, Orientation

if TYPE_CHECKING:
    from referee.events import Event
    from vision.game.moves import GameKeeper

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no advisory locks, one writer per log is up to the referee
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOG_FORMAT", "OLD_LOG_FORMATS", "GameLog", "GameLogError", "GameSetup", "read_events", "read_log"]


class GameLogError(ValueError):
    """A game log that cannot be read or continued."""


class GameLog:
    """Append-only JSONL writer; every line is flushed and synced before :meth:`append` returns.

    Made by :meth:`create` or :meth:`resume`, which take the file's exclusive lock; :meth:`close` lets it go.
    """

    def __init__(
        self, path: Path, handle: IO[str], *, sync: bool = True, created: bool = False, size_at_open: int = 0
    ) -> None:
        self.path = path
        self._handle = handle
        self.sync = sync
        self.count = 0
        self.created = created
        """This process made the file (so :meth:`discard` may remove it)."""
        self._size_at_open = size_at_open
        self.lines: list[int] = []
        """The line number of each event read by :meth:`resume` (for errors that name the line)."""

    @classmethod
    def create(
        cls, path: str | Path, setup: GameSetup, about: Mapping[str, Any] | None = None, *, sync: bool = True
    ) -> GameLog:
        """A new log at ``path`` (a missing or empty file) with its ``start`` line: the game's ``setup`` and
        ``about`` it (source, mode...); refused while another process writes it, and when it already holds a game."""
        path = Path(path)
        blocking = next((folder for folder in (path.parent, *path.parent.parents) if folder.is_file()), None)
        if blocking is not None:  # mkdir would say "File exists", which misleads
            raise GameLogError(f"cannot write the game log {str(path)!r}: {blocking} is a file, not a folder")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            descriptor, created = _open_locked(path, create=True)
        except OSError as error:
            raise GameLogError(f"cannot write the game log {str(path)!r}: {error.strerror or error}") from None
        if os.fstat(descriptor).st_size > 0:
            os.close(descriptor)
            raise GameLogError(f"{path}: a game log is already there (continue it with --resume, or pick a new file)")
        log = cls(path, os.fdopen(descriptor, "a", encoding="utf-8"), sync=sync, created=created)
        log.append({**(about or {}), "event": "start", "format": LOG_FORMAT, "wall_time": _now(), **setup.to_json()})
        return log

    @classmethod
    def resume(cls, path: str | Path, *, sync: bool = True) -> tuple[GameLog, list[dict[str, Any]]]:
        """The log opened for appending, and the events already in it (a torn last line is cut off).

        The lock is taken before the file is read, so the events returned are all there is.
        """
        path = Path(path)
        try:
            descriptor, _ = _open_locked(path, create=False)
        except OSError as error:
            raise GameLogError(f"cannot read the game log {str(path)!r}: {error.strerror or error}") from None
        try:
            with open(descriptor, "rb", closefd=False) as raw:  # the locked descriptor: read what is locked
                data = raw.read()
            events, lines, good_bytes = _parse(data, path)
            os.ftruncate(descriptor, good_bytes)
            if good_bytes and data[good_bytes - 1 : good_bytes] != b"\n":
                os.write(descriptor, b"\n")  # the last event lost only its newline: the next starts a new line
                good_bytes += 1
        except OSError as error:
            os.close(descriptor)
            raise GameLogError(f"cannot continue the game log {str(path)!r}: {error.strerror or error}") from None
        except BaseException:
            os.close(descriptor)
            raise
        log = cls(path, os.fdopen(descriptor, "a", encoding="utf-8"), sync=sync, size_at_open=good_bytes)
        log.count = len(events)
        log.lines = lines
        return log, events

    def append(self, event: dict[str, Any]) -> None:
        self._handle.write(json.dumps(event, sort_keys=True, separators=(",", ":")) + "\n")
        self._handle.flush()
        if self.sync:
            os.fsync(self._handle.fileno())
        self.count += 1

    def close(self) -> None:
        """Close the file (and let its lock go); closing twice is harmless."""
        self._handle.close()

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def discard(self) -> None:
        """Take back what this process wrote, for a game that never started (its source could not be opened).

        The file is removed when this process made it, else cut back to what it held when opened (an empty file
        given for a new log, or a resumed game's events), so a failed start leaves nothing that blocks the next
        try. The lock is held until it is done.
        """
        if self._handle.closed:
            return
        self._handle.flush()
        if self.created:
            self.path.unlink(missing_ok=True)
        else:
            os.ftruncate(self._handle.fileno(), self._size_at_open)
        self._handle.close()

    @staticmethod
    def remove(path: str | Path) -> None:
        """Delete a finished log (an old analysis being replaced); one another process is writing is refused."""
        path = Path(path)
        try:
            descriptor, _ = _open_locked(path, create=False)
        except FileNotFoundError:
            return
        except OSError as error:
            raise GameLogError(f"cannot remove the game log {str(path)!r}: {error.strerror or error}") from None
        try:
            path.unlink(missing_ok=True)
        except OSError as error:
            raise GameLogError(f"cannot remove the game log {str(path)!r}: {error.strerror or error}") from None
        finally:
            os.close(descriptor)

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _open_locked(path: Path, *, create: bool) -> tuple[int, bool]:
    """A descriptor appending to ``path`` with this process's exclusive lock on the file, and whether this call
    made the file (``create``: a missing file is made). Opening and locking one descriptor leaves no gap between
    "is it there?" and "it is mine".
    """
    flags = os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    descriptor, created = -1, False
    if not create:
        descriptor = os.open(path, flags)
    for _attempt in range(3 if create else 0):  # the file may vanish between two opens (a stub being discarded)
        try:
            descriptor, created = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            with contextlib.suppress(FileNotFoundError):
                descriptor = os.open(path, flags)
        if descriptor >= 0:
            break
    if descriptor < 0:  # pragma: no cover - a file made and removed three times over while we looked
        raise FileNotFoundError(2, "the file keeps disappearing", str(path))
    if fcntl is not None:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise GameLogError(
                f"{path} is being written by another referee process (a game going on there: stop it first,"
                " or pick another log)"
            ) from None
    return descriptor, created


@dataclass(frozen=True, slots=True)
class GameSetup:
    """What a logged game is played under: the log's ``start`` line as one value (:meth:`to_json`, read back checked
    by :meth:`from_start`: the line is data from a file)."""

    rules: Profile
    """The profile, with the move time in force as its ``time_limit_s`` (a limit agreed at the table applied with
    ``dataclasses.replace``; None: no limit)."""
    players: int
    first_player: int = 0
    """0-based, as in the log."""
    orientation: Orientation | None = None
    """How the camera sees the table (the start line's ``orientation``); None: player 1 at the bottom, the seats in
    :func:`~vision.runtime.seats.seating`'s order, as logs always had it."""

    @classmethod
    def of(cls, profile: str, players: int, first_player: int = 0, orientation: Orientation | None = None) -> GameSetup:
        """A game under the profile named ``profile`` as it is (its own time limit)."""
        from referee.profiles import get_profile

        return cls(get_profile(profile), players, first_player, orientation)

    def to_json(self) -> dict[str, Any]:
        """The setup's fields of the start line (the time limit as one value: seconds, or null for none)."""
        return {
            "profile": self.rules.name,
            "players": self.players,
            "first_player": self.first_player,
            "time_limit_s": self.rules.time_limit_s,
            **({} if self.orientation is None else {"orientation": self.orientation.to_json()}),
        }

    def keeper(self) -> GameKeeper:
        """A new game under this setup (:class:`~vision.game.moves.GameKeeper`), the time limit in force included."""
        from vision.game.moves import GameKeeper

        return GameKeeper(self.rules, self.players, self.first_player, orientation=self.orientation)

    @classmethod
    def from_start(cls, start: Mapping[str, Any], path: str | Path) -> GameSetup:
        """The setup in a start line, the older logs' encodings of the time limit included
        (:func:`referee.events.logged_time_limit`); a :class:`GameLogError` naming the log's first line when it is
        not one."""
        from referee.profiles import PROFILES

        where = f"{path}:1"
        profile = start.get("profile", MISSING)
        if not isinstance(profile, str) or profile not in PROFILES:
            known = ", ".join(PROFILES)
            raise GameLogError(f"{where}: the start line's profile is {_shown(profile)}, not one of {known}")
        players = start.get("players", MISSING)
        most = min(PROFILES[profile].max_players, PLAYERS[-1])
        if not _is_int(players) or not PLAYERS[0] <= players <= most:
            raise GameLogError(
                f"{where}: the start line's players is {_shown(players)}, not {PLAYERS[0]} to {most} ({profile})"
            )
        first = start.get("first_player", 0)
        if not _is_int(first) or not 0 <= first < players:
            raise GameLogError(
                f"{where}: the start line's first_player is {_shown(first)}, not 0 to {players - 1} (0-based)"
            )
        try:
            limit = logged_time_limit(start, PROFILES[profile].time_limit_s)
        except GameStateError as error:
            raise GameLogError(f"{where}: {error}") from None
        orientation = None
        if start.get("orientation") is not None:
            try:
                orientation = Orientation.from_json(start["orientation"])
            except ValueError as error:
                raise GameLogError(f"{where}: the start line's orientation: {error}") from None
        return cls(replace(PROFILES[profile], time_limit_s=limit), players, first, orientation)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


MISSING: Any = object()
"""A field a line does not have (``null`` is a value)."""


def _shown(value: Any) -> str:
    """A value from a log, quoted for a one-line message (missing, or cut short)."""
    if value is MISSING:
        return "missing"
    try:
        text = json.dumps(value) if not isinstance(value, float) else repr(value)
    except RecursionError:
        return "a value nested too deeply"
    return text if len(text) <= 40 else text[:37] + "..."


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Every event of a game log (a torn last line, from a crash mid-write, is skipped)."""
    path = Path(path)
    return _parse(_read_bytes(path), path)[0]


def read_events(path: str | Path) -> list[Event]:
    """Every event of a game log as the typed events of :mod:`referee.events` (lines the game does not model are
    :class:`~referee.events.Note`); a line the game could not take is a :class:`GameLogError` naming it."""
    from referee.events import GameStateError, event_from_json

    path = Path(path)
    data = _read_bytes(path)
    events, lines, _ = _parse(data, path)
    typed: list[Event] = []
    for event, line in zip(events, lines, strict=True):
        try:
            typed.append(event_from_json(event))
        except GameStateError as error:
            raise GameLogError(f"{path}:{line}: {error}") from None
    return typed


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise GameLogError(f"cannot read the game log {str(path)!r}: {error.strerror or error}") from None


def _parse(data: bytes, path: Path) -> tuple[list[dict[str, Any]], list[int], int]:
    """The events in a log's bytes, the line number of each, and how many bytes hold whole lines."""
    events: list[dict[str, Any]] = []
    numbers: list[int] = []
    good = 0
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        if not line.strip():
            good += len(line) + (0 if last else 1)
            continue
        try:
            event = json.loads(line)
            if not isinstance(event, dict) or "event" not in event:
                raise ValueError("not an event object")
        except RecursionError:  # JSON nested beyond Python's stack: no event is written like that, torn or not
            raise GameLogError(f"{path}:{number}: not a game log line (JSON nested too deeply)") from None
        except ValueError:
            if number >= len(lines) - 1:  # the line being written when the program stopped
                break
            raise GameLogError(f"{path}:{number}: not a game log line (malformed JSON)") from None
        events.append(event)
        numbers.append(number)
        good += len(line) + (0 if last else 1)
    if not events or events[0].get("event") != "start" or events[0].get("format") not in (LOG_FORMAT, *OLD_LOG_FORMATS):
        raise GameLogError(f"{path}: not a rummikub-referee game log (no start line)")
    return events, numbers, good


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
