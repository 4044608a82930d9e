"""Whether reading keeps up with a live source (:class:`KeepingUp`), and the newest frame handed from the reader
thread to the game (:class:`LatestFrame`): how ``live`` paces a camera, a stream or a video played at its own pace.
"""

from __future__ import annotations

import math
import threading
from typing import Any

from vision.runtime.capture import Frame

Line = dict[str, Any]
"""An event as the game log writes it (these are the source's and reading's warnings, never the game's)."""

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

    def looking_at(self, time_s: float, dropped: int, *, source_back_s: float = -math.inf) -> list[Line]:
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
            events: list[Line] = []
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

    def check(self, now_s: float, dropped: int) -> Line | None:
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

    def _open(self, time_s: float, lag: float, dropped: int) -> Line:
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
