"""Tile detection: the :class:`Detector` protocol and its ONNX Runtime adapter, :class:`YoloOnnxDetector`.

:class:`YoloOnnxDetector` runs an Ultralytics YOLOv8 detector exported to ONNX (input ``images`` (1, 3, S, S) RGB in
[0, 1], letterboxed; output (1, 4 + classes, anchors): cx, cy, w, h in input pixels, then class scores). ``S`` comes
from the model's metadata (``imgsz``). With ``tiled=True`` it also runs on overlapping windows at native resolution,
for small tiles in 4K frames. The session is created on first use (or by :meth:`YoloOnnxDetector.load`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from vision.runtime.detections import UNCLASSIFIED, Detections, nms_indices
from vision.runtime.models import DEFAULT_PROVIDERS, DETECTOR_FILE, ModelLoadError, open_session

LETTERBOX_FILL = 114
"""Ultralytics pads letterboxed images with this grey; the detector was trained on it."""
WINDOW_OVERLAP = 0.25
"""Overlap of neighbouring windows in tiled inference, as a share of the window: wider than a tile."""
MAX_WINDOWS = 8
"""Tiled inference runs the detector on at most this many windows (plus the whole frame)."""
TILE_PX = 28.0
"""Width of a tile, in pixels at the detector's input, that the detector reads best (what it learnt)."""
NESTED_SHARE = 0.8
"""A box lying this much inside a more confident one is the same tile (see Detections.without_nested)."""
EDGE_MARGIN = 2.0
"""A box within this many pixels of an inner window edge is cut by the window; a neighbour sees it whole."""
STRIDE = 32
"""The detector's largest stride: an input of any size must be a multiple of it."""
MAX_ONE_PASS_PIXELS = 1600 * 1600
"""A detector exported with dynamic axes reads a region up to this big in one pass instead of in windows."""
TILE_NMS_IOU = 0.35
"""Boxes overlapping more than this are one tile: true tiles in the real training photos overlap at most 0.27."""


# -- geometry of the detector input -------------------------------------------------------------------


class Letterbox:
    """Ultralytics' letterbox: scale to fit ``size`` (a side, or (height, width)) keeping the aspect, pad centred
    with grey."""

    def __init__(self, size: int | tuple[int, int], *, scale_up: bool = True) -> None:
        self.height, self.width = (size, size) if isinstance(size, int) else size
        self.scale_up = scale_up

    @classmethod
    def to_stride(cls, height: int, width: int, stride: int = STRIDE) -> Letterbox:
        """Padding only: the image at its own scale, padded up to a multiple of the network's stride."""
        return cls((-(-height // stride) * stride, -(-width // stride) * stride), scale_up=False)

    def apply(self, image: np.ndarray) -> tuple[np.ndarray, float, tuple[float, float]]:
        """(letterboxed image, scale, (pad_x, pad_y)); original = (letterboxed - pad) / scale."""
        height, width = image.shape[:2]
        scale = min(self.height / height, self.width / width, np.inf if self.scale_up else 1.0)
        new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))  # a 5000x16 strip keeps a row
        pad_x, pad_y = (self.width - new_w) / 2, (self.height - new_h) / 2
        # Same rounding as ultralytics.data.augment.LetterBox, so the pixels match training exactly.
        top, bottom = round(pad_y - 0.1), round(pad_y + 0.1)
        left, right = round(pad_x - 0.1), round(pad_x + 0.1)
        if (new_w, new_h) != (width, height):
            image = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
        fill = (LETTERBOX_FILL,) * 3
        boxed = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_CONSTANT, value=fill)
        return boxed, scale, (float(left), float(top))


def to_tensor(image_bgr: np.ndarray) -> np.ndarray:
    """The detector's input (1, 3, H, W) float32 RGB in [0, 1] from a BGR uint8 image: each channel divided into its
    plane at once (the same float32 values as converting the whole image and dividing it, in an eighth of the time)."""
    tensor = np.empty((1, 3, *image_bgr.shape[:2]), np.float32)
    for plane, channel in zip(tensor[0], cv2.split(image_bgr)[::-1], strict=True):
        np.divide(channel, np.float32(255.0), out=plane, dtype=np.float32)
    return tensor


def to_pixels(image_bgr: np.ndarray) -> np.ndarray:
    """The detector's input as uint8 pixels (1, 3, H, W) RGB, for a session that quantizes them itself
    (:func:`head_outputs`): what :func:`to_tensor` gives times 255."""
    tensor = np.empty((1, 3, *image_bgr.shape[:2]), np.uint8)
    for plane, channel in zip(tensor[0], cv2.split(image_bgr)[::-1], strict=True):
        plane[...] = channel
    return tensor


