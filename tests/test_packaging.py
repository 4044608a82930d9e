"""The trained models install with the package: a wheel holds them as the data package ``rummikub_models`` and an
installed reader finds them without a source checkout (issue 19)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from setuptools import find_packages

from vision.runtime.models import float_weights
from vision.runtime.recognition import CLASSIFIER_FILE, DETECTOR_FILE, MODELS_PACKAGE, default_models_dir

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
# What the default reader loads (each model with its config, the classifier's familiarity), the INT8 classifier's
# float weights (enrolment fine-tunes them) and the model card.
SHIPPED = {
    "README.md",
    DETECTOR_FILE,
    DETECTOR_FILE.replace(".onnx", ".json"),
    CLASSIFIER_FILE,
    float_weights(Path(CLASSIFIER_FILE)).name,
    CLASSIFIER_FILE.replace(".onnx", ".json"),
    CLASSIFIER_FILE.replace(".onnx", "-familiarity.npz"),
    CLASSIFIER_FILE.replace(".onnx", "-familiarity.json"),
}


def test_the_explicit_package_list_holds_every_code_package_and_the_models():
    """`packages` is a list (a find directive cannot rename models/): a new subpackage must be added to it."""
    code = set(find_packages(where=str(ROOT), include=["referee*", "vision*"]))
    assert set(SETUPTOOLS["packages"]) == code | {MODELS_PACKAGE}
    assert SETUPTOOLS["package-dir"] == {MODELS_PACKAGE: "models"}


def test_package_data_names_every_shipped_model_file_and_each_exists():
    assert set(SETUPTOOLS["package-data"][MODELS_PACKAGE]) == SHIPPED
    for name in SHIPPED:
        assert (ROOT / "models" / name).is_file(), name


def test_the_default_models_are_the_installed_data_package(monkeypatch):
    monkeypatch.delenv("RUMMIKUB_MODELS", raising=False)
    # In the editable install the data package is the repository's models/ folder itself.
    assert default_models_dir().resolve() == (ROOT / "models").resolve()
    monkeypatch.setenv("RUMMIKUB_MODELS", "/somewhere/else")
    assert default_models_dir() == Path("/somewhere/else")


def test_a_built_wheel_holds_the_models(tmp_path):
    """Builds the wheel from a copy of the sources (about 5 s; no build isolation, so no download)."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("referee", "vision", "models"):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q"]
    built = subprocess.run(
        [*command, "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode and "No module named pip" in built.stderr:
        pytest.skip("pip is not installed in this environment")
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("rummikub_referee-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"{MODELS_PACKAGE}/{name}" for name in SHIPPED} <= names
    assert not any(name.startswith(f"{MODELS_PACKAGE}/") and name.endswith(".yaml") for name in names)
    assert "vision/runtime/recognition.py" in names and "vision/ui/station_static/station.js" in names
    assert {"vision/ui/report_static/report.css", "vision/ui/report_static/report.js"} <= names  # the report's page
