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


def test_the_films_tile_set_is_found_from_its_header() -> None:
    """A filmed game's truth header names its tile set by description (older games) or by index too (newer)."""
    from vision.synth.grid import film_style
    from vision.synth.scene import style_pool

    pool = style_pool("train", 64)
    assert film_style({"style": pool[9].describe()}) == (9, pool[9])
    assert film_style({"style": pool[9].describe(), "style_index": 9}) == (9, pool[9])
    with pytest.raises(ValueError, match="not the style it describes"):
        film_style({"style": pool[9].describe(), "style_index": 10})
    with pytest.raises(ValueError, match="not one of the train pool's 64"):
        film_style({"style": {**pool[9].describe(), "name": "another"}})


def test_a_grid_in_a_given_style_differs_only_in_the_tiles_look() -> None:
    from vision.synth.scene import style_pool

    style = style_pool("train", 64)[9]
    plain, given = render_grid_scene(4, SceneParams()), render_grid_scene(4, SceneParams(), style=style)
    assert given.meta["style"] == style.describe() != plain.meta["style"]
    assert given.meta["camera"] == plain.meta["camera"] and given.meta["lighting"] == plain.meta["lighting"]


def test_a_grid_at_a_given_scale_shows_its_tiles_that_large() -> None:
    """``px_per_mm``: the camera stands where the grid shows at a filmed game's scale (0.93 px/mm: the bench games'
    1280x720 films, tiles ~25 px wide), not where the grid fills the frame (tiles over 30 px there)."""
    import numpy as np

    from vision.synth.geometry import TILE_WIDTH_MM

    def short_side(scene: object) -> float:
        boxes = np.array([t.box for t in scene.readable()])  # type: ignore[attr-defined]
        return float(np.median(np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])))

    params = SceneParams(size=(1280, 720))
    for seed in (1, 2, 3):
        scaled = render_grid_scene(seed, params, px_per_mm=0.93)
        assert len(scaled.readable()) == 54
        assert 0.85 < short_side(scaled) / (0.93 * TILE_WIDTH_MM) < 1.2
        assert short_side(render_grid_scene(seed, params)) > 30
