"""Enrolment that adapts the classifier network itself to a venue's set, on the CPU (issue 14, part 5).

:func:`vision.runtime.enrolment.enrol` hands this module the augmented crops of the venue's grid photos (fresh
simulated frames of every tile each epoch: :func:`vision.runtime.enrolcrops.network_frames`) and gets back the
shipped classifier fine-tuned on them. Every layer is trained (a linear head on frozen features tops out at
0.93-0.95 on held-out augmented crops: models/README.md, "Enrolment"), from the shipped weights
(:func:`vision.train.onnxinit.classifier_from_onnx`) with:

- cross-entropy on the tiles' crops against the labels the grid gives;
- on crops of the photo's table beside the tiles (no tile in them, or only part of one), the shipped network's own
  label distribution as the target (KL divergence): what it says of texture, edges and halves of tiles, which the
  not-a-tile rule weighs, stays as it was;
- on every crop, the shipped network's up direction as the target (the grid does not say how each crop was turned).

The BatchNorms keep the shipped statistics (the module stays in eval mode: two photos of one set are too few crops to
re-estimate them, and dropout stays off). AdamW, a cosine schedule, :data:`EPOCHS` epochs or :data:`BUDGET_S`
seconds, whichever ends first. About 5 s an epoch on two idle cores (:data:`ROUNDS_PER_EPOCH` frames of each photo).

:func:`adapt_enrolment` is what ``rummikub-referee enrol`` hands :func:`vision.runtime.enrolment.enrol` (the runtime
never imports torch or this package): it trains, chooses the temperature and writes the model folder's classifier.
``torch`` is imported inside the functions: where the train extra is not installed (:func:`torch_available`),
``enrol`` fits the numpy head (:mod:`vision.runtime.enrolhead`) instead and says so.
"""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.runtime.crops import to_input
from vision.runtime.enrolcrops import (
    BACKGROUND_PER_FRAME,
    HOLDOUT_SMALL_DEGRADED,
    SMALL_BLUR,
    SMALL_FRAMES,
    SMALL_JPEG,
    SMALL_JPEG_QUALITY,
    SMALL_NOISE,
    SMALL_SIDE_PX,
    EnrolledPhoto,
    EnrolmentFrames,
    network_frames,
)
from vision.runtime.enrolhead import EnrolmentHead
from vision.runtime.enrolment import NetworkAdaptation, with_temperature
from vision.runtime.familiarity import file_sha256
from vision.runtime.models import BASE_CLASSIFIER_FILE, CLASSIFIER_FILE, float_weights, model_card

EPOCHS = 8
ROUNDS_PER_EPOCH = 20
"""Simulated frames of each photo per epoch (about 2,100 tile crops for two photos)."""
BATCH = 64
LEARNING_RATE = 3e-4
WEIGHT_DECAY = 1e-4
BUDGET_S = 180.0
"""Training stops after the epoch that ends past this (enrolment's whole budget is 5 minutes)."""


