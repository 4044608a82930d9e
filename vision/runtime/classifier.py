"""Tile classification: the :class:`Classifier` protocol and its ONNX Runtime adapter, :class:`OnnxTileClassifier`.

:class:`OnnxTileClassifier` reads each crop (:mod:`vision.runtime.crops`, the crops training cut): 53 calibrated
probabilities in :data:`referee.tiles.ALL_LABELS` order and the tile's up direction (and the pooled ``features`` the
label head reads, when the model exports them). When it loads, the label order of the model's card (``labels`` in
``tile-classifier.json``) and the width of its ``probs`` output are checked against the labels the code reads them
as: a model trained with another order would name every tile wrong, confidently.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.crops import crop_boxes, to_input
from vision.runtime.detections import Detections
from vision.runtime.enrolhead import FEATURES_OUTPUT, HEAD_FILE, EnrolmentHead, HeadLoadError
from vision.runtime.models import (
    BASE_CLASSIFIER_FILE,
    CLASSIFIER_FILE,
    DEFAULT_PROVIDERS,
    ModelLoadError,
    model_card,
    open_session,
)

CLASSIFIER_BATCH = 64
PROBS_OUTPUT = "probs"


class Classifier(Protocol):
    """Names detected tiles: ``class_id`` the most probable of :attr:`labels`, ``confidence`` its probability, and
    ``data`` with at least ``probs`` (N, len(labels)), ``angle_deg`` and ``detector_confidence``."""

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels, in the order of the ``probs`` columns."""
        ...

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        """The tiles of ``detections`` read from their crops of the image."""
        ...

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        """``classify`` on crops already cut (:func:`vision.runtime.crops.crop_boxes`), one per detection."""
        ...

    def load(self) -> None:
        """Load the model now: a missing, damaged or mislabelled model fails here, in one line naming it."""
        ...


def check_label_order(path: Path, session: Any, labels: Sequence[str]) -> None:
    """A one-line :class:`ModelLoadError` when the model's card lists its labels in another order than ``labels``
    (or other labels), or its ``probs`` output has another number of columns. A model without a card is read as it
    is (the stand-in models of the tests have none)."""
    outputs = session.get_outputs()
    names = [o.name for o in outputs]
    probs = outputs[names.index(PROBS_OUTPUT) if PROBS_OUTPUT in names else 0]
    columns = probs.shape[-1] if len(probs.shape) > 1 else None
    if isinstance(columns, int) and columns != len(labels):
        raise ModelLoadError(
            f"{path}: the classifier gives {columns} label probabilities; the code reads {len(labels)}"
        )
    card = model_card(path)
    if card is None or "labels" not in card:
        return
    listed, card_path = card["labels"], path.with_suffix(".json")
    if not isinstance(listed, list):
        raise ModelLoadError(f"{card_path}: the model card's labels are not a list")
    if listed == list(labels):
        return
    if len(listed) != len(labels):
        raise ModelLoadError(f"{card_path}: the model card lists {len(listed)} labels; the code reads {len(labels)}")
    index = next(i for i, (a, b) in enumerate(zip(listed, labels, strict=True)) if a != b)
    raise ModelLoadError(
        f"{card_path}: the classifier's labels are in another order than the code reads them"
        f" (column {index}: the model card says {listed[index]!r}, the code {labels[index]!r})"
    )


CLASSIFIER_FEATURES = "features"
"""The classifier's optional output of pooled features (N, D): :class:`OnnxTileClassifier` puts it in
``data``."""


