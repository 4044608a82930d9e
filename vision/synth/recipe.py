"""Recipes: YAML files in ``datasets/`` that fix every parameter of a synthetic dataset.

A recipe is a nested mapping whose keys are the fields of :class:`~vision.synth.scene.SceneParams`; anything
left out keeps its default. Unknown keys are errors (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

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
    import yaml

    path = recipe_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as error:
        raise RecipeError(f"cannot read recipe {str(path)!r}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise RecipeError(f"{path}: malformed YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe is a mapping of parameters")
    about = {k: data.pop(k) for k in ("name", "description", "images", "label_format") if k in data}
    about.setdefault("name", path.stem)
    return build(SceneParams, data, str(path)), about


def build(cls: type, data: dict[str, Any], where: str) -> Any:
    """Fill a (nested) frozen dataclass from a mapping, converting lists to tuples."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(data) - set(fields)
    if unknown:
        raise RecipeError(f"{where}: unknown parameter(s) {', '.join(sorted(unknown))} for {cls.__name__}")
    values = {}
    defaults = cls()
    for name, value in data.items():
        current = getattr(defaults, name)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise RecipeError(f"{where}: {name} must be a mapping")
            values[name] = build(type(current), value, f"{where}: {name}")
        else:
            values[name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


def describe(params: Any) -> Any:
    """A dataclass as plain JSON/YAML data (the exact config that made a dataset)."""
    if dataclasses.is_dataclass(params):
        return {f.name: describe(getattr(params, f.name)) for f in dataclasses.fields(params)}
    if isinstance(params, tuple):
        return [describe(v) for v in params]
    return params
