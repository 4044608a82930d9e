"""score_game / summarise: detected moves against a synthetic game's truth, on hand-made event lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vision.eval.pipeline_bench import (
    MATCH_WINDOW_S,
    _summary_of,
    format_pipeline_benchmark,
    score_game,
    summarise,
)

EMPTY = {"sets": [], "loose": []}
OPENED = {"sets": [["red-10", "red-11", "red-12"]], "loose": []}
GROUP = {"sets": [["red-10", "red-11", "red-12"], ["black-7", "blue-7", "red-7"]], "loose": []}


def truth(index: int, settle_s: float, *, verdict: str = "ok", codes: tuple[str, ...] = (), player: int = 0,
          before: dict = EMPTY, after: dict = OPENED) -> dict[str, Any]:  # fmt: skip
    return {
        "event": "move",
        "index": index,
        "player": player,
        "settle_s": settle_s,
        "before": before,
        "after": after,
        "injected": list(codes),
        "expected": {"verdict": verdict, "violations": [{"code": c} for c in codes]},
    }


def detected(number: int, time_s: float, *, verdict: str = "ok", codes: tuple[str, ...] = (), player: int = 0,
             before: dict = EMPTY, after: dict = OPENED) -> dict[str, Any]:  # fmt: skip
    return {
        "event": "move",
        "number": number,
        "time_s": time_s,
        "player": player,
        "before": before,
        "after": after,
        "ruling": {"verdict": verdict, "violations": [{"code": c} for c in codes]},
    }


@pytest.mark.parametrize(
    ("delay", "found"),
    [
        (-0.6, False),  # ruled before the table settled: another move
        (-0.5, True),  # the truth's settle time is approximate: a little early is the same move
        (0.7, True),
        (MATCH_WINDOW_S, True),  # the last moment that counts
        (MATCH_WINDOW_S + 0.1, False),  # too late to count as finding it
    ],
)
def test_a_move_is_found_only_inside_its_window(delay: float, found: bool) -> None:
    scores = score_game([truth(0, 10.0)], [detected(1, 10.0 + delay)])
    [row] = scores["rows"]
    assert row["found"] is found and scores["detected"] == 1
    assert len(scores["phantoms"]) == (0 if found else 1)
    if found:
        assert row["latency_s"] == pytest.approx(delay) and row["tables_right"] and row["player_right"]


def test_each_detected_move_matches_one_true_move_at_most() -> None:
    scores = score_game([truth(0, 10.0), truth(1, 11.0, player=1)], [detected(1, 10.5)])
    assert [r["found"] for r in scores["rows"]] == [True, False] and scores["phantoms"] == []


def test_a_move_ruled_twice_gives_a_phantom() -> None:
    scores = score_game([truth(0, 10.0)], [detected(1, 10.5), detected(2, 11.0)])
    assert [r["found"] for r in scores["rows"]] == [True]
    assert scores["phantoms"] == [{"number": 2, "time_s": 11.0, "verdict": "ok"}]


def test_a_move_amended_by_the_same_hands_is_one_move_as_last_ruled() -> None:
    # the first part of a turn ruled as it settled at 8 s, the whole turn ruled again at 20.5 s under its number
    part = detected(1, 8.0, after={"sets": [["red-10", "red-11"]], "loose": []}, verdict="review")
    whole = {**detected(1, 20.5, after=GROUP), "amends": 1}
    scores = score_game([truth(0, 20.0, after=GROUP), truth(1, 30.0, player=1)], [part, whole, detected(2, 30.5)])
    assert [(r["found"], r.get("tables_right"), r.get("verdict")) for r in scores["rows"]] == [
        (True, True, "ok"), (True, True, "ok"),
    ]  # fmt: skip
    assert (scores["phantoms"], scores["detected"], scores["amended"]) == ([], 2, 1)
    summary = summarise([scores])
    assert (summary["phantom_moves"], summary["amended_moves"], summary["move_precision"]) == (0, 1, 1.0)


def test_the_tables_are_compared_by_layout() -> None:
    shuffled_group = {"sets": [["red-10", "red-11", "red-12"], ["red-7", "black-7", "blue-7"]], "loose": []}
    reversed_run = {"sets": [["red-12", "red-11", "red-10"]], "loose": []}
    truths = [truth(0, 10.0, before=OPENED, after=GROUP), truth(1, 20.0)]
    events = [detected(1, 10.5, before=OPENED, after=shuffled_group), detected(2, 20.5, after=reversed_run)]
    scores = score_game(truths, events)
    first, second = scores["rows"]
    assert first["tables_right"]  # a group's order does not count
    assert (second["before_right"], second["after_right"], second["tables_right"]) == (True, False, False)


def test_players_and_other_events_are_compared_too() -> None:
    events = [{"event": "table", "time_s": 1.0}, detected(1, 10.5, player=1), {"event": "restore", "time_s": 12.0}]
    restore_truth = {"event": "restore", "settle_s": 12.0}
    scores = score_game([truth(0, 10.0), restore_truth], events)
    assert len(scores["rows"]) == 1 and scores["detected"] == 1  # only moves are scored
    assert scores["rows"][0]["player_right"] is False


def test_the_summary_counts_false_reverts_phantoms_and_each_injected_code() -> None:
    truths = [
        truth(0, 10.0),  # ok, ruled revert: a false revert
        truth(1, 20.0, verdict="revert", codes=("invalid-set",)),  # caught, with its code
        truth(2, 30.0, verdict="revert", codes=("timeout",)),  # flagged for review only
        truth(3, 40.0, verdict="revert", codes=("invalid-set",)),  # missed altogether
        truth(4, 50.0, verdict="revert", codes=("joker-kept", "invalid-set")),  # ruled with one of its codes
    ]
    events = [
        detected(1, 10.5, verdict="revert", codes=("invalid-set",)),
        detected(2, 20.5, verdict="revert", codes=("invalid-set",)),
        detected(3, 30.5, verdict="review"),
        detected(4, 45.0, verdict="revert", codes=("no-tile-from-rack",)),  # a phantom revert
        detected(5, 50.5, verdict="revert", codes=("joker-kept",), player=1),  # ruled for the wrong player
    ]
    game = score_game(truths, events)
    summary = summarise([game, score_game([truth(0, 5.0)], [])])
    assert (summary["games"], summary["true_moves"], summary["detected_moves"]) == (2, 6, 5)
    assert (summary["moves_found"], summary["phantom_moves"]) == (4, 1)
    assert summary["moves_by_the_right_player"] == 3
    assert summary["move_recall"] == pytest.approx(4 / 6, abs=1e-4)
    assert summary["move_precision"] == pytest.approx(4 / 5)
    assert summary["false_reverts"] == 2  # the ok move sent back, and the phantom revert
    assert summary["verdict_accuracy"] == pytest.approx(2 / 4)
    assert summary["verdicts"] == {"ok->revert": 1, "revert->revert": 2, "revert->review": 1}
    codes = summary["per_code"]
    assert codes["invalid-set"] == {"injected": 3, "flagged": 2, "ruled_with_code": 1}
    assert codes["timeout"] == {"injected": 1, "flagged": 1, "ruled_with_code": 0}
    assert codes["joker-kept"] == {"injected": 1, "flagged": 1, "ruled_with_code": 1}
    assert codes["opening-below-threshold"] == {"injected": 0, "flagged": 0, "ruled_with_code": 0}
    assert summary["latency_s_median"] == pytest.approx(0.5) and summary["latency_s_max"] == pytest.approx(0.5)


def test_a_summary_of_nothing_has_no_ratios() -> None:
    summary = summarise([score_game([], [])])
    assert summary["move_recall"] is None and summary["move_precision"] is None
    assert summary["verdict_accuracy"] is None and summary["latency_s_median"] is None
    assert summary["false_reverts"] == 0


def test_the_benchmark_text_names_the_headline_numbers() -> None:
    summary = summarise([score_game([truth(0, 10.0)], [detected(1, 10.4)])])
    speed = {"speed_x_real_time": 5.0, "sampled_frames_per_s": 30.0, "frame_sizes": ["1280x720"]}
    summary.update(video_s=60.0, analyze_s=12.0, **speed)
    text = format_pipeline_benchmark({"summary": summary, "games": []})
    assert "5.0x real time" in text and "recall 1.0" in text and "false reverts 0" in text and "invalid-set" in text
    assert "by the right player 1" in text


def test_each_clean_move_ruled_review_names_its_causes() -> None:
    uncertain = detected(1, 10.4, verdict="review")
    uncertain["ruling"]["uncertain"] = [{"table": "after", "place": [0, 1], "tile": "red-11"}]
    not_theirs = detected(2, 20.4, verdict="review", after=GROUP)
    not_theirs["ruling"]["violations"] = [{"code": "unknown-tile", "players_fault": False}]
    events = [uncertain, not_theirs, detected(3, 30.4, verdict="ok", before=GROUP, after=GROUP)]
    truths = [truth(0, 10.0), truth(1, 20.0), truth(2, 30.0, before=GROUP, after=GROUP)]
    game = score_game(truths, events)
    assert [r.get("review_causes") for r in game["rows"]] == [
        ["uncertain tiles"],
        ["not the player's: unknown-tile", "tables misread"],  # the truth's after-table is OPENED
        None,
    ]
    game.update(video_s=60.0, seconds=12.0, samples=360, frame_size=[1280, 720])
    summary = _summary_of([game])
    causes = {"uncertain tiles": 1, "not the player's: unknown-tile": 1, "tables misread": 1}
    assert summary["clean_review_causes"] == causes
    assert "(causes: not the player's: unknown-tile 1, tables misread 1, uncertain tiles 1)" in (
        format_pipeline_benchmark({"summary": summary, "games": []})
    )


def one_set_game(tmp_path: Path, scenes: Any, *, frames: int) -> Path:
    """A bench game folder: a 10 fps video of one set lying still, and a truth header whose play area is the frame."""
    import cv2

    scene = scenes.TableScene()
    scene.show("[black-5 blue-5 orange-5]")
    game = tmp_path / "game"
    game.mkdir()
    writer = cv2.VideoWriter(str(game / "game.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, scene.size)
    for _ in range(frames):
        writer.write(scene.frame())
    writer.release()
    width, height = scene.size
    header = {"video": "game.avi", "profile": "official", "players": 2, "size": [width, height], "fps": 10,
              "play_area_px": [[0, 0], [width, 0], [width, height], [0, height]]}  # fmt: skip
    (game / "truth.jsonl").write_text(json.dumps(header) + "\n")
    return game


def test_a_game_is_analysed_again_into_the_benchs_own_folder(tmp_path: Path, scenes: Any) -> None:
    """The bench writes its calibration into the output folder first, and reruns into the same one: analysing
    there must replace the last run's analysis (never refuse the folder it just wrote)."""
    from vision.eval.pipeline_bench import analyse_folder

    game = one_set_game(tmp_path, scenes, frames=30)
    out = tmp_path / "out"
    for _ in range(2):
        scores = analyse_folder(game, out, scenes.PixelReader())
        assert scores["rows"] == [] and scores["phantoms"] == [] and scores["video_s"] == pytest.approx(3.0, abs=0.3)
    assert (out / "calibration.json").is_file()  # kept: not a file the analysis writes


