"""bench live: a synthetic game played at its frame rate through a live session, scored against its truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.live_bench import format_live_benchmark, run_live_benchmark
from vision.pipeline import pipeline_reader
from vision.pipeline_bench import load_truth
from vision.synth.video import write_game


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("live-game")
    write_game(out, players=2, seed=5, violation_rate=0.3, profile="official", minutes=0.3, size=(640, 360),
               fps=10.0, progress=False)  # fmt: skip
    return out


def test_a_game_played_in_real_time_is_timed_on_the_wall_clock_and_scored(game: Path, tmp_path: Path) -> None:
    _, truth = load_truth(game)
    result = run_live_benchmark(game, tmp_path / "out", pipeline_reader(None), minutes=0.15)
    # Paced by the video's clock: it stops after 9 s of wall clock, never ahead of it. How much of the video a
    # busy machine keeps up with (frames decoded, seconds behind) is the benchmark's figure, not a test's.
    assert 0 < result["played_s"] <= 9.0 + 1.0
    assert 0 < result["frames_processed"] <= result["frames_decoded"] <= result["frames_expected"] + 2
    assert result["behind_s_max"] >= 0
    assert result["processing_lag_s_median"] > 0
    played = [t for t in truth if t["event"] == "move" and t["settle_s"] < result["played_s"] - 3.0]
    assert result["scores"]["true_moves"] == len(played)
    assert (tmp_path / "out" / "game-log.jsonl").is_file() and (tmp_path / "out" / "calibration.json").is_file()
    text = format_live_benchmark(result)
    assert "played in real time" in text and "behind the camera's clock" in text
