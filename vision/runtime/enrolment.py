"""Enrolment: adapt the tile classifier to a venue's own set from photos of it laid out in a documented grid.

The grid (``rummikub-referee enrol --layout``): one copy of the set per photo, tiles upright as a player reads
them, rows top to bottom black, red, blue, orange, each 1 to 13 from the left, then a fifth row with the jokers
from the left (all of them in one photo, or some in each). The second copy goes in a second photo.

From each photo: the tiles are detected, fitted to grid cells (:mod:`vision.runtime.enrolgrid`: a homography from
grid cells to box centres, so any rotation and a moderate perspective are fine), and their labels come from the
grid. A photo that does not match (a cell without a tile, two tiles in one cell, a tile off the grid, a wrong number
of rows) is refused with the places named. The classifier's own readings are compared with the grid: differences are
reported (they are what enrolment is for); only readings that point at a mistake in the layout itself refuse the
photo (two colour rows each read as the other, a row read 13 to 1, two tiles each read as the other's cell), unless
``trust_grid``.

Adaptation, on the CPU in under a minute (``adapt``):

- ``network`` (the ``enrol`` command's default where the train extra's torch is installed): the classifier itself is
  fine-tuned on the grid photos' tiles cut as simulated frames (:mod:`vision.runtime.enrolcrops`), by the adapter the
  caller hands over (:func:`vision.train.enrolnet.adapt_enrolment`: the runtime never imports torch); its own label
  layer, with a temperature chosen on held-out frames, is the head, and the classifier it started from stays beside
  it (:data:`vision.runtime.models.BASE_CLASSIFIER_FILE`) for the head to be weighed with, as below;
- ``head`` (numpy only, the runtime's dependencies): every tile is cropped many times under OpenCV augmentations
  (rotation, scale and shift of the box, blur, brightness, white balance, noise, JPEG), each simulated frame
  balanced as :class:`vision.runtime.recognition.TileReader` balances a frame; the classifier's ``features`` of the
  crops train a new 53-label linear head (:mod:`vision.runtime.enrolhead`) in numpy, regularised towards the shipped
  head (fitted to its outputs) so what the classifier knew stays; a tile it reads differently from that shipped head
  is doubted (:meth:`vision.runtime.enrolhead.EnrolmentHead.read`).

The output folder holds the detector (copied), the classifier (adapted, or copied), the head and a model card (JSON
and markdown).

Size: about 600 lines, one module on purpose: the steps of one enrolment, run by :func:`enrol` alone: the readings
checked against the grid (about 55 lines), the crops' features (about 25), the head's fit and temperature (about
75), what a network adapter is given and returns (about 25) and the ``enrol`` driver (about 290: each photo's tiles
located in the grid, weak strays left out and missed tiles recovered, the model folder and its card); besides them
the layout text (``enrol --layout``). The grid's cells and the fit of a photo's detections to them are
:mod:`vision.runtime.enrolgrid`, the training crops :mod:`vision.runtime.enrolcrops`. Were it to grow, the photos'
location (``locate_photo`` to ``_recover_missing``, about 95 lines) is the part to move out.
"""

from __future__ import annotations

import datetime
import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.crops import to_input
from vision.runtime.detections import Detections
from vision.runtime.enrolcrops import (
    HOLDOUT_SMALL_DEGRADED,
    EnrolledPhoto,
    augmented_crops,
    balanced,
    crop_plain,
    network_frames,
)
from vision.runtime.enrolgrid import (
    COLOURS,
    COLUMNS,
    JOKER_ROW,
    NUMBER_CELLS,
    OFF_CELL,
    Cell,
    EnrolmentError,
    GridFit,
    far_from_grid,
    fit_grid,
    grid_problems,
    in_grid,
)
from vision.runtime.enrolhead import APART_CONFIDENCE, FEATURES_OUTPUT, HEAD_FILE, EnrolmentHead, softmax
from vision.runtime.familiarity import FAMILIARITY_FILE, file_sha256

