"""``bench decode``: is ``analyze`` as fast as merely decoding the video? Both timed in the same run.

For each synthetic game (a ``synth-game`` folder: ``game.mp4`` and ``truth.jsonl``), and with ``h264`` for a copy of
it as a phone writes one (H.264 by libx264, a keyframe every second, x264's B-frames: :func:`h264_copy`), in turn:

- **plain decode**, the reference: every frame read with OpenCV (``read()``, decoded and converted to BGR, as any
  OpenCV program reads a video), and every frame decoded by PyAV without conversion (the decoder's own limit);
- **analyze** with each decoder of :data:`DECODERS`: ``opencv`` (every frame decoded, samples converted) and
  ``pyav`` (:mod:`vision.runtime.decode`: keyframes only while the table is still, disposable frames skipped),
  with the models loaded once beforehand (loading them is not the video's) and the play area found (``auto``,
  the default: the user's path) or given (``truth``, labelled so in the output); with ``baseline`` also
  ``pyav-dense``: PyAV decoding every busy sample (:attr:`~vision.session.analyze.AnalyzeOptions.hands_keyframes`
  off: not keyframes only while an arm stays over the table), and ``pyav-reread``: PyAV with every reading made
  (:attr:`~vision.game.pipeline.PipelineConfig.reuse_unchanged` off: no reading of an unchanged picture reused, no
  verification skipped), what each saves, measured in the same run.

Each is timed in wall seconds and in the CPU seconds of this process (decoder and ONNX Runtime threads included):
on a machine shared with other jobs the wall clock also counts what they took, so both speeds are given, as *x real
time* (video seconds per second) and as a ratio to plain OpenCV decoding of the same video in the same run (the
target: analyze at >= 80 % of it). Each analysis is scored against the truth as ``bench pipeline`` scores
(moves found, with the right tables, verdicts, false reverts), so a decoder that skips frames shows what it costs.
The load average before and after each step is recorded.

``python -m vision.eval.decode_bench --games DIR... [--h264] [--work DIR]`` runs it without the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from vision.eval.pipeline_bench import score_game, summarise, truth_calibration
from vision.synth.truth import load_truth

DECODERS = ("opencv", "pyav")
TARGET_SHARE = 0.8
"""analyze's speed as a share of plain decoding's (OpenCV, same video, same run) that the issue asks for."""
H264_KEYFRAME_S = 1.0
"""A keyframe every second in the H.264 copies, as phones write them."""


def h264_copy(video: Path, out: Path, *, crf: int = 23) -> Path:
    """``video`` re-encoded as H.264 (libx264, ``veryfast``, a keyframe every :data:`H264_KEYFRAME_S`, x264's own
    B-frames) into ``out``; made once and reused."""
    import av

    if out.is_file() and out.stat().st_size:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".partial.mp4")
    with av.open(str(video)) as source, av.open(str(partial), "w") as target:
        stream = source.streams.video[0]
        stream.thread_type = "AUTO"
        rate = stream.average_rate or Fraction(30)
        encoder = target.add_stream("libx264", rate=rate)
        encoder.width, encoder.height, encoder.pix_fmt = stream.width, stream.height, "yuv420p"
        gop = str(max(1, round(float(rate) * H264_KEYFRAME_S)))
        encoder.options = {"preset": "veryfast", "crf": str(crf), "g": gop, "keyint_min": gop}
        for number, frame in enumerate(source.decode(stream)):
            frame.pts, frame.time_base = number, Fraction(1) / rate
            frame.pict_type = 0  # the source's own I-frames would force keyframes (x264 honours a frame's type)
            target.mux(encoder.encode(frame))
        target.mux(encoder.encode(None))
    partial.replace(out)
    return out


def plain_decode_opencv(video: Path) -> int:
    """Every frame read (decoded and converted to BGR) with OpenCV; the frames read."""
    import cv2

    capture = cv2.VideoCapture(str(video))
    frames = 0
    while capture.read()[0]:
        frames += 1
    capture.release()
    return frames


def plain_decode_pyav(video: Path) -> int:
    """Every frame decoded by PyAV with the threads ``analyze``'s decoder runs (:data:`decode.THREAD_TYPE`), none
    converted; the frames decoded."""
    import av

    from vision.runtime.decode import THREAD_TYPE

    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        stream.thread_type = THREAD_TYPE
        return sum(1 for _ in container.decode(stream))


def _load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def timed(work: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
    """``work()``'s result and its wall and CPU seconds (this process, all threads), with the load around it."""
    load_before = _load()
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    timing = {
        "wall_s": round(time.perf_counter() - wall, 2),
        "cpu_s": round(time.process_time() - cpu, 2),
        "load_before": load_before,
        "load_after": _load(),
    }
    return result, timing


