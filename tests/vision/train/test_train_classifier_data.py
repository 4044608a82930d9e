"""The classifier's training data: crops cut as the runtime cuts them, angles that agree with rotation, no flips,
hue jitter that keeps red red."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.runtime.crops import crop_boxes
from vision.train import classifier_data as D


def tile_image(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A 200x160 image with one asymmetric 'tile' (an L-shape with a dot) and its upright polygon."""
    rng = np.random.default_rng(seed)
    image = (rng.random((160, 200, 3)) * 40 + 100).astype(np.uint8)
    cv2.rectangle(image, (80, 50), (120, 110), (235, 235, 235), -1)
    cv2.rectangle(image, (88, 58), (94, 95), (20, 20, 200), -1)  # vertical bar on the left
    cv2.rectangle(image, (88, 89), (110, 95), (20, 20, 200), -1)  # foot to the right
    cv2.circle(image, (112, 60), 3, (200, 20, 20), -1)  # dot top-right
    polygon = np.array([[80, 50], [120, 50], [120, 110], [80, 110]], np.float32)
    return image, polygon


def test_patch_crop_equals_crop_boxes_without_jitter() -> None:
    """A training crop at angle 0 without jitter is the runtime crop (up to fixed-point rounding of the warp)."""
    image, polygon = tile_image()
    box = D.polygon_box(polygon)
    expected = crop_boxes(image, box[None])[0]
    same_matrix = cv2.warpAffine(
        image, D.crop_matrix(box), (64, 64), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    assert np.array_equal(same_matrix, expected)  # crop_matrix is crop_boxes' matrix
    patch, poly = D.extract_patch(image, polygon)
    diff = np.abs(D.render_crop(patch, poly, 0.0).astype(int) - expected)
    assert diff.max() <= 1 and diff.mean() < 0.01


def test_real_and_synthetic_builders_cut_like_crop_boxes(tmp_path: Path) -> None:
    image, polygon = tile_image()
    (tmp_path / "images").mkdir()
    (tmp_path / "meta").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "000000.png"), image)
    tile = {"label": "red-6", "box": D.polygon_box(polygon).tolist(), "polygon": polygon.tolist(), "readable": True}
    unreadable = {**tile, "label": "blue-2", "readable": False}
    meta = {"image": "images/000000.png", "tiles": [tile, unreadable]}
    (tmp_path / "meta" / "000000.json").write_text(json.dumps(meta))
    crops, labels, angles = D.synthetic_crops(tmp_path)
    assert labels.tolist() == [D.LABEL_INDEX["red-6"]]
    assert np.array_equal(crops[0], crop_boxes(image, np.array([tile["box"]]))[0])
    assert angles[0] == pytest.approx(0.0, abs=1e-6)
    tiles = D.synthetic_tileset([tmp_path])
    assert len(tiles) == 1 and tiles.angles[0] == pytest.approx(0.0, abs=1e-6)
    diff = np.abs(D.fixed_crops(tiles, 0, rotate=False)[0][0].astype(int) - crops[0])
    assert diff.max() <= 1 and diff.mean() < 0.01


def test_polygon_angle_and_rotation_agree() -> None:
    image, polygon = tile_image()
    patch, poly = D.extract_patch(image, polygon)
    h, w = patch.shape[:2]
    for turn in (0, 30, 90, 180, 270, 333):
        turned = D._apply(D.rotation_matrix((w / 2, h / 2), turn), poly)
        assert (D.polygon_up_angle(turned) - turn + 180) % 360 - 180 == pytest.approx(0, abs=1e-4)


def test_augmentation_never_flips() -> None:
    """Turning the augmented crop back by its angle target gives the upright pattern, never its mirror."""
    image, polygon = tile_image()
    patch, poly = D.extract_patch(image, polygon)
    tiles = D.TileSet()
    tiles.add(patch, poly, D.LABEL_INDEX["red-6"], 0.0, "x")
    upright = D.render_crop(patch, poly, 0.0).astype(np.float32)
    params = D.AugmentParams(jitter=D.JitterParams(0, 0, 0))
    rng = np.random.default_rng(1)
    for _ in range(12):
        crop, label, angle = D.augmented_sample(tiles, 0, rng, params)
        assert label == D.LABEL_INDEX["red-6"]
        back = cv2.warpAffine(crop, D.rotation_matrix((32, 32), -angle), (64, 64), borderMode=cv2.BORDER_REPLICATE)
        core = (slice(14, 50), slice(18, 46))
        same = _corr(back[core], upright[core])
        mirrored = max(_corr(back[core], np.flip(upright, axis)[core]) for axis in (0, 1))
        assert same > 0.5 and same > mirrored + 0.2


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(np.corrcoef(a, b)[0, 1])


def test_hue_jitter_keeps_red_red() -> None:
    red = np.zeros((64, 64, 3), np.uint8)
    red[:] = (30, 30, 200)
    params = D.AugmentParams(brightness=0, contrast=0, gamma=0, white_balance=0, saturation=0, noise_prob=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        hue = cv2.cvtColor(D.photometric(red, rng, params), cv2.COLOR_BGR2HSV_FULL)[..., 0].astype(int)
        assert np.all(np.minimum(hue, 256 - hue) <= 4)  # within ~5 degrees of pure red
