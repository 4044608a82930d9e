"""Is anything moving over the table? Cheap per-frame activity from small images.

Two comparisons on a downscaled, blurred copy of the play area:

- *motion*: the share of play-area pixels that changed since the previous sample (hands moving, tiles sliding);
- *arm*: a region that differs from the background (the frame of the last stable table) and touches the play
  area's border. Arms reach in from a player's side, so a hand resting still on the table still counts, while
  tiles put down inside the area do not. The side it touches, and where along it, name the seat the hands came
  from (:func:`vision.runtime.seats.seat_at`).

Against the background, colour counts besides grey: skin over a beige or grey table can be nearly as bright as
the table (17 grey levels apart on the grey-beige table of ``synth-game --seed 6``, short of
:data:`FOREGROUND_LEVEL`, so the arms of some seats went unseen) while its colour differs plainly (25
apart in chroma), so a pixel whose chroma (YCrCb's Cr and Cb) moved by :data:`CHROMA_LEVEL` is new over the table
as well.

Brightness is normalised by the ratio of mean levels before comparing, and colour by the shift of the mean
chroma, so a lamp switched on, a warmer bulb or a cloud does not look like a move; a change over most of the area
at once is reported as ``global_change`` instead.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import cv2
import numpy as np

from vision.runtime.seats import Edge

WORK_WIDTH = 320
"""Width in pixels of the image the comparisons run on."""
MOTION_LEVEL = 14
"""Grey-level change that counts as motion between two samples."""
FOREGROUND_LEVEL = 26
"""Grey-level change against the background that counts as something new over the table."""
CHROMA_LEVEL = 12.0
"""Change of colour against the background (distance in the Cr-Cb plane, 8-bit units) that counts as something new
over the table even where the grey level did not change. Still tables of the synthetic games measured up to 11
(99.9th percentile: single pixels the opening removes), arms 20-30."""
FAINT_LEVEL = 8
"""Grey-level change against the background that :meth:`ActivityMeter.faint_change` counts: tiles washed white on a
hot spot short of saturation showed 8-19 levels lighter than the spot before them (game-2002 of issue 16's glare set).
Only washed-out parts of the play area are looked at this finely: on the six glare games of that set nothing else
was marked (a video's noise left after the opening is smaller than half a tile)."""
ARM_MIN_SHARE = 0.012
"""Smallest region (share of the play area) touching the border that counts as an arm."""
HAND_SHARE = 0.06
"""Length of a hand, as a share of the small image's width (about 20 px of 320: a hand of 120 px in a 1080p frame of
the whole table): the part of an arm that far from its tip is where it reaches, the rest only passes over."""
GLOBAL_SHARE = 0.6
"""A change over more than this share of the play area at once is lighting or a camera bump, not a hand."""


@dataclass(frozen=True, slots=True)
class Activity:
    motion: float
    """Share of the play area that changed since the previous sample."""
    foreground: float
    """Share of the play area that differs from the background."""
    arm: bool
    """Something reaches over the border of the play area."""
    edge: Edge | None
    """The side of the play area the arm reaches in over."""
    global_change: bool
    """Most of the area changed at once: lighting or a camera bump."""
    along: float | None = None
    """Where along that side the arm crosses it, 0 to 1 (as :attr:`vision.runtime.seats.Seat.along` counts)."""

    @property
    def busy(self) -> bool:
        return self.arm or self.motion > 0.002

    def to_json(self) -> dict[str, object]:
        return {
            "motion": round(self.motion, 4),
            "foreground": round(self.foreground, 4),
            "arm": self.arm,
            "edge": None if self.edge is None else self.edge.label,
            "along": None if self.along is None else round(self.along, 3),
            "global_change": self.global_change,
        }


class ActivityMeter:
    """Compares each sampled frame with the previous one and with the background (the last stable table)."""

    def __init__(self, frame_size: tuple[int, int], play_area_px: np.ndarray | None = None) -> None:
        width, height = frame_size
        self.scale = WORK_WIDTH / width
        self.shape = (max(1, round(height * self.scale)), WORK_WIDTH)
        self.mask = np.zeros(self.shape, np.uint8)
        if play_area_px is None:
            self.mask[:] = 1
        else:
            polygon = np.round(np.asarray(play_area_px, np.float64) * self.scale).astype(np.int32)
            cv2.fillConvexPoly(self.mask, polygon, 1)
        self.area = max(1, int(self.mask.sum()))
        self.border = self.mask - cv2.erode(self.mask, np.ones((5, 5), np.uint8), borderValue=0)
        self.border_yx = np.nonzero(self.border > 0)
        """The border's pixels (rows, columns), in the order ``np.nonzero`` gives them."""
        ys, xs = np.nonzero(self.mask)
        self.centre = (float(xs.mean()), float(ys.mean())) if len(xs) else (self.shape[1] / 2, self.shape[0] / 2)
        self.extent = (
            (float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()))
            if len(xs)
            else (0.0, 0.0, self.shape[1] - 1.0, self.shape[0] - 1.0)
        )
        self.crop = _crop_box(frame_size, self.shape, self.extent, self.scale)
        """The part of the frame the small images are made from (``x0, y0, x1, y1`` in their pixels; the rest of them
        is 0): the play area's box and a margin for the blur, where the frame is a whole multiple of the small image
        (area averaging and linear sampling then give the same pixels inside as from the whole frame)."""
        self.previous: np.ndarray | None = None
        self.background: np.ndarray | None = None
        self.background_chroma: np.ndarray | None = None
        """The background's :meth:`small_chroma`; None for a grey camera."""
        self._peeked: _Peek | None = None
        """What :meth:`peek` saw last, for :meth:`measure` to take when it is shown the same frame next."""
        self.footprint: np.ndarray | None = None
        """(H, W) bool: where the activity reached in the frames measured since the background was set: the hand at
        an arm's end (not the rest of the arm, which only passes over) and whatever else is new over the table (tiles
        laid); :meth:`set_background` clears it."""

    def small(self, frame: np.ndarray) -> np.ndarray:
        box, part = self._cropped(frame)
        gray = cv2.cvtColor(part, cv2.COLOR_BGR2GRAY) if part.ndim == 3 else part
        small = cv2.resize(gray, (box[2] - box[0], box[3] - box[1]), interpolation=cv2.INTER_AREA)
        return self._placed(box, cv2.GaussianBlur(small, (5, 5), 0).astype(np.float32))

    def small_chroma(self, frame: np.ndarray) -> np.ndarray | None:
        """A small blurred YCrCb copy (height x width x 3, of which the comparison uses the chroma Cr and Cb); None
        for a grey frame.

        Linear resizing samples a few pixels only (a fifteenth of the cost of averaging them all at 1080p); the
        blur after it, and the camera's own halved colour resolution, smooth what it leaves out.
        """
        if frame.ndim != 3:
            return None
        box, part = self._cropped(frame)
        small = cv2.resize(part, (box[2] - box[0], box[3] - box[1]), interpolation=cv2.INTER_LINEAR)
        ycrcb = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2YCrCb)
        return self._placed(box, ycrcb.astype(np.float32))

    def _cropped(self, frame: np.ndarray) -> tuple[tuple[int, int, int, int], np.ndarray]:
        """The part of the small image made from ``frame`` (:attr:`crop`; all of it for a frame of another size than
        the meter's), and the frame's pixels under it."""
        whole = (0, 0, self.shape[1], self.shape[0])
        x0, y0, x1, y1 = self.crop
        step = round(1 / self.scale)
        if self.crop == whole or frame.shape[:2] != (self.shape[0] * step, self.shape[1] * step):
            return whole, frame
        return self.crop, frame[y0 * step : y1 * step, x0 * step : x1 * step]

    def _placed(self, box: tuple[int, int, int, int], small: np.ndarray) -> np.ndarray:
        """A small image of ``box`` at its place in the whole small image (0 around it)."""
        x0, y0, x1, y1 = box
        if box == (0, 0, self.shape[1], self.shape[0]):
            return small
        whole = np.zeros((self.shape[0], self.shape[1], *small.shape[2:]), np.float32)
        whole[y0:y1, x0:x1] = small
        return whole

    def faint_change(self, frame: np.ndarray, level: float = FAINT_LEVEL) -> np.ndarray | None:
        """(H, W) bool: where ``frame`` differs from the background by ``level`` grey levels or more (None without a
        background). Far under :data:`FOREGROUND_LEVEL`: for a washed-out part of the table, where a tile laid shows
        as a few levels lighter than the cloth around it (:mod:`vision.runtime.glare`)."""
        if self.background is None:
            return None
        return self._changed(self.small(frame), self.background, level).astype(bool)

    def set_background(self, frame: np.ndarray) -> None:
        """The table as it is now is the reference for 'something new over the table'."""
        self.background = self.small(frame)
        self.background_chroma = self.small_chroma(frame)
        self.footprint = None

    def measure(self, frame: np.ndarray) -> Activity:
        peeked, self._peeked = self._peeked, None
        if peeked is not None and peeked.shows(frame, self):
            current, chroma = peeked.current, peeked.chroma
            measured: tuple[Activity, np.ndarray] | None = (peeked.activity, peeked.foreground)  # measured already
        else:
            current, chroma = self.small(frame), self.small_chroma(frame)
            measured = None
        previous, self.previous = self.previous, current
        if self.background is None:
            self.background, self.background_chroma = current, chroma
        activity, foreground = measured if measured is not None else self._activity(current, chroma, previous)
        if not activity.global_change:  # a lighting change or a camera bump covers everything: no footprint
            self.footprint = foreground if self.footprint is None else self.footprint | foreground
        return activity

    def peek(self, frame: np.ndarray) -> Activity:
        """What :meth:`measure` would say of ``frame`` now, the meter unchanged: a decoder asking whether hands are
        still over the table. Shown the same frame next, :meth:`measure` takes this measurement instead of making
        it again."""
        current, chroma = self.small(frame), self.small_chroma(frame)
        background, background_chroma = self.background, self.background_chroma
        if background is None:
            self.background, self.background_chroma = current, chroma
        try:
            activity, foreground = self._activity(current, chroma, self.previous)
        finally:
            self.background, self.background_chroma = background, background_chroma
        self._peeked = _Peek(frame, self.previous, background, background_chroma, current, chroma, activity, foreground)
        return activity

    def _activity(
        self, current: np.ndarray, chroma: np.ndarray | None, previous: np.ndarray | None
    ) -> tuple[Activity, np.ndarray]:
        """The activity of a frame (its small images) against ``previous`` and the background, and where it reaches
        (the pixels that differ from the background, of an arm its hand only)."""
        assert self.background is not None
        motion_mask = self._changed(current, previous, MOTION_LEVEL) if previous is not None else None
        motion = float(motion_mask.sum()) / self.area if motion_mask is not None else 1.0
        foreground_mask = self._changed(current, self.background, FOREGROUND_LEVEL)
        if chroma is not None and self.background_chroma is not None:
            foreground_mask |= self._recoloured(chroma, self.background_chroma)
        foreground = float(foreground_mask.sum()) / self.area
        global_change = foreground > GLOBAL_SHARE or motion > GLOBAL_SHARE
        crossing = None if global_change else self._arm(foreground_mask)
        if crossing is None:
            return Activity(motion, foreground, False, None, global_change), foreground_mask.astype(bool)
        edge, along, passing = crossing
        reached = foreground_mask.astype(bool) & ~passing
        return Activity(motion, foreground, True, edge, global_change, along), reached

    def _changed(self, current: np.ndarray, reference: np.ndarray, level: float) -> np.ndarray:
        inside = self.mask.astype(bool)
        gain = float(current[inside].mean()) / max(float(reference[inside].mean()), 1.0)
        changed = (np.abs(current - reference * gain) > level).astype(np.uint8) & self.mask
        return cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))

    def _recoloured(self, current: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """Where the colour moved by :data:`CHROMA_LEVEL` or more, once the whole area's mean shift is taken out."""
        difference = current - reference
        _, shift_cr, shift_cb, _ = cv2.mean(difference, mask=self.mask)
        distance = cv2.magnitude(difference[:, :, 1] - shift_cr, difference[:, :, 2] - shift_cb)
        changed = (distance > CHROMA_LEVEL).astype(np.uint8) & self.mask
        return cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))

    def _arm(self, foreground: np.ndarray) -> tuple[Edge, float, np.ndarray] | None:
        """Where the largest region touching the border crosses it (side, and where along it), and its pixels further
        from its tip than a hand (:data:`HAND_SHARE`); None: no arm."""
        if not foreground[self.border_yx].any():
            return None  # nothing reaches the border: no region to label
        count, labels, stats, _ = cv2.connectedComponentsWithStats(foreground, connectivity=8)
        on_border = labels[self.border_yx]
        touching = np.zeros(count, bool)
        touching[on_border] = True
        best, best_area = 0, 0
        for label in range(1, count):
            area = int(stats[label, cv2.CC_STAT_AREA])
            if area > best_area and area >= ARM_MIN_SHARE * self.area and touching[label]:
                best, best_area = label, area
        if not best:
            return None
        crossing = on_border == best
        ys, xs = self.border_yx[0][crossing], self.border_yx[1][crossing]
        x, y = float(xs.mean()), float(ys.mean())
        edge = self._edge_of(x, y)
        x0, y0, x1, y1 = self.extent
        along = (x - x0) / max(x1 - x0, 1.0) if edge in (Edge.BOTTOM, Edge.TOP) else (y - y0) / max(y1 - y0, 1.0)
        arm = labels == best
        arm_ys, arm_xs = np.nonzero(arm)
        reach = np.hypot(arm_xs - x, arm_ys - y)
        passing = np.zeros(arm.shape, bool)
        short = reach < reach.max() - HAND_SHARE * self.shape[1]
        passing[arm_ys[short], arm_xs[short]] = True
        return edge, min(1.0, max(0.0, along)), passing

    def _edge_of(self, x: float, y: float) -> Edge:
        """The side of the play area nearest the point where the arm crosses its border."""
        height, width = self.shape
        cx, cy = self.centre
        dx, dy = (x - cx) / width, (y - cy) / height
        if abs(dy) >= abs(dx):
            return Edge.BOTTOM if dy > 0 else Edge.TOP
        return Edge.RIGHT if dx > 0 else Edge.LEFT


