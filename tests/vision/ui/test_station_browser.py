"""The referee station in a real browser (Chromium through Playwright): the page follows the game, shows a
REVERT with the layout to restore and a REVIEW with its uncertain tiles, the clock key (button and space bar)
ends moves, and the referee's overrides land in the game log. One test serves a real live session.

The REVERT is laid out on every screen a referee may bring (laptops from 1280 x 720, Full HD, 4K, a tablet held
upright): the verdict, the tiles to send back and the layout to restore must be in view without scrolling, readable,
and not covered by the buttons; the referee can rule from the keyboard alone; a game that has ended stays on the page.

Screenshots go to ``$STATION_SCREENSHOTS`` (default: ``build/screenshots`` in the repository, which git ignores), for CI
to keep as artifacts. CI needs ``pip install playwright`` and Debian's ``chromium``; without either these tests are
skipped.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium to drive (apt-get install chromium)")

from referee.table import Table  # noqa: E402
from vision.game.gamelog import GameLog, GameSetup, read_log  # noqa: E402
from vision.game.moves import GameKeeper  # noqa: E402
from vision.game.pipeline import PipelineConfig, TablePipeline  # noqa: E402
from vision.session.live import LiveOptions, LiveSession  # noqa: E402
from vision.ui.station import StationServer, serve_in_thread  # noqa: E402

PROFILE = "pl-championship"
START = (
    "[black-1 black-2 black-3] [red-7 blue-7 orange-7] [orange-9 orange-10 orange-11 orange-12] [blue-4 blue-5 blue-6]"
)
OPENING = f"{START} [red-10 red-11 red-12]"
BROKEN = (
    "[black-1 black-2] [red-7 blue-7 orange-7] [orange-9 orange-10 orange-11 orange-12] [blue-4 blue-5 blue-6]"
    " [black-3 red-3 blue-3]"
)
"""Player 1, not opened yet, takes black-3 from a run for a group of 3s: REVERT."""
WAIT_MS = 10_000
INK_BGR = {"black": (20, 20, 20), "red": (30, 20, 200), "blue": (190, 70, 10), "orange": (0, 120, 240)}


def shots_folder() -> Path:
    default = Path(__file__).resolve().parents[3] / "build" / "screenshots"
    folder = Path(os.environ.get("STATION_SCREENSHOTS") or default)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def photo(text: str, uncertain: tuple[str, ...] = ()) -> tuple[dict[str, Any], np.ndarray]:
    """Table JSON with boxes, and a camera picture (1280 x 720, tiles drawn) that goes with it."""
    table = Table.parse(text).to_json()
    image = np.empty((720, 1280, 3), np.uint8)
    image[:] = (60, 110, 45)
    for row, tiles in enumerate(table["sets"]):
        for k, label in enumerate(tiles):
            x, y = 80 + k * 58 + (row % 2) * 300, 60 + row * 105
            box = [x, y, x + 54, y + 76]
            cv2.rectangle(image, (x, y), (x + 54, y + 76), (215, 235, 245), -1)
            colour, _, number = label.partition("-")
            ink = INK_BGR.get(colour, (120, 0, 160))
            cv2.putText(image, number or "J", (x + 6, y + 52), cv2.FONT_HERSHEY_SIMPLEX, 1.2, ink, 3)
            confidence = 0.35 if label in uncertain else 0.97
            tiles[k] = {"label": label, "box": box, "confidence": confidence}
    return table, image


class Game:
    """A :class:`LiveSession` without a camera: the test lays tables; a thread handles the queued clock presses
    and overrides as the live loop does (one lock: one writer of the game at a time)."""

    def __init__(self, path: Path, profile: str = PROFILE, players: int = 2) -> None:
        self.log = GameLog.create(path, GameSetup.of(profile, players), {"mode": "live"}, sync=False)
        self.keeper = GameKeeper(profile, players)
        options = LiveOptions(source="test", setup=GameSetup.of(profile, players))
        self.session = LiveSession(options, None, self.log, self.keeper)
        self.session.pipeline = TablePipeline(None, self.keeper, (1280, 720), on_event=self.session.record)
        self.lock = threading.Lock()
        self.time_s = 0.0
        self._stop = threading.Event()
        self._loop = threading.Thread(target=self._handle, daemon=True)
        self._loop.start()

    def settle(
        self, text: str, *, hands: bool = True, uncertain: tuple[str, ...] = (), after_s: float = 10.0, **at_limit: Any
    ) -> None:
        """``after_s``: seconds since the last table; ``at_limit``: what the camera saw of the time limit."""
        table, image = photo(text, uncertain)
        with self.lock:
            self.time_s += after_s
            self.session.latest_image, self.session.latest_time_s = image, self.time_s
            events = self.keeper.settled(
                Table.from_json(table), time_s=self.time_s, frame=0, start_s=None, seat=None, hands=hands, **at_limit
            )
            self.session.pipeline.phase = "stable"  # as the pipeline is once a table has settled
            for event in events:
                self.session.record(event)

    def amend(self, text: str, *, after_s: float = 5.0) -> None:
        """The same hands went on with the last move after it was ruled: the whole turn ruled again (``amends``)."""
        table, image = photo(text)
        with self.lock:
            self.time_s += after_s
            self.session.latest_image, self.session.latest_time_s = image, self.time_s
            events = self.keeper.amend(Table.from_json(table), time_s=self.time_s, frame=0, start_s=None, seat=None)
            assert events, "the game could not amend its last move"
            for event in events:
                self.session.record(event)

    def _handle(self) -> None:
        while not self._stop.wait(0.03):
            with self.lock:
                self.session._handle_commands()

    def logged(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in read_log(self.log.path) if e["event"] == kind]

    def close(self) -> None:
        self._stop.set()
        self._loop.join(2)
        self.log.close()


def verdict(name: str) -> re.Pattern[str]:
    """The banner's class for a verdict (a fresh REVERT also flashes)."""
    return re.compile(rf"\bbanner {name}\b")


