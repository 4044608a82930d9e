"""A game watched live: a camera (or a stream, or a video played at its own pace) through the pipeline.

One thread reads frames as fast as the source gives them and keeps only the newest; the main loop processes
the newest frame each time it is free, so a slow reading skips frames instead of falling behind. Every event
goes to the game log before anything else sees it. The clock key (:meth:`LiveSession.press_clock`, from a
window's space bar, the terminal's Enter key or the station's button) and the referee's overrides are queued
and handled by the main loop between frames, so the game state has one writer.

Reading never falls behind silently (:class:`KeepingUp`): when the frame the pipeline is looking at is more than
:data:`LAG_BOUND_S` older than the camera's picture (a reading slowed down by a busy machine, a decoder starved), a
watch thread records a ``behind`` warning at once, which the console prints and the station shows
(:attr:`LiveSession.behind`); every stretch of the camera the pipeline never looked at is logged as ``unread``,
and the game rules the next move REVIEW (:class:`vision.game.moves.GameKeeper`), since a move may have come and gone
unseen. ``caught-up`` lifts the warning once reading has kept within the bound for :data:`CAUGHT_UP_S`. A video
played at its pace passes undecoded the frames it is late for, so reading catches up instead of queueing.

A game resumed from its log (:meth:`LoggedGame.resume`) goes on where the log stops: on the video file it was
watching, from the frame after the last logged time; on a camera, a stream or another video, with the game's
clock going on from that time (so a turn's elapsed time does not restart at 0).
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.game.gamelog import GameLog, GameLogError, GameSetup
from vision.game.moves import GameKeeper, GameStateError
from vision.runtime.capture import CaptureError, Frame, FrameSource, open_source, parse_spec, redact
from vision.runtime.reader import Reader
from vision.session.common import END_OF_VIDEO, GameOptions, calibrate_for
from vision.session.driver import GameSession, Line, Listener
from vision.session.pacing import CAUGHT_UP_S, LAG_BOUND_S, WATCH_EVERY_S, KeepingUp, LatestFrame

__all__ = [
    "CAUGHT_UP_S",
    "LAG_BOUND_S",
    "WATCH_EVERY_S",
    "KeepingUp",
    "LatestFrame",
    "Listener",
    "LiveOptions",
    "LiveSession",
    "LoggedGame",
    "Resumption",
]


@dataclass(frozen=True, slots=True)
class Resumption:
    """Where a resumed game goes on."""

    at_s: float
    """The last time in the game log: the game's clock goes on from there."""
    same_video: bool
    """The source is the video file the log stopped on: it is played from the frame after ``at_s`` (else from
    its start, its times following on from ``at_s``)."""
    watched: bool = False
    """The log's last session on this video ended with it: nothing of it is left to watch."""


@dataclass(frozen=True, kw_only=True)
class LiveOptions(GameOptions):
    source: str
    realtime: bool = True
    """A video file is played at its own frame rate, like a camera (``False``: as fast as it can be read)."""
    resume: Resumption | None = None
    """Set for a game resumed from its log."""


@dataclass
class LoggedGame:
    """A game and its log opened for writing (the log's lock held by this process): new, or resumed."""

    log: GameLog
    keeper: GameKeeper
    setup: GameSetup
    resumption: Resumption | None = None
    """Where a resumed game goes on (None: a new game)."""

    @classmethod
    def start(cls, path: str | Path, source: str, setup: GameSetup, *, sync: bool = True) -> LoggedGame:
        """A new game logged to ``path`` (the source's secrets stay out of the log)."""
        about = {"source": redact(source), **_video_of(source), "mode": "live"}
        return cls(GameLog.create(path, setup, about, sync=sync), setup.keeper(), setup)

    @classmethod
    def resume(cls, path: str | Path, source: str, *, sync: bool = True) -> LoggedGame:
        """The game in the log at ``path``, replayed strictly (an error names the log's line), with a ``resume``
        event appended; ``source`` is what the game goes on from (see :class:`Resumption`)."""
        log, events = GameLog.resume(path, sync=sync)
        try:
            setup = GameSetup.from_start(events[0], path)
            keeper = setup.keeper()
            for event, line in zip(events, log.lines, strict=True):
                try:
                    keeper.apply(event)
                except GameStateError as error:
                    raise GameLogError(f"{path}:{line}: {error}") from None
            resume = resume_point(events, source)
            log.append({"event": "resume", "source": redact(source), **_video_of(source),
                        "time_s": round(resume.at_s, 3), "moves": keeper.moves, "status": keeper.status()})  # fmt: skip
        except BaseException:
            log.close()
            raise
        return cls(log, keeper, setup, resume)


