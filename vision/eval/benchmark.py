"""``bench recognition``: how long the shipped models take to read a frame, on this machine.

Frames are rendered synthetic tables at the sizes a referee meets (a 1280x960 photo, a 1080p camera, a 4K
camera); each figure is the median and maximum over repeats, and the 1280x960 figure is also given as a
ratio to the 120 ms budget of the tile-editions issue. The default reader reads a photo of small tiles a second
time at tile scale; beside it, the reader of ``--one-pass`` (one reading at the detector's input size): its time
as a ratio to the default reader's in the same run, and the tiles it finds.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vision.runtime.reader import Reader

FRAME_SIZES = ((1280, 960), (1920, 1080), (3840, 2160))
BUDGET_MS = {(1280, 960): 120.0}


def run_recognition_benchmark(models_dir: Path | None = None, repeats: int = 7, seed: int = 0) -> list[dict[str, Any]]:
    from vision.runtime.reader import TileReader
    from vision.synth.scene import SceneParams, render_scene

    reader, one_pass = TileReader(models_dir), TileReader(models_dir, rescale=False)
    rows = []
    for size in FRAME_SIZES:
        scene = render_scene(seed, SceneParams(size=size, hand_probability=0.0))
        timed = _time_reader(reader, scene.image, repeats)
        second = _time_reader(one_pass, scene.image, repeats)
        median = timed["median_ms"]
        budget = BUDGET_MS.get(size)
        rows.append(
            {
                "frame": f"{size[0]}x{size[1]}",
                "tiles_in_frame": len(scene.readable()),
                **timed,
                "ratio_to_budget": round(median / budget, 2) if budget else None,
                "one_pass_found": second["tiles_found"],
                "one_pass_median_ms": second["median_ms"],
                "one_pass_ratio": round(second["median_ms"] / median, 2),
            }
        )
    return rows


def _time_reader(reader: Reader, image: Any, repeats: int) -> dict[str, Any]:
    reader.read(image)  # warm-up: sessions are created on first use
    totals, detects, classifies, found = [], [], [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        reading = reader.read(image)
        totals.append((time.perf_counter() - start) * 1e3)
        found = len(reading.detections)
        detects.append(reading.timings.detect_ms)
        classifies.append(reading.timings.classify_ms)
    return {
        "tiles_found": found,
        "median_ms": round(statistics.median(totals), 1),
        "max_ms": round(max(totals), 1),
        "detect_median_ms": round(statistics.median(detects), 1),
        "classify_median_ms": round(statistics.median(classifies), 1),
    }


def format_recognition_benchmark(rows: list[dict[str, Any]]) -> str:
    header: tuple[str, ...] = ("frame", "tiles", "found", "median ms", "max ms", "detect", "classify", "/budget")
    header += ("1-pass", "ms", "x")
    lines = ["{:<11} {:>5} {:>5} {:>9} {:>7} {:>7} {:>8} {:>7} {:>6} {:>7} {:>7}".format(*header)]
    for r in rows:
        ratio = "" if r["ratio_to_budget"] is None else f"{r['ratio_to_budget']:.2f}"
        lines.append(
            f"{r['frame']:<11} {r['tiles_in_frame']:>5} {r['tiles_found']:>5} {r['median_ms']:>9.1f}"
            f" {r['max_ms']:>7.1f} {r['detect_median_ms']:>7.1f} {r['classify_median_ms']:>8.1f} {ratio:>7}"
            f" {r['one_pass_found']:>6} {r['one_pass_median_ms']:>7.1f} {r['one_pass_ratio']:>7.2f}"
        )
    lines.append("1-pass: --one-pass (never read again at tile scale), found / ms / x the default reader's time")
    return "\n".join(lines)


def bench_suite(args: Any) -> tuple[list[dict[str, Any]], str]:
    rows = run_recognition_benchmark(Path(args.models) if getattr(args, "models", None) else None, seed=args.seed)
    return rows, format_recognition_benchmark(rows)
