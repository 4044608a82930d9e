"""The synthetic data commands: ``synth`` (a YOLO dataset of tables) and ``synth-game`` (a filmed game)."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee.cli import (
    COUNT,
    POSITIVE,
    SEED,
    SHARE,
    Command,
    NumberArg,
    add_json_option,
    add_players_option,
    add_profile_option,
    add_time_limit_option,
    emit,
    players_from,
)
from vision.synth.game import LATE_MOVES


def _size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size is WIDTHxHEIGHT, e.g. 1280x960, not {text!r}") from None
    if not (64 <= width <= 8192 and 64 <= height <= 8192):
        raise argparse.ArgumentTypeError(f"size {text} is outside 64-8192 pixels")
    return width, height


TILT = NumberArg(minimum=0, maximum=45)
DISTORTION = NumberArg(minimum=-0.3, maximum=0.3)
FRAME_RATE = NumberArg(minimum=1, maximum=240)
"""Frames per second a video can have: from a time-lapse to a high-speed camera."""


def cmd_synth(args: argparse.Namespace) -> int:
    from vision.synth.dataset import write_preview, write_recipe_dataset

    summary = write_recipe_dataset(
        args.recipe, Path(args.out), images=args.images, seed=args.seed, size=args.size, workers=args.workers,
        label_format=args.label_format, progress=not args.json,
    )  # fmt: skip
    images = summary["images"]
    if args.preview:
        summary["preview"] = str(write_preview(Path(args.out)))
    text = (
        f"wrote {images} images to {args.out} in {summary['seconds']} s ({summary['images_per_second']} images/s),"
        f" {summary['labelled_tiles']} labelled tiles" + (f"; preview: {summary['preview']}" if args.preview else "")
    )
    emit(args, summary, text)
    return 0


def cmd_synth_game(args: argparse.Namespace) -> int:
    from vision.synth.video import Staging, write_game

    players = players_from(args)
    staging = Staging(clutter=args.clutter, tilt_deg=args.tilt, glare=args.glare, distortion=args.distortion)
    agreed = args.time_limit
    if agreed is not None and agreed.seconds is None:
        raise ValueError("synth-game films games played with a time limit: --time-limit none is not one")
    summary = write_game(
        Path(args.out), players=players, seed=args.seed, violation_rate=args.violations, profile=args.profile,
        minutes=args.minutes, size=args.size, fps=args.fps, progress=not args.json, staging=staging,
        time_limit_s=None if agreed is None else agreed.seconds, late_move=args.late_move,
        paused_move_s=args.paused_move, paused_midway_s=args.paused_midway,
    )  # fmt: skip
    text = (
        f"wrote {summary['video']} ({summary['frames']} frames, {summary['duration_s']:.0f} s of game,"
        f" {summary['moves']} moves, {summary['injected']} injected violations) and {summary['truth']}"
        f" in {summary['seconds']:.0f} s"
    )
    emit(args, summary, text)
    return 0


def _synth_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="output folder (created)")
    parser.add_argument("--images", type=COUNT, help="how many images (default: the recipe's)")
    parser.add_argument("--seed", type=SEED, default=0, help="the same seed gives the same dataset")
    parser.add_argument("--recipe", default="synth-train", help="a recipe name in datasets/ or a YAML path")
    parser.add_argument("--size", type=_size, help="image size WIDTHxHEIGHT (default: the recipe's)")
    parser.add_argument("--workers", type=COUNT, help="processes (default: one per core)")
    parser.add_argument("--label-format", choices=["detect", "obb"], help="YOLO boxes or oriented boxes")
    parser.add_argument("--preview", action="store_true", help="also write preview.png, a contact sheet")
    add_json_option(parser)


def _synth_game_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="output folder (created)")
    add_players_option(parser)
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--violations", type=SHARE, default=0.1, help="share of moves with an injected violation")
    add_profile_option(parser)
    parser.add_argument(
        "--minutes", type=POSITIVE, default=10.0, help="stop the game after this much game time (default 10)"
    )
    parser.add_argument("--size", type=_size, default=(1920, 1080), help="video size (default 1920x1080)")
    parser.add_argument("--fps", type=FRAME_RATE, default=30.0, help="frames per second of the video (default 30)")
    parser.add_argument(
        "--clutter", action="store_true",
        help="what real tables have: a cup, a score sheet, a phone, a tablecloth, resting sleeves, the next table",
    )  # fmt: skip
    parser.add_argument(
        "--tilt", type=TILT, metavar="DEG", help="camera tilt from straight down, 0-45 (default: 0-12 from the seed)"
    )
    parser.add_argument("--glare", action="store_true", help="a strong glare spot over the play area")
    parser.add_argument(
        "--distortion", type=DISTORTION, default=0.0, metavar="K1", help="radial lens distortion, -0.3 to 0.3"
    )
    add_time_limit_option(parser)
    parser.add_argument(
        "--late-move", choices=LATE_MOVES,
        help="the game's first play goes over the time limit (valid when it passes and untouched after; touched"
        " after it; unfinished at it) and the game ends there: filmed around the moment analyze sees the limit pass",
    )  # fmt: skip
    paused = parser.add_mutually_exclusive_group()
    paused.add_argument(
        "--paused-move", type=POSITIVE, metavar="SECONDS",
        help="film every play with a pause: the player's hands leave the table for SECONDS before laying a tile"
        " (the table still), then come back and make the move (plays with hands over the table too briefly for it"
        " are filmed as usual)",
    )  # fmt: skip
    paused.add_argument(
        "--paused-midway", type=POSITIVE, metavar="SECONDS",
        help="film every play with a pause after some of its tiles are laid: half the tiles from the rack on the"
        " table, the hands off it for SECONDS, then back to finish the move (one move in the truth; plays of one"
        " tile, or with hands over the table too briefly, are filmed as usual)",
    )  # fmt: skip
    add_json_option(parser)


SYNTH = Command(
    "synth",
    "Render a synthetic YOLO dataset of Rummikub tables with exact ground truth.",
    "rummikub-referee synth --out cache/synth --images 200 --seed 1 --recipe datasets/synth-train.yaml --preview",
    _synth_arguments,
    cmd_synth,
)
SYNTH_GAME = Command(
    "synth-game",
    "Simulate a game with injected violations and film it: an MP4 and a JSONL ground truth per move.",
    "rummikub-referee synth-game --out cache/game --players 4 --seed 1 --violations 0.1 --minutes 3",
    _synth_game_arguments,
    cmd_synth_game,
)
