"""Training recipes (``models/detector.yaml``, ``models/classifier.yaml``): read and checked before any slow step.

A recipe that is unreadable, of the wrong kind, or whose sections are not mappings is a one-line
:class:`TrainingRecipeError` naming the file, raised before a dataset is built or a model is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vision.runtime.yamlfile import YamlFileError, read_yaml, require_mapping

KINDS = ("detector", "classifier")
SECTIONS: dict[str, tuple[str, ...]] = {
    "detector": ("data", "train"),
    "classifier": ("data", "model", "train", "augment", "evaluate"),
}
"""The parts of a recipe of each kind that are mappings of settings (the detector's ``model`` is a file name)."""


class TrainingRecipeError(ValueError):
    """A training recipe that cannot be read or is not a recipe of the kind needed."""


def load_training_recipe(path: Path | str, kind: str | None = None) -> dict[str, Any]:
    """The recipe at ``path``; ``kind`` (detector, classifier) if it must be that one."""
    path = Path(path)
    try:
        recipe = require_mapping(read_yaml(path, "training recipe"), path, "training recipe")
    except YamlFileError as error:
        raise TrainingRecipeError(str(error)) from None
    found = recipe.get("kind")
    if found not in KINDS or (kind is not None and found != kind):
        wanted = f"'kind: {kind}'" if kind else " or ".join(f"'kind: {k}'" for k in KINDS)
        raise TrainingRecipeError(f"{path}: a training recipe needs {wanted}")
    for section in SECTIONS[found]:
        if not isinstance(recipe.get(section, {}), dict):
            raise TrainingRecipeError(f"{path}: {section} must be a mapping of settings")
    return recipe
