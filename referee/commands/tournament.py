"""``tournament``: players drawn to tables, rounds per the profile's format, results, standings."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from referee.cli import COUNT, PROG, SEED, Command, CommandError, add_json_option, emit, read_json
from referee.profiles import DEFAULT_PROFILE, PROFILES


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the tournament file (JSON): players, seed, results")
    parser.add_argument("--new", action="store_true", help="start FILE (it must not exist yet)")
    parser.add_argument("--players", metavar="NAMES", help="with --new: the players, comma-separated")
    parser.add_argument(
        "--profile", choices=list(PROFILES), metavar="P",
        help=f"with --new: the rules and format (pl-championship, wejherowo, przasnysz; default {DEFAULT_PROFILE})",
    )  # fmt: skip
    parser.add_argument("--seed", type=SEED, help="with --new: seeds the draws (default 0)")
    parser.add_argument(
        "--advance", type=COUNT, metavar="N",
        help="with --new, championship format: players of each semi-final table in the final (not in the seeds)",
    )  # fmt: skip
    parser.add_argument("--enter", metavar="R/T/G", help="enter the result of round R, table T, game G")
    parser.add_argument("--small", metavar="NAME=POINTS,...", help="with --enter: each player's small points")
    parser.add_argument(
        "--game-file", metavar="GAME", help="with --enter: the finished game's file, as `score` reads it"
    )
    parser.add_argument("--html", metavar="PAGE", help="write the standings page (HTML) there")
    add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    from referee.tournament import FORMATS, Tournament, TournamentError, standings_html

    path = Path(args.file)
    if args.new:
        if path.exists():
            raise CommandError(f"{path}: already exists (--new starts a tournament file)")
        if not args.players:
            raise CommandError("--new needs --players NAME,NAME,...")
        profile = args.profile or DEFAULT_PROFILE
        if profile not in FORMATS:
            raise CommandError(f"--profile {profile}: its seed gives no tournament format ({', '.join(FORMATS)} do)")
        names = [name.strip() for name in args.players.split(",") if name.strip()]
        data: Any = {"profile": profile, "seed": args.seed or 0, "players": names, "results": []}
        if args.advance is not None:
            data["advance"] = args.advance
    else:
        if args.players or args.profile or args.advance is not None or args.seed is not None:
            raise CommandError("--players, --profile, --seed and --advance start a tournament: add --new")
        data = read_json(args.file)
    try:
        tournament = Tournament.from_json(data, base=path.parent)
        if args.enter is not None:
            tournament = tournament.with_entry(_tournament_entry(args))
    except TournamentError as error:
        raise TournamentError(f"{args.file}: {error}") from None
    if args.new or args.enter is not None:
        _write_atomically(path, json.dumps(tournament.to_json(), indent=2, ensure_ascii=False) + "\n")
    elif args.small or args.game_file:
        raise CommandError("--small and --game-file enter a result: add --enter ROUND/TABLE/GAME")
    summary = tournament.summary()
    if args.html:
        _write_atomically(Path(args.html), standings_html(tournament))
    emit(args, summary, _format_tournament(summary))
    return 0


def _tournament_entry(args: argparse.Namespace) -> dict[str, Any]:
    match = re.fullmatch(r"(\d+)/(\d+)/(\d+)", args.enter.strip())
    if not match:
        raise CommandError(f"--enter {args.enter!r}: ROUND/TABLE/GAME, e.g. 1/2/3")
    entry: dict[str, Any] = dict(zip(("round", "table", "game"), map(int, match.groups()), strict=True))
    if bool(args.small) == bool(args.game_file):
        raise CommandError("--enter needs --small NAME=POINTS,... or --game-file PATH (one of them)")
    if args.game_file:
        entry["game_file"] = os.path.relpath(args.game_file, Path(args.file).parent or ".")
        return entry
    small: dict[str, int | float] = {}
    for item in args.small.split(","):
        name, equals, points = item.rpartition("=")
        try:
            value = float(points)
        except ValueError:
            value = math.nan
        if not equals or not name.strip() or not math.isfinite(value) or not points.strip().isascii():
            raise CommandError(f"--small: {item!r} is not NAME=POINTS")
        small[name.strip()] = int(value) if value == int(value) else value
    entry["small"] = small
    return entry


def _write_atomically(path: Path, text: str) -> None:
    """Write the file whole or not at all (a crash mid-write must not cut a tournament file in half)."""
    folder = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _format_tournament(summary: dict[str, Any]) -> str:
    lines = [f"{summary['profile']} tournament, {len(summary['players'])} players (seed {summary['seed']})"]
    for round_info in summary["rounds"]:
        if "pending" in round_info:
            lines.append(f"{round_info['stage']}: not drawn yet ({round_info['pending']})")
            continue
        state = "complete" if round_info["complete"] else f"{len(round_info['missing'])} game(s) to enter"
        lines.append(f"{round_info['stage']} ({state})")
        for table in round_info["tables"]:
            seats = ", ".join(f"{seat} {name}" for seat, name in table["seats"].items())
            lines.append(f"  table {table['table']}: {seats}")
    lines += [f"note: {note}" for note in summary["notes"]]
    standing = "standings" if summary["complete"] else "standings so far"
    lines.append(f"{standing} (big points, then small points)")
    for row in summary["standings"]:
        stage = f"  [{row['stage']}]" if row["stage"] else ""
        lines.append(
            f"  {row['rank']:>2}. {row['name']:<20} big {row['big_points']:>3}  small {row['small_points']:>+7g}"
            f"  games {row['games']}{stage}"
        )
    return "\n".join(lines)


COMMAND = Command(
    "tournament",
    "Run a tournament: players drawn to tables, rounds per the profile's format (pl-championship, wejherowo:"
    " semi-final and final, 2 games a table; przasnysz: 4 rounds x 3 games, tables re-sorted), results from"
    " game files or entered points, score sheets and standings (an HTML page with --html).",
    f"{PROG} tournament cup.json --new --profile przasnysz --players Ann,Bob,Cyd,Dan,Eve,Fay,Gus,Hal --seed 7\n"
    f"  {PROG} tournament cup.json --enter 1/1/1 --game-file r1-t1-g1.json\n"
    f"  {PROG} tournament cup.json --enter 1/2/1 --small Cyd=31,Bob=-12,Ann=-4,Eve=-15\n"
    f"  {PROG} tournament cup.json --html standings.html",
    arguments,
    run,
)
