"""``bench recognition``: how long the shipped models take to read a frame, on this machine.

Frames are rendered synthetic tables at the sizes a referee meets (a 1280x960 photo, a 1080p camera, a 4K
camera); each figure is the median and maximum over repeats, wall clock and CPU (the process's time, all its
threads), and the 1280x960 figure is also given as a ratio to the 120 ms budget of the tile-editions issue. The
default reader reads a photo of small tiles a second time at tile scale; beside it, the reader of ``--one-pass``
(one reading at the detector's input size): its time as a ratio to the default reader's in the same run, and the
tiles it finds.

``python -m vision.eval.benchmark --against REV`` times this working tree's reader against git revision ``REV``'s
(its files extracted to a temporary folder), each in a process of its own, reading the same frames in turn, so on
a machine shared with other jobs both meet the same load: wall and CPU ms per reading and per step, the ratios, and
whether every reading came out identical (boxes, labels, confidences, every column, the boxes left out), and of
those that did not, whether they hold the same boxes with the same labels and how far apart (``reading_difference``).
``--data``
adds real photos (``--split val``: the held-out ones) to the identity check, and the first ``--timed-photos`` of
them to the timing, resized with ``--resize 1280x960``.
"""

from __future__ import annotations

import argparse
import io
import json
import pickle
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from vision.runtime.reader import Reader

FRAME_SIZES = ((1280, 960), (1920, 1080), (3840, 2160))
BUDGET_MS = {(1280, 960): 120.0}
STEPS = ("detect", "classify", "colour", "familiarity")
"""The steps a reading times itself (:class:`vision.runtime.reader.ReadTimings`, ``<step>_ms``)."""


def run_recognition_benchmark(models_dir: Path | None = None, repeats: int = 7, seed: int = 0) -> list[dict[str, Any]]:
    from vision.runtime.reader import TileReader

    reader, one_pass = TileReader(models_dir), TileReader(models_dir, rescale=False)
    rows = []
    for size in FRAME_SIZES:
        scene = bench_scene(size, seed)
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


def bench_scene(size: tuple[int, int], seed: int = 0) -> Any:
    """The rendered table the benchmark reads at ``size`` (no hands over it)."""
    from vision.synth.scene import SceneParams, render_scene

    return render_scene(seed, SceneParams(size=size, hand_probability=0.0))


def _time_reader(reader: Reader, image: Any, repeats: int) -> dict[str, Any]:
    reader.read(image)  # warm-up: sessions are created on first use
    totals, cpus, detects, classifies, found = [], [], [], [], 0
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        reading = reader.read(image)
        totals.append((time.perf_counter() - start) * 1e3)
        cpus.append((time.process_time() - cpu) * 1e3)
        found = len(reading.detections)
        detects.append(reading.timings.detect_ms)
        classifies.append(reading.timings.classify_ms)
    return {
        "tiles_found": found,
        "median_ms": round(statistics.median(totals), 1),
        "max_ms": round(max(totals), 1),
        "cpu_median_ms": round(statistics.median(cpus), 1),
        "detect_median_ms": round(statistics.median(detects), 1),
        "classify_median_ms": round(statistics.median(classifies), 1),
    }


def format_recognition_benchmark(rows: list[dict[str, Any]]) -> str:
    header: tuple[str, ...] = ("frame", "tiles", "found", "median ms", "max ms", "cpu ms", "detect", "classify")
    header += ("/budget", "1-pass", "ms", "x")
    lines = ["{:<11} {:>5} {:>5} {:>9} {:>7} {:>7} {:>7} {:>8} {:>7} {:>6} {:>7} {:>7}".format(*header)]
    for r in rows:
        ratio = "" if r["ratio_to_budget"] is None else f"{r['ratio_to_budget']:.2f}"
        lines.append(
            f"{r['frame']:<11} {r['tiles_in_frame']:>5} {r['tiles_found']:>5} {r['median_ms']:>9.1f}"
            f" {r['max_ms']:>7.1f} {r['cpu_median_ms']:>7.1f} {r['detect_median_ms']:>7.1f}"
            f" {r['classify_median_ms']:>8.1f} {ratio:>7}"
            f" {r['one_pass_found']:>6} {r['one_pass_median_ms']:>7.1f} {r['one_pass_ratio']:>7.2f}"
        )
    lines.append("cpu ms: the process's time (all threads), median; detect, classify: the reader's own step timings")
    lines.append("1-pass: --one-pass (never read again at tile scale), found / ms / x the default reader's time")
    return "\n".join(lines)