def has(event: dict[str, Any], expected: dict[str, Any]) -> bool:
    return {key: event.get(key) for key in expected} == expected


def eventually(check: Callable[[], Any], timeout: float = WAIT_MS / 1000) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            assert value, "the condition never came true"
            return value
        time.sleep(0.05)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"]
        )
        yield browser
        browser.close()


@pytest.fixture
def game(tmp_path: Path) -> Iterator[Game]:
    game = Game(tmp_path / "game.jsonl")
    game.settle(START, hands=False)
    yield game
    game.close()


@pytest.fixture
def server(game: Game) -> Iterator[StationServer]:
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    yield server
    server.stop()


@pytest.fixture
def page(browser: Any, server: StationServer) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(server.url)
    page.wait_for_selector("#current-table .chip")
    yield page
    context.close()
    assert errors == [], errors


def wait_until(page: Any, condition: str) -> None:
    """Until a JavaScript expression is true on the page (polled from here: the station's Content-Security-Policy
    forbids the eval that Playwright's ``wait_for_function`` uses)."""
    eventually(lambda: page.evaluate(condition))


def seq_after(page: Any, seq: int) -> None:
    wait_until(page, f"Number(document.body.dataset.seq) > {seq}")


def screenshot(page: Any, name: str) -> None:
    """The whole page, once the camera view has caught up with the table."""
    frames = int(page.evaluate("document.body.dataset.frames"))
    wait_until(page, f"Number(document.body.dataset.frames) >= {frames + 2}")
    page.screenshot(path=str(shots_folder() / name))


def seq(page: Any) -> int:
    return int(page.evaluate("document.body.dataset.seq"))


