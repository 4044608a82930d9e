"""The referee station's API: addresses, the clock key and overrides reaching the game log, the state the page
draws (REVERT guide, REVIEW tiles), pushed updates, the camera frame, serving in a thread. Who may reach the
station (Host, Origin, page token, secret, throttle) is tested in ``test_station_access.py``."""

from __future__ import annotations

import json
import urllib.request
import wave
from io import BytesIO
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

pytest.importorskip("starlette.testclient")  # needs httpx2 (or httpx)

from starlette.testclient import TestClient

from referee.table import Table
from vision.game.gamelog import GameLog, GameSetup, read_log
from vision.game.moves import GameKeeper
from vision.game.pipeline import TablePipeline
from vision.session.live import LiveOptions, LiveSession
from vision.ui.station import (
    Station,
    StationError,
    create_app,
    parse_bind,
    restore_guide,
    revert_sound,
    serve_in_thread,
    station_address,
)
from vision.ui.station_access import StationAccess, StationAddress

PROFILE = "pl-championship"
START = "[black-1 black-2 black-3]"
SECRET = "a venue secret of 30 characters"
BASE = "http://127.0.0.1:8000"
"""Where the test client says it is (the station's default address: its Host check answers to it)."""


class Game:
    """A real :class:`LiveSession` without a camera: the test settles tables; queued commands are handled
    (as the live loop does between frames) by :meth:`handle`."""

    def __init__(self, path: Path, profile: str = PROFILE, players: int = 2) -> None:
        self.log = GameLog.create(path, GameSetup.of(profile, players), {"mode": "live"}, sync=False)
        self.keeper = GameKeeper(profile, players)
        options = LiveOptions(source="test", setup=GameSetup.of(profile, players))
        self.session = LiveSession(options, None, self.log, self.keeper)
        self.session.pipeline = TablePipeline(None, self.keeper, (640, 480), on_event=self.session.record)
        self.time_s = 0.0

    def settle(
        self,
        table: str | dict[str, Any],
        *,
        hands: bool = True,
        seat: int | None = None,
        after_s: float = 10.0,
        **at_limit: Any,
    ) -> list[dict[str, Any]]:
        """``after_s``: seconds since the last table; ``at_limit``: what the camera saw of the time limit
        (``table_at_limit``, ``touched_after_limit``)."""
        self.time_s += after_s
        self.session.latest_time_s = self.time_s
        parsed = Table.parse(table) if isinstance(table, str) else Table.from_json(table)
        events = self.keeper.settled(
            parsed, time_s=self.time_s, frame=0, start_s=None, seat=seat, hands=hands, **at_limit
        )
        self.session.pipeline.phase = "stable"  # as the pipeline is once a table has settled (the clock key rules)
        for event in events:
            self.session.record(event)
        return [event.to_json() for event in events]  # as logged

    def handle(self) -> None:
        self.session._handle_commands()

    def logged(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in read_log(self.log.path) if e["event"] == kind]


@pytest.fixture
def game(tmp_path: Path) -> Game:
    game = Game(tmp_path / "game.jsonl")
    game.settle(START, hands=False)
    return game


def client_for(game: Game, station: Station | None = None) -> TestClient:
    """A client that behaves as the station's own page: its origin, and the page token in the page's header."""
    access = StationAccess.serving(StationAddress(), 8000)
    app = create_app(station or Station(game.session), access)
    return TestClient(app, base_url=BASE, headers={"Origin": BASE, "X-Station-Token": access.page_token})


# -- addresses and tokens -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bind", "expected"),
    [
        ("127.0.0.1:8000", ("127.0.0.1", 8000)),
        ("localhost:9000", ("localhost", 9000)),
        ("8080", ("127.0.0.1", 8080)),  # a port alone: loopback
        ("[::1]:8001", ("::1", 8001)),
        ("127.0.0.5", ("127.0.0.5", 8000)),  # all of 127/8 is loopback
        ("0.0.0.0:8000", ("0.0.0.0", 8000)),  # every interface (a secret is then required)
        ("192.168.1.20:80", ("192.168.1.20", 80)),
    ],
)
def test_addresses(bind: str, expected: tuple[str, int]) -> None:
    assert parse_bind(bind) == expected