@dataclass(frozen=True, slots=True)
class _Peek:
    """A frame :meth:`ActivityMeter.peek` measured, with the meter's state then, and what it found."""

    frame: np.ndarray
    previous: np.ndarray | None
    background: np.ndarray | None
    background_chroma: np.ndarray | None
    current: np.ndarray
    chroma: np.ndarray | None
    activity: Activity
    foreground: np.ndarray

    def shows(self, frame: np.ndarray, meter: ActivityMeter) -> bool:
        """``frame`` is the frame peeked at, and ``meter`` compares it with what it compared it with then."""
        return (
            frame is self.frame
            and meter.previous is self.previous
            and meter.background is self.background
            and meter.background_chroma is self.background_chroma
        )


BLUR_MARGIN = 3
"""Small pixels kept around the play area's box, so that its blurred pixels are those of the whole image."""


def _crop_box(
    frame_size: tuple[int, int], shape: tuple[int, int], extent: tuple[float, float, float, float], scale: float
) -> tuple[int, int, int, int]:
    """Where the small images are made from (see :attr:`ActivityMeter.crop`): the whole small image unless the frame
    is a whole multiple of it in both directions (1920x1080 and 1280x720 at 320 wide are)."""
    width, height = frame_size
    whole = (0, 0, shape[1], shape[0])
    step = round(1 / scale)
    if step < 1 or width != step * shape[1] or height != step * shape[0]:
        return whole
    x0, y0, x1, y1 = extent
    return (
        max(0, int(x0) - BLUR_MARGIN),
        max(0, int(y0) - BLUR_MARGIN),
        min(shape[1], int(x1) + 1 + BLUR_MARGIN),
        min(shape[0], int(y1) + 1 + BLUR_MARGIN),
    )


