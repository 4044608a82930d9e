"""Never lose a move silently: stretches of the camera nobody looked at make the next move REVIEW (GameKeeper), and
a live session that falls behind the camera says so at once and catches up on the newest frame."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from referee.events import Move
from referee.moves import Verdict
from referee.table import Table
from vision.game.gamelog import GameLog, GameSetup, read_log
from vision.game.moves import GameKeeper
from vision.game.pipeline import PipelineConfig
from vision.runtime.capture import Frame
from vision.session.live import LAG_BOUND_S, KeepingUp, LatestFrame, LiveOptions, LiveSession

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
BROKEN = f"{START} [red-10 red-12]"  # an invalid set laid: REVERT when seen


def keeper_after_first_reading() -> GameKeeper:
    keeper = GameKeeper("official", 2)
    keeper.settled(Table.parse(START), time_s=1.0, frame=10, start_s=None, seat=None, hands=False)
    return keeper


def unread(keeper: GameKeeper, from_s: float, to_s: float) -> dict[str, Any]:
    event = {"event": "unread", "time_s": to_s, "from_s": from_s, "seconds": round(to_s - from_s, 3)}
    keeper.apply(event)
    return event


@pytest.mark.parametrize(
    ("after", "hands", "kind", "seen_verdict"),
    [
        (OPENED, True, "play", "ok"),  # an opening seen after an unread stretch
        (START, True, "draw", "ok"),  # hands came and went, table unchanged: a draw... or a move not seen
        (BROKEN, True, "play", "revert"),  # never a REVERT on a move partly unseen
        (OPENED, False, "play", None),  # the table changed while unread, no hands seen: a move, not a re-read
    ],
)
def test_a_move_after_an_unread_stretch_is_review(after: str, hands: bool, kind: str, seen_verdict: str | None) -> None:
    if seen_verdict is not None:  # the same move fully seen is ruled on its own (the case is not REVIEW anyway)
        seen = keeper_after_first_reading()
        [move] = seen.settled(Table.parse(after), time_s=9.0, frame=90, start_s=5.0, seat=0, hands=hands)
        assert move.ruling.verdict.value == seen_verdict
    keeper = keeper_after_first_reading()
    unread(keeper, 3.0, 5.5)
    [move] = keeper.settled(Table.parse(after), time_s=9.0, frame=90, start_s=6.0, seat=0 if hands else None,
                            hands=hands)  # fmt: skip
    assert isinstance(move, Move) and move.kind == kind
    assert move.ruling.verdict is Verdict.REVIEW and move.ruling.penalty_tiles == 0
    assert any("not read for 2.5 s" in note for note in move.ruling.notes)
    assert keeper.pending is None or not keeper.pending.owed  # nothing is owed on a REVIEW
    assert keeper.unread_s == 0.0


def test_an_unread_stretch_with_no_change_and_no_hands_invents_no_move() -> None:
    keeper = keeper_after_first_reading()
    unread(keeper, 3.0, 5.5)
    assert keeper.settled(Table.parse(START), time_s=9.0, frame=90, start_s=None, seat=None, hands=False) == []
    assert keeper.moves == 0 and keeper.unread_s == 2.5  # still owed to the next move


def test_the_move_after_a_review_for_unread_is_ruled_on_its_own() -> None:
    keeper = keeper_after_first_reading()
    unread(keeper, 3.0, 5.5)
    keeper.settled(Table.parse(OPENED), time_s=9.0, frame=90, start_s=6.0, seat=0, hands=True)
    [draw] = keeper.settled(Table.parse(OPENED), time_s=15.0, frame=150, start_s=12.0, seat=2, hands=True)
    assert (draw.kind, draw.ruling.verdict, draw.ruling.notes) == ("draw", Verdict.OK, ())


def test_a_clock_press_after_an_unread_stretch_is_review_too() -> None:
    keeper = keeper_after_first_reading()
    keeper.clock(time_s=2.0, frame=20)  # the first press: a draw; from now on the clock ends moves
    unread(keeper, 3.0, 4.2)
    events = keeper.clock(time_s=8.0, frame=80, table=Table.parse(START))
    [move] = [e for e in events if isinstance(e, Move)]
    assert (move.kind, move.ruling.verdict) == ("draw", Verdict.REVIEW)


def test_unread_stretches_replay_from_the_log() -> None:
    keeper = keeper_after_first_reading()
    first = Table.parse(START).to_json()
    log = [{"event": "table", "time_s": 1.0, "frame": 10, "reason": "first reading", "table": first}]
    log += [unread(keeper, 3.0, 4.5), unread(keeper, 6.0, 7.0)]
    log += [e.to_json() for e in keeper.settled(Table.parse(OPENED), time_s=9.0, frame=90, start_s=6.0, seat=0,
                                                hands=True)]  # fmt: skip
    log += [unread(keeper, 10.0, 11.5)]
    replayed = GameKeeper("official", 2)
    replayed.replay(log)
    assert replayed.unread_s == keeper.unread_s == 1.5 and replayed.moves == 1
    assert log[3]["ruling"]["verdict"] == "review" and "not read for 2.5 s" in log[3]["ruling"]["notes"][-1]


# -- a live session that falls behind the camera ---------------------------------------------------------------

Timeline = list[tuple[float, str | None, str | None]]
"""(camera second it starts at, the arm's side or None, the table from then on or None: unchanged)."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class TimedCamera:
    """A live camera at 10 frames a second of a fake clock, filming a scene that follows a timeline in camera
    seconds, so what happens while nobody reads the camera is never seen. Each frame waits until the pipeline took
    the one before (a busy machine running the tests slows the game down instead of skipping it); only a reading
    that stalls (:class:`StallingReader`) lets the camera's clock run on."""

    def __init__(self, scene: Any, timeline: Timeline, clock: FakeClock, end_s: float) -> None:
        self.scene, self.timeline, self.clock, self.end_s = scene, timeline, clock, end_s
        self.opened_at: float | None = None
        self.delivered = 0
        self.processed: Any = None
        self.when_done: Any = None

    def open(self, target: str | int) -> TimedCapture:
        return TimedCapture(self)

    def next_frame(self) -> Any:
        import threading

        waited = 0
        while self.processed is not None and self.processed() < self.delivered - 1 and waited < 5000:
            threading.Event().wait(0.001)
            waited += 1
        if self.opened_at is None:
            self.opened_at = self.clock.now
        else:
            self.clock.now += 0.1
        at = self.clock.now - self.opened_at
        if at >= self.end_s and self.when_done is not None:
            done, self.when_done = self.when_done, None
            done()
        arm = None
        for start, side, table in self.timeline:
            if start <= at:
                arm = side
                if table is not None:
                    self.scene.show(table)
        self.scene.arm = arm
        self.delivered += 1
        return self.scene.frame()


class TimedCapture:
    def __init__(self, camera: TimedCamera) -> None:
        self.camera = camera

    def isOpened(self) -> bool:
        return True

    def read(self) -> tuple[bool, Any]:
        return True, self.camera.next_frame()

    def grab(self) -> bool:
        return True

    def get(self, prop_id: int) -> float:
        import cv2

        return 10.0 if prop_id == cv2.CAP_PROP_FPS else 0.0

    def set(self, prop_id: int, value: float) -> bool:
        return False

    def release(self) -> None:
        pass


class StallingReader:
    """The stand-in reader, but the first reading after camera second ``stall_at`` takes ``stall_s`` of the
    camera's clock (a busy machine): it returns only once the session has said it is behind (or after 10 s of
    real time), noting what the session showed meanwhile."""

    def __init__(self, reader: Any, clock: FakeClock, camera: TimedCamera, stall_at: float, stall_s: float) -> None:
        self.reader, self.clock, self.camera = reader, clock, camera
        self.stall_at, self.stall_s = stall_at, stall_s
        self.session: Any = None
        self.stalled = False
        self.warned_during_stall: dict[str, Any] | None = None
        self.shown_during_stall: dict[str, Any] | None = None

    def read(self, image: Any, region: object = None, on_table: Any = None) -> Any:
        import threading

        opened = self.camera.opened_at or 0.0
        if not self.stalled and self.clock.now - opened >= self.stall_at:
            self.stalled = True
            self.clock.now += self.stall_s
            warned = threading.Event()
            self.session.subscribe(lambda e: warned.set() if e["event"] == "behind" else None)
            if warned.wait(10.0):
                self.warned_during_stall = next(e for e in read_log(self.session.log.path) if e["event"] == "behind")
                self.shown_during_stall = self.session.behind
        return self.reader.read(image, region, on_table=on_table)


START_AND_OPENING: Timeline = [(0.0, None, START), (3.0, "bottom", None), (4.5, "bottom", OPENED), (6.0, None, None)]
HIDDEN_DRAW: Timeline = [(10.0, "top", None), (11.6, None, None)]  # player 2 draws while nobody looks
PLAYED = f"{OPENED} [black-11 blue-11 orange-11]"
HIDDEN_PLAY: Timeline = [(10.0, "top", None), (10.8, "top", PLAYED), (11.6, None, None)]
NEXT_PLAY: Timeline = [(18.0, "bottom", None), (19.0, "bottom", f"{OPENED} [red-1 red-2 red-3]"), (20.0, None, None)]
NEXT_PLAY_AFTER_HIDDEN: Timeline = [
    (18.0, "bottom", None),
    (19.0, "bottom", f"{PLAYED} [red-1 red-2 red-3]"),
    (20.0, None, None),
]


def watched(tmp_path: Path, scenes: Any, timeline: Timeline) -> tuple[LiveSession, StallingReader]:
    clock = FakeClock()
    scene = scenes.TableScene()
    camera = TimedCamera(scene, timeline, clock, end_s=27.0)
    log = GameLog.create(tmp_path / "game.jsonl", GameSetup.of("official", 2), {"mode": "live"})
    reader = StallingReader(scenes.PixelReader(), clock, camera, stall_at=9.0, stall_s=3.0)
    # every verification read (reuse_unchanged off): the stall is the still table's first reading after 9 s
    options = LiveOptions(source="0", setup=GameSetup.of("official", 2), calibration="frame",
                          config=PipelineConfig(sample_hz=500.0, reuse_unchanged=False))  # fmt: skip
    capture = {"opener": camera.open, "sleep": clock.sleep, "clock": clock}
    live = LiveSession(options, reader, log, GameKeeper("official", 2), capture_options=capture)
    reader.session = live
    camera.when_done = live.stop
    camera.processed = lambda: live.pipeline.stats.samples if live.pipeline is not None else 1 << 30
    return live, reader


@pytest.mark.parametrize(
    ("hidden", "after"),
    [
        (HIDDEN_DRAW, NEXT_PLAY),  # a draw came and went while a reading stalled
        (HIDDEN_PLAY, NEXT_PLAY_AFTER_HIDDEN),  # a whole play did: the table changed with no hands seen
    ],
)
def test_a_session_behind_the_camera_says_so_at_once_and_rules_review(
    tmp_path: Path, scenes: Any, hidden: Timeline, after: Timeline
) -> None:
    live, reader = watched(tmp_path, scenes, START_AND_OPENING + hidden + after)
    summary = live.run()
    live.log.close()
    events = read_log(live.log.path)
    kinds = [e["event"] for e in events]
    # said while the stalled reading was still going on, and shown to the station
    assert reader.warned_during_stall is not None and reader.warned_during_stall["behind_s"] > LAG_BOUND_S
    assert reader.shown_during_stall is not None and reader.shown_during_stall["behind_s"] > LAG_BOUND_S
    [unread] = [e for e in events if e["event"] == "unread"]
    assert unread["seconds"] == pytest.approx(3.1, abs=0.15) and kinds.index("behind") < kinds.index("unread")
    moves = [e for e in events if e["event"] == "move"]
    assert moves[0]["ruling"]["verdict"] == "ok"  # the opening, seen whole before the stall
    # every move ruled after the stall and before the next one is REVIEW, never OK or a draw taken for granted
    assert [m["ruling"]["verdict"] for m in moves[1:]][:1] == ["review"]
    assert "not read for 3.1 s" in moves[1]["ruling"]["notes"][-1]
    assert all(m["ruling"]["verdict"] != "revert" for m in moves)
    assert "caught-up" in kinds and live.behind is None  # reading kept up again afterwards
    assert summary["keeping_up"]["warnings"] == 1 and summary["keeping_up"]["unread_stretches"] == 1
    assert not any(e["event"] == "table" and e.get("reason") == "re-read, no hands seen" for e in events)


def test_keeping_up_warns_once_per_incident_and_lifts_the_warning_after_keeping_up() -> None:
    watch = KeepingUp(bound_s=0.9, caught_up_s=5.0)
    assert watch.check(100.0, 0) is None  # nothing looked at yet
    assert watch.looking_at(10.0, 0) == []
    assert watch.check(10.8, 3) is None and watch.state is None  # within the bound
    warning = watch.check(11.2, 7)
    assert warning == {"event": "behind", "time_s": 11.2, "behind_s": 1.2, "frames_dropped": 7, "bound_s": 0.9}
    assert watch.check(12.0, 30) is None and watch.state["behind_s"] == 2.0  # the same incident, worse
    events = watch.looking_at(12.1, 31)  # the reading is over: the stretch never looked at goes to the game
    assert events == [{"event": "unread", "time_s": 12.1, "from_s": 10.0, "seconds": 2.1}]
    assert watch.state["unread_s"] == 2.1
    assert watch.looking_at(12.9, 31) == []  # keeping up again, not for long enough yet
    assert [e["event"] for e in watch.looking_at(15.2, 40)] == ["unread"]  # behind again: the same warning
    for step in range(1, 10):  # looking every half second: keeping up, 4.5 s of it
        assert watch.looking_at(15.2 + step / 2, 40) == []
    [caught_up] = watch.looking_at(20.2, 40)
    assert caught_up["event"] == "caught-up" and caught_up["unread_s"] == pytest.approx(4.4)
    assert watch.state is None and watch.summary()["warnings"] == 1 and watch.summary()["unread_stretches"] == 2
    # a stretch that began before the source came back from a dropout is logged, not announced (the source said so)
    assert [e["event"] for e in watch.looking_at(30.0, 40, source_back_s=29.5)] == ["unread"] and watch.state is None


class SlowVideo:
    """A 100-fps video whose frames take 30 ms of real time each to decode (3x slower than it plays)."""

    is_live = False
    fps = 100.0

    def __init__(self, frames: int) -> None:
        self.frames, self.next = frames, 1
        self.passed = 0
        self.stats = SimpleNamespace(dropouts=0)

    def read(self) -> Frame | None:
        import time

        if self.next >= self.frames:
            return None
        time.sleep(0.03)
        index, self.next = self.next, self.next + 1
        return Frame(index, index / self.fps, np.zeros((2, 2, 3), np.uint8))

    def skip(self, n: int) -> int:
        n = min(n, self.frames - self.next)
        self.next += n
        self.passed += n
        return n


def test_a_paced_video_read_too_slowly_passes_frames_to_catch_up_instead_of_queueing(tmp_path: Path) -> None:
    log = GameLog.create(tmp_path / "game.jsonl", GameSetup.of("official", 2), {"mode": "live"})
    live = LiveSession(
        LiveOptions(source="game.mp4", setup=GameSetup.of("official", 2)), None, log, GameKeeper("official", 2)
    )
    source, latest, put = SlowVideo(60), LatestFrame(), []
    original = latest.put
    latest.put = lambda frame: (put.append(frame.index), original(frame))  # type: ignore[method-assign]
    live._read_frames(source, latest)
    log.close()
    assert latest.finished and latest.error is None
    # every frame of the video was either decoded or passed undecoded, and frames were passed: never queued up
    assert len(put) + live.frames_passed == 59 and live.frames_passed == source.passed > 0
    assert any(b - a > 1 for a, b in itertools.pairwise(put)) and put == sorted(put)


def test_the_console_says_when_reading_falls_behind_and_when_it_caught_up() -> None:
    from vision.cli.game_commands import format_event

    behind = {"event": "behind", "time_s": 72.4, "behind_s": 1.04, "frames_dropped": 31, "bound_s": 0.9}
    assert format_event(behind) == (  # describe()'s words, as the station and the report say them
        "[01:12] WARNING: Reading 1.04 s behind the camera: a move now may be missed (31 frames dropped; the next move"
        " is REVIEW)"
    )
    caught_up = {"event": "caught-up", "time_s": 80.0, "since_s": 71.4, "behind_s_max": 2.8, "unread_s": 4.25}
    assert format_event(caught_up) == "[01:20] Reading caught up with the camera (4.25 s never read)"


def test_the_station_shows_the_session_behind_the_camera(tmp_path: Path) -> None:
    from vision.ui.station import Station

    log = GameLog.create(tmp_path / "game.jsonl", GameSetup.of("official", 2), {"mode": "live"})
    live = LiveSession(LiveOptions(source="0", setup=GameSetup.of("official", 2)), None, log, GameKeeper("official", 2))
    station = Station(live)
    assert station.status()["behind"] is None
    live.keeping_up.looking_at(10.0, 0)
    live.record(live.keeping_up.check(11.5, 12))
    shown = station.status()["behind"]
    assert shown["behind_s"] == 1.5 and shown["frames_dropped"] == 12 and shown["since_s"] == 10.0
    assert station.state()["events"][0]["text"] == "Reading 1.5 s behind the camera: a move now may be missed"
    log.close()
