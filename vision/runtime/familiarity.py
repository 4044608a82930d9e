"""Never confident on the unfamiliar (issue 14, part 4): how far a tile's look is from the real training photos.

The classifier's ``features`` output (the pooled embedding its label head reads) is compared with the features
of the real training photos' tiles: the squared Mahalanobis distance to the mean of the label read, with one
covariance shared by every label (shrunk a little towards its average variance). A tile further than
``tile_threshold`` is *unfamiliar*; so is every tile of a frame of at least ``min_frame_tiles`` tiles whose
median distance is over ``frame_threshold`` (a whole set of another edition: most of its tiles look a little
off, and the few that do not are read no better); in a frame *near* it (median over :data:`NEAR_FRAME` of the
threshold), so is each tile whose own distance is over that share. An unfamiliar tile's confidence is capped at
:data:`UNFAMILIAR_CONFIDENCE`, as :mod:`vision.runtime.inkcolour` caps a colour in doubt, so the layout marks it
uncertain and the referee rules REVIEW, never REVERT. Chosen among max softmax, energy, max logit, k-nearest-neighbour
cosine and relative Mahalanobis distance on held-out editions (models/README.md, "Familiarity").

A tile unfamiliar by the tile rule alone (its frame looks familiar) keeps its confidence when a second look confirms
its reading: the mean probability of its label over its crop and the second look's eight cuts
(:data:`vision.runtime.secondlook.VARIANTS`, :func:`steady_probability`) is at least :data:`CONFIRM_PROBABILITY`.
Misreads of held-out editions in familiar frames waver under those cuts, most right readings of a rendered or glared
face do not (issue 16; models/README.md, "Familiarity"). The frame rule is never confirmed away: a whole set of another
edition stays uncertain. :class:`~vision.runtime.reader.TileReader` confirms when its second look is on.

A small tile lies further from the full-size photos' statistics: the tile threshold can depend on the tile's size in
the frame (its box's short side, px; ``size_edges`` and ``size_tile_thresholds``), fitted on the real training
photos shrunk so their tiles have that size (``fit --size-bins``); larger tiles keep ``tile_threshold``. The frame
rule can too (``--size-frame``), but that let held-out editions' errors through (models/README.md).

The median of a few tiles' scores spreads more than the median of many: the frame threshold can depend on how many
tiles the frame holds (``count_edges`` and ``count_frame_thresholds``, ``fit --frame-counts``), fitted on the real
training photos out of fold: for each count n, the ``frame_quantile`` of the medians of n correct confident tiles
drawn from one photo, times ``frame_margin``. Shipped for frames of 3-5 tiles only (``--frame-counts-never-looser``:
6 or more keep the one threshold; every count's own threshold was looser from 6 tiles up and let held-out editions'
errors through; models/README.md, "Familiarity").

The statistics depend on the classifier: after retraining it, fit them again (a few seconds on 2 cores)::

    python -m vision.runtime.familiarity fit --models models/

which writes :data:`FAMILIARITY_FILE` (class means and whitening, thresholds, the classifier's sha256) and
:data:`FAMILIARITY_CARD` (how it was fitted) beside the classifier. Thresholds come from the real training
photos only, out of fold (statistics fitted without the photo scored): ``tile_threshold`` the ``tile_quantile``
of correct confident tiles' distances, ``frame_threshold`` the ``frame_quantile`` of photos' median distances
times ``frame_margin``. ``python -m vision.runtime.familiarity evaluate`` measures it (wrong labels at confidence >= 0.8
on held-out editions before and after, the cost on the real held-out photos, time). A model folder without the
file reads as before (one warning in the log); a file fitted to another classifier is ignored with a warning.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.detections import Detections
from vision.runtime.imagefile import read_dataset_image

FAMILIARITY_FILE = "tile-classifier-familiarity.npz"
FAMILIARITY_CARD = "tile-classifier-familiarity.json"
UNFAMILIAR_CONFIDENCE = 0.5
"""An unfamiliar tile's confidence is capped here (under the layout's 0.8: uncertain, so REVIEW)."""
CONFIDENT = 0.8
"""Confidence at which a reading counts as confident (the layout's ``MIN_CONFIDENCE``)."""
NEAR_FRAME = 0.87
"""A frame whose median distance is over this share of its frame threshold is *near* unfamiliar: each of its tiles
whose own distance is over that share too is unfamiliar (the frame rule, tile by tile), never confirmed away. The
frame rule alone is a cliff: a held-out edition's frame just under it kept every tile confident (one large-print
frame of ``synth-editions-heldout-120`` at 295 against 296 kept 5 misreads). Chosen (2026-11-29, classifier v7) as
the strongest share that keeps the cost on the real held-out photos under its 1 % budget (their correct confident
tiles capped, true boxes: 13 of 1,650 at 0.87-0.9, 19 at 0.86, 20 at 0.85; 7 without the rule); on
``synth-editions-heldout-dev`` it takes 4 of 12 confident misreads (models/README.md, "Familiarity"). For photos
only: a game's frames, read at the play area's tile scale, sit nearer the photo-fitted frame threshold (bench game
1003, glare: median frame at 0.86 of it), where the rule made 3 of 155 moves REVIEW that were ruled right
(:func:`vision.game.pipeline.pipeline_reader` turns it off)."""
CONFIRM_PROBABILITY = 0.95
"""A tile unfamiliar by the tile rule alone keeps its confidence when its label's mean probability over nine cuts
(:func:`steady_probability`) is at least this. Measured on classifier v7 (2026-11-26, true boxes, tiles over the tile
threshold in frames the frame rule passes): held-out editions' confident misreads 0 of 11
(``synth-editions-heldout-120``, means 0.30-0.93) and 0 of 7 (``synth-editions-heldout-dev``, 0.33-0.83) over it,
their right readings 212 of 282 and 204 of 282; at 0.9, 2 of the 11 misreads over it."""
Confirm = Callable[[Detections], np.ndarray]
"""Tiles (rows of one reading) -> each one's label's mean probability over a second look's cuts
(:func:`steady_probability` bound to a classifier, the frame and its white balance)."""
FIT_COMMAND = "python -m vision.runtime.familiarity fit --models models/"

log = logging.getLogger(__name__)
_LABEL_INDEX = {label: i for i, label in enumerate(ALL_LABELS)}


class FamiliarityLoadError(ValueError):
    """The statistics file cannot be read (damaged, or the wrong shapes)."""


@dataclass(frozen=True, slots=True)
class FitConfig:
    """How :func:`fit_familiarity` sets the statistics and thresholds."""

    tile_quantile: float = 0.99
    """Share of correct confident real training tiles (out of fold) that stay familiar (classifiers v4 and v7;
    v6 needed 0.995 to keep its cost on the real held-out photos under 1 %)."""
    frame_quantile: float = 0.99
    frame_margin: float = 1.1
    """``frame_threshold`` = this times the ``frame_quantile`` of the training photos' median distances."""
    min_frame_tiles: int = 6
    """The frame rule needs this many tiles (a median of fewer is one tile's distance)."""
    shrinkage: float = 0.1
    """The shared covariance is shrunk this much towards its mean variance (steadier inverse)."""
    folds: int = 5


@dataclass(frozen=True)
class Familiarity:
    """Fitted statistics: ``score = |features @ whiten - means[label]|^2`` (squared Mahalanobis distance)."""

    means: np.ndarray
    """(53, D) float32: each label's mean feature, whitened."""
    whiten: np.ndarray
    """(D, D) float32: a Cholesky factor of the shared precision matrix."""
    tile_threshold: float
    frame_threshold: float
    min_frame_tiles: int
    classifier_sha256: str = ""
    size_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """Ascending upper edges (px, a box's short side) of the size bins; empty: one threshold for every size (off)."""
    size_tile_thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """The tile threshold of a tile whose box's short side is under ``size_edges[i]`` (and not under the edge
    before); a tile at or over the last edge keeps ``tile_threshold``."""
    size_frame_thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """The same for the frame rule, by the frame's median short side."""
    count_edges: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    """Ascending tile counts: a frame of at least ``count_edges[i]`` tiles (and fewer than the next edge) is judged
    by ``count_frame_thresholds[i]``, one of fewer than the first by no frame rule; empty: one frame threshold
    (off). Where set, it decides the frame's threshold (``size_frame_thresholds`` are not used)."""
    count_frame_thresholds: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

    @property
    def dimensions(self) -> int:
        return int(self.whiten.shape[0])

    def _by_size(self, short_side: np.ndarray, per_bin: np.ndarray, default: float) -> np.ndarray:
        if not len(self.size_edges):
            return np.full(np.shape(short_side), default, np.float64)
        table = np.append(np.asarray(per_bin, np.float64), default)
        return table[np.searchsorted(self.size_edges, np.asarray(short_side, np.float64), side="right")]

    def frame_threshold_of(self, tiles: int) -> float:
        """The frame threshold of a frame of ``tiles`` tiles by the count bins (``frame_threshold`` without them;
        infinite under the first bin's count)."""
        if not len(self.count_edges):
            return self.frame_threshold
        i = int(np.searchsorted(self.count_edges, tiles, side="right")) - 1
        return float(self.count_frame_thresholds[i]) if i >= 0 else float(np.inf)

    def scores(self, features: np.ndarray, class_id: np.ndarray) -> np.ndarray:
        """(N,) squared distance of each feature row to the mean of its label."""
        # einsum, not @: a small product through a multithreaded BLAS waits for cores that ONNX Runtime's threads
        # still spin on after a run (measured 24 ms for 30 tiles on 2 busy cores; einsum 0.2-0.6 ms)
        z = np.einsum("nd,de->ne", np.asarray(features, np.float32), self.whiten)
        labels = np.clip(np.asarray(class_id, np.int64), 0, len(self.means) - 1)
        return ((z - self.means[labels]) ** 2).sum(axis=1)

    def unfamiliar(
        self, scores: np.ndarray, short_side: np.ndarray | None = None, near: float | None = NEAR_FRAME
    ) -> np.ndarray:
        """(N,) bool: over the tile threshold, or every tile of a frame whose median is over the frame's (see
        :meth:`rules`)."""
        tile, frame = self.rules(scores, short_side, near)
        return tile | frame

    def rules(
        self, scores: np.ndarray, short_side: np.ndarray | None = None, near: float | None = NEAR_FRAME
    ) -> tuple[np.ndarray, np.ndarray]:
        """(tile rule, frame rule), each (N,) bool: over the tile threshold; every tile of a frame whose median is
        over the frame's, and in a frame near it (median over ``near`` of it, :data:`NEAR_FRAME`; None: no such
        rule) each tile over that share too. With
        ``short_side`` (each tile's box, px) and size bins, the thresholds of each tile's size (a small tile lies
        further from the full-size real photos' statistics); with count bins, the frame threshold of its count.

        The frame is one table's tiles: tiles standing in a rack or the face-down pool, seen edge-on or from the
        front, are far from every label and would make a familiar table unfamiliar as a whole (issue 16: frames of
        a tilted camera's play-area bounding box had medians of 361-467 over a threshold of 293), so the live
        pipeline's reader judges only the play area's tiles (``TileReader.read(on_table=...)``)."""
        scores = np.asarray(scores)
        tile_threshold: np.ndarray | float = self.tile_threshold
        frame_threshold = self.frame_threshold
        if short_side is not None and len(self.size_edges) and len(scores):
            tile_threshold = self._by_size(short_side, self.size_tile_thresholds, self.tile_threshold)
            frame_threshold = float(
                self._by_size(np.median(short_side), self.size_frame_thresholds, self.frame_threshold)
            )
        if len(self.count_edges):
            frame_threshold = self.frame_threshold_of(len(scores))
        tile = scores > tile_threshold
        counted = len(scores) >= self.min_frame_tiles
        median = float(np.median(scores)) if len(scores) else 0.0
        whole = counted and median > frame_threshold
        frame = np.full(len(scores), whole)
        if near is not None and counted and median > near * frame_threshold:
            frame |= scores > near * frame_threshold
        return tile, frame

    def check(self, tiles: Detections, confirm: Confirm | None = None, near: float | None = NEAR_FRAME) -> Detections:
        """The tiles of one frame with ``familiarity`` (score), ``unfamiliar`` and ``confirmed`` in ``data``,
        unfamiliar ones' confidence capped at :data:`UNFAMILIAR_CONFIDENCE`; unchanged without a ``features`` column.
        With ``confirm``, the tiles over the tile threshold in a frame the frame rule passes are asked about; one
        whose label's mean probability comes back at :data:`CONFIRM_PROBABILITY` or over is ``confirmed``: its
        confidence is kept. ``near``: the near-frame share (:meth:`rules`; None: off)."""
        features = tiles.data.get("features")
        if features is None or not len(tiles):
            return tiles
        scores = self.scores(features, tiles.class_id)
        tile, frame = self.rules(scores, short_side(tiles.xyxy), near)
        confirmed = np.zeros(len(tiles), bool)
        asked = np.flatnonzero(tile & ~frame)
        if confirm is not None and len(asked):
            confirmed[asked] = np.asarray(confirm(tiles[asked]), np.float64) >= CONFIRM_PROBABILITY
        flagged = (tile | frame) & ~confirmed
        capped = np.where(flagged, np.minimum(tiles.confidence, UNFAMILIAR_CONFIDENCE), tiles.confidence)
        return tiles.with_(
            confidence=capped.astype(np.float32),
            familiarity=scores.astype(np.float32),
            unfamiliar=flagged,
            confirmed=confirmed,
        )

    def save(self, path: Path) -> None:
        np.savez_compressed(
            path,
            means=self.means.astype(np.float32),
            whiten=self.whiten.astype(np.float32),
            thresholds=np.array([self.tile_threshold, self.frame_threshold], np.float64),
            min_frame_tiles=np.int64(self.min_frame_tiles),
            classifier_sha256=np.array(self.classifier_sha256),
            size_edges=np.asarray(self.size_edges, np.float32),
            size_tile_thresholds=np.asarray(self.size_tile_thresholds, np.float32),
            size_frame_thresholds=np.asarray(self.size_frame_thresholds, np.float32),
            count_edges=np.asarray(self.count_edges, np.float32),
            count_frame_thresholds=np.asarray(self.count_frame_thresholds, np.float32),
        )

    @classmethod
    def load(cls, path: Path) -> Familiarity:
        try:
            with np.load(path, allow_pickle=False) as data:
                means, whiten = np.asarray(data["means"], np.float32), np.asarray(data["whiten"], np.float32)
                tile_threshold, frame_threshold = (float(v) for v in data["thresholds"])
                min_frame_tiles, sha = int(data["min_frame_tiles"]), str(data["classifier_sha256"])
                sized = [
                    np.asarray(data[name], np.float32) if name in data.files else np.zeros(0, np.float32)
                    for name in ("size_edges", "size_tile_thresholds", "size_frame_thresholds")
                ]
                counted = [
                    np.asarray(data[name], np.float32) if name in data.files else np.zeros(0, np.float32)
                    for name in ("count_edges", "count_frame_thresholds")
                ]
        except Exception as error:  # a damaged zip, a missing array, a wrong dtype: one line, named
            raise FamiliarityLoadError(f"{path}: cannot read the familiarity statistics ({error})") from None
        dims = whiten.shape[0] if whiten.ndim == 2 else -1
        if means.shape != (len(ALL_LABELS), dims) or whiten.shape != (dims, dims) or not np.isfinite(whiten).all():
            raise FamiliarityLoadError(f"{path}: familiarity statistics of the wrong shape: fit them again")
        if len({len(v) for v in sized}) != 1 or not np.all(np.diff(sized[0]) > 0):
            raise FamiliarityLoadError(f"{path}: familiarity size bins do not match their thresholds: fit them again")
        if len(counted[0]) != len(counted[1]) or not np.all(np.diff(counted[0]) > 0):
            raise FamiliarityLoadError(f"{path}: familiarity count bins do not match their thresholds: fit them again")
        return cls(means, whiten, tile_threshold, frame_threshold, min_frame_tiles, sha, *sized, *counted)


def short_side(xyxy: np.ndarray) -> np.ndarray:
    """(N,) the short side of each box, px."""
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    return np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])


