"""The printable marker pages: detectable markers at their printed size, on as many pages as they need."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.runtime.calibrate import find_markers
from vision.runtime.markerpages import DPI, markers_pages, markers_pdf


def test_markers_pdf_prints_detectable_markers_at_their_size(tmp_path: Path) -> None:
    out = tmp_path / "markers.pdf"
    assert markers_pdf(out, marker_mm=60) == 1
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and b"/MediaBox [ 0 0 595.2 841.92 ]" in data  # A4 in points
    (page,) = markers_pages(60)
    found = find_markers(cv2.resize(np.asarray(page), None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA))
    assert set(found) == {0, 1, 2, 3}
    widths = [2 * np.linalg.norm(corners[1] - corners[0]) for corners in found.values()]
    assert widths == pytest.approx([60 * DPI / 25.4] * 4, abs=3)  # 60 mm at 300 dpi


def test_big_markers_take_a_page_each_and_too_big_ones_are_refused(tmp_path: Path) -> None:
    assert len(markers_pages(100)) == 4
    with pytest.raises(ValueError, match="10 to 186 mm"):
        markers_pages(250)
