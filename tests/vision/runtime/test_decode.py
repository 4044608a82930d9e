"""The sparse decoder (PyAV): keyframes only while still, the gap decoded after all when a keyframe changed, every
sampled frame where something happens, and OpenCV as the fallback."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.runtime import decode
from vision.runtime.capture import CaptureError, FrameSource, open_source
from vision.runtime.decode import SparseVideo, open_video, sample

av = pytest.importorskip("av")  # the decode extra; in dev, so CI runs these

FPS, SIZE, GOP = 10, (160, 120), 10
"""A keyframe each second (every :data:`GOP` frames), as phones write them."""


def write_video(
    path: Path, frames: int, draw: Callable[[int], np.ndarray], *, gop: int = GOP, bframes: int = 0
) -> Path:
    """An H.264 video (libx264; fixed keyframes, no scene-cut ones) of ``draw(index)`` images."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = SIZE[0], SIZE[1], "yuv420p"
        stream.options = {"g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "bf": str(bframes), "crf": "18"}
        for index in range(frames):
            frame = av.VideoFrame.from_ndarray(draw(index), format="bgr24")
            frame.pts, frame.time_base = index, Fraction(1, FPS)
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return path


def table(index: int, *, tile_from: int | None = None, hand: range = range(0)) -> np.ndarray:
    """A grey table; a hand (dark block from the left edge) over it during ``hand``; a light tile on it from
    ``tile_from`` on."""
    image = np.full((SIZE[1], SIZE[0], 3), 120, np.uint8)
    if tile_from is not None and index >= tile_from:
        image[50:70, 70:84] = 230
    if index in hand:
        image[40:80, 0:90] = 40
    return image


def counted(index: int) -> np.ndarray:
    """Frame ``index`` is this grey, so a frame read back tells which one it is."""
    return np.full((SIZE[1], SIZE[0], 3), (index * 5) % 250, np.uint8)


def walk(source: decode.VideoSource, still: Callable[[int], bool], *, busy: int = 2, calm: int = 5) -> list[int]:
    """The indices :func:`sample` hands out, ``still(index of the last frame handed out)`` deciding the pace."""
    first = source.read()
    assert first is not None
    seen = [first.index]
    for frame in sample(source, first, busy_step=busy, still_step=calm, still=lambda: still(seen[-1])):
        seen.append(frame.index)
    return seen


def test_a_still_table_is_decoded_at_its_keyframes_only(tmp_path: Path) -> None:
    video = write_video(tmp_path / "still.mp4", 60, table)
    with SparseVideo(video) as source:
        seen = walk(source, lambda _: True)
        stats = source.decode_stats
    # Each keyframe unchanged is the next sample; after the last one nothing can be probed: decoded in full.
    assert seen == [0, 10, 20, 30, 40, 50, 55]
    assert stats.probes == 5 and stats.probes_changed == 0 and stats.packets == 60
    assert stats.decoded == 1 + 5 + 9  # the first frame, 5 keyframes, the 9 frames after the last one


def test_a_change_between_keyframes_is_decoded_after_all_and_sampled_as_a_full_decode_would(tmp_path: Path) -> None:
    # A hand comes in at frame 23 and leaves a tile at 26: keyframe 30 differs from keyframe 20.
    video = write_video(tmp_path / "move.mp4", 60, lambda i: table(i, tile_from=26, hand=range(23, 26)))
    with SparseVideo(video) as source:
        seen = walk(source, lambda _: True)
        stats = source.decode_stats
    assert seen[:4] == [0, 10, 20, 25]  # 25: still_step after 20, decoded from keyframe 20's packets
    assert stats.probes_changed == 1
    with open_source(str(video)) as full:
        everything = walk(full, lambda _: True)
    assert everything[:4] == [0, 5, 10, 15] and 25 in everything  # OpenCV decodes all, samples every 5th


def test_a_change_outside_the_region_looked_at_is_no_change(tmp_path: Path) -> None:
    def racks_sorted(index: int) -> np.ndarray:  # a player sorts the rack beside the table from frame 23 on
        image = table(index)
        image[:, 140:][:, :, :] = 60 if index < 23 else 200
        return image

    video = write_video(tmp_path / "rack.mp4", 40, racks_sorted)
    with SparseVideo(video) as source:  # the whole frame: keyframe 30 changed
        walk(source, lambda _: True)
        assert source.decode_stats.probes_changed == 1
    with SparseVideo(video) as source:  # the play area only (x < 130): nothing changed
        first = source.read()
        assert first is not None
        frames = sample(source, first, busy_step=2, still_step=5, still=lambda: True, region=lambda: (0, 0, 130, 120))
        assert [f.index for f in frames] == [10, 20, 30, 35]
        assert source.decode_stats.probes_changed == 0


def test_a_camera_shaking_by_a_pixel_is_no_change() -> None:
    rng = np.random.default_rng(1)
    scene = cv2.GaussianBlur(rng.integers(0, 255, (180, 320), np.uint8), (7, 7), 0).astype(np.int16)
    assert not decode._changed(scene[:, 1:], scene[:, :-1])  # one pixel to the side
    assert not decode._changed(scene[1:, :], scene[:-1, :])  # one pixel down
    tile = scene.copy()
    tile[80:90, 150:158] += 40  # a tile's worth of pixels, 40 levels brighter
    assert decode._changed(tile, scene)
    assert decode._changed(scene, None)


def test_busy_samples_every_step_with_the_frames_opencv_reads(tmp_path: Path) -> None:
    video = write_video(tmp_path / "count.mp4", 40, counted)
    with SparseVideo(video) as source:
        first = source.read()
        assert first is not None and (source.fps, source.size, source.frame_count) == (FPS, SIZE, 40)
        frames = [first, *sample(source, first, busy_step=3, still_step=9, still=lambda: False)]
    assert [f.index for f in frames] == list(range(0, 40, 3))
    assert [f.time_s for f in frames] == pytest.approx([i / FPS for i in range(0, 40, 3)])
    capture = cv2.VideoCapture(str(video))
    expected = [capture.read()[1] for _ in range(40)]
    for frame in frames:  # the same pixels as OpenCV's decoder gives for that frame
        assert np.abs(frame.image.astype(int) - expected[frame.index]).max() <= 2


def test_disposable_frames_are_not_decoded_and_the_sample_is_the_next_decoded_frame(tmp_path: Path) -> None:
    video = write_video(tmp_path / "bframes.mp4", 60, counted, bframes=2)
    with SparseVideo(video) as source:
        seen = walk(source, lambda _: False, busy=2)
        decoded = source.decode_stats.decoded
    assert decoded < 60  # B-frames nobody refers to were skipped
    # The sample is the first decoded frame at or after the one due; the next is due on the grid all the same.
    assert all(seen[i] - 2 * i in (0, 1, 2) for i in range(len(seen))) and seen[-1] >= 56
    with SparseVideo(video, skip_nonref=False) as source:
        assert walk(source, lambda _: False, busy=2) == list(range(0, 60, 2))


@pytest.mark.parametrize("gop", [25, 100])  # 2.5 s apart at 10 fps; one keyframe in the whole video
def test_keyframes_too_far_apart_are_not_probed(tmp_path: Path, gop: int) -> None:
    video = write_video(tmp_path / "sparse-keys.mp4", 60, table, gop=gop)
    with SparseVideo(video) as source:
        seen = walk(source, lambda _: True)
        assert not source.probe and source._gop == []  # no packets kept for probes any more
    assert seen == list(range(0, 60, 5))  # decoded in full, sampled as OpenCV would


def test_moves_from_still_to_busy_and_back(tmp_path: Path) -> None:
    # Still until frame 20, busy (every 2nd frame) until 40, still again: what the analysis does around a move.
    video = write_video(tmp_path / "phases.mp4", 70, lambda i: table(i, tile_from=30, hand=range(22, 38)))
    with SparseVideo(video) as source:
        seen = walk(source, lambda last: not 20 <= last < 40)
    assert seen[:3] == [0, 10, 20]
    assert seen[3:13] == list(range(22, 42, 2))  # every busy sample, frames after a keyframe probe decoded
    assert seen[13:] == [50, 60, 65]  # still again: keyframes (unchanged since 40); after the last, all decoded


class FedOnce:
    """The main decoder of a :class:`SparseVideo`, counting the packets it is fed (by their time)."""

    def __init__(self, codec: object) -> None:
        self.codec = codec
        self.fed: list[int] = []

    def decode(self, packet: object = None) -> object:
        if packet is not None:
            self.fed.append(packet.pts)  # type: ignore[attr-defined]
        return self.codec.decode(packet)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self.codec, name)

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("codec", "fed"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.codec, name, value)


