"""Synthetic photos of the enrolment grid: every tile of one copy in frame and labelled, deliberate mistakes."""

from __future__ import annotations

from collections import Counter

import pytest

from vision.synth.grid import GridChange, grid_labels, render_grid_scene
from vision.synth.scene import SceneParams

PARAMS = SceneParams(split="heldout", editions=("classic",), style_pool=1)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_grid_photo_shows_one_copy_whole(seed: int) -> None:
    scene = render_grid_scene(seed, PARAMS)
    labels = Counter(t.label for t in scene.readable())
    assert labels == Counter(grid_labels(2).values())
    assert sum(labels.values()) == 54


def test_a_missing_and_an_extra_tile() -> None:
    scene = render_grid_scene(1, PARAMS, jokers=0, change=GridChange(missing=((2, 7),), extra=((3.0, 4.5),)))
    labels = Counter(t.label for t in scene.readable())
    assert sum(labels.values()) == 52  # 52 numbers, one left out, one more (of any label) between cells
    expected = Counter(label for cell, label in grid_labels(0).items() if cell != (2, 7))
    assert sum((expected - labels).values()) == 0  # every other cell still holds its tile
