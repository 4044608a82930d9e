"""``demo``: rule on a bundled sample game, move by move."""

from __future__ import annotations

import argparse
import json
from importlib import resources

from referee.cli import PROG, Command, add_json_option
from referee.commands.check import format_ruling
from referee.moves import check_move
from referee.table import Table


def arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    """Rule on the bundled move script (referee/samples/move-script.json), move by move."""
    sample = resources.files("referee").joinpath("samples/move-script.json")
    game = json.loads(sample.read_text(encoding="utf-8"))
    rulings = []
    for move in game["moves"]:
        ruling = check_move(
            Table.from_json(move["before"]),
            Table.from_json(move["after"]),
            opened=move["opened"],
            profile=game["profile"],
            elapsed_s=move.get("elapsed_s"),
        )
        rulings.append({"player": move["player"], "says": move["says"], **ruling.to_dict()})
        if not args.json:
            print(f"--- move {len(rulings)}: {move['player']} ({move['says']})")
            print(format_ruling(ruling))
    if args.json:
        print(json.dumps({"profile": game["profile"], "moves": rulings}, indent=2))
    return 0


COMMAND = Command("demo", "Rule on a bundled sample game, move by move.", f"{PROG} demo", arguments, run)
