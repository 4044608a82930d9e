"""Recognition evaluation: one row per image, headline numbers computed from the rows.

A row says how many tiles were there and found, how many boxes were right (IoU >= 0.5, greedy by confidence),
how many of those carry the right label, whether the whole image was read perfectly, and how long it took.
:func:`summarize` turns rows into detection precision/recall, label accuracy, end-to-end tile F1, the share of
perfect images, the confusion matrix and latency; :func:`impossible_reads` uses the rules engine as an
independent check (a reading with more copies of a tile than the game has is certainly wrong).

Each image belongs to a group: a synthetic image to its tile edition (its sidecar ``meta/*.json``, the
renderer's ``style.edition``), any other image to the folder it was read from. :func:`group_summaries` gives
one row per group (detection, tile F1, wrong labels read with confidence >= 0.8, colours flipped wholesale,
time per photo) beside the overall figures.

A labelled tile may lie under a glare that washes it white: its ink lifted as light as its body, nothing left to
see (:mod:`vision.runtime.glare`; the synthetic scenes' "readable" knows occlusion, not light). Such a tile is
measured from the photo's own pixels (:func:`washed_out`), still counted as missed in the plain figures, and
reported apart: the ``visible`` figures leave out the washed-out tiles and any box matched to one. What the camera
cannot show, the referee answers with a blind-spot REVIEW, not a reading.

Where a synthetic image's sidecar lists the sets laid on its table, the reading is also grouped into a table as
``read`` and ``check`` group a photo (:func:`vision.runtime.tables.read_table`, :data:`~vision.runtime.tables.PHOTO`):
``sets`` counts the valid sets laid that the photo shows whole (every tile readable), those the table holds whole,
tile for tile in reading order (either way round), and the invalid sets it holds with no tile uncertain (what a
``check`` of the photo would send back).
"""

from __future__ import annotations

import csv
import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from referee.profiles import DEFAULT_PROFILE, get_profile
from referee.table import Table
from referee.tiles import ALL_LABELS, Tile, TileError
from vision.runtime.detections import Detections, box_iou
from vision.runtime.glare import WASHED_LEVEL
from vision.runtime.yolofiles import DatasetError, class_names, image_size, read_label_file

if TYPE_CHECKING:
    from vision.runtime.reader import Reader

NO_INK_CONTRAST = 10
"""A labelled tile is washed out when the middle of its box (less 15 % each side) is light, its darkest 5 % at
:data:`vision.runtime.glare.WASHED_LEVEL` or more in every channel, and flat: in no channel do its 5th and 95th
percentiles lie more than this many levels apart, so no ink shows, only noise. Chosen by eye on the 120 held-out
edition scenes (seed 14): of the tiles as light as that, those with a faint digit still to be made out spread 12 or
more; at 10 or less, 68 tiles of the 5,566 labelled then, none shows a digit and the reader finds none of them."""
MIDDLE_MARGIN = 0.15
"""Share of a box's width and height left out on each side before :func:`washed_out` looks: the table around a tile
and its rim."""

IOU_MATCH = 0.5
"""Overlap a reading's box needs with a labelled box to count as that tile (the usual detection threshold).
``eval --match-iou 0.4`` tolerates label boxes drawn off the tile (a few in the real photos)."""
IMAGE_PATTERNS = ("*.jpg", "*.jpeg", "*.png", "*.bmp", "*.webp")
TOP_CONFUSIONS = 15
CONFIDENT = 0.8
"""A label read at this confidence or more is not marked uncertain: read wrong, it can lead to a wrong ruling."""
LEGACY_EDITION = "legacy"
"""The group of a synthetic image whose style names no edition (datasets drawn before editions existed)."""
NUMBER_LABELS = frozenset(label for label in ALL_LABELS if label != "joker")
BLEND_MARK, BLEND_GROUP = "~", "mix"
"""A blend of two editions is named ``a~b@t`` by the renderer; blends are one group, as recipes name them."""