@pytest.mark.parametrize(
    "bind",
    [
        "0.0.0.0:8000",  # reachable from the network
        "referee.local:8000",  # a host name may be anything
        "[::]:8000",
    ],
)
def test_off_loopback_needs_a_secret(bind: str) -> None:
    with pytest.raises(StationError, match="--token-file") as error:
        station_address(bind, environ={})
    assert "\n" not in str(error.value)
    address = station_address(bind, environ={"RUMMIKUB_STATION_TOKEN": SECRET})
    assert address.secret == SECRET and address.secret_source == "RUMMIKUB_STATION_TOKEN"
    assert SECRET not in repr(address)  # never printed by accident


@pytest.mark.parametrize("bind", ["127.0.0.1:http", "127.0.0.1:70000"])
def test_bad_ports(bind: str) -> None:
    with pytest.raises(StationError, match="port"):
        parse_bind(bind)


def test_serve_in_thread_refuses_before_listening(game: Game) -> None:
    with pytest.raises(StationError, match="--token-file"):
        serve_in_thread(game.session, "0.0.0.0:0")
    assert game.session.listeners == []  # nothing was started


# -- actions reach the session and the game log ---------------------------------------------------------------


def test_the_clock_key_reaches_the_session(game: Game) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")  # move 1, ruled when the table settled
    response = client_for(game).post("/api/clock")
    assert response.status_code == 202 and game.session.commands.qsize() == 1
    game.handle()
    (clock,) = game.logged("clock")
    assert clock["confirms"] == 1


def test_overrides_are_completed_for_replay_and_land_in_the_log(game: Game) -> None:
    client = client_for(game)
    (move,) = game.settle(f"{START} [red-1 red-2 red-3]")  # opening below 30: REVERT
    assert move["ruling"]["verdict"] == "revert"

    answer = client.post("/api/override", json={"action": "ok", "move": 1}).json()
    assert answer["queued"] == {"action": "ok", "move": 1, "by": "station", "player": 0,
                                "played": ["red-1", "red-2", "red-3"]}  # fmt: skip
    game.handle()
    assert game.keeper.pending is None and game.keeper.opened == [True, False]
    state = client.get("/api/state").json()
    assert state["banner"]["verdict"] == "ok" and state["banner"]["decision"] == "ok"
    assert state["undo"] == "move 1 is OK"

    assert client.post("/api/override", json={"action": "undo"}).status_code == 202
    game.handle()
    assert game.keeper.pending is not None and game.keeper.opened == [False, False]
    (_, undo) = game.logged("override")
    assert undo["undoes"]["action"] == "ok"
    assert client.get("/api/state").json()["banner"]["verdict"] == "revert"
    assert client.post("/api/override", json={"action": "undo"}).status_code == 422  # nothing left to undo

    # The whole log replays to the same game.
    replayed = GameKeeper(PROFILE, 2)
    replayed.replay(read_log(game.log.path))
    assert replayed.status() == game.keeper.status()


def test_a_correction_re_rules_the_move_and_the_log_keeps_the_ruling(game: Game) -> None:
    client = client_for(game)
    game.settle(f"{START} [red-10 red-11 blue-12]")
    answer = client.post(
        "/api/override", json={"action": "correct", "move": 1, "table": "after", "place": [1, 2], "label": "r12"}
    )
    assert answer.status_code == 202
    assert answer.json()["queued"] | {} == {
        "action": "correct", "move": 1, "by": "station", "table": "after", "place": [1, 2],
        "label": "red-12", "was": "blue-12",
    }  # fmt: skip
    game.handle()
    (logged,) = game.logged("override")
    assert logged["ruling"]["verdict"] == "ok"
    state = client.get("/api/state").json()
    assert state["banner"]["verdict"] == "ok" and state["banner"]["ruled"] == "revert"
    chip = state["banner"]["after"]["sets"][1]["tiles"][2]
    assert chip["label"] == "red-12" and chip["corrected_from"] == "blue-12"
    assert state["moves"][0]["overrides"][0]["text"] == "move 1: after, set 2, tile 3 is blue-12 → red-12"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"action": "shrug", "move": 1}, "unknown override action"),
        ({"action": "ok", "move": 7}, "no move 7"),
        ({"action": "ok"}, "no move None"),
        ({"action": "correct", "move": 1, "table": "during", "place": [0, 0], "label": "red-1"}, "'before' or 'after'"),
        ({"action": "correct", "move": 1, "table": "after", "place": [9, 0], "label": "red-1"}, "no tile at"),
        ({"action": "correct", "move": 1, "table": "after", "place": [0], "label": "red-1"}, "the place"),
        ({"action": "correct", "move": 1, "table": "after", "place": [0, 0], "label": "green-4"}, "colour"),
        ({"action": "undo"}, "no override to undo"),
    ],
)
def test_bad_overrides_are_refused(game: Game, override: dict[str, Any], message: str) -> None:
    game.settle(f"{START} [red-1 red-2 red-3]")
    response = client_for(game).post("/api/override", json=override)
    assert response.status_code == 422 and message in response.json()["error"]
    assert game.session.commands.empty()


