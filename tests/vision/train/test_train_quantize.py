"""INT8 quantization: the detector on a tiny convolutional stand-in with its input and names, the tile classifier
on the shipped float weights."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests.extras import needs_real_photos
from vision.cli import main
from vision.train import quantize as Q
from vision.train.quantize import (
    float_head_nodes,
    quantize_classifier,
    quantize_detector,
    record_detector_inputs,
    sha256,
    write_card_entry,
)

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def conv_detector(path: Path) -> Path:
    """images (1, 3, H, W) -> a backbone convolution -> a head convolution, a DFL convolution and a sigmoid,
    named like YOLOv8's."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [
        numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w0"),
        numpy_helper.from_array(rng.normal(0, 0.3, (5, 8, 1, 1)).astype(np.float32), "w1"),
        numpy_helper.from_array(np.eye(5, dtype=np.float32).reshape(5, 5, 1, 1), "w2"),
    ]
    nodes = [
        helper.make_node("Conv", ["images", "w0"], ["c0"], name="/model.0/conv/Conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"], name="/model.0/act/Relu"),
        helper.make_node("Conv", ["r0", "w1"], ["c1"], name="/model.22/cv3/Conv"),
        helper.make_node("Conv", ["c1", "w2"], ["c2"], name="/model.22/dfl/conv/Conv"),
        helper.make_node("Sigmoid", ["c2"], ["output0"], name="/model.22/Sigmoid"),
    ]
    dynamic = ["batch", 3, "height", "width"]
    graph = helper.make_graph(
        nodes,
        "conv-detector",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, dynamic)],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, ["batch", 5, "height", "width"])],
        weights,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"imgsz": "[64, 64]", "task": "detect"})
    onnx.save(model, str(path))
    return path


def feeds(count: int, shape: tuple[int, int] = (64, 96)) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [{"images": rng.random((1, 3, *shape), dtype=np.float32)} for _ in range(count)]


def test_the_detector_head_stays_float_except_its_convolutions_but_the_dfl_one(tmp_path: Path) -> None:
    model = onnx.load(str(conv_detector(tmp_path / "fp32.onnx")))
    assert float_head_nodes(model) == ["/model.22/dfl/conv/Conv", "/model.22/Sigmoid"]


def test_a_quantized_detector_reads_close_to_the_float_one_at_any_size(tmp_path: Path) -> None:
    source = conv_detector(tmp_path / "fp32.onnx")
    target = tmp_path / "int8.onnx"
    entry = quantize_detector(source, target, feeds(8), tmp_path / "work")
    assert entry["calibration_inputs"] == 8 and entry["calibration_input_sizes"] == ["64x96"]
    assert entry["source_sha256"] and entry["onnx_bytes"] == target.stat().st_size
    quantized = onnx.load(str(target))
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in quantized.graph.node}
    assert {p.key: p.value for p in quantized.metadata_props}["imgsz"] == "[64, 64]"  # the reader needs it
    float_session, int8_session = (
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (source, target)
    )
    for shape in [(64, 96), (96, 160)]:  # a size it was not calibrated on, too
        image = feeds(1, shape)[0]
        expected, got = float_session.run(None, image)[0], int8_session.run(None, image)[0]
        assert got.shape == expected.shape and np.abs(got - expected).max() < 0.03  # 0.053 with 8-bit weights on AVX2


def test_no_calibration_input_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no calibration inputs"):
        quantize_detector(conv_detector(tmp_path / "fp32.onnx"), tmp_path / "int8.onnx", [], tmp_path / "work")


def test_the_detector_inputs_are_recorded_while_the_reader_reads(
    standin_models: Callable, make_yolo_output: Callable
) -> None:
    from vision.runtime.recognition import TileReader

    reader = TileReader(standin_models(make_yolo_output([(160, 160, 40, 60)], [0.9])))
    session = reader.detector.session
    images = [np.full((480, 640, 3), value, np.uint8) for value in (0, 200)]
    recorded = record_detector_inputs(reader, [(image, None) for image in images])
    assert len(recorded) == 2 and recorded[0]["images"].shape == (1, 3, 320, 320)
    assert recorded[1]["images"].max() > recorded[0]["images"].max()  # copies, not one reused buffer
    assert reader.detector.session is session  # the session is given back