@dataclass(frozen=True, slots=True)
class Sample:
    """One labelled image: true labels (project labels, or the dataset's own name if not a tile) and boxes."""

    path: Path
    labels: tuple[str, ...]
    boxes: np.ndarray
    group: str = ""
    """The tile edition of a synthetic image, else the folder's name (what eval reports per group)."""
    sets: tuple[tuple[str, ...], ...] = ()
    """The valid sets laid on a synthetic image's table that it shows whole (:func:`sidecar_sets`), each in reading
    order; none for a photo."""


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
    group: str = ""
    confident_wrong: int = 0
    """Matched boxes read as another label with confidence >= ``CONFIDENT``."""
    colour_flipped: bool = False
    """Half or more of some colour's matched tiles read as number tiles of another colour."""
    left_out: int = 0
    """Boxes the reader left out as most likely not tiles (:attr:`vision.runtime.reader.Reading.left_out`)."""
    detect_ms: float = 0.0
    classify_ms: float = 0.0
    colour_ms: float = 0.0
    familiarity_ms: float = 0.0
    """The reading's own timings by step (:class:`vision.runtime.reader.ReadTimings`); ``ms`` is the whole read."""
    washed_out: int = 0
    """True tiles washed out by glare in the photo (:func:`washed_out`): counted in ``n_true`` and ``fn`` as well."""
    washed_found: int = 0
    """Of them, matched by a box (counted in ``tp``)."""
    washed_right: int = 0
    """Of them, matched and read right (counted in ``e2e_tp``)."""
    sets_true: int = 0
    """Valid sets laid on the table that the image shows whole (a synthetic image's sidecar; 0 for a photo)."""
    sets_whole: int = 0
    """Of them, held whole by the table the reading groups into (:func:`score_sets`)."""
    sets_invalid_confident: int = 0
    """Invalid sets in that table with no tile uncertain (the image's whole table: racks' rows too)."""
    table_tiles: int = 0
    """Tiles in the table the reading groups into (:func:`score_table_labels`)."""
    table_right: int = 0
    """Of them, matched to a true tile and labelled right as the table reads them (after :class:`SetContext`)."""

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
    folder = folder_name(data_dir)
    samples = []
    for path in paths:
        relative = path.relative_to(images_dir)
        label_file = data_dir / "labels" / relative.with_suffix(".txt")
        width, height = image_size(path)
        objects = read_label_file(label_file, names, width, height)
        boxes = np.asarray([[*points.min(axis=0), *points.max(axis=0)] for _, points in objects], np.float32)
        meta = read_sidecar(data_dir / "meta" / relative.with_suffix(".json"))
        group = sidecar_edition(meta) or folder
        samples.append(Sample(path, tuple(name for name, _ in objects), boxes.reshape(-1, 4), group,
                              sidecar_sets(meta)))  # fmt: skip
    return samples


def folder_name(data_dir: str | Path) -> str:
    """A real folder's group: its name (one level up for a split folder such as ``valid/``)."""
    path = Path(data_dir).resolve()
    return path.parent.name if path.name in {"train", "valid", "val", "test"} and path.parent.name else path.name


