"""Frames from a camera index (``"0"``), a video file or an RTSP/HTTP URL, with damage and dropouts survived.

- A video file yields its frames in order with their container times (``index / fps``); ``skip(n)`` advances
  cheaply, so a caller can process every k-th frame. A frame that cannot be decoded mid-file is skipped and
  counted (``stats.corrupt_frames``); a file that cannot be opened, or has no readable frame, is an error.
- A live source (camera or stream) yields frames timed from when it opened. When reading fails it reports a
  ``"dropout"``, reopens with backoff (0.5 s doubling to 5 s) and goes on with the next index (``"reconnected"``),
  so a caller's game state survives a cable pulled for a minute; after ``give_up_after_s`` it reports
  ``"gave-up"`` and raises :class:`CaptureError`.

A stream's address may hold secrets (``rtsp://user:password@cam``, ``?token=...``): :func:`redact` hides them,
and everything this module says about a source (messages, events) uses the redacted form; only the opener sees
the real address.

The opener, the sleep and the clock are parameters, so tests simulate cameras without one.

Size: 506 lines, one module on purpose: it is one class, :class:`FrameSource`, whose file reading (damaged frames
counted, ``skip`` and ``seek``) and live reading (dropout, reopening with backoff, giving up) share the opener, the
clock and the stats, plus the description and redaction of a source that every message about it uses. Were it to grow,
the address handling (``parse_spec``, ``describe``, ``redact``) is the part to move out.
"""

from __future__ import annotations

import math
import os
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
UNUSABLE_SHARE = 0.5
"""A video with more than this share of its frames undecodable has not really been watched: whatever was found
in the rest, most of the game is missing (see :class:`Damage`)."""
SECRET_WORDS = ("pass", "pwd", "token", "key", "auth", "secret", "sig", "credential", "session")
"""A URL query parameter whose name holds one of these is a secret: its value is never shown."""


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
    # FFmpeg prints a line per damaged frame ("No JPEG data found in image") unless told otherwise before its
    # first use; damaged frames are counted and reported in one line instead (a user's own setting wins).
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
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
    """The source in messages: ``camera 0``, ``stream 'rtsp://host/x'`` (secrets hidden), ``video 'a.mp4'``."""
    target, live = parse_spec(spec)
    if isinstance(target, int) or target.startswith("/dev/video"):
        return f"camera {target}"
    if not live:
        return f"video {spec!r}"
    return f"stream {redact(target)!r}"


def redact(spec: str) -> str:
    """``spec`` fit for a log or a message: a URL's password and secret-looking query values become ``***``
    (``rtsp://user:***@cam/live?token=***``); a camera index or a file path is returned as it is."""
    if "://" not in spec:
        return spec
    try:
        parts = urlsplit(spec)
    except ValueError:  # not even a URL (an unclosed IPv6 bracket): show only what it is
        return spec.split("://", 1)[0] + "://***"
    netloc = parts.netloc
    user, at, host = netloc.rpartition("@")
    if at and ":" in user:
        netloc = f"{user.split(':', 1)[0]}:***@{host}"
    query = "&".join(_redacted_parameter(item) for item in parts.query.split("&")) if parts.query else ""
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def _redacted_parameter(item: str) -> str:
    name, equals, _value = item.partition("=")
    secret = equals and any(word in name.lower() for word in SECRET_WORDS)
    return f"{name}=***" if secret else item


