"""The draw for the first player read by the camera: the tile face up in front of each seat, then the rules.

:func:`assign_tiles` gives each tile read in a photo (or a frame) to the nearest seat of the table
(:mod:`vision.runtime.seats`: seats at the edges of the play area, or of the picture); a tile about as near to two
seats counts for both (so both draw again), one in the middle of the table for nobody (the face-down tiles being
mixed lie there), one off the play area too (the next table's). A tile read with a confidence under
:data:`vision.runtime.layout.MIN_CONFIDENCE`, or turned away from its seat (:data:`TURNED_DEG`), is uncertain: its
seat draws again, never a guess. :func:`rule_camera_draw` hands the seats' tiles to :func:`referee.draw.rule_draw`
and, once someone starts, gives the order of play (the profile's direction through the camera's
:class:`~vision.runtime.seats.Orientation`) and the starter's player number as ``live``/``analyze`` count players
(``--first-player``).

No model here: the reader's labelled detections in, seats and rulings out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from referee.draw import Drawn, DrawRuling, Redraw, rule_draw, starting_order
from referee.profiles import get_profile
from referee.tiles import Tile
from vision.runtime.detections import Detections
from vision.runtime.layout import MIN_CONFIDENCE
from vision.runtime.recognition import Region
from vision.runtime.seats import SEATS, Edge, Orientation, Seat, seating, turn_order

if TYPE_CHECKING:
    from vision.runtime.calibrate import Calibration
    from vision.runtime.reader import Reader, Reading

NEAR_TIE = 1.3
"""A tile less than this many times further from its second-nearest seat than from its nearest is between them: it
counts for both (each of them then has a tile it may not own, and draws again)."""
OFF_AREA = 0.03
"""A tile further outside the play area than this share of its size is not on the table."""
MIDDLE_REACH = 0.42
"""A tile further than this (share of the picture, per axis) from every seat lies in the middle of the table: it is
nobody's (seats are at the picture's edges, their middles 0.5 from the centre)."""


OVERHEAD = Orientation()
"""The camera's default orientation: player 1 at the bottom, not mirrored."""


READING_UP_DEG = {Edge.BOTTOM: 0.0, Edge.RIGHT: 270.0, Edge.TOP: 180.0, Edge.LEFT: 90.0}
"""The up direction (clockwise from the picture's up) of a tile laid to be read from a seat on each edge: away from
the player, towards the table's middle."""
TURNED_DEG = 60.0
"""A tile whose up is further than this from its seat's reading direction is uncertain, so its seat draws again:
a player lays the drawn tile to read it from their seat, so a tile turned away is maybe another seat's, or a 6 or 9
read the wrong way up (on synthetic draws the classifier took a 6 across the table for a 9 and a 9 for a 6, each
with confidence over 0.9). Every one of 125 tiles read right on 40 synthetic draws (plain and tilted 25 degrees)
was within 45 degrees."""


def seat_point(seat: Seat) -> tuple[float, float]:
    """Where a seat is in the picture, as shares of its width and height (x right, y down)."""
    return {
        Edge.BOTTOM: (seat.along, 1.0),
        Edge.TOP: (seat.along, 0.0),
        Edge.RIGHT: (1.0, seat.along),
        Edge.LEFT: (0.0, seat.along),
    }[seat.edge]


@dataclass(frozen=True, slots=True)
class DrawnTile:
    """One tile read in the picture and the seats it went to (none: the middle of the table)."""

    label: str
    confidence: float
    box: tuple[float, float, float, float]
    seats: tuple[int, ...]

    turned: bool = False
    """Its up is turned away from its seat's reading direction (:data:`TURNED_DEG`)."""

    @property
    def certain(self) -> bool:
        return self.confidence >= MIN_CONFIDENCE and not self.turned

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "confidence": round(self.confidence, 3),
            "box": [round(v, 1) for v in self.box],
            "seats": list(self.seats),
            "turned": self.turned,
        }


@dataclass(frozen=True)
class DrawReading:
    """The tiles of a draw as the camera saw them, by seat number."""

    players: int
    drawn: Mapping[int, Drawn]
    tiles: tuple[DrawnTile, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "drawn": {str(seat): str(reading) for seat, reading in self.drawn.items()},
            "tiles": [tile.to_json() for tile in self.tiles],
        }


