"""Make the demo's game video: a short synthetic 2-player game, filmed at 1080p and stored small.

    python datasets/demo_game.py --out vision/samples

Renders ``synth-game`` (seed 3: a draw, a good opening, an opening under 30 sent back and restored, a draw, a
good move, an invalid set sent back; an oak table in daylight, picked among seeds for a varied script and a table
the shipped models read well: `bench pipeline` gives the figures over many games), then re-encodes it at 10 frames
per second as H.264 with PyAV (`pip install av`, for this script only; the pipeline samples 6 frames per second;
a few MB instead of ~30) and writes the calibration (the play area's corners from the truth header) beside it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

import cv2

from vision.runtime.calibrate import from_corners
from vision.synth.video import write_game

SEED, PLAYERS, PROFILE, MINUTES, VIOLATIONS = 3, 2, "official", 1.9, 0.5
DEMO_FPS = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("vision/samples"))
    parser.add_argument("--rendered", type=Path, help="a folder where this game was already rendered")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = args.rendered or Path(tmp)
        if args.rendered is None:
            write_game(work, players=PLAYERS, seed=SEED, violation_rate=VIOLATIONS, profile=PROFILE, minutes=MINUTES)
        lines = (work / "truth.jsonl").read_text().splitlines()
        header = json.loads(lines[0])
        _reencode(work / "game.mp4", args.out / "demo-game.mp4", header["fps"])
        header.update(video="demo-game.mp4", fps=DEMO_FPS, source_fps=header["fps"])
        (args.out / "demo-truth.jsonl").write_text("\n".join([json.dumps(header, sort_keys=True), *lines[1:]]) + "\n")
        calibration = from_corners(header["play_area_px"], size_mm=tuple(header["play_area_mm"]))
        calibration.save(args.out / "demo-calibration.json")
        shutil.copy(work / "summary.json", args.out / "demo-render.json")


def _reencode(source: Path, target: Path, fps: float) -> None:
    """Every third frame as H.264 (constant quality, CRF 31) with PyAV: ``pip install av`` (this script only)."""
    import av

    reader = cv2.VideoCapture(str(source))
    step = fps / DEMO_FPS
    with av.open(str(target), "w") as container:
        stream = container.add_stream("libx264", rate=DEMO_FPS)
        stream.width = int(reader.get(cv2.CAP_PROP_FRAME_WIDTH))
        stream.height = int(reader.get(cv2.CAP_PROP_FRAME_HEIGHT))
        stream.pix_fmt = "yuv420p"
        stream.options = {"crf": "31", "preset": "slow"}
        index, next_kept = 0, 0.0
        while True:
            ok, frame = reader.read()
            if not ok:
                break
            if index >= next_kept - 1e-6:
                container.mux(stream.encode(av.VideoFrame.from_ndarray(frame, format="bgr24")))
                next_kept += step
            index += 1
        container.mux(stream.encode())
    reader.release()


if __name__ == "__main__":
    main()
