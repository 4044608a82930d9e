"""The recognition commands: ``detect``, ``read``, ``eval`` and ``enrol``, and ``check`` reading photos too.

Each command is a thin function over one library call; models load when a command runs, never at import.
"""

from __future__ import annotations

import argparse
import sys
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee import cli as rules_cli
from referee.cli import Command
from referee.commands import check as rules_check
from referee.table import LOOSE, Table
from vision.cli.options import add_models_options

if TYPE_CHECKING:  # the models load when a command runs, never at import
    import numpy as np

    from vision.runtime.reader import Reading, TileReader

PROG = rules_cli.PROG


def _add_annotate(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--annotate", metavar="OUT.png", type=Path, help="write the photo with boxes and labels")


def _reader(models: Path | None, one_pass: bool = False) -> TileReader:
    from vision.runtime.recognition import default_models_dir

    return _cached_reader((models or default_models_dir()).resolve(), one_pass)


@cache
def _cached_reader(models: Path, one_pass: bool) -> TileReader:
    """One reader per models folder, so ``check`` loads the models once for both photos."""
    from vision.runtime.reader import TileReader
    from vision.runtime.tables import PHOTO

    reader = TileReader(models, rescale=not one_pass, not_a_tile=PHOTO.reader_not_a_tile)
    reader.check_models()
    return reader


def read_photo_table(path: str, models: Path | None = None, one_pass: bool = False) -> rules_cli.TableFromFile:
    """The table in a photo: detect, classify, group into sets (low-confidence tiles marked uncertain), with
    the count of boxes left out as most likely not tiles (``check`` then rules REVIEW rather than REVERT)."""
    from vision.runtime.recognition import load_image
    from vision.runtime.tables import PHOTO, read_table

    image = load_image(path)
    seen = _reader(models, one_pass).read(image)
    reading = read_table(seen, PHOTO)
    blind = _blind_spots(path, image, seen)
    return rules_cli.TableFromFile(reading.table, len(reading.left_out), blind)


def _blind_spots(path: str, image: np.ndarray, reading: Reading) -> float:
    """The photo's area glare washes white outside every box read, in tiles' areas (0: none), said on stderr
    (:func:`vision.runtime.glare.photo_blind_spots`)."""
    import numpy as np

    from vision.runtime.glare import photo_blind_spots

    boxes = np.concatenate([reading.detections.xyxy, reading.left_out.xyxy]).reshape(-1, 4)
    blind = photo_blind_spots(image, boxes)
    if not blind or blind.centre_px is None:
        return 0.0
    x, y = blind.centre_px
    print(f"warning: {path}: glare washes out about {blind.tiles:.1f} tiles' area around ({x:.0f}, {y:.0f}) px:"
          " a tile there cannot be seen", file=sys.stderr)  # fmt: skip
    return blind.tiles


def check_annotation_target(out: Path | None) -> None:
    """Refuse an ``--annotate`` file that cannot be written before the slow part (models, reading): a suffix
    OpenCV writes no image for, or a folder that does not exist."""
    if out is None:
        return
    import cv2

    if not cv2.haveImageWriter(str(out)):
        raise rules_cli.CommandError(f"{out}: --annotate writes an image: give it a suffix such as .png or .jpg")
    if not out.parent.is_dir():
        raise rules_cli.CommandError(f"{out}: cannot write the annotated image (no folder {str(out.parent)!r})")


def _write_annotation(out: Path, image: Any, source: Any) -> None:
    import cv2

    from vision.ui.annotate import annotate_all

    if not cv2.imwrite(str(out), annotate_all(image, source)):
        raise rules_cli.CommandError(f"{out}: cannot write the annotated image (unknown suffix or folder)")


# -- commands ---------------------------------------------------------------------------------------------


def cmd_detect(args: argparse.Namespace) -> int:
    from vision.runtime.recognition import load_image

    if args.annotate and len(args.images) > 1:
        raise rules_cli.CommandError("--annotate takes a single IMAGE")
    check_annotation_target(args.annotate)
    images = [(path, load_image(path)) for path in args.images]  # every file checked before the slow part
    reader = _reader(args.models, args.one_pass)
    results, lines = [], []
    for path, image in images:
        found = reader.read(image).detections
        height, width = image.shape[:2]
        tiles = found.to_json(columns=("angle_deg",))
        results.append({"path": path, "width": width, "height": height, "tiles": tiles})
        lines.append(f"{path} ({width}x{height}): {len(tiles)} tile{'s' * (len(tiles) != 1)}")
        lines += [f"  {t['label']:<10} {t['confidence']:.2f}  box {t['box']}" for t in tiles]
        if args.annotate:
            _write_annotation(args.annotate, image, found)
    rules_cli.emit(args, {"images": results}, "\n".join(lines))
    return 0


def cmd_read(args: argparse.Namespace) -> int:
    from vision.runtime.recognition import load_image
    from vision.runtime.tables import PHOTO, read_table

    check_annotation_target(args.annotate)
    image = load_image(args.image)
    seen = _reader(args.models, args.one_pass).read(image)
    table = read_table(seen, PHOTO).table
    _blind_spots(args.image, image, seen)
    if args.annotate:
        _write_annotation(args.annotate, image, table)
    rules_cli.emit(args, table.to_json(with_extras=True), format_table(table))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from vision.eval import evaluate

    reader = _reader(args.models, args.one_pass)
    rows, summary = evaluate.evaluate(
        reader, args.data, split=args.split, limit=args.limit, match_iou=args.match_iou,
        audited=not args.labels_as_published,
    )  # fmt: skip
    if args.csv:
        evaluate.write_csv(rows, args.csv)
    if not args.json:
        summary = {k: v for k, v in summary.items() if k != "confusion"}
    rules_cli.emit(args, summary, evaluate.format_summary(summary))
    return 0


def cmd_enrol(args: argparse.Namespace) -> int:
    from vision.runtime import enrolment
    from vision.runtime.recognition import default_models_dir, load_image

    if args.layout:
        rules_cli.emit(args, {"layout": enrolment.layout_text(args.jokers)}, enrolment.layout_text(args.jokers))
        return 0
    if not args.photos or args.out is None:
        raise rules_cli.CommandError("enrol needs the grid photos and --out DIR (see: enrol --layout)")
    for path in args.photos:  # every photo checked before the models load
        load_image(path)
    models = (args.models or default_models_dir()).resolve()
    adapt, adapter, notes = _enrolment_adaptation(args.adapt)
    result = enrolment.enrol(
        [Path(p) for p in args.photos], args.out, models, jokers=args.jokers, trust_grid=args.trust_grid,
        adapt=adapt, adapter=adapter, notes=notes,
    )  # fmt: skip
    card = result.card()
    photos, holdout = card["figures"]["photos"], card["figures"]["holdout"]
    lines = [
        f"enrolled {result.tiles} tiles ({result.jokers} jokers) from {len(result.photos)} photo(s) into {args.out}"
        f" in {result.seconds:.0f} s ({'the network adapted' if result.adaptation == 'network' else 'a head fitted'})",
        f"  enrolled photos:        accuracy {photos['before']['accuracy']:.3f} -> {photos['after']['accuracy']:.3f}",
        f"  held-out augmentations: accuracy {holdout['before']['accuracy']:.3f} -> {holdout['after']['accuracy']:.3f}",
        f"  wrong at confidence >= 0.8: {holdout['before']['wrong_confident']} -> {holdout['after']['wrong_confident']}"
        f" of {holdout['after']['crops']} held-out crops",
        f"  {len(card['read_differently_before'])} tile(s) read differently from the grid before enrolment",
        *[f"  warning: {w}" for w in card["warnings"]],
        f"model card: {args.out / enrolment.CARD_MARKDOWN}; use it with --models {args.out}",
    ]
    rules_cli.emit(args, card, "\n".join(lines))
    return 0


def _enrolment_adaptation(asked: str | None) -> tuple[str, Any, list[str]]:
    """(adaptation, adapter, notes for the card): the network where the train extra is installed (or asked for), else
    the numpy head, with a note saying why."""
    from vision.train import enrolnet

    if asked == "head":
        return "head", None, []
    if enrolnet.default_adaptation() == "network":

        def announced(*arguments: Any) -> Any:  # the photos matched the grid: the minute of training starts
            print("adapting the classifier to the set on the CPU (about a minute on 2 cores)...", file=sys.stderr,
                  flush=True)  # fmt: skip
            return enrolnet.adapt_enrolment(*arguments)

        return "network", announced, []
    if asked == "network":
        raise rules_cli.CommandError(
            "adapting the network needs torch and onnx (the train extra: pip install -e '.[train]'); without them,"
            " --adapt head"
        )
    return (
        "head",
        None,
        [
            "torch is not installed: only a head on the shipped classifier's features was fitted (the train extra,"
            " pip install -e '.[train]', adapts the network itself, which reads unfamiliar sets better)"
        ],
    )


def read_table_or_photo(path: str, models: Path | None = None, one_pass: bool = False) -> rules_cli.TableFromFile:
    """``check``'s tables: a photo read with the models (see :func:`read_photo_table`), else a table JSON file."""
    if Path(path).suffix.lower() in rules_cli.IMAGE_SUFFIXES:
        return read_photo_table(path, models, one_pass)
    return rules_check.read_table(path)


def cmd_check(args: argparse.Namespace) -> int:
    """The rules' ``check``, its tables read from photos as well, with the models of ``--models``."""
    return rules_check.run(args, read=partial(read_table_or_photo, models=args.models, one_pass=args.one_pass))


def format_table(table: Table) -> str:
    """Sets one per line in reading order, then loose tiles; uncertain tiles end in ``?``."""

    def tile_text(place: tuple[int, int], label: str) -> str:
        return f"{label}?" if place in table.uncertain else label

    lines = []
    for i, tile_set in enumerate(table.sets):
        tiles = " ".join(tile_text((i, j), str(t)) for j, t in enumerate(tile_set))
        verdict = "valid" if tile_set.is_valid() else "INVALID"
        lines.append(f"set {i + 1}: {tiles}  ({verdict})")
    if table.loose:
        lines.append("loose: " + " ".join(tile_text((LOOSE, j), str(t)) for j, t in enumerate(table.loose)))
    if table.uncertain:
        lines.append(f"uncertain: {len(table.uncertain)} tile(s) marked '?' were read with low confidence")
    return "\n".join(lines) if lines else "(no tiles found)"


# -- the commands -----------------------------------------------------------------------------------------


def _detect_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photos (jpg, png, ...)")
    add_models_options(parser)
    _add_annotate(parser)
    rules_cli.add_json_option(parser)


def _read_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", metavar="IMAGE", help="a photo of the table")
    add_models_options(parser)
    _add_annotate(parser)
    rules_cli.add_json_option(parser)


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, type=Path, metavar="DIR", help="YOLO folder (images/, labels/)")
    parser.add_argument(
        "--split", choices=["train", "val"], help="real photos only: evaluate one side of the by-source split"
    )
    parser.add_argument("--csv", type=Path, metavar="ROWS.csv", help="write one row per image")
    parser.add_argument("--limit", type=rules_cli.COUNT, metavar="N", help="evaluate the first N images only")
    parser.add_argument(
        "--match-iou", type=rules_cli.NumberArg(above=0, maximum=1), default=0.5, metavar="IOU",
        help="overlap a box needs with a labelled box to count as that tile (default 0.5)",
    )  # fmt: skip
    parser.add_argument(
        "--labels-as-published", action="store_true",
        help="real photos only: score against the labels as published, not the audited ones (see realdata.py)",
    )  # fmt: skip
    add_models_options(parser)
    rules_cli.add_json_option(parser)


