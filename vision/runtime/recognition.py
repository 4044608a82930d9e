"""Tile recognition with ONNX Runtime: a one-class tile detector, then a classifier on the crops.

- :class:`TileDetector` runs an Ultralytics YOLOv8 detector exported to ONNX (input ``images`` (1, 3, S, S) RGB
  in [0, 1], letterboxed; output (1, 4 + classes, anchors): cx, cy, w, h in input pixels, then class scores).
  ``S`` comes from the model's metadata (``imgsz``). With ``tiled=True`` it also runs on overlapping windows
  at native resolution, for small tiles in 4K frames.
- :class:`TileClassifier` reads each crop (:mod:`vision.runtime.crops`): 53 calibrated probabilities and the tile's
  up direction (and the pooled ``features`` the label head reads, when the model exports them).
- :class:`TileReader` combines the two: ``read(image) -> Detections``.

Sessions are created on first use, so building a reader is free and a missing model is reported when needed.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from referee.tiles import ALL_LABELS
from vision.runtime.crops import crop_boxes, to_input
from vision.runtime.detections import UNCLASSIFIED, Detections
from vision.runtime.enrolhead import FEATURES_OUTPUT, HEAD_FILE, EnrolmentHead, HeadLoadError
from vision.runtime.familiarity import Familiarity, FamiliarityLoadError, load_familiarity
from vision.runtime.imagefile import ImageReadError, NativeMessages, check_image_size, header_size
from vision.runtime.inkcolour import check_colours, frame_balance, frame_body, global_balance, ink_features

DETECTOR_FILE = "tile-detector.onnx"
CLASSIFIER_FILE = "tile-classifier.onnx"
DEFAULT_PROVIDERS: tuple[str, ...] = ("CPUExecutionProvider",)
INTRA_OP_THREADS = 2
"""The referee station has 2 cores; more threads than cores only adds contention."""
PROVIDERS: dict[str, tuple[str, ...]] = {
    "cpu": DEFAULT_PROVIDERS,
    "cuda": ("CUDAExecutionProvider", "CPUExecutionProvider"),
}
"""``--provider``: ONNX Runtime's execution providers, in order of preference."""
LETTERBOX_FILL = 114
"""Ultralytics pads letterboxed images with this grey; the detector was trained on it."""
WINDOW_OVERLAP = 0.25
"""Overlap of neighbouring windows in tiled inference, as a share of the window: wider than a tile."""
MAX_WINDOWS = 8
"""Tiled inference runs the detector on at most this many windows (plus the whole frame)."""
TILE_PX = 28.0
"""Width of a tile, in pixels at the detector's input, that the detector reads best (what it learnt)."""
SMALL_TILE_PX = 26.0
"""Tiles found narrower than this at a photo's first reading (the detector's input size): the photo is read again,
scaled so they are :data:`PHOTO_TILE_PX` wide. Chosen with :data:`PHOTO_TILE_PX` on 120 held-out edition photos
(2026-11-25, detector v3 7-bit, classifier v7; the second reading replacing the first), against reading once:
18/28 px recall 0.842 -> 0.908, 26/28 0.935, 26/32 0.944 (F1 0.863 -> 0.919, wrong at >= 0.8 18 -> 23, 1 colour
flip both), 30/36 0.952 but 3 flips. Real photos (tiles 33-147 px at 448, 5th to 95th percentile): 3 of 192 held-out
photos are read twice."""
PHOTO_TILE_PX = 32.0
"""Width of a tile at the detector's input when a photo of small tiles is read again (see :data:`SMALL_TILE_PX`)."""
NESTED_SHARE = 0.8
"""A box lying this much inside a more confident one is the same tile (see Detections.without_nested)."""
EDGE_MARGIN = 2.0
"""A box within this many pixels of an inner window edge is cut by the window; a neighbour sees it whole."""
CLASSIFIER_BATCH = 64
STRIDE = 32
"""The detector's largest stride: an input of any size must be a multiple of it."""
MAX_ONE_PASS_PIXELS = 1600 * 1600
"""A detector exported with dynamic axes reads a region up to this big in one pass instead of in windows."""
TILE_NMS_IOU = 0.35
"""Boxes overlapping more than this are one tile: true tiles in the real training photos overlap at most 0.27."""
NOT_A_TILE = 0.1
"""Detector confidence x classifier confidence under this: table texture, glare or a tile's edge, not a tile.
The live pipeline's rule, applied to readings fused over several frames (``vision.game.pipeline.read_table``)."""
PHOTO_NOT_A_TILE = 0.3
"""The same rule for a single photo (:class:`TileReader`'s default). Chosen on photos the held-out ones never
joined: on the 345 real training photos 0.1 -> 0.3 drops 26 of 109 false boxes and 2 of 3,532 true tiles (0.4
drops 20 true tiles); on the classifier's 42 development photos (which it never trained on) 2 of 4 false
boxes and no true tile."""


