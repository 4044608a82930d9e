"""``bench live``: a synthetic game video played at its own frame rate, like a camera, through ``live``; idle,
then with a competing process busy on one core, in the same run.

Where ``bench pipeline`` measures analysis (as fast as it can go), this measures what a referee at the table
sees: the video is paced at its frame rate by the reader thread while the pipeline samples the newest frame,
on the same cores. Each load (:data:`LOADS`) plays the game afresh and reports, against the game's truth:

- *wall-clock latency*: when each ruling reached the game log, minus when the table settled (the settling's
  video time, on the wall clock of the paced playback);
- *keeping up*: frames decoded, passed undecoded to catch up, and skipped by the pipeline; how far the frame
  looked at fell behind the camera's picture at worst (``behind_s_max``), the ``behind`` warnings shown and how
  far behind reading was when each was shown (issue 16: within 1 s), the seconds of camera never looked at;
- the same move scores as ``bench pipeline`` (moves found, verdicts right, false reverts) for the part played,
  and what went wrong *silently*: true moves neither found nor covered by a warning or an unread stretch, and
  moves ruled neither their true verdict nor REVIEW.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.eval.pipeline_bench import MATCH_WINDOW_S, load_truth, score_game, summarise, truth_calibration

LOADS = ("idle", "one core busy")
"""How each game is played: alone, then beside a process that keeps one core busy (issue 16)."""


@dataclass
class BenchGame:
    """A synthetic game's live session, set up as a camera would feed it: its truth, its new game log, and when
    (monotonic clock) each move's ruling was published."""

    header: dict[str, Any]
    truth: list[dict[str, Any]]
    session: Any  # vision.session.live.LiveSession
    log: Any  # vision.game.gamelog.GameLog
    log_path: Path
    ruled_at: dict[int, float] = field(default_factory=dict)


def open_bench_game(folder: Path, out: Path, reader: Any) -> BenchGame:
    """``folder``'s game as a live session writing ``out/game-log.jsonl`` (replaced), on the true play area."""
    from vision.game.gamelog import GameLog, GameSetup
    from vision.session.live import LiveOptions, LiveSession

    header, truth = load_truth(folder)
    calibration = truth_calibration(header, out)
    setup = GameSetup.of(header["profile"], header["players"])
    options = LiveOptions(source=str(folder / header["video"]), setup=setup, calibration=str(calibration))
    log_path = out / "game-log.jsonl"
    log_path.unlink(missing_ok=True)
    log = GameLog.create(log_path, setup, {"source": options.source, "mode": "live"})
    game = BenchGame(header, truth, LiveSession(options, reader, log, setup.keeper()), log, log_path)
    game.session.subscribe(lambda e: note_ruling(game.ruled_at, e, time.monotonic()))
    return game


def note_ruling(ruled_at: dict[int, float], event: dict[str, Any], now: float) -> None:
    """When each move was ruled as it stands: its first line, or its amendment's (the same hands went on with it
    and the whole turn was ruled again, ``amends``), which is the ruling the truth's move is matched with."""
    if event.get("event") == "move" and (event.get("amends") is not None or event["number"] not in ruled_at):
        ruled_at[int(event["number"])] = now


@contextlib.contextmanager
def competing_process(busy: bool) -> Iterator[subprocess.Popen[bytes] | None]:
    """With ``busy``, a Python process spinning on one core (the last this process may use) for the block."""
    if not busy:
        yield None
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(spinner.pid, {max(os.sched_getaffinity(0))})
        yield spinner
    finally:
        spinner.kill()
        spinner.wait()


def run_live_benchmark(
    folder: Path, out: Path, reader: Any, *, minutes: float | None = None, loads: tuple[str, ...] = LOADS
) -> dict[str, Any]:
    """Play ``folder``'s game (the first ``minutes`` of it) through a live session once per load; see the
    module docstring."""
    runs = []
    for load in loads:
        if load not in LOADS:
            raise ValueError(f"a load is one of {', '.join(LOADS)}, not {load!r}")
        with competing_process(load != "idle"):
            load_average = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
            run = play_live(folder, out / load.replace(" ", "-"), reader, minutes=minutes)
        runs.append({"load": load, "load_average_1min_at_start": load_average, **run})
    return {"folder": str(folder), "runs": runs}


