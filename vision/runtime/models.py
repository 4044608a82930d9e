"""The tile models on disk: where they ship, ONNX Runtime sessions on them, their execution providers, the one-line
errors for a missing or unloadable model, and the model card a model travels with (``tile-classifier.json`` beside
``tile-classifier.onnx``).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DETECTOR_FILE = "tile-detector.onnx"
CLASSIFIER_FILE = "tile-classifier.onnx"
BASE_CLASSIFIER_FILE = "tile-classifier-base.onnx"
"""In a model folder whose classifier ``enrol`` adapted: the classifier it started from (its statistics, the
familiarity file, beside it describe this one), whose reading the enrolment head is weighed with."""
FLOAT_SUFFIX = "-fp32"
"""An INT8 model's float weights lie beside it with this suffix (:func:`float_weights`)."""
DEFAULT_PROVIDERS: tuple[str, ...] = ("CPUExecutionProvider",)
INTRA_OP_THREADS = 2
"""The referee station has 2 cores; more threads than cores only adds contention."""
SPIN_WAIT = False
"""ONNX Runtime's intra-op threads spin between operators by default, burning a core while they wait. The cores are
shared (video decoding, the station, other games of a batch), and a spinning thread competes with the very work it
waits for. Without spinning (and the detector's input made in one pass), reading the 1280x960 bench photo took 0.56x
the CPU and 0.51x the wall time on the 2-core machine under a load of 13-20 (``python -m vision.eval.benchmark
--against``, 2026-11-26), every reading of 195 frames identical; spinning on against off alone, with one other job
on the machine (load 2-3): wall 497 -> 246 ms, CPU 455 -> 242 ms (21 repeats in turn). On an idle machine spinning
may save a little latency between operators (not measured: the machine was never idle this session)."""
PROVIDERS: dict[str, tuple[str, ...]] = {
    "cpu": DEFAULT_PROVIDERS,
    "cuda": ("CUDAExecutionProvider", "CPUExecutionProvider"),
}
"""``--provider``: ONNX Runtime's execution providers, in order of preference."""


class ModelNotFoundError(FileNotFoundError):
    """A model file is missing; the message names it and says where the models ship."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "model file not found"


class ModelLoadError(ValueError):
    """A model file that ONNX Runtime cannot load (corrupt, or not the expected kind of model)."""


MODELS_PACKAGE = "rummikub_models"


def default_models_dir() -> Path:
    """``$RUMMIKUB_MODELS``, else the models installed with the package (the data package ``rummikub_models``,
    which is the repository's ``models/`` folder in an editable install), else a source checkout's ``models/``
    (running from the repository without installing it)."""
    env = os.environ.get("RUMMIKUB_MODELS")
    if env:
        return Path(env)
    spec = importlib.util.find_spec(MODELS_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if (Path(location) / DETECTOR_FILE).is_file():
                return Path(location)
    return Path(__file__).resolve().parents[2] / "models"


def float_weights(path: Path) -> Path:
    """Where the float (FP32) weights of the quantized model ``path`` lie: beside it, ``-fp32`` added to its stem
    (``tile-classifier.onnx`` -> ``tile-classifier-fp32.onnx``). The referee runs the INT8 file; training from an
    exported model and enrolment fine-tune the float one."""
    return path.with_name(f"{path.stem}{FLOAT_SUFFIX}{path.suffix}")


def check_provider(name: str) -> tuple[str, ...]:
    """The providers for ``--provider NAME``; a one-line :class:`ModelLoadError` when this ONNX Runtime lacks it
    (CUDA needs the onnxruntime-gpu package and an NVIDIA GPU)."""
    import onnxruntime as ort

    if name not in PROVIDERS:
        raise ModelLoadError(f"unknown execution provider {name!r} (known: {', '.join(PROVIDERS)})")
    wanted = PROVIDERS[name][0]
    if wanted not in ort.get_available_providers():
        raise ModelLoadError(
            f"--provider {name}: this ONNX Runtime offers only {', '.join(ort.get_available_providers())}"
            + (" (CUDA needs the onnxruntime-gpu package and an NVIDIA GPU)" if name == "cuda" else "")
        )
    return PROVIDERS[name]


def open_session(path: Path, providers: Sequence[str], threads: int | None = None, model: bytes | None = None) -> Any:
    """An ONNX Runtime session on the model file ``path`` (or on ``model``, that file's bytes edited, where given);
    a missing or unreadable model is a one-line :class:`ModelNotFoundError` or :class:`ModelLoadError`."""
    import onnxruntime as ort

    if not path.is_file():
        raise ModelNotFoundError(
            f"{path}: model file not found (the tile models ship in models/; pass --models DIR or set RUMMIKUB_MODELS)"
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = INTRA_OP_THREADS if threads is None else threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if SPIN_WAIT else "0")
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(
            str(path) if model is None else model, sess_options=options, providers=list(providers)
        )
    except Exception as error:  # ONNX Runtime raises its own exception types for corrupt or foreign files
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(f"{path}: cannot load the model ({first_line[:200]})") from None


def model_card(model: Path) -> dict[str, Any] | None:
    """The model card beside ``model`` (``tile-classifier.onnx`` -> ``tile-classifier.json``), None when there is
    none; a card that is not a JSON object is a one-line :class:`ModelLoadError` naming it."""
    card = model.with_suffix(".json")
    if not card.is_file():
        return None
    try:
        data = json.loads(card.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelLoadError(f"{card}: cannot read the model card ({error})") from None
    if not isinstance(data, dict):
        raise ModelLoadError(f"{card}: the model card is not a JSON object")
    return data
