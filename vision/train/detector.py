"""Training the tile detector: Ultralytics YOLO, one class ("tile": a face-up tile), exported to ONNX.

One class because reading the tile is the crop classifier's job: a detector that only has to find cream
rectangles learns far faster on a CPU than a 53-class one. Flips and any rotation are fine here (a mirrored
tile is still a tile); they are not for the classifier. The real photos' held-out source photos are never
used, not even to pick the best epoch: validation during training is on held-out synthetic scenes.
"""

from __future__ import annotations

import json
import platform
import shutil
import time
from pathlib import Path
from typing import Any

from vision.runtime import realdata

ONNX_NAME = "tile-detector.onnx"


def load_recipe(path: Path) -> dict[str, Any]:
    from vision.train.recipes import load_training_recipe

    return load_training_recipe(path, "detector")


def build_dataset(recipe: dict[str, Any], out: Path, project_root: Path) -> Path:
    """A one-class YOLO dataset of symlinks: synthetic scenes + real training photos; returns data.yaml."""
    data = recipe["data"]
    for split in ("train", "val"):
        for sub in ("images", "labels"):
            target = out / split / sub
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
    counts = {"train": 0, "val": 0}
    for split, prefix in (("train", "syn"), ("val", "val")):
        for source in data.get(f"synthetic_{split}", []):
            folder = project_root / source["dir"]
            if source.get("crop"):
                counts[split] += _crop_synthetic(folder, out / split, source)
            else:
                counts[split] += _link_synthetic(folder, out / split, source.get("images"), prefix)
    repeats = int(data.get("real_train_repeats", 0))
    if repeats:
        photos = realdata.load_photos(split="train")
        for copy in range(repeats):
            for photo in photos:
                _link_real(photo, out / "train", f"real{copy}")
        counts["train"] += repeats * len(photos)
    yaml_path = out / "data.yaml"
    yaml_path.write_text(
        f"path: {out.resolve()}\ntrain: train/images\nval: val/images\nnames:\n  0: tile\n# {json.dumps(counts)}\n"
    )
    return yaml_path


def _scene_images(source: Path, limit: int | None) -> list[Path]:
    images = sorted((source / "images").glob("*.jpg"))[:limit]
    if not images:
        raise FileNotFoundError(f"no synthetic images in {source} (make them with `rummikub-referee synth`)")
    return images


def _link_synthetic(source: Path, target: Path, limit: int | None, prefix: str) -> int:
    images = _scene_images(source, limit)
    for image in images:
        name = f"{prefix}-{source.name}-{image.stem}"
        (target / "images" / f"{name}.jpg").symlink_to(image.resolve())
        lines = (source / "labels" / f"{image.stem}.txt").read_text().split("\n")
        ones = ["0 " + line.split(" ", 1)[1] for line in lines if line.strip()]
        (target / "labels" / f"{name}.txt").write_text("\n".join(ones) + "\n")
    return len(images)


def _crop_synthetic(source: Path, target: Path, spec: dict[str, Any]) -> int:
    """Square windows cut from synthetic scenes, so tiles keep the size they have in the live pipeline's
    play-area reading and in close-up photos (a whole 1280x960 scene letterboxed to 448 px shrinks a tile to
    11-27 px). At native resolution by default; with ``tile_px: [LO, HI]`` each scene is first scaled (area
    averaging, as the pipeline scales its play area) so its median tile is a width drawn from LO-HI px, the
    scale the live pipeline reads at (``TILE_PX``). Tiles cut by a window keep their clipped box when at least
    ``min_visible`` of them is inside, and are dropped otherwise. Deterministic per ``seed``; the windows are
    drawn here in order and cut in ``workers`` processes (default: every core)."""
    import os
    from concurrent.futures import ProcessPoolExecutor

    import numpy as np
    from PIL import Image

    side, per_image = int(spec["crop"]), int(spec.get("crops_per_image", 1))
    min_visible = float(spec.get("min_visible", 0.6))
    tile_px = spec.get("tile_px")
    images = _scene_images(source, spec.get("images"))
    rng = np.random.default_rng(int(spec.get("seed", 0)))
    jobs = []
    for image_path in images:
        with Image.open(image_path) as image:
            width, height = image.size
        boxes = _yolo_boxes(source / "labels" / f"{image_path.stem}.txt", width, height)
        scale = _tile_scale(boxes, float(rng.uniform(*tile_px))) if tile_px else 1.0
        width, height = max(1, round(width * scale)), max(1, round(height * scale))
        scaled = [(x0 * scale, y0 * scale, x1 * scale, y1 * scale) for x0, y0, x1, y1 in boxes]
        windows = []
        for index in range(per_image):
            x0 = int(rng.integers(0, max(1, width - side + 1)))
            y0 = int(rng.integers(0, max(1, height - side + 1)))
            window = (x0, y0, min(width, x0 + side), min(height, y0 + side))
            stem = target / f"crop-{source.name}-{image_path.stem}-{index}"
            windows.append((stem, window, _clip_boxes(scaled, window, min_visible)))
        jobs.append((image_path, (width, height), windows))
    workers = int(spec.get("workers", os.cpu_count() or 1))
    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_cut_windows, jobs, chunksize=8))
    else:
        for job in jobs:
            _cut_windows(job)
    return sum(len(windows) for _, _, windows in jobs)