def decode_yolo(
    output: np.ndarray,
    *,
    scale: float,
    pad: tuple[float, float],
    image_shape: tuple[int, int],
    confidence: float = 0.25,
    iou: float = TILE_NMS_IOU,
) -> Detections:
    """Boxes in original pixels from a YOLOv8 output (1, 4 + C, A) of a letterboxed input, after NMS.

    ``class_id`` stays :data:`UNCLASSIFIED` (the detector finds tiles; the classifier reads them); the
    detector's class index is kept in ``data["detector_class"]`` for multi-class detectors (face / back).
    """
    prediction = np.asarray(output, np.float32)
    prediction = prediction[0] if prediction.ndim == 3 else prediction
    scores_all = prediction[4:]
    detector_class = scores_all.argmax(axis=0)
    scores = scores_all.max(axis=0)
    keep = scores >= confidence
    return _found(prediction[:4, keep], scores[keep], detector_class[keep], scale, pad, image_shape, iou)


def decode_head(
    distributions: np.ndarray,
    class_scores: np.ndarray,
    *,
    input_shape: tuple[int, int],
    scale: float,
    pad: tuple[float, float],
    image_shape: tuple[int, int],
    confidence: float = 0.25,
    iou: float = TILE_NMS_IOU,
) -> Detections:
    """:func:`decode_yolo` from the two tensors a YOLOv8 head concatenates into its output, the class scores (1, C, A)
    and each anchor's box side distributions (1, 4 x 16, A) before its DFL step: the boxes of only the anchors kept
    (a few hundred of 4,116 at 448x448, 11,907 at 864x672), as the head computes them for every anchor (softmax over
    the 16 bins, their expectation, anchor +- sides, xywh, times the level's stride). ``input_shape``: the input's
    (height, width), which lays out the anchors (strides :data:`HEAD_STRIDES`)."""
    scores_all = np.asarray(class_scores, np.float32)[0]
    detector_class = scores_all.argmax(axis=0)
    scores = scores_all.max(axis=0)
    kept = np.flatnonzero(scores >= confidence)
    points, strides = anchor_points(input_shape, kept)
    bins = distributions.shape[1] // 4
    logits = np.asarray(distributions[0][:, kept], np.float32).reshape(4, bins, len(kept))
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    sides = (weights * np.arange(bins, dtype=np.float32)[:, None]).sum(axis=1) / weights.sum(axis=1)  # (4, K)
    top_left, bottom_right = points - sides[:2], points + sides[2:]
    xywh = np.concatenate([(top_left + bottom_right) / np.float32(2), bottom_right - top_left]) * strides
    return _found(xywh, scores[kept], detector_class[kept], scale, pad, image_shape, iou)


HEAD_STRIDES = (8, 16, 32)
"""The strides of a YOLOv8 head's three levels, finest first: the order of its anchors, each level's row by row."""