def read_sidecar(path: Path) -> dict[str, Any] | None:
    """A synthetic image's sidecar (``meta/<name>.json``); None where there is none or it cannot be read."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def sidecar_edition(meta: dict[str, Any] | None) -> str | None:
    """The tile edition a synthetic image was rendered in (its sidecar's ``style.edition``, :func:`read_sidecar`);
    None without one."""
    style = meta.get("style") if meta is not None else None
    if not isinstance(style, dict):
        return None
    edition = style.get("edition", LEGACY_EDITION)
    if not isinstance(edition, str) or not edition:
        return LEGACY_EDITION
    return BLEND_GROUP if BLEND_MARK in edition else edition


def sidecar_sets(meta: dict[str, Any] | None) -> tuple[tuple[str, ...], ...]:
    """The valid sets laid on a synthetic image's table that the photo shows whole, in reading order: its sidecar's
    (:func:`read_sidecar`) ``sets`` marked valid whose every tile is among its ``tiles`` and readable (a set partly
    hidden by a hand or an object, or partly outside the frame, cannot be read whole); none without a sidecar or where
    it lists none."""
    sets, tiles = (meta.get("sets"), meta.get("tiles")) if meta is not None else (None, None)
    if not isinstance(sets, list) or not isinstance(tiles, list):
        return ()
    shown = Counter(
        t.get("set_id") for t in tiles if isinstance(t, dict) and t.get("kind") == "set" and t.get("readable")
    )
    return tuple(
        tuple(str(label) for label in laid["labels"])
        for laid in sets
        if isinstance(laid, dict)
        and laid.get("valid")
        and isinstance(laid.get("labels"), list)
        and shown[laid.get("id")] == len(laid["labels"])
    )


def load_real_split(data_dir: str | Path, split: str, *, audited: bool = True) -> list[Sample]:
    """The held-out (or training) real photos of ``../shared/data`` via :mod:`vision.runtime.realdata` (``audited``:
    with the label defects found corrected, :func:`vision.runtime.realdata.load_photos`)."""
    from vision.runtime import realdata

    root = Path(data_dir)
    if not (root / "images").is_dir() and (root / realdata.DATASET_NAME / "images").is_dir():
        root = root / realdata.DATASET_NAME
    group = folder_name(root)
    return [
        Sample(
            photo.path,
            tuple(t.label for t in photo.tiles),
            np.asarray([t.box for t in photo.tiles], np.float32).reshape(-1, 4),
            group,
        )
        for photo in realdata.load_photos(root, split, audited=audited)
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


def washed_out(image_bgr: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """(N,) bool: which labelled boxes show a tile washed white, no ink to be seen (:data:`NO_INK_CONTRAST`), from
    the photo's own pixels."""
    image = image_bgr if image_bgr.ndim == 3 else image_bgr[..., None]
    height, width = image.shape[:2]
    washed = np.zeros(len(boxes), bool)
    for i, (x0, y0, x1, y1) in enumerate(np.asarray(boxes, np.float64).reshape(-1, 4)):
        dx, dy = (x1 - x0) * MIDDLE_MARGIN, (y1 - y0) * MIDDLE_MARGIN
        top, bottom = max(0, int(y0 + dy)), min(height, int(np.ceil(y1 - dy)))
        left, right = max(0, int(x0 + dx)), min(width, int(np.ceil(x1 - dx)))
        middle = image[top:bottom, left:right].reshape(-1, image.shape[2])
        if not len(middle):
            continue
        low, high = np.percentile(middle, [5, 95], axis=0)
        light = float(np.percentile(middle.min(axis=1), 5)) >= WASHED_LEVEL
        washed[i] = light and float((high - low).max()) <= NO_INK_CONTRAST
    return washed


def score_image(
    sample: Sample, predicted: Detections, ms: float, *, iou: float = IOU_MATCH, washed: np.ndarray | None = None
) -> Row:
    """One image's row; ``washed`` (one flag per labelled box, :func:`washed_out`) marks tiles glare hides."""
    pairs = match(sample.boxes, predicted, iou)
    labels = predicted.labels
    white = np.zeros(len(sample.labels), bool) if washed is None else np.asarray(washed, bool)
    label_pairs = tuple((sample.labels[i], labels[j]) for i, j in pairs)
    correct = sum(t == p for t, p in label_pairs)
    confident_wrong = sum(
        sample.labels[i] != labels[j] and float(predicted.confidence[j]) >= CONFIDENT for i, j in pairs
    )
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
        group=sample.group,
        confident_wrong=confident_wrong,
        colour_flipped=flips_a_colour(label_pairs),
        washed_out=int(white.sum()),
        washed_found=sum(bool(white[i]) for i, _ in pairs),
        washed_right=sum(bool(white[i]) and sample.labels[i] == labels[j] for i, j in pairs),
    )


