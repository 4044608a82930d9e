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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.game.gamelog import GameLog, GameLogError, GameSetup
from vision.game.moves import GameKeeper, GameStateError
from vision.game.pipeline import Event, TablePipeline
from vision.runtime.capture import CaptureError, Frame, FrameSource, open_source, parse_spec, redact
from vision.session.common import END_OF_VIDEO, GameOptions, calibrate_for, time_limit_kwargs

Listener = Callable[[Event], None]

LAG_BOUND_S = 0.8
"""Reading is *behind* when the frame the pipeline looks at is more than this older than the camera's picture, or
two frames it looked at one after the other are more than this apart on the camera's clock (the frames between were
never looked at). Why 0.8 s: the shortest synthetic draw keeps an arm over the play area for 1.1 s (a 2-s draw,
:func:`vision.synth.video.timeline`), so frames looked at within 0.8 s of each other see every arm; and the warning
must come within 1 s of the last frame looked at (issue 16's target): checked every :data:`WATCH_EVERY_S`, with up
to 0.13 s more of the watch thread waiting for a core on a loaded 2-core machine (measured with 0.9 s and 0.1 s:
warnings shown up to 1.027 s behind), 0.8 + 0.05 + 0.13 < 1 s."""
WATCH_EVERY_S = 0.05
"""How often the watch thread compares the frame being looked at with the camera's clock."""
CAUGHT_UP_S = 5.0
"""Camera seconds of keeping within :data:`LAG_BOUND_S` before the warning is lifted: a machine too slow for every
reading stays *behind* rather than saying it caught up between two readings."""


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
        keeper = GameKeeper(
            setup.profile, setup.players, first_player=setup.first_player, **time_limit_kwargs(setup.time_limit)
        )
        start = {
            "source": redact(source),
            **_video_of(source),
            "profile": setup.profile,
            "players": setup.players,
            "first_player": setup.first_player,
            "mode": "live",
            "time_limit_s": setup.time_limit,
        }
        return cls(GameLog.create(path, start, sync=sync), keeper, setup)

    @classmethod
    def resume(cls, path: str | Path, source: str, *, sync: bool = True) -> LoggedGame:
        """The game in the log at ``path``, replayed strictly (an error names the log's line), with a ``resume``
        event appended; ``source`` is what the game goes on from (see :class:`Resumption`)."""
        log, events = GameLog.resume(path, sync=sync)
        try:
            setup = GameSetup.from_start(events[0], path)
            keeper = GameKeeper(
                setup.profile, setup.players, first_player=setup.first_player, **time_limit_kwargs(setup.time_limit)
            )
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


def resume_point(events: list[Event], source: str) -> Resumption:
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


