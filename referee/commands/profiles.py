"""``profiles``: the rule profiles with their parameters."""

from __future__ import annotations

import argparse

from referee.cli import PROG, Command, add_json_option, emit
from referee.profiles import PROFILES


def arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    data = [p.describe() for p in PROFILES.values()]
    lines = []
    for p in PROFILES.values():
        limit = "none" if p.time_limit_s is None else f"{p.time_limit_s:g} s"
        joker = "0 (no value in the seed)" if p.joker_on_rack_points is None else f"-{p.joker_on_rack_points}"
        lines.append(
            f"{p.name:<24} {p.title}\n{'':<24} opening {p.opening_threshold}, time {limit}, penalty {p.penalty_tiles},"
            f" tiles {p.copies}x52+{p.jokers}, joker on rack {joker}, big points {p.big_points.value},"
            f"\n{'':<24} late moves: {p.timeout_rule.value}, play {p.direction.value}"
        )
    emit(args, data, "\n".join(lines))
    return 0


COMMAND = Command(
    "profiles", "List the rule profiles with their parameters.", f"{PROG} profiles --json", arguments, run
)