def test_the_page_follows_the_game(page: Any, game: Game) -> None:
    expect = sync_api.expect
    expect(page.locator("#player-name")).to_have_text("Player 1")
    expect(page.locator("#current-table .chip")).to_have_count(13)
    expect(page.locator("#current-table .chip.red").first).to_have_text("7")
    expect(page.locator("#banner")).to_have_class(verdict("none"))
    expect(page.locator("#timer-value")).not_to_have_text("--:--")
    wait_until(page, "Number(document.body.dataset.frames) >= 1")
    before = page.locator("#frame").screenshot()

    shown = seq(page)
    game.settle(OPENING)  # player 1 opens with 33 points
    seq_after(page, shown)
    expect(page.locator("#banner")).to_have_class(verdict("ok"))
    expect(page.locator("#events li").first).to_contain_text("Move 1: player 1 played red-10 red-11 red-12: OK")
    expect(page.locator("#moves li.move")).to_have_count(1)
    expect(page.locator("#player-name")).to_have_text("Player 2")
    expect(page.locator("#players .player").first).to_contain_text("opened")
    expect(page.locator("#current-table .chip")).to_have_count(16)
    frames = int(page.evaluate("document.body.dataset.frames"))
    wait_until(page, f"Number(document.body.dataset.frames) >= {frames + 2}")
    assert page.locator("#frame").screenshot() != before  # the camera view shows the new table
    screenshot(page, "station-normal.png")


def test_a_revert_shows_the_layout_to_restore(page: Any, game: Game) -> None:
    expect = sync_api.expect
    shown = seq(page)
    game.settle(BROKEN)
    seq_after(page, shown)
    expect(page.locator("#banner")).to_have_class(verdict("revert"))
    expect(page.locator("#banner-verdict")).to_have_text("REVERT")
    expect(page.locator("#banner-body")).to_contain_text("opening-manipulation")
    expect(page.locator("#banner-body")).to_contain_text("penalty 1 tile")
    expect(page.locator("#panel-restore")).to_be_visible()
    restore = page.locator("#restore-table .set").first.locator(".chip")
    expect(restore).to_have_text(["1", "2", "3"])
    expect(page.locator("#current-table .chip.to-rack")).to_have_count(2)  # red-3 and blue-3 go back
    expect(page.locator("#current-table .set.changed")).to_have_count(2)
    assert page.evaluate("document.body.dataset.sounds") == "1"  # the REVERT sound played
    screenshot(page, "station-revert.png")

    shown = seq(page)
    game.settle(START)  # the table is put back
    seq_after(page, shown)
    expect(page.locator(".restore-state")).to_have_text("Table restored ✓")


def test_a_review_names_the_uncertain_tiles(page: Any, game: Game) -> None:
    expect = sync_api.expect
    shown = seq(page)
    game.settle(OPENING, uncertain=("red-11",))
    seq_after(page, shown)
    expect(page.locator("#banner")).to_have_class(verdict("review"))
    expect(page.locator("#banner-body")).to_contain_text("Uncertain reading: after, set 5, tile 2: red-11?")
    expect(page.locator("#current-table .chip.uncertain")).to_have_count(1)
    screenshot(page, "station-review.png")


def test_a_move_over_time_shows_the_table_at_the_limit(page: Any, game: Game) -> None:
    expect = sync_api.expect
    shown = seq(page)
    # pl-championship: 60 s a move from the game's start; the opening ends at 65 s, the run two tiles at 60 s
    at_limit = Table.parse(f"{START} [red-10 red-11]")
    game.settle(OPENING, after_s=55.0, table_at_limit=at_limit, touched_after_limit=True)
    seq_after(page, shown)
    expect(page.locator("#moves li.move .at-limit")).to_have_text(
        "Over the 60 s limit by 5.0 s: the table at the limit: 15 tiles, 5 sets; touched after the limit"
    )
    page.click("#moves li.move button[data-action=correct]")
    expect(page.locator("#correct-dialog")).to_be_visible()
    expect(page.locator("#correct-at-limit-box")).to_be_visible()
    expect(page.locator("#correct-at-limit-title")).to_have_text("At the time limit (01:00), touched after it")
    expect(page.locator("#correct-at-limit .set").last.locator(".chip")).to_have_text(["10", "11"])
    expect(page.locator("#correct-at-limit .set.invalid")).to_have_count(1)  # two tiles: not a set yet
    expect(page.locator("#correct-at-limit .chip[data-table]")).to_have_count(0)  # shown, not corrected there
    screenshot(page, "station-late-move.png")
    page.click("#correct-cancel")
    expect(page.locator("#correct-dialog")).to_be_hidden()