MAX_JOKERS = 4
CARD_JSON = "model-card.json"
CARD_MARKDOWN = "model-card.md"
LABEL_INDEX = {label: i for i, label in enumerate(ALL_LABELS)}
MIN_TILES = 20
TRAIN_ROUNDS = 40
"""Augmented frames per photo whose crops train the head..."""
HOLDOUT_ROUNDS = 6
"""...and frames held out to measure it (and pick its temperature)."""
FIT_STEPS = 300
L2_TO_SHIPPED = 1e-4
"""Weight of the pull towards the shipped head (per weight, squared)."""
CONFIDENT = 0.9
SAFE_WRONG_SHARE = 0.0
"""Wrong labels at confidence >= 0.8 the head may give on held-out crops (the temperature is raised until so): none."""
MAX_TEMPERATURE = 6.0
"""A reading this confident that contradicts the grid is evidence about the layout (see :func:`check_readings`)."""


def layout_text(jokers: int = 2) -> str:
    """The grid as printed by ``enrol --layout``."""
    width = 4
    head = f"{'column':<13}" + "".join(f"{c:>{width}}" for c in range(1, COLUMNS + 1))
    rows = [
        f"row {r} {COLOURS[r - 1]:<7}" + "".join(f"{c:>{width}}" for c in range(1, COLUMNS + 1)) for r in range(1, 5)
    ]
    rows.append(f"row {JOKER_ROW} {'jokers':<7}" + "".join(f"{'J':>{width}}" for _ in range(jokers)))
    return "\n".join(
        [
            "Enrolment grid: one copy of the set per photo, every tile upright as a player reads it.",
            "  row 1: black 1-13   row 2: red 1-13   row 3: blue 1-13   row 4: orange 1-13 (yellow sets: orange)",
            f"  row 5: the jokers, from the left (all {jokers} in one photo, or some in each photo)",
            "Leave a gap of about half a tile between tiles and between rows; keep the whole grid in the frame,",
            "photographed from above or a little oblique, with the camera you referee with.",
            "The second copy: the same grid in a second photo (rows 1-4, and any jokers not yet photographed).",
            "",
            head,
            *rows,
            "",
            "Then: rummikub-referee enrol copy1.jpg copy2.jpg --out models-venue",
            "      rummikub-referee live 0 --models models-venue   (also read, detect, check, analyze)",
        ]
    )


# -- the readings against the grid -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Disagreement:
    cell: Cell
    read: str
    confidence: float

    def describe(self) -> str:
        return f"{self.cell.place()}: {self.cell.label} read as {self.read} ({self.confidence:.2f})"


def check_readings(cells: Sequence[Cell], probs: np.ndarray) -> tuple[list[Disagreement], list[str]]:
    """The classifier's readings that differ from the grid, and the layout mistakes they show (refusals).

    A set of an unfamiliar edition is often misread, so a reading alone never refuses a photo; only readings that
    two places agree on do: two colour rows each read mostly as the other's colour (rows laid out in another
    order), a row read 13 to 1 (laid out backwards), or two tiles each read confidently as the other's label.
    """
    labels = [ALL_LABELS[int(i)] for i in probs.argmax(axis=1)]
    confidence = probs.max(axis=1)
    differ = [Disagreement(c, lab, float(p)) for c, lab, p in zip(cells, labels, confidence, strict=True)
              if lab != c.label]  # fmt: skip
    mistakes = []
    votes = np.zeros((4, 4), int)
    for cell, label in zip(cells, labels, strict=True):
        if cell.row <= 4 and label != "joker":
            votes[cell.row - 1, COLOURS.index(label.split("-")[0])] += 1
    for r in range(4):
        for k in range(r + 1, 4):
            if votes[r, k] >= 7 and votes[k, r] >= 7 and votes[r, r] <= 3 and votes[k, k] <= 3:
                mistakes.append(
                    f"rows {r + 1} and {k + 1} look swapped (row {r + 1} reads as {COLOURS[k]}, row {k + 1} as"
                    f" {COLOURS[r]}): lay the rows out black, red, blue, orange"
                )
    for r in range(1, 5):
        read_numbers = [
            (cell.column, int(label.split("-")[1]))
            for cell, label in zip(cells, labels, strict=True)
            if cell.row == r and label != "joker" and cell.column != 7
        ]
        backwards = sum(n == COLUMNS + 1 - c for c, n in read_numbers)
        forwards = sum(n == c for c, n in read_numbers)
        if backwards >= 7 and forwards <= 2:
            mistakes.append(f"row {r} ({COLOURS[r - 1]}) reads 13 to 1: lay each row out 1 to 13 from the left")
    by_label = {c.label: (c, lab, p) for c, lab, p in zip(cells, labels, confidence, strict=True) if c.row <= 4}
    for cell, label, p in by_label.values():
        other = by_label.get(label)
        if other and cell.label < label and other[1] == cell.label and min(p, other[2]) >= CONFIDENT:
            mistakes.append(f"{cell.place()} and {other[0].place()} look swapped ({cell.label} and {label})")
    return differ, mistakes


