"""The INT8 models: static post-training quantization of the FP32 ONNX exports with ONNX Runtime.

Weights become int8 per output channel, activations uint8 (QDQ format), calibrated on what each model is fed at run
time, recorded from its session while the reader works. The held-out real photos are never used.

- Detector (:func:`quantize_detector`): activation ranges from their minimum and maximum over the calibration inputs;
  the Detect head's box decoding (distribution focal loss, anchors, the final sigmoid and concatenation) stays in
  float, so boxes keep their precision. Calibrated on real *training* photos (letterboxed, and read again at tile
  scale where their tiles are small) and play areas of a synthetic game (one pass at tile scale, as the live
  pipeline reads them).
- Classifier (:func:`quantize_classifier`): only the backbone (stem, stages, last block: convolutions, ReLUs and
  additions) is int8; the pooling, and so the ``features`` the familiarity statistics and enrolment heads read, the
  label and angle heads and the softmax stay in float. Activation ranges are percentiles (99.999 %) of the values
  over the calibration crops, not their extremes (:data:`CLASSIFIER_QUANTIZATION`). Calibrated on the crops the
  reader cuts (every look but the familiarity confirmation: the first reading, the second and turned looks) from real
  training photos and synthetic scenes of the training editions. The float model stays beside the INT8 one
  (:func:`vision.runtime.models.float_weights`): training and enrolment start from it.

Needs ``onnx`` (the ``train`` or ``dev`` extra) besides ONNX Runtime; the quantized models run on ONNX Runtime
alone, like the FP32 ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import random
import shutil
import time
from collections.abc import Callable, Iterable
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


CLASSIFIER_BACKBONE_PREFIXES = ("/net/stem", "/net/stages", "/net/last")
"""The tile classifier's backbone in its ONNX export (the torch exporter's scope names): what becomes int8."""
CLASSIFIER_BACKBONE_OPS = ("Conv", "Relu", "Add")
CLASSIFIER_CALIBRATION_CROPS = 3840
"""At most this many recorded crops calibrate the classifier (drawn with the seed)..."""
CALIBRATION_BATCH = 64
"""...in batches of this many, all of one size (a whole number of batches where there are more crops than one)."""
CLASSIFIER_QUANTIZATION = {
    "format": "QDQ",
    "weights": "int8 in a 7-bit range (reduce_range), per output channel",
    "activations": "uint8, asymmetric",
    "calibration": "percentile 99.999 of the activations over the calibration crops",
    "float": "the pooling (features), the label and angle heads, the temperature and softmax",
}
"""Chosen by measurement (2026-11-28, models/README "The INT8 classifier"): against min/max ranges, entropy, a float
stem and full 8-bit weights, percentile ranges left the fewest wrong labels at >= 0.8 on held-out editions."""


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
    return _record_inputs(reader, reader.detector, reads)


def record_classifier_crops(reader: Any, reads: Iterable[tuple[np.ndarray, Any]]) -> np.ndarray:
    """Every crop the classifier of ``reader`` is fed (N, 3, 64, 64) while it reads each ``(image, region)``."""
    feeds = _record_inputs(reader, reader.classifier, reads)
    return np.concatenate([next(iter(feed.values())) for feed in feeds]) if feeds else np.zeros((0, 3, 64, 64))


def _record_inputs(reader: Any, model: Any, reads: Iterable[tuple[np.ndarray, Any]]) -> list[dict[str, np.ndarray]]:
    recorder = InputRecorder(model.session)
    model._session = recorder
    try:
        for image, region in reads:
            reader.read(image, region=region)
    finally:
        model._session = recorder.session
    return recorder.feeds


def calibration_reads(
    photos: int,
    seed: int,
    game: Path | None,
    frames: int,
    real_root: Path | None = None,
    scenes: Path | None = None,
) -> list[tuple[np.ndarray, Any]]:
    """``photos`` real training photos drawn with ``seed``, every image of ``scenes`` (a ``synth`` folder), and
    ``frames`` evenly spaced frames of ``game`` (a ``synth-game`` folder) with its play area as the region."""
    import cv2

    from vision.runtime.realdata import load_photos
    from vision.runtime.recognition import load_image

    training = load_photos(real_root, split="train")
    if not 0 <= photos <= len(training):
        raise ValueError(f"--photos must be between 0 and {len(training)} (the real training photos), not {photos}")
    chosen = random.Random(seed).sample(training, photos)
    reads: list[tuple[np.ndarray, Any]] = [(load_image(photo.path), None) for photo in chosen]
    if scenes is not None:
        images = sorted((scenes / "images").glob("*.*")) if (scenes / "images").is_dir() else []
        if not images:
            raise ValueError(f"{scenes}: not a synth folder (no images/)")
        reads += [(load_image(image), None) for image in images]
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


def classifier_backbone_nodes(model: Any) -> list[str]:
    """The classifier's nodes that become int8: its backbone's convolutions, ReLUs and additions."""
    return [
        n.name
        for n in model.graph.node
        if n.op_type in CLASSIFIER_BACKBONE_OPS and n.name.startswith(CLASSIFIER_BACKBONE_PREFIXES)
    ]


def quantize_detector(source: Path, target: Path, feeds: list[dict[str, np.ndarray]], work: Path) -> dict[str, Any]:
    """Quantize ``source`` into ``target`` calibrated on ``feeds``; returns the card's ``quantization`` entry."""
    if not feeds:
        raise ValueError("no calibration inputs: give --photos or --game")
    started = time.perf_counter()
    _quantize(source, target, feeds, work, "minmax", lambda model: {"nodes_to_exclude": float_head_nodes(model)})
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