def test_an_amended_move_shows_the_whole_turn_once(page: Any, game: Game) -> None:
    # player 1 opens with a run (ruled OK at once), pauses, then lays a group: the whole turn amends move 1
    expect = sync_api.expect
    shown = seq(page)
    game.settle(OPENING)
    seq_after(page, shown)
    expect(page.locator("#moves li.move .amended-note")).to_have_count(0)
    shown = seq(page)
    game.amend(f"{OPENING} [blue-9 red-9 orange-9]")
    seq_after(page, shown)
    note = "Amended: the whole turn ruled again; it replaces its first part's ruling (OK at 00:20)"
    expect(page.locator("#moves li.move")).to_have_count(1)  # one move, not two
    expect(page.locator("#moves li.move.amended .amended-note")).to_have_text(note)
    expect(page.locator("#moves li.move .what .chip")).to_have_count(6)  # the whole turn's tiles
    expect(page.locator("#banner-body .amended-note")).to_have_text(note)
    expect(page.locator('#events li[data-event="move"]')).to_have_count(2)  # both lines, as logged
    expect(page.locator("#events li").first).to_contain_text("Move 1 (the whole turn, ruled again)")
    expect(page.locator("#events li.replaced")).to_have_count(1)  # the part's line, struck through
    expect(page.locator("#events li.replaced")).to_contain_text("Move 1: player 1 played red-10 red-11 red-12: OK")
    screenshot(page, "station-amended.png")


def test_the_timer_warns_before_the_limit(page: Any, game: Game) -> None:
    expect = sync_api.expect
    started = game.keeper.turn_started_s
    game.session.latest_time_s = started + 52.0  # pl-championship: 60 s a move
    expect(page.locator("#timer")).to_have_class(re.compile(r"\bwarn\b"))
    expect(page.locator("#timer-value")).to_have_text(re.compile(r"00:0[5-8]"))
    game.session.latest_time_s = started + 61.0
    expect(page.locator("#timer")).to_have_class(re.compile(r"\bover\b"))
    expect(page.locator("#timer-value")).to_have_text("TIME")


def test_the_clock_key_ends_moves(page: Any, game: Game) -> None:
    page.click("#clock-key")
    eventually(lambda: len(game.logged("move")) == 1)  # the first press: player 1 drew a tile
    assert game.logged("move")[0]["kind"] == "draw" and game.keeper.player == 1
    time.sleep(0.6)  # a second press this soon would count as a bounce
    page.keyboard.press("Space")
    eventually(lambda: len(game.logged("move")) == 2)
    assert len(game.logged("clock")) == 2 and game.keeper.player == 0
    sync_api.expect(page.locator("#moves li.move")).to_have_count(2)


def test_overrides_land_in_the_game_log(page: Any, game: Game) -> None:
    expect = sync_api.expect
    shown = seq(page)
    game.settle(BROKEN)
    seq_after(page, shown)
    page.click("#banner-actions button[data-action=ok]")  # the referee overrules: the move stands
    eventually(lambda: game.logged("override"))
    assert has(game.logged("override")[0], {"action": "ok", "move": 1, "player": 0})
    expect(page.locator("#banner")).to_have_class(verdict("ok"))
    assert game.keeper.pending is None

    page.click("#undo")
    eventually(lambda: len(game.logged("override")) == 2)
    assert game.logged("override")[1]["undoes"]["action"] == "ok"
    expect(page.locator("#banner")).to_have_class(verdict("revert"))
    assert game.keeper.pending is not None

    # A misread: the group's blue-3 was really orange-3 (still a revert: the run was broken).
    page.click("#banner-actions button[data-action=correct]")
    expect(page.locator("#correct-dialog")).to_be_visible()
    page.click("#correct-after .chip[data-set='4'][data-pos='2']")
    page.fill("#correct-label", "o3")
    page.click("#correct-save")
    eventually(lambda: len(game.logged("override")) == 3)
    correct = game.logged("override")[2]
    assert has(correct, {"action": "correct", "table": "after", "place": [4, 2], "label": "orange-3"})
    assert correct["ruling"]["verdict"] == "revert"
    expect(page.locator("#correct-dialog")).to_be_hidden()
    expect(page.locator("#moves li.move .override")).to_have_count(2)  # the OK (struck out: undone), the correction
    expect(page.locator("#moves li.move .override.undone")).to_have_count(1)