def steady_probability(
    classifier: Any,
    image: np.ndarray,
    tiles: Detections,
    prepare: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """(N,) each tile's label's mean probability over nine cuts of ``image``: its crop as first cut, and the second
    look's eight (:data:`vision.runtime.secondlook.VARIANTS`: 1-2 px shifts, scales 0.9 and 1.1, turns of 6
    degrees); ``prepare`` turns the crops into what the classifier reads (the frame's white balance). A tile the second
    look looked at already carries those nine cuts' mean (its :data:`~vision.runtime.secondlook.LOOKED_PROBS` row):
    it is read from there, and only the other tiles are cut and classified."""
    from vision.runtime.secondlook import LOOKED_PROBS, VARIANTS, Variant, read_cuts

    if not len(tiles):
        return np.zeros(0)
    labels = np.asarray(tiles.class_id, np.int64)
    steady = np.full(len(tiles), np.nan)
    looked = tiles.data.get(LOOKED_PROBS)
    if looked is not None:
        looked = np.asarray(looked, np.float64)
        steady = looked[np.arange(len(tiles)), labels]
    todo = np.flatnonzero(np.isnan(steady))
    if not len(todo):
        return steady
    cuts = (Variant(), *VARIANTS)
    boxes = np.asarray(tiles.xyxy, np.float32).reshape(-1, 4)[todo]
    read = read_cuts(classifier, image, boxes, cuts, prepare)
    probs = np.asarray(read.data["probs"], np.float64).reshape(len(cuts), len(todo), -1)
    steady[todo] = probs[:, np.arange(len(todo)), labels[todo]].mean(axis=0)
    return steady


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_familiarity(classifier_path: Path) -> Familiarity | None:
    """The statistics beside a classifier, or None (with a warning) when there are none or they were fitted to
    another classifier; a damaged file is a :class:`FamiliarityLoadError`."""
    path = Path(classifier_path).parent / FAMILIARITY_FILE
    if not path.is_file():
        log.warning("no %s beside %s: unfamiliar-looking tiles are not marked uncertain", path.name, classifier_path)
        return None
    familiarity = Familiarity.load(path)
    checkable = familiarity.classifier_sha256 and Path(classifier_path).is_file()
    if checkable and familiarity.classifier_sha256 != file_sha256(Path(classifier_path)):
        log.warning("%s was fitted to another classifier: ignored (%s)", path, FIT_COMMAND)
        return None
    return familiarity


# --------------------------------------------------------------------------------------------------------- fit


@dataclass
class TileFeatures:
    """Tiles read the way :class:`vision.runtime.recognition.TileReader` reads them, on their true boxes."""

    features: list[np.ndarray] = field(default_factory=list)
    label: list[np.ndarray] = field(default_factory=list)
    pred: list[np.ndarray] = field(default_factory=list)
    confidence: list[np.ndarray] = field(default_factory=list)
    group: list[np.ndarray] = field(default_factory=list)
    """The photo each tile comes from."""
    short_side: list[np.ndarray] = field(default_factory=list)
    """Each tile's box's short side as read, px."""
    source: list[str] = field(default_factory=list)
    """Per photo: the real photo's source or the synthetic scene's edition."""
    steady: list[np.ndarray] = field(default_factory=list)
    """Each tile's :func:`steady_probability` (NaN: not measured)."""

    def add(self, tiles: Detections, labels: Sequence[int], source: str) -> None:
        self.features.append(np.asarray(tiles.data["features"], np.float32))
        self.label.append(np.asarray(labels, np.int64))
        self.pred.append(tiles.class_id.astype(np.int64))
        self.confidence.append(tiles.confidence.astype(np.float32))
        self.group.append(np.full(len(tiles), len(self.source), np.int64))
        self.short_side.append(short_side(tiles.xyxy))
        self.steady.append(np.asarray(tiles.data.get("steady", np.full(len(tiles), np.nan)), np.float64))
        self.source.append(source)

    def arrays(self) -> dict[str, np.ndarray]:
        names = ("features", "label", "pred", "confidence", "group", "short_side", "steady")
        if not self.label:
            raise ValueError("no tiles to fit the familiarity statistics on")
        return {name: np.concatenate(getattr(self, name)) for name in names}


def read_tiles(classifier: Any, image: np.ndarray, boxes: np.ndarray, *, steady: bool = False) -> Detections:
    """Balance, classify and colour-check the crops of ``boxes`` as ``TileReader.read`` does (no familiarity); with
    ``steady``, each tile's :func:`steady_probability` in ``data["steady"]`` (what confirms an unfamiliar tile)."""
    from vision.runtime.crops import crop_boxes
    from vision.runtime.inkcolour import check_colours, frame_balance, frame_body, ink_features

    crops = crop_boxes(image, boxes)
    body = frame_body(crops)
    tiles = classifier.classify_crops(frame_balance(crops, body=body).apply(crops), Detections.of_boxes(boxes))
    if "features" not in tiles.data:
        raise ValueError(f"{classifier.path}: the classifier has no 'features' output (re-export it)")
    checked = check_colours(tiles, ink_features(frame_balance(crops, exact=True, body=body).apply(crops))).detections
    if steady:
        prepare = frame_balance(crops, body=body).apply
        checked = checked.with_(steady=steady_probability(classifier, image, checked, prepare))
    return checked


def real_photo_tiles(
    classifier: Any, split: str, tile_px: float | None = None, *, steady: bool = False
) -> TileFeatures:
    """The real photos' tiles on their true boxes; with ``tile_px``, each photo first shrunk (never enlarged) so
    its median tile's short side is ``tile_px`` and passed through JPEG at :data:`SMALL_JPEG_QUALITY`, as a film
    frame's small tiles are seen (the group numbers stay those of the full-size reading)."""
    from vision.runtime import realdata

    out = TileFeatures()
    for photo in realdata.load_photos(split=split):
        tiles = [t for t in photo.tiles if t.label in _LABEL_INDEX]
        if tiles:
            image = read_dataset_image(photo.path)
            boxes = np.array([t.box for t in tiles], np.float32)
            if tile_px is not None:
                image, boxes = _shrunk(image, boxes, tile_px)
            read = read_tiles(classifier, image, boxes, steady=steady)
            out.add(read, [_LABEL_INDEX[t.label] for t in tiles], photo.source)
    return out


SMALL_JPEG_QUALITY = 75
"""JPEG quality of the shrunk real photos the size bins are fitted on (a compressed film frame's look)."""


def _shrunk(image: np.ndarray, boxes: np.ndarray, tile_px: float) -> tuple[np.ndarray, np.ndarray]:
    import cv2

    scale = min(1.0, tile_px / max(1.0, float(np.median(short_side(boxes)))))
    if scale < 1.0:
        size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        boxes = boxes * np.float32(scale)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, SMALL_JPEG_QUALITY])
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR) if ok else None
    return (image if decoded is None else decoded), boxes


