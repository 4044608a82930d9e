"""``batch``: every game a manifest lists analysed as ``analyze`` does, then the archive report (the command's
function is :func:`vision.session.batch.cmd_batch`, loaded when it runs)."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee import cli as rules_cli
from referee.cli import Command
from vision.cli.options import add_engine_options


def cmd_batch(args: argparse.Namespace) -> int:
    from vision.session.batch import cmd_batch as run_batch_command

    return run_batch_command(args)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifest", metavar="MANIFEST", help="CSV or YAML: video, event, round, table, profile, ...")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the games and the archive")
    parser.add_argument(
        "--workers", type=rules_cli.COUNT, default=1, metavar="N",
        help="local worker processes (default 1; not with --ray)",
    )  # fmt: skip
    parser.add_argument(
        "--ray", metavar="ADDRESS", help="run the games as Ray tasks: auto, ray://host:port, or local (2 CPUs here)"
    )
    parser.add_argument("--models", type=Path, metavar="DIR", help="folder with the ONNX models (default: shipped)")
    add_engine_options(parser)
    rules_cli.add_json_option(parser)


BATCH = Command(
    "batch",
    "Analyse every game video a manifest lists (as analyze does, each in its folder), then an archive report"
    " (exit status 1 when a game failed: batch.json lists it with its error).",
    f"{rules_cli.PROG} batch season.csv --out archive/ --workers 2",
    _arguments,
    cmd_batch,
)