def test_a_real_live_session(browser: Any, tmp_path: Path, scenes: Any) -> None:
    """A recorded table played at its own pace through a real :class:`LiveSession` and the station."""
    scene = scenes.TableScene()
    start, opened = "[black-5 blue-5 orange-5]", "[black-5 blue-5 orange-5] [red-10 red-11 red-12]"
    scene.show(start)
    video = scene.film(tmp_path / "table.avi", [("", None, 15), ("bottom", opened, 16), ("", None, 60)])

    log = GameLog.create(tmp_path / "game.jsonl", GameSetup.of("official", 2), {"mode": "live"}, sync=False)
    options = LiveOptions(source=str(video), setup=GameSetup.of("official", 2), calibration="frame",
                          config=PipelineConfig(sample_hz=10.0))  # fmt: skip
    session = LiveSession(options, scenes.PixelReader(), log, GameKeeper("official", 2))
    server = serve_in_thread(session, "127.0.0.1:0", announce=lambda _: None)
    runner = threading.Thread(target=session.run, daemon=True)
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    try:
        page = context.new_page()
        page.goto(server.url)
        runner.start()
        expect = sync_api.expect
        expect(page.locator("#current-table .chip")).to_have_count(3, timeout=WAIT_MS)
        expect(page.locator("#banner")).to_have_class(verdict("ok"), timeout=WAIT_MS)
        expect(page.locator("#current-table .chip")).to_have_count(6)
        wait_until(page, "Number(document.body.dataset.frames) >= 1")
        page.click("#banner-actions button[data-action=revert]")  # the referee sends the opening back
        expect(page.locator("#banner")).to_have_class(verdict("revert"), timeout=WAIT_MS)
        expect(page.locator("#restore-table .chip")).to_have_count(3)
    finally:
        session.stop()
        runner.join(10)
        server.stop()
        context.close()
        log.close()
    events = read_log(log.path)
    (override,) = [e for e in events if e["event"] == "override"]
    assert has(override, {"action": "revert", "move": 1, "player": 0, "by": "station"})


def test_six_players_fit_the_header_in_their_seats(browser: Any, tmp_path: Path) -> None:
    game = Game(tmp_path / "six.jsonl", "official-6p", 6)
    game.settle(START, hands=False)
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#current-table .chip")
        names = page.locator("#players .player .name")
        sync_api.expect(names).to_have_count(6)
        assert names.all_inner_texts() == ["P1 · bottom left", "P2 · bottom right", "P3 · right", "P4 · top right",
                                           "P5 · top left", "P6 · left"]  # fmt: skip
        sync_api.expect(page.locator("#player-seat")).to_contain_text("bottom left of the picture")
        boxes = [box for box in (name.bounding_box() for name in names.all()) if box]
        assert len(boxes) == 6 and all(box["height"] < 1.6 * 24 for box in boxes)  # each on one line (24 px type)
        assert all(box["x"] >= 0 and box["x"] + box["width"] <= 1920 for box in boxes)  # none cut off
        screenshot(page, "six-players.png")
    finally:
        context.close()
        server.stop()
        game.close()


def test_a_restarted_station_gives_the_open_page_its_new_token(browser: Any, game: Game) -> None:
    """The page token is made anew when the station starts: a page left open reads it again when it reconnects,
    so the referee's buttons keep working without a reload."""
    first = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(first.url)
        sync_api.expect(page.locator("#connection")).to_have_text("live")
        first.stop()
        sync_api.expect(page.locator("#connection")).not_to_have_text("live")
        second = serve_in_thread(game.session, f"127.0.0.1:{first.port}", announce=lambda _: None)
        try:
            assert second.access.page_token != first.access.page_token
            sync_api.expect(page.locator("#connection")).to_have_text("live", timeout=WAIT_MS)
            eventually(lambda: page.evaluate("document.body.dataset.seq") != "0")
            time.sleep(0.5)  # the token is read again just after the reconnection
            page.click("#clock-key")
            eventually(lambda: game.logged("clock"))
        finally:
            second.stop()
    finally:
        context.close()


# -- every screen a referee may bring ---------------------------------------------------------------------------

