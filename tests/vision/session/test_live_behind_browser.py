"""The station's page says at once when live reading falls behind the camera, and stops saying it once it caught
up (driven in a real Chromium, like tests/vision/ui/test_station_browser.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium to drive (apt-get install chromium)")

from vision.game.gamelog import GameLog, GameSetup  # noqa: E402
from vision.game.moves import GameKeeper  # noqa: E402
from vision.session.live import LiveOptions, LiveSession  # noqa: E402
from vision.ui.station import serve_in_thread  # noqa: E402

WAIT_MS = 10_000


def test_the_page_shows_reading_behind_the_camera_until_it_caught_up(tmp_path: Path) -> None:
    log = GameLog.create(tmp_path / "game.jsonl", GameSetup.of("official", 2), {"mode": "live"}, sync=False)
    session = LiveSession(
        LiveOptions(source="0", setup=GameSetup.of("official", 2)), None, log, GameKeeper("official", 2)
    )
    server = serve_in_thread(session, "127.0.0.1:0", announce=lambda _: None)
    watch = session.keeping_up
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(server.url)
            expect = sync_api.expect
            expect(page.locator("#behind")).to_be_hidden(timeout=WAIT_MS)
            watch.looking_at(10.0, 0)
            session.record(watch.check(11.3, 9))  # as the watch thread records it
            expect(page.locator("#behind")).to_be_visible(timeout=WAIT_MS)
            expect(page.locator("#behind")).to_contain_text("Reading 1.3 s behind the camera")
            for event in watch.looking_at(11.4, 9) + watch.looking_at(16.5, 9):  # an unread stretch, then keeping up
                session.record(event)
            for step in range(1, 12):
                for event in watch.looking_at(16.5 + step / 2, 9):
                    session.record(event)
            assert watch.state is None  # caught up: the page is told with the event
            expect(page.locator("#behind")).to_be_hidden(timeout=WAIT_MS)
            assert errors == []
            browser.close()
    finally:
        server.stop()
        log.close()
