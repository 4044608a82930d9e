"""The same tile read again: a tile that has not moved since the table last settled is the tile read then.

Each settled table is read from a few frames of one still picture (:func:`vision.runtime.track.fuse`). The next
settled table is read from another picture, and a tile nobody touched in between is the same physical tile, read a
second time. Two readings of one tile are two opinions about it; they are weighed here, per tile, before the table is
built (:meth:`TileMemory.weigh`), on the evidence of the last settled table (:meth:`TileMemory.remember`):

- **The same label, read certain before**: the tile keeps that certainty. A tile's reading can drop under the
  layout's :data:`~vision.runtime.layout.MIN_CONFIDENCE` without the tile changing: the familiarity check
  (:mod:`vision.runtime.familiarity`) caps a tile whose look is a little far from the real photos, and its distance
  wanders around the threshold from one picture to the next (issue 16: a black-9 of the bench's game g2 read 0.9986
  after one move and capped to 0.5 after the next, distance 409-518 against 386, untouched in between). Once
  certain, such a tile made every later move that extended its set a REVIEW.
- **Another label, both readings certain**: one of them is wrong, and nothing says which: the tile becomes
  uncertain (REVIEW, never REVERT). Seen on the same game: a red-10 lying still, read red-10 at 0.999, was read
  red-13 at 0.98 after the next move (its box 2 px shorter), which made its run invalid; only two other tiles'
  unrelated doubts kept that move from a false REVERT. Not when the tiles slid along (:func:`_beside`: the new
  label lay next to the spot, or the old one lies next to it now): a run extended at its front may be pushed along.

A tile counts as the same only when its box is where it was (each edge within :data:`SAME_BOX_PX`) *and* its face
shows the same picture (:func:`same_face`): a tile taken away and another laid in its place (a joker won back, a set
rebuilt on the same spot) is a new tile, read on its own. Anything else (a tile read uncertain before, a tile
nowhere before, a new picture) is left as read. The memory holds one table's picture: the last frame of the last
settled table, so a table that changed unseen since then shows new pictures and nothing is carried.

No ruling is made here: confidences in, confidences out (the layout turns them into uncertain places).

Measured on issue 16's 10-game bench set (``bench pipeline``, both rows, the commit before this module and the one
that added it, in the same run): every move ruled the same but one, g6's move 9, a true REVERT (a tile moved between
sets, none from the rack) ruled REVIEW for a black-10 doubted in the table before it, now REVERT (the black-10 was
certain before, untouched). Clean moves ruled REVIEW stay 15 of 114: their doubted tiles are nearly all tiles laid by
the move itself, which no earlier reading vouches for (capped by the familiarity check's tile test on 12 of the 15).
g2's move 7 stays REVIEW, now for its red-10 read red-13 rather than for the two capped 9s. Analysis time the same
within the machine's noise (auto row 463.4 -> 476.4 s, true play area 437.1 -> 427.8 s, load average 15-19); one
weighing of 30 doubted tiles all where they lay takes 14 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from referee.table import Table
from referee.tiles import ALL_LABELS
from vision.runtime.detections import Detections
from vision.runtime.familiarity import UNFAMILIAR_CONFIDENCE
from vision.runtime.layout import MIN_CONFIDENCE

SAME_BOX_PX = 6.0
"""A tile lies where it lay when each edge of its box is within this of its box then. Tiles left in place with the
same label, matched between consecutive settled tables of issue 16's 10 bench games (720p, tiles 20-40 px): the
largest edge offset has median 1.5 px, 90th percentile 5.0, 99th 6.7 of 1,038 (the detector's box wanders, the
synthetic camera drifts by up to 3 px each way); a tile's width is 20 px or more."""
ALIGN_PX = 6
"""Shifts (in pixels, each way) searched to line the two pictures of a tile's box up before they are compared."""
SAME_LEVEL = 50
"""A pixel of the face's middle changed when a colour channel differs by more than this (8-bit levels), aligned."""
SAME_SHARE = 0.15
"""A tile shows the same face when under this share of its face's middle changed (:func:`face_change`). Measured
on the same games (box offsets up to 6 px): tiles left in place with the same label, median 0.0, 90th percentile
0.055, 99th 0.23 of 994 (the tail: sets re-laid on the spot, where nothing is carried); the tiles of the examples
above 0.053 (black-9), 0.112 (blue-9), 0.099 (red-10), and an orange-10 of the tilted game g3b 0.083; tiles truly
replaced on the same spot 0.24-0.38 (all 6: a set rebuilt where another lay, on the tilted game's 20-px tiles: red-8
by blue-10, orange-8 by a joker, a joker by blue-12, blue-8 by blue-13; two jokers won back, replaced by blue-10 and
orange-12)."""
BESIDE = 1.6
"""A neighbour's centre lies within this many of a tile's longer side (a row's pitch is a side and a gap)."""
MIDDLE = 0.25
"""The face's middle, where the digit is: the box less this share of its width and height on each side."""


@dataclass(frozen=True)
class _Remembered:
    """The last settled table's tiles (boxes, labels, certain or not) and the picture they were read from."""

    image: np.ndarray
    boxes: np.ndarray
    labels: np.ndarray
    confidence: np.ndarray
    certain: np.ndarray


