"""Ctrl-C and SIGTERM as a request to stop, so a game log gets its ``end`` event and is closed cleanly.

Python turns Ctrl-C into ``KeyboardInterrupt`` wherever the program happens to be (half-way through writing an
event, or through ruling a move) and ignores nothing on SIGTERM: the process just dies and the log has no end.
While a :class:`StopSignals` is active, the first of either signal only records why the program must stop and
calls ``on_stop``; the loop that reads frames checks it between frames and ends the game in order. A second
signal while stopping raises ``KeyboardInterrupt`` as usual, so a program stuck in a slow call can still be ended.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

SIGNAL_REASONS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
"""The ``reason`` an end event gives for each signal."""
EXIT_STATUS = {"Ctrl-C": 128 + signal.SIGINT, "SIGTERM": 128 + signal.SIGTERM}
"""What a shell expects from a program ended by the signal (130, 143)."""


class StopSignals:
    """``with StopSignals(on_stop) as signals:`` SIGINT and SIGTERM set ``signals.reason`` and call ``on_stop(reason)``.

    Handlers can only be set from the main thread; elsewhere (a test driving a command from a thread) this does
    nothing and the signals keep their usual effect. The previous handlers come back on exit.
    """

    def __init__(self, on_stop: Callable[[str], None] | None = None) -> None:
        self.on_stop = on_stop
        self.reason: str | None = None
        """Why the program was asked to stop (``"Ctrl-C"``, ``"SIGTERM"``); None until then."""
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for number in SIGNAL_REASONS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _handle(self, number: int, frame: FrameType | None) -> None:
        if self.reason is not None:
            raise KeyboardInterrupt  # asked twice: stop now, whatever is going on
        self.reason = SIGNAL_REASONS.get(signal.Signals(number), f"signal {number}")
        if self.on_stop is not None:
            self.on_stop(self.reason)
