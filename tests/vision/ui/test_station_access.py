"""Who may reach the referee station, and what hostile requests get: the Host check (DNS rebinding), the Origin
check (another site's page, ``Origin: null``), the page token every action carries, the secret asked once off
loopback (read from a file or the environment, never the command line or a URL), the throttle on failed
attempts, and bodies that are malformed, hostile or huge. Every case here was let through (or crashed) before
the station checked it."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette.testclient")  # needs httpx2 (or httpx)

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tests.vision.ui.test_station import START, Game  # the station tests' game without a camera
from vision.ui.station import Station, StationError, create_app, station_address, tile_view
from vision.ui.station_access import (
    FREE_FAILURES,
    MAX_BODY_BYTES,
    MAX_WAIT_S,
    MIN_SECRET_CHARS,
    SECRET_ENV,
    LoginThrottle,
    StationAccess,
    StationAddress,
)

BASE = "http://127.0.0.1:8000"
WS = "ws://127.0.0.1:8000/ws"
SECRET = "correct horse battery staple 42"
LAN = "http://192.168.1.20:8000"
LAN_WS = "ws://192.168.1.20:8000/ws"


class Clock:
    """A clock the test moves (the throttle's waits without sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def game(tmp_path: Path) -> Game:
    game = Game(tmp_path / "game.jsonl")
    game.settle(START, hands=False)
    return game


def station_app(
    game: Game, address: StationAddress | None = None, *, clock: Clock | None = None, names: tuple[str, ...] = ()
) -> tuple[Any, StationAccess]:
    """The station's app for ``address`` (default 127.0.0.1:8000), the machine's names given, the throttle on
    ``clock``."""
    access = StationAccess.serving(address or StationAddress(), 8000, names=lambda: ["localhost", *names])
    throttle = LoginThrottle(clock=clock) if clock is not None else None
    return create_app(Station(game.session), access, throttle=throttle), access


def page_client(game: Game, **kwargs: Any) -> tuple[TestClient, StationAccess]:
    """The station's own page on loopback: same origin, page token in its header."""
    app, access = station_app(game, **kwargs)
    return TestClient(app, base_url=BASE, headers={"Origin": BASE, "X-Station-Token": access.page_token}), access


def lan_station(game: Game, clock: Clock | None = None) -> tuple[Any, StationAccess]:
    return station_app(game, StationAddress("192.168.1.20", 8000, SECRET, "--token-file /etc/station"), clock=clock)


def log_in(client: TestClient, secret: str = SECRET) -> Any:
    return client.post("/login", data={"secret": secret}, headers={"Origin": LAN}, follow_redirects=False)


def page_token(html_text: str) -> str:
    match = re.search(r'<meta name="station-token" content="([^"]+)">', html_text)
    assert match, "the page carries no token"
    return match.group(1)


# -- Host: DNS rebinding --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/api/state", "/api/moves/1", "/frame.jpg", "/static/station.js"])
@pytest.mark.parametrize(
    "host",
    [
        "evil.example:8000",  # a page whose name was re-pointed at 127.0.0.1 (DNS rebinding): GETs too
        "127.0.0.1:8001",  # the right address, another port
        "127.0.0.1",  # no port: port 80, not the station's
        "",
    ],
)
def test_a_foreign_host_reads_nothing(game: Game, path: str, host: str) -> None:
    client, _ = page_client(game)
    response = client.get(path, headers={"Host": host})
    assert response.status_code == 403 and "does not answer to the host" in response.text
    assert "banner" not in response.text


@pytest.mark.parametrize("host", ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "LOCALHOST:8000"])
def test_loopback_names_are_answered(game: Game, host: str) -> None:
    client = TestClient(station_app(game)[0], base_url=BASE)
    assert client.get("/api/state", headers={"Host": host}).status_code == 200


def test_a_foreign_host_cannot_open_the_websocket(game: Game) -> None:
    client, _ = page_client(game)
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        client.websocket_connect("ws://evil.example:8000/ws", headers={"Origin": "http://evil.example:8000"}),
    ):
        pass
    assert closed.value.code == 1008


