"""The enrolment head: a 53-label linear layer on the classifier's ``features``, fitted to one venue's tile set.

``rummikub-referee enrol`` writes it into a model folder as :data:`HEAD_FILE`; :class:`vision.runtime.classifier.
OnnxTileClassifier` reads the labels with it instead of the classifier's own ``probs`` when the file is there (the
up direction still comes from the classifier). Numpy only: it runs where the referee runs.

Where the head and the classifier's own head name different labels, the tile is doubted
(:data:`APART_CONFIDENCE`, :meth:`EnrolmentHead.read`): the head learnt one venue's set from two grid photos of large
tiles, and on a film's small, tilted tiles it can be confidently wrong where the classifier is not (issue 16's tilted
game g3b: orange-12 read orange-11 at 0.99, blue-13 read blue-11 at 0.95); two heads that disagree ask a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEAD_FILE = "enrolment-head.npz"
FEATURES_OUTPUT = "features"
"""The classifier output the head reads (the pooled penultimate activations)."""


class HeadLoadError(ValueError):
    """An enrolment head file that cannot be used (damaged, or not fitted to this classifier)."""


@dataclass(frozen=True, eq=False, slots=True)
class EnrolmentHead:
    """``probs = softmax(features @ weight.T + bias)``; the temperature is folded into the weights."""

    weight: np.ndarray
    """(53, D) float32."""
    bias: np.ndarray
    """(53,) float32."""
    temperature: float = 1.0
    """Folded into ``weight`` and ``bias``; :meth:`tile_confidence` undoes it."""

    def logits(self, features: np.ndarray) -> np.ndarray:
        return np.asarray(features, np.float32) @ self.weight.T + self.bias

    def probs(self, features: np.ndarray) -> np.ndarray:
        return softmax(self.logits(features))

    def read(
        self, features: np.ndarray, own: np.ndarray | None = None, familiar: np.ndarray | None = None
    ) -> np.ndarray:
        """The labels' probabilities, with ``own`` (the classifier's own ``probs`` of the same crops) weighed in:

        - a crop whose two heads name different labels keeps this head's label at confidence
          :data:`APART_CONFIDENCE` at most (its logits tempered further: the order of the labels stays);
        - a crop whose two heads agree, and that looks familiar to the classifier (``familiar``, its familiarity
          check passed, :mod:`vision.runtime.familiarity`), is as sure as the less sure of the classifier's own head
          and this head before its temperature, where that is at least :data:`VOUCHED`: the temperature, set by the
          hardest held-out crops, does not make tiles the shipped models read surely (the venue's set in its usual
          look) unsure.
        """
        logits = self.logits(features)
        probs = softmax(logits)
        if own is None or not len(probs):
            return probs
        own = np.asarray(own, np.float32)
        label, top = probs.argmax(axis=1), probs.max(axis=1)
        apart = (label != own.argmax(axis=1)) & (top > APART_CONFIDENCE)
        if apart.any():
            probs[apart] = capped(logits[apart], APART_CONFIDENCE)
        if familiar is not None:
            sure = np.minimum(own.max(axis=1), softmax(logits * self.temperature).max(axis=1))
            agreed = np.asarray(familiar, bool) & (label == own.argmax(axis=1)) & (sure >= VOUCHED)
            lift = np.flatnonzero(agreed & (sure > top))
            if len(lift):  # the top raised to ``sure``, the other labels scaled down with it (the sum stays 1)
                rest = np.maximum(1.0 - top[lift], 1e-12)
                probs[lift] *= ((1.0 - sure[lift]) / rest)[:, None]
                probs[lift, label[lift]] = sure[lift]
        return probs

    def tile_confidence(self, features: np.ndarray) -> np.ndarray:
        """The top probability before the temperature: how sure the fit is that a crop is one of the set's tiles
        (what the not-a-tile rule weighs; the tempered ``probs`` say how sure the label is)."""
        return softmax(self.logits(features) * self.temperature).max(axis=1)

    def save(self, path: Path) -> None:
        with path.open("wb") as out:
            np.savez(
                out,
                weight=self.weight.astype(np.float32),
                bias=self.bias.astype(np.float32),
                temperature=np.float32(self.temperature),
            )

    @classmethod
    def load(cls, path: Path, labels: int, features: int | None = None) -> EnrolmentHead:
        """The head in ``path``; a damaged file or one of the wrong shape is a :class:`HeadLoadError` naming it."""
        try:
            with np.load(path, allow_pickle=False) as data:
                weight, bias = np.asarray(data["weight"], np.float32), np.asarray(data["bias"], np.float32)
                temperature = float(data["temperature"]) if "temperature" in data.files else 1.0
        except (OSError, ValueError, KeyError, EOFError) as error:
            raise HeadLoadError(
                f"{path}: cannot load the enrolment head ({str(error).splitlines()[0][:120]})"
            ) from None
        width = weight.shape[1] if weight.ndim == 2 else -1
        if weight.ndim != 2 or weight.shape[0] != labels or bias.shape != (labels,) or features not in (None, width):
            raise HeadLoadError(
                f"{path}: the enrolment head does not fit this classifier (weights {weight.shape}, expected"
                f" ({labels}, {features or 'D'})): enrol again with these models"
            )
        if not (np.isfinite(weight).all() and np.isfinite(bias).all() and 0 < temperature < 100):
            raise HeadLoadError(f"{path}: the enrolment head holds non-finite weights: enrol again")
        return cls(weight, bias, temperature)


APART_CONFIDENCE = 0.5
"""The most a label is believed where the enrolment head and the classifier's own head disagree (as the second look's
split, :data:`vision.runtime.secondlook.SPLIT_CONFIDENCE`): under the layout's 0.8, so REVIEW, never a confident
change."""


VOUCHED = 0.95
"""Both heads at least this sure of a familiar tile's label: the temperature does not make it unsure. Chosen on the
held-out editions' scenes (enrol_bench's sets, true boxes, offline): any agreement lets the shipped head's familiar
confident misreads through (modern-circle 9 -> 11 wrong at >= 0.8), 0.95 none (8); on issue 16's g4 it leaves 29 of
488 right readings under 0.8 (the temperature alone 188)."""


def capped(logits: np.ndarray, top: float) -> np.ndarray:
    """Softmax of each row of ``logits`` divided by its own temperature (>= 1), the one that brings its largest
    probability down to ``top`` (bisection on the log of the temperature; ``top`` must exceed 1 / columns)."""
    low = np.zeros(len(logits))
    high = np.full(len(logits), np.log(1e4))
    for _ in range(40):
        middle = (low + high) / 2
        over = softmax(logits / np.exp(middle)[:, None]).max(axis=1) > top
        low, high = np.where(over, middle, low), np.where(over, high, middle)
    return softmax(logits / np.exp(high)[:, None])


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)