# -- crops, augmentation, features ------------------------------------------------------------------------


class FeatureReader:
    """The classifier's ``probs``, ``features`` and up direction for crops (ONNX Runtime)."""

    def __init__(self, session: Any) -> None:
        names = [o.name for o in session.get_outputs()]
        if FEATURES_OUTPUT not in names:
            raise EnrolmentError(
                f"the classifier has no {FEATURES_OUTPUT!r} output, which enrolment adapts: use models exported with"
                " it (the shipped models/)"
            )
        self.session = session
        self.input = session.get_inputs()[0].name
        self.index = {name: names.index(name) for name in ("probs", FEATURES_OUTPUT, "angle_deg") if name in names}

    def read(self, crops: np.ndarray, batch: int = 256) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        probs, features, angles = [], [], []
        for start in range(0, len(crops), batch):
            out = self.session.run(None, {self.input: to_input(crops[start : start + batch])})
            probs.append(np.asarray(out[self.index["probs"]], np.float32))
            features.append(np.asarray(out[self.index[FEATURES_OUTPUT]], np.float32))
            angles.append(np.asarray(out[self.index["angle_deg"]], np.float32).reshape(-1))
        return np.concatenate(probs), np.concatenate(features), np.concatenate(angles)


# -- the head ----------------------------------------------------------------------------------------------


def shipped_head(features: np.ndarray, probs: np.ndarray) -> EnrolmentHead:
    """The classifier's own last layer, recovered from its outputs: log-probabilities are linear in the features up
    to a per-crop constant, so least squares on class-centred log-probabilities finds it (exact up to rounding)."""
    logp = np.log(np.clip(probs.astype(np.float64), 1e-30, None))
    target = logp - logp.mean(axis=1, keepdims=True)
    design = np.column_stack([features.astype(np.float64), np.ones(len(features))])
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    return EnrolmentHead(solution[:-1].T.astype(np.float32), solution[-1].astype(np.float32))


def fit_head(features: np.ndarray, labels: np.ndarray, start: EnrolmentHead, steps: int = FIT_STEPS) -> EnrolmentHead:
    """Multinomial logistic regression from ``start`` (Adam, full batch), pulled towards ``start``."""
    x = features.astype(np.float32)
    scale = float(np.sqrt((x**2).sum(axis=1).mean())) or 1.0
    onehot = np.eye(len(ALL_LABELS), dtype=np.float32)[labels]
    w0, b0 = start.weight.copy(), start.bias.copy()
    w, b = w0.copy(), b0.copy()
    moments = [np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)]
    rate = 0.05 / scale
    for step in range(1, steps + 1):
        p = softmax(x @ w.T + b)
        error = (p - onehot) / len(x)
        grad_w = error.T @ x + 2 * L2_TO_SHIPPED * (w - w0)
        grad_b = error.sum(axis=0) + 2 * L2_TO_SHIPPED * (b - b0)
        for k, (param, grad) in enumerate(((w, grad_w), (b, grad_b))):
            m, v = moments[2 * k], moments[2 * k + 1]
            m[:] = 0.9 * m + 0.1 * grad
            v[:] = 0.999 * v + 0.001 * grad**2
            param -= rate * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return EnrolmentHead(w.astype(np.float32), b.astype(np.float32))


