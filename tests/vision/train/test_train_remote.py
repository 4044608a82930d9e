"""Packing a training run for a bare GPU machine, and what the run reads from its recipe."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.extras import needs_torch
from vision.runtime import realdata
from vision.train.remote import RESERVE_S, SETUP_SHARE, pack, render, run, synth_steps, training_hours

ROOT = Path(__file__).resolve().parents[3]


def test_the_recipes_synth_lines_are_the_steps() -> None:
    steps = synth_steps((ROOT / "models" / "detector-v5.yaml").read_text())
    assert [step[:3] for step in steps] == [["synth", "--recipe", "synth-editions-train"]] + [
        ["synth", "--recipe", name] for name in ("synth-train", "synth-racks-train", "synth-editions-heldout")
    ]
    assert steps[0][-4:] == ["--images", "1800", "--seed", "51"]
    assert synth_steps("# rummikub-referee train --recipe x.yaml\nkind: detector\n") == []


def test_the_training_gets_what_the_budget_leaves() -> None:
    assert training_hours(520, 125) == round((520 - 125 - RESERVE_S) / 3600 * SETUP_SHARE, 4)
    assert training_hours(100, 90) == round(30 / 3600 * SETUP_SHARE, 4)  # never under 30 s
    assert training_hours(520, 125, share=1.0) == round((520 - 125 - RESERVE_S) / 3600, 4)  # a classifier's whole


@pytest.mark.skipif(not realdata.default_root().is_dir(), reason="needs ../shared/data")
def test_a_pack_holds_the_fonts_the_training_photos_only_and_a_polars_stand_in(tmp_path: Path) -> None:
    init = tmp_path / "start.onnx"
    init.write_bytes(b"onnx")
    (tmp_path / "start-fp32.onnx").write_bytes(b"float")  # an INT8 start model's float weights travel with it
    summary = pack(tmp_path / "pack", init=init)
    out = tmp_path / "pack"
    train = {photo.path.name for photo in realdata.load_photos(split="train")}
    assert {p.name for p in (out / "real" / "images").iterdir()} == train  # no held-out photo leaves
    assert summary["real_photos"] == len(train) and (out / "init" / "start.onnx").read_bytes() == b"onnx"
    assert (out / "init" / "start-fp32.onnx").read_bytes() == b"float"
    assert summary["fonts"] >= 10 and any((out / "fonts").rglob("*.ttf"))
    spec = importlib.util.spec_from_file_location("polars_stand_in", out / "site" / "polars" / "__init__.py")
    assert spec is not None and spec.loader is not None
    polars = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(polars)
    frame = polars.read_csv(b"epoch, metrics/mAP50(B)\n1,0.9\n2,0.95\n", infer_schema_length=None)
    assert frame.to_dict(as_series=False) == {"epoch": [1.0, 2.0], "metrics/mAP50(B)": [0.9, 0.95]}


def test_a_synth_step_renders_what_the_synth_command_renders(tmp_path: Path) -> None:
    from vision.cli import main

    step = ["synth", "--recipe", "synth-train", "--out", str(tmp_path / "step"), "--images", "2", "--seed", "3"]
    render(step)
    assert main([*step[:4], str(tmp_path / "command"), *step[5:], "--json"]) == 0
    labels = sorted((tmp_path / "step" / "labels").glob("*.txt"))
    assert len(labels) == 2
    assert [p.read_text() for p in labels] == [
        p.read_text() for p in sorted((tmp_path / "command" / "labels").glob("*.txt"))
    ]


@needs_torch
def test_a_classifier_recipe_runs_with_its_minutes_fitted_to_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(
        "# a tiny run\n#   rummikub-referee synth --recipe synth-train --out cache/tiny --images 2 --seed 3\n"
        "kind: classifier\nname: tiny\ndata: {synthetic: [cache/tiny], real_train: false}\nmodel: {width: 0.25}\n"
        "train: {epochs: 1, batch: 16, device: cpu, workers: 0, max_steps: 2}\n"
        "evaluate: {real_val: false, timing: false}\n"
    )
    (tmp_path / "pack" / "real").mkdir(parents=True)
    for name in ("RUMMIKUB_REAL_DATA", "YOLO_OFFLINE", "YOLO_CONFIG_DIR"):  # run() sets them: restored after the test
        monkeypatch.setenv(name, "")
    summary = run(recipe, tmp_path / "pack", tmp_path / "out", budget_s=200, font_root=tmp_path / "fonts")
    assert summary["kind"] == "classifier"
    assert summary["train_hours"] == training_hours(200, summary["rendered_s"], share=1.0)  # its budget counts cutting
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"tiny.onnx", "tiny.json", "tiny.pt", "remote-run.json"}
    fitted = (tmp_path / "out" / "tiny.yaml").read_text()
    assert f"max_total_minutes: {round(summary['train_hours'] * 60, 2)}" in fitted
