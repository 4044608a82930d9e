"""A training run (detector or classifier) on a lent GPU machine that has torch but none of this project's data,
fonts or training packages, and nothing it can download (the workplace's ``device`` tool: one call, a few minutes).

Here, once (the folders are ignored by git and travel with the call as ``carry``)::

    echo /.gpu/ >> .git/info/exclude
    python -m vision.train.remote pack .gpu --init cache/tile-detector-v5b-fp32.onnx
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \\
        --platform manylinux_2_28_x86_64 -d .gpu/wheels ultralytics==8.4.190 ultralytics-platform==0.1.99 \\
        ultralytics-thop==2.2.3

There (``carry: [".gpu"]``; the recipe's own ``rummikub-referee synth`` lines, in its header, render its scenes on
the machine's cores; ``--budget-s`` is what the whole command may take, the training gets what is left)::

    python3 -m pip install -q --no-index --no-deps --target /tmp/site .gpu/wheels/*.whl &&
    PYTHONPATH=/tmp/site:.gpu/site:. python3 -m vision.train.remote run models/detector-v5b.yaml --pack .gpu \\
        --budget-s 520 --out $OUT

:func:`pack` gathers what the renderer and the training read from this machine: every font file the synthetic
renderer may use (Debian's under their own paths, PyPI's font packages as modules), the real training photos (the
``train`` split only: the held-out photos never leave), the model to continue from, and a stand-in for polars
(Ultralytics reads its results.csv with it; the wheel is too large to carry). :func:`run` puts the fonts in place,
renders the recipe's scenes and trains within the budget left: a detector recipe gets Ultralytics' ``time`` and comes
back as its FP32 ONNX model, card and results; a classifier recipe (``train.device: cuda``) gets
``max_total_minutes`` (cutting its tiles counts too) and comes back as ``<name>.onnx``, its card and its ``.pt``
weights. Measured on 2026-11-27 (one H100): detector v5 rendered 3,280 scenes in 125 s and trained 43 epochs in
295 s of a 462-s call. The classifier path is tested on the CPU only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from vision.runtime import realdata
from vision.runtime.models import float_weights
from vision.synth import fontfiles

SYNTH_LINE = re.compile(r"^#\s+rummikub-referee (synth .*)$", re.MULTILINE)
"""A recipe header's line that renders scenes it trains on."""
RESERVE_S = 75.0
"""Seconds of the budget kept for the last validation, the ONNX export and copying the results."""
SETUP_SHARE = 0.92
"""Share of the training time left to Ultralytics' ``time`` (the dataset build and its RAM cache come out of it)."""

POLARS_STAND_IN = '''"""A stand-in for polars (vision.train.remote): Ultralytics reads its results.csv with it."""
import csv
import io


class DataFrame:
    def __init__(self, data=None):
        self._columns = dict(data or {})

    def to_dict(self, as_series=True):
        return self._columns

    def write_csv(self):
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(self._columns)
        writer.writerows(zip(*self._columns.values()))
        return out.getvalue()


def read_csv(source, infer_schema_length=None, **_):
    text = source.decode() if isinstance(source, (bytes, bytearray)) else open(source).read()
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    header = [name.strip() for name in rows[0]]
    columns = {name: [] for name in header}
    for row in rows[1:]:
        for name, value in zip(header, row):
            try:
                value = float(value)
            except ValueError:
                pass
            columns[name].append(value)
    return DataFrame(columns)
'''


def pack(out: Path, *, init: Path | None = None) -> dict[str, Any]:
    """Gather into ``out`` what a bare GPU machine needs to render and train (see the module's docstring)."""
    out.mkdir(parents=True, exist_ok=True)
    fonts = fontfiles.installed_font_files()
    for spec, path in fonts:
        if spec.source == "pypi":
            package = out / "site" / spec.module
            (package / "files").mkdir(parents=True, exist_ok=True)
            shutil.copy2(path.parent.parent / "__init__.py", package / "__init__.py")
            shutil.copy2(path, package / "files" / path.name)
        else:
            target = out / "fonts" / str(path).lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    (out / "site" / "polars").mkdir(parents=True, exist_ok=True)
    (out / "site" / "polars" / "__init__.py").write_text(POLARS_STAND_IN)
    photos = realdata.load_photos(split="train")
    real = out / "real"
    for sub in ("images", "labels"):
        (real / sub).mkdir(parents=True, exist_ok=True)
    root = realdata.default_root()
    shutil.copy2(root / "classes.yaml", real / "classes.yaml")
    for photo in photos:
        shutil.copy2(photo.path, real / "images" / photo.path.name)
        shutil.copy2(root / "labels" / f"{photo.path.stem}.txt", real / "labels" / f"{photo.path.stem}.txt")
    if init is not None:
        (out / "init").mkdir(exist_ok=True)
        for path in (init, float_weights(init)):  # an INT8 start model trains from its float weights beside it
            if path == init or path.is_file():
                shutil.copy2(path, out / "init" / path.name)
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return {"fonts": len(fonts), "real_photos": len(photos), "init": None if init is None else init.name, "bytes": size}


