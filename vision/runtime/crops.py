"""Tile crops for the classifier: the same code cuts them for training and at run time.

A crop is a square around a detected box, a bit larger than the tile (a tile at any angle fits), resized to
``CROP_SIZE``. The classifier reads the label and the tile's up direction from it.
"""

from __future__ import annotations

import cv2
import numpy as np

CROP_SIZE = 64
CROP_PAD = 0.12
"""Extra margin around the box on each side, as a share of its longer side."""


def crop_boxes(image: np.ndarray, xyxy: np.ndarray, *, size: int = CROP_SIZE, pad: float = CROP_PAD) -> np.ndarray:
    """Square crops (N, size, size, 3) uint8 in the image's channel order, centred on each box."""
    boxes = np.asarray(xyxy, np.float32).reshape(-1, 4)
    crops = np.empty((len(boxes), size, size, 3), np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        side = max(x1 - x0, y1 - y0, 2.0) * (1 + 2 * pad)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        scale = size / side
        # An affine warp does crop, scale and border handling in one pass, with sub-pixel centring.
        matrix = np.array([[scale, 0, size / 2 - cx * scale], [0, scale, size / 2 - cy * scale]], np.float32)
        interpolation = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        crops[i] = cv2.warpAffine(image, matrix, (size, size), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
    return crops


def to_input(crops: np.ndarray) -> np.ndarray:
    """Classifier input: (N, 3, S, S) float32 RGB in [0, 1] from BGR uint8 crops."""
    return np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / 255.0
