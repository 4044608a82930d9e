"""``bench batch`` (vision/eval/batch_bench.py): the rows, ratios and targets it reports, on one tiny synthetic game
(0.2 min, 480x270, 12 fps) with the shipped models; Ray's row where Ray is installed. No timing is checked here:
the numbers are whatever this machine gives, and they must be consistent with each other."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from vision.eval.batch_bench import (
    RUNS,
    Run,
    format_batch_benchmark,
    run_batch_benchmark,
    scaling_model,
    targets,
    worker_timeline,
)


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
    assert one["vs_baseline"] == {
        "video_h_per_wall_h": 1.0, "video_h_per_core_h": 1.0, "video_h_per_busy_core_h": 1.0, "video_h_per_cpu_h": 1.0
    }  # fmt: skip
    assert one["idle_tail_s"] == 0 and one["video_h_per_busy_core_h"] == one["video_h_per_core_h"]  # nobody idled
    # two workers, one game: the second worker never had one and idled from start to end
    [(worker, used)] = [(pid, w) for pid, w in two["workers_timeline"].items() if w["games"]]
    unused = two["workers_timeline"]["unused 1"]
    assert used["games"] == ["bench_1_1"] and used["cpu_s"] == two["cpu_s_by_worker"][worker]
    assert unused["idle_tail_s"] == pytest.approx(used["finished_s"], abs=0.01) and two["idle_tail_s"] > 0
    assert two["video_h_per_busy_core_h"] == pytest.approx(
        two["video_s"] / (two["wall_s"] * 2 - two["idle_tail_s"]), rel=0.01
    )
    expected = round(two["video_h_per_core_h"] / one["video_h_per_core_h"], 2)
    assert two["vs_baseline"]["video_h_per_core_h"] == pytest.approx(expected, abs=0.011)
    assert result["targets"]["every_game_done_once"] and result["targets"]["same_moves_everywhere"]
    assert result["targets"]["ray_vs_pool_per_wall_h"] is None
    assert result["constants"]["model_load_s"] > 0 and result["constants"]["decode"]["frames"] > 0
    text = format_batch_benchmark(result)
    assert "pool x1" in text and "ray local x2  skipped: Ray is not installed" in text and "scaling model" in text
    assert "note: 1 games for up to 2 workers" in text  # one game cannot keep two workers busy
    assert "bench batch: 1 games (" in text and "started largest file first" in text and "idle tail" in text


def test_copies_of_one_game_are_games_of_equal_length(
    game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    result = run_batch_benchmark([game, tmp_path / "not-used"], tmp_path, runs=RUNS[:1], copies=2)
    assert result["equal_lengths"] and result["games"] == [str(game / "game.mp4")] * 2
    assert len(set(result["game_video_s"])) == 1 and result["rows"][0]["done"] == 2
    assert "bench batch: 2 copies of one game (" in format_batch_benchmark(result)


def test_the_idle_tail_is_the_time_a_worker_waited_for_the_last_game() -> None:
    """Worker 1 analyses a 100 s game, worker 2 two of 30 s: worker 2 idles from 62 s to 101 s."""

    def game(label: str, pid: int, start: float, end: float) -> dict[str, Any]:
        return {"label": label, "status": "done", "pid": pid, "started_at": 1000.0 + start,
                "finished_at": 1000.0 + end, "cpu_s": (end - start) * 0.9, "wall_s": end - start}  # fmt: skip

    summary = {"started_at": 1000.0, "games": [game("a", 1, 1, 101), game("b", 2, 1, 31), game("c", 2, 32, 62)]}
    timeline = worker_timeline(summary, 2)
    assert timeline["1"] == {"games": ["a"], "cpu_s": 90.0, "wall_s": 100.0, "finished_s": 101.0, "busy": 0.9,
                             "idle_tail_s": 0.0}  # fmt: skip
    assert timeline["2"]["games"] == ["b", "c"] and timeline["2"]["idle_tail_s"] == 39.0
    assert list(worker_timeline(summary, 3)) == ["1", "2", "unused 1"]
    assert worker_timeline(summary, 3)["unused 1"]["idle_tail_s"] == 101.0


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