def bench_video(
    folder: Path,
    video: Path,
    work: Path,
    reader: Any,
    *,
    calibration: str = "auto",
    label: str = "",
    baseline: bool = False,
) -> dict[str, Any]:
    """One video of a game folder: plain decoding and each decoder's analysis (``baseline``: and PyAV's decoding
    every busy sample, and making every reading), timed and scored."""
    from vision.game.gamelog import GameSetup
    from vision.session.analyze import AnalyzeOptions

    header, truth = load_truth(folder)
    frames, opencv = timed(lambda: plain_decode_opencv(video))
    pyav_frames, pyav = timed(lambda: plain_decode_pyav(video))
    fps = float(header.get("fps") or 30.0)
    video_s = frames / fps
    row: dict[str, Any] = {
        "game": folder.name,
        "video": label or video.name,
        "frames": frames,
        "video_s": round(video_s, 2),
        "size": header.get("size"),
        "decode": {"opencv": {**opencv, "frames": frames}, "pyav": {**pyav, "frames": pyav_frames}},
        "analyze": {},
    }
    for decoder in DECODERS:
        out = work / f"{folder.name}-{label or 'mp4'}-{decoder}"
        how = "auto" if calibration == "auto" else str(truth_calibration(header, out))
        setup = GameSetup.of(header["profile"], header["players"])
        options = AnalyzeOptions(setup=setup, calibration=how, progress=False, decoder=decoder)
        row["analyze"][decoder] = _analysis(video, out, options, reader, truth)
    if baseline:  # the same PyAV analysis decoding every busy sample, and with every reading made
        from dataclasses import replace

        dense = replace(options, decoder="pyav", hands_keyframes=False)
        reread = replace(options, decoder="pyav", config=replace(options.config, reuse_unchanged=False))
        for name, variant in (("pyav-dense", dense), ("pyav-reread", reread)):
            out = work / f"{folder.name}-{label or 'mp4'}-{name}"
            row["analyze"][name] = _analysis(video, out, variant, reader, truth)
    _ratios(row)
    return row


def _analysis(video: Path, out: Path, options: Any, reader: Any, truth: list[dict[str, Any]]) -> dict[str, Any]:
    """``analyze`` of ``video`` into ``out``, timed and scored against the truth."""
    from vision.game.gamelog import read_log
    from vision.session.analyze import analyze_video

    summary, timing = timed(lambda: analyze_video(video, out, options, reader, overwrite=True))
    scores = score_game(truth, read_log(out / "game-log.jsonl"))
    moves = json.loads((out / "moves.json").read_text())
    scored = summarise([scores])
    pipeline = summary["pipeline"]
    return {
        **timing,
        "samples": pipeline["samples"],
        "readings": pipeline["readings"],
        "readings_reused": pipeline.get("readings_reused", 0),
        "verifies_skipped": pipeline.get("verifies_skipped", 0),
        "decode": summary.get("decode"),
        "moves_found": scored["moves_found"],
        "true_moves": scored["true_moves"],
        "right_tables": scored["moves_with_right_tables"],
        "false_reverts": scored["false_reverts"],
        "phantom_moves": scored["phantom_moves"],
        "verdicts": scored["verdicts"],
        "clean_moves_ruled_review": _clean_reviews(scores),
        "moves": [_move_key(m) for m in moves],
        "uncertain": [_uncertain(m) for m in moves],
    }


