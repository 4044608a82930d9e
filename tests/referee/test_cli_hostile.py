"""The rules command line against hostile input: every input error is one line on stderr and exit status 2, a bug
is one line naming its crash file and exit status 1, and nothing ever prints a traceback.

The sweep covers every command of the rules-only parser (listed from the parser, so a new command fails
:func:`test_every_command_is_swept` until it has cases); the full CLI's sweep is
``tests/vision/cli/test_cli_hostile.py``.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import referee.commands
from referee import cli
from referee.tiles import ALL_LABELS
from tests.cli_probes import ANY_INTEGER, BAD_NUMBERS, minimal_arguments, numeric_options


def assert_one_line(code: int, err: str, statuses: set[int] = frozenset({2})) -> None:
    """The contract of every failure: the documented status, exactly one line on stderr, no traceback."""
    assert code in statuses, f"exit status {code}, stderr: {err!r}"
    assert err.count("\n") == 1 and err.endswith("\n"), f"not one line: {err!r}"
    assert "Traceback" not in err and err.startswith(cli.PROG)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The command's exit status, standard output and standard error (usage errors exit from argparse)."""
    try:
        code = cli.main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def crashing(monkeypatch: pytest.MonkeyPatch, name: str, run: cli.Handler) -> None:
    """The rules command ``name`` runs ``run`` instead (the boundary is tested with commands that fail on purpose)."""
    commands = tuple(replace(c, run=run) if c.name == name else c for c in referee.commands.COMMANDS)
    assert commands != referee.commands.COMMANDS
    monkeypatch.setattr(referee.commands, "COMMANDS", commands)


@pytest.fixture(autouse=True)
def crash_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Crash files go to this test's folder, not the machine's temporary folder."""
    folder = tmp_path / "crashes"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.delenv(cli.DEBUG_ENV, raising=False)
    yield folder


# -- the boundary itself ----------------------------------------------------------------------------------


def test_a_bug_is_one_line_naming_its_crash_file_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], crash_dir: Path
) -> None:
    def broken(args: argparse.Namespace) -> int:
        return 1 // 0

    crashing(monkeypatch, "profiles", broken)
    code, out, err = run(["profiles"], capsys)
    assert_one_line(code, err, {cli.EXIT_INTERNAL})
    assert "internal error (ZeroDivisionError: integer division or modulo by zero)" in err and out == ""
    (crash,) = crash_dir.glob(f"{cli.PROG}-crash-*.txt")
    assert str(crash) in err
    saved = crash.read_text()
    assert saved.startswith(f"{cli.PROG} profiles\n") and "Traceback" in saved and "1 // 0" in saved


def test_the_debug_variable_shows_the_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    crashing(monkeypatch, "profiles", lambda args: 1 // 0)
    monkeypatch.setenv(cli.DEBUG_ENV, "1")
    code, _, err = run(["profiles"], capsys)
    assert code == 1 and "Traceback" in err and "ZeroDivisionError" in err


def test_secrets_never_reach_a_crash_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], crash_dir: Path
) -> None:
    crashing(monkeypatch, "score", lambda args: 1 // 0)
    run(["score", "rtsp://referee:hunter2@cam/1", "--profile", "official"], capsys)
    (crash,) = crash_dir.glob("*.txt")
    assert "hunter2" not in crash.read_text() and "rtsp://***@cam/1" in crash.read_text()
    assert cli._redacted(["live", "--token", "s3cret", "--token=s3cret"]) == ["live", "--token", "***", "--token=***"]


def test_an_unsaveable_crash_file_still_gives_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    crashing(monkeypatch, "profiles", lambda args: 1 // 0)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-folder"))
    code, _, err = run(["profiles"], capsys)
    assert_one_line(code, err, {1})
    assert f"run with {cli.DEBUG_ENV}=1" in err


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
        (KeyError("after"), "incomplete input: 'after' is missing"),
        (TypeError("unhashable type: 'list'"), "malformed input: unhashable type"),
        (MemoryError(), "not enough memory"),
    ],
)
def test_input_errors_no_reader_caught_are_one_line_and_exit_2(
    error: Exception, says: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def raising(args: argparse.Namespace) -> int:
        raise error

    crashing(monkeypatch, "profiles", raising)
    code, _, err = run(["profiles"], capsys)
    assert_one_line(code, err)
    assert says in err and "traceback in" in err


def test_a_librarys_input_error_named_by_the_vision_package_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class FakeLibraryError(Exception):
        pass

    module = type(sys)("fakelib")
    module.FakeLibraryError = FakeLibraryError  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fakelib", module)

    def raising(args: argparse.Namespace) -> int:
        raise FakeLibraryError("bad\nmulti-line\n  message")

    crashing(monkeypatch, "profiles", raising)
    code = cli.run(cli.build_parser, ["profiles"], input_error_names=("fakelib.FakeLibraryError", "notloaded.Error"))
    err = capsys.readouterr().err
    assert_one_line(code, err)
    assert "bad multi-line message" in err
    code, _, err = run(["profiles"], capsys)  # the rules package alone names no other library's errors: a bug
    assert_one_line(code, err, {cli.EXIT_INTERNAL})


def test_pythons_own_file_errors_name_the_file_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def raising(args: argparse.Namespace) -> int:
        raise NotADirectoryError(20, "Not a directory", "table.json/out")

    crashing(monkeypatch, "profiles", raising)
    code, _, err = run(["profiles"], capsys)
    assert_one_line(code, err)
    assert err == f"{cli.PROG}: error: table.json/out: Not a directory\n"


def test_ctrl_c_is_status_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    crashing(monkeypatch, "profiles", interrupted)
    code, out, err = run(["profiles"], capsys)
    assert code == 130 and out == "" and err == ""


# -- the sweep --------------------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """Hostile files by name; ``{name}`` in a case's arguments is replaced by the path."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    contents: dict[str, str | bytes] = {
        "table": json.dumps({"sets": [["red-5", "red-6", "red-7"]]}),
        "empty": "",
        "garbage": bytes(range(256)) * 4,
        "malformed": '{"sets": [["red-5",',
        "deep": "[" * 100_000 + "]" * 100_000,
        "deep_object": '{"sets": ' * 50_000 + "[]" + "}" * 50_000,
        "unknown_label": json.dumps({"sets": [["purple-5", "red-6", "red-7"]]}),
        "wrong_types": json.dumps({"sets": [[{"label": "red-5", "confidence": "high"}]]}),
        "not_a_table": "[1, 2, 3]",
        "game": json.dumps(
            {"profile": "official", "players": [{"name": "a", "rack": [], "opened": True}, {"name": "b", "rack": []}]}
        ),
        "no_games": "[]",
        "game_bad_profile": json.dumps({"profile": [], "players": [{"name": "a", "rack": []}, {"name": "b"}]}),
        "game_players_wrong": json.dumps({"profile": "official", "players": 5}),
    }
    paths = {"missing": str(folder / "no-such-file.json"), "dir": str(folder)}
    for name, content in contents.items():
        path = folder / f"{name}.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        paths[name] = str(path)
    return paths