def synthetic_scenes(
    root: Path, images: int | None, tile_px: float | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray, list[int], str]]:
    """(image, boxes, labels, edition) of each rendered scene's readable tiles (``rummikub-referee synth``); with
    ``tile_px``, each scene shrunk and passed through JPEG as :func:`real_photo_tiles` shrinks a photo."""

    for meta in sorted((root / "meta").glob("*.json"))[:images]:
        scene = json.loads(meta.read_text())
        tiles = [t for t in scene["tiles"] if t.get("readable") and t["label"] in _LABEL_INDEX]
        if tiles:
            image = read_dataset_image(root / scene["image"])
            boxes = np.array([t["box"] for t in tiles], np.float32)
            if tile_px is not None:
                image, boxes = _shrunk(image, boxes, tile_px)
            yield image, boxes, [_LABEL_INDEX[t["label"]] for t in tiles], str(scene["style"].get("edition", ""))


def synthetic_tiles(
    classifier: Any, root: Path, images: int | None, *, steady: bool = False, tile_px: float | None = None
) -> TileFeatures:
    out = TileFeatures()
    for image, boxes, labels, edition in synthetic_scenes(root, images, tile_px):
        out.add(read_tiles(classifier, image, boxes, steady=steady), labels, edition)
    return out


def class_statistics(features: np.ndarray, labels: np.ndarray, shrinkage: float) -> tuple[np.ndarray, np.ndarray]:
    """(means (53, D) unwhitened, whiten (D, D)) of features with their true labels (a label without tiles gets
    the overall mean)."""
    x = np.asarray(features, np.float64)
    dims = x.shape[1]
    means = np.tile(x.mean(axis=0), (len(ALL_LABELS), 1))
    for label in np.unique(labels):
        means[label] = x[labels == label].mean(axis=0)
    residual = x - means[labels]
    cov = residual.T @ residual / max(1, len(x) - 1)
    cov = (1 - shrinkage) * cov + shrinkage * np.trace(cov) / dims * np.eye(dims) + 1e-6 * np.eye(dims)
    whiten = np.linalg.cholesky(np.linalg.inv(cov))
    return means, whiten


