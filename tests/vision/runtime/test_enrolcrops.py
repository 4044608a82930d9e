"""Enrolment's training crops: frames of a grid photo's tiles, the table beside them, and their light."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.runtime.crops import CROP_SIZE, crop_boxes
from vision.runtime.enrolcrops import (
    BACKGROUND_PER_FRAME,
    WHITE_BODY,
    EnrolledPhoto,
    augmented_crops,
    background_boxes,
    network_frames,
    shrunk,
)
from vision.runtime.inkcolour import frame_body


def tiles_photo(body: int = 236) -> EnrolledPhoto:
    """A dark-green cloth with 12 light tiles (a dark stroke on each) in a 3 x 4 grid."""
    image = np.full((480, 640, 3), (40, 90, 40), np.uint8)
    boxes = []
    for row in range(3):
        for column in range(4):
            x0, y0 = 60 + 140 * column, 60 + 140 * row
            image[y0 : y0 + 80, x0 : x0 + 60] = body
            image[y0 + 20 : y0 + 60, x0 + 25 : x0 + 35] = 30
            boxes.append((x0, y0, x0 + 60, y0 + 80))
    labels = np.arange(12)
    return EnrolledPhoto(Path("grid.jpg"), "0" * 64, image, np.array(boxes, np.float32), labels, np.zeros(12), ())


def test_the_light_never_pushes_the_bodies_past_white_when_capped() -> None:
    photo = tiles_photo()
    cap = WHITE_BODY / frame_body(crop_boxes(photo.image, photo.boxes))  # as network_frames caps the light
    capped, free = [], []
    for seed in range(40):
        for gains, out in ((cap, capped), (None, free)):
            crops = augmented_crops(photo.image, photo.boxes, photo.angles_deg, np.random.default_rng(seed), gains)
            out.append(frame_body(crops).max())
    assert max(capped) <= WHITE_BODY + 8  # noise, gamma and JPEG aside
    assert max(free) >= 250  # without the cap some frames clip the bodies


def test_shrunk_frames_keep_the_crop_size_and_lose_detail() -> None:
    crops = np.zeros((6, CROP_SIZE, CROP_SIZE, 3), np.uint8)
    crops[:, ::2] = 255  # one-pixel stripes: gone once brought down to fewer pixels
    small = shrunk(crops, np.random.default_rng(0))
    assert small.shape == crops.shape
    assert np.abs(np.diff(small.astype(int), axis=1)).mean() < np.abs(np.diff(crops.astype(int), axis=1)).mean() / 2


def test_shrunk_frames_carry_the_cameras_noise_at_their_own_scale() -> None:
    """A flat grey crop stays flat when merely shrunk and enlarged; degraded at the small scale (noise, JPEG), most
    frames come back with texture a film's far tiles have."""
    crops = np.full((4, CROP_SIZE, CROP_SIZE, 3), 128, np.uint8)
    textured = [shrunk(crops, np.random.default_rng(seed)).std() > 0.1 for seed in range(20)]
    assert sum(textured) >= 12  # merely shrunk, every one stays flat (0)


def test_background_boxes_hold_no_whole_tile() -> None:
    photo = tiles_photo()
    boxes = background_boxes(photo, np.random.default_rng(3), 20)
    assert len(boxes) == 20
    for box in boxes:
        ix = np.clip(np.minimum(photo.boxes[:, 2], box[2]) - np.maximum(photo.boxes[:, 0], box[0]), 0, None)
        iy = np.clip(np.minimum(photo.boxes[:, 3], box[3]) - np.maximum(photo.boxes[:, 1], box[1]), 0, None)
        inter = ix * iy
        areas = (photo.boxes[:, 2] - photo.boxes[:, 0]) * (photo.boxes[:, 3] - photo.boxes[:, 1])
        assert (inter / (areas + (box[2] - box[0]) * (box[3] - box[1]) - inter)).max() < 0.4


def test_network_frames_give_every_tile_each_round_with_the_table_beside() -> None:
    photo = tiles_photo()
    frames = network_frames([photo, photo], np.random.default_rng(1), 3)
    assert frames.tiles.shape == (2 * 3 * 12, CROP_SIZE, CROP_SIZE, 3)
    assert np.array_equal(frames.labels, np.tile(photo.labels, 6))
    assert len(frames.background) == 2 * 3 * BACKGROUND_PER_FRAME