FILE_INPUTS = ("missing", "dir", "empty", "garbage", "malformed", "deep", "deep_object", "not_a_table")
CASES: list = [
    # validate: tile labels straight from the command line
    *[
        pytest.param(["validate", *tiles], id=f"validate-{tiles[0]}")
        for tiles in (
            ["purple-5", "red-6", "red-7"],  # unknown colour
            ["red-14", "red-12", "red-13"],  # no 14
            ["", "red-6", "red-7"],  # empty label
            ["red-5\x00", "red-6", "red-7"],  # a NUL byte
            ["red-" + "9" * 5000, "red-6", "red-7"],  # a huge number
        )
    ],
    pytest.param(["validate", "red-\u0663", "red-4", "red-5"], id="validate-arabic-indic-digit"),
    pytest.param(["validate", "--profile", "nope", "red-5"], id="validate-unknown-profile"),
    # check: table files, standard input, options
    *[pytest.param(["check", f"{{{name}}}", "{table}", "--opened"], id=f"check-before-{name}") for name in FILE_INPUTS],
    *[pytest.param(["check", "{table}", f"{{{name}}}", "--opened"], id=f"check-after-{name}") for name in FILE_INPUTS],
    pytest.param(["check", "{table}", "{unknown_label}", "--opened"], id="check-unknown-label"),
    pytest.param(["check", "{table}", "{wrong_types}", "--opened"], id="check-wrong-types"),
    pytest.param(["check", "{table}", "{table}"], id="check-no-opened-flag"),
    pytest.param(["check", "{table}", "{table}", "--opened", "--profile", "nope"], id="check-unknown-profile"),
    pytest.param(["check", "{table}", "photo.jpg", "--opened"], id="check-photo-without-vision"),
    # score: game files
    *[pytest.param(["score", f"{{{name}}}"], id=f"score-{name}") for name in FILE_INPUTS],
    pytest.param(["score", "{no_games}"], id="score-no-games"),
    pytest.param(["score", "{game_bad_profile}"], id="score-profile-is-a-list"),
    pytest.param(["score", "{game_players_wrong}"], id="score-players-not-a-list"),
    pytest.param(["score", "{game}", "--profile", "nope"], id="score-unknown-profile"),
    # tournament: its file
    *[pytest.param(["tournament", f"{{{name}}}"], id=f"tournament-{name}") for name in FILE_INPUTS],
    pytest.param(["tournament", "{game}"], id="tournament-a-game-file"),
    # profiles, bench, demo: options
    pytest.param(["profiles", "--bogus"], id="profiles-unknown-option"),
    pytest.param(["bench", "nope"], id="bench-unknown-suite"),
    pytest.param(["demo", "extra"], id="demo-extra-argument"),
    pytest.param(["nope"], id="unknown-command"),
    pytest.param([], id="no-command"),
]


