"""Colour from the whole table, not from one crop alone: the frame's white balance and its ink clusters.

A crop alone cannot tell a blue digit under cool light from a black one under neutral light; the table can.
Every tile's body is the same cream plastic, and the inks of one table come in at most four colours, so:

1. :func:`frame_balance` measures the tile bodies (the brighter half of each tile's centre, a median over
   the tiles) and gives per-channel gains that bring their chromaticity back into the range of the real
   training photos (a photo already in that range is left as it is). ``global_balance`` does the same from
   the brightest pixels of the whole frame, for casts so strong the detector misses the tiles.
2. :func:`ink_features` takes the digit's pixels in each (balanced) crop, those clearly away from the body,
   and describes them in CIELAB: lightness, and the chroma plane (a, b) where black sits near 0, red at
   a > 0, orange at b > 0 and blue at b < 0.
3. :func:`check_colours` clusters the table's inks and names each cluster by the classifier's votes
   (weighted by confidence) and by where the cluster lies in the chroma plane. A tile read in a colour other
   than its cluster's becomes uncertain (its confidence is capped under the layout's threshold, so the
   referee asks for a review); where the cluster's colour is certain the tile is re-read in that colour. A
   cluster named only by its votes does not doubt a tile whose own ink's hue shows the colour it was read in (a
   washed-out red in a glare spot, clustered with the blacks), nor does any cluster where that ink surely shows it.
   A washed-out ink is judged from the table's light where it can be: seen from the bodies' colour it points at the
   unwashed cluster of its own colour (spared) or of another (not spared by its hue). A cluster read black that a cast
   makes look surely coloured, beside the table's own cluster of that colour far farther from the light, is doubted,
   never re-read (:func:`_blacks_under_a_cast`). Tiles read in a colour among the black-looking inks, whose inks stand
   apart from the blacks read beside them, are a cluster of their own, named by their votes (a deep blue ink is as
   grey as black under a dim light: :func:`_colours_read_apart`).
   Measured at 172406d (issue 16's 10-game set, bench pipeline from a git archive export): every move ruled as at
   ebfd145 with the familiarity check on (it caps the same tiles); with it off (an experiment) clean moves ruled
   REVIEW 9/114 -> 7/114 (g1 move 5's red-11, g2 move 6's red-7), nothing else changed. ``bench colour``: F1,
   flipped, wrong >= 0.8 and doubted identical to b59f161 under all 6 tints.
   With fewer than :data:`MIN_TILES` inks, or one cluster, each tile is judged on its own, and only an ink
   far from the colour it was read as is doubted.

numpy and OpenCV only: a few milliseconds per photo (``bench colour`` measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from referee.tiles import ALL_LABELS, COLOURS, Colour
from vision.runtime.detections import Detections

# -- white balance ---------------------------------------------------------------------------------------------

BODY_RANGE_B_G = (0.75, 1.0)
"""Blue / green of the tile bodies the classifier learnt: 0.75-0.94 in the real training photos (10th-90th
percentile over 112 photos, median 0.87), up to a neutral white in the synthetic ones. A photo is brought into
this range, never past it; one inside it is left as it is."""
BODY_RANGE_R_G = (1.0, 1.14)
"""Red / green of the same bodies (real photos: 10th-90th percentile 1.02-1.14, median 1.06)."""
REFERENCE_BODY_BGR = (187.0, 215.5, 225.6)
"""The median tile body of the real training photos: inks are measured as if under its light."""
STRONG_CAST = 0.1
"""A frame whose brightest pixels need a gain this far from 1 is detected a second time, balanced (the
detector misses tiles under a strong cast), and the detection that finds more keeps the frame."""
BRIGHT_RANGE_B_G = (0.85, 1.0)
"""Blue / green of the brightest 5 % of pixels of the real training photos (10th-90th percentile 0.91-0.97),
widened to take in the bodies' own range: this first, coarse balance is only for casts strong enough to hide
the tiles from the detector (the bodies refine it)."""
BRIGHT_RANGE_R_G = (0.98, 1.10)
"""Red / green of the same pixels (10th-90th percentile 1.00-1.06), widened likewise."""
BRIGHT_SHARE = 0.05
"""Share of the frame's brightest pixels that ``global_balance`` reads (mostly tile bodies and glare)."""
NEUTRAL_GAIN = 0.01
"""Gains closer than this to 1 are not applied: the photo is already in the range the models learnt."""
MIN_BODIES = 3
"""Fewer tiles than this: no balance from their bodies (one or two faces may be anything: a wrong box, glare)."""
CENTRE_RADIUS = 13
"""Radius, in pixels of a 64-px crop, of the disk read at a tile's centre: inside the face at any angle."""


