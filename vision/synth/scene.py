"""Composing a synthetic photo of a Rummikub table, with exact labels.

One call, :func:`render_scene`, turns a :class:`SceneSpec` (everything random, drawn up front from a
seed) into an image plus its ground truth. Drawing order: table top (warped by the table homography),
shadows, tiles far to near (sides, then the face texture warped onto the projected face), objects on the
table, hands; then lens distortion, lighting and the sensor. Labels are the projected face outlines,
sampled for visibility against what was actually drawn over them.

Size: 638 lines, one module on purpose: one composer: the parameter and result types, :func:`render_scene` and the rack
view, the camera sampling, :class:`Canvas` (about 200 lines, which draws and records in ``ids`` and ``occluders`` what
covers what) and the labels, which are sampled against exactly those buffers, so drawing and labelling stay together.
Were it to grow, the rack view (``_render_rack_view``, ``_rack_camera``) is the part to move out.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from referee.profiles import get_profile
from referee.sets import check_set
from referee.table import Table
from referee.tiles import ALL_LABELS, JOKER, NUMBER_TILES
from vision.runtime.seats import SEATS
from vision.synth import distractors, editions, effects, faces, textures
from vision.synth.content import ContentParams, random_table
from vision.synth.geometry import Camera, TilePose, polygon_outline
from vision.synth.layout import (
    POOL_SET,
    RACK_SET,
    Area,
    LayoutParams,
    Occupancy,
    PlacedTile,
    RevealedRack,
    lay_out,
    lay_out_pool,
    lay_out_rack,
    lay_out_revealed_rack,
)

LABEL_INDEX = {label: i for i, label in enumerate(ALL_LABELS)}
ALL_TILES = (*NUMBER_TILES, JOKER)
JOKER_LABEL = str(JOKER)
VISIBILITY_GRID = (5, 7)
"""Sample points across the face (columns, rows) used to measure how much of a tile is visible."""
MAX_VIEW_ANGLE_DEG = 75.0
"""A face seen more than this far from straight on is not labelled readable: its digit is squeezed to a quarter of its
height or less (a rack's tiles seen from above, faces turned toward their player). On the 120 held-out edition scenes
(seed 14) the reader found none of the 35 rack tiles beyond 75 degrees, nor of 41 beyond 72.5, and 10 of 56 beyond
66.4; the visibility grid counts such a face seen, because its sample points land on the tile's own pixels."""
MIN_FACING = math.cos(math.radians(MAX_VIEW_ANGLE_DEG))
"""The cosine between a readable face's normal and the direction to the camera, at least."""


@dataclass(frozen=True, slots=True)
class CameraParams:
    tilt_deg: tuple[float, float] = (0.0, 50.0)
    horizontal_fov_deg: tuple[float, float] = (45.0, 75.0)
    fill: tuple[float, float] = (0.6, 1.4)
    """How much of the frame the play area fills (above 1: a close-up on part of the table)."""
    roll_deg: float = 8.0
    k1: tuple[float, float] = (-0.18, 0.05)


@dataclass(frozen=True, slots=True)
class SceneParams:
    size: tuple[int, int] = (1280, 960)
    split: str = "train"
    content: ContentParams = field(default_factory=ContentParams)
    layout: LayoutParams = field(default_factory=LayoutParams)
    camera: CameraParams = field(default_factory=CameraParams)
    pool_probability: float = 0.4
    rack_probability: float = 0.35
    hand_probability: float = 0.35
    distractor_probability: float = 0.6
    readable_visible: float = 0.6
    """A tile is labelled when at least this share of its face, and of its digit's region, is visible."""
    min_face_px: float = 9.0
    """...and its face is at least this many pixels wide and this many tall: a rack's tiles seen from above, their
    faces turned almost edge-on, are slivers a few pixels tall whose digits no one can read (on the 120 held-out
    edition scenes, seed 14, 23 rack tiles 1-12 px tall were labelled and counted missed before)."""
    style_pool: int = 64
    """Tile editions per split, drawn once from a fixed seed; each image takes one (faces are cached per edition)."""
    fonts: str = "base"
    """Digit font set: "base" (what the first datasets and the bench games used) or "wide" (more families).
    Ignored when ``editions`` are named: each edition names its own fonts."""
    editions: tuple[str, ...] = ()
    """Tile editions the style pool is drawn from (``vision.synth.editions.EDITION_NAMES``, and ``mix`` for
    random blends of the named ones); empty: the legacy modern-circle pool (``style_pool``/``fonts``), as the
    first datasets and the bench games were drawn."""
    lighting: str = "default"
    """``default`` (mostly warm indoor light) or ``wide`` (2700-7500 K, any white balance, more glare and shadow)."""
    sensor: str = "default"
    """``default`` or ``phone`` (a phone camera: chroma noise, sharpening halos, denoise smear, low JPEG)."""
    rack_view_probability: float = 0.0
    """Share of scenes showing a rack revealed at the end of a game, tiles standing in one or two rows, seen
    from the front or obliquely (20-55 degrees to the side) instead of a table from above. 0 (the default)
    draws nothing for it, so default scenes render exactly as before."""


@dataclass(frozen=True, slots=True)
class LabelledTile:
    label: str
    box: tuple[float, float, float, float]
    polygon: tuple[tuple[float, float], ...]
    rotation_deg: float
    """Which way the face's up points in the image, clockwise from straight up."""
    set_id: int
    position: int
    kind: str
    visible: float
    digit_visible: float
    readable: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "box": [round(v, 2) for v in self.box],
            "polygon": [[round(x, 2), round(y, 2)] for x, y in self.polygon],
            "rotation_deg": round(self.rotation_deg, 2),
            "set_id": self.set_id,
            "position": self.position,
            "kind": self.kind,
            "visible": round(self.visible, 3),
            "digit_visible": round(self.digit_visible, 3),
            "readable": self.readable,
        }


