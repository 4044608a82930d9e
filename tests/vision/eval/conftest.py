"""What the benchmark tests share: one tiny synthetic game, filmed once for the session."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.cli import main


@pytest.fixture(scope="session")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 0.2-minute 3-player game (480x270, 12 fps, official, seed 5), read only by the benchmarks that take it."""
    folder = tmp_path_factory.mktemp("bench-game") / "g5"
    args = ["--players", "3", "--profile", "official", "--seed", "5", "--minutes", "0.2", "--size", "480x270"]
    assert main(["synth-game", "--out", str(folder), *args, "--fps", "12", "--json"]) == 0
    return folder
