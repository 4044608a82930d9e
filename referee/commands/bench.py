"""``bench``: benchmark a part of the referee. The rules package has one suite (``rules``: the solver against an
ILP reference in the same run); the vision package's ``bench`` is built from :func:`command` with more."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from referee.cli import COUNT, PROG, SEED, Command, add_json_option, emit

Suite = Callable[[argparse.Namespace], tuple[Any, str]]
"""A benchmark: the parsed arguments in, its rows (for ``--json``) and their text out."""


def bench_rules(args: argparse.Namespace) -> tuple[Any, str]:
    from referee.bench import format_rules_benchmark, run_rules_benchmark

    rows = run_rules_benchmark(repeats=args.repeats, seed=args.seed, inputs=args.inputs or 20)
    return rows, format_rules_benchmark(rows)


SUITES: Mapping[str, Suite] = MappingProxyType({"rules": bench_rules})


def command(
    suites: Mapping[str, Suite],
    help_: str,
    more_arguments: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> Command:
    """A ``bench`` command over ``suites`` (their names are the choices of SUITE), with ``more_arguments``."""
    suites = MappingProxyType(dict(suites))

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("suite", choices=list(suites), help=f"what to benchmark: {', '.join(suites)}")
        parser.add_argument(
            "--inputs",
            type=COUNT,
            help="rules: random inputs per row (default 20); pipeline: games to make (default 3); "
            "station: browser-like clients (default 50)",
        )
        parser.add_argument(
            "--repeats", type=COUNT, default=3, help="timings per input, the best one counts (default 3)"
        )
        parser.add_argument("--seed", type=SEED, default=0)
        more_arguments(parser)
        add_json_option(parser)

    def run(args: argparse.Namespace) -> int:
        rows, text = suites[args.suite](args)
        emit(args, rows, text)
        return 0

    return Command("bench", help_, f"{PROG} bench rules", arguments, run)


COMMAND = command(
    SUITES, "Benchmark a part of the referee: rules (the solver against an ILP reference in the same run)."
)
