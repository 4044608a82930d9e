"""Image sizes from the header, before decoding; C libraries' stderr kept off the console while decoding."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.cli import DEBUG_ENV
from vision.runtime.imagefile import (
    MAX_IMAGE_PIXELS,
    MIN_IMAGE_SIDE,
    ImageReadError,
    NativeMessages,
    check_image_size,
    header_size,
    image_size,
    read_dataset_image,
)


@pytest.mark.parametrize(
    ("width", "height", "ok"),
    [
        (MIN_IMAGE_SIDE, MIN_IMAGE_SIDE, True),
        (MIN_IMAGE_SIDE - 1, 1000, False),
        (1000, MIN_IMAGE_SIDE - 1, False),
        (12000, 10000, True),  # 120 megapixels, the limit
        (12000, 10001, False),
        (MAX_IMAGE_PIXELS, 1, False),  # few pixels tall: too small, however many
    ],
)
def test_size_limits(width: int, height: int, ok: bool) -> None:
    if ok:
        check_image_size(width, height, "photo.png")
    else:
        with pytest.raises(ImageReadError, match=f"photo.png: a {width}x{height} image is too"):
            check_image_size(width, height, "photo.png")


def png_header(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
    return b"\x89PNG\r\n\x1a\n" + header + chunk(b"IEND", b"")  # no pixel data at all


def test_the_header_alone_gives_the_size(tmp_path: Path) -> None:
    assert header_size(png_header(640, 480), "a.png") == (640, 480)
    with pytest.raises(ImageReadError, match="too large to read"):
        header_size(png_header(33000, 33000), "bomb.png")  # PIL's own bomb error, from the header
    assert header_size(b"#?RADIANCE\n", "a.hdr") is None  # not a format PIL reads: OpenCV decides
    cv2.imwrite(str(tmp_path / "a.jpg"), np.zeros((48, 64, 3), np.uint8))
    assert image_size(tmp_path / "a.jpg") == (64, 48)


@pytest.mark.parametrize(
    ("content", "message"), [(None, "no such image file"), (b"", "not a readable image"), (b"GIF8", "not a readable")]
)
def test_image_size_of_unreadable_files(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "a.png"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ImageReadError, match=message):
        image_size(path)


def test_native_messages_are_captured_and_stderr_restored(capfd: pytest.CaptureFixture[str]) -> None:
    with NativeMessages() as native:
        os.write(2, b"libpng error: Not enough image data\n")
    os.write(2, b"after\n")
    assert native.first_line == "libpng error: Not enough image data" and not native.says_truncated()
    assert capfd.readouterr().err == "after\n"


def test_debugging_lets_native_messages_through(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(DEBUG_ENV, "1")
    with NativeMessages() as native:
        os.write(2, b"Corrupt JPEG data: premature end of data segment\n")
    assert native.text == "" and "premature end" in capfd.readouterr().err


def test_a_dataset_image_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    good = tmp_path / "tile.png"
    cv2.imwrite(str(good), np.full((20, 30, 3), 200, np.uint8))
    assert read_dataset_image(good).shape == (20, 30, 3)
    (tmp_path / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    for bad in (tmp_path / "broken.jpg", tmp_path / "missing.png"):
        with pytest.raises(ImageReadError, match=bad.name):
            read_dataset_image(bad)
