"""The referee station: a web page beside the table for the referee of a final, served while ``live`` runs.

``rummikub-referee live ... --serve [HOST:PORT]`` starts it (:func:`serve_in_thread`) before the live loop.
The page (``vision/station_static``: plain HTML, JavaScript and CSS, nothing fetched from the internet)
shows the camera view with the reading drawn on it, the table as big tile chips, the move timer, who is on
move and who has opened, the ruling on the last move (OK; REVERT with the layout to restore beside the
table as it is; REVIEW naming the uncertain tiles), the move log and the referee's overrides.

- ``GET /`` the page; ``GET /frame.jpg`` the newest camera frame with the reading drawn on it; ``GET
  /revert.wav`` the sound a REVERT makes.
- ``GET /api/state`` everything the page shows; ``GET /api/moves/N`` one move with its tables.
- ``POST /api/clock`` the clock key; ``POST /api/override`` (JSON ``{"action": "accept"|"ok"|"revert"|
  "correct"|"undo", "move": N, ...}``) the referee's word on a move, recorded in the game log.
- ``WS /ws`` pushes ``{"type": "event", "event": ...}`` and ``{"type": "state", "state": ...}`` for every
  game event and ``{"type": "tick", "status": ...}`` every second.

Only 127.0.0.1 (or another loopback address) is served without a token. With a token, every request must
carry it (``?token=`` in the URL, an ``X-Station-Token`` header or ``Authorization: Bearer``); the page
passes on the token of its own address. Requests from another site's page (an ``Origin`` that is not the
station's) are refused.

Game events reach the station from the live loop's thread (:meth:`Station.on_event`); the station only
reads the game state and queues the referee's actions through the session (``press_clock``, ``override``),
so the live loop stays the one writer of the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import io
import ipaddress
import json
import logging
import math
import socket
import sys
import threading
import wave
from collections import Counter, deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import cv2
import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketClose, WebSocketDisconnect

from referee.profiles import get_profile
from referee.sets import TileSet
from referee.table import LOOSE, Table, TableError
from referee.tiles import Tile, TileError
from vision.moves import GameKeeper

STATIC = Path(__file__).with_name("station_static")
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000
RECENT_EVENTS = 40
"""Events kept for the page's event list."""
LOG_MOVES = 60
"""Moves listed on the page (the newest); older ones stay in the game log and in ``/api/moves/N``."""
TICK_S = 1.0
WARN_BEFORE_S = 10.0
"""The timer warns this many seconds before the move's time runs out."""
FRAME_WIDTH = 960
ACTIONS = ("accept", "ok", "revert", "correct", "undo")
SEAT_NAMES = ("bottom", "right", "top", "left")
"""Seats as :data:`vision.moves.SEATS_BY_PLAYERS` numbers them, as seen in the camera picture."""
TOKEN_HEADER = "x-station-token"

logger = logging.getLogger(__name__)


class StationError(ValueError):
    """A station that cannot start (an address, a missing token) or a request it cannot carry out."""


# -- addresses ----------------------------------------------------------------------------------------------


def parse_bind(bind: str | None, token: str | None = None) -> tuple[str, int]:
    """``HOST:PORT``, ``HOST``, ``PORT`` or ``[IPv6]:PORT`` -> (host, port); off loopback a token is required.

    >>> parse_bind("127.0.0.1:8080")
    ('127.0.0.1', 8080)
    >>> parse_bind("0.0.0.0:8000", "s3cret")
    ('0.0.0.0', 8000)
    """
    text = (bind or "").strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif text.isdigit():
        host, port_text = "", text
    else:
        host, port_text = text, ""
    host = host or DEFAULT_HOST
    try:
        port = int(port_text) if port_text else DEFAULT_PORT
    except ValueError:
        raise StationError(f"station address {bind!r}: the port must be a number (HOST:PORT)") from None
    if not 0 <= port <= 65535:
        raise StationError(f"station address {bind!r}: no port {port}")
    if not is_loopback(host) and not token:
        raise StationError(
            f"the station on {bind!r} could be reached from other machines: give --token SECRET "
            f"(only {DEFAULT_HOST} is served without one)"
        )
    return host, port


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# -- the game as the page shows it --------------------------------------------------------------------------


