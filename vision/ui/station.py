"""The referee station: a web page beside the table for the referee of a final, served while ``live`` runs.

``rummikub-referee live ... --serve [HOST:PORT]`` starts it (:func:`serve_in_thread`) before the live loop.
The page (``vision/ui/station_static``: plain HTML, JavaScript and CSS, nothing fetched from the internet)
shows the camera view with the reading drawn on it, the table as big tile chips, the move timer, who is on
move and who has opened, the ruling on the last move (OK; REVERT with the layout to restore beside the
table as it is; REVIEW naming the uncertain tiles), the move log and the referee's overrides.

- ``GET /`` the page; ``GET /frame.jpg`` the camera view with the play area read (green, as ``calibrate
  --preview`` draws it) and the reading drawn on it (encoded at most
  :data:`FRAME_FPS` times a second, the same bytes for every page; ``ETag``/``If-None-Match``); ``GET
  /revert.wav`` the sound a REVERT makes.
- ``GET /api/state`` everything the page shows; ``GET /api/moves/N`` one move with its tables.
- ``POST /api/clock`` the clock key; ``POST /api/override`` (JSON ``{"action": "accept"|"ok"|"revert"|
  "correct"|"undo", "move": N, ...}``) the referee's word on a move, recorded in the game log; ``POST /api/word``
  (JSON ``{"event": "pool-empty"|"redeal"|"announced-opening"|"out", "player": N, "pairs": N}``) the referee's word
  on the table (:data:`~referee.events.TableWord`: the pool ran out, a re-deal for three pairs, "I'll open next
  round", a player went out), checked against the game first and recorded in the game log; the undo takes back
  the last override or word.
- ``WS /ws`` pushes ``{"type": "event", "event": ...}`` and ``{"type": "state", "state": ...}`` for every
  game event and ``{"type": "tick", "status": ...}`` every second.

Who may do what is :mod:`vision.ui.station_access`'s business: the Host and Origin checks, the page token every
state-changing request carries, the secret and login off loopback, the throttle on failed attempts.

Many pages may watch one game (a referee's laptop, a screen for the audience, the tournament office) without
slowing the referee down: the state is built once per game event (cached by :attr:`Station.seq`) and the
camera view once per :data:`FRAME_FPS` period, whatever the number of pages; the live loop's thread only files
the event and wakes the server's loop, which sends the same prepared messages to every page.

Game events reach the station from the live loop's thread (:meth:`Station.on_event`); the station only
reads the game state and queues the referee's actions through the session (``press_clock``, ``override``),
so the live loop stays the one writer of the game.

Size: 1,214 lines: the views the page shows (tiles, tables, the restore guide), :class:`Station` (about 460 lines: the
state built once per event, overrides and words checked, the camera view), the WebSocket :class:`Fanout`, the drawing
and encoding of the camera view, the app's routes (:func:`create_app`) and the server thread. The next split is the web
app (``create_app``, ``setup_page``, ``parse_override``, ``StationServer``, ``serve_in_thread``, about 240 lines) and
the frame drawing (``_draw`` to ``_encode``) into modules of their own (to do).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import html
import io
import json
import logging
import math
import secrets
import socket
import sys
import threading
import time
import wave
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard, runtime_checkable

import cv2
import numpy as np
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from referee.events import (
    Move,
    OpeningDeclared,
    Override,
    PoolEmpty,
    RedealRequest,
    Undo,
    WentOut,
    describe_at_limit,
    describe_line,
    describe_override,
    event_from_json,
    limit_passed_s,
)
from referee.game import GameStateError
from referee.profiles import get_profile
from referee.sets import TileSet
from referee.table import LOOSE, Table, TableError
from referee.tiles import Tile, TileError
from vision.game.gamelog import GameLog
from vision.game.moves import GameKeeper
from vision.runtime.seats import seat_numbered
from vision.ui.report import summary_text
from vision.ui.station_access import (
    DEFAULT_PORT,
    Guard,
    LoginThrottle,
    StationAccess,
    StationAddress,
    StationError,
    is_loopback,
    parse_bind,
    read_body,
    station_address,
)

if TYPE_CHECKING:
    from vision.game.pipeline import TablePipeline
    from vision.runtime.calibrate import Calibration
    from vision.runtime.reader import Reader

__all__ = [
    "Station",
    "StationError",
    "StationServer",
    "create_app",
    "is_loopback",
    "parse_bind",
    "restore_guide",
    "revert_sound",
    "serve_in_thread",
    "station_address",
    "summary_text",
]

STATIC = Path(__file__).with_name("station_static")
RECENT_EVENTS = 40
"""Events kept for the page's event list."""
LOG_MOVES = 60
"""Moves listed on the page (the newest); older ones stay in the game log and in ``/api/moves/N``."""
TICK_S = 1.0
WARN_BEFORE_S = 10.0
"""The timer warns this many seconds before the move's time runs out."""
FRAME_WIDTH = 960
FRAME_FPS = 2.0
"""The camera view is encoded at most this often, whatever the number of pages: it confirms what the reading
saw (the ruling is on the banner, pushed at once), and the page asks for it every 1/FRAME_FPS s."""
CLIENT_QUEUE = 256
"""Messages a page may fall behind by before it is disconnected (it reconnects and gets the whole state)."""
MAX_CONNECTIONS = 512
"""Connections served at once (a page holds one WebSocket and a few HTTP connections); more are answered 503."""
MAX_WS_MESSAGE_BYTES = 64 * 1024
"""Pages send nothing over the WebSocket; a big message is refused rather than buffered."""
ACTIONS = ("accept", "ok", "revert", "correct", "undo")
WORDS = (PoolEmpty.KIND, RedealRequest.KIND, OpeningDeclared.KIND, WentOut.KIND)
"""The referee's words on the table the page records (``POST /api/word``)."""
MAX_LABEL_CHARS = 40
"""Longer than any way of writing a tile's label: a longer one is refused before it is parsed or quoted."""

