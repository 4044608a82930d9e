"""What every command of ``rummikub-referee`` shares: the :class:`Command` a command module defines, the parser
built from a static list of them (:func:`build_parser`), the option bundles (``--json``, ``--profile``,
``--players``, ``--time-limit``, numbers), reading JSON input, and the one error boundary (:func:`run`).

The rules commands are :data:`referee.commands.COMMANDS` (``python -m referee.cli``: the rules package alone); the
full command line, with the camera commands, is ``vision.cli.all_commands()``. Neither list is changed while the
program runs: a package that extends a command (``check`` reading photos, ``bench`` with more suites) defines its own
:class:`Command` from the rules command's parts.

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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple, NoReturn, TypeVar

from referee.profiles import DEFAULT_PROFILE, PROFILES, Profile
from referee.table import Table

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
    blind_tiles: float = 0.0
    """A photo's area washed out by glare outside the tiles read, in tiles' areas: a tile there cannot be seen."""


TableReader = Callable[[str], TableFromFile]
"""Reads the table in a file (``check``'s BEFORE, AFTER, ``--at-limit``): JSON in the rules package; the vision
package's ``check`` passes one that reads photos too."""
Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True, slots=True)
class Command:
    """One command of the command line: its name, what it does and an example (both shown in its ``--help``), the
    arguments it adds to its parser, and the function that runs it on the parsed arguments (its exit status)."""

    name: str
    help: str
    example: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Handler


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


def add_players_option(parser: argparse.ArgumentParser) -> None:
    """``--players N``: 2 to the most any profile is played by, bounded by the chosen one in :func:`players_from`."""
    parser.add_argument(
        "--players", type=PLAYERS, default=4, metavar="N",
        help="players at the table, 2 to the profile's most (default 4; 5-6: --profile official-6p)",
    )  # fmt: skip


def players_from(args: argparse.Namespace) -> int:
    """``--players`` checked against ``--profile``'s ``max_players`` (a one-line :class:`CommandError` beyond)."""
    return players_under(args.profile, args.players)


MAX_SECONDS = 24 * 3600
"""The longest time a time option takes: a day (a move's time or limit beyond it is a typo, not a game)."""
SECONDS = NumberArg(minimum=0, maximum=MAX_SECONDS)
"""A duration in seconds: finite, 0 to a day."""


def time_limit_arg(text: str) -> float | None:
    """A time limit in words: seconds up to a day, or none/off/0 for no limit (None); nan, inf, negative, non-ASCII
    digits are argparse's one-line usage error. (A batch manifest's ``time_limit`` column is read with it too.)"""
    if text.strip().lower() in {"none", "off"}:
        return None
    value = SECONDS(text)
    return None if value == 0 else float(value)


@dataclass(frozen=True, slots=True)
class TimeLimit:
    """The value of ``--time-limit``: the move time agreed at the table, which replaces the profile's (seconds, or
    None for no limit). Not giving the option leaves the profile as it is: see :func:`rules_from`."""

    seconds: float | None

    @classmethod
    def parse(cls, text: str) -> TimeLimit:
        return cls(time_limit_arg(text))


def add_time_limit_option(parser: argparse.ArgumentParser) -> None:
    """``--time-limit SECONDS`` (or none): applied to the chosen profile by :func:`rules_from`."""
    parser.add_argument(
        "--time-limit", type=TimeLimit.parse, metavar="SECONDS",
        help="time limit agreed at the table, up to a day ('none' for no limit); default: the profile's",
    )  # fmt: skip


def rules_from(args: argparse.Namespace) -> Profile:
    """The rules a command plays by: ``--profile``, with its time limit replaced by ``--time-limit`` when given
    (``dataclasses.replace``: the one place a limit agreed at the table enters)."""
    profile = PROFILES[args.profile]
    agreed: TimeLimit | None = getattr(args, "time_limit", None)
    return profile if agreed is None else replace(profile, time_limit_s=agreed.seconds)


def emit(args: argparse.Namespace, data: Any, text: str) -> None:
    """Print ``data`` as JSON with ``--json``, else the human-readable ``text`` (non-JSON values as strings)."""
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str) if args.json else text)


