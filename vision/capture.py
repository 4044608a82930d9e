"""Frames from a camera index (``"0"``), a video file or an RTSP/HTTP URL, with damage and dropouts survived.

- A video file yields its frames in order with their container times (``index / fps``); ``skip(n)`` advances
  cheaply, so a caller can process every k-th frame. A frame that cannot be decoded mid-file is skipped and
  counted (``stats.corrupt_frames``); a file that cannot be opened, or has no readable frame, is an error.
- A live source (camera or stream) yields frames timed from when it opened. When reading fails it reports a
  ``"dropout"``, reopens with backoff (0.5 s doubling to 5 s) and goes on with the next index (``"reconnected"``),
  so a caller's game state survives a cable pulled for a minute; after ``give_up_after_s`` it reports
  ``"gave-up"`` and raises :class:`CaptureError`.

The opener, the sleep and the clock are parameters, so tests simulate cameras without one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import cv2
import numpy as np

DEFAULT_FPS = 30.0
"""Assumed when a source does not report its rate (many webcams and streams say 0)."""
BACKOFF_START_S = 0.5
BACKOFF_MAX_S = 5.0
GIVE_UP_AFTER_S = 60.0
RETRIES_BEFORE_SEEK = 8
"""Failed reads of a file before seeking past the frame: each retry lets the decoder skip damaged packets."""
MAX_BAD_LIVE_FRAMES = 30
"""Consecutive malformed frames from a live source that count as a dropout (e.g. it changed resolution)."""


class CaptureError(OSError):
    """A source that cannot be opened, has no frames, or was lost for good; the message is one line."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "capture failed"


class VideoCaptureLike(Protocol):
    """The part of ``cv2.VideoCapture`` this module uses."""

    def isOpened(self) -> bool: ...

    def read(self) -> tuple[bool, np.ndarray | None]: ...

    def grab(self) -> bool: ...

    def get(self, prop_id: int) -> float: ...

    def set(self, prop_id: int, value: float) -> bool: ...

    def release(self) -> None: ...


