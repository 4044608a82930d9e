"""Frames from video files (whole, skipped through, damaged) and from live sources that drop out and come back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.runtime.capture import CaptureError, describe, open_source, redact

FRAMES, FPS, SIZE = 40, 10.0, (160, 120)


def level(index: int) -> int:
    """Frame ``index`` of the test video is this grey, so a frame read back tells which one it is."""
    return (index * 6) % 250


@pytest.fixture(scope="module")
def video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("video") / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, SIZE)
    assert writer.isOpened()
    for index in range(FRAMES):
        writer.write(np.full((SIZE[1], SIZE[0], 3), level(index), np.uint8))
    writer.release()
    return path


def frame_level(image: np.ndarray) -> int:
    return round(float(image.mean()))


def test_a_file_gives_every_frame_with_its_container_time(video: Path) -> None:
    with open_source(str(video)) as source:
        assert (source.fps, source.size, source.is_live, source.frame_count) == (FPS, SIZE, False, FRAMES)
        frames = list(source)
    assert [f.index for f in frames] == list(range(FRAMES))
    assert [f.time_s for f in frames] == pytest.approx([i / FPS for i in range(FRAMES)])
    assert all(abs(frame_level(f.image) - level(f.index)) <= 2 for f in frames)
    assert frames[0].image.shape == (SIZE[1], SIZE[0], 3) and frames[0].image.dtype == np.uint8
    assert source.stats.frames_read == FRAMES and source.stats.corrupt_frames == 0


def test_skip_advances_so_a_caller_can_take_every_kth_frame(video: Path) -> None:
    with open_source(str(video)) as source:
        taken = []
        for frame in source:
            taken.append(frame)
            source.skip(2)
        assert source.skip(5) == 0  # nothing left
    assert [f.index for f in taken] == list(range(0, FRAMES, 3))
    assert all(abs(frame_level(f.image) - level(f.index)) <= 2 for f in taken)
    assert taken[-1].time_s == pytest.approx(taken[-1].index / FPS)


@pytest.mark.parametrize(
    "damage",
    [
        "zeroed",  # a stretch in the middle overwritten with zeros
        "truncated",  # the download stopped at 60 %
    ],
)
def test_a_damaged_file_is_read_as_far_as_it_goes(video: Path, tmp_path: Path, damage: str) -> None:
    data = bytearray(video.read_bytes())
    n = len(data)
    if damage == "zeroed":
        data[n * 4 // 10 : n * 5 // 10] = bytes(n * 5 // 10 - n * 4 // 10)
    else:
        del data[n * 6 // 10 :]
    broken = tmp_path / f"{damage}.avi"
    broken.write_bytes(bytes(data))
    with open_source(str(broken)) as source:
        frames = list(source)
    assert 0 < len(frames) < FRAMES
    assert source.stats.frames_read == len(frames) and source.stats.corrupt_frames >= 1
    indices = [f.index for f in frames]
    assert indices == sorted(set(indices))


@pytest.mark.parametrize("index", [0, 1, 17, FRAMES - 1])
def test_seek_goes_straight_to_a_frame_of_a_file(video: Path, index: int) -> None:
    with open_source(str(video)) as source:
        assert source.seek(index)
        frame = source.read()
        assert frame is not None and frame.index == index and frame.time_s == pytest.approx(index / FPS)
        assert abs(frame_level(frame.image) - level(index)) <= 2  # the frame itself, not one near it
        following = source.read()
        assert following is None if index == FRAMES - 1 else following.index == index + 1


def test_seek_past_the_end_says_so_and_a_refused_seek_skips_instead(
    video: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_source(str(video)) as source:
        assert not source.seek(FRAMES) and source.read() is None
    with open_source(str(video)) as source:
        source.read()
        with pytest.raises(ValueError, match="cannot seek back"):
            source.seek(0)

    class NoSeeking:
        """A container that cannot seek (the position stays where it is)."""

        def __init__(self, target: str | int) -> None:
            self.capture = cv2.VideoCapture(target)

        def set(self, prop_id: int, value: float) -> bool:
            return False

        def __getattr__(self, name: str) -> Any:
            return getattr(self.capture, name)

    with open_source(str(video), opener=NoSeeking) as source:
        assert source.seek(25)
        frame = source.read()
        assert frame.index == 25 and abs(frame_level(frame.image) - level(25)) <= 2


def test_damage_counts_the_frames_that_could_not_be_decoded(video: Path, tmp_path: Path) -> None:
    with open_source(str(video)) as source:
        list(source)
    whole = source.damage()
    assert (whole.unreadable, whole.frames, whole.unusable) == (0, FRAMES, False)
    cut = tmp_path / "cut.avi"
    data = video.read_bytes()
    cut.write_bytes(data[: len(data) * 4 // 10])  # the download stopped at 40 %
    with open_source(str(cut)) as source:
        read = len(list(source))
    damage = source.damage()
    assert damage.frames == FRAMES and damage.unreadable == FRAMES - read > FRAMES // 2 and damage.unusable
    line = damage.describe("video 'cut.avi'")
    assert line.startswith(f"video 'cut.avi': {damage.unreadable} of {FRAMES} frames could not be decoded (")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("notes.mp4", b"not a video at all", "not a video file or unreadable"),  # text with a video suffix
        ("empty.avi", b"", "not a video file or unreadable"),  # an empty file
        ("missing.mp4", None, "no such file"),
        ("folder", "dir", "is a folder"),
    ],
)
def test_a_bad_file_is_a_one_line_capture_error(
    tmp_path: Path, name: str, content: bytes | str | None, message: str
) -> None:
    path = tmp_path / name
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(CaptureError) as error:
        open_source(str(path))
    assert message in str(error.value) and str(path) in str(error.value) and "\n" not in str(error.value)
    assert isinstance(error.value, OSError)


# -- live sources, simulated -------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class FakeCamera:
    """A camera whose frames show a counter; its link breaks after ``drop_after`` frames, then refuses
    ``refusals`` reopening attempts (``None``: forever) and comes back."""

    def __init__(self, clock: FakeClock, drop_after: int | None = None, refusals: int | None = 0) -> None:
        self.clock, self.drop_after, self.refusals = clock, drop_after, refusals
        self.delivered = 0
        self.opens = 0
        self.broken = False

    def open(self, target: str | int) -> FakeCapture:
        self.opens += 1
        refused = self.broken and (self.refusals is None or self.opens - 2 < self.refusals)
        if not refused:
            self.broken = False
        return FakeCapture(self, opened=not refused)


class FakeCapture:
    def __init__(self, camera: FakeCamera, opened: bool) -> None:
        self.camera, self.opened = camera, opened

    def isOpened(self) -> bool:
        return self.opened

    def read(self) -> tuple[bool, np.ndarray | None]:
        camera = self.camera
        if not self.opened:
            return False, None
        if camera.broken or camera.delivered == camera.drop_after:
            camera.broken, camera.drop_after = True, None  # this link is dead; a fresh one will work
            return False, None
        camera.clock.now += 1 / 30
        camera.delivered += 1
        return True, np.full((48, 64, 3), camera.delivered % 256, np.uint8)

    def grab(self) -> bool:
        return self.read()[0]

    def get(self, prop_id: int) -> float:
        return 30.0 if prop_id == cv2.CAP_PROP_FPS else 0.0

    def set(self, prop_id: int, value: float) -> bool:
        return False

    def release(self) -> None:
        self.opened = False


def live(camera: FakeCamera, clock: FakeClock, events: list[tuple[str, dict[str, Any]]], **options: Any) -> Any:
    return open_source(
        "0",
        opener=camera.open,
        sleep=clock.sleep,
        clock=clock,
        on_event=lambda kind, info: events.append((kind, info)),
        **options,
    )


def test_a_live_source_that_drops_comes_back_with_continuing_frames() -> None:
    clock = FakeClock()
    camera = FakeCamera(clock, drop_after=5, refusals=2)
    events: list[tuple[str, dict[str, Any]]] = []
    with live(camera, clock, events) as source:
        assert source.is_live and source.size == (64, 48) and source.fps == 30.0
        frames = [frame for _, frame in zip(range(10), source, strict=False)]
    assert [f.index for f in frames] == list(range(10))  # no gap: the caller's state carries on
    assert [frame_level(f.image) for f in frames] == list(range(1, 11))
    times = [f.time_s for f in frames]
    assert times == sorted(times) and times[5] - times[4] >= 0.5 + 1.0 + 2.0  # the outage shows in the times
    assert [kind for kind, _ in events] == ["dropout", "reconnected"]
    assert events[0][1]["index"] == 5 and events[1][1]["attempts"] == 3
    assert events[1][1]["down_s"] == pytest.approx(3.5, abs=0.1) and events[1][1]["time_s"] > events[0][1]["time_s"]
    assert clock.sleeps == [0.5, 1.0, 2.0]  # backoff doubling
    assert (source.stats.dropouts, source.stats.reconnects, source.stats.frames_read) == (1, 1, 10)


def test_a_live_source_that_never_comes_back_gives_up() -> None:
    clock = FakeClock()
    camera = FakeCamera(clock, drop_after=3, refusals=None)
    events: list[tuple[str, dict[str, Any]]] = []
    source = live(camera, clock, events, give_up_after_s=20.0)
    got = []
    with pytest.raises(CaptureError) as error:
        got.extend(source)
    assert len(got) == 3
    assert clock.sleeps == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 2.5]  # capped at 5 s, and never past the limit
    assert [kind for kind, _ in events] == ["dropout", "gave-up"]
    assert "camera 0 lost" in str(error.value) and "\n" not in str(error.value)


def test_without_reconnect_a_live_source_just_ends() -> None:
    clock = FakeClock()
    events: list[tuple[str, dict[str, Any]]] = []
    with live(FakeCamera(clock, drop_after=4), clock, events, reconnect=False) as source:
        assert len(list(source)) == 4
    assert [kind for kind, _ in events] == ["dropout"] and clock.sleeps == []


def test_a_camera_that_cannot_open_is_a_capture_error() -> None:
    clock = FakeClock()
    camera = FakeCamera(clock, refusals=None)
    camera.broken = True
    with pytest.raises(CaptureError, match=r"^camera 0 cannot be opened"):
        live(camera, clock, [])


def test_live_sources_cannot_skip_and_stream_passwords_stay_hidden() -> None:
    clock = FakeClock()
    with live(FakeCamera(clock), clock, []) as source, pytest.raises(ValueError, match="video files"):
        source.skip(3)
    assert describe("rtsp://admin:hunter2@10.0.0.5:554/live") == "stream 'rtsp://admin:***@10.0.0.5:554/live'"
    assert describe("2") == "camera 2" and describe("game.mp4") == "video 'game.mp4'"


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("rtsp://user:pass@cam/stream", "rtsp://user:***@cam/stream"),
        ("rtsp://admin:p%40ss:w0rd@[fe80::1]:554/live", "rtsp://admin:***@[fe80::1]:554/live"),
        ("http://cam:8080/video?token=abc123&res=hd", "http://cam:8080/video?token=***&res=hd"),
        (
            "https://cam/feed?API_KEY=k&Password=p&auth=a&sig=s",
            "https://cam/feed?API_KEY=***&Password=***&auth=***&sig=***",
        ),
        ("rtsp://u:p@cam/x?access_token=t", "rtsp://u:***@cam/x?access_token=***"),
        ("rtsp://cam/stream", "rtsp://cam/stream"),  # nothing secret: as it is
        ("rtsp://viewer@cam/stream", "rtsp://viewer@cam/stream"),  # a user name alone is not a secret
        ("http://[::1/broken?token=x", "http://***"),  # not even a URL: nothing of it
        ("0", "0"),
        ("final.mp4", "final.mp4"),
    ],
)
def test_secrets_in_a_source_address_are_hidden(source: str, shown: str) -> None:
    assert redact(source) == shown
    if "://" in source and "broken" not in source:
        assert describe(source) == f"stream {shown!r}"


def test_a_stream_that_cannot_be_opened_is_named_without_its_secrets() -> None:
    def refuses(target: str | int) -> Any:
        assert target == "rtsp://admin:hunter2@cam/live?token=s3cret"  # the opener gets the real address
        return FakeCapture(FakeCamera(FakeClock()), opened=False)

    with pytest.raises(CaptureError) as error:
        open_source("rtsp://admin:hunter2@cam/live?token=s3cret", opener=refuses, reconnect=False)
    assert "hunter2" not in str(error.value) and "s3cret" not in str(error.value)
    assert "rtsp://admin:***@cam/live?token=***" in str(error.value)