def _colour(label: str) -> str:
    return label.split("-")[0]


def flips_a_colour(pairs: Iterable[tuple[str, str]]) -> bool:
    """Half or more of some colour's matched tiles read as number tiles of another colour. Jokers aside, both
    ways: a number read as a joker is a misread shape, not a colour (``bench colour`` counts it as one)."""
    by_colour: dict[str, list[str]] = {}
    for true, predicted in pairs:
        if true in NUMBER_LABELS and predicted in NUMBER_LABELS:
            by_colour.setdefault(_colour(true), []).append(_colour(predicted))
    return any(sum(c != colour for c in seen) * 2 >= len(seen) for colour, seen in by_colour.items())


def evaluate(
    reader: Reader,
    data_dir: str | Path,
    *,
    split: str | None = None,
    limit: int | None = None,
    progress: Callable[[Row], None] | None = None,
    match_iou: float = IOU_MATCH,
    audited: bool = True,
) -> tuple[list[Row], dict[str, Any]]:
    """Read every image of a YOLO folder (or the real photos' ``split``, their labels ``audited`` or as published)
    and score it: (rows, summary)."""
    from vision.runtime import realdata
    from vision.runtime.recognition import load_image
    from vision.runtime.tables import PHOTO, read_table

    samples = load_real_split(data_dir, split, audited=audited) if split else load_yolo_folder(data_dir)
    labels = (realdata.audit_summary() if audited else "labels as published") if split else "labels as in the folder"
    if limit is not None:
        samples = samples[:limit]
    rows = []
    for sample in samples:
        image = load_image(sample.path)
        start = time.perf_counter()
        reading = reader.read(image)
        ms = (time.perf_counter() - start) * 1e3
        row = score_image(sample, reading.detections, ms, iou=match_iou, washed=washed_out(image, sample.boxes))
        timings = reading.timings
        table = read_table(reading, PHOTO).table
        sets = score_sets(sample.sets, table)
        table_tiles, table_right = score_table_labels(sample, table, match_iou)
        row = replace(
            row,
            sets_true=sets.laid,
            sets_whole=sets.whole,
            sets_invalid_confident=sets.invalid_confident,
            table_tiles=table_tiles,
            table_right=table_right,
            left_out=len(reading.left_out),
            detect_ms=round(timings.detect_ms, 2),
            classify_ms=round(timings.classify_ms, 2),
            colour_ms=round(timings.colour_ms, 2),
            familiarity_ms=round(timings.familiarity_ms, 2),
        )
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows, {**summarize(rows), "match_iou": match_iou, "labels": labels}


@dataclass(frozen=True, slots=True)
class SetFigures:
    """One reading's table against the valid sets laid (:func:`score_sets`)."""

    laid: int = 0
    """Valid sets laid that the image shows whole."""
    whole: int = 0
    """Of them, held whole by the reading's table, tile for tile in reading order (either way round)."""
    invalid_confident: int = 0
    """Invalid sets in that table with no tile uncertain."""


def score_sets(laid: Sequence[Sequence[str]], table: Table) -> SetFigures:
    """The table a reading groups into (as ``read`` and ``check`` group a photo: ``read_table(reading, PHOTO)``)
    against the valid sets ``laid`` on the photo's table; nothing where none were laid (a photo: its sets are not
    known)."""
    if not laid:
        return SetFigures()

    def either_way(labels: Sequence[str]) -> tuple[str, ...]:
        return min(tuple(labels), tuple(labels)[::-1])

    held = Counter(either_way([str(tile) for tile in tiles]) for tiles in table.sets)
    whole = 0
    for labels in map(either_way, laid):  # two copies of one set laid are two sets: each needs its own
        if held[labels]:
            held[labels] -= 1
            whole += 1
    doubted = {place[0] for place in table.uncertain}
    invalid = sum(1 for k, tiles in enumerate(table.sets) if k not in doubted and not tiles.is_valid())
    return SetFigures(len(laid), whole, invalid)