def time_limit(keeper: Any) -> float | None:
    """The move time of the game: a limit agreed at the table, else the profile's."""
    value = keeper.time_limit_s
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None if value is None else float(value)
    limit = get_profile(keeper.profile).time_limit_s
    return None if limit is None else float(limit)


def _label(tile: Any) -> str:
    return str(tile if isinstance(tile, str) else tile["label"])


def tile_view(tile: Any, mark: str | None = None) -> dict[str, Any]:
    """One chip: what to print and in which colour, whether the reading is uncertain or was corrected."""
    fields = {"label": tile} if isinstance(tile, str) else tile
    label = _label(fields)
    parsed = Tile.parse(label)
    confidence = fields.get("confidence")
    view: dict[str, Any] = {
        "label": label,
        "colour": "joker" if parsed.colour is None else parsed.colour.value,
        "text": "☺" if parsed.number is None else str(parsed.number),
        "uncertain": bool(fields.get("uncertain")) or (confidence is not None and float(confidence) < 0.5),
    }
    if confidence is not None:
        view["confidence"] = round(float(confidence), 2)
    if fields.get("corrected_from"):
        view["corrected_from"] = fields["corrected_from"]
    if mark:
        view["mark"] = mark
    return view


def table_view(
    table: dict[str, Any] | None,
    profile: str,
    *,
    marks: dict[tuple[int, int], str] | None = None,
    changed_sets: Iterable[int] = (),
) -> dict[str, Any] | None:
    """Table JSON as the page draws it: sets (valid or not, changed or not) of chips, and loose chips."""
    if table is None:
        return None
    marks = marks or {}
    changed = set(changed_sets)
    sets = []
    for i, tiles in enumerate(table.get("sets", [])):
        try:
            valid = TileSet.of([_label(t) for t in tiles]).is_valid(profile)
        except ValueError:
            valid = False
        sets.append(
            {
                "index": i,
                "valid": valid,
                "changed": i in changed,
                "tiles": [tile_view(t, marks.get((i, j))) for j, t in enumerate(tiles)],
            }
        )
    loose = [tile_view(t, marks.get((LOOSE, j))) for j, t in enumerate(table.get("loose", []))]
    count = sum(len(s["tiles"]) for s in sets) + len(loose)
    return {"sets": sets, "loose": loose, "tiles": count}


def restore_guide(current: dict[str, Any] | None, target: dict[str, Any]) -> dict[str, Any]:
    """What to move to get from the table as it is to the layout to restore.

    Sets found in both layouts stay as they are. On the current table, ``to-rack`` marks the tiles that are
    too many (back to the player's rack) and changed sets are outlined; on the layout to restore, ``to-table``
    marks the tiles missing from the table now.
    """
    now = Table.from_json(current or {"sets": [], "loose": []})
    goal = Table.from_json(target)
    now_changed, goal_changed = _unmatched_sets(now, goal), _unmatched_sets(goal, now)
    excess, missing = now.counts() - goal.counts(), goal.counts() - now.counts()
    return {
        "current_marks": _mark(now, now_changed, excess, "to-rack"),
        "current_changed": sorted(now_changed),
        "restore_marks": _mark(goal, goal_changed, missing, "to-table"),
        "restore_changed": sorted(goal_changed),
        "to_rack": sorted(str(t) for t in excess.elements()),
        "to_table": sorted(str(t) for t in missing.elements()),
        "done": now.same_layout(goal),
    }


def _unmatched_sets(table: Table, other: Table) -> set[int]:
    available = Counter(s.layout_key for s in other.sets)
    unmatched = set()
    for i, tile_set in enumerate(table.sets):
        if available[tile_set.layout_key] > 0:
            available[tile_set.layout_key] -= 1
        else:
            unmatched.add(i)
    return unmatched


def _mark(table: Table, changed: set[int], tiles: Counter[Tile], mark: str) -> dict[tuple[int, int], str]:
    """Mark ``tiles`` on ``table``, in changed sets and loose tiles first (that is where they moved)."""
    left = Counter(tiles)
    marks: dict[tuple[int, int], str] = {}
    places = sorted(table.places(), key=lambda item: not (item[0][0] == LOOSE or item[0][0] in changed))
    for place, tile in places:
        if left[tile] > 0:
            left[tile] -= 1
            marks[place] = mark
    return marks


