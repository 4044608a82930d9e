"""The enrolment head: a 53-label linear layer on the classifier's ``features``, fitted to one venue's tile set.

``rummikub-referee enrol`` writes it into a model folder as :data:`HEAD_FILE`; :class:`vision.runtime.classifier.
OnnxTileClassifier` reads the labels with it instead of the classifier's own ``probs`` when the file is there (the
up direction still comes from the classifier). Numpy only: it runs where the referee runs.
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


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=1, keepdims=True)).astype(np.float32)
