"""The real labelled photos in ``../shared/data`` (never copied into the repository).

537 photos = 179 source photos x 3 augmented copies (Roboflow Universe, jonasbuehler/rummikub-nvypk v9,
CC BY 4.0: credit "Rummikub dataset by jonasbuehler (Roboflow Universe, rummikub-nvypk v9), CC BY 4.0").
Labels are YOLO polygons with classes sorted as strings (``black_1, black_10, ...``): they are mapped to
the project's labels by name. Validation holds out whole source photos, never single augmented copies.
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


def load_photos(root: Path | None = None, split: str | None = None) -> list[RealPhoto]:
    """Every photo with its tiles in project labels; ``split`` "train" or "val" keeps one side."""
    root = root or default_root()
    if not (root / "images").is_dir():
        raise FileNotFoundError(
            f"real photos not found in {root} (set RUMMIKUB_REAL_DATA or put ../shared beside the project)"
        )
    names = [str(Tile.parse(n)) for n in class_names(root)]
    photos = []
    for image in sorted((root / "images").glob("*.jpg")):
        source = image.name.split("_jpeg")[0]
        group = source.rsplit("-", 1)[0]
        width, height = image_size(image)
        objects = read_label_file(root / "labels" / f"{image.stem}.txt", names, width, height)
        tiles = tuple(_real_tile(name, points) for name, points in objects)
        photo = RealPhoto(image, source, group, width, height, tiles)
        if split is None or photo.split == split:
            photos.append(photo)
    return photos


def _real_tile(label: str, points: np.ndarray) -> RealTile:
    x0, y0 = points.min(axis=0)
    x1, y1 = points.max(axis=0)
    return RealTile(label, (float(x0), float(y0), float(x1), float(y1)), tuple(map(tuple, points.tolist())))