@dataclass
class RenderedScene:
    image: np.ndarray
    tiles: list[LabelledTile]
    table: Table
    instance_map: np.ndarray
    """Per pixel, 1 + the index in ``tiles`` of the face drawn there (0: none); for tests and debugging."""
    meta: dict[str, Any]

    def readable(self) -> list[LabelledTile]:
        return [t for t in self.tiles if t.readable]


@dataclass(frozen=True)
class DrawnScene:
    """What :func:`draw_scene` drew: the image, its labels, and the draws a sidecar records."""

    image: np.ndarray
    instance_map: np.ndarray
    tiles: list[LabelledTile]
    material: str
    lighting: effects.Lighting
    sensor: effects.Sensor
    decorated: Any = None
    """What ``decorate`` returned (the distractors' log of a table scene)."""


def draw_scene(
    rng: np.random.Generator,
    params: SceneParams,
    camera: Camera,
    placed: list[PlacedTile],
    style: faces.TileStyle,
    table_area: Area,
    boxes: Sequence[tuple[Any, tuple[int, int, int]]] = (),
    decorate: Callable[[Canvas, effects.Lighting], Any] | None = None,
) -> DrawnScene:
    """Every kind of scene drawn the same way, in the same order of random draws: faces reshaped to the style,
    then the table's material, the light and the sensor; the table, shadows, ``boxes`` (rack bodies with their
    BGR colour), the tiles, ``decorate`` (objects lying on the table), labels, and the camera's finish."""
    if style.face_aspect != faces.DEFAULT_FACE_ASPECT:
        placed = [replace(p, pose=_reshaped(p.pose, style.face_aspect)) for p in placed]
    material = str(rng.choice(textures.TABLE_MATERIALS[params.split]))
    lighting = effects.sample_lighting(rng, params.split, params.lighting)
    sensor = effects.sample_sensor(rng, params.size, params.sensor)
    canvas = Canvas(camera, rng)
    canvas.draw_table(material, table_area)
    canvas.draw_shadows(placed, [body for body, _ in boxes], lighting)
    for body, colour in boxes:
        canvas.draw_box(body, colour, lighting)
    tile_ids = canvas.draw_tiles(placed, style, lighting)
    decorated = decorate(canvas, lighting) if decorate is not None else None
    labelled = _labels(camera, placed, tile_ids, canvas, params)
    image, instance_map = canvas.finish(lighting, sensor)
    return DrawnScene(image, instance_map, labelled, material, lighting, sensor, decorated)


