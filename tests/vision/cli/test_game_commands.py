"""``--players`` of the game commands (``live``, ``analyze``, ``synth-game``): 2 to 6, bounded by the profile's
``max_players``; a table the profile is not played at is refused in one line (exit 2) before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.cli import main

COMMANDS = {
    "analyze": ["analyze", "{video}", "--out", "{out}", "--quiet", "--calibration", "frame"],
    "live": ["live", "--source", "{video}", "--log", "{out}.jsonl", "--fast", "--calibration", "frame"],
    "synth-game": ["synth-game", "--out", "{out}", "--minutes", "0.05", "--size", "64x64"],
}


def command(name: str, tmp_path: Path, *more: str) -> list[str]:
    """The command, its files in ``tmp_path`` (the video is never there: a refusal comes before it is opened)."""
    places = {"video": str(tmp_path / "game.mp4"), "out": str(tmp_path / "out")}
    return [part.format(**places) for part in COMMANDS[name]] + list(more)


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        status = main(argv)
    except SystemExit as refused:  # argparse's own one-line error
        status = refused.code
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("name", COMMANDS)
@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--players", "6", "--profile", "official"], "--players 6: profile official is played by 2 to 4 players;"
         " for 6: --profile official-6p"),
        (["--players", "5", "--profile", "pl-championship"], "profile pl-championship is played by 2 to 4 players"),
        (["--players", "7", "--profile", "official-6p"], "argument --players: must be a whole number between 2 and 6"),
        (["--players", "1"], "argument --players: must be a whole number between 2 and 6, not 1"),
    ],
)  # fmt: skip
def test_a_table_the_profile_is_not_played_at_is_one_line(
    name: str, more: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = refusal(command(name, tmp_path, *more), capsys)
    assert message in err
    assert not list(tmp_path.iterdir())  # nothing started: no log, no analysis folder, no video


def test_five_and_six_players_are_filmed_with_the_5_6_player_edition(tmp_path: Path) -> None:
    for players in ("5", "6"):
        out = tmp_path / players
        argv = ["synth-game", "--out", str(out), "--players", players, "--profile", "official-6p", "--minutes", "0.3",
                "--size", "160x90", "--fps", "4", "--json"]  # fmt: skip
        assert main(argv) == 0
        header = (out / "truth.jsonl").read_text().splitlines()[0]
        assert f'"players": {players}' in header and '"profile": "official-6p"' in header


@pytest.mark.parametrize("name", ["analyze", "live"])
@pytest.mark.parametrize(
    ("more", "limit"),
    [
        ([], 60.0),  # not given: the profile's own (pl-championship)
        (["--time-limit", "90"], 90.0),
        (["--time-limit", "none"], None),  # no limit
        (["--profile", "official-6p", "--players", "6", "--time-limit", "45"], 45.0),
    ],
)
def test_the_game_options_give_the_profile_with_the_agreed_limit(
    name: str, more: list[str], limit: float | None, tmp_path: Path
) -> None:
    from dataclasses import replace

    from referee.profiles import PROFILES
    from vision.cli import build_parser
    from vision.cli.options import game_from

    args = build_parser().parse_args(command(name, tmp_path, *more, "--first-player", "2"))
    game = game_from(args)
    assert game.rules == replace(PROFILES[args.profile], time_limit_s=limit)
    assert (game.players, game.first_player) == (args.players, 1)
    assert game.to_json()["time_limit_s"] == limit  # the game log's start line: the limit in force, one value
    assert game.keeper().game.time_limit_s == limit


def test_a_first_player_beyond_the_table_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = refusal(command("analyze", tmp_path, "--players", "3", "--first-player", "4"), capsys)
    assert "--first-player is 1 to 3 at a 3-player table, not 4" in err
    assert not list(tmp_path.iterdir())
