"""Tile crop classifier: a compact CNN, its training and calibration, ONNX export, evaluation.

The classifier reads one square crop (cut by :func:`vision.runtime.crops.crop_boxes`, the code the runtime uses) and
gives the tile's label (53 classes in ``referee.tiles.ALL_LABELS`` order) and its up direction (clockwise from
image up), so tiles lying at any angle, upside down included, are read; 6 and 9 differ by digit shape and the
wordmark at the tile's bottom, which is why the angle is learnt together with the label.

The training data (tiles stored as patches of context, the crops warped from them, augmentation, datasets) are
:mod:`vision.train.classifier_data`.

``torch`` is imported inside the functions that need it; this module is never imported at run time.

Size: 776 lines: the network (about 90 lines), its loss, training loop, temperature and metrics (about 235), ONNX
export, inference and timing (about 95), evaluation (about 55) and the recipe driver :func:`train_classifier` with
its command line (about 245). Over 500 lines because it is one recipe's training code, the steps
:func:`train_classifier` runs in order, never imported at run time; the training data went to
:mod:`vision.train.classifier_data`. Were it to grow, the recipe driver (``load_recipe`` to ``main``) is the part to
move out.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import os
import platform
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.crops import CROP_SIZE, to_input
from vision.train.classifier_data import (
    AugmentParams,
    CropDataset,
    JitterParams,
    TileSet,
    fixed_crops,
    real_crops,
    real_tileset,
    synthetic_crops,
    synthetic_tileset,
    turned_real_crops,
)

OUTPUT_NAMES = ("probs", "angle_deg", "features")
"""The exported graph's outputs: (N,53) probabilities after temperature, (N,) up angle in degrees clockwise,
(N,D) the pooled features the label head reads (D = the last stage's channels, 192 at width 1.0)."""


# ------------------------------------------------------------------------------------------------------- model

_NET_CLASS: Any = None


def _tile_net_class() -> Any:
    """The network class, defined on first use so that importing this module does not import torch."""
    global _NET_CLASS
    if _NET_CLASS is not None:
        return _NET_CLASS
    import torch
    from torch import nn

    class Block(nn.Module):
        """ResNet basic block (two 3x3 convolutions, BatchNorm, a projected shortcut when the shape changes)."""

        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
                nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                nn.BatchNorm2d(cout),
            )
            self.skip = (
                nn.Identity()
                if cin == cout and stride == 1
                else nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
            )
            self.act = nn.ReLU(inplace=True)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.act(self.body(x) + self.skip(x))

    class TileNet(nn.Module):
        """64x64 RGB crop -> (53 label logits, up direction as an unnormalised (cos, sin) vector).

        The stem halves the resolution at once (digit strokes stay 1-2 pixels wide at 32x32), three residual
        stages halve it again each, to 4x4 (about 24 M multiply-adds a crop: fast enough to train on 2 CPU
        cores). The label head reads pooled features; the angle head reads the 4x4 map, where the layout (digit
        above the wordmark) tells the up direction."""

        def __init__(self, width: float = 1.0, classes: int = len(ALL_LABELS)) -> None:
            super().__init__()
            c = [max(8, round(base * width / 8) * 8) for base in (24, 48, 96, 192)]
            self.stem = nn.Sequential(nn.Conv2d(3, c[0], 3, 2, 1, bias=False), nn.BatchNorm2d(c[0]), nn.ReLU(True))
            self.stages = nn.Sequential(Block(c[0], c[1], 2), Block(c[1], c[2], 2))
            self.last = Block(c[2], c[3], 2)
            self.drop = nn.Dropout(0.1)
            self.label = nn.Linear(c[3], classes)
            self.angle = nn.Sequential(nn.Conv2d(c[3], 16, 1), nn.ReLU(True), nn.Flatten(), nn.Linear(16 * 16, 2))

        def forward(self, x: torch.Tensor, features: bool = False) -> tuple[torch.Tensor, ...]:
            """(logits, angle vector), and the pooled features the label head reads when ``features``."""
            f = self.last(self.stages(self.stem((x - 0.5) * 4.0)))
            pooled = f.mean((2, 3))
            logits = self.label(self.drop(pooled))
            return (logits, self.angle(f), pooled) if features else (logits, self.angle(f))

    _NET_CLASS = TileNet
    return TileNet


