"""Probes shared by the hostile-input sweeps of both packages' command lines (tests/referee/test_cli_hostile.py,
tests/vision/cli/test_cli_hostile.py): the numeric options a parser has, and the least argv that reaches one."""

from __future__ import annotations

import argparse

from referee.cli import subcommands

BAD_NUMBERS = ("nan", "inf", "-inf", "1e309", "-1", "", "\u0663", "5x")
ANY_INTEGER = {"--seed"}
"""Options where any whole number is fine (a seed): only non-numbers are wrong."""


def numeric_options(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.Action]]:
    """(command, option, action) for every option of every command whose value is a number: its type turns "5",
    "0.25" or "64" into one."""
    found = []
    for name, sub in subcommands(parser).choices.items():
        for action in sub._actions:
            if not action.option_strings or action.type is None or action.choices is not None:
                continue
            if any(isinstance(value_or_none(action.type, probe), int | float) for probe in ("5", "0.25", "64")):
                found.append((name, action.option_strings[-1], action))
    return found


def value_or_none(kind: object, text: str) -> object:
    try:
        return kind(text)  # type: ignore[operator]
    except (ValueError, TypeError, argparse.ArgumentTypeError):
        return None


def minimal_arguments(sub: argparse.ArgumentParser) -> list[str]:
    """Placeholder values for a command's required arguments, so that parsing reaches the option under test."""
    argv: list[str] = []
    for action in sub._actions:
        value = str(next(iter(action.choices))) if action.choices else "x"
        count = action.nargs if isinstance(action.nargs, int) else 1
        if not action.option_strings:
            argv += [value] * count
        elif action.required:
            argv += [action.option_strings[-1], *[value] * count]
    for group in sub._mutually_exclusive_groups:
        if group.required:
            argv.append(group._group_actions[0].option_strings[-1])
    return argv