SCREENS = {
    "1280x720": (1280, 720),  # the smallest laptop screen
    "1366x768": (1366, 768),  # the most common laptop screen
    "1400x900": (1400, 900),
    "1920x1080": (1920, 1080),
    "3840x2160": (3840, 2160),  # 4K at 100 %
    "1024x1366": (1024, 1366),  # a tablet held upright
}
MEASURE = """(() => {
  const box = (node) => { const r = node.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height, text: node.textContent.trim().slice(0, 40)}; };
  const all = (selector) => [...document.querySelectorAll(selector)].map(box);
  const one = (selector) => { const node = document.querySelector(selector); return node ? box(node) : null; };
  const scrolls = (id) => { const panel = document.getElementById(id);
    return panel.scrollHeight > panel.clientHeight + 1 || panel.scrollWidth > panel.clientWidth + 1; };
  const style = (selector) => { const node = document.querySelector(selector);
    return node ? getComputedStyle(node) : {fontSize: "0"}; };
  return {
    viewport: [innerWidth, innerHeight],
    page: [document.documentElement.scrollWidth, document.documentElement.scrollHeight],
    badge: one("#banner-verdict"), banner: one("#banner"), title: one("#banner-body .banner-title"),
    reasons: one("#banner-body ul"), sendBack: one("#send-back"), restore: one("#panel-restore"),
    current: one("#panel-current"), buttons: all("#banner-actions button"), tag: one("#moves .move .tag"),
    restoreChips: all("#restore-table .chip"), sendBackChips: all("#send-back .chip"),
    restoreScrolls: scrolls("panel-restore"), currentScrolls: scrolls("panel-current"),
    badgeFont: parseFloat(style("#banner-verdict").fontSize),
    chipFont: parseFloat(style("#restore-table .chip").fontSize),
    playerFont: parseFloat(style("#player-name").fontSize),
  };
})()"""
READABLE_PX = {"badge": 40.0, "chips": 28.0, "player": 26.0, "late_chips": 18.0}
"""Type sizes readable from two metres (a 40 px font is 10 mm on a 15.6-inch 1366 x 768 screen, 0.25 mm a pixel);
a late game's 44 tiles, read up close by whoever restores the table, at 18 px or more (25 px at 1280 x 720 and 20 px
upright were measured when this was written)."""


def inside(box: dict[str, Any], width: float, height: float) -> bool:
    return box["x"] >= -1 and box["y"] >= -1 and box["x"] + box["w"] <= width + 1 and box["y"] + box["h"] <= height + 1


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        a["x"] < b["x"] + b["w"] - 1
        and b["x"] < a["x"] + a["w"] - 1
        and a["y"] < b["y"] + b["h"] - 1
        and (b["y"] < a["y"] + a["h"] - 1)
    )


LATE_START = (
    "[black-1 black-2 black-3 black-4] [red-7 blue-7 orange-7 black-7] [orange-9 orange-10 orange-11 orange-12]"
    " [blue-4 blue-5 blue-6] [red-1 red-2 red-3 red-4 red-5] [black-10 red-10 blue-10] [blue-11 blue-12 blue-13]"
    " [orange-1 orange-2 orange-3] [black-8 black-9 black-10 black-11] [red-12 blue-12 orange-12 black-12]"
    " [red-8 red-9 red-10 red-11] [orange-4 orange-5 orange-6]"
)
"""A late game: 12 sets, 44 tiles on the table."""
SPLIT = ("[black-1 black-2 black-3 black-4]", "[black-1 black-2] [black-3 black-4 red-3 blue-3]")
LATE_BROKEN = LATE_START.replace(*SPLIT)
"""Player 1, not opened yet, splits a run and adds two 3s from the rack."""


@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_revert_fits_every_screen(browser: Any, game: Game, screen: str) -> None:
    """The REVERT badge, the tiles to send back and the layout to restore in view without scrolling, large enough to
    read from two metres, and none of them under a button; a screenshot of each screen for CI to keep."""
    seen = revert_on_screen(browser, game, screen, START, BROKEN, "station-revert")
    width, height = SCREENS[screen]
    assert_fits(seen, width, height, restored_tiles=13)
    assert seen["badgeFont"] >= READABLE_PX["badge"]
    assert seen["chipFont"] >= READABLE_PX["chips"]
    assert seen["playerFont"] >= READABLE_PX["player"]


