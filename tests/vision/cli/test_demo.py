"""The README's main command: ``demo`` referees the bundled game video with the shipped models."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from vision.cli import main
from vision.eval.pipeline_bench import score_game, summarise


def test_the_demo_referees_the_bundled_game_like_its_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    (out / "frames").mkdir(parents=True)  # a previous run's folder (the demo replaces its own files there)...
    (out / "game-log.jsonl").write_text('{"event": "start", "format": "rummikub-referee/game-log/1"}\n')
    (out / "frames" / "9999999.jpg").write_bytes(b"an old snapshot")
    (out / "frames" / "my-photo.jpg").write_bytes(b"...where someone kept a file of their own")
    assert main(["demo", "--out", str(out), "--json"]) == 0
    assert (out / "frames" / "my-photo.jpg").read_bytes() == b"...where someone kept a file of their own"
    assert not (out / "frames" / "9999999.jpg").exists()
    result = json.loads(capsys.readouterr().out)
    assert Path(result["report"]).is_file() and (out / "game-log.jsonl").is_file()
    truth = resources.files("vision").joinpath("samples", "demo-truth.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in (out / "game-log.jsonl").read_text().splitlines()]
    scores = summarise([score_game([json.loads(line) for line in truth[1:]], events)])
    # Every move of the script is found, none is made up, and nobody is sent back by mistake. Measured on the AVX2
    # CPU: all 6 moves with exactly the right tables and player, 4 OK and 2 REVERT as scripted, each REVERT with
    # the injected code (opening-below-threshold, invalid-set).
    assert scores["move_recall"] == 1.0 and scores["false_reverts"] == 0
    assert scores["move_precision"] == 1.0 and scores["phantom_moves"] == 0
    assert scores["right_tables_share"] == 1.0 and scores["moves_by_the_right_player"] == scores["true_moves"] == 6
    assert scores["verdict_accuracy"] == 1.0 and scores["verdicts"] == {"ok->ok": 4, "revert->revert": 2}
    injected = {code: row for code, row in scores["per_code"].items() if row["injected"]}
    assert injected and all(row["ruled_with_code"] == row["injected"] for row in injected.values()), injected