def _familiarity(features: np.ndarray, labels: np.ndarray, config: FitConfig) -> Familiarity:
    means, whiten = class_statistics(features, labels, config.shrinkage)
    return Familiarity((means @ whiten).astype(np.float32), whiten.astype(np.float32), np.inf, np.inf, 0)


def frame_medians(scores: np.ndarray, group: np.ndarray, min_tiles: int) -> np.ndarray:
    """Median score of each group with at least ``min_tiles`` tiles."""
    return np.array([np.median(scores[group == g]) for g in np.unique(group) if (group == g).sum() >= min_tiles])


def _out_of_fold(data: dict[str, np.ndarray], config: FitConfig) -> np.ndarray:
    """Each tile's score under statistics fitted without its fold (``group % folds``: by photo)."""
    features, labels = data["features"], data["label"]
    out_of_fold = np.zeros(len(labels))
    fold = data["group"] % config.folds
    for k in range(config.folds):
        held = fold == k
        if held.any() and (~held).any():
            out_of_fold[held] = _familiarity(features[~held], labels[~held], config).scores(
                features[held], data["pred"][held]
            )
    return out_of_fold


def fit_familiarity(
    data: dict[str, np.ndarray], real: np.ndarray, config: FitConfig, classifier_sha256: str = ""
) -> tuple[Familiarity, dict[str, Any]]:
    """Statistics from every tile in ``data`` (features, label, pred, confidence, group); thresholds from the
    ``real`` tiles' out-of-fold scores. Returns the statistics and the figures of the fit."""
    features, labels, group = data["features"], data["label"], data["group"]
    out_of_fold = _out_of_fold(data, config)
    settled = real & (data["pred"] == labels) & (data["confidence"] >= CONFIDENT)
    if not settled.any():
        raise ValueError("no correct confident real tile to set the thresholds on")
    tile_threshold = float(np.quantile(out_of_fold[settled], config.tile_quantile))
    medians = frame_medians(out_of_fold[real], group[real], config.min_frame_tiles)
    frame_threshold = np.inf
    if len(medians):
        frame_threshold = float(np.quantile(medians, config.frame_quantile) * config.frame_margin)
    fitted = _familiarity(features, labels, config)
    familiarity = Familiarity(
        fitted.means, fitted.whiten, tile_threshold, frame_threshold, config.min_frame_tiles, classifier_sha256
    )
    figures = {
        "tiles": len(labels),
        "real_tiles": int(real.sum()),
        "real_photos": len(np.unique(group[real])),
        "dimensions": familiarity.dimensions,
        "tile_threshold": tile_threshold,
        "frame_threshold": frame_threshold,
        "out_of_fold_median": float(np.median(out_of_fold[settled])),
        "frames_for_frame_threshold": len(medians),
    }
    return familiarity, figures