@pytest.mark.parametrize("screen", ["1280x720", "1024x1366"])
def test_a_late_game_revert_fits_the_smallest_screens(browser: Any, game: Game, screen: str) -> None:
    """44 tiles on the table: the chips shrink to fit, and everything still shows whole without scrolling."""
    seen = revert_on_screen(browser, game, screen, LATE_START, LATE_BROKEN, "station-late-revert")
    assert_fits(seen, *SCREENS[screen], restored_tiles=44)
    assert seen["badgeFont"] >= READABLE_PX["badge"]
    assert seen["chipFont"] >= READABLE_PX["late_chips"]


def revert_on_screen(browser: Any, game: Game, screen: str, start: str, broken: str, name: str) -> dict[str, Any]:
    """The page at a screen's size after ``broken`` was ruled REVERT (from ``start``): what MEASURE finds."""
    width, height = SCREENS[screen]
    if start != START:
        game.settle(start, hands=False)
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#current-table .chip")
        shown = seq(page)
        game.settle(broken)
        seq_after(page, shown)
        sync_api.expect(page.locator("#banner")).to_have_class(verdict("revert"))
        page.evaluate("document.getAnimations().forEach((a) => a.finish())")  # the REVERT flash, over
        screenshot(page, f"{name}-{screen}.png")
        return page.evaluate(MEASURE)
    finally:
        context.close()
        server.stop()


def assert_fits(seen: dict[str, Any], width: int, height: int, *, restored_tiles: int) -> None:
    assert seen["viewport"] == [width, height]
    assert seen["page"][0] <= width and seen["page"][1] <= height, f"the page scrolls: {seen['page']}"
    assert seen["sendBack"] is not None and len(seen["sendBackChips"]) == 2  # red-3 and blue-3 back to the rack
    assert len(seen["restoreChips"]) == restored_tiles
    shown_whole = [seen["badge"], seen["tag"], seen["banner"], seen["sendBack"], seen["restore"]]
    shown_whole += seen["sendBackChips"] + seen["restoreChips"] + seen["buttons"]
    assert [b["text"] for b in shown_whole if not inside(b, width, height)] == []
    assert not seen["restoreScrolls"], "the layout to restore is cut off in its panel"
    assert [b["text"] for b in seen["restoreChips"] if not inside_box(b, seen["restore"])] == []
    assert seen["badge"]["h"] < 2 * seen["badgeFont"], "REVERT does not fit on one line"
    assert len(seen["buttons"]) == 3
    covered = [seen[k] for k in ("badge", "title", "reasons", "sendBack", "restore", "current")]
    assert [(b["text"], c["text"]) for b in seen["buttons"] for c in covered if overlap(b, c)] == []


def inside_box(box: dict[str, Any], outer: dict[str, Any]) -> bool:
    moved = {**box, "x": box["x"] - outer["x"], "y": box["y"] - outer["y"]}
    return inside(moved, outer["w"], outer["h"])


def test_the_keyboard_alone_rules(page: Any, game: Game) -> None:
    """Without a mouse: O overrules the REVERT, U undoes that, A lets the revert stand; the space bar is the clock."""
    expect = sync_api.expect
    shown = seq(page)
    game.settle(BROKEN)
    seq_after(page, shown)
    expect(page.locator("#banner-actions kbd")).to_have_text(["A", "O", "C"])
    page.keyboard.press("o")
    eventually(lambda: game.logged("override"))
    assert has(game.logged("override")[0], {"action": "ok", "move": 1})
    expect(page.locator("#banner")).to_have_class(verdict("ok"))
    expect(page.locator("#undo")).to_be_enabled()
    page.keyboard.press("u")
    eventually(lambda: len(game.logged("override")) == 2)
    expect(page.locator("#banner")).to_have_class(verdict("revert"))
    page.keyboard.press("a")
    eventually(lambda: len(game.logged("override")) == 3)
    assert has(game.logged("override")[2], {"action": "accept", "move": 1})
    page.keyboard.press("c")
    expect(page.locator("#correct-dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#correct-dialog")).to_be_hidden()
    page.keyboard.press("x")  # no key of its own: nothing happens
    time.sleep(0.3)
    assert len(game.logged("override")) == 3


