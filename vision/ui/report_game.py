"""The analysed game as the report reads it: the one place the report meets the game log's JSON.

:func:`load_game` reads the log once into the typed events of :mod:`referee.events` (through
:func:`vision.game.gamelog.read_events`: moves, table readings, restores, overrides, the referee's words; old logs
read as the game replays them), and the lines the game does not model into small typed values: the ``start`` line
(:class:`Start`), the last ``end`` line (:class:`End`) and ``summary.json`` (:class:`Summary`). The camera's own
fields on an event (the ``snapshot`` beside it, a warning's details) are read here too (:func:`snapshot`,
:func:`warning_detail`), so the page (:mod:`vision.ui.report`) takes typed values only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.events import LOG_FORMAT, Event, GameStateError, Note, Undo, logged_time_limit
from referee.profiles import PROFILES
from vision.game.gamelog import GameLogError, read_events

LOG_NAME = "game-log.jsonl"
SUMMARY_NAME = "summary.json"
TABLE_WORDS = ("pool-empty", "redeal", "announced-opening", "out")
"""The referee's words on the table (the station's Table… dialog, ``record``), listed as the station says them."""


class ReportError(ValueError):
    """A folder that cannot be made into a report (nothing analysed there, a broken log, bad racks)."""


@dataclass(frozen=True, slots=True)
class Pipeline:
    """The reading's speed, as the ``end`` line or ``summary.json`` give it."""

    reading_ms_mean: float | None
    readings: int


@dataclass(frozen=True, slots=True)
class Start:
    """What the log's ``start`` line says about the game and its video."""

    source: str | None
    """The source as logged (None: not logged)."""
    video: str | None
    """The file the analysis read (``video``, else ``source``), where the line names one."""
    profile: str
    players: int | None
    size: tuple[int, int] | None
    fps: float | None
    wall_time: str | None
    time_limit_s: float | None = None
    """The move time the game was played under (seconds; None: no limit, or a profile this program does not know)."""
    old_log: bool = False
    """Written by an older version of the log (:data:`~referee.events.OLD_LOG_FORMATS`, or none named), before the
    camera's evidence on a move over time (:attr:`~referee.events.Move.table_at_limit`) was logged."""


@dataclass(frozen=True, slots=True)
class End:
    """The last ``end`` line: when the game ended, the reading's speed."""

    time_s: float | None
    pipeline: Pipeline | None


@dataclass(frozen=True, slots=True)
class Summary:
    """``summary.json`` (every field None where there is none)."""

    seconds: float | None = None
    speed_x_real_time: float | None = None
    video_s: float | None = None
    pipeline: Pipeline | None = None


@dataclass(frozen=True, slots=True)
class LoggedGame:
    """An analysed game: every event of its log, typed, in order (the ``start`` line first), and what the lines
    the game does not model say."""

    events: tuple[Event, ...]
    start: Start
    end: End | None
    summary: Summary

    @property
    def pipeline(self) -> Pipeline | None:
        """The reading's speed: the ``end`` line's, else the summary's."""
        return (self.end.pipeline if self.end else None) or self.summary.pipeline


def load_game(folder: Path) -> LoggedGame:
    """The events of ``folder``'s log and its summary, checked enough to be drawn: a :class:`ReportError` naming
    the line the game cannot take (a move without its ruling, a time that is not a number...)."""
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such folder")
    log = folder / LOG_NAME
    if not log.is_file():
        raise ReportError(f"{folder}: no {LOG_NAME} (run analyze first)")
    try:
        events = tuple(read_events(log))
    except GameLogError as error:
        raise ReportError(str(error)) from None
    first = events[0]  # read_events: a log's first line is its start line
    assert isinstance(first, Note)
    end = next((e for e in reversed(events) if isinstance(e, Note) and e.kind == "end"), None)
    return LoggedGame(events, _start(first.fields), None if end is None else _end(end), _summary(folder))


def snapshot(event: Event) -> str | None:
    """The picture the camera left beside an event (a path in the folder), if any."""
    fields = event.fields if isinstance(event, Note) else event.extra
    value = fields.get("snapshot")
    return value if isinstance(value, str) and value else None


def warning_detail(note: Note) -> str:
    """What a warning adds to its headline (:func:`referee.events.describe`), in a few words."""
    fields = note.fields
    if note.kind == "occluded" and fields.get("seconds") is not None:
        return f"hands over the table for {fields['seconds']:g} s"
    if note.kind == "camera-moved":
        shift = f"moved {fields['shift_px']:g} px" if fields.get("shift_px") is not None else ""
        return "; ".join(p for p in (shift, str(fields.get("action", ""))) if p)
    if note.kind == "reading-disagrees":
        return "the still table read differently; checked again before ruling"
    extra = {k: v for k, v in fields.items() if k not in ("time_s", "frame", "snapshot")}
    return json.dumps(extra, sort_keys=True) if extra else ""


def undoes_a_word(event: Undo) -> bool:
    """The undo takes back one of the referee's words on the table (not an override)."""
    return isinstance(event.undoes, Mapping) and event.undoes.get("event") in TABLE_WORDS


# -- the lines the game does not model ----------------------------------------------------------------------------


def _start(fields: Mapping[str, Any]) -> Start:
    video = fields.get("video") or fields.get("source")
    players, size, fps = fields.get("players"), fields.get("size"), fields.get("fps")
    return Start(
        source=str(fields["source"]) if "source" in fields else None,
        video=video if isinstance(video, str) else None,
        profile=str(fields.get("profile", "?")),
        players=players if isinstance(players, int) else None,
        size=(size[0], size[1]) if isinstance(size, Sequence) and len(size) == 2 else None,
        fps=_number(fps),
        wall_time=str(fields["wall_time"]) if fields.get("wall_time") else None,
        time_limit_s=_time_limit(fields),
        old_log=fields.get("format") != LOG_FORMAT,
    )


def _time_limit(fields: Mapping[str, Any]) -> float | None:
    """The start line's time limit in any of the log's encodings (:func:`referee.events.logged_time_limit`)."""
    profile = fields.get("profile")
    rules = PROFILES.get(profile) if isinstance(profile, str) else None
    try:
        return logged_time_limit(fields, None if rules is None else rules.time_limit_s)
    except GameStateError:  # read_events checked the line: only a line it let through for another reason
        return None


def _end(note: Note) -> End:
    return End(note.time_s, _pipeline(note.fields.get("pipeline")))


def _summary(folder: Path) -> Summary:
    path = folder / SUMMARY_NAME
    if not path.is_file():
        return Summary()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ReportError(f"{path}: not a summary (malformed JSON)") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: not a summary (not a JSON object)")
    return Summary(_number(data.get("seconds")), _number(data.get("speed_x_real_time")), _number(data.get("video_s")),
                   _pipeline(data.get("pipeline")))  # fmt: skip


def _pipeline(data: Any) -> Pipeline | None:
    if not isinstance(data, Mapping) or not data:
        return None
    readings = data.get("readings", 0)
    return Pipeline(_number(data.get("reading_ms_mean")), readings if isinstance(readings, int) else 0)


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None
