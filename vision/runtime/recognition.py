"""Tile recognition, the public import place: photos loaded (:func:`load_image`) and the names of the modules that
read them, re-exported so callers need one import.

- :mod:`vision.runtime.models`: the model files, ONNX Runtime sessions and providers, one-line model errors;
- :mod:`vision.runtime.detector`: the :class:`Detector` protocol and :class:`YoloOnnxDetector`;
- :mod:`vision.runtime.classifier`: the :class:`Classifier` protocol and :class:`OnnxTileClassifier`, whose label
  order is checked against its model card when it loads;
- :mod:`vision.runtime.reader`: the :class:`Reader` protocol, the :class:`Reading` it returns, :class:`TileReader`;
- :mod:`vision.runtime.tables`: one :func:`read_table` for photos and frames (:data:`PHOTO`, :data:`FRAMES`).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.runtime.classifier import CLASSIFIER_BATCH, CLASSIFIER_FEATURES, Classifier, OnnxTileClassifier
from vision.runtime.detector import (
    EDGE_MARGIN,
    LETTERBOX_FILL,
    MAX_ONE_PASS_PIXELS,
    MAX_WINDOWS,
    NESTED_SHARE,
    STRIDE,
    TILE_NMS_IOU,
    TILE_PX,
    WINDOW_OVERLAP,
    Detector,
    Letterbox,
    Region,
    YoloOnnxDetector,
    decode_yolo,
    windows,
)
from vision.runtime.imagefile import ImageReadError, NativeMessages, check_image_size, header_size
from vision.runtime.models import (
    CLASSIFIER_FILE,
    DEFAULT_PROVIDERS,
    DETECTOR_FILE,
    INTRA_OP_THREADS,
    MODELS_PACKAGE,
    PROVIDERS,
    ModelLoadError,
    ModelNotFoundError,
    check_provider,
    default_models_dir,
)
from vision.runtime.reader import (
    NOT_A_TILE,
    PHOTO_NOT_A_TILE,
    PHOTO_TILE_PX,
    SMALL_TILE_PX,
    Reader,
    Reading,
    ReadTimings,
    TableColour,
    TileReader,
    tile_likelihood,
    tile_scale_region,
)
from vision.runtime.tables import FRAMES, PHOTO, TablePolicy, TableReading, read_table

__all__ = [
    "CLASSIFIER_BATCH",
    "CLASSIFIER_FEATURES",
    "CLASSIFIER_FILE",
    "DEFAULT_PROVIDERS",
    "DETECTOR_FILE",
    "EDGE_MARGIN",
    "FRAMES",
    "INTRA_OP_THREADS",
    "LETTERBOX_FILL",
    "MAX_ONE_PASS_PIXELS",
    "MAX_WINDOWS",
    "MODELS_PACKAGE",
    "NESTED_SHARE",
    "NOT_A_TILE",
    "PHOTO",
    "PHOTO_NOT_A_TILE",
    "PHOTO_TILE_PX",
    "PROVIDERS",
    "SMALL_TILE_PX",
    "STRIDE",
    "TILE_NMS_IOU",
    "TILE_PX",
    "WINDOW_OVERLAP",
    "Classifier",
    "Detector",
    "ImageReadError",
    "Letterbox",
    "ModelLoadError",
    "ModelNotFoundError",
    "OnnxTileClassifier",
    "ReadTimings",
    "Reader",
    "Reading",
    "Region",
    "TableColour",
    "TablePolicy",
    "TableReading",
    "TileReader",
    "YoloOnnxDetector",
    "check_provider",
    "decode_yolo",
    "default_models_dir",
    "load_image",
    "read_table",
    "tile_likelihood",
    "tile_scale_region",
    "windows",
]


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