class KeepingUp:
    """Whether reading keeps up with the camera; the events that say when it does not.

    The main loop tells it the camera time of each frame the pipeline is about to look at
    (:meth:`looking_at`), a watch thread the camera's clock now (:meth:`check`); both answer with the events to
    record. Thread-safe; times are the game's (camera) seconds.
    """

    def __init__(self, bound_s: float = LAG_BOUND_S, caught_up_s: float = CAUGHT_UP_S) -> None:
        self.bound_s, self.caught_up_s = bound_s, caught_up_s
        self._lock = threading.Lock()
        self.looked_at_s: float | None = None
        """Camera time of the frame the pipeline looks at (or last looked at)."""
        self.state: dict[str, Any] | None = None
        """While behind: since when, how far at worst, seconds never looked at, frames dropped (None: keeping up)."""
        self._last_behind_s = -math.inf
        self.incidents = 0
        self.unread_s = 0.0
        self.windows = 0
        self.worst_s = 0.0
        """The longest time, in the whole session, between the camera's picture and the frame looked at."""
        self.warned_after_s: list[float] = []
        """How far behind reading was when each ``behind`` warning was recorded."""

    def looking_at(self, time_s: float, dropped: int, *, source_back_s: float = -math.inf) -> list[Event]:
        """The pipeline looks at the frame of camera time ``time_s`` (``dropped``: frames dropped so far): an
        ``unread`` event for the stretch since the frame before when it is longer than the bound (a ``behind``
        warning first, unless said already or the stretch began before the source came back from a dropout at
        ``source_back_s``: the source said so itself), ``caught-up`` once reading has kept within the bound long
        enough."""
        with self._lock:
            previous, self.looked_at_s = self.looked_at_s, time_s
            if previous is None:
                return []
            gap = time_s - previous
            events: list[Event] = []
            if gap > self.bound_s:
                self.windows += 1
                self.unread_s += gap
                self.worst_s = max(self.worst_s, gap)
                self._last_behind_s = time_s
                if self.state is None and previous > source_back_s:
                    events.append(self._open(time_s, gap, dropped))
                self._update(gap, dropped, unread_s=gap)
                events.append({"event": "unread", "time_s": round(time_s, 3), "from_s": round(previous, 3),
                               "seconds": round(gap, 3)})  # fmt: skip
            elif self.state is not None and time_s - self._last_behind_s >= self.caught_up_s:
                state, self.state = self.state, None
                events.append({"event": "caught-up", "time_s": round(time_s, 3), "since_s": state["since_s"],
                               "behind_s_max": state["behind_s"], "unread_s": state["unread_s"]})  # fmt: skip
            return events

    def check(self, now_s: float, dropped: int) -> Event | None:
        """The camera's clock reads ``now_s``: a ``behind`` warning the moment the frame being looked at is older
        than the bound (once per incident; later checks only update :attr:`state`)."""
        with self._lock:
            if self.looked_at_s is None:
                return None
            lag = now_s - self.looked_at_s
            if lag <= self.bound_s:
                return None
            self.worst_s = max(self.worst_s, lag)
            self._last_behind_s = max(self._last_behind_s, now_s)
            if self.state is None:
                return self._open(now_s, lag, dropped)
            self._update(lag, dropped)
            return None

    def _update(self, lag: float, dropped: int, *, unread_s: float = 0.0) -> None:
        """The incident under way got worse (a new dictionary: the station reads it from another thread)."""
        if self.state is not None:
            behind, unread = max(self.state["behind_s"], lag), self.state["unread_s"] + unread_s
            self.state = {**self.state, "behind_s": round(behind, 3), "unread_s": round(unread, 3),
                          "frames_dropped": dropped}  # fmt: skip

    def _open(self, time_s: float, lag: float, dropped: int) -> Event:
        self.incidents += 1
        self.warned_after_s.append(round(lag, 3))
        self.state = {"since_s": round(time_s - lag, 3), "behind_s": round(lag, 3), "unread_s": 0.0,
                      "frames_dropped": dropped, "bound_s": self.bound_s}  # fmt: skip
        return {"event": "behind", "time_s": round(time_s, 3), "behind_s": round(lag, 3), "frames_dropped": dropped,
                "bound_s": self.bound_s}  # fmt: skip

    def summary(self) -> dict[str, Any]:
        return {
            "bound_s": self.bound_s,
            "warnings": self.incidents,
            "warned_after_s_max": max(self.warned_after_s, default=None),
            "unread_s": round(self.unread_s, 3),
            "unread_stretches": self.windows,
            "behind_s_max": round(self.worst_s, 3),
        }


class LatestFrame:
    """The newest frame from a reader thread; older ones are dropped (and counted)."""

    def __init__(self) -> None:
        self._frame: Frame | None = None
        self._condition = threading.Condition()
        self.dropped = 0
        self.error: BaseException | None = None
        self.finished = False

    def put(self, frame: Frame) -> None:
        with self._condition:
            if self._frame is not None:
                self.dropped += 1
            self._frame = frame
            self._condition.notify_all()

    def finish(self, error: BaseException | None = None) -> None:
        with self._condition:
            self.finished, self.error = True, error
            self._condition.notify_all()

    def take(self, timeout: float = 0.5) -> Frame | None:
        with self._condition:
            if self._frame is None and not self.finished:
                self._condition.wait(timeout)
            frame, self._frame = self._frame, None
            self._condition.notify_all()
            return frame

    def wait_taken(self, stop: threading.Event) -> None:
        """Until the frame put last has been taken (a reader that must not drop frames waits here)."""
        with self._condition:
            while self._frame is not None and not stop.is_set():
                self._condition.wait(0.1)