def _place_text(which: str, place: Iterable[int]) -> str:
    set_index, position = (int(v) for v in place)
    where = "loose" if set_index == LOOSE else f"set {set_index + 1}"
    return f"{which}, {where}, tile {position + 1}"


def event_text(event: dict[str, Any]) -> str:
    """A short line for the page's event list."""
    kind = event.get("event", "?")
    if kind == "move":
        ruling = event["ruling"]
        what = "drew a tile" if event.get("kind") == "draw" else "played " + (" ".join(ruling["played"]) or "no tile")
        codes = ", ".join(dict.fromkeys(v["code"] for v in ruling["violations"]))
        return f"Move {event['number']}: player {event['player'] + 1} {what}: {ruling['verdict'].upper()}" + (
            f" ({codes})" if codes else ""
        )
    if kind == "restore":
        state = "restored" if event.get("complete") else "partly restored"
        return f"Table {state} after move {event.get('after_move')}"
    if kind == "table":
        reason = event.get("reason", "")
        if reason == "first reading":
            tiles = view["tiles"] if (view := table_view(event.get("table"), "official")) else 0
            return f"Table read: {tiles} tiles"
        return "Reading refined" if reason == "refined" else f"Table {reason}"
    if kind == "clock":
        return "Clock key" + (f" (confirms move {event['confirms']})" if event.get("confirms") else "")
    if kind == "override":
        return "Referee: " + override_text(event)
    texts = {
        "start": lambda e: f"Game started ({e.get('profile')}, {e.get('players')} players)",
        "resume": lambda e: f"Game resumed after move {e.get('moves')}",
        "end": lambda e: f"Game ended after {e.get('moves')} moves",
        "calibration": lambda e: f"Play area found ({e.get('method', 'calibrated')})",
        "occluded": lambda e: f"Something over the table for {e.get('seconds')} s: tiles hidden",
        "camera-moved": lambda e: f"Camera moved {e.get('shift_px')} px: {e.get('action')}",
        "dropout": lambda e: "Camera stream lost",
        "reconnected": lambda e: "Camera stream back",
        "gave-up": lambda e: "Camera stream gone",
        "reading-disagrees": lambda e: "A reading disagrees with the table: checking again",
        "activity": lambda e: "Hands over the table",
        "clock-waiting": lambda e: f"Clock key pressed {e.get('seconds')} s ago: waiting for the table to settle",
    }
    return texts[kind](event) if kind in texts else str(kind)


def override_text(event: dict[str, Any]) -> str:
    action, move = event.get("action"), event.get("move")
    if action == "accept":
        return f"ruling on move {move} stands"
    if action == "ok":
        return f"move {move} is OK"
    if action == "revert":
        return f"move {move} is reverted"
    if action == "correct":
        where = _place_text(str(event.get("table")), event.get("place") or (0, 0))
        was = f"{event['was']} → " if event.get("was") else ""
        return f"move {move}: {where} is {was}{event.get('label')}"
    if action == "undo":
        undone = event.get("undoes")
        return "undo" + (f" ({override_text(undone)})" if isinstance(undone, dict) else "")
    return str(action)


