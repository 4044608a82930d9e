"""A synthetic game's ground truth as ``synth-game`` writes it (``truth.jsonl``: a header line, then one line per
event), read back for the benchmarks and for training alike (the quantizer's calibration frames), so training
never imports a benchmark (the layering contract, tests/test_layering.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def load_truth(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the event lines of ``folder/truth.jsonl``."""
    lines = [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines() if line.strip()]
    return lines[0], lines[1:]


def play_area_calibration(header: dict[str, Any]) -> Any:
    """The calibration from the play area's corners in a synthetic game's truth header."""
    from vision.runtime.calibrate import from_corners
    from vision.synth.video import PLAY_AREA

    size_mm = header.get("play_area_mm", [PLAY_AREA.width, PLAY_AREA.height])
    return from_corners(header["play_area_px"], size_mm=tuple(size_mm))
