"""A synthetic game whose plays pause after some tiles are laid (``synth-game --paused-midway SECONDS``, issue 16):
the player lays half the tiles from the rack, takes the hands off the table for a while, then comes back and
finishes the move. The truth stays one move per play; the half-laid table is often invalid (a set of two, an
opening below the threshold), which the referee must not rule REVERT before the turn is over.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from referee.table import Table
from vision.synth.game import SimGame, simulate_game
from vision.synth.video import PAUSE_HANDS_S, half_laid, timeline

FPS = 12.0
PAUSE_S = 1.5


def midway_game(seed: int = 1) -> SimGame:
    return simulate_game(players=3, seed=seed, violation_rate=0.2, profile="official", max_duration_s=180)


def test_a_half_laid_table_is_the_move_with_the_later_half_of_its_rack_tiles_not_yet_laid() -> None:
    game = midway_game()
    halves = [(move, half_laid(move)) for move in game.moves]
    assert any(half is not None for _, half in halves)
    for move, half in halves:
        if half is None:
            brought = Counter(move.after.tiles()) - Counter(move.before.tiles())
            assert move.kind == "draw" or sum(brought.values()) <= 1  # nothing to split
            continue
        before, middle, after = (Counter(t.tiles()) for t in (move.before, half, move.after))
        assert not before - middle and not middle - after  # tiles only added, none taken back
        assert not half.same_layout(move.before) and not half.same_layout(move.after)
        brought = sum((after - before).values())
        assert sum((middle - before).values()) == (brought + 1) // 2


def test_a_play_paused_midway_keeps_its_times_and_shows_the_half_table_without_hands() -> None:
    game = midway_game()
    plain_segments, plain, _ = timeline(game, np.random.default_rng(0), fps=FPS)
    segments, truth, states = timeline(game, np.random.default_rng(0), fps=FPS, paused_midway_s=PAUSE_S)
    for without, line in zip(plain, truth, strict=True):  # the same moves at the same times: the same rulings
        assert {k: v for k, v in line.items() if k not in ("pause_s", "half_laid")} == without
    paused = [line for line in truth if "pause_s" in line]
    assert paused and all("half_laid" in line and line["kind"] == "play" for line in paused)
    for line in paused:
        off, back = line["pause_s"]
        assert back - off == pytest.approx(PAUSE_S, abs=2e-3)
        assert off - line["start_s"] == pytest.approx(PAUSE_HANDS_S, abs=1e-3)
        [gap] = [s for s in segments if s.start_s == pytest.approx(off, abs=1e-3)]
        assert gap.hands_seat is None and gap.end_s == pytest.approx(back, abs=1e-3)
        assert states[gap.state][0] == Table.from_json(line["half_laid"])
        hands_back = [s for s in segments if s.hands_seat is not None and back <= s.start_s < line["settle_s"]]
        assert states[hands_back[-1].state][0] == Table.from_json(line["after"])  # the move finished
    assert len(segments) == len(plain_segments) + 3 * len(paused)


def test_a_pause_comes_before_the_first_tile_or_midway_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        timeline(midway_game(), np.random.default_rng(0), paused_move_s=1.0, paused_midway_s=1.0)


def test_synth_game_films_plays_paused_midway(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.cli import main

    out = tmp_path / "game"
    code = main(["synth-game", "--out", str(out), "--players", "2", "--seed", "9", "--violations", "0",
                 "--minutes", "0.5", "--paused-midway", "2", "--size", "320x180", "--fps", "6", "--json"])  # fmt: skip
    assert code == 0
    header, *lines = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    paused = [line for line in lines if "half_laid" in line]
    assert header["paused_midway_s"] == 2.0 and header["paused_moves"] == len(paused) > 0
    assert json.loads(capsys.readouterr().out)["moves"] == len(lines)


def test_synth_game_takes_one_kind_of_pause(capsys: pytest.CaptureFixture[str]) -> None:
    from vision.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["synth-game", "--out", "x", "--paused-move", "2", "--paused-midway", "2"])
    assert exit_.value.code == 2 and "not allowed with" in capsys.readouterr().err


def midway_film(scenes: Any) -> tuple[list[tuple[float, np.ndarray]], list[dict[str, Any]]]:
    """The first short clean 2-player game (by seed) with a play paused midway on a table ruled REVERT if the move
    ended there, filmed as a scripted table scene at the pipeline's 6 samples a second (as test_synth_paused_move)."""
    for seed in range(40):
        game = simulate_game(players=2, seed=seed, violation_rate=0.0, profile="official", max_moves=4)
        segments, truth, states = timeline(game, np.random.default_rng(0), fps=FPS, paused_midway_s=PAUSE_S)
        halves = [line for line in truth if "half_laid" in line]
        if truth[-1]["end_s"] < 60 and any(_ruled_alone(line) == "revert" for line in halves):
            break
    else:
        raise AssertionError("no short game with a play paused on an invalid table among 40 seeds")
    scene = scenes.TableScene()
    shown, index = [], 0
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


def _ruled_alone(line: dict[str, Any]) -> str:
    from referee.moves import check_move
    from referee.profiles import PROFILES

    before, half = Table.from_json(line["before"]), Table.from_json(line["half_laid"])
    return check_move(before, half, opened=line["opened"], profile=PROFILES["official"]).verdict.value


def analysed(film: tuple[list[tuple[float, np.ndarray]], list[dict[str, Any]]], scenes: Any, config: Any) -> list:
    from vision.game.moves import GameKeeper
    from vision.game.pipeline import TablePipeline

    shown, _ = film
    pipeline = TablePipeline(scenes.PixelReader(), GameKeeper("official", 2), scenes.TableScene().size, config=config)
    events = []
    for t, image in shown:
        events += pipeline.process(image, t, round(t * FPS))
    events += pipeline.finish()
    return [e.to_json() for e in events if not isinstance(e, dict) and e.to_json()["event"] == "move"]


@pytest.fixture(scope="module")
def film(scenes: Any) -> tuple[list[tuple[float, np.ndarray]], list[dict[str, Any]]]:
    return midway_film(scenes)


def test_each_play_paused_midway_is_ruled_once_and_ok(film: Any, scenes: Any) -> None:
    from vision.game.pipeline import PipelineConfig

    _, truth = film
    ruled = analysed(film, scenes, PipelineConfig())
    assert [(m["player"], m["kind"], m["ruling"]["verdict"]) for m in ruled] == [
        (t["player"], t["kind"], "ok") for t in truth
    ]


def test_without_the_hold_a_half_laid_table_is_a_false_revert(film: Any, scenes: Any) -> None:
    from vision.game.pipeline import PipelineConfig

    ruled = analysed(film, scenes, PipelineConfig(hold_half_laid=False))
    assert "revert" in [m["ruling"]["verdict"] for m in ruled]  # the truth has none
