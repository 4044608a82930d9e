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


def _small_only(**overrides: object) -> D.AugmentParams:
    """Every crop cut at video scale, without blur, compression or box jitter unless asked."""
    fields: dict = {
        "small_tile_prob": 1.0,
        "small_blur_prob": 0.0,
        "video_jpeg_prob": 0.0,
        "tilt_squash": (1.0, 1.0),
        "jitter": D.JitterParams(0, 0, 0),
    }
    return D.AugmentParams(**{**fields, **overrides})  # type: ignore[arg-type]


def test_small_crop_is_the_runtime_crop_of_the_shrunk_frame() -> None:
    """At angle 0 the video-scale crop equals crop_boxes on the image shrunk (area) to a 24 px tile: train/serve
    parity at live tile scale."""
    image, polygon = tile_image()
    patch, poly = D.extract_patch(image, polygon)
    params = _small_only(small_tile_px=(24.0, 24.0))
    crop = D.render_small_crop(patch, poly, 0.0, np.random.default_rng(0), params)
    h, w = patch.shape[:2]
    scale = 24.0 / 60.0  # the tile's longer side is 60 px
    out_w, out_h = round(w * scale), round(h * scale)
    small = cv2.resize(patch, (out_w, out_h), interpolation=cv2.INTER_AREA)
    box = D.polygon_box((poly + 0.5) * np.array([out_w / w, out_h / h]) - 0.5)
    expected = crop_boxes(small, box[None])[0]
    assert np.abs(crop.astype(int) - expected).max() <= 1
    full = D.render_crop(patch, poly, 0.0).astype(np.float32)
    assert _corr(crop, full) > 0.8  # the same tile, softer
    assert np.abs(crop.astype(np.float32) - full).mean() > 1.0  # ... and really cut from fewer pixels


def test_small_crop_turned_and_squashed_keeps_its_angle_target() -> None:
    """Turned 180 degrees at video scale the crop is the upright crop turned; squashed as by a tilted camera and
    turned any way, turning it back by its angle target gives the upright tile, never its mirror."""
    image, polygon = tile_image()
    patch, poly = D.extract_patch(image, polygon)
    upright = D.render_small_crop(patch, poly, 0.0, np.random.default_rng(0), _small_only(small_tile_px=(30, 30)))
    turned = D.render_small_crop(patch, poly, 180.0, np.random.default_rng(0), _small_only(small_tile_px=(30, 30)))
    back = np.rot90(turned, 2)
    core = (slice(14, 50), slice(18, 46))
    assert _corr(back[core], upright[core]) > 0.8
    tiles = D.TileSet()
    tiles.add(patch, poly, D.LABEL_INDEX["red-6"], 0.0, "x")
    params = _small_only(tilt_squash=(0.8, 1.0))  # geometry only: blur and compression blur the comparison
    rng = np.random.default_rng(3)
    for _ in range(8):
        crop, _, angle = D.augmented_sample(tiles, 0, rng, params)
        back = cv2.warpAffine(crop, D.rotation_matrix((32, 32), -angle), (64, 64), borderMode=cv2.BORDER_REPLICATE)
        same = _corr(back[core], upright[core])
        mirrored = max(_corr(back[core], np.flip(upright, axis)[core]) for axis in (0, 1))
        assert same > 0.5 and same > mirrored + 0.2


@pytest.mark.parametrize(
    ("prob", "near_right_angle"),
    [
        (1.0, 1.0),  # every turn within a few degrees of 0/90/180/270
        (0.0, 10 / 90),  # uniform: the share of angles within 5 degrees of a right angle by chance
    ],
)
def test_turns_near_right_angles(prob: float, near_right_angle: float) -> None:
    params = D.AugmentParams(right_angle_prob=prob, small_angle_deg=1.5)
    rng = np.random.default_rng(0)
    turns = np.array([D.draw_turn(rng, params) for _ in range(2000)])
    off = np.abs((turns + 45) % 90 - 45)
    assert np.mean(off < 5) == pytest.approx(near_right_angle, abs=0.03)
    quarter = np.round(turns / 90) % 4
    assert all(np.mean(quarter == k) > 0.2 for k in range(4))  # all four seats' directions


def test_default_augmentation_keeps_older_recipes_crops() -> None:
    """Zero probabilities draw no random numbers: a recipe without the new options gets the crops it got before
    they existed (the turn and photometric draws in their old order)."""
    image, polygon = tile_image()
    patch, poly = D.extract_patch(image, polygon)
    tiles = D.TileSet()
    tiles.add(patch, poly, D.LABEL_INDEX["red-6"], 0.0, "x")
    params = D.AugmentParams()
    crop, _, angle = D.augmented_sample(tiles, 0, np.random.default_rng(5), params)
    rng = np.random.default_rng(5)
    turn = float(rng.uniform(0, 360))
    expected = D.photometric(D.render_crop(patch, poly, turn, rng=rng, jitter=params.jitter), rng, params)
    assert angle == pytest.approx(turn) and np.array_equal(crop, expected)


def test_augment_params_read_the_new_ranges_from_a_recipe() -> None:
    params = D.AugmentParams.from_dict({"small_tile_prob": 0.5, "small_tile_px": [20, 40], "tilt_squash": [0.8, 1]})
    assert params.small_tile_prob == 0.5 and params.small_tile_px == (20, 40) and params.tilt_squash == (0.8, 1)


@pytest.mark.parametrize(
    "path", sorted((Path(__file__).resolve().parents[3] / "models").glob("classifier*.yaml")), ids=lambda p: p.stem
)
def test_every_classifier_recipe_names_known_augmentations(path: Path) -> None:
    """A misspelt augmentation option fails here, not after the data of a long run are built."""
    from vision.train.recipes import load_training_recipe

    D.AugmentParams.from_dict(load_training_recipe(path, "classifier").get("augment"))
