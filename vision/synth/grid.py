"""Synthetic photos of the enrolment grid (:mod:`vision.runtime.enrolment`): one copy of a set laid out in rows,
photographed.

The same renderer as :func:`vision.synth.scene.render_scene` (table top, tile drawing, camera, lighting, sensor);
only the layout differs: four rows of 1-13 (black, red, blue, orange) facing seat 0, then the jokers in a fifth
row from the left. With ``style_pool=1`` the edition draws one table style, so grid photos and the held-out
scenes of :mod:`vision.eval.enrol_bench` show the same tile set, as a venue's one set would. ``style=`` gives the
set itself: :func:`film_style` finds a filmed game's (``synth-game``), so a venue that enrols its own set before
the game can be played through (``bench pipeline --enrol``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from referee.table import Table
from referee.tiles import Tile
from vision.synth import faces
from vision.synth.geometry import TILE_HEIGHT_MM, TILE_WIDTH_MM, Camera, TilePose
from vision.synth.layout import LOOSE_SET, Area, PlacedTile
from vision.synth.scene import FILM_STYLES, RenderedScene, SceneParams, _styles, draw_scene, style_pool

COLUMN_GAP_MM = 5.0
ROW_GAP_MM = 16.0
GRID_TILT_DEG = (0.0, 25.0)
GRID_FILL = (0.75, 0.9)
GRID_ZOOM = 1.15
"""Camera distance divisor that makes ``GRID_FILL`` the share of the frame the grid fills (measured)."""
"""A referee photographing a laid-out set: from above or a little oblique, from any side, the whole grid in frame."""


@dataclass(frozen=True, slots=True)
class GridChange:
    """A deliberate mistake in the laid-out grid (for tests): leave a cell empty, add a tile, or swap two cells.
    Cells are (row, column), 1-based as the layout prints them."""

    missing: tuple[tuple[int, int], ...] = ()
    extra: tuple[tuple[float, float], ...] = ()
    """Extra tiles at (row, column) positions, fractional allowed (between cells)."""
    swapped: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = ()


def grid_labels(jokers: int) -> dict[tuple[int, int], str]:
    """(row, column) -> label of one copy laid out (rows 1-4 colours, row 5 the jokers)."""
    cells = {(r + 1, n): f"{colour}-{n}" for r, colour in enumerate(faces.COLOUR_NAMES) for n in range(1, 14)}
    cells.update({(5, c + 1): "joker" for c in range(jokers)})
    return cells


def film_style(header: dict[str, Any]) -> tuple[int, faces.TileStyle]:
    """The tile set a filmed game shows, from its truth header: the header's ``style_index`` into the films' style
    pool (:data:`FILM_STYLES`) where it has one, else the pool's style whose description equals the header's
    ``style`` (games filmed before the index was written); with its index in the pool. ValueError if neither."""
    pool = style_pool(*FILM_STYLES)
    described = header.get("style")
    if "style_index" in header:
        index = int(header["style_index"])
        if not 0 <= index < len(pool) or (described is not None and pool[index].describe() != described):
            raise ValueError(f"the header's style_index {index} is not the style it describes")
        return index, pool[index]
    matching = [i for i, style in enumerate(pool) if style.describe() == described]
    if not matching:
        name = (described or {}).get("name", "none")
        raise ValueError(f"the film's tile style ({name}) is not one of the {FILM_STYLES[0]} pool's {len(pool)}")
    return matching[0], pool[matching[0]]


def render_grid_scene(
    seed: int,
    params: SceneParams,
    *,
    jokers: int = 2,
    change: GridChange | None = None,
    style: faces.TileStyle | None = None,
    px_per_mm: float | None = None,
) -> RenderedScene:
    """One copy of the set in the enrolment grid, photographed with ``params``' style pool (or the set ``style``),
    lighting and sensor. The random draws are the same either way: ``style`` changes only the tiles' look.
    ``px_per_mm``: the camera stands where the grid's middle shows at that scale (a camera fixed over the table,
    as in a filmed game), not where the grid fills the frame."""
    rng = np.random.default_rng(seed)
    change = change or GridChange()
    cells = grid_labels(jokers)
    for a, b in change.swapped:
        cells[a], cells[b] = cells[b], cells[a]
    for cell in change.missing:
        cells.pop(cell, None)
    pitch_x, pitch_y = TILE_WIDTH_MM + COLUMN_GAP_MM, TILE_HEIGHT_MM + ROW_GAP_MM

    def pose(row: float, column: float) -> TilePose:
        x = (column - 7) * pitch_x + float(rng.normal(0, 0.8))
        y = (3 - row) * pitch_y + float(rng.normal(0, 0.8))
        return TilePose(x, y, float(rng.normal(0, 1.5)))

    placed = [
        PlacedTile(Tile.parse(label), pose(r, c), LOOSE_SET, i) for i, ((r, c), label) in enumerate(cells.items())
    ]
    placed += [
        PlacedTile(Tile.parse(str(rng.choice(list(grid_labels(jokers).values())))), pose(r, c), LOOSE_SET, 100 + i)
        for i, (r, c) in enumerate(change.extra)
    ]
    area = Area(-7 * pitch_x - 40, -2 * pitch_y - 40, 7 * pitch_x + 40, 3 * pitch_y + 40)
    camera = _grid_camera(rng, params.size, area, px_per_mm)
    drawn_style = _styles(params)[int(rng.integers(params.style_pool))]
    style = drawn_style if style is None else style
    table_area = Area(area.x0 - 200, area.y0 - 200, area.x1 + 200, area.y1 + 200)
    drawn = draw_scene(rng, params, camera, placed, style, table_area)
    meta = {
        "seed": seed,
        "split": params.split,
        "camera": camera.describe(),
        "lighting": drawn.lighting.describe(),
        "style": style.describe(),
        "material": drawn.material,
    }
    table = Table.of(loose=[p.tile for p in placed if p.tile is not None])
    return RenderedScene(drawn.image, drawn.tiles, table, drawn.instance_map, meta)


def _grid_camera(rng: np.random.Generator, size: tuple[int, int], area: Area, px_per_mm: float | None = None) -> Camera:
    """Looking at the grid's centre from any seat (so the grid can come out rotated), tilted up to 25 degrees."""
    width, height = size
    tilt = math.radians(float(rng.uniform(*GRID_TILT_DEG)))
    fov = float(rng.uniform(50.0, 70.0))
    azimuth = math.radians(90.0 * int(rng.integers(4)) + float(rng.normal(0, 10)))
    quarter = int(rng.integers(4))  # the photo's up: any side of the grid
    sideways = quarter % 2 == 1  # the grid's long side along the image's short side
    along, across = (area.height, area.width) if sideways else (area.width, area.height)
    fit = max(along, across * width / height)  # the world width the horizontal field of view must hold
    distance = (fit / float(rng.uniform(*GRID_FILL))) / 2 / GRID_ZOOM / math.tan(math.radians(fov) / 2)
    if px_per_mm is not None:  # the focal length in pixels over the distance is the scale at the grid's middle
        distance = width / 2 / math.tan(math.radians(fov) / 2) / px_per_mm
    centre = ((area.x0 + area.x1) / 2 + float(rng.normal(0, 8)), (area.y0 + area.y1) / 2 + float(rng.normal(0, 8)))
    offset = (math.sin(azimuth) * distance * math.sin(tilt), -math.cos(azimuth) * distance * math.sin(tilt))
    return Camera.looking_at(
        width=width,
        height=height,
        horizontal_fov_deg=fov,
        position=(centre[0] + offset[0], centre[1] + offset[1], distance * math.cos(tilt)),
        target=(centre[0], centre[1], 0.0),
        roll_deg=90.0 * quarter + float(rng.normal(0, 4)),
        k1=float(rng.uniform(-0.1, 0.03)) if rng.random() < 0.5 else 0.0,
    )