def _tile_scale(boxes: list[tuple[float, float, float, float]], tile_px: float) -> float:
    """The factor that makes the scene's median tile ``tile_px`` wide (a tile's width: its box's shorter side)."""
    import numpy as np

    if not boxes:
        return 1.0
    widths = [min(x1 - x0, y1 - y0) for x0, y0, x1, y1 in boxes]
    return tile_px / max(1.0, float(np.median(widths)))


def _cut_windows(job: tuple[Path, tuple[int, int], list[tuple[Path, tuple[int, int, int, int], list[str]]]]) -> None:
    """Decode one scene, scale it to ``size`` if needed, and save each window with its label lines."""
    import cv2
    import numpy as np
    from PIL import Image

    image_path, size, windows = job
    image = Image.open(image_path).convert("RGB")
    if image.size != size:
        image = Image.fromarray(cv2.resize(np.asarray(image), size, interpolation=cv2.INTER_AREA))
    for stem, window, lines in windows:
        image.crop(window).save(stem.parent / "images" / f"{stem.name}.jpg", quality=92)
        (stem.parent / "labels" / f"{stem.name}.txt").write_text("\n".join(lines) + "\n")


def _yolo_boxes(label_path: Path, width: int, height: int) -> list[tuple[float, float, float, float]]:
    boxes = []
    for line in label_path.read_text().split("\n"):
        if line.strip():
            cx, cy, w, h = (float(v) for v in line.split()[1:5])
            boxes.append(((cx - w / 2) * width, (cy - h / 2) * height, (cx + w / 2) * width, (cy + h / 2) * height))
    return boxes


def _clip_boxes(
    boxes: list[tuple[float, float, float, float]], window: tuple[int, int, int, int], min_visible: float
) -> list[str]:
    """One-class YOLO lines for the boxes seen through ``window`` (pixels), clipped to it."""
    wx0, wy0, wx1, wy1 = window
    ww, wh = wx1 - wx0, wy1 - wy0
    lines = []
    for x0, y0, x1, y1 in boxes:
        cx0, cy0, cx1, cy1 = max(x0, wx0), max(y0, wy0), min(x1, wx1), min(y1, wy1)
        if cx1 <= cx0 or cy1 <= cy0 or (cx1 - cx0) * (cy1 - cy0) < min_visible * (x1 - x0) * (y1 - y0):
            continue
        cx, cy = ((cx0 + cx1) / 2 - wx0) / ww, ((cy0 + cy1) / 2 - wy0) / wh
        lines.append(f"0 {cx:.6f} {cy:.6f} {(cx1 - cx0) / ww:.6f} {(cy1 - cy0) / wh:.6f}")
    return lines


def _link_real(photo: realdata.RealPhoto, target: Path, prefix: str) -> None:
    name = f"{prefix}-{photo.path.stem}"
    (target / "images" / f"{name}.jpg").symlink_to(photo.path.resolve())
    lines = []
    for tile in photo.tiles:
        x0, y0, x1, y1 = tile.box
        cx, cy = (x0 + x1) / 2 / photo.width, (y0 + y1) / 2 / photo.height
        lines.append(f"0 {cx:.6f} {cy:.6f} {(x1 - x0) / photo.width:.6f} {(y1 - y0) / photo.height:.6f}")
    (target / "labels" / f"{name}.txt").write_text("\n".join(lines) + "\n")


