"""A game watched live: a camera (or a stream, or a video played at its own pace) through the pipeline.

One thread reads frames as fast as the source gives them and keeps only the newest; the main loop processes
the newest frame each time it is free, so a slow reading skips frames instead of falling behind. Every event
goes to the game log before anything else sees it. The clock key (:meth:`LiveSession.press_clock`, from a
window's space bar, the terminal's Enter key or the station's button) and the referee's overrides are queued
and handled by the main loop between frames, so the game state has one writer.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vision.analyze import GameOptions
from vision.capture import CaptureError, Frame, open_source
from vision.gamelog import GameLog
from vision.moves import GameKeeper
from vision.pipeline import Event, TablePipeline

Listener = Callable[[Event], None]


@dataclass(frozen=True, kw_only=True)
class LiveOptions(GameOptions):
    source: str
    realtime: bool = True
    """A video file is played at its own frame rate, like a camera (``False``: as fast as it can be read)."""


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
        """More keyword arguments for :func:`vision.capture.open_source` (tests pass a fake opener, sleep, clock)."""
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

    # -- called from other threads ----------------------------------------------------------------
    def press_clock(self) -> None:
        self.commands.put(("clock", {}))

    def override(self, **details: Any) -> None:
        self.commands.put(("override", details))

    def stop(self) -> None:
        self._stop.set()

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    # -- the loop ---------------------------------------------------------------------------------
    def record(self, event: Event) -> None:
        self.log.append(event)
        for listener in list(self.listeners):
            listener(event)

    def run(self) -> dict[str, Any]:
        from vision.analyze import calibrate_for

        source = open_source(self.options.source, on_event=self._source_event, **self.capture_options)
        latest = LatestFrame()
        reader_thread = threading.Thread(target=self._read_frames, args=(source, latest), daemon=True)
        self._fast = not source.is_live and not self.options.realtime
        try:
            first = source.read()
            if first is None:
                raise CaptureError(f"{source.name}: no frame could be read")
            calibration = calibrate_for(first.image, self.options.calibration)
            self.record({"event": "calibration", "time_s": 0.0, "frame": first.index, **calibration.to_json()})
            self.pipeline = TablePipeline(
                self.reader, self.keeper, source.size, calibration=calibration,
                config=self.options.config, on_event=self.record, motion_check=_motion_check(calibration, first),
            )  # fmt: skip
            latest.put(first)
            reader_thread.start()
            self._loop(latest)
        finally:
            self._stop.set()
            source.close()
        if latest.error is not None and not isinstance(latest.error, CaptureError):
            raise latest.error
        summary = {
            "moves": self.keeper.moves,
            "frames_dropped": latest.dropped,
            "behind_s_max": round(self.behind_s_max, 3),
            "lag_s_max": round(max(self.lag_s), 3) if self.lag_s else None,
            "lag_s_median": round(float(np.median(self.lag_s)), 3) if self.lag_s else None,
            "capture": {
                k: getattr(source.stats, k) for k in ("frames_read", "corrupt_frames", "dropouts", "reconnects")
            },
            "pipeline": self.pipeline.stats.to_json() if self.pipeline else None,
        }
        self.record({"event": "end", "time_s": round(self.latest_time_s, 3), **summary})
        if isinstance(latest.error, CaptureError):
            raise latest.error
        return summary

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
            self.latest_image, self.latest_time_s = frame.image, frame.time_s
            self.pipeline.process(frame.image, frame.time_s, frame.index)
            done = time.monotonic()
            self.lag_s.append(done - arrived)
            if not self._fast:
                time.sleep(max(0.0, interval - (done - arrived)))  # the sampling rate is enough; leave the cores

    def _read_frames(self, source: Any, latest: LatestFrame) -> None:
        """Reader thread: every frame of the source, newest kept; a video file is paced at its frame rate.

        A video file read as fast as possible (``realtime=False``) is sampled at the pipeline's rate instead, and
        no sampled frame is dropped: reading faster than the pipeline would otherwise skip the whole game.
        """
        started = self.playback_started = time.monotonic()
        step = max(1, round(source.fps / self.options.config.sample_hz)) if self._fast else 1
        try:
            while not self._stop.is_set():
                if step > 1:
                    source.skip(step - 1)
                frame = source.read()
                if frame is None:
                    break
                if self.options.realtime and not source.is_live:
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
                self.keeper.apply(event)
                self.record(event)

    def _source_event(self, kind: str, info: dict[str, Any]) -> None:
        self.record({"event": kind, **{k: v for k, v in info.items() if k != "time_s"},
                     "time_s": round(float(info.get("time_s", self.latest_time_s)), 3)})  # fmt: skip


def _motion_check(calibration: Any, first: Frame) -> Any:
    try:
        from vision.calibrate import CameraMotionCheck
    except ImportError:  # pragma: no cover - the module ships with the package
        return None
    return CameraMotionCheck(calibration, first.image)
