"""A recorded game, as fast as it can be read: the move log and the rulings of every move.

The video is sampled at the pipeline's rate (frames in between are skipped without being converted), more
sparsely while the table is still (with PyAV: at keyframes while it is still or an arm stays over it), and every
event goes to ``DIR/game-log.jsonl`` as it happens; at the end ``DIR/moves.json`` holds the moves with their
rulings and ``DIR/summary.json`` the counts and the speed.

``DIR`` must be empty (or new) unless ``overwrite`` is given; then only what an analysis writes there is
replaced (:data:`ANALYSIS_FILES` and the snapshots in ``frames/``), never anything else. A stop request (Ctrl-C,
SIGTERM: see :mod:`vision.session.stopping`) ends the analysis between frames with everything written so far.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from referee.events import amendments, last_rulings
from vision.game.gamelog import GameLog
from vision.game.pipeline import TablePipeline
from vision.runtime.capture import CaptureStats, Frame
from vision.runtime.decode import HandsOver, SparseVideo, VideoSource, sample
from vision.runtime.progress import ProgressBar
from vision.runtime.reader import Reader
from vision.session.common import END_OF_VIDEO, GameOptions, calibrate_for
from vision.session.driver import GameSession, Line, Listener, StopCheck
from vision.ui.report import REPORT_NAME

STILL_SAMPLE_HZ = 3.0
"""Sampling rate while the table is still and unchanged (the pipeline's own rate otherwise)."""
LOG_NAME = "game-log.jsonl"


@dataclass(frozen=True, kw_only=True)
class AnalyzeOptions(GameOptions):
    progress: bool = True
    """A progress bar on standard error (redrawn in place on a terminal; elsewhere a line every 10 %)."""
    decoder: str = "auto"
    """"pyav" (keyframes only while the table is still or an arm stays over it: :mod:`vision.runtime.decode`), "opencv"
    (every frame decoded), or "auto": PyAV where it is installed."""
    hands_keyframes: bool = True
    """With PyAV, keyframes only while an arm stays over the table (:class:`vision.runtime.decode.HandsOver`);
    False: every busy sample decoded, as before (``bench decode --baseline`` measures both in one run)."""


class OutputFolderError(ValueError):
    """An output folder that cannot take an analysis (not empty without ``overwrite``, or not a folder)."""


def analyze_video(
    video: str | Path,
    out: str | Path,
    options: AnalyzeOptions,
    reader: Reader,
    *,
    overwrite: bool = False,
    stop: StopCheck | None = None,
    on_event: Listener | None = None,
) -> dict[str, Any]:
    """Analyse ``video`` into ``out``; returns the summary (also written to ``summary.json``).

    ``on_event`` hears every event as it is logged (a ruling as soon as the move is ruled, long before the end of a
    long video); the progress bar steps aside for what it prints.

    ``out`` is created, or must be empty unless ``overwrite`` (then a previous analysis there is replaced and
    nothing else is touched); it is checked before the video is opened, and nothing in it changes until the video
    has given its first frame. The summary's ``reason`` says why it ended (``"end of the video"``, or the stop
    reason) and ``damage`` how much of the video could not be decoded.
    """
    from vision.runtime.capture import CaptureError, redact
    from vision.runtime.decode import open_video

    out = Path(out)
    check_output_folder(out, overwrite=overwrite)
    # a game that cannot be (a bad time limit) fails before the video is opened
    setup = options.setup
    keeper = setup.keeper()
    started = time.perf_counter()
    source = open_video(video, decoder=options.decoder)
    try:
        first = source.read()
        if first is None:
            raise CaptureError(f"{video}: no frame could be read")
        calibration = calibrate_for(first.image, options.calibration)
        out.mkdir(parents=True, exist_ok=True)
        log_path = out / LOG_NAME
        remove_previous_analysis(out)
        about = {"source": redact(str(video)), "mode": "analyze", "fps": source.fps, "size": list(source.size)}
        events: list[Line] = []
        total = source.frame_count or 0
        bar = ProgressBar(total) if options.progress and total else None
        with GameLog.create(log_path, setup, about, sync=False) as log:
            snapshots = Snapshots(out / SNAPSHOT_DIR)

            def snapshot(line: Line) -> None:
                if line["event"] in SNAPSHOT_EVENTS and session.current is not None:
                    line["snapshot"] = snapshots.save(session.current.image, session.current.index, out)

            session = GameSession(reader, log, keeper, config=options.config, decorate=snapshot)
            session.subscribe(events.append)
            if on_event is not None:
                session.subscribe(_beside(bar, on_event))
            pipeline = session.begin(first, calibration, source.size, time_s=0.0, frame=0)
            fps = source.fps or 30.0
            try:
                reason = session.play(_sampled(source, first, pipeline, options, bar), stop or _go_on) or END_OF_VIDEO
            finally:
                if bar is not None:
                    bar.close()
            duration = (first.time_s if session.watched_s is None else session.watched_s) + 1.0 / fps
            damage = source.damage()
            session.end(duration, {"reason": reason, "moves": keeper.moves, "capture": _stats_json(source.stats),
                                   "damage": damage.to_json(), "pipeline": pipeline.stats.to_json()})  # fmt: skip
    finally:
        source.close()
    seconds = time.perf_counter() - started
    lines = [e for e in events if e["event"] == "move"]
    moves = last_rulings(lines)  # each move once, as last ruled: an amendment replaces the move it amends
    (out / MOVES_NAME).write_text(json.dumps(moves, indent=1, sort_keys=True))
    summary = {
        "video": redact(str(video)),
        "reason": reason,
        "profile": setup.rules.name,
        "players": setup.players,
        "video_s": round(duration, 2),
        "seconds": round(seconds, 2),
        "speed_x_real_time": round(duration / seconds, 2) if seconds else None,
        "moves": len(moves),
        "amended": amendments(lines),
        "verdicts": dict(Counter(m["ruling"]["verdict"] for m in moves)),
        "codes": dict(Counter(v["code"] for m in moves for v in m["ruling"]["violations"])),
        "restores": sum(1 for e in events if e["event"] == "restore"),
        "warnings": dict(Counter(e["event"] for e in events if e["event"] in WARNING_EVENTS)),
        "capture": _stats_json(source.stats),
        "decode": _decode_json(source),
        "damage": damage.to_json(),
        "pipeline": pipeline.stats.to_json(),
        "log": str(log_path),
    }
    (out / SUMMARY_NAME).write_text(json.dumps(summary, indent=2, sort_keys=True))
    return summary


MOVES_NAME, SUMMARY_NAME = "moves.json", "summary.json"
ANALYSIS_FILES = (LOG_NAME, MOVES_NAME, SUMMARY_NAME, REPORT_NAME)
"""The files an analysis writes in its folder (besides its snapshots): the only ones ``overwrite`` replaces."""
SNAPSHOT_NAME = re.compile(r"\d{7}\.jpg")
"""A snapshot's file name in ``frames/`` (the frame's index): other files there are not the analysis's."""


def check_output_folder(out: Path, *, overwrite: bool) -> None:
    """Refuse a folder that already holds something (``overwrite``: take it all the same) or is not a folder."""
    if out.exists() and not out.is_dir():
        raise OutputFolderError(f"{out} is a file, not a folder for the analysis")
    try:
        held = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    except OSError as error:
        raise OutputFolderError(f"cannot look into {out}: {error.strerror or error}") from None
    if held and not overwrite:
        shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        raise OutputFolderError(
            f"{out} is not empty ({shown}): pick a new folder, or pass --overwrite to replace the analysis there"
            " (other files are kept)"
        )


def remove_previous_analysis(out: Path) -> None:
    """Delete what an analysis wrote in ``out`` (its files and snapshots), and nothing else: a folder shared with
    other files keeps them, and ``frames/`` goes only when nothing else is left in it."""
    GameLog.remove(out / LOG_NAME)  # refused while another process is writing it
    try:
        for name in ANALYSIS_FILES[1:]:
            (out / name).unlink(missing_ok=True)
        frames = out / SNAPSHOT_DIR
        if frames.is_dir() and not frames.is_symlink():
            for path in frames.iterdir():
                if SNAPSHOT_NAME.fullmatch(path.name) and path.is_file() and not path.is_symlink():
                    path.unlink()
            with contextlib.suppress(OSError):
                frames.rmdir()  # only if it is empty now
    except OSError as error:
        raise OutputFolderError(f"cannot replace the analysis in {out}: {error.strerror or error}") from None


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


WARNING_EVENTS = ("occluded", "glare", "camera-moved", "dropout", "reconnected", "corrupt-frames")


def _go_on() -> str | None:
    return None


def _beside(bar: ProgressBar | None, listener: Listener) -> Listener:
    """``listener``, with the progress bar stepping aside for what it prints."""

    def hear(line: Line) -> None:
        if bar is not None:
            bar.clear()
        listener(line)

    return hear


def _sampled(
    source: VideoSource, first: Frame, pipeline: TablePipeline, options: AnalyzeOptions, bar: ProgressBar | None
) -> Iterator[Frame]:
    """The video's frames at the pipeline's rate, sparser while the table is still (see
    :func:`vision.runtime.decode.sample`: frames in between are not converted, and with PyAV not even decoded where
    nothing changed); the progress bar follows."""
    fps = source.fps or 30.0
    busy_step = max(1, round(fps / options.config.sample_hz))
    still_step = max(busy_step, round(fps / STILL_SAMPLE_HZ))
    yield first
    done = 0

    def looked_at() -> tuple[float, float, float, float]:  # the play area's box: racks beside it are no change
        box = pipeline.region
        return (box.x0, box.y0, box.x1, box.y1)

    def still() -> bool:  # near a turn's time limit every sample counts, still table or not
        return pipeline.phase == "stable" and not pipeline.near_limit

    hands = HandsOver(now=lambda: _hands_over(pipeline), seen_in=lambda frame: _arm_in(pipeline, frame))
    frames = sample(
        source, first, busy_step=busy_step, still_step=still_step, still=still, region=looked_at,
        hands=hands if options.hands_keyframes else None,
    )  # fmt: skip
    for frame in frames:
        if bar is not None:
            bar.advance(frame.index - done)
            done = frame.index
        yield frame


def _hands_over(pipeline: TablePipeline) -> bool:
    """The last sample showed an arm over the table mid-move: until the pipeline sees it gone, no sample is read (a
    reading is due only after ``quiet_s`` without hands), and none near a turn's time limit is thinned out."""
    activity = pipeline.latest["activity"]
    return pipeline.phase == "active" and not pipeline.near_limit and activity is not None and activity.arm


def _arm_in(pipeline: TablePipeline, frame: Frame) -> bool:
    """``frame`` shows an arm over the table as the pipeline's meter would measure it next (peeked at: what the
    pipeline counts is unchanged, and the meter takes this measurement when the frame becomes the next sample),
    reaching in from the seat the last sample's arm came from. Another seat's arm (the next player reaching in
    within a second of the last one's hands leaving), or an arm whose seat is not known, is no reason to skip
    frames: the gap is decoded, so a move that settled in it is seen."""
    seen, last = pipeline.meter.peek(frame.image), pipeline.latest["activity"]
    if not seen.arm or last is None:
        return False
    here = pipeline.arm_seat(seen)
    return here is not None and here == pipeline.arm_seat(last)


def _decode_json(source: VideoSource) -> dict[str, Any]:
    """Which decoder read the video, and (PyAV) what it decoded, probed and handed out."""
    if isinstance(source, SparseVideo):
        return {"decoder": "pyav", **source.decode_stats.to_json()}
    return {"decoder": "opencv"}


def _stats_json(stats: CaptureStats) -> dict[str, int]:
    return asdict(stats)
