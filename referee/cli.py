"""The ``rummikub-referee`` command line: a thin layer over the library, one function per command.

Every command runs inside one error boundary (:func:`run`): bad input (unknown labels, malformed or too deeply
nested JSON, impossible values) prints one line and exits with status 2; a bug prints one line naming the crash file
its traceback was saved to (``RUMMIKUB_REFEREE_DEBUG=1`` shows it) and exits with status 1; Ctrl-C exits with 130.
Never a traceback on the console.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TypeVar

from referee.moves import Ruling, Verdict, check_move, unsure_of_left_out
from referee.profiles import DEFAULT_PROFILE, PROFILES
from referee.scoring import Game, ScoreError, read_game_log, replay_log, score_game, tournament_sheet
from referee.sets import TileSet
from referee.table import Table, TableError

PROG = "rummikub-referee"
EXIT_USAGE = 2
"""Bad input: a usage error, an unreadable or malformed file, an impossible value. One line says what is wrong."""
EXIT_INTERNAL = 1
"""A bug: one line says where the traceback was saved (``validate`` also exits 1 for an invalid set)."""
EXIT_INTERRUPTED = 130
DEBUG_ENV = "RUMMIKUB_REFEREE_DEBUG"
"""Set to 1 to see the full traceback of any error on standard error as well."""
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"}


class TableFromFile(NamedTuple):
    """A table read from a file, and how many boxes of a photo were left out of it as most likely not tiles
    (the count only: the live pipeline's ``vision.game.pipeline.TableReading`` keeps the boxes themselves)."""

    table: Table
    left_out: int = 0


TABLE_READERS: dict[str, Callable[[str], TableFromFile]] = {}
"""Readers of tables from other files, by suffix (``.jpg`` -> a photo reader). The rules package leaves it
empty; ``vision.cli.commands.register`` fills it for photos, so ``check`` accepts them (referee never imports
vision)."""


class CommandError(ValueError):
    """A problem with the command's input, reported as one line."""


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line (argparse prints the whole usage first), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


# -- shared option bundles ------------------------------------------------------------------------


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON instead of text")


@dataclass(frozen=True, slots=True)
class NumberArg:
    """The ``type`` of a numeric option: a finite number (never nan or inf), whole if ``whole``, in
    [``minimum``, ``maximum``], written in ASCII digits; anything else is argparse's one-line usage error (exit 2).

    ``NumberArg(whole=True, minimum=1)`` for a count, ``NumberArg(minimum=0, maximum=1)`` for a share.
    """

    whole: bool = False
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    """An exclusive lower bound (``above=0``: positive), beside or instead of ``minimum``."""

    def __call__(self, text: str) -> int | float:
        value = self._parse(text)
        if (
            (self.minimum is not None and value < self.minimum)
            or (self.above is not None and value <= self.above)
            or (self.maximum is not None and value > self.maximum)
        ):
            raise argparse.ArgumentTypeError(f"must be {self._range()}, not {text}")
        return value

    def _range(self) -> str:
        """The allowed values in words: "between 0 and 1", "a whole number of at least 1"."""
        if self.minimum is not None and self.maximum is not None:
            bounds = f"between {self.minimum:g} and {self.maximum:g}"
        else:
            low = [f"at least {self.minimum:g}"] if self.minimum is not None else []
            low += [f"more than {self.above:g}"] if self.above is not None else []
            high = [f"at most {self.maximum:g}"] if self.maximum is not None else []
            bounds = " and ".join(low + high)
        return f"a whole number {'of ' * bounds.startswith('at')}{bounds}" if self.whole else bounds

    def _parse(self, text: str) -> int | float:
        kind = "a whole number" if self.whole else "a number"
        if not text.strip().isascii():  # Python reads Arabic-Indic and other digits: a typo, not a number
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}")
        try:
            value: int | float = int(text) if self.whole else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, not {text}")
        return value


COUNT = NumberArg(whole=True, minimum=1)
"""How many of something (images, repeats, workers): at least 1."""
POSITIVE = NumberArg(above=0)
"""A size or a duration: more than 0."""
SHARE = NumberArg(minimum=0, maximum=1)
SEED = NumberArg(whole=True)
"""A random seed: any whole number."""
PLAYERS = NumberArg(whole=True, minimum=2, maximum=max(p.max_players for p in PROFILES.values()))
"""``--players``: 2 to the largest table any profile is played at; :func:`players_under` bounds it by the chosen
profile."""


