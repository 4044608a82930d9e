"""One game driven from frames to its log: :class:`GameSession`, which ``analyze`` and ``live`` configure.

The two drivers differ only in where their frames come from and who listens: ``analyze`` hands the session a recorded
video's frames as fast as they can be read (sparser while the table is still), ``live`` the newest frame of a camera
each time reading is free, paced by the camera's clock. The seam is :meth:`GameSession.play`'s ``frames``: any
iterable of :class:`vision.runtime.capture.Frame` (an image, its time in seconds, its index in the source), so a
faster frame source plugs in without touching the game.

The session owns the game (:class:`vision.game.moves.GameKeeper`), its log and the pipeline. Every event, the game's
(typed, :mod:`referee.events`) and the pipeline's and the source's warnings alike, goes through
:meth:`GameSession.record`: written to the game log first (the one place where events are dictionaries, the
log's lines), then handed to each listener as that line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from referee.events import Event as GameEvent
from vision.game.gamelog import GameLog
from vision.game.moves import GameKeeper
from vision.game.pipeline import PipelineConfig, TablePipeline
from vision.runtime.capture import Frame
from vision.runtime.reader import Reader

if TYPE_CHECKING:
    from vision.runtime.calibrate import Calibration

Line = dict[str, Any]
"""An event as the game log writes it."""
Listener = Callable[[Line], None]
StopCheck = Callable[[], str | None]
"""Asked before each frame: why the game must stop now (``"Ctrl-C"``), or None to go on."""


class GameSession:
    """A game, its log and the pipeline between frames and the game; :meth:`record` is the only way to the log."""

    def __init__(
        self,
        reader: Reader,
        log: GameLog,
        keeper: GameKeeper,
        *,
        config: PipelineConfig | None = None,
        decorate: Callable[[Line], None] | None = None,
    ) -> None:
        self.reader = reader
        self.log = log
        self.keeper = keeper
        self.config = config or PipelineConfig()
        self.decorate = decorate
        """Called on each line before it is logged (``analyze`` adds the frame's snapshot to it)."""
        self.listeners: list[Listener] = []
        self.pipeline: TablePipeline | None = None
        self.current: Frame | None = None
        """The frame the pipeline is looking at (or looked at last)."""
        self.watched_s: float | None = None
        """The time of the last frame the pipeline has finished with."""
        self._record_lock = threading.RLock()
        """Events may come from several threads (a live source's reader and watch threads): one at a time."""

    def subscribe(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def record(self, event: GameEvent | Line) -> None:
        """Log an event (a typed game event is written as its JSON line), then tell every listener."""
        line = event if isinstance(event, dict) else event.to_json()
        with self._record_lock:
            if self.decorate is not None:
                self.decorate(line)
            self.log.append(line)
            for listener in list(self.listeners):
                listener(line)

    def begin(
        self, first: Frame, calibration: Calibration, frame_size: tuple[int, int], *, time_s: float, frame: int
    ) -> TablePipeline:
        """The camera's play area logged (``time_s``, ``frame``: where the game starts) and the pipeline made; a
        camera knocked during the game is noticed against ``first`` (the play area follows it)."""
        from vision.runtime.calibrate import CameraMotionCheck

        self.record({"event": "calibration", "time_s": round(time_s, 3), "frame": frame, **calibration.to_json()})
        self.pipeline = TablePipeline(
            self.reader, self.keeper, frame_size, calibration=calibration, config=self.config, on_event=self.record,
            motion_check=CameraMotionCheck(calibration, first.image),
        )  # fmt: skip
        return self.pipeline

    def play(self, frames: Iterable[Frame], stop: StopCheck | None = None) -> str | None:
        """Every frame through the pipeline, until the frames run out (None) or ``stop`` gives a reason (returned).

        Ctrl-C (``KeyboardInterrupt``: a second one, when the first was not heard in time) ends it the same way,
        with ``stop``'s reason or ``"Ctrl-C"``.
        """
        pipeline = self.pipeline
        assert pipeline is not None, "begin() first"
        try:
            for frame in frames:
                if stop is not None and (reason := stop()) is not None:
                    return reason
                self.current = frame
                pipeline.process(frame.image, frame.time_s, frame.index)
                self.watched_s = frame.time_s
        except KeyboardInterrupt:
            return (stop() if stop is not None else None) or "Ctrl-C"
        finally:
            pipeline.finish()  # a draw held in case the move went on (PipelineConfig.pause_hold_s) is ruled now
        return None

    def end(self, time_s: float, summary: Mapping[str, Any]) -> None:
        """The ``end`` event: the driver's summary, with why the game ended (``reason``)."""
        self.record({"event": "end", "time_s": round(time_s, 3), **summary})
