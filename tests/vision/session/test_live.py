"""LiveSession: a scripted camera that drops out and comes back, the clock key from another thread, and the
``live`` command continuing a game log after a stop."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.table import Table
from vision.cli import main
from vision.game.gamelog import GameLog, GameSetup, read_log
from vision.game.moves import GameKeeper
from vision.game.pipeline import PipelineConfig
from vision.runtime.capture import CaptureError, Frame
from vision.session.live import LatestFrame, LiveOptions, LiveSession

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
Script = list[tuple[str, str | None, int]]
"""(arm side or "", the table it leaves halfway, frames)."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class ScriptedCamera:
    """A live camera filming a scripted scene at 10 frames per second of the fake clock. The link breaks after
    ``drop_at`` frames and the next ``refusals`` reopenings fail (``None``: all of them). When the script is over
    it keeps showing the last frame and calls ``when_done`` once.

    ``processed()`` (samples the pipeline has done) keeps the camera at most a frame ahead of the pipeline, so a
    busy machine running the tests slows the game down instead of skipping it (up to 5 s of real time a frame:
    nine frames skipped would be a stretch of the camera nobody looked at, and make the next move REVIEW).
    """

    def __init__(
        self, scene: Any, script: Script, clock: FakeClock, *, drop_at: int | None = None, refusals: int | None = 0
    ) -> None:
        self.scene, self.clock = scene, clock
        self.frames: list[tuple[str, str | None]] = []
        for side, table, count in script:
            self.frames += [(side, table if k == count // 2 else None) for k in range(count)]
        self.drop_at, self.refusals = drop_at, refusals
        self.delivered, self.refused = 0, 0
        self.broken = False
        self.when_done: Any = None
        self.processed: Any = None
        self.last: np.ndarray | None = None

    def open(self, target: str | int) -> ScriptedCapture:
        if self.broken and (self.refusals is None or self.refused < self.refusals):
            self.refused += 1
            return ScriptedCapture(self, opened=False)
        self.broken = False
        return ScriptedCapture(self, opened=True)

    def next_frame(self) -> np.ndarray | None:
        if self.broken:
            return None
        if self.delivered == self.drop_at:
            self.broken, self.drop_at = True, None
            return None
        waited = 0
        while self.processed is not None and self.processed() < self.delivered - 1 and waited < 5000:
            threading.Event().wait(0.001)
            waited += 1
        self.clock.now += 0.1
        if self.delivered >= len(self.frames):
            if self.when_done is not None:
                done, self.when_done = self.when_done, None
                done()
            return self.last
        side, table = self.frames[self.delivered]
        self.scene.arm = side or None
        if table is not None:
            self.scene.show(table)
        self.delivered += 1
        self.last = self.scene.frame()
        return self.last


class ScriptedCapture:
    def __init__(self, camera: ScriptedCamera, opened: bool) -> None:
        self.camera, self.opened = camera, opened

    def isOpened(self) -> bool:
        return self.opened

    def read(self) -> tuple[bool, np.ndarray | None]:
        image = self.camera.next_frame() if self.opened else None
        return image is not None, image

    def grab(self) -> bool:
        return self.read()[0]

    def get(self, prop_id: int) -> float:
        return 10.0 if prop_id == cv2.CAP_PROP_FPS else 0.0

    def set(self, prop_id: int, value: float) -> bool:
        return False

    def release(self) -> None:
        self.opened = False


def session(tmp_path: Path, scenes: Any, script: Script, **camera_options: Any) -> tuple[LiveSession, Path]:
    scene = scenes.TableScene()
    scene.show(START)
    clock = FakeClock()
    camera = ScriptedCamera(scene, script, clock, **camera_options)
    path = tmp_path / "game.jsonl"
    log = GameLog.create(path, GameSetup.of("official", 2), {"mode": "live"})
    options = LiveOptions(source="0", setup=GameSetup.of("official", 2), calibration="frame",
                          config=PipelineConfig(sample_hz=500.0))  # fmt: skip
    capture = {"opener": camera.open, "sleep": clock.sleep, "clock": clock, "give_up_after_s": 10.0}
    live = LiveSession(options, scenes.PixelReader(), log, GameKeeper("official", 2), capture_options=capture)
    camera.when_done = live.stop
    camera.processed = lambda: live.pipeline.stats.samples if live.pipeline is not None else 1 << 30
    return live, path


OPENING_AND_DRAW: Script = [
    ("", None, 30),
    ("bottom", OPENED, 30),  # player 0 opens
    ("", None, 40),
    ("", None, 20),  # (the link breaks here in the dropout tests)
    ("top", None, 30),  # player 1 draws
    ("", None, 40),
]


def moves_of(events: list[dict]) -> list[dict]:
    return [e for e in events if e["event"] == "move"]


def test_a_stream_that_drops_and_comes_back_goes_on_with_the_same_game(tmp_path: Path, scenes: Any) -> None:
    live, path = session(tmp_path, scenes, OPENING_AND_DRAW, drop_at=100, refusals=2)
    summary = live.run()
    live.log.close()
    events = read_log(path)
    kinds = [e["event"] for e in events]
    assert kinds[:5] == ["start", "calibration", "table", "activity", "move"] and kinds[-1] == "end"
    assert kinds.index("dropout") < kinds.index("reconnected") < len(kinds) - 1
    moves = moves_of(events)
    # the camera was not seen for 3.5 s before the draw: a move may have come and gone then, so a person decides
    assert [(m["number"], m["player"], m["kind"], m["ruling"]["verdict"]) for m in moves] == [
        (1, 0, "play", "ok"),
        (2, 1, "draw", "review"),
    ]
    reconnected = events[kinds.index("reconnected")]
    assert reconnected["attempts"] == 3 and reconnected["down_s"] == pytest.approx(3.5, abs=0.2)
    [unread] = [e for e in events if e["event"] == "unread"]
    assert unread["seconds"] == pytest.approx(3.5, abs=0.3) and "behind" not in kinds  # the dropout said so itself
    assert f"not read for {unread['seconds']:.1f} s" in moves[1]["ruling"]["notes"][-1]
    assert moves[0]["time_s"] < reconnected["time_s"] < moves[1]["time_s"]
    assert summary["capture"]["dropouts"] == 1 and summary["capture"]["reconnects"] == 1
    assert summary["moves"] == 2 and live.keeper.player == 0


def test_a_stream_that_never_comes_back_ends_the_session_with_the_log_closed_properly(
    tmp_path: Path, scenes: Any
) -> None:
    live, path = session(tmp_path, scenes, OPENING_AND_DRAW, drop_at=100, refusals=None)
    with pytest.raises(CaptureError, match="camera 0 lost"):
        live.run()
    live.log.close()
    events = read_log(path)
    assert [e["event"] for e in events][-3:] == ["dropout", "gave-up", "end"]
    assert events[-1]["moves"] == 1 and len(moves_of(events)) == 1


def test_the_clock_key_pressed_from_another_thread_is_handled_between_frames(tmp_path: Path, scenes: Any) -> None:
    live, path = session(tmp_path, scenes, OPENING_AND_DRAW)
    pressed = threading.Event()

    def press_after_the_first_move(event: dict) -> None:
        if event["event"] == "move" and not pressed.is_set():
            pressed.set()
            threading.Thread(target=live.press_clock).start()

    live.subscribe(press_after_the_first_move)
    live.run()
    live.log.close()
    events = read_log(path)
    kinds = [e["event"] for e in events]
    clock = events[kinds.index("clock")]
    assert clock["confirms"] == 1 and kinds.index("move") < kinds.index("clock")
    # once the clock is in use the draw is a move only when the key ends it: no third move was invented
    assert len(moves_of(events)) == 1 and live.keeper.clock_mode


def test_the_newest_frame_wins_and_older_ones_are_counted() -> None:
    latest = LatestFrame()
    image = np.zeros((2, 2, 3), np.uint8)
    for index in range(3):
        latest.put(Frame(index, index / 10, image))
    assert latest.take().index == 2 and latest.dropped == 2
    assert latest.take(timeout=0.01) is None
    latest.finish()
    assert latest.take() is None and latest.finished


# -- the live command, resumed ---------------------------------------------------------------------------------


@pytest.fixture
def stand_in_reader(monkeypatch: pytest.MonkeyPatch, scenes: Any) -> None:
    import vision.game.pipeline

    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", lambda models=None: scenes.PixelReader())


def record(path: Path, scenes: Any, start: str, script: Script) -> Path:
    """The scripted game filmed, every arm coming in at the middle of its side (:func:`record_seated`)."""
    return record_seated(path, scenes, start, [(side, 0.5, table, count) for side, table, count in script])


def live_command(source: Path, *more: str) -> list[str]:
    return ["live", "--source", str(source), "--fast", "--calibration", "frame", "--json", *more]


def test_live_resume_continues_the_game_in_the_same_log(
    tmp_path: Path, scenes: Any, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    first = record(tmp_path / "first.avi", scenes, START, [("", None, 20), ("bottom", OPENED, 20), ("", None, 30)])
    player_1_opens = ("top", f"{OPENED} [black-11 blue-11 orange-11]", 20)
    second = record(tmp_path / "second.avi", scenes, OPENED, [("", None, 20), player_1_opens, ("", None, 30)])
    log = tmp_path / "final.jsonl"
    assert main(live_command(first, "--log", str(log), "--players", "2", "--profile", "official")) == 0
    before = log.read_bytes()
    with log.open("ab") as raw:
        raw.write(b'{"event": "move", "numb')  # the program was killed mid-line
    capsys.readouterr()

    assert main(live_command(second, "--resume", str(log))) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert log.read_bytes().startswith(before)  # the first game's lines are untouched, the torn one is gone
    events = read_log(log)
    kinds = [e["event"] for e in events]
    assert kinds.count("start") == 1 and kinds.count("resume") == 1 and kinds.count("end") == 2
    resume = events[kinds.index("resume")]
    assert resume["moves"] == 1 and resume["status"]["player"] == 1 and resume["status"]["opened"] == [True, False]
    moves = moves_of(events)
    assert [(m["number"], m["player"], m["ruling"]["verdict"]) for m in moves] == [(1, 0, "ok"), (2, 1, "ok")]
    assert Table.from_json(moves[1]["before"]).same_layout(Table.parse(OPENED))  # the state carried over
    assert moves[1] in printed  # new events go to the listeners as well as the log


def test_live_refuses_to_overwrite_a_log_and_to_resume_a_missing_one(
    tmp_path: Path, scenes: Any, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    video = record(tmp_path / "game.avi", scenes, START, [("", None, 5)])
    log = tmp_path / "final.jsonl"
    log.write_text('{"event": "start", "format": "rummikub-referee/game-log/1"}\n')
    for args, message in (
        (["--log", str(log)], "already there"),
        (["--resume", str(tmp_path / "missing.jsonl")], "cannot read the game log"),
    ):
        assert main(live_command(video, *args)) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert log.read_text().count("\n") == 1


def record_seated(path: Path, scenes: Any, start: str, script: list[tuple[str, float, str | None, int]]) -> Path:
    """As :func:`record`, each arm coming in at a place along its side (a share of it, as the picture runs)."""
    scene = scenes.TableScene()
    scene.show(start)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, scene.size)
    for side, along, table, count in script:
        scene.arm, scene.arm_at = side or None, along
        for k in range(count):
            if table is not None and k == count // 2:
                scene.show(table)
            writer.write(scene.frame())
    writer.release()
    return path


def test_a_six_player_game_is_refereed_by_seat_and_resumes_from_its_log(
    tmp_path: Path, scenes: Any, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two players share each long edge: where an arm comes in along it says whose move it is."""
    bottom_right = ("bottom", 0.75, OPENED, 20)  # player 1 (0-based; seat 5) opens, out of turn
    first = record_seated(
        tmp_path / "first.avi", scenes, START, [("", 0.5, None, 20), bottom_right, ("", 0.5, None, 30)]
    )
    top_left = ("top", 0.25, f"{OPENED} [black-11 blue-11 orange-11]", 20)  # player 4 (seat 7) opens, out of turn
    second = record_seated(
        tmp_path / "second.avi", scenes, OPENED, [("", 0.5, None, 20), top_left, ("", 0.5, None, 30)]
    )
    log = tmp_path / "six.jsonl"
    assert main(live_command(first, "--log", str(log), "--players", "6", "--profile", "official-6p")) == 0
    capsys.readouterr()
    assert main(live_command(second, "--resume", str(log))) == 0
    events = read_log(log)
    resume = next(e for e in events if e["event"] == "resume")
    assert resume["status"]["player"] == 2 and resume["status"]["opened"] == [False, True, False, False, False, False]
    moves = moves_of(events)
    assert [(m["player"], m["seat"], m["turn_order_player"], m["ruling"]["verdict"]) for m in moves] == [
        (1, 5, 0, "ok"),
        (4, 7, 2, "ok"),
    ]


def test_live_passes_threads_and_provider_to_onnx_runtime_and_refuses_what_it_lacks(
    tmp_path: Path, scenes: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--threads`` and ``--provider`` as analyze and batch have them (issue 19): the reader is made with them, and
    a provider ONNX Runtime lacks is refused in one line before the source is opened."""
    import onnxruntime as ort

    import vision.game.pipeline

    made: list[dict[str, Any]] = []

    def reader(models: Any = None, **kwargs: Any) -> Any:
        made.append(kwargs)
        return scenes.PixelReader()

    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", reader)
    video = record(tmp_path / "game.avi", scenes, START, [("", None, 10)])
    assert main(live_command(video, "--log", str(tmp_path / "a.jsonl"), "--threads", "1")) == 0
    assert main(live_command(video, "--log", str(tmp_path / "b.jsonl"))) == 0
    assert made == [{"threads": 1}, {}]  # without the options the reader is made as before (2 threads, CPU)
    capsys.readouterr()
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        assert main(live_command(tmp_path / "missing.avi", "--provider", "cuda")) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--provider cuda" in err and "onnxruntime-gpu" in err
    with pytest.raises(SystemExit) as refused:  # argparse's usage error
        main(live_command(video, "--threads", "0"))
    assert refused.value.code == 2 and "--threads: must be a whole number" in capsys.readouterr().err
