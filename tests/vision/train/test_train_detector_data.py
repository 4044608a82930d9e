"""The detector's training set: native-resolution windows cut from synthetic scenes, boxes clipped to them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.synth.dataset import write_dataset
from vision.synth.scene import SceneParams
from vision.train.detector import _clip_boxes, _yolo_boxes, build_dataset


def test_a_box_cut_by_the_window_is_clipped_or_dropped() -> None:
    boxes = [(10.0, 10.0, 30.0, 40.0), (90.0, 10.0, 130.0, 40.0), (95.0, 50.0, 145.0, 80.0)]
    lines = _clip_boxes(boxes, (0, 0, 100, 100), min_visible=0.6)
    # inside: kept as is; a quarter inside: dropped; 10 of 50 px inside: dropped
    assert lines == ["0 0.200000 0.250000 0.200000 0.300000"]
    lines = _clip_boxes(boxes, (0, 0, 125, 100), min_visible=0.6)
    assert lines[1] == f"0 {107.5 / 125:.6f} 0.250000 {35 / 125:.6f} 0.300000"  # 35 of 40 px inside: clipped


def test_crops_keep_native_resolution_and_are_the_same_for_the_same_seed(tmp_path: Path) -> None:
    scenes = tmp_path / "synth"
    write_dataset(scenes, 2, seed=3, params=SceneParams(size=(400, 300)), workers=1, progress=False)
    recipe = {
        "data": {
            "synthetic_train": [{"dir": str(scenes), "images": 2, "crop": 200, "crops_per_image": 2, "seed": 7}],
            "synthetic_val": [{"dir": str(scenes), "images": 1}],
        }
    }
    data_yaml = build_dataset(recipe, tmp_path / "a", tmp_path)
    assert '"train": 4, "val": 1' in data_yaml.read_text()
    crops = sorted((tmp_path / "a" / "train" / "images").glob("crop-*.jpg"))
    assert len(crops) == 4 and all(Image.open(c).size == (200, 200) for c in crops)
    build_dataset(recipe, tmp_path / "b", tmp_path)
    assert labels_in(tmp_path / "a") == labels_in(tmp_path / "b")
    assert any(text.strip() for text in labels_in(tmp_path / "a"))
    for text in labels_in(tmp_path / "a"):
        rows = [list(map(float, line.split()[1:])) for line in text.splitlines() if line.strip()]
        assert all(0 <= v <= 1 for row in rows for v in row)


def labels_in(root: Path) -> list[str]:
    return [p.read_text() for p in sorted((root / "train" / "labels").glob("*.txt"))]


@pytest.mark.parametrize("spec", [{"crop": 200}, {}])
def test_a_folder_without_scenes_is_a_clear_error(tmp_path: Path, spec: dict) -> None:
    (tmp_path / "empty" / "images").mkdir(parents=True)
    recipe = {"data": {"synthetic_train": [{"dir": str(tmp_path / "empty"), **spec}]}}
    with pytest.raises(FileNotFoundError, match="no synthetic images"):
        build_dataset(recipe, tmp_path / "out", tmp_path)


def test_tile_scale_windows_put_the_median_tile_at_the_asked_width(tmp_path: Path) -> None:
    scenes = tmp_path / "synth"
    write_dataset(scenes, 2, seed=3, params=SceneParams(size=(800, 600)), workers=1, progress=False)
    window = {"dir": str(scenes), "images": 2, "crop": 160, "crops_per_image": 2, "seed": 7, "tile_px": [20, 20]}
    recipe = {"data": {"synthetic_train": [window], "synthetic_val": [{"dir": str(scenes), "images": 1}]}}
    build_dataset(recipe, tmp_path / "a", tmp_path)
    widths = []
    for label in (tmp_path / "a" / "train" / "labels").glob("*.txt"):
        for line in filter(str.strip, label.read_text().splitlines()):
            w, h = (float(v) * 160 for v in line.split()[3:5])
            widths.append(min(w, h))
    assert len(widths) >= 4
    assert 16 <= float(np.median(widths)) <= 21  # clipped boxes at the windows' edges only shrink
    native = [min(b[2] - b[0], b[3] - b[1]) for b in _yolo_boxes(next((scenes / "labels").glob("*.txt")), 800, 600)]
    assert float(np.median(native)) > 25  # the scenes' own tiles are larger: the windows were scaled down
    recipe["data"]["synthetic_train"] = [{**window, "workers": 1}]
    build_dataset(recipe, tmp_path / "b", tmp_path)
    assert labels_in(tmp_path / "a") == labels_in(tmp_path / "b")  # the same windows whatever the processes
