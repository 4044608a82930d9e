"""Other sites' pages against the referee station, in a real browser (Chromium through Playwright).

A page served on another local port (another origin, the same site) tries what a hostile page open in the
referee's browser would: post an override with ``fetch`` (with and without CORS), press the clock from a
sandboxed frame (``Origin: null``: this one used to switch rulings off for the rest of the game), submit a
form, open the WebSocket, frame the station to trick a click, and read the state through a name re-pointed at
127.0.0.1 (DNS rebinding, emulated by Chromium's host resolver rules). Every attempt must reach the station and
be refused there, the game log must hold none of them, and the station's own page must still work.

Without Playwright or Chromium these tests are skipped.
"""

from __future__ import annotations

import http.server
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium to drive (apt-get install chromium)")

from tests.vision.ui.test_station_browser import OPENING, START, Game, eventually  # noqa: E402
from vision.ui.station import StationServer, serve_in_thread  # noqa: E402

REBOUND = "evil.example"
"""A name Chromium resolves to 127.0.0.1 here: a DNS-rebinding attacker's name after the switch."""
ATTACKS = {
    "/fetch.html": """<script>
      window.results = {};
      async function attempt(name, send) {
        try { const answer = await send(); window.results[name] = answer.type + " " + answer.status; }
        catch (error) { window.results[name] = "blocked"; }
      }
      (async () => {
        const revert = JSON.stringify({action: "revert", move: 1});
        await attempt("override-cors", () => fetch("STATION/api/override",
          {method: "POST", headers: {"Content-Type": "application/json"}, body: revert}));
        await attempt("override-no-cors", () => fetch("STATION/api/override",
          {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: revert}));
        await attempt("clock-no-cors", () => fetch("STATION/api/clock", {method: "POST", mode: "no-cors"}));
        await attempt("state", () => fetch("STATION/api/state"));
        window.done = true;
      })();
    </script>""",
    "/sandbox.html": """<script>
      window.answers = [];
      window.addEventListener("message", (event) => window.answers.push(event.data));
    </script>
    <iframe sandbox="allow-scripts" srcdoc="<script>
      const post = (path, body) => fetch('STATION/' + path, {method: 'POST', mode: 'no-cors', body})
        .then(() => parent.postMessage(path + ' sent', '*'), () => parent.postMessage(path + ' blocked', '*'));
      post('api/clock', '').then(() => post('api/override', JSON.stringify({action: 'revert', move: 1})));
    </script>"></iframe>""",
    "/form.html": """<iframe name="sink"></iframe>
    <form id="attack" method="POST" action="STATION/api/override" enctype="text/plain" target="sink">
      <input name='{"action": "revert", "move": 1, "x": "' value='"}'>
    </form>
    <script>document.getElementById("attack").submit(); window.done = true;</script>""",
    "/ws.html": """<script>
      window.heard = 0; window.closed = false;
      const socket = new WebSocket("WEBSOCKET");
      socket.onmessage = () => { window.heard += 1; };
      socket.onerror = () => { window.failed = true; };
      socket.onclose = () => { window.closed = true; };
    </script>""",
    "/frame.html": """<iframe id="victim" src="STATION" width="1200" height="800"></iframe>""",
}


class AttackSite:
    """Another origin on this machine (a plain HTTP server on another port) serving :data:`ATTACKS`."""

    def __init__(self, station_url: str) -> None:
        station = station_url.rstrip("/")
        websocket = station.replace("http:", "ws:") + "/ws"
        pages = {
            path: html.replace("STATION", station).replace("WEBSOCKET", websocket) for path, html in ATTACKS.items()
        }

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path, "").encode()
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"]
        )
        yield browser
        browser.close()


@pytest.fixture
def game(tmp_path: Path) -> Iterator[Game]:
    game = Game(tmp_path / "game.jsonl")
    game.settle(START, hands=False)
    game.settle(OPENING)  # move 1: player 1 opens, OK (what the attacks try to revert)
    yield game
    game.close()


@pytest.fixture
def station(game: Game) -> Iterator[StationServer]:
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    yield server
    server.stop()


@pytest.fixture
def site(station: StationServer) -> Iterator[AttackSite]:
    site = AttackSite(station.url)
    yield site
    site.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context
    context.close()


