"""Recognition evaluation: one row per image, headline numbers computed from the rows.

A row says how many tiles were there and found, how many boxes were right (IoU >= 0.5, greedy by confidence),
how many of those carry the right label, whether the whole image was read perfectly, and how long it took.
:func:`summarize` turns rows into detection precision/recall, label accuracy, end-to-end tile F1, the share of
perfect images, the confusion matrix and latency; :func:`impossible_reads` uses the rules engine as an
independent check (a reading with more copies of a tile than the game has is certainly wrong).
"""

from __future__ import annotations

import csv
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from referee.profiles import DEFAULT_PROFILE, get_profile
from referee.tiles import ALL_LABELS, Tile, TileError
from vision.detections import Detections, box_iou
from vision.yolofiles import DatasetError, class_names, image_size, read_label_file

IOU_MATCH = 0.5
"""Overlap a reading's box needs with a labelled box to count as that tile (the usual detection threshold).
``eval --match-iou 0.4`` tolerates label boxes drawn off the tile (a few in the real photos)."""
IMAGE_PATTERNS = ("*.jpg", "*.jpeg", "*.png", "*.bmp", "*.webp")
TOP_CONFUSIONS = 15


@dataclass(frozen=True, slots=True)
class Sample:
    """One labelled image: true labels (project labels, or the dataset's own name if not a tile) and boxes."""

    path: Path
    labels: tuple[str, ...]
    boxes: np.ndarray


@dataclass(frozen=True, slots=True)
class Row:
    path: str
    n_true: int
    n_pred: int
    tp: int
    fp: int
    fn: int
    label_correct: int
    e2e_tp: int
    perfect: bool
    ms: float
    pairs: tuple[tuple[str, str], ...] = field(default=())
    """(true, predicted) label of each matched box, for the confusion matrix."""
    predicted: tuple[str, ...] = field(default=())
    """Every predicted label, for the rules-engine check."""

    def to_csv(self) -> dict[str, Any]:
        data = asdict(self)
        data["pairs"] = " ".join(f"{t}>{p}" for t, p in self.pairs if t != p)
        data["predicted"] = " ".join(self.predicted)
        return data


# -- the data -------------------------------------------------------------------------------------------


def _project_label(name: str) -> str:
    try:
        return str(Tile.parse(name))
    except TileError:
        return name


def load_yolo_folder(data_dir: str | Path) -> list[Sample]:
    """The images of a YOLO folder (``images/``, ``labels/``) with their boxes (plain boxes or polygons)."""
    data_dir = Path(data_dir)
    images_dir = data_dir / "images"
    if not images_dir.is_dir():
        raise DatasetError(f"{data_dir}: no images/ folder (expected a YOLO dataset: images/, labels/, data.yaml)")
    names = [_project_label(n) for n in class_names(data_dir)]
    paths = sorted(p for pattern in IMAGE_PATTERNS for p in images_dir.rglob(pattern))
    if not paths:
        raise DatasetError(f"{images_dir}: no images")
    samples = []
    for path in paths:
        label_file = data_dir / "labels" / path.relative_to(images_dir).with_suffix(".txt")
        width, height = image_size(path)
        objects = read_label_file(label_file, names, width, height)
        boxes = np.asarray([[*points.min(axis=0), *points.max(axis=0)] for _, points in objects], np.float32)
        samples.append(Sample(path, tuple(name for name, _ in objects), boxes.reshape(-1, 4)))
    return samples


def load_real_split(data_dir: str | Path, split: str) -> list[Sample]:
    """The held-out (or training) real photos of ``../shared/data`` via :mod:`vision.realdata`."""
    from vision import realdata

    root = Path(data_dir)
    if not (root / "images").is_dir() and (root / realdata.DATASET_NAME / "images").is_dir():
        root = root / realdata.DATASET_NAME
    return [
        Sample(photo.path, tuple(t.label for t in photo.tiles), np.asarray([t.box for t in photo.tiles], np.float32))
        for photo in realdata.load_photos(root, split)
    ]


# -- per image ------------------------------------------------------------------------------------------


def match(true_boxes: np.ndarray, predicted: Detections, iou: float = IOU_MATCH) -> list[tuple[int, int]]:
    """Greedy matching, most confident prediction first: (true index, predicted index) pairs with IoU >= iou."""
    if not len(true_boxes) or not len(predicted):
        return []
    overlaps = box_iou(true_boxes, predicted.xyxy)
    taken = np.zeros(len(true_boxes), bool)
    pairs = []
    for j in np.argsort(-predicted.confidence, kind="stable"):
        candidates = np.where(taken, -1.0, overlaps[:, j])
        i = int(candidates.argmax())
        if candidates[i] >= iou:
            taken[i] = True
            pairs.append((i, int(j)))
    return pairs


def score_image(sample: Sample, predicted: Detections, ms: float, *, iou: float = IOU_MATCH) -> Row:
    pairs = match(sample.boxes, predicted, iou)
    labels = predicted.labels
    label_pairs = tuple((sample.labels[i], labels[j]) for i, j in pairs)
    correct = sum(t == p for t, p in label_pairs)
    n_true, n_pred, tp = len(sample.labels), len(predicted), len(pairs)
    return Row(
        path=str(sample.path),
        n_true=n_true,
        n_pred=n_pred,
        tp=tp,
        fp=n_pred - tp,
        fn=n_true - tp,
        label_correct=correct,
        e2e_tp=correct,
        perfect=correct == n_true == n_pred,
        ms=round(ms, 2),
        pairs=label_pairs,
        predicted=tuple(labels),
    )


