"""A progress bar on standard error, for the runtime (``analyze``) and the synthetic generator alike: it lives
here, in neither, so the runtime never imports the generator for it (the layering contract, tests/test_layering.py).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

REDRAW_S = 0.1
"""A bar on a terminal is drawn again at most this often (a line cleared for a ruling is drawn at the next step)."""


class ProgressBar:
    """How much of the work is done (frames of a video read, images drawn), on one line of standard error: redrawn
    in place on a terminal (and cleared for a line printed in between, see :meth:`clear`), a line every 10 %
    elsewhere. ``rate``: the items per second too."""

    def __init__(self, total: int, stream: TextIO | None = None, *, label: str = "frames", rate: bool = False) -> None:
        self.total, self.label, self.show_rate = max(total, 1), label, rate
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()
        self.done = 0
        self.last_decile = -1
        self.drawn = False
        self.drawn_at = 0.0

    def advance(self, n: int = 1) -> None:
        self.done = min(self.total, self.done + n)
        elapsed = time.perf_counter() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        filled = 30 * self.done // self.total
        speed = f"  {rate:.2f}/s" if self.show_rate else ""
        line = f"[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} {self.label}{speed}  ETA {eta:4.0f} s"
        decile = 10 * self.done // self.total
        if self.tty:
            now = time.perf_counter()
            if self.drawn and now - self.drawn_at < REDRAW_S and self.done < self.total:
                return
            self.drawn_at = now
            self.stream.write("\r" + line + "\x1b[K")
            self.drawn = True
        elif decile != self.last_decile:
            self.stream.write(line + "\n")
        else:
            return
        self.last_decile = decile
        self.stream.flush()

    def clear(self) -> None:
        """Rub the bar out so a line printed now starts at the left edge (the next step draws it again)."""
        if self.tty and self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False

    def close(self) -> None:
        self.clear()

    def finish(self) -> None:
        """End with the bar left on the screen (a terminal goes on to the next line)."""
        if self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False