class Station:
    """What the page shows, kept from the game's events; and the referee's actions, passed to the session."""

    def __init__(self, session: Any, token: str | None = None) -> None:
        self.session = session
        self.token = token or None
        self._lock = threading.RLock()
        self.seq = 0
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_EVENTS)
        self.moves: dict[int, dict[str, Any]] = {}
        self.overrides: list[dict[str, Any]] = []
        """``{"event", "undone"}`` for every override the keeper acts on (the same rules as its own)."""
        self.restored: dict[int, bool] = {}
        self._clients: list[tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]] = []
        self._frame: tuple[Any, Any, bytes] | None = None
        self._early: list[dict[str, Any]] | None = []
        session.subscribe(self.on_event)
        self._load_history()

    # -- events in ----------------------------------------------------------------------------------------
    def _load_history(self) -> None:
        """The game so far, from the game log (a resumed game, or events before the station started)."""
        from vision.gamelog import GameLogError, read_log

        path = getattr(getattr(self.session, "log", None), "path", None)
        events: list[dict[str, Any]] = []
        if path is not None and Path(path).exists():
            try:
                events = read_log(path)
            except GameLogError as error:
                logger.warning("station: game log not read: %s", error)
        with self._lock:
            early, self._early = self._early or [], None
            logged = Counter(_dump(e) for e in events[-len(early) :]) if early else Counter()
            for event in events:
                self._absorb(event)
            for event in early:  # heard while the log was read: keep those not in it yet
                if logged[_dump(event)] > 0:
                    logged[_dump(event)] -= 1
                else:
                    self._absorb(event)

    def on_event(self, event: dict[str, Any]) -> None:
        """A game event (called by the live loop's thread; never raises into it)."""
        try:
            with self._lock:
                if self._early is not None:
                    self._early.append(event)
                    return
                compact = self._absorb(event)
                if not self._clients:
                    return
                messages = [_dump({"type": "event", "event": compact}), _dump({"type": "state", "state": self.state()})]
            for message in messages:
                self._broadcast(message)
        except Exception:  # the page is a view: a bug here must not stop the referee
            logger.exception("station: event not shown")

    def _absorb(self, event: dict[str, Any]) -> dict[str, Any]:
        kind = event.get("event")
        if kind == "move":
            self.moves[int(event["number"])] = event
        elif kind == "restore" and event.get("after_move") is not None:
            self.restored[int(event["after_move"])] = bool(event.get("complete"))
        elif kind == "override":
            action = event.get("action")
            if action == "undo":
                record = self._last_override()
                if record is not None:
                    record["undone"] = True
            elif action in ACTIONS:
                self.overrides.append({"event": event, "undone": False})
        self.seq += 1
        compact = {"seq": self.seq, "event": kind, "time_s": event.get("time_s"), "text": event_text(event)}
        if kind == "move":
            compact |= {"move": event["number"], "verdict": self.move_view(int(event["number"]))["verdict"]}
        elif kind == "override":
            compact |= {"move": event.get("move"), "action": event.get("action")}
            if event.get("move") in self.moves:
                compact["verdict"] = self.move_view(int(event["move"]))["verdict"]
        self.recent.append(compact)
        return compact

    def _last_override(self) -> dict[str, Any] | None:
        return next((r for r in reversed(self.overrides) if not r["undone"]), None)

    # -- views ----------------------------------------------------------------------------------------------
    @property
    def keeper(self) -> Any:
        return self.session.keeper

    def status(self) -> dict[str, Any]:
        """Who is on move, who has opened, the move's time: small, sent every second."""
        keeper = self.keeper
        pending = keeper.pending
        limit = time_limit(keeper)
        now = float(self.session.latest_time_s or 0.0)
        started = float(keeper.turn_started_s)
        elapsed = max(0.0, now - started) if keeper.table is not None else None
        pipeline = getattr(self.session, "pipeline", None)
        return {
            "profile": keeper.profile,
            "players": keeper.players,
            "player": keeper.player,
            "seat": keeper.seat_of(keeper.player),
            "seats": [SEAT_NAMES[keeper.seat_of(p)] for p in range(keeper.players)],
            "opened": list(keeper.opened),
            "moves": keeper.moves,
            "clock_mode": keeper.clock_mode,
            "now_s": round(now, 3),
            "turn_started_s": round(started, 3),
            "elapsed_s": None if elapsed is None else round(elapsed, 2),
            "time_limit_s": limit,
            "remaining_s": None if limit is None or elapsed is None else round(limit - elapsed, 2),
            "warn_s": WARN_BEFORE_S,
            "pending_restore": None if pending is None else pending.after_move,
            "phase": getattr(pipeline, "phase", None),
        }

    def move_view(self, number: int, *, tables: bool = False) -> dict[str, Any]:
        """One move as it stands after the referee's overrides (corrections re-rule; ok/revert decide)."""
        with self._lock:
            move = self.moves[number]
            records = [r for r in self.overrides if r["event"].get("move") == number]
        ruling, decision = move["ruling"], None
        before, after = move["before"], move["after"]
        history = []
        for record in records:
            event = record["event"]
            history.append({"action": event.get("action"), "time_s": event.get("time_s"),
                            "text": override_text(event), "undone": record["undone"]})  # fmt: skip
            if record["undone"]:
                continue
            if event.get("action") == "correct":
                with contextlib.suppress(KeyError, IndexError, TypeError, ValueError):
                    if event.get("table") == "before":
                        before = GameKeeper.relabel(before, event["place"], event["label"])
                    else:
                        after = GameKeeper.relabel(after, event["place"], event["label"])
                if isinstance(event.get("ruling"), dict):
                    ruling, decision = event["ruling"], None
            else:
                decision = event.get("action")
        verdict = {"ok": "ok", "revert": "revert"}.get(decision or "", ruling["verdict"])
        penalty = ruling.get("penalty_tiles", 0)
        if verdict == "revert" and not penalty:
            penalty = get_profile(ruling.get("profile") or self.keeper.profile).penalty_tiles
        plan = ruling.get("revert") or {}
        view: dict[str, Any] = {
            "number": number,
            "player": move["player"],
            "seat": SEAT_NAMES[move["seat"]] if move.get("seat") is not None else None,
            "kind": move.get("kind", ruling.get("kind")),
            "time_s": move.get("time_s"),
            "elapsed_s": move.get("elapsed_s"),
            "ended_by": move.get("ended_by"),
            "opened": move.get("opened"),
            "ruled": move["ruling"]["verdict"],  # the camera's ruling, before any override
            "verdict": verdict,
            "decision": decision,
            "played": ruling.get("played", []),
            "removed": ruling.get("removed", []),
            "violations": [{"code": v["code"], "detail": v["detail"]} for v in ruling.get("violations", [])],
            "penalty_tiles": penalty if verdict == "revert" else 0,
            "to_rack": plan.get("to_rack", []) if verdict == "revert" else [],
            "to_table": plan.get("to_table", []) if verdict == "revert" else [],
            "uncertain": [
                {**u, "text": _place_text(u["table"], u["place"]) + f": {u['tile']}?"}
                for u in ruling.get("uncertain", [])
            ],
            "notes": ruling.get("notes", []),
            "overrides": history,
            "restored": self.restored.get(number),
        }
        if tables:
            profile = ruling.get("profile") or self.keeper.profile
            changed = plan.get("changed_sets", []) if ruling["verdict"] != "ok" else []
            view["before"] = table_view(before, profile)
            view["after"] = table_view(after, profile, changed_sets=changed)
            view["restore"] = plan.get("restore") or move["before"]
        return view

    def banner(self) -> dict[str, Any]:
        """The ruling on the last move, with what the referee must show for a REVERT or a REVIEW."""
        keeper = self.keeper
        if not self.moves:
            return {"verdict": None, "title": "Waiting for the first move"}
        number = max(self.moves)
        view = self.move_view(number, tables=True)
        profile = keeper.profile
        current = keeper.table.to_json(with_extras=True) if keeper.table is not None else None
        banner = {**view, "title": f"Move {number}: player {view['player'] + 1}"}
        del banner["before"]
        if view["verdict"] == "revert":
            pending = keeper.pending
            waiting = pending is not None and pending.after_move == number
            target = pending.table.to_json() if waiting else view["restore"]
            guide = restore_guide(current, target)
            banner["restore_table"] = table_view(
                view["restore"] if not waiting else target, profile,
                marks=guide["restore_marks"], changed_sets=guide["restore_changed"],
            )  # fmt: skip
            banner["current_table"] = table_view(
                current, profile, marks=guide["current_marks"], changed_sets=guide["current_changed"]
            )
            banner["restore_state"] = "waiting" if waiting and not guide["done"] else "restored"
            banner["still_to_rack"], banner["still_to_table"] = guide["to_rack"], guide["to_table"]
        return banner

    def state(self) -> dict[str, Any]:
        """Everything the page shows (the lock keeps out the live loop's events while it is put together)."""
        keeper = self.keeper
        with self._lock:
            last = self._last_override()
            table = keeper.table.to_json(with_extras=True) if keeper.table is not None else None
            return {
                "seq": self.seq,
                "status": self.status(),
                "table": table_view(table, keeper.profile),
                "banner": self.banner(),
                "moves": [self.move_view(n) for n in sorted(self.moves, reverse=True)[:LOG_MOVES]],
                "events": list(reversed(self.recent)),
                "undo": None if last is None else override_text(last["event"]),
                "log": str(getattr(getattr(self.session, "log", None), "path", "") or ""),
            }

    # -- actions ----------------------------------------------------------------------------------------------
    def override_details(self, request: Any) -> dict[str, Any]:
        """Check a referee's override from the page and complete it with what the keeper needs to replay it."""
        if not isinstance(request, dict):
            raise StationError("an override is a JSON object with an 'action'")
        action = request.get("action")
        if action not in ACTIONS:
            raise StationError(f"unknown override action {action!r} (expected {', '.join(ACTIONS)})")
        if action == "undo":
            if self._last_override() is None:
                raise StationError("no override to undo")
            return {"action": "undo", "by": "station"}
        number = request.get("move")
        if isinstance(number, bool) or not isinstance(number, int) or number not in self.moves:
            raise StationError(f"no move {number!r} in this game")
        view = self.move_view(number, tables=True)
        move = self.moves[number]
        details: dict[str, Any] = {"action": action, "move": number, "by": "station"}
        if action == "ok":
            details |= {"player": move["player"], "played": view["played"]}
        elif action == "revert":
            details |= {"player": move["player"], "opened": move.get("opened"), "restore": move["before"]}
        elif action == "correct":
            which, place, label = request.get("table"), request.get("place"), request.get("label")
            if which not in ("before", "after"):
                raise StationError("a correction names the table: 'before' or 'after'")
            if not isinstance(place, list) or len(place) != 2 or not all(type(v) is int for v in place):
                raise StationError("a correction names the place: [set, position] (set -1: a loose tile)")
            if not isinstance(label, str):
                raise StationError("a correction gives the tile's label, e.g. red-7")
            table = _effective_table(move[which], self.overrides, number, which)
            try:
                was = _label(_tile_at(table, place))
                canonical = str(Tile.parse(label))
            except (IndexError, KeyError):
                raise StationError(f"no tile at {_place_text(which, place)} of move {number}") from None
            except TileError as error:
                raise StationError(str(error)) from None
            details |= {"table": which, "place": place, "label": canonical, "was": was}
        return details

    # -- the camera view ------------------------------------------------------------------------------------
    def frame_jpeg(self) -> bytes:
        """The newest frame, scaled to :data:`FRAME_WIDTH`, with the table's reading drawn on it."""
        image = self.session.latest_image
        keeper = self.keeper
        pipeline = getattr(self.session, "pipeline", None)
        table = keeper.table
        if table is None and pipeline is not None:
            table = pipeline.latest.get("table")
        cached = self._frame
        if cached is not None and cached[0] is image and cached[1] is table:
            return cached[2]
        data = _encode(_draw(image, table, keeper.profile))
        self._frame = (image, table, data)
        return data

    # -- pushing ---------------------------------------------------------------------------------------------
    def add_client(self, client: tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]) -> None:
        with self._lock:
            self._clients.append(client)

    def remove_client(self, client: tuple[asyncio.AbstractEventLoop, asyncio.Queue[str]]) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._clients.remove(client)

    def _broadcast(self, message: str) -> None:
        with self._lock:
            clients = list(self._clients)
        for loop, queue in clients:
            with contextlib.suppress(RuntimeError):  # that page's server loop has closed
                loop.call_soon_threadsafe(queue.put_nowait, message)