SAME_LEVEL = 40
"""Change of a colour channel (8-bit levels) beyond the extremes of the pixel's 3x3 neighbourhood in the other
picture, once aligned, that makes the pixel a changed one."""
SAME_SHIFT_PX = 4.0
"""The most the camera may have shaken between the two pictures (measured, then undone); further is another view."""
SAME_PIXELS = 32
"""Changed pixels (in blobs of 2x2 at least) that make a picture a new one. Measured on the 1080p synthetic games
(camera jitter of 3 px, H.264 noise): 16 at most between frames of a still table 1.3 s apart and 22 at most between
the table before and after a draw; a digit drawn into another in place (8 into 0 or 3, 5 into 6, 12 into 13) 51 or
more; a tile laid, taken or moved thousands."""
PICTURE_WIDTH = 1280
"""Widest picture compared (a 4K play area is halved): a tile's digit stays several pixels wide."""


class ReadPicture:
    """The play area as it was when last read: a frame that shows the same picture would read the same, so its
    reading need not be made again (:attr:`vision.game.pipeline.PipelineConfig.reuse_unchanged`).

    The camera's shake is measured (phase correlation) and undone first; then each colour channel is compared both
    ways with the extremes of the pixel's 3x3 neighbourhood in the other picture, and changed pixels count in
    blobs of 2x2 or more: compression noise and a sub-pixel remainder of the shake change nothing, while a tile
    laid, taken, moved or turned, a digit that gained or lost a stroke, or a colour that differs does. A picture of
    another region (the play area moved), or shaken by more than :data:`SAME_SHIFT_PX`, is never the same.
    """

    def __init__(self) -> None:
        self.picture: np.ndarray | None = None
        self.region: tuple[float, float, float, float] | None = None

    def remember(self, frame: np.ndarray, region: tuple[float, float, float, float]) -> None:
        """``frame`` was read on ``region`` (``x0, y0, x1, y1`` in pixels)."""
        self.picture, self.region = _picture(frame, region), region

    def forget(self) -> None:
        self.picture, self.region = None, None

    def same(self, frame: np.ndarray, region: tuple[float, float, float, float]) -> bool:
        """``frame`` shows on ``region`` what the picture remembered showed (False when none is remembered)."""
        if self.picture is None or region != self.region:
            return False
        current = _picture(frame, region)
        if current.shape != self.picture.shape or min(current.shape[:2]) < 16:
            return False
        if _changed_pixels(self.picture, current, 0.0, 0.0) < SAME_PIXELS:
            return True  # a steady camera: no shake to measure (a phase correlation costs 40 ms at 1080p)
        if _changed_whatever_the_shake(self.picture, current) >= SAME_PIXELS:
            return False  # changed however far within SAME_SHIFT_PX the camera shook: no shake to measure either
        dx, dy = _shift(self.picture, current)
        if max(abs(dx), abs(dy)) > SAME_SHIFT_PX:
            return False
        return _changed_pixels(self.picture, current, dx, dy) < SAME_PIXELS