def with_temperature(
    head: EnrolmentHead, features: np.ndarray, labels: np.ndarray, own: np.ndarray | None = None
) -> tuple[EnrolmentHead, float]:
    """The head with a temperature chosen on held-out crops: the one that predicts them best (at least 1: never
    sharper than fitted), raised until at most :data:`SAFE_WRONG_SHARE` of them are read wrong with confidence
    >= 0.8 (a confident wrong label can turn a valid set invalid; an unsure one only asks for REVIEW). Where the
    classifier's own head agrees on a familiar-looking tile, the referee reads it as confidently as that head
    (:meth:`EnrolmentHead.read`): the temperature bounds the rest. With ``own`` (the shipped classifier's
    probabilities of the same crops), the wrong labels are counted as the referee reads them, weighed with it: a
    label the two disagree on is doubted anyway (an adapted network's temperature; the numpy head's ignores it)."""
    logits = head.logits(features).astype(np.float64)
    rows = np.arange(len(logits))

    def nll(t: float) -> float:
        z = logits / t
        z -= z.max(axis=1, keepdims=True)
        return float(-(z[rows, labels] - np.log(np.exp(z).sum(axis=1))).mean())

    def wrong_confident(t: float) -> float:
        tempered = EnrolmentHead(head.weight / t, head.bias / t)
        probs = softmax(logits / t) if own is None else tempered.read(features, own)
        return float(((probs.argmax(axis=1) != labels) & (probs.max(axis=1) >= 0.8)).mean())

    grid = [round(float(t), 2) for t in np.arange(1.0, MAX_TEMPERATURE + 0.01, 0.1)]
    best = min(grid, key=nll)
    t = next((t for t in grid if t >= best and wrong_confident(t) <= SAFE_WRONG_SHARE), grid[-1])
    return EnrolmentHead(head.weight / t, head.bias / t, t), t


@dataclass(frozen=True, slots=True)
class Figures:
    """Accuracy of a head on crops, and wrong labels read with confidence >= 0.8."""

    crops: int
    accuracy: float
    wrong_confident: int

    @classmethod
    def of(cls, probs: np.ndarray, labels: np.ndarray) -> Figures:
        read = probs.argmax(axis=1)
        wrong = read != labels
        return cls(len(labels), round(float((~wrong).mean()), 4), int((wrong & (probs.max(axis=1) >= 0.8)).sum()))


# -- the network adapted (by the caller's adapter: the train extra) -------------------------------------------

ADAPTATIONS = ("network", "head")


@dataclass(frozen=True, slots=True)
class NetworkAdaptation:
    """What a :data:`NetworkAdapter` returns: the adapted classifier's label layer as the head (its temperature
    chosen), how it was trained (for the card), and the adapted features of the held-out and the photos' crops."""

    head: EnrolmentHead
    temperature: float
    details: dict[str, Any]
    hold_features: np.ndarray
    plain_features: np.ndarray


NetworkAdapter = Callable[
    [Path, Sequence[EnrolledPhoto], np.ndarray, np.ndarray, np.ndarray, np.ndarray, Path, int], NetworkAdaptation
]
"""``(source classifier, photos, held-out crops, their labels, the source's probabilities of them, the photos'
crops, output folder, seed) -> NetworkAdaptation``; it writes the adapted classifier (and the source beside it,
:data:`vision.runtime.models.BASE_CLASSIFIER_FILE`) into the folder. :func:`vision.train.enrolnet.adapt_enrolment`
is the one: the runtime never imports torch, so ``enrol``'s caller hands it over."""