def _enrol_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("photos", nargs="*", metavar="PHOTO", help="photos of the grid, one copy of the set in each")
    parser.add_argument("--out", type=Path, metavar="DIR", help="the model folder to write (new, empty or enrolled)")
    parser.add_argument("--layout", action="store_true", help="print the grid to lay the tiles out in, and stop")
    parser.add_argument(
        "--jokers", type=rules_cli.NumberArg(whole=True, minimum=0, maximum=4), default=2, metavar="N",
        help="jokers in the set (default 2): a warning when the photos hold another number",
    )  # fmt: skip
    parser.add_argument(
        "--trust-grid", action="store_true",
        help="enrol even when the readings suggest rows or tiles are swapped (the grid is known to be right)",
    )  # fmt: skip
    parser.add_argument("--models", metavar="DIR", type=Path, help="the models to adapt (default: the shipped ones)")
    parser.add_argument(
        "--adapt", choices=("network", "head"), default=None,  # enrolment.ADAPTATIONS, not imported at start-up
        help="network: fine-tune the classifier itself (needs the train extra's torch; the default where it is"
        " installed); head: fit a head on the shipped classifier's features (numpy only; the default without torch)",
    )  # fmt: skip
    rules_cli.add_json_option(parser)


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    rules_check.arguments(parser)
    add_models_options(parser)


CHECK = Command("check", rules_check.HELP, rules_check.EXAMPLE, _check_arguments, cmd_check)
DETECT = Command(
    "detect",
    "Find and read the tiles in photos: label, box (original pixels) and confidence of each.",
    f"{PROG} detect table.jpg --json --annotate boxes.png",
    _detect_arguments,
    cmd_detect,
)
READ = Command(
    "read",
    "Read the table in a photo: its sets in reading order and loose tiles (uncertain tiles flagged).",
    f"{PROG} read table.jpg --json > table.json",
    _read_arguments,
    cmd_read,
)
EVAL = Command(
    "eval",
    "Evaluate recognition on a labelled YOLO folder: per-image rows, headline numbers from the rows, and a table"
    " per tile edition (a synthetic folder's sidecars; any other folder is one group).",
    f"{PROG} eval --data ../shared/data --split val --csv rows.csv",
    _eval_arguments,
    cmd_eval,
)
ENROL = Command(
    "enrol",
    "Adapt the tile models to a venue's own set from photos of it laid out in the enrolment grid (--layout"
    " prints it); writes a model folder with its card, for --models.",
    f"{PROG} enrol copy1.jpg copy2.jpg --out models-venue",
    _enrol_arguments,
    cmd_enrol,
)