def _changed_pixels(reference: np.ndarray, picture: np.ndarray, dx: float, dy: float) -> int:
    """Pixels changed (in blobs of 2x2 or more) between ``reference`` and ``picture`` shifted back by ``dx, dy``."""
    if dx or dy:
        height, width = picture.shape[:2]
        undo = np.array([[1, 0, -dx], [0, 1, -dy]], np.float32)
        picture = cv2.warpAffine(picture, undo, (width, height), borderMode=cv2.BORDER_REPLICATE)
    changed = (_beyond(reference, picture) | _beyond(picture, reference)).astype(np.uint8)
    edge = int(np.ceil(max(abs(dx), abs(dy)))) + 1  # what the shake brought into view
    changed[:edge], changed[-edge:], changed[:, :edge], changed[:, -edge:] = 0, 0, 0, 0
    changed = cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    return int(np.count_nonzero(changed))


_LAST_PICTURE = threading.local()
"""The picture last cut from a frame, per thread (``entry``: frame, region, picture): the pipeline remembers a
frame's picture in one :class:`ReadPicture` and compares the same frame in another (or compares, then remembers it),
so it is cut and scaled once (19 ms at 1080p). Frames are not changed in place once shown (nobody draws on the
pipeline's frames); per thread, so that pipelines in two threads never take each other's picture."""


