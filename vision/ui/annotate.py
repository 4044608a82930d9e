"""Overlays, after supervision's annotators: each has one verb, ``annotate(scene, detections_or_table) -> image``.

They draw on a copy of the scene (BGR uint8) and accept either :class:`Detections` or a :class:`Table` read by
:mod:`vision.runtime.layout` (whose places carry their ``box``). Compose them as a list::

    for annotator in (BoxAnnotator(), LabelAnnotator(), SetAnnotator()):
        scene = annotator.annotate(scene, table)
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from referee.profiles import DEFAULT_PROFILE
from referee.table import Table
from referee.tiles import Tile, TileError
from vision.runtime.detections import Detections
from vision.runtime.layout import MIN_CONFIDENCE

COLOURS_BGR: dict[str, tuple[int, int, int]] = {
    "black": (60, 60, 60),
    "red": (40, 40, 220),
    "blue": (200, 110, 20),
    "orange": (0, 150, 255),
    "joker": (200, 40, 200),
    "tile": (0, 200, 0),
}
UNCERTAIN_BGR = (0, 0, 255)
VALID_BGR = (0, 190, 0)
INVALID_BGR = (0, 0, 230)


@dataclass(frozen=True, slots=True)
class Item:
    """One tile to draw: box, label, confidence, and whether its reading is uncertain."""

    box: tuple[float, ...]
    """x0, y0, x1, y1 in the image's pixels."""
    label: str
    confidence: float
    uncertain: bool


def items_of(source: Detections | Table, uncertain_below: float = MIN_CONFIDENCE) -> list[Item]:
    if isinstance(source, Detections):
        return [
            Item(tuple(map(float, box)), label, float(conf), bool(conf < uncertain_below))
            for box, label, conf in zip(source.xyxy, source.labels, source.confidence, strict=True)
        ]
    items = []
    for place, tile in source.places():
        extra = source.extras.get(place, {})
        if "box" in extra:
            confidence = float(extra.get("confidence", 1.0))
            items.append(Item(tuple(map(float, extra["box"])), str(tile), confidence, place in source.uncertain))
    return items


def _short(label: str) -> str:
    try:
        return Tile.parse(label).short
    except TileError:
        return label


def _colour_of(label: str) -> tuple[int, int, int]:
    return COLOURS_BGR.get(label.split("-")[0], COLOURS_BGR["tile"])


def _dashed_rectangle(image: np.ndarray, box: tuple[float, ...], colour: tuple[int, int, int], thickness: int) -> None:
    x0, y0, x1, y1 = (round(v) for v in box)
    dash = max(4, thickness * 3)
    for start, end in (((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)), ((x0, y1), (x0, y0))):
        length = max(abs(end[0] - start[0]), abs(end[1] - start[1]))
        for offset in range(0, length, 2 * dash):
            a, b = offset / max(length, 1), min(offset + dash, length) / max(length, 1)
            p = (round(start[0] + (end[0] - start[0]) * a), round(start[1] + (end[1] - start[1]) * a))
            q = (round(start[0] + (end[0] - start[0]) * b), round(start[1] + (end[1] - start[1]) * b))
            cv2.line(image, p, q, colour, thickness, cv2.LINE_AA)


class BoxAnnotator:
    """A box per tile in its colour class; uncertain tiles get a thicker dashed red box."""

    def __init__(self, *, thickness: int = 2, uncertain_below: float = MIN_CONFIDENCE) -> None:
        self.thickness = thickness
        self.uncertain_below = uncertain_below

    def annotate(self, scene: np.ndarray, source: Detections | Table) -> np.ndarray:
        image = scene.copy()
        for item in items_of(source, self.uncertain_below):
            if item.uncertain:
                _dashed_rectangle(image, item.box, UNCERTAIN_BGR, self.thickness + 1)
            else:
                x0, y0, x1, y1 = (round(v) for v in item.box)
                cv2.rectangle(image, (x0, y0), (x1, y1), _colour_of(item.label), self.thickness, cv2.LINE_AA)
        return image


