"""``rummikub-referee draw``: who starts, from a photo of the draw (synthetic photos, the shipped models)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from vision.cli import main
from vision.cli.draw_commands import _live_takes_orientation
from vision.synth.draw import draw_photo


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("draw")
    paths = {}
    for name, tiles in {
        "decided": {0: "red-7", 1: "blue-13", 2: "black-2", 3: "orange-12"},
        "tie": {0: "red-11", 1: "blue-4", 2: "orange-11", 3: "black-9"},
    }.items():
        paths[name] = folder / f"{name}.png"
        cv2.imwrite(str(paths[name]), draw_photo(tiles, 4, seed=6).image)
    return paths


LIVE_ORIENTATION = _live_takes_orientation()
"""live --seat1 numbers players round the table the profile's way; without it, in seating order (draw follows)."""


def test_draw_names_the_first_player_and_the_order(photos: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", str(photos["decided"]), "--players", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # pl-championship plays clockwise from above: bottom, left, top, right; seating order: bottom, right, top, left.
    first = 4 if LIVE_ORIENTATION else 2
    assert result["starter"] == 1 and result["first_player"] == first
    assert [item["seat"] for item in result["order"]] == ([1, 0, 3, 2] if LIVE_ORIENTATION else [1, 2, 3, 0])
    assert main(["draw", str(photos["decided"]), "--players", "4"]) == 0
    text = capsys.readouterr().out
    assert f"player {first} (right) starts (highest number: 13)" in text
    assert f"{'--seat1 bottom ' if LIVE_ORIENTATION else ''}--first-player {first}" in text


def test_players_are_numbered_from_seat1_as_live_numbers_them(
    photos: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["draw", str(photos["decided"]), "--players", "4", "--seat1", "right", "--mirrored"])
    if not LIVE_ORIENTATION:  # live cannot be told: draw refuses rather than number players another way
        assert status == 2 and "no orientation" in capsys.readouterr().err
        return
    assert status == 0
    # Player 1 at the right edge: the right seat's blue 13 is player 1's; the live command says --seat1 right.
    text = capsys.readouterr().out
    assert "player 1 (right) starts" in text
    assert "--seat1 right --mirrored --first-player 1" in text
    # Mirrored, clockwise from above is counter-clockwise in the picture: right, top, left, bottom.
    assert "order of play: player 1 (right), player 2 (top), player 3 (left), player 4 (bottom)" in text


def test_a_tie_exits_1_and_names_the_play_off(photos: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", str(photos["tie"]), "--players", "4", "--profile", "official"]) == 1
    text = capsys.readouterr().out
    assert "draw again: player 1 (bottom) (tie), player 3 (top) (tie)" in text
    assert "--among 1,3" in text
    # The play-off photo: only players 1 and 3 count (here the same tiles: a tie again).
    assert main(["draw", str(photos["tie"]), "--players", "4", "--profile", "official", "--among", "1,3"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # Przasnysz draws seats, not a starting tile.
        (["--players", "4", "--profile", "przasnysz"], "seat A starts"),
        # A play-off of one, or of a player not at the table.
        (["--players", "4", "--among", "2"], "--among 2"),
        (["--players", "3", "--among", "1,4"], "--among 1,4"),
        (["--players", "4", "--among", "x"], "player numbers"),
        # More players than the profile's table.
        (["--players", "6"], "--players 6"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    photos: dict[str, Path], capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    try:
        status = main(["draw", str(photos["decided"]), *argv])
    except SystemExit as usage:  # argparse's usage errors (still one line, exit 2)
        status = usage.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_missing_photo_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", str(tmp_path / "none.jpg"), "--players", "2"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
