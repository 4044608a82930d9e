"""A recorded game, as fast as it can be read: the move log and the rulings of every move.

The video is sampled at the pipeline's rate (frames in between are skipped without being converted), more
sparsely while the table is still, and every event goes to ``DIR/game-log.jsonl`` as it happens; at the end
``DIR/moves.json`` holds the moves with their rulings and ``DIR/summary.json`` the counts and the speed.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.gamelog import GameLog
from vision.moves import GameKeeper
from vision.pipeline import Event, PipelineConfig, TablePipeline

STILL_SAMPLE_HZ = 3.0
"""Sampling rate while the table is still and unchanged (the pipeline's own rate otherwise)."""
LOG_NAME = "game-log.jsonl"


@dataclass(frozen=True, kw_only=True)
class GameOptions:
    """What a game is played under, and how its camera is calibrated (for ``analyze`` and ``live`` alike)."""

    profile: str
    players: int
    first_player: int = 0
    time_limit_s: Any = None
    """None: the profile's limit; a number, or "none" for no limit (a limit agreed at the table)."""
    calibration: str = "auto"
    """"markers", "auto" (markers if found, else the table's edge, else the whole frame), "frame" or a JSON file."""
    config: PipelineConfig = field(default_factory=PipelineConfig)


@dataclass(frozen=True, kw_only=True)
class AnalyzeOptions(GameOptions):
    progress: bool = True


def analyze_video(video: str | Path, out: str | Path, options: AnalyzeOptions, reader: Any) -> dict[str, Any]:
    """Analyse ``video`` into ``out`` (created); returns the summary (also written to ``summary.json``)."""
    from vision.capture import open_source

    out = Path(out)
    started = time.perf_counter()
    source = open_source(str(video))
    try:
        first = source.read()
        if first is None:
            from vision.capture import CaptureError

            raise CaptureError(f"{video}: no frame could be read")
        calibration = calibrate_for(first.image, options.calibration)
        out.mkdir(parents=True, exist_ok=True)
        log_path = out / LOG_NAME
        log_path.unlink(missing_ok=True)
        shutil.rmtree(out / SNAPSHOT_DIR, ignore_errors=True)
        keeper = _keeper(options)
        start = {
            "source": str(video),
            "profile": options.profile,
            "players": options.players,
            "first_player": options.first_player,
            "mode": "analyze",
            "fps": source.fps,
            "size": list(source.size),
        }
        events: list[Event] = []
        with GameLog.create(log_path, start, sync=False) as log:
            log.append({"event": "calibration", "time_s": 0.0, "frame": 0, **calibration.to_json()})

            snapshots = Snapshots(out / SNAPSHOT_DIR)

            def record(event: Event) -> None:
                if event["event"] in SNAPSHOT_EVENTS and current is not None:
                    event["snapshot"] = snapshots.save(current.image, current.index, out)
                log.append(event)
                events.append(event)

            pipeline = TablePipeline(
                reader, keeper, source.size, calibration=calibration, config=options.config, on_event=record
            )
            current: Any = None

            def on_frame(frame: Any) -> None:
                nonlocal current
                current = frame

            duration = _run(source, first, pipeline, options, on_frame)
            stats = source.stats
            record({"event": "end", "time_s": round(duration, 3), "moves": keeper.moves,
                    "capture": _stats_json(stats), "pipeline": pipeline.stats.to_json()})  # fmt: skip
    finally:
        source.close()
    seconds = time.perf_counter() - started
    moves = [e for e in events if e["event"] == "move"]
    (out / "moves.json").write_text(json.dumps(moves, indent=1, sort_keys=True))
    summary = {
        "video": str(video),
        "profile": options.profile,
        "players": options.players,
        "video_s": round(duration, 2),
        "seconds": round(seconds, 2),
        "speed_x_real_time": round(duration / seconds, 2) if seconds else None,
        "moves": len(moves),
        "verdicts": dict(Counter(m["ruling"]["verdict"] for m in moves)),
        "codes": dict(Counter(v["code"] for m in moves for v in m["ruling"]["violations"])),
        "restores": sum(1 for e in events if e["event"] == "restore"),
        "warnings": dict(Counter(e["event"] for e in events if e["event"] in WARNING_EVENTS)),
        "capture": _stats_json(source.stats),
        "pipeline": pipeline.stats.to_json(),
        "log": str(log_path),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True))
    return summary