@dataclass(frozen=True, slots=True)
class Balance:
    """Per-channel (B, G, R) gains for a frame, and the body colour they were measured from."""

    gains: np.ndarray
    measured: np.ndarray
    """B, G, R of what was measured (tile bodies or bright pixels), before the gains."""

    @classmethod
    def identity(cls) -> Balance:
        return cls(np.ones(3, np.float32), np.full(3, np.nan, np.float32))

    @property
    def is_strong(self) -> bool:
        return bool(np.any(np.abs(self.gains - 1.0) >= STRONG_CAST))

    @property
    def is_identity(self) -> bool:
        return bool(np.all(np.abs(self.gains - 1.0) < NEUTRAL_GAIN))

    def apply(self, image: np.ndarray) -> np.ndarray:
        """The image with the gains applied (the same array when they are neutral)."""
        if self.is_identity or image.size == 0:  # nothing to balance (no crops: cv2.LUT would return None)
            return image
        table = np.clip(np.arange(256, dtype=np.float32)[:, None] * self.gains[None, :] + 0.5, 0, 255)
        flat = np.ascontiguousarray(image).reshape(-1, image.shape[-2], 3)  # a photo, or a stack of crops
        return cv2.LUT(flat, table.astype(np.uint8).reshape(256, 1, 3)).reshape(image.shape)

    def then(self, other: Balance) -> Balance:
        """This balance followed by ``other`` (measured on the image this one produced)."""
        return Balance((self.gains * other.gains).astype(np.float32), self.measured)


def _gains_into(colour_bgr: np.ndarray, range_b_g: tuple[float, float], range_r_g: tuple[float, float]) -> Balance:
    """Gains moving a measured B, G, R into the given blue/green and red/green ranges (green and the mean
    brightness kept)."""
    b, g, r = (float(v) for v in colour_bgr)
    if not np.isfinite([b, g, r]).all() or min(b, g, r) <= 1.0:
        return Balance.identity()
    b_g, r_g = b / g, r / g
    target_b_g, target_r_g = float(np.clip(b_g, *range_b_g)), float(np.clip(r_g, *range_r_g))
    gains = np.array([target_b_g / b_g, 1.0, target_r_g / r_g], np.float64)
    gains *= (b + g + r) / float(np.dot(gains, [b, g, r]))  # the measured colour keeps its brightness
    return Balance(gains.astype(np.float32), np.asarray(colour_bgr, np.float32))


def global_balance(image: np.ndarray) -> Balance:
    """Gains from the brightest pixels of the whole frame (before any tile is found)."""
    small = cv2.resize(image, (160, 120), interpolation=cv2.INTER_AREA) if image.shape[1] > 160 else image
    pixels = small.reshape(-1, 3).astype(np.float32)
    total = pixels.sum(axis=1)
    unclipped = pixels.max(axis=1) < 250
    if unclipped.sum() < 20:
        return Balance.identity()
    pixels, total = pixels[unclipped], total[unclipped]
    bright = pixels[total >= np.quantile(total, 1.0 - BRIGHT_SHARE)]
    return _gains_into(bright.mean(axis=0), BRIGHT_RANGE_B_G, BRIGHT_RANGE_R_G)


def _centre_mask(size: int) -> np.ndarray:
    yy, xx = np.mgrid[0:size, 0:size]
    centre = (size - 1) / 2
    return (yy - centre) ** 2 + (xx - centre) ** 2 <= (CENTRE_RADIUS * size / 64) ** 2