def _effective_table(table: dict[str, Any], overrides: list[dict[str, Any]], number: int, which: str) -> Any:
    for record in overrides:
        event = record["event"]
        if record["undone"] or event.get("move") != number or event.get("action") != "correct":
            continue
        if event.get("table") == which:
            with contextlib.suppress(KeyError, IndexError, TypeError, ValueError):
                table = GameKeeper.relabel(table, event["place"], event["label"])
    return table


def _tile_at(table: dict[str, Any], place: list[int]) -> Any:
    set_index, position = place
    if set_index < LOOSE or position < 0:
        raise IndexError(place)
    return (table["loose"] if set_index == LOOSE else table["sets"][set_index])[position]


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)


# -- pictures and sound -----------------------------------------------------------------------------------------


def _draw(image: np.ndarray | None, table: Table | None, profile: str) -> np.ndarray:
    from vision.annotate import BoxAnnotator, LabelAnnotator, SetAnnotator

    if image is None:
        canvas = np.full((540, FRAME_WIDTH, 3), 40, np.uint8)
        cv2.putText(canvas, "waiting for the camera", (250, 280), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (200, 200, 200), 2)
        return canvas
    height, width = image.shape[:2]
    scale = min(1.0, FRAME_WIDTH / width)
    small = image if scale == 1.0 else cv2.resize(image, (round(width * scale), round(height * scale)), cv2.INTER_AREA)
    if small.ndim == 2:
        small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    if table is None:
        return small
    scaled = _scaled_table(table, scale)
    for annotator in (SetAnnotator(profile=profile), BoxAnnotator(), LabelAnnotator(show_confidence=False, short=True)):
        small = annotator.annotate(small, scaled)
    return small