# -- input --------------------------------------------------------------------------------------------


def read_json(path: str) -> Any:
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


# -- the parser ---------------------------------------------------------------------------------------------

_P = TypeVar("_P", bound=argparse.ArgumentParser)


def add_command(commands: argparse._SubParsersAction[_P], command: Command) -> _P:
    """A command's parser: its description and example in its --help, its arguments, its function."""
    sub = commands.add_parser(
        command.name,
        help=command.help,
        description=command.help,
        epilog=f"Example:\n  {command.example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.arguments(sub)
    sub.set_defaults(func=command.run)
    return sub


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """The subcommands of a parser built by :func:`build_parser`."""
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def build_parser(commands: Sequence[Command] | None = None) -> argparse.ArgumentParser:
    """The parser of ``commands`` (default: the rules commands, :data:`referee.commands.COMMANDS`), in order."""
    if commands is None:
        from referee.commands import COMMANDS

        commands = COMMANDS
    names = [command.name for command in commands]
    if len(set(names)) != len(names):
        raise ValueError(f"a command is listed twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    parser = _Parser(
        prog=PROG,
        description="A Rummikub referee: rules on moves, scores games, reads tables.",
        epilog=f"Example: {PROG} check before.json after.json --opened",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for command in commands:
        add_command(subparsers, command)
    return parser


# -- the error boundary ---------------------------------------------------------------------------------

INPUT_ERRORS: tuple[type[BaseException], ...] = (ValueError, OSError, RecursionError, MemoryError, KeyError, TypeError)
"""What bad input raises. Domain errors are ``ValueError`` subclasses quoting the input (json, Unicode and PIL's
unreadable-image errors are ``ValueError`` or ``OSError`` too); the rest are the safety net for a reader that
missed a case: nesting too deep, a file too big, a key or type missing from an incomplete file."""
SECRET_OPTIONS = ("--token", "--password")
"""Options whose value never goes into a crash file."""


def _exit_status(error: Exception, argv: Sequence[str] | None, input_error_names: Sequence[str] = ()) -> int:
    """One line on standard error for ``error`` (the traceback too with ``RUMMIKUB_REFEREE_DEBUG=1``), and the exit
    status: 2 for bad input, 1 for a bug, whose traceback is saved to a crash file the line names."""
    if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
        traceback.print_exception(error, file=sys.stderr)
    if isinstance(error, ValueError | OSError):  # a domain error: its message names the file and the problem
        print(f"{PROG}: error: {_describe_os_error(error) or _one_line(error)}", file=sys.stderr)
        return EXIT_USAGE
    saved = _save_traceback(error, argv)
    # a reader missed this case: say what is wrong, keep the traceback to fix it
    if _is_input_error(error, input_error_names):
        print(f"{PROG}: error: {_describe_input_error(error)} ({saved})", file=sys.stderr)
        return EXIT_USAGE
    print(f"{PROG}: internal error ({type(error).__name__}: {_one_line(error)}); {saved}", file=sys.stderr)
    return EXIT_INTERNAL


def _is_input_error(error: BaseException, input_error_names: Sequence[str] = ()) -> bool:
    """One of :data:`INPUT_ERRORS`, or of ``input_error_names``: errors of libraries the rules package never imports
    (``"yaml.YAMLError"``, ``"cv2.error"``) by dotted name, resolved only when the library is loaded (if it is not,
    it raised nothing)."""
    if isinstance(error, INPUT_ERRORS):
        return True
    for name in input_error_names:
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
    parser: argparse.ArgumentParser | Callable[[], argparse.ArgumentParser],
    argv: Sequence[str] | None = None,
    *,
    input_error_names: Sequence[str] = (),
) -> int:
    """Parse and dispatch inside the one error boundary every command shares (see :func:`_exit_status`); given a
    function that builds the parser, building it (importing every command's module) is inside it too.
    ``input_error_names``: other libraries' exceptions that mean bad input (see :func:`_is_input_error`)."""
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
        return _exit_status(error, argv, input_error_names)


def main(argv: Sequence[str] | None = None) -> int:
    """The rules-only command line (the full one, with the camera commands, is ``vision.cli``)."""
    return run(build_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
