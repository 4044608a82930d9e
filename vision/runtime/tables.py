"""Readings to a table: one :func:`read_table` for a photo and for the fused frames of a game, told apart by a
:class:`TablePolicy` (:data:`PHOTO`, :data:`FRAMES`) that says how boxes most likely not tiles are left out.

A photo is read once: its reader leaves out the boxes nobody can name before the colour and familiarity steps look at
the table as a whole (:attr:`TablePolicy.reader_not_a_tile`). The frames of a game are read keeping every box, fused
over several readings (:func:`vision.runtime.track.fuse`), and only then judged, with the detector's confidence and
the boxes' neighbours as evidence (:attr:`TablePolicy.weak_below`). Either way, the boxes left out travel with the
table: a ruling that would send tiles back while boxes were left out is REVIEW, never REVERT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from referee.table import Table
from vision.runtime.detections import Detections
from vision.runtime.layout import SetFinder, group_tiles
from vision.runtime.reader import NOT_A_TILE, PHOTO_NOT_A_TILE, Reading, tile_likelihood

WEAK_DETECTION = 0.45
"""Detector confidence under which a box needs a confidently detected neighbour to be trusted."""
DOUBTFUL_CONFIDENCE = 0.4
"""Confidence given to a weak box standing alone (below the layout's threshold: uncertain)."""


@dataclass(frozen=True, slots=True)
class TablePolicy:
    """How a table is read from readings: what the reader leaves out itself, and what :func:`read_table` leaves out
    after it."""

    reader_not_a_tile: float
    """The reader's ``not_a_tile``: boxes whose :func:`~vision.runtime.reader.tile_likelihood` is under it are left
    out of each reading (0: every box kept, to be judged after fusing)."""
    not_a_tile: float = 0.0
    """After reading: a box under this likelihood is one nobody can name..."""
    weak_below: float | None = None
    """...and left out when its detector confidence is also under this; a weak box standing alone is left out and a
    row of weak boxes kept uncertain. None: no rule after reading (the reader's own is the whole policy)."""


PHOTO = TablePolicy(reader_not_a_tile=PHOTO_NOT_A_TILE)
"""A single photo (``check``, ``read``): the reader leaves out what is most likely not a tile."""
FRAMES = TablePolicy(reader_not_a_tile=0.0, not_a_tile=NOT_A_TILE, weak_below=WEAK_DETECTION)
"""The fused frames of a game (the live pipeline): every box read, judged after fusing."""


@dataclass(frozen=True)
class TableReading:
    """A reading as a table, and the boxes left out of it as most likely not tiles."""

    table: Table
    left_out: Detections


def read_table(reading: Reading | Detections, policy: TablePolicy = FRAMES) -> TableReading:
    """The table in a reading (or fused detections), leaving out what is most likely not a tile; the boxes the
    reader left out already are carried along.

    Under :data:`FRAMES`: on plain or glossy table tops the detector fires weakly on texture and glare; real tiles
    under glare are detected weakly too, and neither can be told apart for sure. So:

    - a weak box (detector confidence under ``weak_below``) that the classifier cannot name either (the
      product of their confidences under ``not_a_tile``) is left out, and so is a weak box standing alone: a
      real tile never lies alone on a settled table unless it is misplaced;
    - a box the detector saw well but the classifier cannot name is a tile whose face cannot be read (glare
      washing it out, say): it is kept, uncertain, so the ruling asks a person rather than passing a table
      with a tile missing;
    - a row of weak boxes is kept, every tile in it uncertain.

    The boxes left out are counted with the table: a move whose ruling would send tiles back while boxes were
    left out of its tables becomes REVIEW (:class:`vision.game.moves.GameKeeper`), so leaving out a real tile can
    never cause a false REVERT.
    """
    if not isinstance(reading, Reading):
        return _judged(reading, policy)
    found = _judged(reading.detections, policy)
    if not len(reading.left_out):
        return found
    return TableReading(found.table, Detections.merge([reading.left_out, found.left_out]))


def _judged(detections: Detections, policy: TablePolicy) -> TableReading:
    strength = detections.data.get("detector_confidence")
    if policy.weak_below is None or strength is None or not len(detections):
        return TableReading(group_tiles(detections), Detections.empty())
    weak_below, not_a_tile = policy.weak_below, policy.not_a_tile
    strength = np.asarray(strength, np.float64)
    unnamed = tile_likelihood(detections) < not_a_tile
    unlikely = unnamed & (strength < weak_below)
    kept, weak, unreadable = detections[~unlikely], strength[~unlikely] < weak_below, unnamed[~unlikely]
    lone, doubtful = np.zeros(len(kept), bool), unreadable.copy()
    for chain in SetFinder().find(kept):
        if all(weak[i] for i in chain):
            (lone if len(chain) == 1 else doubtful)[chain] = True
    capped = np.where(doubtful, np.minimum(kept.confidence, DOUBTFUL_CONFIDENCE), kept.confidence)
    kept = kept.with_(confidence=capped)
    return TableReading(group_tiles(kept[~lone]), Detections.merge([detections[unlikely], kept[lone]]))
