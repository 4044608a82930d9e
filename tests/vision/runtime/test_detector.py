"""The detector's input and its ONNX Runtime sessions (the rest of the detector: test_recognition.py)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.runtime import models
from vision.runtime.detections import UNCLASSIFIED, Detections, box_iou, nms_indices
from vision.runtime.detector import (
    NESTED_SHARE,
    Letterbox,
    YoloOnnxDetector,
    nms_keep,
    overlapping_pairs,
    to_tensor,
    with_nms,
    without_nested,
)
from vision.runtime.models import DETECTOR_FILE, default_models_dir


@pytest.mark.parametrize(
    ("height", "width"),
    [
        (448, 448),  # a photo's first reading
        (672, 864),  # a 1280x960 photo read again at tile scale
        (1, 7),  # a strip
    ],
)
def test_the_input_tensor_holds_the_same_floats_as_dividing_the_whole_image(height: int, width: int) -> None:
    image = np.random.default_rng(height * width).integers(0, 256, (height, width, 3), dtype=np.uint8)
    expected = np.ascontiguousarray(image[..., ::-1].transpose(2, 0, 1)[None], dtype=np.float32) / 255.0
    tensor = to_tensor(image)
    assert tensor.dtype == np.float32 and tensor.flags.c_contiguous
    assert np.array_equal(tensor, expected)  # bit for bit: RGB planes, 0..255 -> 0..1


def test_the_input_of_a_letterboxed_crop_of_a_frame() -> None:
    frame = np.random.default_rng(0).integers(0, 256, (300, 500, 3), dtype=np.uint8)
    boxed, _, _ = Letterbox(160).apply(frame[50:250, 100:400])  # a window: a view into the frame
    assert np.array_equal(to_tensor(boxed)[0, 0], boxed[..., 2] / np.float32(255.0))


@pytest.mark.parametrize("spin", [False, True])
def test_sessions_spin_wait_only_when_asked(spin: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "SPIN_WAIT", spin)
    session = YoloOnnxDetector(default_models_dir() / DETECTOR_FILE).session
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == ("1" if spin else "0")
    assert options.intra_op_num_threads == models.INTRA_OP_THREADS


# -- the detector's suppression keeps what Detections' keeps ---------------------------------------------------------


def _boxes(draw: st.DrawFn, n: int) -> np.ndarray:
    """Boxes on a small integer grid (ties, duplicates, shared edges, nesting) or anywhere (float rounding)."""
    if draw(st.booleans()):
        corners = np.array(draw(st.lists(st.integers(0, 12), min_size=4 * n, max_size=4 * n)), np.float32)
    else:
        corners = np.array(draw(st.lists(st.floats(0, 900, width=32), min_size=4 * n, max_size=4 * n)), np.float32)
    corners = corners.reshape(n, 4)
    x0, x1 = np.minimum(corners[:, 0], corners[:, 2]), np.maximum(corners[:, 0], corners[:, 2])
    y0, y1 = np.minimum(corners[:, 1], corners[:, 3]), np.maximum(corners[:, 1], corners[:, 3])
    return np.stack([x0, y0, x1 + draw(st.sampled_from([0.0, 1.0])), y1 + 1.0], axis=1)  # some without width


@st.composite
def detections(draw: st.DrawFn) -> Detections:
    n = draw(st.integers(0, 40))
    scores = draw(st.lists(st.sampled_from([0.3, 0.5, 0.7, 0.9]) | st.floats(0.25, 1.0), min_size=n, max_size=n))
    return Detections(_boxes(draw, n), np.array(scores, np.float32), np.full(n, UNCLASSIFIED))


@settings(max_examples=300, deadline=None)
@given(found=detections(), iou=st.sampled_from([0.0, 0.2, 0.35, 0.5, 0.9]))
def test_the_detector_suppresses_as_the_detections_do(found: Detections, iou: float) -> None:
    boxes = found.xyxy.astype(np.float64)
    assert np.array_equal(nms_keep(boxes, found.confidence, iou), nms_indices(boxes, found.confidence, iou))
    assert np.array_equal(with_nms(found, iou).xyxy, found.with_nms(iou).xyxy)
    assert np.array_equal(without_nested(found).xyxy, found.without_nested(NESTED_SHARE).xyxy)


@pytest.mark.parametrize(
    "boxes",
    [
        [[0, 0, 10, 10], [5, 0, 15, 10], [np.nan, 0, 4, 4]],  # a box that is not a number
        [[0, 0, 10, 10], [100, 100, 110, 110]],  # apart: suppressed only under a negative threshold
    ],
)
def test_odd_boxes_and_thresholds_are_suppressed_as_the_detections_do(boxes: list[list[float]]) -> None:
    xyxy = np.array(boxes, np.float64)
    scores = np.linspace(0.9, 0.5, len(xyxy)).astype(np.float32)
    for iou in (-0.1, 0.0, 0.5):
        assert np.array_equal(nms_keep(xyxy, scores, iou), nms_indices(xyxy, scores, iou))


def test_the_detector_finds_every_pair_of_boxes_that_meet() -> None:
    boxes = np.tile(np.random.default_rng(0).uniform(0, 300, (200, 2)), 2)  # x0, y0, x0, y0
    boxes[:, 2:] += np.random.default_rng(1).uniform(1, 40, (200, 2))
    i, j = overlapping_pairs(boxes)
    meets = box_iou(boxes, boxes) > 0
    np.fill_diagonal(meets, False)
    found = np.zeros_like(meets)
    found[i, j] = found[j, i] = True
    assert np.array_equal(found, meets) and len(i) == meets.sum() // 2  # each pair once


# -- the head's DFL step in numpy, for the anchors kept -------------------------------------------------------------


def _whole_model_boxes(tensor: np.ndarray) -> Detections:
    """Boxes from the shipped detector's own ``output0`` (every node of the model run)."""
    from vision.runtime.detector import decode_yolo

    session = models.open_session(default_models_dir() / DETECTOR_FILE, models.DEFAULT_PROVIDERS)
    return decode_yolo(
        session.run(None, {"images": tensor})[0], scale=1.0, pad=(0.0, 0.0), image_shape=tensor.shape[2:]
    )