def score_table_labels(sample: Sample, table: Table, iou: float = IOU_MATCH) -> tuple[int, int]:
    """(tiles in ``table``, those matched to a true tile of ``sample`` and labelled right): the labels as ``read`` and
    ``check`` report them, where a tile that breaks its set may be re-read from the set's context
    (:class:`vision.runtime.layout.SetContext`: always uncertain) and a tile turned round read with its row."""
    placed = list(table.places())
    if not placed:
        return 0, 0
    places, labels = [place for place, _ in placed], [str(tile) for _, tile in placed]
    boxes = [table.extras[place]["box"] for place in places]
    confidence = [float(table.extras[place]["confidence"]) for place in places]
    found = Detections.of_boxes(np.asarray(boxes, np.float32), confidence)
    right = sum(sample.labels[i] == labels[j] for i, j in match(sample.boxes, found, iou))
    return len(places), right


# -- from the rows ---------------------------------------------------------------------------------------


STEPS = ("detect", "classify", "colour", "familiarity")
"""The steps of a reading, timed by the reader itself (each row's ``<step>_ms``)."""


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 2) if values else None


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


def _f1(precision: float | None, recall: float | None) -> float:
    return round(2 * precision * recall / (precision + recall), 4) if precision and recall else 0.0


@dataclass(frozen=True, slots=True)
class VisibleFigures:
    """Detection and end-to-end figures over the tiles the photo shows: the washed-out ones (:func:`washed_out`)
    and the boxes matched to them left out of both sides."""

    tiles: int
    washed_out: int
    detection_recall: float | None
    detection_precision: float | None
    f1: float

    @classmethod
    def of(cls, rows: Sequence[Row]) -> VisibleFigures:
        washed, found = sum(r.washed_out for r in rows), sum(r.washed_found for r in rows)
        n_true, n_pred = sum(r.n_true for r in rows) - washed, sum(r.n_pred for r in rows) - found
        tp = sum(r.tp for r in rows) - found
        right = sum(r.e2e_tp for r in rows) - sum(r.washed_right for r in rows)
        f1 = _f1(_ratio(right, n_pred), _ratio(right, n_true))
        return cls(n_true, washed, _ratio(tp, n_true), _ratio(tp, n_pred), f1)


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    total: Counter[str] = Counter()
    for row in rows:
        total.update({k: getattr(row, k) for k in ("n_true", "n_pred", "tp", "fp", "fn", "label_correct", "e2e_tp")})
    precision = _ratio(total["e2e_tp"], total["n_pred"])
    recall = _ratio(total["e2e_tp"], total["n_true"])
    f1 = _f1(precision, recall)
    confusions = Counter(pair for row in rows for pair in row.pairs if pair[0] != pair[1])
    times = [row.ms for row in rows]
    confident_wrong = sum(row.confident_wrong for row in rows)
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
        "as_read": as_read_figures(rows),
        "visible": asdict(VisibleFigures.of(rows)),
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
        "step_ms_median": {step: _median([getattr(row, f"{step}_ms") for row in rows]) for step in STEPS},
        "left_out": sum(row.left_out for row in rows),
        "confident_wrong": {
            "count": confident_wrong,
            "share_of_tiles": round(confident_wrong / total["n_true"], 5) if total["n_true"] else None,
        },
        "colour_flipped_images": sum(row.colour_flipped for row in rows),
        "sets": sets_summary(rows),
        "groups": [asdict(g) for g in group_summaries(rows)],
    }


