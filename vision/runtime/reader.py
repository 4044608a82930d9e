"""Tiles read from pixels: the :class:`Reader` protocol, the :class:`Reading` it returns, and :class:`TileReader`,
a :class:`~vision.runtime.detector.Detector` then a :class:`~vision.runtime.classifier.Classifier` on the crops, with
the table's colours checked and unfamiliar tiles, and tiles the picture's edge may cut, capped.

Sessions are created on first use, so building a reader is free and a missing model is reported when needed
(:meth:`TileReader.check_models` loads them at once).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Protocol

import numpy as np

from vision.runtime.classifier import Classifier, OnnxTileClassifier
from vision.runtime.crops import crop_boxes
from vision.runtime.detections import Detections
from vision.runtime.detector import (
    NESTED_SHARE,
    STRIDE,
    TILE_NMS_IOU,
    Detector,
    Region,
    YoloOnnxDetector,
    with_nms,
    without_nested,
)
from vision.runtime.familiarity import (
    NEAR_FRAME,
    Familiarity,
    FamiliarityLoadError,
    load_familiarity,
    steady_probability,
)
from vision.runtime.inkcolour import check_colours, frame_balance, frame_body, global_balance, ink_features
from vision.runtime.models import DEFAULT_PROVIDERS, ModelLoadError, default_models_dir
from vision.runtime.secondlook import SecondLook, TurnedLook

SMALL_TILE_PX = 26.0
"""Tiles found narrower than this at a photo's first reading (the detector's input size): the photo is read again,
scaled so they are :data:`PHOTO_TILE_PX` wide. Chosen with :data:`PHOTO_TILE_PX` on 120 held-out edition photos
(2026-11-25, detector v3 7-bit, classifier v7; the second reading replacing the first), against reading once:
18/28 px recall 0.842 -> 0.908, 26/28 0.935, 26/32 0.944 (F1 0.863 -> 0.919, wrong at >= 0.8 18 -> 23, 1 colour
flip both), 30/36 0.952 but 3 flips. Real photos (tiles 33-147 px at 448, 5th to 95th percentile): 3 of 192 held-out
photos are read twice."""
PHOTO_TILE_PX = 32.0
AROUND_TILES = 2.0
"""``TileReader(around=AROUND_TILES)``: the second reading at tile scale covers the first reading's tiles widened by
this many tile widths on each side, not the whole photo (a tile the first reading missed lies among the others). Not
the default: about 8 % less CPU per 1280x960 photo, short of the 120 ms budget (models/README.md, 2026-11-26)."""
SCOUT_SIDE = 320
"""``TileReader(scout=SCOUT_SIDE)``: the side of a smaller first reading that finds the tiles' scale. Not the
default: on the 120 held-out edition photos it finds under 3 tiles or calls them large on 12 the 448 reading calls
small, and recall drops (models/README.md, 2026-11-26)."""
MIN_TILES_FOR_SCALE = 3
"""A first reading that finds fewer tiles than this cannot tell their scale (:func:`tile_scale_region`)."""
CLOSER_LOOK = 2.0
"""A photo whose first reading found fewer than :data:`MIN_TILES_FOR_SCALE` tiles, none of them large, is read once
more with its longer side this many times the detector's input (:func:`needs_a_closer_look`), and the tile-scale
reading follows from what that finds. Tiles 10 px wide at a 448 input can be missed almost all: two of the 300
held-out edition photos of seed 4242 (tiles 23 and 30 px wide in 1280x960) gave 1 and 2 boxes of 61 and 70 tiles,
too few to read them again at tile scale."""
NOT_A_TILE = 0.1
"""Detector confidence x classifier confidence under this: table texture, glare or a tile's edge, not a tile.
The live pipeline's rule, applied to readings fused over several frames (:func:`vision.runtime.tables.read_table`)."""
PHOTO_NOT_A_TILE = 0.3
"""The same rule for a single photo (:class:`TileReader`'s default). Chosen on photos the held-out ones never
joined: on the 345 real training photos 0.1 -> 0.3 drops 26 of 109 false boxes and 2 of 3,532 true tiles (0.4
drops 20 true tiles); on the classifier's 42 development photos (which it never trained on) 2 of 4 false
boxes and no true tile."""

