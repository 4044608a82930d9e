"""Tile classifier training: a tiny train -> ONNX round trip, the recipe, re-export (the training data:
``test_train_classifier_data.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from tests.extras import needs_torch
from tests.vision.train.test_train_classifier_data import tile_image  # one asymmetric tile in a small image
from vision.train import classifier as C
from vision.train import classifier_data as D


@needs_torch
def test_tiny_recipe_trains_and_onnx_matches_torch(tmp_path: Path) -> None:
    data = tmp_path / "synth"
    (data / "images").mkdir(parents=True)
    (data / "meta").mkdir()
    labels = ["red-6", "red-9", "blue-1", "joker"]
    for i in range(24):
        image, polygon = tile_image(i)
        label = labels[i % 4]
        cv2.imwrite(str(data / "images" / f"{i:06d}.png"), image)
        tile = {"label": label, "box": D.polygon_box(polygon).tolist(), "polygon": polygon.tolist(), "readable": True}
        (data / "meta" / f"{i:06d}.json").write_text(json.dumps({"image": f"images/{i:06d}.png", "tiles": [tile]}))
    recipe = {
        "kind": "classifier",
        "name": "tiny",
        "data": {"synthetic": [str(data)], "crops_per_tile": 8, "real_train": False},
        "model": {"width": 0.25},
        "train": {"epochs": 1, "batch": 32, "lr": 0.003, "threads": 2, "workers": 0, "device": "cpu"},
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
    # a whole run's budget (vision.train.remote) counts the data build: spent before training, one step is taken
    recipe["train"].update(epochs=3, max_total_minutes=1e-6)
    path.write_text(yaml.safe_dump(recipe))
    C.train_classifier(path, tmp_path / "budget")
    history = json.loads((tmp_path / "budget" / "tiny.json").read_text())["history"]
    assert len(history) == 1 and history[0]["crops"] == 32


@needs_torch
def test_a_device_that_is_not_here_is_a_clear_error() -> None:
    import torch

    assert C.training_device("cpu") == torch.device("cpu")
    with pytest.raises(ValueError, match="not a torch device"):
        C.training_device("gpu-please")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU on this machine"):
            C.training_device("cuda")


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
