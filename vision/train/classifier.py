"""Tile crop classifier: datasets, augmentation, a compact CNN, training, calibration, ONNX export, evaluation.

The classifier reads one square crop (cut by :func:`vision.runtime.crops.crop_boxes`, the code the runtime uses) and
gives the tile's label (53 classes in ``referee.tiles.ALL_LABELS`` order) and its up direction (clockwise from
image up), so tiles lying at any angle, upside down included, are read; 6 and 9 differ by digit shape and the
wordmark at the tile's bottom, which is why the angle is learnt together with the label.

Training data are *patches*: a square of context around each tile, stored at (about) native resolution with
the tile's polygon in patch pixels. A training crop is one affine warp of a patch: a rotation by any angle
around the tile (the image turned, as a camera would see it) composed with the crop of ``crop_boxes`` around
the rotated tile's jittered box (detector noise). At angle 0 without jitter that warp *is* ``crop_boxes``.

``torch`` is imported inside the functions that need it; this module is never imported at run time.

Size: 1,171 lines: the training data (patches, crop warps, augmentation, datasets; about 380 lines), the network, its
loss and training loop, temperature and metrics, ONNX export, inference and timing, evaluation, and the recipe driver
:func:`train_classifier` with its command line (about 220 lines). The next split is the training data (``JitterParams``
to ``fixed_crops``) into a module of its own (to do).
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import platform
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.crops import CROP_PAD, CROP_SIZE, crop_boxes, to_input
from vision.runtime.imagefile import read_dataset_image

LABEL_INDEX = {label: i for i, label in enumerate(ALL_LABELS)}
PATCH_CONTEXT = 2.6
"""Patch side as a multiple of the tile box's longer side: a crop of the tile turned to any angle and jittered
stays (almost) inside the patch, so little border is ever replicated."""
PATCH_MAX_TILE = 64.0
"""Tiles whose box is longer than this (pixels) are stored downscaled: the crop shrinks them anyway."""
NO_ANGLE = float("nan")
OUTPUT_NAMES = ("probs", "angle_deg", "features")
"""The exported graph's outputs: (N,53) probabilities after temperature, (N,) up angle in degrees clockwise,
(N,D) the pooled features the label head reads (D = the last stage's channels, 192 at width 1.0)."""


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

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> AugmentParams:
        data = dict(data or {})
        jitter = JitterParams(**data.pop("jitter", {}))
        for key in ("blur_sigma", "lowres_side", "noise_sigma", "jpeg_quality"):
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


def photometric(crop: np.ndarray, rng: np.random.Generator, params: AugmentParams) -> np.ndarray:
    """Lighting, white balance, camera blur, low resolution, noise and JPEG on one BGR uint8 crop."""
    img = crop
    if rng.random() < params.blur_prob:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(*params.blur_sigma)))
    if rng.random() < params.lowres_prob:
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
    if rng.random() < params.jpeg_prob:
        quality = int(rng.integers(params.jpeg_quality[0], params.jpeg_quality[1] + 1))
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            img = decoded
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
    """One training crop of tile ``index``: turned to a random angle, jittered box, photometric noise."""
    turn = float(rng.uniform(0, 360)) if params.rotate_any else 0.0
    crop = render_crop(tiles.patches[index], tiles.polygons[index], turn, rng=rng, jitter=params.jitter)
    crop = photometric(crop, rng, params)
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


# ------------------------------------------------------------------------------------------------------- model

_NET_CLASS: Any = None


