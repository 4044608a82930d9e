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

CREDIT = "Rummikub dataset by jonasbuehler (Roboflow Universe, rummikub-nvypk v9), CC BY 4.0"
DATASET_NAME = "rummikub-nvypk-train"
VALIDATION_SHARE = 0.3
"""Share of source photos held out (chosen by a hash of the source name, so the split never changes)."""


def default_root() -> Path:
    """``$RUMMIKUB_REAL_DATA`` or ``../shared/data/rummikub-nvypk-train`` beside the project."""
    env = os.environ.get("RUMMIKUB_REAL_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared" / "data" / DATASET_NAME


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


def class_names(root: Path) -> list[str]:
    import yaml

    data = yaml.safe_load((root / "classes.yaml").read_text())
    names = data["names"]
    return list(names.values()) if isinstance(names, dict) else list(names)


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
        width, height = _image_size(image)
        label_file = root / "labels" / f"{image.stem}.txt"
        tiles = tuple(_read_labels(label_file, names, width, height)) if label_file.exists() else ()
        photo = RealPhoto(image, source, group, width, height, tiles)
        if split is None or photo.split == split:
            photos.append(photo)
    return photos


def _read_labels(path: Path, names: list[str], width: int, height: int) -> list[RealTile]:
    tiles = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) < 5:
            continue
        label = names[int(parts[0])]
        coords = np.array(parts[1:], float)
        if len(coords) == 4:  # a plain box: cx cy w h
            cx, cy, bw, bh = coords * [width, height, width, height]
            polygon = (
                (cx - bw / 2, cy - bh / 2),
                (cx + bw / 2, cy - bh / 2),
                (cx + bw / 2, cy + bh / 2),
                (cx - bw / 2, cy + bh / 2),
            )
        else:
            points = coords.reshape(-1, 2) * [width, height]
            polygon = tuple(map(tuple, points.tolist()))
        pts = np.array(polygon)
        box = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
        tiles.append(RealTile(label, box, polygon))
    return tiles


def _image_size(path: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        return image.size
