"""The table's sets from labelled detections (the ``vision/layout`` step of DESIGN.md).

Tiles lying side by side in a row, with the same orientation, form a set. Each tile's ``angle_deg`` (its up,
clockwise from image up) gives its reading direction: "right" as seen by a player facing the tile. A set is
read in that direction, so a set upside down in the image reads right to left. A lone tile is *loose*; a pair
stays a 2-tile set, which the referee flags as invalid (it must never be dropped silently).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, pairwise

import numpy as np

from referee.profiles import PROFILES
from referee.sets import check_set
from referee.table import LOOSE, Place, Table
from referee.tiles import ALL_LABELS, JOKER_LABEL, Tile
from vision.runtime.detections import Detections

ANGLE_TOLERANCE_DEG = 30.0
"""Tiles of one set share their orientation within this many degrees."""
GAP_TOLERANCE = 0.35
"""Neighbours in a set: the gap between them along the reading axis is under this share of a tile's width."""
OVERLAP_TOLERANCE = 0.5
"""...and they overlap along it by less than this share (more is a duplicate box, not a neighbour)."""
ALIGN_TOLERANCE = 0.45
"""...and their centres are offset across the reading axis by less than this share of a tile's height. 0.35 until
2026-11-29 (chosen unmeasured): in photos from a tilted camera, neighbours' ups differ by 10-15 degrees and a tile's
height is estimated from its axis-aligned box, so tiles of one run sat 0.36-0.44 apart across it and split the set.
Truth sets found exactly as laid, photos of held-out editions (the default reader, ``read_table``): 938 -> 950 of
1,355 (``synth-editions-heldout-120``), 2,274 -> 2,310 of 3,231 (``-300f``); 0.5 found 953 and 2,314. Two rows of
tiles stacked lie a whole height apart (1.1 and more)."""
TILE_ASPECT = 0.74
"""Width / height of a tile face (about 26 x 35 mm), used when a tile's box is rotated near 45 degrees."""
ASPECT_RANGE = (0.5, 1.0)
"""A tile's width and height solved from its box and its up (:func:`_tile_size`) are taken only where their ratio lies
in this range; elsewhere, as near 45 degrees, the tile's known aspect decides. In a tilted camera's photo a tile is no
rotated rectangle and its up is read a few degrees off, and the solution gave tiles 8-18 px wide and 46-57 px high
that split their runs (gaps of 0.6-1.3 such widths). Measured 2026-11-29 (the default reader on photos,
``read_table``, truth sets found exactly as laid): ``synth-editions-heldout-120`` 950 -> 963 of 1,355,
``synth-editions-heldout-300f`` 2,310 -> 2,336 of 3,231; 0.4-1.2 and 0.55-0.95 the same within one set."""
MIN_CONFIDENCE = 0.8
"""A tile read with a lower probability is marked uncertain: the referee then asks for a review, never reverts."""
ROW_BAND = 0.5
"""Sets whose first tiles differ in height by less than this share of a tile height count as one row."""
JOIN_GAP = 1.0
"""Set context: pieces of a row up to this share of a tile's width apart may be one set (see TableBuilder)."""
JOIN_ANGLE_DEG = 45.0
"""...with their tiles turned up to this much from each other."""
CONTEXT_ODDS = 20.0
"""Set context: labels that make a set invalid as read valid (one tile changed, or two) replace the labels read
when they are at most this many times less probable (the product of the ratios; see :class:`SetContext`)."""
CONTEXT_MIN_PROBABILITY = 0.03
"""...and each new label has at least this probability."""
CONTEXT_ALTERNATIVES = 3
"""...among each tile's most probable other labels (a mend needs a close runner-up, not the 20th label)."""
JOKER_INDEX = ALL_LABELS.index(JOKER_LABEL)
TURNED_DEG = 150.0
"""A tile whose up is at least this far from its row neighbours' is read turned round (see :func:`turned_round`)."""
TURN_SENSITIVE_NUMBERS = frozenset({6, 9})
"""Numbers whose reading depends on the tile's up: a 6 turned round looks like a 9. A tile of one of them read turned
round in its row is uncertain."""


