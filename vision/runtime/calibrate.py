"""The table plane: a homography from image pixels to millimetres on the play area, and a check that it holds.

Ways to calibrate, best first:

- ``markers``: four ArUco markers (``DICT_4X4_50``, ids 0 1 2 3 at the top-left, top-right, bottom-right and
  bottom-left corners of the play area, as seen from the referee's side); the play area is spanned by their
  inner corners, and its size in mm is measured from the printed markers' size
  (:func:`vision.runtime.markerpages.markers_pdf` prints them).
- ``auto``: the play area on a table filmed without markers (:func:`find_play_area`): the table top (the largest
  convex quadrilateral region that contrasts with its surroundings, or the whole frame when no table edge is in
  view) less what lies at its edges: racks, the face-down pool, cups, score sheets, resting arms.
- ``corners``: four corners given by hand (clicked in the station, or on the command line).
- ``frame``: the whole frame minus a margin, for a camera that sees nothing but the play area.

:class:`CameraMotionCheck` compares frames with the calibration's reference in well under 5 ms a frame, so the
live loop notices a bumped camera (a shift) without mistaking a lighting change for one.

Size: 839 lines: the checks of corners and sizes, the markers (found and measured), the automatic search
(``find_table``, ``find_surface``, ``find_play_area``, about 250 lines), the :class:`Calibration` value (about 190
lines) and :class:`CameraMotionCheck`. The printed marker pages are :mod:`vision.runtime.markerpages`. The next split is
the automatic search into a module of its own (to do).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

MARKER_DICTIONARY = cv2.aruco.DICT_4X4_50
CORNER_NAMES = ("top-left", "top-right", "bottom-right", "bottom-left")
"""Marker id ``i`` marks corner ``CORNER_NAMES[i]`` of the play area."""
DEFAULT_SIZE_MM = (1000.0, 700.0)
MAX_SIZE_MM = 10_000.0
MAX_PIXEL = 1_000_000.0
"""Corners are image pixels: none is a million pixels away (and float32 overflows far beyond)."""
"""No play area is 10 m a side; a bigger size in a file is a typo (or an attack) that overflows the homography."""
DEFAULT_MARKER_MM = 60.0
MIN_TABLE_SHARE = 0.25
"""``auto`` accepts a table covering at least this share of the frame."""
SIGNATURE_WIDTH = 320


class CalibrationError(ValueError):
    """Calibration impossible (markers missing, no table found) or a malformed calibration; one line."""


class Method(StrEnum):
    MARKERS = "markers"
    CORNERS = "corners"
    AUTO = "auto"
    FRAME = "frame"


# -- geometry ----------------------------------------------------------------------------------------------


def _apply(matrix: np.ndarray, points: Any) -> np.ndarray:
    pts = np.asarray(points, np.float64)
    if pts.shape[-1:] != (2,):
        raise ValueError(f"points must be [x, y] pairs, got an array of shape {pts.shape}")
    flat = pts.reshape(-1, 2) @ matrix[:, :2].T + matrix[:, 2]
    return (flat[:, :2] / flat[:, 2:3]).reshape(pts.shape)


def _check_corners(corners: Any) -> np.ndarray:
    try:
        quad = np.asarray(corners, np.float64)
    except (TypeError, ValueError):
        raise CalibrationError("corners must be 4 [x, y] pairs of numbers") from None
    if quad.shape != (4, 2) or not np.isfinite(quad).all():
        raise CalibrationError(f"corners must be 4 [x, y] pairs of numbers, got shape {quad.shape}")
    if np.abs(quad).max() > MAX_PIXEL:
        raise CalibrationError(f"corners must lie within {MAX_PIXEL:g} pixels of the image, got {quad.tolist()}")
    edges = np.roll(quad, -1, axis=0) - quad
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    # Image y points down, so top-left -> top-right -> bottom-right turns clockwise: every cross product > 0.
    if not (turns > 0).all():
        raise CalibrationError(
            "corners must be a convex quadrilateral in the order top-left, top-right, bottom-right, bottom-left"
            f" (clockwise in the image); got {np.round(quad, 1).tolist()}"
        )
    if cv2.contourArea(quad.astype(np.float32)) < 100:
        raise CalibrationError(f"the corners enclose almost nothing: {np.round(quad, 1).tolist()}")
    return quad


def _check_size(size_mm: Any) -> tuple[float, float]:
    try:
        width, height = (float(v) for v in size_mm)
    except (TypeError, ValueError):
        raise CalibrationError(f"size_mm must be (width, height) in mm, got {size_mm!r}") from None
    if not (0 < width <= MAX_SIZE_MM and 0 < height <= MAX_SIZE_MM):  # nan and inf fail too
        raise CalibrationError(f"size_mm must be two positive numbers up to {MAX_SIZE_MM:g} mm, got {size_mm!r}")
    return width, height


def _check_image_size(image_size: Any) -> tuple[int, int]:
    """A saved frame size: two whole positive numbers of pixels."""
    try:
        width, height = (v if isinstance(v, int) and not isinstance(v, bool) else None for v in image_size)
    except (TypeError, ValueError):
        width = height = None
    if width is None or height is None or width < 1 or height < 1:
        raise CalibrationError(f"image_size must be [width, height] in whole pixels, got {image_size!r}")
    return width, height


def _oriented_default_size(quad: np.ndarray) -> tuple[float, float]:
    """The default play area, its long side along the quad's longer image direction."""
    across = np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])
    down = np.linalg.norm(quad[3] - quad[0]) + np.linalg.norm(quad[2] - quad[1])
    long, short = max(DEFAULT_SIZE_MM), min(DEFAULT_SIZE_MM)
    return (long, short) if across >= down else (short, long)