def render_scene(seed: int, params: SceneParams) -> RenderedScene:
    rng = np.random.default_rng(seed)
    if params.rack_view_probability > 0 and rng.random() < params.rack_view_probability:
        return _render_rack_view(seed, rng, params)
    table = random_table(rng, params.content)
    area = Area(-420.0, -300.0, 420.0, 300.0) if rng.random() < 0.5 else Area(-360.0, -360.0, 360.0, 360.0)
    placed, occupancy, scale = lay_out(table, area, rng, params.layout)
    if rng.random() < params.pool_probability:
        placed += lay_out_pool(area, int(rng.integers(6, 30)), rng, occupancy, scale)
    table_area = Area(area.x0 - 120, area.y0 - 120, area.x1 + 120, area.y1 + 120)
    racks = []
    if rng.random() < params.rack_probability:
        for seat in rng.choice(4, size=int(rng.integers(1, 4)), replace=False):
            rack_tiles = [ALL_TILES[i] for i in rng.integers(0, len(ALL_TILES), int(rng.integers(6, 16)))]
            tiles_on_rack, body = lay_out_rack(SEATS[int(seat)], table_area, rack_tiles, rng, scale)  # a middle seat
            placed += tiles_on_rack
            racks.append(body)
    camera = _sample_camera(rng, params, area, placed)
    style = _styles(params)[int(rng.integers(params.style_pool))]
    drawn = draw_scene(
        rng, params, camera, placed, style, table_area, [(body, RACK_COLOURS[0]) for body in racks],
        decorate=lambda canvas, lighting: canvas.draw_objects(occupancy, params, lighting),
    )  # fmt: skip
    meta = {
        "seed": seed,
        "split": params.split,
        "camera": camera.describe(),
        "lighting": drawn.lighting.describe(),
        "sensor": drawn.sensor.describe(),
        "style": style.describe(),
        "material": drawn.material,
        "objects": drawn.decorated,
        "face_down_tiles": sum(p.set_id == POOL_SET for p in placed),
        "sets": [
            {"id": i, "labels": [str(t) for t in s], "valid": check_set(s.tiles, get_profile("pl-championship")).valid}
            for i, s in enumerate(table.sets)
        ],
    }
    return RenderedScene(drawn.image, drawn.tiles, table, drawn.instance_map, meta)


RACK_COLOURS = ((30, 30, 34), (52, 50, 48), (150, 178, 196), (40, 70, 120))
"""Rack bodies (BGR): black, dark grey, cream, brown wood."""
DECK = (*NUMBER_TILES, *NUMBER_TILES, JOKER, JOKER)


def _render_rack_view(seed: int, rng: np.random.Generator, params: SceneParams) -> RenderedScene:
    """A rack turned to the camera at the end of a game (players reveal what they hold), seen from its front or
    obliquely, on the table's edge; the same drawing, lighting, sensor and labels as a table scene."""
    scale = float(rng.uniform(*params.layout.tile_scale))
    rows = 1 if rng.random() < 0.5 else 2
    counts = [int(rng.integers(3, 16)) for _ in range(rows)]
    picked = rng.choice(len(DECK), size=sum(counts), replace=False)  # never more copies than the set holds
    tiles = [DECK[i] for i in picked]
    rack = lay_out_revealed_rack([tiles[: counts[0]], tiles[counts[0] :]][:rows], rng, scale)
    camera, view = _rack_camera(rng, params, rack)
    style = _styles(params)[int(rng.integers(params.style_pool))]
    colour = RACK_COLOURS[int(rng.integers(len(RACK_COLOURS)))]
    table_area = Area(-rack.length / 2 - 600, -60.0, rack.length / 2 + 600, 900.0)
    drawn = draw_scene(rng, params, camera, rack.tiles, style, table_area, [(body, colour) for body in rack.bodies])
    meta = {
        "seed": seed,
        "split": params.split,
        "view": view,
        "camera": camera.describe(),
        "lighting": drawn.lighting.describe(),
        "sensor": drawn.sensor.describe(),
        "style": style.describe(),
        "material": drawn.material,
        "objects": [],
        "face_down_tiles": 0,
        "sets": [],
        "rack": {"rows": rack.rows, "tiles": [str(t) for t in tiles], "colour_bgr": list(colour)},
    }
    return RenderedScene(drawn.image, drawn.tiles, Table.of(loose=tiles), drawn.instance_map, meta)