@dataclass(frozen=True, slots=True)
class TileGeometry:
    """Each tile's centre, reading direction ``right``, ``up`` and its own width and height, in pixels."""

    centers: np.ndarray
    right: np.ndarray
    up: np.ndarray
    width: np.ndarray
    height: np.ndarray
    angle: np.ndarray

    @classmethod
    def of(cls, detections: Detections) -> TileGeometry:
        angle = np.asarray(detections.data.get("angle_deg", np.zeros(len(detections))), np.float64) % 360
        theta = np.radians(angle)
        # Up is clockwise from image up (y grows downwards); right is up turned a quarter clockwise.
        up = np.stack([np.sin(theta), -np.cos(theta)], axis=1)
        right = np.stack([np.cos(theta), np.sin(theta)], axis=1)
        box_w = (detections.xyxy[:, 2] - detections.xyxy[:, 0]).astype(np.float64)
        box_h = (detections.xyxy[:, 3] - detections.xyxy[:, 1]).astype(np.float64)
        width, height = _tile_size(box_w, box_h, theta)
        return cls(detections.centers.astype(np.float64), right, up, width, height, angle)


def _tile_size(box_w: np.ndarray, box_h: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The tile's own width and height from its axis-aligned box and its rotation.

    A w x h rectangle turned by theta has the box W = w|cos| + h|sin|, H = w|sin| + h|cos|; solve for w, h,
    except near 45 degrees where the system is singular, or where the solution is no tile's shape (its aspect out of
    :data:`ASPECT_RANGE`), and the tile's known aspect decides.
    """
    c, s = np.abs(np.cos(theta)), np.abs(np.sin(theta))
    det = c * c - s * s
    solvable = np.abs(det) > 0.35
    safe = np.where(solvable, det, 1.0)
    w = np.where(solvable, (box_w * c - box_h * s) / safe, 0.0)
    h = np.where(solvable, (box_h * c - box_w * s) / safe, 0.0)
    h_prior = box_h / (TILE_ASPECT * s + c)
    w_prior = TILE_ASPECT * h_prior
    aspect = w / np.where(h > 0, h, 1.0)
    bad = ~solvable | (w <= 0) | (h <= 0) | (aspect < ASPECT_RANGE[0]) | (aspect > ASPECT_RANGE[1])
    return np.where(bad, w_prior, w), np.where(bad, h_prior, h)


def _angle_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs((a - b + 180.0) % 360.0 - 180.0)


@dataclass(frozen=True, slots=True)
class PairGeometry:
    """Every pair of tiles ``[i, j]`` seen along the pair's mean reading axis: ``along`` (signed: j's centre ahead of
    i's) and ``across`` it in pixels, the pair's mean width and height; ``has_axis`` False where the two readings
    cancel (tiles turned apart half-way round, unless ``turned`` turned one of them round first)."""

    offset: np.ndarray
    """(N, N, 2): the centre of j minus the centre of i."""
    along: np.ndarray
    across: np.ndarray
    mean_w: np.ndarray
    mean_h: np.ndarray
    has_axis: np.ndarray

    @classmethod
    def of(cls, g: TileGeometry, turned: np.ndarray | None = None) -> PairGeometry:
        """``turned`` ((N, N) bool): pairs whose j is read the other way round for the pair's axis."""
        sign = 1.0 if turned is None else np.where(turned, -1.0, 1.0)[..., None]
        direction = g.right[:, None, :] + sign * g.right[None, :, :]
        norm = np.linalg.norm(direction, axis=2)
        direction = direction / np.where(norm > 0, norm, 1.0)[..., None]
        offset = g.centers[None, :, :] - g.centers[:, None, :]  # centre of j minus centre of i
        along = np.einsum("ijk,ijk->ij", offset, direction)
        across = np.abs(offset[..., 0] * -direction[..., 1] + offset[..., 1] * direction[..., 0])
        mean_w = (g.width[:, None] + g.width[None, :]) / 2
        mean_h = (g.height[:, None] + g.height[None, :]) / 2
        return cls(offset, along, across, mean_w, mean_h, norm > 0)


