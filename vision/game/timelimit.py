"""What the camera saw of a turn's time limit: the table as it stood when the limit passed, and hands over the table
after it (RULES.md §6, issue 17).

A human referee sees a move end late; the camera also sees the table at the very moment the time ran out, and
whether anyone reached over the tiles afterwards. The seeds tie their rulings to exactly that (przasnysz rules 15, 17
and 20: the table when the time ran out is the move, touching it afterwards voids it; the Polish Championship and
Wejherowo: a manipulation not finished when the time runs out is restored). :class:`LimitWatch` keeps it for one
turn; :class:`~vision.game.pipeline.TablePipeline` feeds it every sample and hands :meth:`LimitWatch.evidence` with
the move to the game, which rules on it only for a move over time.

A turn ruled in parts (a play ruled as it settled, the same hands going on: an amended move) has one limit, the
turn's: the pipeline keeps that turn's watch and feeds it across the pause, beside the watch of the limit counted
from the part's ruling (``vision.game.pipeline._Ruled.limit``), so the table at the limit may be the part's, the
paused table or the rest's.

The table at the limit is known only when nothing moved over the table at that moment: a table still since the last
reading (the reading the game holds), or quiet hands-free frames read there and then. With hands or motion over it
the table is unknown (None), and the ruling does what the profile does when it cannot know (REVIEW where the ruling
depends on it: never a false REVERT).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from referee.table import Table
from vision.runtime.motion import Activity

MAX_GAP_S = 1.0
"""The first sample after the limit is the table at the limit only this soon after it: later (a camera read behind,
or a video's unreadable stretch), what happened in between is not known."""


@dataclass
class LimitWatch:
    """One turn's time limit as the camera saw it: feed it :meth:`sample` for every sampled frame."""

    at_s: float
    """When the limit passes (the turn's start plus the time limit), in the video's or the camera's seconds."""
    passed: bool = False
    table: Table | None = None
    """The table when the limit passed (None: not passed yet, or not readable then: hands or motion over it)."""
    hands: bool = False
    """An arm was over the table at or after the limit..."""
    arm_seats: Counter[int | None] = field(default_factory=Counter)
    """...from these seats (samples by seat number; None: its side not found)."""
    unsure: bool = False
    """Something moved over the table at or after the limit with no arm seen: whether tiles were touched is unknown."""
    moved: bool = False
    """Any activity after the limit: the table settled later may differ from the table at the limit."""

    def due(self, time_s: float) -> bool:
        """The limit passes at this sample (the first one at or after it)."""
        return not self.passed and time_s >= self.at_s

    def reached(
        self, activity: Activity | None, table: Table | None, time_s: float, arm_seat: int | None = None
    ) -> None:
        """The first sample at or after the limit, at ``time_s`` (``activity`` None: a clock press on a still table,
        between samples): ``table`` is the table read there, kept unless ``activity`` shows hands or motion over it,
        or the sample came over :data:`MAX_GAP_S` after the limit. ``arm_seat``: where an arm reaches in from."""
        self.passed = True
        if time_s - self.at_s > MAX_GAP_S:
            self.unsure = True
        if activity is not None and activity.arm:
            self.hands = True
            self.arm_seats[arm_seat] += 1
        elif activity is not None and (activity.busy or activity.global_change):
            self.unsure = True
        elif not self.unsure:
            self.table = table

    def sample(self, activity: Activity, arm_seat: int | None = None) -> None:
        """A sample after the limit (``arm_seat``: where an arm reaches in from)."""
        if activity.arm:
            self.hands = self.moved = True
            self.arm_seats[arm_seat] += 1
        elif activity.busy or activity.global_change:
            self.unsure = self.moved = True

    def evidence(self, settled: Table | None, mover_seat: int | None = None) -> tuple[Table | None, bool | None]:
        """``(table_at_limit, touched_after_limit)`` for a move ending now on the table ``settled``, made from seat
        ``mover_seat``; ``(None, None)`` before the limit. With nothing over the table since the limit, the settled
        table *is* the table at the limit (read by more frames: the better reading). Hands seen after the limit touched
        the tiles when one arm came from the mover's seat (or the mover is not known); arms from other seats only, or
        from a side not found, are another player's or may be: not known (None), never a touch that voids a move."""
        if not self.passed:
            return None, None
        if self.hands:
            touched: bool | None = True if mover_seat is None or self.arm_seats[mover_seat] else None
        else:
            touched = None if self.unsure else False
        table = self.table
        if table is not None and not self.moved and settled is not None:
            table = settled
        return table, touched