SHAKE_REACH_PX = math.ceil(SAME_SHIFT_PX) + 2
"""How far from a pixel :func:`_changed_pixels` may look when the shake is undone: the shift (at most
:data:`SAME_SHIFT_PX`, rounded by ``warpAffine`` to 1/32 px), a pixel for bilinear sampling and one for the 3x3
neighbourhood around the pixel compared."""


def _changed_whatever_the_shake(reference: np.ndarray, picture: np.ndarray) -> int:
    """At most as many pixels as :func:`_changed_pixels` finds for any shake ``dx, dy`` within :data:`SAME_SHIFT_PX`:
    those beyond the reference's 3x3 extremes by more than :data:`SAME_LEVEL` whichever way the picture is shifted
    back (the darkest and brightest pixels of the picture within :data:`SHAKE_REACH_PX` are compared, as a shifted,
    bilinearly sampled pixel lies between them), and the reference's beyond any of them, counted in blobs of 2x2
    away from the edge a shake may bring into view. At or above :data:`SAME_PIXELS`, the pictures differ whatever
    the phase correlation would find (a tile laid or taken), and it need not be made."""
    reach = np.ones((2 * SHAKE_REACH_PX + 1, 2 * SHAKE_REACH_PX + 1), np.uint8)
    near = np.ones((3, 3), np.uint8)
    darkest, brightest = cv2.erode(picture, reach), cv2.dilate(picture, reach)
    brighter = cv2.max(cv2.subtract(darkest, cv2.dilate(reference, near)), cv2.subtract(darkest, reference))
    darker = cv2.max(cv2.subtract(cv2.erode(reference, near), brightest), cv2.subtract(reference, brightest))
    beyond = cv2.max(brighter, darker)
    if beyond.ndim == 3:
        channels = cv2.split(beyond)
        beyond = channels[0]
        for channel in channels[1:]:
            beyond = cv2.max(beyond, channel)
    changed = np.asarray(beyond > SAME_LEVEL).astype(np.uint8)
    edge = SHAKE_REACH_PX
    changed[:edge], changed[-edge:], changed[:, :edge], changed[:, -edge:] = 0, 0, 0, 0
    return int(np.count_nonzero(cv2.morphologyEx(changed, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))))


