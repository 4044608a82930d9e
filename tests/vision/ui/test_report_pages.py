"""The report's page for a fixed game log, byte for byte: each ``report_pages/<case>/report.html`` was written from
the log beside it by the report before it read typed events and was split (``vision/ui/report.py`` as of d314026,
its last change before the split); only the footer's time of writing is left out of the comparison.

The cases: ``old-log``, a game as the first version of the log wrote it (``_old_log_lines`` of
tests/vision/game/test_gamelog.py); ``two-players-revert-restore``, the golden game
``tests/golden/games/two-players-settle-draw-revert-restore.json`` played and logged (a draw, an OK, a REVERT and its
restore, overrides); ``analysed-synthetic``, what ``analyze`` logged for a synthetic 3-player game (tiles with their
boxes and confidences, uncertain readings, a REVIEW; its video and snapshots left out, so the snapshots' places show).

After a change to the page that is meant, write the pages again with ``REPORT_PAGES_WRITE=1 pytest
tests/vision/ui/test_report_pages.py`` and read the diff.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from vision.ui.report import write_report

PAGES = Path(__file__).with_name("report_pages")
CASES = sorted(p.name for p in PAGES.iterdir() if p.is_dir())
INPUTS = ("game-log.jsonl", "summary.json")


def _timeless(page: str) -> str:
    return re.sub(r"report written \d{4}-\d\d-\d\d \d\d:\d\d", "report written (time)", page)


@pytest.mark.parametrize("case", CASES)
def test_the_page_is_the_same_as_before_for_the_same_log(case: str, tmp_path: Path) -> None:
    folder = tmp_path / case
    folder.mkdir()
    for name in INPUTS:
        if (PAGES / case / name).is_file():
            shutil.copy(PAGES / case / name, folder / name)
    page = _timeless(write_report(folder).read_text(encoding="utf-8"))
    expected = PAGES / case / "report.html"
    if os.environ.get("REPORT_PAGES_WRITE"):
        expected.write_text(page, encoding="utf-8")
    assert page == expected.read_text(encoding="utf-8")


def test_the_cases_are_there() -> None:
    assert set(CASES) == {"old-log", "two-players-revert-restore", "analysed-synthetic"}
    assert all((PAGES / case / "report.html").is_file() for case in CASES)
