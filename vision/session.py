"""What the two game drivers share: ``analyze`` (a recorded video, as fast as it can be read) and ``live`` (a source
paced by its clock) configure a game with the same options and calibrate its camera the same way, and neither
imports the other (the layering contract, tests/test_layering.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vision.pipeline import PipelineConfig

END_OF_VIDEO = "end of the video"
"""The reason a game ends when its video file ran out."""


@dataclass(frozen=True, kw_only=True)
class GameOptions:
    """What a game is played under, and how its camera is calibrated (for ``analyze`` and ``live`` alike)."""

    profile: str
    players: int
    first_player: int = 0
    time_limit_s: Any = None
    """None: the profile's limit; a number, or "none" for no limit (a limit agreed at the table)."""
    calibration: str = "auto"
    """"markers", "auto" (markers if found, else the play area found on the table: racks, pool and clutter at its edges
    left out), "frame" or a JSON file."""
    config: PipelineConfig = field(default_factory=PipelineConfig)


CALIBRATION_METHODS = ("markers", "auto", "frame")
"""What ``--calibration`` may name besides a calibration file."""


def calibrate_for(image: Any, how: str) -> Any:
    """The play area for a video or camera: markers, the table's edge, corners from a file, or the frame."""
    from vision import calibrate

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


def time_limit_kwargs(value: Any) -> dict[str, Any]:
    """GameKeeper's ``time_limit_s`` from an option: None keeps the profile's, "none" means no limit."""
    if value is None:
        return {}
    return {"time_limit_s": None if value == "none" else float(value)}
