"""CI smoke test of the detector recipe: one tiny epoch trains, exports to ONNX, and the runtime reads it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.extras import TRAIN_EXTRA

pytest.importorskip("ultralytics", reason=f"needs ultralytics, {TRAIN_EXTRA}")
pytest.importorskip("onnx")

from vision.runtime.recognition import YoloOnnxDetector
from vision.synth.dataset import write_dataset
from vision.synth.scene import SceneParams
from vision.train.detector import train_detector


def test_one_tiny_epoch_round_trips_through_onnx(tmp_path: Path) -> None:
    data = tmp_path / "synth"
    write_dataset(data, 4, seed=3, params=SceneParams(size=(256, 192)), workers=1, progress=False)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(
        "kind: detector\nmodel: yolov8n.yaml\n"
        f"data:\n  synthetic_train:\n    - {{dir: {data}, images: 4}}\n"
        f"  synthetic_val:\n    - {{dir: {data}, images: 2}}\n"
        "  real_train_repeats: 0\n"
        "train: {imgsz: 128, epochs: 1, batch: 2, workers: 0, device: cpu, mosaic: 0.0, val: false}\n"
    )
    config = train_detector(recipe, tmp_path / "run", project_root=tmp_path)
    onnx_path = Path(config["onnx"])
    assert onnx_path.is_file() and config["train_args"]["imgsz"] == 128
    image = np.full((192, 256, 3), 120, np.uint8)
    detector = YoloOnnxDetector(onnx_path, confidence=0.0)
    detections = detector.detect(image)
    assert len(detections) > 0  # an untrained model still proposes boxes at confidence 0
    assert (
        (detections.xyxy >= 0).all() and (detections.xyxy[:, 2] <= 256).all() and (detections.xyxy[:, 3] <= 192).all()
    )
    # exported with dynamic axes: a region larger than the training size is read in one pass at its own scale
    assert detector.any_size and detector.input_size == 128
    wide = detector.detect_native(np.full((150, 330, 3), 120, np.uint8))
    assert len(wide) > 0 and (wide.xyxy[:, 2] <= 330).all() and (wide.xyxy[:, 3] <= 150).all()
