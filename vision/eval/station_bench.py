"""``bench station``: does a crowd of pages on the referee station slow the referee down?

A synthetic game video (``synth-game``, 2 minutes by default) is played at its frame rate through a real
:class:`vision.session.live.LiveSession` with the station served, twice in the same run: with no page open, then with
``--inputs`` (default 50) browser-like clients. Each client does what ``station.js`` does, and more:

- it loads the page (and reads its token from it), then ``/api/state``, then keeps a WebSocket open;
- it asks for ``/frame.jpg`` every 1/:data:`vision.ui.station.FRAME_FPS` s, with ``If-None-Match`` as the page does;
- on every pushed game event it fetches ``/api/state``, and ``/api/moves/N`` for a move (the page does not:
  it gets the state over the WebSocket; this is the harsher client).

The clients run in a process of their own (browsers are not in the referee's process) on the same cores, so
what they cost the machine is counted, but not their share of Python's lock. Reported per pass, and as the ratio
with clients to without, measured in the same run:

- *move latency*: when the ruling reached the game log (wall clock) minus when the table settled (the
  settling's video time on the clock of the paced playback), as ``bench live`` measures it;
- *pushed to the pages*: when the slowest client received the move's event, on the same clock;
- the slowest ``/api/state`` answer any client waited for, and whether every client got every event.
- the CPU time the referee's process (live loop and station) spent per second of video: what the pages cost
  the machine even while spare cores keep the latency flat (on a busier machine that cost becomes latency).

Target: the move latency with 50 clients within 10 % of no clients.

Size: 528 lines, one module on purpose: one benchmark, whose parts (the browser-like client with its HTTP connection,
WebSocket and report; the process that runs a crowd of them; the paced playback through a live session; the report's
formatting) exist only for it. Were it to grow, the client (``HttpConnection``, ``BrowserLikeClient``, ``ClientCrowd``,
about 270 lines) is the part to move out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import statistics
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

GAME_MINUTES = 2.0
GAME_SEED = 1301
"""The generated game (2 players, pl-championship): 11 moves in its 2 minutes, one with a violation. Seeds differ
a lot (1300 makes 4 moves): latency medians need moves, so a different ``--seed`` is worth checking first."""
DEFAULT_CLIENTS = 50
WARM_UP_MINUTES = 0.25
FRAME_PERIOD_S = 0.5
"""How often a client asks for the camera view (the page's rate: 1/FRAME_FPS)."""
CONNECT_TIMEOUT_S = 60.0


# -- a browser-like client --------------------------------------------------------------------------------------


@dataclass
class ClientReport:
    """What one client saw: the events pushed to it, its requests, and anything that went wrong."""

    first_seq: int = -1
    """The seq of the first state it received (events up to it are in that state)."""
    last_seq: int = -1
    """The seq of the last state it received."""
    events: list[int] = field(default_factory=list)
    """The seq of every event message received."""
    moves_at: dict[int, float] = field(default_factory=dict)
    """Move number -> when its event arrived (``time.monotonic``, the same clock in every process)."""
    frames: int = 0
    frames_unchanged: int = 0
    state_requests: int = 0
    slowest_state_s: float = 0.0
    move_requests: int = 0
    errors: list[str] = field(default_factory=list)

    def missed(self) -> list[int]:
        """Events between its first and last state that never reached it."""
        got = set(self.events)
        return [seq for seq in range(self.first_seq + 1, self.last_seq + 1) if seq not in got]


class HttpConnection:
    """One keep-alive HTTP/1.1 connection, as a browser holds them (just enough HTTP for the station)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._busy = asyncio.Lock()

    async def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (lower case) and body, one request at a time; a connection the server closed while it
        was idle is opened again."""
        async with self._busy:
            reused = self._streams is not None
            try:
                return await self._get(path, headers or {})
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if not reused:
                    raise
            return await self._get(path, headers or {})

    async def _get(self, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        if self._streams is None:
            self._streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self._streams
        lines = [f"GET {path} HTTP/1.1", f"Host: {self.host}:{self.port}", *(f"{k}: {v}" for k, v in headers.items())]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        status_line = await reader.readuntil(b"\r\n")
        status = int(status_line.split()[1])
        answer: dict[str, str] = {}
        while (line := await reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.decode("latin-1").partition(":")
            answer[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(answer.get("content-length", "0")))
        if answer.get("connection", "").lower() == "close":
            await self.close()
        return status, answer, body

    async def close(self) -> None:
        if self._streams is not None:
            writer = self._streams[1]
            self._streams = None
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


class BrowserLikeClient:
    """One page on the station: a WebSocket, the camera view at the page's rate, the state on every event."""

    def __init__(self, host: str, port: int, *, frame_period_s: float = FRAME_PERIOD_S) -> None:
        self.host, self.port = host, port
        self.origin = f"http://{host}:{port}"
        self.frame_period_s = frame_period_s
        self.report = ClientReport()
        self.connected = asyncio.Event()
        self.token = ""
        self._api = HttpConnection(host, port)
        self._frames = HttpConnection(host, port)
        self._tasks: list[asyncio.Task[Any]] = []

    async def run(self, stop: asyncio.Event) -> ClientReport:
        """Until ``stop`` is set; every error is recorded in the report, none is raised."""
        try:
            await self._open_page()
            self._tasks = [asyncio.create_task(self._frame_loop(stop))]
            await self._websocket(stop)
        except Exception as error:  # a benchmark reports what failed rather than stopping the other clients
            self.report.errors.append(f"{type(error).__name__}: {error}")
            self.connected.set()
        finally:
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            await self._api.close()
            await self._frames.close()
        return self.report

    async def _open_page(self) -> None:
        status, _, page = await self._api.get("/")
        if status != 200:
            raise RuntimeError(f"the page: {status}")
        match = re.search(rb'<meta name="station-token" content="([^"]+)">', page)
        self.token = match.group(1).decode() if match else ""  # these clients only read: no token is needed
        await self._fetch_state()

    async def _fetch_state(self) -> None:
        started = time.monotonic()
        status, _, body = await self._api.get("/api/state")
        self.report.slowest_state_s = max(self.report.slowest_state_s, time.monotonic() - started)
        self.report.state_requests += 1
        if status != 200:
            raise RuntimeError(f"/api/state: {status}")
        json.loads(body)

    async def _fetch_move(self, number: int) -> None:
        status, _, body = await self._api.get(f"/api/moves/{number}")
        self.report.move_requests += 1
        if status != 200:
            raise RuntimeError(f"/api/moves/{number}: {status}")
        json.loads(body)

    async def _frame_loop(self, stop: asyncio.Event) -> None:
        tag = ""
        while not stop.is_set():
            try:
                status, headers, _ = await self._frames.get("/frame.jpg", {"If-None-Match": tag} if tag else {})
            except (ConnectionError, asyncio.IncompleteReadError, OSError) as error:
                self.report.errors.append(f"/frame.jpg: {type(error).__name__}: {error}")
                return
            if status == 200:
                self.report.frames += 1
                tag = headers.get("etag", "")
            elif status == 304:
                self.report.frames_unchanged += 1
            else:
                self.report.errors.append(f"/frame.jpg: {status}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.frame_period_s)

    async def _websocket(self, stop: asyncio.Event) -> None:
        from wsproto import ConnectionType, WSConnection
        from wsproto.events import AcceptConnection, CloseConnection, Ping, RejectConnection, Request, TextMessage

        reader, writer = await asyncio.open_connection(self.host, self.port)
        protocol = WSConnection(ConnectionType.CLIENT)
        host = f"{self.host}:{self.port}"
        writer.write(protocol.send(Request(host=host, target="/ws", extra_headers=[(b"origin", self.origin.encode())])))
        parts: list[str] = []
        stopping = asyncio.create_task(stop.wait())
        try:
            while True:
                reading = asyncio.create_task(reader.read(65536))
                done, _ = await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if stopping in done:
                    reading.cancel()
                    writer.write(protocol.send(CloseConnection(code=1000)))
                    return
                data = reading.result()
                protocol.receive_data(data or None)
                for event in protocol.events():
                    if isinstance(event, RejectConnection):
                        raise RuntimeError(f"the WebSocket was refused ({event.status_code})")
                    if isinstance(event, AcceptConnection):
                        continue
                    if isinstance(event, Ping):
                        writer.write(protocol.send(event.response()))
                    elif isinstance(event, CloseConnection):
                        if not stop.is_set():
                            raise RuntimeError(f"the station closed the WebSocket ({event.code} {event.reason})")
                        return
                    elif isinstance(event, TextMessage):
                        parts.append(event.data)
                        if event.message_finished:
                            self._heard(json.loads("".join(parts)))
                            parts = []
                if not data:
                    raise RuntimeError("the WebSocket connection ended")
                await writer.drain()
        finally:
            stopping.cancel()
            writer.close()

    def _heard(self, message: dict[str, Any]) -> None:
        if message["type"] == "state":
            seq = int(message["state"]["seq"])
            if self.report.first_seq < 0:
                self.report.first_seq = seq
                self.connected.set()
            self.report.last_seq = seq
        elif message["type"] == "event":
            event = message["event"]
            self.report.events.append(int(event["seq"]))
            move = int(event["move"]) if event.get("event") == "move" else None
            if move is not None and (event.get("amends") is not None or move not in self.report.moves_at):
                self.report.moves_at[move] = time.monotonic()  # an amendment: the whole turn ruled again
            self._tasks = [task for task in self._tasks if not task.done()]
            self._tasks.append(asyncio.create_task(self._fetch_after_event(move)))

    async def _fetch_after_event(self, move: int | None) -> None:
        try:
            await self._fetch_state()
            if move is not None:
                await self._fetch_move(move)
        except Exception as error:
            self.report.errors.append(f"{type(error).__name__}: {error}")


async def run_clients(
    host: str, port: int, count: int, stop: asyncio.Event, *, ready: threading.Event | None = None
) -> list[ClientReport]:
    """``count`` clients until ``stop``; ``ready`` is set once every one has its first state (or failed)."""
    clients = [BrowserLikeClient(host, port) for _ in range(count)]
    runs = [asyncio.create_task(client.run(stop)) for client in clients]
    connected = asyncio.gather(*(c.connected.wait() for c in clients))
    with contextlib.suppress(TimeoutError):  # those not connected by then report why
        await asyncio.wait_for(asyncio.shield(connected), CONNECT_TIMEOUT_S)
    if ready is not None:
        ready.set()
    return list(await asyncio.gather(*runs))


def _client_process(host: str, port: int, count: int, pipe: Any) -> None:
    """The clients' process: says "ready" once they are connected, stops when told, sends their reports."""

    async def main() -> list[ClientReport]:
        loop = asyncio.get_running_loop()
        stop, ready = asyncio.Event(), threading.Event()

        def wait_for_stop() -> None:
            ready.wait()
            pipe.send("ready")
            pipe.recv()
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=wait_for_stop, daemon=True).start()
        return await run_clients(host, port, count, stop, ready=ready)

    pipe.send([asdict(report) for report in asyncio.run(main())])


class ClientCrowd:
    """``count`` clients in a process of their own, connected on :meth:`start`, reporting on :meth:`stop`."""

    def __init__(self, host: str, port: int, count: int) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._pipe, child = context.Pipe()
        self._process = context.Process(target=_client_process, args=(host, port, count, child), daemon=True)

    def start(self) -> None:
        self._process.start()
        if not self._pipe.poll(CONNECT_TIMEOUT_S + 30) or self._pipe.recv() != "ready":
            raise RuntimeError("the benchmark's clients did not connect")

    def stop(self) -> list[ClientReport]:
        self._pipe.send("stop")
        reports = self._pipe.recv() if self._pipe.poll(60) else []
        self._process.join(10)
        return [ClientReport(**{**r, "moves_at": {int(k): v for k, v in r["moves_at"].items()}}) for r in reports]


# -- the benchmark ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StationPass:
    """One playing of the game with ``clients`` pages open."""

    clients: int
    moves_ruled: int
    cpu_per_video_s: float
    """CPU seconds the referee's process (live loop and station together) spent per second of video."""
    latency_s: list[float]
    """Per found move: ruling (wall clock) minus settling."""
    pushed_s: list[float]
    """Per found move: its event at the slowest client minus settling (empty without clients)."""
    slowest_state_s: float
    state_requests: int
    frames_sent: int
    frames_unchanged: int
    clients_missing_events: int
    errors: list[str]

    @property
    def latency_median_s(self) -> float:
        return statistics.median(self.latency_s) if self.latency_s else float("nan")

    @property
    def latency_max_s(self) -> float:
        return max(self.latency_s, default=float("nan"))

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "latency_median_s": _round(self.latency_median_s),
            "latency_max_s": _round(self.latency_max_s),
        }


def run_station_benchmark(
    folder: Path,
    out: Path,
    reader: Any,
    *,
    clients: int = DEFAULT_CLIENTS,
    minutes: float | None = None,
    repeats: int = 1,
) -> dict[str, Any]:
    """Play ``folder``'s game without pages and with ``clients`` of them, ``repeats`` times each, in the order
    0, N, N, 0, 0, N ... (a drift of the machine's load falls on both sides); see the module docstring.

    A short warm-up playing comes first and is not counted: the first playing of a run pays for loading the
    models and the video into memory, which would make any first pass look slow.
    """
    _play(folder, out / "warm-up", reader, 0, WARM_UP_MINUTES)
    order = [count for k in range(repeats) for count in ((0, clients) if k % 2 == 0 else (clients, 0))]
    passes = [
        _play(folder, out / f"pass-{k + 1}-clients-{count}", reader, count, minutes) for k, count in enumerate(order)
    ]
    alone = _pooled([p for p in passes if p.clients == 0])
    crowded = _pooled([p for p in passes if p.clients == clients])
    return {
        "folder": str(folder),
        "clients": clients,
        "passes": [p.to_json() for p in passes],
        "latency_median_s": {"without": _median(alone), "with": _median(crowded)},
        "latency_max_s": {"without": max(alone, default=None), "with": max(crowded, default=None)},
        "latency_ratio_median": _ratio(_median(crowded), _median(alone)),
        "latency_ratio_max": _ratio(max(crowded, default=None), max(alone, default=None)),
    }


def _pooled(passes: list[StationPass]) -> list[float]:
    return [value for p in passes for value in p.latency_s]


def _play(folder: Path, out: Path, reader: Any, clients: int, minutes: float | None) -> StationPass:
    from vision.eval.live_bench import open_bench_game
    from vision.eval.pipeline_bench import score_game
    from vision.game.gamelog import read_log
    from vision.ui.station import serve_in_thread

    game = open_bench_game(folder, out, reader)
    truth, session, log, log_path, ruled_at = game.truth, game.session, game.log, game.log_path, game.ruled_at
    server = serve_in_thread(session, "127.0.0.1:0", announce=lambda _: None)
    crowd = ClientCrowd("127.0.0.1", server.port, clients) if clients else None
    timer = threading.Timer(minutes * 60, session.stop) if minutes else None
    reports: list[ClientReport] = []
    try:
        if crowd is not None:
            crowd.start()
        if timer:
            timer.start()
        cpu_started = time.process_time()
        session.run()
        cpu_s = time.process_time() - cpu_started
    finally:
        if timer:
            timer.cancel()
        if crowd is not None:
            reports = crowd.stop()
        server.stop()
        log.close()
    scores = score_game([t for t in truth if t.get("settle_s", 0.0) < session.latest_time_s - 3.0], read_log(log_path))
    settled = {t["index"]: t["settle_s"] for t in truth if t["event"] == "move"}
    shown = session.playback_started or 0.0
    found = [(row["number"], shown + settled[row["index"]]) for row in scores["rows"] if row["found"]]
    latency = [ruled_at[number] - at for number, at in found if number in ruled_at]
    pushed = [_slowest(reports, number) - at for number, at in found if reports and _slowest(reports, number)]
    return StationPass(
        clients=clients,
        moves_ruled=len(ruled_at),
        cpu_per_video_s=_round(cpu_s / max(session.latest_time_s, 1.0)),
        latency_s=[_round(v) for v in latency],
        pushed_s=[_round(v) for v in pushed],
        slowest_state_s=_round(max((r.slowest_state_s for r in reports), default=0.0)),
        state_requests=sum(r.state_requests for r in reports),
        frames_sent=sum(r.frames for r in reports),
        frames_unchanged=sum(r.frames_unchanged for r in reports),
        clients_missing_events=sum(1 for r in reports if r.missed() or r.first_seq < 0),
        errors=[e for r in reports for e in r.errors][:20],
    )


def format_station_benchmark(result: dict[str, Any]) -> str:
    lines = [
        f"{result['folder']}: the game played in real time with the station served, without pages and with"
        f" {result['clients']} browser-like clients"
    ]
    for p in result["passes"]:
        pushed = f", pushed to every page: median {_median(p['pushed_s'])} s, max {max(p['pushed_s'], default=None)} s"
        lines.append(
            f"{p['clients']:>3} clients: {p['moves_ruled']} moves ruled, move latency median {p['latency_median_s']} s,"
            f" max {p['latency_max_s']} s"
            + (pushed if p["clients"] else "")
            + f"; referee process CPU {p['cpu_per_video_s']} s per s of video"
        )
        if p["clients"]:
            lines.append(
                f"             {p['state_requests']} state requests (slowest {p['slowest_state_s']} s),"
                f" {p['frames_sent']} frames sent + {p['frames_unchanged']} unchanged (304),"
                f" clients missing an event: {p['clients_missing_events']}, errors: {len(p['errors'])}"
                + (f" (first: {p['errors'][0]})" if p["errors"] else "")
            )
    median, most = result["latency_median_s"], result["latency_max_s"]
    lines.append(
        f"move latency over all passes: without pages median {median['without']} s, max {most['without']} s;"
        f" with {result['clients']} clients median {median['with']} s, max {most['with']} s"
    )
    lines.append(
        f"with pages / without (same run): median x{result['latency_ratio_median']},"
        f" max x{result['latency_ratio_max']} (target: within x1.10)"
    )
    return "\n".join(lines)


def bench_suite(args: Any) -> tuple[Any, str]:
    """``rummikub-referee bench station [--games DIR] [--inputs CLIENTS] [--repeats PAIRS] [--play-minutes M]``.

    ``--inputs`` is the number of clients (default 50), ``--repeats`` the number of playings with and without
    them (default 3: about 14 minutes for the 2-minute game); without ``--games`` a game is generated under
    ``cache/bench-station`` (``--seed`` picks it).
    """
    from vision.game.pipeline import pipeline_reader

    if args.games:
        folder = Path(args.games[0])
    else:
        seed = GAME_SEED + args.seed
        folder = generate_game(Path("cache") / "bench-station" / f"game-{seed}", seed)
    result = run_station_benchmark(
        folder, Path("cache") / "bench-station-out", pipeline_reader(None),
        clients=args.inputs or DEFAULT_CLIENTS, minutes=args.play_minutes, repeats=args.repeats,
    )  # fmt: skip
    return result, format_station_benchmark(result)


def generate_game(folder: Path, seed: int, minutes: float = GAME_MINUTES) -> Path:
    """A short synthetic game (2 players, a quarter of the moves with a violation), or the one already there."""
    from vision.synth.video import write_game

    if not (folder / "truth.jsonl").is_file():
        write_game(folder, players=2, seed=seed, violation_rate=0.25, profile="pl-championship", minutes=minutes,
                   progress=False)  # fmt: skip
    return folder


def _slowest(reports: list[ClientReport], number: int) -> float:
    """When the last client heard of move ``number`` (0.0 if one never did)."""
    times = [r.moves_at.get(number) for r in reports]
    return 0.0 if any(t is None for t in times) else max(t for t in times if t is not None)


def _round(value: float) -> float:
    return round(value, 3)


def _ratio(value: float | None, reference: float | None) -> float | None:
    return None if value is None or not reference else round(value / reference, 3)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None