def test_a_station_on_one_address_answers_only_to_it(game: Game) -> None:
    app, _ = lan_station(game)
    client = TestClient(app, base_url=LAN)
    assert client.get("/static/station.css").status_code == 200
    assert client.get("/static/station.css", headers={"Host": "localhost:8000"}).status_code == 403


def test_every_interface_answers_to_the_machines_names_and_the_allowed_ones(game: Game) -> None:
    address = station_address("0.0.0.0:8000", allow_hosts=["Referee.Local"], environ={SECRET_ENV: SECRET})
    app, access = station_app(game, address, names=("10.1.2.3", "fe80::1"))
    assert access.url == "http://10.1.2.3:8000/"  # what the console line shows: an address others can use
    client = TestClient(app, base_url=BASE)
    for host in ("10.1.2.3:8000", "referee.local:8000", "[fe80::1]:8000", "localhost:8000"):
        assert client.get("/static/station.css", headers={"Host": host}).status_code == 200, host
    assert client.get("/static/station.css", headers={"Host": "evil.example:8000"}).status_code == 403


@pytest.mark.parametrize("name", ["http://referee.local", "referee.local:8000", "a b", "*", "evil/.."])
def test_allow_host_takes_a_name(name: str) -> None:
    with pytest.raises(StationError, match="--allow-host") as error:
        station_address("0.0.0.0", allow_hosts=[name], environ={SECRET_ENV: SECRET})
    assert "\n" not in str(error.value)


# -- Origin: another site's page ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "origin",
    [
        "null",  # a sandboxed frame, a data: page: before, let through
        "http://evil.example",
        "http://127.0.0.1:8001",  # another local port: same site, another origin
        "http://localhost:8000",  # the station under another name than the one asked for
        "https://127.0.0.1:8000",
        None,  # no Origin at all
    ],
)
def test_actions_from_another_origin_are_refused(game: Game, origin: str | None) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")
    client, access = page_client(game)
    headers = {"X-Station-Token": access.page_token}  # even with the page token
    client.headers.pop("Origin")
    if origin is not None:
        headers["Origin"] = origin
    assert client.post("/api/clock", headers=headers).status_code == 403
    override = {"action": "revert", "move": 1}
    assert client.post("/api/override", json=override, headers=headers).status_code == 403
    assert game.session.commands.empty()
    game.handle()
    assert game.logged("clock") == [] and game.logged("override") == []


@pytest.mark.parametrize("origin", ["null", "http://evil.example", "http://127.0.0.1:8001", None])
def test_websockets_from_another_origin_are_refused(game: Game, origin: str | None) -> None:
    client = TestClient(station_app(game)[0], base_url=BASE)
    headers = {} if origin is None else {"Origin": origin}
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        client.websocket_connect(WS, headers=headers),
    ):
        pass
    assert closed.value.code == 1008
    with client.websocket_connect(WS, headers={"Origin": BASE}) as ws:
        assert ws.receive_json()["type"] == "state"


def test_reading_the_game_needs_no_origin(game: Game) -> None:
    """A GET is safe: the page's own GETs (and a curl on the machine) carry no Origin."""
    client = TestClient(station_app(game)[0], base_url=BASE)
    assert client.get("/api/state").status_code == 200


@pytest.mark.parametrize("origin", ["null", "http://evil.example", "http://127.0.0.1:8001"])
def test_reading_from_another_origin_is_refused(game: Game, origin: str) -> None:
    """Another site's fetch names its origin: refused before any state is built for it (CORS would only keep
    the browser from reading the answer)."""
    client = TestClient(station_app(game)[0], base_url=BASE)
    for path in ("/api/state", "/frame.jpg", "/"):
        assert client.get(path, headers={"Origin": origin}).status_code == 403, path


# -- the page token ---------------------------------------------------------------------------------------