class Reader(Protocol):
    """Anything with ``read(image_bgr) -> Detections`` (a :class:`vision.recognition.TileReader`)."""

    def read(self, image_bgr: np.ndarray) -> Detections: ...


def evaluate(
    reader: Reader,
    data_dir: str | Path,
    *,
    split: str | None = None,
    limit: int | None = None,
    progress: Callable[[Row], None] | None = None,
    match_iou: float = IOU_MATCH,
) -> tuple[list[Row], dict[str, Any]]:
    """Read every image of a YOLO folder (or the real photos' ``split``) and score it: (rows, summary)."""
    from vision.recognition import load_image

    samples = load_real_split(data_dir, split) if split else load_yolo_folder(data_dir)
    if limit is not None:
        samples = samples[:limit]
    rows = []
    for sample in samples:
        image = load_image(sample.path)
        start = time.perf_counter()
        predicted = reader.read(image)
        row = score_image(sample, predicted, (time.perf_counter() - start) * 1e3, iou=match_iou)
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows, {**summarize(rows), "match_iou": match_iou}


# -- from the rows ---------------------------------------------------------------------------------------


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def confusion_matrix(rows: Iterable[Row]) -> np.ndarray:
    """53 x 53 counts, true label by row, predicted by column (pairs outside the 53 labels are left out)."""
    index = {label: i for i, label in enumerate(ALL_LABELS)}
    matrix = np.zeros((len(ALL_LABELS), len(ALL_LABELS)), np.int64)
    for row in rows:
        for true, predicted in row.pairs:
            if true in index and predicted in index:
                matrix[index[true], index[predicted]] += 1
    return matrix


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    total = Counter()
    for row in rows:
        total.update({k: getattr(row, k) for k in ("n_true", "n_pred", "tp", "fp", "fn", "label_correct", "e2e_tp")})
    precision = _ratio(total["e2e_tp"], total["n_pred"])
    recall = _ratio(total["e2e_tp"], total["n_true"])
    f1 = round(2 * precision * recall / (precision + recall), 4) if precision and recall else 0.0
    confusions = Counter(pair for row in rows for pair in row.pairs if pair[0] != pair[1])
    times = [row.ms for row in rows]
    return {
        "images": len(rows),
        "tiles_true": total["n_true"],
        "tiles_predicted": total["n_pred"],
        "detection": {
            "precision": _ratio(total["tp"], total["n_pred"]),
            "recall": _ratio(total["tp"], total["n_true"]),
        },
        "label_accuracy": _ratio(total["label_correct"], total["tp"]),
        "end_to_end": {"precision": precision, "recall": recall, "f1": f1},
        "perfect_images": _ratio(sum(row.perfect for row in rows), len(rows)),
        "impossible_reads": impossible_reads(rows),
        "top_confusions": [
            {"true": t, "predicted": p, "count": n} for (t, p), n in confusions.most_common(TOP_CONFUSIONS)
        ],
        "confusion": {"labels": list(ALL_LABELS), "matrix": confusion_matrix(rows).tolist()},
        "ms": {
            "mean": round(statistics.fmean(times), 2) if times else None,
            "median": round(statistics.median(times), 2) if times else None,
        },
    }


def impossible_reads(rows: Iterable[Row], profile: str = DEFAULT_PROFILE) -> int:
    """Images whose reading has more copies of some tile (or more jokers) than the game has."""
    rules = get_profile(profile)
    count = 0
    for row in rows:
        seen = Counter(label for label in row.predicted if label in ALL_LABELS)
        if any(n > (rules.jokers if label == "joker" else rules.copies) for label, n in seen.items()):
            count += 1
    return count


def write_csv(rows: Sequence[Row], path: str | Path) -> None:
    fields = list(Row.__dataclass_fields__)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(row.to_csv())


def format_summary(summary: dict[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    det, e2e = summary["detection"], summary["end_to_end"]
    lines = [
        f"images {summary['images']}, tiles {summary['tiles_true']} true / {summary['tiles_predicted']} predicted"
        f" (a box matches a label at IoU >= {summary.get('match_iou', IOU_MATCH)})",
        f"detection     precision {pct(det['precision'])}  recall {pct(det['recall'])}",
        f"labels        accuracy on matched boxes {pct(summary['label_accuracy'])}",
        f"end to end    precision {pct(e2e['precision'])}  recall {pct(e2e['recall'])}  F1 {pct(e2e['f1'])}",
        f"perfect images {pct(summary['perfect_images'])}; impossible readings {summary['impossible_reads']}",
        f"time per image: mean {summary['ms']['mean']} ms, median {summary['ms']['median']} ms",
    ]
    if summary["top_confusions"]:
        lines.append("top confusions: " + ", ".join(
            f"{c['true']}->{c['predicted']} x{c['count']}" for c in summary["top_confusions"][:8]
        ))  # fmt: skip
    return "\n".join(lines)
