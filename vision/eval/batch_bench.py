"""``bench batch``: how fast ``batch`` analyses an archive, with 1 and 2 local workers and on a local Ray, and what
that says for N machines.

The same synthetic games (``synth-game`` folders: ``game.mp4`` with its ``truth.jsonl``) are analysed once per
configuration of :data:`RUNS`, each into a fresh folder, one ONNX Runtime thread per worker so that a worker is one
core: a local process pool of 1 worker (the baseline), of 2 workers, and Ray tasks on ``ray.init(num_cpus=2)``
(skipped, with the reason, where Ray is not installed). Per configuration, from ``batch``'s own summary:

- *video h per wall h*: video analysed / wall time of the batch (spawning the workers and loading their models
  included; starting Ray is not, it is reported apart);
- *video h per core-hour*: video analysed / (wall time x cores given: workers x threads); the scaling target is
  that this stays within 10 % from 1 to 2 workers;
- the *idle tail*: per worker, how long it had nothing left to do while another still ran (a game is never split,
  so with games of unequal work one worker finishes early even when the heaviest start first), and *video h per
  busy core-hour*: video / (wall time x cores less the idle tail's core time), what the workers gave while they
  had work. ``--copies N`` runs the bench on the first game N times over instead (equal lengths: the tail is only
  the last game's spread); the output says which it measured;
- the CPU seconds each worker process used (ONNX Runtime's threads included), over its own games' wall time and
  over the batch's, and *video h per CPU-hour* (video / all the workers' CPU time): what the machine's other load
  took shows as a share below 100 %;
- ratios against the 1-worker run of the same bench run, and whether every game's ``moves.json`` is the same in
  every configuration (the backend must not change a ruling).

The constants of the scaling model (:func:`scaling_model`) are measured in the same run: loading the models once
(per worker), decoding each video alone (OpenCV, every frame), writing the archive. The model is written out in
the text output and in vision/README.md ("Scaling a batch to N machines").

``python -m vision.eval.batch_bench --games DIR... --work DIR [--copies N]`` runs it without the command line; the
machine's load average before and after each run is recorded, because a shared machine's other jobs take cores from
it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.profiles import get_profile
from vision.session.batch import GameSpec, pool_runner, run_batch, video_seconds
from vision.session.common import Engine
from vision.synth.truth import load_truth


@dataclass(frozen=True)
class Run:
    """One configuration of the bench."""

    name: str
    backend: str
    """``pool`` or ``ray``."""
    workers: int
    threads: int = 1
    """ONNX Runtime threads per model in each worker."""

    @property
    def cores(self) -> int:
        return self.workers * self.threads


RUNS = (Run("pool x1", "pool", 1), Run("pool x2", "pool", 2), Run("ray local x2", "ray", 2))
"""The baseline first: ratios are against it."""
TARGET_RATIO = 0.9
"""Within 10 %: per core-hour from 1 to 2 workers, and Ray's video h per wall h against the pool's."""
BUSY_ENOUGH = 0.9
"""A worker on the CPU less than this share of the wall time shared its core with other jobs."""


def games_of(folders: list[Path], copies: int | None = None) -> list[GameSpec]:
    """A batch's games from ``synth-game`` folders (players and profile from each truth header); with ``copies``,
    the first folder's game that many times over (games of equal length, each under its own table)."""
    if copies:
        folders = [folders[0]] * copies
    games = []
    for number, folder in enumerate(folders, start=1):
        header, _ = load_truth(folder)
        games.append(
            GameSpec(
                video=str(folder / "game.mp4"),
                event="bench",
                round="1",
                table=str(number),
                rules=get_profile(header.get("profile", "official")),
                players=int(header["players"]),
            )
        )
    return games


