"""Enrolment's training crops: the tiles of a grid photo cut again and again as simulated frames would show them.

:func:`augmented_crops` makes one frame of a photo's tiles (turned, scaled, shifted, foreshortened, lit, blurred,
compressed) for the numpy head's features; :func:`network_frames` makes the frames the adapted network trains on
(:mod:`vision.train.enrolnet`): the same, some brought down to a film's tile size (:func:`shrunk`), with crops of the
table beside the tiles (:func:`background_boxes`). Each frame is balanced as
:class:`vision.runtime.recognition.TileReader` balances a photo (:func:`balanced`). Used by
:mod:`vision.runtime.enrolment` only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from vision.runtime.crops import CROP_PAD, CROP_SIZE, crop_boxes
from vision.runtime.inkcolour import frame_balance, frame_body

if TYPE_CHECKING:
    from vision.runtime.enrolment import Disagreement


@dataclass(frozen=True, slots=True)
class EnrolmentFrames:
    """Frames' crops for the network: the tiles (balanced BGR uint8, as the reader classifies them) with their grid
    labels, and crops of the table beside them."""

    tiles: np.ndarray
    labels: np.ndarray
    background: np.ndarray


@dataclass(frozen=True, slots=True)
class EnrolledPhoto:
    path: Path
    sha256: str
    image: np.ndarray
    boxes: np.ndarray
    labels: np.ndarray
    """Label index of each box, from the grid."""
    angles_deg: np.ndarray
    differ: tuple[Disagreement, ...]


def augmented_crops(
    image: np.ndarray,
    boxes: np.ndarray,
    angles_deg: np.ndarray,
    rng: np.random.Generator,
    max_gain: np.ndarray | None = None,
) -> np.ndarray:
    """One simulated frame: every tile turned to a random angle, its box scaled and shifted a little, then the
    frame's light (brightness, white balance), blur, noise and JPEG; crops as the classifier sees them. ``max_gain``
    (per BGR channel): the light's gain at most this (no tile body pushed past white, as a camera's exposure keeps
    it)."""
    size = CROP_SIZE
    crops = np.empty((len(boxes), size, size, 3), np.uint8)
    for i, (x0, y0, x1, y1) in enumerate(boxes):
        # the tile's own width and height (its box is axis-aligned around a tile turned by its angle)
        w, h = x1 - x0, y1 - y0
        a = math.radians(angles_deg[i])
        c, s = abs(math.cos(a)), abs(math.sin(a))
        det = c * c - s * s
        tw, th = ((c * w - s * h) / det, (c * h - s * w) / det) if abs(det) > 0.3 else (min(w, h), max(w, h))
        tw, th = max(tw, 0.3 * min(w, h)), max(th, 0.3 * min(w, h))
        # mostly as tiles lie on a table (facing a seat, a little askew), some at any angle
        turn = 90.0 * int(rng.integers(4)) + float(rng.normal(0, 6)) if rng.random() < 0.75 else rng.uniform(0, 360)
        tr = math.radians(turn + float(angles_deg[i]))  # the tile's angle once turned: its box in the new frame
        side = max(abs(math.cos(tr)) * tw + abs(math.sin(tr)) * th, abs(math.sin(tr)) * tw + abs(math.cos(tr)) * th)
        side *= (1 + 2 * CROP_PAD) * float(rng.uniform(0.9, 1.12))
        scale = size / side
        cx = (x0 + x1) / 2 + float(rng.normal(0, 0.03)) * side
        cy = (y0 + y1) / 2 + float(rng.normal(0, 0.03)) * side
        matrix = cv2.getRotationMatrix2D((float(cx), float(cy)), turn, scale)
        matrix[:, 2] += (size / 2 - cx, size / 2 - cy)
        if rng.random() < 0.5:  # seen obliquely: foreshortened along a random direction of the crop
            matrix = _squeeze(float(rng.uniform(0, 180)), float(rng.uniform(0.7, 1.0)), size) @ np.vstack(
                [matrix, [0, 0, 1]]
            )
            matrix = matrix[:2]
        flags = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
        crops[i] = cv2.warpAffine(image, matrix, (size, size), flags=flags, borderMode=cv2.BORDER_REPLICATE)
    brightness = float(rng.uniform(0.7, 1.2))
    light = crops.astype(np.float32) * brightness
    balance = rng.uniform(0.85, 1.15, 3).astype(np.float32)  # white balance, per channel (BGR)
    if max_gain is not None:
        balance = np.minimum(balance, np.asarray(max_gain, np.float32) / brightness)
    light *= balance
    gamma = float(rng.uniform(0.8, 1.25))
    light = 255.0 * (np.clip(light, 0, 255) / 255.0) ** gamma
    light += rng.normal(0, float(rng.uniform(0, 5)), light.shape).astype(np.float32)
    out = np.clip(light, 0, 255).astype(np.uint8)
    sigma = float(rng.uniform(0.3, 1.1)) if rng.random() < 0.4 else 0.0
    quality = int(rng.integers(35, 95)) if rng.random() < 0.5 else 0
    for i in range(len(out)):
        out[i] = _degraded(out[i], rng, sigma, 0.0, quality)  # the noise is the frame's, added above
    return out


def _squeeze(direction_deg: float, factor: float, size: int) -> np.ndarray:
    """A 3x3 affine map squeezing a crop by ``factor`` along ``direction_deg`` about its centre."""
    a = math.radians(direction_deg)
    d = np.array([math.cos(a), math.sin(a)])
    linear = np.eye(2) - (1 - factor) * np.outer(d, d)
    centre = np.array([size / 2, size / 2])
    out = np.eye(3)
    out[:2, :2] = linear
    out[:2, 2] = centre - linear @ centre
    return out


def balanced(crops: np.ndarray) -> np.ndarray:
    """The frame balance :class:`vision.runtime.recognition.TileReader` applies before classifying."""
    return frame_balance(crops, body=frame_body(crops)).apply(crops)


BACKGROUND_PER_FRAME = 8
"""Crops of the table beside the tiles in each training frame of the network (the not-a-tile rule's side)."""
WHITE_BODY = 245.0
"""The network's frames light the tiles' median body to at most this in any channel: a brighter frame clips the
bodies, and balancing by clipped bodies turns the inks' colour (black read red, all of a held-out frame at once)."""
SMALL_FRAMES = 0.7
"""Share of the network's training frames brought down to a film's tile size (:func:`shrunk`)."""
SMALL_BLUR = 0.3
SMALL_NOISE = 4.0
SMALL_JPEG = 0.6
SMALL_JPEG_QUALITY = (40, 90)
"""A shrunk frame is degraded at its own small scale, as a film's far tiles are: blurred (this share of frames,
sigma 0.3-0.8 px), noisy (sigma up to this), JPEG-compressed (this share of frames, at this quality range)."""
HOLDOUT_SMALL_DEGRADED = False
"""Whether the held-out frames that choose an adapted network's temperature are degraded at their small scale too
(:func:`network_frames`' ``degrade_small``). Not: a temperature set by the hardest of those (1.5-1.8 on three of the
eight bench games) made a venue's right tiles unsure, 7 of 111 clean moves ruled REVIEW (models/README.md, "Deep
blues kept blue")."""
SMALL_SIDE_PX = (28.0, 64.0)
"""A shrunk frame's crops come from this many pixels (log-uniform; a scene's tiles of 20-65 px on their short side
give crops of 30-100 px, and the grid photo's 60-80 px tiles give 100-130)."""


def background_boxes(photo: EnrolledPhoto, rng: np.random.Generator, count: int) -> np.ndarray:
    """Boxes of about a tile's size on the photo that overlap no tile by IoU 0.4 or more: the table, the grid's gaps,
    parts of tiles (what a detector's false boxes hold)."""
    boxes = photo.boxes
    width, height = float(np.median(boxes[:, 2] - boxes[:, 0])), float(np.median(boxes[:, 3] - boxes[:, 1]))
    image_h, image_w = photo.image.shape[:2]
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    found: list[np.ndarray] = []
    for _ in range(count * 50):
        if len(found) == count:
            break
        scale = float(rng.uniform(0.6, 1.6))
        w, h = width * scale * float(rng.uniform(0.7, 1.4)), height * scale * float(rng.uniform(0.7, 1.4))
        x0, y0 = float(rng.uniform(0, max(1.0, image_w - w))), float(rng.uniform(0, max(1.0, image_h - h)))
        inter = np.clip(np.minimum(boxes[:, 2], x0 + w) - np.maximum(boxes[:, 0], x0), 0, None) * np.clip(
            np.minimum(boxes[:, 3], y0 + h) - np.maximum(boxes[:, 1], y0), 0, None
        )
        if (inter / (areas + w * h - inter)).max() < 0.4:
            found.append(np.array([x0, y0, x0 + w, y0 + h], np.float32))
    return np.array(found, np.float32).reshape(-1, 4)


def shrunk(crops: np.ndarray, rng: np.random.Generator, *, degrade: bool = True) -> np.ndarray:
    """A frame of smaller tiles: each crop brought down to the pixels such a tile's crop holds (``degrade``: then
    blurred, noisy and compressed at that scale, :data:`SMALL_BLUR`), and back up to the classifier's size as
    :func:`vision.runtime.crops.crop_boxes` enlarges it."""
    side = math.exp(float(rng.uniform(*np.log(SMALL_SIDE_PX))))
    sigma = float(rng.uniform(0.3, 0.8)) if degrade and rng.random() < SMALL_BLUR else 0.0
    noise = float(rng.uniform(0.0, SMALL_NOISE)) if degrade else 0.0
    quality = int(rng.integers(*SMALL_JPEG_QUALITY)) if degrade and rng.random() < SMALL_JPEG else 0
    out = crops.copy()
    for i, crop in enumerate(crops):
        pixels = round(float(np.clip(side * rng.uniform(0.9, 1.1), 16, CROP_SIZE)))
        if pixels < CROP_SIZE - 2:
            small = cv2.resize(crop, (pixels, pixels), interpolation=cv2.INTER_AREA)
            out[i] = cv2.resize(_degraded(small, rng, sigma, noise, quality), (CROP_SIZE, CROP_SIZE))
    return out


def _degraded(image: np.ndarray, rng: np.random.Generator, sigma: float, noise: float, quality: int) -> np.ndarray:
    """``image`` through a camera at its own scale: optical blur (``sigma`` px), sensor noise, JPEG (0: none)."""
    if sigma:
        image = cv2.GaussianBlur(image, (0, 0), sigma)
    if noise:
        image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
    if quality:
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        decoded = cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else None
        image = image if decoded is None else decoded
    return image


def network_frames(
    photos: Sequence[EnrolledPhoto], rng: np.random.Generator, rounds: int, *, degrade_small: bool = True
) -> EnrolmentFrames:
    """``rounds`` simulated frames of each photo for the network: the tiles as :func:`augmented_crops` turns and
    lights them (some frames shrunk to a film's scale, degraded there unless ``degrade_small`` is off; no tile body
    lit past :data:`WHITE_BODY`) with crops of the table beside them, balanced by the tiles."""
    tiles, labels, background = [], [], []
    for photo in photos:
        body = frame_body(crop_boxes(photo.image, photo.boxes))
        max_gain = None if body is None else WHITE_BODY / np.maximum(body, 1.0)
        for _ in range(rounds):
            extra = background_boxes(photo, rng, BACKGROUND_PER_FRAME)
            boxes = np.concatenate([photo.boxes, extra])
            angles = np.concatenate([photo.angles_deg, rng.uniform(0, 360, len(extra))])
            crops = augmented_crops(photo.image, boxes, angles, rng, max_gain)
            if rng.random() < SMALL_FRAMES:
                crops = shrunk(crops, rng, degrade=degrade_small)
            n = len(photo.boxes)
            crops = frame_balance(crops[:n], body=frame_body(crops[:n])).apply(crops)
            tiles.append(crops[:n])
            labels.append(photo.labels)
            background.append(crops[n:])
    return EnrolmentFrames(np.concatenate(tiles), np.concatenate(labels), np.concatenate(background))


def crop_plain(photo: EnrolledPhoto) -> np.ndarray:
    return balanced(crop_boxes(photo.image, photo.boxes))