def _picture(frame: np.ndarray, region: tuple[float, float, float, float]) -> np.ndarray:
    last = getattr(_LAST_PICTURE, "entry", None)
    if last is not None and last[0] is frame and last[1] == region:
        return last[2]
    picture = _cut_picture(frame, region)
    _LAST_PICTURE.entry = (frame, region, picture)
    return picture


def _cut_picture(frame: np.ndarray, region: tuple[float, float, float, float]) -> np.ndarray:
    x0, y0, x1, y1 = region
    height, width = frame.shape[:2]
    left, top = max(0, int(x0)), max(0, int(y0))
    right, bottom = min(width, int(np.ceil(x1))), min(height, int(np.ceil(y1)))
    crop = frame[top:bottom, left:right]
    if crop.size and crop.shape[1] > PICTURE_WIDTH:
        scale = PICTURE_WIDTH / crop.shape[1]
        return cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    return crop.copy()


def _shift(reference: np.ndarray, picture: np.ndarray) -> tuple[float, float]:
    """How far ``picture`` is shifted from ``reference``, in their pixels: a phase correlation of the whole pictures
    at full scale (at half scale, or on their middles alone, it missed the sub-pixel shake of the synthetic games
    by enough to find 100-1,000 pixels changed on still tables)."""
    (dx, dy), _ = cv2.phaseCorrelate(_grey(reference), _grey(picture))
    return dx, dy


def _grey(picture: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(picture, cv2.COLOR_BGR2GRAY) if picture.ndim == 3 else picture
    return grey.astype(np.float32)


def _beyond(reference: np.ndarray, picture: np.ndarray) -> np.ndarray:
    """Pixels of ``picture`` brighter than the brightest, or darker than the darkest, of their 3x3 neighbourhood in
    ``reference`` by more than :data:`SAME_LEVEL` in any channel (uint8 throughout: the subtractions saturate)."""
    kernel = np.ones((3, 3), np.uint8)
    beyond = cv2.max(
        cv2.subtract(picture, cv2.dilate(reference, kernel)), cv2.subtract(cv2.erode(reference, kernel), picture)
    )
    if beyond.ndim == 3:
        channels = cv2.split(beyond)
        beyond = channels[0]
        for channel in channels[1:]:
            beyond = cv2.max(beyond, channel)
    return np.asarray(beyond > SAME_LEVEL)
