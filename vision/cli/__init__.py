"""The full ``rummikub-referee`` command line: the rules commands of :mod:`referee.cli` plus the camera side.

Each command imports what it needs when it runs, so ``rummikub-referee validate`` stays instant.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from referee import cli as rules_cli
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


def build_parser() -> argparse.ArgumentParser:
    parser = rules_cli.build_parser()
    commands = rules_cli.subcommands(parser)
    from vision.cli import commands as recognition_commands
    from vision.cli import draw_commands, game_commands, live_commands, record_command
    from vision.session import batch as batch_commands
    from vision.synth import commands as synth_commands
    from vision.train import commands as training_commands

    synth_commands.register(commands)
    recognition_commands.register(commands)
    training_commands.register(commands)
    game_commands.register(commands)
    live_commands.register(commands)
    draw_commands.register(commands)
    record = record_command
    record.arguments(rules_cli.add_command(commands, record.NAME, record.run, record.HELP, record.EXAMPLE))
    batch_commands.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    rules_cli.INPUT_ERROR_NAMES.update(INPUT_ERROR_NAMES)
    for name, value in DECODER_LIMITS.items():
        os.environ.setdefault(name, value)
    _quiet_native_logs()
    return rules_cli.run(build_parser, argv)  # Ctrl-C or a broken install while importing: no traceback either


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