def _clockwise_from_top_left(points: np.ndarray) -> np.ndarray:
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    ordered = points[np.argsort(angles)]  # increasing angle is clockwise on screen (y down)
    return np.roll(ordered, -int(np.argmin(ordered.sum(axis=1))), axis=0)


def signature(image: np.ndarray) -> np.ndarray:
    """A frame's small grayscale likeness (``SIGNATURE_WIDTH`` wide) for the motion check."""
    height, width = image.shape[:2]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    size = (SIGNATURE_WIDTH, max(8, round(height * SIGNATURE_WIDTH / width)))
    return cv2.resize(gray, size, interpolation=cv2.INTER_AREA)


# -- markers -----------------------------------------------------------------------------------------------


@cache
def _marker_detector(refinement: int) -> cv2.aruco.ArucoDetector:
    parameters = cv2.aruco.DetectorParameters()
    parameters.cornerRefinementMethod = refinement
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY), parameters)


def _refined(gray: np.ndarray, marker_id: int, corners: np.ndarray) -> np.ndarray:
    """The marker's corners refined on a crop around it with AprilTag's edge fit: about three times more
    precise than sub-pixel corner search on small markers, and too slow to run on the whole frame."""
    span = float(np.ptp(corners, axis=0).max())
    x0, y0 = np.maximum(0, np.floor(corners.min(axis=0) - span / 2)).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0) + span / 2).astype(int)
    found, ids, _ = _marker_detector(cv2.aruco.CORNER_REFINE_APRILTAG).detectMarkers(gray[y0:y1, x0:x1])
    for candidate, candidate_id in zip(found, [] if ids is None else ids.ravel(), strict=True):
        refined = candidate.reshape(4, 2).astype(np.float64) + np.array([x0, y0])
        if candidate_id == marker_id and np.abs(refined - corners).max() < max(2.0, span / 10):
            return refined
    return corners


def find_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """ArUco markers in a BGR or grayscale image: id -> its 4 corners (4x2, the marker's own clockwise order).

    A duplicated id keeps its largest copy (the nearer one, or the real one over a small look-alike).
    """
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    corners, ids, _ = _marker_detector(cv2.aruco.CORNER_REFINE_SUBPIX).detectMarkers(gray)
    found: dict[int, np.ndarray] = {}
    for marker_id, quad in zip([] if ids is None else ids.ravel(), corners, strict=True):
        points = quad.reshape(4, 2).astype(np.float64)
        key = int(marker_id)
        if key not in found or cv2.contourArea(points.astype(np.float32)) > cv2.contourArea(
            found[key].astype(np.float32)
        ):
            found[key] = points
    return {key: _refined(gray, key, points) for key, points in found.items()}


def _size_from_markers(quad: np.ndarray, markers: list[np.ndarray], marker_mm: float) -> tuple[float, float]:
    """The play area's size from how big the square markers look in its own (unit-square) coordinates.

    With ``u`` the unit-square frame and ``W, H`` the unknown size, a marker side ``d`` in ``u`` is
    ``(W dx, H dy)`` in mm: sides have length ``marker_mm`` and meet at right angles, which is linear in W², H².
    """
    to_unit = cv2.getPerspectiveTransform(
        quad.astype(np.float32), np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    )
    rows, values = [], []
    for marker in markers:
        unit = _apply(to_unit, marker)
        sides = np.roll(unit, -1, axis=0) - unit
        for k in range(4):
            rows.append(sides[k] ** 2)
            values.append(marker_mm**2)
            rows.append(sides[k] * sides[(k + 1) % 4])
            values.append(0.0)
    squares, *_ = np.linalg.lstsq(np.array(rows), np.array(values), rcond=None)
    if not (squares > 0).all():
        raise CalibrationError("cannot measure the play area from the markers; give its size in mm")
    return float(np.sqrt(squares[0])), float(np.sqrt(squares[1]))


# -- automatic table detection -----------------------------------------------------------------------------


