"""Where the players sit, as the overhead camera sees them: a seat is a table edge and a place along it.

The sides of the picture are the table's edges, the long ones at the top and bottom (a landscape camera over a
landscape table). Arms reach in over a player's edge (:mod:`vision.motion` measures where), and a player's rack
lies along it (:mod:`vision.synth.video`). Two to four players sit one to an edge, in its middle; five and six
sit as at a real table: two on the near long edge (five: then one on each other edge), or two on each long edge
and one on each short edge (six).

Seat numbers are what game logs and truth files write (``seat``, ``hands_seat``): 0 to 3 the middle of the
bottom, right, top and left edges (every log from before five- and six-player games), 4 to 7 the two places on
each long edge. Turns go round the table the same way at every size: bottom, right, top, left
(counter-clockwise in the picture).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


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
