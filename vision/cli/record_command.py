"""``record``: the referee's word on the table written into a game log after the fact (a video analysed, a word said
only at the end): the pool ran out, a re-deal for three pairs, "I'll open next round", a player went out, or the
last override or word taken back. During a live game the station's Table… dialog records the same words.

The command is a thin shell over :func:`vision.game.words.record_word` (``NAME``, ``HELP``, ``EXAMPLE``,
``arguments``, ``run``: what the command line's list takes). Players are numbered from 1, as the station and the
console name them (the log writes them 0-based).
"""

from __future__ import annotations

import argparse
from typing import Any

from referee import cli as rules_cli

NAME = "record"
HELP = (
    "Record the referee's word on the table in a game log (pool-empty, redeal, announced-opening, out, undo),"
    " checked by the game replayed from the log; `score --log` uses it."
)
EXAMPLE = f"{rules_cli.PROG} record game.jsonl announced-opening 2"
WORDS = ("pool-empty", "redeal", "announced-opening", "out", "undo")


def _player(text: str | None) -> int | None:
    """PLAYER as the command line gives it, 0-based (None: not given); parsed when the command runs."""
    if text is None:
        return None
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise rules_cli.CommandError(f"PLAYER is a player number from 1, not {text[:20]!r}")
    return int(text) - 1


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", help="the game log (JSONL) of live or analyze; not one live still writes")
    parser.add_argument("word", choices=WORDS, metavar="WORD", help=f"one of {', '.join(WORDS)}")
    parser.add_argument(
        "player", nargs="?", metavar="PLAYER",
        help="the player, from 1 (pool-empty: who drew the last tile, if known; undo: none)",
    )  # fmt: skip
    parser.add_argument(
        "--pairs", type=rules_cli.COUNT, metavar="N", help="redeal: the pairs among the tiles dealt (3 or more)"
    )
    parser.add_argument(
        "--round-time", action="store_true",
        help="pool-empty: the tournament round's time is up rather than the pool (przasnysz rule 24)",
    )  # fmt: skip
    parser.add_argument(
        "--at", type=rules_cli.SECONDS, metavar="SECONDS",
        help="the game's time of the word (default: the log's last time)",
    )  # fmt: skip
    rules_cli.add_json_option(parser)


def run(args: argparse.Namespace) -> int:
    from vision.game.gamelog import GameLogError
    from vision.game.words import record_word

    player = _player(args.player)
    if args.word in ("redeal", "announced-opening", "out") and player is None:
        raise rules_cli.CommandError(f"{args.word}: which player? (a number from 1)")
    if args.word == "undo" and player is not None:
        raise rules_cli.CommandError("undo takes back the last override or word: no player")
    try:
        line, keeper = record_word(
            args.log, args.word, player=player, pairs=args.pairs,
            cause="round-time" if args.round_time else None, at_s=args.at,
        )  # fmt: skip
    except GameLogError as error:
        raise rules_cli.CommandError(str(error)) from None
    from referee.events import describe, event_from_json

    status: dict[str, Any] = keeper.status()
    rules_cli.emit(args, {"recorded": line, "status": status}, f"{args.log}: {describe(event_from_json(line))}")
    return 0