def build_model(width: float = 1.0) -> Any:
    """A fresh TileNet (``width`` scales every stage; 1.0 is about 0.65 M parameters)."""
    return _tile_net_class()(width)


def _export_module(net: Any, temperature: float) -> Any:
    """The exported graph: probabilities after temperature, the angle in degrees clockwise, [0, 360), and the
    pooled features the label head reads (what familiarity scores and enrolment heads use)."""
    import torch
    from torch import nn

    class Exported(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net
            self.register_buffer("inv_t", torch.tensor(1.0 / temperature))

        def forward(self, crops: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            logits, vec, features = self.net(crops, features=True)
            probs = torch.softmax(logits * self.inv_t, dim=1)
            degrees = torch.atan2(vec[:, 1], vec[:, 0]) * (180.0 / math.pi)
            return probs, degrees - 360.0 * torch.floor(degrees / 360.0), features

    return Exported().eval()


# ---------------------------------------------------------------------------------------------------- training


def _to_tensors(batch: Sequence[tuple[np.ndarray, int, float]]) -> tuple[Any, Any, Any]:
    import torch

    crops = np.stack([b[0] for b in batch])
    return (
        torch.from_numpy(to_input(crops)),
        torch.tensor([b[1] for b in batch], dtype=torch.long),
        torch.tensor([b[2] for b in batch], dtype=torch.float32),
    )


def _init_worker(worker_id: int) -> None:
    import torch

    info = torch.utils.data.get_worker_info()
    if info is None:  # called in the main process: nothing to reseed
        return
    dataset: Any = info.dataset  # our CropDataset
    dataset.reseed(dataset.seed * 1000 + worker_id + 1 + int(torch.initial_seed() % 100000))


def angle_loss(vec: Any, angle_deg: Any) -> Any:
    """Mean of 1 - cos(predicted - true) over tiles with a known angle (NaN targets are masked out)."""
    import torch

    known = ~torch.isnan(angle_deg)
    if not bool(known.any()):
        return vec.sum() * 0.0
    rad = torch.deg2rad(angle_deg[known])
    unit = torch.nn.functional.normalize(vec[known], dim=1, eps=1e-6)
    return (1 - (unit[:, 0] * torch.cos(rad) + unit[:, 1] * torch.sin(rad))).mean()


def predict_logits(net: Any, crops: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """(logits, angle degrees) of BGR uint8 crops with a torch net in eval mode."""
    import torch

    net.eval()
    device = next(net.parameters()).device  # where the net is (training on a GPU evaluates there too)
    logits, angles = [], []
    with torch.no_grad():
        for i in range(0, len(crops), batch):
            out, vec = net(torch.from_numpy(to_input(crops[i : i + batch])).to(device))
            out, vec = out.cpu(), vec.cpu()
            logits.append(out.numpy())
            angles.append(np.degrees(np.arctan2(vec[:, 1].numpy(), vec[:, 0].numpy())) % 360.0)
    if not logits:
        return np.zeros((0, len(ALL_LABELS)), np.float32), np.zeros(0, np.float32)
    return np.concatenate(logits), np.concatenate(angles)


def angle_errors(pred_deg: np.ndarray, true_deg: np.ndarray) -> np.ndarray:
    """Absolute circular differences in degrees, [0, 180]."""
    d = np.abs((np.asarray(pred_deg) - np.asarray(true_deg) + 180.0) % 360.0 - 180.0)
    return d[~np.isnan(d)]


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """Temperature minimising the negative log-likelihood of the calibration split (LBFGS on log T)."""
    import torch

    z = torch.from_numpy(np.asarray(logits, np.float32))
    y = torch.from_numpy(np.asarray(labels, np.int64))
    log_t = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=200)

    def closure() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(z / log_t.exp(), y)
        loss.backward()
        return loss

    opt.step(closure)
    return float(np.clip(log_t.exp().item(), 0.05, 20.0))


def softmax(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = np.asarray(logits, np.float64) / temperature
    z = np.exp(z - z.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


def expected_calibration_error(probs: np.ndarray, labels: np.ndarray, bins: int = 15) -> float:
    """ECE of the top-1 confidence in equal-width bins (weighted mean |accuracy - confidence|)."""
    if len(labels) == 0:
        return float("nan")
    conf = probs.max(1)
    correct = probs.argmax(1) == labels
    edges = np.linspace(0, 1, bins + 1)
    ece = 0.0
    for lo, hi in itertools.pairwise(edges):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            ece += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    return float(ece)


def top_confusions(pred: np.ndarray, labels: np.ndarray, k: int = 10) -> list[dict[str, Any]]:
    """The k most frequent (true, predicted) mistakes."""
    counts = Counter((int(t), int(p)) for t, p in zip(labels, pred, strict=True) if t != p)
    return [{"true": ALL_LABELS[t], "pred": ALL_LABELS[p], "count": n} for (t, p), n in counts.most_common(k)]


def _progress_lr(base_lr: float, progress: float, warmup: float = 0.03) -> float:
    """Linear warm-up then cosine decay to 2 % over training progress in [0, 1]."""
    if progress < warmup:
        return base_lr * (0.1 + 0.9 * progress / warmup)
    p = min(1.0, (progress - warmup) / (1 - warmup))
    return base_lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * p)))


@dataclass
class DevSet:
    """Fixed crops that pick the best epoch and fit the temperature."""

    name: str
    crops: np.ndarray
    labels: np.ndarray
    angles: np.ndarray


def _evaluate_dev(net: Any, dev: Sequence[DevSet]) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for d in dev:
        logits, pred_angle = predict_logits(net, d.crops)
        metrics[f"{d.name}_acc"] = float((logits.argmax(1) == d.labels).mean()) if len(d.labels) else float("nan")
        err = angle_errors(pred_angle, d.angles)
        if len(err):
            metrics[f"{d.name}_angle_median"] = float(np.median(err))
    accs = [metrics[f"{d.name}_acc"] for d in dev if len(d.labels)]
    metrics["score"] = float(np.mean(accs)) if accs else 0.0
    return metrics


def train_model(
    train_set: CropDataset,
    dev: Sequence[DevSet],
    cfg: dict[str, Any],
    log: Any = print,
) -> tuple[Any, list[dict[str, Any]]]:
    """Train a TileNet on ``train_set``; the state of the best development score is kept and returned.

    The learning rate follows training *progress*, the larger of the epoch share and the time share of
    ``max_minutes``, so a run on a busy CPU still anneals before it is stopped. ``device`` (default ``cpu``;
    ``cuda`` on a GPU machine) is where the net trains; it is returned on the CPU, for the temperature and export."""
    import torch

    device = training_device(str(cfg.get("device", "cpu")))
    torch.manual_seed(int(cfg.get("seed", 0)))
    torch.set_num_threads(int(cfg.get("threads", 2)))
    net = build_model(float(cfg.get("width", 1.0)))
    init = cfg.get("init")
    if init and str(init).lower().endswith(".onnx"):  # a shipped model: its folded weights, BatchNorms recalibrated
        net = init_from_onnx(init, float(cfg.get("width", 1.0)), train_set, int(cfg.get("seed", 0)), log)
    elif init:  # continue from an earlier run's weights (``<name>.pt`` beside its ONNX model)
        net.load_state_dict(torch.load(init, map_location="cpu"))
    net.to(device)
    epochs = int(cfg.get("epochs", 1))
    batch = int(cfg.get("batch", 128))
    base_lr = float(cfg.get("lr", 3e-3))
    max_seconds = float(cfg.get("max_minutes", 1e9)) * 60
    workers = int(cfg.get("workers", 0))
    opt = torch.optim.AdamW(net.parameters(), lr=base_lr, weight_decay=float(cfg.get("weight_decay", 5e-4)))
    ce = torch.nn.CrossEntropyLoss(label_smoothing=float(cfg.get("label_smoothing", 0.05)))
    angle_weight = float(cfg.get("angle_weight", 1.0))
    log_every = int(cfg.get("log_every_steps", 0))  # 0: epoch lines only
    max_steps = int(cfg.get("max_steps", 0))  # 0: no limit (smoke runs stop early)
    loader: Any = torch.utils.data.DataLoader(
        train_set,  # type: ignore[arg-type]  # a map-style dataset; CropDataset does not subclass torch's
        batch_size=batch,
        shuffle=True,
        drop_last=len(train_set) > batch,
        num_workers=workers,
        collate_fn=_to_tensors,
        worker_init_fn=_init_worker if workers else None,
        persistent_workers=workers > 0,
        prefetch_factor=4 if workers else None,
    )
    steps_total = max(1, epochs * len(loader))
    start, step = time.perf_counter(), 0
    best_score, best_state, history = -1.0, copy.deepcopy(net.state_dict()), []
    for epoch in range(epochs):
        net.train()
        seen, loss_sum, t0 = 0, 0.0, time.perf_counter()
        for x, y, a in loader:
            progress = max(step / steps_total, (time.perf_counter() - start) / max(max_seconds, 1e-9))
            for group in opt.param_groups:
                group["lr"] = _progress_lr(base_lr, progress)
            x, y, a = x.to(device, non_blocking=True), y.to(device, non_blocking=True), a.to(device, non_blocking=True)
            logits, vec = net(x)
            loss = ce(logits, y) + angle_weight * angle_loss(vec, a)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            seen += len(y)
            loss_sum += float(loss.detach()) * len(y)
            if log_every and (step <= 5 or step % log_every == 0):
                log(f"step {step} loss {float(loss.detach()):.4f}")
            if time.perf_counter() - start > max_seconds or (max_steps and step >= max_steps):
                break
        metrics = _evaluate_dev(net, dev)
        record = {
            "epoch": epoch + 1,
            "loss": loss_sum / max(seen, 1),
            "crops": seen,
            "crops_per_s": seen / max(time.perf_counter() - t0, 1e-9),
            "elapsed_min": (time.perf_counter() - start) / 60,
            **metrics,
        }
        history.append(record)
        log(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in record.items()}))
        if metrics["score"] > best_score:
            best_score, best_state = metrics["score"], copy.deepcopy(net.state_dict())
        if time.perf_counter() - start > max_seconds:
            log(f"time budget reached after epoch {epoch + 1}")
            break
        if max_steps and step >= max_steps:
            log(f"step limit {max_steps} reached in epoch {epoch + 1}")
            break
    net.load_state_dict(best_state)
    net.to("cpu")
    net.eval()
    return net, history