Opener = Callable[[str | int], VideoCaptureLike]
EventCallback = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame: its index in the source (skipped frames count), its time in seconds, a BGR uint8 image."""

    index: int
    time_s: float
    image: np.ndarray


@dataclass(slots=True)
class CaptureStats:
    """What happened while reading: frames delivered, frames undecodable mid-file, dropouts and reconnections."""

    frames_read: int = 0
    corrupt_frames: int = 0
    dropouts: int = 0
    reconnects: int = 0


def _default_opener(target: str | int) -> VideoCaptureLike:
    # Each backend that fails to open a camera logs lines of its own; the caller reports one line instead.
    previous = cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        return cv2.VideoCapture(target)
    finally:
        cv2.utils.logging.setLogLevel(previous)


def parse_spec(spec: str) -> tuple[str | int, bool]:
    """``(target for the opener, is_live)``: a camera index, a video device, a URL, or a file path."""
    text = spec.strip()
    if text.isdigit():
        return int(text), True
    if "://" in text or text.startswith("/dev/video"):
        return text, True
    return spec, False


def describe(spec: str) -> str:
    """The source in messages: ``camera 0``, ``stream 'rtsp://host/x'`` (password hidden), ``video 'a.mp4'``."""
    target, live = parse_spec(spec)
    if isinstance(target, int) or target.startswith("/dev/video"):
        return f"camera {target}"
    if not live:
        return f"video {spec!r}"
    parts = urlsplit(target)
    if parts.password is not None:
        host = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        target = urlunsplit(parts._replace(netloc=host))
    return f"stream {target!r}"


def _well_formed(image: np.ndarray | None, size: tuple[int, int] | None) -> bool:
    if image is None or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
        return False
    return size is None or (image.shape[1], image.shape[0]) == size


class FrameSource:
    """Iterate for :class:`Frame` objects; ``skip(n)`` (files), ``stats``, ``close()`` or ``with``.

    Made by :func:`open_source`; the first frame is read on opening, so a bad source fails at once.
    """

    def __init__(
        self,
        spec: str,
        *,
        reconnect: bool | None,
        give_up_after_s: float,
        opener: Opener,
        sleep: Callable[[float], None],
        clock: Callable[[], float],
        on_event: EventCallback | None,
    ) -> None:
        self.spec = spec
        self.name = describe(spec)
        self._target, self.is_live = parse_spec(spec)
        self.reconnect = self.is_live if reconnect is None else reconnect and self.is_live
        self.give_up_after_s = give_up_after_s
        self._opener, self._sleep, self._clock, self._on_event = opener, sleep, clock, on_event
        self.stats = CaptureStats()
        self._next_index = 0
        self._closed = False
        if not self.is_live:
            self._check_file()
        self._cap = self._try_open()
        if self._cap is None:
            raise CaptureError(self._cannot_open())
        self._opened_at = clock()
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and np.isfinite(fps) and 0 < fps < 1000 else DEFAULT_FPS
        count = self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        self.frame_count: int | None = int(count) if not self.is_live and count and count > 0 else None
        """Frames the file says it holds (``None`` for live sources or when the container does not say)."""
        self.size: tuple[int, int] = (0, 0)
        self._size_known = False
        self._pending = self._read_first()

    # -- opening ------------------------------------------------------------------------------------------

    def _check_file(self) -> None:
        path = Path(self.spec)
        if not path.exists():
            raise CaptureError(f"cannot open {self.name}: no such file")
        if path.is_dir():
            raise CaptureError(f"cannot open {self.name}: it is a folder, not a video file")

    def _cannot_open(self) -> str:
        if not self.is_live:
            return f"cannot open {self.name}: not a video file or unreadable"
        if isinstance(self._target, int) or self.name.startswith("camera"):
            return f"{self.name} cannot be opened (not connected, or in use by another program)"
        return f"{self.name} cannot be opened (wrong address, or the stream is down)"

    def _try_open(self) -> VideoCaptureLike | None:
        try:
            cap = self._opener(self._target)
            if cap.isOpened():
                return cap
            cap.release()
        except cv2.error:
            pass
        return None

    def _read_first(self) -> Frame:
        ok, image = self._cap.read()
        if not ok or not _well_formed(image, None):
            if not self.is_live:
                # A file may open and still hold nothing decodable (an empty or headless container).
                self._cap.release()
                raise CaptureError(f"cannot open {self.name}: it has no readable frames")
            image = self._recover()  # a camera that opens and then delivers nothing is a dropout
        assert image is not None
        self._take_size(image)
        return self._frame(image)

    def _take_size(self, image: np.ndarray) -> None:
        self.size = (int(image.shape[1]), int(image.shape[0]))
        self._size_known = True

    # -- reading ------------------------------------------------------------------------------------------

    def _frame(self, image: np.ndarray) -> Frame:
        index = self._next_index
        if not self.is_live:
            position = self._cap.get(cv2.CAP_PROP_POS_FRAMES)  # the decoder may have skipped damaged frames
            if position and position > 0:
                index = max(index, int(position) - 1)
        self._next_index = index + 1
        time_s = index / self.fps if not self.is_live else self._clock() - self._opened_at
        return Frame(index, time_s, image)

    def read(self) -> Frame | None:
        """The next frame, or ``None`` at the end of a file (or of a live source with ``reconnect=False``)."""
        if self._closed:
            return None
        if self._pending is not None:
            frame, self._pending = self._pending, None
        else:
            image = self._read_file() if not self.is_live else self._read_live()
            if image is None:
                return None
            frame = self._frame(image)
        self.stats.frames_read += 1
        return frame

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame

    def _file_over(self) -> bool:
        position, count = self._cap.get(cv2.CAP_PROP_POS_FRAMES), self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        return not count or count <= 0 or position >= count

    def _read_file(self) -> np.ndarray | None:
        failures, bad_position = 0, -1.0
        while True:
            ok, image = self._cap.read()
            if ok and _well_formed(image, self.size):
                return image
            if self._file_over():
                return None
            position = self._cap.get(cv2.CAP_PROP_POS_FRAMES)
            if position != bad_position:  # one damaged frame often takes several failed reads
                self.stats.corrupt_frames += 1
                bad_position = position
            failures += 1
            if failures % RETRIES_BEFORE_SEEK == 0:
                # The decoder is stuck (a demuxer that lost its sync): jump over the damaged frame.
                self._cap.set(cv2.CAP_PROP_POS_FRAMES, max(position, self._next_index) + 1)
                if self._cap.get(cv2.CAP_PROP_POS_FRAMES) <= position:
                    # It cannot seek past the damage (a truncated file): the rest of its frames are lost.
                    self.stats.corrupt_frames += max(0, int(self._cap.get(cv2.CAP_PROP_FRAME_COUNT) - position) - 1)
                    return None
                bad_position = -1.0

    def skip(self, n: int) -> int:
        """Advance a file by ``n`` frames without decoding them into images; the number actually skipped."""
        if self.is_live:
            raise ValueError(f"{self.name}: skip() works on video files; a live source has no frames to skip to")
        if n < 0:
            raise ValueError(f"cannot skip a negative number of frames ({n})")
        skipped = 0
        if self._pending is not None and n > 0:
            self._pending = None
            skipped = 1
        while skipped < n and not self._closed and self._cap.grab():
            skipped += 1
            self._next_index += 1
        return skipped

    def _read_live(self) -> np.ndarray | None:
        bad = 0
        while True:
            ok, image = self._cap.read()
            if ok and _well_formed(image, self.size):
                return image
            if ok and bad < MAX_BAD_LIVE_FRAMES:
                self.stats.corrupt_frames += 1
                bad += 1
                continue
            if not self.reconnect:
                self._event("dropout", {})
                return None
            return self._recover()

    # -- reconnection -------------------------------------------------------------------------------------

    def _event(self, kind: str, info: dict[str, Any]) -> None:
        if kind == "dropout":
            self.stats.dropouts += 1
        if self._on_event is not None:
            time_s = self._clock() - self._opened_at
            self._on_event(kind, {"source": self.name, "index": self._next_index, "time_s": time_s, **info})

    def _recover(self) -> np.ndarray:
        """Reopen until a well-formed frame comes, with backoff; raise :class:`CaptureError` after the limit."""
        started = self._clock()
        self._event("dropout", {})
        self._cap.release()
        delay, attempts = BACKOFF_START_S, 0
        while True:
            waited = self._clock() - started
            if waited >= self.give_up_after_s:
                self._event("gave-up", {"attempts": attempts, "down_s": waited})
                raise CaptureError(
                    f"{self.name} lost: no frames for {waited:.0f} s after {attempts} reconnection attempts"
                )
            self._sleep(min(delay, self.give_up_after_s - waited))
            delay = min(delay * 2, BACKOFF_MAX_S)
            attempts += 1
            cap = self._try_open()
            if cap is None:
                continue
            ok, image = cap.read()
            if ok and _well_formed(image, None):
                assert image is not None
                self._cap = cap
                if self._size_known and (image.shape[1], image.shape[0]) != self.size:
                    self._take_size(image)  # the camera came back at another resolution
                self.stats.reconnects += 1
                down = self._clock() - started
                self._event("reconnected", {"attempts": attempts, "down_s": down, "size": list(self.size)})
                return image
            cap.release()

    # -- closing ------------------------------------------------------------------------------------------

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pending = None
            self._cap.release()

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<FrameSource {self.name} {self.size[0]}x{self.size[1]} @ {self.fps:g} fps>"


def open_source(
    spec: str,
    *,
    reconnect: bool | None = None,
    give_up_after_s: float = GIVE_UP_AFTER_S,
    opener: Opener | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    on_event: EventCallback | None = None,
) -> FrameSource:
    """Open a camera index (``"0"``), a video device, an RTSP/HTTP URL or a video file.

    ``reconnect`` (live sources only; default yes) reopens a source that stops delivering, for up to
    ``give_up_after_s`` seconds; ``on_event(kind, info)`` hears ``"dropout"``, ``"reconnected"`` and ``"gave-up"``.
    """
    return FrameSource(
        spec,
        reconnect=reconnect,
        give_up_after_s=give_up_after_s,
        opener=opener or _default_opener,
        sleep=sleep,
        clock=clock,
        on_event=on_event,
    )
