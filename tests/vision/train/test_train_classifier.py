"""Tile classifier training: data parity with the runtime crops, no flips, a tiny train -> ONNX round trip."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from tests.extras import needs_torch
from vision.runtime.crops import crop_boxes
from vision.train import classifier as C


def _tile_image(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
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
    image, polygon = _tile_image()
    box = C.polygon_box(polygon)
    expected = crop_boxes(image, box[None])[0]
    same_matrix = cv2.warpAffine(
        image, C.crop_matrix(box), (64, 64), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    assert np.array_equal(same_matrix, expected)  # crop_matrix is crop_boxes' matrix
    patch, poly = C.extract_patch(image, polygon)
    diff = np.abs(C.render_crop(patch, poly, 0.0).astype(int) - expected)
    assert diff.max() <= 1 and diff.mean() < 0.01


def test_real_and_synthetic_builders_cut_like_crop_boxes(tmp_path: Path) -> None:
    image, polygon = _tile_image()
    (tmp_path / "images").mkdir()
    (tmp_path / "meta").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "000000.png"), image)
    tile = {"label": "red-6", "box": C.polygon_box(polygon).tolist(), "polygon": polygon.tolist(), "readable": True}
    unreadable = {**tile, "label": "blue-2", "readable": False}
    meta = {"image": "images/000000.png", "tiles": [tile, unreadable]}
    (tmp_path / "meta" / "000000.json").write_text(json.dumps(meta))
    crops, labels, angles = C.synthetic_crops(tmp_path)
    assert labels.tolist() == [C.LABEL_INDEX["red-6"]]
    assert np.array_equal(crops[0], crop_boxes(image, np.array([tile["box"]]))[0])
    assert angles[0] == pytest.approx(0.0, abs=1e-6)
    tiles = C.synthetic_tileset([tmp_path])
    assert len(tiles) == 1 and tiles.angles[0] == pytest.approx(0.0, abs=1e-6)
    diff = np.abs(C.fixed_crops(tiles, 0, rotate=False)[0][0].astype(int) - crops[0])
    assert diff.max() <= 1 and diff.mean() < 0.01


def test_polygon_angle_and_rotation_agree() -> None:
    image, polygon = _tile_image()
    patch, poly = C.extract_patch(image, polygon)
    h, w = patch.shape[:2]
    for turn in (0, 30, 90, 180, 270, 333):
        turned = C._apply(C.rotation_matrix((w / 2, h / 2), turn), poly)
        assert (C.polygon_up_angle(turned) - turn + 180) % 360 - 180 == pytest.approx(0, abs=1e-4)


def test_augmentation_never_flips() -> None:
    """Turning the augmented crop back by its angle target gives the upright pattern, never its mirror."""
    image, polygon = _tile_image()
    patch, poly = C.extract_patch(image, polygon)
    tiles = C.TileSet()
    tiles.add(patch, poly, C.LABEL_INDEX["red-6"], 0.0, "x")
    upright = C.render_crop(patch, poly, 0.0).astype(np.float32)
    params = C.AugmentParams(jitter=C.JitterParams(0, 0, 0))
    rng = np.random.default_rng(1)
    for _ in range(12):
        crop, label, angle = C.augmented_sample(tiles, 0, rng, params)
        assert label == C.LABEL_INDEX["red-6"]
        back = cv2.warpAffine(crop, C.rotation_matrix((32, 32), -angle), (64, 64), borderMode=cv2.BORDER_REPLICATE)
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
    params = C.AugmentParams(brightness=0, contrast=0, gamma=0, white_balance=0, saturation=0, noise_prob=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        hue = cv2.cvtColor(C.photometric(red, rng, params), cv2.COLOR_BGR2HSV_FULL)[..., 0].astype(int)
        assert np.all(np.minimum(hue, 256 - hue) <= 4)  # within ~5 degrees of pure red


@needs_torch
def test_tiny_recipe_trains_and_onnx_matches_torch(tmp_path: Path) -> None:
    data = tmp_path / "synth"
    (data / "images").mkdir(parents=True)
    (data / "meta").mkdir()
    labels = ["red-6", "red-9", "blue-1", "joker"]
    for i in range(24):
        image, polygon = _tile_image(i)
        label = labels[i % 4]
        cv2.imwrite(str(data / "images" / f"{i:06d}.png"), image)
        tile = {"label": label, "box": C.polygon_box(polygon).tolist(), "polygon": polygon.tolist(), "readable": True}
        (data / "meta" / f"{i:06d}.json").write_text(json.dumps({"image": f"images/{i:06d}.png", "tiles": [tile]}))
    recipe = {
        "kind": "classifier",
        "name": "tiny",
        "data": {"synthetic": [str(data)], "crops_per_tile": 8, "real_train": False},
        "model": {"width": 0.25},
        "train": {"epochs": 1, "batch": 32, "lr": 0.003, "threads": 2, "workers": 0},
        "evaluate": {"real_val": False, "timing": False},
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(recipe))
    metrics = C.train_classifier(path, tmp_path / "out")
    assert metrics["onnx_max_abs_diff_vs_torch"] < 1e-4
    onnx_path = tmp_path / "out" / "tiny.onnx"
    card = json.loads((tmp_path / "out" / "tiny.json").read_text())
    assert card["data"]["crops_per_epoch"] == 24 * 8 and card["temperature"] > 0
    session = C.onnx_session(onnx_path)
    for n in (1, 5):  # dynamic batch
        x = np.random.default_rng(n).random((n, 3, 64, 64), np.float32)
        probs, angle, features = session.run(["probs", "angle_deg", "features"], {"crops": x})
        assert probs.shape == (n, 53) and angle.shape == (n,) and features.shape == (n, 48)  # width 0.25
        assert np.allclose(probs.sum(1), 1, atol=1e-5) and np.all((angle >= 0) & (angle < 360))
    # the run's weights continue in a second run (recipe model.init)
    assert (tmp_path / "out" / "tiny.pt").is_file()
    recipe["model"]["init"] = str(tmp_path / "out" / "tiny.pt")
    recipe["train"]["lr"], recipe["seed"] = 0.0, 5  # another seed, nothing learnt: the weights are the loaded ones
    path.write_text(yaml.safe_dump(recipe))
    C.train_classifier(path, tmp_path / "again")
    import torch

    first, again = (torch.load(tmp_path / d / "tiny.pt") for d in ("out", "again"))
    weights = [k for k in first if k.endswith("weight")]
    assert weights and all(torch.equal(first[k], again[k]) for k in weights)


def test_recipe_needs_kind(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("name: x\n")
    with pytest.raises(ValueError, match="kind: classifier"):
        C.load_recipe(path)


@needs_torch  # train_classifier imports torch before it builds the data
def test_synthetic_seed_picks_which_tiles_of_each_scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Built(Exception):
        pass

    seeds = []

    def record(roots: list[str], **options: object) -> None:
        seeds.append(options["seed"])
        raise Built

    monkeypatch.setattr(C, "synthetic_tileset", record)
    path = tmp_path / "r.yaml"
    for data, expected in (({"synthetic_seed": 1}, 1), ({}, 7)):
        recipe = {"kind": "classifier", "seed": 7, "data": {"synthetic": ["somewhere"], "real_train": False, **data}}
        path.write_text(yaml.safe_dump(recipe))
        with pytest.raises(Built):
            C.train_classifier(path, tmp_path / "out")
        assert seeds.pop() == expected  # the recipe's seed still draws the dev splits


@needs_torch
def test_reexport_adds_the_features_output_and_keeps_the_readings(tmp_path: Path) -> None:
    import onnx
    import torch

    torch.manual_seed(0)
    net = C.build_model(0.25).eval()
    source, target = tmp_path / "old.onnx", tmp_path / "new.onnx"
    C.export_onnx(net, 1.3, source)
    model = onnx.load(str(source))  # an export from before the features output: drop it
    kept = [o for o in model.graph.output if o.name != "features"]
    del model.graph.output[:]
    model.graph.output.extend(kept)
    onnx.save(model, str(source))
    crops = np.random.default_rng(0).integers(0, 256, (6, 64, 64, 3), dtype=np.uint8)
    result = C.reexport_onnx(source, target, crops)
    assert result["max_abs_dprob"] < 1e-6 and result["top1_identical"] and result["temperature"] == pytest.approx(1.3)
    assert [o.name for o in C.onnx_session(target).get_outputs()] == list(C.OUTPUT_NAMES)