class TileMemory:
    """The last settled table, kept to weigh the next one's readings (see the module's docstring)."""

    def __init__(self) -> None:
        self._last: _Remembered | None = None

    def remember(self, image: np.ndarray, table: Table) -> None:
        """``table`` settled, read from ``image`` (its tiles' ``box`` and ``confidence`` from the layout)."""
        boxes, labels, confidence, certain = [], [], [], []
        for place, tile in table.places():
            extra = table.extras.get(place, {})
            box = extra.get("box")
            if box is None:
                continue
            boxes.append([float(v) for v in box])
            labels.append(ALL_LABELS.index(str(tile)))
            confidence.append(float(extra.get("confidence", 0.0)))
            certain.append(place not in table.uncertain)
        self._last = _Remembered(
            np.array(image, copy=True),  # a frame buffer a capture may fill again
            np.asarray(boxes, np.float32).reshape(-1, 4),
            np.asarray(labels, np.int64),
            np.asarray(confidence, np.float32),
            np.asarray(certain, bool),
        )

    def forget(self) -> None:
        self._last = None

    def weigh(self, image: np.ndarray, tiles: Detections) -> Detections:
        """``tiles`` (a settling table's fused reading of ``image``) with each tile that lies as it lay in the last
        settled table weighed against its reading then: the same label read certain then keeps that confidence;
        a certain reading of another label makes it uncertain."""
        last = self._last
        if last is None or not len(tiles) or not len(last.boxes) or last.image.shape != image.shape:
            return tiles
        confidence = np.asarray(tiles.confidence, np.float32).copy()
        for i in range(len(tiles)):
            j = _same_box(tiles.xyxy[i], last.boxes)
            if j is None or not last.certain[j]:
                continue
            label = int(tiles.class_id[i])
            same_label, doubted = label == int(last.labels[j]), confidence[i] < MIN_CONFIDENCE
            if same_label and doubted and same_face(last.image, image, tiles.xyxy[i]):
                confidence[i] = last.confidence[j]  # certain as it was read
            elif (
                not same_label
                and not doubted
                and not _beside(last.boxes, last.labels, last.certain, j, label)
                and not _beside(tiles.xyxy, tiles.class_id, confidence >= MIN_CONFIDENCE, i, int(last.labels[j]))
                and same_face(last.image, image, tiles.xyxy[i])
            ):
                confidence[i] = min(float(confidence[i]), UNFAMILIAR_CONFIDENCE)  # one reading is wrong
        if np.array_equal(confidence, tiles.confidence):
            return tiles
        return tiles.with_(confidence=confidence)


def _beside(boxes: np.ndarray, labels: np.ndarray, certain: np.ndarray, k: int, label: int) -> bool:
    """Whether ``label`` is read for certain next to tile ``k`` of a reading (centres within :data:`BESIDE` of its
    longer side). A set slid along (a run extended at its front) puts each tile where its neighbour lay: a label
    that lay beside the spot before, or the old label now lying beside it, is a tile that moved, no misreading
    (drawn test tiles' faces may differ too little to tell)."""
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    side = float(np.max(boxes[k, 2:] - boxes[k, :2]))
    near = np.linalg.norm(centres - centres[k], axis=1) <= BESIDE * side
    near[k] = False
    return bool((near & certain & (labels == label)).any())


def _same_box(box: np.ndarray, boxes: np.ndarray) -> int | None:
    """The index of the box in ``boxes`` whose edges all lie within :data:`SAME_BOX_PX` of ``box`` (the nearest)."""
    offsets = np.abs(boxes - np.asarray(box, np.float32)).max(axis=1)
    j = int(np.argmin(offsets))
    return j if offsets[j] <= SAME_BOX_PX else None


def same_face(before: np.ndarray, after: np.ndarray, box: np.ndarray) -> bool:
    """Whether the tile at ``box`` in ``after`` shows the face that ``before`` showed there: under
    :data:`SAME_SHARE` of its face's middle changed (:func:`face_change`)."""
    change = face_change(before, after, box)
    return change is not None and change < SAME_SHARE


def face_change(before: np.ndarray, after: np.ndarray, box: np.ndarray) -> float | None:
    """The share of the face's middle (:data:`MIDDLE`) of the tile at ``box`` changed by more than
    :data:`SAME_LEVEL` between ``before`` and ``after``, once the two pictures of the box (and a few pixels around
    it) are lined up by the shift of up to :data:`ALIGN_PX` that matches them best; None where the box is too near
    the picture's edge, or too small, to compare."""
    height, width = after.shape[:2]
    x0, y0, x1, y1 = (float(v) for v in box)
    margin = 3
    left, top = int(np.floor(x0)) - margin, int(np.floor(y0)) - margin
    right, bottom = int(np.ceil(x1)) + margin, int(np.ceil(y1)) + margin
    if left - ALIGN_PX < 0 or top - ALIGN_PX < 0 or right + ALIGN_PX > width or bottom + ALIGN_PX > height:
        return None  # at the picture's edge: not enough of it to compare
    if right - left < 8 or bottom - top < 8:
        return None
    now = after[top:bottom, left:right]
    window = before[top - ALIGN_PX : bottom + ALIGN_PX, left - ALIGN_PX : right + ALIGN_PX]
    # the shift that matches best (least squared difference over the channels), found by template matching
    _, _, (x, y), _ = cv2.minMaxLoc(cv2.matchTemplate(window, now, cv2.TM_SQDIFF))
    then = window[y : y + (bottom - top), x : x + (right - left)]
    best = np.abs(now.astype(np.int16) - then.astype(np.int16))
    if best.ndim == 3:
        best = best.max(axis=2)
    rows, cols = best.shape
    dy, dx = round(margin + MIDDLE * (rows - 2 * margin)), round(margin + MIDDLE * (cols - 2 * margin))
    middle = best[dy : rows - dy, dx : cols - dx]
    return float((middle > SAME_LEVEL).mean()) if middle.size else None
