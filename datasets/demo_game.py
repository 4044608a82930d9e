"""Make the demo's game video: a short synthetic 2-player game, filmed at 1080p and stored small.

    python datasets/demo_game.py --out vision/samples

Renders ``synth-game`` (seed 5: two good moves, a revert for an invalid set and its restore, a draw, one more
good move), then re-encodes it at 10 frames per second as VP9 WebM (the pipeline samples 6 per second; a few
MB instead of ~40) and writes the calibration (the play area's corners from the truth header) beside it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import cv2

from vision.calibrate import from_corners
from vision.synth.video import write_game

SEED, PLAYERS, PROFILE, MINUTES, VIOLATIONS = 5, 2, "official", 1.75, 0.5
DEMO_FPS = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("vision/samples"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_game(work, players=PLAYERS, seed=SEED, violation_rate=VIOLATIONS, profile=PROFILE, minutes=MINUTES)
        lines = (work / "truth.jsonl").read_text().splitlines()
        header = json.loads(lines[0])
        _reencode(work / "game.mp4", args.out / "demo-game.webm", header["fps"])
        header.update(video="demo-game.webm", fps=DEMO_FPS, source_fps=header["fps"])
        (args.out / "demo-truth.jsonl").write_text("\n".join([json.dumps(header, sort_keys=True), *lines[1:]]) + "\n")
        calibration = from_corners(header["play_area_px"], size_mm=tuple(header["play_area_mm"]))
        calibration.save(args.out / "demo-calibration.json")
        shutil.copy(work / "summary.json", args.out / "demo-render.json")


def _reencode(source: Path, target: Path, fps: float) -> None:
    reader = cv2.VideoCapture(str(source))
    size = (int(reader.get(cv2.CAP_PROP_FRAME_WIDTH)), int(reader.get(cv2.CAP_PROP_FRAME_HEIGHT)))
    writer = cv2.VideoWriter(str(target), cv2.VideoWriter_fourcc(*"VP90"), DEMO_FPS, size)
    step = fps / DEMO_FPS
    index, next_kept = 0, 0.0
    while True:
        ok, frame = reader.read()
        if not ok:
            break
        if index >= next_kept - 1e-6:
            writer.write(frame)
            next_kept += step
        index += 1
    reader.release()
    writer.release()


if __name__ == "__main__":
    main()