def anchor_points(input_shape: tuple[int, int], index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (x, y) centres (2, K) in grid cells and the strides (K,) of the anchors ``index`` of an input of
    ``input_shape`` (height, width, multiples of the largest stride), as Ultralytics' ``make_anchors`` lays them."""
    height, width = input_shape
    sizes = [(height // s, width // s) for s in HEAD_STRIDES]
    ends = np.cumsum([h * w for h, w in sizes])
    level = np.searchsorted(ends, index, side="right")
    within = index - np.concatenate([[0], ends[:-1]])[level]
    columns = np.array([w for _, w in sizes])[level]
    points = np.stack([within % columns, within // columns]).astype(np.float32) + np.float32(0.5)
    return points, np.array(HEAD_STRIDES, np.float32)[level]


def anchor_count(input_shape: tuple[int, int]) -> int:
    """How many anchors a YOLOv8 head has for an input of ``input_shape`` (height, width)."""
    return sum((input_shape[0] // s) * (input_shape[1] // s) for s in HEAD_STRIDES)


def _found(
    xywh: np.ndarray,
    scores: np.ndarray,
    detector_class: np.ndarray,
    scale: float,
    pad: tuple[float, float],
    image_shape: tuple[int, int],
    iou: float,
) -> Detections:
    """Boxes (4, K) cx, cy, w, h in letterboxed input pixels to a detection in the image's pixels, after NMS."""
    cx, cy, w, h = xywh
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    boxes[:, [0, 2]] -= pad[0]
    boxes[:, [1, 3]] -= pad[1]
    boxes /= scale
    height, width = image_shape
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
    found = Detections(
        boxes,
        scores,
        np.full(len(scores), UNCLASSIFIED),
        {"detector_class": detector_class.astype(np.int64)},
    )
    valid = (found.xyxy[:, 2] > found.xyxy[:, 0]) & (found.xyxy[:, 3] > found.xyxy[:, 1])
    return with_nms(found[valid], iou)


# -- the head's last step left to decode_head: the model's outputs changed in its serialized bytes -----------------


def head_outputs(model: bytes) -> tuple[bytes, tuple[str, str]] | None:
    """The ONNX model ``model`` with its outputs the two tensors a YOLOv8 head ends with, the box side distributions
    before DFL and the class scores (their names, in that order), for :func:`decode_head`, and without the nodes no
    output then needs (ONNX Runtime runs every node of a graph), among them the Softmax over every anchor's 64 bins
    (12 % of the detector's time at 864x672 in its profile). None for a model not ending so (one output, a Concat of
    boxes and a Sigmoid's scores, one Softmax over a Transpose of a Reshape: the Ultralytics export).

    The protobuf is edited where it is stored, field by field (onnxruntime brings no ONNX schema and the ``onnx``
    package is no dependency of the runtime): the graph's outputs replaced, the nodes and initializers no output
    needs left out, everything else kept as stored. Where the input goes into a QuantizeLinear that only turns
    ``pixel / 255`` back into ``pixel`` (:func:`_pixel_quantizer`), that node is left out too and the model takes the
    uint8 pixels (:func:`to_pixels`): the same numbers from there on, without a float copy of the image."""
    try:
        model_fields = _proto_fields(model)
        (graph_span,) = [(start, end) for field, _, start, end in model_fields if field == MODEL_GRAPH]
        graph = model[slice(*graph_span)]
        graph_fields = _proto_fields(graph)
        outputs = [
            _proto_strings(graph[start:end], VALUE_INFO_NAME)
            for field, _, start, end in graph_fields
            if field == GRAPH_OUTPUT
        ]
        nodes = [_node(graph[start:end]) for field, _, start, end in graph_fields if field == GRAPH_NODE]
    except (ValueError, IndexError):
        return None
    if len(outputs) != 1 or len(outputs[0]) != 1:
        return None
    producer = {output: (op, inputs) for op, inputs, outputs_of in nodes for output in outputs_of}
    op, joined = producer.get(outputs[0][0], ("", []))
    softmaxes = [inputs for op_type, inputs, _ in nodes if op_type == "Softmax"]
    if op != "Concat" or len(joined) != 2 or producer.get(joined[1], ("",))[0] != "Sigmoid" or len(softmaxes) != 1:
        return None
    scores = joined[1]
    transpose, transposed = producer.get(softmaxes[0][0], ("", []))
    reshape, reshaped = producer.get(transposed[0] if transposed else "", ("", []))
    if transpose != "Transpose" or reshape != "Reshape" or not reshaped:
        return None
    distributions = reshaped[0]
    needed, used = {distributions, scores}, []  # ONNX Runtime runs every node, needed or not: keep those needed
    for op_type, inputs, outputs_of in reversed(nodes):  # a graph's nodes are stored in topological order
        used.append(any(output in needed for output in outputs_of))
        if used[-1]:
            if op_type in ("If", "Loop", "Scan"):  # subgraphs read names no input lists
                return None
            needed.update(inputs)
    try:
        pixels = _pixel_quantizer(graph, graph_fields, nodes)
    except (ValueError, IndexError):
        pixels = None
    if pixels is not None:  # the input's QuantizeLinear left out: its output becomes the (uint8) input
        needed.discard(pixels[0])
        used[len(nodes) - 1 - pixels[1]] = False
    uses = iter(reversed(used))
    kept = []
    for (field, _, start, end), (_, _, inner, _) in zip(_proto_fields(graph, whole=True), graph_fields, strict=True):
        if field == GRAPH_NODE and not next(uses):
            continue
        if field == GRAPH_INITIALIZER and not set(_proto_strings(graph[inner:end], TENSOR_NAME)) & needed:
            continue
        if field == GRAPH_INPUT and pixels is not None:
            kept.append(_field(GRAPH_INPUT, _value_info(pixels[2], UINT8_IMAGES_TYPE)))
        elif field != GRAPH_OUTPUT:
            kept.append(graph[start:end])
    kept.extend(_field(GRAPH_OUTPUT, _value_info(name)) for name in (distributions, scores))
    new_graph = _field(MODEL_GRAPH, b"".join(kept))
    rebuilt = b"".join(
        new_graph if field == MODEL_GRAPH else model[start:end]
        for field, _, start, end in _proto_fields(model, whole=True)
    )
    return rebuilt, (distributions, scores)


MODEL_GRAPH, GRAPH_NODE, GRAPH_INITIALIZER, GRAPH_INPUT, GRAPH_OUTPUT = 7, 1, 5, 11, 12
NODE_INPUT, NODE_OUTPUT, NODE_OP_TYPE, VALUE_INFO_NAME = 1, 2, 4, 1
TENSOR_DATA_TYPE, TENSOR_FLOAT_DATA, TENSOR_INT32_DATA, TENSOR_NAME, TENSOR_RAW_DATA = 2, 4, 5, 8, 9
"""Field numbers of onnx.proto: ModelProto.graph, GraphProto.node, .initializer, .input and .output, NodeProto.input,
.output and .op_type, ValueInfoProto.name, TensorProto.data_type, .float_data, .int32_data, .name and .raw_data."""
FLOAT_TENSOR_TYPE = b"\x12\x0c\x0a\x0a\x08\x01\x12\x06\x0a\x00\x0a\x00\x0a\x00"
"""ValueInfoProto.type: a TypeProto whose tensor_type has elem_type 1 (FLOAT) and 3 dimensions of any size."""
UINT8_IMAGES_TYPE = b"\x12\x10\x0a\x0e\x08\x02\x12\x0a\x0a\x00\x0a\x02\x08\x03\x0a\x00\x0a\x00"
"""ValueInfoProto.type: elem_type 2 (UINT8), dimensions (any, 3, any, any)."""
PIXEL_SCALE = np.float32(1 / 255)
"""The scale of a detector input's QuantizeLinear that gives back each pixel's own 0-255 value (zero point 0): the
float32 input ``pixel / 255`` divided by it rounds to ``pixel`` for every pixel value."""


def _pixel_quantizer(
    graph: bytes, graph_fields: list[tuple[int, int, int, int]], nodes: list[tuple[str, list[str], list[str]]]
) -> tuple[str, int, str] | None:
    """(the input's name, the index of the node that quantizes it, that node's output) when the graph's one input
    goes only into a QuantizeLinear to uint8 of scale :data:`PIXEL_SCALE` and zero point 0: one that turns the float
    input ``pixel / 255`` back into ``pixel``, so the uint8 image can be given in its place (the same bits); None
    otherwise."""
    inputs = [_proto_strings(graph[start:end], VALUE_INFO_NAME) for field, _, start, end in graph_fields if field == 11]
    if len(inputs) != 1 or len(inputs[0]) != 1:
        return None
    (name,) = inputs[0]
    readers = [k for k, (_, node_inputs, _) in enumerate(nodes) if name in node_inputs]
    if len(readers) != 1 or nodes[readers[0]][0] != "QuantizeLinear" or len(nodes[readers[0]][1]) != 3:
        return None
    _, (_, scale_name, zero_name), (quantized,) = nodes[readers[0]]
    constants = {}
    for field, _, start, end in graph_fields:
        if field == GRAPH_INITIALIZER and set(_proto_strings(graph[start:end], TENSOR_NAME)) & {scale_name, zero_name}:
            constants[_proto_strings(graph[start:end], TENSOR_NAME)[0]] = _scalar(graph[start:end])
    if constants.get(scale_name) != (1, PIXEL_SCALE.tobytes()) or constants.get(zero_name) != (2, b"\x00"):
        return None
    return name, readers[0], quantized


def _scalar(tensor: bytes) -> tuple[int, bytes] | None:
    """(data type, little-endian bytes) of a serialized one-value TensorProto; None for one not stored as one value in
    ``float_data``, ``int32_data`` or ``raw_data``. (Fields of one-byte keys: all of these.)"""
    fields = _proto_fields(tensor)
    types = [
        _varint(tensor, start + 1)[0] for field, wire, start, _ in fields if field == TENSOR_DATA_TYPE and wire == 0
    ]
    data = [(field, wire, start, end) for field, wire, start, end in fields if field in _VALUE_FIELDS]
    if len(types) != 1 or len(data) != 1:
        return None
    field, wire, start, end = data[0]
    if wire == 0:  # an int32_data value, not packed: the varint after its key
        value = (_varint(tensor, start + 1)[0] & _UINT64).to_bytes(8, "little")
    elif wire == 5:  # a float_data value, not packed
        value = tensor[start + 1 : end]
    elif field == TENSOR_INT32_DATA:  # packed varints
        number, length = _varint(tensor[start:end], 0)
        value = (number & _UINT64).to_bytes(8, "little") if length == end - start else b""
    else:  # packed float_data, or raw_data: the bytes themselves
        value = tensor[start:end]
    if field == TENSOR_INT32_DATA and types[0] == 2:  # uint8 values are stored as int32
        value = value[:1] if value[1:] == bytes(7) else b""
    return types[0], value


_VALUE_FIELDS = (TENSOR_FLOAT_DATA, TENSOR_INT32_DATA, TENSOR_RAW_DATA)
_UINT64 = (1 << 64) - 1


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            return value, at


def _proto_fields(data: bytes, *, whole: bool = False) -> list[tuple[int, int, int, int]]:
    """(field number, wire type, start, end) of each field of a serialized protobuf message: the span of a
    length-delimited field's contents, or with ``whole`` of the field with its key and length."""
    fields, at = [], 0
    while at < len(data):
        first = at
        key, at = _varint(data, at)
        wire = key & 7
        if wire == 0:
            _, at = _varint(data, at)
            start = first
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
            start = first
        elif wire == 2:
            length, start = _varint(data, at)
            at = start + length
        else:
            raise ValueError(f"protobuf wire type {wire}")
        if at > len(data):
            raise ValueError("protobuf field past the end")
        fields.append((key >> 3, wire, first if whole else start, at))
    return fields


def _proto_strings(message: bytes, number: int) -> list[str]:
    return [
        message[start:end].decode()
        for field, wire, start, end in _proto_fields(message)
        if field == number and wire == 2
    ]


def _node(message: bytes) -> tuple[str, list[str], list[str]]:
    """(op_type, inputs, outputs) of a serialized NodeProto."""
    op_types = _proto_strings(message, NODE_OP_TYPE)
    return (op_types[0] if op_types else ""), _proto_strings(message, NODE_INPUT), _proto_strings(message, NODE_OUTPUT)


def _field(number: int, contents: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _encode_varint(number << 3 | 2) + _encode_varint(len(contents)) + contents


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _value_info(name: str, type_: bytes = FLOAT_TENSOR_TYPE) -> bytes:
    return _field(VALUE_INFO_NAME, name.encode()) + type_


# -- the same suppression as Detections', faster on the detector's hundreds of candidates -----------------------------

MATRIX_BOXES = 2000
"""Up to this many boxes :func:`without_nested` compares every pair at once (N x N float64 arrays)."""


def overlapping_pairs(boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i, j) of the boxes (N, 4) float64 whose intersection is not empty: candidates taken from the boxes
    in order of their left edge (a box meets only those starting left of its right edge), then checked."""
    by_left = np.argsort(boxes[:, 0], kind="stable")
    lefts = boxes[by_left, 0]
    ends = np.searchsorted(lefts, boxes[by_left, 2], side="left")  # first box (by left edge) starting at or after it
    counts = np.maximum(ends - np.arange(1, len(boxes) + 1), 0)
    first = np.repeat(np.arange(len(boxes)), counts)
    second = first + 1 + np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
    i, j = by_left[first], by_left[second]
    a, b = boxes[i], boxes[j]
    meet = (np.minimum(a[:, 2], b[:, 2]) > np.maximum(a[:, 0], b[:, 0])) & (
        np.minimum(a[:, 3], b[:, 3]) > np.maximum(a[:, 1], b[:, 1])
    )
    return i[meet], j[meet]


def nms_keep(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """:func:`vision.runtime.detections.nms_indices` (greedy NMS, the indices kept, most confident first) with the IoU
    of only the pairs of boxes that meet, each computed as :func:`~vision.runtime.detections.box_iou` does: the same
    boxes kept. The detector's 400-800 candidates in a 1280x960 photo took 4-5 ms one kept box at a time."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    if len(boxes) < 2 or not iou >= 0 or not np.isfinite(boxes).all():  # boxes that do not meet overlap by 0 <= iou
        return nms_indices(boxes, scores, iou)
    i, j = overlapping_pairs(boxes)
    a, b = boxes[i], boxes[j]
    inter = np.clip(np.minimum(a[:, 2:], b[:, 2:]) - np.maximum(a[:, :2], b[:, :2]), 0, None).prod(axis=1)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    union = area[i] + area[j] - inter
    overlaps = np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)
    strong = ~(overlaps <= iou)
    i, j = i[strong], j[strong]
    order = np.argsort(-np.asarray(scores), kind="stable")
    rank = np.empty(len(boxes), np.int64)
    rank[order] = np.arange(len(boxes))
    winner, loser = np.where(rank[i] < rank[j], i, j), np.where(rank[i] < rank[j], j, i)
    by_winner = np.argsort(winner, kind="stable")
    winner, loser = winner[by_winner], loser[by_winner]
    starts = np.searchsorted(winner, np.arange(len(boxes) + 1))
    suppressed = np.zeros(len(boxes), bool)
    keep = []
    for k in order.tolist():
        if not suppressed[k]:
            keep.append(k)
            suppressed[loser[starts[k] : starts[k + 1]]] = True
    return np.asarray(keep, np.int64)


def with_nms(found: Detections, iou: float) -> Detections:
    """``found.with_nms(iou)`` (class-agnostic), by :func:`nms_keep`."""
    if len(found) < 2:
        return found
    return found[np.sort(nms_keep(found.xyxy.astype(np.float64), found.confidence, iou))]


def without_nested(found: Detections, share: float = NESTED_SHARE) -> Detections:
    """``found.without_nested(share)`` with every pair's intersection computed at once, as that method computes it
    one kept box at a time: the same boxes kept."""
    if len(found) < 2 or len(found) > MATRIX_BOXES:
        return found.without_nested(share)
    boxes = found.xyxy.astype(np.float64)
    areas = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-9)
    w = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(boxes[:, None, 0], boxes[None, :, 0])
    h = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(boxes[:, None, 1], boxes[None, :, 1])
    inter = np.clip(w, 0, None) * np.clip(h, 0, None)
    nested = (inter >= share * areas[:, None]) | (inter >= share * areas[None, :])  # i in k, or k in i
    kept = np.zeros(len(found), bool)
    for i in np.argsort(-found.confidence, kind="stable").tolist():
        if not (nested[i] & kept).any():
            kept[i] = True
    return found[np.flatnonzero(kept)]


def windows(width: int, height: int, window: int, overlap: float = WINDOW_OVERLAP) -> list[tuple[int, int, int, int]]:
    """Overlapping (x0, y0, x1, y1) windows of side ``window`` covering the image, the last flush with its edge."""

    def starts(length: int) -> list[int]:
        if length <= window:
            return [0]
        stride = max(1, int(window * (1 - overlap)))
        points = list(range(0, length - window, stride))
        return [*points, length - window]

    return [(x, y, min(x + window, width), min(y + window, height)) for y in starts(height) for x in starts(width)]


@dataclass(frozen=True, slots=True)
class Region:
    """Part of a frame to detect in (``x0, y0, x1, y1`` in pixels), scaled to ``width_px`` wide first."""

    x0: float
    y0: float
    x1: float
    y1: float
    width_px: int = 896


class Detector(Protocol):
    """Finds face-up tiles: unclassified boxes in the image's pixels (``class_id`` :data:`UNCLASSIFIED`). The adapter
    owns its input geometry (letterbox, windows, the scale it reads a region at)."""

    iou: float
    """Boxes overlapping more than this are one tile (a reader merging two readings uses it too)."""

    @property
    def input_size(self) -> int:
        """The side of the model's input: a tile narrower than a few pixels at this scale is read again larger."""
        ...

    def detect(self, image_bgr: np.ndarray) -> Detections:
        """Boxes in the whole image."""
        ...

    def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
        """Boxes inside ``region``, read at the region's own scale, in the whole image's pixels."""
        ...

    def load(self) -> None:
        """Load the model now: a missing or damaged file fails here, in one line naming it."""
        ...


# -- the ONNX adapter--------------------------------------------------------------------------------------


class YoloOnnxDetector:
    """:class:`Detector` on an Ultralytics YOLOv8 detector exported to ONNX: ``detect(image_bgr) -> Detections``
    (unclassified boxes in original pixels)."""

    def __init__(
        self,
        path: str | Path,
        *,
        confidence: float = 0.25,
        iou: float = TILE_NMS_IOU,
        providers: Sequence[str] = DEFAULT_PROVIDERS,
        tiled: bool = False,
        window: int | None = None,
        max_windows: int = MAX_WINDOWS,
        threads: int | None = None,
        rect: bool = False,
    ) -> None:
        self.path = Path(path)
        self.rect = rect
        """A whole image read with padding only up to the stride, not to a square (:meth:`letterbox_for`). Off by
        default: it moves boxes of large tiles by up to 4 px, and the enrolment grid's fit of a rendered grid with a
        tile missing (tests/vision/runtime/test_enrolment.py, seed 3, strong perspective) then puts columns 9-11 between
        cells (rendered grids of seeds 0-9: 4 of 20 photos refused wrongly with it, 3 without). Measured on
        (2026-11-26, models/README.md): a 4:3 photo's first reading 22 % less compute; held-out editions recall
        0.9427 -> 0.9432, F1 0.9153 -> 0.9149, wrong at >= 0.8 25 -> 25; real held-out photos unchanged."""
        self.max_windows = max_windows
        self.confidence = confidence
        self.iou = iou
        self.providers = tuple(providers)
        self.threads = threads
        """ONNX Runtime's intra-op threads (None: :data:`INTRA_OP_THREADS`)."""
        self.tiled = tiled
        self._window = window
        self._session: Any = None
        self._head: tuple[str, str] | None = None
        """The names of the box distributions and class scores the session outputs instead of ``output0``
        (:func:`head_outputs`); None: it outputs the model's own ``output0``."""
        self._pixels = False
        """The session takes the uint8 pixels (:func:`to_pixels`), not floats (:func:`to_tensor`)."""
        self._size: int | None = None

    @classmethod
    def from_model_dir(cls, models_dir: str | Path, **options: Any) -> YoloOnnxDetector:
        """The detector of a models folder (:data:`DETECTOR_FILE`); ``options`` as for the constructor."""
        return cls(Path(models_dir) / DETECTOR_FILE, **options)

    def load(self) -> None:
        self.session  # noqa: B018 - sessions are otherwise made on first use

    @property
    def session(self) -> Any:
        """The ONNX Runtime session, made on first use: on the model's last nodes but its DFL step, whose boxes
        :func:`decode_head` computes for the anchors kept, where the model ends as an Ultralytics YOLOv8 export does;
        otherwise on the whole model."""
        if self._session is None:
            try:
                cut = head_outputs(self.path.read_bytes())
            except OSError:  # missing or unreadable: open_session says so in one line
                cut = None
            session = None
            if cut is not None:
                try:
                    session = open_session(self.path, self.providers, self.threads, model=cut[0])
                    self._head = cut[1]
                    self._pixels = session.get_inputs()[0].type == "tensor(uint8)"
                except ModelLoadError:  # the edit did not load: the whole model still works
                    session, self._head, self._pixels = None, None, False
            if session is None:  # the whole model: the file checked, one-line errors
                session = open_session(self.path, self.providers, self.threads)
            self._session = session
        return self._session

    @property
    def input_size(self) -> int:
        """``S`` of the (1, 3, S, S) input: the export's ``imgsz`` metadata, else the input's static shape."""
        if self._size is None:
            self._size = _input_size(self.session)
        return self._size

    @property
    def any_size(self) -> bool:
        """The model takes inputs of any height and width (exported with dynamic axes)."""
        height, width = self.session.get_inputs()[0].shape[2:]
        return not (isinstance(height, int) and isinstance(width, int))

    def window_for(self, width: int, height: int) -> int:
        """Side of a window in tiled inference, in original pixels.

        Native resolution (the input size) when that needs at most ``max_windows`` windows; otherwise the
        smallest larger side (steps of 25%) that does, so a 4K frame costs a bounded number of runs.
        """
        if self._window:
            return self._window
        side = self.input_size
        while len(windows(width, height, side)) > self.max_windows:
            side = round(side * 1.25)
        return side

    def detect(
        self, image_bgr: np.ndarray, *, tiled: bool | None = None, whole: bool = True, size: int | None = None
    ) -> Detections:
        """Boxes of face-up tiles; ``tiled`` adds native-resolution windows, ``whole=False`` uses them alone;
        ``size`` letterboxes the image to that side instead of the input size (a model exported with dynamic axes,
        not tiled)."""
        if size is not None:
            return without_nested(self._detect_once(image_bgr, Letterbox(-(-size // STRIDE) * STRIDE)))
        tiled = self.tiled if tiled is None else tiled
        height, width = image_bgr.shape[:2]
        side = self.window_for(width, height)
        letterbox = self.letterbox_for(height, width)
        if not tiled or max(width, height) <= side:
            return without_nested(self._detect_once(image_bgr, letterbox))
        parts = [self._detect_once(image_bgr, letterbox)] if whole else []
        for x0, y0, x1, y1 in windows(width, height, side):
            kept = _drop_cut_boxes(self._detect_once(image_bgr[y0:y1, x0:x1]), (x0, y0, x1, y1), (width, height))
            parts.append(kept.with_(xyxy=kept.xyxy + np.array([x0, y0, x0, y0], np.float32)))
        return without_nested(with_nms(Detections.merge(parts), self.iou))

    def letterbox_for(self, height: int, width: int) -> Letterbox:
        """The input an image of ``height`` x ``width`` is read at as a whole: scaled so its longer side is the input
        size; padded to a square of it, or, with ``rect`` and a model that takes any input size, only up to the
        network's stride (Ultralytics' ``rect`` letterbox: a 4:3 photo read at 448x352, not 448x448)."""
        size = self.input_size
        if not self.rect or not self.any_size:
            return Letterbox(size)
        scale = size / max(height, width)
        return Letterbox(
            (-(-int(np.ceil(height * scale)) // STRIDE) * STRIDE, -(-int(np.ceil(width * scale)) // STRIDE) * STRIDE)
        )

    def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
        """Tiles inside ``region`` of the image, detected on the region resized to ``region.width_px``.

        For frames of a whole table, where tiles are too small once the frame is shrunk to the input size:
        the region (the play area) is cut out, scaled so tiles come out at the size the detector learnt, and
        covered with windows. Boxes come back in the original image's pixels.
        """
        height, width = image_bgr.shape[:2]
        x0, y0 = max(0, int(region.x0)), max(0, int(region.y0))
        x1, y1 = min(width, int(np.ceil(region.x1))), min(height, int(np.ceil(region.y1)))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return Detections.empty()
        crop = image_bgr[y0:y1, x0:x1]
        scale = min(1.0, region.width_px / crop.shape[1])
        if scale < 1.0:
            crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        found = self.detect_native(crop)
        return found.with_(xyxy=found.xyxy / np.float32(scale) + np.array([x0, y0, x0, y0], np.float32))

    def detect_native(self, image_bgr: np.ndarray) -> Detections:
        """Boxes with the image read at its own scale: in one pass, padded to the stride, when the model takes
        any input size (1.7x faster than the six overlapping windows of a 1080p play area, and no tile is cut
        by a window's edge); otherwise in windows of the input size."""
        height, width = image_bgr.shape[:2]
        if max(height, width) <= self.input_size or height * width > MAX_ONE_PASS_PIXELS or not self.any_size:
            return self.detect(image_bgr, tiled=True, whole=False)
        return without_nested(self._detect_once(image_bgr, Letterbox.to_stride(height, width)))

    def _detect_once(self, image_bgr: np.ndarray, letterbox: Letterbox | None = None) -> Detections:
        boxed, scale, pad = (letterbox or Letterbox(self.input_size)).apply(image_bgr)
        session = self.session  # made first: it decides whether the input is pixels or floats
        tensor = to_pixels(boxed) if self._pixels else to_tensor(boxed)
        outputs = session.run(None, {session.get_inputs()[0].name: tensor})
        if self._head is not None and outputs[0].shape[2] == anchor_count(tensor.shape[2:]):
            return decode_head(
                outputs[0],
                outputs[1],
                input_shape=tensor.shape[2:],
                scale=scale,
                pad=pad,
                image_shape=image_bgr.shape[:2],
                confidence=self.confidence,
                iou=self.iou,
            )
        if self._head is not None:  # anchors laid out otherwise than decode_head knows: the whole model from now on
            self._session, self._head = open_session(self.path, self.providers, self.threads), None
            self._pixels = False
            return self._detect_once(image_bgr, letterbox)
        output = outputs[0]
        return decode_yolo(
            output,
            scale=scale,
            pad=pad,
            image_shape=image_bgr.shape[:2],
            confidence=self.confidence,
            iou=self.iou,
        )


def _drop_cut_boxes(found: Detections, window: tuple[int, int, int, int], image_size: tuple[int, int]) -> Detections:
    """Keep boxes not touching an inner edge of the window (edges on the image border are real edges)."""
    x0, y0, x1, y1 = window
    width, height = image_size
    w, h = x1 - x0, y1 - y0
    box = found.xyxy
    cut = np.zeros(len(found), bool)
    if x0 > 0:
        cut |= box[:, 0] <= EDGE_MARGIN
    if y0 > 0:
        cut |= box[:, 1] <= EDGE_MARGIN
    if x1 < width:
        cut |= box[:, 2] >= w - EDGE_MARGIN
    if y1 < height:
        cut |= box[:, 3] >= h - EDGE_MARGIN
    return found[~cut]


def _input_size(session: Any) -> int:
    meta = session.get_modelmeta().custom_metadata_map
    if "imgsz" in meta:
        value = ast.literal_eval(meta["imgsz"])
        return int(value[0] if isinstance(value, list | tuple) else value)
    shape = session.get_inputs()[0].shape
    if isinstance(shape[-1], int):
        return shape[-1]
    return 640
