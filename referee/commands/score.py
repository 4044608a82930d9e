"""``score``: a finished game (or a list of games, with the tournament sheet) scored from the racks at the end."""

from __future__ import annotations

import argparse
from typing import Any

from referee.cli import PROG, Command, add_json_option, emit, read_json
from referee.profiles import DEFAULT_PROFILE, PROFILES
from referee.scoring import Game, ScoreError, read_game_log, replay_log, score_game, tournament_sheet


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", metavar="GAME", help="game JSON: {profile, ending, players: [{name, rack, opened}]}")
    parser.add_argument(
        "--profile", choices=list(PROFILES), metavar="P",
        help=f"override the game's profile (default: the game's own, else {DEFAULT_PROFILE})",
    )  # fmt: skip
    parser.add_argument(
        "--announced", action="append", default=[], metavar="NAME",
        help="NAME said \"I'll open next round\" (Wyłożę się w następnej rundzie): no -200 if the opening came in"
        " the last round (repeatable; a game file records it as an announced-opening event)",
    )  # fmt: skip
    parser.add_argument(
        "--log", action="append", default=[], metavar="LOG",
        help="the game's log (JSONL, as live/analyze write it; one per game, in order): the ending the referee"
        " recorded (out, pool-empty), who opened and who declared the opening for next round come from it",
    )  # fmt: skip
    add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    data = read_json(args.game)
    games = data if isinstance(data, list) else [data]
    if not games:
        raise ScoreError(f"{args.game}: no games to score")
    if args.log and len(args.log) != len(games):
        raise ScoreError(
            f"--log: {len(args.log)} game log(s) for {len(games)} game(s) in {args.game} (one each, in order)"
        )
    scored = []
    for index, game_data in enumerate(games):
        played = replay_log(read_game_log(args.log[index]), where=args.log[index]) if args.log else None
        profile = args.profile
        if played is not None and profile is None and not (isinstance(game_data, dict) and "profile" in game_data):
            profile = played.profile  # the log's, for a file that names none
        try:
            game = Game.from_json(game_data, profile=profile)
            if played is not None:
                game = game.with_log(played)
        except ScoreError as error:
            where = f"game {index + 1}: " if len(games) > 1 else ""
            raise ScoreError(f"{args.game}: {where}{error}") from None
        scored.append(score_game(game.with_announcements(args.announced)))
    named = {p["name"] for game in games if isinstance(game, dict) for p in game.get("players", ())}
    unknown = sorted(set(args.announced) - named)
    if unknown:
        raise ScoreError(f"--announced {unknown[0]}: no player of that name in {args.game}")
    sheet = tournament_sheet(scored)
    result = {"games": [[s.to_dict() for s in game] for game in scored], "sheet": [s.to_dict() for s in sheet]}
    emit(args, result, format_scores(result))
    return 0


def format_scores(result: dict[str, Any]) -> str:
    lines = []
    for number, game in enumerate(result["games"], 1):
        lines.append(f"game {number}")
        for s in game:
            note = f"  ({s['note']})" if s["note"] else ""
            lines.append(f"  {s['name']:<16} small {s['small_points']:>+6}  big {s['big_points']}{note}")
    lines.append("sheet (big points, then small points)")
    for s in result["sheet"]:
        lines.append(f"  {s['rank']}. {s['name']:<14} big {s['big_points']:>2}  small {s['small_points']:>+6}")
    return "\n".join(lines)


COMMAND = Command(
    "score",
    "Score a finished game (or a list of games, with the tournament sheet) from the racks at the end.",
    f"{PROG} score referee/samples/finished-game.json --json",
    arguments,
    run,
)
