"""``bench batch`` (vision/eval/batch_bench.py): the rows, ratios and targets it reports, on one tiny synthetic game
(0.2 min, 480x270, 12 fps) with the shipped models; Ray's row where Ray is installed. No timing is checked here:
the numbers are whatever this machine gives, and they must be consistent with each other."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from vision.eval.batch_bench import RUNS, Run, format_batch_benchmark, run_batch_benchmark, scaling_model, targets


def test_one_and_two_workers_analyse_the_same_games_the_same_way(
    game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray's row skipped with its reason, wherever Ray is installed
    result = run_batch_benchmark([game], tmp_path)
    assert [r["name"] for r in result["rows"]] == ["pool x1", "pool x2"]
    assert "pip install 'rummikub-referee[cluster]'" in result["skipped"]["ray local x2"]
    one, two = result["rows"]
    for row in (one, two):
        assert row["done"] == row["games"] == 1 and row["failed"] == 0
        assert row["video_s"] > 0 and row["wall_s"] > 0 and row["threads"] == 1
        # the row's video_s is rounded to 0.1 s, the ratios are not: 1 % apart at most on these 11 s games
        assert row["video_h_per_wall_h"] == pytest.approx(row["video_s"] / row["wall_s"], rel=0.01)
        assert row["video_h_per_core_h"] == pytest.approx(row["video_s"] / (row["wall_s"] * row["workers"]), rel=0.01)
        assert len(row["cpu_s_by_worker"]) == 1  # one game: one worker analysed it
        assert row["same_moves_as_baseline"]
        assert (tmp_path / row["name"].replace(" ", "-") / "archive.html").is_file()
    assert one["vs_baseline"] == {"video_h_per_wall_h": 1.0, "video_h_per_core_h": 1.0, "video_h_per_cpu_h": 1.0}
    expected = round(two["video_h_per_core_h"] / one["video_h_per_core_h"], 2)
    assert two["vs_baseline"]["video_h_per_core_h"] == pytest.approx(expected, abs=0.011)
    assert result["targets"]["every_game_done_once"] and result["targets"]["same_moves_everywhere"]
    assert result["targets"]["ray_vs_pool_per_wall_h"] is None
    assert result["constants"]["model_load_s"] > 0 and result["constants"]["decode"]["frames"] > 0
    text = format_batch_benchmark(result)
    assert "pool x1" in text and "ray local x2  skipped: Ray is not installed" in text and "scaling model" in text
    assert "note: 1 games for up to 2 workers" in text  # one game cannot keep two workers busy


def test_a_local_ray_row_where_ray_is_installed(game: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")
    runs = (RUNS[0], Run("ray local x2", "ray", 2))
    result = run_batch_benchmark([game], tmp_path, runs=runs)
    ray_row = result["rows"][1]
    assert ray_row["done"] == 1 and ray_row["ray_start_s"] > 0 and ray_row["same_moves_as_baseline"]


def a_row(name: str, workers: int, video_s: float, wall_s: float, cpu_s: float, archive_s: float = 0.1) -> dict:
    return {
        "name": name, "workers": workers, "games": 2, "done": 2, "failed": 0, "video_s": video_s, "wall_s": wall_s,
        "video_h_per_wall_h": video_s / wall_s, "video_h_per_core_h": video_s / (wall_s * workers),
        "video_h_per_cpu_h": video_s / cpu_s, "same_moves_as_baseline": True, "archive_s": archive_s,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("two_wall_s", "ray_wall_s", "per_core", "ray"),
    [
        (50.0, 52.0, True, True),  # 100 s alone, 50 s on two: per core-hour unchanged; Ray 4 % slower
        (60.0, 58.0, False, True),  # two workers 0.83 of one per core-hour
        (52.0, 60.0, True, False),  # Ray 0.87 of the pool
    ],
)
def test_targets_are_read_from_the_rows(two_wall_s: float, ray_wall_s: float, per_core: bool, ray: bool) -> None:
    rows = [
        a_row("pool x1", 1, 100.0, 100.0, 95.0),
        a_row("pool x2", 2, 100.0, two_wall_s, 98.0),
        a_row("ray local x2", 2, 100.0, ray_wall_s, 99.0),
    ]
    found = targets(rows)
    assert found["per_core_h_within_10pct"] is per_core and found["ray_within_10pct"] is ray
    assert found["per_cpu_h_2_vs_1_workers"] == round(round(100.0 / 98.0, 2) / round(100.0 / 95.0, 2), 2)
    assert found["per_cpu_h_within_10pct"] and found["ray_within_10pct_per_cpu_h"]
    assert found["per_core_h_2_vs_1_workers"] == round(round(100.0 / (two_wall_s * 2), 2) / 1.0, 2)


def test_the_scaling_model_takes_the_best_core_and_predicts_linearly() -> None:
    rows = [a_row("pool x1", 1, 100.0, 100.0, 100.0, 0.2), a_row("pool x2", 2, 100.0, 40.0, 80.0, 0.3)]
    result: dict[str, Any] = {
        "rows": rows,
        "constants": {"model_load_s": 1.5, "decode": {"video_h_per_cpu_h": 10.0}},
    }
    model = scaling_model(result)
    assert model["video_h_per_core_h"] == 1.0  # the slower per CPU-hour: 100 s of video for 100 CPU s (not 80)
    assert model["predicted_video_h_per_wall_h"] == {"1 x 2 cores": 2.0, "4 x 2 cores": 8.0, "16 x 2 cores": 32.0,
                                                     "64 x 2 cores": 128.0}  # fmt: skip
    assert model["decode_share_of_analysis_cpu"] == 0.125  # 1.25 video h per CPU-h analysed at best, 10 decoded
    assert model["model_load_s_per_worker"] == 1.5 and model["archive_s"] == 0.3
