"""Reading YOLO-format datasets: class names, image sizes and label files (boxes or polygons).

One reader for the real photos (:mod:`vision.runtime.realdata`) and for evaluation folders
(:mod:`vision.eval.evaluate`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from vision.runtime import imagefile
from vision.runtime.yamlfile import YamlFileError, read_yaml, require_mapping


class DatasetError(ValueError):
    """A dataset folder or label file that cannot be read as YOLO data; the message names the culprit."""


def class_names(data_dir: Path) -> list[str]:
    """Class names from ``data.yaml`` or ``classes.yaml`` in the folder or its parent."""
    for folder in (data_dir, data_dir.parent):
        for name in ("data.yaml", "classes.yaml"):
            path = folder / name
            if path.is_file():
                return _names_in(path)
    raise DatasetError(f"{data_dir}: no class names (data.yaml or classes.yaml with 'names' here or one level up)")


def _names_in(path: Path) -> list[str]:
    """The ``names`` of a dataset file: a list, or a mapping from class number to name (YOLO writes both)."""
    try:
        data = require_mapping(read_yaml(path, "dataset file"), path, "dataset file")
    except YamlFileError as error:
        raise DatasetError(str(error)) from None
    names: Any = data.get("names")  # YAML: checked below
    numbered = isinstance(names, dict) and all(isinstance(k, int) and not isinstance(k, bool) for k in names)
    if numbered and sorted(names) == list(range(len(names))):
        return [str(names[k]) for k in sorted(names)]
    if isinstance(names, list) and names and all(isinstance(n, str | int) for n in names):
        return [str(n) for n in names]
    raise DatasetError(f"{path}: 'names' must list the class names, or map class numbers 0, 1, 2... to them")


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) from the image's header; the file named if it is unreadable, too small or too large."""
    try:
        return imagefile.image_size(path)
    except imagefile.ImageReadError as error:
        raise DatasetError(str(error)) from None


def read_label_file(path: Path, names: list[str], width: int, height: int) -> list[tuple[str, np.ndarray]]:
    """(class name, outline in pixels) per line; a plain box ``cx cy w h`` becomes its four corners."""
    objects: list[tuple[str, np.ndarray]] = []
    if not path.is_file():
        return objects
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        raise DatasetError(f"{path}: not a YOLO label file (not UTF-8 text at byte {error.start})") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot read the label file ({error.strerror or error})") from None
    for number, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        try:
            class_index, coords = int(parts[0]), np.array(parts[1:], float)
            name = names[class_index] if class_index >= 0 else names[len(names)]  # no class counted from the end
        except (ValueError, IndexError):
            raise DatasetError(f"{path}:{number}: not a YOLO label line: {line[:60]!r}") from None
        if not np.isfinite(coords).all():
            raise DatasetError(f"{path}:{number}: coordinates must be finite numbers: {line[:60]!r}")
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
