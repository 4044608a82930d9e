"""Training recipes are read and checked before any slow step: kind, and settings that must be mappings."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.train.recipes import TrainingRecipeError, load_training_recipe

MODELS = Path(__file__).resolve().parents[3] / "models"


@pytest.mark.parametrize("path", sorted(MODELS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_shipped_recipe_loads(path: Path) -> None:
    assert load_training_recipe(path)["kind"] in ("detector", "classifier")


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        ("kind: rocket", None, "needs 'kind: detector' or 'kind: classifier'"),
        ("data: {}", None, "needs 'kind: detector' or 'kind: classifier'"),
        ("kind: classifier", "detector", "needs 'kind: detector'"),
        ("kind: detector\ndata: 5", None, "data must be a mapping of settings"),  # was AttributeError in training
        ("kind: classifier\naugment: [1]", None, "augment must be a mapping of settings"),
        ("- kind: detector", None, "a training recipe is a mapping"),
        ("kind: [detector", None, "malformed YAML"),
        ("[" * 100_000, None, "nested too deeply"),
    ],
)
def test_bad_recipes_are_one_line(tmp_path: Path, text: str, kind: str | None, message: str) -> None:
    path = tmp_path / "recipe.yaml"
    path.write_text(text)
    with pytest.raises(TrainingRecipeError, match=message) as error:
        load_training_recipe(path, kind)
    assert "\n" not in str(error.value)


def test_the_detectors_model_is_a_file_name_not_settings(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text("kind: detector\nmodel: yolov8n.yaml\ndata: {}\n")
    assert load_training_recipe(tmp_path / "r.yaml", "detector")["model"] == "yolov8n.yaml"
