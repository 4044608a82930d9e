"""``bench recognition`` times the shipped models on rendered frames (here: stand-in models, small frames)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

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
    assert all(r["median_ms"] <= r["max_ms"] for r in rows)
    # beside it, --one-pass (the stand-in's tiles are big: no second pass by default either, the same tiles)
    assert all(r["one_pass_found"] == r["tiles_found"] and r["one_pass_ratio"] > 0 for r in rows)
    assert main(["bench", "recognition"]) == 0 and "--one-pass" in capsys.readouterr().out
