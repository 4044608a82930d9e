"""The layers of the code base as a contract (STYLE.md): the rules never import vision, the runtime never imports
training, the synthetic generator or the benchmarks.

Every module of ``referee/`` and ``vision/`` is parsed with :mod:`ast` and each of its imports (at module level and
inside functions alike: a lazy import is still a dependency) is checked against the tables below. The tables are the
only thing to edit when modules move (the subpackage re-organisation) or a new module is added: a module that no
pattern names fails :func:`test_every_module_has_a_layer`.
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("referee", "vision")

LAYERS: dict[str, tuple[str, ...]] = {
    # The rules engine: tiles, sets, tables, profiles, rulings, the game's state machine, its CLI.
    "rules": ("referee", "referee.*"),
    # Pixels to tables: detection, classification, colour, layout, the play area, capture, seats, motion.
    "runtime": ("vision", "vision.runtime", "vision.runtime.*"),
    # The game on camera: the per-frame pipeline (frames in, events out), the camera's side of the game, its log.
    "game": ("vision.game", "vision.game.*"),
    # What people look at: the referee station, the analysis report, annotated photos.
    "ui": ("vision.ui", "vision.ui.*"),
    # The drivers that put the rest together: `analyze`, `live`, `batch` and what they share.
    "session": ("vision.session", "vision.session.*"),
    # Synthetic scenes and filmed games with their ground truth.
    "synth": ("vision.synth", "vision.synth.*"),
    # Training, export and quantization (torch, ultralytics).
    "train": ("vision.train", "vision.train.*"),
    # Evaluation and benchmarks.
    "eval": ("vision.eval", "vision.eval.*"),
    # The command line: thin functions over the layers below.
    "cli": ("vision.cli", "vision.cli.*"),
}
"""Layer -> the modules in it (fnmatch patterns; an exact name wins over a pattern)."""

MAY_IMPORT: dict[str, frozenset[str]] = {
    "rules": frozenset({"rules"}),
    "runtime": frozenset({"rules", "runtime"}),
    "game": frozenset({"rules", "runtime", "game"}),
    "ui": frozenset({"rules", "runtime", "game", "ui"}),
    "session": frozenset({"rules", "runtime", "game", "ui", "session"}),
    "synth": frozenset({"rules", "runtime", "game", "synth"}),
    "train": frozenset({"rules", "runtime", "game", "synth", "train"}),
    "eval": frozenset({"rules", "runtime", "game", "ui", "session", "synth", "train", "eval"}),
    "cli": frozenset(LAYERS),
}
"""Layer -> the layers its modules may import (the allowed directions)."""

FORBIDDEN_PACKAGES: dict[str, frozenset[str]] = {
    # The rules engine is free of imaging and numeric dependencies.
    "rules": frozenset({"numpy", "cv2", "onnxruntime", "PIL", "torch", "ultralytics", "scipy"}),
    # Adapters at the edges: what runs a game never imports torch.
    "runtime": frozenset({"torch", "torchvision", "ultralytics"}),
    "game": frozenset({"torch", "torchvision", "ultralytics"}),
    "session": frozenset({"torch", "torchvision", "ultralytics"}),
    "ui": frozenset({"torch", "torchvision", "ultralytics"}),
}
"""Layer -> third-party packages its modules never import."""

EXCEPTIONS: dict[tuple[str, str], str] = {
    ("referee.ilp", "numpy"): "the ILP test oracle: imported lazily when it runs (scipy from the bench/dev extras)",
    ("referee.ilp", "scipy"): "the ILP test oracle: imported lazily when it runs (scipy from the bench/dev extras)",
    ("referee.bench", "scipy"): "the solver benchmark checks lazily whether the ILP reference can run",
}
"""(module, imported package or module) -> why this one import is allowed although its layer forbids it."""

APART: tuple[tuple[str, str], ...] = (
    # The two game drivers share vision.session.common; neither is built on the other.
    ("vision.session.live", "vision.session.analyze"),
)
"""Pairs of modules of one layer that must not import each other (either way)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "samples" not in path.relative_to(ROOT).parts
    }


