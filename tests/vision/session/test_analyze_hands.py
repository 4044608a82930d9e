"""analyze's decoder skips frames under hands only while the same seat's arm stays over the table (issue 19):
another player reaching in within a second of the last one's hands leaving has its gap decoded, so the move that
settled in between is seen."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from vision.game.pipeline import TablePipeline
from vision.runtime.capture import Frame
from vision.runtime.motion import Activity
from vision.runtime.seats import Edge
from vision.session.analyze import _arm_in


class Meter:
    """An activity meter that sees what it is told to (the probe peeks: nothing counted)."""

    def __init__(self, seen: Activity) -> None:
        self.seen = seen

    def peek(self, image: np.ndarray) -> Activity:
        return self.seen


def arm(edge: Edge | None, along: float | None = 0.5) -> Activity:
    return Activity(motion=0.05, foreground=0.1, arm=True, edge=edge, global_change=False, along=along)


NO_ARM = Activity(motion=0.0, foreground=0.0, arm=False, edge=None, global_change=False)


def probe(last: Activity | None, seen: Activity, players: int = 4) -> bool:
    pipeline = SimpleNamespace(meter=Meter(seen), latest={"activity": last}, keeper=SimpleNamespace(players=players))
    pipeline.arm_seat = lambda activity: TablePipeline.arm_seat(pipeline, activity)  # type: ignore[arg-type]
    return _arm_in(pipeline, Frame(30, 1.0, np.zeros((8, 8, 3), np.uint8)))  # type: ignore[arg-type]


def test_the_same_seats_arm_still_over_the_table_lets_the_frames_between_go_undecoded() -> None:
    assert probe(arm(Edge.BOTTOM), arm(Edge.BOTTOM, along=0.45))


def test_another_seats_arm_or_none_has_the_gap_decoded() -> None:
    assert not probe(arm(Edge.BOTTOM), arm(Edge.TOP))  # the next player reached in: a move may have settled between
    assert not probe(arm(Edge.BOTTOM), NO_ARM)  # the hands left
    assert not probe(None, arm(Edge.BOTTOM))


def test_an_arm_whose_seat_is_not_known_is_no_reason_to_skip() -> None:
    assert not probe(arm(None, along=None), arm(None, along=None))
    assert not probe(arm(Edge.LEFT), arm(None, along=None))


def test_two_players_on_one_side_are_told_apart_along_it() -> None:
    """Six players: two sit on the bottom edge, one at each end of it (vision.runtime.seats)."""
    assert probe(arm(Edge.BOTTOM, 0.2), arm(Edge.BOTTOM, 0.25), players=6)
    assert not probe(arm(Edge.BOTTOM, 0.2), arm(Edge.BOTTOM, 0.8), players=6)