def play_live(folder: Path, out: Path, reader: Any, *, minutes: float | None = None) -> dict[str, Any]:
    """One live session on ``folder``'s game (the first ``minutes`` of it), scored."""
    from vision.game.gamelog import read_log

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
    cut_s = played_s - SCORED_BEFORE_END_S
    truth = [t for t in game.truth if t.get("settle_s", 0.0) < cut_s]
    scores = without_rulings_after_the_cut(score_game(truth, events), game.truth, cut_s)
    settled = {t["index"]: t["settle_s"] for t in game.truth if t["event"] == "move"}
    shown = session.playback_started
    wall = [
        ruled_at[row["number"]] - shown - settled[row["index"]]
        for row in scores["rows"]
        if row["found"] and row["number"] in ruled_at and shown is not None
    ]
    fps = float(game.header.get("fps", 30.0))
    keeping_up = summary.get("keeping_up") or {}
    return {
        "folder": str(folder),
        "played_s": round(played_s, 1),
        "frame_size": game.header["size"],
        "fps": fps,
        "scores": summarise([scores]),
        "silent": silent_failures(scores, truth, events),
        "wall_latency_s_median": round(statistics.median(wall), 3) if wall else None,
        "wall_latency_s_max": round(max(wall), 3) if wall else None,
        "decoding_behind_s_max": round(session.behind_s_max, 3),
        "frames_decoded": summary["capture"]["frames_read"],
        "frames_expected": round(played_s * fps),
        "frames_passed": summary.get("frames_passed", 0),
        "frames_skipped": summary["frames_dropped"],
        "frames_processed": len(session.lag_s),
        "processing_lag_s_median": summary["lag_s_median"],
        "processing_lag_s_max": summary["lag_s_max"],
        "behind_s_max": keeping_up.get("behind_s_max"),
        "warnings": [e for e in events if e["event"] in ("behind", "caught-up")],
        "warned_after_s_max": keeping_up.get("warned_after_s_max"),
        "unread_s": keeping_up.get("unread_s"),
        "unread_stretches": keeping_up.get("unread_stretches"),
        "reading_ms_mean": (summary.get("pipeline") or {}).get("reading_ms_mean"),
    }


SCORED_BEFORE_END_S = 3.0
"""Moves that settled this close to the end of what was played are not scored (their rulings may not be made yet)."""


def without_rulings_after_the_cut(scores: dict[str, Any], truth: list[dict[str, Any]], cut_s: float) -> dict[str, Any]:
    """``scores`` without the phantoms that are the rulings of true moves settled after ``cut_s`` (left out of the
    truth scored, so their rulings would otherwise count as moves invented): a ruling within the match window of
    such a move, as :func:`score_game` matches them. A ruling no true move accounts for stays a phantom (and a
    REVERT among them a false one)."""
    late = [t for t in truth if t["event"] == "move" and t["settle_s"] >= cut_s]

    def after_the_cut(phantom: dict[str, Any]) -> bool:
        return any(t["settle_s"] - 0.5 <= phantom["time_s"] <= t["settle_s"] + MATCH_WINDOW_S for t in late)

    kept = [p for p in scores["phantoms"] if not after_the_cut(p)]
    dropped = len(scores["phantoms"]) - len(kept)
    return {**scores, "phantoms": kept, "detected": scores["detected"] - dropped, "rulings_after_the_cut": dropped}


def silent_failures(scores: dict[str, Any], truth: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict:
    """What went wrong without a word: true moves not found while no warning or unread stretch covered them, and
    moves ruled neither their true verdict nor REVIEW (a person is asked on a REVIEW)."""
    said = [(e["time_s"] - e["behind_s"], e["time_s"]) for e in events if e["event"] == "behind"]
    said += [(e["from_s"], e["time_s"]) for e in events if e["event"] == "unread"]
    moves = {t["index"]: t for t in truth if t["event"] == "move"}
    missed = []
    for row in scores["rows"]:
        if row["found"]:
            continue
        move = moves[row["index"]]
        start, end = move["start_s"], move["settle_s"] + MATCH_WINDOW_S
        if not any(a <= end and b >= start for a, b in said):
            missed.append(row["index"])
    wrong = [
        {"index": r["index"], "true": r["true_verdict"], "ruled": r["verdict"]}
        for r in scores["rows"]
        if r["found"] and r["verdict"] not in (r["true_verdict"], "review")
    ]
    return {"moves_missed": missed, "wrong_verdicts": wrong}


def format_live_benchmark(result: dict[str, Any]) -> str:
    lines = []
    for r in result["runs"]:
        s, silent = r["scores"], r["silent"]
        right = sum(n for pair, n in s["verdicts"].items() if pair.split("->")[0] == pair.split("->")[1])
        warned = [w for w in r["warnings"] if w["event"] == "behind"]
        lines += [
            f"{r['folder']} [{r['load']}, 1-min load average {r['load_average_1min_at_start']}]: {r['played_s']} s of"
            f" {'x'.join(map(str, r['frame_size']))} video at {r['fps']:g} fps, played in real time",
            f"  keeping up: decoded {r['frames_decoded']} of {r['frames_expected']} frames (passed {r['frames_passed']}"
            f" to catch up), the pipeline took {r['frames_processed']} (skipped {r['frames_skipped']}); the frame"
            f" looked at was at worst {r['behind_s_max']} s behind the camera (decoding:"
            f" {r['decoding_behind_s_max']} s), each frame done {r['processing_lag_s_max']} s at worst after it"
            f" arrived; readings {r['reading_ms_mean']} ms",
            f"  warnings shown: {len(warned)} (at worst {r['warned_after_s_max']} s behind when shown); camera never"
            f" looked at: {r['unread_s']} s in {r['unread_stretches']} stretch(es)",
            f"  ruling after the table settled (wall clock): median {r['wall_latency_s_median']} s,"
            f" max {r['wall_latency_s_max']} s",
            f"  moves: {s['true_moves']} true, found {s['moves_found']}, verdicts right {right}, right tables"
            f" {s['moves_with_right_tables']}, false reverts {s['false_reverts']}, phantom moves {s['phantom_moves']};"
            f" verdicts {s['verdicts']}",
            f"  silently: {len(silent['moves_missed'])} move(s) missed with no warning, {len(silent['wrong_verdicts'])}"
            " ruled wrong and not REVIEW",
        ]
    return "\n".join(lines)
