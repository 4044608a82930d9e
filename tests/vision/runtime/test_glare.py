"""Blind spots: the parts of the play area a glare washes out, outside the tiles read."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.runtime.glare import BLIND_LEVEL, blind_spots, photo_blind_spots

SIZE = (1920, 1080)
SCALE = 320 / 1920
TILE = (44, 60)
"""A tile's face in a 1080p frame (26 x 36 mm at about 1.7 px per mm)."""
TILE_AREA = TILE[0] * TILE[1]
CLOTH = (40, 70, 30)
BODY = (187, 215, 226)


def table(spot: tuple[int, int, int] | None = None, tiles: list[tuple[int, int]] = ()) -> tuple[np.ndarray, np.ndarray]:
    """A dark cloth with tiles at ``tiles`` (top-left corners) and, with ``spot`` (x, y, radius), a lamp's light added
    (a Gaussian hot spot, clipping at its centre): the frame and the tiles' boxes."""
    image = np.empty((SIZE[1], SIZE[0], 3), np.float32)
    image[:] = CLOTH
    boxes = []
    for x, y in tiles:
        image[y : y + TILE[1], x : x + TILE[0]] = BODY
        image[y + 15 : y + 45, x + 18 : x + 26] = 35  # the digit's stroke
        boxes.append((x, y, x + TILE[0], y + TILE[1]))
    if spot is not None:
        x, y, radius = spot
        yy, xx = np.mgrid[0 : SIZE[1], 0 : SIZE[0]]
        light = 300.0 * np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2.0 * radius**2))
        image += light[..., None]
    return np.clip(image, 0, 255).astype(np.uint8), np.array(boxes, np.float32).reshape(-1, 4)


def play_area() -> np.ndarray:
    mask = np.zeros((round(SIZE[1] * SCALE), round(SIZE[0] * SCALE)), np.uint8)
    mask[10:-10, 10:-10] = 1
    return mask


def test_a_hot_spot_that_clips_the_cloth_is_a_blind_spot() -> None:
    image, boxes = table((960, 540, 90), [(300, 300), (350, 300), (400, 300)])
    spots = blind_spots(image, play_area(), SCALE, boxes, TILE_AREA)
    assert spots and spots.centre_px == pytest.approx((960, 540), abs=8)
    washed = np.count_nonzero(image.min(axis=2) >= BLIND_LEVEL) / TILE_AREA
    assert spots.tiles == pytest.approx(washed, rel=0.25)


def test_the_tiles_read_are_not_blind_but_a_tile_washed_white_is() -> None:
    """Tile bodies clipped by a gentler light, their digits dark: read, or readable, nothing is hidden there. A tile
    washed white all over (its digit gone) and not read is a place a tile hides."""
    image, boxes = table(None, [(300, 300), (350, 300), (400, 300), (450, 300)])
    image[image.min(axis=2) >= 180] = 250  # the bodies clipped
    assert not blind_spots(image, play_area(), SCALE, boxes, TILE_AREA)
    assert not blind_spots(image, play_area(), SCALE, boxes[:0], TILE_AREA)
    image[300 : 300 + TILE[1], 400 : 400 + TILE[0]] = 250  # the third tile's digit washed out too
    spots = blind_spots(image, play_area(), SCALE, boxes[[0, 1, 3]], TILE_AREA)
    assert spots and spots.centre_px == pytest.approx((422, 330), abs=4) and 0.5 <= spots.tiles <= 1.1


def test_no_glare_no_blind_spot() -> None:
    image, boxes = table(None, [(300, 300), (350, 300)])
    spots = blind_spots(image, play_area(), SCALE, boxes, TILE_AREA)
    assert not spots and spots.tiles == 0 and spots.to_json() == {"tiles": 0.0, "at_px": None}


def test_thin_bright_lines_and_small_highlights_are_not_blind() -> None:
    image, boxes = table()
    cv2.line(image, (200, 200), (1500, 200), (255, 255, 255), 3)  # a paper's edge, a tile's rim in the light
    cv2.circle(image, (900, 700), 12, (255, 255, 255), -1)  # a highlight on a cup: a tenth of a tile
    assert not blind_spots(image, play_area(), SCALE, boxes, TILE_AREA)


def test_outside_the_play_area_is_not_looked_at() -> None:
    image, boxes = table((20, 20, 30))
    assert not blind_spots(image, play_area(), SCALE, boxes, TILE_AREA)


def test_reached_by_a_footprint_on_or_next_to_the_spot() -> None:
    image, boxes = table((960, 540, 90))
    spots = blind_spots(image, play_area(), SCALE, boxes, TILE_AREA)
    footprint = np.zeros(spots.mask.shape, bool)
    assert not spots.reached_by(footprint) and not spots.reached_by(None)
    ys, xs = np.nonzero(spots.mask)
    right = int(np.argmax(xs))
    footprint[ys[right], xs[right] + 2] = True  # two small pixels beside it
    assert spots.reached_by(footprint)
    far = np.zeros(spots.mask.shape, bool)
    far[5, 5] = True
    assert not spots.reached_by(far)


def test_a_photo_is_searched_whole_for_blind_spots_its_tile_size_from_its_boxes() -> None:
    tiles = [(300 + 60 * i, 300) for i in range(4)]
    glared, boxes = table(spot=(1200, 700, 110), tiles=tiles)
    spots = photo_blind_spots(glared, boxes)
    assert spots and spots.centre_px is not None
    assert abs(spots.centre_px[0] - 1200) < 40 and abs(spots.centre_px[1] - 700) < 40 and spots.tiles > 5
    plain, _ = table(tiles=tiles)
    assert not photo_blind_spots(plain, boxes)  # no glare: none
    assert not photo_blind_spots(glared, boxes[:2])  # two boxes cannot tell a tile's size: none said
