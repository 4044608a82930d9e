"""The station under a crowd of pages, briefly: 30 browser-like clients (a WebSocket, the camera view at the
page's rate, the state and the move on every event: ``vision.eval.station_bench``'s clients) follow a game of a few
moves, overrides included. Every client gets every event and the final state, and nothing fails. No timing is
asserted here: ``rummikub-referee bench station`` measures what the crowd costs the referee."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("wsproto")

from tests.vision.ui.test_station import START, Game
from vision.eval.station_bench import BrowserLikeClient
from vision.ui.station import StationServer, serve_in_thread

CLIENTS = 30
WAIT_S = 60.0
"""How long the crowd may take to catch up on a busy test machine (a liveness bound, not a timing claim)."""
MOVES = (
    f"{START} [red-10 red-11 red-12]",  # player 1 opens: OK
    f"{START} [red-10 red-11 red-12] [blue-1 blue-2]",  # player 2: an invalid set, REVERT
    f"{START} [red-10 red-11 red-12]",  # the table restored
    f"{START} [red-10 red-11 red-12 red-13]",  # player 1 again
)


class Crowd(threading.Thread):
    """Browser-like clients on their own event loop, in a thread, until :meth:`finish`."""

    def __init__(self, port: int, count: int) -> None:
        super().__init__(daemon=True)
        self.port, self.count = port, count
        self.clients: list[BrowserLikeClient] = []
        self.ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._halt: asyncio.Event | None = None

    def run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop, self._halt = asyncio.get_running_loop(), asyncio.Event()
        self.clients = [BrowserLikeClient("127.0.0.1", self.port, frame_period_s=0.2) for _ in range(self.count)]
        self.ready.set()
        await asyncio.gather(*(client.run(self._halt) for client in self.clients))

    def finish(self) -> None:
        assert self._loop is not None and self._halt is not None
        self._loop.call_soon_threadsafe(self._halt.set)
        self.join(WAIT_S)


def until(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Game, StationServer]]:
    game = Game(tmp_path / "game.jsonl")
    game.settle(START, hands=False)
    server = serve_in_thread(game.session, "127.0.0.1:0", announce=lambda _: None)
    yield game, server
    server.stop()


def test_every_page_gets_every_event(served: tuple[Game, StationServer]) -> None:
    game, server = served
    crowd = Crowd(server.port, CLIENTS)
    crowd.start()
    crowd.ready.wait(WAIT_S)
    until(lambda: all(c.connected.is_set() for c in crowd.clients), "every client connected")
    try:
        for number, table in enumerate(MOVES, start=1):
            game.settle(table)
            if number == 2:  # the referee overrules the REVERT, then takes it back
                game.session.override(action="ok", move=2, by="station", player=1, played=[])
                game.session.override(action="undo", by="station")
                game.handle()
            time.sleep(0.3)  # a few frames of the camera view between moves
        final = server.station.seq
        until(lambda: all(c.report.last_seq >= final for c in crowd.clients), "every client got the final state")
        until(lambda: all(c.report.move_requests >= 3 for c in crowd.clients), "every client fetched the moves")
    finally:
        crowd.finish()
    moves = {e["number"] for e in game.logged("move")}
    assert len(moves) >= 3 and game.logged("override")
    for client in crowd.clients:
        report = client.report
        assert report.errors == []
        assert report.first_seq >= 0 and report.missed() == [] and report.last_seq == final
        assert set(report.moves_at) == moves
        assert report.frames >= 1 and report.state_requests >= len(report.events)
    until(lambda: server.station.pages == 0, "every page that left was let go")
