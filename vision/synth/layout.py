"""Laying tiles on the table plane: sets as rows of touching tiles facing a seat, gaps between sets,
loose tiles, the pool of face-down tiles and racks at the table's edges.

Seats (:mod:`vision.runtime.seats`): 0 at the bottom edge (y < 0), 1 at the right, 2 at the top, 3 at the left. A tile
read from the edge k has its face's up pointing away from that edge: ``angle_deg = 90 * k``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from referee.table import Table
from referee.tiles import Tile
from vision.runtime.seats import MIDDLE, Edge, Seat
from vision.synth.geometry import TILE_HEIGHT_MM, TILE_WIDTH_MM, TilePose, rotated_rect_corners

LOOSE_SET = -1
POOL_SET = -2
RACK_SET = -3


@dataclass(frozen=True, slots=True)
class PlacedTile:
    tile: Tile | None
    """None for a face-down tile (its face is not visible, so it has no label)."""
    pose: TilePose
    set_id: int
    """Index of the set in the table, or LOOSE_SET / POOL_SET / RACK_SET."""
    position: int = 0
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class SetPlacement:
    """Where a set lies: the centre of its first tile and the seat it faces (plus a small jitter)."""

    x: float
    y: float
    angle_deg: float


@dataclass(frozen=True, slots=True)
class Area:
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0


class Occupancy:
    """A coarse grid over the table (5 mm cells) that says where something already lies."""

    def __init__(self, area: Area, cell_mm: float = 5.0) -> None:
        self.area, self.cell = area, cell_mm
        self.grid = np.zeros((int(area.height / cell_mm) + 1, int(area.width / cell_mm) + 1), bool)

    def _cells(self, corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import cv2

        pts = ((corners - [self.area.x0, self.area.y0]) / self.cell).astype(np.int32)
        mask = np.zeros_like(self.grid, np.uint8)
        cv2.fillConvexPoly(mask, pts, 1)
        rows, cols = np.nonzero(mask)
        return rows, cols

    def inside(self, corners: np.ndarray) -> bool:
        a = self.area
        return bool(
            np.all(corners[:, 0] >= a.x0)
            and np.all(corners[:, 0] <= a.x1)
            and np.all(corners[:, 1] >= a.y0)
            and np.all(corners[:, 1] <= a.y1)
        )

    def free(self, corners: np.ndarray) -> bool:
        if not self.inside(corners):
            return False
        rows, cols = self._cells(corners)
        return not self.grid[rows, cols].any()

    def mark(self, corners: np.ndarray) -> None:
        rows, cols = self._cells(corners)
        self.grid[rows, cols] = True

    def random_free_point(
        self, rng: np.random.Generator, radius_mm: float, tries: int = 60
    ) -> tuple[float, float] | None:
        for _ in range(tries):
            x = rng.uniform(self.area.x0 + radius_mm, self.area.x1 - radius_mm)
            y = rng.uniform(self.area.y0 + radius_mm, self.area.y1 - radius_mm)
            box = rotated_rect_corners(x, y, 2 * radius_mm, 2 * radius_mm, 0)
            if self.free(box):
                return x, y
        return None


@dataclass(frozen=True, slots=True)
class LayoutParams:
    tile_scale: tuple[float, float] = (0.9, 1.12)
    """Tile size varies between editions (travel sets are smaller)."""
    main_seat_share: float = 0.7
    """Share of sets facing the table's main seat; the rest face the others."""
    angle_jitter_deg: float = 3.0
    tile_jitter_mm: float = 0.6
    tile_gap_mm: tuple[float, float] = (0.0, 1.5)
    set_gap_mm: tuple[float, float] = (8.0, 45.0)
    rows_share: float = 0.6
    """Share of tables laid in tidy rows; the rest are scattered."""


def set_footprint(
    n_tiles: int, placement: SetPlacement, tile_w: float, tile_h: float, pitch: float, margin: float
) -> np.ndarray:
    """Corners of a set's rectangle (plus margin) on the table."""
    a = math.radians(placement.angle_deg)
    along = np.array([math.cos(a), math.sin(a)])
    length = (n_tiles - 1) * pitch
    cx, cy = np.array([placement.x, placement.y]) + along * length / 2
    return rotated_rect_corners(cx, cy, length + tile_w + 2 * margin, tile_h + 2 * margin, placement.angle_deg)