logger = logging.getLogger(__name__)


# -- the game as the page shows it --------------------------------------------------------------------------


def time_limit(keeper: GameKeeper) -> float | None:
    """The move time in force (the profile's, or a limit agreed at the table; None: no limit), as the game holds it."""
    return keeper.game.time_limit_s


def _label(tile: Any) -> str:
    return str(tile if isinstance(tile, str) else tile["label"])


def _finite_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def reading_is_uncertain(fields: dict[str, Any]) -> bool:
    """A tile the camera read is uncertain when it says so, or its confidence is under 0.5, not a finite number
    (``NaN`` compares false with everything), or missing from a reading (a tile with a box)."""
    if fields.get("uncertain"):
        return True
    if "confidence" not in fields:
        return "box" in fields
    confidence = fields["confidence"]
    return not (_finite_number(confidence) and confidence >= 0.5)


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
        "uncertain": reading_is_uncertain(fields),
    }
    if _finite_number(confidence):
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
    sets: list[dict[str, Any]] = []
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
    """A short line for the page's event list: :func:`referee.events.describe`, as the console and the report."""
    return describe_line(event)


def at_limit_view(move: dict[str, Any], limit_s: float | None) -> dict[str, Any] | None:
    """What the camera saw when the time limit passed during a move over time (None for a move in time, or a line
    the game cannot take): :func:`referee.events.describe_at_limit`'s line, when the limit passed, whether the table
    was seen then and touched after it."""
    elapsed = move.get("elapsed_s")
    if limit_s is None or not _finite_number(elapsed) or elapsed <= limit_s:
        return None
    try:
        typed = event_from_json(move)
    except GameStateError:
        return None
    text = describe_at_limit(typed, limit_s) if isinstance(typed, Move) else None
    if text is None or not isinstance(typed, Move):
        return None
    passed = limit_passed_s(typed, limit_s)
    return {
        "text": text,
        "passed_s": None if passed is None else round(passed, 2),
        "seen": typed.table_at_limit is not None,
        "touched": typed.touched_after_limit,
    }


def amended_text(parts: list[dict[str, Any]]) -> str:
    """The line of an amended move (the same player went on after a part of the turn was ruled): the whole turn
    ruled again, and the part's ruling it replaces (``parts``: the replaced lines, oldest first; none where the
    station did not see them)."""
    rulings = [
        f"{str(p.get('ruling', {}).get('verdict', '?')).upper()}"
        + (f" at {_clock(p['time_s'])}" if _finite_number(p.get("time_s")) else "")
        for p in parts
    ]
    text = "Amended: the whole turn ruled again"
    if len(rulings) == 1:
        return f"{text}; it replaces its first part's ruling ({rulings[0]})"
    if rulings:
        return f"{text}; it replaces the rulings of its parts ({', '.join(rulings)})"
    return text


