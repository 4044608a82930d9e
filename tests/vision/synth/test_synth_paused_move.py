"""A synthetic game whose plays pause (``synth-game --paused-move SECONDS``): the player's hands reach in, leave the
table for a while before any tile is laid, then come back and make the move. Filmed and analysed, each such move is
ruled once (the pause that was ruled twice, as a draw and then a second move, in issue 16's bench).

The film follows :func:`vision.synth.video.timeline` frame by frame as :func:`~vision.synth.video.write_game` does,
drawn as a scripted table scene (480x360 at 12 frames a second, sampled at 6) and read back by the stand-in pixel
reader, straight into the pipeline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.table import Table
from vision.game.moves import GameKeeper
from vision.game.pipeline import PipelineConfig, TablePipeline
from vision.synth.game import SimGame, simulate_game
from vision.synth.video import PAUSE_HANDS_S, timeline

FPS = 12.0
PAUSE_S = 1.5
"""Longer than the 1.1 s the hands were off the play area in the move that was ruled twice."""


def paused_game() -> SimGame:
    """The first short 2-player game (by seed) with a draw and then a play long enough to be paused."""
    for seed in range(40):
        game = simulate_game(players=2, seed=seed, violation_rate=0.0, profile="official", max_moves=4)
        _, truth, _ = timeline(game, np.random.default_rng(0), fps=FPS, paused_move_s=PAUSE_S)
        kinds = [move.kind for move in game.moves]
        if truth[-1]["end_s"] < 40 and "draw" in kinds and any("pause_s" in line for line in truth):
            return game
    raise AssertionError("no short game with a paused play among 40 seeds")


def frames(game: SimGame, scenes: Any) -> tuple[list[tuple[float, np.ndarray]], list[dict[str, Any]]]:
    """The game's timeline as a scripted table scene, at the pipeline's 6 samples a second (every other frame of a
    12 fps film: the segments are walked frame by frame as write_game walks them); its truth lines."""
    segments, truth, states = timeline(game, np.random.default_rng(0), fps=FPS, paused_move_s=PAUSE_S)
    scene = scenes.TableScene()
    shown: list[tuple[float, np.ndarray]] = []
    index = 0
    for frame in range(round(segments[-1].end_s * FPS)):
        t = frame / FPS
        while index < len(segments) - 1 and t >= segments[index].end_s:
            index += 1
        segment = segments[index]
        scene.show(states[segment.state][0])
        scene.arm = None if segment.hands_seat is None else segment.hands_seat.edge.label
        image = scene.frame()
        if frame % 2 == 0:
            shown.append((t, image))
    return shown, truth


@pytest.fixture(scope="module")
def film(scenes: Any) -> tuple[list[tuple[float, np.ndarray]], list[dict[str, Any]]]:
    return frames(paused_game(), scenes)


def analysed(film: tuple[list[tuple[float, np.ndarray]], list[dict[str, Any]]], scenes: Any, config: PipelineConfig):
    """The moves the pipeline rules on the film, to the end of it (a draw held then is ruled by ``finish``)."""
    shown, _ = film
    keeper = GameKeeper("official", 2)
    pipeline = TablePipeline(scenes.PixelReader(), keeper, scenes.TableScene().size, config=config)
    events = []
    for t, image in shown:
        events += pipeline.process(image, t, round(t * FPS))
    events += pipeline.finish()
    return [e.to_json() for e in events if not isinstance(e, dict) and e.to_json()["event"] == "move"]


def test_a_paused_play_keeps_its_times_and_takes_its_hands_off_in_the_middle() -> None:
    game = paused_game()
    plain_segments, plain, _ = timeline(game, np.random.default_rng(0), fps=FPS)
    segments, truth, states = timeline(game, np.random.default_rng(0), fps=FPS, paused_move_s=PAUSE_S)
    for without, line in zip(plain, truth, strict=True):  # the same moves at the same times: the same rulings
        assert {k: v for k, v in line.items() if k != "pause_s"} == without
    paused = [line for line in truth if "pause_s" in line]
    assert paused and all(line["kind"] == "play" for line in paused)
    assert all(("pause_s" in line) is (line["kind"] == "play") for line in truth)  # every play here fits one
    for line in paused:
        off, back = line["pause_s"]
        assert back - off == pytest.approx(PAUSE_S) and off - line["start_s"] == pytest.approx(PAUSE_HANDS_S)
        [gap] = [s for s in segments if s.start_s == pytest.approx(off)]
        assert gap.hands_seat is None and gap.end_s == pytest.approx(back)
        assert states[gap.state][0] == Table.from_json(line["before"])  # nothing laid yet
        assert any(s.hands_seat is not None and s.start_s == pytest.approx(back) for s in segments)
    assert len(segments) == len(plain_segments) + 2 * len(paused)


def test_each_paused_move_is_ruled_once(film: Any, scenes: Any) -> None:
    _, truth = film
    ruled = analysed(film, scenes, PipelineConfig())
    assert [(m["player"], m["kind"]) for m in ruled] == [(t["player"], t["kind"]) for t in truth]
    for move, line in zip(ruled, truth, strict=True):
        assert Table.from_json(move["after"]).same_layout(Table.from_json(line["after"]))
        assert move["ruling"]["verdict"] == line["expected"]["verdict"] == "ok"


def test_without_the_hold_a_paused_move_is_ruled_twice(film: Any, scenes: Any) -> None:
    # the reproduction: a draw at the pause, then the play as a second move by the same player
    _, truth = film
    ruled = analysed(film, scenes, PipelineConfig(pause_hold_s=0.0))
    expected = []
    for line in truth:
        expected += [(line["player"], "draw")] if "pause_s" in line else []
        expected.append((line["player"], line["kind"]))
    assert [(m["player"], m["kind"]) for m in ruled] == expected


def test_synth_game_films_paused_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.cli import main

    out = tmp_path / "game"
    code = main(["synth-game", "--out", str(out), "--players", "2", "--seed", "9", "--violations", "0",
                 "--minutes", "0.5", "--paused-move", "2", "--size", "320x180", "--fps", "6", "--json"])  # fmt: skip
    assert code == 0
    header, *lines = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    paused = [line for line in lines if "pause_s" in line]
    assert header["paused_move_s"] == 2.0 and header["paused_moves"] == len(paused) > 0
    assert json.loads(capsys.readouterr().out)["moves"] == len(lines)


@pytest.mark.parametrize(
    ("seconds", "message"),
    [
        ("0", "must be more than 0, not 0"),
        ("31", "at most 30 s, not 31"),  # longer than a play's hands are over the table
    ],
)
def test_a_pause_that_cannot_be_filmed_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seconds: str, message: str
) -> None:
    from vision.cli import main

    try:
        code = main(["synth-game", "--out", str(tmp_path / "game"), "--players", "2", "--paused-move", seconds,
                     "--minutes", "0.2", "--size", "320x180"])  # fmt: skip
    except SystemExit as exit:  # argparse's own refusal
        code = exit.code
    error = capsys.readouterr().err.strip()
    assert code == 2 and message in error and "\n" not in error
    assert not (tmp_path / "game").exists()