CUT_PX = 1.0
"""A box within this many pixels of the picture's edge (the photo's, or that of the part of it the detector looked at)
is a tile the edge may cut: part of its digit can be out of the picture."""
CUT_CONFIDENCE = 0.5
"""A cut tile's confidence is capped here (under the layout's 0.8: uncertain, so REVIEW). Measured on the three
held-out edition sets (2026-11-29, ``synth-editions-heldout-120``, ``-200b``, ``-300f``: 26,507 tiles): 12 of their 57
confident misreads touch the edge (there 1 confident reading in 18 is wrong, elsewhere 1 in 350); 1.3 % of their
correct confident readings are capped, 0.7 % on the real held-out photos (tiles the photographer cut in half)."""


def cut_by_edge(xyxy: np.ndarray, edges: tuple[float, float, float, float]) -> np.ndarray:
    """(N,) bool: which boxes reach within :data:`CUT_PX` of ``edges`` (x0, y0, x1, y1: the picture's bounds)."""
    boxes = np.asarray(xyxy, np.float64).reshape(-1, 4)
    x0, y0, x1, y1 = edges
    return (
        (boxes[:, 0] <= x0 + CUT_PX)
        | (boxes[:, 1] <= y0 + CUT_PX)
        | (boxes[:, 2] >= x1 - CUT_PX)
        | (boxes[:, 3] >= y1 - CUT_PX)
    )


def with_cut_tiles_uncertain(tiles: Detections, edges: tuple[float, float, float, float]) -> Detections:
    """``tiles`` with ``cut`` in ``data`` (:func:`cut_by_edge`) and the cut ones' confidence capped at
    :data:`CUT_CONFIDENCE`."""
    cut = cut_by_edge(tiles.xyxy, edges)
    capped = np.where(cut, np.minimum(tiles.confidence, CUT_CONFIDENCE), tiles.confidence)
    return tiles.with_(confidence=capped.astype(np.float32), cut=cut)


@dataclass(frozen=True, slots=True)
class ReadTimings:
    """Where a reading's time went, in milliseconds: detection (a second detection under a strong cast counts
    here), classification, the colour step (:mod:`vision.runtime.inkcolour`) apart from classification, and the
    familiarity check (:mod:`vision.runtime.familiarity`)."""

    detect_ms: float = 0.0
    classify_ms: float = 0.0
    colour_ms: float = 0.0
    familiarity_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.detect_ms + self.classify_ms + self.colour_ms + self.familiarity_ms


@dataclass(frozen=True, slots=True)
class Reading:
    """What one :meth:`Reader.read` saw: the labelled tiles, the boxes left out as most likely not tiles (labelled
    as well, so a table's reading can say what it left out), and the time each step took."""

    detections: Detections
    left_out: Detections = field(default_factory=Detections.empty)
    timings: ReadTimings = ReadTimings()


OnTable = Callable[[Detections], np.ndarray]
"""Which of the classified boxes are table tiles (a boolean mask over them): the play area's, say."""


class Reader(Protocol):
    """Pixels to labelled tiles: ``read(image_bgr, region=..., on_table=...) -> Reading``."""

    def read(self, image_bgr: np.ndarray, *, region: Region | None = None, on_table: OnTable | None = None) -> Reading:
        """The tiles of the image; with ``region``, only those inside it, read at the region's own scale; with
        ``on_table``, only the boxes it keeps (the others are no table tiles: ignored, not left out)."""
        ...

    def check_models(self) -> None:
        """Load what the reader needs now: a missing or damaged model fails here, in one line naming it."""
        ...