def _rack_camera(rng: np.random.Generator, params: SceneParams, rack: RevealedRack) -> tuple[Camera, dict[str, Any]]:
    """A camera in front of the rack (the table's edge is at -y): head-on, or 20-55 degrees to a side."""
    oblique = bool(rng.random() < 0.5)
    azimuth = float(rng.uniform(20, 55)) * (1 if rng.random() < 0.5 else -1) if oblique else float(rng.normal(0, 5))
    elevation = float(rng.uniform(12, 45))  # flatter, and the table top is not drawn (Canvas.draw_table)
    fov = float(rng.uniform(*params.camera.horizontal_fov_deg))
    fill = float(rng.uniform(0.7, 1.25))
    seen = rack.length * max(math.cos(math.radians(azimuth)), 0.6) + 60
    distance = max(250.0, (seen / fill) / 2 / math.tan(math.radians(fov) / 2))
    target = np.array([float(rng.normal(0, 15)), 10.0, rack.height / 2])
    az, el = math.radians(azimuth), math.radians(elevation)
    position = target + distance * np.array([math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el), math.sin(el)])
    k1 = float(rng.uniform(*params.camera.k1)) if rng.random() < 0.5 else 0.0
    camera = Camera.looking_at(
        width=params.size[0],
        height=params.size[1],
        horizontal_fov_deg=fov,
        position=(float(position[0]), float(position[1]), float(position[2])),
        target=(float(target[0]), float(target[1]), float(target[2])),
        roll_deg=float(rng.normal(0, min(params.camera.roll_deg, 4.0))),
        k1=k1,
        up=(0.0, 0.0, 1.0),
    )
    view = {
        "kind": "rack-oblique" if oblique else "rack-front",
        "azimuth_deg": round(azimuth, 2),
        "elevation_deg": round(elevation, 2),
        "rows": rack.rows,
    }
    return camera, view


def _styles(params: SceneParams) -> tuple[faces.TileStyle, ...]:
    if not params.editions:
        return style_pool(params.split, params.style_pool, params.fonts)
    return _edition_pool(params.split, params.style_pool, params.editions)


@functools.cache
def _edition_pool(split: str, size: int, names: tuple[str, ...]) -> tuple[faces.TileStyle, ...]:
    return editions.edition_pool(split, size, names)


def _reshaped(pose: TilePose, aspect: float) -> TilePose:
    """The pose of a tile of another face aspect, never larger than the laid-out one (so none overlap)."""
    width, height = min(pose.width, pose.height * aspect), min(pose.height, pose.width / aspect)
    return replace(pose, width=width, height=height)


FILM_STYLES = ("train", 64)
"""The style pool (split, size) a filmed game draws its tile set from (:class:`vision.synth.video.GameFilm`; a
venue enrolling that set: :func:`vision.synth.grid.film_style`)."""


@functools.cache
def style_pool(split: str, size: int, fonts: str = "base") -> tuple[faces.TileStyle, ...]:
    """The tile editions of a split: the same for every dataset, so held-out editions stay held out."""
    key = f"tile-styles/{split}" if fonts == "base" else f"tile-styles/{split}/{fonts}"
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    return tuple(faces.sample_style(rng, split, fonts) for _ in range(size))


@functools.lru_cache(maxsize=4096)
def face_texture(style: faces.TileStyle, label: str | None, joker_colour: str = "") -> np.ndarray:
    """A tile's face (or back, for ``None``) in one edition; deterministic, cached across images.
    ``joker_colour`` (jokers only) overrides the style's joker colour."""
    key = f"{style.name}/{label}" + (f"/{joker_colour}" if joker_colour else "")
    rng = np.random.default_rng(zlib.crc32(key.encode()))
    if label is None:
        return faces.render_back(style, rng)
    return faces.render_face(label, style, rng, joker_colour=joker_colour or None)


