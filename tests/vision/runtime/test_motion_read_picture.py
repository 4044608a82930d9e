"""ReadPicture (vision/runtime/motion.py): is a frame's play area the picture the table was last read from?

Tiles drawn with cv2 at 1080p size (a tile about 45 px wide); the camera shakes and the encoder adds noise on a still
table, which must not count, while a digit or a colour that changed must."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.runtime.motion import SAME_PIXELS, ReadPicture, _changed_pixels, _changed_whatever_the_shake, _picture

REGION = (100.0, 80.0, 700.0, 420.0)
RED, BLUE = (40, 40, 200), (190, 90, 30)


def table(digits: dict[int, tuple[str, tuple[int, int, int]]], shift: tuple[int, int] = (0, 0)) -> np.ndarray:
    """A grey table with a row of white tiles, tile ``k`` showing ``digits[k]`` (text, ink colour)."""
    image = np.full((540, 960, 3), (120, 125, 118), np.uint8)
    dx, dy = shift
    for k, (text, ink) in digits.items():
        x, y = 160 + 60 * k + dx, 200 + dy
        cv2.rectangle(image, (x, y), (x + 44, y + 60), (235, 238, 240), -1)
        cv2.putText(image, text, (x + 8, y + 42), cv2.FONT_HERSHEY_SIMPLEX, 1.2, ink, 3, cv2.LINE_AA)
    return image


ROW = {0: ("8", RED), 1: ("12", BLUE), 2: ("5", RED), 3: ("9", BLUE)}


def noisy(image: np.ndarray, seed: int = 1) -> np.ndarray:
    noise = np.random.default_rng(seed).integers(-5, 6, image.shape)
    return np.clip(image.astype(np.int16) + noise, 0, 255).astype(np.uint8)


def remembered(image: np.ndarray) -> ReadPicture:
    picture = ReadPicture()
    picture.remember(image, REGION)
    return picture


@pytest.mark.parametrize(
    "shift",
    [
        (0, 0),  # compression noise only
        (3, 0),  # the camera shaken sideways
        (-2, 2),  # and diagonally
    ],
)
def test_a_still_table_shaken_and_noisy_is_the_same_picture(shift: tuple[int, int]) -> None:
    picture = remembered(noisy(table(ROW), seed=1))
    assert picture.same(noisy(table(ROW, shift), seed=2), REGION)


@pytest.mark.parametrize(
    "tile, change",
    [
        (0, ("3", RED)),  # 8 -> 3: strokes taken away only
        (0, ("0", RED)),  # 8 -> 0: the middle stroke alone
        (2, ("6", RED)),  # 5 -> 6: one stroke added
        (3, ("9", RED)),  # blue 9 -> red 9: the colour alone
        (1, ("13", BLUE)),  # 12 -> 13
    ],
)
def test_a_tile_that_changed_in_place_is_a_new_picture(tile: int, change: tuple[str, tuple[int, int, int]]) -> None:
    picture = remembered(noisy(table(ROW), seed=1))
    assert not picture.same(noisy(table({**ROW, tile: change}), seed=2), REGION)


def test_a_tile_taken_or_laid_is_a_new_picture() -> None:
    picture = remembered(table(ROW))
    assert not picture.same(table({k: v for k, v in ROW.items() if k != 1}), REGION)
    assert not picture.same(table({**ROW, 5: ("1", BLUE)}), REGION)


def test_a_camera_that_moved_further_than_a_shake_shows_another_picture() -> None:
    picture = remembered(table(ROW))
    assert not picture.same(table(ROW, (8, 0)), REGION)


def test_nothing_remembered_or_another_region_is_never_the_same() -> None:
    image = table(ROW)
    assert not ReadPicture().same(image, REGION)
    picture = remembered(image)
    assert picture.same(image, REGION)
    assert not picture.same(image, (100.0, 80.0, 701.0, 420.0))  # the play area moved
    picture.forget()
    assert not picture.same(image, REGION)


def _shaken_pairs() -> list[tuple[np.ndarray, np.ndarray, str]]:
    """Pictures (cut as ReadPicture cuts them) of the table before and after, each after noise and a shake."""
    pairs = []
    for seed, (change, after) in enumerate(
        [
            ("a digit changed", {**ROW, 0: ("3", RED)}),
            ("a colour changed", {**ROW, 3: ("9", RED)}),
            ("a tile laid", {**ROW, 5: ("1", BLUE)}),
            ("a tile taken", {k: v for k, v in ROW.items() if k != 1}),
            ("nothing", ROW),
        ]
    ):
        for shift in [(0, 0), (3, 0), (-2, 2), (0, -4)]:
            before = _picture(noisy(table(ROW), seed=seed), REGION)
            pairs.append((before, _picture(noisy(table(after, shift), seed=seed + 10), REGION), change))
    return pairs


@pytest.mark.parametrize("shake", [(0.0, 0.0), (0.4, -0.3), (2.5, 1.0), (-3.97, 4.0), (4.0, -4.0), (-1.0, 3.2)])
def test_what_counts_as_changed_whatever_the_shake_is_never_more_than_a_shake_undone_finds(
    shake: tuple[float, float],
) -> None:
    """The test that spares the phase correlation may only say "changed" where undoing any shake within
    SAME_SHIFT_PX would: its count is a lower bound of _changed_pixels for every such shift."""
    for before, after, _ in _shaken_pairs():
        assert _changed_whatever_the_shake(before, after) <= _changed_pixels(before, after, *shake)


def test_a_tile_laid_or_taken_needs_no_phase_correlation() -> None:
    for before, after, change in _shaken_pairs():
        surely = _changed_whatever_the_shake(before, after)
        if change in ("a tile laid", "a tile taken"):
            assert surely >= SAME_PIXELS, change
        if change == "nothing":
            assert surely == 0  # a shaken still table: left to the phase correlation, as before


def test_a_frame_s_picture_is_cut_once_per_thread() -> None:
    import threading

    frame = np.random.default_rng(3).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    region = (100.0, 50.0, 1100.0, 650.0)
    here = _picture(frame, region)
    assert _picture(frame, region) is here  # the same frame again: the picture already cut
    there: list[np.ndarray] = []
    worker = threading.Thread(target=lambda: there.append(_picture(frame, region)))
    worker.start()
    worker.join()
    assert there[0] is not here and np.array_equal(there[0], here)  # another thread cuts its own
