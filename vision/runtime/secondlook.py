"""A second look at doubtful tiles: the tile cut again a few slightly different ways, the class probabilities averaged;
and a turned look at confident ones (:class:`TurnedLook`: the crop turned half-way round must name the same label).

A tile the classifier reads with a low top-1 probability, on small or tilted tiles above all (issue 16: 11/12/13 on
the tilted game's 20-px tiles), is often a tile whose crop happens to sit badly: a pixel off centre, the box a
little short. :class:`SecondLook` cuts such tiles' crops again from the same frame with small shifts, scales and
turns (:data:`VARIANTS`, test-time augmentation), reads them in one batch and averages the probabilities
with the first reading's:

- a tile read under :data:`DOUBTFUL` takes the average, whatever it says;
- a tile read between :data:`DOUBTFUL` and :data:`CHECKED` keeps its first reading unless the average names another
  label; it then takes that label, doubted (:data:`SPLIT_CONFIDENCE`: REVIEW, never a confident change). Issue 16's
  red-10 of game g2, read red-13 at 0.98 from one crop and red-10 at 0.999 from the same crop half a pixel away.
  When the average names the same label under :data:`DOUBTFUL`, the tile takes the average too (uncertain): one
  crop's confidence the other eight cuts do not share is no confident reading (see "Measured" below);
- a tile read at :data:`CHECKED` or over is left alone, so the cost is in proportion to the doubt.

The crop is :func:`vision.runtime.crops.crop_boxes`'s, moved: the identity variant cuts the very same pixels.

:class:`~vision.runtime.reader.TileReader` takes a second look by default (``second_look=False`` turns it off).
Measured at 0f6b86b against its parent 4433fba, each from a ``git archive`` export, in the same run (load 9-14 on
the 2 shared cores):

- ``bench pipeline`` on issue 16's 10 games, default play area: right tables 135 -> 137 of 137 (g2's moves 7 and 8:
  the red-10 now red-10, doubted, then vouched for by :mod:`vision.game.tilememory` as the red-10 it was), clean
  moves ruled REVIEW 15 -> 13 of 114, 23/23 violations flagged both, no false REVERT; the true play area's row the
  same per move;
- the pipeline reader on the settle frames of every move of those games (3,840 tiles labelled from the true play
  area's tables): wrong at >= 0.8 4 -> 0, wrong under 0.8 11 -> 2, right at >= 0.8 3,587 -> 3,599, no tile worse;
- ``eval`` on the 120 held-out edition scenes: F1 0.9153 -> 0.9245, wrong at >= 0.8 25 -> 24, impossible reads
  52 -> 49; on the real held-out photos (``--split val``): F1 0.9890 -> 0.9905, wrong at >= 0.8 4 -> 3;
- its cost, CPU time with and without it interleaved on the same images (``time.process_time``, ONNX Runtime's 2
  threads): a pipeline reading of the bench games' 137 settled tables 156.3 -> 163.3 ms (mean, +4.5 %); a photo,
  40 real ones 81.4 -> 93.3 ms (+15 %), 40 held-out edition scenes (unfamiliar sets: many doubtful tiles) 272.2 ->
  429.5 ms (+58 %). The four shifts alone (half the cost) leave g2's red-10 read red-13 at 0.98.

The familiarity check measures the first crop's ``features``, not the looks' mean (``average_features``): against
the mean, at 07ac7ae in the same run, ``bench pipeline`` ruled every move of both rows the same (137/137 right
tables, clean REVIEW 13/114), the held-out editions' wrong at >= 0.8 went 22 -> 21 (F1 0.9227 both) and the real
held-out photos were read the same (F1 0.9905, wrong 3).

A tile read between :data:`DOUBTFUL` and :data:`CHECKED` whose average keeps its label under :data:`DOUBTFUL` takes
that average (issue 16, 2026-11-26; no crop more is read). Measured from ``git archive`` exports of db17811 without and
with it, in the same session (load 10-16 on the 2 shared cores): issue 16's 10 games, g11, g12 and the demo game on the
user's path (automatic play area) ruled every move the same (169/169 right tables, 29/29 violations flagged, 6/140
clean moves REVIEW, no false REVERT, no phantom); ``eval`` on the 120 held-out edition scenes: wrong at >= 0.8
24 -> 15, F1 0.9245 -> 0.9250, impossible reads 49 -> 48 (``synth-editions-heldout-dev`` 20 -> 13, F1 0.9210 -> 0.9216;
``synth-racks-heldout-60`` 2 -> 1, F1 0.9425 -> 0.9431); on the real held-out photos (``--split val``): F1 0.9905
-> 0.9907, wrong at >= 0.8 3 -> 3. Why: on the real held-out photos shrunk so a tile is 20 px wide (a tilted
camera's far side; ``python -m vision.runtime.familiarity evaluate --tile-px 20``), 18 of the 65 tiles read at 0.8 or
over whose nine cuts' mean is under 0.8 are wrong, 6 of the 1,163 whose mean is 0.95 or over.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from vision.runtime.classifier import Classifier
from vision.runtime.crops import CROP_PAD, CROP_SIZE
from vision.runtime.detections import Detections

DOUBTFUL = 0.8
"""Tiles whose top-1 probability is under this (the layout's threshold of a confident reading) are read again and
take the averaged reading, whatever it says."""
CHECKED = 0.99
"""Tiles read between :data:`DOUBTFUL` and this are read again too; they keep their first reading unless the
averaged one names another label, which they then take, doubted (:data:`SPLIT_CONFIDENCE`), or names it under
:data:`DOUBTFUL`, which they then take as it is (uncertain)."""
SPLIT_CONFIDENCE = 0.5
"""The confidence of a tile whose two looks name different labels: under the layout's threshold (REVIEW)."""
LOOKED_PROBS = "looked_probs"
"""The ``data`` column of a looked-at tile's mean class probabilities over its nine cuts (float64, in the order
:func:`vision.runtime.familiarity.steady_probability` averages them; NaN rows: not looked at). The familiarity
confirmation reads it instead of cutting and classifying the same nine crops again."""


@dataclass(frozen=True, slots=True)
class Variant:
    """One way to cut a tile again: the crop's centre moved by ``dx``, ``dy`` (shares of the crop's side), its side
    times ``scale``, turned by ``turn_deg`` (clockwise)."""

    dx: float = 0.0
    dy: float = 0.0
    scale: float = 1.0
    turn_deg: float = 0.0


VARIANTS: tuple[Variant, ...] = (
    Variant(dx=0.03),
    Variant(dx=-0.03),
    Variant(dy=0.03),
    Variant(dy=-0.03),
    Variant(scale=0.9),
    Variant(scale=1.1),
    Variant(turn_deg=6.0),
    Variant(turn_deg=-6.0),
)
"""The second look's crops besides the first: 1-2 px shifts on a 20-40 px tile, scales 0.9 and 1.1, turns of 6
degrees either way."""


def crop_variant(
    image: np.ndarray, xyxy: np.ndarray, variant: Variant, *, size: int = CROP_SIZE, pad: float = CROP_PAD
) -> np.ndarray:
    """Square crops (N, size, size, 3) of the boxes as :func:`~vision.runtime.crops.crop_boxes` cuts them, moved by
    ``variant`` (the identity variant gives the same pixels)."""
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    crops = np.empty((len(boxes), size, size, 3), np.uint8)
    angle = math.radians(variant.turn_deg)
    cos, sin = math.cos(angle), math.sin(angle)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        side = max(x1 - x0, y1 - y0, 2.0) * (1 + 2 * pad) * variant.scale
        cx, cy = (x0 + x1) / 2 + variant.dx * side, (y0 + y1) / 2 + variant.dy * side
        scale = size / side
        a, b = scale * cos, scale * sin
        # crop pixel = R * scale * (image pixel - centre) + size / 2, with R a turn about the crop's middle
        matrix = np.array(
            [[a, -b, size / 2 - a * cx + b * cy], [b, a, size / 2 - b * cx - a * cy]],
            np.float32,
        )
        interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        crops[i] = cv2.warpAffine(image, matrix, (size, size), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
    return crops


def read_cuts(
    classifier: Classifier,
    image: np.ndarray,
    boxes: np.ndarray,
    variants: Sequence[Variant],
    prepare: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Detections:
    """The boxes cut from ``image`` each way of ``variants`` (:func:`crop_variant`), ``prepare``-d (the frame's white
    balance, as the first reading had it) and read in one batch: row ``v * len(boxes) + i`` is box ``i`` cut as
    ``variants[v]``."""
    crops = np.concatenate([crop_variant(image, boxes, variant) for variant in variants])
    if prepare is not None:
        crops = prepare(crops)
    return classifier.classify_crops(crops, Detections.of_boxes(np.tile(boxes, (len(variants), 1))))


class SecondLook:
    """``look(image, tiles) -> Detections``: the tiles read under ``checked`` read again from ``image`` with
    ``variants``, the first reading's probabilities and theirs averaged (see the module's docstring): a tile read
    under ``doubtful`` takes the average; one read between the two keeps its first reading unless the average names
    another label, which it then takes with its confidence capped at :data:`SPLIT_CONFIDENCE`, or the same label
    under ``doubtful``, which it then takes as it is."""

    def __init__(
        self,
        classifier: Classifier,
        *,
        doubtful: float = DOUBTFUL,
        checked: float = CHECKED,
        variants: Sequence[Variant] = VARIANTS,
        average_features: bool = False,
    ) -> None:
        self.classifier = classifier
        self.doubtful = doubtful
        self.checked = max(checked, doubtful)
        self.variants = tuple(variants)
        self.average_features = average_features
        """A tile that takes the average takes its looks' mean ``features`` too (what the familiarity check
        measures); False (the default): the first crop's, as the check's thresholds were fitted on single crops
        (the mean of 9 crops lies nearer its label's mean: a laxer check)."""

    def looked_at(self, tiles: Detections) -> np.ndarray:
        """The tiles that get a second look: top-1 probability under :attr:`checked`."""
        probs = tiles.data.get("probs")
        if probs is None or not len(tiles):
            return np.zeros(len(tiles), bool)
        return np.asarray(probs, np.float32).max(axis=1) < self.checked

    def look(
        self,
        image: np.ndarray,
        tiles: Detections,
        prepare: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> Detections:
        """``tiles`` (classified from ``image``) weighed with a second look; ``prepare`` turns the crops into what
        the classifier reads (the frame's white balance, as the first reading had it)."""
        chosen = np.flatnonzero(self.looked_at(tiles))
        if not len(chosen) or not self.variants:
            return tiles
        boxes = tiles.xyxy[chosen]
        again = read_cuts(self.classifier, image, boxes, self.variants, prepare)
        count, looks = len(chosen), len(self.variants) + 1
        first = np.asarray(tiles.data["probs"], np.float32)
        mean = (
            first[chosen] + np.asarray(again.data["probs"], np.float32).reshape(looks - 1, count, -1).sum(0)
        ) / looks
        label, top = mean.argmax(axis=1), mean.max(axis=1)
        doubted = first[chosen].max(axis=1) < self.doubtful
        changed = ~doubted & (label != first[chosen].argmax(axis=1))
        fell = ~doubted & ~changed & (top < self.doubtful)  # the label held, its confidence did not
        take = doubted | changed | fell
        rows = chosen[take]
        probs = first.copy()
        probs[rows] = mean[take]
        class_id = np.asarray(tiles.class_id).copy()
        confidence = np.asarray(tiles.confidence, np.float32).copy()
        class_id[rows] = label[take]
        confidence[rows] = np.where(changed[take], np.minimum(top[take], SPLIT_CONFIDENCE), top[take])
        columns: dict[str, np.ndarray] = {"probs": probs}
        features = tiles.data.get("features")
        if self.variants == VARIANTS:  # the familiarity confirmation's nine cuts: their mean kept for it
            cuts = np.concatenate(
                [first[chosen][None], np.asarray(again.data["probs"], np.float32).reshape(-1, *mean.shape)]
            )
            nine = np.full(first.shape, np.nan)
            nine[chosen] = cuts.astype(np.float64).mean(axis=0)  # as steady_probability averages them
            columns[LOOKED_PROBS] = nine
        if self.average_features and features is not None and "features" in again.data:
            looked = np.asarray(again.data["features"], np.float32).reshape(looks - 1, count, -1)
            averaged = np.asarray(features, np.float32).copy()
            averaged[rows] = ((averaged[chosen] + looked.sum(axis=0)) / looks)[take]
            columns["features"] = averaged
        return tiles.with_(class_id=class_id, confidence=confidence, **columns)


TURN = Variant(turn_deg=180.0)
"""The turned look's crop: the tile's first crop turned half-way round."""


class TurnedLook:
    """``look(image, tiles) -> Detections``: every tile read with confidence ``confident`` or over is read once more
    from its crop turned half-way round (:data:`TURN`); one whose turned crop names another label keeps its label,
    doubted (:data:`SPLIT_CONFIDENCE`: REVIEW, never REVERT).

    The classifier reads a tile's up direction as well as its label, so a tile turned round is the same tile to it.
    A reading that does not survive the turn is one crop's accident, most often on an unfamiliar font: measured on
    classifier v7 and detector v5b (2026-11-27, the reader with and without it, truth matched), it doubts 3 of the 6
    tiles read wrong at 0.8 or over on the 120 held-out edition scenes (read at 0.97-0.999: the second look keeps
    them) against 11 of the 3,169 read right; on the revealed racks 1 of 1 wrong against 1 of 436 right; on the real
    held-out photos 3 of 1,670 right (none read wrong). The cost is one more classifier pass over the confident
    tiles (models/README.md, "The turned look")."""

    def __init__(self, classifier: Classifier, *, confident: float = DOUBTFUL) -> None:
        self.classifier = classifier
        self.confident = confident

    def look(
        self,
        image: np.ndarray,
        tiles: Detections,
        prepare: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> Detections:
        """``tiles`` (classified from ``image``) with those whose turned crop names another label doubted; ``prepare``
        turns the crops into what the classifier reads (the frame's white balance, as the first reading had it)."""
        confidence = np.asarray(tiles.confidence, np.float32)
        chosen = np.flatnonzero(confidence >= self.confident)
        if not len(chosen):
            return tiles
        turned = read_cuts(self.classifier, image, tiles.xyxy[chosen], (TURN,), prepare)
        split = chosen[np.asarray(turned.class_id) != np.asarray(tiles.class_id)[chosen]]
        if not len(split):
            return tiles
        doubted = confidence.copy()
        doubted[split] = np.minimum(doubted[split], SPLIT_CONFIDENCE)
        return tiles.with_(confidence=doubted)
