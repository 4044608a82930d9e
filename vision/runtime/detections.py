"""The one container that flows through the vision pipeline, after ``supervision.Detections``.

Arrays of equal length: ``xyxy`` (N, 4) float32 boxes in the ORIGINAL image's pixels, ``confidence`` (N,),
``class_id`` (N,) the index in :data:`referee.tiles.ALL_LABELS` (``-1`` before classification), and extra
columns in ``data`` (``angle_deg``, ``probs``, ``detector_confidence``...). Every operation returns a new
object; filter with boolean masks (``detections[detections.confidence > 0.5]``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from referee.tiles import ALL_LABELS

UNCLASSIFIED = -1
"""``class_id`` of a box the classifier has not read yet."""
UNCLASSIFIED_LABEL = "tile"


@dataclass(frozen=True, eq=False, slots=True)
class Detections:
    xyxy: np.ndarray
    confidence: np.ndarray
    class_id: np.ndarray
    data: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        xyxy = np.asarray(self.xyxy, np.float32).reshape(-1, 4)
        n = len(xyxy)
        confidence = np.asarray(self.confidence, np.float32).reshape(-1)
        class_id = np.asarray(self.class_id, np.int64).reshape(-1)
        data = {key: np.asarray(value) for key, value in self.data.items()}
        columns: list[tuple[str, np.ndarray]] = [("confidence", confidence), ("class_id", class_id), *data.items()]
        for name, column in columns:
            if len(column) != n:
                raise ValueError(f"detections column {name!r} has {len(column)} rows, expected {n}")
        # The arrays are shared between objects, so they are made read-only: operations copy, never mutate.
        arrays: list[np.ndarray] = [xyxy, confidence, class_id, *data.values()]
        for array in arrays:
            array.flags.writeable = False
        object.__setattr__(self, "xyxy", xyxy)
        object.__setattr__(self, "confidence", confidence)
        object.__setattr__(self, "class_id", class_id)
        object.__setattr__(self, "data", data)

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def empty(cls) -> Detections:
        return cls(np.zeros((0, 4), np.float32), np.zeros(0, np.float32), np.zeros(0, np.int64))

    @classmethod
    def of_boxes(
        cls,
        xyxy: Sequence[Sequence[float]] | np.ndarray,
        confidence: Sequence[float] | np.ndarray | None = None,
        labels: Sequence[str] | None = None,
        **data: Sequence[Any] | np.ndarray,
    ) -> Detections:
        """Convenience constructor: boxes, optional confidences (default 1) and labels (default unclassified)."""
        boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
        conf = np.ones(len(boxes), np.float32) if confidence is None else confidence
        ids = [ALL_LABELS.index(label) for label in labels] if labels is not None else [UNCLASSIFIED] * len(boxes)
        return cls(boxes, np.asarray(conf), np.asarray(ids, np.int64), {k: np.asarray(v) for k, v in data.items()})

    @classmethod
    def merge(cls, parts: Iterable[Detections]) -> Detections:
        """Concatenate; extra columns are kept when every non-empty part has them."""
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        keys = set.intersection(*(set(p.data) for p in parts))
        return cls(
            np.concatenate([p.xyxy for p in parts]),
            np.concatenate([p.confidence for p in parts]),
            np.concatenate([p.class_id for p in parts]),
            {k: np.concatenate([p.data[k] for p in parts]) for k in sorted(keys)},
        )

    # -- views ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, index: int | slice | np.ndarray | Sequence[int] | Sequence[bool]) -> Detections:
        """A new Detections from an int, a slice, a boolean mask or an index array."""
        if isinstance(index, int | np.integer):
            index = [int(index)]
        return Detections(
            self.xyxy[index],
            self.confidence[index],
            self.class_id[index],
            {k: v[index] for k, v in self.data.items()},
        )

    def __iter__(self):  # pragma: no cover - iteration by index is the common case
        return (self[i] for i in range(len(self)))

    @property
    def labels(self) -> list[str]:
        return [ALL_LABELS[i] if 0 <= i < len(ALL_LABELS) else UNCLASSIFIED_LABEL for i in self.class_id.tolist()]

    @property
    def area(self) -> np.ndarray:
        return (self.xyxy[:, 2] - self.xyxy[:, 0]) * (self.xyxy[:, 3] - self.xyxy[:, 1])

    @property
    def centers(self) -> np.ndarray:
        return (self.xyxy[:, :2] + self.xyxy[:, 2:]) / 2

    # -- operations -----------------------------------------------------------------------------
    def with_(self, **changes: Any) -> Detections:
        """A copy with some of ``xyxy``, ``confidence``, ``class_id`` replaced and extra columns added."""
        core = {k: changes.pop(k) for k in ("xyxy", "confidence", "class_id") if k in changes}
        return Detections(
            core.get("xyxy", self.xyxy),
            core.get("confidence", self.confidence),
            core.get("class_id", self.class_id),
            {**self.data, **changes},
        )

    def with_nms(self, iou: float = 0.5, *, class_agnostic: bool = True) -> Detections:
        """Greedy non-maximum suppression: keep the most confident of boxes overlapping more than ``iou``."""
        if len(self) < 2:
            return self
        boxes = self.xyxy.astype(np.float64)
        if not class_agnostic:
            # Shifting each class to its own region of the plane keeps classes from suppressing each other.
            offset = (boxes.max() + 1.0) * self.class_id.astype(np.float64)
            boxes = boxes + offset[:, None]
        keep = nms_indices(boxes, self.confidence, iou)
        return self[np.sort(keep)]

    def without_nested(self, share: float = 0.8) -> Detections:
        """Drop each box lying ``share`` or more inside a more confident box that is kept (greedy, like NMS).

        Seen from above, tiles never stack: a box mostly inside another is the same tile found at two scales
        (its face and its whole outline), which IoU-based NMS keeps when the two differ much in size.
        """
        if len(self) < 2:
            return self
        boxes = self.xyxy.astype(np.float64)
        areas = np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1e-9)
        keep: list[int] = []
        for i in np.argsort(-self.confidence, kind="stable"):
            if keep:
                kept = boxes[keep]
                w = np.minimum(kept[:, 2], boxes[i, 2]) - np.maximum(kept[:, 0], boxes[i, 0])
                h = np.minimum(kept[:, 3], boxes[i, 3]) - np.maximum(kept[:, 1], boxes[i, 1])
                inter = np.clip(w, 0, None) * np.clip(h, 0, None)
                # nested either way: i inside a kept box, or a kept box inside i
                if (inter >= share * areas[i]).any() or (inter >= share * areas[keep]).any():
                    continue
            keep.append(int(i))
        return self[np.sort(np.asarray(keep, np.int64))]

    def sorted_by_confidence(self) -> Detections:
        return self[np.argsort(-self.confidence, kind="stable")]

    # -- codec ----------------------------------------------------------------------------------
    def to_json(self, *, columns: Sequence[str] = (), ndigits: int = 1) -> list[dict[str, Any]]:
        """``[{"label", "box", "confidence", ...}]``; ``columns`` adds scalar extra columns by name."""
        items = []
        for i, label in enumerate(self.labels):
            item: dict[str, Any] = {
                "label": label,
                "box": [round(float(v), ndigits) for v in self.xyxy[i]],
                "confidence": round(float(self.confidence[i]), 4),
            }
            for name in columns:
                if name in self.data:
                    item[name] = round(float(self.data[name][i]), 4)
            items.append(item)
        return items

    def __repr__(self) -> str:
        return f"Detections(n={len(self)}, columns={sorted(self.data)})"


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU (len(a), len(b)) of xyxy boxes."""
    a = np.asarray(a, np.float64).reshape(-1, 4)
    b = np.asarray(b, np.float64).reshape(-1, 4)
    top_left = np.maximum(a[:, None, :2], b[None, :, :2])
    bottom_right = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.clip(bottom_right - top_left, 0, None).prod(axis=2)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def nms_indices(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Indices kept by greedy NMS, most confident first."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    keep: list[int] = []
    while len(order):
        best, rest = order[0], order[1:]
        keep.append(int(best))
        if not len(rest):
            break
        overlaps = box_iou(boxes[best : best + 1], boxes[rest])[0]
        order = rest[overlaps <= iou]
    return np.asarray(keep, np.int64)