def _tile_net_class() -> Any:
    """The network class, defined on first use so that importing this module does not import torch."""
    global _NET_CLASS
    if _NET_CLASS is not None:
        return _NET_CLASS
    import torch
    from torch import nn

    class Block(nn.Module):
        """ResNet basic block (two 3x3 convolutions, BatchNorm, a projected shortcut when the shape changes)."""

        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.skip = (
                nn.Identity()
                if cin == cout and stride == 1
                else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            )
            self.act = nn.ReLU(inplace=True)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.act(self.body(x) + self.skip(x))

    class TileNet(nn.Module):
        """64x64 RGB crop -> (53 label logits, up direction as an unnormalised (cos, sin) vector).

        The stem halves the resolution at once (digit strokes stay 1-2 pixels wide at 32x32), three residual
        stages halve it again each, to 4x4 (about 24 M multiply-adds a crop: fast enough to train on 2 CPU
        cores). The label head reads pooled features; the angle head reads the 4x4 map, where the layout (digit
        above the wordmark) tells the up direction."""

        def __init__(self, width: float = 1.0, classes: int = len(ALL_LABELS)) -> None:
            super().__init__()
            c = [max(8, round(base * width / 8) * 8) for base in (24, 48, 96, 192)]
            self.stem = nn.Sequential(nn.Conv2d(3, c[0], 3, 2, 1, bias=False), nn.BatchNorm2d(c[0]), nn.ReLU(True))
            self.stages = nn.Sequential(Block(c[0], c[1], 2), Block(c[1], c[2], 2))
            self.last = Block(c[2], c[3], 2)
            self.drop = nn.Dropout(0.1)
            self.label = nn.Linear(c[3], classes)
            self.angle = nn.Sequential(nn.Conv2d(c[3], 16, 1), nn.ReLU(True), nn.Flatten(), nn.Linear(16 * 16, 2))

        def forward(self, x: torch.Tensor, features: bool = False) -> tuple[torch.Tensor, ...]:
            """(logits, angle vector), and the pooled features the label head reads when ``features``."""
            f = self.last(self.stages(self.stem((x - 0.5) * 4.0)))
            pooled = f.mean((2, 3))
            logits = self.label(self.drop(pooled))
            return (logits, self.angle(f), pooled) if features else (logits, self.angle(f))

    _NET_CLASS = TileNet
    return TileNet


def build_model(width: float = 1.0) -> Any:
    """A fresh TileNet (``width`` scales every stage; 1.0 is about 0.65 M parameters)."""
    return _tile_net_class()(width)


def _export_module(net: Any, temperature: float) -> Any:
    """The exported graph: probabilities after temperature, the angle in degrees clockwise, [0, 360), and the
    pooled features the label head reads (what familiarity scores and enrolment heads use)."""
    import torch
    from torch import nn

    class Exported(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net
            self.register_buffer("inv_t", torch.tensor(1.0 / temperature))

        def forward(self, crops: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            logits, vec, features = self.net(crops, features=True)
            probs = torch.softmax(logits * self.inv_t, dim=1)
            degrees = torch.atan2(vec[:, 1], vec[:, 0]) * (180.0 / math.pi)
            return probs, degrees - 360.0 * torch.floor(degrees / 360.0), features

    return Exported().eval()


# ---------------------------------------------------------------------------------------------------- training


def _to_tensors(batch: Sequence[tuple[np.ndarray, int, float]]) -> tuple[Any, Any, Any]:
    import torch

    crops = np.stack([b[0] for b in batch])
    return (
        torch.from_numpy(to_input(crops)),
        torch.tensor([b[1] for b in batch], dtype=torch.long),
        torch.tensor([b[2] for b in batch], dtype=torch.float32),
    )


def _init_worker(worker_id: int) -> None:
    import torch

    info = torch.utils.data.get_worker_info()
    if info is None:  # called in the main process: nothing to reseed
        return
    dataset: Any = info.dataset  # our CropDataset
    dataset.reseed(dataset.seed * 1000 + worker_id + 1 + int(torch.initial_seed() % 100000))


def angle_loss(vec: Any, angle_deg: Any) -> Any:
    """Mean of 1 - cos(predicted - true) over tiles with a known angle (NaN targets are masked out)."""
    import torch

    known = ~torch.isnan(angle_deg)
    if not bool(known.any()):
        return vec.sum() * 0.0
    rad = torch.deg2rad(angle_deg[known])
    unit = torch.nn.functional.normalize(vec[known], dim=1, eps=1e-6)
    return (1 - (unit[:, 0] * torch.cos(rad) + unit[:, 1] * torch.sin(rad))).mean()


def predict_logits(net: Any, crops: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """(logits, angle degrees) of BGR uint8 crops with a torch net in eval mode."""
    import torch

    net.eval()
    logits, angles = [], []
    with torch.no_grad():
        for i in range(0, len(crops), batch):
            out, vec = net(torch.from_numpy(to_input(crops[i : i + batch])))
            logits.append(out.numpy())
            angles.append(np.degrees(np.arctan2(vec[:, 1].numpy(), vec[:, 0].numpy())) % 360.0)
    if not logits:
        return np.zeros((0, len(ALL_LABELS)), np.float32), np.zeros(0, np.float32)
    return np.concatenate(logits), np.concatenate(angles)


def angle_errors(pred_deg: np.ndarray, true_deg: np.ndarray) -> np.ndarray:
    """Absolute circular differences in degrees, [0, 180]."""
    d = np.abs((np.asarray(pred_deg) - np.asarray(true_deg) + 180.0) % 360.0 - 180.0)
    return d[~np.isnan(d)]


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """Temperature minimising the negative log-likelihood of the calibration split (LBFGS on log T)."""
    import torch

    z = torch.from_numpy(np.asarray(logits, np.float32))
    y = torch.from_numpy(np.asarray(labels, np.int64))
    log_t = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=200)

    def closure() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(z / log_t.exp(), y)
        loss.backward()
        return loss

    opt.step(closure)
    return float(np.clip(log_t.exp().item(), 0.05, 20.0))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, np.float64) / temperature
    z = np.exp(z - z.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 15) -> float:
    """ECE of the top-1 confidence in equal-width bins (weighted mean |accuracy - confidence|)."""
    if len(labels) == 0:
        return float("nan")
    conf = probs.max(1)
    correct = probs.argmax(1) == labels
    edges = np.linspace(0, 1, bins + 1)
    ece = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    return float(ece)


def top_confusions(pred: np.ndarray, labels: np.ndarray, k: int = 10) -> list[dict[str, Any]]:
    """The k most frequent (true, predicted) mistakes."""
    counts = Counter((int(t), int(p)) for t, p in zip(labels, pred, strict=True) if t != p)
    return [{"true": ALL_LABELS[t], "pred": ALL_LABELS[p], "count": n} for (t, p), n in counts.most_common(k)]


def _progress_lr(base_lr: float, progress: float, warmup: float = 0.03) -> float:
    """Linear warm-up then cosine decay to 2 % over training progress in [0, 1]."""
    if progress < warmup:
        return base_lr * (0.1 + 0.9 * progress / warmup)
    p = min(1.0, (progress - warmup) / (1 - warmup))
    return base_lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * p)))


