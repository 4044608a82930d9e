"""Blind spots: where a lamp's glare washes the play area out so far that a tile laid there could not be read.

Under a hot spot the lamp's light is added to everything: a tile's body clips to white and its ink is lifted until it
is as light as the body, so the tile is white on white and the detector does not see it at all. On 1080p synthetic
games (issue 16) a set of three tiles laid in such a spot was missing from every later table, and moves were ruled
OK on tables that lacked it. What the camera cannot read, the referee must not rule on for sure: the pipeline rules
a move whose hands reached a blind spot REVIEW, and says once that the spot is there.

A blind spot is a part of the play area, outside every tile read, where the camera is saturated: its smallest colour
channel at least :data:`BLIND_LEVEL`, over at least :data:`MIN_BLIND_TILES` of a tile's area after an opening that
removes thin bright lines (tile rims, a paper's edge). There nothing can be seen, a tile's outline no more than its
ink. Measured on the meter's small image (:data:`vision.runtime.motion.WORK_WIDTH` wide), a millisecond per settle.

A hot spot short of saturation can still wash tiles white: on game-2002 of issue 16's fresh glare set a group of
three tiles lies white on a pink hot spot (smallest channel 225-245), not detected, missing from the table. Such a
spot is no blind spot (at 225 the hot spots of dark cloths count too, where tiles stay readable: 11 of game-1003's 14
clean moves were ruled REVIEW; models/README, "Glare"), but what *appeared* there is telling: ``within`` the change a
settled table shows against the table before, a washed-out region (smallest channel at least :data:`WASHED_LEVEL`)
that no tile read explains is something laid in the glare and not seen (the change measured faintly there:
:meth:`vision.runtime.motion.ActivityMeter.faint_change`).

A single photo (``read``, ``check``) has no play area: :func:`photo_blind_spots` looks over the whole photo. On the
536 real photos (training and held-out) none has a blind spot; on the 120 held-out edition scenes (seed 14), whose
lighting is harsher, 44 have one, among them 15 of the 17 scenes with tiles washed white (``eval``'s ``washed_out``).

numpy and OpenCV only.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.runtime.motion import WORK_WIDTH

BLIND_LEVEL = 250
"""Smallest of B, G, R (8-bit) from which the camera is saturated. On the eight games of ``bench pipeline --inputs 8``
and four more glare games (issue 16) only game-2013's hot spot on a light grey cloth reaches it outside the tiles
read: 40-54 tiles' area, where a group of three tiles laid in it was never seen."""
WASHED_LEVEL = 225
"""Smallest of B, G, R (8-bit) from which a part of the play area is washed out: a black ink lifted that far (from
about 35) is hardly darker than a body clipped at 255. Tile bodies in the real training photos are cream (median B
187)."""
MIN_BLIND_TILES = 0.5
"""A washed-out region smaller than this share of a tile's area is a highlight, not a place a tile could hide."""
TILE_AREA_MM2 = 26.0 * 36.0
"""A tile's face on the table."""


@dataclass(frozen=True, slots=True)
class BlindSpots:
    """The washed-out parts of one frame's play area, on the small image they were measured on."""

    mask: np.ndarray
    """(H, W) bool, the small image's pixels in a blind spot."""
    tiles: float
    """Their area in tiles' areas."""
    centre_px: tuple[float, float] | None
    """The largest spot's centre in the frame's pixels (None: no spot)."""

    @classmethod
    def none(cls, shape: tuple[int, int]) -> BlindSpots:
        return cls(np.zeros(shape, bool), 0.0, None)

    def __bool__(self) -> bool:
        return self.centre_px is not None

    def reached_by(self, footprint: np.ndarray | None, margin_px: int = 2) -> bool:
        """Whether ``footprint`` (the small image's pixels hands or new things covered) touches a spot, or comes
        within ``margin_px`` small pixels of one."""
        if footprint is None or not self or not footprint.any():
            return False
        grown = cv2.dilate(self.mask.astype(np.uint8), np.ones((2 * margin_px + 1,) * 2, np.uint8))
        return bool((grown.astype(bool) & footprint).any())

    def to_json(self) -> dict[str, object]:
        centre = None if self.centre_px is None else [round(v, 1) for v in self.centre_px]
        return {"tiles": round(self.tiles, 1), "at_px": centre}


def blind_spots(
    image: np.ndarray,
    play_area: np.ndarray,
    scale: float,
    boxes_xyxy: np.ndarray,
    tile_area_px: float,
    *,
    level: int = BLIND_LEVEL,
    within: np.ndarray | None = None,
) -> BlindSpots:
    """The blind spots of ``image`` (BGR) within ``play_area`` (the small image's mask, ``scale`` times the frame's
    size), outside ``boxes_xyxy`` (the tiles read, frame pixels); ``tile_area_px``: a tile's area in the frame. With
    ``level`` :data:`WASHED_LEVEL` and ``within`` (the small image's pixels that changed), what appeared washed out."""
    shape = play_area.shape[:2]
    if image.ndim != 3 or tile_area_px <= 0:
        return BlindSpots.none(shape)
    small = cv2.resize(image, (shape[1], shape[0]), interpolation=cv2.INTER_AREA)
    washed = (small.min(axis=2) >= level) & (play_area > 0)
    if within is not None:
        washed &= within
    if not washed.any():
        return BlindSpots.none(shape)
    for x0, y0, x1, y1 in np.asarray(boxes_xyxy, np.float64).reshape(-1, 4) * scale:  # a tile read, and its rim
        washed[max(0, int(y0) - 1) : int(np.ceil(y1)) + 2, max(0, int(x0) - 1) : int(np.ceil(x1)) + 2] = False
    washed = cv2.morphologyEx(washed.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    count, labels, stats, centres = cv2.connectedComponentsWithStats(washed)
    tile_area = tile_area_px * scale * scale
    spots = [k for k in range(1, count) if stats[k, cv2.CC_STAT_AREA] >= MIN_BLIND_TILES * tile_area]
    if not spots:
        return BlindSpots.none(shape)
    largest = max(spots, key=lambda k: stats[k, cv2.CC_STAT_AREA])
    area = float(sum(stats[k, cv2.CC_STAT_AREA] for k in spots))
    centre = (float(centres[largest][0] / scale), float(centres[largest][1] / scale))
    return BlindSpots(np.isin(labels, spots), area / tile_area, centre)


def median_tile_area(boxes_xyxy: np.ndarray) -> float:
    """A tile's area in pixels from the boxes read: their median (0: fewer than 3 boxes cannot tell it)."""
    boxes = np.asarray(boxes_xyxy, np.float64).reshape(-1, 4)
    if len(boxes) < 3:
        return 0.0
    return float(np.median((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])))


def photo_blind_spots(image: np.ndarray, boxes_xyxy: np.ndarray) -> BlindSpots:
    """The blind spots of a whole photo (BGR) outside ``boxes_xyxy`` (every box read, those left out too), measured
    on an image :data:`vision.runtime.motion.WORK_WIDTH` wide as the live pipeline's are, a tile's area from the
    boxes (:func:`median_tile_area`); none where fewer than 3 boxes tell a tile's size."""
    height, width = image.shape[:2]
    scale = WORK_WIDTH / max(height, width)
    shape = (max(1, round(height * scale)), max(1, round(width * scale)))
    return blind_spots(image, np.ones(shape, np.uint8), scale, boxes_xyxy, median_tile_area(boxes_xyxy))
