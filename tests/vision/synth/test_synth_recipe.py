"""Synthetic-data recipes: every shipped recipe loads, and every wrong value is one RecipeError naming the file,
the parameter and what it takes (a bad value used to surface as a traceback deep in rendering, or not at all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.synth.recipe import RECIPE_DIR, RecipeError, load_recipe
from vision.synth.scene import SceneParams


@pytest.mark.parametrize("path", sorted(RECIPE_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_recipe_loads(path: Path) -> None:
    params, about = load_recipe(path)
    assert isinstance(params, SceneParams) and about["name"]


def test_values_become_the_fields_types(tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text("images: 3\nsize: [640, 480]\nmin_face_px: 12\ncamera:\n  k1: [-0.1, 0.0]\n")
    params, about = load_recipe(path)
    assert params.size == (640, 480) and params.camera.k1 == (-0.1, 0.0) and params.min_face_px == 12
    assert about == {"images": 3, "name": "small"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("size: big", "size must be a list of 2 numbers, not 'big'"),
        ("size: [640]", "size must be a list of 2 numbers"),  # a pair with one side
        ("size: [10, 10]", "size must be 64-8192 pixels a side"),
        ("size: [640.5, 480]", "size must be a whole finite number"),
        ("pool_probability: high", "pool_probability must be a finite number, not 'high'"),
        ("pool_probability: true", "pool_probability must be a finite number, not True"),  # YAML's yes/no
        ("pool_probability: .nan", "pool_probability must be a finite number, not nan"),
        ("pool_probability: .inf", "pool_probability must be a finite number, not inf"),
        ("pool_probability: 1.5", "pool_probability is a share between 0 and 1"),
        ("content:\n  tiles: [80, 12]", "content: tiles is a range \\[low, high\\]"),
        ("content:\n  copies: 0", "content: copies must be at least 1"),
        ("content:\n  jokers: -2", "content: jokers must be at least 0"),
        ("content: 5", "content must be a mapping"),
        ("camera:\n  tilt: [0, 10]", "camera: unknown parameter\\(s\\) tilt for CameraParams"),
        ("split: nope", "split must be one of train, heldout, not 'nope'"),
        ("fonts: 7", "fonts must be one of base, wide, not 7"),
        ("images: 0", "images must be a whole number of at least 1, not 0"),
        ("images: many", "images must be a whole number of at least 1"),
        ("label_format: xyz", "label_format must be one of detect, obb"),
        ("name: [1]", "name and description are texts"),
        ("- a\n- b", "a recipe is a mapping of names to values, not a list"),
        ("1: 2", "a recipe is a mapping of names to values, not a mapping with keys that are not names"),
        ("size: [640, 480", "malformed YAML"),
        ("[" * 100_000 + "]" * 100_000, "YAML nested too deeply to be a recipe"),  # was a RecursionError traceback
    ],
)
def test_wrong_values_are_one_line_naming_the_parameter(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(RecipeError, match=message) as error:
        load_recipe(path)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)


def test_an_empty_recipe_keeps_every_default(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    params, about = load_recipe(tmp_path / "empty.yaml")
    assert params == SceneParams() and about == {"name": "empty"}