@dataclass
class DevSet:
    """Fixed crops that pick the best epoch and fit the temperature."""

    name: str
    crops: np.ndarray
    labels: np.ndarray
    angles: np.ndarray


def _evaluate_dev(net: Any, dev: Sequence[DevSet]) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for d in dev:
        logits, pred_angle = predict_logits(net, d.crops)
        metrics[f"{d.name}_acc"] = float((logits.argmax(1) == d.labels).mean()) if len(d.labels) else float("nan")
        err = angle_errors(pred_angle, d.angles)
        if len(err):
            metrics[f"{d.name}_angle_median"] = float(np.median(err))
    accs = [metrics[f"{d.name}_acc"] for d in dev if len(d.labels)]
    metrics["score"] = float(np.mean(accs)) if accs else 0.0
    return metrics


def train_model(
    train_set: CropDataset,
    dev: Sequence[DevSet],
    cfg: dict[str, Any],
    log: Any = print,
) -> tuple[Any, list[dict[str, Any]]]:
    """Train a TileNet on ``train_set``; the state of the best development score is kept and returned.

    The learning rate follows training *progress*, the larger of the epoch share and the time share of
    ``max_minutes``, so a run on a busy CPU still anneals before it is stopped."""
    import torch

    torch.manual_seed(int(cfg.get("seed", 0)))
    torch.set_num_threads(int(cfg.get("threads", 2)))
    net = build_model(float(cfg.get("width", 1.0)))
    init = cfg.get("init")
    if init and str(init).lower().endswith(".onnx"):  # a shipped model: its folded weights, BatchNorms recalibrated
        net = init_from_onnx(init, float(cfg.get("width", 1.0)), train_set, int(cfg.get("seed", 0)), log)
    elif init:  # continue from an earlier run's weights (``<name>.pt`` beside its ONNX model)
        net.load_state_dict(torch.load(init, map_location="cpu"))
    epochs = int(cfg.get("epochs", 1))
    batch = int(cfg.get("batch", 128))
    base_lr = float(cfg.get("lr", 3e-3))
    max_seconds = float(cfg.get("max_minutes", 1e9)) * 60
    workers = int(cfg.get("workers", 0))
    opt = torch.optim.AdamW(net.parameters(), lr=base_lr, weight_decay=float(cfg.get("weight_decay", 5e-4)))
    ce = torch.nn.CrossEntropyLoss(label_smoothing=float(cfg.get("label_smoothing", 0.05)))
    angle_weight = float(cfg.get("angle_weight", 1.0))
    log_every = int(cfg.get("log_every_steps", 0))  # 0: epoch lines only
    max_steps = int(cfg.get("max_steps", 0))  # 0: no limit (smoke runs stop early)
    loader: Any = torch.utils.data.DataLoader(
        train_set,  # type: ignore[arg-type]  # a map-style dataset; CropDataset does not subclass torch's
        batch_size=batch,
        shuffle=True,
        drop_last=len(train_set) > batch,
        num_workers=workers,
        collate_fn=_to_tensors,
        worker_init_fn=_init_worker if workers else None,
        persistent_workers=workers > 0,
        prefetch_factor=4 if workers else None,
    )
    steps_total = max(1, epochs * len(loader))
    start, step = time.perf_counter(), 0
    best_score, best_state, history = -1.0, copy.deepcopy(net.state_dict()), []
    for epoch in range(epochs):
        net.train()
        seen, loss_sum, t0 = 0, 0.0, time.perf_counter()
        for x, y, a in loader:
            progress = max(step / steps_total, (time.perf_counter() - start) / max_seconds)
            for group in opt.param_groups:
                group["lr"] = _progress_lr(base_lr, progress)
            logits, vec = net(x)
            loss = ce(logits, y) + angle_weight * angle_loss(vec, a)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            seen += len(y)
            loss_sum += float(loss.detach()) * len(y)
            if log_every and (step <= 5 or step % log_every == 0):
                log(f"step {step} loss {float(loss.detach()):.4f}")
            if time.perf_counter() - start > max_seconds or (max_steps and step >= max_steps):
                break
        metrics = _evaluate_dev(net, dev)
        record = {
            "epoch": epoch + 1,
            "loss": loss_sum / max(seen, 1),
            "crops": seen,
            "crops_per_s": seen / max(time.perf_counter() - t0, 1e-9),
            "elapsed_min": (time.perf_counter() - start) / 60,
            **metrics,
        }
        history.append(record)
        log(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()}))
        if metrics["score"] > best_score:
            best_score, best_state = metrics["score"], copy.deepcopy(net.state_dict())
        if time.perf_counter() - start > max_seconds:
            log(f"time budget reached after epoch {epoch + 1}")
            break
        if max_steps and step >= max_steps:
            log(f"step limit {max_steps} reached in epoch {epoch + 1}")
            break
    net.load_state_dict(best_state)
    net.eval()
    return net, history


