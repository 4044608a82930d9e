"""The ``train`` and ``export`` commands: training needs the ``train`` extra (torch, Ultralytics, onnx)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from referee.cli import add_command, add_json_option, emit

TRAIN_EXTRA_HINT = "training needs the train extra: pip install -e '.[train]'"


class TrainingUnavailable(ValueError):
    """Torch or Ultralytics is missing: a one-line error, not a traceback."""


def _recipe_kind(path: Path) -> str:
    import yaml

    try:
        recipe = yaml.safe_load(path.read_text())
    except OSError as error:
        raise ValueError(f"cannot read recipe {str(path)!r}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: malformed YAML ({str(error).splitlines()[0]})") from None
    kind = recipe.get("kind") if isinstance(recipe, dict) else None
    if kind not in ("detector", "classifier"):
        raise ValueError(f"{path}: a training recipe needs 'kind: detector' or 'kind: classifier'")
    return kind


def cmd_train(args: argparse.Namespace) -> int:
    recipe = Path(args.recipe)
    kind = _recipe_kind(recipe)
    out = Path(args.out or f"runs/{recipe.stem}")
    try:
        if kind == "detector":
            from vision.train.detector import train_detector

            result = train_detector(recipe, out, models_dir=Path(args.models) if args.models else None)
        else:
            from vision.train.classifier import train_classifier

            result = train_classifier(recipe, out)
    except ImportError as error:
        raise TrainingUnavailable(f"{TRAIN_EXTRA_HINT} ({error})") from None
    emit(args, result, f"trained {kind}: {json.dumps(result, default=str)[:400]}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    weights = Path(args.weights)
    if not weights.is_file():
        raise ValueError(f"no weights file {str(weights)!r}")
    try:
        from vision.train.detector import export_onnx

        target = export_onnx(weights, imgsz=args.imgsz, target=Path(args.out))
    except ImportError as error:
        raise TrainingUnavailable(f"{TRAIN_EXTRA_HINT} ({error})") from None
    emit(args, {"onnx": str(target), "bytes": target.stat().st_size}, f"exported {target}")
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    train = add_command(
        commands,
        "train",
        cmd_train,
        "Train the tile detector or the tile classifier from a recipe in models/ (needs the train extra).",
        "rummikub-referee train --recipe models/detector.yaml --out runs/detector",
    )
    train.add_argument("--recipe", required=True, help="models/detector.yaml or models/classifier.yaml")
    train.add_argument("--out", help="folder for the run (default runs/RECIPE)")
    train.add_argument("--models", help="write the ONNX model here (default: the run folder)")
    add_json_option(train)

    export = add_command(
        commands,
        "export",
        cmd_export,
        "Export trained detector weights (Ultralytics .pt) to ONNX for the runtime.",
        "rummikub-referee export --weights runs/detector/run/weights/best.pt --out models/tile-detector.onnx",
    )
    export.add_argument("--weights", required=True)
    export.add_argument("--out", required=True)
    export.add_argument("--imgsz", type=int, default=640)
    add_json_option(export)