def training_device(name: str) -> Any:
    """The torch device a recipe's ``train.device`` names; a clear error where it is not here (no CUDA GPU)."""
    import torch

    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f"train.device {name!r}: not a torch device (cpu, cuda, cuda:0)") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"train.device {name!r}: no CUDA GPU on this machine (train.device: cpu trains here)")
    return device


def init_from_onnx(path: Path | str, width: float, train_set: CropDataset, seed: int, log: Any = print) -> Any:
    """A TileNet with an exported classifier's weights (``model.init: models/tile-classifier.onnx``), its
    BatchNorms recalibrated on augmented training crops so that train mode starts near the exported function
    (:mod:`vision.train.onnxinit`). The exported temperature is only reported: training fits its own."""
    from vision.train.onnxinit import CALIBRATION_CROPS, classifier_batches, classifier_from_onnx, recalibrate_batchnorm

    loaded = classifier_from_onnx(path, width)
    seen = recalibrate_batchnorm(loaded.net, classifier_batches(train_set, CALIBRATION_CROPS, 128, seed))
    log(
        f"init from {path}: width {loaded.width:g}, exported temperature {loaded.temperature:.3f}; "
        f"BatchNorms recalibrated on {seen} training crops"
    )
    return loaded.net


# ------------------------------------------------------------------------------------------------------ export


