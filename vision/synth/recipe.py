"""Recipes: YAML files in ``datasets/`` that fix every parameter of a synthetic dataset.

A recipe is a nested mapping whose keys are the fields of :class:`~vision.synth.scene.SceneParams`; anything
left out keeps its default. Unknown keys are errors (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from vision.runtime.yamlfile import YamlFileError, read_yaml, require_mapping
from vision.synth.editions import EDITION_NAMES, MIX, check_editions
from vision.synth.effects import LIGHTINGS, SENSORS
from vision.synth.scene import SceneParams

RECIPE_DIR = Path(__file__).resolve().parents[2] / "datasets"
DEFAULT_RECIPE = "synth-train"


class RecipeError(ValueError):
    """A recipe that cannot be read or names a parameter that does not exist."""


def recipe_path(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"} or path.exists():
        return path
    return RECIPE_DIR / f"{name_or_path}.yaml"


def load_recipe(name_or_path: str | Path) -> tuple[SceneParams, dict[str, Any]]:
    """The scene parameters of a recipe, and the recipe's own fields (name, description, images...)."""
    path = recipe_path(name_or_path)
    try:
        data = dict(require_mapping(read_yaml(path, "recipe"), path, "recipe"))
    except YamlFileError as error:
        raise RecipeError(str(error)) from None
    about = {k: data.pop(k) for k in ABOUT_FIELDS if k in data}
    about.setdefault("name", path.stem)
    _check_about(about, str(path))
    params = build(SceneParams, data, str(path))
    if problem := check_editions(params.editions, params.split):
        raise RecipeError(f"{path}: editions: {problem}")
    return params, about


ABOUT_FIELDS = ("name", "description", "images", "label_format")
"""A recipe's own fields, beside the scene parameters."""
LABEL_FORMATS = ("detect", "obb")
SPLITS = ("train", "heldout")
"""Pools of tile styles, table materials and lighting (``vision.synth.faces``, ``textures``, ``effects``)."""
FONT_SETS = ("base", "wide")
IMAGE_SIDES = (64, 8192)
"""Image sizes the renderer makes, in pixels (``synth --size`` takes the same)."""
CHOICES: dict[str, tuple[str, ...]] = {"split": SPLITS, "fonts": FONT_SETS, "lighting": LIGHTINGS, "sensor": SENSORS}
SHARE_SUFFIXES = ("_share", "_probability", "_visible")
"""Parameters named so are shares of 0 to 1."""
WHOLE_MINIMUM = {"style_pool": 1, "copies": 1}
"""Whole-number parameters are counts, at least 0; these at least 1 (styles drawn from, copies of each tile)."""


def _check_about(about: dict[str, Any], where: str) -> None:
    if not isinstance(about["name"], str) or not isinstance(about.get("description", ""), str):
        raise RecipeError(f"{where}: name and description are texts")
    images = about.get("images", 1)
    if isinstance(images, bool) or not isinstance(images, int) or images < 1:
        raise RecipeError(f"{where}: images must be a whole number of at least 1, not {images!r}")
    if about.get("label_format", LABEL_FORMATS[0]) not in LABEL_FORMATS:
        raise RecipeError(f"{where}: label_format must be one of {', '.join(LABEL_FORMATS)}")


def build(cls: type, data: dict[str, Any], where: str) -> Any:
    """Fill a (nested) frozen dataclass from a mapping, converting lists to tuples; every value must have the type
    of the field's default (a number where a number is, a pair where a pair is), finite and in range."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields)
    if unknown:
        names = ", ".join(sorted(str(name) for name in unknown))
        raise RecipeError(f"{where}: unknown parameter(s) {names} for {cls.__name__}")
    values = {}
    defaults = cls()
    for name, value in data.items():
        current = getattr(defaults, name)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise RecipeError(f"{where}: {name} must be a mapping")
            values[name] = build(type(current), value, f"{where}: {name}")
        else:
            values[name] = _checked_value(name, value, current, where)
    return cls(**values)


def _checked_value(name: str, value: Any, default: Any, where: str) -> Any:
    """``value`` as the field's type (a list becomes a tuple), or one line saying what the field takes."""
    if name == "editions":  # a list of names, any length
        known = (*EDITION_NAMES, MIX)
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise RecipeError(f"{where}: editions must be a list of edition names ({', '.join(known)}), not {value!r}")
        return tuple(value)
    if isinstance(default, tuple):
        if not isinstance(value, list | tuple) or len(value) != len(default):
            raise RecipeError(f"{where}: {name} must be a list of {len(default)} numbers, not {value!r}")
        pair = tuple(_checked_value(name, v, d, where) for v, d in zip(value, default, strict=True))
        if name == "size" and not all(IMAGE_SIDES[0] <= side <= IMAGE_SIDES[1] for side in pair):
            raise RecipeError(f"{where}: size must be {IMAGE_SIDES[0]}-{IMAGE_SIDES[1]} pixels a side, not {value!r}")
        if name != "size" and pair[0] > pair[1]:
            raise RecipeError(f"{where}: {name} is a range [low, high], not {value!r}")
        return pair
    if isinstance(default, str):
        choices = CHOICES.get(name)
        if not isinstance(value, str) or (choices and value not in choices):
            raise RecipeError(f"{where}: {name} must be one of {', '.join(choices or ('a text',))}, not {value!r}")
        return value
    whole = isinstance(default, int)
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float) or not math.isfinite(value):
        raise RecipeError(f"{where}: {name} must be a {'whole ' if whole else ''}finite number, not {value!r}")
    if whole and value < WHOLE_MINIMUM.get(name, 0):
        raise RecipeError(f"{where}: {name} must be at least {WHOLE_MINIMUM.get(name, 0)}, not {value!r}")
    if name.endswith(SHARE_SUFFIXES) and not 0 <= value <= 1:
        raise RecipeError(f"{where}: {name} is a share between 0 and 1, not {value!r}")
    return value


def describe(params: Any) -> Any:
    """A dataclass as plain JSON/YAML data (the exact config that made a dataset)."""
    if dataclasses.is_dataclass(params):
        return {f.name: describe(getattr(params, f.name)) for f in dataclasses.fields(params)}
    if isinstance(params, tuple):
        return [describe(v) for v in params]
    return params
