"""``check``: rule on a move from the table before and after it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from referee.cli import (
    IMAGE_SUFFIXES,
    PROG,
    SECONDS,
    Command,
    CommandError,
    TableFromFile,
    TableReader,
    add_json_option,
    add_profile_option,
    add_time_limit_option,
    emit,
    read_json,
    rules_from,
)
from referee.moves import Ruling, Verdict, check_move, unsure_of_blind_spots, unsure_of_left_out
from referee.table import Table, TableError

HELP = "Rule on a move from the table before and after it (table JSON files, or photos with the vision package)."
EXAMPLE = f"{PROG} check before.json after.json --not-opened --elapsed 42 --profile przasnysz"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "before", metavar="BEFORE", help="table JSON (or photo) before the move ('-' reads standard input)"
    )
    parser.add_argument("after", metavar="AFTER", help="table JSON (or photo) after the move")
    status = parser.add_mutually_exclusive_group(required=True)
    status.add_argument("--opened", dest="opened", action="store_true", help="the player had opened before this move")
    status.add_argument("--not-opened", dest="opened", action="store_false", help="this is the player's opening turn")
    parser.add_argument("--elapsed", type=SECONDS, metavar="SECONDS", help="how long the move took (up to a day)")
    add_time_limit_option(parser)
    late = parser.add_argument_group(
        "a move over the time limit (RULES.md §6)",
        "What the camera saw when the time ran out. Without them, a late move whose ruling depends on that moment"
        " (pl-championship, wejherowo, przasnysz, house) is REVIEW; the box rules restore any late move.",
    )
    late.add_argument("--at-limit", metavar="TABLE", help="table JSON (or photo) as it stood when the limit passed")
    touched = late.add_mutually_exclusive_group()
    touched.add_argument(
        "--touched-after-limit", dest="touched_after_limit", action="store_const", const=True, default=None,
        help="hands were over the tiles after the limit passed",
    )  # fmt: skip
    touched.add_argument(
        "--untouched-after-limit", dest="touched_after_limit", action="store_const", const=False,
        help="nothing was touched after the limit passed (the table after is the table at the limit)",
    )  # fmt: skip
    add_profile_option(parser)
    add_json_option(parser)


def read_table(path: str) -> TableFromFile:
    """A table JSON file; a photo is a one-line error (reading photos is the vision package's)."""
    if Path(path).suffix.lower() in IMAGE_SUFFIXES:
        raise CommandError(
            f"{path}: reading photos needs the tile recognition model, which this version does not ship yet"
        )
    try:
        return TableFromFile(Table.from_json(read_json(path)))
    except TableError as error:
        raise TableError(f"{path}: {error}") from None


def run(args: argparse.Namespace, read: TableReader = read_table) -> int:
    """Rule on the move; ``read`` reads each table file (JSON here; the vision package's reads photos too)."""
    before, after = read(args.before), read(args.after)
    options: dict[str, Any] = {}
    left_out = before.left_out + after.left_out
    blind_tiles = before.blind_tiles + after.blind_tiles
    if args.at_limit is not None:
        at_limit = read(args.at_limit)
        options["table_at_limit"] = at_limit.table
        left_out += at_limit.left_out
        blind_tiles += at_limit.blind_tiles
    if args.touched_after_limit is not None:
        options["touched_after_limit"] = args.touched_after_limit
    ruling = check_move(
        before.table, after.table, opened=args.opened, profile=rules_from(args), elapsed_s=args.elapsed, **options
    )
    ruling = unsure_of_blind_spots(unsure_of_left_out(ruling, left_out), blind_tiles)
    emit(args, ruling.to_dict(), format_ruling(ruling))
    return 0


def format_ruling(ruling: Ruling) -> str:
    status = "opened" if ruling.opened else "not opened"
    lines = [f"{ruling.verdict.value.upper()}  ({ruling.profile}, player {status}, {ruling.kind})"]
    lines += [f"  {v.code.value}: {v.detail}" for v in ruling.violations]
    if ruling.played:
        lines.append("played from the rack: " + " ".join(str(t) for t in ruling.played))
    if ruling.opening_value is not None:
        lines.append(f"opening value: {ruling.opening_value}")
    for which, place, tile in ruling.uncertain:
        where = "loose" if place[0] < 0 else f"set {place[0] + 1}"
        lines.append(f"uncertain: {tile} ({which}, {where}, position {place[1] + 1})")
    lines += [f"note: {note}" for note in ruling.notes]
    plan = ruling.revert
    if plan is not None and ruling.verdict is Verdict.REVERT:
        lines.append(f"restore the table to: {plan.restore or '(empty table)'}")
        if plan.to_rack:
            lines.append("  back to the player's rack: " + " ".join(str(t) for t in plan.to_rack))
        if plan.to_table:
            lines.append("  back onto the table: " + " ".join(str(t) for t in plan.to_table))
        lines.append(f"  penalty: draw {plan.penalty_tiles} tile{'s' if plan.penalty_tiles != 1 else ''}")
    return "\n".join(lines)


COMMAND = Command("check", HELP, EXAMPLE, arguments, run)