@pytest.fixture
def refusals(caplog: pytest.LogCaptureFixture) -> Callable[[], list[tuple[str, str, int]]]:
    """(method, path, status) of every request the station refused so far, from its log (the browser sees only a
    network error for most of them: a refused preflight, or an answer another origin may not read)."""
    caplog.set_level(logging.INFO, logger="vision.ui.station_access")

    def refused() -> list[tuple[str, str, int]]:
        return [
            (str(r.args[0]), str(r.args[1]), int(r.args[3]))  # type: ignore[index]
            for r in caplog.records
            if r.name == "vision.ui.station_access" and r.msg.startswith("station: refused")
        ]

    return refused


def assert_the_game_untouched(game: Game) -> None:
    time.sleep(0.3)  # the game's command loop runs every 30 ms: anything queued would be handled by now
    assert game.session.commands.empty()
    assert game.logged("override") == [] and game.logged("clock") == []
    assert [m["number"] for m in game.logged("move")] == [1] and game.keeper.pending is None


def test_another_origin_cannot_post_an_override_or_press_the_clock(
    context: Any, game: Game, site: AttackSite, refusals: Callable[[], list[tuple[str, str, int]]]
) -> None:
    page = context.new_page()
    page.goto(site.url + "/fetch.html")
    page.wait_for_function("window.done === true")
    # The browser learns nothing: a refused preflight, answers another origin may neither read nor use.
    assert page.evaluate("window.results") == dict.fromkeys(("override-cors", "override-no-cors", "clock-no-cors",
                                                             "state"), "blocked")  # fmt: skip
    assert_the_game_untouched(game)
    assert {
        ("OPTIONS", "/api/override", 403),  # the JSON override's preflight: the POST itself never left the browser
        ("POST", "/api/override", 403),  # a "simple" request, sent without asking: refused on its Origin
        ("POST", "/api/clock", 403),
        ("GET", "/api/state", 403),  # a read naming another origin: the state is not even built for it
    } <= set(refusals())


def test_a_sandboxed_frame_with_origin_null_is_refused(
    context: Any, game: Game, site: AttackSite, refusals: Callable[[], list[tuple[str, str, int]]]
) -> None:
    page = context.new_page()
    page.goto(site.url + "/sandbox.html")
    page.wait_for_function("window.answers.length === 2")
    assert_the_game_untouched(game)  # before, this clock press switched rulings off for the rest of the game
    assert {("POST", "/api/clock", 403), ("POST", "/api/override", 403)} <= set(refusals())


def test_another_sites_form_is_refused(
    context: Any, game: Game, site: AttackSite, refusals: Callable[[], list[tuple[str, str, int]]]
) -> None:
    page = context.new_page()
    page.goto(site.url + "/form.html")
    eventually(lambda: ("POST", "/api/override", 403) in refusals())
    assert_the_game_untouched(game)


def test_another_origin_cannot_listen_on_the_websocket(
    context: Any, station: StationServer, site: AttackSite, refusals: Callable[[], list[tuple[str, str, int]]]
) -> None:
    page = context.new_page()
    page.goto(site.url + "/ws.html")
    page.wait_for_function("window.failed === true || window.closed === true")
    assert page.evaluate("window.heard") == 0
    assert ("WEBSOCKET", "/ws", 403) in refusals() and station.station.pages == 0


def test_no_page_can_frame_the_station(context: Any, station: StationServer, site: AttackSite) -> None:
    """Framed under another page, the station's buttons could be clicked by a referee tricked into it."""
    page = context.new_page()
    with page.expect_response(station.url):  # the station answers, and the browser will not show it in a frame
        page.goto(site.url + "/frame.html")
    time.sleep(0.5)
    victim = next(frame for frame in page.frames if frame != page.main_frame)
    assert victim.query_selector("#clock-key") is None


def test_a_rebound_name_reads_nothing(context: Any, station: StationServer) -> None:
    rebound = station.url.replace("127.0.0.1", REBOUND)
    page = context.new_page()
    for path in ("", "api/state", "frame.jpg"):
        answer = page.goto(rebound + path)
        assert answer is not None and answer.status == 403, path
        assert "banner" not in page.content()


def test_the_stations_own_page_still_acts(context: Any, game: Game, station: StationServer) -> None:
    page = context.new_page()
    page.goto(station.url)
    page.wait_for_selector("#moves li.move")
    page.click("#banner-actions button[data-action=revert]")  # the referee orders a revert: it is recorded
    eventually(lambda: game.logged("override"))
    assert game.logged("override")[0]["action"] == "revert"
    time.sleep(0.6)  # a press this soon after a click would be a bounce
    page.click("#clock-key")
    eventually(lambda: game.logged("clock"))