def place_set_tiles(
    tiles: tuple[Tile, ...],
    placement: SetPlacement,
    set_id: int,
    rng: np.random.Generator,
    params: LayoutParams,
    scale: float,
) -> list[PlacedTile]:
    """Tiles side by side in reading order: left to right as the facing player reads them."""
    w, h = TILE_WIDTH_MM * scale, TILE_HEIGHT_MM * scale
    a = math.radians(placement.angle_deg)
    along = np.array([math.cos(a), math.sin(a)])
    placed = []
    offset = 0.0
    for position, tile in enumerate(tiles):
        jitter = rng.normal(0, params.tile_jitter_mm, 2)
        x, y = np.array([placement.x, placement.y]) + along * offset + jitter
        angle = placement.angle_deg + rng.normal(0, 0.8)
        placed.append(
            PlacedTile(
                tile,
                TilePose(float(x), float(y), float(angle), width=w, height=h, thickness=7.0 * scale),
                set_id,
                position,
            )
        )
        offset += w + rng.uniform(*params.tile_gap_mm)
    return placed


def lay_out(
    table: Table, area: Area, rng: np.random.Generator, params: LayoutParams, occupancy: Occupancy | None = None
) -> tuple[list[PlacedTile], Occupancy, float]:
    """Place every set and loose tile of ``table`` inside ``area``; sets that do not fit are left out."""
    occupancy = occupancy or Occupancy(area)
    scale = float(rng.uniform(*params.tile_scale))
    w, h = TILE_WIDTH_MM * scale, TILE_HEIGHT_MM * scale
    pitch = w + float(np.mean(params.tile_gap_mm))
    main_seat = int(rng.integers(4))
    rows = rng.random() < params.rows_share
    placed: list[PlacedTile] = []
    cursor = _RowCursor(area, main_seat, rng, params, w, h) if rows else None
    for set_id, tile_set in enumerate(table.sets):
        seat = main_seat if rng.random() < params.main_seat_share else int(rng.integers(4))
        angle = 90.0 * seat + rng.normal(0, params.angle_jitter_deg)
        margin = float(rng.uniform(*params.set_gap_mm)) / 2
        placement = None
        if cursor is not None and seat == main_seat:
            placement = cursor.next_free(len(tile_set), angle, pitch, margin, occupancy)
        if placement is None:
            placement = _random_free_placement(len(tile_set), angle, area, rng, pitch, margin, occupancy, w, h)
        if placement is None:
            continue
        occupancy.mark(set_footprint(len(tile_set), placement, w, h, pitch, margin))
        placed += place_set_tiles(tile_set.tiles, placement, set_id, rng, params, scale)
    for index, tile in enumerate(table.loose):
        placement = _random_free_placement(1, float(rng.uniform(0, 360)), area, rng, pitch, 6.0, occupancy, w, h)
        if placement is not None:
            occupancy.mark(set_footprint(1, placement, w, h, pitch, 6.0))
            placed += [
                replace(p, position=index) for p in place_set_tiles((tile,), placement, LOOSE_SET, rng, params, scale)
            ]
    return placed, occupancy, scale


class _RowCursor:
    """Fills the area row by row in the main seat's reading direction, like tidy players do."""

    def __init__(
        self, area: Area, seat: int, rng: np.random.Generator, params: LayoutParams, w: float, h: float
    ) -> None:
        self.area, self.seat, self.rng, self.params, self.w, self.h = area, seat, rng, params, w, h
        self.row = 0
        self.along = 0.0

    def next_free(self, n: int, angle: float, pitch: float, margin: float, occupancy: Occupancy) -> SetPlacement | None:
        a = self.area
        # In the seat's own frame: "across" grows away from the seat, "along" left to right.
        span_along = a.width if self.seat % 2 == 0 else a.height
        span_across = a.height if self.seat % 2 == 0 else a.width
        row_pitch = self.h + float(self.rng.uniform(*self.params.set_gap_mm)) * 0.6
        for _ in range(40):
            across = self.h / 2 + 10 + self.row * row_pitch
            if across > span_across - self.h / 2:
                return None
            start = self.along + margin + self.w / 2 + float(self.rng.uniform(0, 15))
            end = start + (n - 1) * pitch + self.w / 2
            if end > span_along - 5:
                self.row += 1
                self.along = float(self.rng.uniform(0, 30))
                continue
            placement = self._to_world(start, across, angle)
            self.along = end + margin
            if occupancy.free(set_footprint(n, placement, self.w, self.h, pitch, margin)):
                return placement
        return None

    def _to_world(self, along: float, across: float, angle: float) -> SetPlacement:
        a = self.area
        if self.seat == 0:
            return SetPlacement(a.x0 + along, a.y0 + across, angle)
        if self.seat == 1:
            return SetPlacement(a.x1 - across, a.y0 + along, angle)
        if self.seat == 2:
            return SetPlacement(a.x1 - along, a.y1 - across, angle)
        return SetPlacement(a.x0 + across, a.y1 - along, angle)


