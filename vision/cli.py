"""The full ``rummikub-referee`` command line: the rules commands of :mod:`referee.cli` plus the camera side.

Each command imports what it needs when it runs, so ``rummikub-referee validate`` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from referee import cli as rules_cli


def build_parser() -> argparse.ArgumentParser:
    parser = rules_cli.build_parser()
    commands = rules_cli.subcommands(parser)
    from vision import commands as recognition_commands
    from vision import game_commands, live_commands
    from vision.synth import commands as synth_commands
    from vision.train import commands as training_commands

    synth_commands.register(commands)
    recognition_commands.register(commands)
    training_commands.register(commands)
    game_commands.register(commands)
    live_commands.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return rules_cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
