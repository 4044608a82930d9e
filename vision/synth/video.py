"""Filming a simulated game: one fixed overhead camera, hands over the table during moves, still between.

Every distinct table state is rendered once (the expensive part: tiles in perspective, shadows, lighting);
frames are then cut from it with a small camera jitter, hands drawn in a region of interest and sensor noise
added, and a second thread encodes while the first draws. The ground truth (``truth.jsonl``) has a header
line, then one line per move (the simulation's move with its frames: ``start_frame`` when hands come in,
``settle_frame`` when the table is still again, ``end_frame`` at the clock press) and one line per
``restore`` event (after a ruling that reverts, the table is put back as it was).

Size: 784 lines: the staging and the layout kept across moves (:class:`LayoutKeeper`), the film's camera and play area,
the :func:`timeline` of frames per move, the opening frame, :func:`write_game` and the frame making (the still cache,
hands, noise, the encoding thread). The next split is the frame making (``_StillCache``, ``_frames``, ``_with_hand``,
``_AsyncWriter``, about 150 lines) into a module of its own (to do).
"""

from __future__ import annotations

import json
import math
import queue
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.sets import TileSet
from referee.table import Table
from referee.tiles import Tile
from vision.runtime.progress import ProgressBar
from vision.runtime.seats import MIDDLE, Edge, Seat, seating
from vision.synth import distractors, effects, textures
from vision.synth.game import LateMove, SimGame, SimMove, simulate_game
from vision.synth.geometry import TILE_HEIGHT_MM, TILE_WIDTH_MM, Camera, TilePose
from vision.synth.layout import (
    LOOSE_SET,
    POOL_SET,
    Area,
    LayoutParams,
    Occupancy,
    PlacedTile,
    SetPlacement,
    lay_out_rack,
    place_set_tiles,
    set_footprint,
)
from vision.synth.scene import FILM_STYLES, Canvas, style_pool

JITTER_PX = 3
"""Margin rendered around the frame so the camera can shake by up to this many pixels."""
HAND_RATE_HZ = 10.0
RACK_SHOWN = 20
"""Most tiles drawn on a rack at an edge's middle; on a shared edge :data:`SHARED_RACK_SHOWN` (two racks fit)."""
SHARED_RACK_SHOWN = 18
TRUTH_FORMAT = "rummikub-referee/synth-game-video/1"
LATE_HANDS_OFF_S = 0.2
"""A scripted late move's hands leave the table this long before its time limit passes..."""
LATE_HANDS_BACK_S = 0.3
"""...and, touched after the limit or unfinished at it, come back this long after it: the pause straddles the limit
and is too short for the referee's pipeline to settle the table (4 samples at 6 a second), so the move goes on."""
MAX_PAUSE_S = 30.0
"""The longest pause ``synth-game --paused-move`` films (a play's hands are over the table well under a minute)."""


@dataclass(frozen=True, slots=True)
class Segment:
    """A stretch of video: the table state shown, and hands (from a seat) over it or not."""

    start_s: float
    end_s: float
    state: int
    hands_seat: Seat | None = None


@dataclass(frozen=True, slots=True)
class Staging:
    """What the film shows beyond the game. The default is the plain table every earlier game had (the same seed
    films the same frames); the rest is drawn from its own seeds, so a game's moves and truth stay the same."""

    clutter: bool = False
    """What real tables have: a cup, a score sheet and a phone in the table's corners, a tablecloth whose edge lies
    on the table, players' sleeves resting on the table's edge, and the next table (its tiles face up) at the
    frame's border."""
    tilt_deg: float | None = None
    """The camera's tilt from straight down, towards seat 0 (up to 30); None: 0-12 degrees, drawn from the seed."""
    glare: bool = False
    """A strong glare spot over the play area."""
    distortion: float = 0.0
    """Radial lens distortion ``k1`` (mild: -0.1 to 0.1; negative is barrel)."""

    def __post_init__(self) -> None:
        if self.tilt_deg is not None and not 0 <= self.tilt_deg <= 45:
            raise ValueError(f"a camera tilt is 0 to 45 degrees from straight down, not {self.tilt_deg}")
        if not -0.3 <= self.distortion <= 0.3:
            raise ValueError(f"lens distortion k1 is -0.3 to 0.3, not {self.distortion}")

    @property
    def plain(self) -> bool:
        return self == Staging()

    def describe(self) -> dict[str, Any]:
        return {"clutter": self.clutter, "tilt_deg": self.tilt_deg, "glare": self.glare, "distortion": self.distortion}