@pytest.mark.parametrize("argv", CASES)
def test_hostile_input_is_one_line_and_exit_2(
    argv: list[str], files: dict[str, str], crash_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run([arg.format(**files) if "{" in arg else arg for arg in argv], capsys)
    assert_one_line(code, err)
    assert not list(crash_dir.iterdir()), f"only the boundary's safety net caught it: the reader should say ({err})"


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe\x00garbage",  # not UTF-8
        b"[" * 100_000,  # nested too deeply (and unterminated)
        b"",  # nothing at all
    ],
)
def test_hostile_standard_input_is_one_line(
    data: bytes, files: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, _, err = run(["check", "-", files["table"], "--opened"], capsys)
    assert_one_line(code, err)
    assert "standard input" in err


def test_every_command_is_swept() -> None:
    swept = {param.values[0][0] for param in CASES if param.values[0]}
    assert set(cli.subcommands(cli.build_parser()).choices) <= swept


# -- numeric options, listed from the parser ------------------------------------------------------------


def numeric_cases(parser: argparse.ArgumentParser) -> list:
    cases = []
    for command, option, _ in numeric_options(parser):
        for bad in BAD_NUMBERS:
            if option in ANY_INTEGER and bad in ("-1",):
                continue
            cases.append(pytest.param(command, option, bad, id=f"{command}{option}={bad}"))
    return cases


def assert_bad_number_refused(parser: argparse.ArgumentParser, command: str, option: str, bad: str, err: str) -> None:
    assert_one_line(2, err)
    assert f"argument {option}" in err, err


@pytest.mark.parametrize(("command", "option", "bad"), numeric_cases(cli.build_parser()))
def test_bad_numbers_are_usage_errors(command: str, option: str, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Parsing alone, so a number wrongly accepted runs nothing: it only fails the test."""
    parser = cli.build_parser()
    sub = cli.subcommands(parser).choices[command]
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([command, *minimal_arguments(sub), f"{option}={bad}"])
    assert exit_.value.code == 2
    assert_bad_number_refused(parser, command, option, bad, capsys.readouterr().err)


def test_the_numeric_sweep_finds_the_options() -> None:
    found = {(command, option) for command, option, _ in numeric_options(cli.build_parser())}
    assert {("bench", "--repeats"), ("bench", "--inputs"), ("check", "--elapsed")} <= found


# -- fuzzed files through the boundary ---------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=16,
)
LABELS = st.sampled_from(ALL_LABELS) | st.text(max_size=8)
TILES = LABELS | st.fixed_dictionaries(
    {"label": LABELS | JSON_VALUES}, optional={"confidence": st.floats() | JSON_VALUES, "box": JSON_VALUES}
)
TABLES = st.fixed_dictionaries(
    {}, optional={"sets": st.lists(st.lists(TILES, max_size=5), max_size=4) | JSON_VALUES, "loose": st.lists(TILES)}
)
GAMES = st.fixed_dictionaries(
    {},
    optional={
        "profile": st.sampled_from(["official", "pl-championship", "nope"]) | JSON_VALUES,
        "ending": st.sampled_from(["out", "pool-exhausted"]) | JSON_VALUES,
        "players": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.text(max_size=6) | JSON_VALUES,
                    "rack": st.lists(LABELS, max_size=6),
                    "opened": st.booleans() | JSON_VALUES,
                },
            ),
            max_size=7,
        )
        | JSON_VALUES,
    },
)
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def fuzz_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A fuzzed input either works (0) or is refused in one line (2); a bug (1) or a traceback fails."""
    code, _, err = run(argv, capsys)
    if code == 0:
        assert "Traceback" not in err
    else:
        assert_one_line(code, err)


@FUZZ
@given(before=TABLES | JSON_VALUES, after=TABLES | JSON_VALUES)
def test_fuzzed_tables_are_ruled_on_or_refused_in_one_line(
    before: object, after: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    fuzz_run(["check", str(tmp_path / "before.json"), str(tmp_path / "after.json"), "--opened", "--json"], capsys)


@FUZZ
@given(game=GAMES | st.lists(GAMES, max_size=3) | JSON_VALUES)
def test_fuzzed_games_are_scored_or_refused_in_one_line(
    game: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "game.json").write_text(json.dumps(game))
    fuzz_run(["score", str(tmp_path / "game.json"), "--json"], capsys)