# -- the whole enrolment --------------------------------------------------------------------------------------


@dataclass
class Enrolment:
    out: Path
    photos: list[EnrolledPhoto]
    tiles: int
    jokers: int
    figures: dict[str, dict[str, Figures]]
    """``photos`` (the enrolled crops themselves) and ``holdout`` (held-out augmented frames), each
    ``before`` / ``after``."""
    temperature: float
    seconds: float
    warnings: list[str] = field(default_factory=list)
    adaptation: str = "head"
    """``network`` (the classifier fine-tuned; its own label layer is the head) or ``head`` (a head on the shipped
    classifier's features)."""
    network: dict[str, Any] | None = None
    """How the network was adapted (``network`` only)."""

    def card(self) -> dict[str, Any]:
        if self.adaptation == "network":
            what = (
                "the adapted classifier's own label layer (every layer fine-tuned on the CPU with torch: cross-entropy"
                " on the tiles' augmented crops, the shipped network's outputs kept on the table beside them and its"
                " up direction on every crop; vision/train/enrolnet.py), its temperature chosen on held-out frames"
            )
        else:
            what = (
                "53-label linear head on the classifier's features, fitted in numpy (logistic regression,"
                f" {FIT_STEPS} Adam steps, pulled towards the shipped head with weight {L2_TO_SHIPPED}); a tile it"
                f" reads differently from the classifier's own head is doubted (at most {APART_CONFIDENCE})"
            )
        return {
            "kind": "enrolment",
            "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "photos": [
                {"name": p.path.name, "sha256": p.sha256, "tiles": len(p.boxes), "read_differently": len(p.differ)}
                for p in self.photos
            ],
            "tiles_enrolled": self.tiles,
            "jokers_enrolled": self.jokers,
            "adaptation": self.adaptation,
            **({"network": self.network} if self.network is not None else {}),
            "head": {
                "file": HEAD_FILE,
                "what": what,
                "train_frames_per_photo": TRAIN_ROUNDS if self.adaptation == "head" else None,
                "holdout_frames_per_photo": HOLDOUT_ROUNDS,
                "temperature": self.temperature,
            },
            "figures": {k: {h: asdict(f) for h, f in v.items()} for k, v in self.figures.items()},
            "read_differently_before": [d.describe() for p in self.photos for d in p.differ],
            "warnings": self.warnings,
            "seconds": round(self.seconds, 1),
        }


def locate_photo(reader: Any, path: Path, trust_grid: bool) -> EnrolledPhoto:
    """Detect the tiles of one grid photo, fit them to the grid, take their labels from it (or refuse)."""
    from vision.runtime.recognition import load_image

    image = load_image(path)
    found: Detections = reader.read(image).detections
    if len(found) < MIN_TILES:
        raise EnrolmentError(
            f"{path}: found {len(found)} tiles; a copy of the set laid out has 52 to {52 + MAX_JOKERS}"
            " (see rummikub-referee enrol --layout)"
        )
    fit = fit_grid(found.xyxy, np.asarray(found.data["angle_deg"]))
    found, fit = _without_weak_strays(found, fit)
    found, fit = _recover_missing(reader, image, found, fit)
    if problems := grid_problems(fit):
        shown = "; ".join(problems[:8]) + (f"; and {len(problems) - 8} more" if len(problems) > 8 else "")
        raise EnrolmentError(f"{path}: does not match the enrolment grid: {shown}")
    differ, mistakes = check_readings(fit.cells, np.asarray(found.data["probs"]))
    if mistakes and not trust_grid:
        raise EnrolmentError(
            f"{path}: the layout looks wrong: {'; '.join(mistakes[:4])} (if the grid is right, add --trust-grid)"
        )
    labels = np.array([LABEL_INDEX[c.label] for c in fit.cells])
    return EnrolledPhoto(path, file_sha256(path), image, found.xyxy, labels, np.asarray(found.data["angle_deg"]),
                         tuple(differ))  # fmt: skip