def test_an_override_must_be_json(game: Game) -> None:
    response = client_for(game).post("/api/override", content=b"ok please")
    assert response.status_code == 400


# -- what the page shows --------------------------------------------------------------------------------------


def test_state_before_any_move(game: Game) -> None:
    state = client_for(game).get("/api/state").json()
    assert state["banner"]["verdict"] is None
    status = state["status"]
    assert (status["player"], status["opened"], status["time_limit_s"], status["seats"]) == (
        0, [False, False], 60.0, ["bottom", "top"],
    )  # fmt: skip
    chips = state["table"]["sets"][0]["tiles"]
    assert [(c["colour"], c["text"]) for c in chips] == [("black", "1"), ("black", "2"), ("black", "3")]
    assert [e["event"] for e in state["events"]] == ["table", "start"]  # newest first, the log's start included


def test_six_players_are_shown_in_their_seats_two_on_each_long_edge(tmp_path: Path) -> None:
    game = Game(tmp_path / "six.jsonl", "official-6p", 6)
    game.settle(START, hands=False)
    client = client_for(game)
    status = client.get("/api/state").json()["status"]
    assert status["players"] == 6 and status["opened"] == [False] * 6
    assert status["seats"] == ["bottom left", "bottom right", "right", "top right", "top left", "left"]
    game.settle(START, seat=6)  # hands from the top right: player 3 (0-based) draws, out of turn
    move = client.get("/api/moves/1").json()
    assert (move["player"], move["seat"]) == (3, "top right")
    assert client.get("/api/state").json()["status"]["player"] == 4


def test_a_revert_shows_the_layout_to_restore_and_what_to_move(game: Game) -> None:
    # Player 1 breaks black-1..3 to lay black-3 with red-3 and blue-3 (not opened yet: opening-manipulation).
    game.settle("[black-1 black-2] [black-3 red-3 blue-3]")
    banner = client_for(game).get("/api/state").json()["banner"]
    assert banner["verdict"] == "revert" and banner["restore_state"] == "waiting"
    assert banner["penalty_tiles"] == 1 and sorted(banner["to_rack"]) == ["blue-3", "red-3"]
    restore = banner["restore_table"]
    assert [[c["label"] for c in s["tiles"]] for s in restore["sets"]] == [["black-1", "black-2", "black-3"]]
    assert [c.get("mark") for c in restore["sets"][0]["tiles"]] == [None, None, None]  # nothing is missing...
    now = banner["current_table"]
    marked = {c["label"]: c.get("mark") for s in now["sets"] for c in s["tiles"]}
    assert marked == {"black-1": None, "black-2": None, "black-3": None, "red-3": "to-rack", "blue-3": "to-rack"}
    assert all(s["changed"] for s in now["sets"])  # ...but both sets must be rebuilt
    assert sorted(banner["still_to_rack"]) == ["blue-3", "red-3"] and banner["still_to_table"] == []

    game.settle(START)  # put back
    banner = client_for(game).get("/api/state").json()["banner"]
    assert banner["restore_state"] == "restored" and banner["restored"] is True


def test_a_review_names_the_uncertain_tiles(game: Game) -> None:
    after = Table.parse(f"{START} [red-10 red-11 red-12]").to_json()
    after["sets"][1][1] = {"label": "red-11", "confidence": 0.31, "box": [10, 10, 30, 40]}
    game.settle(after)
    state = client_for(game).get("/api/state").json()
    banner = state["banner"]
    assert banner["verdict"] == "review"
    assert [u["text"] for u in banner["uncertain"]] == ["after, set 2, tile 2: red-11?"]
    assert state["table"]["sets"][1]["tiles"][1]["uncertain"] is True


