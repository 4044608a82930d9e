"""Stand-ins for the recognition stages, shared by the runtime tests."""

from __future__ import annotations

import numpy as np

from vision.runtime.detections import Detections
from vision.runtime.detector import Region


class FixedBoxes:
    """A detector that finds the given boxes, at ``confidence``, wherever it looks."""

    iou = 0.5
    input_size = 640

    def __init__(self, boxes: list[list[float]], confidence: float = 0.95) -> None:
        self.found = Detections.of_boxes(boxes, [confidence] * len(boxes))

    def detect(self, image_bgr: np.ndarray) -> Detections:
        return self.found

    def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
        return self.found

    def load(self) -> None:
        pass


def classified(detections: Detections, probs: np.ndarray, features: np.ndarray) -> Detections:
    """``detections`` read as a classifier reads them: labels and confidences from ``probs`` (N, labels), upright,
    with ``features``."""
    return detections.with_(
        class_id=probs.argmax(axis=1),
        confidence=probs.max(axis=1),
        probs=probs,
        angle_deg=np.zeros(len(detections), np.float32),
        detector_confidence=detections.confidence,
        features=features,
    )