def fit_size_thresholds(
    data: dict[str, np.ndarray],
    small: dict[str, np.ndarray],
    edges: Sequence[float],
    familiarity: Familiarity,
    config: FitConfig,
    *,
    frames_by_size: bool = True,
) -> tuple[Familiarity, dict[str, Any]]:
    """``familiarity`` with a tile and a frame threshold per size bin (upper ``edges``, px): the ``tile_quantile``
    of the out-of-fold scores of ``small``'s correct confident tiles (real training tiles read shrunk, the same
    groups as ``data``'s real tiles; ``frame``, if there, tells one shrunk copy of a photo from another) whose
    short side falls in the bin, never under the full-size threshold; the frame's likewise from the shrunk
    photos' medians (without ``frames_by_size``, the frame rule keeps one threshold). Tiles at or over the last
    edge keep today's thresholds."""
    edges_array = np.asarray(sorted(edges), np.float32)
    scores = np.zeros(len(small["label"]))
    fold, small_fold = data["group"] % config.folds, small["group"] % config.folds
    for k in range(config.folds):
        held = small_fold == k
        if held.any() and (fold != k).any():
            fitted = _familiarity(data["features"][fold != k], data["label"][fold != k], config)
            scores[held] = fitted.scores(small["features"][held], small["pred"][held])
    settled = (small["pred"] == small["label"]) & (small["confidence"] >= CONFIDENT)
    tile_bin = np.searchsorted(edges_array, small["short_side"], side="right")
    frame = small.get("frame", small["group"])
    frames_of = [frame == f for f in np.unique(frame)]
    frame_side = np.array([np.median(small["short_side"][m]) for m in frames_of])
    frame_size = np.array([m.sum() for m in frames_of])
    frame_median = np.array([np.median(scores[m]) for m in frames_of])
    frame_bin = np.searchsorted(edges_array, frame_side, side="right")
    tile_thresholds, frame_thresholds, figures = [], [], []
    for i, edge in enumerate(edges_array):
        in_bin = settled & (tile_bin == i)
        tile = familiarity.tile_threshold
        if in_bin.sum() >= 20:
            tile = max(tile, float(np.quantile(scores[in_bin], config.tile_quantile)))
        frames = (frame_bin == i) & (frame_size >= config.min_frame_tiles)
        frame_limit = familiarity.frame_threshold
        if frames_by_size and frames.sum() >= 10:
            frame_limit = max(
                frame_limit, float(np.quantile(frame_median[frames], config.frame_quantile) * config.frame_margin)
            )
        tile_thresholds.append(tile)
        frame_thresholds.append(frame_limit)
        figures.append(
            {
                "under_px": float(edge),
                "tiles": int(in_bin.sum()),
                "frames": int(frames.sum()),
                "tile_threshold": tile,
                "frame_threshold": frame_limit,
                "median_score": float(np.median(scores[in_bin])) if in_bin.any() else None,
            }
        )
    sized = replace(
        familiarity,
        size_edges=edges_array,
        size_tile_thresholds=np.array(tile_thresholds, np.float32),
        size_frame_thresholds=np.array(frame_thresholds, np.float32),
    )
    return sized, {"size_bins": figures}