def test_restore_guide_marks_missing_and_extra_tiles() -> None:
    target = Table.parse("[red-1 red-2 red-3] [blue-5 blue-6 blue-7]").to_json()
    now = Table.parse("[red-1 red-2 red-3] [blue-5 blue-6] loose: orange-9").to_json()
    guide = restore_guide(now, target)
    assert guide["to_rack"] == ["orange-9"] and guide["to_table"] == ["blue-7"]
    assert guide["current_marks"] == {(-1, 0): "to-rack"} and guide["restore_marks"] == {(1, 2): "to-table"}
    assert guide["current_changed"] == [1] and guide["restore_changed"] == [1] and not guide["done"]
    assert restore_guide(target, target)["done"]


def test_moves_by_number(game: Game) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")
    client = client_for(game)
    move = client.get("/api/moves/1").json()
    assert move["verdict"] == "ok" and len(move["after"]["sets"]) == 2
    assert client.get("/api/moves/2").status_code == 404


def test_a_move_amended_by_the_same_hands_shows_the_whole_turn(game: Game) -> None:
    # player 1 lays a run (ruled OK at once), pauses, then lays a group: the whole turn amends move 1
    game.settle(f"{START} [red-10 red-11 red-12]", seat=0)
    game.time_s += 5.0
    [amended] = game.keeper.amend(
        Table.parse(f"{START} [red-10 red-11 red-12] [blue-9 red-9 orange-9]"), time_s=game.time_s, frame=0,
        start_s=None, seat=0,
    )  # fmt: skip
    game.session.record(amended)
    state = client_for(game).get("/api/state").json()
    [move] = state["moves"]
    assert (move["number"], move["amended"], move["verdict"]) == (1, True, "ok")
    assert sorted(move["played"]) == ["blue-9", "orange-9", "red-10", "red-11", "red-12", "red-9"]
    assert state["events"][0]["amends"] == 1 and state["events"][0]["text"].startswith("Move 1 (the whole turn")
    # the part's ruling is replaced, not a move of its own: named on the move, its event line marked
    assert move["amends"] == 1
    assert move["amended_text"] == (
        "Amended: the whole turn ruled again; it replaces its first part's ruling (OK at 00:20)"
    )
    assert [e.get("replaced") for e in state["events"] if e["event"] == "move"] == [None, True]  # newest first
    assert state["banner"]["amended_text"] == move["amended_text"]


def test_a_move_amended_twice_as_it_happens_names_both_parts(game: Game) -> None:
    # the station already serving: the lines come as the live loop records them, the turn laid in three parts
    station = Station(game.session)
    client = client_for(game, station)
    game.settle(f"{START} [red-10 red-11 red-12]", seat=0)
    for extra in ("[blue-9 red-9 orange-9]", "[blue-9 red-9 orange-9] [blue-1 blue-2 blue-3]"):
        game.time_s += 5.0
        [amended] = game.keeper.amend(
            Table.parse(f"{START} [red-10 red-11 red-12] {extra}"), time_s=game.time_s, frame=0, start_s=None, seat=0
        )
        game.session.record(amended)
    state = client.get("/api/state").json()
    [move] = state["moves"]
    assert (move["number"], move["amends"], move["verdict"]) == (1, 1, "ok")
    assert move["amended_text"] == (
        "Amended: the whole turn ruled again; it replaces the rulings of its parts (OK at 00:20, OK at 00:25)"
    )
    assert [e.get("replaced") for e in state["events"] if e["event"] == "move"] == [None, True, True]
    # a move not amended says nothing of it
    game.settle(f"{START} [red-10 red-11 red-12] [blue-9 red-9 orange-9] [blue-1 blue-2 blue-3] [red-1 red-2 red-3]",
                seat=1)  # fmt: skip
    latest = client.get("/api/moves/2").json()
    assert (latest["amended"], latest["amends"], latest["amended_text"]) == (False, None, None)