@dataclass(frozen=True, slots=True)
class AdaptedNetwork:
    """The fine-tuned network (a ``TileNet`` in eval mode), how long it trained, and its features' label layer."""

    net: Any
    epochs: int
    steps: int
    seconds: float
    stopped_by_budget: bool

    def features(self, crops: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
        """(pooled features, label logits) of BGR uint8 crops."""
        import torch

        features, logits = [], []
        with torch.no_grad():
            for start in range(0, len(crops), batch):
                out, _, pooled = self.net(torch.from_numpy(to_input(crops[start : start + batch])), features=True)
                features.append(pooled.numpy())
                logits.append(out.numpy())
        return np.concatenate(features).astype(np.float32), np.concatenate(logits).astype(np.float32)

    def label_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """The label head's (weight, bias): logits = features @ weight.T + bias."""
        layer = self.net.label
        return layer.weight.detach().numpy().astype(np.float32), layer.bias.detach().numpy().astype(np.float32)


def torch_available() -> bool:
    """Whether the train extra's torch and onnx are importable (network adaptation needs both)."""
    return all(importlib.util.find_spec(name) is not None for name in ("torch", "onnx"))


def default_adaptation() -> str:
    """``enrol``'s adaptation when none is asked for: the network where it can be trained, else the numpy head."""
    return "network" if torch_available() else "head"


def adapt_network(
    classifier_onnx: Path,
    frames: Callable[[int], EnrolmentFrames],
    *,
    epochs: int | None = None,
    learning_rate: float | None = None,
    budget_s: float | None = None,
    seed: int = 0,
    log: Callable[[str], None] | None = None,
) -> AdaptedNetwork:
    """Fine-tune the classifier of ``classifier_onnx`` on ``frames(epoch)`` (see the module's docstring); ``epochs``,
    ``learning_rate`` and ``budget_s`` default to :data:`EPOCHS`, :data:`LEARNING_RATE` and :data:`BUDGET_S`."""
    import torch
    from torch.nn import functional

    from vision.train.onnxinit import classifier_from_onnx

    epochs = EPOCHS if epochs is None else epochs
    learning_rate = LEARNING_RATE if learning_rate is None else learning_rate
    budget_s = BUDGET_S if budget_s is None else budget_s
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    teacher = classifier_from_onnx(classifier_onnx).net.eval()
    student = classifier_from_onnx(classifier_onnx).net.eval()  # BatchNorm statistics and dropout as shipped
    optimiser = torch.optim.AdamW(student.parameters(), lr=learning_rate, weight_decay=WEIGHT_DECAY)
    start = time.perf_counter()
    steps, done, total_steps = 0, 0, None
    for epoch in range(epochs):
        batch = frames(epoch)
        if total_steps is None:
            total_steps = epochs * math.ceil(len(batch.tiles) / BATCH)
        order = rng.permutation(len(batch.tiles))
        background_order = rng.permutation(len(batch.background))
        per_batch = max(1, len(batch.background) * BATCH // max(1, len(batch.tiles)))
        losses = []
        for k, first in enumerate(range(0, len(order), BATCH)):
            picks = order[first : first + BATCH]
            extra = background_order[k * per_batch : (k + 1) * per_batch]
            x = torch.from_numpy(to_input(np.concatenate([batch.tiles[picks], batch.background[extra]])))
            y = torch.from_numpy(batch.labels[picks].astype(np.int64))
            with torch.no_grad():
                taught_logits, taught_up = teacher(x)
            logits, up = student(x)
            n = len(picks)
            loss = functional.cross_entropy(logits[:n], y)
            if len(extra):
                loss = loss + functional.kl_div(
                    torch.log_softmax(logits[n:], 1), torch.log_softmax(taught_logits[n:], 1),
                    log_target=True, reduction="batchmean",
                )  # fmt: skip
            loss = loss + ((up - taught_up) ** 2).sum(1).mean() / (taught_up.norm(dim=1).mean() ** 2 + 1e-6)
            for group in optimiser.param_groups:
                group["lr"] = learning_rate * 0.5 * (1 + math.cos(math.pi * min(1.0, steps / total_steps)))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            steps += 1
            losses.append(float(loss.detach()))
        done = epoch + 1
        elapsed = time.perf_counter() - start
        if log is not None:
            log(f"epoch {done}/{epochs}: loss {np.mean(losses):.3f}, {elapsed:.0f} s")
        if elapsed > budget_s and done < epochs:
            break
    return AdaptedNetwork(student.eval(), done, steps, time.perf_counter() - start, done < epochs)


def export_adapted(adapted: AdaptedNetwork, temperature: float, path: Path, check_crops: np.ndarray) -> float:
    """Write the adapted network as the classifier ONNX (outputs as shipped, ``temperature`` in the graph); returns
    the largest difference to torch on ``check_crops``."""
    from vision.train.classifier import export_onnx

    return export_onnx(adapted.net, temperature, path, check_crops)


def adapt_enrolment(
    source: Path,
    photos: Sequence[EnrolledPhoto],
    hold_crops: np.ndarray,
    hold_labels: np.ndarray,
    hold_own: np.ndarray,
    plain_crops: np.ndarray,
    out: Path,
    seed: int,
) -> NetworkAdaptation:
    """:data:`vision.runtime.enrolment.NetworkAdapter`: fine-tune the classifier ``source`` on ``photos``
    (:func:`adapt_network`), choose its temperature on the held-out crops weighed with ``hold_own`` (the source's
    reading of them, :func:`vision.runtime.enrolment.with_temperature`), and write it with its card into ``out``
    beside a copy of the source (:data:`vision.runtime.models.BASE_CLASSIFIER_FILE`), whose reading the head is
    weighed with at run time."""
    rng = np.random.default_rng(seed + 1)
    adapted = adapt_network(source, lambda _epoch: network_frames(photos, rng, ROUNDS_PER_EPOCH), seed=seed)
    hold_features, _ = adapted.features(hold_crops)
    plain_features, _ = adapted.features(plain_crops)
    weight, bias = adapted.label_layer()
    head, temperature = with_temperature(EnrolmentHead(weight, bias), hold_features, hold_labels, own=hold_own)
    base_card = model_card(source) or {}
    base = out / BASE_CLASSIFIER_FILE  # first: ``source`` may be the file the adapted network replaces
    if source.resolve() != base.resolve():
        shutil.copyfile(source, base)
        if float_weights(source).is_file():  # an INT8 source: its float weights, to enrol from this folder again
            shutil.copyfile(float_weights(source), float_weights(base))
    if base_card:
        base.with_suffix(".json").write_text(json.dumps(base_card, indent=2) + "\n", encoding="utf-8")
    details = {
        "base_classifier_sha256": file_sha256(base),
        "epochs": adapted.epochs,
        "steps": adapted.steps,
        "stopped_by_budget": adapted.stopped_by_budget,
        "seconds": round(adapted.seconds, 1),
        "frames_per_photo_per_epoch": ROUNDS_PER_EPOCH,
        "batch": BATCH,
        "learning_rate": LEARNING_RATE,
        "weight_decay": WEIGHT_DECAY,
        "background_crops_per_frame": BACKGROUND_PER_FRAME,
        "small_frames": SMALL_FRAMES,
        "small_side_px": list(SMALL_SIDE_PX),
        "small_degraded": {
            "blur_share": SMALL_BLUR,
            "noise_sigma_max": SMALL_NOISE,
            "jpeg_share": SMALL_JPEG,
            "jpeg_quality": list(SMALL_JPEG_QUALITY),
            "holdout_frames_degraded": HOLDOUT_SMALL_DEGRADED,
        },
        "export_max_diff": export_adapted(adapted, temperature, out / CLASSIFIER_FILE, hold_crops[:64]),
    }
    card = {**base_card, "temperature": temperature, "enrolment": {**details, "by": "rummikub-referee enrol"}}
    (out / CLASSIFIER_FILE).with_suffix(".json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return NetworkAdaptation(head, temperature, details, hold_features, plain_features)
