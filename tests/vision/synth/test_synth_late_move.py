"""A synthetic game with a move over time (issue 17): each of the three scripts (valid at the limit and untouched after,
touched after the limit, unfinished at the limit), filmed and analysed, gets each profile's ruling (RULES.md §6).

The film follows :func:`vision.synth.video.timeline` frame by frame as :func:`~vision.synth.video.write_game` does,
drawn as a scripted table scene (a few seconds of 480x360 at 12 frames a second) and read back by the stand-in pixel
reader, so ``analyze`` sees exactly the moments the script sets around the limit, in seconds of test time.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.profiles import get_profile
from referee.table import Table
from vision.game.gamelog import GameSetup
from vision.session.analyze import AnalyzeOptions, analyze_video
from vision.synth.game import LATE_MOVES, SimGame, simulate_game
from vision.synth.video import LATE_HANDS_BACK_S, LATE_HANDS_OFF_S, timeline

LIMIT_S = 6.0
"""A limit agreed at the table: the same for every profile, and short."""
FPS = 12.0
PROFILES = ("pl-championship", "wejherowo", "przasnysz", "official", "house")
# RULES.md §6: profile -> the ruling on each script, in LATE_MOVES' order
RULINGS = {
    # a manipulation not finished when the time runs out is restored; the seeds name nothing for a touch after it
    "pl-championship": ("ok", "review", "revert"),
    "wejherowo": ("ok", "review", "revert"),
    # rule 15: valid when the time runs out, the move stands; rule 20: touching the tiles after it voids the move
    "przasnysz": ("ok", "revert", "revert"),
    # the box rules restore any move over time
    "official": ("revert", "revert", "revert"),
    "house": ("ok", "review", "revert"),
}


def late_game(kind: str, profile: str) -> SimGame:
    """The first 2-player game (by seed) whose late move comes within its first two moves: a short film."""
    for seed in range(40):
        game = simulate_game(
            players=2, seed=seed, violation_rate=0.0, profile=profile, time_limit_s=LIMIT_S, late_move=kind
        )
        if game.ending == "late-move" and len(game.moves) <= 2:
            return game
    raise AssertionError("no short game with a late move among 40 seeds")


def film(path: Path, game: SimGame, scenes: Any) -> tuple[Path, dict[str, Any]]:
    """The game's timeline as a scripted table scene; the late move's truth line."""
    segments, truth, states = timeline(game, np.random.default_rng(0), fps=FPS)
    scene = scenes.TableScene()
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, scene.size)
    index = 0
    for frame in range(round(segments[-1].end_s * FPS)):
        t = frame / FPS
        while index < len(segments) - 1 and t >= segments[index].end_s:  # as write_game walks them
            index += 1
        segment = segments[index]
        scene.show(states[segment.state][0])
        scene.arm = None if segment.hands_seat is None else segment.hands_seat.edge.label
        writer.write(scene.frame())
    writer.release()
    return path, next(line for line in truth if "late" in line)


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory, scenes: Any) -> dict[str, tuple[Path, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("late")
    return {kind: film(folder / f"{kind}.avi", late_game(kind, "official"), scenes) for kind in LATE_MOVES}


def analysed_move(video: Path, out: Path, profile: str, scenes: Any) -> dict[str, Any]:
    rules = replace(get_profile(profile), time_limit_s=LIMIT_S)  # a limit agreed at the table, as --time-limit gives
    options = AnalyzeOptions(setup=GameSetup(rules, 2), calibration="frame", progress=False)
    analyze_video(video, out, options, scenes.PixelReader())
    lines = [json.loads(line) for line in (out / "game-log.jsonl").read_text().splitlines()]
    moves = [line for line in lines if line["event"] == "move"]
    return moves[-1]


def test_the_script_is_the_first_play_and_its_truth_is_ruled_on_the_table_at_the_limit() -> None:
    for kind in LATE_MOVES:
        game = late_game(kind, "przasnysz")
        late = game.moves[-1].late
        assert late is not None and late.kind == kind and game.moves[-1].kind == "play"
        assert all(move.kind == "draw" for move in game.moves[:-1])
        assert game.moves[-1].duration_s > LIMIT_S and game.header()["late_move"] == kind
        at_limit, after = late.table_at_limit, game.moves[-1].after
        assert at_limit.same_layout(after) is (kind != "unfinished-at-limit")
        assert late.touched_after_limit is (kind != "valid-at-limit")


@pytest.mark.parametrize("profile", PROFILES)
def test_the_simulation_rules_each_script_as_the_profile_says(profile: str) -> None:
    verdicts = tuple(late_game(kind, profile).moves[-1].verdict for kind in LATE_MOVES)
    assert verdicts == RULINGS[profile]


def test_the_hands_leave_before_the_limit_and_come_back_after_it(videos: dict[str, Any]) -> None:
    for kind, (_, truth) in videos.items():
        assert truth["start_s"] < truth["limit_at_s"] - LATE_HANDS_OFF_S
        if kind == "valid-at-limit":
            assert truth["settle_s"] == pytest.approx(truth["limit_at_s"] - LATE_HANDS_OFF_S, abs=1e-3)
        else:
            assert truth["settle_s"] > truth["limit_at_s"] + LATE_HANDS_BACK_S


@pytest.mark.parametrize("profile", PROFILES)
def test_analysing_each_film_gives_the_profiles_ruling(
    videos: dict[str, Any], tmp_path: Path, scenes: Any, profile: str
) -> None:
    verdicts = []
    for kind, (video, truth) in videos.items():
        move = analysed_move(video, tmp_path / kind, profile, scenes)
        late = truth["late"]
        assert move["elapsed_s"] > LIMIT_S
        assert Table.from_json(move["table_at_limit"]).same_layout(Table.from_json(late["table_at_limit"])), kind
        assert move["touched_after_limit"] is late["touched_after_limit"], kind
        verdicts.append(move["ruling"]["verdict"])
    assert tuple(verdicts) == RULINGS[profile]


def test_synth_game_films_a_late_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.cli import main

    seed = late_game("touched-after-limit", "przasnysz").seed
    out = tmp_path / "game"
    code = main(["synth-game", "--out", str(out), "--players", "2", "--seed", str(seed), "--violations", "0",
                 "--profile", "przasnysz", "--time-limit", "6", "--late-move", "touched-after-limit",
                 "--size", "320x180", "--fps", "6", "--json"])  # fmt: skip
    assert code == 0
    header, *lines = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    assert header["late_move"] == "touched-after-limit" and header["time_limit_s"] == 6.0
    assert header["ending"] == "late-move"
    late = lines[-1]
    assert late["late"]["touched_after_limit"] is True and late["limit_at_s"] > 6.0
    assert late["expected"]["verdict"] == "revert"  # przasnysz rule 20
    assert json.loads(capsys.readouterr().out)["moves"] == len(lines)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--time-limit", "none"], "--time-limit none is not one"),
        (["--fps", "10"], "10 frames a second is not"),  # analyze's samples would not keep to one grid
        (["--time-limit", "3"], "time limit is 6 to 3600 s, not 3"),  # shorter than a draw
    ],
)
def test_a_late_move_that_cannot_be_filmed_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    from vision.cli import main

    code = main(["synth-game", "--out", str(tmp_path / "game"), "--players", "2", "--violations", "0",
                 "--late-move", "valid-at-limit", "--size", "320x180", *options])  # fmt: skip
    error = capsys.readouterr().err.strip()
    assert code == 2 and message in error and "\n" not in error


def test_a_game_without_a_late_move_is_filmed_at_any_frame_rate(tmp_path: Path) -> None:
    from vision.cli import main

    code = main(["synth-game", "--out", str(tmp_path / "game"), "--players", "2", "--violations", "0",
                 "--minutes", "0.3", "--size", "320x180", "--fps", "10", "--json"])  # fmt: skip
    assert code == 0 and (tmp_path / "game" / "truth.jsonl").is_file()
