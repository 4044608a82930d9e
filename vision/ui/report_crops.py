"""A move's pictures at the camera's resolution, for the report (:mod:`vision.ui.report`).

The region of the table each move changed, cut from the analysed video before and after the move: the sets it
changed (as read after it) and those it broke up (as read before), with :data:`CROP_PAD_TILES` around, at least
:data:`CROP_MIN_SHARE` of the frame; the changed sets outlined in blue, the offending ones (the ruling's violations)
in red. The tiles' boxes are the ``box`` the reader left on each tile of the move's typed tables
(:attr:`referee.table.Table.extras`).
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from referee.events import Event, Move, Restore, TableRead
from referee.moves import Ruling
from referee.sets import TileSet
from referee.table import LOOSE, Table
from referee.tiles import Tile

CROP_PAD_TILES = 0.75
"""Room around a move's changed sets in its pictures, in tile heights (the neighbouring tiles show where it is)."""
CROP_MIN_SHARE = 0.15
"""A move's pictures show at least this share of the frame's width and height, centred on what it changed."""
CROP_QUALITY = 88
SEEK_FRAMES = 300
"""Frames further apart than this are reached by seeking (a long game is not decoded again from end to end)."""
CHANGED_BGR, OFFENDING_BGR = (230, 120, 20), (30, 30, 220)

Box = tuple[float, float, float, float]
Outline = tuple[Box, tuple[int, int, int]]


@dataclass(frozen=True, slots=True)
class MoveCrop:
    """A move's pictures (JPEG ``data:`` URIs) and their size in the camera's pixels."""

    after: str
    before: str | None
    width: int
    height: int
    offending: bool
    """An offending set is outlined (in red)."""


def shows_table_before(event: Event) -> TypeGuard[Move | Restore | TableRead]:
    """An event whose picture shows the table as the next move finds it: a move, a restore, a table reading (not a
    turn still being played in clock mode)."""
    if isinstance(event, TableRead):
        return event.reason != "changed during the turn"
    return isinstance(event, Move | Restore)


class MoveCrops:
    """The region each move changed, cut at full resolution from the analysed video, before and after the move.

    Frames are found by their index in the log, reading the video once from the start (seeking over long gaps).
    """

    def __init__(self, folder: Path, video: str | None, events: Sequence[Event]) -> None:
        self.folder, self.video, self.events = folder, video, events

    def cut(self) -> dict[int, MoveCrop]:
        """The pictures of each move by number; empty when the video cannot be read (moved, deleted, a camera): the
        report then shows the snapshots."""
        plans = self._plans()
        video = self._video()
        if not plans or video is None:
            return {}
        wanted: dict[int, list[tuple[int, str]]] = {}
        for number, plan in plans.items():
            wanted.setdefault(plan.frame, []).append((number, "after"))
            if plan.before_frame is not None:
                wanted.setdefault(plan.before_frame, []).append((number, "before"))
        images = self._frames(video, sorted(wanted))
        cut: dict[tuple[int, str], str] = {}
        size: dict[int, tuple[int, int]] = {}
        for index, uses in wanted.items():
            image = images.get(index)
            if image is None:
                continue
            for number, which in uses:
                plan = plans[number]
                x0, y0, x1, y1 = _clip(_at_least(plan.region, image.shape[1], image.shape[0]), *image.shape[1::-1])
                if x1 - x0 < 8 or y1 - y0 < 8:
                    continue
                crop = image[y0:y1, x0:x1].copy()
                _outline(crop, plan.outlines if which == "after" else plan.before_outlines, (x0, y0))
                cut[number, which] = _jpeg_uri(crop)
                size[number] = (x1 - x0, y1 - y0)
        return {
            number: MoveCrop(cut[number, "after"], cut.get((number, "before")), *size[number], plans[number].offending)
            for number in size
            if (number, "after") in cut
        }

    def _video(self) -> Path | None:
        if self.video is None or "://" in self.video:
            return None
        path = Path(self.video)
        candidates = [path] if path.is_absolute() else [path, self.folder / path, self.folder.parent / path]
        return next((c for c in candidates if c.is_file()), None)

    def _plans(self) -> dict[int, _Plan]:
        plans: dict[int, _Plan] = {}
        before_frame: int | None = None
        befores: dict[int, int | None] = {}
        """The frame before each move's first line: an amended move's before is the table before its first part."""
        for event in self.events:
            if isinstance(event, Move) and event.frame is not None:
                plan = _crop_plan(event, event.frame, befores.setdefault(event.number, before_frame))
                if plan is not None:
                    plans[event.number] = plan
            if shows_table_before(event) and event.frame is not None:
                before_frame = event.frame
        return plans

    @staticmethod
    def _frames(video: Path, indices: list[int]) -> dict[int, Any]:
        from vision.runtime.capture import CaptureError, open_source

        images: dict[int, Any] = {}
        try:
            source = open_source(str(video))
        except (CaptureError, OSError, ValueError):
            return images
        try:
            position = 0
            for index in indices:
                if index - position > SEEK_FRAMES:
                    if not source.seek(index):
                        break  # the video ends before it
                    position = index
                elif index > position:
                    position += source.skip(index - position)
                if index != position:
                    break
                frame = source.read()
                if frame is None:
                    break
                position = frame.index + 1
                if frame.index == index:
                    images[index] = frame.image
        except (CaptureError, OSError, ValueError):
            pass  # the frames read so far are kept
        finally:
            source.close()
        return images


@dataclass(frozen=True, slots=True)
class _Plan:
    """Which region of the frame a move changed, which of its sets to outline, and the frames to cut."""

    region: Box
    outlines: list[Outline]
    before_outlines: list[Outline]
    offending: bool
    frame: int
    before_frame: int | None