class LabelAnnotator:
    """The label (and confidence) of each tile on a filled background of its colour, above its box where there is
    room: a label wider than its tile would cover its neighbours' labels, so each goes to the first free place
    (above, below, centred, then further out with a thin line back to its tile; :meth:`places`)."""

    MAX_ROWS = 6
    """How far out (in label heights) a label may go to find a free place."""

    def __init__(
        self,
        *,
        scale: float = 0.45,
        show_confidence: bool = True,
        uncertain_below: float = MIN_CONFIDENCE,
        short: bool = False,
    ) -> None:
        self.scale = scale
        self.show_confidence = show_confidence
        self.uncertain_below = uncertain_below
        self.short = short
        """Short labels (``r12``, ``k7``, ``j``): they fit above small tiles."""

    def text(self, item: Item) -> str:
        label = _short(item.label) if self.short else item.label
        return label + (f" {item.confidence:.2f}" if self.show_confidence else "") + ("?" * item.uncertain)

    def places(self, items: list[Item], width: int, height: int) -> list[tuple[int, int, int, int]]:
        """Where each item's label goes (x0, y0, x1, y1 of its background), in reading order: the nearest place
        that covers no label placed before it and no tile, else no label, else the least covered one."""
        tiles = np.asarray([item.box for item in items], float).reshape(-1, 4)
        labels = np.zeros((len(items), 4), float)
        result: dict[int, tuple[int, int, int, int]] = {}
        for done, i in enumerate(sorted(range(len(items)), key=lambda i: (items[i].box[1], items[i].box[0]))):
            (w, h), baseline = cv2.getTextSize(self.text(items[i]), cv2.FONT_HERSHEY_SIMPLEX, self.scale, 1)
            rects = _candidates(items[i].box, w, h + baseline, self.MAX_ROWS, width, height)
            # a label over another label is worse than one over a tile (their digits still show round it)
            on_tiles = _overlaps(rects, tiles) - _overlaps(rects, tiles[i : i + 1])
            cost = 1000.0 * _overlaps(rects, labels[:done]) + on_tiles
            best = rects[int(np.argmin(cost))]  # the first (nearest) of the cheapest
            labels[done] = best
            result[i] = (int(best[0]), int(best[1]), int(best[2]), int(best[3]))
        return [result[i] for i in range(len(items))]

    def annotate(self, scene: np.ndarray, source: Detections | Table) -> np.ndarray:
        image = scene.copy()
        items = items_of(source, self.uncertain_below)
        for item, (x0, y0, x1, y1) in zip(items, self.places(items, image.shape[1], image.shape[0]), strict=True):
            text = self.text(item)
            (_, _), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, self.scale, 1)
            colour = UNCERTAIN_BGR if item.uncertain else _colour_of(item.label)
            bx0, by0, bx1, by1 = (round(v) for v in item.box)
            if y1 < by0 - 1 or y0 > by1 + 1:  # not next to its tile: a line back to it
                start = ((x0 + x1) // 2, y1 if y1 < by0 else y0)
                cv2.line(image, start, ((bx0 + bx1) // 2, by0 if y1 < by0 else by1), colour, 1, cv2.LINE_AA)
            cv2.rectangle(image, (x0, y0), (x1, y1), colour, cv2.FILLED)
            cv2.putText(image, text, (x0, y1 - baseline), cv2.FONT_HERSHEY_SIMPLEX, self.scale, (255, 255, 255), 1)
        return image


def _candidates(box: tuple[float, ...], w: int, tall: int, rows: int, width: int, height: int) -> np.ndarray:
    """Places for a label (x0, y0, x1, y1 rows), nearest first: just above the tile, just below, then a row further
    out each time; at each, flush left with the tile, centred on it, flush right; each moved inside the picture."""
    x0, y0, x1, y1 = box
    steps = np.arange(rows, dtype=float) * (tall + 1)
    tops = np.stack([y0 - tall - steps, y1 + steps], axis=1).reshape(-1)
    lefts = np.asarray([x0, (x0 + x1 - w) / 2, x1 - w], float)
    left = np.clip(np.round(np.tile(lefts, len(tops))), 0, max(0, width - w))
    top = np.clip(np.round(np.repeat(tops, len(lefts))), 0, max(0, height - tall))
    return np.stack([left, top, left + w, top + tall], axis=1)


def _overlaps(rects: np.ndarray, others: np.ndarray) -> np.ndarray:
    """For each of ``rects`` (n x 4, x0 y0 x1 y1), the area it shares with ``others`` (m x 4), summed."""
    if not len(others):
        return np.zeros(len(rects))
    a, b = rects[:, None, :], others[None, :, :]
    width = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    height = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    return (width * height).sum(axis=1)


class SetAnnotator:
    """An outline around each set of a table: green when the set is valid, red when not (per the profile)."""

    def __init__(self, *, profile: str = DEFAULT_PROFILE, thickness: int = 3, margin: int = 4) -> None:
        self.profile = profile
        self.thickness = thickness
        self.margin = margin

    def annotate(self, scene: np.ndarray, source: Detections | Table) -> np.ndarray:
        image = scene.copy()
        if not isinstance(source, Table):
            return image
        for index, tile_set in enumerate(source.sets):
            boxes = [source.extras.get((index, p), {}).get("box") for p in range(len(tile_set))]
            boxes = [b for b in boxes if b is not None]
            if not boxes:
                continue
            corners = np.asarray(boxes, np.float32)
            x0, y0 = corners[:, :2].min(axis=0) - self.margin
            x1, y1 = corners[:, 2:].max(axis=0) + self.margin
            colour = VALID_BGR if tile_set.is_valid(self.profile) else INVALID_BGR
            cv2.rectangle(image, (round(x0), round(y0)), (round(x1), round(y1)), colour, self.thickness, cv2.LINE_AA)
        return image


def annotate_all(scene: np.ndarray, source: Detections | Table) -> np.ndarray:
    """The default overlay: sets, boxes and labels."""
    for annotator in (SetAnnotator(), BoxAnnotator(), LabelAnnotator()):
        scene = annotator.annotate(scene, source)
    return scene