MIN_COUNT_PHOTOS = 10
"""A count bin is fitted on at least this many photos holding that many correct confident tiles; a bin with fewer
keeps the bin before's threshold (``frame_threshold`` for the first)."""


def fit_count_thresholds(
    data: dict[str, np.ndarray],
    real: np.ndarray,
    edges: Sequence[int],
    familiarity: Familiarity,
    config: FitConfig,
    *,
    draws: int = 200,
    seed: int = 0,
    never_looser: bool = False,
) -> tuple[Familiarity, dict[str, Any]]:
    """``familiarity`` with a frame threshold per tile count (lower ``edges``): for each count n, the
    ``frame_quantile`` of the medians of n out-of-fold scores drawn ``draws`` times (without replacement) from the
    correct confident ``real`` tiles of each photo holding at least n of them (each photo weighs the same), times
    ``frame_margin``; ``min_frame_tiles`` becomes the first edge. Deterministic (``seed``). With ``never_looser``,
    a count the one frame rule judges (``config.min_frame_tiles`` or more) keeps at most
    ``familiarity.frame_threshold``: the count bins only extend the frame rule to fewer tiles (or tighten it);
    fitting again gives the same bins."""
    edges_array = np.asarray(sorted({int(v) for v in edges}), np.float32)
    if not len(edges_array) or edges_array[0] < 1:
        raise ValueError("frame counts must be one or more positive tile counts")
    out_of_fold = _out_of_fold(data, config)
    settled = real & (data["pred"] == data["label"]) & (data["confidence"] >= CONFIDENT)
    pools = [out_of_fold[settled & (data["group"] == g)] for g in np.unique(data["group"][settled])]
    rng = np.random.default_rng(seed)
    thresholds, figures = [], []
    threshold = familiarity.frame_threshold
    for n in edges_array.astype(int):
        medians = [
            np.median(pool[np.argsort(rng.random((draws, len(pool))), axis=1)[:, :n]], axis=1)
            for pool in pools
            if len(pool) >= n
        ]
        if len(medians) >= MIN_COUNT_PHOTOS:
            threshold = float(np.quantile(np.concatenate(medians), config.frame_quantile) * config.frame_margin)
        if never_looser and n >= config.min_frame_tiles:
            threshold = min(threshold, familiarity.frame_threshold)
        thresholds.append(threshold)
        figures.append(
            {
                "tiles_at_least": int(n),
                "photos": len(medians),
                "median_of_medians": float(np.median(np.concatenate(medians))) if medians else None,
                "frame_threshold": threshold,
            }
        )
    counted = replace(
        familiarity,
        min_frame_tiles=int(edges_array[0]),
        count_edges=edges_array,
        count_frame_thresholds=np.array(thresholds, np.float32),
    )
    return counted, {"count_bins": figures, "count_draws": draws}


