"""The rules commands of ``rummikub-referee``, one module each, listed once in :data:`COMMANDS` (the order of the
``--help`` listing). ``python -m referee.cli`` runs them alone; ``vision.cli.all_commands()`` lists them with the camera
commands (its ``check``, ``bench`` and ``demo`` built from these modules' parts)."""

from __future__ import annotations

from referee.cli import Command
from referee.commands import bench, check, demo, profiles, score, tournament, validate

COMMANDS: tuple[Command, ...] = (
    validate.COMMAND,
    check.COMMAND,
    score.COMMAND,
    tournament.COMMAND,
    profiles.COMMAND,
    bench.COMMAND,
    demo.COMMAND,
)
