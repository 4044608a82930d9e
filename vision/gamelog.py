"""The game log: one JSON object per line, appended and flushed to disk as each event happens.

The first line is the ``start`` event (format, profile, players, source); then ``table`` readings, ``move``
(with its ruling; ``left_out`` counts boxes left out of the reading as not tiles), ``restore``, ``clock``,
``activity`` (hands over the table, once per move), ``calibration``, warnings (``occluded``, ``clock-waiting``,
``reading-disagrees``, ``camera-moved``), stream events (``dropout``, ``reconnected``), ``override``, ``end``.
Nothing is kept only in memory, so a crash loses at most the line being written; :func:`read_log` skips a torn
last line and :meth:`GameLog.resume` continues the same file.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

LOG_FORMAT = "rummikub-referee/game-log/1"


class GameLogError(ValueError):
    """A game log that cannot be read or continued."""


class GameLog:
    """Append-only JSONL writer; every line is flushed and synced before :meth:`append` returns."""

    def __init__(self, path: Path, handle: IO[str], *, sync: bool = True) -> None:
        self.path = path
        self._handle = handle
        self.sync = sync
        self.count = 0

    @classmethod
    def create(cls, path: str | Path, start: dict[str, Any], *, sync: bool = True) -> GameLog:
        path = Path(path)
        if path.exists() and path.stat().st_size > 0:
            raise GameLogError(f"{path}: a game log is already there (continue it with --resume, or pick a new file)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = path.open("a", encoding="utf-8")
        except OSError as error:
            raise GameLogError(f"cannot write the game log {str(path)!r}: {error.strerror or error}") from None
        log = cls(path, handle, sync=sync)
        log.append({"event": "start", "format": LOG_FORMAT, "wall_time": _now(), **start})
        return log

    @classmethod
    def resume(cls, path: str | Path, *, sync: bool = True) -> tuple[GameLog, list[dict[str, Any]]]:
        """The log opened for appending, and the events already in it (a torn last line is cut off)."""
        path = Path(path)
        events, good_bytes = _read(path)
        try:
            with path.open("r+b") as raw:
                raw.truncate(good_bytes)
                if good_bytes:
                    raw.seek(good_bytes - 1)
                    if raw.read(1) != b"\n":  # the last event lost only its newline: the next starts a new line
                        raw.write(b"\n")
            handle = path.open("a", encoding="utf-8")
        except OSError as error:
            raise GameLogError(f"cannot continue the game log {str(path)!r}: {error.strerror or error}") from None
        log = cls(path, handle, sync=sync)
        log.count = len(events)
        return log, events

    def append(self, event: dict[str, Any]) -> None:
        self._handle.write(json.dumps(event, sort_keys=True, separators=(",", ":")) + "\n")
        self._handle.flush()
        if self.sync:
            os.fsync(self._handle.fileno())
        self.count += 1

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> GameLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """Every event of a game log (a torn last line, from a crash mid-write, is skipped)."""
    return _read(Path(path))[0]


def _read(path: Path) -> tuple[list[dict[str, Any]], int]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise GameLogError(f"cannot read the game log {str(path)!r}: {error.strerror or error}") from None
    events: list[dict[str, Any]] = []
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
        except ValueError:
            if number >= len(lines) - 1:  # the line being written when the program stopped
                break
            raise GameLogError(f"{path}:{number}: not a game log line (malformed JSON)") from None
        events.append(event)
        good += len(line) + (0 if last else 1)
    if not events or events[0].get("event") != "start" or events[0].get("format") != LOG_FORMAT:
        raise GameLogError(f"{path}: not a rummikub-referee game log (no start line)")
    return events, good


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