def init_from_onnx(path: Path | str, width: float, train_set: CropDataset, seed: int, log: Any = print) -> Any:
    """A TileNet with an exported classifier's weights (``model.init: models/tile-classifier.onnx``), its
    BatchNorms recalibrated on augmented training crops so that train mode starts near the exported function
    (:mod:`vision.train.onnxinit`). The exported temperature is only reported: training fits its own."""
    from vision.train.onnxinit import CALIBRATION_CROPS, classifier_batches, classifier_from_onnx, recalibrate_batchnorm

    loaded = classifier_from_onnx(path, width)
    seen = recalibrate_batchnorm(loaded.net, classifier_batches(train_set, CALIBRATION_CROPS, 128, seed))
    log(
        f"init from {path}: width {loaded.width:g}, exported temperature {loaded.temperature:.3f}; "
        f"BatchNorms recalibrated on {seen} training crops"
    )
    return loaded.net


# ------------------------------------------------------------------------------------------------------ export


def export_onnx(net: Any, temperature: float, path: Path | str, check_crops: np.ndarray | None = None) -> float:
    """Write the ONNX model (input ``crops``, outputs ``probs``, ``angle_deg`` and ``features``, dynamic batch)
    and return the largest difference to torch on ``check_crops`` (probabilities, angles as circular degrees /
    100, features relative to their largest magnitude)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = _export_module(net, temperature)
    dummy = torch.rand(2, 3, CROP_SIZE, CROP_SIZE)
    kwargs: dict[str, Any] = {
        "input_names": ["crops"],
        "output_names": list(OUTPUT_NAMES),
        "dynamic_axes": {"crops": {0: "n"}, **{name: {0: "n"} for name in OUTPUT_NAMES}},
        "opset_version": 17,
    }
    try:
        torch.onnx.export(module, (dummy,), str(path), dynamo=False, **kwargs)
    except TypeError:  # older torch without the dynamo switch
        torch.onnx.export(module, (dummy,), str(path), **kwargs)
    x = to_input(check_crops) if check_crops is not None and len(check_crops) else dummy.numpy()
    with torch.no_grad():
        probs_t, angle_t, features_t = (t.numpy() for t in module(torch.from_numpy(x)))
    probs_o, angle_o, features_o = onnx_session(path).run(list(OUTPUT_NAMES), {"crops": x})
    angle_diff = angle_errors(angle_o, angle_t)
    features_diff = np.abs(features_o - features_t).max() / max(1.0, float(np.abs(features_t).max()))
    return float(
        max(np.abs(probs_o - probs_t).max(), (angle_diff.max() if len(angle_diff) else 0.0) / 100, features_diff)
    )


def reexport_onnx(source: Path | str, target: Path | str, check_crops: np.ndarray) -> dict[str, Any]:
    """Export an exported classifier again (rebuilt by :mod:`vision.train.onnxinit`, same temperature), now with
    every output in :data:`OUTPUT_NAMES`; compare the two files' ``probs`` and ``angle_deg`` on ``check_crops``
    (BGR uint8). ``target`` may be ``source``: the source is read before it is written."""
    from vision.train.onnxinit import classifier_from_onnx

    loaded = classifier_from_onnx(source)
    before = onnx_predict(onnx_session(source), check_crops)
    torch_diff = export_onnx(loaded.net, loaded.temperature, target, check_crops)
    after = onnx_predict(onnx_session(target), check_crops)
    return {
        "width": loaded.width,
        "temperature": loaded.temperature,
        "check_crops": len(check_crops),
        "max_abs_dprob": float(np.abs(after[0] - before[0]).max()),
        "max_angle_diff_deg": float(angle_errors(after[1], before[1]).max()),
        "top1_identical": bool(np.array_equal(after[0].argmax(1), before[0].argmax(1))),
        "onnx_max_abs_diff_vs_torch": torch_diff,
    }


def onnx_session(path: Path | str, threads: int = 2) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def onnx_predict(session: Any, crops: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """(probs, angle_deg) of BGR uint8 crops."""
    probs, angles = [], []
    for i in range(0, len(crops), batch):
        p, a = session.run(["probs", "angle_deg"], {"crops": to_input(crops[i : i + batch])})
        probs.append(p)
        angles.append(a)
    if not probs:
        return np.zeros((0, len(ALL_LABELS)), np.float32), np.zeros(0, np.float32)
    return np.concatenate(probs), np.concatenate(angles)


def time_onnx(path: Path | str, batch_sizes: Sequence[int] = (64, 1), repeats: int = 20) -> dict[str, float]:
    """Median milliseconds per crop with ONNX Runtime (2 threads) at each batch size."""
    session = onnx_session(path)
    rng = np.random.default_rng(0)
    out = {}
    for n in batch_sizes:
        x = rng.random((n, 3, CROP_SIZE, CROP_SIZE), dtype=np.float32)
        session.run(None, {"crops": x})
        times = []
        for _ in range(max(3, repeats if n > 1 else repeats * 5)):
            t0 = time.perf_counter()
            session.run(None, {"crops": x})
            times.append(time.perf_counter() - t0)
        out[f"ms_per_crop_batch{n}"] = float(np.median(times) * 1000 / n)
    return out


# -------------------------------------------------------------------------------------------------- evaluation


def evaluate_classifier(
    onnx_path: Path | str,
    photos: Sequence[Any],
    *,
    synthetic_heldout: Path | str | None = None,
    synthetic_max_images: int | None = None,
    jitter: JitterParams | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Crop accuracy on real photos from their true boxes (as is, jittered, and with the photo turned by a
    random angle), ECE, top confusions; accuracy and angle error distribution on synthetic held-out images."""
    session = onnx_session(onnx_path)
    jitter = jitter or JitterParams()
    rng = np.random.default_rng(seed)
    result: dict[str, Any] = {"real_photos": len(photos)}
    crops, labels = real_crops(photos)
    probs, _ = onnx_predict(session, crops)
    pred = probs.argmax(1) if len(probs) else np.zeros(0, np.int64)
    result["real_crops"] = len(labels)
    result["real_acc_true_boxes"] = float((pred == labels).mean()) if len(labels) else float("nan")
    result["real_ece"] = expected_calibration_error(probs, labels)
    result["real_top_confusions"] = top_confusions(pred, labels)
    result["real_mean_confidence"] = float(probs.max(1).mean()) if len(probs) else float("nan")
    jcrops, jlabels = real_crops(photos, rng=rng, jitter=jitter)
    jprobs, _ = onnx_predict(session, jcrops)
    result["real_acc_jittered_boxes"] = float((jprobs.argmax(1) == jlabels).mean()) if len(jlabels) else float("nan")
    result["real_ece_jittered"] = expected_calibration_error(jprobs, jlabels)
    rcrops, rlabels = _turned_real_crops(photos, rng, jitter)
    rprobs, _ = onnx_predict(session, rcrops)
    result["real_acc_turned_jittered"] = float((rprobs.argmax(1) == rlabels).mean()) if len(rlabels) else float("nan")
    if synthetic_heldout is not None:
        scrops, slabels, sangles = synthetic_crops(
            synthetic_heldout, max_images=synthetic_max_images, rng=rng, jitter=jitter
        )
        sprobs, sangle_pred = onnx_predict(session, scrops)
        err = angle_errors(sangle_pred, sangles)
        result["synthetic_heldout_crops"] = len(slabels)
        result["synthetic_heldout_acc_jittered"] = float((sprobs.argmax(1) == slabels).mean())
        result["synthetic_heldout_ece"] = expected_calibration_error(sprobs, slabels)
        result["synthetic_heldout_top_confusions"] = top_confusions(sprobs.argmax(1), slabels, 5)
        result["synthetic_angle_error_deg"] = {
            "median": float(np.median(err)),
            "p90": float(np.percentile(err, 90)),
            "p99": float(np.percentile(err, 99)),
            "share_over_45": float((err > 45).mean()),
            "share_over_90": float((err > 90).mean()),
        }
    return result


