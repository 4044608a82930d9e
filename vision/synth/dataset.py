"""Writing a synthetic dataset in YOLO format, in parallel, deterministic for a seed.

Layout::

    DIR/images/000000.jpg   DIR/labels/000000.txt   DIR/meta/000000.json (ground truth + parameters)
    DIR/data.yaml (53 classes in the project's label order)   DIR/recipe.yaml (the exact config)
    DIR/summary.json (counts, timing)   DIR/preview.png (with --preview)

Image i is rendered from the seed derived from (seed, i), so the result does not depend on the number of
workers or their order.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.progress import ProgressBar
from vision.synth.recipe import describe, load_recipe
from vision.synth.scene import LABEL_INDEX, RenderedScene, SceneParams, render_scene

LABEL_FORMATS = ("detect", "obb")


def image_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1)[0])


def yolo_lines(scene: RenderedScene, label_format: str = "detect") -> list[str]:
    """One line per readable tile: ``class cx cy w h`` (detect) or ``class x1 y1 ... x4 y4`` (obb), normalised."""
    h, w = scene.image.shape[:2]
    lines = []
    for tile in scene.readable():
        cls = LABEL_INDEX[tile.label]
        if label_format == "obb":
            pts = np.clip(np.array(tile.polygon) / [w, h], 0, 1).ravel()
            lines.append(f"{cls} " + " ".join(f"{v:.6f}" for v in pts))
        else:
            x0, y0, x1, y1 = tile.box
            lines.append(
                f"{cls} {(x0 + x1) / 2 / w:.6f} {(y0 + y1) / 2 / h:.6f} {(x1 - x0) / w:.6f} {(y1 - y0) / h:.6f}"
            )
    return lines


@dataclass(frozen=True, slots=True)
class _Job:
    out: Path
    index: int
    seed: int
    params: SceneParams
    label_format: str
    jpeg_quality: int


def _render_one(job: _Job) -> tuple[int, Counter[str], int]:
    cv2.setNumThreads(1)
    scene = render_scene(image_seed(job.seed, job.index), job.params)
    stem = f"{job.index:06d}"
    ok = cv2.imwrite(str(job.out / "images" / f"{stem}.jpg"), scene.image, [cv2.IMWRITE_JPEG_QUALITY, job.jpeg_quality])
    if not ok:
        raise OSError(f"cannot write image {stem}.jpg into {job.out / 'images'}")
    (job.out / "labels" / f"{stem}.txt").write_text("\n".join(yolo_lines(scene, job.label_format)) + "\n")
    sidecar = {
        "image": f"images/{stem}.jpg",
        "width": scene.image.shape[1],
        "height": scene.image.shape[0],
        "index": job.index,
        **scene.meta,
        "tiles": [t.to_json() for t in scene.tiles],
    }
    (job.out / "meta" / f"{stem}.json").write_text(json.dumps(sidecar))
    readable = scene.readable()
    return job.index, Counter(t.label for t in readable), len(scene.tiles) - len(readable)


def write_recipe_dataset(
    recipe: str | Path,
    out: Path,
    *,
    images: int | None = None,
    seed: int = 0,
    size: tuple[int, int] | None = None,
    workers: int | None = None,
    label_format: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """A recipe's dataset (``rummikub-referee synth``): its image count and label format unless given, its size
    unless ``size``; the summary of :func:`write_dataset`."""
    params, about = load_recipe(recipe)
    if size:
        params = replace(params, size=size)
    count = images if images is not None else int(about.get("images", 100))
    return write_dataset(
        out, count, seed, params, recipe=about, workers=workers,
        label_format=label_format or about.get("label_format", "detect"), progress=progress,
    )  # fmt: skip


def write_dataset(
    out: Path,
    images: int,
    seed: int,
    params: SceneParams,
    *,
    recipe: dict[str, Any] | None = None,
    workers: int | None = None,
    label_format: str = "detect",
    jpeg_quality: int = 93,
    progress: bool = True,
) -> dict[str, Any]:
    if label_format not in LABEL_FORMATS:
        raise ValueError(f"unknown label format {label_format!r} (expected {' or '.join(LABEL_FORMATS)})")
    for sub in ("images", "labels", "meta"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    jobs = [_Job(out, i, seed, params, label_format, jpeg_quality) for i in range(images)]
    workers = max(1, min(workers or multiprocessing.cpu_count(), images or 1))
    counts: Counter[str] = Counter()
    hidden = 0
    bar = ProgressBar(images, label="images", rate=True) if progress else None
    start = time.perf_counter()
    for _, tile_counts, unreadable in _run(jobs, workers):
        counts += tile_counts
        hidden += unreadable
        if bar:
            bar.advance()
    if bar:
        bar.finish()
    elapsed = time.perf_counter() - start
    _write_data_yaml(out)
    summary = {
        "images": images,
        "seed": seed,
        "recipe": recipe or {},
        "label_format": label_format,
        "seconds": round(elapsed, 2),
        "images_per_second": round(images / elapsed, 3) if elapsed > 0 else None,
        "workers": workers,
        "labelled_tiles": sum(counts.values()),
        "unreadable_tiles": hidden,
        "tiles_per_class": {label: counts.get(label, 0) for label in ALL_LABELS},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    _write_recipe(out, params, recipe or {}, seed, label_format)
    return summary


def _run(jobs: list[_Job], workers: int) -> Iterator[tuple[int, Counter[str], int]]:
    if workers == 1:
        yield from map(_render_one, jobs)
        return
    # forkserver: workers start from a clean server, not from a parent whose threads (OpenCV, torch) may hold locks
    context = multiprocessing.get_context("forkserver" if sys.platform.startswith("linux") else "spawn")
    with context.Pool(workers) as pool:
        yield from pool.imap_unordered(_render_one, jobs, chunksize=4)


def _write_data_yaml(out: Path) -> None:
    import yaml

    data = {
        "path": str(out.resolve()),
        "train": "images",
        "val": "images",
        "nc": len(ALL_LABELS),
        "names": dict(enumerate(ALL_LABELS)),
    }
    (out / "data.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def _write_recipe(out: Path, params: SceneParams, about: dict[str, Any], seed: int, label_format: str) -> None:
    import yaml

    config = {**about, "seed": seed, "label_format": label_format, **describe(params)}
    (out / "recipe.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


# -- contact sheet -------------------------------------------------------------------------------------


def contact_sheet(
    paths: Iterable[Path],
    *,
    columns: int = 4,
    thumb_width: int = 480,
    boxes: dict[Path, list[tuple[float, ...]]] | None = None,
) -> np.ndarray:
    """A grid of thumbnails (optionally with label boxes drawn) to look at next to real photos."""
    thumbs = []
    for path in paths:
        image = cv2.imread(str(path))
        if image is None:
            continue
        scale = thumb_width / image.shape[1]
        thumb = cv2.resize(image, (thumb_width, int(image.shape[0] * scale)), interpolation=cv2.INTER_AREA)
        for box in (boxes or {}).get(path, []):
            x0, y0, x1, y1 = (int(v * scale) for v in box)
            cv2.rectangle(thumb, (x0, y0), (x1, y1), (0, 255, 0), 1)
        thumbs.append(thumb)
    if not thumbs:
        raise ValueError("no images for the contact sheet")
    height = max(t.shape[0] for t in thumbs)
    padded = [
        cv2.copyMakeBorder(t, 0, height - t.shape[0], 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255)) for t in thumbs
    ]
    while len(padded) % columns:
        padded.append(np.full_like(padded[0], 255))
    rows = [np.hstack(padded[i : i + columns]) for i in range(0, len(padded), columns)]
    return np.vstack(rows)


def write_preview(out: Path, count: int = 12, *, annotated: bool = True) -> Path:
    paths = sorted((out / "images").glob("*.jpg"))[:count]
    boxes = {}
    if annotated:
        for path in paths:
            meta = json.loads((out / "meta" / f"{path.stem}.json").read_text())
            boxes[path] = [t["box"] for t in meta["tiles"] if t["readable"]]
    sheet = contact_sheet(paths, boxes=boxes)
    target = out / "preview.png"
    cv2.imwrite(str(target), sheet)
    return target
