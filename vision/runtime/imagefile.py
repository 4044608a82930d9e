"""Photos handed to the commands: sizes checked from the file's header, before any pixel is decoded.

An image too small to hold a tile (5000x1, 3000x2) cannot be read and breaks the detector's resizing; one too
large (a 33000x33000 PNG, a decompression bomb: a few kB that decode to gigabytes) must be refused before it is
decoded. Both are one :class:`ImageReadError` naming the file. Importing this module loads no imaging library
(``vision.cli`` reads :data:`MAX_IMAGE_PIXELS` to cap OpenCV's own decoder before it is imported).
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, BinaryIO

from referee.cli import DEBUG_ENV

MIN_IMAGE_SIDE = 16
"""Fewer pixels than this on a side cannot hold a readable tile (the classifier reads tiles of 9 px and up
(``SceneParams.min_face_px``) with a margin around them)."""
MAX_IMAGE_PIXELS = 120_000_000
"""The largest photo read, in pixels: above the 108-megapixel phone cameras (12000x9000), and 360 MB decoded.
A bigger image is not a photo of a table; it would take gigabytes to decode."""


TRUNCATED_MARKS = ("premature end",)
"""What libjpeg says of a file cut short: it still decodes, grey where the data ended, and a photo with half its
tiles missing must not be ruled on."""


class ImageReadError(ValueError):
    """A photo that cannot be read: missing, unreadable, not an image, or of a size no table photo has."""


def check_image_size(width: int, height: int, where: str | Path) -> None:
    """One line naming ``where`` when a ``width`` x ``height`` image is too small or too large to read."""
    if min(width, height) < MIN_IMAGE_SIDE:
        raise ImageReadError(
            f"{where}: a {width}x{height} image is too small to hold a tile (at least {MIN_IMAGE_SIDE} pixels a side)"
        )
    if width * height > MAX_IMAGE_PIXELS:
        raise ImageReadError(
            f"{where}: a {width}x{height} image is too large to read"
            f" (at most {MAX_IMAGE_PIXELS // 1_000_000} megapixels; scale it down)"
        )


def header_size(data: bytes | BinaryIO, where: str | Path) -> tuple[int, int] | None:
    """(width, height) from an image's header (the file's bytes, or the open file: only the header is read),
    checked with :func:`check_image_size`; None when the format is not one PIL knows (OpenCV may still decode it:
    its size is then checked after decoding)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # PIL warns from 89 megapixels; the limit here is ours
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with _pil_open()(io.BytesIO(data) if isinstance(data, bytes) else data) as image:
                width, height = image.size
    except Image.DecompressionBombError:  # PIL refuses from 179 megapixels, above our own limit
        raise ImageReadError(
            f"{where}: the image is too large to read (over {MAX_IMAGE_PIXELS // 1_000_000} megapixels)"
        ) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):  # PIL's parsers raise all of these
        return None
    check_image_size(width, height, where)
    return width, height


def _pil_open() -> Callable[..., Any]:
    """PIL's own ``Image.open``: Ultralytics, once imported (training, quantizing), replaces it with one that tries
    to install a HEIF plugin from the network on any file PIL cannot identify, logging tracebacks when offline."""
    from PIL import Image

    patches = sys.modules.get("ultralytics.utils.patches")
    original = getattr(patches, "_image_open", None)
    return original if callable(original) else Image.open


def image_size(path: Path) -> tuple[int, int]:
    """(width, height) of an image file from its header, checked; one line naming the file if it cannot be read."""
    try:
        with path.open("rb") as file:
            size = header_size(file, path)
    except FileNotFoundError:
        raise ImageReadError(f"{path}: no such image file") from None
    except OSError as error:
        raise ImageReadError(f"{path}: cannot read ({error.strerror or error})") from None
    if size is None:
        raise ImageReadError(f"{path}: not a readable image (corrupt file or unsupported format)")
    return size


def read_dataset_image(path: Path) -> Any:
    """A dataset's image (training, fitting, evaluation) as OpenCV reads it (BGR, EXIF orientation applied), or one
    :class:`ImageReadError` naming the file: ``cv2.imread`` alone returns None and the failure surfaces later as a
    ``NoneType`` error far from the file."""
    import cv2

    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise ImageReadError(f"{path}: not a readable image (missing, corrupt or unsupported format)")
    return image


class NativeMessages:
    """What C libraries (libpng, libjpeg) wrote to standard error inside a ``with`` block, kept off the console:
    the command's one line about the file says what matters. Only for short single-threaded steps (decoding a
    photo): file descriptor 2 is the whole process's. With ``RUMMIKUB_REFEREE_DEBUG=1`` nothing is captured."""

    def __init__(self) -> None:
        self.text = ""
        self._saved: int | None = None
        self._capture: IO[bytes] | None = None

    def __enter__(self) -> NativeMessages:
        if os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            return self
        try:
            sys.stderr.flush()
            self._capture = tempfile.TemporaryFile()
            self._saved = os.dup(2)
            os.dup2(self._capture.fileno(), 2)
        except (OSError, ValueError):  # no file descriptor 2 (an embedding host): nothing to keep off it
            self._restore()
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        if self._saved is not None:
            os.dup2(self._saved, 2)
            os.close(self._saved)
            self._saved = None
        if self._capture is not None:
            self._capture.seek(0)
            self.text = self._capture.read().decode("utf-8", "replace")
            self._capture.close()
            self._capture = None

    @property
    def first_line(self) -> str:
        return next((line.strip() for line in self.text.splitlines() if line.strip()), "")

    def says_truncated(self) -> bool:
        return any(mark in self.text.lower() for mark in TRUNCATED_MARKS)