def _clock(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"{whole // 60:02d}:{whole % 60:02d}"


def override_text(event: dict[str, Any]) -> str:
    if event.get("event") in WORDS:
        return event_text(event).removeprefix("Referee: ").split(": ")[0]
    try:
        typed = event_from_json({**event, "event": "override"})
    except GameStateError:
        return str(event.get("action"))
    return describe_override(typed) if isinstance(typed, Override | Undo) else str(event.get("action"))


class StationSession(Protocol):
    """What the station needs of the game it serves: :class:`vision.session.live.LiveSession` (the station sits a
    layer below the session, so it names what it uses instead of importing it)."""

    keeper: GameKeeper
    log: GameLog
    pipeline: TablePipeline | None
    reader: Reader
    latest_image: np.ndarray | None
    latest_time_s: float

    @property
    def behind(self) -> dict[str, Any] | None: ...

    def subscribe(self, listener: Callable[[dict[str, Any]], None]) -> None: ...

    def press_clock(self) -> None: ...

    def override(self, **details: Any) -> None: ...


@runtime_checkable
class ModelFolder(Protocol):
    """A reader that reads with the models of a folder (:class:`vision.runtime.reader.TileReader`)."""

    models_dir: Path


class Station:
    """What the page shows, kept from the game's events; and the referee's actions, passed to the session."""

    def __init__(
        self, session: StationSession, *, frame_fps: float = FRAME_FPS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.session = session
        self.frame_fps = frame_fps
        self.clock = clock
        self._lock = threading.RLock()
        self.seq = 0
        self.recent: deque[dict[str, Any]] = deque(maxlen=RECENT_EVENTS)
        self.moves: dict[int, dict[str, Any]] = {}
        self.parts: dict[int, list[dict[str, Any]]] = {}
        """The lines an amendment replaced, by move number (the part ruled as it settled, then the whole turn)."""
        self.overrides: list[dict[str, Any]] = []
        """``{"event", "undone"}`` for every override the keeper acts on (the same rules as its own)."""
        self.restored: dict[int, bool] = {}
        self.ended: dict[str, Any] | None = None
        """The game's ``end`` event once it has come (a video watched to its end): the page then shows the summary
        and the station refuses the clock key and overrides, as nothing is left to play them."""
        self._fanouts: dict[asyncio.AbstractEventLoop, Fanout] = {}
        self._outbox: deque[tuple[int, str]] = deque(maxlen=CLIENT_QUEUE)
        """``(seq, message)`` for the newest events, for the fan-outs to send."""
        self._views: dict[str, tuple[int, str]] = {}
        """JSON built for a seq: ``"state"`` (without the status) and ``"move-N"``."""
        self._frame: EncodedFrame | None = None
        self._frame_lock = threading.Lock()
        self._frame_tag = secrets.token_hex(4)
        """Starts every ETag: a page that outlived a restart never matches a new frame with an old tag."""
        self._early: list[dict[str, Any]] | None = []
        session.subscribe(self.on_event)
        self._load_history()

    # -- events in ----------------------------------------------------------------------------------------
    def _load_history(self) -> None:
        """The game so far, from the game log (a resumed game, or events before the station started)."""
        from vision.game.gamelog import GameLogError, read_log

        path = self.session.log.path
        events: list[dict[str, Any]] = []
        if path.exists():
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
                self._outbox.append((self.seq, _dump({"type": "event", "event": compact})))
                fanouts = list(self._fanouts.values())
            for fanout in fanouts:  # the state is built on the server's side, not on the live loop's time
                fanout.wake_threadsafe()
        except Exception:  # the page is a view: a bug here must not stop the referee
            logger.exception("station: event not shown")

    def _absorb(self, event: dict[str, Any]) -> dict[str, Any]:
        kind = event.get("event")
        if kind == "move":
            number = int(event["number"])
            replaced = self.moves.get(number)
            if replaced is not None and event.get("amends") is not None:  # the whole turn ruled again
                self.parts.setdefault(number, []).append(replaced)
                for line in self.recent:  # its part's line in the event list: replaced, not a move of its own
                    if line.get("event") == "move" and line.get("move") == number:
                        line["replaced"] = True
            self.moves[number] = event
        elif kind == "restore" and event.get("after_move") is not None:
            self.restored[int(event["after_move"])] = bool(event.get("complete"))
        elif kind == "end":
            self.ended = event
        elif kind in ("start", "resume"):
            self.ended = None
        elif kind == "override":
            action = event.get("action")
            if action == "undo":
                record = self._last_override()
                if record is not None:
                    record["undone"] = True
            elif action in ACTIONS:
                self.overrides.append({"event": event, "undone": False})
        elif kind in WORDS:  # the game's ledger holds them with the overrides: the undo takes back either
            self.overrides.append({"event": event, "undone": False})
        self.seq += 1
        compact = {"seq": self.seq, "event": kind, "time_s": event.get("time_s"), "text": event_text(event)}
        if kind == "move":
            compact |= {"move": event["number"], "verdict": self.move_view(int(event["number"]))["verdict"]}
            if event.get("amends") is not None:  # the whole turn ruled again: it replaces the move of its number
                compact["amends"] = event["amends"]
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
    def keeper(self) -> GameKeeper:
        return self.session.keeper

    def status(self) -> dict[str, Any]:
        """Who is on move, who has opened, the move's time: small, sent every second."""
        keeper = self.keeper
        pending = keeper.pending
        limit = time_limit(keeper)
        now = float(self.session.latest_time_s or 0.0)
        started = float(keeper.turn_started_s)
        elapsed = max(0.0, now - started) if keeper.table is not None else None
        pipeline = self.session.pipeline
        return {
            "profile": keeper.profile,
            "players": keeper.players,
            "player": keeper.player,
            "seat": keeper.seat_of(keeper.player),
            "seats": [seat.name for seat in keeper.seating],  # as seen in the camera picture
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
            **self.table_words(),
            "phase": None if pipeline is None else pipeline.phase,
            # reading behind the camera (vision.session.live.KeepingUp)
            "behind": self.session.behind,
        }

    def table_words(self) -> dict[str, Any]:
        """The game's ending, re-deals and declarations (the referee's words on the table), and the way play goes
        round the table: the profile's direction, the camera's orientation."""
        keeper = self.keeper
        game = keeper.game
        orientation = keeper.orientation
        return {
            "pool_empty": game.pool_empty,
            "last_round": None if game.last_round is None else list(game.last_round),
            "over": game.over,
            "winner": game.winner,
            "redeals": game.redeals,
            "declared": list(game.declared),
            "direction": get_profile(keeper.profile).direction.value,
            "orientation": "player 1 at the bottom" if orientation is None else orientation.describe(),
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
            "seat": seat.name if (seat := seat_numbered(move.get("seat"))) is not None else None,
            "kind": move.get("kind", ruling.get("kind")),
            "time_s": move.get("time_s"),
            "elapsed_s": move.get("elapsed_s"),
            "ended_by": move.get("ended_by"),
            "opened": move.get("opened"),
            "ruled": move["ruling"]["verdict"],  # the camera's ruling, before any override
            "amended": move.get("amends") is not None,  # the same player went on: the whole turn ruled again
            "amends": move.get("amends"),
            "amended_text": amended_text(self.parts.get(number, [])) if move.get("amends") is not None else None,
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
            "at_limit": at_limit_view(move, time_limit(self.keeper)),
        }
        if tables:
            profile = ruling.get("profile") or self.keeper.profile
            changed = plan.get("changed_sets", []) if ruling["verdict"] != "ok" else []
            view["before"] = table_view(before, profile)
            view["after"] = table_view(after, profile, changed_sets=changed)
            view["restore"] = plan.get("restore") or move["before"]
            if view["at_limit"] is not None:  # the table as read when the limit passed (None: not seen)
                view["at_limit"]["table"] = table_view(move.get("table_at_limit"), profile)
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
            target = pending.table.to_json() if pending is not None and waiting else view["restore"]
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

    def summary(self) -> dict[str, Any] | None:
        """The game's summary once it has ended (None before): why, how many moves, the verdicts as they stand
        after the referee's overrides, the restores."""
        with self._lock:
            if self.ended is None:
                return None
            verdicts = Counter(self.move_view(n)["verdict"] for n in self.moves)
            return {
                "reason": str(self.ended.get("reason") or "stopped"),
                "time_s": self.ended.get("time_s"),
                "moves": len(self.moves),
                "verdicts": {v: verdicts[v] for v in ("ok", "revert", "review")},
                "restores": sum(1 for done in self.restored.values() if done),
                "text": summary_text(len(self.moves), verdicts),
            }

    def state(self) -> dict[str, Any]:
        """Everything the page shows (built afresh: pages get :meth:`state_json`, built once per seq)."""
        return {"status": self.status(), **self._state_core()}

    def _state_core(self) -> dict[str, Any]:
        """The state but the status (the lock keeps out the live loop's events while it is put together)."""
        keeper = self.keeper
        with self._lock:
            last = self._last_override()
            table = keeper.table.to_json(with_extras=True) if keeper.table is not None else None
            return {
                "seq": self.seq,
                "table": table_view(table, keeper.profile),
                "banner": self.banner(),
                "moves": [self.move_view(n) for n in sorted(self.moves, reverse=True)[:LOG_MOVES]],
                "events": list(reversed(self.recent)),
                "undo": None if last is None else override_text(last["event"]),
                "ended": self.summary(),
                "log": str(self.session.log.path),
            }

    # -- what pages get: JSON built once per seq ------------------------------------------------------------
    def state_json(self) -> str:
        """``/api/state``: the state built once per seq, with the status of now (small) put in front."""
        core = self._cached("state", self._state_core)
        return '{"status":' + _dump(self.status()) + "," + core[1:]

    def state_message(self) -> str:
        return '{"state":' + self.state_json() + ',"type":"state"}'

    def tick_message(self) -> str:
        return _dump({"type": "tick", "status": self.status()})

    def move_json(self, number: int) -> str:
        """``/api/moves/N``, built once per seq (:class:`KeyError` for a move not in the game)."""
        if number not in self.moves:
            raise KeyError(number)
        return self._cached(f"move-{number}", lambda: self.move_view(number, tables=True))

    def messages_after(self, seq: int) -> tuple[int, list[str]]:
        """The event messages after ``seq``, then the state now: what every page is sent after a wake-up."""
        with self._lock:
            now = self.seq
            events = [message for at, message in self._outbox if at > seq]
            return now, [*events, self.state_message()]

    def _cached(self, key: str, build: Callable[[], Any]) -> str:
        with self._lock:  # one build per seq: the threads that ask meanwhile wait for it, then share it
            known = self._views.get(key)
            if known is not None and known[0] == self.seq:
                return known[1]
            seq, text = self.seq, _dump(build())
            self._views[key] = (seq, text)
            return text

    # -- actions ----------------------------------------------------------------------------------------------
    def override_details(self, request: Any) -> dict[str, Any]:
        """Check a referee's override from the page and complete it with what the keeper needs to replay it."""
        if not isinstance(request, dict):
            raise StationError("an override is a JSON object with an 'action'")
        action = request.get("action")
        if action not in ACTIONS:
            raise StationError(f"unknown override action {_preview(action)} (expected {', '.join(ACTIONS)})")
        if action == "undo":
            if self._last_override() is None:
                raise StationError("no override to undo")
            game = self.keeper.game
            try:  # a word on the table is undone only while no move came after it: the game says so
                game.apply(game.complete(Undo(0.0)))
            except GameStateError as error:
                raise StationError(str(error)) from None
            return {"action": "undo", "by": "station"}
        number = request.get("move")
        if isinstance(number, bool) or not isinstance(number, int) or number not in self.moves:
            raise StationError(f"no move {_preview(number)} in this game")
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
            if not isinstance(place, list) or len(place) != 2 or not all(_small_int(v) for v in place):
                raise StationError("a correction names the place: [set, position] (set -1: a loose tile)")
            if not isinstance(label, str) or len(label) > MAX_LABEL_CHARS:
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

    def word_details(self, request: Any) -> dict[str, Any]:
        """Check a referee's word on the table from the page against the game as it stands (the game is a value:
        trying it changes nothing), so a word the game would refuse is refused here, in one line."""
        if not isinstance(request, dict):
            raise StationError("a word on the table is a JSON object with an 'event'")
        kind = request.get("event")
        if kind not in WORDS:
            raise StationError(f"unknown word {_preview(kind)} (expected {', '.join(WORDS)})")
        details: dict[str, Any] = {"event": kind}
        for key in ("player", "pairs"):
            value = request.get(key)
            if value is None:
                continue
            if not _small_int(value) or value < 0:
                raise StationError(f"{key} is a whole number, not {_preview(value)}")
            details[key] = value
        if kind == PoolEmpty.KIND and request.get("cause") is not None:
            details["cause"] = request.get("cause")
        if kind != PoolEmpty.KIND and "player" not in details:
            raise StationError(f"{kind}: which player (0-based)?")
        game = self.keeper.game
        try:
            game.apply(game.complete(event_from_json({**details, "time_s": 0.0})))
        except GameStateError as error:
            raise StationError(str(error)) from None
        return {**details, "by": "station"}

    # -- the camera view ------------------------------------------------------------------------------------
    def fresh_frame(self) -> EncodedFrame | None:
        """The camera view encoded less than 1/:attr:`frame_fps` s ago, if there is one (costs nothing)."""
        frame = self._frame
        return frame if frame is not None and self.clock() - frame.made_at < 1.0 / self.frame_fps else None

    def frame(self) -> EncodedFrame:
        """The newest frame, scaled to :data:`FRAME_WIDTH`, with the table's reading drawn on it.

        Encoded at most :attr:`frame_fps` times a second and shared by every page: while one thread encodes,
        the others take the frame before rather than wait or encode the same picture again.
        """
        fresh = self.fresh_frame()
        if fresh is not None:
            return fresh
        previous = self._frame
        if not self._frame_lock.acquire(blocking=previous is None):
            assert previous is not None
            return previous
        try:
            fresh = self.fresh_frame()
            if fresh is not None:
                return fresh
            self._frame = self._encode_frame(self._frame)
            return self._frame
        finally:
            self._frame_lock.release()

    def frame_jpeg(self) -> bytes:
        return self.frame().data

    def _encode_frame(self, previous: EncodedFrame | None) -> EncodedFrame:
        image = self.session.latest_image
        keeper = self.keeper
        pipeline = self.session.pipeline
        table = keeper.table
        if table is None and pipeline is not None:
            table = pipeline.latest.get("table")
        area = None if pipeline is None else pipeline.calibration  # the play area read (found again when it moves)
        if previous is not None and previous.image is image and previous.table is table and previous.area is area:
            return dataclasses.replace(previous, made_at=self.clock())  # the same picture: same bytes, same tag
        number = 1 if previous is None else previous.number + 1
        data = _encode(_draw(image, table, keeper.profile, area))
        return EncodedFrame(image, table, data, number, f'"{self._frame_tag}-{number}"', self.clock(), area)

    # -- pushing ---------------------------------------------------------------------------------------------
    def fanout(self, loop: asyncio.AbstractEventLoop) -> Fanout:
        """The fan-out of the pages connected through ``loop`` (one per server; a test client has several)."""
        with self._lock:
            fanout = self._fanouts.get(loop)
            if fanout is None:
                fanout = self._fanouts[loop] = Fanout(self, loop)
            return fanout

    def leave(self, fanout: Fanout, queue: asyncio.Queue[str | None]) -> None:
        with self._lock:
            fanout.queues.discard(queue)
            if not fanout.queues and self._fanouts.get(fanout.loop) is fanout:
                del self._fanouts[fanout.loop]

    @property
    def pages(self) -> int:
        """Pages connected now (through the WebSocket)."""
        with self._lock:
            return sum(len(f.queues) for f in self._fanouts.values())


@dataclass(frozen=True, slots=True)
class EncodedFrame:
    """The camera view as JPEG, with what it was drawn from (to tell when it is out of date) and its ETag."""

    image: np.ndarray | None
    table: Table | None
    data: bytes
    number: int
    etag: str
    made_at: float
    area: Calibration | None = None
    """The calibration whose play area is drawn (None: none yet)."""


class Fanout:
    """The pages connected through one server loop: each message is prepared once and queued to every page.

    The live loop's thread only calls :meth:`wake_threadsafe`; the state is built here, in a worker thread, once
    per wake-up however many pages there are, and a status tick is built once a second for all of them.
    """

    def __init__(self, station: Station, loop: asyncio.AbstractEventLoop) -> None:
        self.station, self.loop = station, loop
        self.queues: set[asyncio.Queue[str | None]] = set()
        self.sent_seq = station.seq
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def join(self) -> asyncio.Queue[str | None]:
        """A queue of messages for a new page (``None``: it fell too far behind and must reconnect)."""
        queue: asyncio.Queue[str | None] = asyncio.Queue(CLIENT_QUEUE)
        with self.station._lock:
            if self._task is None or self._task.done():
                self.sent_seq = self.station.seq
                self._task = self.loop.create_task(self._run())
            self.queues.add(queue)
        return queue

    def wake_threadsafe(self) -> None:
        with contextlib.suppress(RuntimeError):  # that server loop has closed
            self.loop.call_soon_threadsafe(self._wake.set)

    async def _run(self) -> None:
        next_tick = self.loop.time() + TICK_S
        while self.queues:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.0, next_tick - self.loop.time()))
            if self._wake.is_set():
                self._wake.clear()
                self.sent_seq, messages = await run_in_threadpool(self.station.messages_after, self.sent_seq)
                self._send(messages)
            if self.loop.time() >= next_tick:
                self._send([self.station.tick_message()])
                next_tick = max(next_tick + TICK_S, self.loop.time())

    def _send(self, messages: list[str]) -> None:
        for queue in list(self.queues):
            try:
                for message in messages:
                    queue.put_nowait(message)
            except asyncio.QueueFull:  # that page stopped reading: it is let go, and reconnects for the whole state
                self.station.leave(self, queue)
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)