def _random_free_placement(
    n: int,
    angle: float,
    area: Area,
    rng: np.random.Generator,
    pitch: float,
    margin: float,
    occupancy: Occupancy,
    w: float,
    h: float,
) -> SetPlacement | None:
    for _ in range(60):
        placement = SetPlacement(float(rng.uniform(area.x0, area.x1)), float(rng.uniform(area.y0, area.y1)), angle)
        if occupancy.free(set_footprint(n, placement, w, h, pitch, margin)):
            return placement
    return None


def lay_out_pool(
    area: Area, count: int, rng: np.random.Generator, occupancy: Occupancy, scale: float
) -> list[PlacedTile]:
    """Face-down tiles in a loose heap (the "bank"), never labelled."""
    centre = occupancy.random_free_point(rng, 60.0)
    if centre is None:
        return []
    placed = []
    for _ in range(count):
        x, y = np.array(centre) + rng.normal(0, 50, 2)
        pose = TilePose(
            float(x),
            float(y),
            float(rng.uniform(0, 360)),
            face_up=False,
            width=TILE_WIDTH_MM * scale,
            height=TILE_HEIGHT_MM * scale,
            thickness=7.0 * scale,
        )
        corners = pose.corners()[:4, :2]
        if occupancy.free(corners):
            occupancy.mark(corners)
            placed.append(PlacedTile(None, pose, POOL_SET))
    return placed


def lay_out_rack(
    seat: Seat, table_area: Area, tiles: list[Tile], rng: np.random.Generator, scale: float
) -> tuple[list[PlacedTile], np.ndarray]:
    """A player's rack at the table edge, where the player sits along it: tiles standing on a ledge, faces
    towards the player. An edge's middle seat's rack lies anywhere within 60 mm of the middle; a rack on a shared
    edge within 6 mm of its place, so the two on that edge keep apart.

    Returns the tiles and the rack body's 8 box corners (world mm) for drawing.
    """
    w, h = TILE_WIDTH_MM * scale, TILE_HEIGHT_MM * scale
    length = max(len(tiles), 8) * (w + 1) + 30
    depth = 45.0
    a = table_area
    # In the seat's frame, the rack sits along its edge; the face looks back at the player (tilt > 90).
    centre_along = float(rng.uniform(-60, 60))
    inset = float(rng.uniform(25, 60))
    if seat.along != MIDDLE:  # picture left to right (or top to bottom) is world +x (or -y)
        centre_along *= 0.1
        place = (seat.along - MIDDLE) * (a.width if seat.edge in (Edge.BOTTOM, Edge.TOP) else a.height)
        centre_along += place if seat.edge in (Edge.BOTTOM, Edge.LEFT) else -place
    frames = {
        Edge.BOTTOM: ((a.x0 + a.x1) / 2 + centre_along, a.y0 + inset, 0.0),
        Edge.RIGHT: (a.x1 - inset, (a.y0 + a.y1) / 2 + centre_along, 90.0),
        Edge.TOP: ((a.x0 + a.x1) / 2 - centre_along, a.y1 - inset, 180.0),
        Edge.LEFT: (a.x0 + inset, (a.y0 + a.y1) / 2 - centre_along, 270.0),
    }
    cx, cy, angle = frames[seat.edge]
    body = TilePose(cx, cy, angle, width=length, height=depth, thickness=18.0)
    rad = math.radians(angle)
    along = np.array([math.cos(rad), math.sin(rad)])
    towards_centre = np.array([-math.sin(rad), math.cos(rad)])
    placed = []
    for index, tile in enumerate(tiles):
        offset = (index - (len(tiles) - 1) / 2) * (w + 1)
        x, y = np.array([cx, cy]) + along * offset + towards_centre * 8
        # Standing up, leaning back: the face looks at the player (tilting turns the face's normal to -y in
        # the seat's frame) and the bottom edge rests on the ledge.
        tilt = float(rng.uniform(65, 80))
        lift = 10.0 + h / 2 * math.sin(math.radians(tilt))
        pose = TilePose(float(x), float(y), angle, z=lift, tilt_deg=tilt, width=w, height=h, thickness=7.0 * scale)
        placed.append(PlacedTile(tile, pose, RACK_SET, index, seat.number))
    return placed, body.corners()