def _quad_of(contour: np.ndarray) -> np.ndarray | None:
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for share in (0.01, 0.02, 0.03, 0.05, 0.08):
        approx = cv2.approxPolyDP(hull, share * perimeter, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
        if len(approx) < 4:
            return None
    return None


def _straightest(points: np.ndarray, tolerance: float = 1.5, tries: int = 64) -> np.ndarray:
    """The points on the line through most of them (an edge's straight run, without an arm's stub or a nick)."""
    rng = np.random.default_rng(0)
    pairs = rng.integers(0, len(points), (tries, 2))
    best = points
    for i, j in pairs:
        direction = points[j] - points[i]
        norm = float(np.hypot(*direction))
        if norm < 10 * tolerance:
            continue
        across = np.abs((points - points[i]) @ np.array([-direction[1], direction[0]]) / norm)
        inliers = points[across < tolerance]
        if len(inliers) > len(best) or best is points:
            best = inliers
    return best if len(best) >= 5 else points


def _refine_sides(quad: np.ndarray, contour: np.ndarray) -> np.ndarray:
    """Corners as intersections of lines fitted to each side's contour points (sub-pixel, robust to nicks)."""
    points = contour.reshape(-1, 2).astype(np.float64)
    lines = []
    for a, b in zip(quad, np.roll(quad, -1, axis=0), strict=True):
        length = np.linalg.norm(b - a)
        direction = (b - a) / length
        along = (points - a) @ direction
        across = np.abs((points - a) @ np.array([-direction[1], direction[0]]))
        near = points[(along > 0.1 * length) & (along < 0.9 * length) & (across < max(3.0, 0.1 * length))]
        if len(near) < 5:
            return quad
        near = _straightest(near)
        vx, vy, x0, y0 = cv2.fitLine(near.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append(np.cross([x0, y0, 1.0], [x0 + vx, y0 + vy, 1.0]))
    corners = []
    for k in range(4):
        x, y, w = np.cross(lines[k - 1], lines[k])
        if abs(w) < 1e-9:
            return quad
        corners.append((x / w, y / w))
    refined = np.array(corners)
    return refined if np.abs(refined - quad).max() < 0.1 * np.ptp(quad, axis=0).max() else quad


def find_table(image: np.ndarray) -> np.ndarray | None:
    """The table top's 4 corners (TL TR BR BL in the image), or ``None``: the largest convex quadrilateral
    region at least ``MIN_TABLE_SHARE`` of the frame whose brightness or colour contrasts with what surrounds it.
    """
    height, width = image.shape[:2]
    scale = min(1.0, 640 / max(height, width))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
    small = cv2.GaussianBlur(small if small.ndim == 3 else cv2.cvtColor(small, cv2.COLOR_GRAY2BGR), (5, 5), 0)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    saturation = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)[:, :, 1]
    frame_area = small.shape[0] * small.shape[1]
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7))
    # An arm reaching in over the edge (or the next table's top, when alike) joins the table's region: opening
    # with a kernel wider than an arm cuts it off again (the sides' lines are fitted away from the corners).
    arm_side = max(9, round(0.08 * min(small.shape[:2])) | 1)
    arms = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (arm_side, arm_side))
    best, best_area = None, 0.0
    for channel in (lab[:, :, 0], lab[:, :, 1], lab[:, :, 2], saturation):
        _, mask = cv2.threshold(channel, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        for polarity in (mask, 255 - mask):
            # Opening drops thin bridges to the background; closing fills tiles and markers on the table.
            cleaned = cv2.morphologyEx(cv2.morphologyEx(polarity, cv2.MORPH_OPEN, kernel), cv2.MORPH_CLOSE, kernel)
            for region in (cleaned, cv2.morphologyEx(cleaned, cv2.MORPH_OPEN, arms)):
                contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
                for contour in contours:
                    area = cv2.contourArea(contour)
                    if area < MIN_TABLE_SHARE * frame_area:
                        continue
                    quad = _quad_of(contour)
                    if quad is None:
                        continue
                    quad_area = cv2.contourArea(quad.astype(np.float32))
                    hull_area = cv2.contourArea(cv2.convexHull(contour))
                    # The background's outline is the frame itself; a ragged region is not a table top, nor is
                    # one that four corners outline badly (a table with an arm or the next table joined to it).
                    if quad_area > 0.97 * frame_area or area < 0.9 * quad_area or quad_area < 0.85 * hull_area:
                        continue
                    if quad_area > best_area:
                        best, best_area = _refine_sides(quad, contour), quad_area
    return None if best is None else _clockwise_from_top_left(best / scale)


def find_surface(image: np.ndarray) -> np.ndarray | None:
    """The surface the middle of the frame shows (the table top, or the tablecloth on it): its 4 corners (TL TR BR
    BL), or ``None``. Grown from the middle by colour, so the next table, the floor or a cloth's surround that
    contrasts less with the table than they do with each other does not join it; arms reaching over its edge are
    cut off by an opening as wide as an arm. Tiles, glare and objects on it leave holes, which are filled."""
    height, width = image.shape[:2]
    scale = min(1.0, 480 / max(height, width))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
    small = small if small.ndim == 3 else cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    rows, cols = lab.shape[:2]
    middle = lab[rows // 4 : rows * 3 // 4, cols // 4 : cols * 3 // 4].reshape(-1, 3)
    # The table's colour, not that of the tiles or a glare on it (both lighter): the darker part of the middle.
    middle = middle[middle[:, 0] <= np.percentile(middle[:, 0], 60)]
    seed = np.median(middle, axis=0)
    distance = np.abs(lab - seed) * np.array([0.5, 1.0, 1.0], np.float32)  # lightness halved: shading, glare
    distance = distance.max(axis=2)
    typical = float(np.percentile(np.abs(middle - seed).max(axis=1) if len(middle) else [0.0], 75))
    mask = (distance < min(28.0, max(10.0, 3.0 * typical))).astype(np.uint8)
    arm_side = max(9, round(0.08 * min(rows, cols)) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (arm_side, arm_side)))
    count, labels = cv2.connectedComponents(mask)
    centre = labels[rows * 3 // 8 : rows * 5 // 8, cols * 3 // 8 : cols * 5 // 8]
    votes = np.bincount(centre.ravel(), minlength=count)
    votes[0] = 0
    if count < 2 or votes.max() == 0:
        return None
    region = (labels == int(np.argmax(votes))).astype(np.uint8)
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea)
    if cv2.contourArea(contour) < MIN_TABLE_SHARE * rows * cols:
        return None
    quad = _quad_of(contour)
    if quad is None:
        return None
    quad = _refine_sides(quad, contour)  # its sides on the straight runs of the outline (not over a hand)
    quad_mask = np.zeros_like(region)
    cv2.fillConvexPoly(quad_mask, np.round(quad).astype(np.int32), 1)
    solid = np.zeros_like(region)
    cv2.drawContours(solid, [contour], -1, 1, -1)
    overlap = float((quad_mask & solid).sum())
    # Four corners outline it well: most of it inside them, and they hold little else (not the frame itself).
    if quad_mask.sum() > 0.97 * rows * cols or overlap < 0.85 * solid.sum() or overlap < 0.85 * quad_mask.sum():
        return None
    return _clockwise_from_top_left(quad / scale)


# -- the play area -----------------------------------------------------------------------------------------

TABLE_SIZE_MM = (1100.0, 800.0)
"""What ``auto`` takes a table top to measure (long side along the longer image direction): the scale of the play
area found on it, so that a tile comes out about the right size in pixels (tournament tables are 1.0-1.2 m by
0.7-0.9 m). A frame with no table edge in it is taken to span this much."""
PLAY_CELL_MM = 4.0
"""The play-area search's grid: one cell of the rectified table top."""
EDGE_BAND_MM = 50.0
"""What comes within this of the table's edge is the players' (a rack, the face-down pool, a cup, a score sheet,
an arm resting on the edge): all of it is kept out of the play area, however far in it reaches."""
BORDER_MM = 20.0
"""The table's edge itself (and an outline found a few pixels off) is never play area."""
CLEARANCE_MM = 4.0
"""Room kept between the play area and what lies at the edge. Little: sets are laid up to the racks, and a tile
standing in a rack has its centre well inside the rack's outline, which is found with the tiles' tops and shadows."""
OFF_CENTRE_WEIGHT = 1.0
"""How much a rectangle off the table's middle loses against a centred one (:func:`_largest_free_rectangle`)."""
MIN_PLAY_SHARE = 0.2
"""A play area under this share of the table top is not believed (the picture was read wrong)."""


@dataclass(frozen=True, slots=True, eq=False)
class PlayAreaSearch:
    """How :func:`find_play_area` chose: the table top, what was kept out at its edges, and the play area."""

    table_px: np.ndarray
    """The table top's corners (TL TR BR BL); the whole frame when no table edge was seen."""
    table_found: bool
    table_mm: tuple[float, float]
    to_grid: np.ndarray
    """Image pixels -> cells of the table-top grid (``PLAY_CELL_MM`` each, origin at the table's top-left)."""
    clutter: np.ndarray
    """The grid: True where something at the table's edge lies."""
    rectangle: tuple[int, int, int, int]
    """The play area in grid cells (x0, y0, x1, y1; ends exclusive)."""
    corners_px: np.ndarray
    size_mm: tuple[float, float]


def _largest_free_rectangle(free: np.ndarray, off_centre: float = 0.0) -> tuple[int, int, int, int] | None:
    """The largest axis-aligned rectangle of True cells (x0, y0, x1, y1; ends exclusive): for each row, the
    largest rectangle under the skyline of free cells above it (a stack of rising heights).

    ``off_centre`` weighs against rectangles away from the middle: the score is the area times ``1 - off_centre
    * d``, ``d`` the rectangle's centre's distance from the grid's (as shares of its width and height, summed).
    Of two about as large, the centred one is the play area (a cup in a corner cuts one side or the other)."""
    rows, cols = free.shape
    heights = np.zeros(cols, np.int64)
    best, best_score = None, 0.0
    for y in range(rows):
        heights = np.where(free[y], heights + 1, 0)
        bars = [*heights.tolist(), 0]  # the zero at the end flushes the stack
        stack: list[int] = []
        for x, height in enumerate(bars):
            while stack and bars[stack[-1]] >= height:
                top = bars[stack.pop()]
                left = stack[-1] + 1 if stack else 0
                area = top * (x - left)
                if area > best_score:
                    off = abs((left + x) / 2 - cols / 2) / cols + abs((2 * y - top + 2) / 2 - rows / 2) / rows
                    score = area * (1 - off_centre * off)
                    if score > best_score:
                        best_score, best = score, (left, y - top + 1, x, y + 1)
            stack.append(x)
    return best


def _edge_clutter(top: np.ndarray, band: int) -> np.ndarray:
    """What stands out of the table top (its rectified picture) and comes within ``band`` cells of its edge:
    racks, the pool, cups, score sheets, sleeves. All of such a thing counts, however far in it reaches.

    Standing out is a colour far from the table's own around it (a median over a quarter of the table top, so
    lighting gradients, vignetting and soft glare stay table), relative to how much the table's colour varies.
    """
    rows, cols = top.shape[:2]
    lab = cv2.cvtColor(top, cv2.COLOR_BGR2LAB)
    window = min(255, max(3, (min(rows, cols) // 4) | 1))
    background = np.dstack([cv2.medianBlur(np.ascontiguousarray(lab[:, :, k]), window) for k in range(3)])
    difference = np.abs(lab.astype(np.float32) - background.astype(np.float32)) * np.array([0.5, 1.0, 1.0], np.float32)
    distance = difference.max(axis=2)  # lightness halved: shading and glare move it most
    spread = 1.4826 * float(np.median(np.abs(distance - np.median(distance))))
    # A table's own colour varies a little (grain, weave, noise); nothing that varies more than 30 is a table.
    mask = distance > min(30.0, max(12.0, float(np.median(distance)) + 6.0 * spread))
    # A glare is the table's own colour made lighter and greyer: not a thing (a white sheet passes for one too,
    # which costs nothing: it is no tile).
    lightness = lab[:, :, 0].astype(np.float32)
    gradient = np.hypot(cv2.Sobel(lightness, cv2.CV_32F, 1, 0), cv2.Sobel(lightness, cv2.CV_32F, 0, 1))
    sharp = cv2.dilate((gradient > 80).astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    outlined = cv2.dilate((gradient > 160).astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
    signed = lab.astype(np.float32) - background.astype(np.float32)
    chroma, chroma_bg = (np.abs(x[:, :, 1:].astype(np.float32) - 128).sum(axis=2) for x in (lab, background))
    greyer = (chroma <= chroma_bg + 2) | (np.abs(signed[:, :, 1:]).sum(axis=2) < 8)
    mask &= ~((signed[:, :, 0] > 0) & greyer & ~outlined)  # with no outline near: tile backs have theirs
    mask = mask.astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))  # grain and noise
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    count, labels = cv2.connectedComponents(mask, connectivity=8)
    edge = np.zeros((rows, cols), bool)
    edge[:band], edge[rows - band :], edge[:, :band], edge[:, cols - band :] = True, True, True, True
    touching = np.zeros(count, bool)
    touching[np.unique(labels[edge])] = True
    # A thing has an outline; a glare or a shadow's soft edge has none: a component without sharp edges is light.
    sizes = np.bincount(labels.ravel(), minlength=count)
    edges = np.bincount(labels[sharp], minlength=count)
    touching &= edges >= np.maximum(4, 0.02 * sizes)
    touching[0] = False
    return touching[labels]


def find_play_area(image: np.ndarray, table_px: Any = None) -> PlayAreaSearch | None:
    """Where sets are laid on a table filmed without markers: the table top (:func:`find_table`, or the whole frame
    when its edge is not in view) less what lies at its edges, as the largest rectangle of the table that keeps
    :data:`CLEARANCE_MM` from all of that and :data:`BORDER_MM` from the edge; ``None`` when nothing is left.

    A camera tilted towards a player sees the table top as a trapezoid: the search runs on the rectified top, so
    the play area is a rectangle on the table, whatever the view. ``table_px`` gives the table top's corners.
    """
    height, width = image.shape[:2]
    if table_px is None:
        table_px = find_surface(image)
    if table_px is None:
        table_px = find_table(image)
    found = table_px is not None
    quad = (
        np.asarray(table_px, np.float64)
        if found
        else np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64)
    )
    long, short = max(TABLE_SIZE_MM), min(TABLE_SIZE_MM)
    table_mm = (long, short) if _oriented_default_size(quad)[0] >= _oriented_default_size(quad)[1] else (short, long)
    cols, rows = (max(8, round(v / PLAY_CELL_MM)) for v in table_mm)
    to_grid = cv2.getPerspectiveTransform(
        quad.astype(np.float32), np.array([[0, 0], [cols, 0], [cols, rows], [0, rows]], np.float32)
    )
    colour = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    top = cv2.warpPerspective(colour, to_grid, (cols, rows), flags=cv2.INTER_AREA)
    top = cv2.GaussianBlur(top, (3, 3), 0)
    band, border, clearance = (max(1, round(v / PLAY_CELL_MM)) for v in (EDGE_BAND_MM, BORDER_MM, CLEARANCE_MM))
    clutter = _edge_clutter(top, band)
    blocked = cv2.dilate(
        clutter.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * clearance + 1,) * 2)
    )
    blocked[:border], blocked[rows - border :], blocked[:, :border], blocked[:, cols - border :] = 1, 1, 1, 1
    rectangle = _largest_free_rectangle(blocked == 0, off_centre=OFF_CENTRE_WEIGHT)
    if rectangle is None:
        return None
    x0, y0, x1, y1 = rectangle
    if (x1 - x0) * (y1 - y0) < MIN_PLAY_SHARE * rows * cols:
        return None
    corners = _apply(np.linalg.inv(to_grid), np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64))
    size = ((x1 - x0) * table_mm[0] / cols, (y1 - y0) * table_mm[1] / rows)
    return PlayAreaSearch(_clockwise_from_top_left(quad), found, table_mm, to_grid, clutter, rectangle, corners, size)


