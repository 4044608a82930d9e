"""``bench`` with every suite: the rules' (``rules``) and the camera's (``recognition``, ``colour``, ``pipeline``,
``live``, ``station``, ``batch``, ``decode``). Each suite imports its benchmark when it runs."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from referee import cli as rules_cli
from referee.commands import bench as rules_bench


def bench_recognition(args: argparse.Namespace) -> tuple[Any, str]:
    from vision.eval.benchmark import bench_suite

    return bench_suite(args)


def bench_colour(args: argparse.Namespace) -> tuple[Any, str]:
    from vision.eval.colour_bench import bench_suite

    return bench_suite(args)


def bench_pipeline(args: argparse.Namespace) -> tuple[Any, str]:
    from vision.eval.pipeline_bench import format_pipeline_benchmark, generate_games, run_pipeline_benchmark

    if args.games:
        folders = [Path(p) for p in args.games]
    else:
        root = Path("cache") / "bench-pipeline"
        folders = generate_games(root, args.inputs or 3, 1000 + args.seed, args.minutes, staged=True)
    result = run_pipeline_benchmark(
        folders, Path("cache") / "bench-pipeline-out", progress=not args.json, enrol=args.enrol is not None,
        venue_camera=args.enrol or "grid",
    )  # fmt: skip
    return result, format_pipeline_benchmark(result)


def bench_live(args: argparse.Namespace) -> tuple[Any, str]:
    from vision.eval.live_bench import format_live_benchmark, run_live_benchmark
    from vision.eval.pipeline_bench import generate_games
    from vision.game.pipeline import pipeline_reader

    folders = [Path(p) for p in args.games] if args.games else []
    if not folders:
        folders = generate_games(Path("cache") / "bench-pipeline", args.inputs or 1, 1000 + args.seed, args.minutes)
    reader = pipeline_reader(None)
    results = [
        run_live_benchmark(folder, Path("cache") / "bench-live-out" / folder.name, reader, minutes=args.play_minutes)
        for folder in folders
    ]
    return results, "\n\n".join(format_live_benchmark(r) for r in results)


def bench_station(args: argparse.Namespace) -> tuple[Any, str]:
    # looked up when `bench station` runs: it needs the browser clients
    suite: tuple[Any, str] = importlib.import_module("vision.eval.station_bench").bench_suite(args)
    return suite


def bench_batch(args: argparse.Namespace) -> tuple[Any, str]:
    # batch's throughput with 1 and 2 workers and on a local Ray (vision/eval/batch_bench.py)
    suite: tuple[Any, str] = importlib.import_module("vision.eval.batch_bench").bench_suite(args)
    return suite


def bench_decode(args: argparse.Namespace) -> tuple[Any, str]:
    # plain decoding vs analyze with each decoder, same run (vision/eval/decode_bench.py)
    suite: tuple[Any, str] = importlib.import_module("vision.eval.decode_bench").bench_suite(args)
    return suite


SUITES: Mapping[str, rules_bench.Suite] = {
    **rules_bench.SUITES,
    "recognition": bench_recognition,
    "colour": bench_colour,
    "pipeline": bench_pipeline,
    "live": bench_live,
    "station": bench_station,
    "batch": bench_batch,
    "decode": bench_decode,
}


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", nargs="+", metavar="DIR", help="pipeline: synth-game folders (default: generate)")
    parser.add_argument(
        "--minutes", type=rules_cli.POSITIVE, default=6.0, help="pipeline, live: minutes per generated game (default 6)"
    )
    parser.add_argument(
        "--enrol", nargs="?", const="grid", choices=("grid", "film"), metavar="CAMERA",
        help="pipeline: one more row, each game read with the models its venue enrolled from grid photos of its set,"
        " taken by the grid camera (grid, the default) or at the film's scale (film)",
    )  # fmt: skip
    parser.add_argument(
        "--play-minutes", type=rules_cli.POSITIVE, metavar="M", help="live: play only the first M minutes of each game"
    )
    parser.add_argument(
        "--copies", type=rules_cli.COUNT, metavar="N",
        help="batch: the first of --games N times over (games of equal length: no short game's idle tail)",
    )  # fmt: skip


BENCH = rules_bench.command(
    SUITES,
    "Benchmark a part of the referee: rules (the solver against an ILP reference in the same run); recognition,"
    " colour, pipeline (rulings against synthetic games' truth), live (real-time playback), station (browser-like"
    " clients), batch (games per hour with 1 and 2 workers and on Ray), decode (analyze against plain decoding of"
    " the same video, and its H.264 copy).",
    _arguments,
)