def test_the_users_path_comes_first_and_the_true_play_area_is_a_labelled_second_row() -> None:
    summary = summarise([score_game([truth(0, 10.0)], [detected(1, 10.4)])])
    summary.update(video_s=60.0, analyze_s=12.0, speed_x_real_time=5.0, sampled_frames_per_s=30.0, frame_sizes=[])
    game = {"folder": "cache/game-1000-4p-clutter", "players": 4, "profile": "official", "staging": {"clutter": True},
            "rows": score_game([truth(0, 10.0)], [detected(1, 10.4)])["rows"], "wall_s": 30.0,
            "play_area": {"true_area_covered": 0.995, "area_ratio": 1.2}}  # fmt: skip
    rows = {"auto": {"summary": summary, "games": [game]}, "truth": {"summary": summary, "games": [game]}}
    text = format_pipeline_benchmark({"summary": summary, "games": [game], "rows": rows})
    found_on_its_own = text.index("play area found on its own")
    assert found_on_its_own < text.index("true play area given as corners")
    assert "game-1000-4p-clutter: 4 players, official, clutter: 1/1 moves found" in text
    assert "covers 99.5% of the true one" in text


def test_bench_tables_cover_two_to_six_players_a_tilted_camera_and_a_glare() -> None:
    from vision.eval.pipeline_bench import BENCH_TABLES

    first_three = BENCH_TABLES[:3]  # what the bench renders by default
    assert {players for players, _, _ in first_three} == {2, 4, 6}
    assert any(staging.get("tilt_deg", 0) >= 30 for _, _, staging in first_three)
    assert any(staging.get("glare") for _, _, staging in first_three)
    assert {players for players, _, _ in BENCH_TABLES} == {2, 3, 4, 5, 6}


