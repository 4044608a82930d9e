"""Reading YOLO-format datasets: class names, image sizes and label files (boxes or polygons).

One reader for the real photos (:mod:`vision.realdata`) and for evaluation folders (:mod:`vision.evaluate`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


class DatasetError(ValueError):
    """A dataset folder or label file that cannot be read as YOLO data; the message names the culprit."""


def class_names(data_dir: Path) -> list[str]:
    """Class names from ``data.yaml`` or ``classes.yaml`` in the folder or its parent."""
    import yaml

    for folder in (data_dir, data_dir.parent):
        for name in ("data.yaml", "classes.yaml"):
            path = folder / name
            if path.is_file():
                names = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("names")
                if isinstance(names, dict):
                    return [names[k] for k in sorted(names)]
                if isinstance(names, list):
                    return [str(n) for n in names]
    raise DatasetError(f"{data_dir}: no class names (data.yaml or classes.yaml with 'names' here or one level up)")


def image_size(path: Path) -> tuple[int, int]:
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.size
    except OSError:
        raise DatasetError(f"{path}: not a readable image") from None


def read_label_file(path: Path, names: list[str], width: int, height: int) -> list[tuple[str, np.ndarray]]:
    """(class name, outline in pixels) per line; a plain box ``cx cy w h`` becomes its four corners."""
    objects: list[tuple[str, np.ndarray]] = []
    if not path.is_file():
        return objects
    for number, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        try:
            class_index, coords = int(parts[0]), np.array(parts[1:], float)
            name = names[class_index]
        except (ValueError, IndexError):
            raise DatasetError(f"{path}:{number}: not a YOLO label line: {line[:60]!r}") from None
        if len(coords) == 4:
            cx, cy, w, h = coords
            points = np.array(
                [[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2], [cx - w / 2, cy + h / 2]]
            )
        elif len(coords) >= 6 and len(coords) % 2 == 0:
            points = coords.reshape(-1, 2)
        else:
            raise DatasetError(f"{path}:{number}: expected a box or a polygon, got {len(coords)} numbers")
        objects.append((name, points * [width, height]))
    return objects