def _merge(parts: Sequence[TileFeatures]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """One set of arrays (groups renumbered apart) and which tiles are from the first part (the real photos)."""
    arrays, real, offset = [], [], 0
    for i, part in enumerate(parts):
        if not part.label:
            continue
        a = part.arrays()
        a["group"] = a["group"] + offset
        offset += len(part.source)
        arrays.append(a)
        real.append(np.full(len(a["label"]), i == 0))
    return {k: np.concatenate([a[k] for a in arrays]) for k in arrays[0]}, np.concatenate(real)


def fit_command(args: argparse.Namespace) -> int:
    from vision.runtime.recognition import CLASSIFIER_FILE, OnnxTileClassifier

    started = time.perf_counter()
    models = Path(args.models)
    classifier_path = models / CLASSIFIER_FILE
    classifier = OnnxTileClassifier(classifier_path)
    config = FitConfig(tile_quantile=args.tile_quantile, frame_margin=args.frame_margin)
    parts = [real_photo_tiles(classifier, "train")]
    parts += [synthetic_tiles(classifier, Path(root), args.synthetic_images) for root in args.synthetic]
    data, real = _merge(parts)
    sha = file_sha256(classifier_path)
    if args.size_only:  # the folder's statistics and thresholds as they are: only the size bins are fitted
        familiarity = Familiarity.load(models / FAMILIARITY_FILE)
        if familiarity.classifier_sha256 != sha:
            raise ValueError(f"{models / FAMILIARITY_FILE} was fitted to another classifier: fit without --size-only")
        figures = json.loads((models / FAMILIARITY_CARD).read_text()).get("fit", {})
        if args.size_bins:
            figures.pop("size_bins", None)
        if args.frame_counts:
            figures.pop("count_bins", None)
    else:
        familiarity, figures = fit_familiarity(data, real, config, sha)
    if args.size_bins:
        bounds = sorted(float(v) for v in args.size_bins.split(","))
        real_data = {k: v[real] for k, v in data.items()}
        shrunk = [real_photo_tiles(classifier, "train", (lo + hi) / 2) for lo, hi in itertools.pairwise(bounds)]
        small, _ = _merge(shrunk)  # "group" numbered apart: one frame per photo and size
        small["frame"] = small["group"]
        small["group"] = np.concatenate([p.arrays()["group"] for p in shrunk])  # the full-size photos' numbers
        familiarity, size_figures = fit_size_thresholds(
            real_data, small, bounds[1:], familiarity, config, frames_by_size=args.size_frame
        )
        figures.update(size_figures)
    if args.frame_counts:
        counts = [int(v) for v in args.frame_counts.split(",")]
        familiarity, count_figures = fit_count_thresholds(
            data, real, counts, familiarity, config, never_looser=args.frame_counts_never_looser
        )
        figures.update(count_figures)
    familiarity.save(models / FAMILIARITY_FILE)
    command = f"python -m vision.runtime.familiarity fit --models {args.models}" + "".join(
        f" --synthetic {root}" for root in args.synthetic
    )
    if args.synthetic:
        command += f" --synthetic-images {args.synthetic_images}"
    if args.size_bins:
        command += f" --size-bins {args.size_bins}" + " --size-frame" * args.size_frame
    if args.frame_counts:
        command += f" --frame-counts {args.frame_counts}" + " --frame-counts-never-looser" * (
            args.frame_counts_never_looser
        )
    if args.size_only:
        command += " --size-only"
    card = {
        "what": "familiarity statistics of the tile classifier's features (vision/runtime/familiarity.py)",
        "classifier": str(classifier_path),
        "classifier_sha256": sha,
        "command": command,
        "fitted": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "data": {
            "real": "vision.runtime.realdata split 'train' (true boxes), thresholds out of fold by photo",
            "synthetic": list(args.synthetic),
        },
        "config": asdict(config),
        "fit": figures,
        "seconds": round(time.perf_counter() - started, 1),
    }
    card_path = models / FAMILIARITY_CARD
    if card_path.is_file():  # keep the evaluation written by `evaluate --card` only if it is of this classifier
        old = json.loads(card_path.read_text())
        if old.get("classifier_sha256") == sha and "evaluation" in old:
            card["evaluation"] = old["evaluation"]
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    print(
        f"wrote {models / FAMILIARITY_FILE}: {figures['real_tiles']} real tiles of {figures['real_photos']} photos"
        f" ({figures['tiles']} in all), tile threshold {figures['tile_threshold']:.0f},"
        f" frame threshold {figures['frame_threshold']:.0f}, {card['seconds']} s"
    )
    return 0


# ---------------------------------------------------------------------------------------------------- evaluate


def _per_frame_check(
    familiarity: Familiarity, part: TileFeatures, *, confirmed: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(scores, unfamiliar) of every tile, frame by frame; with ``confirmed``, a tile over the tile threshold in a
    frame the frame rule passes is familiar when its measured ``steady`` probability confirms it (as
    :meth:`Familiarity.check` with a ``confirm``)."""
    a = part.arrays()
    scores = familiarity.scores(a["features"], a["pred"])
    flagged = np.zeros(len(scores), bool)
    for g in np.unique(a["group"]):
        m = a["group"] == g
        tile, frame = familiarity.rules(scores[m], a["short_side"][m])
        if confirmed:
            tile &= ~(a["steady"][m] >= CONFIRM_PROBABILITY)
        flagged[m] = tile | frame
    return scores, flagged


def confident_wrong(part: TileFeatures, flagged: np.ndarray | None = None) -> dict[str, float]:
    a = part.arrays()
    confident = a["confidence"] >= CONFIDENT
    if flagged is not None:
        confident &= ~flagged
    wrong = a["pred"] != a["label"]
    return {"wrong_at_0.8": float((confident & wrong).mean()), "count": int((confident & wrong).sum())}


def evaluate(models: Path, heldout: Path, images: int | None, tile_px: float | None = None) -> dict[str, Any]:
    """The check's figures on the real held-out photos and the rendered ``heldout`` scenes; with ``tile_px``, both
    shrunk so their median tile's short side is ``tile_px`` (JPEG 75), as a film frame's far tiles are seen."""
    from vision.runtime.recognition import CLASSIFIER_FILE, OnnxTileClassifier

    classifier = OnnxTileClassifier(models / CLASSIFIER_FILE)
    familiarity = Familiarity.load(models / FAMILIARITY_FILE)
    val = real_photo_tiles(classifier, "val", tile_px, steady=True)
    _, val_flagged = _per_frame_check(familiarity, val)
    _, val_unconfirmed = _per_frame_check(familiarity, val, confirmed=False)
    a = val.arrays()
    settled = (a["pred"] == a["label"]) & (a["confidence"] >= CONFIDENT)
    out: dict[str, Any] = {
        "real_val": {
            "tiles": len(settled),
            "correct_confident": int(settled.sum()),
            "made_uncertain": int((settled & val_flagged).sum()),
            "share_made_uncertain": float((settled & val_flagged).sum() / max(1, settled.sum())),
            "made_uncertain_unconfirmed": int((settled & val_unconfirmed).sum()),
            "wrong_at_0.8_before": confident_wrong(val)["wrong_at_0.8"],
            "wrong_at_0.8_after": confident_wrong(val, val_flagged)["wrong_at_0.8"],
            "wrong_after": confident_wrong(val, val_flagged)["count"],
            "wrong_after_unconfirmed": confident_wrong(val, val_unconfirmed)["count"],
        }
    }
    scenes = synthetic_tiles(classifier, heldout, images, steady=True, tile_px=tile_px)
    _, flagged = _per_frame_check(familiarity, scenes)
    _, unconfirmed = _per_frame_check(familiarity, scenes, confirmed=False)
    b = scenes.arrays()
    editions = np.array(["mix" if "~" in scenes.source[g] else scenes.source[g] for g in b["group"]])
    per_edition = {}
    for edition in sorted(set(editions)):
        m = editions == edition
        wrong = b["pred"][m] != b["label"][m]
        confident = b["confidence"][m] >= CONFIDENT
        per_edition[edition] = {
            "tiles": int(m.sum()),
            "accuracy": float((~wrong).mean()),
            "wrong_at_0.8_before": float((wrong & confident).mean()),
            "wrong_at_0.8_after": float((wrong & confident & ~flagged[m]).mean()),
            "unfamiliar": float(flagged[m].mean()),
        }
    out["heldout_editions"] = {
        "dir": str(heldout),
        "scenes": len(scenes.source),
        "tiles": len(flagged),
        "wrong_at_0.8_before": confident_wrong(scenes)["wrong_at_0.8"],
        "wrong_at_0.8_after": confident_wrong(scenes, flagged)["wrong_at_0.8"],
        "wrong_before": confident_wrong(scenes)["count"],
        "wrong_after": confident_wrong(scenes, flagged)["count"],
        "wrong_after_unconfirmed": confident_wrong(scenes, unconfirmed)["count"],
        "unfamiliar": float(flagged.mean()),
        "unfamiliar_unconfirmed": float(unconfirmed.mean()),
        "per_edition": per_edition,
    }
    out["check_ms_per_frame_60_tiles"] = _time_check(familiarity)
    if tile_px is not None:
        out["tile_px"] = tile_px
    return out


def _time_check(familiarity: Familiarity, tiles: int = 60, repeats: int = 200) -> float:
    rng = np.random.default_rng(0)
    detections = Detections.of_boxes(
        np.zeros((tiles, 4)),
        rng.random(tiles),
        [ALL_LABELS[i] for i in rng.integers(0, len(ALL_LABELS), tiles)],
        features=rng.random((tiles, familiarity.dimensions)).astype(np.float32),
    )
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        familiarity.check(detections)
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e3)


def evaluate_command(args: argparse.Namespace) -> int:
    if args.tile_px is not None and not args.tile_px > 0:
        raise ValueError(f"--tile-px must be a positive size in px, got {args.tile_px:g}")
    result = evaluate(Path(args.models), Path(args.heldout), args.images, args.tile_px)
    result["command"] = (
        f"python -m vision.runtime.familiarity evaluate --models {args.models} --heldout {args.heldout}"
        f" --images {args.images}" + ("" if args.tile_px is None else f" --tile-px {args.tile_px:g}")
    )
    print(json.dumps(result, indent=2))
    if args.card:
        card_path = Path(args.models) / FAMILIARITY_CARD
        card = json.loads(card_path.read_text()) if card_path.is_file() else {}
        card["evaluation" if args.tile_px is None else f"evaluation_at_{args.tile_px:g}_px"] = result
        card_path.write_text(json.dumps(card, indent=2) + "\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.runtime.familiarity", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    fit = commands.add_parser("fit", help="fit the statistics beside the classifier in --models")
    fit.add_argument("--models", default="models", help="model folder (default models)")
    fit.add_argument("--synthetic", action="append", default=[], help="also fit on these rendered scenes' tiles")
    fit.add_argument("--synthetic-images", type=int, default=300, help="scenes per --synthetic folder (300)")
    fit.add_argument("--tile-quantile", type=float, default=FitConfig().tile_quantile)
    fit.add_argument("--frame-margin", type=float, default=FitConfig().frame_margin)
    fit.add_argument(
        "--size-bins",
        metavar="PX,PX,...",
        help="thresholds per tile size: bin bounds in px of a box's short side, e.g. 18,22,28,36 (real training"
        " photos shrunk to each bin's middle; tiles over the last keep one threshold); default: one threshold",
    )
    fit.add_argument(
        "--size-frame",
        action="store_true",
        help="the frame rule's threshold by size too (measured: lets held-out editions' errors through)",
    )
    fit.add_argument(
        "--frame-counts",
        metavar="N,N,...",
        help="the frame rule's threshold by the frame's tile count: bins' lower counts, e.g. 3,4,5,6,8,10,15,20,30,40"
        " (medians of N tiles drawn from each real training photo, out of fold); default: one threshold",
    )
    fit.add_argument(
        "--frame-counts-never-looser",
        action="store_true",
        help="frames the one frame rule judges (FitConfig.min_frame_tiles, 6, or more) keep at most its threshold",
    )
    fit.add_argument(
        "--size-only",
        action="store_true",
        help="keep the folder's statistics and thresholds; fit only --size-bins and --frame-counts",
    )
    ev = commands.add_parser("evaluate", help="measure on the real held-out photos and held-out editions")
    ev.add_argument("--models", default="models")
    ev.add_argument("--heldout", default="cache/synth-editions-heldout", help="rendered held-out edition scenes")
    ev.add_argument("--images", type=int, default=300)
    ev.add_argument(
        "--tile-px",
        type=float,
        metavar="PX",
        help="shrink the photos and scenes so their median tile is PX wide (JPEG 75), as a tilted camera's far tiles:"
        " the check's figures for small tiles (default: as they are)",
    )
    ev.add_argument("--card", action="store_true", help=f"write the figures into {FAMILIARITY_CARD}")
    args = parser.parse_args(argv)
    try:
        return fit_command(args) if args.command == "fit" else evaluate_command(args)
    except (OSError, ValueError) as error:
        print(f"error: {str(error).splitlines()[0]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
