"""A recorded video decoded only as far as the analysis needs it (PyAV), with OpenCV as the fallback.

``analyze`` looks at a few frames a second: every ``busy_step``-th frame while something happens over the table,
every ``still_step``-th while it is still. OpenCV's ``grab()`` still decodes every frame in between, so the decoder,
not the analysis, sets the pace there. :class:`SparseVideo` decodes less:

- **while the table is still** it decodes keyframes only (packets in between are read from the file, kept, and not
  decoded: ``skip_frame`` ``NONKEY`` done by hand), and compares each keyframe's luma at low resolution
  (:data:`PROBE_WIDTH` px wide) with the last frame handed out, on the part of the frame the analysis looks at
  (the play area's box: players sorting their racks beside it change nothing). Unchanged, the keyframe is the next
  sample.
  Changed, the keyframes' gap is decoded after all, from the kept packets, and sampled as before: the analysis sees
  the frames it would have seen from a full decode, so the start of a move is never skipped over;
- **while something happens** every packet is decoded, and frames nobody refers to
  (``skip_frame`` ``NONREF``: an H.264 stream's disposable B-frames) are not decoded at all: the sample is then the
  first decoded frame at or after the one due (a frame or two later), and the next is due where it was (busy samples
  are due every ``busy_step`` frames counted from the last still sample, as OpenCV reads them);
- **while hands stay over the table** (the analysis says so: :class:`HandsOver`) it decodes keyframes only again:
  the next keyframe at least ``busy_step`` frames on (where keyframes come more often than once a second, the last
  one within :data:`MAX_PROBE_GAP_S` of the last sample, as their spacing tells) is decoded alone and shown to the
  analysis's own activity meter (peeked at: nothing counted, and the meter keeps that measurement for the sample).
  Hands still there, it is the next sample, and the frames in between are not decoded; hands gone, the gap is decoded
  after all from the kept packets and sampled from the last sample on, on the grid a full decode keeps, so the
  analysis sees the hands leave and the table settle frame for frame as before.
  What it cannot see is hands lifted and back between two keyframes that both show them (at most
  :data:`MAX_PROBE_GAP_S`): the table is read only after ``quiet_s`` without hands and settles after three readings
  (0.67 s at 6 samples a second), so a pause shorter than that is one move either way, and a longer one within a
  second is taken as part of the move (as the analysis takes a paused move whose hands come back);
- only sampled frames are converted to BGR;
- keyframes are probed by a decoder of their own (the file opened again), so the main one keeps its place: a gap
  decoded after all starts where the main decoder stopped, not at the keyframe before the last sample again;
- the decoder runs slice threads only (:data:`THREAD_TYPE`), so the frames handed out do not depend on the machine's
  cores.

What the codec itself could skip changes the frames handed out, so it is left as it is: no deblocking
(``skip_loop_filter``) changes every frame decoded after a reference frame without it, and the frames nobody refers
to, which alone could go without it, are not decoded at all; ``skip_idct`` is ignored by FFmpeg's H.264 decoder;
``flags2=fast`` only stops deblocking across slices; ``skip_frame`` ``BIDIR`` would take B-frames other frames refer
to as well (vision/README.md, "Speed: the decoder's own work").

Probing needs keyframes at most :data:`MAX_PROBE_GAP_S` apart (phones write one a second): with sparser keyframes
something could come and go unseen between two of them, so such a video is decoded in full, as OpenCV does. What a
probe cannot see is what leaves no trace: an arm over the table and away again between two keyframes, moving nothing
(a full decode sampled at 3 Hz misses those shorter than a third of a second).

:func:`open_video` picks the decoder: PyAV where it is installed (the ``decode`` extra), else OpenCV
(:class:`vision.runtime.capture.FrameSource`, every frame decoded). :func:`sample` walks either at the pipeline's
pace. Measured by ``bench decode`` (:mod:`vision.eval.decode_bench`). Frames are the capture module's
:class:`~vision.runtime.capture.Frame` (index, container time ``index / fps``, BGR image), and errors its
:class:`~vision.runtime.capture.CaptureError` (one line).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import cv2
import numpy as np

from vision.runtime.capture import (
    DEFAULT_FPS,
    CaptureError,
    CaptureStats,
    Damage,
    Frame,
    FrameSource,
    describe,
    open_source,
)

PROBE_WIDTH = 320
"""Width of the luma image a keyframe is compared at (the activity meter's working width)."""
PROBE_LEVEL = 10
"""Luma change (8-bit levels, after averaging to :data:`PROBE_WIDTH`) that counts as a change at a pixel."""
PROBE_PIXELS = 3
"""Pixels changed by :data:`PROBE_LEVEL` or more that make a keyframe "changed" (a tile at 1080p covers about 80
of them at that width; compression noise moves a still table's pixels by a few levels)."""
MAX_PROBE_GAP_S = 1.0
"""Keyframes further apart than this are not probed: the video is decoded in full."""
THREAD_TYPE = "SLICE"
"""The decoder's threads: slice threads (several at once on a frame cut into slices), no frame threads. Frame threads
hold back a frame each, and whether frames are waiting decides whether a keyframe is probed (only when none is), so
with FFmpeg's count of them (the cores + 1, at most 16) the frames handed out, and so the rulings, depended on the
machine's cores (game-1000's H.264 copy, the decoder given the same answers: other frames from frame 60 on with 16
threads, from 2,748 on with 5); and on this 2-core machine, shared, they cost more CPU than they save time:
``analyze`` of that copy took 36.5 s of CPU and 45 s of wall clock without them, 38.2 and 56 s with 3 (two runs of
each, interleaved, load average 5.5-7; at load 1.5, 36.0 and 22 s against 37.7 and 25 s)."""
DECODERS = ("auto", "pyav", "opencv")
"""``auto``: PyAV where installed, else OpenCV."""
RegionOf = Callable[[], tuple[float, float, float, float] | None] | None
"""Asked before each sample: the part of the frame the analysis looks at, in pixels (None: all of it)."""


@dataclass(frozen=True, slots=True)
class HandsOver:
    """What the analysis tells the decoder about hands over the table (see the module's docstring)."""

    now: Callable[[], bool]
    """Asked before each busy sample: the last sample showed hands over the table, and until they leave no sample
    can be read or counted otherwise (not near a turn's time limit)."""
    seen_in: Callable[[Frame], bool]
    """A frame the decoder may hand out next shows hands over the table, as the analysis would see it (asked
    without the analysis counting it)."""


_LUMA_FIRST = {"yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "nv21", "gray"}
"""8-bit pixel formats whose first plane is the luma."""


def pyav_available() -> bool:
    return importlib.util.find_spec("av") is not None


@dataclass(slots=True)
class DecodeStats:
    """What the decoder did: packets read, frames decoded, keyframes probed (and found changed), gaps decoded after
    a changed probe, frames handed out."""

    packets: int = 0
    decoded: int = 0
    probes: int = 0
    probes_changed: int = 0
    rewinds: int = 0
    delivered: int = 0
    hand_probes: int = 0
    """Keyframes shown to :attr:`HandsOver.seen_in` while hands were over the table..."""
    hand_probes_left: int = 0
    """...of which showed the hands gone (the gap before them decoded after all)."""

    def to_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


class SparseVideo:
    """A video file read with PyAV; :meth:`read` gives the first frame, :meth:`frames` the samples.

    ``probe``: decode only keyframes while the table is still (see the module's docstring); ``skip_nonref``: leave
    disposable frames undecoded. Both off, every frame is decoded, as OpenCV does.
    """

    def __init__(self, path: str | Path, *, probe: bool = True, skip_nonref: bool = True, threads: bool = True) -> None:
        import av

        self.spec = str(path)
        self.name = describe(self.spec)
        self.is_live = False
        self.probe = probe
        self.skip_nonref = skip_nonref
        file = Path(path)
        if not file.exists():
            raise CaptureError(f"cannot open {self.name}: no such file")
        if file.is_dir():
            raise CaptureError(f"cannot open {self.name}: it is a folder, not a video file")
        try:
            self._container = av.open(self.spec)
        except (av.FFmpegError, UnicodeDecodeError, ValueError):
            raise CaptureError(f"cannot open {self.name}: not a video file or unreadable") from None
        if not self._container.streams.video:
            self._container.close()
            raise CaptureError(f"cannot open {self.name}: it holds no video")
        self._stream = self._container.streams.video[0]
        self._codec = self._stream.codec_context
        if threads:
            self._stream.thread_type = THREAD_TYPE
        rate = self._stream.average_rate or self._stream.guessed_rate
        fps = float(rate) if rate else 0.0
        self.fps = fps if math.isfinite(fps) and 0 < fps < 1000 else DEFAULT_FPS
        self._time_base = float(self._stream.time_base) if self._stream.time_base else 1.0 / self.fps
        self._start = self._stream.start_time
        self.frame_count: int | None = int(self._stream.frames) or None
        self.stats = CaptureStats()
        self.decode_stats = DecodeStats()
        self._packets = self._container.demux(self._stream)
        self._queue: list[Any] = []
        """Decoded frames not yet looked at (a threaded decoder hands several at once)."""
        self._gop: list[Any] = []
        """Packets since the last keyframe read (that keyframe first), while probing may need them again."""
        self._key_time_s: float | None = None
        self._key_gap_s = 0.0
        """Seconds between the last two keyframes read."""
        self._gop_cap = math.ceil(self.fps * MAX_PROBE_GAP_S) + 1
        """Packets after a keyframe beyond which keyframes are too sparse to probe."""
        self._primed = True
        """The decoder has been fed every packet of :attr:`_gop` in order (so the next packet decodes right)."""
        self._ended = False
        self._drained = False
        self._last_index = -1
        """The last frame handed out: frames up to it are dropped when decoded again."""
        self._closed = False
        self._region: tuple[float, float, float, float] | None = None
        """Where the analysis looks (pixels), as ``region()`` last said."""
        self._grid = 0
        """Where busy samples are counted from: busy samples are due ``busy_step`` frames apart from here on, wherever
        the frame handed out for each fell (a disposable frame skipped, a keyframe taken under hands), as OpenCV
        reads them; the last still sample sets it."""
        self._dense_to = -1
        """A keyframe that showed the hands gone: no keyframes only while hands are over the table before it."""
        self._image: tuple[Any, np.ndarray] | None = None
        """A decoded frame already converted to BGR (a keyframe shown to the analysis), with its image."""
        self._prober: Any = None
        """A second decoder (of the file opened again) for keyframes decoded alone, so that the main decoder keeps
        its place: a probe that shows a change has only the packets read since decoded after all, not the keyframes'
        whole gap again (made when first needed)."""
        self._probe_file: Any = None
        first = self._next_decoded()
        if first is None:
            self.close()
            raise CaptureError(f"cannot open {self.name}: it has no readable frames")
        image = first.to_ndarray(format="bgr24")
        self.size: tuple[int, int] = (int(image.shape[1]), int(image.shape[0]))
        self._last_index = self._index(first)
        self._first: Frame | None = Frame(self._last_index, self._last_index / self.fps, image)
        self._last_decoded: Any = first
        """The last frame handed out, as decoded: a probe compares its luma..."""
        self._last_small: np.ndarray | None = None
        """...made when a probe first needs it."""

    # -- frames -------------------------------------------------------------------------------------------

    def read(self) -> Frame | None:
        """The first frame (then None: :meth:`frames` gives the rest)."""
        frame, self._first = self._first, None
        if frame is not None:
            self.stats.frames_read += 1
            self.decode_stats.delivered += 1
        return frame

    def frames(
        self,
        after: Frame,
        *,
        busy_step: int,
        still_step: int,
        still: Callable[[], bool],
        region: RegionOf = None,
        hands: HandsOver | None = None,
    ) -> Iterator[Frame]:
        """The samples after ``after``: the first decodable frame at or after each ``busy_step``-th frame (counted
        from the last still sample), or ``still_step`` on while ``still()`` (asked after each sample has been
        looked at). ``region()``: the part of the frame the analysis looks at (``x0, y0, x1, y1`` in pixels; the
        whole frame when None): a probe compares only there, so players sorting their racks beside the play area
        change nothing. ``hands``: keyframes only while hands stay over the table (see the module's docstring)."""
        self._grid = last = after.index
        while True:
            self._region = region() if region is not None else None
            is_still = still()
            if is_still:
                due = last + still_step
                decoded = self._probe_until(due) if self.probe else self._dense_until(due)
            else:
                due = self._grid + busy_step * ((last - self._grid) // busy_step + 1)  # the grid's next frame
                if hands is not None and self.probe and last >= self._dense_to and hands.now():
                    decoded = self._hands_until(last, last + busy_step, due, hands)
                else:
                    decoded = self._dense_until(due)
            if decoded is None:
                return
            index = self._index(decoded)
            image = self._bgr(decoded)
            self._last_decoded, self._last_small = decoded, None
            self._last_index = index
            if is_still:
                self._grid = index
            self.stats.frames_read += 1
            self.decode_stats.delivered += 1
            last = index
            yield Frame(index, index / self.fps, image)

    def _bgr(self, frame: Any) -> np.ndarray:
        """``frame`` converted to BGR (once: a keyframe shown to the analysis already was)."""
        if self._image is not None and self._image[0] is frame:
            return self._image[1]
        self._image = None
        return frame.to_ndarray(format="bgr24")

    # -- decoding ---------------------------------------------------------------------------------------

    def _hands_until(self, last: int, after: int, due: int, hands: HandsOver) -> Any:
        """While hands are over the table: a keyframe at or after frame ``after`` if it shows them still there (the
        frames in between left undecoded): the last one before :data:`MAX_PROBE_GAP_S` after ``last`` as far as the
        keyframes' spacing tells, so that keyframes closer together are not all decoded; else, from the kept packets,
        the first frame at or after ``due`` (the grid's next) decoded in full. Falls back to :meth:`_dense_until`
        while frames are queued."""
        if self._queue:
            return self._dense_until(due)
        kept = list(self._gop)
        """Packets from the keyframe at or before the last sample on, to decode after all if the hands left..."""
        fed = len(kept) if self._primed else 0
        """...of which the main decoder has been fed the first ``fed``."""
        reach = last + round(self.fps * MAX_PROBE_GAP_S)
        while True:
            packet = self._next_packet()
            self._primed = False
            if packet is None:
                return self._replay(kept, due, fed)
            index = self._packet_index(packet)
            spacing = round(self._key_gap_s * self.fps)  # frames since the keyframe before: the next is as far on
            if not packet.is_keyframe or index < after or (spacing > 0 and index + spacing <= reach):
                kept.append(packet)
                if not self.probe:  # no keyframe for too long (see _next_packet): decode in full from here on
                    return self._replay(kept, due, fed)
                continue
            if self._key_gap_s > MAX_PROBE_GAP_S + 0.5 / self.fps:
                self.probe = False  # keyframes too sparse to see between: decode every frame from here on
                return self._replay([*kept, packet], due, fed)
            frame = self._decode_alone(packet)
            if frame is None:
                kept.append(packet)
                continue
            self.decode_stats.hand_probes += 1
            index = self._index(frame)
            image = frame.to_ndarray(format="bgr24")
            if hands.seen_in(Frame(index, index / self.fps, image)):
                self._image = (frame, image)
                return frame
            self.decode_stats.hand_probes_left += 1
            self._dense_to = index
            return self._replay([*kept, packet], due, fed)

    def _dense_until(self, due: int) -> Any:
        """The first decoded frame at or after frame ``due``, every packet decoded on the way."""
        self._codec.skip_frame = "NONREF" if self.skip_nonref else "DEFAULT"
        if not self._primed:
            self._replay_gop()
        while True:
            frame = self._next_decoded()
            if frame is None:
                return None
            if self._index(frame) >= due:
                return frame

    def _probe_until(self, due: int) -> Any:
        """The next keyframe at or after ``due`` if nothing changed since the last sample; else, from the kept
        packets, the first frame at or after ``due`` decoded in full. Falls back to :meth:`_dense_until` while
        frames are still queued."""
        if self._queue:
            return self._dense_until(due)
        kept = list(self._gop)
        """Packets from the keyframe at or before the last sample on, to decode after all if a probe changed..."""
        fed = len(kept) if self._primed else 0
        """...of which the main decoder has been fed the first ``fed``."""
        while True:
            packet = self._next_packet()
            self._primed = False
            if packet is None:
                return self._replay(kept, due, fed)
            if not packet.is_keyframe:
                kept.append(packet)
                if not self.probe:  # no keyframe for too long (see _next_packet): decode in full from here on
                    return self._replay(kept, due, fed)
                continue
            if self._key_gap_s > MAX_PROBE_GAP_S + 0.5 / self.fps:  # half a frame for the container's rounding
                self.probe = False  # keyframes too sparse to see between: decode every frame from here on
                return self._replay([*kept, packet], due, fed)
            frame = self._decode_alone(packet)
            if frame is None:
                kept.append(packet)
                continue
            self.decode_stats.probes += 1
            if _changed(_luma_small(frame, self.size), self._last_luma(), self._probe_box()):
                self.decode_stats.probes_changed += 1
                return self._replay([*kept, packet], due, fed)
            if self._index(frame) >= due:
                return frame
            kept, fed = [packet], 0  # the main decoder was not fed this keyframe: from it on, all

    def _last_luma(self) -> np.ndarray:
        """The last frame handed out at :data:`PROBE_WIDTH` (made once, when a probe first needs it)."""
        if self._last_small is None:
            self._last_small = _luma_small(self._last_decoded, self.size)
        return self._last_small

    def _probe_box(self) -> tuple[int, int, int, int] | None:
        """:attr:`_region` in the probe image's pixels, a pixel wider on each side; None: the whole frame."""
        if self._region is None:
            return None
        scale = PROBE_WIDTH / self.size[0]
        x0, y0, x1, y1 = (float(v) * scale for v in self._region)
        return max(0, math.floor(x0) - 1), max(0, math.floor(y0) - 1), math.ceil(x1) + 1, math.ceil(y1) + 1

    def _replay(self, packets: list[Any], due: int, fed: int = 0) -> Any:
        """Decode ``packets`` (from a keyframe on: the last of them is the newest packet read) in full, then on;
        the first frame at or after ``due``. The main decoder has been fed the first ``fed`` of them (and nothing
        since): it goes on from there; none: it starts again from the keyframe."""
        self.decode_stats.rewinds += 1
        self._codec.skip_frame = "NONREF" if self.skip_nonref else "DEFAULT"
        if not fed:
            self._codec.flush_buffers()
        for packet in packets[fed:]:
            self._decode(packet)
        self._primed = True
        if not self.probe:
            self._gop = []  # decoded in full from here on: nothing to keep for probes
        while self._queue:
            frame = self._queue.pop(0)
            if self._index(frame) >= due:
                return frame
        return self._dense_until(due)

    def _replay_gop(self) -> None:
        """The decoder fed again from the current keyframe (after a probe decoded that keyframe alone)."""
        self._codec.flush_buffers()
        for packet in self._gop:
            self._decode(packet)
        self._primed = True

    def _decode_alone(self, packet: Any) -> Any:
        """One keyframe decoded by itself, by :attr:`_prober` (drained and reset after it): the main decoder is left
        where it was."""
        import av

        if self._prober is None:
            self._probe_file = av.open(self.spec)
            self._prober = self._probe_file.streams.video[0].codec_context
        frames = []
        try:
            frames += self._prober.decode(packet)
        except av.FFmpegError:
            self.stats.corrupt_frames += 1
        with contextlib.suppress(av.FFmpegError):  # draining: what it held (nothing more to count as damage)
            frames += self._prober.decode(None)
        self._prober.flush_buffers()
        frames = [frame for frame in frames if self._index(frame) > self._last_index]
        self.decode_stats.decoded += len(frames)
        return frames[-1] if frames else None

    def _next_decoded(self) -> Any:
        while not self._queue:
            packet = self._next_packet()
            if packet is None:
                if self._drained:
                    return None
                self._drained = True
                self._decode(None)  # what the decoder's threads still hold
                continue
            self._decode(packet)
        return self._queue.pop(0)

    def _next_packet(self) -> Any:
        """The next packet of the video (None at its end); kept in :attr:`_gop` while probing may need it."""
        if self._ended or self._closed:
            return None
        for packet in self._packets:
            if packet.size == 0:
                continue  # the demuxer's flush packet: the end is handled here
            self.decode_stats.packets += 1
            if packet.is_keyframe:
                time_s = self._packet_time(packet)
                if time_s is not None and self._key_time_s is not None:
                    self._key_gap_s = time_s - self._key_time_s
                self._key_time_s = time_s
                self._gop = [packet] if self.probe else []
            elif self.probe:
                self._gop.append(packet)
                if len(self._gop) > self._gop_cap:
                    # No keyframe within MAX_PROBE_GAP_S: probing stops, and the packets are kept no longer.
                    self.probe = False
                    if self._primed:
                        self._gop = []
            return packet
        self._ended = True
        return None

    def _decode(self, packet: Any) -> None:
        import av

        try:
            frames = self._codec.decode(packet)
        except av.FFmpegError:
            if packet is not None:
                self.stats.corrupt_frames += 1
            return
        for frame in frames:
            if self._index(frame) <= self._last_index:
                continue  # a frame handed out, or passed, already (decoded again after a changed probe)
            self.decode_stats.decoded += 1
            self._queue.append(frame)

    def _index(self, frame: Any) -> int:
        if frame.pts is None:
            return self._last_index + 1
        start = self._start or 0
        return max(0, round((frame.pts - start) * self._time_base * self.fps))

    def _packet_index(self, packet: Any) -> int:
        """The frame a packet holds (its presentation time in frames; the next frame's when it has none)."""
        time_s = self._packet_time(packet)
        return self._last_index + 1 if time_s is None else max(0, round(time_s * self.fps))

    def _packet_time(self, packet: Any) -> float | None:
        if packet.pts is None:
            return None
        return (packet.pts - (self._start or 0)) * self._time_base

    # -- like FrameSource -------------------------------------------------------------------------------

    def damage(self) -> Damage:
        """Frames the decoder refused, and at the end of the file those it says it holds and never gave (a
        truncated recording), out of the frames it holds; frames never decoded (passed between keyframes) are not
        judged."""
        read = self.decode_stats.packets
        missing = max(0, (self.frame_count or 0) - read) if self._ended else 0
        frames = max(self.frame_count or 0, read)
        return Damage(min(self.stats.corrupt_frames + missing, frames), frames)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue = []
            self._container.close()
            if self._probe_file is not None:
                self._probe_file.close()

    def __enter__(self) -> SparseVideo:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SparseVideo {self.name} {self.size[0]}x{self.size[1]} @ {self.fps:g} fps>"


def _luma_small(frame: Any, size: tuple[int, int]) -> np.ndarray:
    """The frame's luma at :data:`PROBE_WIDTH`, as int16 (the decoder's own plane where it is 8-bit luma)."""
    if frame.format.name in _LUMA_FIRST:
        plane = frame.planes[0]
        luma = np.frombuffer(plane, np.uint8).reshape(plane.height, plane.line_size)[:, : plane.width]
    else:
        luma = frame.to_ndarray(format="gray")
    width, height = size
    shape = (PROBE_WIDTH, max(1, round(height * PROBE_WIDTH / width)))
    return cv2.resize(luma, shape, interpolation=cv2.INTER_AREA).astype(np.int16)


def _changed(current: np.ndarray, previous: np.ndarray | None, box: tuple[int, int, int, int] | None = None) -> bool:
    """More than :data:`PROBE_PIXELS` pixels (inside ``box``: ``x0, y0, x1, y1``) brighter than the brightest, or
    darker than the darkest, of their 3x3 neighbourhood before by :data:`PROBE_LEVEL`: a camera shaking by a pixel
    or two changes nothing."""
    if previous is None or current.shape != previous.shape:
        return True
    if box is not None:
        x0, y0, x1, y1 = box
        current, previous = current[y0:y1, x0:x1], previous[y0:y1, x0:x1]
        if current.size == 0:
            return True
    kernel = np.ones((3, 3), np.uint8)
    brighter = current > cv2.dilate(previous, kernel) + PROBE_LEVEL
    darker = current < cv2.erode(previous, kernel) - PROBE_LEVEL
    return int(np.count_nonzero(brighter | darker)) >= PROBE_PIXELS


VideoSource = SparseVideo | FrameSource


def open_video(path: str | Path, *, decoder: str = "auto", probe: bool = True) -> VideoSource:
    """A video file for analysis: :class:`SparseVideo` (``decoder`` ``pyav``, or ``auto`` where PyAV is installed)
    or OpenCV's :class:`~vision.runtime.capture.FrameSource`."""
    if decoder not in DECODERS:
        raise ValueError(f"decoder is one of {', '.join(DECODERS)}, not {decoder!r}")
    if decoder == "pyav" or (decoder == "auto" and pyav_available()):
        if not pyav_available():
            raise CaptureError("the pyav decoder needs PyAV: pip install 'rummikub-referee[decode]'")
        return SparseVideo(path, probe=probe)
    return open_source(str(path))


def sample(
    source: VideoSource,
    first: Frame,
    *,
    busy_step: int,
    still_step: int,
    still: Callable[[], bool],
    region: RegionOf = None,
    hands: HandsOver | None = None,
) -> Iterator[Frame]:
    """The frames after ``first`` at the analysis's pace: ``busy_step`` frames apart, ``still_step`` while
    ``still()`` (asked after each frame has been looked at); OpenCV skips the frames in between without converting
    them, PyAV without decoding what it need not (its probes compare ``region()`` only, and while ``hands`` says
    hands are over the table it takes keyframes showing them: see :meth:`SparseVideo.frames`)."""
    if isinstance(source, SparseVideo):
        yield from source.frames(
            first, busy_step=busy_step, still_step=still_step, still=still, region=region, hands=hands
        )
        return
    while True:
        step = still_step if still() else busy_step
        if step > 1:
            source.skip(step - 1)
        frame = source.read()
        if frame is None:
            return
        yield frame