def export_onnx(net: Any, temperature: float, path: Path | str, check_crops: np.ndarray | None = None) -> float:
    """Write the ONNX model (input ``crops``, outputs ``probs``, ``angle_deg`` and ``features``, dynamic batch)
    and return the largest difference to torch on ``check_crops`` (probabilities, angles as circular degrees /
    100, features relative to their largest magnitude)."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = _export_module(net, temperature)
    dummy = torch.rand(2, 3, CROP_SIZE, CROP_SIZE)
    kwargs: dict[str, Any] = {
        "input_names": ["crops"],
        "output_names": list(OUTPUT_NAMES),
        "dynamic_axes": {"crops": {0: "n"}, **{name: {0: "n"} for name in OUTPUT_NAMES}},
        "opset_version": 17,
    }
    try:
        torch.onnx.export(module, (dummy,), str(path), dynamo=False, **kwargs)
    except TypeError:  # older torch without the dynamo switch
        torch.onnx.export(module, (dummy,), str(path), **kwargs)
    x = to_input(check_crops) if check_crops is not None and len(check_crops) else dummy.numpy()
    with torch.no_grad():
        probs_t, angle_t, features_t = (t.numpy() for t in module(torch.from_numpy(x)))
    probs_o, angle_o, features_o = onnx_session(path).run(list(OUTPUT_NAMES), {"crops": x})
    angle_diff = angle_errors(angle_o, angle_t)
    features_diff = np.abs(features_o - features_t).max() / max(1.0, float(np.abs(features_t).max()))
    return float(
        max(np.abs(probs_o - probs_t).max(), (angle_diff.max() if len(angle_diff) else 0.0) / 100, features_diff)
    )


def reexport_onnx(source: Path | str, target: Path | str, check_crops: np.ndarray) -> dict[str, Any]:
    """Export an exported classifier again (rebuilt by :mod:`vision.train.onnxinit`, same temperature), now with
    every output in :data:`OUTPUT_NAMES`; compare the two files' ``probs`` and ``angle_deg`` on ``check_crops``
    (BGR uint8). ``target`` may be ``source``: the source is read before it is written."""
    from vision.train.onnxinit import classifier_from_onnx

    loaded = classifier_from_onnx(source)
    before = onnx_predict(onnx_session(source), check_crops)
    torch_diff = export_onnx(loaded.net, loaded.temperature, target, check_crops)
    after = onnx_predict(onnx_session(target), check_crops)
    return {
        "width": loaded.width,
        "temperature": loaded.temperature,
        "check_crops": len(check_crops),
        "max_abs_dprob": float(np.abs(after[0] - before[0]).max()),
        "max_angle_diff_deg": float(angle_errors(after[1], before[1]).max()),
        "top1_identical": bool(np.array_equal(after[0].argmax(1), before[0].argmax(1))),
        "onnx_max_abs_diff_vs_torch": torch_diff,
    }


def onnx_session(path: Path | str, threads: int = 2) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def onnx_predict(session: Any, crops: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """(probs, angle_deg) of BGR uint8 crops."""
    probs, angles = [], []
    for i in range(0, len(crops), batch):
        p, a = session.run(["probs", "angle_deg"], {"crops": to_input(crops[i : i + batch])})
        probs.append(p)
        angles.append(a)
    if not probs:
        return np.zeros((0, len(ALL_LABELS)), np.float32), np.zeros(0, np.float32)
    return np.concatenate(probs), np.concatenate(angles)


def time_onnx(path: Path | str, batch_sizes: Sequence[int] = (64, 1), repeats: int = 20) -> dict[str, float]:
    """Median milliseconds per crop with ONNX Runtime (2 threads) at each batch size."""
    session = onnx_session(path)
    rng = np.random.default_rng(0)
    out = {}
    for n in batch_sizes:
        x = rng.random((n, 3, CROP_SIZE, CROP_SIZE), dtype=np.float32)
        session.run(None, {"crops": x})
        times = []
        for _ in range(max(3, repeats if n > 1 else repeats * 5)):
            t0 = time.perf_counter()
            session.run(None, {"crops": x})
            times.append(time.perf_counter() - t0)
        out[f"ms_per_crop_batch{n}"] = float(np.median(times) * 1000 / n)
    return out


# -------------------------------------------------------------------------------------------------- evaluation


def evaluate_classifier(
    onnx_path: Path | str,
    photos: Sequence[Any],
    *,
    synthetic_heldout: Path | str | None = None,
    synthetic_max_images: int | None = None,
    jitter: JitterParams | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Crop accuracy on real photos from their true boxes (as is, jittered, and with the photo turned by a
    random angle), ECE, top confusions; accuracy and angle error distribution on synthetic held-out images."""
    session = onnx_session(onnx_path)
    jitter = jitter or JitterParams()
    rng = np.random.default_rng(seed)
    result: dict[str, Any] = {"real_photos": len(photos)}
    crops, labels = real_crops(photos)
    probs, _ = onnx_predict(session, crops)
    pred = probs.argmax(1) if len(probs) else np.zeros(0, np.int64)
    result["real_crops"] = len(labels)
    result["real_acc_true_boxes"] = float((pred == labels).mean()) if len(labels) else float("nan")
    result["real_ece"] = expected_calibration_error(probs, labels)
    result["real_top_confusions"] = top_confusions(pred, labels)
    result["real_mean_confidence"] = float(probs.max(1).mean()) if len(probs) else float("nan")
    jcrops, jlabels = real_crops(photos, rng=rng, jitter=jitter)
    jprobs, _ = onnx_predict(session, jcrops)
    result["real_acc_jittered_boxes"] = float((jprobs.argmax(1) == jlabels).mean()) if len(jlabels) else float("nan")
    result["real_ece_jittered"] = expected_calibration_error(jprobs, jlabels)
    rcrops, rlabels = turned_real_crops(photos, rng, jitter)
    rprobs, _ = onnx_predict(session, rcrops)
    result["real_acc_turned_jittered"] = float((rprobs.argmax(1) == rlabels).mean()) if len(rlabels) else float("nan")
    if synthetic_heldout is not None:
        scrops, slabels, sangles = synthetic_crops(
            synthetic_heldout, max_images=synthetic_max_images, rng=rng, jitter=jitter
        )
        sprobs, sangle_pred = onnx_predict(session, scrops)
        err = angle_errors(sangle_pred, sangles)
        result["synthetic_heldout_crops"] = len(slabels)
        result["synthetic_heldout_acc_jittered"] = float((sprobs.argmax(1) == slabels).mean())
        result["synthetic_heldout_ece"] = expected_calibration_error(sprobs, slabels)
        result["synthetic_heldout_top_confusions"] = top_confusions(sprobs.argmax(1), slabels, 5)
        result["synthetic_angle_error_deg"] = {
            "median": float(np.median(err)),
            "p90": float(np.percentile(err, 90)),
            "p99": float(np.percentile(err, 99)),
            "share_over_45": float((err > 45).mean()),
            "share_over_90": float((err > 90).mean()),
        }
    return result