def _detections(reading: Detections | Reading) -> Detections:
    """A reader's result: :class:`Detections`, or a reading that holds them (``.detections``)."""
    return reading if isinstance(reading, Detections) else reading.detections


def _places(centres: np.ndarray, image_size: tuple[int, int], play_area: Calibration | None) -> np.ndarray:
    """Tile centres as shares of the play area (x right, y down); of the picture without a play area."""
    if play_area is None:
        return centres / np.array(image_size, np.float64)
    if len(centres) == 0:
        return centres
    return np.asarray(play_area.to_table(centres), np.float64) / np.array(play_area.size_mm, np.float64)


def assign_tiles(
    reading: Detections | Reading, image_size: tuple[int, int], players: int, play_area: Calibration | None = None
) -> DrawReading:
    """Each seat's face-up tiles from a reader's labelled detections of an image ``(width, height)``.

    ``play_area``: a :class:`vision.runtime.calibrate.Calibration` (the table's play area in the picture): seats
    are at its edges, and a tile further than :data:`OFF_AREA` outside it is not on this table (the next table's
    tiles); without one, the picture's edges.
    """
    found = _detections(reading)
    places = _places(found.centers.astype(np.float64), image_size, play_area)
    seats = seating(players)
    points = np.array([seat_point(seat) for seat in seats])
    by_seat: dict[int, list[DrawnTile]] = {seat.number: [] for seat in seats}
    tiles: list[DrawnTile] = []
    ups = found.data.get("angle_deg")
    angles: list[float | None] = [None] * len(found) if ups is None else [float(a) for a in ups]
    for label, confidence, box, up in zip(
        found.labels, found.confidence.tolist(), found.xyxy.tolist(), angles, strict=True
    ):
        centre = places[len(tiles)]
        distance = np.linalg.norm(points - centre, axis=1)
        order = np.argsort(distance)
        nearest = float(distance[order[0]])
        off = not np.isfinite(centre).all() or bool(((centre < -OFF_AREA) | (centre > 1 + OFF_AREA)).any())
        if off or nearest > MIDDLE_REACH:
            owners: tuple[int, ...] = ()
        elif len(order) > 1 and float(distance[order[1]]) < NEAR_TIE * nearest:
            owners = (seats[int(order[0])].number, seats[int(order[1])].number)
        else:
            owners = (seats[int(order[0])].number,)
        turned = any(_turned(up, seat) for seat in seats if seat.number in owners)
        tile = DrawnTile(label, float(confidence), (box[0], box[1], box[2], box[3]), owners, turned)
        tiles.append(tile)
        for number in owners:
            by_seat[number].append(tile)
    drawn = {}
    for number, mine in by_seat.items():
        labels = tuple(_tile(t.label) for t in mine)
        sure = all(t.certain for t in mine) and None not in labels
        drawn[number] = Drawn(tuple(t for t in labels if t is not None), sure)
    return DrawReading(players, drawn, tuple(tiles))


def _turned(up: float | None, seat: Seat) -> bool:
    """The tile's up (clockwise from the picture's up) is more than :data:`TURNED_DEG` from ``seat``'s reading."""
    if up is None:
        return False
    return abs((up - READING_UP_DEG[seat.edge] + 180.0) % 360.0 - 180.0) > TURNED_DEG


ZOOM = 2.0
"""A draw with a seat unsure is read again with the picture this many times larger: a draw has too few tiles for the
reader's own second reading at tile scale (it needs 3 tiles found first), and a tilted camera's far tiles are small."""


def read_draw(
    reader: Reader, image: np.ndarray, players: int, play_area: Calibration | None = None, *, zoom: float = ZOOM
) -> DrawReading:
    """The seats' tiles in ``image`` read by ``reader``; when a seat is unsure, read again ``zoom`` times larger and
    combined seat by seat (:func:`combine`): a tile one reading missed is taken from the other, a tile the two
    readings name differently is uncertain."""
    height, width = image.shape[:2]
    first = assign_tiles(reader.read(image), (width, height), players, play_area)
    if zoom <= 1 or all(_sure(drawn) for drawn in first.drawn.values()):
        return first
    region = Region(0, 0, width, height, width_px=round(width * zoom))
    again = assign_tiles(reader.read(image, region=region), (width, height), players, play_area)
    return combine(first, again)