def _effective_table(table: dict[str, Any], overrides: list[dict[str, Any]], number: int, which: str) -> Any:
    for record in overrides:
        event = record["event"]
        if record["undone"] or event.get("move") != number or event.get("action") != "correct":
            continue
        if event.get("table") == which:
            with contextlib.suppress(KeyError, IndexError, TypeError, ValueError):
                table = GameKeeper.relabel(table, event["place"], event["label"])
    return table


def _small_int(value: Any) -> bool:
    """A set or position number that could be on a table (a huge one would only make a huge error message)."""
    return type(value) is int and LOOSE <= value < 1000


def _tile_at(table: dict[str, Any], place: list[int]) -> Any:
    set_index, position = place
    if set_index < LOOSE or position < 0:
        raise IndexError(place)
    return (table["loose"] if set_index == LOOSE else table["sets"][set_index])[position]


def _dump(value: Any) -> str:
    """Compact JSON; a number that is not finite (from an old log) becomes null rather than JSON no browser reads."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), sort_keys=True, separators=(",", ":"), default=_jsonable)


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def _preview(value: Any, limit: int = 40) -> str:
    """``repr`` of a value from a request, cut short: an error message stays one short line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)


# -- pictures and sound -----------------------------------------------------------------------------------------


PLAY_AREA_COLOUR = (0, 220, 0)
"""The play area's outline on the camera view: green, as ``calibrate --preview`` draws it."""