def bench_suite(args: Any) -> tuple[list[dict[str, Any]], str]:
    rows = run_recognition_benchmark(Path(args.models) if getattr(args, "models", None) else None, seed=args.seed)
    return rows, format_recognition_benchmark(rows)


# -- this tree against another revision ---------------------------------------------------------------------------

_WORKER = r"""
import pickle, sys, time
tree, models = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
out, sys.stdout = sys.stdout.buffer, sys.stderr  # the pipe carries readings only
try:
    import numpy as np
    import vision
    from vision.runtime.reader import TileReader
    if not vision.__file__.startswith(tree):
        sys.exit(f"{tree}: imported vision from {vision.__file__}, not from the tree")
    reader = TileReader(models)
    reader.check_models()
except Exception as error:  # one line, not a traceback: an old revision, a missing model
    sys.exit(f"{tree}: cannot make a reader ({type(error).__name__}: {str(error).splitlines()[0][:200]})")
def columns(found):
    data = {k: np.asarray(v) for k, v in found.data.items()}
    return {"xyxy": found.xyxy, "confidence": found.confidence, "class_id": found.class_id, **data}
while True:
    try:
        image = pickle.load(sys.stdin.buffer)
    except EOFError:
        break
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        reading = reader.read(image)
    except Exception as error:
        sys.exit(f"{tree}: cannot read a frame ({type(error).__name__}: {str(error).splitlines()[0][:200]})")
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    steps = {name: getattr(reading.timings, name + "_ms", None) for name in sys.argv[3].split(",")}
    result = {"wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3, "steps": steps,
              "detections": columns(reading.detections), "left_out": columns(reading.left_out)}
    pickle.dump(result, out)
    out.flush()
"""
"""A reader in its own process, on the ``vision`` package of one tree: an image in (pickled on stdin), the reading's
columns and its wall / CPU time out. Written against ``TileReader(models).read(image) -> Reading`` only, so it runs
on any revision that has them."""