def _load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def run_one(run: Run, games: list[GameSpec], out: Path, models: Path | None = None) -> dict[str, Any]:
    """One configuration over every game into a fresh ``out``: ``batch``'s summary reduced to the bench's row."""
    shutil.rmtree(out, ignore_errors=True)
    engine = Engine(models=None if models is None else str(models), threads=run.threads)
    ray_start_s = None
    if run.backend == "ray":
        import ray

        from vision.session.batch import ray_runner

        started = time.perf_counter()
        runner = ray_runner("local")
        ray_start_s = round(time.perf_counter() - started, 2)
    else:
        runner = pool_runner(run.workers)
    load_before = _load_average()
    try:
        summary = run_batch(
            games, out, workers=run.workers, engine=engine, runner=runner, backend=f"{run.backend}:{run.workers}"
        )
    finally:
        if run.backend == "ray":
            ray.shutdown()
    from vision.ui.archive import write_archive

    started = time.perf_counter()
    write_archive(out, summary)
    archive_s = time.perf_counter() - started
    done = [g for g in summary["games"] if g["status"] == "done"]
    video_s = sum(g["video_s"] or 0.0 for g in done)
    wall_s = summary["wall_s"]
    cpu = summary["cpu_s_by_worker"]
    cpu_s = sum(cpu.values())
    workers = worker_timeline(summary, run.workers)
    idle_tail_s = sum(w["idle_tail_s"] for w in workers.values())
    return {
        "name": run.name, "backend": run.backend, "workers": run.workers, "threads": run.threads, "cores": run.cores,
        "games": len(games), "done": len(done), "failed": summary["counts"]["failed"],
        "video_s": round(video_s, 1), "wall_s": wall_s, "ray_start_s": ray_start_s,
        "archive_s": round(archive_s, 3),
        "video_h_per_wall_h": _ratio(video_s, wall_s),
        "video_h_per_core_h": _ratio(video_s, wall_s * run.cores),
        "video_h_per_cpu_h": _ratio(video_s, cpu_s),
        "idle_tail_s": round(idle_tail_s, 2),
        "video_h_per_busy_core_h": _ratio(video_s, wall_s * run.cores - idle_tail_s * run.threads),
        "workers_timeline": workers,
        "cpu_s_by_worker": cpu,
        "worker_busy": {pid: round(s / wall_s, 2) for pid, s in cpu.items()} if wall_s else {},
        "load_average": [load_before, _load_average()],
        "moves": {g["label"]: _moves(out / g["label"]) for g in done},
    }  # fmt: skip


def worker_timeline(summary: dict[str, Any], workers: int) -> dict[str, dict[str, Any]]:
    """Per worker process of a batch (pid, in the order they started): its games, the CPU and wall seconds it spent
    on them, its CPU's share of that wall time, when it finished its last game (seconds from the batch's start) and
    its idle tail: how long it had nothing left to do while another worker still ran (the batch's last finish less
    its own). A worker the batch never used (fewer games than workers) idles from the batch's start to the end."""
    done = [g for g in summary["games"] if g["status"] == "done" and g.get("finished_at") is not None]
    if not done:
        return {}
    start = summary["started_at"]
    last = max(g["finished_at"] for g in done) - start
    timeline: dict[str, dict[str, Any]] = {}
    for game in sorted(done, key=lambda g: g["started_at"]):
        worker = timeline.setdefault(str(game["pid"]), {"games": [], "cpu_s": 0.0, "wall_s": 0.0, "finished_s": 0.0})
        worker["games"].append(game["label"])
        worker["cpu_s"] = round(worker["cpu_s"] + game["cpu_s"], 2)
        worker["wall_s"] = round(worker["wall_s"] + game["wall_s"], 2)
        worker["finished_s"] = round(max(worker["finished_s"], game["finished_at"] - start), 2)
    for pid, worker in timeline.items():
        worker["busy"] = round(worker["cpu_s"] / worker["wall_s"], 2) if worker["wall_s"] else None
        finished = max(g["finished_at"] for g in done if str(g["pid"]) == pid) - start
        worker["idle_tail_s"] = round(last - finished, 2) + 0.0  # + 0.0: never -0.0
    for unused in range(max(0, workers - len(timeline))):
        timeline[f"unused {unused + 1}"] = {"games": [], "cpu_s": 0.0, "wall_s": 0.0, "finished_s": 0.0,
                                            "busy": None, "idle_tail_s": round(last, 2)}  # fmt: skip
    return timeline


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b > 0 and a > 0 else None


def _moves(folder: Path) -> Any:
    try:
        return json.loads((folder / "moves.json").read_text())
    except (OSError, ValueError):
        return None


def model_load_s(models: Path | None = None, threads: int = 1) -> float:
    """Seconds to load the models once: what each new worker pays before its first game."""
    from vision.game.pipeline import pipeline_reader

    started = time.perf_counter()
    pipeline_reader(models, threads=threads)
    return round(time.perf_counter() - started, 2)