def players_under(profile: str, players: int) -> int:
    """``players`` when ``profile`` is played by that many; else a one-line :class:`CommandError` naming the
    profile's limit (and the profiles that take that many)."""
    most = PROFILES[profile].max_players
    if players <= most:
        return players
    larger = [name for name, p in PROFILES.items() if p.max_players >= players]
    hint = f"; for {players}: --profile {' or '.join(larger)}" if larger else ""
    raise CommandError(f"--players {players}: profile {profile} is played by 2 to {most} players{hint}")


def add_profile_option(parser: argparse.ArgumentParser) -> None:
    """``--profile``, the same for every command: :data:`referee.profiles.DEFAULT_PROFILE` unless given."""
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        choices=list(PROFILES),
        metavar="P",
        help=f"rule profile (default {DEFAULT_PROFILE}; see `{PROG} profiles`)",
    )


MAX_SECONDS = 24 * 3600
"""The longest time a time option takes: a day (a move's time or limit beyond it is a typo, not a game)."""
SECONDS = NumberArg(minimum=0, maximum=MAX_SECONDS)
"""A duration in seconds: finite, 0 to a day."""


def time_limit_arg(text: str) -> float | None:
    """``--time-limit`` values: seconds up to a day, or none/off/0 for no limit; nan, inf, negative, non-ASCII
    digits are argparse's one-line usage error."""
    if text.strip().lower() in {"none", "off"}:
        return None
    value = SECONDS(text)
    return None if value == 0 else float(value)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else the human-readable ``text`` (non-JSON values as strings)."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str) if args.json else text)


# -- commands ---------------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
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


def cmd_check(args: argparse.Namespace) -> int:
    before, after = _read_table(args.before), _read_table(args.after)
    options: dict[str, Any] = {}
    if args.time_limit is not _NOT_GIVEN:
        options["time_limit_s"] = args.time_limit
    left_out = before.left_out + after.left_out
    if args.at_limit is not None:
        at_limit = _read_table(args.at_limit)
        options["table_at_limit"] = at_limit.table
        left_out += at_limit.left_out
    if args.touched_after_limit is not None:
        options["touched_after_limit"] = args.touched_after_limit
    ruling = check_move(
        before.table, after.table, opened=args.opened, profile=args.profile, elapsed_s=args.elapsed, **options
    )
    ruling = unsure_of_left_out(ruling, left_out)
    emit(args, ruling.to_dict(), format_ruling(ruling))
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    data = _read_json(args.game)
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
    emit(args, result, _format_scores(result))
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
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
        data = _read_json(args.file)
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


def cmd_profiles(args: argparse.Namespace) -> int:
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


def _bench_rules(args: argparse.Namespace) -> tuple[Any, str]:
    from referee.bench import format_rules_benchmark, run_rules_benchmark

    rows = run_rules_benchmark(repeats=args.repeats, seed=args.seed, inputs=args.inputs or 20)
    return rows, format_rules_benchmark(rows)


BENCH_SUITES: dict[str, Callable[[argparse.Namespace], tuple[Any, str]]] = {"rules": _bench_rules}
"""Benchmark suites by name; other packages add theirs (``vision`` adds ``recognition``)."""


def cmd_bench(args: argparse.Namespace) -> int:
    rows, text = BENCH_SUITES[args.suite](args)
    emit(args, rows, text)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
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


# -- text formatting -------------------------------------------------------------------------------


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


def _format_scores(result: dict[str, Any]) -> str:
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


# -- input --------------------------------------------------------------------------------------------


