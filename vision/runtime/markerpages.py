"""The printable marker pages: the four ArUco markers that :mod:`vision.runtime.calibrate` finds, on A4 or Letter
paper at ``DPI``, with a scale bar to check the printer did not resize them (``markers`` on the command line).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2

from vision.runtime.calibrate import CORNER_NAMES, DEFAULT_MARKER_MM, MARKER_DICTIONARY

DPI = 300
PAGES_MM = {"A4": (210.0, 297.0), "Letter": (215.9, 279.4)}


def _mm(value: float) -> int:
    return round(value * DPI / 25.4)


def markers_pages(marker_mm: float = DEFAULT_MARKER_MM, page: str = "A4") -> list[Any]:
    """The printable pages (Pillow images at ``DPI``): all four markers on one page when they fit, else one each."""
    from PIL import Image, ImageDraw, ImageFont

    if page not in PAGES_MM:
        raise ValueError(f"unknown page size {page!r} (one of {', '.join(PAGES_MM)})")
    page_w, page_h = PAGES_MM[page]
    margin, label_mm, header_mm, footer_mm = 12.0, 10.0, 22.0, 24.0
    if not 10 <= marker_mm <= page_w - 2 * margin:
        raise ValueError(f"markers must be 10 to {page_w - 2 * margin:g} mm wide on {page} paper, got {marker_mm:g}")
    free_h = page_h - 2 * margin - header_mm - footer_mm
    per_page = 4 if 2 * marker_mm + 3 * margin <= page_w and 2 * (marker_mm + label_mm) + margin <= free_h else 1
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    side = _mm(marker_mm)
    font, small = ImageFont.load_default(size=_mm(4.5)), ImageFont.load_default(size=_mm(3.2))
    pages = []
    for first in range(0, 4, per_page):
        sheet = Image.new("L", (_mm(page_w), _mm(page_h)), 255)
        draw = ImageDraw.Draw(sheet)
        draw.text((_mm(margin), _mm(margin)), f"Rummikub referee: table markers, {marker_mm:g} mm", font=font, fill=0)
        draw.text(
            (_mm(margin), _mm(margin + 8)),
            "Place at the four corners of the play area; ids face the referee",
            font=small,
            fill=0,
        )
        cells = [(col, row) for row in range(2) for col in range(2)] if per_page == 4 else [(0, 0)]
        columns = 2 if per_page == 4 else 1
        cell_w = (page_w - 2 * margin) / columns
        for marker_id, (col, row) in zip(range(first, first + per_page), cells, strict=True):
            left = margin + col * cell_w + (cell_w - marker_mm) / 2
            top = margin + header_mm + row * (marker_mm + label_mm + margin)
            image = cv2.aruco.generateImageMarker(dictionary, marker_id, side, borderBits=1)
            sheet.paste(Image.fromarray(image), (_mm(left), _mm(top)))
            label = f"{marker_id} {CORNER_NAMES[marker_id]}"
            draw.text((_mm(left), _mm(top + marker_mm + 2)), label, font=font, fill=0)
        # A scale bar to check the printer did not resize the page.
        bar_mm = 100.0 if page_w - 2 * margin >= 100 else 50.0
        y = page_h - margin - footer_mm + 8
        draw.rectangle((_mm(margin), _mm(y), _mm(margin + bar_mm), _mm(y + 2)), fill=0)
        for tick in range(0, int(bar_mm) + 1, 10):
            draw.line((_mm(margin + tick), _mm(y - 2), _mm(margin + tick), _mm(y + 2)), fill=0, width=3)
        draw.text(
            (_mm(margin), _mm(y + 4)),
            f"This bar is {bar_mm:g} mm and each marker {marker_mm:g} mm: print at 100 % (no fit to page)",
            font=small,
            fill=0,
        )
        pages.append(sheet)
    return pages


def markers_pdf(out: str | Path, *, marker_mm: float = DEFAULT_MARKER_MM, page: str = "A4") -> int:
    """Write the printable markers to a PDF at ``DPI`` (a marker prints ``marker_mm`` wide); the page count."""
    pages = [sheet.convert("1", dither=0) for sheet in markers_pages(marker_mm, page)]  # lossless in the PDF
    try:
        pages[0].save(Path(out), "PDF", resolution=float(DPI), save_all=True, append_images=pages[1:])
    except OSError as error:
        raise OSError(f"{out}: cannot write the PDF ({error.strerror or error})") from None
    return len(pages)