class SetFinder:
    """Chains of neighbouring tiles in reading order: ``find(detections) -> list[list[int]]`` (indices)."""

    def __init__(
        self,
        *,
        angle_tolerance_deg: float = ANGLE_TOLERANCE_DEG,
        gap_tolerance: float = GAP_TOLERANCE,
        align_tolerance: float = ALIGN_TOLERANCE,
    ) -> None:
        self.angle_tolerance_deg = angle_tolerance_deg
        self.gap_tolerance = gap_tolerance
        self.align_tolerance = align_tolerance

    def find(self, detections: Detections) -> list[list[int]]:
        n = len(detections)
        if n == 0:
            return []
        geometry = TileGeometry.of(detections)
        right_of = self._right_neighbours(geometry)
        # A link counts only when it is mutual: i's right neighbour is j and j's left neighbour is i.
        left_of = {j: i for i, j in right_of.items()}
        if len(left_of) != len(right_of):  # two tiles claim the same right neighbour: keep the nearest
            left_of = {}
            for i, j in sorted(right_of.items(), key=lambda item: self._gap(geometry, *item)):
                left_of.setdefault(j, i)
            right_of = {i: j for j, i in left_of.items()}
        chains = []
        for start in range(n):
            if start in left_of:
                continue
            chain = [start]
            while chain[-1] in right_of and len(chain) <= n:
                chain.append(right_of[chain[-1]])
            chains.append(chain)
        return chains

    def _right_neighbours(self, g: TileGeometry) -> dict[int, int]:
        """Each tile's nearest tile to its right in the same row (all pairs at once: this runs on every reading)."""
        if len(g.centers) < 2:
            return {}
        pairs = PairGeometry.of(g)
        linked = (
            (_angle_difference(g.angle[:, None], g.angle[None, :]) <= self.angle_tolerance_deg)
            & (pairs.along > 0)
            & self.placed_side_by_side(pairs)
        )
        nearest = np.argmin(np.where(linked, pairs.along, np.inf), axis=1)  # the first of equals, as before
        return {i: int(nearest[i]) for i in np.flatnonzero(linked.any(axis=1)).tolist()}

    def placed_side_by_side(self, pairs: PairGeometry) -> np.ndarray:
        """(N, N) bool: tiles i and j lie side by side as neighbours in a set do, along their pair's axis either way
        (their gap and their offset across it within this finder's tolerances; never a tile with itself)."""
        gap = np.abs(pairs.along) - pairs.mean_w
        placed = (
            pairs.has_axis
            & (pairs.across <= self.align_tolerance * pairs.mean_h)
            & (gap > -OVERLAP_TOLERANCE * pairs.mean_w)
            & (gap < self.gap_tolerance * pairs.mean_w)
        )
        np.fill_diagonal(placed, False)
        return placed

    @staticmethod
    def _gap(g: TileGeometry, i: int, j: int) -> float:
        return float(np.linalg.norm(g.centers[j] - g.centers[i]))


@dataclass(frozen=True, slots=True)
class ContextReading:
    """One tile re-read from its set's context: ``label`` replaces ``read`` (probabilities of both)."""

    index: int
    label: int
    probability: float
    read: int
    read_probability: float