WEAK_BOX = 0.5
"""A box the detector is less sure of than this, off the grid or doubling a cell's tile, is the table, not a tile."""
RECOVER_CONFIDENCE = 0.05
"""Detector confidence enough for a tile found where the grid says one lies (the detector does not know the set)."""


def _without_weak_strays(found: Detections, fit: GridFit) -> tuple[Detections, GridFit]:
    """Leave out boxes far from the grid, and weak boxes off the grid, outside it, or in a cell a stronger box
    holds."""
    strength = np.asarray(found.data["detector_confidence"])
    best: dict[Cell, int] = {}
    for i, cell in enumerate(fit.cells):
        if cell not in best or strength[i] > strength[best[cell]]:
            best[cell] = i
    keep = np.array(
        [
            not far_from_grid(cell)
            and (strength[i] >= WEAK_BOX or (fit.residual[i] < OFF_CELL and in_grid(cell) and best[cell] == i))
            for i, cell in enumerate(fit.cells)
        ],
        bool,
    )
    cells = tuple(c for c, k in zip(fit.cells, keep, strict=True) if k)
    kept = GridFit(cells, fit.residual[keep], fit.homography, fit.origin)
    return found[keep], kept


def _recover_missing(reader: Any, image: np.ndarray, found: Detections, fit: GridFit) -> tuple[Detections, GridFit]:
    """Look again, at tile scale and low confidence, in each number cell that has no box: an unfamiliar edition's
    tile the detector missed is found where the grid says it lies; an empty cell stays empty."""
    from vision.runtime.recognition import Region

    have = set(fit.cells)
    offset = fit.origin
    wanted = [c for c in (*NUMBER_CELLS, *(Cell(JOKER_ROW, k) for k in range(1, MAX_JOKERS + 1))) if c not in have]
    if not wanted or not len(found):
        return found, fit
    joker_reach = max((c.column for c in have if c.row == JOKER_ROW), default=0) + 1
    size = float(np.median(np.maximum(found.xyxy[:, 2] - found.xyxy[:, 0], found.xyxy[:, 3] - found.xyxy[:, 1])))
    detector = reader.detector
    confidence, detector.confidence = detector.confidence, RECOVER_CONFIDENCE
    added, cells = [], []
    try:
        for cell in wanted:
            grid_xy = np.array([[[cell.column - 1 + offset[0], cell.row - 1 + offset[1]]]], np.float64)
            x, y = cv2.perspectiveTransform(grid_xy, fit.homography)[0, 0]
            if cell.row == JOKER_ROW and cell.column > joker_reach:
                continue  # jokers from the left: look left of those found, and one cell further
            region = Region(x - 1.2 * size, y - 1.2 * size, x + 1.2 * size, y + 1.2 * size, width_px=int(2.4 * 40))
            near = detector.detect_region(image, region)
            if not len(near):
                continue
            centres = (near.xyxy[:, :2] + near.xyxy[:, 2:]) / 2
            distance = np.linalg.norm(centres - [x, y], axis=1)
            best = int(distance.argmin())
            if distance[best] < 0.3 * size:
                added.append(near[best : best + 1])
                cells.append(cell)
                have.add(cell)
    finally:
        detector.confidence = confidence
    if not added:
        return found, fit
    extra = reader.classifier.classify(image, Detections.merge(added))
    merged = Detections.merge([found, extra])
    residual = np.concatenate([fit.residual, np.zeros(len(cells))])
    return merged, GridFit((*fit.cells, *cells), residual, fit.homography, fit.origin)