def _draw(image: np.ndarray | None, table: Table | None, profile: str, area: Calibration | None = None) -> np.ndarray:
    """The camera view: the frame scaled to :data:`FRAME_WIDTH`, the play area read (``area``: a calibration, its
    method named beside it) and the table's reading drawn on it."""
    from vision.ui.annotate import BoxAnnotator, LabelAnnotator, SetAnnotator

    if image is None:
        canvas = np.full((540, FRAME_WIDTH, 3), 40, np.uint8)
        cv2.putText(canvas, "waiting for the camera", (250, 280), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (200, 200, 200), 2)
        return canvas
    height, width = image.shape[:2]
    scale = min(1.0, FRAME_WIDTH / width)
    small = (
        image
        if scale == 1.0
        else cv2.resize(image, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    )
    if small.ndim == 2:
        small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    if area is not None:  # on a copy: never on the camera's own frame (at scale 1, ``small`` is that frame)
        small = _draw_play_area(small.copy() if small is image else small, area, scale)
    if table is None:
        return small
    scaled = _scaled_table(table, scale)
    for annotator in (SetAnnotator(profile=profile), BoxAnnotator(), LabelAnnotator(show_confidence=False, short=True)):
        small = annotator.annotate(small, scaled)
    return small


def _draw_play_area(small: np.ndarray, area: Calibration, scale: float) -> np.ndarray:
    """The play area's outline (the only part of the table read: what lies outside is ignored) with how it was
    chosen (auto, markers, corners, frame) at its top-left corner."""
    corners = np.asarray(area.corners_px, np.float64) * scale
    cv2.polylines(small, [np.round(corners).astype(np.int32)], True, PLAY_AREA_COLOUR, 2, cv2.LINE_AA)
    x, y = np.round(corners[0]).astype(int)
    label = f"play area ({area.method})"
    cv2.putText(small, label, (int(x) + 6, max(14, int(y) - 6)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, PLAY_AREA_COLOUR, 1,
                cv2.LINE_AA)  # fmt: skip
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


NO_STORE = {"Cache-Control": "no-store"}
JSON_TYPE = "application/json"


def create_app(
    station: Station, access: StationAccess | None = None, *, throttle: LoginThrottle | None = None
) -> Starlette:
    """The station's web app (for uvicorn, or Starlette's TestClient in tests).

    ``access`` says which hosts it answers to and holds its secret and page token; by default, the rules for
    127.0.0.1:8000 with no secret (tests use ``TestClient(app, base_url="http://127.0.0.1:8000")``). ``throttle``
    counts failed attempts (tests give one on their own clock).
    """
    access = access or StationAccess.serving(StationAddress(), DEFAULT_PORT)
    page = (STATIC / "index.html").read_text(encoding="utf-8").replace("{{token}}", html.escape(access.page_token))
    sound = revert_sound()

    async def index(request: Request) -> Response:
        return HTMLResponse(page, headers=NO_STORE)

    async def state(request: Request) -> Response:
        return Response(await run_in_threadpool(station.state_json), media_type=JSON_TYPE, headers=NO_STORE)

    async def move(request: Request) -> Response:
        number = int(request.path_params["number"])
        try:
            view = await run_in_threadpool(station.move_json, number)
        except KeyError:
            return JSONResponse({"error": f"no move {number} in this game"}, status_code=404)
        return Response(view, media_type=JSON_TYPE, headers=NO_STORE)

    async def clock(request: Request) -> Response:
        if station.ended is not None:
            return JSONResponse({"error": "the game is over: no clock to press"}, status_code=409)
        station.session.press_clock()
        return JSONResponse({"queued": "clock"}, status_code=202)

    async def override(request: Request) -> Response:
        if station.ended is not None:
            return JSONResponse({"error": "the game is over: overrides go in a new game log"}, status_code=409)
        try:
            body = parse_override(await read_body(request))
        except StationError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        try:
            details = station.override_details(body)
        except (StationError, TableError) as error:
            return JSONResponse({"error": str(error)}, status_code=422)
        station.session.override(**details)
        return JSONResponse({"queued": details}, status_code=202)

    async def word(request: Request) -> Response:
        if station.ended is not None:
            return JSONResponse({"error": "the game is over: nothing more to record"}, status_code=409)
        try:
            body = parse_override(await read_body(request))
        except StationError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        try:
            details = station.word_details(body)
        except StationError as error:
            return JSONResponse({"error": str(error)}, status_code=422)
        # The session's queue takes it with the overrides: its "event" names the word, so the game log's line is
        # the word's own (the live loop writes {"event": "override", ..., **details}).
        station.session.override(**details)
        return JSONResponse({"queued": details}, status_code=202)

    async def frame(request: Request) -> Response:
        shown = station.fresh_frame()
        if shown is None:
            shown = await run_in_threadpool(station.frame)
        headers = {**NO_STORE, "ETag": shown.etag}
        if request.headers.get("if-none-match") == shown.etag:
            return Response(status_code=304, headers=headers)
        return Response(shown.data, media_type="image/jpeg", headers=headers)

    async def revert_wav(request: Request) -> Response:
        return Response(sound, media_type="audio/wav")

    async def setup(request: Request) -> Response:
        reader = station.session.reader
        models_dir = reader.models_dir if isinstance(reader, ModelFolder) else None
        return HTMLResponse(setup_page(models_dir), headers=NO_STORE)

    async def updates(websocket: WebSocket) -> None:
        await websocket.accept()
        fanout = station.fanout(asyncio.get_running_loop())
        queue = fanout.join()
        listener = asyncio.create_task(_until_closed(websocket))
        try:
            await websocket.send_text(await run_in_threadpool(station.state_message))
            while not listener.done():
                message = await queue.get()  # a tick at least every second
                if message is None:
                    await websocket.close(code=1013, reason="this page fell behind: reconnect")
                    break
                await websocket.send_text(message)
        except (WebSocketDisconnect, RuntimeError, OSError):
            pass  # the page went away
        finally:
            station.leave(fanout, queue)
            listener.cancel()

    routes = [
        Route("/", index),
        Route("/api/state", state),
        Route("/api/moves/{number:int}", move),
        Route("/api/clock", clock, methods=["POST"]),
        Route("/api/override", override, methods=["POST"]),
        Route("/api/word", word, methods=["POST"]),
        Route("/frame.jpg", frame),
        Route("/revert.wav", revert_wav),
        Route("/setup", setup),
        Route("/favicon.ico", lambda request: Response(status_code=204)),  # no icon: and no 404 in the console
        WebSocketRoute("/ws", updates),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, middleware=[Middleware(Guard, access=access, throttle=throttle)])


def setup_page(models_dir: Path | None) -> str:
    """``/setup``: before a tournament, enrol the venue's own tile set (the grid to lay out and the command), and
    which models this station reads with (an enrolled folder's card, when it has one)."""
    from vision.runtime.enrolment import CARD_JSON, layout_text

    using = "the shipped models"
    if models_dir is not None:
        using = f"models from {models_dir}"
        card_path = Path(models_dir) / CARD_JSON
        try:
            card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.is_file() else None
        except (OSError, ValueError):
            card = None
        if isinstance(card, dict) and card.get("kind") == "enrolment":
            photos = ", ".join(str(p.get("name")) for p in card.get("photos", []) if isinstance(p, dict))
            using += f" (enrolled {card.get('created', '?')} from {photos or '?'})"
    return (
        "<!doctype html><html lang=en><meta charset=utf-8><title>Referee station: setup</title>"
        "<link rel=stylesheet href=/static/station.css><body class=page><main><h1>Setup: enrol this venue's tiles</h1>"
        f"<p>This station reads tiles with {html.escape(using)}.</p>"
        "<p>Before the tournament, lay one copy of the venue's set out as below, photograph it with the referee"
        " camera, do the same with the second copy, then run the command and restart the station with"
        " <code>--models</code> the new folder (at most 5 minutes on the station's CPU).</p>"
        f"<pre>{html.escape(layout_text())}</pre><p><a href=/>Back to the game</a></p></main></html>"
    )


def parse_override(body: bytes) -> Any:
    """The JSON of an override; malformed or hostile JSON (nested past the parser's depth, ``NaN``, numbers too
    big for a float, not UTF-8) is a one-line :class:`StationError`, never a traceback."""
    try:
        return json.loads(body, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise StationError("the override is nested too deeply: a flat JSON object is expected") from None
    except ValueError as error:  # json.JSONDecodeError, UnicodeDecodeError, the refusals below
        raise StationError(f"the override must be a JSON object ({str(error).splitlines()[0][:80]})") from None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number the station takes")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of range")
    return value


async def _until_closed(websocket: WebSocket) -> None:
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return


# -- serving ------------------------------------------------------------------------------------------------


class StationServer:
    """A running station: the address to open (:attr:`url`), its access rules and :meth:`stop`."""

    def __init__(
        self, station: Station, server: Any, thread: threading.Thread, access: StationAccess, host: str, port: int
    ) -> None:
        self.station, self.server, self.thread, self.access = station, server, thread, access
        self.host, self.port = host, port

    @property
    def url(self) -> str:
        return self.access.url

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def serve_in_thread(
    session: StationSession,
    address: StationAddress | str | None = None,
    *,
    announce: Callable[[str], None] | None = None,
) -> StationServer:
    """Serve the station for ``session`` from a daemon thread; returns once it listens.

    ``address`` comes from :func:`station_address` (the command line's options), or is a plain ``HOST:PORT``
    (default 127.0.0.1:8000; port 0 picks a free one), which must then be loopback: a secret is only taken
    from the command line's options. Problems are a one-line :class:`StationError`. ``announce`` hears how to
    open the station (default: stderr).
    """
    import uvicorn

    if not isinstance(address, StationAddress):
        address = station_address(address, environ={})
    host, port = address.host, address.port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server(("127.0.0.1" if host == "localhost" else host, port), family=family)
    except OSError as error:
        raise StationError(f"the station cannot listen on {host}:{port}: {error.strerror or error}") from None
    bound_port = int(sock.getsockname()[1])
    access = StationAccess.serving(address, bound_port)
    station = Station(session)
    config = uvicorn.Config(
        create_app(station, access), log_level="warning", access_log=False, lifespan="off", ws="wsproto",
        server_header=False, limit_concurrency=MAX_CONNECTIONS, ws_max_size=MAX_WS_MESSAGE_BYTES,
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
    handle = StationServer(station, server, thread, access, host, bound_port)
    (announce or _stderr)(access.announcement())
    return handle


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