def test_the_page_carries_its_token_and_no_url_does(game: Game) -> None:
    client, access = page_client(game)
    page = client.get("/").text
    assert page_token(page) == access.page_token and len(access.page_token) >= 32
    assert "?token" not in page and "{{" not in page
    script = client.get("/static/station.js").text
    assert "X-Station-Token" in script and "token=" not in script


def test_actions_need_the_page_token_even_on_loopback(game: Game) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")
    client, access = page_client(game)
    client.headers.pop("X-Station-Token")
    assert client.post("/api/clock").status_code == 403
    assert client.post("/api/clock", headers={"X-Station-Token": "guess"}).status_code == 403
    assert client.post(f"/api/clock?token={access.page_token}").status_code == 403  # never taken from a URL
    assert client.post("/api/override", json={"action": "ok", "move": 1}).status_code == 403
    assert game.session.commands.empty()
    assert client.post("/api/clock", headers={"X-Station-Token": access.page_token}).status_code == 202


def test_each_station_has_its_own_page_token(game: Game) -> None:
    first, second = station_app(game)[1], station_app(game)[1]
    assert first.page_token != second.page_token


# -- the secret: from a file or the environment, asked once -----------------------------------------------------


def test_a_secret_on_the_command_line_is_refused() -> None:
    with pytest.raises(StationError) as error:
        station_address("127.0.0.1", token=SECRET, environ={})
    message = str(error.value)
    assert "--token-file" in message and SECRET_ENV in message and "ps" in message and "\n" not in message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"tiny secret\n", f"at least {MIN_SECRET_CHARS}"),
        (b"   \n", "has 0 characters"),
        (b"\xff\xfe" + b"x" * 20, "not UTF-8"),
        (b"x" * 5000, "not a secret"),
        (b"sixteen chars\x00and more", "control characters"),
    ],
)
def test_bad_secret_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "secret"
    path.write_bytes(content)
    with pytest.raises(StationError, match=message) as error:
        station_address("0.0.0.0", token_file=path, environ={})
    shown = content.decode("latin-1").strip()
    assert "\n" not in str(error.value) and (len(shown) < 3 or shown not in str(error.value))