# ------------------------------------------------------------------------------------------------------ recipe


def load_recipe(path: Path | str) -> dict[str, Any]:
    from vision.train.recipes import load_training_recipe

    return load_training_recipe(path, "classifier")


def _split_real_dev(photos: Sequence[Any], share: float, seed: int) -> tuple[list[Any], list[Any]]:
    """Train photos split by *source* photo (augmented copies stay together) into training and development."""
    sources = sorted({p.source for p in photos})
    rng = np.random.default_rng(seed)
    dev_sources = set(rng.choice(sources, round(len(sources) * share), replace=False).tolist()) if share else set()
    return [p for p in photos if p.source not in dev_sources], [p for p in photos if p.source in dev_sources]


def _heldout_halves(tiles: TileSet) -> tuple[TileSet, TileSet]:
    """Synthetic held-out tiles split by image: the first half for development and calibration."""
    images = sorted(set(tiles.sources))
    first = set(images[: len(images) // 2])
    a = [i for i, s in enumerate(tiles.sources) if s in first]
    b = [i for i, s in enumerate(tiles.sources) if s not in first]
    return tiles.subset(a), tiles.subset(b)


def train_classifier(recipe_path: Path | str, out_dir: Path | str) -> dict[str, Any]:
    """Build the data of a recipe, train, calibrate, export ``<name>.onnx`` and ``<name>.json`` to ``out_dir``;
    return the metrics (also written into the JSON card)."""
    import torch

    from vision.runtime import realdata

    started = time.perf_counter()
    recipe = load_recipe(recipe_path)
    data, train_cfg = recipe.get("data", {}), dict(recipe.get("train", {}))
    seed = int(recipe.get("seed", 0))
    train_cfg.setdefault("seed", seed)
    train_cfg.setdefault("width", recipe.get("model", {}).get("width", 1.0))
    train_cfg.setdefault("init", recipe.get("model", {}).get("init"))
    params = AugmentParams.from_dict(recipe.get("augment"))
    log = _logger(recipe.get("log"))

    synth = TileSet()
    for root in data.get("synthetic", []):
        synth.extend(
            synthetic_tileset(
                [root],
                max_images=data.get("synthetic_max_images"),
                max_tiles_per_image=data.get("synthetic_max_tiles_per_image"),
                seed=int(data.get("synthetic_seed", seed)),  # which tiles of each scene; the dev splits keep `seed`
            )
        )
    real_train, real_dev = TileSet(), TileSet()
    real_counts = {"train_photos": 0, "dev_photos": 0}
    if data.get("real_train", False):
        photos = realdata.load_photos(data.get("real_root") and Path(data["real_root"]), split="train")
        if data.get("real_max_photos"):
            photos = photos[: int(data["real_max_photos"])]
        train_photos, dev_photos = _split_real_dev(photos, float(data.get("real_dev_share", 0.1)), seed)
        real_train, real_dev = real_tileset(train_photos), real_tileset(dev_photos)
        real_counts = {"train_photos": len(train_photos), "dev_photos": len(dev_photos)}
    held_dev, held_test = TileSet(), TileSet()
    if data.get("synthetic_heldout"):
        held = synthetic_tileset([data["synthetic_heldout"]], max_images=data.get("heldout_max_images"), seed=seed)
        held_dev, held_test = _heldout_halves(held)
    log(
        f"tiles: synthetic {len(synth)}, real train {len(real_train)}, real dev {len(real_dev)}, "
        f"held-out dev {len(held_dev)}; patches {(synth.nbytes() + real_train.nbytes()) / 1e6:.0f} MB; "
        f"built in {time.perf_counter() - started:.0f} s"
    )

    all_tiles = TileSet()
    all_tiles.extend(synth)
    all_tiles.extend(real_train)
    per_tile = int(data.get("crops_per_tile", 1))
    oversample = int(data.get("real_oversample", 1))
    indices = list(range(len(synth))) * per_tile + list(range(len(synth), len(all_tiles))) * per_tile * oversample
    train_set = CropDataset(all_tiles, indices, params, seed)
    jitter = params.jitter
    dev = [
        DevSet(name, *fixed_crops(tiles, seed + k, jitter=jitter))
        for k, (name, tiles) in enumerate((("real_dev", real_dev), ("synth_dev", held_dev)))
        if len(tiles)
    ]
    if not dev:  # no development data: score on a slice of the training tiles (tiny recipes, tests)
        dev = [DevSet("train_slice", *fixed_crops(all_tiles.subset(range(min(256, len(all_tiles)))), seed))]
    # Real tiles' angles are unknown: their development crops count for accuracy only.
    if train_cfg.get("max_total_minutes"):  # a whole run's budget (vision.train.remote): the data build counts too
        built_min = (time.perf_counter() - started) / 60
        train_cfg["max_minutes"] = max(float(train_cfg["max_total_minutes"]) - built_min, 0.0)
        log(f"data built in {built_min:.1f} min; training gets {train_cfg['max_minutes']:.1f} min")
    train_started = time.perf_counter()
    net, history = train_model(train_set, dev, train_cfg, log)
    train_seconds = time.perf_counter() - train_started

    calib_logits, calib_labels = [], []
    for d in dev:
        logits, _ = predict_logits(net, d.crops)
        calib_logits.append(logits)
        calib_labels.append(d.labels)
    temperature = fit_temperature(np.concatenate(calib_logits), np.concatenate(calib_labels))
    log(f"temperature {temperature:.3f}")

    name = recipe.get("name", "tile-classifier")
    out = Path(out_dir)
    onnx_path = out / f"{name}.onnx"
    check = dev[0].crops[:64]
    max_diff = export_onnx(net, temperature, onnx_path, check)
    torch.save(net.state_dict(), out / f"{name}.pt")  # weights to continue from (recipe ``model.init``)
    log(f"onnx written: {onnx_path} ({onnx_path.stat().st_size / 1e6:.2f} MB), max diff to torch {max_diff:.2e}")

    metrics: dict[str, Any] = {"onnx_max_abs_diff_vs_torch": max_diff, "best_epoch": _best_epoch(history)}
    metrics["dev"] = history[metrics["best_epoch"] - 1] if history else {}
    evaluation = recipe.get("evaluate", {})
    if evaluation.get("real_val", False):
        val_photos = realdata.load_photos(data.get("real_root") and Path(data["real_root"]), split="val")
        metrics["eval"] = evaluate_classifier(
            onnx_path,
            val_photos,
            synthetic_heldout=data.get("synthetic_heldout") if len(held_test) else None,
            synthetic_max_images=data.get("heldout_max_images"),
            seed=seed,
        )
        if len(held_test):  # the second half of the held-out images was used for neither selection nor T
            metrics["eval"]["synthetic_heldout_note"] = "all held-out images; first half also used for dev/calibration"
            metrics["synthetic_heldout_test"] = _tileset_metrics(onnx_path, held_test, seed + 7, jitter)
    metrics["timing"] = time_onnx(onnx_path) if evaluation.get("timing", False) else {}

    card = {
        "name": name,
        "kind": "classifier",
        "recipe": recipe,
        "recipe_path": str(recipe_path),
        "inputs": {"crops": "(N,3,64,64) float32 RGB [0,1], vision.runtime.crops.to_input(crop_boxes(image, boxes))"},
        "outputs": {
            "probs": "(N,53) softmax after temperature, referee.tiles.ALL_LABELS order",
            "angle_deg": "(N,) tile up direction, degrees clockwise from image up, [0,360)",
            "features": "(N,D) float32 pooled features the label head reads (D=192 at width 1.0)",
        },
        "labels": list(ALL_LABELS),
        "data": {
            "synthetic_dirs": list(data.get("synthetic", [])),
            "synthetic_tiles": len(synth),
            "real_train_tiles": len(real_train),
            "real_dev_tiles": len(real_dev),
            "synthetic_heldout_dev_tiles": len(held_dev),
            "synthetic_heldout_test_tiles": len(held_test),
            "crops_per_epoch": len(train_set),
            "real_oversample": oversample,
            "real_credit": realdata.CREDIT if len(real_train) else None,
            **real_counts,
        },
        "model": {
            "width": float(train_cfg["width"]),
            "parameters": int(sum(p.numel() for p in net.parameters())),
            "onnx_bytes": onnx_path.stat().st_size,
        },
        "temperature": temperature,
        "history": history,
        "metrics": metrics,
        "train_seconds": train_seconds,
        "total_seconds": time.perf_counter() - started,
        "hardware": {
            "machine": platform.machine(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "torch_threads": int(train_cfg.get("threads", 2)),
            "device": str(train_cfg.get("device", "cpu")),
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        },
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    (out / f"{name}.json").write_text(json.dumps(_jsonable(card), indent=2) + "\n")
    return _jsonable({"temperature": temperature, "train_seconds": train_seconds, **metrics})


def _tileset_metrics(onnx_path: Path, tiles: TileSet, seed: int, jitter: JitterParams) -> dict[str, Any]:
    crops, labels, angles = fixed_crops(tiles, seed, jitter=jitter)
    probs, pred_angle = onnx_predict(onnx_session(onnx_path), crops)
    err = angle_errors(pred_angle, angles)
    return {
        "crops": len(labels),
        "acc_turned_jittered": float((probs.argmax(1) == labels).mean()),
        "ece": expected_calibration_error(probs, labels),
        "angle_median": float(np.median(err)),
        "angle_share_over_90": float((err > 90).mean()),
    }


def _best_epoch(history: Sequence[dict[str, Any]]) -> int:
    if not history:
        return 0
    return int(max(history, key=lambda r: r["score"])["epoch"])


def _logger(path: str | None) -> Any:
    """Progress lines on stdout (the epoch history also goes into the model card), and to ``path`` if given."""

    def log(message: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {message}"
        print(line, flush=True)
        if path:
            with Path(path).open("a") as f:
                f.write(line + "\n")

    return log


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "__dataclass_fields__"):
        return _jsonable(asdict(value))
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m vision.train.classifier reexport SRC.onnx OUT.onnx``: export a classifier again with every
    output in :data:`OUTPUT_NAMES` (an export made before ``features`` existed), checked on the real held-out
    photos' crops; prints the check as JSON."""
    import argparse
    import sys

    from vision.runtime import realdata

    parser = argparse.ArgumentParser(prog="python -m vision.train.classifier", description=main.__doc__)
    parser.add_argument("command", choices=("reexport",))
    parser.add_argument("source")
    parser.add_argument("target")
    args = parser.parse_args(argv)
    from vision.train.onnxinit import OnnxWeightsError

    try:
        crops, _ = real_crops(realdata.load_photos(split="val"))
        result = reexport_onnx(args.source, args.target, crops)
    except (OnnxWeightsError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=2))
    return 0 if result["top1_identical"] and result["max_abs_dprob"] < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
