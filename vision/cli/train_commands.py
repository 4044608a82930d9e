"""The ``train`` and ``export`` commands: training needs the ``train`` extra (torch, Ultralytics, onnx)."""

from __future__ import annotations

import argparse
import json
import tempfile
import zipfile
from pathlib import Path

from referee.cli import COUNT, SEED, Command, NumberArg, add_json_option, emit

TRAIN_EXTRA_HINT = "training needs the train extra: pip install -e '.[train]'"


class TrainingUnavailable(ValueError):
    """Torch or Ultralytics is missing: a one-line error, not a traceback."""


def _recipe_kind(path: Path) -> str:
    from vision.train.recipes import load_training_recipe

    return str(load_training_recipe(path)["kind"])


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
    if not zipfile.is_zipfile(weights):  # torch.save writes a zip archive; Ultralytics says so in a page of text
        raise ValueError(f"{weights}: not PyTorch weights (a .pt file written by training)")
    try:
        from vision.train.detector import export_onnx

        target = export_onnx(weights, imgsz=args.imgsz, target=Path(args.out))
    except ImportError as error:
        raise TrainingUnavailable(f"{TRAIN_EXTRA_HINT} ({error})") from None
    emit(args, {"onnx": str(target), "bytes": target.stat().st_size}, f"exported {target}")
    return 0


def cmd_quantize(args: argparse.Namespace) -> int:
    source, target = Path(args.model), Path(args.out)
    if not source.is_file():
        raise ValueError(f"no model file {str(source)!r}")
    if target.resolve() == source.resolve():
        raise ValueError("--out must not overwrite --model (the FP32 source is the quantization's input)")
    game = Path(args.game) if args.game else None
    scenes = Path(args.scenes) if args.scenes else None
    try:
        from vision.runtime.recognition import OnnxTileClassifier, TileReader, YoloOnnxDetector
        from vision.train import quantize as Q

        kind = Q.model_kind(source)
        reads = Q.calibration_reads(args.photos, args.seed, game, args.frames, scenes=scenes)
        with tempfile.TemporaryDirectory() as work:
            if kind == "classifier":  # read as the referee reads, with the FP32 source as the classifier...
                # ...but for the familiarity confirmation: its statistics describe the folder's own classifier (the
                # INT8 one, once shipped), so whether they applied would depend on the folder's state
                reader = TileReader(args.models, classifier=OnnxTileClassifier(source), familiarity=False)
                crops = Q.record_classifier_crops(reader, reads)
                entry = Q.quantize_classifier(source, target, crops, Path(work), seed=args.seed)
                inputs = f"{entry['calibration_crops']} of {entry['crops_recorded']} crops"
            else:
                reader = TileReader(args.models, rescale=False)  # its classifier; the detector the FP32 source
                reader.detector = YoloOnnxDetector(source)
                feeds = Q.record_detector_inputs(reader, reads)
                entry = Q.quantize_detector(source, target, feeds, Path(work))
                inputs = f"{len(feeds)} inputs"
    except ImportError as error:
        raise TrainingUnavailable(f"quantizing needs onnx: pip install -e '.[train]' ({error})") from None
    command = f"rummikub-referee quantize --model {source} --out {target} --photos {args.photos} --seed {args.seed}"
    if scenes:
        command += f" --scenes {scenes}"
    if game:
        command += f" --game {game} --frames {args.frames}"
    entry = {"command": command, "photos": args.photos, "seed": args.seed, "game": str(game) if game else None,
             **({"scenes": Q.scenes_provenance(scenes)} if scenes else {}), **entry}  # fmt: skip
    if kind == "classifier":  # training and enrolment start from the float weights: they stay beside it
        entry["float_file"] = Q.keep_float_beside(source, target).name
    if args.card:
        Q.write_card_entry(Path(args.card), entry)
    emit(args, entry, f"quantized the {kind} {source} -> {target} ({entry['onnx_bytes']} bytes, {inputs})")
    return 0


def _train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--recipe", required=True, help="models/detector.yaml or models/classifier.yaml")
    parser.add_argument("--out", help="folder for the run (default runs/RECIPE)")
    parser.add_argument("--models", help="write the ONNX model here (default: the run folder)")
    add_json_option(parser)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--weights", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument(
        "--imgsz", type=NumberArg(whole=True, minimum=32, maximum=4096), default=640, help="input side (default 640)"
    )
    add_json_option(parser)


def _quantize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="the FP32 detector or tile classifier (ONNX)")
    parser.add_argument(
        "--out", required=True, help="the INT8 model to write (a classifier's FP32 source is kept beside it)"
    )
    parser.add_argument(
        "--photos",
        type=NumberArg(whole=True, minimum=0),
        default=60,
        help="real training photos to calibrate on (default 60)",
    )
    parser.add_argument("--seed", type=SEED, default=0, help="draws the photos (default 0)")
    parser.add_argument("--scenes", help="a synth folder whose images calibrate too")
    parser.add_argument("--game", help="a synth-game folder whose play area frames calibrate too")
    parser.add_argument("--frames", type=COUNT, default=20, help="evenly spaced frames of --game (default 20)")
    parser.add_argument("--card", help="model card JSON to record the quantization in")
    parser.add_argument(
        "--models", help="folder of the other model the reader uses (the classifier or detector; default: models/)"
    )
    add_json_option(parser)


TRAIN = Command(
    "train",
    "Train the tile detector or the tile classifier from a recipe in models/ (needs the train extra).",
    "rummikub-referee train --recipe models/detector.yaml --out runs/detector",
    _train_arguments,
    cmd_train,
)
EXPORT = Command(
    "export",
    "Export trained detector weights (Ultralytics .pt) to ONNX for the runtime.",
    "rummikub-referee export --weights runs/detector/run/weights/best.pt --out models/tile-detector.onnx",
    _export_arguments,
    cmd_export,
)
QUANTIZE = Command(
    "quantize",
    "Quantize the FP32 detector or tile classifier to INT8, calibrated on what it reads in real training photos,"
    " synthetic scenes and a synthetic game's frames.",
    "rummikub-referee quantize --model runs/tile-detector-fp32.onnx --out models/tile-detector.onnx"
    " --game cache/calib-game --card models/tile-detector.json",
    _quantize_arguments,
    cmd_quantize,
)