# -- the calibration ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class Calibration:
    """Image pixels <-> table-plane millimetres, origin at the play area's top-left corner, x to the right.

    ``corners_px`` are the play area's corners in the image (TL TR BR BL); ``reference`` is the
    :func:`signature` of the frame it was made from (for :class:`CameraMotionCheck`; not saved).
    """

    corners_px: np.ndarray
    size_mm: tuple[float, float] = DEFAULT_SIZE_MM
    method: Method | str = Method.CORNERS
    """A :class:`Method` or its name (made a Method on construction)."""
    image_size: tuple[int, int] | None = None
    reference: np.ndarray | None = field(default=None, repr=False)
    homography: np.ndarray = field(init=False, repr=False)
    inverse: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        corners = _check_corners(self.corners_px)
        width, height = _check_size(self.size_mm)
        try:
            method = Method(self.method)
        except ValueError:
            raise CalibrationError(f"unknown calibration method {self.method!r}") from None
        target = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
        homography = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
        if not np.isfinite(homography).all() or abs(np.linalg.det(homography)) < 1e-300 or homography[2, 2] == 0:
            raise CalibrationError(f"the corners {np.round(corners, 1).tolist()} give no usable mapping to the table")
        for name, value in (
            ("corners_px", corners),
            ("size_mm", (width, height)),
            ("method", method),
            ("homography", homography / homography[2, 2]),
            ("inverse", np.linalg.inv(homography / homography[2, 2])),
        ):
            object.__setattr__(self, name, value)

    # -- constructors ----------------------------------------------------------------------------------------

    @classmethod
    def from_markers(
        cls, image: np.ndarray, *, size_mm: tuple[float, float] | None = None, marker_mm: float = DEFAULT_MARKER_MM
    ) -> Calibration:
        """From the four corner markers; the size is measured from the markers' printed size unless given."""
        markers = find_markers(image)
        missing = [i for i in range(4) if i not in markers]
        if missing:
            names = ", ".join(f"{i} ({CORNER_NAMES[i]})" for i in missing)
            seen = ", ".join(str(i) for i in sorted(markers)) or "none"
            raise CalibrationError(f"marker{'s' * (len(missing) > 1)} {names} not found in the image (found: {seen})")
        corner_markers = [markers[i] for i in range(4)]
        centre = np.concatenate(corner_markers).mean(axis=0)
        quad = np.array([m[np.argmin(np.linalg.norm(m - centre, axis=1))] for m in corner_markers])
        quad = _check_corners(quad)
        size = size_mm if size_mm is not None else _size_from_markers(quad, corner_markers, marker_mm)
        return cls._made(image, quad, size, Method.MARKERS)

    @classmethod
    def from_corners(
        cls, corners_px: Any, size_mm: tuple[float, float] = DEFAULT_SIZE_MM, *, image: np.ndarray | None = None
    ) -> Calibration:
        """From the play area's four corners in the image (TL TR BR BL), optionally remembering the frame."""
        if image is None:
            return cls(corners_px, size_mm, Method.CORNERS)
        return cls._made(image, corners_px, size_mm, Method.CORNERS)

    @classmethod
    def auto(cls, image: np.ndarray, *, size_mm: tuple[float, float] | None = None) -> Calibration:
        """The play area found by :func:`find_play_area` (its size measured on a table top of
        :data:`TABLE_SIZE_MM`, unless ``size_mm`` says)."""
        return cls.auto_search(image, size_mm=size_mm)[0]

    @classmethod
    def auto_search(
        cls, image: np.ndarray, *, size_mm: tuple[float, float] | None = None
    ) -> tuple[Calibration, PlayAreaSearch]:
        """:meth:`auto` and how it chose (for :func:`preview`)."""
        search = find_play_area(image)
        if search is None:
            raise CalibrationError(
                "no play area found: the table top (or the frame) is covered edge to edge by things that are not"
                " the table (use markers or corners)"
            )
        return cls._made(image, search.corners_px, size_mm or search.size_mm, Method.AUTO), search

    @classmethod
    def whole_frame(
        cls, width: int, height: int, margin: float = 0.0, *, size_mm: tuple[float, float] | None = None
    ) -> Calibration:
        """The frame minus ``margin`` (a share of each side); by default 1000 mm across, square pixels."""
        if not 0 <= margin < 0.5:
            raise CalibrationError(f"margin must be a share of the frame in [0, 0.5), got {margin}")
        left, top, right, bottom = margin * width, margin * height, (1 - margin) * width, (1 - margin) * height
        quad = np.array([[left, top], [right, top], [right, bottom], [left, bottom]], np.float64)
        size = size_mm or (1000.0, 1000.0 * (bottom - top) / (right - left))
        return cls(quad, size, Method.FRAME, image_size=(int(width), int(height)))

    @classmethod
    def _made(cls, image: np.ndarray, corners: Any, size_mm: tuple[float, float], method: Method) -> Calibration:
        size = (int(image.shape[1]), int(image.shape[0]))
        return cls(corners, size_mm, method, image_size=size, reference=signature(image))

    # -- mapping ---------------------------------------------------------------------------------------------

    def to_table(self, points_px: Any) -> np.ndarray:
        """Image pixels ``(..., 2)`` -> table millimetres ``(..., 2)``."""
        return _apply(self.homography, points_px)

    def to_image(self, points_mm: Any) -> np.ndarray:
        """Table millimetres ``(..., 2)`` -> image pixels ``(..., 2)``."""
        return _apply(self.inverse, points_mm)

    def contains(self, points_px: Any, margin_mm: float = 0.0) -> np.ndarray:
        """Which points lie on the play area; a positive margin also accepts points that far outside it."""
        pts = np.asarray(points_px, np.float64)
        flat = pts.reshape(-1, 2)
        homogeneous = flat @ self.homography[:, :2].T + self.homography[:, 2]
        mm = homogeneous[:, :2] / homogeneous[:, 2:3]
        width, height = self.size_mm
        inside = (
            (homogeneous[:, 2] > 0)  # beyond the horizon the projection flips
            & (mm[:, 0] >= -margin_mm)
            & (mm[:, 0] <= width + margin_mm)
            & (mm[:, 1] >= -margin_mm)
            & (mm[:, 1] <= height + margin_mm)
        )
        return inside.reshape(pts.shape[:-1])

    def shifted(self, dx: float, dy: float, reference_frame: np.ndarray | None = None) -> Calibration:
        """The same calibration after the image moved by ``(dx, dy)`` pixels (a bumped camera, measured by
        :class:`CameraMotionCheck`); ``reference_frame`` is the new frame to compare later frames with."""
        reference = None if reference_frame is None else signature(reference_frame)
        return dataclasses.replace(self, corners_px=self.corners_px + np.array([dx, dy]), reference=reference)

    # -- files -----------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "method": str(self.method),
            "size_mm": list(self.size_mm),
            "corners_px": self.corners_px.tolist(),  # unrounded: loading gives back the same homography
            "image_size": None if self.image_size is None else list(self.image_size),
            "homography": self.homography.tolist(),  # for outside tools; recomputed on loading
        }

    @classmethod
    def from_json(cls, data: Any) -> Calibration:
        if not isinstance(data, dict):
            raise CalibrationError("a calibration is a JSON object with corners_px, size_mm and method")
        missing = [key for key in ("corners_px", "size_mm", "method") if key not in data]
        if missing:
            raise CalibrationError(f"calibration JSON lacks {', '.join(missing)}")
        image_size = data.get("image_size")
        if image_size is not None:
            image_size = _check_image_size(image_size)
        if not isinstance(data["method"], str):
            raise CalibrationError(f"method must be a name (markers, auto, corners or frame), not {data['method']!r}")
        return cls(data["corners_px"], data["size_mm"], data["method"], image_size=image_size)

    def save(self, path: str | Path) -> None:
        try:
            Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            raise CalibrationError(f"{path}: cannot write the calibration ({error.strerror or error})") from None

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CalibrationError(f"{path}: no such calibration file") from None
        except UnicodeDecodeError as error:
            raise CalibrationError(f"{path}: not a JSON text file (not UTF-8 at byte {error.start})") from None
        except OSError as error:
            raise CalibrationError(f"{path}: cannot read ({error.strerror or error})") from None
        try:
            return cls.from_json(json.loads(text))
        except json.JSONDecodeError as error:
            raise CalibrationError(f"{path}: malformed JSON ({error.msg} at line {error.lineno})") from None
        except RecursionError:  # json gives up on arrays nested about a thousand deep
            raise CalibrationError(f"{path}: JSON nested too deeply to be a calibration") from None
        except CalibrationError as error:
            raise CalibrationError(f"{path}: {error}") from None


