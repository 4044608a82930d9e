"""``bench recognition`` times the shipped models on rendered frames (here: stand-in models, small frames)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.cli import main
from vision.eval import benchmark
from vision.runtime import reader


def test_bench_recognition_reports_every_frame_size(
    standin_models: Callable[..., Path],
    make_yolo_output: Callable[..., np.ndarray],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    models = standin_models(make_yolo_output([(100, 100, 40, 50), (200, 100, 40, 50)], [0.9, 0.8]))
    monkeypatch.setattr(benchmark, "FRAME_SIZES", ((320, 240), (480, 270)))
    monkeypatch.setattr(benchmark, "BUDGET_MS", {(320, 240): 150.0})
    monkeypatch.setenv("RUMMIKUB_MODELS", str(models))
    monkeypatch.setattr(reader, "PHOTO_NOT_A_TILE", 0.0)  # the stand-in cannot name rendered tiles (equal odds)
    assert main(["bench", "recognition", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["frame"] for r in rows] == ["320x240", "480x270"]
    assert rows[0]["tiles_found"] == 2 and rows[0]["ratio_to_budget"] is not None and rows[1]["ratio_to_budget"] is None
    assert all(r["median_ms"] <= r["max_ms"] and r["cpu_median_ms"] > 0 for r in rows)
    # beside it, --one-pass (the stand-in's tiles are big: no second pass by default either, the same tiles)
    assert all(r["one_pass_found"] == r["tiles_found"] and r["one_pass_ratio"] > 0 for r in rows)
    assert main(["bench", "recognition"]) == 0 and "--one-pass" in capsys.readouterr().out


def _tree(root: Path, models: Path) -> Path:
    """A tree whose ``vision`` and ``referee`` are this checkout's, with its own ``models/``."""
    root.mkdir()
    repository = Path(benchmark.__file__).resolve().parents[2]
    for package in ("vision", "referee"):
        (root / package).symlink_to(repository / package)
    (root / "models").symlink_to(models)
    return root


def test_compare_trees_times_both_readers_and_names_frames_read_differently(
    tmp_path: Path, make_yolo_output: Callable[..., np.ndarray]
) -> None:
    from tests.vision.conftest import build_classifier, build_detector

    def models(folder: Path, boxes: list[tuple[float, float, float, float]]) -> Path:
        folder.mkdir()
        build_detector(folder / "tile-detector.onnx", make_yolo_output(boxes, [0.9] * len(boxes)))
        build_classifier(folder / "tile-classifier.onnx")
        return folder

    two = models(tmp_path / "two", [(100, 100, 40, 50), (200, 100, 40, 50)])
    one = models(tmp_path / "one", [(100, 100, 40, 50)])
    frames = [benchmark.Frame("grey", np.full((240, 320, 3), 128, np.uint8), True)]
    frames.append(benchmark.Frame("dark", np.full((120, 160, 3), 40, np.uint8), False))
    same = benchmark.compare_trees(_tree(tmp_path / "a", two), _tree(tmp_path / "b", two), frames, repeats=2)
    assert same["identical"] == 2 and same["differ"] == []
    (row,) = same["rows"]  # only the timed frame is timed
    assert row["frame"] == "grey" and row["baseline"]["cpu_ms"] > 0 and row["wall_ratio"] > 0
    assert set(row["candidate"]["steps_ms"]) == set(benchmark.STEPS)
    # another detector's readings (here: one tile where the baseline finds two) are named
    other = benchmark.compare_trees(_tree(tmp_path / "c", two), _tree(tmp_path / "d", one), frames, repeats=0)
    assert other["identical"] == 0 and other["differ"] == ["grey", "dark"] and other["rows"] == []
    assert "0 of 2 frames (differ: grey, dark)" in benchmark.format_comparison(other, "HEAD")


def test_same_columns_compares_shape_dtype_and_values() -> None:
    a = {"xyxy": np.zeros((2, 4), np.float32), "confidence": np.array([0.5, np.nan], np.float32)}
    assert benchmark.same_columns(a, {k: v.copy() for k, v in a.items()})  # NaN reads as NaN
    assert not benchmark.same_columns(a, {**a, "confidence": np.array([0.5, 0.25], np.float32)})
    assert not benchmark.same_columns(a, {**a, "xyxy": np.zeros((2, 4), np.float64)})
    assert not benchmark.same_columns(a, {"xyxy": a["xyxy"]})


def test_against_an_unknown_revision_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert benchmark.main(["--against", "no-such-revision-xyz", "--repeats", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: --against no-such-revision-xyz:")


def test_a_tree_that_cannot_make_a_reader_stops_the_comparison_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "no-models"
    empty.mkdir()
    tree = _tree(tmp_path / "a", empty)  # its models folder holds no model
    frames = [benchmark.Frame("grey", np.full((240, 320, 3), 128, np.uint8), True)]
    with pytest.raises(RuntimeError, match="stopped"):
        benchmark.compare_trees(tree, tree, frames, repeats=0)
    err = capfd.readouterr().err
    assert "cannot make a reader (ModelNotFoundError" in err and "Traceback" not in err


def test_reading_difference_says_whether_the_same_tiles_were_read_and_how_far_apart() -> None:
    def reading(xyxy: list[list[float]], labels: list[int], confidence: list[float]) -> dict[str, Any]:
        tiles = {
            "xyxy": np.array(xyxy, np.float32).reshape(-1, 4),
            "class_id": np.array(labels, np.int64),
            "confidence": np.array(confidence, np.float32),
        }
        empty = {"xyxy": np.zeros((0, 4), np.float32), "class_id": np.zeros(0, np.int64), "confidence": np.zeros(0)}
        return {"detections": tiles, "left_out": empty}

    a = reading([[0, 0, 10, 10], [20, 0, 30, 10]], [3, 4], [0.9, 0.8])
    near = reading([[0, 0, 10, 10.25], [20, 0, 30, 10]], [3, 4], [0.9, 0.75])
    assert benchmark.reading_difference(a, near) == {
        "same_labels": True,
        "box_px": 0.25,
        "confidence": pytest.approx(0.05, abs=1e-6),
    }
    assert not benchmark.reading_difference(a, reading([[0, 0, 10, 10], [20, 0, 30, 10]], [3, 5], [0.9, 0.8]))[
        "same_labels"
    ]  # another label
    assert not benchmark.reading_difference(a, reading([[0, 0, 10, 10]], [3], [0.9]))["same_labels"]  # a tile less
