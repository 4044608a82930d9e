"""The real labelled photos in ``../shared/data`` (never copied into the repository).

537 photos = 179 source photos x 3 augmented copies (Roboflow Universe, jonasbuehler/rummikub-nvypk v9,
CC BY 4.0: credit "Rummikub dataset by jonasbuehler (Roboflow Universe, rummikub-nvypk v9), CC BY 4.0").
Labels are YOLO polygons with classes sorted as strings (``black_1, black_10, ...``): they are mapped to
the project's labels by name. Validation holds out whole source photos, never single augmented copies.

The labels were audited once (2026-11-27): every tile whose label the shipped models confidently disagreed with, and
every copy whose label boxes lay unusually far from the boxes read (median IoU under 0.6, against 0.84 typically), was
looked at. Two defects were found and are corrected on loading (:data:`RELABELLED`, :data:`LEFT_OUT`; ``audited=False``
gives the labels as published): a black 5 labelled ``orange-8`` in the three copies of ``rummy4-24``, and one copy of
``rummy-45`` whose label boxes all lie 6-9 px up and left of their tiles. Both are in the validation split.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from referee.tiles import Tile
from vision.runtime.yolofiles import class_names, image_size, read_label_file

CREDIT = "Rummikub dataset by jonasbuehler (Roboflow Universe, rummikub-nvypk v9), CC BY 4.0"
DATASET_NAME = "rummikub-nvypk-train"
VALIDATION_SHARE = 0.3
"""Share of source photos held out (chosen by a hash of the source name, so the split never changes)."""


def default_root() -> Path:
    """``$RUMMIKUB_REAL_DATA`` or ``../shared/data/rummikub-nvypk-train`` beside the project."""
    env = os.environ.get("RUMMIKUB_REAL_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "data" / DATASET_NAME


@dataclass(frozen=True, slots=True)
class Relabel:
    """One tile labelled wrong in the published data: in ``image``, the tile labelled ``published`` whose box's
    centre lies within :data:`RELABEL_RADIUS_PX` of ``centre`` is ``label``."""

    image: str
    published: str
    centre: tuple[float, float]
    label: str


RELABEL_RADIUS_PX = 10.0
RELABELLED = tuple(
    Relabel(f"rummy4-24_jpeg.rf.{digest}.jpg", "orange-8", centre, "black-5")
    for digest, centre in (
        ("163aba29340a2175cf091647f2392ca1", (318.5, 358.0)),
        ("3a0229ac4bc7acb4c14d2f439c9b5abd", (270.5, 350.5)),
        ("6d26db94b41e8276c3f3ef29a4bcbc42", (317.0, 397.5)),
    )
)
"""Labels corrected on loading: the source photo ``rummy4-24`` holds orange 6, 7, 8 and a black 5, labelled as a
second ``orange-8`` in all three copies (plain to see: a black digit 5; the classifier reads it ``black-5`` at
0.997)."""
LEFT_OUT = {
    "rummy-45_jpeg.rf.1a6bb41368fb76cb3586e901b78b75cc.jpg": "every label box lies 6-9 px up and left of its tile"
    " (IoU 0.45-0.72 with the tiles' boxes; the source's two other copies are labelled right)",
}
"""Copies left out of the audited photos, and why."""


@dataclass(frozen=True, slots=True)
class RealTile:
    label: str
    """Project label (``red-7``, ``joker``)."""
    box: tuple[float, float, float, float]
    """Pixels of the image: the polygon's min/max."""
    polygon: tuple[tuple[float, float], ...]


@dataclass(frozen=True, slots=True)
class RealPhoto:
    path: Path
    source: str
    """The source photo this copy was made from (the file name before ``_jpeg``)."""
    group: str
    """Photo group from the file name: rummy, rummy2, rummy3, rummy4, rummyBackground."""
    width: int
    height: int
    tiles: tuple[RealTile, ...]

    @property
    def split(self) -> str:
        return split_of(self.source)


def split_of(source: str) -> str:
    return "val" if zlib.crc32(source.encode()) % 1000 < VALIDATION_SHARE * 1000 else "train"


def load_photos(root: Path | None = None, split: str | None = None, *, audited: bool = True) -> list[RealPhoto]:
    """Every photo with its tiles in project labels; ``split`` "train" or "val" keeps one side. ``audited``: with
    the label defects found corrected (:data:`RELABELLED`) and the copies that cannot be corrected left out
    (:data:`LEFT_OUT`); otherwise the labels as published."""
    root = root or default_root()
    if not (root / "images").is_dir():
        raise FileNotFoundError(
            f"real photos not found in {root} (set RUMMIKUB_REAL_DATA or put ../shared beside the project)"
        )
    names = [str(Tile.parse(n)) for n in class_names(root)]
    photos = []
    for image in sorted((root / "images").glob("*.jpg")):
        if audited and image.name in LEFT_OUT:
            continue
        source = image.name.split("_jpeg")[0]
        group = source.rsplit("-", 1)[0]
        width, height = image_size(image)
        objects = read_label_file(root / "labels" / f"{image.stem}.txt", names, width, height)
        tiles = tuple(_real_tile(name, points) for name, points in objects)
        if audited:
            tiles = tuple(corrected(image.name, tile) for tile in tiles)
        photo = RealPhoto(image, source, group, width, height, tiles)
        if split is None or photo.split == split:
            photos.append(photo)
    return photos


def _real_tile(label: str, points: np.ndarray) -> RealTile:
    x0, y0 = points.min(axis=0)
    x1, y1 = points.max(axis=0)
    return RealTile(label, (float(x0), float(y0), float(x1), float(y1)), tuple(map(tuple, points.tolist())))


def corrected(image: str, tile: RealTile) -> RealTile:
    """The tile with its label corrected where :data:`RELABELLED` says so."""
    x0, y0, x1, y1 = tile.box
    for fix in RELABELLED:
        near = np.hypot((x0 + x1) / 2 - fix.centre[0], (y0 + y1) / 2 - fix.centre[1]) <= RELABEL_RADIUS_PX
        if fix.image == image and fix.published == tile.label and near:
            return RealTile(fix.label, tile.box, tile.polygon)
    return tile


def audit_summary() -> str:
    """One line naming what the audit changes (for evaluation reports)."""
    return (
        f"labels audited: {len(RELABELLED)} tile labels corrected,"
        f" {len(LEFT_OUT)} {'copy' if len(LEFT_OUT) == 1 else 'copies'} left out"
        " (vision/runtime/realdata.py; --labels-as-published for the labels as published)"
    )