def _read_json(path: str) -> Any:
    """The JSON in a file (``-``: standard input); every way it can be unreadable is one line naming the file."""
    where = "standard input" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise CommandError(f"{where}: not a JSON text file (not UTF-8 at byte {error.start})") from None
    except OSError as error:
        raise CommandError(f"cannot read {where!r}: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(
            f"{where}: malformed JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except RecursionError:  # Python's parser gives up on arrays nested about a thousand deep
        raise CommandError(f"{where}: JSON nested too deeply to be a table or a game") from None


def _read_table(path: str) -> TableFromFile:
    suffix = Path(path).suffix.lower()
    if suffix in TABLE_READERS:
        return TABLE_READERS[suffix](path)
    if suffix in IMAGE_SUFFIXES:
        raise CommandError(
            f"{path}: reading photos needs the tile recognition model, which this version does not ship yet"
        )
    try:
        return TableFromFile(Table.from_json(_read_json(path)))
    except TableError as error:
        raise TableError(f"{path}: {error}") from None


# -- parser -------------------------------------------------------------------------------------------

_NOT_GIVEN = object()
Handler = Callable[[argparse.Namespace], int]
_P = TypeVar("_P", bound=argparse.ArgumentParser)


def add_command(commands: argparse._SubParsersAction[_P], name: str, func: Handler, help_: str, example: str) -> _P:
    """Register a command; every command has a description and an example in its --help."""
    sub = commands.add_parser(
        name,
        help=help_,
        description=help_,
        epilog=f"Example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.set_defaults(func=func)
    return sub


def set_help(commands: argparse._SubParsersAction[_P], name: str, help_: str) -> None:
    """A registered command's text, in the main ``--help`` listing and in the command's own ``--help`` alike."""
    commands.choices[name].description = help_
    for action in commands._choices_actions:
        if action.dest == name:
            action.help = help_


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The subcommand registry of a parser built by :func:`build_parser`, for packages that add commands."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="A Rummikub referee: rules on moves, scores games, reads tables.",
        epilog=f"Example: {PROG} check before.json after.json --opened",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    def command(name: str, func: Handler, help_: str, example: str) -> argparse.ArgumentParser:
        return add_command(commands, name, func, help_, example)

    validate = command(
        "validate",
        cmd_validate,
        "Is a set of tiles, in this order, a valid run or group?",
        f"{PROG} validate red-5 joker red-7",
    )
    validate.add_argument("tiles", nargs="+", metavar="TILE", help="labels such as red-7, k13, joker")
    add_profile_option(validate)
    add_json_option(validate)

    check = command(
        "check",
        cmd_check,
        "Rule on a move from the table before and after it (table JSON files, or photos with the vision package).",
        f"{PROG} check before.json after.json --not-opened --elapsed 42 --profile przasnysz",
    )
    check.add_argument(
        "before", metavar="BEFORE", help="table JSON (or photo) before the move ('-' reads standard input)"
    )
    check.add_argument("after", metavar="AFTER", help="table JSON (or photo) after the move")
    status = check.add_mutually_exclusive_group(required=True)
    status.add_argument("--opened", dest="opened", action="store_true", help="the player had opened before this move")
    status.add_argument("--not-opened", dest="opened", action="store_false", help="this is the player's opening turn")
    check.add_argument("--elapsed", type=SECONDS, metavar="SECONDS", help="how long the move took (up to a day)")
    check.add_argument(
        "--time-limit", type=time_limit_arg, default=_NOT_GIVEN, metavar="SECONDS",
        help="time limit agreed at the table ('none' for no limit); default: the profile's",
    )  # fmt: skip
    late = check.add_argument_group(
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
    add_profile_option(check)
    add_json_option(check)

    score = command(
        "score",
        cmd_score,
        "Score a finished game (or a list of games, with the tournament sheet) from the racks at the end.",
        f"{PROG} score referee/samples/finished-game.json --json",
    )
    score.add_argument("game", metavar="GAME", help="game JSON: {profile, ending, players: [{name, rack, opened}]}")
    score.add_argument(
        "--profile", choices=list(PROFILES), metavar="P",
        help=f"override the game's profile (default: the game's own, else {DEFAULT_PROFILE})",
    )  # fmt: skip
    score.add_argument(
        "--announced", action="append", default=[], metavar="NAME",
        help="NAME said \"I'll open next round\" (Wyłożę się w następnej rundzie): no -200 if the opening came in"
        " the last round (repeatable; a game file records it as an announced-opening event)",
    )  # fmt: skip
    score.add_argument(
        "--log", action="append", default=[], metavar="LOG",
        help="the game's log (JSONL, as live/analyze write it; one per game, in order): the ending the referee"
        " recorded (out, pool-empty), who opened and who declared the opening for next round come from it",
    )  # fmt: skip
    add_json_option(score)

    tournament = command(
        "tournament",
        cmd_tournament,
        "Run a tournament: players drawn to tables, rounds per the profile's format (pl-championship, wejherowo:"
        " semi-final and final, 2 games a table; przasnysz: 4 rounds x 3 games, tables re-sorted), results from"
        " game files or entered points, score sheets and standings (an HTML page with --html).",
        f"{PROG} tournament cup.json --new --profile przasnysz --players Ann,Bob,Cyd,Dan,Eve,Fay,Gus,Hal --seed 7\n"
        f"  {PROG} tournament cup.json --enter 1/1/1 --game-file r1-t1-g1.json\n"
        f"  {PROG} tournament cup.json --enter 1/2/1 --small Cyd=31,Bob=-12,Ann=-4,Eve=-15\n"
        f"  {PROG} tournament cup.json --html standings.html",
    )
    tournament.add_argument("file", metavar="FILE", help="the tournament file (JSON): players, seed, results")
    tournament.add_argument("--new", action="store_true", help="start FILE (it must not exist yet)")
    tournament.add_argument("--players", metavar="NAMES", help="with --new: the players, comma-separated")
    tournament.add_argument(
        "--profile", choices=list(PROFILES), metavar="P",
        help=f"with --new: the rules and format (pl-championship, wejherowo, przasnysz; default {DEFAULT_PROFILE})",
    )  # fmt: skip
    tournament.add_argument("--seed", type=SEED, help="with --new: seeds the draws (default 0)")
    tournament.add_argument(
        "--advance", type=COUNT, metavar="N",
        help="with --new, championship format: players of each semi-final table in the final (not in the seeds)",
    )  # fmt: skip
    tournament.add_argument("--enter", metavar="R/T/G", help="enter the result of round R, table T, game G")
    tournament.add_argument("--small", metavar="NAME=POINTS,...", help="with --enter: each player's small points")
    tournament.add_argument(
        "--game-file", metavar="GAME", help="with --enter: the finished game's file, as `score` reads it"
    )
    tournament.add_argument("--html", metavar="PAGE", help="write the standings page (HTML) there")
    add_json_option(tournament)

    profiles = command(
        "profiles", cmd_profiles, "List the rule profiles with their parameters.", f"{PROG} profiles --json"
    )
    add_json_option(profiles)

    bench = command(
        "bench",
        cmd_bench,
        "Benchmark a part of the referee: rules (the solver against an ILP reference in the same run); with the"
        " vision package: recognition, colour, pipeline (rulings against synthetic games' truth), live (real-time"
        " playback), station (browser-like clients).",
        f"{PROG} bench rules",
    )
    bench.add_argument(
        "suite",
        choices=BENCH_SUITES,
        help="what to benchmark: rules; with vision: recognition, colour, pipeline, live, station",
    )
    bench.add_argument(
        "--inputs",
        type=COUNT,
        help="rules: random inputs per row (default 20); pipeline: games to make (default 3); "
        "station: browser-like clients (default 50)",
    )
    bench.add_argument("--repeats", type=COUNT, default=3, help="timings per input, the best one counts (default 3)")
    bench.add_argument("--seed", type=SEED, default=0)
    add_json_option(bench)

    demo = command("demo", cmd_demo, "Rule on a bundled sample game, move by move.", f"{PROG} demo")
    add_json_option(demo)
    return parser


# -- the error boundary ---------------------------------------------------------------------------------

INPUT_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, RecursionError, MemoryError, KeyError, TypeError)
"""What bad input raises. Domain errors are ``ValueError`` subclasses quoting the input (json, Unicode and PIL's
unreadable-image errors are ``ValueError`` or ``OSError`` too); the rest are the safety net for a reader that
missed a case: nesting too deep, a file too big, a key or type missing from an incomplete file."""
INPUT_ERROR_NAMES: set[str] = set()
"""Input errors of libraries the rules package never imports (``"yaml.YAMLError"``, ``"cv2.error"``), by dotted
name; ``vision.cli`` adds them. Resolved only when the library is loaded: if it is not, it raised nothing."""
SECRET_OPTIONS = ("--token", "--password")
"""Options whose value never goes into a crash file."""


def _exit_status(error: Exception, argv: Sequence[str] | None) -> int:
    """One line on standard error for ``error`` (the traceback too with ``RUMMIKUB_REFEREE_DEBUG=1``), and the exit
    status: 2 for bad input, 1 for a bug, whose traceback is saved to a crash file the line names."""
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        traceback.print_exception(error, file=sys.stderr)
    if isinstance(error, ValueError | OSError):  # a domain error: its message names the file and the problem
        print(f"{PROG}: error: {_describe_os_error(error) or _one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    saved = _save_traceback(error, argv)
    if _is_input_error(error):  # a reader missed this case: say what is wrong, keep the traceback to fix it
        print(f"{PROG}: error: {_describe_input_error(error)} ({saved})", file=sys.stderr)
        return EXIT_USAGE
    print(f"{PROG}: internal error ({type(error).__name__}: {_one_line(error)}); {saved}", file=sys.stderr)
    return EXIT_INTERNAL


def _is_input_error(error: BaseException) -> bool:
    if isinstance(error, INPUT_ERRORS):
        return True
    for name in INPUT_ERROR_NAMES:
        module_name, _, attribute = name.rpartition(".")
        module = sys.modules.get(module_name)
        kind = getattr(module, attribute, None) if module is not None else None
        if isinstance(kind, type) and isinstance(error, kind):
            return True
    return False


def _describe_input_error(error: BaseException) -> str:
    """What the safety net can say about an input error that no reader turned into a message of its own."""
    if isinstance(error, RecursionError):
        return "the input is nested too deeply to read"
    if isinstance(error, MemoryError):
        return "not enough memory to read the input (is it far too large?)"
    if isinstance(error, KeyError):
        return f"incomplete input: {error.args[0]!r} is missing" if error.args else "incomplete input"
    if isinstance(error, TypeError):
        return f"malformed input: {_one_line(error)}"
    return _one_line(error)


def _describe_os_error(error: BaseException) -> str | None:
    """``PATH: Not a directory`` for Python's own ``[Errno 20] Not a directory: 'PATH'`` (None for other errors)."""
    if not isinstance(error, OSError) or not error.strerror or error.filename is None:
        return None
    if not str(error).startswith("[Errno"):  # a message of our own, naming the file already
        return None
    target = f" -> {error.filename2}" if error.filename2 is not None else ""
    return _one_line(OSError(f"{error.filename}{target}: {error.strerror}"))


def _one_line(error: BaseException, limit: int = 400) -> str:
    """The error's message on one line (OpenCV's and YAML's span several), at most ``limit`` characters."""
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _save_traceback(error: BaseException, argv: Sequence[str] | None) -> str:
    """Write the traceback to a new file in the system's temporary folder; the words that point to it."""
    command = _redacted(list(sys.argv[1:] if argv is None else argv))
    try:
        handle, name = tempfile.mkstemp(prefix=f"{PROG}-crash-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(f"{PROG} {shlex.join(command)}\n\n")
            out.write("".join(traceback.format_exception(error)))
    except OSError as write_error:
        return f"the traceback could not be saved ({write_error.strerror or write_error}); run with {DEBUG_ENV}=1"
    return f"traceback in {name}"


def _redacted(argv: list[str]) -> list[str]:
    """The command line without secrets: values of ``--token``-like options, passwords in URLs."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in SECRET_OPTIONS:
            arg = "***"
        elif arg.startswith(tuple(f"{option}=" for option in SECRET_OPTIONS)):
            arg = arg.split("=", 1)[0] + "=***"
        out.append(re.sub(r"(//)[^/@\s]*@", r"\1***@", arg))
    return out


def run(
    parser: argparse.ArgumentParser | Callable[[], argparse.ArgumentParser], argv: Sequence[str] | None = None
) -> int:
    """Parse and dispatch inside the one error boundary every command shares (see :func:`_exit_status`); given a
    function that builds the parser, building it (importing every command's module) is inside it too."""
    try:
        if not isinstance(parser, argparse.ArgumentParser):
            parser = parser()
        args = parser.parse_args(argv)  # usage errors exit 2 with one line (_Parser.error)
        handler: Handler = args.func
        return handler(args)
    except BrokenPipeError:  # the reader went away (`| head`): not an error; an OSError, so it must come first
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python would write the broken pipe error at exit
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as error:  # the boundary: one line on standard error, never a traceback
        return _exit_status(error, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """The rules-only command line (the full one, with the camera commands, is ``vision.cli``)."""
    return run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
