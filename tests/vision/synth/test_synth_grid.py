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