def quantize_classifier(source: Path, target: Path, crops: np.ndarray, work: Path, seed: int = 0) -> dict[str, Any]:
    """Quantize the tile classifier ``source`` into ``target``, calibrated on at most
    :data:`CLASSIFIER_CALIBRATION_CROPS` of ``crops`` (N, 3, 64, 64, as the classifier is fed) drawn with ``seed``;
    returns the card's ``quantization`` entry."""
    if not len(crops):
        raise ValueError("no calibration crops: give --photos or --scenes")
    count = min(len(crops), CLASSIFIER_CALIBRATION_CROPS)
    count = count // CALIBRATION_BATCH * CALIBRATION_BATCH or count  # the percentiles' histograms need equal batches
    drawn = crops[np.random.default_rng(seed).permutation(len(crops))[:count]]
    name = _input_name(source)
    feeds = [{name: drawn[start : start + CALIBRATION_BATCH]} for start in range(0, len(drawn), CALIBRATION_BATCH)]
    started = time.perf_counter()
    _quantize(
        source, target, feeds, work, "percentile", lambda model: {"nodes_to_quantize": classifier_backbone_nodes(model)}
    )
    return {
        **CLASSIFIER_QUANTIZATION,
        "source": str(source),
        "source_sha256": sha256(source),
        "calibration_crops": len(drawn),
        "crops_recorded": len(crops),
        "seconds": round(time.perf_counter() - started, 1),
        "onnx_bytes": target.stat().st_size,
    }


def _input_name(path: Path) -> str:
    import onnx

    return str(onnx.load(str(path), load_external_data=False).graph.input[0].name)


def _quantize(
    source: Path,
    target: Path,
    feeds: list[dict[str, np.ndarray]],
    work: Path,
    method: str,
    nodes: Callable[[Any], dict[str, list[str]]],
) -> None:
    """``quantize_static`` in QDQ, int8 weights per channel, uint8 activations calibrated by ``method`` (minmax or
    percentile) on ``feeds``; ``nodes(model)``: the nodes to quantize or to leave in float, by name."""
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    class Feeds(CalibrationDataReader):
        def __init__(self) -> None:
            self.left = iter(feeds)

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.left, None)

    work.mkdir(parents=True, exist_ok=True)
    prepared = work / "prepared.onnx"
    # Ultralytics' dynamic-axes graph defeats symbolic shape inference; ONNX's own inference is enough for both.
    quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
    methods = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile}
    with contextlib.redirect_stdout(io.StringIO()):  # ONNX Runtime prints its histogram settings: --json is stdout
        quantize_static(
            str(prepared),
            str(target),
            Feeds(),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=REDUCE_RANGE,
            calibrate_method=methods[method],
            extra_options={"ActivationSymmetric": False},
            **nodes(onnx.load(str(prepared))),
        )


def scenes_provenance(scenes: Path) -> dict[str, Any]:
    """What the calibration scenes are: their folder, and the recipe, seed and count their ``summary.json`` names
    (``rummikub-referee synth`` writes it), so that they can be made again."""
    entry: dict[str, Any] = {"folder": str(scenes)}
    try:
        summary = json.loads((scenes / "summary.json").read_text(encoding="utf-8"))
        entry.update(recipe=summary["recipe"]["name"], seed=summary["seed"], images=summary["images"])
    except (OSError, ValueError, KeyError, TypeError):
        entry["made_by"] = "unknown: no readable summary.json"
    return entry


def model_kind(path: Path) -> str:
    """``classifier`` (an ONNX model with a ``probs`` output) or ``detector``; a one-line error for another file."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as error:  # onnx raises DecodeError, ValueError, OSError... for what is not a model
        raise ValueError(
            f"{path}: not an ONNX model ({str(error).splitlines()[0][:120] if str(error) else error!r})"
        ) from None
    return "classifier" if "probs" in [o.name for o in model.graph.output] else "detector"


def keep_float_beside(source: Path, target: Path) -> Path:
    """Copy the FP32 ``source`` beside the INT8 ``target`` as its float weights
    (:func:`vision.runtime.models.float_weights`), where it is not already there; the path."""
    from vision.runtime.models import float_weights

    beside = float_weights(target)
    if not beside.exists() or beside.resolve() != source.resolve():
        shutil.copyfile(source, beside)
    return beside


def write_card_entry(card: Path, entry: dict[str, Any]) -> None:
    """Add (or replace) the ``quantization`` entry of a model card JSON, keeping the rest."""
    data = json.loads(card.read_text()) if card.is_file() else {}
    data["quantization"] = entry
    card.write_text(json.dumps(data, indent=2) + "\n")