from_markers = Calibration.from_markers
from_corners = Calibration.from_corners
auto = Calibration.auto
whole_frame = Calibration.whole_frame


def calibrate(
    image: np.ndarray,
    method: str = "markers",
    corners: Any = None,
    *,
    size_mm: tuple[float, float] | None = None,
    marker_mm: float = DEFAULT_MARKER_MM,
    margin: float = 0.0,
) -> Calibration:
    """Calibrate a frame the way asked: ``markers``, ``auto``, ``corners`` (with ``corners``) or ``frame``."""
    if method == Method.MARKERS:
        return Calibration.from_markers(image, size_mm=size_mm, marker_mm=marker_mm)
    if method == Method.AUTO:
        return Calibration.auto(image, size_mm=size_mm)
    if method == Method.CORNERS:
        if corners is None:
            raise CalibrationError("method 'corners' needs the four corners of the play area")
        return Calibration.from_corners(corners, size_mm or DEFAULT_SIZE_MM, image=image)
    if method == Method.FRAME:
        height, width = image.shape[:2]
        calibration = Calibration.whole_frame(width, height, margin, size_mm=size_mm)
        return dataclasses.replace(calibration, reference=signature(image))
    raise CalibrationError(f"unknown calibration method {method!r} (markers, auto, corners or frame)")