def _sure(drawn: Drawn) -> bool:
    """One tile read with confidence (a joker too: it is sure, and draws again by the rules)."""
    return drawn.problem in (None, Redraw.JOKER)


def combine(first: DrawReading, again: DrawReading) -> DrawReading:
    """Two readings of one draw, seat by seat: the same sure tile stands; a sure tile where the other reading saw
    nothing is taken; sure tiles that differ become one uncertain reading of both; otherwise the more doubtful."""
    drawn: dict[int, Drawn] = {}
    for seat, one in first.drawn.items():
        other = again.drawn[seat]
        if _sure(one) and _sure(other):
            drawn[seat] = one if one == other else Drawn(one.tiles + other.tiles, certain=False)
        elif _sure(one) or _sure(other):
            sure, unsure = (one, other) if _sure(one) else (other, one)
            drawn[seat] = sure if unsure.problem is Redraw.NO_TILE else unsure
        else:
            drawn[seat] = one if one.problem is not Redraw.NO_TILE else other
    return DrawReading(first.players, drawn, first.tiles + again.tiles)


def _tile(label: str) -> Tile | None:
    try:
        return Tile.parse(label)
    except ValueError:  # an unclassified box ("tile"): something is there, nobody can say what
        return None


@dataclass(frozen=True)
class CameraDraw:
    """The ruling on a draw seen by the camera, with the order of play once someone starts."""

    reading: DrawReading
    ruling: DrawRuling
    players: tuple[int, ...]
    """The seat of player 1, 2, ... as the game numbers them (:func:`player_seats`)."""
    order: tuple[int, ...] = ()
    """Seat numbers in the order they play, from the starter (empty until someone starts)."""

    @property
    def first_player(self) -> int | None:
        """The starter as ``live``/``analyze``/``batch`` count players (``--first-player``, 1 to N), or None."""
        return None if self.ruling.starter is None else self.players.index(self.ruling.starter) + 1

    def seat_names(self) -> dict[int, str]:
        return {number: f"player {k + 1} ({SEATS[number].name})" for k, number in enumerate(self.players)}

    def to_json(self) -> dict[str, Any]:
        names = self.seat_names()
        return {
            **self.ruling.to_json(),
            "first_player": self.first_player,
            "players": [{"player": k + 1, "seat": seat, "name": names[seat]} for k, seat in enumerate(self.players)],
            "order": [{"seat": seat, "name": names[seat]} for seat in self.order],
            "reading": self.reading.to_json(),
        }

    def describe(self) -> str:
        names = self.seat_names()
        lines = [f"  {names[seat]}: {self.reading.drawn[seat]}" for seat in self.ruling.among]
        lines.append(self.ruling.describe(names))
        if self.order:
            lines.append("order of play: " + ", ".join(names[seat] for seat in self.order))
        return "\n".join(lines)


def player_seats(players: int, profile: str, orientation: Orientation = OVERHEAD) -> tuple[int, ...]:
    """The seat of player 1, 2, ... as ``live`` and ``analyze`` number them when given the camera's orientation
    (``--seat1``, ``--mirrored``; :class:`vision.game.moves.GameKeeper`): player 1 at ``orientation.first``, the
    others round the table the profile's way (:func:`vision.runtime.seats.turn_order`)."""
    return tuple(seat.number for seat in turn_order(players, get_profile(profile).direction, orientation))


def rule_camera_draw(
    reading: DrawReading,
    profile: str,
    *,
    orientation: Orientation = OVERHEAD,
    among: Iterable[int] | None = None,
    numbering: Sequence[int] | None = None,
) -> CameraDraw:
    """The rules on the seats' tiles (``among``: the seat numbers still in the draw, for a play-off); players
    numbered as :func:`player_seats` does, or by ``numbering`` (the seat of player 1, 2, ..., who also play in that
    order: :func:`vision.runtime.seats.seating` for a game started without the camera's orientation)."""
    numbering = player_seats(reading.players, profile, orientation) if numbering is None else tuple(numbering)
    ruling = rule_draw(reading.drawn, profile, among=numbering if among is None else among)
    order = () if ruling.starter is None else starting_order(numbering, ruling.starter)
    return CameraDraw(reading, ruling, numbering, order)