SNAPSHOT_DIR = "frames"
SNAPSHOT_EVENTS = ("table", "move", "restore", "occluded", "camera-moved", "reading-disagrees")
"""Events that keep a picture of the frame they happened on (``snapshot``: its path inside the folder)."""
SNAPSHOT_WIDTH = 640


class Snapshots:
    """Small JPEG copies of the frames where something happened, for the report."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.saved: set[int] = set()

    def save(self, image: Any, index: int, root: Path) -> str:
        import cv2

        path = self.folder / f"{index:07d}.jpg"
        if index not in self.saved:
            self.folder.mkdir(parents=True, exist_ok=True)
            scale = SNAPSHOT_WIDTH / image.shape[1]
            small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
            cv2.imwrite(str(path), small, [cv2.IMWRITE_JPEG_QUALITY, 80])
            self.saved.add(index)
        return path.relative_to(root).as_posix()


WARNING_EVENTS = ("occluded", "camera-moved", "dropout", "reconnected", "corrupt-frames")


def calibrate_for(image: Any, how: str) -> Any:
    """The play area for a video or camera: markers, the table's edge, corners from a file, or the frame."""
    from vision import calibrate

    height, width = image.shape[:2]
    if how not in ("markers", "auto", "frame"):
        return calibrate.Calibration.load(how)
    if how == "frame":
        return calibrate.whole_frame(width, height)
    if how == "markers":
        return calibrate.from_markers(image)
    for attempt in (calibrate.from_markers, calibrate.auto):
        try:
            return attempt(image)
        except calibrate.CalibrationError:
            continue
    return calibrate.whole_frame(width, height)


def _keeper(options: AnalyzeOptions) -> GameKeeper:
    return GameKeeper(
        options.profile, options.players, first_player=options.first_player, **time_limit_kwargs(options.time_limit_s)
    )


def time_limit_kwargs(value: Any) -> dict[str, Any]:
    """GameKeeper's ``time_limit_s`` from an option: None keeps the profile's, "none" means no limit."""
    if value is None:
        return {}
    return {"time_limit_s": None if value == "none" else float(value)}


def _run(source: Any, first: Any, pipeline: TablePipeline, options: AnalyzeOptions, on_frame: Any) -> float:
    """Feed the video through the pipeline; returns the video's duration in seconds."""
    fps = source.fps or 30.0
    busy_step = max(1, round(fps / options.config.sample_hz))
    still_step = max(busy_step, round(fps / STILL_SAMPLE_HZ))
    total = source.frame_count or 0
    bar = _progress(total) if options.progress and total else None
    frame, last_time = first, first.time_s
    done = 0
    try:
        while frame is not None:
            on_frame(frame)
            pipeline.process(frame.image, frame.time_s, frame.index)
            last_time = frame.time_s
            step = still_step if pipeline.phase == "stable" else busy_step
            if step > 1:
                source.skip(step - 1)
            frame = source.read()
            if bar is not None and frame is not None:
                bar.advance(frame.index - done)
                done = frame.index
    finally:
        if bar is not None:
            bar.close()
    return last_time + 1.0 / fps


def _progress(total: int) -> Any:
    from vision.synth.dataset import Progress

    return Progress(total, label="frames")


def _stats_json(stats: Any) -> dict[str, Any]:
    return {k: getattr(stats, k) for k in ("frames_read", "corrupt_frames", "dropouts", "reconnects")}