def test_a_move_over_time_shows_the_table_at_the_limit(tmp_path: Path) -> None:
    # przasnysz: 40 s a move; player 1's turn runs from the game's start (the first table read at 10 s), the limit
    # passes at 40 s, the move ends at 45 s
    game = Game(tmp_path / "game.jsonl", profile="przasnysz")
    game.settle(START, hands=False)
    half = Table.parse(f"{START} [red-10 red-11]")
    game.settle(f"{START} [red-10 red-11 red-12]", after_s=35.0, table_at_limit=half, touched_after_limit=True)
    client = client_for(game)
    [listed] = client.get("/api/state").json()["moves"]
    text = "Over the 40 s limit by 5.0 s: the table at the limit: 5 tiles, 2 sets; touched after the limit"
    assert listed["at_limit"] == {"text": text, "passed_s": 40.0, "seen": True, "touched": True}
    move = client.get("/api/moves/1").json()
    assert [[c["label"] for c in s["tiles"]] for s in move["at_limit"]["table"]["sets"]] == [
        ["black-1", "black-2", "black-3"], ["red-10", "red-11"],
    ]  # fmt: skip
    assert [s["valid"] for s in move["at_limit"]["table"]["sets"]] == [True, False]
    # hands over the table when the limit passed: not seen; a move in time has none
    game.settle(START, hands=False)  # the run goes back (the restore)
    game.settle(f"{START} [blue-10 blue-11 blue-12]", after_s=41.0, touched_after_limit=True)
    game.settle(f"{START} [blue-10 blue-11 blue-12] [red-5 red-6 red-7]", after_s=5.0)
    moves = client.get("/api/state").json()["moves"]
    unseen = next(m for m in moves if m["number"] == 2)["at_limit"]
    assert unseen["seen"] is False and "the table at the limit not seen (hands over the table)" in unseen["text"]
    assert client.get("/api/moves/2").json()["at_limit"]["table"] is None
    assert next(m for m in moves if m["number"] == 3)["at_limit"] is None
    assert client.get("/api/moves/3").json()["at_limit"] is None


def test_an_ended_game_keeps_its_last_ruling_with_the_summary_and_refuses_actions(game: Game) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")  # move 1: OK
    client = client_for(game)
    assert client.get("/api/state").json()["ended"] is None
    game.session.record({"event": "end", "time_s": 25.0, "reason": "end of the video", "moves": 1})
    state = client.get("/api/state").json()
    assert state["banner"]["verdict"] == "ok" and state["banner"]["number"] == 1  # the last ruling stays
    ended = state["ended"]
    assert ended == {"reason": "end of the video", "time_s": 25.0, "moves": 1, "restores": 0, "text": ended["text"],
                     "verdicts": {"ok": 1, "revert": 0, "review": 0}}  # fmt: skip
    assert ended["text"] == "1 move: 1 OK, 0 REVERT, 0 REVIEW"
    assert client.post("/api/clock").status_code == 409
    refused = client.post("/api/override", json={"action": "revert", "move": 1})
    assert refused.status_code == 409 and "game is over" in refused.json()["error"]
    assert game.session.commands.qsize() == 0
    game.session.record({"event": "resume", "time_s": 25.0, "moves": 1})  # the same log goes on: a game again
    assert client.get("/api/state").json()["ended"] is None
    assert client.post("/api/clock").status_code == 202


def test_a_resumed_game_is_shown_from_its_log(game: Game) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")
    game.session.listeners.clear()
    state = Station(game.session).state()  # a station started later reads the game so far from the log
    assert [m["number"] for m in state["moves"]] == [1] and state["banner"]["verdict"] == "ok"
    assert [e["event"] for e in state["events"]][:2] == ["move", "table"]