class SetContext:
    """Re-reads the tiles that make a set invalid, when their runner-up labels make the set valid.

    Players lay valid sets far more often than invalid ones, and the classifier's mistakes on small tiles are
    mostly between look-alike numbers (10/13, 11/12, 6/9) with a close runner-up. So when a set is invalid as
    read, the labels that mend it by changing one tile, or two, are weighed by how much less probable the
    classifier found them than the labels read (the product of the ratios); the best mend is taken when it is
    at most :data:`CONTEXT_ODDS` times less probable and each new label has at least
    :data:`CONTEXT_MIN_PROBABILITY`. Re-read tiles are always marked uncertain: the table reads right, and a
    person still confirms before anything is reverted — a set really laid wrong with an unsure tile in it is
    flagged REVIEW, never silently passed.

    Odds of 20 are still far under the prior: on the settled tables of the eight bench games, where a quarter
    of the moves carry an injected violation, 11 sets in 979 (1.1 %) are invalid. With odds of 6, a black 13
    read as 10 in the frames that settled a bench game's table (13 the runner-up at 0.08-0.30 per frame) was
    left as read, broke a valid run and, until it was at least marked uncertain, sent its player back. Two
    tiles: a group of three 10s in a font where 10 and 13 look alike was read 10, 13, 13 (the 13s' runner-up
    10 at 0.21 and 0.49); the one-tile mend, the first 10 as 13 (0.04 against 0.95), is less likely than both
    13s as 10s.
    """

    def __init__(
        self,
        *,
        odds: float = CONTEXT_ODDS,
        min_probability: float = CONTEXT_MIN_PROBABILITY,
        alternatives: int = CONTEXT_ALTERNATIVES,
    ) -> None:
        self.odds = odds
        self.min_probability = min_probability
        self.alternatives = alternatives

    def reread(self, chain: list[int], class_id: np.ndarray, probs: np.ndarray) -> list[ContextReading]:
        """The re-read tiles of the most probable mend of the set, or none (see the class docstring)."""
        labels = [int(class_id[i]) for i in chain]
        if len(chain) < 3 or _valid_somewhere(labels):
            return []
        options = [self._alternatives(index, labels[position], probs) for position, index in enumerate(chain)]
        singles = [(ratio, {p: label}) for p, choices in enumerate(options) for label, ratio in choices]
        pairs = [
            (ratio_a * ratio_b, {first: label_a, second: label_b})
            for first, second in combinations(range(len(chain)), 2)
            if options[first]
            and options[second]
            # jokers in both places must make the set valid first (one check instead of up to nine), unless the
            # set holds a joker already: a third one is never valid
            and (JOKER_INDEX in labels or _valid_somewhere(_changed(labels, {first: JOKER_INDEX, second: JOKER_INDEX})))
            for label_a, ratio_a in options[first]
            for label_b, ratio_b in options[second]
        ]
        mends = [
            (ratio, changes)
            for ratio, changes in singles + pairs
            if ratio >= 1.0 / self.odds and _valid_somewhere(_changed(labels, changes))
        ]
        if not mends:
            return []
        _, changes = max(mends, key=lambda mend: mend[0])  # the first of equals: one tile rather than two
        return [
            ContextReading(chain[p], label, float(probs[chain[p], label]), labels[p], float(probs[chain[p], labels[p]]))
            for p, label in changes.items()
        ]

    def _alternatives(self, index: int, read: int, probs: np.ndarray) -> list[tuple[int, float]]:
        """(label, probability ratio to the label read) of a tile's most probable other labels worth trying: never
        the joker, which mends every set, so a set made valid by it is no evidence for it (2 tiles in 106). Measured on
        770 held-out edition scenes (2026-11-29): 19 tiles re-read as jokers, 2 of them right, 6 read right before."""
        row = probs[index].astype(np.float64)
        read_probability = max(float(row[read]), 1e-9)
        ranked = [int(label) for label in np.argsort(-row, kind="stable") if int(label) not in (read, JOKER_INDEX)]
        return [
            (label, float(row[label]) / read_probability)
            for label in ranked[: self.alternatives]
            if row[label] >= self.min_probability and row[label] / read_probability >= 1.0 / self.odds
        ]


def _changed(labels: list[int], changes: dict[int, int]) -> list[int]:
    """``labels`` with the labels at some positions replaced ({position: label})."""
    return [changes.get(position, label) for position, label in enumerate(labels)]


def _valid_somewhere(labels: Sequence[int]) -> bool:
    """The labels in this order are a valid set under at least one rule profile."""
    return _valid_labels(tuple(labels))


@lru_cache(maxsize=4096)
def _valid_labels(labels: tuple[int, ...]) -> bool:
    tiles = [Tile.parse(ALL_LABELS[i]) for i in labels]
    return any(check_set(tiles, profile).valid for profile in PROFILES.values())