def as_read_figures(rows: Sequence[Row]) -> dict[str, float | None]:
    """End-to-end precision, recall and F1 of the labels as ``read`` and ``check`` report them: the tables the
    readings group into, where a tile that breaks its set may be re-read from the set's context (uncertain)."""
    right, read, true = (sum(getattr(row, k) for row in rows) for k in ("table_right", "table_tiles", "n_true"))
    precision, recall = _ratio(right, read), _ratio(right, true)
    return {"precision": precision, "recall": recall, "f1": _f1(precision, recall)}


def sets_summary(rows: Sequence[Row]) -> dict[str, Any]:
    """The valid sets laid on synthetic tables and how many the readings' tables hold whole (:func:`score_sets`)."""
    laid, whole = sum(row.sets_true for row in rows), sum(row.sets_whole for row in rows)
    return {
        "laid": laid,
        "read_whole": whole,
        "share": _ratio(whole, laid),
        "invalid_confident": sum(row.sets_invalid_confident for row in rows),
    }


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """One edition's (or folder's) figures: what ``eval`` prints per group."""

    group: str
    images: int
    tiles: int
    detection_recall: float | None
    detection_precision: float | None
    label_accuracy: float | None
    f1: float
    """End-to-end tile F1: a tile counts when its box is found and its label is right."""
    confident_wrong: int
    confident_wrong_share: float | None
    """Of the true tiles."""
    colour_flipped_images: int
    ms_mean: float | None
    ms_median: float | None
    washed_out: int = 0
    """True tiles washed white by glare (:func:`washed_out`)."""
    visible_detection_recall: float | None = None
    visible_f1: float = 0.0
    """The figures without them (:class:`VisibleFigures`)."""
    as_read_f1: float = 0.0
    """End-to-end tile F1 of the labels as ``read`` and ``check`` report them (:func:`as_read_figures`)."""


def _group_summary(group: str, rows: Sequence[Row]) -> GroupSummary:
    n_true, n_pred = sum(r.n_true for r in rows), sum(r.n_pred for r in rows)
    tp, right = sum(r.tp for r in rows), sum(r.e2e_tp for r in rows)
    precision, recall = _ratio(right, n_pred), _ratio(right, n_true)
    wrong = sum(r.confident_wrong for r in rows)
    times = [r.ms for r in rows]
    visible = VisibleFigures.of(rows)
    return GroupSummary(
        group=group,
        images=len(rows),
        tiles=n_true,
        detection_recall=_ratio(tp, n_true),
        detection_precision=_ratio(tp, n_pred),
        label_accuracy=_ratio(sum(r.label_correct for r in rows), tp),
        f1=_f1(precision, recall),
        confident_wrong=wrong,
        confident_wrong_share=round(wrong / n_true, 5) if n_true else None,
        colour_flipped_images=sum(r.colour_flipped for r in rows),
        ms_mean=round(statistics.fmean(times), 2) if times else None,
        ms_median=round(statistics.median(times), 2) if times else None,
        washed_out=visible.washed_out,
        visible_detection_recall=visible.detection_recall,
        visible_f1=visible.f1,
        as_read_f1=as_read_figures(rows)["f1"] or 0.0,
    )