def enrol(
    photos: Sequence[Path],
    out: Path,
    models: Path,
    *,
    jokers: int = 2,
    trust_grid: bool = False,
    seed: int = 0,
    adapt: str = "head",
    adapter: NetworkAdapter | None = None,
    notes: Sequence[str] = (),
) -> Enrolment:
    """Enrol a set from its grid photos into the model folder ``out`` (see the module's docstring). ``adapt``:
    ``network`` (the classifier fine-tuned by ``adapter``, :func:`vision.train.enrolnet.adapt_enrolment`, which needs
    the train extra) or ``head`` (a linear head on the shipped features, numpy only). ``notes``: warnings the caller
    adds to the card (``enrol`` says so when it fitted a head because torch is not installed)."""
    from vision.runtime.models import BASE_CLASSIFIER_FILE, float_weights
    from vision.runtime.recognition import CLASSIFIER_FILE, DETECTOR_FILE, OnnxTileClassifier, TableColour, TileReader

    start = time.perf_counter()
    warnings = list(notes)
    if adapt not in ADAPTATIONS:
        raise EnrolmentError(f"unknown adaptation {adapt!r}: one of {', '.join(ADAPTATIONS)}")
    if adapt == "network" and adapter is None:
        raise EnrolmentError("adapting the network needs an adapter (vision.train.enrolnet.adapt_enrolment)")
    check_out_folder(out, models)
    # enrolment starts from the classifier's own head, and from the classifier an adapted one started from
    source = models / BASE_CLASSIFIER_FILE if (models / BASE_CLASSIFIER_FILE).is_file() else models / CLASSIFIER_FILE
    classifier = OnnxTileClassifier(source)
    classifier.head, classifier.base_path = None, None
    reader = TileReader(  # the grid names the tiles: no look is needed for their confidence
        models,
        not_a_tile=0.0,
        colour=TableColour(balance=True, check=False),
        rescale=False,
        classifier=classifier,
        turned_look=False,
    )
    reader.check_models()
    features_of = FeatureReader(classifier.session)
    enrolled = [locate_photo(reader, Path(p), trust_grid) for p in photos]
    found_jokers = sum(int((p.labels == LABEL_INDEX["joker"]).sum()) for p in enrolled)
    if found_jokers != jokers:
        warnings.append(f"{found_jokers} joker(s) in the photos, {jokers} expected (--jokers): jokers read as enrolled")
    rng = np.random.default_rng(seed)
    # (probabilities, features, labels) arrays, concatenated below; the network is trained on frames of its own
    train: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    hold: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    plain: tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]] = ([], [], [])
    hold_crops, plain_crops = [], []
    for photo in enrolled:
        crops = crop_plain(photo)
        plain_crops.append(crops)
        for part, values in zip(plain, (*features_of.read(crops)[:2], photo.labels), strict=True):
            part.append(values)
        if adapt == "network":  # held out: frames as the network trains on (network_frames), of this photo
            held = network_frames([photo], rng, HOLDOUT_ROUNDS, degrade_small=HOLDOUT_SMALL_DEGRADED)
            hold_crops.append(held.tiles)
            for part, values in zip(hold, (*features_of.read(held.tiles)[:2], held.labels), strict=True):
                part.append(values)
            continue
        for round_ in range(TRAIN_ROUNDS + HOLDOUT_ROUNDS):
            frame = balanced(augmented_crops(photo.image, photo.boxes, photo.angles_deg, rng))
            probs, features, _ = features_of.read(frame)
            target = train if round_ < TRAIN_ROUNDS else hold
            for part, values in zip(target, (probs, features, photo.labels), strict=True):
                part.append(values)
    hold_p, hold_f, hold_y = (np.concatenate(x) for x in hold)
    plain_p, plain_f, plain_y = (np.concatenate(x) for x in plain)
    out.mkdir(parents=True, exist_ok=True)
    network: dict[str, Any] | None = None
    if adapter is not None and adapt == "network":
        adapted = adapter(
            source, enrolled, np.concatenate(hold_crops), hold_y, hold_p, np.concatenate(plain_crops), out, seed
        )
        head, temperature, network = adapted.head, adapted.temperature, adapted.details
        hold_f, plain_f = adapted.hold_features, adapted.plain_features
    else:
        train_p, train_f, train_y = (np.concatenate(x) for x in train)
        shipped = shipped_head(train_f, train_p)
        head, temperature = with_temperature(fit_head(train_f, train_y, shipped), hold_f, hold_y)
    # "after" as the referee reads: doubted where the head and the shipped classifier disagree
    after_hold, after_plain = head.read(hold_f, hold_p), head.read(plain_f, plain_p)
    figures = {
        "photos": {"before": Figures.of(plain_p, plain_y), "after": Figures.of(after_plain, plain_y)},
        "holdout": {"before": Figures.of(hold_p, hold_y), "after": Figures.of(after_hold, hold_y)},
    }
    copied = {models / name: out / name for name in (DETECTOR_FILE, "tile-detector.json", FAMILIARITY_FILE)}
    if adapt == "head":  # the familiarity statistics describe the source (and an INT8 one has its float weights)
        copied.update({source: out / CLASSIFIER_FILE, source.with_suffix(".json"): out / "tile-classifier.json"})
        copied[float_weights(source)] = float_weights(out / CLASSIFIER_FILE)
    for copy_from, copy_to in copied.items():
        if copy_from.is_file() and copy_from.resolve() != copy_to.resolve():
            shutil.copyfile(copy_from, copy_to)
    if adapt != "head" or not float_weights(source).is_file():  # the folder's classifier is its own float weights
        float_weights(out / CLASSIFIER_FILE).unlink(missing_ok=True)
    if adapt == "head":  # a folder enrolled before with the network adapted
        base = out / BASE_CLASSIFIER_FILE
        for stale in (base, base.with_suffix(".json"), float_weights(base)):
            stale.unlink(missing_ok=True)
    head.save(out / HEAD_FILE)
    result = Enrolment(out, enrolled, int(sum(len(p.boxes) for p in enrolled)), found_jokers, figures, temperature,
                       time.perf_counter() - start, warnings, adapt, network)  # fmt: skip
    card = result.card()
    card["base_models"] = str(models)
    (out / CARD_JSON).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    (out / CARD_MARKDOWN).write_text(card_markdown(card), encoding="utf-8")
    return result