def _scaled_table(table: Table, scale: float) -> Table:
    if scale == 1.0:
        return table
    extras = {
        place: {**extra, "box": [float(v) * scale for v in extra["box"]]} if "box" in extra else extra
        for place, extra in table.extras.items()
    }
    return Table(table.sets, table.loose, table.uncertain, extras)


def _encode(image: np.ndarray) -> bytes:
    ok, buffer = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:  # pragma: no cover - OpenCV encodes any BGR uint8 image
        raise StationError("the camera frame could not be encoded")
    return buffer.tobytes()


def revert_sound(rate: int = 22050) -> bytes:
    """A short falling two-tone alarm (WAV, 16-bit mono), made here rather than shipped as a file."""
    parts = []
    for frequency, seconds in ((880.0, 0.16), (0.0, 0.04), (660.0, 0.16), (0.0, 0.04), (440.0, 0.32)):
        t = np.arange(round(rate * seconds)) / rate
        envelope = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.01) if len(t) else t
        tone = np.sin(2 * math.pi * frequency * t) + 0.3 * np.sin(6 * math.pi * frequency * t)
        parts.append(0.45 * envelope * tone / 1.3)
    samples = (np.concatenate(parts) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


# -- the web app --------------------------------------------------------------------------------------------


class Guard:
    """Every request carries the token (when there is one) and comes from the station's own page."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        problem = None
        if self.token is not None and not self._has_token(scope, headers):
            problem = (401, "this station needs its token: open the address printed by the live command")
        elif scope["type"] == "websocket" or scope.get("method") not in ("GET", "HEAD"):
            origin = headers.get("origin")
            if origin and origin != "null" and urlsplit(origin).netloc != headers.get("host"):
                problem = (403, "requests from another site's page are refused")
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await WebSocketClose(code=1008, reason=problem[1])(scope, receive, send)
        else:
            await PlainTextResponse(problem[1], status_code=problem[0])(scope, receive, send)

    def _has_token(self, scope: Scope, headers: dict[str, str]) -> bool:
        assert self.token is not None
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        bearer = headers.get("authorization", "")
        offered = [*query.get("token", []), headers.get(TOKEN_HEADER, "")]
        if bearer.lower().startswith("bearer "):
            offered.append(bearer[7:].strip())
        expected = self.token.encode()
        return any(hmac.compare_digest(value.encode(), expected) for value in offered if value)


NO_STORE = {"Cache-Control": "no-store"}


def create_app(station: Station) -> Starlette:
    """The station's web app (for uvicorn, or Starlette's TestClient in tests)."""
    query = "" if station.token is None else "?token=" + quote(station.token, safe="")
    page = (STATIC / "index.html").read_text(encoding="utf-8").replace("{{query}}", html.escape(query))
    sound = revert_sound()

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=NO_STORE)

    async def state(request: Request) -> Response:
        return JSONResponse(json.loads(_dump(await run_in_threadpool(station.state))), headers=NO_STORE)

    async def move(request: Request) -> Response:
        number = int(request.path_params["number"])
        if number not in station.moves:
            return JSONResponse({"error": f"no move {number} in this game"}, status_code=404)
        view = await run_in_threadpool(station.move_view, number, tables=True)
        return JSONResponse(json.loads(_dump(view)), headers=NO_STORE)

    async def clock(request: Request) -> Response:
        station.session.press_clock()
        return JSONResponse({"queued": "clock"}, status_code=202)

    async def override(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the override must be a JSON object"}, status_code=400)
        try:
            details = station.override_details(body)
        except (StationError, TableError) as error:
            return JSONResponse({"error": str(error)}, status_code=422)
        station.session.override(**details)
        return JSONResponse({"queued": details}, status_code=202)

    async def frame(request: Request) -> Response:
        data = await run_in_threadpool(station.frame_jpeg)
        return Response(data, media_type="image/jpeg", headers=NO_STORE)

    async def revert_wav(request: Request) -> Response:
        return Response(sound, media_type="audio/wav")

    async def updates(websocket: WebSocket) -> None:
        await websocket.accept()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str] = asyncio.Queue()
        client = (loop, queue)
        station.add_client(client)
        listener = asyncio.create_task(_until_closed(websocket))
        try:
            await websocket.send_text(_dump({"type": "state", "state": await run_in_threadpool(station.state)}))
            next_tick = loop.time() + TICK_S
            while not listener.done():
                try:
                    message = await asyncio.wait_for(queue.get(), max(0.0, next_tick - loop.time()))
                except TimeoutError:
                    message = _dump({"type": "tick", "status": station.status()})
                    next_tick = max(next_tick + TICK_S, loop.time())
                await websocket.send_text(message)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # the page went away
        finally:
            station.remove_client(client)
            listener.cancel()

    routes = [
        Route("/", index),
        Route("/api/state", state),
        Route("/api/moves/{number:int}", move),
        Route("/api/clock", clock, methods=["POST"]),
        Route("/api/override", override, methods=["POST"]),
        Route("/frame.jpg", frame),
        Route("/revert.wav", revert_wav),
        WebSocketRoute("/ws", updates),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard, token=station.token)])


async def _until_closed(websocket: WebSocket) -> None:
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return


# -- serving ------------------------------------------------------------------------------------------------


class StationServer:
    """A running station: its address (``url`` includes the token) and :meth:`stop`."""

    def __init__(self, station: Station, server: Any, thread: threading.Thread, host: str, port: int) -> None:
        self.station, self.server, self.thread = station, server, thread
        self.host, self.port = host, port

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = "" if self.station.token is None else "?token=" + quote(self.station.token, safe="")
        return f"http://{host}:{self.port}/{query}"

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def serve_in_thread(
    session: Any, bind: str | None, token: str | None = None, *, announce: Callable[[str], None] | None = None
) -> StationServer:
    """Serve the station for ``session`` from a daemon thread; returns once it listens.

    ``bind`` is ``HOST:PORT`` (default 127.0.0.1:8000; port 0 picks a free one). Off loopback a token is
    required (:class:`StationError`, a one-line message). ``announce`` hears the address (default: stderr).
    """
    import uvicorn

    host, port = parse_bind(bind, token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server(("127.0.0.1" if host == "localhost" else host, port), family=family)
    except OSError as error:
        raise StationError(f"the station cannot listen on {host}:{port}: {error.strerror or error}") from None
    station = Station(session, token)
    config = uvicorn.Config(
        create_app(station), log_level="warning", access_log=False, lifespan="off", ws="wsproto"
    )  # fmt: skip
    server = uvicorn.Server(config)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(server.serve(sockets=[sock]))
        except BaseException as error:  # reported to the caller below, or logged once it runs
            failure.append(error)
            logger.exception("station: the server stopped")
        finally:
            sock.close()

    thread = threading.Thread(target=run, name="referee-station", daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        thread.join(0.02)
    if not server.started:
        raise StationError(f"the station did not start: {failure[0] if failure else 'unknown error'}")
    handle = StationServer(station, server, thread, host, sock.getsockname()[1])
    (announce or _stderr)(f"referee station: {handle.url}")
    return handle


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
