"""What the two game drivers share: ``analyze`` (a recorded video, as fast as it can be read) and ``live`` (a source
paced by its clock) configure a game with the same options and calibrate its camera the same way, and neither
imports the other (the layering contract, tests/test_layering.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee import cli as rules_cli
from vision.game.gamelog import GameSetup
from vision.game.pipeline import PipelineConfig

if TYPE_CHECKING:
    import numpy as np

    from vision.runtime.calibrate import Calibration

END_OF_VIDEO = "end of the video"
"""The reason a game ends when its video file ran out."""


@dataclass(frozen=True, kw_only=True)
class GameOptions:
    """What a game is played under, and how its camera is calibrated (for ``analyze`` and ``live`` alike)."""

    setup: GameSetup
    """The game as its log's start line holds it: the profile with the move time in force (a limit agreed at the table
    applied as ``dataclasses.replace(profile, time_limit_s=...)``, the one carrier of the limit), the players, who
    moves first, how the camera sees the table."""
    calibration: str = "auto"
    """"markers", "auto" (markers if found, else the play area found on the table: racks, pool and clutter at its edges
    left out), "frame" or a JSON file."""
    config: PipelineConfig = field(default_factory=PipelineConfig)


CALIBRATION_METHODS = ("markers", "auto", "frame")
"""What ``--calibration`` may name besides a calibration file."""


def calibrate_for(image: np.ndarray, how: str) -> Calibration:
    """The play area for a video or camera: markers, the table's edge, corners from a file, or the frame."""
    from vision.runtime import calibrate

    height, width = image.shape[:2]
    if how not in CALIBRATION_METHODS:
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


@dataclass(frozen=True, kw_only=True)
class Engine:
    """How the models run in each worker (ONNX Runtime): the model folder, threads per session, provider."""

    models: str | None = None
    threads: int | None = None
    provider: str = "cpu"


def engine_from_args(args: argparse.Namespace) -> Engine:
    """``--models``, ``--threads``, ``--provider`` checked now (CUDA only where ONNX Runtime offers it)."""
    from vision.runtime.recognition import check_provider

    threads: int | None = args.threads  # the options of add_engine_options, and --models, on every caller's parser
    if threads is not None and threads < 1:
        raise rules_cli.CommandError(f"--threads is 1 or more, not {threads}")
    provider: str = args.provider
    check_provider(provider)
    models = args.models
    return Engine(models=str(models) if models is not None else None, threads=threads, provider=provider)


def engine_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """``pipeline_reader``'s keywords from ``--threads`` and ``--provider``: none when both are the defaults (the
    reader is made exactly as before the options existed); checked now, before a video is opened."""
    engine = engine_from_args(args)
    kwargs: dict[str, Any] = {}
    if engine.threads is not None:
        kwargs["threads"] = engine.threads
    if engine.provider != "cpu":
        kwargs["provider"] = engine.provider
    return kwargs