class LayoutKeeper:
    """Keeps sets where they lie from one table state to the next, as players do.

    An unchanged set keeps its place; a set that grew or shrank stays anchored on the tiles it shares with
    the set it came from; a brand-new set goes to free space, facing the seat of the player who laid it.
    """

    def __init__(self, area: Area, seed: int, scale: float, params: LayoutParams) -> None:
        self.area, self.seed, self.scale, self.params = area, seed, scale, params
        self.pitch = TILE_WIDTH_MM * scale + float(np.mean(params.tile_gap_mm))
        self.previous: list[tuple[TileSet, SetPlacement]] = []
        self.loose_spots: dict[int, tuple[float, float, float]] = {}
        self.rng = np.random.default_rng(seed)

    def place(self, table: Table, seat: int) -> list[PlacedTile]:
        """The table's tiles where they lie; a new set faces the edge ``seat`` (0-3,
        :class:`vision.runtime.seats.Edge`)."""
        occupancy = Occupancy(self.area)
        unused = list(self.previous)
        placements: list[SetPlacement | None] = [None] * len(table.sets)
        # Unchanged sets first, so moved ones cannot take their place.
        for index, tile_set in enumerate(table.sets):
            for j, (old, old_placement) in enumerate(unused):
                if old.layout_key == tile_set.layout_key:
                    placements[index] = old_placement
                    self._mark(occupancy, tile_set, old_placement, 2.0)
                    del unused[j]
                    break
        for index, tile_set in enumerate(table.sets):
            if placements[index] is None:
                found = self._grown(tile_set, unused, occupancy) or self._free(tile_set, seat, occupancy)
                placements[index] = found
                self._mark(occupancy, tile_set, found, 2.0)
        self.previous = [(s, p) for s, p in zip(table.sets, placements, strict=True) if p is not None]
        placed: list[PlacedTile] = []
        for index, (tile_set, placement) in enumerate(self.previous):  # every set has its place by now
            rng = np.random.default_rng(zlib.crc32(f"{self.seed}/{placement}/{tile_set}".encode()))
            placed += place_set_tiles(tile_set.tiles, placement, index, rng, self.params, self.scale)
        for index, tile in enumerate(table.loose):
            x, y, angle = self._loose_spot(index, occupancy)
            pose = TilePose(x, y, angle, width=TILE_WIDTH_MM * self.scale, height=TILE_HEIGHT_MM * self.scale)
            placed.append(PlacedTile(tile, pose, LOOSE_SET, index))
        return placed

    def _mark(self, occupancy: Occupancy, tile_set: TileSet, placement: SetPlacement, margin: float) -> None:
        occupancy.mark(self._footprint(tile_set, placement, margin))

    def _footprint(self, tile_set: TileSet, placement: SetPlacement, margin: float) -> np.ndarray:
        w, h = TILE_WIDTH_MM * self.scale, TILE_HEIGHT_MM * self.scale
        return set_footprint(len(tile_set), placement, w, h, self.pitch, margin)

    def _grown(
        self, tile_set: TileSet, unused: list[tuple[TileSet, SetPlacement]], occupancy: Occupancy
    ) -> SetPlacement | None:
        best = max(
            range(len(unused)),
            key=lambda j: sum((Counter(unused[j][0].tiles) & Counter(tile_set.tiles)).values()),
            default=None,
        )
        if best is None or not Counter(unused[best][0].tiles) & Counter(tile_set.tiles):
            return None
        old, placement = unused[best]
        shared = next((t for t in old.tiles if t in tile_set.tiles and not t.is_joker), old.tiles[0])
        shift = (tile_set.tiles.index(shared) if shared in tile_set.tiles else 0) - old.tiles.index(shared)
        a = math.radians(placement.angle_deg)
        anchored = SetPlacement(
            placement.x - shift * self.pitch * math.cos(a),
            placement.y - shift * self.pitch * math.sin(a),
            placement.angle_deg,
        )
        if occupancy.free(self._footprint(tile_set, anchored, 3.0)):
            del unused[best]
            return anchored
        return None

    def _free(self, tile_set: TileSet, seat: int, occupancy: Occupancy) -> SetPlacement:
        angle = 90.0 * seat + float(self.rng.normal(0, 2.0))
        for margin in (12.0, 6.0, 3.0):
            for _ in range(150):
                placement = SetPlacement(
                    float(self.rng.uniform(self.area.x0, self.area.x1)),
                    float(self.rng.uniform(self.area.y0, self.area.y1)),
                    angle,
                )
                if occupancy.free(self._footprint(tile_set, placement, margin)):
                    return placement
        raise RuntimeError(f"no room left on the table for the set {tile_set}")

    def _loose_spot(self, index: int, occupancy: Occupancy) -> tuple[float, float, float]:
        if index not in self.loose_spots:
            point = occupancy.random_free_point(self.rng, 25.0) or (self.area.x0 + 30, self.area.y0 + 30)
            self.loose_spots[index] = (point[0], point[1], float(self.rng.uniform(0, 360)))
        return self.loose_spots[index]


