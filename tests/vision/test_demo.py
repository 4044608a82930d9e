"""The README's main command: ``demo`` referees the bundled game video with the shipped models."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from vision.cli import main
from vision.pipeline_bench import score_game, summarise


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
    # every move of the script is found, and nobody is sent back by mistake
    assert scores["move_recall"] == 1.0 and scores["false_reverts"] == 0
