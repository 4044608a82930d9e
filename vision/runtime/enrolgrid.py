"""The enrolment grid: its cells as data and one photo's detections fitted to them.

The grid (``rummikub-referee enrol --layout``, :func:`vision.runtime.enrolment.layout_text`): rows top to bottom
black, red, blue, orange, each 1 to 13 from the left, then a fifth row with the jokers from the left. The tiles'
centres are fitted to grid cells by a homography from grid cells to box centres (so any rotation and a moderate
perspective are fine); :func:`grid_problems` names by place a cell without a tile, two tiles in one cell, a tile off
the grid or outside it, jokers not from the left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

COLOURS = ("black", "red", "blue", "orange")
COLUMNS = 13
JOKER_ROW = 5
OFF_CELL = 0.32
"""A tile whose centre lies further than this (in cell pitches) from its cell's centre is off the grid."""


class EnrolmentError(ValueError):
    """A photo that does not match the grid, or an enrolment that cannot be done; one line naming the places."""


# -- the grid as data ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cell:
    row: int
    """1-4 the colour rows, 5 the jokers."""
    column: int
    """1-13."""

    @property
    def label(self) -> str:
        return "joker" if self.row == JOKER_ROW else f"{COLOURS[self.row - 1]}-{self.column}"

    def place(self) -> str:
        name = "jokers" if self.row == JOKER_ROW else COLOURS[self.row - 1] if 1 <= self.row <= 4 else "outside"
        return f"row {self.row} ({name}), column {self.column}"


NUMBER_CELLS: tuple[Cell, ...] = tuple(Cell(r, c) for r in range(1, 5) for c in range(1, COLUMNS + 1))


# -- fitting detections to the grid ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GridFit:
    """Where each detection lies in the grid of one photo."""

    cells: tuple[Cell, ...]
    """The cell of each detection (in detection order)."""
    residual: np.ndarray
    """Distance of each centre from its cell's centre, in cell pitches."""
    homography: np.ndarray
    """Grid coordinates to image pixels: cell (row r, column c) lies at (c - 1, r - 1) + ``origin``."""
    origin: tuple[int, int] = (0, 0)


def _circular_mean_deg(angles: np.ndarray) -> float:
    rad = np.radians(angles)
    return float(np.degrees(np.arctan2(np.sin(rad).mean(), np.cos(rad).mean())) % 360)


def _frame(centres: np.ndarray, up_deg: float) -> tuple[np.ndarray, float]:
    """Centres in the tiles' own frame (u right, v down as a player reads them), the row direction refined from
    nearest neighbours; and the pitch along a row in pixels."""
    a = math.radians(up_deg)
    right = np.array([math.cos(a), math.sin(a)])
    diff = centres[None, :, :] - centres[:, None, :]
    dist = np.linalg.norm(diff, axis=2)
    np.fill_diagonal(dist, np.inf)
    nearest = diff[np.arange(len(centres)), dist.argmin(axis=1)]
    along = nearest @ right
    across = nearest @ np.array([-right[1], right[0]])
    in_row = np.abs(across) < np.abs(along) * math.tan(math.radians(30))
    if in_row.sum() >= 5:
        signed = nearest[in_row] * np.sign(along[in_row])[:, None]
        a = math.atan2(float(np.median(signed[:, 1])), float(np.median(signed[:, 0])))
        right = np.array([math.cos(a), math.sin(a)])
        pitch = float(np.median(np.linalg.norm(nearest[in_row], axis=1)))
    else:
        pitch = float(np.median(dist.min(axis=1)))
    down = np.array([-right[1], right[0]])
    return np.column_stack([centres @ right, centres @ down]), pitch


