"""The enrolment grid fitted to detections (any rotation, perspective), layout mistakes named by place."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.runtime.enrolgrid import NUMBER_CELLS, Cell, fit_grid, grid_problems

TILE_W, TILE_H, PITCH_X, PITCH_Y = 40.0, 54.0, 50.0, 72.0
EVERY_CELL = [*NUMBER_CELLS, Cell(5, 1), Cell(5, 2)]


def grid_boxes(
    cells: list[Cell],
    *,
    turn_deg: float = 0.0,
    tilt: float = 0.0,
    extra: list[tuple[float, float]] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned boxes and up angles of tiles laid in the grid, the photo turned by ``turn_deg`` (clockwise) and
    seen with a keystone ``tilt``; ``extra``: (row, column) places of more tiles, fractional allowed."""
    places = [(c.row, c.column) for c in cells] + list(extra)
    a = math.radians(turn_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    points = []
    for row, column in places:
        x, y = (column - 7) * PITCH_X, (row - 3) * PITCH_Y
        shrink = 1.0 / (1.0 + tilt * y / 300.0)  # rows further away come out narrower
        points.append(rot @ np.array([x * shrink, y * shrink]) + [700.0, 500.0])
    points = np.array(points)
    cos, sin = abs(math.cos(a)), abs(math.sin(a))
    half_w, half_h = (TILE_W * cos + TILE_H * sin) / 2, (TILE_W * sin + TILE_H * cos) / 2
    boxes = np.column_stack(
        [points[:, 0] - half_w, points[:, 1] - half_h, points[:, 0] + half_w, points[:, 1] + half_h]
    )
    return boxes.astype(np.float32), np.full(len(places), turn_deg % 360, np.float32)


def problems_of(boxes: np.ndarray, angles: np.ndarray) -> list[str]:
    return grid_problems(fit_grid(boxes, angles))


@pytest.mark.parametrize("turn", [0.0, 8.0, 90.0, 180.0, 265.0])
@pytest.mark.parametrize("tilt", [0.0, 0.25])
def test_a_whole_grid_fits_at_any_rotation_and_perspective(turn: float, tilt: float) -> None:
    boxes, angles = grid_boxes(EVERY_CELL, turn_deg=turn, tilt=tilt)
    fit = fit_grid(boxes, angles)
    assert list(fit.cells) == EVERY_CELL
    assert grid_problems(fit) == []


def test_a_missing_tile_is_named_by_its_place() -> None:
    cells = [c for c in EVERY_CELL if c != Cell(2, 7)]
    assert problems_of(*grid_boxes(cells, turn_deg=180.0)) == ["row 2 (red), column 7: no tile found"]


def test_a_missing_first_column_keeps_the_grid_in_place() -> None:
    cells = [c for c in EVERY_CELL if c != Cell(1, 1)]
    assert problems_of(*grid_boxes(cells, turn_deg=90.0)) == ["row 1 (black), column 1: no tile found"]


def test_a_tile_between_cells_is_named() -> None:
    problems = problems_of(*grid_boxes(EVERY_CELL, extra=[(3.0, 4.5)]))
    assert len(problems) == 1
    assert "row 3 (blue)" in problems[0] and "off the grid" in problems[0]


def test_an_extra_tile_beside_the_grid_is_named() -> None:
    problems = problems_of(*grid_boxes(EVERY_CELL, extra=[(2.0, 14.0)]))
    assert problems == ["row 2 (red), column 14: an extra tile outside the grid (5 rows of 13 columns)"]


def test_a_misplaced_tile_names_the_hole_and_the_double() -> None:
    """Red 7 laid on red 8's place: a hole at column 7 and two tiles at column 8 (given as an extra tile there)."""
    cells = [c for c in EVERY_CELL if c != Cell(2, 7)]
    problems = problems_of(*grid_boxes(cells, extra=[(2.0, 8.0)]))
    assert "row 2 (red), column 8: two tiles in one cell" in problems
    assert "row 2 (red), column 7: no tile found" in problems


def test_jokers_go_from_the_left() -> None:
    cells = [*NUMBER_CELLS, Cell(5, 3)]
    assert problems_of(*grid_boxes(cells)) == [
        "row 5 (jokers): the jokers go from column 1 without gaps (found in columns [3])"
    ]