@dataclass(frozen=True, slots=True)
class Damage:
    """Frames of a video file that could not be decoded, out of the frames it holds."""

    unreadable: int
    frames: int

    @property
    def share(self) -> float:
        return self.unreadable / self.frames if self.frames else 0.0

    @property
    def unusable(self) -> bool:
        """More than :data:`UNUSABLE_SHARE` of the video is lost: it has not really been watched."""
        return self.share > UNUSABLE_SHARE

    def describe(self, name: str) -> str:
        """One line for the console: ``video 'a.mp4': 120 of 300 frames could not be decoded (40 %)``."""
        percent = math.floor(100 * self.share) if self.share < 1 else 100
        return f"{name}: {self.unreadable} of {self.frames} frames could not be decoded ({percent} %)"

    def to_json(self) -> dict[str, Any]:
        return {"unreadable_frames": self.unreadable, "frames": self.frames, "share": round(self.share, 4)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Damage:
        return cls(int(data["unreadable_frames"]), int(data["frames"]))


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
        self._skipped = 0
        """Frames of a file passed on purpose (:meth:`skip`, :meth:`seek`), not lost."""
        self._closed = False
        self._ended = False
        """The end of the file was reached (or gone past by a seek): nothing more to read."""
        if not self.is_live:
            self._check_file()
        cap = self._try_open()
        if cap is None:
            raise CaptureError(self._cannot_open())
        self._cap: VideoCaptureLike = cap
        self._opened_at = clock()
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and np.isfinite(fps) and 0 < fps < 1000 else DEFAULT_FPS
        count = self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        self.frame_count: int | None = int(count) if not self.is_live and count and count > 0 else None
        """Frames the file says it holds (``None`` for live sources or when the container does not say)."""
        self.size: tuple[int, int] = (0, 0)
        self._size_known = False
        self._pending: Frame | None = self._read_first()

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
        time_s = index / self.fps if not self.is_live else self.clock_s()
        return Frame(index, time_s, image)

    def read(self) -> Frame | None:
        """The next frame, or ``None`` at the end of a file (or of a live source with ``reconnect=False``)."""
        if self._closed or self._ended:
            return None
        if self._pending is not None:
            frame, self._pending = self._pending, None
        else:
            image = self._read_file() if not self.is_live else self._read_live()
            if image is None:
                self._ended = not self.is_live
                if not self.is_live:
                    self._count_lost()
                return None
            frame = self._frame(image)
        self.stats.frames_read += 1
        if not self.is_live:
            self._count_lost()
        return frame

    def __iter__(self) -> Iterator[Frame]:
        while (frame := self.read()) is not None:
            yield frame

    def _file_over(self) -> bool:
        position, count = self._cap.get(cv2.CAP_PROP_POS_FRAMES), self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        return not count or count <= 0 or position >= count

    def _read_file(self) -> np.ndarray | None:
        """The next decodable frame of a file; None at its end, or where its damage cannot be passed.

        A decoder failing on a frame gets a few more reads (it often skips the damaged packets itself), then is
        sent past it; each jump goes further than the one before, so a file damaged all along comes to an end
        instead of being read around in circles. Frames passed over are counted by :meth:`_count_lost`.
        """
        failures, target = 0, self._next_index
        while True:
            ok, image = self._cap.read()
            if ok and _well_formed(image, self.size):
                return image
            if self._file_over():
                return None
            failures += 1
            if failures % RETRIES_BEFORE_SEEK == 0:
                # The decoder is stuck (a demuxer that lost its sync): jump over the damaged frame.
                position = self._cap.get(cv2.CAP_PROP_POS_FRAMES)
                target = max(int(position), target) + 1
                count = self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
                if count and target >= count:
                    return None
                self._cap.set(cv2.CAP_PROP_POS_FRAMES, target)
                if self._cap.get(cv2.CAP_PROP_POS_FRAMES) <= position:
                    return None  # it cannot seek past the damage (a truncated file): the rest of its frames are lost

    def _count_lost(self) -> None:
        """``stats.corrupt_frames`` of a file: every frame passed is read, skipped on purpose or lost to damage
        (and at the end of the file, every frame it says it holds and did not give)."""
        passed = max(self._next_index, self.frame_count or 0) if self._ended else self._next_index
        delivered = self.stats.frames_read + self._skipped + (1 if self._pending is not None else 0)
        self.stats.corrupt_frames = max(0, passed - delivered)

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
        self._skipped += skipped
        return skipped

    def seek(self, index: int) -> bool:
        """Go forward to frame ``index`` of a file: the next :meth:`read` gives it (or the first readable frame
        after it). False when the file ends before it. Where the container can seek, this takes no decoding of
        the frames in between (a resumed game an hour in starts at once); else they are skipped one by one."""
        if self.is_live:
            raise ValueError(f"{self.name}: seek() works on video files; a live source has no frames to seek to")
        current = self._pending.index if self._pending is not None else self._next_index
        if index < current:
            raise ValueError(f"cannot seek back to frame {index} from frame {current}")
        if index == current:
            return True
        self._pending = None
        passed_before = self._skipped
        self._skipped += index - current  # passed on purpose, whichever way we get there
        if self.frame_count is not None and index >= self.frame_count:
            self._ended = True
            return False
        if self._cap.set(cv2.CAP_PROP_POS_FRAMES, index) and int(self._cap.get(cv2.CAP_PROP_POS_FRAMES)) == index:
            self._next_index = index
            return True
        self._cap.release()  # the position is unknown after a refused seek: read again from the start
        cap = self._try_open()
        if cap is None:
            raise CaptureError(f"cannot open {self.name} again to go to frame {index}")
        self._cap, self._next_index = cap, 0
        reached = self.skip(index) == index
        self._skipped = passed_before + (index - current)  # skip() counted the frames before ``current`` again
        return reached

    def clock_s(self) -> float:
        """Seconds since the source opened, on its clock: a live source's frames are timed on it, so this is the
        time of the frame the camera shows now (how far behind a frame being looked at is)."""
        return self._clock() - self._opened_at

    def damage(self) -> Damage:
        """How much of a file could not be decoded so far, out of the frames it holds (a live source: nothing)."""
        if self.is_live:
            return Damage(0, self.stats.frames_read)
        self._count_lost()
        frames = max(self.frame_count or 0, self._next_index)
        return Damage(min(self.stats.corrupt_frames, frames), frames)

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