class ModelNotFoundError(FileNotFoundError):
    """A model file is missing; the message names it and says where the models ship."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "model file not found"


class ModelLoadError(ValueError):
    """A model file that ONNX Runtime cannot load (corrupt, or not the expected kind of model)."""


MODELS_PACKAGE = "rummikub_models"


def default_models_dir() -> Path:
    """``$RUMMIKUB_MODELS``, else the models installed with the package (the data package ``rummikub_models``,
    which is the repository's ``models/`` folder in an editable install), else a source checkout's ``models/``
    (running from the repository without installing it)."""
    env = os.environ.get("RUMMIKUB_MODELS")
    if env:
        return Path(env)
    spec = importlib.util.find_spec(MODELS_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if (Path(location) / DETECTOR_FILE).is_file():
                return Path(location)
    return Path(__file__).resolve().parents[2] / "models"


def load_image(path: str | Path) -> np.ndarray:
    """A photo as a BGR uint8 array (EXIF orientation applied); one-line errors for bad files, and for images too
    small to hold a tile or too large to read, refused from the header before any pixel is decoded."""
    path = Path(path)
    try:
        raw = np.fromfile(path, np.uint8)
    except FileNotFoundError:
        raise ImageReadError(f"{path}: no such image file") from None
    except OSError as error:
        raise ImageReadError(f"{path}: cannot read ({error.strerror or error})") from None
    if not raw.size:
        raise ImageReadError(f"{path}: not a readable image (an empty file)")
    header_size(raw.tobytes(), path)
    with NativeMessages() as decoder:
        try:
            image = cv2.imdecode(raw, cv2.IMREAD_COLOR)
        except cv2.error as error:  # OpenCV's own size cap (OPENCV_IO_MAX_IMAGE_PIXELS), for formats PIL cannot read
            if "MAX_IMAGE_PIXELS" in str(error):
                raise ImageReadError(f"{path}: the image is too large to read (OpenCV's size limit)") from None
            raise ImageReadError(f"{path}: not a readable image ({error.err or 'OpenCV cannot decode it'})") from None
    if image is None:
        said = f": {decoder.first_line}" if decoder.first_line else ""
        raise ImageReadError(f"{path}: not a readable image (corrupt file or unsupported format{said})")
    if decoder.says_truncated():
        raise ImageReadError(f"{path}: damaged image data ({decoder.first_line}); a part of the photo is missing")
    check_image_size(image.shape[1], image.shape[0], path)  # formats PIL does not know are only checked now
    return image


def check_provider(name: str) -> tuple[str, ...]:
    """The providers for ``--provider NAME``; a one-line :class:`ModelLoadError` when this ONNX Runtime lacks it
    (CUDA needs the onnxruntime-gpu package and an NVIDIA GPU)."""
    import onnxruntime as ort

    if name not in PROVIDERS:
        raise ModelLoadError(f"unknown execution provider {name!r} (known: {', '.join(PROVIDERS)})")
    wanted = PROVIDERS[name][0]
    if wanted not in ort.get_available_providers():
        raise ModelLoadError(
            f"--provider {name}: this ONNX Runtime offers only {', '.join(ort.get_available_providers())}"
            + (" (CUDA needs the onnxruntime-gpu package and an NVIDIA GPU)" if name == "cuda" else "")
        )
    return PROVIDERS[name]


def _session(path: Path, providers: Sequence[str], threads: int | None = None) -> Any:
    import onnxruntime as ort

    if not path.is_file():
        raise ModelNotFoundError(
            f"{path}: model file not found (the tile models ship in models/; pass --models DIR or set RUMMIKUB_MODELS)"
        )
    options = ort.SessionOptions()
    options.intra_op_num_threads = INTRA_OP_THREADS if threads is None else threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=list(providers))
    except Exception as error:  # ONNX Runtime raises its own exception types for corrupt or foreign files
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelLoadError(f"{path}: cannot load the model ({first_line[:200]})") from None


# -- geometry of the detector input -------------------------------------------------------------------


class Letterbox:
    """Ultralytics' letterbox: scale to fit ``size`` (a side, or (height, width)) keeping the aspect, pad centred
    with grey."""

    def __init__(self, size: int | tuple[int, int], *, scale_up: bool = True) -> None:
        self.height, self.width = (size, size) if isinstance(size, int) else size
        self.scale_up = scale_up

    @classmethod
    def to_stride(cls, height: int, width: int, stride: int = STRIDE) -> Letterbox:
        """Padding only: the image at its own scale, padded up to a multiple of the network's stride."""
        return cls((-(-height // stride) * stride, -(-width // stride) * stride), scale_up=False)

    def apply(self, image: np.ndarray) -> tuple[np.ndarray, float, tuple[float, float]]:
        """(letterboxed image, scale, (pad_x, pad_y)); original = (letterboxed - pad) / scale."""
        height, width = image.shape[:2]
        scale = min(self.height / height, self.width / width, np.inf if self.scale_up else 1.0)
        new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))  # a 5000x16 strip keeps a row
        pad_x, pad_y = (self.width - new_w) / 2, (self.height - new_h) / 2
        # Same rounding as ultralytics.data.augment.LetterBox, so the pixels match training exactly.
        top, bottom = round(pad_y - 0.1), round(pad_y + 0.1)
        left, right = round(pad_x - 0.1), round(pad_x + 0.1)
        if (new_w, new_h) != (width, height):
            image = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
        fill = (LETTERBOX_FILL,) * 3
        boxed = cv2.copyMakeBorder(image, top, bottom, left, right, cv2.BORDER_CONSTANT, value=fill)
        return boxed, scale, (float(left), float(top))


def decode_yolo(
    output: np.ndarray,
    *,
    scale: float,
    pad: tuple[float, float],
    image_shape: tuple[int, int],
    confidence: float = 0.25,
    iou: float = TILE_NMS_IOU,
) -> Detections:
    """Boxes in original pixels from a YOLOv8 output (1, 4 + C, A) of a letterboxed input, after NMS.

    ``class_id`` stays :data:`UNCLASSIFIED` (the detector finds tiles; the classifier reads them); the
    detector's class index is kept in ``data["detector_class"]`` for multi-class detectors (face / back).
    """
    prediction = np.asarray(output, np.float32)
    prediction = prediction[0] if prediction.ndim == 3 else prediction
    scores_all = prediction[4:]
    detector_class = scores_all.argmax(axis=0)
    scores = scores_all.max(axis=0)
    keep = scores >= confidence
    cx, cy, w, h = prediction[:4, keep]
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    boxes[:, [0, 2]] -= pad[0]
    boxes[:, [1, 3]] -= pad[1]
    boxes /= scale
    height, width = image_shape
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, width)
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, height)
    found = Detections(
        boxes,
        scores[keep],
        np.full(int(keep.sum()), UNCLASSIFIED),
        {"detector_class": detector_class[keep].astype(np.int64)},
    )
    valid = (found.xyxy[:, 2] > found.xyxy[:, 0]) & (found.xyxy[:, 3] > found.xyxy[:, 1])
    return found[valid].with_nms(iou)