def preview(image: np.ndarray, calibration: Calibration, search: PlayAreaSearch | None = None) -> np.ndarray:
    """The frame with the play area drawn on it (green) and, for ``auto``, the table top it was found on (blue) and
    what was kept out at its edges (red): what ``calibrate --preview`` writes."""
    colour = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    height, width = colour.shape[:2]
    thickness = max(2, round(max(height, width) / 400))
    if search is not None:
        clutter = cv2.warpPerspective(
            search.clutter.astype(np.uint8), np.linalg.inv(search.to_grid), (width, height), flags=cv2.INTER_NEAREST
        ).astype(bool)
        colour[clutter] = (0.5 * colour[clutter] + [0, 0, 127]).astype(np.uint8)
        cv2.polylines(colour, [np.round(search.table_px).astype(np.int32)], True, (255, 128, 0), thickness, cv2.LINE_AA)
    cv2.polylines(
        colour, [np.round(calibration.corners_px).astype(np.int32)], True, (0, 220, 0), 2 * thickness, cv2.LINE_AA
    )
    for name, (x, y) in zip(CORNER_NAMES, calibration.corners_px, strict=True):
        cv2.putText(colour, name, (round(x) + 8, round(y) - 8), cv2.FONT_HERSHEY_SIMPLEX, thickness / 3, (0, 220, 0),
                    thickness, cv2.LINE_AA)  # fmt: skip
    return colour


