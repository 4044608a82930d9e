"""``live`` across restarts: a resumed game goes on where its log stops (on the same video, from the frame after
it; on a camera, with the game's clock going on), one process writes a log, Ctrl-C and SIGTERM end a game with
an ``end`` event, a start that fails leaves no log behind, a stream's secrets stay out of the log and the console,
and a log that cannot be replayed is one line naming its line."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.cli import main
from vision.game.gamelog import GameLog, GameSetup, read_log
from vision.game.pipeline import PipelineConfig
from vision.session.live import LiveOptions, LiveSession, LoggedGame

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
PAIR = f"{OPENED} [blue-7 blue-8]"
"""Player 0 lays a pair: REVERT with a penalty."""
Script = list[tuple[str, str | None, int]]
"""(arm side or "", the table it leaves halfway, frames at 10 per second)."""
GAME: Script = [
    ("", None, 20),
    ("bottom", OPENED, 20),  # move 1: player 0 opens
    ("", None, 30),
    ("top", None, 20),  # move 2: player 1 draws
    ("", None, 30),
    ("bottom", PAIR, 20),  # move 3: player 0 lays a pair, sent back
    ("", None, 30),
]
ROOT = Path(__file__).resolve().parents[3]


def record(path: Path, scenes: Any, start: str, script: Script) -> Path:
    scene = scenes.TableScene()
    scene.show(start)
    return scene.film(path, list(script))


@pytest.fixture(scope="module")
def game_video(tmp_path_factory: pytest.TempPathFactory, scenes: Any) -> Path:
    return record(tmp_path_factory.mktemp("video") / "final.avi", scenes, START, GAME)


@pytest.fixture
def reader(monkeypatch: pytest.MonkeyPatch, scenes: Any) -> Any:
    """The reader ``live`` gets instead of the ONNX models (the pixel reader of the scripted scenes)."""
    import vision.game.pipeline

    stand_in = scenes.PixelReader()
    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", lambda models=None: stand_in)
    return stand_in


def live(source: str | Path, *more: str) -> list[str]:
    return ["live", "--source", str(source), "--fast", "--calibration", "frame", "--json", *more]


def moves_of(events: list[dict]) -> list[dict]:
    return [e for e in events if e["event"] == "move"]


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def cut_after_move(log: Path, number: int) -> None:
    """The log as a crash after move ``number`` left it (the lines after it never written)."""
    lines = log.read_text().splitlines()
    last = next(i for i, line in enumerate(lines) if json.loads(line).get("number") == number)
    log.write_text("\n".join(lines[: last + 1]) + "\n")


# -- resuming --------------------------------------------------------------------------------------------------


def test_a_game_resumed_on_its_video_goes_on_after_the_last_logged_move(
    game_video: Path, tmp_path: Path, reader: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "final.jsonl"
    assert main(live(game_video, "--log", str(log), "--players", "2", "--profile", "official")) == 0
    whole = moves_of(read_log(log))
    assert [(m["number"], m["ruling"]["verdict"]) for m in whole] == [(1, "ok"), (2, "ok"), (3, "revert")]
    cut_after_move(log, 2)  # the referee's laptop died after move 2
    stopped_at = moves_of(read_log(log))[-1]["time_s"]

    assert main(live(game_video, "--resume", str(log))) == 0
    events = read_log(log)
    resume = next(e for e in events if e["event"] == "resume")
    assert resume["time_s"] == stopped_at and resume["video"] == str(game_video.resolve())
    after = events[events.index(resume) + 1 :]
    # moves 1 and 2 were not seen again (as moves 3 and 4, with a second penalty for the same opening)
    assert [(m["number"], m["player"], m["ruling"]["verdict"]) for m in moves_of(after)] == [(3, 0, "revert")]
    assert sum(m["ruling"]["penalty_tiles"] for m in moves_of(events)) == 1
    assert all(e["time_s"] > stopped_at for e in after if "time_s" in e)  # the video's own clock, from there on
    assert moves_of(after)[0]["time_s"] == pytest.approx(whole[2]["time_s"], abs=0.5)
    assert [e["event"] for e in after if e["event"] in ("camera-moved", "activity")] == ["activity"]
    assert after[-1]["event"] == "end" and after[-1]["reason"] == "end of the video"


def test_a_game_resumed_on_a_video_it_has_watched_to_the_end_is_one_line(
    game_video: Path, tmp_path: Path, reader: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "final.jsonl"
    assert main(live(game_video, "--log", str(log), "--players", "2")) == 0
    before = log.read_bytes()
    capsys.readouterr()
    assert main(live(game_video, "--resume", str(log))) == 2
    assert "was watched to its end" in one_line_error(capsys)
    assert log.read_bytes() == before  # no resume line left behind


class Camera:
    """A camera on a scripted scene for ``live`` (via the opener), 10 frames a second of a fake clock; when the
    script is over it calls ``when_done`` and then shows the last frame."""

    def __init__(self, scene: Any, script: Script) -> None:
        self.scene = scene
        self.frames = [
            (side, table if k == count // 2 else None) for side, table, count in script for k in range(count)
        ]
        self.now = 500.0
        self.delivered = 0
        self.pipeline_samples: Any = lambda: 1 << 30
        self.when_done: Any = None
        self.last: np.ndarray | None = None

    def clock(self) -> float:
        return self.now

    def open(self, target: str | int) -> Any:
        return self

    def isOpened(self) -> bool:
        return True

    def read(self) -> tuple[bool, np.ndarray | None]:
        for _ in range(500):  # at most a frame ahead of the pipeline, however slow the machine
            if self.pipeline_samples() >= self.delivered - 1:
                break
            threading.Event().wait(0.001)
        self.now += 0.1
        if self.delivered >= len(self.frames):
            if self.when_done is not None:
                done, self.when_done = self.when_done, None
                done()
            return True, self.last
        side, table = self.frames[self.delivered]
        self.scene.arm = side or None
        if table is not None:
            self.scene.show(table)
        self.delivered += 1
        self.last = self.scene.frame()
        return True, self.last

    def grab(self) -> bool:
        return self.read()[0]

    def get(self, prop_id: int) -> float:
        return 10.0 if prop_id == cv2.CAP_PROP_FPS else 0.0

    def set(self, prop_id: int, value: float) -> bool:
        return False

    def release(self) -> None:
        pass


def watch(game: LoggedGame, camera: Camera, reader: Any) -> LiveSession:
    """Run ``game`` on ``camera`` until its script is over; the session, its log closed."""
    setup = game.setup
    options = LiveOptions(source="0", setup=setup, calibration="frame",
                          config=PipelineConfig(sample_hz=500.0), resume=game.resumption)  # fmt: skip
    capture = {"opener": camera.open, "clock": camera.clock, "sleep": lambda s: None}
    session = LiveSession(options, reader, game.log, game.keeper, capture_options=capture)
    camera.when_done = session.stop
    camera.pipeline_samples = lambda: session.pipeline.stats.samples if session.pipeline is not None else 1 << 30
    try:
        session.run()
    finally:
        game.log.close()
    return session


def test_on_a_camera_the_games_clock_goes_on_across_a_restart(tmp_path: Path, scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(START)
    path = tmp_path / "game.jsonl"
    opening: Script = [("", None, 20), ("bottom", OPENED, 20), ("", None, 30), ("", None, 50)]
    watch(LoggedGame.start(path, "0", GameSetup.of("official", 2)), Camera(scene, opening), scenes.PixelReader())
    first = read_log(path)
    stopped_at = first[-1]["time_s"]  # the end event: the camera's 12 s
    assert moves_of(first)[0]["time_s"] < stopped_at

    # the referee's program restarts; the camera's frames are timed from when it opened again
    slow_draw: Script = [("", None, 40), ("top", None, 20), ("", None, 30)]
    game = LoggedGame.resume(path, "0")
    assert game.resumption is not None and (game.resumption.at_s, game.resumption.same_video) == (stopped_at, False)
    watch(game, Camera(scene, slow_draw), scenes.PixelReader())
    events = read_log(path)
    after = events[len(first) :]
    assert after[0]["event"] == "resume" and after[0]["time_s"] == stopped_at
    assert all(e["time_s"] >= stopped_at for e in after if "time_s" in e)  # not from 0 again
    [draw] = moves_of(after)
    # player 1's turn began with move 1 and goes on through the restart: 8 s before it, about 6 s after
    assert draw["number"] == 2 and draw["player"] == 1 and draw["turn_started_s"] == moves_of(first)[0]["time_s"]
    assert draw["elapsed_s"] == pytest.approx(draw["time_s"] - draw["turn_started_s"], abs=0.01)
    assert draw["elapsed_s"] > stopped_at - draw["turn_started_s"] + 5.0
    assert [e["event"] for e in after if e["event"] == "camera-moved"] == []


# -- one writer per log ----------------------------------------------------------------------------------------

HOLD = """
import sys
from vision.game.gamelog import GameLog
log, _ = GameLog.resume(sys.argv[1])
print("holding", flush=True)
sys.stdin.read()
log.close()
"""


@pytest.mark.parametrize("how", ["--resume", "--log"])
def test_a_second_live_on_a_log_being_written_is_refused_in_one_line(
    game_video: Path, tmp_path: Path, reader: Any, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    log = tmp_path / "final.jsonl"
    GameLog.create(log, GameSetup.of("official", 2), {"mode": "live"}).close()
    before = log.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, cwd=ROOT)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
        assert main(live(game_video, how, str(log), "--players", "2")) == 2
        error = one_line_error(capsys)
        assert f"{log} is being written by another referee process" in error
    finally:
        holder.communicate("", timeout=20)
    assert log.read_bytes() == before


# -- a start that fails ----------------------------------------------------------------------------------------


def test_a_source_that_cannot_be_opened_leaves_no_log_behind(
    game_video: Path, tmp_path: Path, reader: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "final.jsonl"
    empty = tmp_path / "empty.avi"
    empty.write_bytes(b"RIFF\x00\x00\x00\x00AVI LIST" + bytes(200))  # a header and not one frame
    for source in (tmp_path / "missing.mp4", empty):
        assert main(live(source, "--log", str(log), "--players", "2")) == 2
        assert str(source) in one_line_error(capsys)
        assert not log.exists()  # no stub: the same --log works next time
    assert main(live(game_video, "--log", str(log), "--players", "2")) == 0
    kept = log.read_bytes()
    capsys.readouterr()
    assert main(live(tmp_path / "missing.mp4", "--resume", str(log))) == 2
    one_line_error(capsys)
    assert log.read_bytes() == kept  # a failed resume leaves the log as it was: no resume line


def test_a_first_player_who_is_not_at_the_table_is_one_line(
    game_video: Path, tmp_path: Path, reader: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "final.jsonl"
    for first, message in (
        ("0", "argument --first-player: must be a whole number of at least 1, not 0"),  # wrapped around before
        ("-1", "argument --first-player: must be a whole number of at least 1, not -1"),
        ("\u0663", "argument --first-player: not a whole number"),  # an Arabic-Indic 3, which int() reads
        ("3", "--first-player is 1 to 2 at a 2-player table, not 3"),
    ):
        with pytest.raises(SystemExit) if first != "3" else contextlib.nullcontext():
            assert main(live(game_video, "--log", str(log), "--players", "2", "--first-player", first)) == 2
        assert message in one_line_error(capsys)
    assert not log.exists()


# -- Ctrl-C and SIGTERM ------------------------------------------------------------------------------------------


class SignallingReader:
    """The stand-in reader, which sends this process ``signal`` at its ``after``-th reading (as a referee pressing
    Ctrl-C, or a service manager stopping the program, in the middle of a game)."""

    def __init__(self, reader: Any, sent: signal.Signals, after: int = 2) -> None:
        self.reader, self.sent, self.after = reader, sent, after
        self.calls = 0

    def read(self, image: np.ndarray, region: object = None, on_table: Any = None) -> Any:
        self.calls += 1
        if self.calls == self.after:
            os.kill(os.getpid(), self.sent)
        return self.reader.read(image, region, on_table=on_table)


@pytest.mark.parametrize(("sent", "reason"), [(signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")])
def test_ctrl_c_and_sigterm_end_the_game_with_an_end_event(
    game_video: Path,
    tmp_path: Path,
    scenes: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sent: signal.Signals,
    reason: str,
) -> None:
    import vision.game.pipeline

    monkeypatch.setattr(
        vision.game.pipeline, "pipeline_reader", lambda models=None: SignallingReader(scenes.PixelReader(), sent)
    )
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    log = tmp_path / "final.jsonl"
    status = main(["live", "--source", str(game_video), "--fast", "--calibration", "frame", "--log", str(log),
                   "--players", "2"])  # fmt: skip
    assert status == 0
    events = read_log(log)
    assert events[-1]["event"] == "end" and events[-1]["reason"] == reason
    assert events[-1]["time_s"] < 10.0  # stopped early in the 17 s game, not at its end
    out = capsys.readouterr().out
    moves = events[-1]["moves"]
    assert f"Game ended after {moves} move{'' if moves == 1 else 's'} ({reason})" in out  # still printed
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers  # put back
    GameLog.resume(log)[0].close()  # closed cleanly: the lock was let go, and the log continues


# -- secrets in a stream's address -----------------------------------------------------------------------------


def test_a_streams_password_and_token_reach_neither_the_log_nor_the_console(
    tmp_path: Path, scenes: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import vision.game.pipeline
    import vision.runtime.capture

    url = "rtsp://admin:hunter2@cam.local:554/live?token=s3cret&channel=1"
    scene = scenes.TableScene()
    scene.show(START)
    camera = Camera(scene, [("", None, 30)])
    opened: list[Any] = []
    monkeypatch.setattr(vision.runtime.capture, "_default_opener", lambda target: opened.append(target) or camera)
    signalling = SignallingReader(scenes.PixelReader(), signal.SIGTERM, after=3)  # once the table is read
    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", lambda models=None: signalling)
    log = tmp_path / "final.jsonl"
    assert main(["live", "--source", url, "--calibration", "frame", "--log", str(log), "--players", "2"]) == 0
    assert opened == [url]  # the camera is reached with the real address
    shown = "rtsp://admin:***@cam.local:554/live?token=***&channel=1"
    start = read_log(log)[0]
    assert start["source"] == shown and "video" not in start
    captured = capsys.readouterr()
    for text in (log.read_text(), captured.out, captured.err):
        assert "hunter2" not in text and "s3cret" not in text
    log.unlink()

    def refuses(target: str | int) -> Any:
        raise cv2.error("connection refused")

    monkeypatch.setattr(vision.runtime.capture, "_default_opener", refuses)
    assert main(["live", "--source", url, "--log", str(log), "--players", "2"]) == 2
    error = one_line_error(capsys)
    assert shown in error and "hunter2" not in error and "s3cret" not in error


# -- a log that cannot be replayed -----------------------------------------------------------------------------


def logged_game(tmp_path: Path, game_video: Path) -> list[dict]:
    """The events of the scripted game, as ``live`` logs them."""
    log = tmp_path / "played.jsonl"
    assert main(live(game_video, "--log", str(log), "--players", "2")) == 0
    return read_log(log)


def first_move(events: list[dict]) -> int:
    return next(i for i, e in enumerate(events) if e["event"] == "move")


@pytest.mark.parametrize(
    ("spoil", "line", "message"),
    [
        (lambda ev: ev[0].pop("profile"), 1, "the start line's profile is missing"),
        (lambda ev: ev[0].pop("players"), 1, "the start line's players is missing"),
        (lambda ev: ev[0].update(profile="no-such-rules"), 1, 'profile is "no-such-rules", not one of'),
        (lambda ev: ev[0].update(profile=[]), 1, "profile is []"),
        (lambda ev: ev[0].update(first_player=5), 1, "first_player is 5, not 0 to 1"),
        (lambda ev: ev[0].update(time_limit_s=float("nan")), 1, "time_limit_s is nan"),
        (lambda ev: ev[first_move(ev)].pop("after"), "move", "move 1 lacks 'after'"),
        (lambda ev: ev[first_move(ev)].pop("ruling"), "move", "move 1 lacks 'ruling'"),
        (lambda ev: ev[first_move(ev)].update(player=4), "move", "move 1 is by player 4, not one of the 2"),
        (lambda ev: ev[first_move(ev)].update(time_s=float("nan")), "move", "move 1: time_s is nan"),
        (lambda ev: ev[first_move(ev)].update(number=2), "move", "move 2 follows move 0"),
    ],
)
def test_a_log_that_cannot_be_replayed_is_one_line_naming_its_line(
    game_video: Path,
    tmp_path: Path,
    reader: Any,
    capsys: pytest.CaptureFixture[str],
    spoil: Any,
    line: int | str,
    message: str,
) -> None:
    events = logged_game(tmp_path, game_video)
    spoil(events)
    log = tmp_path / "spoilt.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))  # json writes NaN, and reads it back
    before = log.read_bytes()
    number = first_move(events) + 1 if line == "move" else line
    capsys.readouterr()
    assert main(live(game_video, "--resume", str(log))) == 2
    error = one_line_error(capsys)
    assert f"{log}:{number}: " in error and message in error, error
    assert log.read_bytes() == before
    GameLog.resume(log)[0].close()  # and the lock was let go


# -- a video that cannot be read -------------------------------------------------------------------------------


def test_live_on_a_mostly_undecodable_video_is_an_error_not_a_quiet_game(
    game_video: Path, tmp_path: Path, reader: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    data = bytearray(game_video.read_bytes())
    starts = [i for i in range(len(data) - 2) if data[i : i + 3] == b"\xff\xd8\xff"]
    rng = np.random.default_rng(7)
    for start in starts[15:]:  # every frame after the first 1.5 s starts with noise instead of its JPEG header
        data[start : start + 300] = rng.integers(0, 256, 300, dtype=np.uint8).tobytes()
    spoilt = tmp_path / "spoilt.avi"
    spoilt.write_bytes(bytes(data))
    log = tmp_path / "final.jsonl"
    assert main(live(spoilt, "--log", str(log), "--players", "2")) == 2
    err = capsys.readouterr().err.splitlines()
    end = read_log(log)[-1]
    lost = end["damage"]["unreadable_frames"]
    assert end["event"] == "end" and lost > 85 and end["damage"]["frames"] == 170
    assert err[-1] == (
        f"rummikub-referee: error: video {str(spoilt)!r}: {lost} of 170 frames could not be decoded"
        f" ({100 * lost // 170} %): the game could not really be refereed"
    )


@pytest.mark.parametrize(
    ("fields", "limit"),
    [({}, 60.0), ({"time_limit_s": None}, 60.0), ({"time_limit_s": "none"}, None), ({"time_limit_s": 30}, 30.0)],
)  # an old log's time limit: missing or null the profile's (official: 60 s), "none" none, seconds agreed
def test_live_resume_goes_on_under_the_time_limit_an_old_log_was_played_under(
    tmp_path: Path, fields: dict[str, Any], limit: float | None
) -> None:
    path = tmp_path / "old.jsonl"
    start = {"event": "start", "format": "rummikub-referee/game-log/1", "profile": "official", "players": 2,
             "source": "0", "mode": "live", **fields}  # fmt: skip
    path.write_text(json.dumps(start) + "\n", encoding="utf-8")
    game = LoggedGame.resume(path, "0", sync=False)
    game.log.close()
    assert game.setup.rules.time_limit_s == limit and game.keeper.game.time_limit_s == limit
    assert [e["event"] for e in read_log(path)] == ["start", "resume"]