def test_the_page_stays_with_the_summary_when_the_game_ends(page: Any, game: Game) -> None:
    """A video watched to its end: the last ruling and the game's summary stay; nothing is left to press."""
    expect = sync_api.expect
    shown = seq(page)
    game.settle(BROKEN)
    seq_after(page, shown)
    shown = seq(page)
    with game.lock:
        game.session.record({"event": "end", "time_s": 30.0, "reason": "end of the video", "moves": 1})
    seq_after(page, shown)
    expect(page.locator("#game-over")).to_be_visible()
    expect(page.locator("#game-over")).to_contain_text("End of the video")
    expect(page.locator("#over-summary")).to_have_text("1 move: 0 OK, 1 REVERT, 0 REVIEW")
    expect(page.locator("#banner")).to_have_class(verdict("revert"))  # the last ruling stays
    expect(page.locator("#banner-actions button").first).to_be_disabled()
    expect(page.locator("#clock-key")).to_be_hidden()
    expect(page.locator("#timer")).to_be_hidden()  # no move is being timed any more
    expect(page.locator("#events li").first).to_have_text("00:30Game ended after 1 move")
    page.keyboard.press("o")
    page.keyboard.press("Space")
    time.sleep(0.5)
    assert game.logged("override") == [] and game.logged("clock") == []
    expect(page.locator("#connection")).to_have_text("live")
    screenshot(page, "station-game-over.png")


def test_a_review_fits_the_smallest_screen(browser: Any, game: Game) -> None:
    """A REVIEW on a 1280 x 720 laptop: its badge, the uncertain reading named, the tile marked on the table, the
    buttons over none of them."""
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#current-table .chip")
        shown = seq(page)
        game.settle(OPENING, uncertain=("red-11",))
        seq_after(page, shown)
        sync_api.expect(page.locator("#banner")).to_have_class(verdict("review"))
        screenshot(page, "station-review-1280x720.png")
        seen = page.evaluate(MEASURE)
        box = page.locator("#current-table .chip.uncertain").bounding_box()
    finally:
        context.close()
        server.stop()
    assert seen["page"] == [1280, 720] and box is not None
    marked = {"x": box["x"], "y": box["y"], "w": box["width"], "h": box["height"], "text": "uncertain chip"}
    shown_whole = [seen["badge"], seen["reasons"], marked, *seen["buttons"]]
    assert [b["text"] for b in shown_whole if not inside(b, 1280, 720)] == []
    assert not seen["currentScrolls"], "the table is cut off in its panel"
    covered = [seen["badge"], seen["title"], seen["reasons"], marked]
    assert [(b["text"], c["text"]) for b in seen["buttons"] for c in covered if overlap(b, c)] == []


def test_the_keyboard_records_a_word_on_the_table(page: Any, game: Game) -> None:
    """T opens the words on the table: 2 picks player 2, N records "I'll open next round" (the page shows it on the
    player), U takes it back; a word the game refuses is named in the dialog."""
    expect = sync_api.expect
    page.keyboard.press("t")
    expect(page.locator("#word-dialog")).to_be_visible()
    page.keyboard.press("2")
    page.keyboard.press("n")
    eventually(lambda: game.logged("announced-opening"))
    assert has(game.logged("announced-opening")[0], {"player": 1})
    expect(page.locator("#word-dialog")).to_be_hidden()
    expect(page.locator('#players [data-player="1"] .opened')).to_have_text("opens next round")
    expect(page.locator("#direction")).to_contain_text("clockwise")
    page.keyboard.press("u")
    eventually(lambda: game.logged("override"))
    expect(page.locator('#players [data-player="1"] .opened')).to_have_text("not opened")
    page.keyboard.press("t")
    page.keyboard.press("3")  # a 2-player game: no player 3, player 1 stays picked
    page.keyboard.press("d")  # a re-deal asked for without a number of pairs: granted before the first move
    eventually(lambda: game.logged("redeal"))
    assert has(game.logged("redeal")[0], {"player": 0})
