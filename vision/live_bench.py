"""``bench live``: a synthetic game video played at its own frame rate, like a camera, through ``live``.

Where ``bench pipeline`` measures analysis (as fast as it can go), this measures what a referee at the table
sees: the video is paced at its frame rate by the reader thread while the pipeline samples the newest frame,
on the same cores. It reports, against the game's truth:

- *wall-clock latency*: when each ruling reached the game log, minus when the table settled (the settling's
  video time, on the wall clock of the paced playback);
- *keeping up*: how far the reader fell behind the camera's clock at worst (0 when decoding keeps pace), how
  many frames were decoded and how many the pipeline skipped, and the processing lag of the frames it took;
- the same move scores as ``bench pipeline`` (moves found, right tables, false reverts) for the part played.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.pipeline_bench import load_truth, score_game, summarise, truth_calibration


@dataclass
class BenchGame:
    """A synthetic game's live session, set up as a camera would feed it: its truth, its new game log, and when
    (monotonic clock) each move's ruling was published."""

    header: dict[str, Any]
    truth: list[dict[str, Any]]
    session: Any  # vision.live.LiveSession
    log: Any  # vision.gamelog.GameLog
    log_path: Path
    ruled_at: dict[int, float] = field(default_factory=dict)


def open_bench_game(folder: Path, out: Path, reader: Any) -> BenchGame:
    """``folder``'s game as a live session writing ``out/game-log.jsonl`` (replaced), on the true play area."""
    from vision.gamelog import GameLog
    from vision.live import LiveOptions, LiveSession
    from vision.moves import GameKeeper

    header, truth = load_truth(folder)
    calibration = truth_calibration(header, out)
    profile, players = header["profile"], header["players"]
    options = LiveOptions(
        source=str(folder / header["video"]), profile=profile, players=players, calibration=str(calibration)
    )
    log_path = out / "game-log.jsonl"
    log_path.unlink(missing_ok=True)
    log = GameLog.create(log_path, {"source": options.source, "profile": profile, "players": players, "mode": "live"})
    game = BenchGame(header, truth, LiveSession(options, reader, log, GameKeeper(profile, players)), log, log_path)
    game.session.subscribe(
        lambda e: game.ruled_at.setdefault(e["number"], time.monotonic()) if e["event"] == "move" else None
    )
    return game


def run_live_benchmark(folder: Path, out: Path, reader: Any, *, minutes: float | None = None) -> dict[str, Any]:
    """Play ``folder``'s game (the first ``minutes`` of it) through a live session; see the module docstring."""
    from vision.gamelog import read_log

    game = open_bench_game(folder, out, reader)
    session, ruled_at = game.session, game.ruled_at
    timer = threading.Timer(minutes * 60, session.stop) if minutes else None
    if timer:
        timer.start()
    try:
        summary = session.run()
    finally:
        if timer:
            timer.cancel()
        game.log.close()
    played_s = session.latest_time_s
    events = read_log(game.log_path)
    scores = score_game([t for t in game.truth if t.get("settle_s", 0.0) < played_s - 3.0], events)
    settled = {t["index"]: t["settle_s"] for t in game.truth if t["event"] == "move"}
    shown = session.playback_started
    wall = [
        ruled_at[row["number"]] - shown - settled[row["index"]]
        for row in scores["rows"]
        if row["found"] and row["number"] in ruled_at and shown is not None
    ]
    fps = float(game.header.get("fps", 30.0))
    return {
        "folder": str(folder),
        "played_s": round(played_s, 1),
        "frame_size": game.header["size"],
        "fps": fps,
        "scores": summarise([scores]),
        "wall_latency_s_median": round(statistics.median(wall), 3) if wall else None,
        "wall_latency_s_max": round(max(wall), 3) if wall else None,
        "behind_s_max": round(session.behind_s_max, 3),
        "frames_decoded": summary["capture"]["frames_read"],
        "frames_expected": round(played_s * fps),
        "frames_skipped": summary["frames_dropped"],
        "frames_processed": len(session.lag_s),
        "processing_lag_s_median": summary["lag_s_median"],
        "processing_lag_s_max": summary["lag_s_max"],
    }


def format_live_benchmark(result: dict[str, Any]) -> str:
    r, s = result, result["scores"]
    return "\n".join(
        [
            f"{r['folder']}: {r['played_s']} s of {'x'.join(map(str, r['frame_size']))} video at {r['fps']:g} fps,"
            " played in real time",
            f"keeping up: decoded {r['frames_decoded']} of {r['frames_expected']} frames, at worst"
            f" {r['behind_s_max']} s behind the camera's clock; the pipeline took {r['frames_processed']}"
            f" (skipped {r['frames_skipped']}), each done {r['processing_lag_s_median']} s (median) /"
            f" {r['processing_lag_s_max']} s (max) after it arrived",
            f"ruling after the table settled (wall clock): median {r['wall_latency_s_median']} s,"
            f" max {r['wall_latency_s_max']} s",
            f"moves: {s['true_moves']} true, found {s['moves_found']}, right tables {s['moves_with_right_tables']},"
            f" false reverts {s['false_reverts']}, phantom moves {s['phantom_moves']}",
        ]
    )