def windows(width: int, height: int, window: int, overlap: float = WINDOW_OVERLAP) -> list[tuple[int, int, int, int]]:
    """Overlapping (x0, y0, x1, y1) windows of side ``window`` covering the image, the last flush with its edge."""

    def starts(length: int) -> list[int]:
        if length <= window:
            return [0]
        stride = max(1, int(window * (1 - overlap)))
        points = list(range(0, length - window, stride))
        return [*points, length - window]

    return [(x, y, min(x + window, width), min(y + window, height)) for y in starts(height) for x in starts(width)]


@dataclass(frozen=True, slots=True)
class Region:
    """Part of a frame to detect in (``x0, y0, x1, y1`` in pixels), scaled to ``width_px`` wide first."""

    x0: float
    y0: float
    x1: float
    y1: float
    width_px: int = 896


# -- models --------------------------------------------------------------------------------------------


class TileDetector:
    """Finds face-up tiles: ``detect(image_bgr) -> Detections`` (unclassified boxes in original pixels)."""

    def __init__(
        self,
        path: str | Path,
        *,
        confidence: float = 0.25,
        iou: float = TILE_NMS_IOU,
        providers: Sequence[str] = DEFAULT_PROVIDERS,
        tiled: bool = False,
        window: int | None = None,
        max_windows: int = MAX_WINDOWS,
        threads: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_windows = max_windows
        self.confidence = confidence
        self.iou = iou
        self.providers = tuple(providers)
        self.threads = threads
        """ONNX Runtime's intra-op threads (None: :data:`INTRA_OP_THREADS`)."""
        self.tiled = tiled
        self._window = window
        self._session: Any = None
        self._size: int | None = None

    @property
    def session(self) -> Any:
        if self._session is None:
            self._session = _session(self.path, self.providers, self.threads)
        return self._session

    @property
    def input_size(self) -> int:
        """``S`` of the (1, 3, S, S) input: the export's ``imgsz`` metadata, else the input's static shape."""
        if self._size is None:
            self._size = _input_size(self.session)
        return self._size

    @property
    def any_size(self) -> bool:
        """The model takes inputs of any height and width (exported with dynamic axes)."""
        height, width = self.session.get_inputs()[0].shape[2:]
        return not (isinstance(height, int) and isinstance(width, int))

    def window_for(self, width: int, height: int) -> int:
        """Side of a window in tiled inference, in original pixels.

        Native resolution (the input size) when that needs at most ``max_windows`` windows; otherwise the
        smallest larger side (steps of 25%) that does, so a 4K frame costs a bounded number of runs.
        """
        if self._window:
            return self._window
        side = self.input_size
        while len(windows(width, height, side)) > self.max_windows:
            side = round(side * 1.25)
        return side

    def detect(self, image_bgr: np.ndarray, *, tiled: bool | None = None, whole: bool = True) -> Detections:
        """Boxes of face-up tiles; ``tiled`` adds native-resolution windows, ``whole=False`` uses them alone."""
        tiled = self.tiled if tiled is None else tiled
        height, width = image_bgr.shape[:2]
        side = self.window_for(width, height)
        if not tiled or max(width, height) <= side:
            return self._detect_once(image_bgr).without_nested(NESTED_SHARE)
        parts = [self._detect_once(image_bgr)] if whole else []
        for x0, y0, x1, y1 in windows(width, height, side):
            kept = _drop_cut_boxes(self._detect_once(image_bgr[y0:y1, x0:x1]), (x0, y0, x1, y1), (width, height))
            parts.append(kept.with_(xyxy=kept.xyxy + np.array([x0, y0, x0, y0], np.float32)))
        return Detections.merge(parts).with_nms(self.iou).without_nested(NESTED_SHARE)

    def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
        """Tiles inside ``region`` of the image, detected on the region resized to ``region.width_px``.

        For frames of a whole table, where tiles are too small once the frame is shrunk to the input size:
        the region (the play area) is cut out, scaled so tiles come out at the size the detector learnt, and
        covered with windows. Boxes come back in the original image's pixels.
        """
        height, width = image_bgr.shape[:2]
        x0, y0 = max(0, int(region.x0)), max(0, int(region.y0))
        x1, y1 = min(width, int(np.ceil(region.x1))), min(height, int(np.ceil(region.y1)))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return Detections.empty()
        crop = image_bgr[y0:y1, x0:x1]
        scale = min(1.0, region.width_px / crop.shape[1])
        if scale < 1.0:
            crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        found = self.detect_native(crop)
        return found.with_(xyxy=found.xyxy / np.float32(scale) + np.array([x0, y0, x0, y0], np.float32))

    def detect_native(self, image_bgr: np.ndarray) -> Detections:
        """Boxes with the image read at its own scale: in one pass, padded to the stride, when the model takes
        any input size (1.7x faster than the six overlapping windows of a 1080p play area, and no tile is cut
        by a window's edge); otherwise in windows of the input size."""
        height, width = image_bgr.shape[:2]
        if max(height, width) <= self.input_size or height * width > MAX_ONE_PASS_PIXELS or not self.any_size:
            return self.detect(image_bgr, tiled=True, whole=False)
        return self._detect_once(image_bgr, Letterbox.to_stride(height, width)).without_nested(NESTED_SHARE)

    def _detect_once(self, image_bgr: np.ndarray, letterbox: Letterbox | None = None) -> Detections:
        boxed, scale, pad = (letterbox or Letterbox(self.input_size)).apply(image_bgr)
        tensor = np.ascontiguousarray(boxed[..., ::-1].transpose(2, 0, 1)[None], dtype=np.float32) / 255.0
        session = self.session
        (output,) = session.run(None, {session.get_inputs()[0].name: tensor})[:1]
        return decode_yolo(
            output,
            scale=scale,
            pad=pad,
            image_shape=image_bgr.shape[:2],
            confidence=self.confidence,
            iou=self.iou,
        )


def _drop_cut_boxes(found: Detections, window: tuple[int, int, int, int], image_size: tuple[int, int]) -> Detections:
    """Keep boxes not touching an inner edge of the window (edges on the image border are real edges)."""
    x0, y0, x1, y1 = window
    width, height = image_size
    w, h = x1 - x0, y1 - y0
    box = found.xyxy
    cut = np.zeros(len(found), bool)
    if x0 > 0:
        cut |= box[:, 0] <= EDGE_MARGIN
    if y0 > 0:
        cut |= box[:, 1] <= EDGE_MARGIN
    if x1 < width:
        cut |= box[:, 2] >= w - EDGE_MARGIN
    if y1 < height:
        cut |= box[:, 3] >= h - EDGE_MARGIN
    return found[~cut]


def _input_size(session: Any) -> int:
    meta = session.get_modelmeta().custom_metadata_map
    if "imgsz" in meta:
        value = ast.literal_eval(meta["imgsz"])
        return int(value[0] if isinstance(value, list | tuple) else value)
    shape = session.get_inputs()[0].shape
    if isinstance(shape[-1], int):
        return shape[-1]
    return 640


CLASSIFIER_FEATURES = "features"
"""The classifier's optional output of pooled features (N, D): :class:`TileClassifier` puts it in ``data``."""


class TileClassifier:
    """Reads each detected tile: ``classify(image_bgr, detections) -> Detections`` with labels and angles.

    ``class_id`` is the most probable label, ``confidence`` its (calibrated) probability; ``data`` gains
    ``probs`` (N, 53), ``angle_deg`` (the tile's up, clockwise from image up) and ``detector_confidence``, and
    ``features`` (N, D) when the model has a :data:`CLASSIFIER_FEATURES` output (a model without it still reads).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        providers: Sequence[str] = DEFAULT_PROVIDERS,
        batch: int = CLASSIFIER_BATCH,
        threads: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.providers = tuple(providers)
        self.threads = threads
        self.batch = batch
        self._session: Any = None
        self.head = _enrolment_head(self.path.parent / HEAD_FILE)
        """An enrolled set's head (``rummikub-referee enrol``) reads the labels from the features, when the folder
        has one; None: the classifier's own ``probs``."""

    @property
    def session(self) -> Any:
        if self._session is None:
            self._session = _session(self.path, self.providers, self.threads)
            if self.head is not None and FEATURES_OUTPUT not in [o.name for o in self._session.get_outputs()]:
                raise ModelLoadError(f"{self.path}: has no {FEATURES_OUTPUT!r} output for the enrolment head beside it")
        return self._session

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        return self.classify_crops(crop_boxes(image_bgr, detections.xyxy), detections)

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        """``classify`` on crops already cut (:func:`vision.runtime.crops.crop_boxes`), one per detection."""
        n = len(detections)
        probs = np.zeros((n, len(ALL_LABELS)), np.float32)
        angles = np.zeros(n, np.float32)
        features: list[np.ndarray] = []
        if n:
            session = self.session
            input_name = session.get_inputs()[0].name
            names = [o.name for o in session.get_outputs()]
            probs_index = names.index("probs") if "probs" in names else 0
            angle_index = names.index("angle_deg") if "angle_deg" in names else 1
            features_index = names.index(CLASSIFIER_FEATURES) if CLASSIFIER_FEATURES in names else None
            fixed = session.get_inputs()[0].shape[0]
            batch = fixed if isinstance(fixed, int) and fixed > 0 else self.batch
            for start in range(0, n, batch):
                chunk = to_input(crops[start : start + batch])
                count = len(chunk)
                if count < batch and isinstance(fixed, int) and fixed > 0:
                    chunk = np.concatenate([chunk, np.zeros((batch - count, *chunk.shape[1:]), np.float32)])
                outputs = session.run(None, {input_name: chunk})
                probs[start : start + count] = np.asarray(outputs[probs_index])[:count]
                if len(outputs) > 1:
                    angles[start : start + count] = np.asarray(outputs[angle_index]).reshape(-1)[:count]
                if features_index is not None:
                    features.append(np.asarray(outputs[features_index], np.float32)[:count])
        enrolled = {}
        if self.head is not None and features:  # an enrolled set: its head reads the labels from the features
            probs = self.head.probs(np.concatenate(features))
            enrolled["tile_confidence"] = self.head.tile_confidence(np.concatenate(features))
        return detections.with_(
            class_id=probs.argmax(axis=1) if n else np.zeros(0, np.int64),
            confidence=probs.max(axis=1) if n else np.zeros(0, np.float32),
            probs=probs,
            angle_deg=np.mod(angles, 360.0),
            detector_confidence=detections.confidence,
            **({"features": np.concatenate(features)} if features else {}),
            **enrolled,
        )


def _enrolment_head(path: Path) -> EnrolmentHead | None:
    """The enrolment head in a model folder, if there is one (a damaged one is a ModelLoadError naming it)."""
    if not path.is_file():
        return None
    try:
        return EnrolmentHead.load(path, len(ALL_LABELS))
    except HeadLoadError as error:
        raise ModelLoadError(str(error)) from None


def tile_scale_region(shape: tuple[int, int], boxes: Detections, input_size: int) -> Region | None:
    """The whole image as a region scaled so its tiles are :data:`PHOTO_TILE_PX` wide, when the tiles found in it
    are narrower than :data:`SMALL_TILE_PX` at the detector's input (None otherwise, or with under 3 tiles)."""
    if len(boxes) < 3:
        return None
    height, width = shape
    narrow = np.minimum(boxes.xyxy[:, 2] - boxes.xyxy[:, 0], boxes.xyxy[:, 3] - boxes.xyxy[:, 1])
    tile = float(np.median(narrow))  # a tile's width in the image's pixels, whatever its orientation
    if tile * input_size / max(width, height) >= SMALL_TILE_PX:
        return None
    return Region(0, 0, width, height, width_px=max(1, round(width * PHOTO_TILE_PX / tile)))


def tile_likelihood(tiles: Detections) -> np.ndarray:
    """Detector confidence x classifier confidence of classified tiles: low for texture, glare, a tile's edge. An
    enrolled head's confidence before its (safety) temperature, where it gave one."""
    sure = tiles.data.get("tile_confidence", tiles.confidence)
    return np.asarray(tiles.data["detector_confidence"], np.float64) * np.asarray(sure, np.float64)


class TileReader:
    """Detector + classifier: ``read(image_bgr) -> Detections`` of labelled tiles in original pixels.

    A box whose :func:`tile_likelihood` is under ``not_a_tile`` (default :data:`PHOTO_NOT_A_TILE`) is dropped; 0 keeps
    every box (the live pipeline fuses several frames first and then leaves such boxes out itself, counting them).
    ``rescale`` (default on) reads a photo of small tiles a second time at tile scale (:meth:`read`).
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
        providers: Sequence[str] = DEFAULT_PROVIDERS,
        colour: TableColour | None = None,
        familiarity: bool = True,
        threads: int | None = None,
    ) -> None:
        self.colour = TableColour() if colour is None else colour
        self.use_familiarity = familiarity
        """Cap unfamiliar-looking tiles' confidence (:mod:`vision.runtime.familiarity`) when the model folder holds the
        statistics and the classifier reads with its own label head (an enrolment head is the venue's own set)."""
        self._familiarity: Familiarity | None = None
        self._familiarity_loaded = False
        self.not_a_tile = PHOTO_NOT_A_TILE if not_a_tile is None else not_a_tile
        self.models_dir = Path(models_dir) if models_dir is not None else default_models_dir()
        self.detector = TileDetector(
            self.models_dir / DETECTOR_FILE, confidence=confidence, iou=iou, providers=providers, tiled=tiled,
            threads=threads,
        )  # fmt: skip
        self.classifier = TileClassifier(self.models_dir / CLASSIFIER_FILE, providers=providers, threads=threads)
        self.rescale = rescale
        self.last_timings_ms: dict[str, float] = {}
        self.last_left_out = 0
        """Boxes the last :meth:`read` dropped as most likely not tiles."""

    def check_models(self) -> None:
        """Fail early, with the file named, when a model is missing or cannot be loaded: before reading any photo,
        and before a live game or a video's analysis starts (a corrupt model found on the first settled table would
        end the game mid-way)."""
        for model in (self.detector, self.classifier):
            if not model.path.is_file():
                _session(model.path, ())
            model.session  # noqa: B018 - loads the model now (sessions are otherwise made on first use)
        self.familiarity  # noqa: B018 - a damaged statistics file fails here too

    @property
    def familiarity(self) -> Familiarity | None:
        """The familiarity statistics beside the classifier, loaded on first use; None: the step is off (turned
        off, an enrolment head, no statistics file, or one fitted to another classifier: logged)."""
        if not self._familiarity_loaded:
            if self.use_familiarity and self.classifier.head is None:
                try:
                    self._familiarity = load_familiarity(self.classifier.path)
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
        boxes = self.detector.detect(image_bgr)
        small = tile_scale_region(image_bgr.shape[:2], boxes, self.detector.input_size) if self.rescale else None
        if small is None:
            return boxes
        again = self.detector.detect_region(image_bgr, small)
        return Detections.merge([again, boxes]).with_nms(self.detector.iou).without_nested(NESTED_SHARE)

    def read(self, image_bgr: np.ndarray, *, region: Region | None = None) -> Detections:
        """Labelled tiles; with ``region``, the detector looks only there, at the region's own scale.

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
        seen = frame_balance(crops, body=body).apply(crops) if self.colour.balance else crops
        classified = time.perf_counter()
        tiles = self.classifier.classify_crops(seen, boxes)
        colour_start = time.perf_counter()
        self.last_left_out = 0
        if self.not_a_tile > 0 and len(tiles):
            likely = tile_likelihood(tiles) >= self.not_a_tile
            tiles, crops, self.last_left_out = tiles[likely], crops[likely], int((~likely).sum())
        if self.colour.check and len(tiles):  # no crop left: nothing to balance (an empty stack crashes cv2.LUT)
            balanced = frame_balance(crops, exact=True, body=body).apply(crops)
            tiles = check_colours(tiles, ink_features(balanced)).detections
        end = time.perf_counter()
        colour_s += classified - cropped + end - colour_start
        familiarity = self.familiarity
        if familiarity is not None:
            tiles = familiarity.check(tiles)
        self.last_timings_ms = {
            "detect": (middle - start) * 1e3,
            "classify": (colour_start - classified) * 1e3,
            "colour": colour_s * 1e3,
            "familiarity": (time.perf_counter() - end) * 1e3,
        }
        """The colour step (:mod:`vision.runtime.inkcolour`) apart from classification; a second detection under a
        strong cast counts as detection; the familiarity check (:mod:`vision.runtime.familiarity`)."""
        return tiles


@dataclass(frozen=True, slots=True)
class TableColour:
    """What :class:`TileReader` does with the table's colours (:mod:`vision.runtime.inkcolour`): ``balance`` the frame
    (before detection from its brightest pixels, before classification from the tile bodies), ``check`` each
    tile's colour against the table's ink clusters."""

    balance: bool = True
    check: bool = True