def test_the_card_keeps_its_other_entries(tmp_path: Path) -> None:
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"kind": "detector", "quantization": {"old": True}}))
    write_card_entry(card, {"format": "QDQ"})
    assert json.loads(card.read_text()) == {"kind": "detector", "quantization": {"format": "QDQ"}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "nowhere.onnx", "--out", "int8.onnx"], "no model file"),
        (["--model", "{fp32}", "--out", "{fp32}"], "must not overwrite"),
        pytest.param(  # quantize reads the real training photos before it opens the game
            ["--model", "{fp32}", "--out", "{int8}", "--photos", "0", "--game", "{tmp}"],
            "not a synth-game folder",
            marks=needs_real_photos,
        ),
        (["--model", "{fp32}", "--out", "{int8}", "--photos", "-1"], "--photos: must be a whole number of at least 0"),
    ],
)
def test_quantize_mistakes_are_one_line_errors(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fp32 = conv_detector(tmp_path / "fp32.onnx")
    argv = ["quantize", *(a.format(fp32=fp32, int8=tmp_path / "int8.onnx", tmp=tmp_path) for a in args)]
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


# The tile classifier: the shipped float weights quantized on crops of a rendered table.


@pytest.fixture(scope="module")
def scene_crops() -> np.ndarray:
    """The classifier's input (N, 3, 64, 64) for the tiles of one rendered table."""
    from vision.eval.benchmark import bench_scene
    from vision.runtime.crops import crop_boxes, to_input

    scene = bench_scene((640, 480), 3)
    return to_input(crop_boxes(scene.image, np.array([tile.box for tile in scene.tiles], np.float32)))


def test_a_quantized_classifier_keeps_its_heads_float_and_reads_as_the_float_one(
    scene_crops: np.ndarray, tmp_path: Path
) -> None:
    from vision.runtime.models import CLASSIFIER_FILE, default_models_dir, float_weights

    source = float_weights(default_models_dir() / CLASSIFIER_FILE)
    target = tmp_path / "int8.onnx"
    entry = quantize_classifier(source, target, scene_crops, tmp_path / "work", seed=1)
    assert entry["calibration_crops"] == 64 and entry["source_sha256"] == sha256(source)  # one whole batch of 69
    graph = onnx.load(str(target)).graph
    quantized = {n.input[0] for n in graph.node if n.op_type == "DequantizeLinear"}
    assert any(name.startswith("onnx::Conv") for name in quantized)  # backbone weights are int8...
    assert not any(name.startswith("net.label") or name.startswith("net.angle") for name in quantized)  # heads not
    assert [o.name for o in graph.output] == ["probs", "angle_deg", "features"]
    float_session, int8_session = (
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (source, target)
    )
    expected, got = (s.run(None, {"crops": scene_crops}) for s in (float_session, int8_session))
    assert (got[0].argmax(1) == expected[0].argmax(1)).mean() >= 0.95
    assert np.abs(got[0] - expected[0]).max() < 0.2 and np.median(np.abs(got[2] - expected[2])) < 0.05


def test_classifier_calibration_crops_are_drawn_up_to_the_cap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[np.ndarray] = []
    monkeypatch.setattr(Q, "CLASSIFIER_CALIBRATION_CROPS", 100)
    monkeypatch.setattr(Q, "_input_name", lambda _path: "crops")
    monkeypatch.setattr(
        Q,
        "_quantize",
        lambda _s, target, feeds, *_a: (seen.extend(f["crops"] for f in feeds), target.write_bytes(b"x")),
    )
    crops = np.arange(300, dtype=np.float32)[:, None, None, None] * np.ones((1, 3, 64, 64), np.float32)
    (tmp_path / "fp32.onnx").write_bytes(b"float weights")  # its sha256 goes into the card
    entry = Q.quantize_classifier(tmp_path / "fp32.onnx", tmp_path / "int8.onnx", crops, tmp_path, seed=0)
    drawn = np.concatenate(seen)[:, 0, 0, 0]
    assert entry["calibration_crops"] == 64 and entry["crops_recorded"] == 300  # whole batches only
    assert len(set(drawn)) == 64 and [len(b) for b in seen] == [64]
    seen.clear()
    assert (
        Q.quantize_classifier(tmp_path / "fp32.onnx", tmp_path / "int8.onnx", crops[:40], tmp_path)["calibration_crops"]
        == 40
    )
    assert [len(b) for b in seen] == [40]  # fewer than a batch: one batch of them all
    with pytest.raises(ValueError, match="no calibration crops"):
        Q.quantize_classifier(tmp_path / "fp32.onnx", tmp_path / "int8.onnx", crops[:0], tmp_path)


def test_the_model_kind_is_read_from_its_outputs(tmp_path: Path) -> None:
    from vision.runtime.models import CLASSIFIER_FILE, default_models_dir

    assert Q.model_kind(default_models_dir() / CLASSIFIER_FILE) == "classifier"
    assert Q.model_kind(conv_detector(tmp_path / "fp32.onnx")) == "detector"
    (tmp_path / "garbage.onnx").write_bytes(b"\x00not a model")
    with pytest.raises(ValueError, match="not an ONNX model"):
        Q.model_kind(tmp_path / "garbage.onnx")


def test_the_float_weights_are_kept_beside_the_quantized_classifier(tmp_path: Path) -> None:
    source = tmp_path / "runs" / "classifier.onnx"
    source.parent.mkdir()
    source.write_bytes(b"float weights")
    beside = Q.keep_float_beside(source, tmp_path / "tile-classifier.onnx")
    assert beside == tmp_path / "tile-classifier-fp32.onnx" and beside.read_bytes() == b"float weights"
    assert Q.keep_float_beside(beside, tmp_path / "tile-classifier.onnx") == beside  # already there: left as it is


def test_the_scenes_a_classifier_was_calibrated_on_are_named_so_they_can_be_made_again(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text(json.dumps({"images": 40, "seed": 901, "recipe": {"name": "r"}}))
    assert Q.scenes_provenance(tmp_path) == {"folder": str(tmp_path), "recipe": "r", "seed": 901, "images": 40}
    (tmp_path / "summary.json").write_text("{")
    assert Q.scenes_provenance(tmp_path)["made_by"].startswith("unknown")


def test_the_shipped_classifier_is_int8_and_its_float_weights_are_its_source() -> None:
    from vision.runtime.models import CLASSIFIER_FILE, default_models_dir, float_weights, model_card

    shipped = default_models_dir() / CLASSIFIER_FILE
    card = model_card(shipped)
    assert card is not None and card["quantization"]["float_file"] == float_weights(shipped).name
    assert card["quantization"]["source_sha256"] == sha256(float_weights(shipped))
    assert "DequantizeLinear" in {n.op_type for n in onnx.load(str(shipped)).graph.node}