def turned_round(detections: Detections, finder: SetFinder | None = None) -> np.ndarray:
    """(N,) bool: the tiles whose up is read half-way round from their row's, one at a time.

    The classifier's up direction is sometimes wrong by half a turn while its label is right (a 4 read as a 4 at
    180 degrees): measured on the held-out editions' scenes after enrolment (``enrol_bench``, 40 scenes each,
    2026-11-29), 9, 7 and 7 of about 1,800 set tiles, 3, 3 and 1 of them read at 0.8 or over. :class:`SetFinder`
    links only tiles turned alike, so such a tile split a valid run into invalid pieces of confident tiles: a table
    read wrong with nothing uncertain, a false REVERT. A tile is turned round here when every row neighbour it has
    (the nearest tile on each side along its reading axis, placed as :class:`SetFinder` places neighbours, its up
    either way) is turned at least :data:`TURNED_DEG` from it, and it has two of them or its one neighbour has a
    neighbour of its own turned like it: one stray tile in a row of others, never a set of tiles laid the other way
    round beside another set (two sets end to end stay two sets)."""
    finder = finder or SetFinder()
    n = len(detections)
    if n < 2:
        return np.zeros(n, bool)
    g = TileGeometry.of(detections)
    difference = _angle_difference(g.angle[:, None], g.angle[None, :])
    opposite = difference >= TURNED_DEG
    alike = difference <= finder.angle_tolerance_deg
    pairs = PairGeometry.of(g, turned=opposite)  # the pair's axis, either way round
    linked = (opposite | alike) & finder.placed_side_by_side(pairs)
    # each tile's nearest neighbour on either side of it along its own reading axis
    side = np.einsum("ijk,ik->ij", pairs.offset, g.right) > 0
    distance = np.where(linked, np.abs(pairs.along), np.inf)
    neighbours: list[list[int]] = []
    for i in range(n):
        near = []
        for on_side in (side[i], ~side[i]):
            row = np.where(on_side, distance[i], np.inf)
            j = int(np.argmin(row))
            if np.isfinite(row[j]):
                near.append(j)
        neighbours.append(near)
    turned = np.zeros(n, bool)
    for i, near in enumerate(neighbours):
        if not near or not all(opposite[i, j] for j in near):
            continue
        if len(near) == 2 or any(alike[j, k] for j in near for k in neighbours[j] if k != i):
            turned[i] = True
    return turned