class ReaderProcess:
    """:data:`_WORKER` on ``tree`` with the models of ``models``: ``read(image) -> dict``."""

    def __init__(self, tree: Path, models: Path) -> None:
        self.tree = tree
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(tree.resolve()), str(models.resolve()), ",".join(STEPS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=tree,
        )

    def read(self, image: np.ndarray) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            pickle.dump(image, self.process.stdin)
            self.process.stdin.flush()
            result: dict[str, Any] = pickle.load(self.process.stdout)
        except (BrokenPipeError, EOFError):
            raise RuntimeError(f"the reader of {self.tree} stopped (exit status {self.process.wait()})") from None
        return result

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def same_columns(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Every column present in both, with the same shape, dtype and values (NaN equal to NaN)."""
    if a.keys() != b.keys():
        return False
    for name, column in a.items():
        other = b[name]
        if column.shape != other.shape or column.dtype != other.dtype:
            return False
        floating = np.issubdtype(column.dtype, np.floating)
        if not np.array_equal(column, other, equal_nan=floating):
            return False
    return True


def same_reading(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return same_columns(a["detections"], b["detections"]) and same_columns(a["left_out"], b["left_out"])


def reading_difference(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """How far two readings of a frame lie apart: whether they hold the same boxes with the same labels (tiles and
    boxes left out alike), and if so the largest difference of a box corner (pixels) and of a confidence."""
    same_tiles = all(
        a[part]["xyxy"].shape == b[part]["xyxy"].shape and np.array_equal(a[part]["class_id"], b[part]["class_id"])
        for part in ("detections", "left_out")
    )
    if not same_tiles:
        return {"same_labels": False, "box_px": None, "confidence": None}

    def largest(column: str) -> float:
        return max(
            (
                float(np.max(np.abs(a[p][column].astype(np.float64) - b[p][column])))
                for p in ("detections", "left_out")
                if len(a[p][column])
            ),
            default=0.0,
        )

    return {"same_labels": True, "box_px": largest("xyxy"), "confidence": largest("confidence")}


@contextmanager
def revision_tree(revision: str, repository: Path) -> Iterator[Path]:
    """The files of git ``revision`` of ``repository`` in a temporary folder (``git archive``)."""
    archive = subprocess.run(
        ["git", "-C", str(repository), "archive", "--format=tar", revision], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise ValueError(f"--against {revision}: {archive.stderr.decode(errors='replace').strip()[:200]}")
    with tempfile.TemporaryDirectory(prefix="bench-against-") as folder:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter="data")
        yield Path(folder)


@dataclass(frozen=True, slots=True)
class Frame:
    name: str
    image: np.ndarray
    timed: bool


def compare_trees(
    baseline: Path,
    candidate: Path,
    frames: Sequence[Frame],
    *,
    models: Path | None = None,
    repeats: int = 5,
) -> dict[str, Any]:
    """Read every frame with both trees' readers (a reader per process), check the readings are identical, then read
    the timed frames ``repeats`` times more, the two in turn (the first to go alternating), and report per frame the
    median wall / CPU ms of each, per step, and candidate / baseline ratios."""
    readers = {
        "baseline": ReaderProcess(baseline, models or baseline / "models"),
        "candidate": ReaderProcess(candidate, models or candidate / "models"),
    }
    try:
        differ, differences = [], []
        for frame in frames:  # the identity check, and each reader's warm-up on every frame size
            first, second = (readers[key].read(frame.image) for key in ("baseline", "candidate"))
            if not same_reading(first, second):
                differ.append(frame.name)
                differences.append(reading_difference(first, second))
        timings: list[dict[str, list[dict[str, Any]]]] = [{key: [] for key in readers} for _ in frames]
        for repeat in range(repeats):
            order = ("baseline", "candidate") if repeat % 2 == 0 else ("candidate", "baseline")
            for frame, runs in zip(frames, timings, strict=True):
                if frame.timed:
                    for key in order:
                        runs[key].append(readers[key].read(frame.image))
    finally:
        for process in readers.values():
            process.close()
    pairs = zip(frames, timings, strict=True)
    rows = [_compare_row(frame.name, runs) for frame, runs in pairs if frame.timed and repeats]
    return {
        "frames": len(frames),
        "identical": len(frames) - len(differ),
        "differ": differ,
        "differences": differences,
        "rows": rows,
    }


def _compare_row(name: str, runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    def median(key: str, values: list[dict[str, Any]]) -> float:
        return round(statistics.median(v[key] for v in values), 1)

    row: dict[str, Any] = {"frame": name, "tiles": len(runs["candidate"][-1]["detections"]["xyxy"])}
    for who, values in runs.items():
        row[who] = {
            "wall_ms": median("wall_ms", values),
            "cpu_ms": median("cpu_ms", values),
            "steps_ms": {
                step: round(statistics.median(v["steps"][step] for v in values), 1)
                for step in STEPS
                if all(v["steps"].get(step) is not None for v in values)
            },
        }
    for measure in ("wall_ms", "cpu_ms"):
        before = row["baseline"][measure]
        row[f"{measure.removesuffix('_ms')}_ratio"] = round(row["candidate"][measure] / before, 3) if before else None
    return row


def format_comparison(result: dict[str, Any], against: str) -> str:
    lines = [
        f"readings identical to {against}'s: {result['identical']} of {result['frames']} frames"
        + (f" (differ: {', '.join(result['differ'][:10])})" if result["differ"] else "")
    ]
    differences = result.get("differences", [])
    if differences:
        same = [d for d in differences if d["same_labels"]]
        line = f"of the {len(differences)} that differ, {len(same)} hold the same boxes with the same labels"
        if same:
            box, confidence = max(d["box_px"] for d in same), max(d["confidence"] for d in same)
            line += f" (box corners within {box:.2g} px, confidences within {confidence:.2g})"
        lines.append(line)
    header = ("frame", "tiles", "wall before", "after", "x", "cpu before", "after", "x")
    lines.append("{:<28} {:>5} {:>11} {:>7} {:>6} {:>10} {:>7} {:>6}".format(*header))
    for r in result["rows"]:
        b, c = r["baseline"], r["candidate"]
        lines.append(
            f"{r['frame']:<28} {r['tiles']:>5} {b['wall_ms']:>11.1f} {c['wall_ms']:>7.1f} {r['wall_ratio']:>6.3f}"
            f" {b['cpu_ms']:>10.1f} {c['cpu_ms']:>7.1f} {r['cpu_ratio']:>6.3f}"
        )
        steps = ", ".join(f"{s} {b['steps_ms'][s]:.1f} -> {c['steps_ms'][s]:.1f}" for s in c["steps_ms"])
        lines.append(f"{'':<28} steps, wall ms: {steps}")
    lines.append("medians over the repeats; x: after / before, read in turn in two processes under the same load")
    return "\n".join(lines)


def comparison_frames(
    seed: int, data: Path | None, split: str | None, timed_photos: int, resize: tuple[int, int] | None
) -> list[Frame]:
    """The bench frames (timed), then the real photos of ``data`` (the first ``timed_photos`` timed)."""
    frames = [Frame(f"scene {w}x{h}", bench_scene((w, h), seed).image, True) for w, h in FRAME_SIZES]
    if data is not None:
        import cv2

        from vision.eval.evaluate import load_real_split, load_yolo_folder
        from vision.runtime.recognition import load_image

        samples = load_real_split(data, split) if split else load_yolo_folder(data)
        for i, sample in enumerate(samples):
            image = load_image(sample.path)
            if resize is not None and i < timed_photos:
                image = cv2.resize(image, resize, interpolation=cv2.INTER_LINEAR)
                frames.append(Frame(f"{sample.path.stem[:16]} {resize[0]}x{resize[1]}", image, True))
            else:
                frames.append(Frame(sample.path.stem[:28], image, i < timed_photos))
    return frames


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a size is WIDTHxHEIGHT, e.g. 1280x960") from None
    return width, height


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vision.eval.benchmark",
        description="Time this tree's reader against another revision's, in turn, and check they read the same.",
        epilog="example: python -m vision.eval.benchmark --against HEAD --data ../shared/data/rummikub-nvypk-train"
        " --split val --resize 1280x960",
    )
    parser.add_argument("--against", required=True, help="the git revision to compare with (e.g. HEAD, a hash)")
    parser.add_argument("--data", type=Path, help="real photos to read as well (a YOLO folder or the real data)")
    parser.add_argument("--split", help="the real photos' split (val: the held-out ones)")
    parser.add_argument("--timed-photos", type=int, default=3, help="how many of the photos are timed (default 3)")
    parser.add_argument("--resize", type=_size, help="the timed photos resized to WIDTHxHEIGHT")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", type=Path, help="one models folder for both (default: each tree's models/)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parents[2]
    try:
        with revision_tree(args.against, here) as baseline:
            frames = comparison_frames(args.seed, args.data, args.split, args.timed_photos, args.resize)
            result = compare_trees(baseline, here, frames, models=args.models, repeats=args.repeats)
    except (ValueError, OSError, RuntimeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if args.json else format_comparison(result, args.against))
    return 0 if not result["differ"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