@pytest.mark.parametrize(
    ("height", "width"),
    [
        (448, 448),  # a photo's first reading
        (672, 864),  # a 1280x960 photo read again at tile scale
    ],
)
def test_the_detector_decodes_its_head_as_the_whole_model_does(height: int, width: int) -> None:
    from vision.eval.benchmark import bench_scene

    scene = cv2.resize(bench_scene((1280, 960), 1).image, (width, height), interpolation=cv2.INTER_AREA)
    tensor = to_tensor(scene)
    detector = YoloOnnxDetector(default_models_dir() / DETECTOR_FILE)
    assert detector.session is not None and detector._head is not None  # the shipped model ends as Ultralytics'
    assert [o.name for o in detector.session.get_outputs()] == list(detector._head)
    whole = _whole_model_boxes(tensor)
    found = detector._detect_once(scene, Letterbox.to_stride(height, width))
    assert len(whole) >= 30 and len(found) == len(whole)
    assert np.array_equal(found.confidence, whole.confidence)  # the class scores are the model's own
    assert np.abs(found.xyxy - whole.xyxy).max() < 1e-3  # the sides' expectation, summed in another order


def test_anchor_points_are_laid_out_as_ultralytics_lays_them() -> None:
    from vision.runtime.detector import HEAD_STRIDES, anchor_count, anchor_points

    height, width = 96, 160
    expected_points, expected_strides = [], []
    for stride in HEAD_STRIDES:  # make_anchors: per level, row by row, cell centres
        ys, xs = np.meshgrid(np.arange(height // stride) + 0.5, np.arange(width // stride) + 0.5, indexing="ij")
        expected_points.append(np.stack([xs.ravel(), ys.ravel()]))
        expected_strides.append(np.full(xs.size, stride))
    every = np.arange(anchor_count((height, width)))
    points, strides = anchor_points((height, width), every)
    assert np.array_equal(points, np.concatenate(expected_points, axis=1))
    assert np.array_equal(strides, np.concatenate(expected_strides))
    some = np.array([0, 7, 239, 240, 301, len(every) - 1])
    assert np.array_equal(anchor_points((height, width), some)[0], points[:, some])


def test_a_model_not_ending_in_a_yolo_head_is_run_whole(tmp_path: Path) -> None:
    from tests.vision.conftest import build_detector, yolo_output
    from vision.runtime.detector import head_outputs

    path = build_detector(tmp_path / DETECTOR_FILE, yolo_output([(100, 100, 40, 50)], [0.9]), any_size=True)
    assert head_outputs(path.read_bytes()) is None  # output0 is an Add of a constant
    assert head_outputs(b"\xff\xff not a protobuf") is None
    detector = YoloOnnxDetector(path)
    (box,) = detector.detect(np.full((320, 320, 3), 128, np.uint8)).xyxy
    assert detector._head is None and np.allclose(box, [80, 75, 120, 125])


@pytest.mark.parametrize(
    ("shape", "rect", "expected"),
    [
        ((960, 1280), True, (352, 448)),  # a 4:3 photo: 448x336, padded to the stride only
        ((1080, 1920), True, (256, 448)),  # 448x252
        ((640, 640), True, (448, 448)),  # a square photo as before
        ((1280, 960), True, (448, 352)),  # upright
        ((960, 1280), False, (448, 448)),  # padded to a square, as before rect
    ],
)
def test_a_whole_image_is_read_padded_to_the_stride(
    shape: tuple[int, int], rect: bool, expected: tuple[int, int]
) -> None:
    detector = YoloOnnxDetector(default_models_dir() / DETECTOR_FILE, rect=rect)
    letterbox = detector.letterbox_for(*shape)
    assert (letterbox.height, letterbox.width) == expected
    boxed, scale, _ = letterbox.apply(np.zeros((*shape, 3), np.uint8))
    assert boxed.shape[:2] == expected and scale == pytest.approx(448 / max(shape))


def test_a_model_of_fixed_input_size_reads_a_square(tmp_path: Path) -> None:
    from tests.vision.conftest import build_detector, yolo_output

    # the stand-in's box (160, 160, 40, 50) in its 320x320 input: a 640x480 photo is scaled by 0.5, padded by 40 rows
    path = build_detector(tmp_path / DETECTOR_FILE, yolo_output([(160, 160, 40, 50)], [0.9]))
    detector = YoloOnnxDetector(path)
    assert (detector.letterbox_for(480, 640).height, detector.letterbox_for(480, 640).width) == (320, 320)
    (box,) = detector.detect(np.full((480, 640, 3), 128, np.uint8)).xyxy
    assert np.allclose(box, [280, 190, 360, 290])


def test_the_detector_takes_the_pixels_its_input_quantizer_would_give_back() -> None:
    from vision.runtime.detector import to_pixels

    detector = YoloOnnxDetector(default_models_dir() / DETECTOR_FILE)
    assert detector.session.get_inputs()[0].type == "tensor(uint8)" and detector._pixels
    image = np.random.default_rng(5).integers(0, 256, (64, 96, 3), dtype=np.uint8)
    assert np.array_equal(to_pixels(image) / np.float32(255.0), to_tensor(image))  # the floats it stands for


def test_a_fresh_detector_reads_its_first_image_at_native_scale() -> None:
    """The session decides whether the input is pixels or floats: made before the input, not after."""
    detector = YoloOnnxDetector(default_models_dir() / DETECTOR_FILE)
    found = detector._detect_once(np.full((64, 96, 3), 128, np.uint8), Letterbox.to_stride(64, 96))
    assert detector._pixels and len(found) == 0


@pytest.mark.parametrize("raw", [False, True])  # stored in float_data / int32_data, or as raw bytes
def test_a_quantizer_constant_is_read_from_its_stored_bytes(raw: bool) -> None:
    from onnx import TensorProto, helper

    from vision.runtime.detector import PIXEL_SCALE, _scalar

    scale = helper.make_tensor("s", TensorProto.FLOAT, [], PIXEL_SCALE.tobytes() if raw else [PIXEL_SCALE], raw=raw)
    zero = helper.make_tensor("z", TensorProto.UINT8, [], b"\x00" if raw else [0], raw=raw)
    other = helper.make_tensor("o", TensorProto.UINT8, [], b"\x80" if raw else [128], raw=raw)
    assert _scalar(scale.SerializeToString()) == (1, PIXEL_SCALE.tobytes())
    assert _scalar(zero.SerializeToString()) == (2, b"\x00")
    assert _scalar(other.SerializeToString()) == (2, b"\x80")


@pytest.mark.parametrize(
    ("scale", "zero", "expected"),
    [
        (float(np.float32(1 / 255)), 0, True),  # pixel / 255 back to pixel: the uint8 image can stand in
        (1 / 128, 0, False),  # another scale: the floats are not the pixels
        (float(np.float32(1 / 255)), 3, False),  # another zero point
    ],
)
def test_only_an_input_quantizer_that_gives_back_the_pixels_is_left_out(
    scale: float, zero: int, expected: bool
) -> None:
    from onnx import TensorProto, helper

    from vision.runtime import detector

    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["images", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["out"]),
        ],
        "quantizer",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 3, 8, 8])],
        [
            helper.make_tensor("s", TensorProto.FLOAT, [], [scale]),
            helper.make_tensor("z", TensorProto.UINT8, [], [zero]),
        ],
    ).SerializeToString()
    fields = detector._proto_fields(graph)
    nodes = [detector._node(graph[start:end]) for field, _, start, end in fields if field == detector.GRAPH_NODE]
    found = detector._pixel_quantizer(graph, fields, nodes)
    assert (found == ("images", 0, "q")) if expected else found is None