def _first_guess(uv: np.ndarray, pitch: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(column, row) 0-based guesses: each tile linked to its right-hand neighbour (one missing tile bridged) into
    chains, chains at the same height merged into rows (so rows slanted by perspective stay whole), rows numbered
    top to bottom, columns counted along each row from the first tile of its long chains; and which tiles lie in a
    chain of 4 or more (trusted for the first homography)."""
    n = len(uv)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    du = uv[None, :, 0] - uv[:, None, 0]
    dv = np.abs(uv[None, :, 1] - uv[:, None, 1])
    candidates = (du > 0.5 * pitch) & (du < 2.6 * pitch) & (dv < 0.35 * pitch)
    for i in range(n):
        if candidates[i].any():
            j = int(np.where(candidates[i], du[i], np.inf).argmin())
            parent[root(i)] = root(j)
    chains: dict[int, list[int]] = {}
    for i in range(n):
        chains.setdefault(root(i), []).append(i)
    long_chain = np.zeros(n, bool)
    for members in chains.values():
        long_chain[members] = len(members) >= 4
    if long_chain.sum() < 8:  # too few long chains to go by: every tile counts
        long_chain[:] = True
    heights = sorted((float(np.median(uv[m, 1])), m) for m in chains.values() if long_chain[m[0]])
    rows = np.full(n, -1)  # short chains (a stray box, the jokers) are placed by the homography, not here
    row, last = -1, -np.inf
    for height, members in heights:
        if height - last > 0.6 * pitch:
            row += 1
        rows[members] = row
        last = height
    cols = np.full(n, -1)
    for r in np.unique(rows[rows >= 0]):
        in_row = np.where(rows == r)[0]
        u = uv[in_row, 0]
        steps = np.diff(np.sort(u))
        step = float(np.median(steps[steps > 0.5 * pitch])) if (steps > 0.5 * pitch).any() else pitch
        start = u.min()
        cols[in_row] = np.round((u - start) / step).astype(int)
    return cols, rows, long_chain


def fit_grid(boxes: np.ndarray, angles_deg: np.ndarray) -> GridFit:
    """Each box's grid cell. ``angles_deg``: each tile's up (clockwise from image up), as the classifier reads it;
    their mean says which way the grid is turned in the photo."""
    centres = np.column_stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2]).astype(np.float64)
    uv, pitch = _frame(centres, _circular_mean_deg(angles_deg))
    cols, rows, trusted = _first_guess(uv, pitch)
    grid = np.column_stack([cols, rows]).astype(np.float64)
    homography, _ = cv2.findHomography(grid[trusted], centres[trusted], cv2.RANSAC, 0.3 * pitch)
    if homography is None:
        raise EnrolmentError("the tiles do not form a grid of rows and columns: see rummikub-referee enrol --layout")
    for _ in range(3):  # assign to the nearest cell, refit on the tiles that sit in theirs
        inverse = np.linalg.inv(homography)
        grid_xy = cv2.perspectiveTransform(centres[None], inverse)[0]
        cells = np.round(grid_xy)
        residual = np.linalg.norm(grid_xy - cells, axis=1)
        good = residual < OFF_CELL
        if good.sum() < 8:
            break
        refit, _ = cv2.findHomography(cells[good], centres[good], 0)
        if refit is None:
            break
        homography = refit
    inverse = np.linalg.inv(homography)
    grid_xy = cv2.perspectiveTransform(centres[None], inverse)[0]
    # rows 1-4 and columns 1-13 are where the most tiles are (a stray box on the table does not shift the grid)
    cells = np.round(grid_xy).astype(int)
    near = residual_of(grid_xy) < OFF_CELL
    first_row = _densest_window(cells[near, 1], 4)
    rows_1_4 = near & (cells[:, 1] >= first_row) & (cells[:, 1] < first_row + 4)
    first_column = _densest_window(cells[rows_1_4, 0], COLUMNS)
    cells -= (first_column, first_row)
    residual = residual_of(grid_xy)
    cells_ = tuple(Cell(int(r) + 1, int(c) + 1) for c, r in cells)
    return GridFit(cells_, residual, homography, (first_column, first_row))


def residual_of(grid_xy: np.ndarray) -> np.ndarray:
    return np.linalg.norm(grid_xy - np.round(grid_xy), axis=1)


def _densest_window(values: np.ndarray, width: int) -> int:
    """The start of the ``width`` consecutive whole numbers holding most ``values`` (the lowest such start)."""
    if not len(values):
        return 0
    starts = range(int(values.min()) - width + 1, int(values.max()) + 1)
    return max(starts, key=lambda a: (int(((values >= a) & (values < a + width)).sum()), -a))


def in_grid(cell: Cell) -> bool:
    return 1 <= cell.column <= COLUMNS and 1 <= cell.row <= JOKER_ROW


def far_from_grid(cell: Cell) -> bool:
    """More than a cell away from the grid: something else on the table (ignored), not a tile of the layout."""
    return not (0 <= cell.column <= COLUMNS + 1 and 0 <= cell.row <= JOKER_ROW + 1)


def grid_problems(fit: GridFit) -> list[str]:
    """What is wrong with the layout, by place; empty when every cell of rows 1-4 holds one tile and the jokers sit
    in row 5 from the left."""
    problems = []
    seen: dict[Cell, int] = {}
    for index, (cell, off) in enumerate(zip(fit.cells, fit.residual, strict=True)):
        if off >= OFF_CELL:
            problems.append(f"{cell.place()}: a tile off the grid (between cells)")
        elif not in_grid(cell):
            problems.append(f"{cell.place()}: an extra tile outside the grid (5 rows of 13 columns)")
        elif cell in seen:
            problems.append(f"{cell.place()}: two tiles in one cell")
        seen.setdefault(cell, index)
    problems += [f"{cell.place()}: no tile found" for cell in NUMBER_CELLS if cell not in seen]
    jokers = sorted(cell.column for cell in seen if cell.row == JOKER_ROW)
    if jokers and jokers != list(range(1, len(jokers) + 1)):
        problems.append(f"row 5 (jokers): the jokers go from column 1 without gaps (found in columns {jokers})")
    return problems