class TableBuilder:
    """Labelled detections to a :class:`Table`: ``build(detections) -> Table``."""

    def __init__(
        self,
        *,
        min_confidence: float = MIN_CONFIDENCE,
        finder: SetFinder | None = None,
        context: SetContext | None = None,
        use_context: bool = True,
    ) -> None:
        self.min_confidence = min_confidence
        self.finder = finder or SetFinder()
        self.context = (context or SetContext()) if use_context else None
        self.joiner = SetFinder(angle_tolerance_deg=JOIN_ANGLE_DEG, gap_tolerance=JOIN_GAP) if use_context else None

    def build(self, detections: Detections) -> Table:
        if (detections.class_id < 0).any():
            raise ValueError("group_tiles needs classified detections (class_id -1 found): run the classifier first")
        turned = turned_round(detections, self.finder)
        if turned.any():  # read in its row's direction; a 6 or 9 turned round is uncertain (see turned_round)
            angle = np.asarray(detections.data.get("angle_deg", np.zeros(len(detections))), np.float64)
            detections = detections.with_(angle_deg=np.where(turned, (angle + 180.0) % 360.0, angle))
        chains = self.finder.find(detections)
        chains, junctions = self._join_split_sets(chains, detections)
        geometry = TileGeometry.of(detections)
        row_height = float(np.median(geometry.height)) if len(detections) else 1.0
        chains.sort(key=lambda chain: _reading_key(geometry.centers[chain[0]], row_height))
        sets = [chain for chain in chains if len(chain) > 1]
        loose = [chain[0] for chain in chains if len(chain) == 1]
        class_id = detections.class_id.copy()
        confidence = detections.confidence.astype(np.float64)
        rereads = self._rereads(sets, detections)
        for reread in rereads.values():
            class_id[reread.index], confidence[reread.index] = reread.label, reread.probability
        tiles = [Tile.parse(ALL_LABELS[i]) for i in class_id.tolist()]
        uncertain: set[Place] = set()
        extras: dict[Place, dict[str, object]] = {}

        def place(index: int, where: Place) -> Tile:
            extras[where] = {
                "box": [round(float(v), 1) for v in detections.xyxy[index]],
                "confidence": round(float(confidence[index]), 4),
            }
            if index in rereads:
                reread = rereads[index]
                extras[where]["read_as"] = ALL_LABELS[reread.read]
                extras[where]["read_confidence"] = round(reread.read_probability, 4)
            if turned[index]:
                extras[where]["turned_round"] = True
            turn_sensitive = turned[index] and tiles[index].number in TURN_SENSITIVE_NUMBERS
            if confidence[index] < self.min_confidence or index in rereads or index in junctions or turn_sensitive:
                uncertain.add(where)
            return tiles[index]

        table_sets = [[place(index, (s, p)) for p, index in enumerate(chain)] for s, chain in enumerate(sets)]
        table_loose = [place(index, (LOOSE, p)) for p, index in enumerate(loose)]
        table = Table.of(table_sets, table_loose)
        return Table(table.sets, table.loose, frozenset(uncertain), extras)

    def _join_split_sets(self, chains: list[list[int]], detections: Detections) -> tuple[list[list[int]], set[int]]:
        """Pieces of one row that are no set on their own but one valid set together: joined, and the tiles at
        each join marked uncertain (a gap wider than a set's, or a tile turned further than its neighbours:
        one set or two is for a person to say, never a reason to send anybody back)."""
        if self.joiner is None or len(chains) < 2:
            return chains, set()
        labels = detections.class_id
        owner = {index: k for k, chain in enumerate(chains) for index in chain}
        joined: list[list[int]] = []
        used: set[int] = set()
        junctions: set[int] = set()
        for row in self.joiner.find(detections):
            parts = list(dict.fromkeys(owner[i] for i in row))
            pieces = [chains[k] for k in parts]
            if len(parts) < 2 or [i for piece in pieces for i in piece] != row:
                continue
            if all(len(p) >= 3 and _valid_somewhere([int(labels[i]) for i in p]) for p in pieces):
                continue  # sets of their own, side by side
            if not _valid_somewhere([int(labels[i]) for i in row]):
                continue
            joined.append(row)
            used.update(parts)
            for left, right in pairwise(pieces):
                junctions.update((left[-1], right[0]))
        return [*joined, *(chain for k, chain in enumerate(chains) if k not in used)], junctions

    def _rereads(self, sets: list[list[int]], detections: Detections) -> dict[int, ContextReading]:
        """Tiles re-read from their set's context (see :class:`SetContext`), by index."""
        probs = detections.data.get("probs")
        if self.context is None or probs is None:
            return {}
        probs = weighed_by_doubt(np.asarray(probs), detections.class_id, detections.confidence)
        return {
            reread.index: reread for chain in sets for reread in self.context.reread(chain, detections.class_id, probs)
        }


def weighed_by_doubt(probs: np.ndarray, class_id: np.ndarray, confidence: np.ndarray) -> np.ndarray:
    """(N, labels) probabilities with each tile's doubt put in: where a check lowered a tile's confidence under the
    probability the classifier gave its label (its crop turned round named another label, its ink lies in another
    colour's cluster, it looks unfamiliar, the picture's edge cuts it), the label keeps that confidence and the rest
    goes to the other labels in the classifier's own proportions; a tile no check doubted keeps its probabilities.

    Without it :class:`SetContext` weighed a doubted tile's runner-up by the classifier's certainty alone: an
    orange 7 read 1 at 0.998 and doubted to 0.5 by the turned look had its 7 at 0.002 of the 1, under any odds."""
    weighed = np.asarray(probs, np.float64).copy()
    if not len(weighed):
        return weighed
    rows = np.arange(len(weighed))
    read = weighed[rows, class_id]
    kept = np.minimum(np.asarray(confidence, np.float64), read)
    rest = 1.0 - read
    scale = np.divide(1.0 - kept, rest, out=np.ones_like(rest), where=(kept < read) & (rest > 0))
    weighed *= scale[:, None]
    weighed[rows, class_id] = kept
    return weighed


def _reading_key(center: np.ndarray, row_height: float) -> tuple[int, float]:
    return (math.floor(center[1] / (ROW_BAND * 2 * row_height)), float(center[0]))


def group_tiles(detections: Detections, *, min_confidence: float = MIN_CONFIDENCE, use_context: bool = True) -> Table:
    """The table read from labelled detections: sets in reading order, loose tiles, uncertain places."""
    return TableBuilder(min_confidence=min_confidence, use_context=use_context).build(detections)