def _sample_camera(rng: np.random.Generator, params: SceneParams, area: Area, placed: list[PlacedTile]) -> Camera:
    cp = params.camera
    width, height = params.size
    tilt = math.radians(float(rng.uniform(*cp.tilt_deg)) if rng.random() < 0.8 else float(rng.uniform(0, 12)))
    fov = float(rng.uniform(*cp.horizontal_fov_deg))
    fill = float(rng.uniform(*cp.fill))
    table_pts = np.array([[p.pose.x, p.pose.y] for p in placed if p.set_id >= -1] or [[0.0, 0.0]])
    centre = table_pts.mean(axis=0) + rng.normal(0, 40, 2)
    extent = max(float(np.ptp(table_pts[:, 0])) + 80, float(np.ptp(table_pts[:, 1])) * width / height + 80, 200.0)
    distance = (extent / fill) / 2 / math.tan(math.radians(fov) / 2)
    azimuth = math.radians(90.0 * int(rng.integers(4)) + float(rng.normal(0, 20)))  # the camera sits behind a seat
    offset = np.array([math.sin(azimuth), -math.cos(azimuth)]) * distance * math.sin(tilt)
    position = (float(centre[0] + offset[0]), float(centre[1] + offset[1]), float(distance * math.cos(tilt)))
    k1 = float(rng.uniform(*cp.k1)) if rng.random() < 0.5 else 0.0
    return Camera.looking_at(
        width=width,
        height=height,
        horizontal_fov_deg=fov,
        position=position,
        target=(float(centre[0]), float(centre[1]), 0.0),
        roll_deg=float(rng.normal(0, cp.roll_deg)),
        k1=k1,
    )


