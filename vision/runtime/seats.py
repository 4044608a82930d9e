"""Where the players sit, as the overhead camera sees them: a seat is a table edge and a place along it.

The sides of the picture are the table's edges, the long ones at the top and bottom (a landscape camera over a
landscape table). Arms reach in over a player's edge (:mod:`vision.runtime.motion` measures where), and a player's rack
lies along it (:mod:`vision.synth.video`). Two to four players sit one to an edge, in its middle; five and six
sit as at a real table: two on the near long edge (five: then one on each other edge), or two on each long edge
and one on each short edge (six).

Seat numbers are what game logs and truth files write (``seat``, ``hands_seat``): 0 to 3 the middle of the
bottom, right, top and left edges (every log from before five- and six-player games), 4 to 7 the two places on
each long edge. :func:`seating` goes round the table the same way at every size: bottom, right, top, left
(counter-clockwise in the picture).

The way play really goes is the profile's (:class:`referee.profiles.PlayDirection`: clockwise seen from above for
seeds 004, 000 and 003, to the right for seed 002). :func:`turn_order` applies it through the camera's
:class:`Orientation` (the edge where player 1 sits; whether the picture is mirrored, as from a camera filming a
mirror or with a flipped preview): an overhead camera, not mirrored, sees the table as from above.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from referee.profiles import PlayDirection


class Edge(enum.IntEnum):
    """A side of the table as seen in the picture (the number is the edge's middle seat's)."""

    BOTTOM = 0
    RIGHT = 1
    TOP = 2
    LEFT = 3

    @property
    def label(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Seat:
    number: int
    """As logs write it (see the module's description)."""
    edge: Edge
    along: float
    """Where along the edge, 0 to 1: left to right on the bottom and top edges, top to bottom on the left and
    right ones, as seen in the picture."""

    @property
    def name(self) -> str:
        """``bottom`` for an edge's middle; ``bottom left``, ``top right``... for a place on a shared edge."""
        if self.along == MIDDLE:
            return self.edge.label
        first, second = ("left", "right") if self.edge in (Edge.BOTTOM, Edge.TOP) else ("upper", "lower")
        return f"{self.edge.label} {first if self.along < MIDDLE else second}"


MIDDLE = 0.5
SHARED_EDGE_PLACES = (0.25, 0.75)
"""Where two players sitting on one edge sit along it."""

SEATS: tuple[Seat, ...] = (
    *(Seat(edge.value, edge, MIDDLE) for edge in Edge),
    Seat(4, Edge.BOTTOM, SHARED_EDGE_PLACES[0]),
    Seat(5, Edge.BOTTOM, SHARED_EDGE_PLACES[1]),
    Seat(6, Edge.TOP, SHARED_EDGE_PLACES[1]),
    Seat(7, Edge.TOP, SHARED_EDGE_PLACES[0]),
)
"""Every place at the table, indexed by seat number."""

SEATING: Mapping[int, tuple[Seat, ...]] = MappingProxyType(
    {
        players: tuple(SEATS[number] for number in numbers)
        for players, numbers in {
            2: (0, 2),  # facing each other across the table
            3: (0, 1, 2),
            4: (0, 1, 2, 3),
            5: (4, 5, 1, 2, 3),  # two at the bottom
            6: (4, 5, 1, 6, 7, 3),  # two at the bottom and two at the top
        }.items()
    }
)
"""The seat of each player (0-based, in turn order) at a table of 2 to 6."""

PLAYERS: tuple[int, ...] = tuple(SEATING)
"""How many players a camera game can have."""


def seating(players: int) -> tuple[Seat, ...]:
    """The players' seats in turn order; a ``ValueError`` for a table size with no seating."""
    if not isinstance(players, int) or isinstance(players, bool) or players not in SEATING:
        raise ValueError(f"a table seats {PLAYERS[0]} to {PLAYERS[-1]} players, not {players!r}")
    return SEATING[players]


def seat_numbered(number: object) -> Seat | None:
    """The seat a log's number names; None for anything else (a log is data from a file)."""
    if isinstance(number, int) and not isinstance(number, bool) and 0 <= number < len(SEATS):
        return SEATS[number]
    return None


def seat_at(players: int, edge: Edge | int, along: float | None = None) -> Seat:
    """The seat whose player's arm crosses ``edge`` at ``along``: the nearest of the players' seats on that edge,
    or the edge's middle seat when no player sits there (the game then keeps to its turn order)."""
    edge = Edge(edge)
    on_edge = [seat for seat in seating(players) if seat.edge is edge]
    if not on_edge:
        return SEATS[edge.value]
    where = MIDDLE if along is None else along
    return min(on_edge, key=lambda seat: abs(seat.along - where))


@dataclass(frozen=True, slots=True)
class Orientation:
    """How the camera sees the table: the picture edge where the first player sits, and whether the picture is
    mirrored (left and right swapped against the view from above). The default is the numbering logs have always
    used: player 1 at the bottom, not mirrored."""

    first: Edge = Edge.BOTTOM
    mirrored: bool = False

    @classmethod
    def parse(cls, first: str | Edge = Edge.BOTTOM, mirrored: bool = False) -> Orientation:
        """``Orientation.parse("left", mirrored=True)``; a ``ValueError`` naming the edges for anything else."""
        if isinstance(first, str):
            try:
                first = Edge[first.strip().upper()]
            except KeyError:
                edges = ", ".join(edge.label for edge in Edge)
                raise ValueError(f"the first player's side is one of {edges}, not {first!r}") from None
        if not isinstance(mirrored, bool):
            raise ValueError(f"mirrored is true or false, not {mirrored!r}")
        return cls(Edge(first), mirrored)

    def describe(self) -> str:
        return f"player 1 at the {self.first.label}{', mirrored picture' if self.mirrored else ''}"

    def to_json(self) -> dict[str, object]:
        """As a game log's start line writes it: ``{"first": "left", "mirrored": false}``."""
        return {"first": self.first.label, "mirrored": self.mirrored}

    @classmethod
    def from_json(cls, data: object) -> Orientation:
        """:meth:`to_json` read back; a ``ValueError`` in one line for anything else."""
        if not isinstance(data, dict) or set(data) - {"first", "mirrored"}:
            raise ValueError(f"an orientation is {{'first': EDGE, 'mirrored': true|false}}, not {str(data)[:60]}")
        first = data.get("first", Edge.BOTTOM.label)
        if not isinstance(first, str):
            raise ValueError(f"the first player's side is an edge's name, not {first!r}")
        return cls.parse(first, data.get("mirrored", False))  # type: ignore[arg-type]


_EDGE_ANGLE = {Edge.RIGHT: 0.0, Edge.TOP: 90.0, Edge.BOTTOM: 270.0, Edge.LEFT: 180.0}
"""Each edge's middle as an angle from the table's centre in the picture, counter-clockwise from the right (y up)."""


def _angle(seat: Seat) -> float:
    """The seat's direction from the table's centre in the picture, counter-clockwise from the right, in degrees."""
    offset = 2 * seat.along - 1  # -1 to 1 as the picture runs: left to right, top to bottom
    x, y = {Edge.BOTTOM: (offset, -1.0), Edge.RIGHT: (1.0, -offset), Edge.TOP: (offset, 1.0),
            Edge.LEFT: (-1.0, -offset)}[seat.edge]  # fmt: skip
    return math.degrees(math.atan2(y, x)) % 360.0


def turn_order(
    players: int, direction: PlayDirection | str | None = None, orientation: Orientation = Orientation()
) -> tuple[Seat, ...]:
    """The players' seats in the order they play: from the first seat on ``orientation.first`` round the table the
    profile's way (``direction``, seen from above), as the picture shows it. ``direction=None`` keeps the order of
    :func:`seating` (counter-clockwise in the picture), whatever the orientation's ``first`` edge.

    >>> [s.name for s in turn_order(4, "clockwise")]
    ['bottom', 'left', 'top', 'right']
    >>> [s.name for s in turn_order(4, "clockwise", Orientation(Edge.BOTTOM, mirrored=True))]
    ['bottom', 'right', 'top', 'left']
    """
    seats = seating(players)
    if direction is None and orientation == Orientation():
        return seats
    if direction is None:
        counter_clockwise_in_picture = True
    else:
        clockwise = PlayDirection(direction) is PlayDirection.CLOCKWISE
        counter_clockwise_in_picture = clockwise == orientation.mirrored  # a mirror turns the way round
    middle = _EDGE_ANGLE[orientation.first]
    if counter_clockwise_in_picture:
        start = middle - 45.0  # the corner before the edge, going counter-clockwise

        def key(seat: Seat) -> float:
            return (_angle(seat) - start) % 360.0
    else:
        start = middle + 45.0

        def key(seat: Seat) -> float:
            return (start - _angle(seat)) % 360.0

    return tuple(sorted(seats, key=key))
