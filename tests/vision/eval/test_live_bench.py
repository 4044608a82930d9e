"""bench live: a synthetic game played at its frame rate through a live session, idle and beside a busy core,
scored against its truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.eval.live_bench import (
    LOADS,
    format_live_benchmark,
    note_ruling,
    run_live_benchmark,
    silent_failures,
    without_rulings_after_the_cut,
)
from vision.eval.pipeline_bench import load_truth
from vision.game.pipeline import pipeline_reader
from vision.session.live import LAG_BOUND_S
from vision.synth.video import write_game


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("live-game")
    write_game(out, players=2, seed=5, violation_rate=0.3, profile="official", minutes=0.3, size=(640, 360),
               fps=10.0, progress=False)  # fmt: skip
    return out


def test_a_game_played_in_real_time_idle_and_beside_a_busy_core_is_timed_and_scored(game: Path, tmp_path: Path) -> None:
    _, truth = load_truth(game)
    result = run_live_benchmark(game, tmp_path / "out", pipeline_reader(None), minutes=0.15)
    assert [run["load"] for run in result["runs"]] == list(LOADS)
    for run in result["runs"]:
        assert 8.0 <= run["played_s"] <= 10.0  # stopped after 9 s of wall clock, at the paced video's time
        # every frame due was decoded or passed undecoded to catch up: none queued up
        assert run["frames_decoded"] + run["frames_passed"] >= 0.9 * run["frames_expected"]
        assert 0 < run["frames_processed"] <= run["frames_decoded"]
        assert run["processing_lag_s_median"] > 0 and run["behind_s_max"] is not None
        played = [t for t in truth if t["event"] == "move" and t["settle_s"] < run["played_s"] - 3.0]
        assert run["scores"]["true_moves"] == len(played)
        warned = [w for w in run["warnings"] if w["event"] == "behind"]  # the log's warnings, as the summary counts
        assert all(w["behind_s"] > LAG_BOUND_S for w in warned) and (run["warned_after_s_max"] is None) == (not warned)
        folder = tmp_path / "out" / run["load"].replace(" ", "-")
        assert (folder / "game-log.jsonl").is_file() and (folder / "calibration.json").is_file()
    text = format_live_benchmark(result)
    assert "[idle," in text and "[one core busy," in text and "warnings shown" in text and "silently" in text


def test_silent_failures_are_misses_no_warning_covered_and_wrong_verdicts_not_sent_to_review() -> None:
    truth = [
        {"event": "move", "index": 0, "start_s": 2.0, "settle_s": 5.0},
        {"event": "move", "index": 1, "start_s": 10.0, "settle_s": 12.0},
        {"event": "move", "index": 2, "start_s": 20.0, "settle_s": 24.0},
        {"event": "move", "index": 3, "start_s": 30.0, "settle_s": 33.0},
    ]
    rows = [
        {"index": 0, "found": True, "true_verdict": "revert", "verdict": "ok"},  # wrong, and nobody was asked
        {"index": 1, "found": False, "true_verdict": "ok"},  # missed while reading was behind: said
        {"index": 2, "found": False, "true_verdict": "ok"},  # missed with nothing said
        {"index": 3, "found": True, "true_verdict": "revert", "verdict": "review"},  # a person decides: not silent
    ]
    events = [
        {"event": "behind", "time_s": 11.5, "behind_s": 1.2},
        {"event": "unread", "time_s": 14.0, "from_s": 10.3, "seconds": 3.7},
        {"event": "unread", "time_s": 40.0, "from_s": 38.0, "seconds": 2.0},  # after move 3: covers nothing
    ]
    assert silent_failures({"rows": rows}, truth, events) == {
        "moves_missed": [2],
        "wrong_verdicts": [{"index": 0, "true": "revert", "ruled": "ok"}],
    }


def test_the_ruling_of_a_move_settled_after_the_cut_is_no_phantom_but_an_invented_one_still_is() -> None:
    """Playing stops 89.9 s in; moves settled in the last 3 s are not scored, nor are their rulings."""
    truth = [
        {"event": "move", "index": 5, "start_s": 76.7, "settle_s": 78.5},
        {"event": "move", "index": 6, "start_s": 81.9, "settle_s": 87.1},  # settled after the cut at 86.9 s
    ]
    phantoms = [
        {"number": 3, "time_s": 50.0, "verdict": "revert"},  # no true move near it: invented, a false REVERT
        {"number": 7, "time_s": 87.8, "verdict": "ok"},  # move 6's ruling
    ]
    scores = without_rulings_after_the_cut({"rows": [], "phantoms": phantoms, "detected": 8}, truth, 86.9)
    assert scores["phantoms"] == phantoms[:1] and scores["detected"] == 7 and scores["rulings_after_the_cut"] == 1


def test_a_move_counts_as_ruled_when_first_ruled_or_amended() -> None:
    ruled_at: dict[int, float] = {}
    for line, now in [
        ({"event": "move", "number": 1}, 1.0),
        ({"event": "table"}, 2.0),
        ({"event": "move", "number": 1}, 3.0),  # the same line heard again: the first ruling stands
        ({"event": "move", "number": 1, "amends": 1}, 4.0),  # the whole turn ruled again: the truth's move
        ({"event": "move", "number": 2}, 5.0),
    ]:
        note_ruling(ruled_at, line, now)
    assert ruled_at == {1: 4.0, 2: 5.0}