def _brighter_half_mean(pixels: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Per row of ``pixels`` (N, P, C): the mean of those whose ``level`` (N, P) lies in the brighter half, short
    of the brightest tenth (glare)."""
    order = np.argsort(level, axis=1)
    count = level.shape[1]
    keep = np.zeros(level.shape, np.float32)  # 1 where the pixel's rank is in [count // 2, count - count // 10)
    np.put_along_axis(keep, order[:, count // 2 : count - count // 10], 1.0, axis=1)
    return (pixels * keep[..., None]).sum(axis=1) / keep.sum(axis=1, keepdims=True)


def body_colours(crops: np.ndarray) -> np.ndarray:
    """B, G, R of each tile's body: the brighter half of its centre disk (N, 3)."""
    if not len(crops):
        return np.zeros((0, 3), np.float32)
    centre = crops[:, _centre_mask(crops.shape[1])].astype(np.float32)  # (N, P, 3)
    return _brighter_half_mean(centre, centre.sum(axis=2)).astype(np.float32)


def frame_body(crops: np.ndarray) -> np.ndarray | None:
    """The tile body of a frame: the median over its tiles (None under :data:`MIN_BODIES` tiles)."""
    return np.median(body_colours(crops), axis=0) if len(crops) >= MIN_BODIES else None


def frame_balance(crops: np.ndarray, *, exact: bool = False, body: np.ndarray | None = None) -> Balance:
    """Gains from the tile bodies of a frame's crops (identity under :data:`MIN_BODIES` tiles): into the range
    the classifier learnt, or with ``exact`` all the way to :data:`REFERENCE_BODY_BGR` (for measuring inks,
    whose colour names are fixed in that light). ``body`` (from :func:`frame_body`) saves measuring again."""
    body = frame_body(crops) if body is None else body
    if body is None:
        return Balance.identity()
    if exact:
        b, g, r = REFERENCE_BODY_BGR
        return _gains_into(body, (b / g, b / g), (r / g, r / g))
    return _gains_into(body, BODY_RANGE_B_G, BODY_RANGE_R_G)


# -- inks ----------------------------------------------------------------------------------------------------

INK_DISTANCE = 40.0
"""A pixel is ink when its CIELAB distance (8-bit OpenCV units) from the tile's body is at least this."""
MIN_INK_PIXELS = 12
"""Fewer ink pixels than this in the centre disk: no ink measured (a blank face, glare, a tile's edge)."""


@dataclass(frozen=True, slots=True)
class Inks:
    """Each tile's ink in CIELAB (OpenCV 8-bit: L 0-255, a and b centred on 0) and whether it was measured."""

    lab: np.ndarray
    """(N, 3) float32: lightness, a (green- to red+), b (blue- to yellow+)."""
    measured: np.ndarray
    """(N,) bool."""
    body: np.ndarray | None = None
    """(N, 3) float32: each tile's body in CIELAB, as ``lab`` (the brighter half of its centre disk), as
    :func:`ink_features` measures it; None for inks given without their bodies (then no washed ink is judged against
    the table's light, :func:`_washed_like_its_reading`)."""

    @property
    def chroma(self) -> np.ndarray:
        return np.hypot(self.lab[:, 1], self.lab[:, 2])


def ink_features(crops: np.ndarray) -> Inks:
    """The ink of each crop (balanced BGR uint8, N x S x S x 3): the mean CIELAB colour of the centre disk's
    pixels furthest from the body (the further half of those at least :data:`INK_DISTANCE` away)."""
    n = len(crops)
    lab_out = np.zeros((n, 3), np.float32)
    measured = np.zeros(n, bool)
    if not n:
        return Inks(lab_out, measured, np.zeros((0, 3), np.float32))
    mask = _centre_mask(crops.shape[1])
    pixels = np.ascontiguousarray(crops[:, mask])  # (N, P, 3) BGR, only the centre disk converted
    centre = cv2.cvtColor(pixels, cv2.COLOR_BGR2LAB).astype(np.float32)
    centre[..., 1:] -= 128.0
    body = _brighter_half_mean(centre, centre[..., 0])
    distance = np.linalg.norm(centre - body[:, None, :], axis=2)
    far = (distance >= INK_DISTANCE).sum(axis=1)
    order = np.argsort(-distance, axis=1)  # first: the pixel furthest from the body
    core = np.empty(distance.shape, np.float32)  # 1 for the furthest max(1, far // 2) pixels of each row
    np.put_along_axis(core, order, np.arange(distance.shape[1]) < np.maximum(1, far // 2)[:, None], axis=1)
    measured = far >= MIN_INK_PIXELS
    lab_out = ((centre * core[..., None]).sum(axis=1) / core.sum(axis=1, keepdims=True)).astype(np.float32)
    lab_out[~measured] = 0.0
    return Inks(lab_out, measured, body.astype(np.float32))


# -- the table's colours ---------------------------------------------------------------------------------------

BLACK_CHROMA = 13.0
"""Ink chroma (balanced) under which an ink looks black rather than coloured: black inks of the real training
photos measure 2-16 (5th-95th percentile), blue 13-50, red 30-74, orange 17-67."""
SURE_BLACK_CHROMA = 9.0
SURE_COLOUR_CHROMA = 22.0
"""An ink is *surely* black under :data:`SURE_BLACK_CHROMA` and surely coloured over this."""
HUE_SECTORS_DEG = ((Colour.RED, -40.0, 47.0), (Colour.ORANGE, 47.0, 125.0))
"""Hue (degrees in the a-b plane) of the coloured inks; anything else coloured is blue (or teal). Measured on
the real training photos: red 20-42 (5th-95th percentile), orange 51-71, blue -97 to -68."""
SURE_HUE_MARGIN_DEG = 8.0
"""An ink is surely of a hue sector when it lies this far inside it."""
WASHED_LIGHTNESS = 190.0
WASHED_CHROMA = 32.0
"""An ink at least this light (L, 8-bit) and under this chroma is washed out by a glare: the lamp's own colour is
added to it, so neither its hue nor its chroma surely shows its colour (under a warm lamp a red ink's hue moved from
34 to 45-62 degrees, into orange's sector, at chroma 23-29 and L 202-214: game-1002 of ``bench pipeline --inputs 8``,
issue 16). No ink of the real training photos is that light and that pale: orange inks of L 190 and over have chroma
32 and over, all others are darker (3,542 inks, true boxes)."""
MIN_TILES = 4
"""Fewer measured inks than this: no clustering, each tile is judged on its own."""
MERGE_DISTANCE = 10.0
"""Clusters whose centres (a, b) lie closer than this are one colour."""
KMEANS_ROUNDS = 5
RUNNER_UP_ODDS = 20.0
"""A lone tile whose colour disagrees with its ink is re-read in the ink's colour only when that label is at most
this many times less probable than the one read (the set context's odds); otherwise it keeps its label,
uncertain. A whole cluster read against its ink is re-read whatever the odds."""
DOUBT_CONFIDENCE = 0.5
"""Confidence given to a tile whose colour disagrees with its table: under the layout's 0.8, so uncertain."""
OTHER_COLOUR_ODDS = 1e-4
"""A doubted tile whose ink surely shows another colour is re-read as the most probable label of that colour
(its number is the classifier's), and its other labels are made this many times less probable, so the set
context (:class:`vision.runtime.layout.SetContext`) weighs the re-read and not the colour the crop alone suggested."""


def colour_of_ink(lab: np.ndarray) -> tuple[Colour, bool]:
    """The colour an ink's (a, b) shows, and whether surely (far from every boundary, and not washed out)."""
    a, b = float(lab[1]), float(lab[2])
    chroma = float(np.hypot(a, b))
    if is_washed_out(float(lab[0]), chroma):
        return (Colour.BLACK if chroma < BLACK_CHROMA else _hue(a, b)[0]), False
    if chroma < BLACK_CHROMA:
        return Colour.BLACK, chroma < SURE_BLACK_CHROMA
    colour, sure_hue = _hue(a, b)
    return colour, sure_hue and chroma >= SURE_COLOUR_CHROMA


def is_washed_out(lightness: float, chroma: float) -> bool:
    """Whether an ink is washed out by a glare (:data:`WASHED_LIGHTNESS`)."""
    return lightness >= WASHED_LIGHTNESS and chroma < WASHED_CHROMA


def _hue(a: float, b: float) -> tuple[Colour, bool]:
    """The coloured ink an (a, b) hue shows, and whether it lies :data:`SURE_HUE_MARGIN_DEG` inside its sector."""
    hue = float(np.degrees(np.arctan2(b, a)))
    for colour, low, high in HUE_SECTORS_DEG:
        if low <= hue < high:
            return colour, low + SURE_HUE_MARGIN_DEG <= hue < high - SURE_HUE_MARGIN_DEG
    near_edge = min(abs(hue - HUE_SECTORS_DEG[0][1]), abs(hue - HUE_SECTORS_DEG[-1][2]))
    return Colour.BLUE, near_edge >= SURE_HUE_MARGIN_DEG


@dataclass(frozen=True, slots=True)
class InkClusters:
    """The table's ink clusters: each tile's cluster (-1: no ink measured, or a joker), centres in (a, b)."""

    member: np.ndarray
    centres: np.ndarray


def cluster_inks(inks: Inks, usable: np.ndarray | None = None, read: np.ndarray | None = None) -> InkClusters:
    """Clusters of the usable inks in the chroma plane: started from the colour each ink shows (and, given
    ``read``, each tile's colour index as read, from the colour each group of tiles was read in as well), refined
    by a few k-means rounds, centres closer than :data:`MERGE_DISTANCE` merged. With fewer than
    :data:`MIN_TILES` inks every ink is its own cluster (nothing to compare with).

    Why both starts: the thin digits of small tiles take on the body's yellow (a video's chroma is sampled at half
    the resolution), so black inks of chroma 13-16 show "orange"; started from the inks alone, they pulled the
    orange centre onto the black one, the two merged and the right orange tiles were doubted (issue 16). A group
    read in one colour gives that colour a centre of its own; a colour read wholesale as another still has the
    inks' own centre to be told apart by."""
    n = len(inks.lab)
    usable = inks.measured if usable is None else usable & inks.measured
    member = np.full(n, -1, np.int64)
    index = np.flatnonzero(usable)
    points = inks.lab[index, 1:].astype(np.float64)
    if len(index) < MIN_TILES:
        member[index] = np.arange(len(index))
        return InkClusters(member, points.astype(np.float32))
    start = np.array([colour_of_ink(inks.lab[i])[0].index for i in index])
    centres = np.array([np.median(points[start == k], axis=0) for k in np.unique(start)])
    if read is not None:
        as_read = np.asarray(read)[index]
        groups = [np.median(points[as_read == k], axis=0) for k in np.unique(as_read) if k >= 0]
        centres = np.concatenate([centres, np.array(groups).reshape(-1, 2)])
    for _ in range(KMEANS_ROUNDS):
        centres = _merge_close(centres)
        nearest = np.linalg.norm(points[:, None, :] - centres[None], axis=2).argmin(axis=1)
        centres = np.array([np.median(points[nearest == k], axis=0) for k in np.unique(nearest)])
    centres = _merge_close(centres)
    nearest = np.linalg.norm(points[:, None, :] - centres[None], axis=2).argmin(axis=1)
    member[index] = nearest
    return InkClusters(member, centres.astype(np.float32))


def _merge_close(centres: np.ndarray) -> np.ndarray:
    merged = [centres[0]]
    for centre in centres[1:]:
        distances = [np.linalg.norm(centre - m) for m in merged]
        k = int(np.argmin(distances))
        if distances[k] < MERGE_DISTANCE:
            merged[k] = (merged[k] + centre) / 2
        else:
            merged.append(centre)
    return np.array(merged)


PROTOTYPES_AB = {
    Colour.BLACK: (0.0, 6.0),
    Colour.RED: (46.0, 28.0),
    Colour.ORANGE: (21.0, 46.0),
    Colour.BLUE: (0.0, -32.0),
}
"""Median balanced (a, b) of each colour's ink in the real training photos: when two clusters of one table
are voted the same colour, the one nearer its prototype keeps it."""
_LABEL_COLOUR = np.array([-1 if label == "joker" else Colour(label.split("-")[0]).index for label in ALL_LABELS])
"""Colour index of each of the 53 labels (-1: the joker)."""


@dataclass(frozen=True, slots=True)
class ColourCheck:
    """What the table's colours said about its tiles."""

    detections: Detections
    doubted: np.ndarray
    """(N,) bool: the tile's colour as read disagrees with its table (now uncertain)."""
    reread: np.ndarray
    """(N,) bool: ...and it was re-read in the colour its ink surely shows."""
    clusters: InkClusters


def check_colours(tiles: Detections, inks: Inks) -> ColourCheck:
    """Tiles whose colour disagrees with their table's ink clusters, made uncertain (see the module's
    docstring). ``inks`` are measured on the same tiles, in the same order."""
    n = len(tiles)
    read = _LABEL_COLOUR[tiles.class_id] if n else np.zeros(0, np.int64)
    usable = inks.measured & (read >= 0)
    clusters, read_apart = _colours_read_apart(cluster_inks(inks, usable, read), inks, usable, read)
    expected = np.full(n, -1, np.int64)
    sure = np.zeros(n, bool)
    named: dict[int, list[int]] = {}
    confidence = np.asarray(tiles.confidence, np.float64)
    names, certainties, votes, washed = [], [], [], []
    for k in range(len(clusters.centres)):
        members = np.flatnonzero(clusters.member == k)
        lightness = float(np.median(inks.lab[members, 0])) if len(members) else 0.0  # its inks' (none: not washed)
        shows, certain = colour_of_ink(np.array([lightness, *clusters.centres[k]]))
        washed.append(is_washed_out(lightness, float(np.hypot(*clusters.centres[k]))))
        votes.append(np.bincount(read[members], weights=confidence[members], minlength=len(COLOURS)))
        certain = certain and k not in read_apart
        names.append(shows.index if certain else int(votes[k].argmax()))
        certainties.append(certain)
    clustered = int(usable.sum()) >= MIN_TILES
    light = _table_light(inks, usable)
    for k in _black_against_the_tables_blacks(clusters, names, certainties, votes) if clustered else ():
        names[k], certainties[k] = int(votes[k].argmax()), False
    for k in _blacks_under_a_cast(clusters, names, certainties, votes, light) if clustered else ():
        certainties[k] = False
    for k, (name, certain) in enumerate(zip(names, certainties, strict=True)):
        expected[clusters.member == k], sure[clusters.member == k] = name, certain
        named.setdefault(name, []).append(k)
    # One colour voted for two clusters: the one far from its ink is in doubt. Only where the inks were clustered:
    # under MIN_TILES each ink is its own cluster, judged on its own (three black tiles are three "black clusters",
    # and the least black of them, a thin digit's ink, was doubted for it; issue 16)
    for name, ks in named.items():
        if clustered and len(ks) > 1:
            prototype = np.array(PROTOTYPES_AB[COLOURS[name]])
            keeper = min(ks, key=lambda k: float(np.linalg.norm(clusters.centres[k] - prototype)))
            for k in ks:
                if k != keeper and not sure[clusters.member == k].any():
                    expected[clusters.member == k] = -2  # no colour we can name: doubted, not re-read
    # A tile whose own ink shows the colour it was read in (a hue well inside that colour's sector) is not doubted by
    # a cluster named only by its votes, nor by a cluster of another colour when its own ink surely shows its colour:
    # tiles in a glare spot have washed-out inks (red turns pink, chroma 20-25 instead of 40-55), nearer a table's
    # black cluster, tinged yellow, than its red one, so k-means put a right red beside black and orange with the
    # blacks and their colour doubted it (issue 16). A tile read black is never spared (the blues read black under
    # cool light), nor one whose ink is pale or near a hue boundary in a cluster surely of another colour.
    own_sure = np.array([colour_of_ink(lab)[1] for lab in inks.lab], bool)
    spared = (~sure | own_sure) & (read >= 0) & (read != Colour.BLACK.index) & (_hue_colour(inks) == read)
    if clustered:  # a washed ink the table's light can judge is spared by that judgement alone, not by its hue
        unwashed = [k for k in range(len(names)) if not washed[k]]
        judged, like = _washed_like_its_reading(inks, usable, read, clusters, unwashed, names, certainties, light)
        spared = np.where(judged, like, spared)
    doubted = usable & (expected != read) & ~spared
    reread = doubted & sure & (expected >= 0) & (_outvoted(clusters, doubted) | _close_runner_up(tiles, expected))
    return ColourCheck(_doubt(tiles, doubted, reread, expected), doubted, reread, clusters)


READ_APART_MIN_TILES = 3
READ_APART_DISTANCE = 5.0
READ_APART_STRAYS = 0.1
"""Among the table's black-looking inks, at least :data:`READ_APART_MIN_TILES` tiles read black and as many read in
one colour whose inks lie apart (the coloured group's median at least :data:`READ_APART_DISTANCE` from the blacks',
in that colour's direction; at most this share of both groups' inks nearer the other group's median) are two
clusters (:func:`_colours_read_apart`)."""


def _colours_read_apart(
    clusters: InkClusters, inks: Inks, usable: np.ndarray, read: np.ndarray
) -> tuple[InkClusters, set[int]]:
    """The clusters with the tiles read in a colour, among the table's black-looking inks, made a cluster of their own
    where they lie apart from the blacks read beside them; and the indices of those new clusters (named by their votes,
    never surely: their inks alone did not tell them from black).

    A dark ink is not always a black one: the classic edition's deep blue, on small digits under a dim or warm light,
    measures chroma 4-9 (``enrol_bench``'s classic set, scene 16: blues at b -12 to -3, blacks at +2 to +7, L 29
    against 6), under :data:`SURE_BLACK_CHROMA`, so the blues' cluster (merged with the blacks or not) was "surely
    black", and the 21 blues the classifier read right at 1.0 were all re-read black: a whole colour flipped by the
    check. The classifier tells the two groups apart and so do their inks, side by side: the inks of each group lie
    nearer its own group's median than the other's (all but :data:`READ_APART_STRAYS` of them: scene 29's one blue
    read blue among seven, but inked as its blacks), and the coloured group lies in its colour's direction from the
    blacks, at least :data:`READ_APART_DISTANCE` away. A group read blue whose inks do not stand apart from the blacks
    (blues read black under cool light read as the blacks do) is judged as before."""
    black = Colour.BLACK.index
    ab = inks.lab[:, 1:].astype(np.float64)
    looks_black = np.zeros(len(read), bool)
    for k in range(len(clusters.centres)):
        inside = clusters.member == k
        lightness = float(np.median(inks.lab[inside, 0])) if inside.any() else 0.0
        if colour_of_ink(np.array([lightness, *clusters.centres[k]]))[0] == Colour.BLACK:
            looks_black |= inside
    dark = usable & looks_black
    blacks = dark & (read == black)
    groups = []
    for colour in sorted(set(read[dark].tolist()) - {black}):
        coloured = dark & (read == colour)
        if blacks.sum() < READ_APART_MIN_TILES or coloured.sum() < READ_APART_MIN_TILES:
            continue
        black_centre, colour_centre = np.median(ab[blacks], axis=0), np.median(ab[coloured], axis=0)
        shift = colour_centre - black_centre
        direction, sure = _hue(*shift)
        if np.hypot(*shift) < READ_APART_DISTANCE or direction.index != colour or not sure:
            continue
        both = np.flatnonzero(blacks | coloured)
        from_black = np.linalg.norm(ab[both] - black_centre, axis=1)
        nearer_black = from_black < np.linalg.norm(ab[both] - colour_centre, axis=1)
        strays = int((nearer_black != (read[both] == black)).sum())
        if strays <= READ_APART_STRAYS * len(both):
            groups.append(coloured)
    if not groups:
        return clusters, set()
    member = clusters.member.copy()
    for index, coloured in enumerate(groups):
        member[coloured] = len(clusters.centres) + index
    kept = np.unique(member[member >= 0])
    renumbered = np.full(int(kept.max()) + 1, -1, np.int64)
    renumbered[kept] = np.arange(len(kept))
    member = np.where(member >= 0, renumbered[np.maximum(member, 0)], -1)
    centres = np.array([np.median(ab[member == k], axis=0) for k in range(len(kept))], np.float32).reshape(-1, 2)
    apart = {int(renumbered[len(clusters.centres) + index]) for index in range(len(groups))}
    return InkClusters(member, centres), apart


def _black_against_the_tables_blacks(
    clusters: InkClusters, names: list[int], certainties: list[bool], votes: list[np.ndarray]
) -> list[int]:
    """Clusters surely black by their own ink that are not black judged against the table's own blacks: a cast the
    balance left moves every ink alike (under 2,780 K light a held-out edition's black inks sat at b +19, its blue
    inks at chroma 8, "surely black"), so where another cluster is read black, a cluster read in another colour and
    lying away from it in that colour's direction (at least :data:`BLACK_CHROMA`) is that colour, named by its votes
    and not surely. Without this both clusters were "black": the blacks were doubted as the cluster farther from
    black, and the blues re-read black, a whole colour flipped (issue 14). Called only where the inks were clustered
    (:data:`MIN_TILES`): a few inks judged each on its own tell no cast."""
    black = Colour.BLACK.index
    voted_black = [k for k, v in enumerate(votes) if names[k] == black and not certainties[k] and v.argmax() == black]
    if not voted_black:
        return []
    blacks = clusters.centres[max(voted_black, key=lambda k: float(votes[k][black]))].astype(np.float64)
    renamed = []
    for k, (name, certain) in enumerate(zip(names, certainties, strict=True)):
        read_as = int(votes[k].argmax())
        if name == black and certain and read_as != black:
            a, b = clusters.centres[k].astype(np.float64) - blacks
            if np.hypot(a, b) >= BLACK_CHROMA and _hue(a, b)[0].index == read_as:
                renamed.append(k)
    return renamed


def _table_light(inks: Inks, usable: np.ndarray) -> np.ndarray | None:
    """The colour of the table's light in the a-b plane: the median body of its usable tiles (None without bodies)."""
    if inks.body is None or not len(inks.body) or not usable.any():
        return None
    return np.median(inks.body[usable, 1:].astype(np.float64), axis=0)


def _blacks_under_a_cast(
    clusters: InkClusters,
    names: list[int],
    certainties: list[bool],
    votes: list[np.ndarray],
    light: np.ndarray | None,
) -> list[int]:
    """Clusters read black and surely coloured by their ink only through a cast: another cluster surely of that colour
    lies at least :data:`SURE_COLOUR_CHROMA` farther from the table's light (the median of its tile bodies). Under a
    warm light the balance left (2,835 K, a held-out modern-circle table: fresh ``synth-editions-heldout`` scenes,
    seed 4242, image 179) the table's black inks measured chroma 21-29 at hue 46-72 degrees, "surely orange", 11 from
    the light, beside its real oranges 60 from it; the classifier read the eleven blacks black at 0.66-1.0, and the
    check re-read every one orange, the numbers garbled (black-11 as orange-4): a whole colour flipped by the check.
    Such a cluster is not *surely* of that colour: its tiles are doubted (REVIEW), never re-read. (The mirror of
    :func:`_black_against_the_tables_blacks`, which needs a cluster read black to judge against.)"""
    if light is None:
        return []
    from_light = np.hypot(*(clusters.centres.astype(np.float64) - light).T)
    black = Colour.BLACK.index
    return [
        k
        for k, (name, certain) in enumerate(zip(names, certainties, strict=True))
        if certain
        and name != black
        and int(votes[k].argmax()) == black
        and any(
            j != k and names[j] == name and certainties[j] and from_light[j] >= from_light[k] + SURE_COLOUR_CHROMA
            for j in range(len(names))
        )
    ]


WASHED_MIN_SHIFT = 10.0
"""A washed ink is judged against the table's light only when it lies at least this far (a-b plane) from the light."""
WASHED_MAX_ANGLE_DEG = 20.0
WASHED_ANGLE_MARGIN_DEG = 25.0
"""A washed ink shows the colour it was read in when, seen from the table's light, it lies within
:data:`WASHED_MAX_ANGLE_DEG` of the direction of an unwashed cluster surely of that colour, and at least this much
nearer it than the direction of any other unwashed cluster of the table."""
MIN_CLUSTER_SHIFT = 5.0
"""A cluster this close to the light (a-b plane) has no direction to compare with (a table's blacks, often)."""


def _washed_like_its_reading(
    inks: Inks,
    usable: np.ndarray,
    read: np.ndarray,
    clusters: InkClusters,
    unwashed: list[int],
    names: list[int],
    certainties: list[bool],
    light: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Washed-out inks that show the colour they were read in, judged against the table's own light and inks:
    (judged, shows it), each (N,) bool.

    A glare adds light to an ink: seen from the light's colour in the a-b plane (the median of the table's tile
    bodies, which the same light falls on), the washed ink keeps the direction of its own ink and only comes nearer.
    So a washed ink lying in the direction of the table's unwashed red cluster, and well away from the direction of
    its orange, blue and black ones, is a red, whatever its hue: a warm lamp moves a washed red's hue from 34 to 45-62
    degrees, into orange's sector, so the hue alone doubted a right red run in a hot spot (issue 16: 3 of the 4 clean
    moves ruled REVIEW of ``bench pipeline --inputs 8``). Only clusters named surely by their ink give a direction (and
    only unwashed ones); every unwashed cluster away from the light is a rival. A tile read black is never spared.

    The light is not always the bodies' colour (a white lamp's glare adds white), so a washed ink that points at no
    cluster proves nothing: it is *judged* only where it points at one, its own colour's (spared) or a rival's (then
    its hue does not spare it: a washed red read orange has an orange hue). Judged are inks as light as a washed one
    (:data:`WASHED_LIGHTNESS`, whatever their chroma over :data:`BLACK_CHROMA`: game-1002's red-9 in the hot spot's
    rim, L 192 and chroma 38, hue 42, was doubted too) read in a colour, at least :data:`WASHED_MIN_SHIFT` from the
    light, on a table with an unwashed cluster surely of that colour; the others are judged as before. Measured with
    true boxes and the shipped models on 2,330 synthetic scenes (the three held-out sets and the ``cpu-cls`` sets;
    87,140 measured inks): 76 right readings no longer doubted, 4 newly doubted, 1 wrong colour newly doubted, none let
    through (``models/README.md``, "Washed inks judged from the table's light")."""
    n = len(inks.lab)
    judged, spared = np.zeros(n, bool), np.zeros(n, bool)
    if light is None:
        return judged, spared
    shift = clusters.centres.astype(np.float64) - light
    away = np.hypot(shift[:, 0], shift[:, 1]) >= MIN_CLUSTER_SHIFT
    direction = np.degrees(np.arctan2(shift[:, 1], shift[:, 0]))
    for i in np.flatnonzero(usable & (read >= 0) & (read != Colour.BLACK.index)):
        lightness, a, b = (float(v) for v in inks.lab[i])
        chroma = float(np.hypot(a, b))
        ink = np.array([a, b]) - light
        if lightness < WASHED_LIGHTNESS or chroma < BLACK_CHROMA or np.hypot(*ink) < WASHED_MIN_SHIFT:
            continue
        hue = float(np.degrees(np.arctan2(ink[1], ink[0])))
        angle = np.abs((hue - direction + 180.0) % 360.0 - 180.0)
        own = [k for k in unwashed if names[k] == read[i] and certainties[k] and away[k]]
        rivals = [k for k in unwashed if names[k] != read[i] and away[k]]
        if not own:
            continue
        mine = min(float(angle[k]) for k in own)
        rival = min((float(angle[k]) for k in rivals), default=180.0)
        spared[i] = mine <= WASHED_MAX_ANGLE_DEG and rival - mine >= WASHED_ANGLE_MARGIN_DEG
        judged[i] = spared[i] or (rival <= WASHED_MAX_ANGLE_DEG and mine - rival >= WASHED_ANGLE_MARGIN_DEG)
    return judged, spared


def _hue_colour(inks: Inks) -> np.ndarray:
    """Per tile, the colour index its ink's hue surely shows (:data:`SURE_HUE_MARGIN_DEG` inside a sector), -1 where
    the ink is black (chroma under :data:`BLACK_CHROMA`) or near a hue boundary. Unlike :func:`colour_of_ink`,
    whatever the chroma over black: a washed-out ink keeps its hue."""
    colours = np.full(len(inks.lab), -1, np.int64)
    for i, (_, a, b) in enumerate(inks.lab.astype(np.float64)):
        if np.hypot(a, b) >= BLACK_CHROMA:
            colour, sure = _hue(a, b)
            colours[i] = colour.index if sure else -1
    return colours


def _outvoted(clusters: InkClusters, doubted: np.ndarray) -> np.ndarray:
    """Tiles of a cluster of at least two whose colour most of its tiles were read against: a whole colour
    flipped, whose inks agree with each other and not with the reading."""
    flipped = np.zeros(len(doubted), bool)
    for k in range(len(clusters.centres)):
        members = clusters.member == k
        if members.sum() >= 2 and doubted[members].sum() * 2 > members.sum():
            flipped |= members
    return flipped


def _close_runner_up(tiles: Detections, expected: np.ndarray) -> np.ndarray:
    """Tiles whose most probable label in the ``expected`` colour is at most :data:`RUNNER_UP_ODDS` times less
    probable than the label read."""
    probs = tiles.data.get("probs")
    close = np.zeros(len(tiles), bool)
    if probs is None:
        return close
    probs = np.asarray(probs, np.float64)
    for i in np.flatnonzero(expected >= 0):
        best = probs[i][expected[i] == _LABEL_COLOUR].max()
        close[i] = best * RUNNER_UP_ODDS >= probs[i].max()
    return close


def _doubt(tiles: Detections, doubted: np.ndarray, reread: np.ndarray, expected: np.ndarray) -> Detections:
    """The tiles with doubted ones capped at :data:`DOUBT_CONFIDENCE` and surely mis-coloured ones re-read."""
    if not doubted.any():
        return tiles.with_(colour_doubt=doubted)
    class_id = tiles.class_id.copy()
    confidence = tiles.confidence.astype(np.float32).copy()
    probs = tiles.data.get("probs")
    new_probs = None if probs is None else np.asarray(probs, np.float32).copy()
    if new_probs is not None:
        for i in np.flatnonzero(reread):
            colour = expected[i] == _LABEL_COLOUR
            p = new_probs[i] * np.where(colour, 1.0, OTHER_COLOUR_ODDS)
            new_probs[i] = p / p.sum()
            class_id[i] = int(np.flatnonzero(colour)[new_probs[i][colour].argmax()])
    confidence[doubted] = np.minimum(confidence[doubted], DOUBT_CONFIDENCE)
    extra = {} if new_probs is None else {"probs": new_probs}
    return tiles.with_(class_id=class_id, confidence=confidence, colour_doubt=doubted, **extra)