# -- camera motion -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MotionResult:
    """How far the image moved from the reference (full-resolution pixels) and how alike they still are."""

    shift_px: float
    moved: bool
    score: float
    """Zero-mean normalised correlation with the reference after undoing the shift (1 = same picture)."""
    shift: tuple[float, float] | None = (0.0, 0.0)
    """``(dx, dy)`` for :meth:`Calibration.shifted`; ``None`` when no translation explains the change."""


def _standardise(gray: np.ndarray) -> np.ndarray:
    """Zero mean, unit variance: a brightness or contrast change leaves it (nearly) unchanged."""
    values = gray.astype(np.float32)
    values -= values.mean()
    return values / max(float(values.std()), 1e-3)


def _peak_offset(before: float, peak: float, after: float) -> float:
    """Sub-pixel offset of a phase-correlation peak from its larger neighbour (the peak of a sampled sinc):
    several times more precise than a centroid for half-pixel shifts."""
    if after >= before:
        return after / (after + peak) if after + peak > 0 else 0.0
    return -before / (before + peak) if before + peak > 0 else 0.0


class CameraMotionCheck:
    """``check(frame)``: has the camera moved since the reference frame? Translation by phase correlation.

    A lighting change alone keeps the score high; hands over the table lower it, so check still frames.
    """

    def __init__(
        self,
        calibration: Calibration,
        reference_frame: np.ndarray | None = None,
        *,
        threshold_px: float = 6.0,
        min_score: float = 0.5,
    ) -> None:
        reference = signature(reference_frame) if reference_frame is not None else calibration.reference
        if reference is None:
            raise ValueError("the motion check needs a reference frame (the calibration does not hold one)")
        self.calibration = calibration
        self.threshold_px = threshold_px
        self.min_score = min_score
        self._reference = _standardise(reference)
        self._window = cv2.createHanningWindow(reference.shape[::-1], cv2.CV_32F)
        self._reference_spectrum = cv2.dft(self._reference * self._window, flags=cv2.DFT_COMPLEX_OUTPUT)

    def check(self, frame: np.ndarray) -> MotionResult:
        current = signature(frame)
        if current.shape != self._reference.shape:  # another resolution: the calibration no longer applies
            return MotionResult(0.0, True, 0.0, None)
        current = _standardise(current)
        dx, dy = self._shift(current)
        score = self._aligned_correlation(current, round(dx), round(dy))
        scale = frame.shape[1] / current.shape[1]
        shift = float(np.hypot(dx, dy) * scale)
        same_scene = score >= self.min_score
        translation = (float(dx * scale), float(dy * scale)) if same_scene else None
        return MotionResult(shift, shift > self.threshold_px or not same_scene, score, translation)

    def rebased(self, calibration: Calibration, frame: np.ndarray) -> CameraMotionCheck:
        """The same check against a new reference (after :meth:`Calibration.shifted` or a re-calibration)."""
        return CameraMotionCheck(calibration, frame, threshold_px=self.threshold_px, min_score=self.min_score)

    def _shift(self, current: np.ndarray) -> tuple[float, float]:
        """How far ``current`` moved from the reference (signature pixels): the peak of the phase correlation."""
        spectrum = cv2.dft(current * self._window, flags=cv2.DFT_COMPLEX_OUTPUT)
        cross = cv2.mulSpectrums(spectrum, self._reference_spectrum, 0, conjB=True)
        cross = cross / (cv2.magnitude(cross[:, :, 0], cross[:, :, 1])[:, :, None] + 1e-9)
        surface = cv2.idft(cross, flags=cv2.DFT_REAL_OUTPUT | cv2.DFT_SCALE)
        height, width = surface.shape
        y, x = np.unravel_index(int(np.argmax(surface)), surface.shape)
        fx = _peak_offset(surface[y, x - 1], surface[y, x], surface[y, (x + 1) % width])
        fy = _peak_offset(surface[y - 1, x], surface[y, x], surface[(y + 1) % height, x])
        # The surface wraps around: a peak past the middle is a negative shift.
        return (x - width if x > width // 2 else x) + fx, (y - height if y > height // 2 else y) + fy

    def _aligned_correlation(self, current: np.ndarray, dx: int, dy: int) -> float:
        height, width = current.shape
        if abs(dx) >= width // 2 or abs(dy) >= height // 2:
            return 0.0
        reference = self._reference[max(0, -dy) : height - max(0, dy), max(0, -dx) : width - max(0, dx)]
        moved = current[max(0, dy) : height - max(0, -dy), max(0, dx) : width - max(0, -dx)]
        a, b = reference - reference.mean(), moved - moved.mean()
        denominator = float(np.sqrt((a * a).sum() * (b * b).sum()))
        return float((a * b).sum() / denominator) if denominator > 0 else 0.0