def check_out_folder(out: Path, models: Path) -> None:
    """Refuse an output folder that holds something other than a model folder (so nothing else is overwritten)."""
    if out.exists() and not out.is_dir():
        raise EnrolmentError(f"{out}: is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / CARD_JSON).is_file() and out.resolve() != models.resolve():
        raise EnrolmentError(f"{out}: not empty and not an enrolled model folder: give a new or empty folder")


def card_markdown(card: dict[str, Any]) -> str:
    lines = [
        "# Enrolled tile models",
        "",
        f"Created {card['created']} by `rummikub-referee enrol` from {card['base_models']} in {card['seconds']} s.",
        f"Enrolled {card['tiles_enrolled']} tiles ({card['jokers_enrolled']} jokers) from:",
        "",
        *[
            f"- `{p['name']}` (sha256 {p['sha256'][:16]}…): {p['tiles']} tiles, {p['read_differently']} read"
            " differently before enrolment"
            for p in card["photos"]
        ],
        "",
        f"Head: {card['head']['what']}; temperature {card['head']['temperature']}.",
        "",
        "| crops | head | accuracy | wrong at confidence >= 0.8 |",
        "|---|---|---|---|",
    ]
    for kind, heads in card["figures"].items():
        what = "the enrolled photos" if kind == "photos" else "held-out augmented frames"
        for name, f in heads.items():
            lines.append(f"| {what} ({f['crops']}) | {name} | {f['accuracy']:.4f} | {f['wrong_confident']} |")
    if card["read_differently_before"]:
        lines += ["", "Read differently from the grid before enrolment:", ""]
        lines += [f"- {d}" for d in card["read_differently_before"][:60]]
    if card["warnings"]:
        lines += ["", *[f"Warning: {w}" for w in card["warnings"]]]
    return "\n".join(lines) + "\n"