class LiveSession:
    """Runs the pipeline on a live source; :meth:`run` returns when the source ends or :meth:`stop` is called."""

    def __init__(
        self,
        options: LiveOptions,
        reader: Any,
        log: GameLog,
        keeper: GameKeeper,
        *,
        capture_options: dict[str, Any] | None = None,
    ) -> None:
        self.options = options
        self.capture_options = dict(capture_options or {})
        """More keyword arguments for :func:`vision.runtime.capture.open_source` (tests pass a fake opener, sleep,
        clock)."""
        self.reader = reader
        self.log = log
        self.keeper = keeper
        self.listeners: list[Listener] = []
        self.commands: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()
        self._stop = threading.Event()
        self.pipeline: TablePipeline | None = None
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
        self._record_lock = threading.RLock()
        """Events come from the main loop, the reader thread (dropouts) and the watch thread: one at a time."""

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

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    # -- the loop ---------------------------------------------------------------------------------
    def record(self, event: Event) -> None:
        with self._record_lock:
            self.log.append(event)
            for listener in list(self.listeners):
                listener(event)

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
            self.record({"event": "calibration", "time_s": round(self.latest_time_s, 3), "frame": first.index,
                         **calibration.to_json()})  # fmt: skip
            self.pipeline = TablePipeline(
                self.reader, self.keeper, source.size, calibration=calibration,
                config=self.options.config, on_event=self.record, motion_check=_motion_check(calibration, first),
            )  # fmt: skip
            self.started = True
            if on_start is not None:
                on_start()
            latest.put(first)
            threading.Thread(target=self._read_frames, args=(source, latest, first.time_s), daemon=True).start()
            if not self._fast:
                threading.Thread(target=self._watch, args=(latest,), daemon=True).start()
            self._loop(latest)
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
            "capture": {
                k: getattr(source.stats, k) for k in ("frames_read", "corrupt_frames", "dropouts", "reconnects")
            },
            "pipeline": self.pipeline.stats.to_json() if self.pipeline else None,
        }
        if not source.is_live:
            summary["damage"] = source.damage().to_json()
        self.record({"event": "end", "time_s": round(self.latest_time_s, 3), **summary})
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

    def _loop(self, latest: LatestFrame) -> None:
        assert self.pipeline is not None
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
            self.pipeline.process(frame.image, time_s, frame.index)
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

    def _read_frames(self, source: Any, latest: LatestFrame, origin_s: float = 0.0) -> None:
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
                event = {"event": "override", "time_s": round(self.latest_time_s, 3), **details}
                try:
                    self.keeper.apply(event)
                except GameStateError as error:  # the game cannot take it: said, logged, and the game goes on
                    event = {"event": "override-refused", "time_s": event["time_s"], "reason": str(error),
                             "override": details}  # fmt: skip
                self.record(event)

    def _source_event(self, kind: str, info: dict[str, Any]) -> None:
        at = float(info["time_s"]) + self.clock_offset_s if "time_s" in info else self.latest_time_s
        if kind == "dropout":
            self._source_down = True
        elif kind == "reconnected":
            self._source_back_s, self._source_down = at, False
        self.record({"event": kind, **{k: v for k, v in info.items() if k != "time_s"}, "time_s": round(at, 3)})


def _motion_check(calibration: Any, first: Frame) -> Any:
    try:
        from vision.runtime.calibrate import CameraMotionCheck
    except ImportError:  # pragma: no cover - the module ships with the package
        return None
    return CameraMotionCheck(calibration, first.image)
