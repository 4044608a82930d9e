"""The full ``rummikub-referee`` command line: the rules commands (:mod:`referee.commands`) and the camera's, one
static list, :func:`all_commands`, in the order ``--help`` lists them (a function, so that the command modules load
inside the error boundary: a broken install is one line too).

The command modules: ``commands`` (``check`` reading photos, ``detect``, ``read``, ``eval``, ``enrol``),
``synth_commands``, ``train_commands``, ``game_commands`` (``analyze``, ``live``, ``demo``), ``table_commands``
(``markers``, ``calibrate``), ``draw_commands``, ``batch_command``, ``bench`` (every suite); the option bundles
they share are ``options`` and :mod:`referee.cli`. Nothing here changes the rules package's tables while the
program runs.

Each command imports what it needs when it runs, so ``rummikub-referee validate`` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from referee import cli as rules_cli
from referee.cli import Command
from vision.runtime.imagefile import MAX_IMAGE_PIXELS

INPUT_ERROR_NAMES = ("yaml.YAMLError", "cv2.error", "PIL.Image.DecompressionBombError")
"""Libraries' exceptions that mean bad input (a malformed YAML file, an image OpenCV cannot process, a
decompression bomb): one line and exit status 2 where no reader turned them into a message of its own."""
QUIET_NATIVE_LOGS = {"OPENCV_LOG_LEVEL": "SILENT", "OPENCV_FFMPEG_LOGLEVEL": "-8"}
"""OpenCV and FFmpeg write their own complaints about a corrupt image or video straight to standard error, around
the one line that says what is wrong; ``RUMMIKUB_REFEREE_DEBUG=1`` lets them through."""
DECODER_LIMITS = {"OPENCV_IO_MAX_IMAGE_PIXELS": str(MAX_IMAGE_PIXELS)}
"""OpenCV's own cap on a decoded image (default 2^30 pixels, 3 GB) lowered to ours, for the formats whose header
PIL cannot read for us (``vision.runtime.imagefile``). OpenCV reads it once, when it is imported."""


def all_commands() -> tuple[Command, ...]:
    """Every command, in the order ``--help`` lists them (the modules are imported here, not at import)."""
    from referee.commands import profiles, score, tournament, validate
    from vision.cli import (
        batch_command,
        bench,
        draw_commands,
        game_commands,
        record_command,
        synth_commands,
        table_commands,
        train_commands,
    )
    from vision.cli import commands as recognition

    return (
        validate.COMMAND,
        recognition.CHECK,
        score.COMMAND,
        tournament.COMMAND,
        profiles.COMMAND,
        bench.BENCH,
        game_commands.DEMO,
        synth_commands.SYNTH,
        synth_commands.SYNTH_GAME,
        recognition.DETECT,
        recognition.READ,
        recognition.EVAL,
        recognition.ENROL,
        train_commands.TRAIN,
        train_commands.EXPORT,
        train_commands.QUANTIZE,
        game_commands.ANALYZE,
        game_commands.LIVE,
        draw_commands.command(),
        Command(
            record_command.NAME,
            record_command.HELP,
            record_command.EXAMPLE,
            record_command.arguments,
            record_command.run,
        ),
        table_commands.MARKERS,
        table_commands.CALIBRATE,
        batch_command.BATCH,
    )


def build_parser() -> argparse.ArgumentParser:
    return rules_cli.build_parser(all_commands())


def main(argv: Sequence[str] | None = None) -> int:
    for name, value in DECODER_LIMITS.items():
        os.environ.setdefault(name, value)
    _quiet_native_logs()
    # building the parser inside the boundary: Ctrl-C or a broken install while importing gives no traceback either
    return rules_cli.run(build_parser, argv, input_error_names=INPUT_ERROR_NAMES)


def _quiet_native_logs() -> None:
    """Silence OpenCV's and FFmpeg's own stderr messages unless debugging (the environment, for a ``cv2`` not yet
    imported; OpenCV's log level too, for one that is)."""
    if os.environ.get(rules_cli.DEBUG_ENV, "") not in ("", "0"):
        return
    for name, value in QUIET_NATIVE_LOGS.items():
        os.environ.setdefault(name, value)
    cv2 = sys.modules.get("cv2")
    if cv2 is not None:
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)


if __name__ == "__main__":
    sys.exit(main())
