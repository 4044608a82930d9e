"""The option bundles of the camera commands, defined once: the models (``--models``, ``--one-pass``), a game
(``--profile``, ``--players``, ``--first-player``, ``--time-limit``, ``--calibration``, ``--models``) and how the models
run (``--threads``, ``--provider``). The rules options they build on are :mod:`referee.cli`'s."""

from __future__ import annotations

import argparse
from pathlib import Path

from referee import cli as rules_cli
from vision.game.gamelog import GameSetup
from vision.runtime.seats import Edge, Orientation

FIRST_PLAYER = rules_cli.COUNT
"""``--first-player``: a whole number from 1 when parsed; at most ``--players``, checked by :func:`game_from`."""


def add_models_options(parser: argparse.ArgumentParser) -> None:
    """``--models`` and ``--one-pass``: the models that read a photo, and how."""
    parser.add_argument(
        "--models", metavar="DIR", type=Path, help="folder with tile-detector.onnx and tile-classifier.onnx"
    )
    parser.add_argument(
        "--one-pass", action="store_true",
        help="read each photo once at the detector's input size (faster; by default a photo of small tiles, such as"
        " a whole table, is read again at tile scale)",
    )  # fmt: skip
    parser.add_argument("--tiled", action="store_true", help=argparse.SUPPRESS)  # the default since 2026-11-25


def add_game_options(parser: argparse.ArgumentParser) -> None:
    """What a filmed game is played under and how its camera is calibrated (``analyze``, ``live``)."""
    rules_cli.add_profile_option(parser)
    rules_cli.add_players_option(parser)
    parser.add_argument(
        "--first-player", type=FIRST_PLAYER, default=1, metavar="K", help="who moves first, 1-N (default 1)"
    )
    rules_cli.add_time_limit_option(parser)
    parser.add_argument(
        "--seat1", choices=[edge.label for edge in Edge], metavar="EDGE",
        help="the edge of the picture player 1 sits at (bottom, right, top, left): the others follow round the table"
        " the profile's way (default: bottom, the seats bottom, right, top, left as logs always had them)",
    )  # fmt: skip
    parser.add_argument(
        "--mirrored", action="store_true",
        help="the picture is mirrored (a camera filming a mirror, a flipped preview): play runs the other way in it",
    )  # fmt: skip
    parser.add_argument(
        "--calibration", default="auto", metavar="HOW",
        help="markers, auto (markers, else the play area found on the table: racks, pool, cups at its edges left out),"
        " frame, or a calibration JSON file",
    )  # fmt: skip
    parser.add_argument("--models", type=Path, metavar="DIR", help="folder with the ONNX models (default: shipped)")


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--threads`` and ``--provider``: how ONNX Runtime runs the models (``analyze``, ``live``, ``batch``)."""
    parser.add_argument(
        "--threads", type=rules_cli.COUNT, metavar="N",
        help="ONNX Runtime threads per model (default: analyze and live 2; batch the cores per worker, 1 on Ray)",
    )  # fmt: skip
    parser.add_argument(
        "--provider", choices=("cpu", "cuda"), default="cpu", help="ONNX Runtime execution provider (default cpu)"
    )


def game_from(args: argparse.Namespace) -> GameSetup:
    """The game :func:`add_game_options` parsed, checked: the rules (``--profile`` with ``--time-limit`` applied as
    ``dataclasses.replace(profile, time_limit_s=...)``, the one carrier of the limit from here to the game log),
    ``--players`` within the profile's ``max_players``, ``--first-player`` within ``--players`` (0-based from here
    on, as the game counts players), ``--seat1``/``--mirrored`` (None: neither given); a one-line
    :class:`referee.cli.CommandError` otherwise."""
    players = rules_cli.players_from(args)
    if not 1 <= args.first_player <= players:
        raise rules_cli.CommandError(
            f"--first-player is 1 to {players} at a {players}-player table, not {args.first_player}"
        )
    orientation = None
    if getattr(args, "seat1", None) is not None or getattr(args, "mirrored", False):
        orientation = Orientation.parse(args.seat1 or Edge.BOTTOM.label, bool(args.mirrored))
    return GameSetup(rules_cli.rules_from(args), players, args.first_player - 1, orientation)
