"""``validate``: is a set of tiles, in this order, a valid run or group?"""

from __future__ import annotations

import argparse
from typing import Any

from referee.cli import PROG, Command, add_json_option, add_profile_option, emit
from referee.sets import TileSet


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tiles", nargs="+", metavar="TILE", help="labels such as red-7, k13, joker")
    add_profile_option(parser)
    add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    tile_set = TileSet.parse(args.tiles)
    check = tile_set.check(args.profile)
    data: dict[str, Any] = check.to_dict()
    if check.reading is not None:
        data["jokers"] = check.reading.joker_meanings(tile_set.tiles)
    if check.valid:
        jokers = f"; joker(s): {', '.join(data['jokers'])}" if data["jokers"] else ""
        text = f"valid {data['kind']} worth {check.value}{jokers}"
    else:
        text = f"invalid: {check.reason}"
        if check.reordered is not None:
            text += f"\nin order: {check.reordered} (worth {check.reordered.reading.value})"
    emit(args, data, text)
    return 0 if check.valid else 1


COMMAND = Command(
    "validate",
    "Is a set of tiles, in this order, a valid run or group?",
    f"{PROG} validate red-5 joker red-7",
    arguments,
    run,
)