def test_the_users_path_is_analysed_without_the_truths_play_area(tmp_path: Path, scenes: Any) -> None:
    from vision.eval.pipeline_bench import analyse_folder

    game = one_set_game(tmp_path, scenes, frames=20)
    scores = analyse_folder(game, tmp_path / "out", scenes.PixelReader(), calibration="auto")
    assert not (tmp_path / "out" / "calibration.json").exists()
    assert scores["calibration"] == "auto" and scores["play_area"]["method"] in ("auto", "frame")


def test_bench_pipeline_on_the_bundled_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command behind the README's pipeline figures, short: ``bench pipeline --games`` on the demo's game (a
    synth-game folder made of vision/samples), with the shipped models, on both rows (the play area found on its
    own, then given). Measured on the AVX2 CPU: on both rows all 6 moves found with the right tables and players,
    none made up, 4 OK and 2 REVERT as scripted."""
    from importlib import resources

    from vision.cli import main

    samples = resources.files("vision").joinpath("samples")
    game = tmp_path / "demo-game"
    game.mkdir()
    (game / "truth.jsonl").write_text(samples.joinpath("demo-truth.jsonl").read_text())  # its header names the video
    (game / "demo-game.mp4").symlink_to(Path(str(samples.joinpath("demo-game.mp4"))))
    monkeypatch.chdir(tmp_path)  # the bench writes under cache/
    assert main(["bench", "pipeline", "--games", str(game), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert sorted(rows) == ["auto", "truth"]
    for name, row in rows.items():
        scores = row["summary"]
        assert scores["move_recall"] == scores["move_precision"] == scores["right_tables_share"] == 1.0, name
        assert scores["false_reverts"] == scores["phantom_moves"] == 0, name
        assert scores["verdicts"] == {"ok->ok": 4, "revert->revert": 2}, name