class Canvas:
    """The image being drawn (undistorted until :meth:`finish`) and what covers what."""

    def __init__(self, camera: Camera, rng: np.random.Generator) -> None:
        self.camera, self.rng = camera, rng
        self.image: np.ndarray = np.zeros((camera.height, camera.width, 3), np.uint8)
        self.ids = np.zeros((camera.height, camera.width), np.int32)
        self.occluders = np.zeros((camera.height, camera.width), np.uint8)

    # -- table top --------------------------------------------------------------------------------------
    def draw_table(self, material: str, table_area: Area, *, room: bool = True) -> None:
        """The table top of ``material`` over ``table_area``; ``room``: the floor around it first (a plain colour).
        Without it, the top is laid over what is drawn (a tablecloth on the table, the next table in the room)."""
        cam = self.camera
        if room:
            self.image[:] = np.array([int(v) for v in self.rng.integers(15, 90, 3)], np.uint8)
        ppm = min(3.0, max(0.6, cam.focal_px / max(cam.position[2], 1.0)))
        size = (int(table_area.width * ppm), int(table_area.height * ppm))
        texture = textures.table_texture(material, size, ppm, self.rng)
        # texture pixel -> table mm -> image
        to_mm = np.array([[1 / ppm, 0, table_area.x0], [0, -1 / ppm, table_area.y1], [0, 0, 1]])
        homography = cam.table_homography() @ to_mm
        warped = cv2.warpPerspective(texture, homography, (cam.width, cam.height), flags=cv2.INTER_LINEAR)
        inside = cv2.warpPerspective(
            np.full(texture.shape[:2], 255, np.uint8), homography, (cam.width, cam.height), flags=cv2.INTER_NEAREST
        )
        if cam.rotation[2][2] > -0.2:  # looking too flat: the homography would fold the horizon in
            inside[:] = 0
        np.copyto(self.image, warped, where=inside[..., None] > 0)

    # -- shadows ----------------------------------------------------------------------------------------
    def draw_shadows(self, placed: list[PlacedTile], racks: list[np.ndarray], lighting: effects.Lighting) -> None:
        cam = self.camera
        scale = 4
        mask: np.ndarray = np.zeros((cam.height // scale + 1, cam.width // scale + 1), np.float32)
        dx, dy = effects.shadow_offset_mm(lighting, 1.0)
        for corners in [p.pose.corners() for p in placed] + racks:
            heights = corners[:, 2:3]
            dropped = corners[:, :2] + heights * np.array([dx, dy])
            outline = np.vstack(
                [np.column_stack([corners[:, :2], np.zeros(8)]), np.column_stack([dropped, np.zeros(8)])]
            )
            pts = cam.project(outline, distort=False)
            if np.isnan(pts).any():
                continue
            hull = cv2.convexHull((pts / scale).astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(mask, hull, 1.0)
        blur = max(3, int(cam.focal_px / max(cam.position[2], 1) * 3 / scale) | 1)
        mask = cv2.GaussianBlur(mask, (blur * 2 + 1, blur * 2 + 1), 0)
        mask = cv2.resize(mask, (cam.width, cam.height))
        strength = effects.shadow_strength(lighting)
        self.image[:] = (self.image * (1 - strength * mask[..., None])).astype(np.uint8)

    # -- boxes and tiles --------------------------------------------------------------------------------
    def draw_box(self, corners: np.ndarray, colour: tuple[int, int, int], lighting: effects.Lighting) -> None:
        """A shaded box (its visible sides and top) from its 8 corners: top face first, then the bottom."""
        cam = self.camera
        pts = cam.project(corners, distort=False)
        if np.isnan(pts).any():
            return
        centre = corners.mean(axis=0)
        faces_ = [(0, 1, 2, 3), (4, 5, 1, 0), (5, 6, 2, 1), (6, 7, 3, 2), (7, 4, 0, 3), (7, 6, 5, 4)]
        light = _light_vector(lighting)
        for face in faces_:
            quad = corners[list(face)]
            normal = np.cross(quad[1] - quad[0], quad[3] - quad[0])
            if np.dot(normal, quad.mean(axis=0) - centre) < 0:
                normal = -normal
            normal /= np.linalg.norm(normal) + 1e-9
            if not cam.faces_camera(quad.mean(axis=0), normal):
                continue
            shade = 0.55 + 0.45 * max(0.0, float(np.dot(normal, light)))
            cv2.fillConvexPoly(
                self.image, pts[list(face)].astype(np.int32), [int(c * shade) for c in colour], cv2.LINE_AA
            )

    def draw_tiles(self, placed: list[PlacedTile], style: faces.TileStyle, lighting: effects.Lighting) -> list[int]:
        """Far to near; returns the instance id given to each placed tile's face (0: face not drawn)."""
        cam = self.camera
        order = sorted(
            range(len(placed)), key=lambda i: -np.linalg.norm(placed[i].pose.centre() - np.asarray(cam.position))
        )
        ids = [0] * len(placed)
        side = faces.side_colour(style)
        jokers = [i for i, p in enumerate(placed) if p.tile is not None and str(p.tile) == JOKER_LABEL]
        for index in order:
            tile = placed[index]
            self.draw_box(tile.pose.corners(), side, lighting)
            label = None if tile.tile is None else str(tile.tile)
            second = label == JOKER_LABEL and style.second_joker_colour and jokers.index(index) % 2 == 1
            texture = face_texture(style, label, style.second_joker_colour if second else "")
            if tile.tile is None:
                self._draw_face(tile.pose, texture, 0, lighting, back=True)
            elif self._draw_face(tile.pose, texture, index + 1, lighting):
                ids[index] = index + 1
        return ids

    def _draw_face(
        self, pose: TilePose, texture: np.ndarray, instance: int, lighting: effects.Lighting, *, back: bool = False
    ) -> bool:
        """Warp a texture onto the tile's face (or its back, for face-down tiles); mark the face's pixels."""
        cam = self.camera
        corners = pose.corners()[4:] if back else pose.corners()[:4]
        normal = -pose.face_normal() if back else pose.face_normal()
        if not cam.faces_camera(corners.mean(axis=0), normal):
            return False
        quad = cam.project(corners, distort=False)
        if np.isnan(quad).any():
            return False
        x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
        x0c, y0c, x1c, y1c = max(x0, 0), max(y0, 0), min(x1, cam.width), min(y1, cam.height)
        if x1c <= x0c or y1c <= y0c:
            return False
        h, w = texture.shape[:2]
        source = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        target = (quad - [x0c, y0c]).astype(np.float32)
        transform = cv2.getPerspectiveTransform(source, target)
        size = (x1c - x0c, y1c - y0c)
        shaded = _shade_face(texture, pose, lighting, self.camera)
        warped = cv2.warpPerspective(
            shaded,
            transform,
            size,
            flags=cv2.INTER_AREA if _shrinks(quad, w) else cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
        )
        alpha = warped[..., 3:4].astype(np.float32) / 255
        roi = self.image[y0c:y1c, x0c:x1c]
        roi[:] = (roi * (1 - alpha) + warped[..., :3] * alpha).astype(np.uint8)
        if instance:
            self.ids[y0c:y1c, x0c:x1c][alpha[..., 0] > 0.5] = instance
        return True

    # -- objects and hands --------------------------------------------------------------------------------
    def draw_objects(
        self, occupancy: Occupancy, params: SceneParams, lighting: effects.Lighting
    ) -> list[dict[str, Any]]:
        log: list[dict[str, Any]] = []
        if self.rng.random() < params.distractor_probability:
            for kind in self.rng.choice(
                ["phone", "cup", "score_sheet", "pen"], size=int(self.rng.integers(1, 4)), replace=False
            ):
                radius = {"phone": 80, "cup": 50, "score_sheet": 140, "pen": 75}[str(kind)]
                spot = occupancy.random_free_point(self.rng, radius)
                if spot is None:
                    continue
                centre, ppm = self._image_point(spot)
                if centre is None:
                    continue
                angle = float(self.rng.uniform(0, 360))
                draw = getattr(distractors, f"draw_{kind}")
                if kind == "cup":
                    draw(self.image, self.occluders, self.rng, centre=centre, px_per_mm=ppm)
                else:
                    draw(self.image, self.occluders, self.rng, centre=centre, angle_deg=angle, px_per_mm=ppm)
                log.append({"kind": str(kind), "centre": [round(c, 1) for c in centre]})
        if self.rng.random() < params.hand_probability:
            for _ in range(int(self.rng.integers(1, 3))):
                entry, tip = self._hand_path(occupancy.area)
                _, ppm = self._image_point(
                    ((occupancy.area.x0 + occupancy.area.x1) / 2, (occupancy.area.y0 + occupancy.area.y1) / 2)
                )
                distractors.draw_hand(self.image, self.occluders, self.rng, entry=entry, tip=tip, px_per_mm=ppm or 1.0)
                log.append({"kind": "hand", "entry": [round(v, 1) for v in entry], "tip": [round(v, 1) for v in tip]})
        return log

    def _image_point(self, point_mm: tuple[float, float]) -> tuple[tuple[float, float] | None, float]:
        pts = self.camera.project(
            np.array([[point_mm[0], point_mm[1], 0], [point_mm[0] + 10, point_mm[1], 0]]), distort=False
        )
        if np.isnan(pts).any():
            return None, 1.0
        inside = 0 <= pts[0, 0] < self.camera.width and 0 <= pts[0, 1] < self.camera.height
        return (float(pts[0, 0]), float(pts[0, 1])) if inside else None, float(np.linalg.norm(pts[1] - pts[0]) / 10)

    def _hand_path(self, area: Area) -> tuple[tuple[float, float], tuple[float, float]]:
        w, h = self.camera.width, self.camera.height
        side = int(self.rng.integers(4))
        t = float(self.rng.uniform(0.2, 0.8))
        entry = [(t * w, h + 5), (w + 5, t * h), (t * w, -5), (-5, t * h)][side]
        tip = (float(self.rng.uniform(0.2, 0.8) * w), float(self.rng.uniform(0.2, 0.8) * h))
        return (float(entry[0]), float(entry[1])), tip

    # -- camera -----------------------------------------------------------------------------------------
    def finish(self, lighting: effects.Lighting, sensor: effects.Sensor) -> tuple[np.ndarray, np.ndarray]:
        maps = self.camera.distortion_maps()
        image, ids = self.image, np.where(self.occluders > 0, 0, self.ids)
        if maps is not None:
            image = cv2.remap(image, *maps, interpolation=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
            ids = cv2.remap(ids.astype(np.float32), *maps, interpolation=cv2.INTER_NEAREST).astype(np.int32)
        image = effects.apply_lighting(image, lighting)
        image = effects.apply_sensor(image, sensor, self.rng)
        return image, ids


def _light_vector(lighting: effects.Lighting) -> np.ndarray:
    az, el = math.radians(lighting.direction_deg), math.radians(lighting.elevation_deg)
    return np.array([math.sin(az) * math.cos(el), math.cos(az) * math.cos(el), math.sin(el)])


def _shade_face(texture: np.ndarray, pose: TilePose, lighting: effects.Lighting, camera: Camera) -> np.ndarray:
    """Dim a face turned away from the light (rack tiles) and add the plastic's gloss where light bounces."""
    normal = pose.face_normal()
    light = _light_vector(lighting)
    diffuse = 0.6 + 0.4 * max(0.0, float(np.dot(normal, light)))
    view = _toward_camera(pose, camera)
    half = light + view
    half /= np.linalg.norm(half)
    specular = max(0.0, float(np.dot(normal, half))) ** 40 * 0.5
    if diffuse > 0.99 and specular < 0.02:
        return texture
    out = texture.copy()
    rgb = out[..., :3].astype(np.float32) * diffuse + 255 * specular
    out[..., :3] = np.clip(rgb, 0, 255).astype(np.uint8)
    return out


def _toward_camera(pose: TilePose, camera: Camera) -> np.ndarray:
    """The unit vector from the tile's face centre to the camera."""
    view = np.asarray(camera.position, float) - pose.centre()
    return view / np.linalg.norm(view)


def _shrinks(quad: np.ndarray, texture_width: int) -> bool:
    return float(np.linalg.norm(quad[1] - quad[0])) < texture_width * 0.8


def _labels(
    camera: Camera, placed: list[PlacedTile], ids: list[int], canvas: Canvas, params: SceneParams
) -> list[LabelledTile]:
    cols, rows = VISIBILITY_GRID
    grid_u, grid_v = np.meshgrid((np.arange(cols) + 0.5) / cols, (np.arange(rows) + 0.5) / rows)
    u, v = grid_u.ravel(), grid_v.ravel()
    digit_region = v < 0.62
    labelled = []
    for index, tile in enumerate(placed):
        if tile.tile is None or ids[index] == 0:
            continue
        samples = camera.project(tile.pose.face_points(u, v), distort=False)
        seen = _visible(samples, ids[index], canvas)
        outline = polygon_outline(camera, tile.pose)
        corners = camera.project(tile.pose.corners()[:4])
        box = _clipped_box(outline, camera.width, camera.height)
        visible, digit = float(seen.mean()), float(seen[digit_region].mean())
        face_px = min(float(np.linalg.norm(corners[1] - corners[0])), float(np.linalg.norm(corners[3] - corners[0])))
        facing = float(np.dot(tile.pose.face_normal(), _toward_camera(tile.pose, camera)))
        readable = (
            box is not None
            and visible >= params.readable_visible
            and digit >= params.readable_visible
            and face_px >= params.min_face_px
            and facing >= MIN_FACING
        )
        kind = {POOL_SET: "pool", RACK_SET: "rack", -1: "loose"}.get(tile.set_id, "set")
        up = corners[0] + corners[1] - corners[3] - corners[2]
        rotation = math.degrees(math.atan2(up[0], -up[1]))
        labelled.append(
            LabelledTile(
                str(tile.tile),
                box or (0.0, 0.0, 0.0, 0.0),
                tuple(map(tuple, corners.tolist())),
                rotation,
                tile.set_id,
                tile.position,
                kind,
                visible,
                digit,
                readable,
            )
        )
    return labelled


def _visible(samples: np.ndarray, instance: int, canvas: Canvas) -> np.ndarray:
    h, w = canvas.ids.shape
    xs, ys = np.round(samples[:, 0]).astype(int), np.round(samples[:, 1]).astype(int)
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    seen = np.zeros(len(samples), bool)
    xi, yi = xs[inside], ys[inside]
    seen[inside] = (canvas.ids[yi, xi] == instance) & (canvas.occluders[yi, xi] == 0)
    return seen


def _clipped_box(outline: np.ndarray, width: int, height: int) -> tuple[float, float, float, float] | None:
    x0, y0 = np.clip(outline.min(axis=0), 0, [width, height])
    x1, y1 = np.clip(outline.max(axis=0), 0, [width, height])
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    return float(x0), float(y0), float(x1), float(y1)