def test_secret_sources(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    path.write_text(f"  {SECRET}\n")
    from_file = station_address("0.0.0.0", token_file=path, environ={SECRET_ENV: "another secret of 20+ chars"})
    assert from_file.secret == SECRET and from_file.secret_source == f"--token-file {path}"  # the file first
    assert station_address("0.0.0.0", environ={SECRET_ENV: SECRET}).secret == SECRET
    with pytest.raises(StationError, match="cannot read"):
        station_address("0.0.0.0", token_file=tmp_path / "missing", environ={})
    with pytest.raises(StationError, match=f"{SECRET_ENV}: .* at least"):
        station_address("0.0.0.0", environ={SECRET_ENV: "short"})


def test_with_a_secret_nothing_is_seen_before_logging_in(game: Game) -> None:
    app, _ = lan_station(game)
    client = TestClient(app, base_url=LAN)
    front = client.get("/")
    assert front.status_code == 401 and 'type="password"' in front.text and "station-token" not in front.text
    assert SECRET not in front.text
    for path in ("/api/state", "/api/moves/1", "/frame.jpg", "/static/station.js", "/revert.wav"):
        assert client.get(path).status_code == 401, path
    assert client.get(f"/api/state?token={SECRET}").status_code == 401  # a secret in a URL is no key
    assert client.get("/api/state", headers={"Authorization": f"Bearer {SECRET}"}).status_code == 401
    with (
        pytest.raises(WebSocketDisconnect),
        client.websocket_connect(LAN_WS, headers={"Origin": LAN}),
    ):
        pass
    assert client.get("/static/station.css").status_code == 200  # the login page's look


def test_logging_in_once_gives_a_strict_cookie(game: Game) -> None:
    app, access = lan_station(game)
    client = TestClient(app, base_url=LAN)
    assert log_in(client, "not the secret at all").status_code == 401
    answer = log_in(client)
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{access.cookie_name}=") and SECRET not in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    page = client.get("/")
    assert page.status_code == 200 and page_token(page.text) == access.page_token
    assert client.get("/api/state").status_code == 200
    with client.websocket_connect(LAN_WS, headers={"Origin": LAN}) as ws:
        assert ws.receive_json()["type"] == "state"
    actions = {"Origin": LAN, "X-Station-Token": access.page_token}
    assert client.post("/api/clock", headers=actions).status_code == 202
    assert client.post("/api/clock", headers={"Origin": LAN}).status_code == 403  # still the page token
    assert client.get("/login", follow_redirects=False).status_code == 303


def test_another_sites_form_cannot_log_in(game: Game) -> None:
    client = TestClient(lan_station(game)[0], base_url=LAN)
    answer = client.post("/login", data={"secret": SECRET}, headers={"Origin": "null"}, follow_redirects=False)
    assert answer.status_code == 403 and "set-cookie" not in answer.headers


# -- the throttle -----------------------------------------------------------------------------------------------


def test_500_wrong_secrets_are_not_all_checked(game: Game) -> None:
    clock = Clock()
    client = TestClient(lan_station(game, clock)[0], base_url=LAN)
    statuses, waits = [], []
    for k in range(500):
        answer = log_in(client, f"guess number {k:04d} of many")
        statuses.append(answer.status_code)
        if answer.status_code == 429:
            waits.append(int(answer.headers["Retry-After"]))
        clock.now += 0.01  # 500 tries in 5 s, as fast as a script goes
    checked = statuses.count(401)
    assert checked <= FREE_FAILURES + 1 and statuses.count(429) == 500 - checked
    assert log_in(client).status_code == 429  # while it waits, even the right secret is not checked

    clock.now += MAX_WAIT_S
    for _ in range(4):  # each failure after the free ones doubles the wait
        assert log_in(client, "still not the secret!").status_code == 429
        waits.append(int(log_in(client).headers["Retry-After"]))
        clock.now += waits[-1]
    assert waits[-3:] == sorted(waits[-3:]) and waits[-1] > waits[-3]
    assert log_in(client).status_code == 303  # the wait over, the right secret works


def test_the_throttle_is_per_address(game: Game) -> None:
    clock = Clock()
    app, _ = lan_station(game, clock)
    attacker = TestClient(app, base_url=LAN, client=("192.168.1.66", 50000))
    for _ in range(FREE_FAILURES + 3):
        log_in(attacker, "a wrong guess of some length")
    assert log_in(attacker).status_code == 429
    referee = TestClient(app, base_url=LAN, client=("192.168.1.20", 50000))
    assert log_in(referee).status_code == 303


def test_wrong_page_tokens_are_throttled(game: Game) -> None:
    clock = Clock()
    client, access = page_client(game, clock=clock)
    statuses = [
        client.post("/api/clock", headers={"X-Station-Token": f"guess-{k}"}).status_code
        for k in range(FREE_FAILURES + 5)
    ]
    assert statuses[:FREE_FAILURES] == [403] * FREE_FAILURES and 429 in statuses
    assert client.post("/api/clock").status_code == 429
    clock.now += MAX_WAIT_S + 1
    assert client.post("/api/clock").status_code == 202
    assert access.page_token


def test_cross_site_refusals_never_lock_the_referee_out(game: Game) -> None:
    """A foreign page hammering the station is refused on its origin, before any attempt is counted: it cannot
    make the referee's own page wait."""
    clock = Clock()
    client, _ = page_client(game, clock=clock)
    for k in range(100):
        client.post("/api/clock", headers={"Origin": "null", "X-Station-Token": f"guess-{k}"})
    assert client.post("/api/clock").status_code == 202


def test_throttle_waits() -> None:
    clock = Clock()
    throttle = LoginThrottle(clock=clock, free=2)
    assert [throttle.failed("a") for _ in range(4)] == [0.0, 0.0, 1.0, 2.0]
    assert throttle.wait_s("a") == 2.0 and throttle.wait_s("b") == 0.0
    for _ in range(20):
        throttle.failed("a")
    assert throttle.wait_s("a") == MAX_WAIT_S
    throttle.succeeded("a")
    assert throttle.wait_s("a") == 0.0


def test_a_patient_guesser_waits_the_longest_wait_without_overflow() -> None:
    """Each wait doubles up to the longest; thousands of failures (one per wait) never overflow the doubling."""
    clock = Clock()
    throttle = LoginThrottle(clock=clock, free=0)
    for _ in range(3000):
        clock.now += throttle.failed("a")
    assert throttle.wait_s("a") == 0.0 and throttle.failed("a") == MAX_WAIT_S


# -- bodies -------------------------------------------------------------------------------------------------


def correction(**fields: Any) -> bytes:
    return json.dumps({"action": "correct", "move": 1, "table": "after", **fields}).encode()


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"[" * 100_000 + b"]" * 100_000, 413, "at most"),  # was a RecursionError: a 500 and a traceback
        (b"[" * 5_000 + b"]" * 5_000, 400, "nested too deeply"),  # under the size limit, past the parser's depth
        (b'{"action": "ok", "move": NaN}', 400, "NaN"),
        (b'{"action": "ok", "move": 1e999}', 400, "out of range"),
        (b'{"action": "ok", "move": ' + b"9" * 5000 + b"}", 400, "JSON object"),
        (b"\xff\xfe{}", 400, "JSON object"),
        (b"ok please", 400, "JSON object"),
        (b"", 400, "JSON object"),
        (b"[1, 2]", 422, "JSON object"),
        (b'"revert"', 422, "JSON object"),
        (b'{"action": ' + b"[" * 800 + b"]" * 800 + b"}", 422, "unknown override action"),
        (json.dumps({"action": "x" * 10_000}).encode(), 422, "unknown override action"),
        (correction(place=[0, 0], label="r" * 10_000), 422, "label"),
        (correction(place=[10**30, 0], label="r7"), 422, "place"),
        (b"x" * (MAX_BODY_BYTES + 1), 413, "at most"),
    ],
)
def test_hostile_override_bodies_get_one_line(game: Game, body: bytes, status: int, message: str) -> None:
    game.settle(f"{START} [red-10 red-11 red-12]")
    client, _ = page_client(game)  # raises on any server error: a 500 fails the test
    answer = client.post("/api/override", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status
    text = answer.json()["error"] if answer.headers["content-type"] == "application/json" else answer.text
    assert message in text and "\n" not in text and len(text) < 200
    assert game.session.commands.empty()


def test_a_body_without_a_declared_length_is_cut_short(game: Game) -> None:
    client, _ = page_client(game)

    def chunks() -> Any:
        for _ in range(100):
            yield b"[" * 1024

    answer = client.post("/api/override", content=chunks())  # chunked: no Content-Length to refuse it early
    assert answer.status_code == 400 and "at most" in answer.json()["error"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
override_like = st.fixed_dictionaries(
    {"action": st.sampled_from(["accept", "ok", "revert", "correct", "undo", "x"])},
    optional={
        "move": json_values,
        "table": st.sampled_from(["before", "after", 3]),
        "place": json_values,
        "label": json_values,
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values | override_like)
def test_fuzzed_overrides_never_crash(game: Game, value: Any) -> None:
    client, _ = page_client(game)
    answer = client.post("/api/override", content=json.dumps(value).encode())
    assert answer.status_code in (202, 400, 422)
    if answer.status_code != 202:
        assert "\n" not in answer.json()["error"]
    while not game.session.commands.empty():
        game.session.commands.get_nowait()


# -- what every response says to the browser --------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "host"), [("GET", "/", BASE), ("GET", "/api/state", "evil.example")])
def test_no_page_may_frame_the_station(game: Game, method: str, path: str, host: str) -> None:
    client, _ = page_client(game)
    answer = client.request(method, path, headers={"Host": host.removeprefix("http://")})
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["cross-origin-resource-policy"] == "same-origin"


# -- readings the page shows ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tile", "uncertain"),
    [
        ({"label": "red-5", "confidence": math.nan}, True),  # NaN < 0.5 is False: was shown as certain
        ({"label": "red-5", "confidence": math.inf}, True),
        ({"label": "red-5", "confidence": "high"}, True),  # was a ValueError
        ({"label": "red-5", "confidence": None, "box": [0, 0, 9, 9]}, True),
        ({"label": "red-5", "box": [0, 0, 9, 9]}, True),  # a reading without its confidence
        ({"label": "red-5", "confidence": 0.49}, True),
        ({"label": "red-5", "confidence": 0.97}, False),
        ({"label": "red-5", "confidence": 1.0, "corrected_from": "red-6"}, False),
        ("red-5", False),  # a typed table, not a reading
    ],
)
def test_unusable_confidences_are_uncertain(tile: Any, uncertain: bool) -> None:
    view = tile_view(tile)
    assert view["uncertain"] is uncertain
    assert "confidence" not in view or math.isfinite(view["confidence"])


def test_the_state_is_json_a_browser_reads_even_with_nan_in_the_log(game: Game) -> None:
    after = {"sets": [["black-1", "black-2", "black-3"], [{"label": "red-10", "confidence": math.nan}, "red-11",
             "red-12"]], "loose": []}  # fmt: skip
    game.settle(after)
    game.session.latest_time_s = math.nan
    client, _ = page_client(game)

    def refuse(name: str) -> Any:
        raise ValueError(name)

    state = json.loads(client.get("/api/state").text, parse_constant=refuse)  # as strict as JSON.parse
    assert state["table"]["sets"][1]["tiles"][0]["uncertain"] is True


# -- the command line and a real server -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "environ", "message"),
    [
        (["--serve", "--token", SECRET], {}, "--token puts the station's secret on the command line"),
        (["--serve", "0.0.0.0:0"], {}, "could be reached from other machines"),
        (["--serve", "0.0.0.0:0"], {SECRET_ENV: "too short"}, f"at least {MIN_SECRET_CHARS} are needed"),
        (["--serve", "0.0.0.0:0", "--allow-host", "http://x"], {SECRET_ENV: SECRET}, "--allow-host"),
    ],
)
def test_live_refuses_a_bad_station_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    environ: dict[str, str],
    message: str,
) -> None:
    from vision.cli import main

    monkeypatch.delenv(SECRET_ENV, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    log = tmp_path / "game.jsonl"
    assert main(["live", "--source", str(tmp_path / "none.mp4"), "--log", str(log), *options]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and "Traceback" not in error
    assert SECRET not in error and not log.exists()  # refused before a game log is started


def test_a_served_station_with_a_secret_logs_in_over_http(game: Game) -> None:
    import http.cookiejar
    import urllib.error
    import urllib.request

    from vision.ui.station import serve_in_thread

    heard: list[str] = []
    address = station_address("127.0.0.1:0", environ={SECRET_ENV: SECRET})
    server = serve_in_thread(game.session, address, announce=heard.append)
    try:
        assert heard == [f"referee station: {server.url} (it asks once for the secret from {SECRET_ENV})"]
        jar = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        with pytest.raises(urllib.error.HTTPError) as refused:
            browser.open(server.url + "api/state", timeout=5)
        assert refused.value.code == 401
        form = urllib.request.Request(
            server.url + "login", data=f"secret={SECRET}".encode(), headers={"Origin": server.url.rstrip("/")}
        )
        with browser.open(form, timeout=5) as page:  # 303 to the page, followed with the cookie
            assert page.status == 200 and b'name="station-token"' in page.read()
        with browser.open(server.url + "api/state", timeout=5) as answer:
            assert json.load(answer)["seq"] >= 1
    finally:
        server.stop()