def test_a_changed_probe_after_busy_samples_decodes_only_the_packets_not_yet_decoded(tmp_path: Path) -> None:
    # Busy until frame 14 (the main decoder has decoded up to it), then still: keyframe 20 shows the tile laid at 17,
    # so the frames from 15 on are decoded after all. Keyframes are probed by a decoder of their own: the main one
    # goes on from frame 15 instead of decoding keyframe 10's gap again.
    video = write_video(tmp_path / "busy-then-probe.mp4", 40, lambda i: table(i, tile_from=17))
    with SparseVideo(video) as source:
        main = FedOnce(source._codec)
        source._codec = main  # type: ignore[assignment]
        seen = walk(source, lambda last: last >= 14)
        stats = source.decode_stats
    assert seen[:9] == [0, 2, 4, 6, 8, 10, 12, 14, 19]  # 19: still_step after 14, decoded after keyframe 20 changed
    assert stats.probes_changed == 1
    assert len(main.fed) == len(set(main.fed))  # no packet decoded twice by the main decoder


def test_the_frames_handed_out_do_not_depend_on_the_machines_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # FFmpeg's own thread count is the cores + 1: as a 16-core machine would open the file, the decoder hands out what
    # it hands out on 2 cores (frame threads would hold back a frame each, and probes wait for the frames held).
    video = write_video(tmp_path / "phases.mp4", 70, lambda i: table(i, tile_from=30, hand=range(22, 38)))
    with SparseVideo(video) as source:
        here = walk(source, lambda last: not 20 <= last < 40)
    opened = av.open

    def on_16_cores(*args: object, **kwargs: object) -> object:
        container = opened(*args, **kwargs)
        container.streams.video[0].codec_context.thread_count = 17
        return container

    monkeypatch.setattr(av, "open", on_16_cores)
    with SparseVideo(video) as source:
        assert source._codec.thread_type.name == decode.THREAD_TYPE  # no frame threads: nothing held back
        assert walk(source, lambda last: not 20 <= last < 40) == here == [0, 10, 20, *range(22, 42, 2), 50, 60, 65]