def imports_of(module: str, source: str, *, is_package: bool = False) -> set[str]:
    """Every module ``source`` imports, at any depth of the tree (``from a import b`` yields ``a`` and ``a.b``:
    ``b`` may be a module), relative imports resolved against ``module``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
    return found


def layer_of(module: str) -> str | None:
    exact = [layer for layer, patterns in LAYERS.items() if module in patterns]
    if exact:
        return exact[0]
    matches = [layer for layer, patterns in LAYERS.items() if any(fnmatch.fnmatchcase(module, p) for p in patterns)]
    return matches[0] if len(matches) == 1 else None


def violations(module: str, imported: set[str], known: set[str]) -> list[str]:
    """What ``module`` imports against the tables: one line per offending import."""
    layer = layer_of(module)
    if layer is None:
        return [f"{module}: in no layer (add it to LAYERS)"]
    found = []
    for name in sorted(imported):
        top = name.split(".")[0]
        if top in PACKAGES:
            if name not in known:  # ``from vision.x import function``: only the module counts
                continue
            target = layer_of(name)
            if target is not None and target not in MAY_IMPORT[layer] and (module, name) not in EXCEPTIONS:
                found.append(f"{module} ({layer}) imports {name} ({target})")
            if any({module, name} == set(pair) for pair in APART):
                found.append(f"{module} imports {name}: these two are kept apart (APART)")
        elif top in FORBIDDEN_PACKAGES.get(layer, ()) and (module, top) not in EXCEPTIONS:
            found.append(f"{module} ({layer}) imports {name}")
    return found


def scan() -> dict[str, set[str]]:
    modules = all_modules()
    return {
        module: imports_of(module, path.read_text(encoding="utf-8"), is_package=path.name == "__init__.py")
        for module, path in modules.items()
    }


def test_every_module_has_a_layer() -> None:
    unplaced = [module for module in all_modules() if layer_of(module) is None]
    assert not unplaced, f"modules in no layer (or in two by pattern): {unplaced}"


def test_the_tables_are_consistent() -> None:
    assert set(MAY_IMPORT) == set(LAYERS)
    assert all(layer in MAY_IMPORT[layer] for layer in LAYERS)
    assert set(FORBIDDEN_PACKAGES) <= set(LAYERS)
    modules = all_modules()
    stale = [m for m, _ in EXCEPTIONS if m not in modules] + [m for pair in APART for m in pair if m not in modules]
    assert not stale, f"the tables name modules that do not exist: {stale}"


def test_the_layers_hold() -> None:
    imports = scan()
    known = set(imports)
    problems = [line for module, imported in sorted(imports.items()) for line in violations(module, imported, known)]
    assert not problems, "layering broken:\n" + "\n".join(problems)


def test_the_exceptions_are_still_needed() -> None:
    imports = scan()
    unused = [
        (module, name)
        for module, name in EXCEPTIONS
        if not any(i == name or i.startswith(name + ".") for i in imports.get(module, ()))
    ]
    assert not unused, f"exceptions no module needs any more (remove them): {unused}"


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        # a lazy import inside a function still counts
        ("vision.game.pipeline", "def f():\n    from vision.synth import scene\n", "imports vision.synth.scene"),
        # training may not import a benchmark
        (
            "vision.train.quantize",
            "from vision.eval.pipeline_bench import load_truth\n",
            "imports vision.eval.pipeline_bench",
        ),
        # the rules engine imports no imaging library, nor vision
        ("referee.tiles", "import numpy as np\n", "imports numpy"),
        ("referee.table", "from vision.runtime import detections\n", "imports vision.runtime.detections"),
        # the runtime never imports torch
        ("vision.runtime.recognition", "def f():\n    import torch\n", "imports torch"),
        # a relative import is resolved
        ("vision.runtime.crops", "from ..synth import scene\n", "imports vision.synth.scene"),
        # the two drivers are kept apart
        ("vision.session.live", "from vision.session.analyze import END_OF_VIDEO\n", "kept apart"),
    ],
)
def test_a_leak_is_caught(module: str, source: str, expected: str) -> None:
    known = set(all_modules())
    found = violations(module, imports_of(module, source), known)
    assert any(expected in line for line in found), found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("vision.train.quantize", "from vision.game.pipeline import detection_region\nimport torch\n"),
        (
            "vision.eval.pipeline_bench",
            "from vision.synth.video import write_game\nfrom vision.train import quantize\n",
        ),
        ("vision.synth.scene", "from vision.runtime.seats import SEATS\n"),
    ],
)
def test_an_allowed_direction_passes(module: str, source: str) -> None:
    assert violations(module, imports_of(module, source), set(all_modules())) == []


def test_the_scan_sees_real_imports() -> None:
    imports = scan()
    assert "vision.runtime.reader" in imports["vision.game.pipeline"]  # module level
    assert "vision.runtime.calibrate" in imports["vision.game.pipeline"]  # inside a function
    assert "onnxruntime" in imports["vision.runtime.models"]
