"""The progress bar shared by ``analyze`` and the synthetic generator (its clearing for rulings: test_analyze)."""

from __future__ import annotations

import io

from vision.runtime.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_generator_bar_shows_its_rate_and_stays_on_the_screen() -> None:
    screen = Terminal()
    bar = ProgressBar(4, screen, label="images", rate=True)
    for _ in range(4):
        bar.advance()
    last = screen.getvalue().rsplit("\r", 1)[-1]
    assert last.startswith("[##############################] 4/4 images  ") and "/s  ETA" in last
    bar.finish()  # the finished bar is kept: the terminal goes on to the next line
    assert screen.getvalue().endswith("\x1b[K\n")


def test_without_rate_the_line_is_the_analysis_bar() -> None:
    log = io.StringIO()  # not a terminal: one line per tenth
    bar = ProgressBar(10, log)
    for _ in range(10):
        bar.advance()
    bar.finish()  # nothing to end on a log
    lines = log.getvalue().splitlines()
    assert len(lines) == 10 and "/s" not in log.getvalue()
    assert lines[-1].startswith("[##############################] 10/10 frames  ETA")