def resume_point(events: list[Line], source: str) -> Resumption:
    """Where the game in ``events`` goes on when it is resumed on ``source``."""
    times = [t for e in events if isinstance(t := e.get("time_s"), int | float) and math.isfinite(t)]
    logged = next((e for e in reversed(events) if e.get("event") in ("start", "resume")), {})
    video = logged.get("video")
    if video is None and isinstance(logged.get("source"), str):
        video = _video_of(logged["source"]).get("video")  # a log from before the video's full path was logged
    same = video is not None and _video_of(source).get("video") == video
    watched = same and events[-1].get("event") == "end" and events[-1].get("reason") == END_OF_VIDEO
    return Resumption(max(times, default=0.0), same, watched)


def _video_of(source: str) -> dict[str, str]:
    """``{"video": full path}`` for a video file (how a resumed game knows it is on the same one), else nothing."""
    if parse_spec(source)[1]:
        return {}
    try:
        return {"video": str(Path(source).resolve())}
    except (OSError, ValueError):  # not a path this system can have (a NUL in a log's source, a loop of links)
        return {}


class LiveSession(GameSession):
    """Runs the pipeline on a live source; :meth:`run` returns when the source ends or :meth:`stop` is called.

    The game session (:class:`vision.session.driver.GameSession`) configured for a live source: its frames are the
    newest each time reading is free (:meth:`_frames`), paced by the camera's clock, with the clock key and the
    referee's overrides handled between them.
    """

    def __init__(
        self,
        options: LiveOptions,
        reader: Reader,
        log: GameLog,
        keeper: GameKeeper,
        *,
        capture_options: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(reader, log, keeper, config=options.config)
        self.options = options
        self.capture_options = dict(capture_options or {})
        """More keyword arguments for :func:`vision.runtime.capture.open_source` (tests pass a fake opener, sleep,
        clock)."""
        self.commands: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self._stop = threading.Event()
        self.latest_image: np.ndarray | None = None
        self.latest_time_s = 0.0
        self.lag_s: list[float] = []
        """Wall-clock delay between a frame's arrival and the end of its processing."""
        self._fast = False
        """A video file read as fast as possible: every sampled frame is processed, at once."""
        self.playback_started: float | None = None
        """Monotonic time at which a paced video file's time 0 was shown (its frames follow on that clock)."""
        self.behind_s_max = 0.0
        """How far, at worst, reading a paced video file fell behind its frame rate (0: it kept up)."""
        self.clock_offset_s = 0.0
        """Added to the source's times: a resumed game's clock goes on from its log's last time."""
        self.started = False
        """The first frame was read and the game is under way (before that, a failure leaves the log unused)."""
        self.stop_reason: str | None = None
        """Why :meth:`stop` was called (the end event's reason), if a reason was given."""
        self.source: FrameSource | None = None
        self.keeping_up = KeepingUp()
        """Whether reading keeps up with the camera (not watched for a video read as fast as possible)."""
        self.frames_passed = 0
        """Frames of a paced video passed undecoded because reading was late for them (catching up)."""
        self._source_down = False
        self._source_back_s = -math.inf
        """Camera time the source came back after its last dropout (stretches lost to a dropout are not reading's
        to announce: the source said so itself)."""

    @property
    def behind(self) -> dict[str, Any] | None:
        """While reading is behind the camera: since when (camera seconds), how far at worst, seconds never looked
        at, frames dropped and the bound (what the station shows); None while it keeps up."""
        return self.keeping_up.state

    # -- called from other threads ----------------------------------------------------------------
    def press_clock(self) -> None:
        self.commands.put(("clock", {}))

    def override(self, **details: Any) -> None:
        self.commands.put(("override", details))

    def stop(self, reason: str | None = None) -> None:
        """End the session after the frame being processed (``reason``: for the end event; Ctrl-C, SIGTERM)."""
        if reason is not None and self.stop_reason is None:
            self.stop_reason = reason
        self._stop.set()

    # -- the loop ---------------------------------------------------------------------------------
    def run(self, on_start: Callable[[], None] | None = None) -> dict[str, Any]:
        """Watch the game until the source ends, :meth:`stop` is called or Ctrl-C; the summary (also logged as
        the ``end`` event, with its ``reason``). Until the first frame is read (:attr:`started`; then ``on_start``
        is called) an error is raised with nothing logged."""
        source = self.source = open_source(self.options.source, on_event=self._source_event, **self.capture_options)
        latest = LatestFrame()
        self._fast = not source.is_live and not self.options.realtime
        try:
            first = self._first_frame(source)
            calibration = calibrate_for(first.image, self.options.calibration)
            self.latest_time_s = first.time_s + self.clock_offset_s
            self.begin(first, calibration, source.size, time_s=self.latest_time_s, frame=first.index)
            self.started = True
            if on_start is not None:
                on_start()
            latest.put(first)
            threading.Thread(target=self._read_frames, args=(source, latest, first.time_s), daemon=True).start()
            if not self._fast:
                threading.Thread(target=self._watch, args=(latest,), daemon=True).start()
            if (reason := self.play(self._frames(latest))) is not None:
                self.stop(reason)  # a second Ctrl-C, or one with no handler installed: the game still ends in order
        except KeyboardInterrupt:
            if not self.started:
                raise
            self.stop("Ctrl-C")  # a second Ctrl-C, or one with no handler installed: the game still ends in order
        finally:
            self._stop.set()
            source.close()
        if latest.error is not None and not isinstance(latest.error, CaptureError):
            raise latest.error
        summary = {
            "reason": self._end_reason(source, latest),
            "moves": self.keeper.moves,
            "frames_dropped": latest.dropped,
            "frames_passed": self.frames_passed,
            "behind_s_max": round(self.behind_s_max, 3),
            "keeping_up": None if self._fast else self.keeping_up.summary(),
            "lag_s_max": round(max(self.lag_s), 3) if self.lag_s else None,
            "lag_s_median": round(float(np.median(self.lag_s)), 3) if self.lag_s else None,
            "capture": asdict(source.stats),
            "pipeline": self.pipeline.stats.to_json() if self.pipeline else None,
        }
        if not source.is_live:
            summary["damage"] = source.damage().to_json()
        self.end(self.latest_time_s, summary)
        if isinstance(latest.error, CaptureError):
            raise latest.error
        return summary

    def _first_frame(self, source: FrameSource) -> Frame:
        """The frame the game starts (or goes on) from; a resumed game skips what its log already holds."""
        resume = self.options.resume
        if resume is not None and resume.same_video and not source.is_live:
            if resume.watched or not source.seek(math.floor(resume.at_s * source.fps + 1e-6) + 1):
                raise CaptureError(
                    f"{source.name} was watched to its end ({resume.at_s:.1f} s) in this game log: nothing is left"
                    " to referee (resume on another source, or start a new log)"
                )
        elif resume is not None:
            self.clock_offset_s = resume.at_s
        first = source.read()
        if first is None:
            raise CaptureError(f"{source.name}: no frame could be read")
        return first

    def _end_reason(self, source: FrameSource, latest: LatestFrame) -> str:
        if self.stop_reason is not None:
            return self.stop_reason
        if isinstance(latest.error, CaptureError):
            return "source lost"
        if latest.finished:
            return END_OF_VIDEO if not source.is_live else "source ended"
        return "stopped"

    def _frames(self, latest: LatestFrame) -> Iterator[Frame]:
        """The newest frame each time the pipeline is free (on the game's clock: a resumed game's goes on), with the
        clock key and the overrides handled between frames; paced to the pipeline's sampling rate."""
        config = self.options.config
        interval = 1.0 / max(config.sample_hz, config.meter_hz)  # readings are spaced by the pipeline itself
        while not self._stop.is_set():
            self._handle_commands()
            frame = latest.take()
            if frame is None:
                if latest.finished:
                    return
                continue
            arrived = time.monotonic()
            time_s = frame.time_s + self.clock_offset_s
            self.latest_image, self.latest_time_s = frame.image, time_s
            if not self._fast:
                self._look_at(time_s, latest)
            yield Frame(frame.index, time_s, frame.image)
            done = time.monotonic()
            self.lag_s.append(done - arrived)
            if not self._fast:
                time.sleep(max(0.0, interval - (done - arrived)))  # the sampling rate is enough; leave the cores

    def _look_at(self, time_s: float, latest: LatestFrame) -> None:
        """The pipeline is about to look at the frame of ``time_s``: stretches it never looked at go to the game
        (``unread``, so the next move is REVIEW) and the log, with a ``behind`` warning if the watch missed it."""
        assert self.source is not None
        events = self.keeping_up.looking_at(time_s, self._frames_dropped(latest), source_back_s=self._source_back_s)
        for event in events:
            if event["event"] == "unread":
                self.keeper.apply(event)
            self.record(event)

    def _frames_dropped(self, latest: LatestFrame) -> int:
        return latest.dropped + self.frames_passed

    def _camera_now(self) -> float | None:
        """The camera time of the picture the camera shows now (None before a paced video has started)."""
        source = self.source
        if source is None:
            return None
        if source.is_live:
            return source.clock_s() + self.clock_offset_s
        if self.playback_started is None:
            return None
        return time.monotonic() - self.playback_started + self.clock_offset_s

    def _watch(self, latest: LatestFrame) -> None:
        """Watch thread: says at once when the frame being looked at falls more than the bound behind the camera
        (the main loop is busy reading then, and cannot); not while the source is down (it said so itself)."""
        while not self._stop.wait(WATCH_EVERY_S):
            now = self._camera_now()
            if now is None or latest.finished or self.source is None:
                continue
            looked_at = self.keeping_up.looked_at_s
            if self._source_down or looked_at is None or looked_at <= self._source_back_s:
                continue
            event = self.keeping_up.check(now, self._frames_dropped(latest))
            if event is not None:
                self.record(event)

    def _read_frames(self, source: FrameSource, latest: LatestFrame, origin_s: float = 0.0) -> None:
        """Reader thread: every frame of the source, newest kept; a video file is paced at its frame rate.

        A video file read as fast as possible (``realtime=False``) is sampled at the pipeline's rate instead, and
        no sampled frame is dropped: reading faster than the pipeline would otherwise skip the whole game.
        ``origin_s`` is the first frame's time in the file (a resumed video starts part-way through).
        """
        started = self.playback_started = time.monotonic() - origin_s
        step = max(1, round(source.fps / self.options.config.sample_hz)) if self._fast else 1
        paced = self.options.realtime and not source.is_live
        due = math.floor(origin_s * source.fps + 1e-6) + 1  # the index of a paced video's next frame
        try:
            while not self._stop.is_set():
                if step > 1:
                    source.skip(step - 1)
                elif paced:
                    # Late (decoding starved): the frames before the one the camera shows now are passed
                    # undecoded, so reading goes on from the camera's picture of now instead of queueing.
                    shown = math.floor((time.monotonic() - started) * source.fps)
                    if shown > due:
                        self.frames_passed += source.skip(shown - due)
                frame = source.read()
                if frame is None:
                    break
                due = frame.index + 1
                if paced:
                    delay = frame.time_s - (time.monotonic() - started)
                    if delay > 0:
                        time.sleep(delay)
                    else:
                        self.behind_s_max = max(self.behind_s_max, -delay)
                if self._fast:
                    latest.wait_taken(self._stop)
                latest.put(frame)
            latest.finish()
        except BaseException as error:
            latest.finish(error)

    def _handle_commands(self) -> None:
        assert self.pipeline is not None
        while True:
            try:
                kind, details = self.commands.get_nowait()
            except queue.Empty:
                return
            frame = -1
            if kind == "clock":
                self.pipeline.clock(self.latest_time_s, frame)
            elif kind == "override":
                line = {"event": "override", "time_s": round(self.latest_time_s, 3), **details}
                try:
                    self.record(self.keeper.apply(line))  # completed: a correction's ruling, an undo's override
                except GameStateError as error:  # the game cannot take it: said, logged, and the game goes on
                    self.record({"event": "override-refused", "time_s": line["time_s"], "reason": str(error),
                                 "override": details})  # fmt: skip

    def _source_event(self, kind: str, info: dict[str, Any]) -> None:
        at = float(info["time_s"]) + self.clock_offset_s if "time_s" in info else self.latest_time_s
        if kind == "dropout":
            self._source_down = True
        elif kind == "reconnected":
            self._source_back_s, self._source_down = at, False
        self.record({"event": kind, **{k: v for k, v in info.items() if k != "time_s"}, "time_s": round(at, 3)})
