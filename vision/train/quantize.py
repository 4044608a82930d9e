"""The INT8 detector: static post-training quantization of the FP32 ONNX export with ONNX Runtime.

Weights become int8 per output channel, activations uint8 with ranges from their minimum and maximum over
calibration inputs (QDQ format); the Detect head's box decoding (distribution focal loss, anchors, the final
sigmoid and concatenation) stays in float, so boxes keep their precision. The calibration inputs are what the
detector is fed at run time, recorded from its session while the reader works: real *training* photos
(letterboxed, and read again at tile scale where their tiles are small) and play areas of a synthetic game
(one pass at tile scale, as the live pipeline reads them). The held-out real photos are never used.

Needs ``onnx`` (the ``train`` or ``dev`` extra) besides ONNX Runtime; the quantized model runs on ONNX Runtime
alone, like the FP32 one.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

FLOAT_HEAD_PREFIX = "/model.22/"
"""Ultralytics' name for the Detect head (YOLOv8n's 23rd module); its convolutions are quantized, the rest not..."""
FLOAT_DFL_PREFIX = "/model.22/dfl/"
"""...except the distribution focal loss's: its fixed 0..15 weights turn box-edge distributions into offsets."""
QUANTIZATION = {
    "format": "QDQ",
    "weights": "int8 in a 7-bit range (reduce_range), per output channel",
    "activations": "uint8, asymmetric",
    "calibration": "min/max over the calibration inputs",
    "float": "the Detect head's decoding (DFL and its convolution, anchors, sigmoid, concat); its other"
    " convolutions are int8",
}

REDUCE_RANGE = True
"""Weights in 7 bits: ONNX Runtime's u8 x s8 kernels on x86 CPUs without VNNI (AVX2 only, e.g. AMD Zen 1-3, Intel
before Cascade Lake) add pairs of products in 16 bits, which saturate with full-range weights. Measured with the
full-range v3 detector on an AVX2-only CPU: real held-out photos F1 0.9797 (FP32 0.9893, and 0.9902 with the same
INT8 file on an AVX-512 VNNI CPU); with 7-bit weights 0.9896 on the AVX2 CPU. VNNI kernels never saturate."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class InputRecorder:
    """Wraps an ONNX Runtime session: every input it is fed is kept (a copy) and the call goes through."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.feeds: list[dict[str, np.ndarray]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    def run(self, output_names: Any, feed: dict[str, np.ndarray], *args: Any) -> Any:
        self.feeds.append({name: np.array(value, copy=True) for name, value in feed.items()})
        return self.session.run(output_names, feed, *args)


def record_detector_inputs(reader: Any, reads: Iterable[tuple[np.ndarray, Any]]) -> list[dict[str, np.ndarray]]:
    """The detector inputs of ``reader.read(image, region=region)`` for each ``(image, region)``."""
    detector = reader.detector
    recorder = InputRecorder(detector.session)
    detector._session = recorder
    try:
        for image, region in reads:
            reader.read(image, region=region)
    finally:
        detector._session = recorder.session
    return recorder.feeds


def calibration_reads(
    photos: int, seed: int, game: Path | None, frames: int, real_root: Path | None = None
) -> list[tuple[np.ndarray, Any]]:
    """``photos`` real training photos drawn with ``seed``, and ``frames`` evenly spaced frames of ``game``
    (a ``synth-game`` folder) with its play area as the region."""
    import cv2

    from vision.runtime.realdata import load_photos
    from vision.runtime.recognition import load_image

    training = load_photos(real_root, split="train")
    if not 0 <= photos <= len(training):
        raise ValueError(f"--photos must be between 0 and {len(training)} (the real training photos), not {photos}")
    chosen = random.Random(seed).sample(training, photos)
    reads: list[tuple[np.ndarray, Any]] = [(load_image(photo.path), None) for photo in chosen]
    if game is None or not frames:
        return reads
    from vision.game.pipeline import PipelineConfig, detection_region
    from vision.synth.truth import load_truth, play_area_calibration

    if not (game / "truth.jsonl").is_file():
        raise ValueError(f"{game}: not a synth-game folder (no truth.jsonl)")
    header, _ = load_truth(game)
    calibration = play_area_calibration(header)
    region = detection_region(tuple(header["size"]), calibration, PipelineConfig())
    video = cv2.VideoCapture(str(game / header["video"]))
    try:
        total = int(video.get(cv2.CAP_PROP_FRAME_COUNT))
        for index in np.linspace(0, total - 1, frames).astype(int):
            video.set(cv2.CAP_PROP_POS_FRAMES, int(index))
            ok, image = video.read()
            if ok:
                reads.append((image, region))
    finally:
        video.release()
    return reads


def float_head_nodes(model: Any) -> list[str]:
    """Nodes left in float: the Detect head's, except its convolutions (but the DFL's is float too)."""
    return [
        n.name
        for n in model.graph.node
        if n.name.startswith(FLOAT_DFL_PREFIX) or (n.name.startswith(FLOAT_HEAD_PREFIX) and n.op_type != "Conv")
    ]


def quantize_detector(source: Path, target: Path, feeds: list[dict[str, np.ndarray]], work: Path) -> dict[str, Any]:
    """Quantize ``source`` into ``target`` calibrated on ``feeds``; returns the card's ``quantization`` entry."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    if not feeds:
        raise ValueError("no calibration inputs: give --photos or --game")

    class Feeds(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.left, None)

    work.mkdir(parents=True, exist_ok=True)
    prepared = work / "prepared.onnx"
    # Ultralytics' dynamic-axes graph defeats symbolic shape inference; ONNX's own inference is enough here.
    quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
    started = time.perf_counter()
    quantize_static(
        str(prepared),
        str(target),
        Feeds(),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=REDUCE_RANGE,
        calibrate_method=CalibrationMethod.MinMax,
        nodes_to_exclude=float_head_nodes(onnx.load(str(prepared))),
        extra_options={"ActivationSymmetric": False},
    )
    shapes = sorted({tuple(int(d) for d in next(iter(feed.values())).shape[2:]) for feed in feeds})
    return {
        **QUANTIZATION,
        "source": str(source),
        "source_sha256": sha256(source),
        "calibration_inputs": len(feeds),
        "calibration_input_sizes": [f"{h}x{w}" for h, w in shapes],
        "seconds": round(time.perf_counter() - started, 1),
        "onnx_bytes": target.stat().st_size,
    }


def write_card_entry(card: Path, entry: dict[str, Any]) -> None:
    """Add (or replace) the ``quantization`` entry of a model card JSON, keeping the rest."""
    data = json.loads(card.read_text()) if card.is_file() else {}
    data["quantization"] = entry
    card.write_text(json.dumps(data, indent=2) + "\n")