def tile_widths(boxes: Detections) -> np.ndarray:
    """Each box's narrower side: a tile's width in the image's pixels, whatever its orientation."""
    return np.minimum(boxes.xyxy[:, 2] - boxes.xyxy[:, 0], boxes.xyxy[:, 3] - boxes.xyxy[:, 1])


def tile_scale_region(
    shape: tuple[int, int],
    boxes: Detections,
    input_size: int,
    *,
    margin: float | None = None,
    tile_px: float = PHOTO_TILE_PX,
) -> Region | None:
    """The part of the image holding the tiles found in it (their bounding box widened by ``margin`` tiles on each
    side; None: the whole image), scaled so its tiles are ``tile_px`` wide, when those tiles are
    narrower than :data:`SMALL_TILE_PX` at the detector's input (None otherwise, or with under 3 tiles)."""
    if len(boxes) < MIN_TILES_FOR_SCALE:
        return None
    height, width = shape
    tile = float(np.median(tile_widths(boxes)))
    if tile * input_size / max(width, height) >= SMALL_TILE_PX:
        return None
    x0, y0, x1, y1 = 0.0, 0.0, float(width), float(height)
    if margin is not None:
        x0, y0 = (max(0.0, float(v) - margin * tile) for v in boxes.xyxy[:, :2].min(axis=0))
        x1, y1 = (
            min(x1, float(boxes.xyxy[:, 2].max()) + margin * tile),
            min(y1, float(boxes.xyxy[:, 3].max()) + margin * tile),
        )
    return Region(x0, y0, x1, y1, width_px=fit_to_stride(x1 - x0, y1 - y0, max(1, round((x1 - x0) * tile_px / tile))))


STRIDE_FIT = 1.0
"""A second reading's region is read down to this share of its scale where that spares the detector a row or a
column of its stride that would be mostly padding (:func:`fit_to_stride`); 1: never. Measured at 0.97 (tiles of 31 px,
not 32; the 1280x960 bench photo 5 % fewer input pixels), 2026-11-26: with the rect first reading (detector.py's
``rect``) held-out editions recall 0.9427 -> 0.9452, F1 0.9153 -> 0.9152, wrong at >= 0.8 25 -> 25; without it
recall 0.9418, F1 0.9119, wrong 21, so off while the rect reading is (models/README.md)."""


def needs_a_closer_look(shape: tuple[int, int], boxes: Detections, input_size: int) -> bool:
    """Whether a photo's first reading at the detector's ``input_size`` found too few tiles to tell their scale
    (under :data:`MIN_TILES_FOR_SCALE`, none of them as wide as :data:`SMALL_TILE_PX` there) in a photo larger than
    that input: its tiles may be too small to be found at all (:data:`CLOSER_LOOK`). A photo of one or two large
    tiles is read once, as before."""
    if len(boxes) >= MIN_TILES_FOR_SCALE or max(shape) <= input_size:
        return False
    return bool((tile_widths(boxes) * input_size / max(shape) < SMALL_TILE_PX).all())


def closer_region(shape: tuple[int, int], input_size: int) -> Region:
    """The whole photo, its longer side read at :data:`CLOSER_LOOK` x ``input_size`` (:func:`needs_a_closer_look`)."""
    height, width = shape
    width_px = max(1, round(width * CLOSER_LOOK * input_size / max(height, width)))
    return Region(0.0, 0.0, float(width), float(height), width_px=fit_to_stride(width, height, width_px))


