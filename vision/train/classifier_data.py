"""The tile classifier's training data: tiles stored as patches of context, the crops cut from them, augmentation.

Training data are *patches*: a square of context around each tile, stored at (about) native resolution with
the tile's polygon in patch pixels. A training crop is one affine warp of a patch: a rotation by any angle
around the tile (the image turned, as a camera would see it) composed with the crop of ``crop_boxes`` around
the rotated tile's jittered box (detector noise). At angle 0 without jitter that warp *is* ``crop_boxes``.

:func:`synthetic_tileset` and :func:`real_tileset` store the patches of synthetic sidecars and real photos;
:class:`CropDataset` gives augmented crops for training (:mod:`vision.train.classifier`), :func:`fixed_crops` a
seeded set for development and calibration; :func:`synthetic_crops` and :func:`real_crops` cut crops straight from
the images, as the runtime does, for evaluation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.crops import CROP_PAD, CROP_SIZE, crop_boxes
from vision.runtime.imagefile import read_dataset_image

LABEL_INDEX = {label: i for i, label in enumerate(ALL_LABELS)}
PATCH_CONTEXT = 2.6
"""Patch side as a multiple of the tile box's longer side: a crop of the tile turned to any angle and jittered
stays (almost) inside the patch, so little border is ever replicated."""
PATCH_MAX_TILE = 64.0
"""Tiles whose box is longer than this (pixels) are stored downscaled: the crop shrinks them anyway."""
NO_ANGLE = float("nan")


# --------------------------------------------------------------------------------------------------- parameters


@dataclass
class JitterParams:
    """Detector noise on a box: centre shift and scale as a share of the box size, aspect change."""

    shift: float = 0.08
    scale: float = 0.10
    aspect: float = 0.08


@dataclass
class AugmentParams:
    """Photometric and geometric augmentation; no flips (mirrored digits do not exist), hue within a few degrees
    (a larger hue shift turns red into orange)."""

    rotate_any: bool = True
    brightness: float = 0.15
    contrast: float = 0.25
    gamma: float = 0.35
    white_balance: float = 0.07
    hue_deg: float = 4.0
    saturation: float = 0.25
    blur_prob: float = 0.25
    blur_sigma: tuple[float, float] = (0.3, 1.0)
    lowres_prob: float = 0.15
    lowres_side: tuple[int, int] = (32, 56)
    noise_prob: float = 0.5
    noise_sigma: tuple[float, float] = (0.0, 0.035)
    jpeg_prob: float = 0.4
    jpeg_quality: tuple[int, int] = (35, 95)
    jitter: JitterParams = field(default_factory=JitterParams)
    right_angle_prob: float = 0.0
    """Share of turns drawn near 0, 90, 180 or 270 degrees (tiles laid square to the table edge, from any seat)
    rather than uniformly; ``small_angle_deg`` is the spread (standard deviation) around them."""
    small_angle_deg: float = 5.0
    small_tile_prob: float = 0.0
    """Share of crops cut as the live pipeline cuts them from a video frame: the tile turned, shrunk (area
    averaging, as a sensor does) until its longer side is ``small_tile_px``, squashed vertically by a factor in
    ``tilt_squash`` (a tilted camera), blurred and compressed at that scale, then cropped by ``crop_boxes``."""
    small_tile_px: tuple[float, float] = (20.0, 40.0)
    tilt_squash: tuple[float, float] = (0.8, 1.0)
    small_blur_prob: float = 0.4
    small_blur_sigma: tuple[float, float] = (0.3, 0.8)
    video_jpeg_prob: float = 0.8
    video_jpeg_quality: tuple[int, int] = (25, 75)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AugmentParams:
        data = dict(data or {})
        jitter = JitterParams(**data.pop("jitter", {}))
        for key in (
            "blur_sigma",
            "lowres_side",
            "noise_sigma",
            "jpeg_quality",
            "small_tile_px",
            "tilt_squash",
            "small_blur_sigma",
            "video_jpeg_quality",
        ):
            if key in data:
                data[key] = tuple(data[key])
        return cls(jitter=jitter, **data)


# ------------------------------------------------------------------------------------------------ geometry helpers


def polygon_up_angle(polygon: np.ndarray) -> float:
    """Up direction (degrees clockwise from image up, [0, 360)) of a 4-corner face polygon ordered top-left,
    top-right, bottom-right, bottom-left as seen upright: from the bottom edge's middle to the top edge's."""
    p = np.asarray(polygon, np.float64).reshape(4, 2)
    up = (p[0] + p[1]) / 2 - (p[2] + p[3]) / 2
    return float(math.degrees(math.atan2(up[0], -up[1])) % 360.0)


def polygon_box(polygon: np.ndarray) -> np.ndarray:
    """Axis-aligned box [x0, y0, x1, y1] of a polygon."""
    p = np.asarray(polygon, np.float32).reshape(-1, 2)
    return np.array([p[:, 0].min(), p[:, 1].min(), p[:, 0].max(), p[:, 1].max()], np.float32)


def jitter_boxes(boxes: np.ndarray, rng: np.random.Generator, jitter: JitterParams) -> np.ndarray:
    """Boxes as a detector might give them: centre shifted, size scaled, aspect changed (uniform noise)."""
    b = np.asarray(boxes, np.float32).reshape(-1, 4)
    n = len(b)
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    cx = (b[:, 0] + b[:, 2]) / 2 + rng.uniform(-jitter.shift, jitter.shift, n) * w
    cy = (b[:, 1] + b[:, 3]) / 2 + rng.uniform(-jitter.shift, jitter.shift, n) * h
    scale = 1 + rng.uniform(-jitter.scale, jitter.scale, n)
    aspect = 1 + rng.uniform(-jitter.aspect, jitter.aspect, n)
    w, h = w * scale * np.sqrt(aspect), h * scale / np.sqrt(aspect)
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], 1).astype(np.float32)


def crop_matrix(box: np.ndarray, size: int = CROP_SIZE, pad: float = CROP_PAD) -> np.ndarray:
    """The 2x3 affine matrix ``crop_boxes`` uses for one box (kept equal to it: a test checks)."""
    corners: Any = np.asarray(box, np.float32).reshape(4)  # float32 arithmetic, as in crop_boxes
    x0, y0, x1, y1 = corners
    side = max(x1 - x0, y1 - y0, 2.0) * (1 + 2 * pad)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    scale = size / side
    return np.array([[scale, 0, size / 2 - cx * scale], [0, scale, size / 2 - cy * scale]], np.float32)


def rotation_matrix(centre: tuple[float, float], angle_cw_deg: float) -> np.ndarray:
    """2x3 matrix turning an image clockwise (as seen on screen) by ``angle_cw_deg`` around ``centre``."""
    return cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), -float(angle_cw_deg), 1.0)


def _compose(outer: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """outer o inner for 2x3 affine matrices."""
    a = np.vstack([outer, [0, 0, 1]]).astype(np.float64)
    b = np.vstack([inner, [0, 0, 1]]).astype(np.float64)
    return (a @ b)[:2].astype(np.float32)


def _apply(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    p = np.asarray(points, np.float64).reshape(-1, 2)
    return p @ np.asarray(matrix, np.float64)[:, :2].T + np.asarray(matrix, np.float64)[:, 2]


# ----------------------------------------------------------------------------------------------------- patches


@dataclass
class TileSet:
    """Tiles as patches of context: the source of every training and development crop."""

    patches: list[np.ndarray] = field(default_factory=list)
    polygons: list[np.ndarray] = field(default_factory=list)
    """Tile outline in patch pixels (4 ordered corners for synthetic tiles, any outline for real ones)."""
    labels: list[int] = field(default_factory=list)
    angles: list[float] = field(default_factory=list)
    """Up direction in the patch, degrees clockwise; NaN where unknown (real photos)."""
    sources: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)

    def add(self, patch: np.ndarray, polygon: np.ndarray, label: int, angle: float, source: str) -> None:
        self.patches.append(patch)
        self.polygons.append(np.asarray(polygon, np.float32))
        self.labels.append(int(label))
        self.angles.append(float(angle))
        self.sources.append(source)

    def extend(self, other: TileSet) -> None:
        for name in ("patches", "polygons", "labels", "angles", "sources"):
            getattr(self, name).extend(getattr(other, name))

    def subset(self, keep: Iterable[int]) -> TileSet:
        out = TileSet()
        for i in keep:
            out.add(self.patches[i], self.polygons[i], self.labels[i], self.angles[i], self.sources[i])
        return out

    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.patches)


def extract_patch(image: np.ndarray, polygon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A square of context around a tile and the polygon in its pixels.

    Tiles up to ``PATCH_MAX_TILE`` keep native pixels (an integer-offset copy, so a crop of the patch equals the
    crop of the image); larger ones are downscaled with area averaging, as ``crop_boxes`` would.
    """
    poly = np.asarray(polygon, np.float64).reshape(-1, 2)
    box = polygon_box(poly)
    longer = float(max(box[2] - box[0], box[3] - box[1], 2.0))
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    if longer <= PATCH_MAX_TILE:
        side = math.ceil(longer * PATCH_CONTEXT)
        x0, y0 = math.floor(cx - side / 2), math.floor(cy - side / 2)
        patch = _slice_replicate(image, x0, y0, side)
        return patch, (poly - [x0, y0]).astype(np.float32)
    scale = PATCH_MAX_TILE / longer
    side = math.ceil(PATCH_MAX_TILE * PATCH_CONTEXT)
    matrix = np.array([[scale, 0, side / 2 - cx * scale], [0, scale, side / 2 - cy * scale]], np.float32)
    patch = cv2.warpAffine(image, matrix, (side, side), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    return patch, _apply(matrix, poly).astype(np.float32)


def _slice_replicate(image: np.ndarray, x0: int, y0: int, side: int) -> np.ndarray:
    """image[y0:y0+side, x0:x0+side] with the border replicated where the square leaves the image."""
    h, w = image.shape[:2]
    xs = np.clip(np.arange(x0, x0 + side), 0, w - 1)
    ys = np.clip(np.arange(y0, y0 + side), 0, h - 1)
    return np.ascontiguousarray(image[ys[:, None], xs[None, :]])


def read_synthetic_dir(root: Path, max_images: int | None = None) -> list[tuple[Path, list[dict[str, Any]]]]:
    """(image path, readable tiles) of a synthetic dataset; sidecars whose image is not written yet are skipped."""
    out = []
    for meta in sorted((Path(root) / "meta").glob("*.json")):
        data = json.loads(meta.read_text())
        image = Path(root) / data.get("image", f"images/{meta.stem}.jpg")
        if not image.exists():
            continue
        tiles = [t for t in data.get("tiles", []) if t.get("readable") and t.get("label") in LABEL_INDEX]
        out.append((image, tiles))
        if max_images and len(out) >= max_images:
            break
    return out


def synthetic_tileset(
    roots: Sequence[Path | str],
    *,
    max_images: int | None = None,
    max_tiles_per_image: int | None = None,
    seed: int = 0,
) -> TileSet:
    """Patches of every readable tile of synthetic sidecars, angle from the ordered face polygon."""
    rng = np.random.default_rng(seed)
    tiles = TileSet()
    for root in roots:
        for image_path, metas in read_synthetic_dir(Path(root), max_images):
            if not metas:
                continue
            image = read_dataset_image(image_path)
            if image is None:
                continue
            if max_tiles_per_image and len(metas) > max_tiles_per_image:
                metas = [metas[i] for i in rng.choice(len(metas), max_tiles_per_image, replace=False)]
            for meta in metas:
                polygon = np.asarray(meta["polygon"], np.float32)
                patch, poly = extract_patch(image, polygon)
                tiles.add(patch, poly, LABEL_INDEX[meta["label"]], polygon_up_angle(poly), str(image_path))
    return tiles


def real_tileset(photos: Sequence[Any]) -> TileSet:
    """Patches of the tiles of real photos (``vision.runtime.realdata.RealPhoto``); up direction unknown (NaN).

    The real polygons have 5-9 points in no fixed order, so no up direction can be read from them."""
    tiles = TileSet()
    for photo in photos:
        image = read_dataset_image(photo.path)
        if image is None:
            continue
        for tile in photo.tiles:
            if tile.label not in LABEL_INDEX:
                continue
            patch, poly = extract_patch(image, np.asarray(tile.polygon, np.float32))
            tiles.add(patch, poly, LABEL_INDEX[tile.label], NO_ANGLE, photo.source)
    return tiles


def synthetic_crops(
    root: Path | str, *, max_images: int | None = None, rng: np.random.Generator | None = None, jitter=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops straight from synthetic images (the runtime's path), labels and up angles; boxes jittered if
    ``rng`` and ``jitter`` are given. For evaluation and parity checks."""
    crops, labels, angles = [], [], []
    for image_path, metas in read_synthetic_dir(Path(root), max_images):
        if not metas:
            continue
        image = read_dataset_image(image_path)
        boxes = np.array([m["box"] for m in metas], np.float32)
        if rng is not None and jitter is not None:
            boxes = jitter_boxes(boxes, rng, jitter)
        crops.append(crop_boxes(image, boxes))
        labels += [LABEL_INDEX[m["label"]] for m in metas]
        angles += [polygon_up_angle(np.asarray(m["polygon"])) for m in metas]
    if not crops:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return np.concatenate(crops), np.array(labels, np.int64), np.array(angles, np.float32)


def _labelled_photos(photos: Sequence[Any]) -> Iterator[tuple[np.ndarray, list[Any]]]:
    """Each real photo that has known tiles, read once, with those tiles."""
    for photo in photos:
        tiles = [t for t in photo.tiles if t.label in LABEL_INDEX]
        if tiles:
            yield read_dataset_image(photo.path), tiles


def real_crops(
    photos: Sequence[Any], *, rng: np.random.Generator | None = None, jitter: JitterParams | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Crops straight from real photos around their true boxes (jittered if ``rng`` and ``jitter``), labels."""
    crops, labels = [], []
    for image, tiles in _labelled_photos(photos):
        boxes = np.array([t.box for t in tiles], np.float32)
        if rng is not None and jitter is not None:
            boxes = jitter_boxes(boxes, rng, jitter)
        crops.append(crop_boxes(image, boxes))
        labels += [LABEL_INDEX[t.label] for t in tiles]
    if not crops:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(crops), np.array(labels, np.int64)


def turned_real_crops(
    photos: Sequence[Any], rng: np.random.Generator, jitter: JitterParams
) -> tuple[np.ndarray, np.ndarray]:
    """Real tiles after turning each whole photo by a random angle (tests reading at any angle)."""
    crops, labels = [], []
    for image, tiles in _labelled_photos(photos):
        h, w = image.shape[:2]
        rotation = rotation_matrix((w / 2, h / 2), float(rng.uniform(0, 360)))
        side = math.ceil(math.hypot(w, h))
        rotation[:, 2] += [(side - w) / 2, (side - h) / 2]
        turned = cv2.warpAffine(image, rotation, (side, side), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        boxes = np.stack([polygon_box(_apply(rotation, np.asarray(t.polygon))) for t in tiles])
        crops.append(crop_boxes(turned, jitter_boxes(boxes, rng, jitter)))
        labels += [LABEL_INDEX[t.label] for t in tiles]
    if not crops:
        return np.zeros((0, CROP_SIZE, CROP_SIZE, 3), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(crops), np.array(labels, np.int64)


# ------------------------------------------------------------------------------------------------- augmentation


def render_crop(
    patch: np.ndarray,
    polygon: np.ndarray,
    angle_cw_deg: float,
    *,
    rng: np.random.Generator | None = None,
    jitter: JitterParams | None = None,
) -> np.ndarray:
    """The crop ``crop_boxes`` would cut around the tile after the image is turned clockwise by
    ``angle_cw_deg`` around it (one warp: rotation composed with the crop), box jittered if asked."""
    h, w = patch.shape[:2]
    rotation = rotation_matrix((w / 2, h / 2), angle_cw_deg)
    box = polygon_box(_apply(rotation, polygon))
    if rng is not None and jitter is not None:
        box = jitter_boxes(box, rng, jitter)[0]
    crop = crop_matrix(box)
    matrix = _compose(crop, rotation)
    interpolation = cv2.INTER_AREA if crop[0, 0] < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(patch, matrix, (CROP_SIZE, CROP_SIZE), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)


def render_small_crop(
    patch: np.ndarray, polygon: np.ndarray, angle_cw_deg: float, rng: np.random.Generator, params: AugmentParams
) -> np.ndarray:
    """The crop ``crop_boxes`` cuts around the tile in a video frame where it is small: the patch turned clockwise
    by ``angle_cw_deg``, shrunk with area averaging so the tile's longer side is drawn from ``small_tile_px`` (never
    enlarged), squashed vertically by ``tilt_squash``, blurred and JPEG-compressed at that scale (video
    compression works on the frame, not on the crop), then cut around the tile's jittered box."""
    h, w = patch.shape[:2]
    rotation = rotation_matrix((w / 2, h / 2), angle_cw_deg)
    turned = cv2.warpAffine(patch, rotation, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    poly = _apply(rotation, polygon)
    box = polygon_box(poly)
    longer = float(max(box[2] - box[0], box[3] - box[1], 2.0))
    scale = min(1.0, float(rng.uniform(*params.small_tile_px)) / longer)
    squash = float(rng.uniform(*params.tilt_squash))
    out_w, out_h = max(8, round(w * scale)), max(8, round(h * scale * squash))
    small = cv2.resize(turned, (out_w, out_h), interpolation=cv2.INTER_AREA)
    # Pixel centres map as (x + 0.5) * s - 0.5 under a resize.
    factors = np.array([out_w / w, out_h / h])
    small_poly = (poly + 0.5) * factors - 0.5
    if rng.random() < params.small_blur_prob:
        small = cv2.GaussianBlur(small, (0, 0), float(rng.uniform(*params.small_blur_sigma)))
    if rng.random() < params.video_jpeg_prob:
        small = _jpeg(small, int(rng.integers(params.video_jpeg_quality[0], params.video_jpeg_quality[1] + 1)))
    small_box = jitter_boxes(polygon_box(small_poly), rng, params.jitter)
    return crop_boxes(small, small_box)[0]


def _jpeg(img: np.ndarray, quality: int) -> np.ndarray:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return img if decoded is None else decoded


def draw_turn(rng: np.random.Generator, params: AugmentParams) -> float:
    """A training crop's turn in degrees clockwise, [0, 360): uniform, or near a right angle with probability
    ``right_angle_prob`` (no random number is drawn for a zero probability: older recipes keep their crops)."""
    if not params.rotate_any:
        return 0.0
    if params.right_angle_prob > 0 and rng.random() < params.right_angle_prob:
        return float((90.0 * int(rng.integers(4)) + rng.normal(0.0, params.small_angle_deg)) % 360.0)
    return float(rng.uniform(0, 360))


def photometric(
    crop: np.ndarray, rng: np.random.Generator, params: AugmentParams, *, degrade: bool = True
) -> np.ndarray:
    """Lighting, white balance, camera blur, low resolution, noise and JPEG on one BGR uint8 crop (blur, low
    resolution and JPEG only if ``degrade``: a crop cut small from a video frame had them at that scale)."""
    img = crop
    if degrade and rng.random() < params.blur_prob:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(*params.blur_sigma)))
    if degrade and rng.random() < params.lowres_prob:
        side = int(rng.integers(params.lowres_side[0], params.lowres_side[1] + 1))
        small = cv2.resize(img, (side, side), interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (CROP_SIZE, CROP_SIZE), interpolation=cv2.INTER_LINEAR)
    x = img.astype(np.float32) / 255.0
    x = _hue_saturation(x, rng, params)
    gains = np.exp(rng.normal(0, params.white_balance, 3)).astype(np.float32)
    x = x * (gains / gains.mean())
    mean = x.mean()
    x = (x - mean) * float(np.exp(rng.uniform(-params.contrast, params.contrast))) + mean
    x = x + float(rng.uniform(-params.brightness, params.brightness))
    x = np.clip(x, 0, 1) ** float(np.exp(rng.uniform(-params.gamma, params.gamma)))
    if rng.random() < params.noise_prob:
        x = x + rng.normal(0, rng.uniform(*params.noise_sigma), x.shape).astype(np.float32)
    img = (np.clip(x, 0, 1) * 255 + 0.5).astype(np.uint8)
    if degrade and rng.random() < params.jpeg_prob:
        img = _jpeg(img, int(rng.integers(params.jpeg_quality[0], params.jpeg_quality[1] + 1)))
    return img


def _hue_saturation(x: np.ndarray, rng: np.random.Generator, params: AugmentParams) -> np.ndarray:
    """Small hue turn (never red into orange) and saturation scale, in float HSV (hue in degrees)."""
    hsv = cv2.cvtColor(x, cv2.COLOR_BGR2HSV)
    hsv[..., 0] = (hsv[..., 0] + rng.uniform(-params.hue_deg, params.hue_deg)) % 360.0
    hsv[..., 1] = np.clip(hsv[..., 1] * np.exp(rng.uniform(-params.saturation, params.saturation)), 0, 1)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)


def augmented_sample(
    tiles: TileSet, index: int, rng: np.random.Generator, params: AugmentParams
) -> tuple[np.ndarray, int, float]:
    """One training crop of tile ``index``: turned (:func:`draw_turn`), jittered box, photometric noise; cut at
    video scale (:func:`render_small_crop`) with probability ``small_tile_prob``."""
    turn = draw_turn(rng, params)
    patch, polygon = tiles.patches[index], tiles.polygons[index]
    if params.small_tile_prob > 0 and rng.random() < params.small_tile_prob:
        crop = photometric(render_small_crop(patch, polygon, turn, rng, params), rng, params, degrade=False)
    else:
        crop = photometric(render_crop(patch, polygon, turn, rng=rng, jitter=params.jitter), rng, params)
    angle = tiles.angles[index]
    return crop, tiles.labels[index], (angle + turn) % 360.0 if not math.isnan(angle) else NO_ANGLE


class CropDataset:
    """Map-style dataset (usable by a torch ``DataLoader``) of augmented crops over a list of tile indices."""

    def __init__(self, tiles: TileSet, indices: Sequence[int], params: AugmentParams, seed: int = 0) -> None:
        self.tiles = tiles
        self.indices = np.asarray(indices, np.int64)
        self.params = params
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int) -> tuple[np.ndarray, int, float]:
        return augmented_sample(self.tiles, int(self.indices[i]), self.rng, self.params)


def fixed_crops(
    tiles: TileSet, seed: int, *, rotate: bool = True, jitter: JitterParams | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fixed set of crops (seeded angle and jitter, no photometric noise) for development and calibration."""
    rng = np.random.default_rng(seed)
    crops = np.empty((len(tiles), CROP_SIZE, CROP_SIZE, 3), np.uint8)
    angles = np.empty(len(tiles), np.float32)
    for i in range(len(tiles)):
        turn = float(rng.uniform(0, 360)) if rotate else 0.0
        crops[i] = render_crop(tiles.patches[i], tiles.polygons[i], turn, rng=rng, jitter=jitter)
        angles[i] = (tiles.angles[i] + turn) % 360.0
    return crops, np.asarray(tiles.labels, np.int64), angles