@dataclass(frozen=True, slots=True)
class RevealedRack:
    """A rack turned to the camera at the end of a game: tiles standing on one or two ledges, faces to -y."""

    tiles: list[PlacedTile]
    bodies: list[np.ndarray]
    """8 box corners (world mm) of each part of the rack, back part first (drawn far to near)."""
    length: float
    height: float
    """How high the tiles reach (mm above the table)."""
    rows: int


def lay_out_revealed_rack(tiles: list[list[Tile]], rng: np.random.Generator, scale: float) -> RevealedRack:
    """A rack centred at the origin along x, the table's edge at -y, its tiles' faces looking at -y (towards a
    camera in front of it) and leaning back 65-82 degrees; ``tiles`` holds each row's tiles, front row first.

    The front row stands on a low ledge; a second row stands behind it on a step, high enough that its digits
    show above the front row's tops (its lower part may be hidden: the labels measure what is visible)."""
    w, h, thickness = TILE_WIDTH_MM * scale, TILE_HEIGHT_MM * scale, 7.0 * scale
    placed: list[PlacedTile] = []
    bodies: list[np.ndarray] = []
    spans = [_row_offsets(len(row), w, rng) for row in tiles]
    length = max(300.0, max((float(np.ptp(s)) + w for s in spans if len(s)), default=0.0) + 30.0)
    ledge, back, top, front_tilt = 12.0, 0.0, 0.0, 90.0
    for row_index, (row, offsets) in enumerate(zip(tiles, spans, strict=True)):
        tilt = float(rng.uniform(65, 82))
        if row_index:
            # The step behind the front row: it starts behind the front row's leaning tops.
            step_front = back + h * math.cos(math.radians(front_tilt - 5)) + 3.0
            ledge = top - float(rng.uniform(0.15, 0.35)) * h  # the front row hides the back row's lower part
            depth = thickness + h + 8.0
            bodies.insert(
                0, TilePose(0.0, step_front + depth / 2, 0.0, width=length, height=depth, thickness=ledge).corners()
            )
            back = step_front + thickness + 2.0
        else:
            bodies.append(TilePose(0.0, -8.0, 0.0, width=length, height=40.0, thickness=ledge).corners())
        centre = (offsets.max() + offsets.min()) / 2 if len(offsets) else 0.0
        for tile, offset in zip(row, offsets, strict=True):
            lean = tilt + float(rng.normal(0, 0.8))
            lift = ledge + h / 2 * math.sin(math.radians(lean))
            pose = TilePose(float(offset - centre), back, 0.0, z=lift, tilt_deg=lean, width=w, height=h,
                            thickness=thickness)  # fmt: skip
            placed.append(PlacedTile(tile, pose, RACK_SET, len(placed), 0))
        top, front_tilt = ledge + h * math.sin(math.radians(tilt)), tilt
    return RevealedRack(placed, bodies, length, top, len(tiles))


def _row_offsets(n: int, width: float, rng: np.random.Generator) -> np.ndarray:
    """Centres of a row's tiles along the rack: touching or nearly, sometimes a gap between groups."""
    steps = width + rng.uniform(0.3, 1.5, max(n - 1, 0))
    steps += np.where(rng.random(max(n - 1, 0)) < 0.15, rng.uniform(8, 30, max(n - 1, 0)), 0.0)
    return np.concatenate([[0.0], np.cumsum(steps)]) if n else np.zeros(0)