def fit_to_stride(
    width: float, height: float, width_px: int, *, stride: int = STRIDE, share: float | None = None
) -> int:
    """The width to read a ``width`` x ``height`` region at: ``width_px``, or down to ``share`` of it (default
    :data:`STRIDE_FIT`) where the input, padded to the detector's ``stride``, comes out smaller (at 0.97 a 1280x960
    photo's 861x646, padded to 864x672, is read at 853x640, padded to 864x640: 5 % less to compute)."""
    share = STRIDE_FIT if share is None else share

    def padded(w: int) -> int:
        return -(-w // stride) * stride * (-(-round(height * w / width) // stride) * stride)

    smallest = max(1, int(np.ceil(width_px * share)))
    narrower = {width_px, max(smallest, width_px // stride * stride)}
    rows = round(height * width_px / width) // stride * stride  # the last full row of the stride
    narrower.add(max(smallest, int(rows * width / height)))
    return min(narrower, key=lambda w: (padded(w), -w))


def tile_likelihood(tiles: Detections) -> np.ndarray:
    """Detector confidence x classifier confidence of classified tiles: low for texture, glare, a tile's edge. An
    enrolled head's confidence before its (safety) temperature, where it gave one."""
    sure = tiles.data.get("tile_confidence", tiles.confidence)
    return np.asarray(tiles.data["detector_confidence"], np.float64) * np.asarray(sure, np.float64)


class TileReader:
    """:class:`Reader`: detector + classifier, ``read(image_bgr) -> Reading`` of labelled tiles in original pixels.

    A box whose :func:`tile_likelihood` is under ``not_a_tile`` (default :data:`PHOTO_NOT_A_TILE`) is left out (in
    :attr:`Reading.left_out`) before the colours and familiarity look at the table as a whole; 0 keeps every box (the
    live pipeline fuses several frames first and then leaves such boxes out itself: :mod:`vision.runtime.tables`).
    ``rescale`` (default on) reads a photo of small tiles a second time at tile scale (:meth:`read`). The models are
    the ONNX files of ``models_dir`` unless ``detector`` or ``classifier`` give others.
    """

    def __init__(
        self,
        models_dir: str | Path | None = None,
        *,
        confidence: float = 0.25,
        iou: float = TILE_NMS_IOU,
        not_a_tile: float | None = None,
        tiled: bool = False,
        rescale: bool = True,
        scout: int | None = None,
        around: float | None = None,
        tile_px: float = PHOTO_TILE_PX,
        providers: Sequence[str] = DEFAULT_PROVIDERS,
        colour: TableColour | None = None,
        familiarity: bool = True,
        near_frame: float | None = NEAR_FRAME,
        threads: int | None = None,
        detector: Detector | None = None,
        classifier: Classifier | None = None,
        second_look: bool = True,
        turned_look: bool = True,
    ) -> None:
        self.colour = TableColour() if colour is None else colour
        self.use_familiarity = familiarity
        """Cap unfamiliar-looking tiles' confidence (:mod:`vision.runtime.familiarity`) when the model folder holds the
        statistics and the classifier reads with its own label head (an enrolment head is the venue's own set)."""
        self.near_frame = near_frame
        """The familiarity check's near-frame share (:data:`vision.runtime.familiarity.NEAR_FRAME`; None: off)."""
        self._familiarity: Familiarity | None = None
        self._familiarity_loaded = False
        self.not_a_tile = PHOTO_NOT_A_TILE if not_a_tile is None else not_a_tile
        self.models_dir = Path(models_dir) if models_dir is not None else default_models_dir()
        self.detector: Detector = detector or YoloOnnxDetector.from_model_dir(
            self.models_dir, confidence=confidence, iou=iou, providers=providers, tiled=tiled, threads=threads
        )
        self.classifier: Classifier = classifier or OnnxTileClassifier.from_model_dir(
            self.models_dir, providers=providers, threads=threads
        )
        self.second_look = SecondLook(self.classifier) if second_look else None
        """Doubtful tiles read again from a few crops cut slightly differently, the probabilities averaged
        (:mod:`vision.runtime.secondlook`); None: off."""
        self.turned_look = TurnedLook(self.classifier) if turned_look else None
        """Confident tiles read once more from their crop turned half-way round, doubted where it names another label
        (:class:`vision.runtime.secondlook.TurnedLook`); None: off."""
        self.rescale = rescale
        self.scout = scout
        self.around = around
        """With ``rescale``, the second reading covers only the first one's tiles and this many tile widths around
        them (None: the whole photo; see :data:`AROUND_TILES`)."""
        self.tile_px = tile_px
        """A tile's width in the second reading's pixels (:data:`PHOTO_TILE_PX`; less is faster: models/README.md)."""
        """With ``rescale``, the side of a first, smaller reading that only finds the tiles' scale (a photo of small
        tiles is then read again at tile scale and both merged; one of large tiles is read at the input size)."""

    def check_models(self) -> None:
        """Fail early, with the file named, when a model is missing or cannot be loaded: before reading any photo,
        and before a live game or a video's analysis starts (a corrupt model found on the first settled table would
        end the game mid-way)."""
        self.detector.load()
        self.classifier.load()
        self.familiarity  # noqa: B018 - a damaged statistics file fails here too

    @property
    def familiarity(self) -> Familiarity | None:
        """The familiarity statistics beside the classifier, loaded on first use; None: the step is off (turned
        off, an enrolment head, no statistics file, or one fitted to another classifier: logged; a classifier
        other than the ONNX one, whose features the statistics describe)."""
        classifier = self.classifier
        if not self._familiarity_loaded:
            if self.use_familiarity and isinstance(classifier, OnnxTileClassifier) and classifier.head is None:
                try:
                    self._familiarity = load_familiarity(classifier.path)
                except FamiliarityLoadError as error:
                    raise ModelLoadError(str(error)) from None
            self._familiarity_loaded = True
        return self._familiarity

    def _detect(self, image_bgr: np.ndarray, region: Region | None) -> Detections:
        """Boxes in ``region`` at its scale; without one, the photo's, merged with a second reading at tile scale
        when its tiles came out small (a tile found at either scale is kept: on the 3 real held-out photos read
        twice, replacing the first reading lost 3 tiles, merging 1)."""
        if region is not None:
            return self.detector.detect_region(image_bgr, region)
        detector = self.detector
        small = None
        if (
            self.scout
            and self.rescale
            and isinstance(detector, YoloOnnxDetector)
            and detector.any_size
            and max(image_bgr.shape[:2]) > detector.input_size
        ):
            boxes = detector.detect(image_bgr, size=self.scout)
            small = tile_scale_region(
                image_bgr.shape[:2], boxes, detector.input_size, margin=self.around, tile_px=self.tile_px
            )
        if small is None:  # no scout, or it saw large tiles or too few to tell: the photo at the input size
            boxes = detector.detect(image_bgr)
            shape = image_bgr.shape[:2]
            if self.rescale and needs_a_closer_look(shape, boxes, detector.input_size):
                closer = detector.detect_region(image_bgr, closer_region(shape, detector.input_size))
                boxes = without_nested(with_nms(Detections.merge([closer, boxes]), detector.iou), NESTED_SHARE)
            small = (
                tile_scale_region(shape, boxes, detector.input_size, margin=self.around, tile_px=self.tile_px)
                if self.rescale
                else None
            )
        if small is None:
            return boxes
        again = self.detector.detect_region(image_bgr, small)
        return without_nested(with_nms(Detections.merge([again, boxes]), self.detector.iou), NESTED_SHARE)

    def read(self, image_bgr: np.ndarray, *, region: Region | None = None, on_table: OnTable | None = None) -> Reading:
        """Labelled tiles, those left out and the timings; with ``region``, the detector looks only there, at the
        region's own scale.

        ``on_table`` keeps the table's tiles once they are classified (their angles known): the others (a rack's,
        the face-down pool's, a hand's, caught in the play area's bounding box) are dropped before the colours and
        familiarity judge the table as a whole, so they can neither sway its ink clusters nor make its tiles look
        unfamiliar as a frame.

        Without a region and with ``rescale``, a photo whose tiles come out small at the detector's input (a
        whole table, a 4K frame) is read a second time at tile scale: scaled so a tile is about
        :data:`PHOTO_TILE_PX` wide, in one pass (or windows, for a detector of fixed input size); ``bench
        recognition`` times it against one reading.
        """
        start = time.perf_counter()
        boxes = self._detect(image_bgr, region)
        colour_s = 0.0
        if self.colour.balance:
            started = time.perf_counter()
            coarse = global_balance(image_bgr)
            colour_s += time.perf_counter() - started
            if coarse.is_strong:  # a cast strong enough to hide tiles: detect again, balanced, keep the better
                balanced = coarse.apply(image_bgr)
                again = self._detect(balanced, region)
                if float(again.confidence.sum()) > float(boxes.confidence.sum()):
                    image_bgr, boxes = balanced, again
        middle = time.perf_counter()
        crops = crop_boxes(image_bgr, boxes.xyxy)
        cropped = time.perf_counter()
        body = frame_body(crops) if self.colour.balance or self.colour.check else None
        balance = frame_balance(crops, body=body) if self.colour.balance else None
        seen = balance.apply(crops) if balance is not None else crops
        classified = time.perf_counter()
        tiles = self.classifier.classify_crops(seen, boxes)
        colour_start = time.perf_counter()
        if on_table is not None and len(tiles):
            table = np.asarray(on_table(tiles), bool)
            if not table.all():
                tiles, crops = tiles[table], crops[table]
                body = None if body is None else frame_body(crops)  # the table's own tile bodies
        looked = colour_start
        if self.second_look is not None and len(tiles):  # the table's doubtful tiles only, balanced as the first look
            tiles = self.second_look.look(image_bgr, tiles, None if balance is None else balance.apply)
            looked = time.perf_counter()
        left_out = Detections.empty()
        if self.not_a_tile > 0 and len(tiles):
            likely = tile_likelihood(tiles) >= self.not_a_tile
            tiles, crops, left_out = tiles[likely], crops[likely], tiles[~likely]
        if self.turned_look is not None and len(tiles):  # after the not-a-tile rule: a doubt does not drop a tile
            started = time.perf_counter()
            tiles = self.turned_look.look(image_bgr, tiles, None if balance is None else balance.apply)
            looked += time.perf_counter() - started
        if self.colour.check and len(tiles):  # no crop left: nothing to balance (an empty stack crashes cv2.LUT)
            balanced = frame_balance(crops, exact=True, body=body).apply(crops)
            tiles = check_colours(tiles, ink_features(balanced)).detections
        end = time.perf_counter()
        colour_s += classified - cropped + end - looked
        familiarity = self.familiarity
        if familiarity is not None:
            confirm = None
            if self.second_look is not None:  # a tile unfamiliar alone keeps its reading if it holds over nine cuts
                prepare = None if balance is None else balance.apply
                confirm = partial(steady_probability, self.classifier, image_bgr, prepare=prepare)
            tiles = familiarity.check(tiles, confirm, self.near_frame)
        if len(tiles):
            height, width = image_bgr.shape[:2]
            edges = (0.0, 0.0, float(width), float(height))
            if region is not None:  # the part of it the detector looked at
                edges = (max(0.0, region.x0), max(0.0, region.y0), min(width, region.x1), min(height, region.y1))
            tiles = with_cut_tiles_uncertain(tiles, edges)
        timings = ReadTimings(
            detect_ms=(middle - start) * 1e3,
            classify_ms=(looked - classified) * 1e3,  # the second look counts here
            colour_ms=colour_s * 1e3,
            familiarity_ms=(time.perf_counter() - end) * 1e3,
        )
        return Reading(tiles, left_out, timings)


@dataclass(frozen=True, slots=True)
class TableColour:
    """What :class:`TileReader` does with the table's colours (:mod:`vision.runtime.inkcolour`): ``balance`` the frame
    (before detection from its brightest pixels, before classification from the tile bodies), ``check`` each
    tile's colour against the table's ink clusters."""

    balance: bool = True
    check: bool = True