def decode_only(videos: list[str]) -> dict[str, Any]:
    """Every frame of every video decoded (OpenCV) and nothing else: the floor under an analysis's time."""
    import cv2

    wall, cpu, video_s, frames = 0.0, 0.0, 0.0, 0
    for video in videos:
        capture = cv2.VideoCapture(video)
        fps = capture.get(cv2.CAP_PROP_FPS) or 0.0
        started, cpu_started = time.perf_counter(), time.process_time()
        count = 0
        while capture.grab():
            capture.retrieve()
            count += 1
        wall += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        capture.release()
        frames += count
        video_s += count / fps if fps else 0.0
    return {
        "video_s": round(video_s, 1), "frames": frames, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "video_h_per_wall_h": _ratio(video_s, wall), "video_h_per_cpu_h": _ratio(video_s, cpu),
    }  # fmt: skip


def run_batch_benchmark(
    folders: list[Path],
    work: Path,
    *,
    models: Path | None = None,
    runs: tuple[Run, ...] = RUNS,
    copies: int | None = None,
) -> dict[str, Any]:
    """Every configuration of ``runs`` over the same games (see the module docstring); the first is the baseline.
    With ``copies``: the first folder's game that many times (equal lengths) instead of every folder's."""
    games = games_of(folders, copies)
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    for run in runs:
        if run.backend == "ray":
            try:
                import ray  # noqa: F401
            except ImportError:
                skipped[run.name] = "Ray is not installed (pip install 'rummikub-referee[cluster]')"
                continue
        rows.append(run_one(run, games, work / run.name.replace(" ", "-"), models))
    base = rows[0]
    for row in rows:
        row["vs_baseline"] = {
            key: _ratio(row.get(key) or 0.0, base.get(key) or 0.0)
            for key in ("video_h_per_wall_h", "video_h_per_core_h", "video_h_per_busy_core_h", "video_h_per_cpu_h")
        }
        row["same_moves_as_baseline"] = row["moves"] == base["moves"]
    constants = {
        "model_load_s": model_load_s(models),
        "decode": decode_only([g.video for g in games]),
        "cores_here": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
    }
    lengths = [round(video_seconds(g.video), 1) for g in games]
    result = {
        "games": [g.video for g in games], "game_video_s": lengths, "equal_lengths": bool(copies),
        "rows": rows, "skipped": skipped, "constants": constants,
    }  # fmt: skip
    result["targets"] = targets(rows)
    result["scaling_model"] = scaling_model(result)
    for row in rows:
        row.pop("moves")
    return result


def targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets from the rows: None where a configuration is missing."""
    by_name = {r["name"]: r for r in rows}
    pool1, pool2, ray2 = by_name.get("pool x1"), by_name.get("pool x2"), by_name.get("ray local x2")
    per_core = _ratio_of(pool2, pool1, "video_h_per_core_h")
    per_cpu = _ratio_of(pool2, pool1, "video_h_per_cpu_h")
    per_busy_core = _ratio_of(pool2, pool1, "video_h_per_busy_core_h")
    ray_vs_pool = _ratio_of(ray2, pool2, "video_h_per_wall_h")
    ray_vs_pool_cpu = _ratio_of(ray2, pool2, "video_h_per_cpu_h")
    return {
        "per_core_h_2_vs_1_workers": per_core,
        "per_core_h_within_10pct": _within(per_core),
        "per_busy_core_h_2_vs_1_workers": per_busy_core,
        "per_busy_core_h_within_10pct": _within(per_busy_core),
        "per_cpu_h_2_vs_1_workers": per_cpu,
        "per_cpu_h_within_10pct": _within(per_cpu),
        "ray_vs_pool_per_wall_h": ray_vs_pool,
        "ray_within_10pct": _within(ray_vs_pool),
        "ray_vs_pool_per_cpu_h": ray_vs_pool_cpu,
        "ray_within_10pct_per_cpu_h": _within(ray_vs_pool_cpu),
        "least_busy_worker": min((b for r in rows for b in _busy(r)), default=None),
        "every_game_done_once": all(r["done"] == r["games"] and r["failed"] == 0 for r in rows),
        "same_moves_everywhere": all(r["same_moves_as_baseline"] for r in rows),
    }


def _busy(row: dict[str, Any]) -> list[float]:
    """Each worker's CPU over the wall time of its own games (its idle tail left out), or over the batch's."""
    timeline = row.get("workers_timeline")
    if timeline:
        return [w["busy"] for w in timeline.values() if w["busy"] is not None]
    return list(row.get("worker_busy", {}).values())


def _within(ratio: float | None) -> bool | None:
    """Within 10 % (either way: a faster run passes too)."""
    return None if ratio is None else ratio >= TARGET_RATIO


def _ratio_of(row: dict[str, Any] | None, base: dict[str, Any] | None, key: str) -> float | None:
    return _ratio(row.get(key) or 0.0, base.get(key) or 0.0) if row and base else None


def scaling_model(result: dict[str, Any]) -> dict[str, Any]:
    """The measured constants of the scaling model (vision/README.md): per core, video analysed per hour ``r``
    (the slowest row's video h per CPU-hour: a worker that has its core); per worker, the model load ``L``; per
    video hour, the decode's CPU share; per batch, the archive. A batch of ``V`` video hours on ``N`` machines of
    ``c`` cores then takes about ``V / (N c r) + L + archive`` hours: the first term shrinks with N, the others
    stay."""
    rows = result["rows"]
    # a worker given a whole core analyses at its per-CPU-hour rate; the slowest row's, to be safe (on a shared
    # machine the per-core-hour of the wall clock also counts what the other jobs took)
    best = min((r["video_h_per_cpu_h"] for r in rows if r["video_h_per_cpu_h"]), default=0.0)
    decode = result["constants"]["decode"]
    decode_cpu_share = None
    analysed_cpu = [r["video_h_per_cpu_h"] for r in rows if r["video_h_per_cpu_h"]]
    if decode["video_h_per_cpu_h"] and analysed_cpu:
        # CPU per video hour: decoding alone / the whole analysis (the part no faster model can remove)
        decode_cpu_share = round(max(analysed_cpu) / decode["video_h_per_cpu_h"], 3)
    return {
        "video_h_per_core_h": best,
        "model_load_s_per_worker": result["constants"]["model_load_s"],
        "decode_share_of_analysis_cpu": decode_cpu_share,
        "archive_s": max((r["archive_s"] for r in rows), default=None),
        "predicted_video_h_per_wall_h": {f"{n} x 2 cores": round(n * 2 * best, 1) for n in (1, 4, 16, 64)},
    }


def format_batch_benchmark(result: dict[str, Any]) -> str:
    rows = result["rows"]
    lengths = result.get("game_video_s") or []
    if result.get("equal_lengths"):
        what = f"{len(result['games'])} copies of one game ({lengths[0] if lengths else '?'} s each: equal lengths)"
    else:
        what = f"{len(result['games'])} games ({', '.join(f'{s:g}' for s in lengths)} s; started largest file first)"
    head = (
        f"{'run':<14}{'games':>6}{'video s':>9}{'wall s':>8}{'video h/wall h':>16}{'per core-h':>12}"
        f"{'idle tail s':>13}{'per busy core-h':>17}{'per CPU-h':>11}{'x base (wall, core, busy core, CPU)':>37}"
    )
    lines = [f"bench batch: {what}, one ONNX Runtime thread per worker", head]
    for r in rows:
        base = r["vs_baseline"]
        lines.append(
            f"{r['name']:<14}{r['done']:>3}/{r['games']:<2}{r['video_s']:>9.1f}{r['wall_s']:>8.1f}"
            f"{r['video_h_per_wall_h'] or 0:>16.2f}{r['video_h_per_core_h'] or 0:>12.2f}"
            f"{r.get('idle_tail_s', 0):>13.1f}{r.get('video_h_per_busy_core_h') or 0:>17.2f}"
            f"{r['video_h_per_cpu_h'] or 0:>11.2f}"
            f"{base['video_h_per_wall_h'] or 0:>16.2f}, {base['video_h_per_core_h'] or 0:.2f},"
            f" {base.get('video_h_per_busy_core_h') or 0:.2f}, {base['video_h_per_cpu_h'] or 0:.2f}"
            + (f"  (Ray started in {r['ray_start_s']:.1f} s)" if r["ray_start_s"] is not None else "")
            + f"  load {r['load_average'][0]}->{r['load_average'][1]}"
        )  # fmt: skip
        for pid, w in (r.get("workers_timeline") or {}).items():
            busy = "" if w["busy"] is None else f" ({100 * w['busy']:.0f} % of its wall time)"
            lines.append(
                f"{'':<14}worker {pid}: {len(w['games'])} games, CPU {w['cpu_s']:.1f} s over {w['wall_s']:.1f} s{busy},"
                f" done at {w['finished_s']:.1f} s, idle tail {w['idle_tail_s']:.1f} s"
            )  # fmt: skip
    for name, why in result["skipped"].items():
        lines.append(f"{name:<14}skipped: {why}")
    t = result["targets"]
    lines.append(
        f"targets (>= {TARGET_RATIO}): 2 vs 1 workers per core-hour {t['per_core_h_2_vs_1_workers']}"
        f" ({_yes(t['per_core_h_within_10pct'])}), per busy core-hour (idle tail left out)"
        f" {t['per_busy_core_h_2_vs_1_workers']} ({_yes(t['per_busy_core_h_within_10pct'])}),"
        f" per CPU-hour {t['per_cpu_h_2_vs_1_workers']}"
        f" ({_yes(t['per_cpu_h_within_10pct'])}); Ray vs pool per wall hour {t['ray_vs_pool_per_wall_h']}"
        f" ({_yes(t['ray_within_10pct'])}), per CPU-hour {t['ray_vs_pool_per_cpu_h']}"
        f" ({_yes(t['ray_within_10pct_per_cpu_h'])}); every game done once: {_yes(t['every_game_done_once'])};"
        f" same moves in every run: {_yes(t['same_moves_everywhere'])}"
    )
    most_workers = max((r["workers"] for r in rows), default=1)
    if len(result["games"]) < 2 * most_workers:
        lines.append(
            f"note: {len(result['games'])} games for up to {most_workers} workers: a worker idles once the games run"
            " out (a game is never split), so the runs with more workers are measured on a tail, not on throughput"
        )
    least = t["least_busy_worker"]
    if least is not None and least < BUSY_ENOUGH:
        lines.append(
            f"note: a worker had its CPU only {100 * least:.0f} % of its games' wall time (other jobs on this machine):"
            " per core-hour and per wall hour measure the machine's load; per CPU-hour measures batch"
        )
    c, m = result["constants"], result["scaling_model"]
    d = c["decode"]
    lines.append(
        f"constants: model load {c['model_load_s']:.2f} s per worker; decode alone {d['video_h_per_wall_h']} video h"
        f" per wall h, {d['video_h_per_cpu_h']} per CPU-h ({m['decode_share_of_analysis_cpu']} of the analysis's"
        f" CPU); archive {m['archive_s']} s; {c['cores_here']} cores here"
    )
    predicted = ", ".join(f"{k}: {v}" for k, v in m["predicted_video_h_per_wall_h"].items())
    lines.append(
        f"scaling model: wall h = V / (N c {m['video_h_per_core_h']}) + {m['model_load_s_per_worker']} s model load"
        f" + archive; video h per wall h for N machines ({predicted}) while storage keeps up"
    )
    return "\n".join(lines)


def _yes(flag: bool | None) -> str:
    return "n/a" if flag is None else "yes" if flag else "NO"


def bench_suite(args: argparse.Namespace) -> tuple[Any, str]:
    """``bench batch``: ``--games`` synth-game folders, or ``--inputs`` (default 4) games of ``--minutes`` made in
    ``cache/bench-batch``."""
    from vision.eval.pipeline_bench import generate_games

    if args.games:
        folders = [Path(p) for p in args.games]
    else:
        folders = generate_games(Path("cache") / "bench-batch", args.inputs or 4, 3000 + args.seed, args.minutes)
    copies = getattr(args, "copies", None)
    result = run_batch_benchmark(folders, Path("cache") / "bench-batch-out", copies=copies)
    return result, format_batch_benchmark(result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", nargs="+", type=Path, required=True, metavar="DIR", help="synth-game folders")
    parser.add_argument("--work", type=Path, required=True, metavar="DIR", help="where the batches are written")
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the result as JSON")
    parser.add_argument("--copies", type=int, metavar="N", help="the first game N times over (equal lengths)")
    args = parser.parse_args(argv)
    result = run_batch_benchmark(args.games, args.work, models=args.models, copies=args.copies)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    print(format_batch_benchmark(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