@dataclass
class GameFilm:
    """The fixed parts of the film: camera, edition, table, light; and each table state's still frame."""

    camera: Camera
    size: tuple[int, int]
    seed: int
    params: LayoutParams
    staging: Staging = Staging()

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        pool = style_pool(*FILM_STYLES)
        self.style_index = int(rng.integers(len(pool)))
        """The tile set's index in the films' style pool (:data:`FILM_STYLES`; the truth header's ``style_index``)."""
        self.style = pool[self.style_index]
        self.material = str(rng.choice(textures.TABLE_MATERIALS["train"]))
        lighting = effects.sample_lighting(rng, "train")
        self.lighting = replace(lighting, glare=lighting.glare[:1])
        self.sensor = effects.sample_sensor(rng, self.size)
        self.rng = rng
        self.extras = np.random.default_rng([self.seed, 23])
        """The staging's own draws (the plain film's stay as they were)."""
        if self.staging.glare:
            x, y = self.extras.uniform(0.4, 0.6, 2)
            self.lighting = replace(self.lighting, glare=((float(x), float(y), 0.13, 0.85),))
        self.arms: list[dict[str, Any]] = []
        self.background = self._background()
        self.noise = [
            rng.normal(0, max(self.sensor.noise_sigma, 1.5), (self.camera.height, self.camera.width, 1)).astype(
                np.int16
            )
            for _ in range(6)
        ]

    def _background(self) -> np.ndarray:
        canvas = Canvas(self.camera, np.random.default_rng(self.seed + 1))
        canvas.draw_table(self.material, TABLE_AREA)
        if self.staging.clutter:
            self._clutter(canvas)
        return canvas.image

    def _clutter(self, canvas: Canvas) -> None:
        """The next table at the frame's border, a tablecloth, things in the table's corners; sleeves for later."""
        rng = self.extras
        canvas.rng = rng
        others = [m for m in textures.TABLE_MATERIALS["train"] if m != self.material]
        side = 1 if rng.random() < 0.5 else -1
        near = TABLE_AREA.x1 + float(rng.uniform(40, 90))
        neighbour = Area(near, -500.0, near + 900, 500.0) if side > 0 else Area(-near - 900, -500.0, -near, 500.0)
        canvas.draw_table(str(rng.choice(others)), neighbour, room=False)
        self.neighbour_tiles = _neighbour_tiles(neighbour, side, rng)
        margin = rng.uniform(50, 80, 4)
        cloth = Area(
            PLAY_AREA.x0 - margin[0], PLAY_AREA.y0 - margin[1], PLAY_AREA.x1 + margin[2], PLAY_AREA.y1 + margin[3]
        )
        canvas.draw_table(str(rng.choice([m for m in others if m != self.material])), cloth, room=False)
        # Corners clear of the play area (the pool has the top right one): a cup, a score sheet, a phone.
        for kind, (cx, cy) in zip(("cup", "score_sheet", "phone"), ((-1, -1), (-1, 1), (1, -1)), strict=True):
            # In the middle of the corner outside the play area (a cup's rim and its shadow just clear of it; a
            # sheet folded to A6 and a phone, standing up in the picture, fit there).
            x = cx * ((PLAY_AREA.x1 + TABLE_AREA.x1) / 2 + float(rng.uniform(-8, 8)))
            y = cy * ((PLAY_AREA.y1 + TABLE_AREA.y1) / 2 + float(rng.uniform(-8, 8)))
            centre, ppm = _image_point(self.camera, (x, y))
            if centre is None:
                continue
            draw = getattr(distractors, f"draw_{kind}")
            if kind == "cup":
                draw(canvas.image, canvas.occluders, rng, centre=centre, px_per_mm=ppm * 0.85)
            else:
                shrink = 0.65 if kind == "score_sheet" else 0.8
                angle = float(rng.normal(0, 8))
                draw(canvas.image, canvas.occluders, rng, centre=centre, angle_deg=angle, px_per_mm=ppm * shrink)
        # Sleeves resting on the table's edge, reaching towards the play area (drawn over racks in each still).
        for edge in (Edge(int(e)) for e in rng.choice([Edge.BOTTOM, Edge.LEFT, Edge.RIGHT], size=2, replace=False)):
            along = float(rng.uniform(-0.3, 0.3))
            if edge is Edge.BOTTOM:
                entry, tip = (
                    (along * TABLE_AREA.width, TABLE_AREA.y0 - 150),
                    (along * TABLE_AREA.width * 0.8, PLAY_AREA.y0 - 25),
                )
            else:
                x_out = TABLE_AREA.x0 - 150 if edge is Edge.LEFT else TABLE_AREA.x1 + 150
                x_in = PLAY_AREA.x0 - 25 if edge is Edge.LEFT else PLAY_AREA.x1 + 25
                entry, tip = (x_out, along * TABLE_AREA.height), (x_in, along * TABLE_AREA.height * 0.8)
            seed = int(rng.integers(2**31))
            self.arms.append({"entry": entry, "tip": tip, "seed": seed, "seat": int(edge)})

    def still(self, placed: list[PlacedTile], racks: list[np.ndarray]) -> np.ndarray:
        canvas = Canvas(self.camera, np.random.default_rng(self.seed + 2))
        canvas.image[:] = self.background
        placed = placed + getattr(self, "neighbour_tiles", [])
        canvas.draw_shadows(placed, racks, self.lighting)
        for body in racks:
            canvas.draw_box(body, (30, 30, 34), self.lighting)
        canvas.draw_tiles(placed, self.style, self.lighting)
        for arm in self.arms:
            entry, ppm = _image_point(self.camera, arm["entry"], inside=False)
            tip, _ = _image_point(self.camera, arm["tip"], inside=False)
            if entry is not None and tip is not None:
                distractors.draw_hand(
                    canvas.image, canvas.occluders, np.random.default_rng(arm["seed"]), entry=entry, tip=tip,
                    px_per_mm=ppm, skin_bgr=_SKINS[arm["seat"]], sleeve_bgr=_SLEEVES[arm["seat"]],
                )  # fmt: skip
        image = effects.apply_lighting(canvas.image, self.lighting)
        maps = self.camera.distortion_maps()
        if maps is not None:
            image = cv2.remap(image, *maps, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        return image


def _image_point(
    camera: Camera, point_mm: tuple[float, float], *, inside: bool = True
) -> tuple[tuple[float, float] | None, float]:
    """A table point in the undistorted render, and how many pixels a millimetre is there."""
    pts = camera.project(np.array([[point_mm[0], point_mm[1], 0], [point_mm[0] + 10, point_mm[1], 0]]), distort=False)
    if np.isnan(pts).any():
        return None, 1.0
    ppm = float(np.linalg.norm(pts[1] - pts[0]) / 10)
    if inside and not (0 <= pts[0, 0] < camera.width and 0 <= pts[0, 1] < camera.height):
        return None, ppm
    return (float(pts[0, 0]), float(pts[0, 1])), ppm


def _neighbour_tiles(area: Area, side: int, rng: np.random.Generator) -> list[PlacedTile]:
    """A few face-up tiles on the next table, near its edge that faces ours (never table tiles of this game)."""
    colours, tiles = ("red", "blue", "black", "orange"), []
    edge = area.x0 if side > 0 else area.x1
    for index in range(int(rng.integers(4, 9))):
        x = edge + side * float(rng.uniform(20, 70))
        y = float(rng.uniform(-300, 300))
        tile = Tile.parse(f"{colours[int(rng.integers(4))]}-{int(rng.integers(1, 14))}")
        pose = TilePose(x, y, float(rng.uniform(0, 360)))
        tiles.append(PlacedTile(tile, pose, LOOSE_SET, index))
    return tiles


PLAY_AREA = Area(-430.0, -280.0, 430.0, 280.0)
TABLE_AREA = Area(-560.0, -420.0, 560.0, 420.0)


def film_camera(size: tuple[int, int], rng: np.random.Generator, staging: Staging = Staging()) -> Camera:
    """Straight overhead or nearly, framing the whole table; a margin for the jitter. A camera tilted further
    (``staging.tilt_deg``) stands back so the near edge stays in view."""
    width, height = size
    fov = float(rng.uniform(55, 70))
    drawn = float(rng.uniform(0, 12))
    tilt = math.radians(drawn if staging.tilt_deg is None else staging.tilt_deg)
    extent = max(TABLE_AREA.width * 0.92, TABLE_AREA.height * 0.92 * width / height)
    if staging.tilt_deg is not None:
        extent *= 1 + 0.8 * math.sin(tilt)
    distance = extent / 2 / math.tan(math.radians(fov) / 2)
    position = (0.0, -distance * math.sin(tilt), distance * math.cos(tilt))
    framed_width = width + 2 * JITTER_PX
    return Camera.looking_at(
        width=framed_width,
        height=height + 2 * JITTER_PX,
        horizontal_fov_deg=fov * framed_width / width,
        position=position,
        target=(0.0, 0.0, 0.0),
        roll_deg=float(rng.normal(0, 1.0)),
        k1=staging.distortion,
    )


def play_area_px(camera: Camera) -> list[list[float]]:
    """The play area's corners in the video's pixels (top-left, top-right, bottom-right, bottom-left).

    What an operator would give as the calibration's four corners; the frame is cut from the rendered one with
    the jitter margin, so the corners move by up to :data:`JITTER_PX` as the camera drifts.
    """
    area = PLAY_AREA
    world = np.array(
        [[area.x0, area.y0, 0.0], [area.x1, area.y0, 0.0], [area.x1, area.y1, 0.0], [area.x0, area.y1, 0.0]]
    )
    pixels = camera.project(world) - JITTER_PX
    by_row = pixels[np.argsort(pixels[:, 1])]
    top, bottom = by_row[:2], by_row[2:]
    top, bottom = top[np.argsort(top[:, 0])], bottom[np.argsort(bottom[:, 0])]
    ordered = [top[0], top[1], bottom[1], bottom[0]]
    return [[round(float(x), 1), round(float(y), 1)] for x, y in ordered]


def timeline(
    game: SimGame,
    rng: np.random.Generator,
    *,
    fps: float = 30.0,
    paused_move_s: float | None = None,
    paused_midway_s: float | None = None,
) -> tuple[list[Segment], list[dict[str, Any]], list[tuple[Table, Seat]]]:
    """Segments of video, the truth lines (seats by number), and the table states (with the seat that made each).

    A move scripted over time (:attr:`SimMove.late`) is filmed around the moment the referee's pipeline sees its
    limit pass (``analyze``'s sampling of a video of ``fps`` frames a second, :class:`_Referee`): hands leave the
    table :data:`LATE_HANDS_OFF_S` before it, with the table as it stands at the limit, and for a move touched after
    the limit or unfinished at it come back :data:`LATE_HANDS_BACK_S` after it and end the move.

    ``paused_move_s``: every play whose hands are over the table long enough (:func:`_pause`) is filmed with a pause:
    the player's hands reach in, leave the table for this many seconds before any tile is laid (the table as it
    was, still), then come back and make the move; the move's truth line gets ``pause_s`` (hands off, hands back).
    The move keeps its start, settle and end times, so its elapsed time and ruling stay the same.

    ``paused_midway_s``: the same, but the pause comes after some of the play's tiles are laid (:func:`half_laid`:
    the first half of the tiles from the rack, in the table's order; plays of one tile without a rearrangement are
    filmed as usual), the table half laid and still meanwhile (issue 16: the rules judge the table at the end of the
    turn); the truth line gets ``pause_s`` and ``half_laid`` (that table). Still one move in the truth.
    """
    if paused_move_s is not None and paused_midway_s is not None:
        raise ValueError("a play pauses before its first tile or after some are laid, not both")
    states: list[tuple[Table, Seat]] = []
    segments: list[Segment] = []
    truth: list[dict[str, Any]] = []
    now = 0.0
    # Only a late move is filmed on the pipeline's sampling grid (any frame rate films the rest).
    referee = _Referee(fps) if any(move.late is not None for move in game.moves) else None

    def state_of(table: Table, seat: Seat) -> int:
        if states and states[-1][0] == table:
            return len(states) - 1
        states.append((table, seat))
        return len(states) - 1

    seats = seating(game.players)
    for number, move in enumerate(game.moves):
        seat = seats[move.player]
        before = state_of(move.before, seat)
        if move.late is not None and referee is not None:
            truth.append(_late_segments(move, move.late, seat, segments, state_of, now, referee.limit_at(move.late)))
            now = segments[-1].end_s
            continue
        think = min(0.3 * move.duration_s, 8.0)
        settle = min(1.5, 0.15 * move.duration_s)
        start, end = now + think, now + move.duration_s
        settled = end - settle
        switch = start + 0.6 * (settled - start)
        segments.append(Segment(now, start, before))
        pause = _pause(move, start, switch, paused_move_s)
        half = half_laid(move) if paused_midway_s is not None else None
        midway = None if half is None else _pause(move, start, settled, paused_midway_s)
        if midway is not None and half is not None:
            pause = midway
            off, back = midway
            segments.append(Segment(start, start + 0.5 * (off - start), before, seat))
            halfway = state_of(half, seat)
            segments.append(Segment(start + 0.5 * (off - start), off, halfway, seat))
            segments.append(Segment(off, back, halfway))
            switch = back + 0.5 * (settled - back)
            segments.append(Segment(back, switch, halfway, seat))
        elif pause is None:
            segments.append(Segment(start, switch, before, seat))
        else:
            segments.append(Segment(start, pause[0], before, seat))
            segments.append(Segment(pause[0], pause[1], before))
            segments.append(Segment(pause[1], switch, before, seat))
        after = state_of(move.after, seat)
        segments.append(Segment(switch, settled, after, seat))
        segments.append(Segment(settled, end, after))
        if referee is not None:
            referee.settles(settled)
        truth.append(
            {
                "event": "move",
                **move.to_json(),
                "seat": seat.number,
                "start_s": start,
                "settle_s": settled,
                "end_s": end,
                **({} if pause is None else {"pause_s": [round(pause[0], 3), round(pause[1], 3)]}),
                **({} if midway is None or half is None else {"half_laid": half.to_json()}),
            }
        )
        now = end
        if move.verdict != "ok":
            restored = game.moves[number + 1].before if number + 1 < len(game.moves) else None
            if restored is not None and restored != move.after:
                duration = float(rng.uniform(6, 12))
                target = state_of(restored, seat)
                segments.append(Segment(now, now + duration * 0.5, after, seat))
                segments.append(Segment(now + duration * 0.5, now + duration * 0.85, target, seat))
                segments.append(Segment(now + duration * 0.85, now + duration, target))
                truth.append(
                    {
                        "event": "restore",
                        "seat": seat.number,
                        "after_move": move.index,
                        "start_s": now,
                        "settle_s": now + duration * 0.85,
                        "end_s": now + duration,
                        "table": restored.to_json(),
                    }
                )
                now += duration
    return segments, truth, states


PAUSE_HANDS_S = 1.0
"""A paused move's hands are over the table at least this long before the pause and after it."""


def half_laid(move: SimMove) -> Table | None:
    """The table of a play paused midway: its ``after`` without the second half of the tiles it brought from the
    rack (in the table's order; a set left empty is gone). None for a draw, or where that table would be the one
    before or after the move (one tile from the rack and no rearrangement)."""
    if move.kind != "play":
        return None
    brought = Counter(move.after.tiles()) - Counter(move.before.tiles())
    from_rack: list[tuple[int, int]] = []
    for place, tile in reversed(list(move.after.places())):  # a tile's last copies on the table are the ones brought
        if brought[tile] > 0:
            brought[tile] -= 1
            from_rack.insert(0, place)
    later = set(from_rack[(len(from_rack) + 1) // 2 :])
    sets = [
        [tile for j, tile in enumerate(tile_set) if (i, j) not in later] for i, tile_set in enumerate(move.after.sets)
    ]
    loose = [tile for (i, j), tile in move.after.places() if i < 0 and (i, j) not in later]
    half = Table(tuple(TileSet.of(tiles) for tiles in sets if tiles), tuple(loose))
    if not later or half.same_layout(move.before) or half.same_layout(move.after):
        return None
    return half


def _pause(move: SimMove, start: float, switch: float, pause_s: float | None) -> tuple[float, float] | None:
    """When a paused move's hands leave the table and come back (see :func:`timeline`): between ``start`` (hands in)
    and ``switch`` (the first tile laid), :data:`PAUSE_HANDS_S` after the one and before the other; None for a draw,
    a move over time, no pause asked for, or hands over the table too briefly for one."""
    if pause_s is None or move.kind != "play" or move.late is not None:
        return None
    if switch - start < pause_s + 2 * PAUSE_HANDS_S:
        return None
    off = start + PAUSE_HANDS_S
    return off, off + pause_s


class _Referee:
    """When ``analyze``'s pipeline, at its default settings, rules each move of a filmed game: it samples the video's
    frames on a grid of ``1 / sample_hz`` (while the table is still, every other point of it), reads a still table
    three times to settle it, and a turn's time starts when the previous move is ruled (the first one's when the
    first table is read)."""

    def __init__(self, fps: float) -> None:
        from vision.game.pipeline import QUIET_SLACK_S, PipelineConfig

        config = PipelineConfig()
        busy_step, still_step = max(1, round(fps / config.sample_hz)), max(1, round(fps / 3.0))
        if still_step % busy_step:
            raise ValueError(f"a late move is filmed for a video whose sampling the pipeline keeps on one grid: {fps:g}"
                             f" frames a second is not (30, 24, 12 or 6 are)")  # fmt: skip
        self.period_s = busy_step / fps
        quiet = math.ceil((config.quiet_s - QUIET_SLACK_S) / self.period_s - 1e-9)
        self.settle_samples = quiet + config.readings - 1
        """Samples from the first one without hands (it still sees them leave: motion) to the ruling."""
        self.turn_started_s = (config.readings - 1) * self.period_s
        self.limit_s: float | None = None

    def settles(self, hands_off_s: float) -> None:
        """A move whose hands left the table at ``hands_off_s`` is ruled; the next turn starts then."""
        first_still = math.ceil(hands_off_s / self.period_s - 1e-9)
        self.turn_started_s = (first_still + self.settle_samples) * self.period_s

    def limit_at(self, late: LateMove) -> float:
        return self.turn_started_s + late.limit_s


def _late_segments(
    move: SimMove, late: LateMove, seat: Seat, segments: list[Segment], state_of: Any, now: float, limit_at: float
) -> dict[str, Any]:
    """The segments of a move scripted over time (see :func:`timeline`), and its truth line."""
    before = state_of(move.before, seat)
    hands_off = limit_at - LATE_HANDS_OFF_S
    start = max(now + 1.0, hands_off - 4.0)
    if start >= hands_off - 0.5:
        raise ValueError(f"a late move needs its turn to last more than {start - now + 0.5:.1f} s: {late.limit_s:g} s")
    switch = start + 0.6 * (hands_off - start)
    segments.append(Segment(now, start, before))
    segments.append(Segment(start, switch, before, seat))
    at_limit = state_of(late.table_at_limit, seat)
    segments.append(Segment(switch, hands_off, at_limit, seat))
    settled = hands_off
    if late.touched_after_limit:
        back = limit_at + LATE_HANDS_BACK_S
        segments.append(Segment(hands_off, back, at_limit))
        segments.append(Segment(back, back + 0.6, at_limit, seat))
        settled = back + 1.2
        segments.append(Segment(back + 0.6, settled, state_of(move.after, seat), seat))
    end = settled + 1.5
    segments.append(Segment(settled, end, state_of(move.after, seat)))
    return {"event": "move", **move.to_json(), "seat": seat.number, "start_s": start, "settle_s": settled,
            "end_s": end, "limit_at_s": round(limit_at, 3)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class OpeningFrame:
    """A game's first frame (the table before the first move) and where things are in it."""

    image: np.ndarray
    play_area_px: list[list[float]]
    rack_tiles_px: np.ndarray
    """The centres of the tiles standing in racks (N x 2), and of the face-down pool: never table tiles."""
    pool_px: np.ndarray
    camera: Camera


def opening_frame(
    *, players: int, seed: int, profile: str = "official", size: tuple[int, int] = (1920, 1080),
    staging: Staging = Staging(),
) -> OpeningFrame:  # fmt: skip
    """The first frame :func:`write_game` would film for these arguments (without the camera's jitter and noise),
    for tests and measurements of what the camera sees."""
    game = simulate_game(players=players, seed=seed, violation_rate=0.0, profile=profile, max_duration_s=120)
    rng = np.random.default_rng([seed, 7])
    film = GameFilm(film_camera(size, rng, staging), size, seed, LayoutParams(), staging)
    _, _, states = timeline(game, rng)
    stills = _StillCache(film, game, states, seed)
    image = stills.get(0)[JITTER_PX : JITTER_PX + size[1], JITTER_PX : JITTER_PX + size[0]]
    seats = seating(game.players)
    racks, racks_rng = [], np.random.default_rng(film.seed + 5)  # as the still drew them
    for player, tiles in stills.racks.items():
        shown = RACK_SHOWN if seats[player].along == MIDDLE else SHARED_RACK_SHOWN
        rack_tiles, _ = lay_out_rack(seats[player], TABLE_AREA, tiles[:shown], racks_rng, 1.0)
        racks += [t.pose.centre() for t in rack_tiles]
    pool = [t.pose.centre() for t in stills.pool[:40]]
    project = lambda points: film.camera.project(np.array(points).reshape(-1, 3)) - JITTER_PX  # noqa: E731
    return OpeningFrame(image.copy(), play_area_px(film.camera), project(racks), project(pool), film.camera)


def write_game(
    out: Path,
    *,
    players: int,
    seed: int,
    violation_rate: float,
    profile: str,
    minutes: float,
    size: tuple[int, int] = (1920, 1080),
    fps: float = 30.0,
    progress: bool = True,
    staging: Staging = Staging(),
    time_limit_s: float | None = None,
    late_move: str | None = None,
    paused_move_s: float | None = None,
    paused_midway_s: float | None = None,
) -> dict[str, Any]:
    """Simulate a game and film it into ``out`` (``game.mp4``, ``truth.jsonl``, ``summary.json``). ``time_limit_s``:
    a limit agreed at the table; ``late_move``: the game's first play goes over it, scripted as
    :data:`vision.synth.game.LATE_MOVES` names, and the game ends there; ``paused_move_s``: plays filmed with a pause
    of that many seconds, hands off the table before the first tile is laid; ``paused_midway_s``: the same after some
    of the play's tiles are laid (:func:`timeline`)."""
    for pause_s in (paused_move_s, paused_midway_s):
        if pause_s is not None and not 0 < pause_s <= MAX_PAUSE_S:
            raise ValueError(f"a paused move's pause is more than 0 and at most {MAX_PAUSE_S:g} s, not {pause_s:g}")
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    game = simulate_game(
        players=players, seed=seed, violation_rate=violation_rate, profile=profile, max_duration_s=minutes * 60,
        time_limit_s=time_limit_s, late_move=late_move,
    )  # fmt: skip
    rng = np.random.default_rng([seed, 7])
    film = GameFilm(film_camera(size, rng, staging), size, seed, LayoutParams(), staging)
    segments, truth, states = timeline(game, rng, fps=fps, paused_move_s=paused_move_s, paused_midway_s=paused_midway_s)
    stills = _StillCache(film, game, states, seed)
    total_s = segments[-1].end_s if segments else 0.0
    frames = round(total_s * fps)
    video_path, truth_path = out / "game.mp4", out / "truth.jsonl"
    writer = _AsyncWriter(video_path, fps, size)
    bar = ProgressBar(frames, label="frames", rate=True) if progress else None
    try:
        for index, frame in enumerate(_frames(film, segments, stills, fps, frames, rng)):
            writer.write(frame)
            if bar and index % 30 == 0:
                bar.advance(min(30, frames - index))
    finally:
        writer.close()
        if bar:
            bar.finish()
    header = {
        "format": TRUTH_FORMAT,
        **game.header(),
        "video": video_path.name,
        "fps": fps,
        "frames": frames,
        "size": list(size),
        "camera": film.camera.describe(),
        "jitter_px": JITTER_PX,
        "play_area_px": play_area_px(film.camera),
        "play_area_mm": [PLAY_AREA.width, PLAY_AREA.height],
        "style": film.style.describe(),
        "style_index": film.style_index,
        "material": film.material,
        "lighting": film.lighting.describe(),
    }
    if not staging.plain:
        header["staging"] = staging.describe()
    if paused_move_s is not None:
        header["paused_move_s"] = paused_move_s
        header["paused_moves"] = sum("pause_s" in line for line in truth)
    if paused_midway_s is not None:
        header["paused_midway_s"] = paused_midway_s
        header["paused_moves"] = sum("pause_s" in line for line in truth)
    with truth_path.open("w") as handle:
        handle.write(json.dumps(header, sort_keys=True) + "\n")
        for line in truth:
            timed = {**line, **{f"{k}_frame": round(line[f"{k}_s"] * fps) for k in ("start", "settle", "end")}}
            handle.write(json.dumps(timed, sort_keys=True) + "\n")
    summary: dict[str, Any] = {
        "video": str(video_path),
        "truth": str(truth_path),
        "frames": frames,
        "duration_s": total_s,
        "moves": len(game.moves),
        "injected": sum(game.injection_counts().values()),
        "seconds": time.perf_counter() - started,
        "distinct_states": len(states),
    }
    summary["speed_x_real_time"] = round(total_s / summary["seconds"], 2) if summary["seconds"] else None
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return summary


class _StillCache:
    """Renders each table state once (with the racks and the pool as they are then), keeps the last few."""

    def __init__(self, film: GameFilm, game: SimGame, states: list[tuple[Table, Seat]], seed: int) -> None:
        self.film, self.game, self.states = film, game, states
        self.keeper = LayoutKeeper(PLAY_AREA, seed, 1.0, film.params)
        self.layouts: dict[int, list[PlacedTile]] = {}
        self.cache: dict[int, np.ndarray] = {}
        self.pool = _pool_heap(np.random.default_rng(seed + 3), seating(game.players))
        self.racks = self._rack_contents()

    def _rack_contents(self) -> dict[int, list[Tile]]:
        racks: dict[int, list[Tile]] = {}
        for move in self.game.moves:
            racks.setdefault(move.player, list(move.rack_before))
        return racks

    def get(self, state: int) -> np.ndarray:
        if state not in self.cache:
            for earlier in range(len(self.layouts), state + 1):  # layouts must be made in order
                table, seat = self.states[earlier]
                self.layouts[earlier] = self.keeper.place(table, seat.edge)
            placed = list(self.layouts[state])
            seats = seating(self.game.players)
            racks = []
            rng = np.random.default_rng(self.film.seed + 5)
            for player, tiles in self.racks.items():
                shown = RACK_SHOWN if seats[player].along == MIDDLE else SHARED_RACK_SHOWN
                rack_tiles, body = lay_out_rack(seats[player], TABLE_AREA, tiles[:shown], rng, 1.0)
                placed += rack_tiles
                racks.append(body)
            placed += self.pool[: max(8, 40 - state // 2)]
            if len(self.cache) > 6:
                self.cache.pop(next(iter(self.cache)))
            self.cache[state] = self.film.still(placed, racks)
        return self.cache[state]


def _pool_heap(rng: np.random.Generator, seats: tuple[Seat, ...]) -> list[PlacedTile]:
    """Face-down tiles outside the play area (as at a tournament), in the top right corner: nearer the play area
    and tighter where two racks share the top edge, so the heap stays off them."""
    if any(seat.edge is Edge.TOP and seat.along != MIDDLE for seat in seats):
        centre, spread = np.array([PLAY_AREA.x1 + 98.0, PLAY_AREA.y1 + 42.0]), 14.0
    else:
        centre, spread = np.array([PLAY_AREA.x1 + 95.0, PLAY_AREA.y1 + 70.0]), 20.0
    heap = []
    for _ in range(40):
        x, y = centre + rng.normal(0, spread, 2)
        heap.append(PlacedTile(None, TilePose(float(x), float(y), float(rng.uniform(0, 360)), face_up=False), POOL_SET))
    return heap


def _frames(
    film: GameFilm, segments: list[Segment], stills: _StillCache, fps: float, total: int, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    width, height = film.size
    offset = np.array([JITTER_PX, JITTER_PX])
    hand_every = max(1, round(fps / HAND_RATE_HZ))
    segment_index = 0
    hand_frame: np.ndarray | None = None
    for index in range(total):
        t = index / fps
        while segment_index < len(segments) - 1 and t >= segments[segment_index].end_s:
            segment_index += 1
        segment = segments[segment_index]
        if index % 15 == 0:  # the camera drifts a little, a pixel at a time
            offset = np.clip(offset + rng.integers(-1, 2, 2), 0, 2 * JITTER_PX)
        still = stills.get(segment.state)
        if segment.hands_seat is None:
            frame = still
            hand_frame = None
        elif hand_frame is None or index % hand_every == 0:
            hand_frame = _with_hand(still, segment, t, film, rng)
            frame = hand_frame
        else:
            frame = hand_frame
        x, y = offset
        crop = frame[y : y + height, x : x + width]
        yield _add_noise(crop, film.noise[index % len(film.noise)], x, y, width, height)


def _add_noise(crop: np.ndarray, noise: np.ndarray, x: int, y: int, width: int, height: int) -> np.ndarray:
    return np.clip(crop.astype(np.int16) + noise[y : y + height, x : x + width], 0, 255).astype(np.uint8)


def _with_hand(still: np.ndarray, segment: Segment, t: float, film: GameFilm, rng: np.random.Generator) -> np.ndarray:
    """The still frame with the player's arm reaching over the table (drawn in its bounding region only)."""
    h, w = still.shape[:2]
    seat = segment.hands_seat
    assert seat is not None
    number = seat.number
    phase = (t - segment.start_s) / max(segment.end_s - segment.start_s, 1e-3)
    reach = 0.35 + 0.25 * math.sin(math.pi * min(1.0, phase * 1.2))
    sway = 0.5 + 0.18 * math.sin(2 * math.pi * (t * 0.4 + number * 0.3))
    if seat.along != MIDDLE:  # in the player's own frame (left to right as they sit): about their place, half the sway
        own = seat.along if seat.edge in (Edge.BOTTOM, Edge.LEFT) else 1 - seat.along
        sway = own + (sway - 0.5) * 0.5
    entries = {0: (sway * w, h + 5), 1: (w + 5, (1 - sway) * h), 2: ((1 - sway) * w, -5), 3: (-5, sway * h)}
    ex, ey = entries[seat.edge]
    centre = (w / 2, h / 2)
    share = max(reach * 1.6, _least_reach(film.camera, (ex, ey), centre))
    tip = (ex + (centre[0] - ex) * share, ey + (centre[1] - ey) * share)
    ppm = film.camera.focal_px / film.camera.position[2]
    margin = int(120 * ppm)
    x0, y0 = max(0, int(min(ex, tip[0])) - margin), max(0, int(min(ey, tip[1])) - margin)
    x1, y1 = min(w, int(max(ex, tip[0])) + margin), min(h, int(max(ey, tip[1])) + margin)
    frame = still.copy()
    roi = frame[y0:y1, x0:x1]
    mask = np.zeros(roi.shape[:2], np.uint8)
    hand_rng = np.random.default_rng(zlib.crc32(f"hand/{number}/{int(t * HAND_RATE_HZ)}".encode()))
    distractors.draw_hand(
        roi, mask, hand_rng, entry=(ex - x0, ey - y0), tip=(tip[0] - x0, tip[1] - y0), px_per_mm=ppm,
        skin_bgr=_SKINS[number], sleeve_bgr=_SLEEVES[number],
    )  # fmt: skip
    return frame


HAND_DEPTH_MM = 75.0
"""How far into the play area (mm on the table, from its nearest edge) the fingertips reach at the least while a
player's hands are over the table, so the truth's hands-off time is when the play area is clear. An untilted camera
(``Staging.tilt_deg`` None: 0-12 degrees, field of view 55-70, roll up to 4) reaches 78 mm or more on its own
(measured), so those films are unchanged; a camera tilted 30 degrees stands back, and its hands stopped up to 50 mm
short of the edge."""


def _least_reach(camera: Camera, entry: tuple[float, float], centre: tuple[float, float]) -> float:
    """The least share of the way from ``entry`` to ``centre`` (the play area's middle, in the render's pixels) that
    puts the fingertip :data:`HAND_DEPTH_MM` inside the play area (found by bisection: deeper towards the middle)."""
    start, way = np.asarray(entry, float), np.subtract(centre, entry)

    def deep_enough(share: float) -> bool:
        x, y = camera.on_table((start + way * share)[None])[0]
        area = PLAY_AREA
        return bool(min(x - area.x0, area.x1 - x, y - area.y0, area.y1 - y) >= HAND_DEPTH_MM)  # NaN: False

    low, high = 0.0, 1.0
    if deep_enough(low):
        return low
    for _ in range(20):
        middle = (low + high) / 2
        low, high = (low, middle) if deep_enough(middle) else (middle, high)
    return high


_SKINS = {0: (150, 180, 225), 1: (95, 125, 170), 2: (120, 155, 205), 3: (70, 95, 140), 4: (135, 170, 215),
          5: (85, 110, 160), 6: (110, 145, 195), 7: (160, 190, 230)}  # fmt: skip
_SLEEVES = {0: (140, 60, 30), 1: (40, 40, 40), 2: (30, 110, 200), 3: (90, 140, 60), 4: (60, 60, 150),
            5: (120, 120, 120), 6: (40, 90, 40), 7: (150, 40, 110)}  # fmt: skip
"""By seat number (:data:`vision.runtime.seats.SEATS`)."""


class _AsyncWriter:
    """Encodes on a second thread (OpenCV releases the GIL while encoding) so drawing and encoding overlap."""

    def __init__(self, path: Path, fps: float, size: tuple[int, int]) -> None:
        self.writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"mp4v"), fps, size)
        if not self.writer.isOpened():
            raise OSError(f"cannot open a video writer for {path} (OpenCV without an MPEG-4 encoder?)")
        self.queue: queue.Queue[np.ndarray | None] = queue.Queue(maxsize=16)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while (frame := self.queue.get()) is not None:
                self.writer.write(frame)
        except BaseException as error:  # surfaced in close()
            self.error = error

    def write(self, frame: np.ndarray) -> None:
        if self.error:
            raise self.error
        self.queue.put(frame)

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        self.writer.release()
        if self.error:
            raise self.error