def train_detector(
    recipe_path: Path, out: Path, *, project_root: Path | None = None, models_dir: Path | None = None
) -> dict[str, Any]:
    """Build the dataset, train, export to ONNX; returns the config and metrics written beside the model."""
    from ultralytics import YOLO

    project_root = project_root or Path(__file__).resolve().parents[2]
    recipe = load_recipe(recipe_path)
    out.mkdir(parents=True, exist_ok=True)
    data_yaml = build_dataset(recipe, out / "dataset", project_root)
    started = time.perf_counter()
    start_from = str(recipe.get("model", "yolov8n.yaml"))
    imgsz = int(recipe.get("train", {}).get("imgsz", 640))
    conversion = None
    if start_from.lower().endswith(".onnx"):  # an FP32 export: its weights back into a checkpoint to train from
        conversion = init_from_onnx(project_root / start_from, out / "init-from-onnx.pt", out / "dataset", imgsz)
        start_from = str(conversion["checkpoint"])
    model = YOLO(start_from)
    train_args = {
        "data": str(data_yaml),
        "project": str(out.resolve()),
        "name": "run",
        "exist_ok": True,
        "pretrained": start_from.endswith(".pt"),  # continue from weights, else from scratch
        "plots": False,
        "verbose": False,
        "amp": False,
        **recipe.get("train", {}),
    }
    log_every = int(recipe.get("log_every_steps", 0))
    if log_every:  # smoke runs: the first batches' losses (Ultralytics' own log is per epoch when not verbose)
        model.add_callback("on_train_batch_end", _batch_logger(log_every))
    model.train(**train_args)
    seconds = time.perf_counter() - started
    weights = out / "run" / "weights" / "best.pt"
    onnx_path = export_onnx(weights, imgsz=int(train_args.get("imgsz", 640)), target=(models_dir or out) / ONNX_NAME)
    metrics = _final_metrics(out / "run")
    config = {
        "kind": "detector",
        "recipe": recipe,
        "recipe_path": str(recipe_path),
        "train_args": {k: v for k, v in train_args.items() if k not in ("project",)},
        "dataset": data_yaml.read_text().splitlines()[-1].lstrip("# "),
        "init_from_onnx": conversion,
        "train_seconds": round(seconds, 1),
        "hardware": _hardware(),
        "versions": _versions(),
        "validation_metrics": metrics,
        "onnx": str(onnx_path),
        "onnx_bytes": onnx_path.stat().st_size,
    }
    onnx_path.with_suffix(".json").write_text(json.dumps(config, indent=2, default=str))
    return config


def _batch_logger(every: int) -> Any:
    """An Ultralytics callback printing the batch's losses (box, cls, dfl) at the first 5 steps and every
    ``every`` steps after."""
    steps = [0]

    def log(trainer: Any) -> None:
        steps[0] += 1
        if steps[0] <= 5 or steps[0] % every == 0:
            raw = trainer.loss_items  # a dict of named losses, or a tensor (box, cls, dfl) in older releases
            items = {str(k): float(v) for k, v in raw.items()} if isinstance(raw, dict) else dict(enumerate(raw))
            named = ", ".join(f"{k} {float(v):.4f}" for k, v in items.items())
            print(f"step {steps[0]} loss {sum(float(v) for v in items.values()):.4f} ({named})", flush=True)

    return log


def init_from_onnx(onnx_path: Path, checkpoint: Path, dataset: Path, imgsz: int, seed: int = 0) -> dict[str, Any]:
    """Write an Ultralytics checkpoint holding an FP32 detector export's weights (:mod:`vision.train.onnxinit`),
    its BatchNorms recalibrated on training images of the built dataset letterboxed to ``imgsz``; returns what
    was done and how far the rebuilt model is from ONNX Runtime on four of those images."""
    import numpy as np

    from vision.train.onnxinit import CALIBRATION_IMAGES, detector_checkpoint_from_onnx

    images = sorted((dataset / "train" / "images").glob("*.jpg"))
    rng = np.random.default_rng(seed)
    picks = [images[int(i)] for i in rng.choice(len(images), min(CALIBRATION_IMAGES, len(images)), replace=False)]
    path, before, after = detector_checkpoint_from_onnx(onnx_path, checkpoint, picks, imgsz=imgsz)
    return {
        "onnx": str(onnx_path),
        "checkpoint": str(path),
        "calibration_images": len(picks),
        "max_abs_diff_identity_bn": before.max_abs,
        "max_abs_diff_recalibrated": after.max_abs,
    }


def export_onnx(weights: Path, *, imgsz: int, target: Path) -> Path:
    """ONNX export (opset 17) with dynamic axes: the trained input size travels in the model's metadata
    (``imgsz``), and the live pipeline reads a whole play area in one pass at native resolution."""
    from ultralytics import YOLO

    exported = Path(YOLO(str(weights)).export(format="onnx", imgsz=imgsz, opset=17, simplify=False, dynamic=True))
    target.parent.mkdir(parents=True, exist_ok=True)
    if exported.resolve() != target.resolve():
        shutil.copyfile(exported, target)
    return target


def _final_metrics(run: Path) -> dict[str, float]:
    results = run / "results.csv"
    if not results.exists():
        return {}
    import csv

    rows = list(csv.DictReader(results.open()))
    if not rows:
        return {}
    last = {k.strip(): v for k, v in rows[-1].items()}
    keys = ("epoch", "metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)")
    return {k: float(last[k]) for k in keys if k in last}


def _hardware() -> dict[str, Any]:
    import os

    info: dict[str, Any] = {"machine": platform.machine(), "cpus": os.cpu_count(), "processor": platform.processor()}
    try:
        import torch

        info["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except ImportError:
        pass
    return info


def _versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in ("torch", "ultralytics", "onnx", "numpy", "cv2"):
        try:
            module = __import__(name)
            versions[name] = getattr(module, "__version__", "?")
        except ImportError:
            pass
    return versions