def hand_in(frame: decode.Frame) -> bool:
    """The dark hand of :func:`table` is in the picture."""
    return bool(frame.image[60, 10].mean() < 80)


def walk_hands(video: Path) -> tuple[list[int], decode.DecodeStats]:
    """Busy samples every 2nd frame, keyframes only while the last sample showed the hand."""
    with SparseVideo(video) as source:
        first = source.read()
        assert first is not None
        seen = [first]
        hands = decode.HandsOver(now=lambda: hand_in(seen[-1]), seen_in=hand_in)
        seen += sample(source, first, busy_step=2, still_step=5, still=lambda: False, hands=hands)
        return [f.index for f in seen], source.decode_stats


@pytest.mark.parametrize("bframes", [0, 2])  # and with disposable frames, decoded only where a sample is due
def test_while_hands_stay_over_the_table_only_keyframes_are_decoded(tmp_path: Path, bframes: int) -> None:
    # The hand is over the table from frame 13 to 46; keyframes every 10 frames.
    def draw(index: int) -> np.ndarray:
        return table(index, tile_from=30, hand=range(13, 47))

    video = write_video(tmp_path / "hands.mp4", 70, draw, bframes=bframes)
    seen, stats = walk_hands(video)
    with SparseVideo(video) as source:  # the same walk decoding every busy sample
        dense = walk(source, lambda _: False, busy=2)
        assert source.decode_stats.hand_probes == 0
    # Up to the hand first seen (at 14, or a frame later) the same samples; then keyframes showing the hand, the
    # frames between them not decoded; keyframe 50 shows it gone: frames from 40 on decoded after all, sampled as the
    # full walk does.
    first_hand = next(i for i in dense if i >= 13)
    assert seen == [i for i in dense if i <= first_hand] + [20, 30, 40] + [i for i in dense if i > 40]
    if not bframes:
        assert dense == list(range(0, 70, 2)) and first_hand == 14
    assert (stats.hand_probes, stats.hand_probes_left) == (4, 1)
    assert stats.decoded < 70 - 15


def test_keyframes_closer_than_a_second_are_not_all_decoded_under_hands(tmp_path: Path) -> None:
    # Keyframes every 4 frames (0.4 s): under the hand (13 to 46) the last one within a second of the last sample.
    video = write_video(tmp_path / "dense-keys.mp4", 70, lambda i: table(i, hand=range(13, 47)), gop=4)
    seen, stats = walk_hands(video)
    assert seen == [*range(0, 16, 2), 24, 32, 40, *range(42, 70, 2)]  # 48 shows the hand gone: 40 on decoded
    assert (stats.hand_probes, stats.hand_probes_left) == (4, 1)


def test_hands_lifted_and_back_between_two_keyframes_showing_them_go_unseen(tmp_path: Path) -> None:
    # The bound of what keyframes only may miss: a hand away from 22 to 26 only, keyframes 20 and 30 show hands.
    video = write_video(tmp_path / "lifted.mp4", 60, lambda i: table(i, hand=range(13, 47) if not 22 <= i < 27 else ()))
    seen, _ = walk_hands(video)
    assert not {22, 24, 26} & set(seen) and seen[8:11] == [20, 30, 40]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "none.mp4", "no such file"),  # nothing there
        (lambda p: p, "it is a folder"),  # a folder
        (lambda p: (p / "notes.mp4").write_text("not a video") and p / "notes.mp4", "not a video file"),  # text
    ],
)
def test_what_is_not_a_video_is_one_line(tmp_path: Path, make: Callable[[Path], Path], message: str) -> None:
    with pytest.raises(CaptureError, match=message) as error:
        SparseVideo(make(tmp_path))
    assert "\n" not in str(error.value)


def test_open_video_picks_the_decoder(tmp_path: Path) -> None:
    video = write_video(tmp_path / "v.mp4", 12, table)
    with open_video(video) as auto, open_video(video, decoder="opencv") as opencv:
        assert isinstance(auto, SparseVideo) and isinstance(opencv, FrameSource)
    with pytest.raises(ValueError, match="decoder is one of"):
        open_video(video, decoder="gpu")
