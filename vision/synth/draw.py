"""Synthetic photos of the draw for the first player: one tile face up in front of each seat, the rest face down.

The same film as ``synth-game`` (:class:`vision.synth.video.GameFilm`: its camera over the whole table, tile
edition, table material, light and sensor, drawn from the seed), with no racks yet: each player's tile lies flat near
their edge of the play area, turned to be read from their seat, and the face-down tiles lie heaped in the middle, as
players mix them for the draw. The truth is each seat's tile (seat numbers of :mod:`vision.runtime.seats`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from referee.tiles import Tile
from vision.runtime.seats import MIDDLE, Edge, Seat, seating
from vision.synth.geometry import TilePose
from vision.synth.layout import LOOSE_SET, POOL_SET, LayoutParams, PlacedTile
from vision.synth.video import JITTER_PX, PLAY_AREA, GameFilm, Staging, film_camera

EDGE_ANGLE_DEG = {Edge.BOTTOM: 0.0, Edge.RIGHT: 90.0, Edge.TOP: 180.0, Edge.LEFT: 270.0}
"""A flat tile's ``angle_deg`` that reads upright from a seat on each edge (see ``TilePose``)."""
INSET_MM = 70.0
"""How far inside the play area's edge a player lays the drawn tile (the racks stand further out)."""
HEAP_TILES = 60
PLAIN = Staging()


@dataclass(frozen=True)
class DrawPhoto:
    image: np.ndarray
    tiles: dict[int, Tile]
    """Seat number -> the tile face up in front of it."""
    centres_px: dict[int, tuple[float, float]]
    """Seat number -> where its tile's centre is in the image."""
    seed: int


def seat_spot(seat: Seat) -> tuple[float, float, float]:
    """Where in front of ``seat`` (world mm) a drawn tile lies, and its angle to be read from there."""
    area = PLAY_AREA
    offset = (seat.along - MIDDLE) * (area.width if seat.edge in (Edge.BOTTOM, Edge.TOP) else area.height)
    x, y = {
        Edge.BOTTOM: ((area.x0 + area.x1) / 2 + offset, area.y0 + INSET_MM),
        Edge.TOP: ((area.x0 + area.x1) / 2 + offset, area.y1 - INSET_MM),
        Edge.RIGHT: (area.x1 - INSET_MM, (area.y0 + area.y1) / 2 - offset),
        Edge.LEFT: (area.x0 + INSET_MM, (area.y0 + area.y1) / 2 - offset),
    }[seat.edge]
    return x, y, EDGE_ANGLE_DEG[seat.edge]


def draw_photo(
    tiles: Mapping[int, Tile | str],
    players: int,
    *,
    seed: int,
    size: tuple[int, int] = (1280, 720),
    staging: Staging = PLAIN,
    heap: bool = True,
) -> DrawPhoto:
    """A photo of the draw: ``tiles`` by seat number (seats of a ``players`` table without a tile show none)."""
    seats = {seat.number: seat for seat in seating(players)}
    unknown = sorted(set(tiles) - set(seats))
    if unknown:
        raise ValueError(f"seats {unknown} are not at a {players}-player table (seats {sorted(seats)})")
    rng = np.random.default_rng([seed, 11])
    film = GameFilm(film_camera(size, rng, staging), size, seed, LayoutParams(), staging)
    placed: list[PlacedTile] = []
    drawn = {number: tile if isinstance(tile, Tile) else Tile.parse(tile) for number, tile in tiles.items()}
    world: dict[int, tuple[float, float]] = {}
    for index, (number, tile) in enumerate(drawn.items()):
        x, y, angle = seat_spot(seats[number])
        x, y = x + float(rng.uniform(-25, 25)), y + float(rng.uniform(-15, 15))
        world[number] = (x, y)
        pose = TilePose(x, y, angle + float(rng.uniform(-15, 15)))
        placed.append(PlacedTile(tile, pose, LOOSE_SET, index, number))
    if heap:
        for _ in range(HEAP_TILES):
            r, a = 90 * math.sqrt(float(rng.random())), float(rng.uniform(0, 2 * math.pi))
            pose = TilePose(r * math.cos(a), r * math.sin(a), float(rng.uniform(0, 360)), face_up=False)
            placed.append(PlacedTile(None, pose, POOL_SET))
    still = film.still(placed, [])
    image = still[JITTER_PX : JITTER_PX + size[1], JITTER_PX : JITTER_PX + size[0]].copy()
    centres: dict[int, tuple[float, float]] = {}
    for number, (x, y) in world.items():
        px = film.camera.project(np.array([[x, y, 0.0]]))[0] - JITTER_PX
        centres[number] = (float(px[0]), float(px[1]))
    return DrawPhoto(image, drawn, centres, seed)