def _crop_plan(move: Move, frame: int, before_frame: int | None) -> _Plan | None:
    """The plan of a move's pictures (None: no tile of what it changed has a box)."""
    after_sets, before_sets = _boxed_sets(move.after), _boxed_sets(move.before)
    changed = _unmatched(after_sets, before_sets) | set(move.ruling.revert.changed_sets if move.ruling.revert else ())
    gone = _unmatched(before_sets, after_sets)
    offending = _offending_sets(move.ruling, after_sets) & set(range(len(after_sets)))
    changed = (changed | offending) & set(range(len(after_sets)))
    boxes = [box for i in changed for _, box in after_sets[i]] + [box for i in gone for _, box in before_sets[i]]
    boxes += [box for _, box in _boxed(move.after, LOOSE, move.after.loose)]
    found = [b for b in boxes if b is not None]
    if not found:
        return None
    corners = np.asarray(found, float)
    pad = CROP_PAD_TILES * float(np.median(corners[:, 3] - corners[:, 1]))
    region = (
        corners[:, 0].min() - pad,
        corners[:, 1].min() - pad,
        corners[:, 2].max() + pad,
        corners[:, 3].max() + pad,
    )
    outlines = [(_union(after_sets[i]), OFFENDING_BGR if i in offending else CHANGED_BGR) for i in sorted(changed)]
    before_outlines = [(_union(before_sets[i]), CHANGED_BGR) for i in sorted(gone)]
    return _Plan(
        region=region,
        outlines=[(box, colour) for box, colour in outlines if box is not None],
        before_outlines=[(box, colour) for box, colour in before_outlines if box is not None],
        offending=bool(offending),
        frame=frame,
        before_frame=before_frame,
    )


def _boxed(table: Table, set_index: int, tiles: Sequence[Tile]) -> list[tuple[Tile, Box | None]]:
    """The tiles of one set of a table (or its loose tiles) with the box each was read in, where it has one."""
    out: list[tuple[Tile, Box | None]] = []
    for position, tile in enumerate(tiles):
        box = table.extras.get((set_index, position), {}).get("box")
        if isinstance(box, list | tuple) and len(box) == 4 and all(isinstance(v, int | float) for v in box):
            x0, y0, x1, y1 = (float(v) for v in box)
            out.append((tile, (x0, y0, x1, y1)))
        else:
            out.append((tile, None))
    return out


def _boxed_sets(table: Table) -> list[list[tuple[Tile, Box | None]]]:
    return [_boxed(table, i, tile_set.tiles) for i, tile_set in enumerate(table.sets)]


def _unmatched(sets: list[list[tuple[Tile, Box | None]]], others: list[list[tuple[Tile, Box | None]]]) -> set[int]:
    """The sets of one table with no equal set on the other (each set of the other matched once)."""
    available = Counter(TileSet(tuple(t for t, _ in s)).layout_key for s in others)
    unmatched = set()
    for i, tiles in enumerate(sets):
        key = TileSet(tuple(t for t, _ in tiles)).layout_key
        if available[key] > 0:
            available[key] -= 1
        else:
            unmatched.add(i)
    return unmatched


def _offending_sets(ruling: Ruling, sets: list[list[tuple[Tile, Box | None]]]) -> set[int]:
    """The sets the violations name, or, for one that names tiles only, the sets holding those tiles."""
    offending: set[int] = set()
    for violation in ruling.violations:
        if violation.sets:
            offending.update(violation.sets)
            continue
        tiles = set(violation.tiles)
        offending.update(i for i, s in enumerate(sets) if any(tile in tiles for tile, _ in s))
    return offending


def _union(tiles: list[tuple[Tile, Box | None]]) -> Box | None:
    boxes = [box for _, box in tiles if box is not None]
    if not boxes:
        return None
    corners = np.asarray(boxes, float)
    x0, y0 = corners[:, :2].min(axis=0)
    x1, y1 = corners[:, 2:].max(axis=0)
    return x0, y0, x1, y1


def _at_least(region: Box, width: int, height: int) -> Box:
    """``region`` grown about its centre to :data:`CROP_MIN_SHARE` of the frame, then slid back inside it."""
    x0, y0, x1, y1 = region
    grown = []
    for low, high, size in ((x0, x1, width), (y0, y1, height)):
        span = max(high - low, CROP_MIN_SHARE * size)
        middle = (low + high) / 2
        start = min(max(0.0, middle - span / 2), max(0.0, size - span))
        grown.append((start, start + span))
    (gx0, gx1), (gy0, gy1) = grown
    return gx0, gy0, gx1, gy1


def _clip(region: Box, width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = region
    return max(0, int(x0)), max(0, int(y0)), min(width, int(np.ceil(x1))), min(height, int(np.ceil(y1)))


def _outline(crop: Any, outlines: list[Outline], origin: tuple[int, int]) -> None:
    import cv2

    height = crop.shape[0]
    thickness = max(2, round(height / 120))
    margin = thickness * 2
    for (x0, y0, x1, y1), colour in outlines:
        top_left = (round(x0 - origin[0]) - margin, round(y0 - origin[1]) - margin)
        bottom_right = (round(x1 - origin[0]) + margin, round(y1 - origin[1]) + margin)
        wide = thickness * 2 if colour == OFFENDING_BGR else thickness
        cv2.rectangle(crop, top_left, bottom_right, colour, wide, cv2.LINE_AA)


def _jpeg_uri(image: Any) -> str:
    import cv2

    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    return f"data:image/jpeg;base64,{base64.b64encode(data.tobytes()).decode()}" if ok else ""