class OnnxTileClassifier:
    """:class:`Classifier` on an ONNX tile classifier: ``classify(image_bgr, detections) -> Detections`` with labels
    and angles.

    ``class_id`` is the most probable label, ``confidence`` its (calibrated) probability; ``data`` gains
    ``probs`` (N, 53), ``angle_deg`` (the tile's up, clockwise from image up) and ``detector_confidence``, and
    ``features`` (N, D) when the model has a :data:`CLASSIFIER_FEATURES` output (a model without it still reads).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        providers: Sequence[str] = DEFAULT_PROVIDERS,
        batch: int = CLASSIFIER_BATCH,
        threads: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.providers = tuple(providers)
        self.threads = threads
        self.batch = batch
        self._session: Any = None
        self.head = _enrolment_head(self.path.parent / HEAD_FILE)
        """An enrolled set's head (``rummikub-referee enrol``) reads the labels from the features, when the folder
        has one; None: the classifier's own ``probs``."""
        base = self.path.parent / BASE_CLASSIFIER_FILE
        self.base_path: Path | None = base if self.head is not None and base.is_file() else None
        """The classifier an adapted one started from (:data:`BASE_CLASSIFIER_FILE`): the head is weighed with its
        reading instead of the adapted classifier's own."""
        self._base_session: Any = None
        self._familiarity: Any = None
        self._familiarity_loaded = False

    @classmethod
    def from_model_dir(cls, models_dir: str | Path, **options: Any) -> OnnxTileClassifier:
        """The classifier of a models folder (:data:`CLASSIFIER_FILE`, and the enrolment head beside it if any);
        ``options`` as for the constructor."""
        return cls(Path(models_dir) / CLASSIFIER_FILE, **options)

    @property
    def labels(self) -> tuple[str, ...]:
        return ALL_LABELS

    def load(self) -> None:
        self.session  # noqa: B018 - sessions are otherwise made on first use

    @property
    def session(self) -> Any:
        if self._session is None:
            session = open_session(self.path, self.providers, self.threads)
            check_label_order(self.path, session, self.labels)
            self._session = session
            if self.head is not None and FEATURES_OUTPUT not in [o.name for o in self._session.get_outputs()]:
                raise ModelLoadError(f"{self.path}: has no {FEATURES_OUTPUT!r} output for the enrolment head beside it")
            if self.base_path is not None:
                base = open_session(self.base_path, self.providers, self.threads)
                check_label_order(self.base_path, base, self.labels)
                self._base_session = base
        return self._session

    def _familiar(self, features: np.ndarray, own: np.ndarray, xyxy: np.ndarray) -> np.ndarray:
        """Which crops look familiar to the classifier's own head (:mod:`vision.runtime.familiarity`, by the
        statistics beside it, which ``enrol`` copies; with none, no crop does): the enrolment head weighs them.
        ``features`` and ``own`` are the base classifier's where the folder has one."""
        if not self._familiarity_loaded:
            from vision.runtime.familiarity import FAMILIARITY_FILE, load_familiarity

            own_path = self.base_path or self.path
            statistics = own_path.parent / FAMILIARITY_FILE
            self._familiarity = load_familiarity(own_path) if statistics.is_file() else None  # none: no lift
            self._familiarity_loaded = True
        if self._familiarity is None or not len(features):
            return np.zeros(len(features), bool)
        from vision.runtime.familiarity import short_side

        scores = self._familiarity.scores(features, own)
        return ~self._familiarity.unfamiliar(scores, short_side(xyxy), near=None)  # the weighing as fitted

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        return self.classify_crops(crop_boxes(image_bgr, detections.xyxy), detections)

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        """``classify`` on crops already cut (:func:`vision.runtime.crops.crop_boxes`), one per detection."""
        n = len(detections)
        probs, angles, features = self._outputs(self.session if n else None, crops)
        enrolled = {}
        if self.head is not None and features is not None:  # an enrolled set: its head reads the labels
            own: np.ndarray = probs
            own_features: np.ndarray | None = features
            if self._base_session is not None:  # an adapted classifier: weighed with the one it started from
                own, _, own_features = self._outputs(self._base_session, crops)
            familiar = (
                self._familiar(own_features, own.argmax(axis=1), detections.xyxy)
                if own_features is not None
                else np.zeros(n, bool)
            )
            probs = self.head.read(features, own, familiar)  # weighed with the classifier's own
            enrolled["tile_confidence"] = self.head.tile_confidence(features)
        return detections.with_(
            class_id=probs.argmax(axis=1) if n else np.zeros(0, np.int64),
            confidence=probs.max(axis=1) if n else np.zeros(0, np.float32),
            probs=probs,
            angle_deg=np.mod(angles, 360.0),
            detector_confidence=detections.confidence,
            **({"features": features} if features is not None else {}),
            **enrolled,
        )

    def _outputs(self, session: Any, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(probs, angle_deg, features or None) of ``session`` on the crops, in batches (no crops: no session)."""
        n = len(crops)
        probs = np.zeros((n, len(ALL_LABELS)), np.float32)
        angles = np.zeros(n, np.float32)
        features: list[np.ndarray] = []
        if not n:
            return probs, angles, None
        input_name = session.get_inputs()[0].name
        names = [o.name for o in session.get_outputs()]
        probs_index = names.index("probs") if "probs" in names else 0
        angle_index = names.index("angle_deg") if "angle_deg" in names else 1
        features_index = names.index(CLASSIFIER_FEATURES) if CLASSIFIER_FEATURES in names else None
        fixed = session.get_inputs()[0].shape[0]
        batch = fixed if isinstance(fixed, int) and fixed > 0 else self.batch
        for start in range(0, n, batch):
            chunk = to_input(crops[start : start + batch])
            count = len(chunk)
            if count < batch and isinstance(fixed, int) and fixed > 0:
                chunk = np.concatenate([chunk, np.zeros((batch - count, *chunk.shape[1:]), np.float32)])
            outputs = session.run(None, {input_name: chunk})
            probs[start : start + count] = np.asarray(outputs[probs_index])[:count]
            if len(outputs) > 1:
                angles[start : start + count] = np.asarray(outputs[angle_index]).reshape(-1)[:count]
            if features_index is not None:
                features.append(np.asarray(outputs[features_index], np.float32)[:count])
        return probs, angles, np.concatenate(features) if features else None


def _enrolment_head(path: Path) -> EnrolmentHead | None:
    """The enrolment head in a model folder, if there is one (a damaged one is a ModelLoadError naming it)."""
    if not path.is_file():
        return None
    try:
        return EnrolmentHead.load(path, len(ALL_LABELS))
    except HeadLoadError as error:
        raise ModelLoadError(str(error)) from None