def group_summaries(rows: Sequence[Row]) -> list[GroupSummary]:
    """One summary per group (sorted by name), then the overall one (group ``all``)."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.group or "-", []).append(row)
    return [_group_summary(name, groups[name]) for name in sorted(groups)] + [_group_summary("all", rows)]


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
        f" (a box matches a label at IoU >= {summary.get('match_iou', IOU_MATCH)}; {summary.get('labels', '')})",
        f"detection     precision {pct(det['precision'])}  recall {pct(det['recall'])}",
        f"labels        accuracy on matched boxes {pct(summary['label_accuracy'])}",
        f"end to end    precision {pct(e2e['precision'])}  recall {pct(e2e['recall'])}  F1 {pct(e2e['f1'])}",
        *_as_read_line(summary.get("as_read")),
        *_visible_line(summary.get("visible")),
        f"perfect images {pct(summary['perfect_images'])}; impossible readings {summary['impossible_reads']}",
        f"time per image: mean {summary['ms']['mean']} ms, median {summary['ms']['median']} ms",
    ]
    sets = summary.get("sets")
    if sets and sets["laid"]:
        lines.append(
            f"tables        {sets['read_whole']} of the {sets['laid']} valid sets laid read whole"
            f" ({pct(sets['share'])}); invalid sets with no tile uncertain {sets['invalid_confident']}"
        )
    if "step_ms_median" in summary:
        steps = ", ".join(f"{step} {ms}" for step, ms in summary["step_ms_median"].items())
        lines.append(f"median ms by step: {steps}; boxes left out as not tiles {summary['left_out']}")
    if summary["top_confusions"]:
        lines.append("top confusions: " + ", ".join(
            f"{c['true']}->{c['predicted']} x{c['count']}" for c in summary["top_confusions"][:8]
        ))  # fmt: skip
    if summary.get("groups"):
        lines += ["", *format_groups(summary["groups"])]
    return "\n".join(lines)


def _as_read_line(as_read: dict[str, Any] | None) -> list[str]:
    if not as_read or as_read["precision"] is None:
        return []
    precision, recall, f1 = (f"{100 * (as_read[k] or 0):.1f}%" for k in ("precision", "recall", "f1"))
    return [
        f"as read       precision {precision}  recall {recall}  F1 {f1} (the labels of `read` and `check`:"
        " a tile breaking its set re-read from the set, uncertain)"
    ]


def _visible_line(visible: dict[str, Any] | None) -> list[str]:
    if not visible or not visible["washed_out"]:
        return []
    return [
        f"without the {visible['washed_out']} tiles washed white by glare (the photo shows no ink there):"
        f" detection recall {100 * (visible['detection_recall'] or 0):.1f}%, F1 {100 * visible['f1']:.1f}%"
    ]


GROUP_HEADER = ("group", "images", "tiles", "det R", "det P", "label acc", "tile F1", "wrong>=0.8", "share",
                "flipped", "ms mean", "washed", "vis det R", "vis F1", "read F1")  # fmt: skip


def format_groups(groups: Sequence[dict[str, Any]]) -> list[str]:
    """The per-group table: one line per edition or folder, then ``all``."""

    def number(value: float | None, digits: int = 4) -> str:
        return "n/a" if value is None else f"{value:.{digits}f}"

    width = max(len(GROUP_HEADER[0]), *(len(g["group"]) for g in groups))
    lines = [f"{GROUP_HEADER[0]:<{width}} " + " ".join(f"{h:>10}" for h in GROUP_HEADER[1:])]
    for g in groups:
        share = g["confident_wrong_share"]
        cells = (
            g["images"], g["tiles"], number(g["detection_recall"]), number(g["detection_precision"]),
            number(g["label_accuracy"]), number(g["f1"]), g["confident_wrong"],
            "n/a" if share is None else f"{100 * share:.2f}%", g["colour_flipped_images"], number(g["ms_mean"], 1),
            g.get("washed_out", 0), number(g.get("visible_detection_recall")), number(g.get("visible_f1", 0.0)),
            number(g.get("as_read_f1", 0.0)),
        )  # fmt: skip
        lines.append(f"{g['group']:<{width}} " + " ".join(f"{c!s:>10}" for c in cells))
    lines.append(
        f"wrong>=0.8: matched tiles read as another label with confidence >= {CONFIDENT} (share of true tiles);"
        " flipped: images with half or more of a colour's tiles read as numbers of another colour;"
        " washed: true tiles glare washes white in the photo, left out of vis det R and vis F1;"
        " read F1: the labels as `read` and `check` report them (a tile breaking its set re-read from the set)"
    )
    return lines