def _turned_real_crops(
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


# ------------------------------------------------------------------------------------------------------ recipe


def load_recipe(path: Path | str) -> dict[str, Any]:
    from vision.train.recipes import load_training_recipe

    return load_training_recipe(path, "classifier")


def _split_real_dev(photos: Sequence[Any], share: float, seed: int) -> tuple[list[Any], list[Any]]:
    """Train photos split by *source* photo (augmented copies stay together) into training and development."""
    sources = sorted({p.source for p in photos})
    rng = np.random.default_rng(seed)
    dev_sources = set(rng.choice(sources, round(len(sources) * share), replace=False).tolist()) if share else set()
    return [p for p in photos if p.source not in dev_sources], [p for p in photos if p.source in dev_sources]


def _heldout_halves(tiles: TileSet) -> tuple[TileSet, TileSet]:
    """Synthetic held-out tiles split by image: the first half for development and calibration."""
    images = sorted(set(tiles.sources))
    first = set(images[: len(images) // 2])
    a = [i for i, s in enumerate(tiles.sources) if s in first]
    b = [i for i, s in enumerate(tiles.sources) if s not in first]
    return tiles.subset(a), tiles.subset(b)


def train_classifier(recipe_path: Path | str, out_dir: Path | str) -> dict[str, Any]:
    """Build the data of a recipe, train, calibrate, export ``<name>.onnx`` and ``<name>.json`` to ``out_dir``;
    return the metrics (also written into the JSON card)."""
    import torch

    from vision.runtime import realdata

    started = time.perf_counter()
    recipe = load_recipe(recipe_path)
    data, train_cfg = recipe.get("data", {}), dict(recipe.get("train", {}))
    seed = int(recipe.get("seed", 0))
    train_cfg.setdefault("seed", seed)
    train_cfg.setdefault("width", recipe.get("model", {}).get("width", 1.0))
    train_cfg.setdefault("init", recipe.get("model", {}).get("init"))
    params = AugmentParams.from_dict(recipe.get("augment"))
    log = _logger(recipe.get("log"))

    synth = TileSet()
    for root in data.get("synthetic", []):
        synth.extend(
            synthetic_tileset(
                [root],
                max_images=data.get("synthetic_max_images"),
                max_tiles_per_image=data.get("synthetic_max_tiles_per_image"),
                seed=int(data.get("synthetic_seed", seed)),  # which tiles of each scene; the dev splits keep `seed`
            )
        )
    real_train, real_dev = TileSet(), TileSet()
    real_counts = {"train_photos": 0, "dev_photos": 0}
    if data.get("real_train", False):
        photos = realdata.load_photos(data.get("real_root") and Path(data["real_root"]), split="train")
        if data.get("real_max_photos"):
            photos = photos[: int(data["real_max_photos"])]
        train_photos, dev_photos = _split_real_dev(photos, float(data.get("real_dev_share", 0.1)), seed)
        real_train, real_dev = real_tileset(train_photos), real_tileset(dev_photos)
        real_counts = {"train_photos": len(train_photos), "dev_photos": len(dev_photos)}
    held_dev, held_test = TileSet(), TileSet()
    if data.get("synthetic_heldout"):
        held = synthetic_tileset([data["synthetic_heldout"]], max_images=data.get("heldout_max_images"), seed=seed)
        held_dev, held_test = _heldout_halves(held)
    log(
        f"tiles: synthetic {len(synth)}, real train {len(real_train)}, real dev {len(real_dev)}, "
        f"held-out dev {len(held_dev)}; patches {(synth.nbytes() + real_train.nbytes()) / 1e6:.0f} MB; "
        f"built in {time.perf_counter() - started:.0f} s"
    )

    all_tiles = TileSet()
    all_tiles.extend(synth)
    all_tiles.extend(real_train)
    per_tile = int(data.get("crops_per_tile", 1))
    oversample = int(data.get("real_oversample", 1))
    indices = list(range(len(synth))) * per_tile + list(range(len(synth), len(all_tiles))) * per_tile * oversample
    train_set = CropDataset(all_tiles, indices, params, seed)
    jitter = params.jitter
    dev = [
        DevSet(name, *fixed_crops(tiles, seed + k, jitter=jitter))
        for k, (name, tiles) in enumerate((("real_dev", real_dev), ("synth_dev", held_dev)))
        if len(tiles)
    ]
    if not dev:  # no development data: score on a slice of the training tiles (tiny recipes, tests)
        dev = [DevSet("train_slice", *fixed_crops(all_tiles.subset(range(min(256, len(all_tiles)))), seed))]
    # Real tiles' angles are unknown: their development crops count for accuracy only.
    train_started = time.perf_counter()
    net, history = train_model(train_set, dev, train_cfg, log)
    train_seconds = time.perf_counter() - train_started

    calib_logits, calib_labels = [], []
    for d in dev:
        logits, _ = predict_logits(net, d.crops)
        calib_logits.append(logits)
        calib_labels.append(d.labels)
    temperature = fit_temperature(np.concatenate(calib_logits), np.concatenate(calib_labels))
    log(f"temperature {temperature:.3f}")

    name = recipe.get("name", "tile-classifier")
    out = Path(out_dir)
    onnx_path = out / f"{name}.onnx"
    check = dev[0].crops[:64]
    max_diff = export_onnx(net, temperature, onnx_path, check)
    torch.save(net.state_dict(), out / f"{name}.pt")  # weights to continue from (recipe ``model.init``)
    log(f"onnx written: {onnx_path} ({onnx_path.stat().st_size / 1e6:.2f} MB), max diff to torch {max_diff:.2e}")

    metrics: dict[str, Any] = {"onnx_max_abs_diff_vs_torch": max_diff, "best_epoch": _best_epoch(history)}
    metrics["dev"] = history[metrics["best_epoch"] - 1] if history else {}
    evaluation = recipe.get("evaluate", {})
    if evaluation.get("real_val", False):
        val_photos = realdata.load_photos(data.get("real_root") and Path(data["real_root"]), split="val")
        metrics["eval"] = evaluate_classifier(
            onnx_path,
            val_photos,
            synthetic_heldout=data.get("synthetic_heldout") if len(held_test) else None,
            synthetic_max_images=data.get("heldout_max_images"),
            seed=seed,
        )
        if len(held_test):  # the second half of the held-out images was used for neither selection nor T
            metrics["eval"]["synthetic_heldout_note"] = "all held-out images; first half also used for dev/calibration"
            metrics["synthetic_heldout_test"] = _tileset_metrics(onnx_path, held_test, seed + 7, jitter)
    metrics["timing"] = time_onnx(onnx_path) if evaluation.get("timing", False) else {}

    card = {
        "name": name,
        "kind": "classifier",
        "recipe": recipe,
        "recipe_path": str(recipe_path),
        "inputs": {"crops": "(N,3,64,64) float32 RGB [0,1], vision.runtime.crops.to_input(crop_boxes(image, boxes))"},
        "outputs": {
            "probs": "(N,53) softmax after temperature, referee.tiles.ALL_LABELS order",
            "angle_deg": "(N,) tile up direction, degrees clockwise from image up, [0,360)",
            "features": "(N,D) float32 pooled features the label head reads (D=192 at width 1.0)",
        },
        "labels": list(ALL_LABELS),
        "data": {
            "synthetic_dirs": list(data.get("synthetic", [])),
            "synthetic_tiles": len(synth),
            "real_train_tiles": len(real_train),
            "real_dev_tiles": len(real_dev),
            "synthetic_heldout_dev_tiles": len(held_dev),
            "synthetic_heldout_test_tiles": len(held_test),
            "crops_per_epoch": len(train_set),
            "real_oversample": oversample,
            "real_credit": realdata.CREDIT if len(real_train) else None,
            **real_counts,
        },
        "model": {
            "width": float(train_cfg["width"]),
            "parameters": int(sum(p.numel() for p in net.parameters())),
            "onnx_bytes": onnx_path.stat().st_size,
        },
        "temperature": temperature,
        "history": history,
        "metrics": metrics,
        "train_seconds": train_seconds,
        "total_seconds": time.perf_counter() - started,
        "hardware": {
            "machine": platform.machine(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "torch_threads": int(train_cfg.get("threads", 2)),
        },
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    (out / f"{name}.json").write_text(json.dumps(_jsonable(card), indent=2) + "\n")
    return _jsonable({"temperature": temperature, "train_seconds": train_seconds, **metrics})


def _tileset_metrics(onnx_path: Path, tiles: TileSet, seed: int, jitter: JitterParams) -> dict[str, Any]:
    crops, labels, angles = fixed_crops(tiles, seed, jitter=jitter)
    probs, pred_angle = onnx_predict(onnx_session(onnx_path), crops)
    err = angle_errors(pred_angle, angles)
    return {
        "crops": len(labels),
        "acc_turned_jittered": float((probs.argmax(1) == labels).mean()),
        "ece": expected_calibration_error(probs, labels),
        "angle_median": float(np.median(err)),
        "angle_share_over_90": float((err > 90).mean()),
    }


def _best_epoch(history: Sequence[dict[str, Any]]) -> int:
    if not history:
        return 0
    return int(max(history, key=lambda r: r["score"])["epoch"])


def _logger(path: str | None) -> Any:
    """Progress lines on stdout (the epoch history also goes into the model card), and to ``path`` if given."""

    def log(message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        if path:
            with Path(path).open("a") as f:
                f.write(line + "\n")

    return log


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m vision.train.classifier reexport SRC.onnx OUT.onnx``: export a classifier again with every
    output in :data:`OUTPUT_NAMES` (an export made before ``features`` existed), checked on the real held-out
    photos' crops; prints the check as JSON."""
    import argparse
    import sys

    from vision.runtime import realdata

    parser = argparse.ArgumentParser(prog="python -m vision.train.classifier", description=main.__doc__)
    parser.add_argument("command", choices=("reexport",))
    parser.add_argument("source")
    parser.add_argument("target")
    args = parser.parse_args(argv)
    from vision.train.onnxinit import OnnxWeightsError

    try:
        crops, _ = real_crops(realdata.load_photos(split="val"))
        result = reexport_onnx(args.source, args.target, crops)
    except (OnnxWeightsError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0 if result["top1_identical"] and result["max_abs_dprob"] < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