def _clean_reviews(scores: dict[str, Any]) -> int:
    """Moves the truth calls clean that were found and ruled REVIEW."""
    return sum(1 for r in scores["rows"] if r["found"] and r["true_verdict"] == "ok" and r["verdict"] == "review")


def _move_key(move: dict[str, Any]) -> list[Any]:
    """What must not change with the decoder: each move's player, tables (tiles and sets, not the boxes' pixels)
    and verdict with its codes (not its time to the frame)."""
    from referee.table import Table

    ruling = move["ruling"]
    tables = [_table_key(Table.from_json(move[side])) for side in ("before", "after")]
    return [move["player"], tables, ruling["verdict"], sorted(v["code"] for v in ruling["violations"])]


def _table_key(table: Any) -> str:
    """A table's sets in a fixed order, each set's tiles as laid, then its loose tiles: the order a layout lists its
    sets in follows where each set lies, which two sets side by side can swap from one frame to the next (game-1000's
    H.264 copy: four moves listed two sets the other way round with the other decoder, the same tables)."""
    sets = sorted(f"[{tile_set}]" for tile_set in table.sets)
    loose = sorted(str(tile) for tile in table.loose)
    return " ".join([*sets, *(["loose: " + " ".join(loose)] if loose else [])])


def _uncertain(move: dict[str, Any]) -> list[list[str]]:
    """The tiles each of a move's tables marks uncertain (a reading of another frame may differ there), each named
    with its set (not its set's place in the listing, which :func:`_table_key` leaves aside too)."""
    from referee.table import LOOSE, Table

    def named(table: Table) -> list[str]:
        return sorted(
            f"loose: {table.loose[j]}" if i == LOOSE else f"[{table.sets[i]}] {table.sets[i].tiles[j]}"
            for i, j in table.uncertain
        )

    return [named(Table.from_json(move[side])) for side in ("before", "after")]


def _ratios(row: dict[str, Any]) -> None:
    """Speeds (x real time) and shares of plain OpenCV decoding's speed, on the wall clock and on CPU time."""
    video_s = row["video_s"]
    reference = row["decode"]["opencv"]
    for timing in [*row["decode"].values(), *row["analyze"].values()]:
        for clock in ("wall", "cpu"):
            seconds = timing[f"{clock}_s"]
            timing[f"x_real_time_{clock}"] = round(video_s / seconds, 2) if seconds else None
            base = reference[f"{clock}_s"]
            timing[f"share_of_decode_{clock}"] = round(base / seconds, 3) if seconds else None
    analyses = row["analyze"]
    row["same_moves"] = len({json.dumps(a["moves"]) for a in analyses.values()}) == 1
    row["same_uncertain_tiles"] = len({json.dumps(a["uncertain"]) for a in analyses.values()}) == 1


def run_decode_benchmark(
    folders: list[Path],
    work: Path,
    *,
    h264: bool = False,
    calibration: str = "auto",
    models: Path | None = None,
    baseline: bool = False,
) -> dict[str, Any]:
    """Every game (and with ``h264`` its H.264 copy) through :func:`bench_video`; the rows and the targets read
    from them."""
    from vision.game.pipeline import pipeline_reader

    reader = pipeline_reader(models)
    rows = []
    for folder in folders:
        header, _ = load_truth(folder)
        video = folder / header.get("video", "game.mp4")
        rows.append(bench_video(folder, video, work, reader, calibration=calibration, label="mp4", baseline=baseline))
        if h264:
            copy = h264_copy(video, work / "h264" / f"{folder.name}.mp4")
            rows.append(
                bench_video(folder, copy, work, reader, calibration=calibration, label="h264", baseline=baseline)
            )
    return {"rows": rows, "calibration": calibration, "target_share": TARGET_SHARE}


