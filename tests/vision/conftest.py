"""Stand-in ONNX models for the recognition tests: tiny graphs built with ``onnx.helper``, no training needed.

- the detector ignores its input and returns a fixed (1, 5, A) YOLOv8 tensor (boxes in letterbox pixels);
- the classifier maps each crop's mean colour to probabilities: red -> red-5, green -> red-6, blue -> red-7,
  anything grey -> equal odds (an uncertain reading); ``angle_deg`` is a constant.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from referee.tiles import ALL_LABELS

STANDIN_LABELS = ("red-5", "red-6", "red-7")
"""What a red, a green and a blue crop read as."""
LOGIT_SCALE = 60.0


def _save(model: object, path: Path) -> Path:
    import onnx

    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def build_detector(path: Path, output: np.ndarray, imgsz: int = 320) -> Path:
    """A "detector" that always outputs ``output`` (1, 5, A), with Ultralytics' ``imgsz`` metadata."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    output = np.asarray(output, np.float32)
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
        helper.make_node("Add", ["fixed", "nothing"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "standin-detector",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, imgsz, imgsz])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(output.shape))],
        [numpy_helper.from_array(output, "fixed"), numpy_helper.from_array(np.float32(0), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.helper.set_model_props(model, {"imgsz": f"[{imgsz}, {imgsz}]", "task": "detect"})
    return _save(model, path)


def build_classifier(path: Path, angle_deg: float = 0.0) -> Path:
    """A "classifier": softmax of the crop's mean RGB times a fixed matrix; a constant angle."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    weights = np.zeros((3, len(ALL_LABELS)), np.float32)
    for channel, label in enumerate(STANDIN_LABELS):
        weights[channel, ALL_LABELS.index(label)] = LOGIT_SCALE
    # Colour channels minus their mean, so a grey crop gives equal logits whatever its brightness.
    centre = (np.eye(3) - 1 / 3).astype(np.float32)
    nodes = [
        helper.make_node("ReduceMean", ["crops"], ["rgb"], axes=[2, 3], keepdims=0),
        helper.make_node("MatMul", ["rgb", "centre"], ["centred"]),
        helper.make_node("MatMul", ["centred", "weights"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
        helper.make_node("ReduceMean", ["rgb"], ["level"], axes=[1], keepdims=0),
        helper.make_node("Mul", ["level", "zero"], ["nothing"]),
        helper.make_node("Add", ["nothing", "angle"], ["angle_deg"]),
    ]
    graph = helper.make_graph(
        nodes,
        "standin-classifier",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", len(ALL_LABELS)]),
            helper.make_tensor_value_info("angle_deg", TensorProto.FLOAT, ["N"]),
        ],
        [
            numpy_helper.from_array(weights, "weights"),
            numpy_helper.from_array(centre, "centre"),
            numpy_helper.from_array(np.float32(0), "zero"),
            numpy_helper.from_array(np.float32(angle_deg), "angle"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return _save(model, path)


def yolo_output(boxes_cxcywh: list[tuple[float, float, float, float]], scores: list[float], anchors: int = 64):
    """A (1, 5, anchors) tensor holding the given boxes and scores, zeros elsewhere."""
    tensor = np.zeros((1, 5, anchors), np.float32)
    for k, (box, score) in enumerate(zip(boxes_cxcywh, scores, strict=True)):
        tensor[0, :4, k] = box
        tensor[0, 4, k] = score
    return tensor


@pytest.fixture
def standin_models(tmp_path: Path) -> Callable[..., Path]:
    """``make(output, imgsz=320, angle_deg=0) -> models dir`` with a stand-in detector and classifier."""

    def make(output: np.ndarray, imgsz: int = 320, angle_deg: float = 0.0) -> Path:
        folder = tmp_path / "models"
        folder.mkdir(exist_ok=True)
        build_detector(folder / "tile-detector.onnx", output, imgsz)
        build_classifier(folder / "tile-classifier.onnx", angle_deg)
        return folder

    return make


@pytest.fixture
def make_yolo_output() -> Callable[..., np.ndarray]:
    """The :func:`yolo_output` builder, for tests (conftest modules are not imported by name)."""
    return yolo_output


@pytest.fixture(autouse=True)
def _photo_readers_stay_local(monkeypatch: pytest.MonkeyPatch) -> None:
    """``vision.commands.register`` fills ``referee.cli.TABLE_READERS``; each test gets its own copy."""
    from referee import cli as rules_cli

    monkeypatch.setattr(rules_cli, "TABLE_READERS", dict(rules_cli.TABLE_READERS))
    monkeypatch.setattr(rules_cli, "BENCH_SUITES", dict(rules_cli.BENCH_SUITES))