def test_a_bug_in_the_station_never_stops_the_referee(game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    station = Station(game.session)

    def broken(event: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("bug")

    monkeypatch.setattr(station, "_absorb", broken)
    game.settle(f"{START} [red-10 red-11 red-12]")  # the listener fails inside; the move is still logged
    assert len(game.logged("move")) == 1


# -- pushed updates, pictures, sound ----------------------------------------------------------------------------


def test_the_websocket_pushes_state_events_and_ticks(game: Game) -> None:
    client = client_for(game)
    with client.websocket_connect("ws://127.0.0.1:8000/ws") as ws:
        first = ws.receive_json()
        assert first["type"] == "state" and first["state"]["banner"]["verdict"] is None
        game.settle(f"{START} [red-1 red-2 red-3]")
        messages = [ws.receive_json() for _ in range(2)]
        messages = [m for m in messages if m["type"] != "tick"] + [
            ws.receive_json() for _ in range(sum(m["type"] == "tick" for m in messages))
        ]
        event = next(m["event"] for m in messages if m["type"] == "event")
        assert event["event"] == "move" and event["verdict"] == "revert" and event["move"] == 1
        state = next(m["state"] for m in messages if m["type"] == "state")
        assert state["banner"]["verdict"] == "revert" and state["seq"] == event["seq"]
        while (message := ws.receive_json())["type"] != "tick":
            pass
        assert message["status"]["player"] == 1 and message["status"]["elapsed_s"] == 0.0


def test_the_frame_is_the_camera_picture_with_the_reading_drawn(game: Game) -> None:
    now = [0.0]
    client = client_for(game, Station(game.session, clock=lambda: now[0]))
    placeholder = cv2.imdecode(np.frombuffer(client.get("/frame.jpg").content, np.uint8), cv2.IMREAD_COLOR)
    assert placeholder.shape == (540, 960, 3)
    box = {"box": [400, 300, 480, 420], "confidence": 0.99}
    table = {"sets": [[{"label": "red-7", **box}]], "loose": []}
    game.settle(table)
    game.session.latest_image = np.full((1080, 1920, 3), 90, np.uint8)
    now[0] += 0.5  # the camera view is encoded at most twice a second
    response = client.get("/frame.jpg")
    assert response.headers["content-type"] == "image/jpeg" and response.headers["cache-control"] == "no-store"
    frame = cv2.imdecode(np.frombuffer(response.content, np.uint8), cv2.IMREAD_COLOR)
    assert frame.shape == (540, 960, 3)
    assert np.abs(frame[150:210, 200:240].astype(int) - 90).max() > 60  # the box is drawn (scaled by half)
    now[0] += 0.5
    again = client.get("/frame.jpg")  # same frame, same reading: not drawn again, and the page is told so
    assert again.content == response.content and again.headers["etag"] == response.headers["etag"]
    assert client.get("/frame.jpg", headers={"If-None-Match": response.headers["etag"]}).status_code == 304


def test_the_camera_view_shows_the_play_area_read_and_follows_it_when_found_again(game: Game) -> None:
    """Issue 16: the station shows what was chosen, as ``calibrate --preview`` does (green outline, its method)."""
    from vision.runtime.calibrate import Calibration

    now = [0.0]
    client = client_for(game, Station(game.session, clock=lambda: now[0]))
    image = np.full((1080, 1920, 3), 90, np.uint8)
    game.session.latest_image = image

    def green(frame: np.ndarray, x: int, y: int) -> bool:
        b, g, r = frame[y - 2 : y + 3, x - 2 : x + 3].reshape(-1, 3).astype(int).T
        return bool((g - np.maximum(b, r)).max() > 80)

    def view() -> tuple[np.ndarray, str]:
        now[0] += 0.5  # the camera view is encoded at most twice a second
        response = client.get("/frame.jpg")
        return cv2.imdecode(np.frombuffer(response.content, np.uint8), cv2.IMREAD_COLOR), response.headers["etag"]

    plain, _ = view()  # no play area read yet: the picture alone
    assert not any(green(plain, x, y) for x, y in ((400, 50), (100, 300), (850, 300), (400, 500)))
    game.session.pipeline.calibration = Calibration.from_corners([[200, 100], [1700, 100], [1700, 1000], [200, 1000]])
    drawn, tag = view()
    assert drawn.shape == (540, 960, 3)
    assert all(green(drawn, x, y) for x, y in ((400, 50), (100, 300), (850, 300), (400, 500)))  # its sides, halved
    assert not green(drawn, 480, 280) and not green(drawn, 50, 300)  # not inside it, not outside it
    assert np.array_equal(image, np.full_like(image, 90))  # drawn on a copy, never on the camera's frame
    game.session.pipeline.calibration = Calibration.from_corners([[300, 200], [1600, 200], [1600, 900], [300, 900]])
    moved, moved_tag = view()  # found again (the camera moved): the same frame is drawn anew
    assert moved_tag != tag and green(moved, 150, 300) and not green(moved, 100, 300)


def test_the_revert_sound_is_a_short_wav() -> None:
    data = revert_sound()
    with wave.open(BytesIO(data)) as sound:
        assert sound.getnchannels() == 1 and 0.5 < sound.getnframes() / sound.getframerate() < 1.0
    assert len(data) < 50_000


def test_served_in_a_thread(game: Game) -> None:
    heard: list[str] = []
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=heard.append)
    try:
        assert server.url == f"http://127.0.0.1:{server.port}/" and "?" not in server.url
        assert heard == [f"referee station: {server.url} (open it in a browser on this machine)"]
        with urllib.request.urlopen(server.url + "api/state", timeout=5) as response:
            assert json.load(response)["status"]["profile"] == PROFILE
        with pytest.raises(StationError, match="cannot listen"):
            serve_in_thread(game.session, f"127.0.0.1:{server.port}", announce=heard.append)
    finally:
        server.stop()
    assert not server.thread.is_alive()


def test_setup_offers_enrolment_and_names_the_models_in_use(game: Game, tmp_path: Path) -> None:
    assert 'href="/setup"' in client_for(game).get("/").text  # the game page offers the setup step
    page = client_for(game).get("/setup")
    assert page.status_code == 200
    assert "row 2 red" in page.text and "rummikub-referee enrol copy1.jpg copy2.jpg" in page.text
    assert "the shipped models" in page.text
    (tmp_path / "model-card.json").write_text(
        json.dumps({"kind": "enrolment", "created": "2026-11-24T20:00:00+00:00", "photos": [{"name": "<b>a.jpg"}]})
    )
    game.session.reader = type("Reader", (), {"models_dir": tmp_path})()
    text = client_for(game).get("/setup").text
    assert "enrolled 2026-11-24T20:00:00+00:00 from &lt;b&gt;a.jpg" in text


def test_the_station_stays_up_with_the_summary_when_the_video_ends(
    tmp_path: Path, scenes: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``live --serve`` on a video: at its end the console prints the game's summary and the station keeps serving
    the last ruling and the summary until the user stops it (here: the stand-in for Ctrl-C)."""
    import vision.cli.game_commands
    import vision.game.pipeline
    import vision.ui.station
    from vision.cli import main

    scene = scenes.TableScene()
    scene.show("[black-5 blue-5 orange-5]")
    opened = "[black-5 blue-5 orange-5] [red-10 red-11 red-12]"
    video = scene.film(tmp_path / "table.avi", [("", None, 15), ("bottom", opened, 16), ("", None, 40)])
    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", lambda models=None: scenes.PixelReader())
    servers: list[Any] = []
    serve = vision.ui.station.serve_in_thread
    monkeypatch.setattr(
        vision.ui.station, "serve_in_thread", lambda *a, **k: servers.append(serve(*a, **k)) or servers[0]
    )
    seen: list[dict[str, Any]] = []

    def the_referee_reads_the_page_then_stops() -> None:
        with urllib.request.urlopen(servers[0].url + "api/state", timeout=5) as response:
            seen.append(json.loads(response.read()))

    monkeypatch.setattr(vision.cli.game_commands, "_wait_for_stop", the_referee_reads_the_page_then_stops)
    log = str(tmp_path / "game.jsonl")
    status = main(["live", "--source", str(video), "--fast", "--players", "2", "--profile", "official",
                   "--calibration", "frame", "--log", log, "--serve", "127.0.0.1:0"])  # fmt: skip
    assert status == 0
    (state,) = seen  # the station answered after the video had ended
    assert state["ended"]["reason"] == "end of the video"
    assert state["ended"]["text"] == "1 move: 1 OK, 0 REVERT, 0 REVIEW"
    assert state["banner"]["verdict"] == "ok" and state["banner"]["number"] == 1
    captured = capsys.readouterr()
    assert "game summary: 1 move: 1 OK, 0 REVERT, 0 REVIEW; 0 tables restored; game log: " in captured.out
    assert "the station stays up at http://127.0.0.1:" in captured.err and "Ctrl-C stops it" in captured.err
    assert not servers[0].thread.is_alive()  # stopped once the user asked


# -- the referee's words on the table (issue 17) --------------------------------------------------------------


def test_words_on_the_table_land_in_the_log_show_on_the_page_and_undo(game: Game) -> None:
    client = client_for(game)
    answer = client.post("/api/word", json={"event": "redeal", "player": 1, "pairs": 3})
    assert answer.status_code == 202 and answer.json()["queued"] == {"event": "redeal", "player": 1, "pairs": 3,
                                                                     "by": "station"}  # fmt: skip
    game.handle()
    (redeal,) = game.logged("redeal")
    assert redeal["rule"].startswith("pl-championship: seeds/004_edb1b3e580c8d7dd.txt, PRZYGOTOWANIE GRY")
    state = client.get("/api/state").json()
    assert state["status"]["redeals"] == 1 and state["undo"] == "player 2 asks for a re-deal (3 pairs dealt)"
    assert state["events"][0]["text"].startswith("Referee: player 2 asks for a re-deal (3 pairs dealt): pl-champ")
    assert client.post("/api/override", json={"action": "undo"}).status_code == 202
    game.handle()
    assert game.keeper.game.redeals == 0 and game.logged("override")[0]["undoes"]["event"] == "redeal"

    game.settle(START, hands=False)
    assert client.post("/api/word", json={"event": "announced-opening", "player": 1}).status_code == 202
    game.handle()
    assert client.get("/api/state").json()["status"]["declared"] == [1]
    game.settle(START)  # player 1 draws: the declaration is part of the game now
    refused = client.post("/api/override", json={"action": "undo"})
    assert refused.status_code == 422 and "it is no longer undone" in refused.json()["error"]

    assert client.post("/api/word", json={"event": "pool-empty"}).status_code == 202
    game.handle()
    (pool,) = game.logged("pool-empty")
    assert pool["player"] == 0 and "ZAKOŃCZENIE GRY" in pool["rule"]  # the last move drew the last tile
    status = client.get("/api/state").json()["status"]
    assert status["pool_empty"] and status["over"] and status["direction"] == "clockwise"

    replayed = GameKeeper(PROFILE, 2)  # the whole log replays to the same game
    replayed.replay(read_log(game.log.path))
    assert replayed.status() == game.keeper.status()


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ({"event": "rain"}, "unknown word 'rain'"),
        ({"event": "redeal"}, "redeal: which player"),
        ({"event": "redeal", "player": 1, "pairs": 2}, "a re-deal needs 3 pairs among the tiles dealt, not 2"),
        ({"event": "announced-opening", "player": 9}, "player 9 is not one of the 2 at the table"),
        ({"event": "announced-opening", "player": "two"}, "player is a whole number, not 'two'"),
        ({"event": "pool-empty", "cause": "round-time"}, "names no end of the game when the round's time is up"),
        ([1, 2], "a JSON object with an 'event'"),
    ],
)
def test_words_the_game_would_refuse_are_refused_at_once(game: Game, word: Any, message: str) -> None:
    response = client_for(game).post("/api/word", json=word)
    assert response.status_code == 422 and message in response.json()["error"]
    assert game.session.commands.empty()


def test_the_camera_s_orientation_seats_the_players_the_profile_s_way_and_the_page_says_so(tmp_path: Path) -> None:
    # pl-championship plays clockwise seen from above; player 1 at the left of an overhead picture: then the top,
    # the right, the bottom. Mirrored, the same table runs the other way round the picture.
    from vision.runtime.seats import Edge, Orientation

    game = Game(tmp_path / "game.jsonl", players=4)
    game.keeper = game.session.keeper = GameKeeper(PROFILE, 4, orientation=Orientation(Edge.LEFT))
    status = client_for(game).get("/api/state").json()["status"]
    assert status["seats"] == ["left", "top", "right", "bottom"]
    assert status["orientation"] == "player 1 at the left" and status["direction"] == "clockwise"
    assert game.keeper.player_at(0) == 3  # hands from the bottom edge (seat 0) are player 4's
    mirrored = GameKeeper(PROFILE, 4, orientation=Orientation(Edge.LEFT, mirrored=True))
    assert [seat.name for seat in mirrored.seating] == ["left", "bottom", "right", "top"]
    assert [seat.name for seat in GameKeeper(PROFILE, 4).seating] == ["bottom", "right", "top", "left"]  # as logged