def synth_steps(recipe_text: str) -> list[list[str]]:
    """The ``rummikub-referee synth ...`` commands of a recipe's header, as argument lists."""
    return [shlex.split(match) for match in SYNTH_LINE.findall(recipe_text)]


def render(step: list[str]) -> dict[str, Any]:
    """Run one ``synth`` step of a recipe's header as the ``synth`` command would (``--recipe``, ``--out``,
    ``--images``, ``--seed``; every core renders)."""
    from vision.synth.dataset import write_recipe_dataset

    parser = argparse.ArgumentParser(prog="synth", add_help=False)
    parser.add_argument("--recipe", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--images", type=int)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(step[1:])
    return write_recipe_dataset(args.recipe, Path(args.out), images=args.images, seed=args.seed, progress=False)


def training_hours(budget_s: float, elapsed_s: float, *, share: float = SETUP_SHARE) -> float:
    """Training time (hours) for what the budget leaves after ``elapsed_s`` (at least 30 s of training), ``share`` of
    it: Ultralytics' ``time`` leaves out its dataset build (:data:`SETUP_SHARE`); a classifier's
    ``max_total_minutes`` counts its own (share 1)."""
    return round(max(budget_s - elapsed_s - RESERVE_S, 30.0) / 3600 * share, 4)


def run(
    recipe_path: Path, pack_dir: Path, out: Path, *, budget_s: float, font_root: Path = Path("/")
) -> dict[str, Any]:
    """Render the recipe's scenes, train within the budget and copy the results to ``out`` (see the module). A
    detector recipe gets Ultralytics' ``time``; a classifier recipe ``max_total_minutes`` (its ``train.device`` says
    where it trains: ``cuda`` on the GPU machine)."""
    import yaml

    started = time.monotonic()
    recipe_text = recipe_path.read_text()
    recipe = yaml.safe_load(recipe_text)
    kind = recipe.get("kind")
    if kind not in ("detector", "classifier"):
        raise ValueError(f"{recipe_path}: a training recipe needs 'kind: detector' or 'kind: classifier'")
    if (pack_dir / "fonts").is_dir():
        shutil.copytree(pack_dir / "fonts", font_root, dirs_exist_ok=True)
    os.environ["RUMMIKUB_REAL_DATA"] = str((pack_dir / "real").resolve())
    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", "/tmp/yolo-config")
    start = recipe.get("model") if kind == "detector" else recipe.get("model", {}).get("init")  # the model it continues
    init = Path(str(start or ""))
    if init.suffix and not init.exists() and (pack_dir / "init" / init.name).is_file():
        init.parent.mkdir(parents=True, exist_ok=True)
        for path in (init, float_weights(init)):
            if (pack_dir / "init" / path.name).is_file():
                shutil.copy2(pack_dir / "init" / path.name, path)
    for step in synth_steps(recipe_text):
        render(step)
    rendered_s = time.monotonic() - started
    hours = training_hours(budget_s, rendered_s, share=SETUP_SHARE if kind == "detector" else 1.0)
    if kind == "detector":
        recipe["train"]["time"] = hours
    else:
        recipe["train"]["max_total_minutes"] = round(hours * 60, 2)  # cutting the tiles from the scenes counts too
    out.mkdir(parents=True, exist_ok=True)
    fitted = out / recipe_path.name
    fitted.write_text(yaml.safe_dump(recipe, sort_keys=False))
    runs = Path("runs") / recipe_path.stem
    if kind == "detector":
        from vision.train.detector import train_detector

        result = train_detector(fitted, runs)
        results = [runs / "tile-detector.onnx", runs / "tile-detector.json", runs / "run" / "results.csv"]
    else:
        from vision.train.classifier import train_classifier

        result = train_classifier(fitted, runs)
        name = recipe.get("name", "tile-classifier")
        results = [runs / f"{name}.onnx", runs / f"{name}.json", runs / f"{name}.pt"]
    for path in results:
        shutil.copy2(path, out / path.name)
    summary = {
        "kind": kind,
        "rendered_s": round(rendered_s, 1),
        "train_hours": hours,
        "total_s": round(time.monotonic() - started, 1),
        "validation_metrics": result.get("validation_metrics") or result.get("dev"),
    }
    (out / "remote-run.json").write_text(json.dumps(summary, indent=2, default=str))
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.train.remote", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pack_parser = commands.add_parser("pack", help="gather fonts, real training photos and a start model here")
    pack_parser.add_argument("out", type=Path)
    pack_parser.add_argument("--init", type=Path, help="the FP32 detector (ONNX) the recipe continues")
    run_parser = commands.add_parser("run", help="on the GPU machine: render, train, copy the results")
    run_parser.add_argument("recipe", type=Path)
    run_parser.add_argument("--pack", type=Path, required=True)
    run_parser.add_argument("--budget-s", type=float, required=True, help="seconds the whole command may take")
    run_parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "pack":
        print(json.dumps(pack(args.out, init=args.init)))
    else:
        print(json.dumps(run(args.recipe, args.pack, args.out, budget_s=args.budget_s)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