def format_decode_benchmark(result: dict[str, Any]) -> str:
    lines = [
        f"plain decode vs analyze, same run (play area: {_PLAY_AREA[result['calibration']]});"
        " x real time on the wall clock"
        " [on CPU time]; share = plain OpenCV decode time / this time",
    ]
    for row in result["rows"]:
        lines.append(f"{row['game']} ({row['video']}, {row['video_s']} s, {row['frames']} frames):")
        for name, timing in row["decode"].items():
            lines.append(f"  decode {name:<7} {_speed(timing)}")
        for name, timing in row["analyze"].items():
            stats = timing.get("decode") or {}
            decoded = f", decoded {stats['decoded']} of {row['frames']} frames" if "decoded" in stats else ""
            if stats.get("hand_probes"):
                decoded += f" ({stats['hand_probes']} keyframes under hands, {stats['hand_probes_left']} gone)"
            reused = timing.get("readings_reused", 0) + timing.get("verifies_skipped", 0)
            lines.append(
                f"  analyze {name:<6} {_speed(timing)}; {timing['samples']} samples, {timing['readings']} readings"
                f" ({reused} not made again){decoded}; moves found {timing['moves_found']}/{timing['true_moves']},"
                f" right tables {timing['right_tables']}, false reverts {timing['false_reverts']},"
                f" phantoms {timing['phantom_moves']},"
                f" clean moves ruled review {timing.get('clean_moves_ruled_review')}"
            )
        lines.append(
            f"  same moves, tables and verdicts in every analysis: {'yes' if row['same_moves'] else 'NO'}"
            f" (tiles marked uncertain: {'the same' if row['same_uncertain_tiles'] else 'not the same'})"
        )
    return "\n".join(lines)


_PLAY_AREA = {"auto": "found, as analyze finds it", "truth": "the TRUE one, handed to the pipeline by the benchmark"}


def _speed(timing: dict[str, Any]) -> str:
    return (
        f"{timing['wall_s']:>7.1f} s = {timing['x_real_time_wall']:>5}x [{timing['x_real_time_cpu']}x],"
        f" share {timing['share_of_decode_wall']:.2f} [{timing['share_of_decode_cpu']:.2f}]"
        f" (load {timing['load_before']}->{timing['load_after']})"
    )


def bench_suite(args: argparse.Namespace) -> tuple[Any, str]:
    """``bench decode``: ``--games`` synth-game folders, or ``--inputs`` (default 1) games of ``--minutes`` made in
    ``cache/bench-pipeline``; each also as H.264, read the user's way (the play area found, not given), and again
    decoding every busy sample and making every reading (``baseline``: what each saves, in the same run)."""
    from vision.eval.pipeline_bench import generate_games

    if args.games:
        folders = [Path(p) for p in args.games]
    else:
        folders = generate_games(Path("cache") / "bench-pipeline", args.inputs or 1, 1000 + args.seed, args.minutes)
    result = run_decode_benchmark(folders, Path("cache") / "bench-decode", h264=True, calibration="auto", baseline=True)
    return result, format_decode_benchmark(result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.eval.decode_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", type=Path, required=True, metavar="DIR", help="synth-game folders")
    parser.add_argument("--work", type=Path, default=Path("cache") / "bench-decode", help="analyses and H.264 copies")
    parser.add_argument("--h264", action="store_true", help="also each game re-encoded as H.264 (1 s keyframes)")
    parser.add_argument(
        "--calibration",
        choices=("truth", "auto"),
        default="auto",
        help="the play area found as analyze finds it (auto, the default: the user's path) or the true one handed over",
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also analyze with PyAV decoding every busy sample, and making every reading (none reused)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run_decode_benchmark(
        args.games, args.work, h264=args.h264, calibration=args.calibration, baseline=args.baseline
    )
    print(json.dumps(result, indent=1) if args.json else format_decode_benchmark(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
