"""One self-contained ``report.html`` for an analysed game: what a referee or an organiser reads afterwards.

Everything comes from the folder :func:`vision.session.analyze.analyze_video` wrote (``game-log.jsonl``,
``summary.json`` and the ``frames/`` thumbnails) and goes into a single file: CSS inline, pictures as base64
``data:`` URIs, a few lines of JavaScript for the filters. It opens offline, can be mailed, and prints.

The page: the game at a glance (video, profile, players, duration, verdicts, analysis speed), the final score
when the racks are known, a timeline with a mark per move, the frames where something went wrong, the
restores, and every move with its pictures, the tiles played set by set and the ruling (violations, the
layout to restore and the penalty, or the readings too uncertain to rule on).

A move's pictures are the region of the table it changed, cut at the camera's full resolution from the video
(when the video is still where the analysis read it) before and after the move, the sets it changed outlined
in blue and the offending ones in red; a click shows a picture at its own size. Without the video, the small
whole-table snapshots of ``frames/`` stand in. Players are named as the station names them (``Player 1
(bottom)``).

Size: 1,076 lines: :class:`Report` (about 430 lines, a method per part of the page), :class:`MoveCrops` and the crop
geometry (a move's region cut from the video, its sets outlined; about 240 lines), the small HTML helpers, and the
inline CSS and JavaScript (about 105 lines). The next split is the crops (``MoveCrops`` to ``_crop_figure``) into a
module of their own, and the CSS and JavaScript into files beside it, as the station's are (to do).
"""

from __future__ import annotations

import base64
import html
import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from referee.events import GameStateError, describe, describe_line, event_from_json
from referee.sets import TileSet
from referee.tiles import Tile, TileError
from vision.game.gamelog import GameLogError, read_log
from vision.runtime.seats import seat_numbered

REPORT_NAME = "report.html"
LOG_NAME = "game-log.jsonl"
VERDICTS = ("ok", "revert", "review")
VERDICT_TITLES = {"ok": "OK", "revert": "REVERT", "review": "REVIEW"}
WARNINGS = ("occluded", "camera-moved", "reading-disagrees", "dropout", "reconnected", "corrupt-frames")
"""Events that are not moves but tell the reader to look at the video (said as :func:`referee.events.describe`
says them, as the console and the station do)."""
TABLE_WORDS = ("pool-empty", "redeal", "announced-opening", "out")
"""The referee's words on the table (the station's Table… dialog, ``record``), listed as the station says them."""
BEFORE_EVENTS = ("move", "restore", "table")
"""Events whose picture shows the table as the next move finds it."""
IMAGE_TYPES = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}
MOVE_KEYS = ("number", "player", "time_s", "ruling")
CROP_PAD_TILES = 0.75
"""Room around a move's changed sets in its pictures, in tile heights (the neighbouring tiles show where it is)."""
CROP_MIN_SHARE = 0.15
"""A move's pictures show at least this share of the frame's width and height, centred on what it changed."""
CROP_QUALITY = 88
SEEK_FRAMES = 300
"""Frames further apart than this are reached by seeking (a long game is not decoded again from end to end)."""
CHANGED_BGR, OFFENDING_BGR = (230, 120, 20), (30, 30, 220)


def summary_text(moves: int, verdicts: Mapping[str, int]) -> str:
    """``6 moves: 4 OK, 2 REVERT, 0 REVIEW``: a game's rulings in one line (the console's, the station's)."""
    counts = ", ".join(f"{verdicts.get(v, 0)} {VERDICT_TITLES[v]}" for v in VERDICTS)
    return f"{moves} move{'s' if moves != 1 else ''}: {counts}"


def final_verdicts(events: Iterable[Mapping[str, Any]]) -> dict[int, str]:
    """Each move's verdict as it stands after the referee's overrides (as the station shows it): ``ok`` and
    ``revert`` decide, a correction re-rules, ``undo`` takes back the last override still in force."""
    verdicts: dict[int, str] = {}
    standing: list[Mapping[str, Any]] = []
    for event in events:
        if event.get("event") == "move":
            verdicts[int(event["number"])] = str(event["ruling"]["verdict"])
        elif event.get("event") == "override":
            if event.get("action") == "undo":
                if standing:
                    standing.pop()
            else:
                standing.append(event)
    for override in standing:
        number, action = override.get("move"), override.get("action")
        if number not in verdicts:
            continue
        if action in ("ok", "revert"):
            verdicts[number] = str(action)
        elif action == "correct" and isinstance(override.get("ruling"), Mapping):
            verdicts[number] = str(override["ruling"].get("verdict", verdicts[number]))
    return verdicts


class ReportError(ValueError):
    """A folder that cannot be made into a report (nothing analysed there, a broken log, bad racks)."""


def write_report(folder: str | Path, *, racks: Mapping[str, Any] | None = None) -> Path:
    """Write ``folder/report.html`` from the analysis in ``folder``; returns its path.

    ``racks``: the racks when the game ended, ``{"players": [{"name", "rack": [labels], "opened"}], "ending":
    "out" | "pool-exhausted"}`` as :mod:`referee.scoring` reads a game, players in turn order (player 1 first);
    adds the score sheet and the players' names.
    """
    folder = Path(folder)
    game = load_game(folder)
    page = Report(folder, game, racks).html()
    path = folder / REPORT_NAME
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        raise ReportError(f"cannot write {path}: {error.strerror or error}") from None
    return path


# -- reading the folder ---------------------------------------------------------------------------------------


def load_game(folder: Path) -> dict[str, Any]:
    """The events of the log and the summary (empty when there is none), checked enough to be drawn."""
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such folder")
    log = folder / LOG_NAME
    if not log.is_file():
        raise ReportError(f"{folder}: no {LOG_NAME} (run analyze first)")
    try:
        events = read_log(log)
    except GameLogError as error:
        raise ReportError(str(error)) from None
    for event in events:
        if event["event"] == "move":
            missing = [key for key in MOVE_KEYS if key not in event]
            ruling = event.get("ruling")
            if not missing and (not isinstance(ruling, dict) or ruling.get("verdict") not in VERDICTS):
                missing = ["ruling.verdict"]
            if missing:
                raise ReportError(f"{log}: move {event.get('number', '?')} has no {missing[0]!r}")
    summary: dict[str, Any] = {}
    summary_path = folder / "summary.json"
    if summary_path.is_file():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ReportError(f"{summary_path}: not a summary (malformed JSON)") from None
        if not isinstance(summary, dict):
            raise ReportError(f"{summary_path}: not a summary (not a JSON object)")
    return {"events": events, "summary": summary}


def score_racks(racks: Mapping[str, Any], profile: str) -> list[dict[str, Any]]:
    """The score of each player (``referee.scoring``), in the order the racks list them."""
    from referee.scoring import Game, ScoreError, score_game

    if not isinstance(racks, Mapping):
        raise ReportError("racks: a JSON object with 'players' and 'ending'")
    try:
        game = Game.from_json(racks, profile=racks.get("profile") or profile)
        scores = score_game(game)
    except (ScoreError, TileError, KeyError) as error:
        raise ReportError(f"racks: {error}") from None
    return [{**s.to_dict(), "rack": [str(t) for t in p.rack]} for s, p in zip(scores, game.players, strict=True)]


# -- the page -------------------------------------------------------------------------------------------------


class Report:
    """The HTML of one analysed game (:meth:`html`)."""

    def __init__(self, folder: Path, game: dict[str, Any], racks: Mapping[str, Any] | None = None) -> None:
        self.folder = folder
        self.events: list[dict[str, Any]] = game["events"]
        self.summary: dict[str, Any] = game["summary"]
        self.start = self.events[0]
        self.moves = [e for e in self.events if e["event"] == "move"]
        self.end = next((e for e in reversed(self.events) if e["event"] == "end"), None)
        self.profile = str(self.start.get("profile", "?"))
        self.scores = None if racks is None else score_racks(racks, self.profile)
        self.names = self._names()
        self.duration = self._duration()
        self.before = self._before_pictures()
        self.crops = MoveCrops(self.folder, self.start, self.events).cut()
        self.restored: dict[Any, list[dict[str, Any]]] = {}
        for event in self.events:
            if event["event"] == "restore":
                self.restored.setdefault(event.get("after_move"), []).append(event)
        self._images: dict[str, str | None] = {}

    def html(self) -> str:
        source = str(self.start.get("source", "game"))
        title = f"Rummikub referee report: {Path(source).name}"
        parts = [
            self.header(),
            self.score_sheet(),
            self.timeline(),
            self.problems(),
            self.restores(),
            self.words(),
            self.move_list(),
            f"<footer>rummikub-referee · report written {html.escape(time.strftime('%Y-%m-%d %H:%M'))}</footer>",
        ]
        body = "\n".join(p for p in parts if p)
        return (
            f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n"
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
        )

    # -- sections ---------------------------------------------------------------------------------------
    def header(self) -> str:
        start, summary = self.start, self.summary
        source = str(start.get("source", "?"))
        verdicts = Counter(m["ruling"]["verdict"] for m in self.moves)
        draws = sum(1 for m in self.moves if m.get("kind") == "draw")
        facts = [
            ("Video", f'<span title="{_e(source)}">{_e(Path(source).name)}</span>'),
            ("Profile", _e(self.profile)),
            ("Players", _e(", ".join(self._seated())) if self.names else _e(start.get("players", "?"))),
            ("Duration", _clock(self.duration)),
            ("Moves", f"{len(self.moves)} ({draws} draw{'s' if draws != 1 else ''})"),
            ("Verdicts", " ".join(_badge(v, f"{verdicts[v]} {VERDICT_TITLES[v]}") for v in VERDICTS)),
        ]
        if summary.get("seconds"):
            speed = summary.get("speed_x_real_time")
            facts.append(
                ("Analysis", f"{summary['seconds']:.0f} s" + (f" ({speed:g}&times; real time)" if speed else ""))
            )
        pipeline = (self.end or {}).get("pipeline") or summary.get("pipeline") or {}
        if pipeline.get("reading_ms_mean"):
            facts.append(
                ("Reading", f"{pipeline['reading_ms_mean']:g} ms per reading ({pipeline.get('readings', 0)} readings)")
            )
        size, fps = start.get("size"), start.get("fps")
        if size:
            facts.append(("Frames", f"{size[0]}&times;{size[1]}" + (f" at {fps:g} fps" if fps else "")))
        if start.get("wall_time"):
            facts.append(("Analysed", _e(str(start["wall_time"]).replace("T", " ")[:16])))
        rows = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
        sub = f'<p class="sub">{_e(source)}</p>' if source != Path(source).name else ""
        return f'<header class="top"><h1>Game report</h1>{sub}<dl class="facts">{rows}</dl></header>'

    def score_sheet(self) -> str:
        if self.scores is None:
            return ""
        rows = []
        for s in sorted(self.scores, key=lambda s: s["place"]):
            rows.append(
                f'<tr class="{"winner" if s["winner"] else ""}"><td>{s["place"]}</td><td>{_e(s["name"])}</td>'
                f'<td class="tiles">{_chips(s["rack"]) or "<i>empty</i>"}</td><td class="n">{s["rack_points"]}</td>'
                f'<td class="n">{_number(s["small_points"])}</td><td class="n">{s["big_points"]}</td>'
                f"<td>{_e(s['note'])}</td></tr>"
            )
        return (
            '<section id="score"><h2>Final score</h2><table class="score"><thead><tr><th>Place</th><th>Player</th>'
            "<th>Rack</th><th>Rack points</th><th>Small points</th><th>Big points</th><th></th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></section>"
        )

    def timeline(self) -> str:
        width, left, right, axis = 1000.0, 24.0, 976.0, 34.0
        span = max(self.duration, 1e-6)

        def x(t: Any) -> float:
            return left + (right - left) * min(max(float(t or 0.0), 0.0), span) / span

        shapes = [f'<line class="axis" x1="{left}" y1="{axis}" x2="{right}" y2="{axis}"/>']
        for tick in _ticks(self.duration):
            shapes.append(
                f'<line class="tick" x1="{x(tick):.1f}" y1="{axis + 14}" x2="{x(tick):.1f}" y2="{axis + 18}"/>'
                f'<text x="{x(tick):.1f}" y="{axis + 30}">{_clock(tick)}</text>'
            )
        for move in self.moves:
            verdict, end = move["ruling"]["verdict"], x(move["time_s"])
            began = x(move.get("start_s") if move.get("start_s") is not None else move.get("turn_started_s", 0.0))
            tip = f"move {move['number']} at {_clock(move['time_s'])}: {self._who(move)} {self._did(move)}, {verdict}"
            codes = _codes(move)
            if codes:
                tip += " (" + ", ".join(codes) + ")"
            shapes.append(
                f'<a href="#move-{move["number"]}" data-move data-verdict="{verdict}"'
                f' data-codes="{_e(" ".join(codes))}"><title>{_e(tip)}</title>'
                f'<rect class="turn {verdict}" x="{began:.1f}" y="{axis - 9}" width="{max(end - began, 0):.1f}"'
                f' height="18"/><rect class="mark {verdict}" x="{end - 2.5:.1f}" y="{axis - 15}" width="5"'
                ' height="30" rx="1.5"/></a>'
            )
        for index, event in enumerate(self.events):
            kind = event["event"]
            if kind in WARNINGS:
                cx = x(event.get("time_s"))
                shapes.append(
                    f'<a href="#event-{index}"><title>{_e(_clock(event.get("time_s", 0)))} {_e(describe_line(event))}'
                    f'</title><path class="warn" d="M{cx:.1f} {axis - 19} l-5 -9 h10 z"/></a>'
                )
            elif kind == "restore":
                shapes.append(
                    f'<a href="#event-{index}"><title>{_e(_clock(event.get("time_s", 0)))} table restored after move'
                    f' {_e(event.get("after_move"))}</title><circle class="restore" cx="{x(event.get("time_s")):.1f}"'
                    f' cy="{axis}" r="4"/></a>'
                )
        legend = (
            '<p class="legend"><span class="key ok"></span>ok <span class="key revert"></span>revert '
            '<span class="key review"></span>review <span class="key restore"></span>table restored '
            '<span class="key warn"></span>warning &mdash; click a mark to go to the move</p>'
        )
        svg = (
            f'<svg class="timeline" viewBox="0 0 {width:.0f} 70" role="img" aria-label="timeline of the game">'
            f"{''.join(shapes)}</svg>"
        )
        return f'<section id="timeline"><h2>Timeline</h2>{svg}{legend}</section>'

    def problems(self) -> str:
        cards = []
        for index, event in enumerate(self.events):
            kind = event["event"]
            if kind == "move" and event["ruling"]["verdict"] != "ok":
                ruling = event["ruling"]
                what = ", ".join(_codes(event)) or ("uncertain reading" if ruling["uncertain"] else "")
                text = (
                    f'<a href="#move-{event["number"]}">Move {event["number"]}</a> '
                    f"{_badge(ruling['verdict'])}<br>{_e(what)}"
                )
                crop = (self.crops.get(int(event["number"])) or {}).get("after")
                cards.append(self._figure(event.get("snapshot"), _clock(event["time_s"]), text, uri=crop))
            elif kind in WARNINGS:
                details = _warning_detail(event)
                text = f"<b>{_e(describe_line(event))}</b>" + (f"<br>{_e(details)}" if details else "")
                at = _clock(event.get("time_s", 0))
                cards.append(self._figure(event.get("snapshot"), at, text, f"event-{index}"))
        title = "<h2>Frames where something went wrong</h2>"
        if not cards:
            return f'<section id="problems">{title}<p>Nothing: every move was ruled OK, no warning.</p></section>'
        return f'<section id="problems">{title}<div class="gallery">{"".join(cards)}</div></section>'

    def restores(self) -> str:
        restores = [(i, e) for i, e in enumerate(self.events) if e["event"] == "restore"]
        if not restores:
            return ""
        cards = []
        for index, event in restores:
            move = event.get("after_move")
            said = _e(describe_line(event))  # "Table restored after move 3": the move links to its card
            text = said.replace(f"move {_e(move)}", f'<a href="#move-{_e(move)}">move {_e(move)}</a>', 1)
            if not event.get("complete"):
                text += '<br><span class="muted">the layout still differs from the one to restore</span>'
            cards.append(self._figure(event.get("snapshot"), _clock(event.get("time_s", 0)), text, f"event-{index}"))
        return f'<section id="restores"><h2>Restores</h2><div class="gallery">{"".join(cards)}</div></section>'

    def words(self) -> str:
        """The referee's words on the table in the order they came, with the seed rule each follows; a word taken
        back by the undo says so."""
        items: list[list[str]] = []
        for index, event in enumerate(self.events):
            kind = event["event"]
            undoes = event.get("undoes") if kind == "override" and event.get("action") == "undo" else None
            if isinstance(undoes, Mapping) and undoes.get("event") in TABLE_WORDS:
                taken = next((item for item in reversed(items) if len(item) == 2), None)
                if taken is not None:
                    taken.append(" <b>(taken back)</b>")
            if kind not in TABLE_WORDS:
                continue
            try:
                text = describe(event_from_json(event))
            except GameStateError:
                text = kind
            items.append([f'<li id="event-{index}">{_e(_clock(event.get("time_s", 0)))} ', _e(text)])
        if not items:
            return ""
        listed = "".join("".join(item) + "</li>" for item in items)
        return f'<section id="words"><h2>The referee\'s words on the table</h2><ul>{listed}</ul></section>'

    def move_list(self) -> str:
        if not self.moves:
            return '<section id="moves"><h2>Moves</h2><p>No move was seen in this video.</p></section>'
        verdicts = Counter(m["ruling"]["verdict"] for m in self.moves)
        codes = Counter(code for m in self.moves for code in set(_codes(m)))
        boxes = [
            f'<label><input type="checkbox" checked data-verdict="{v}"> {_badge(v)} {verdicts[v]}</label>'
            for v in VERDICTS
            if verdicts[v]
        ]
        code_boxes = [
            f'<label><input type="checkbox" checked data-code="{_e(c)}"> <code>{_e(c)}</code> {n}</label>'
            for c, n in sorted(codes.items())
        ]
        filters = (
            '<div id="filters"><div><b>Verdict</b> ' + " ".join(boxes) + "</div>"
            + ("<div><b>Violation</b> " + " ".join(code_boxes) + "</div>" if code_boxes else "")
            + f'<div class="muted" id="shown">{len(self.moves)} of {len(self.moves)} moves shown</div></div>'
        )  # fmt: skip
        cards = "\n".join(self.move_card(m) for m in self.moves)
        return f'<section id="moves"><h2>Moves</h2>{filters}\n{cards}</section>'

    def move_card(self, move: dict[str, Any]) -> str:
        ruling, number = move["ruling"], move["number"]
        verdict = ruling["verdict"]
        codes = _codes(move)
        elapsed = move.get("elapsed_s")
        meta = [
            _e(self._who(move)) + (f" ({_e(seat.name)})" if (seat := seat_numbered(move.get("seat"))) else ""),
            f"at {_clock(move['time_s'])}" + (f", took {elapsed:.0f} s" if elapsed is not None else ""),
        ]
        if move.get("ended_by"):
            meta.append("ended by " + ("the clock key" if move["ended_by"] == "clock" else "the table settling"))
        if not move.get("opened", ruling.get("opened", True)):
            meta.append("had not opened")
        head = (
            f'<h3><a href="#move-{number}">Move {number}</a> {_badge(verdict)}'
            f' <span class="what">{_e(self._did(move))}</span></h3><p class="meta">{" · ".join(meta)}</p>'
        )
        before = self.before.get(number)
        crops = self.crops.get(number)
        if crops is not None:
            size = f"{crops['width']}&times;{crops['height']} px of the camera's picture"
            shots = (
                '<div class="shots crops">'
                + _crop_figure(crops.get("before"), "before" + (f" · {_clock(before[1])}" if before else ""))
                + _crop_figure(crops["after"], f"after · {_clock(move['time_s'])}")
                + f'<p class="muted crop-note">{size}: click to see it at full size'
                + (" · <span class='key offending'></span>offending set" if crops["offending"] else "")
                + " · <span class='key changed'></span>changed set</p></div>"
            )
        else:
            shots = (
                '<div class="shots">'
                + self._figure(before[0] if before else None, "before" + (f" · {_clock(before[1])}" if before else ""))
                + self._figure(move.get("snapshot"), f"after · {_clock(move['time_s'])}")
                + "</div>"
            )
        body = [self._tiles_part(move), self._ruling_part(move)]
        tables = (
            "<details><summary>Table before and after (as read)</summary>"
            f"<p><b>Before</b></p>{_layout(move.get('before'))}"
            f"<p><b>After</b> <span class='muted'>(tiles played are ringed)</span></p>"
            f"{_layout(move.get('after'), ruling.get('played', []))}</details>"
        )
        return (
            f'<article class="move {verdict}" id="move-{number}" data-move data-verdict="{verdict}"'
            f' data-codes="{_e(" ".join(codes))}">{head}<div class="cols">{shots}<div class="ruling">'
            f"{''.join(body)}{tables}</div></div></article>"
        )

    # -- parts of a move ------------------------------------------------------------------------------------
    def _tiles_part(self, move: dict[str, Any]) -> str:
        ruling = move["ruling"]
        played, removed = ruling.get("played") or [], ruling.get("removed") or []
        lines = []
        if played:
            worth = ruling.get("opening_value")
            value = f" <span class='muted'>(opening worth {worth})</span>" if worth else ""
            lines.append(f"<p><b>Played</b>{value}</p>{_played_sets(move.get('after'), played)}")
        elif move.get("kind") == "draw":
            lines.append("<p><b>Drew a tile</b> <span class='muted'>(the table did not change)</span></p>")
        if removed:
            lines.append(f"<p><b>Gone from the table</b> {_chips(removed)}</p>")
        return "".join(lines)

    def _ruling_part(self, move: dict[str, Any]) -> str:
        ruling = move["ruling"]
        parts = []
        if ruling["violations"]:
            items = "".join(
                f"<li><code>{_e(v.get('code', '?'))}</code> {_e(v.get('detail', ''))}"
                + ("" if v.get("players_fault", True) else " <span class='muted'>(not the player's fault)</span>")
                + "</li>"
                for v in ruling["violations"]
            )
            parts.append(f'<ul class="violations">{items}</ul>')
        plan = ruling.get("revert")
        if ruling["verdict"] == "revert":
            parts.append(self._revert_part(move["number"], ruling, plan))
        if ruling["verdict"] == "review":
            parts.append(self._review_part(ruling))
        for note in ruling.get("notes") or []:
            parts.append(f'<p class="note">{_e(note)}</p>')
        return "".join(parts)

    def _revert_part(self, number: int, ruling: dict[str, Any], plan: dict[str, Any] | None) -> str:
        penalty = ruling.get("penalty_tiles") or (plan or {}).get("penalty_tiles") or 0
        lines = ['<div class="plan"><h4>Send the table back</h4>']
        if plan and plan.get("restore") is not None:
            lines.append(f"<p><b>Restore this layout</b></p>{_layout(plan['restore'])}")
        if plan and plan.get("to_rack"):
            lines.append(f"<p><b>Back to the player's rack</b> {_chips(plan['to_rack'])}</p>")
        if plan and plan.get("to_table"):
            lines.append(f"<p><b>Put back on the table</b> {_chips(plan['to_table'])}</p>")
        fallback = (plan or {}).get("fallback") or {}
        if fallback.get("keep") or fallback.get("take"):
            keep = " ".join(f'<span class="set">{_chips(s)}</span>' for s in fallback.get("keep", []))
            lines.append(
                "<p class='muted'>If the layout cannot be restored: keep the valid sets "
                f"{keep or '(none)'}; the player takes {_chips(fallback.get('take', [])) or 'nothing'}</p>"
            )
        lines.append(
            f'<p class="penalty"><b>Penalty</b> {penalty} tile{"s" if penalty != 1 else ""} from the pool</p>'
            if penalty
            else '<p class="penalty"><b>Penalty</b> none</p>'
        )
        for restore in self.restored.get(number, []):
            state = "restored" if restore.get("complete") else "partly restored"
            lines.append(f"<p class='muted'>Table {state} at {_clock(restore.get('time_s'))}.</p>")
        lines.append("</div>")
        return "".join(lines)

    def _review_part(self, ruling: dict[str, Any]) -> str:
        uncertain = ruling.get("uncertain") or []
        lines = ['<div class="plan review"><h4>For the referee to decide</h4>']
        if uncertain:
            items = "".join(
                f"<li>{_chip(u.get('tile', '?'), uncertain=True)} {_e(_place_text(u))}</li>" for u in uncertain
            )
            lines.append(f"<p>Readings not certain enough to rule on:</p><ul class='uncertain'>{items}</ul>")
        else:
            lines.append("<p>The reading cannot be ruled on as it stands; check it against the picture.</p>")
        lines.append("</div>")
        return "".join(lines)

    # -- helpers --------------------------------------------------------------------------------------------
    def _figure(
        self, snapshot: Any, caption: str, text: str = "", anchor: str | None = None, *, uri: str | None = None
    ) -> str:
        """A picture with its caption: ``uri`` (a move's full-resolution crop, zoomed at full size), else the
        snapshot."""
        full = ' data-zoom="full"' if uri else ""
        uri = uri or self._image(snapshot)
        picture = f'<img src="{uri}" alt="{_e(caption)}"{full}>' if uri else '<div class="nopic">no picture</div>'
        ident = f' id="{anchor}"' if anchor else ""
        return f"<figure{ident}>{picture}<figcaption>{_e(caption)}{'<br>' + text if text else ''}</figcaption></figure>"

    def _image(self, snapshot: Any) -> str | None:
        """The picture as a data URI; None for no picture, a missing file or a path outside the folder."""
        if not isinstance(snapshot, str) or not snapshot:
            return None
        if snapshot not in self._images:
            path = (self.folder / snapshot).resolve()
            kind = IMAGE_TYPES.get(path.suffix.lower())
            inside = path.is_relative_to(self.folder.resolve())
            data = path.read_bytes() if kind and inside and path.is_file() else None
            self._images[snapshot] = f"data:{kind};base64,{base64.b64encode(data).decode()}" if data else None
        return self._images[snapshot]

    def _names(self) -> list[str]:
        """The players' names: from the racks (listed in turn order, player 1 first) when they are known."""
        count = self.start.get("players")
        if self.scores is not None and (not isinstance(count, int) or len(self.scores) == count):
            return [s["name"] for s in self.scores]
        return [f"Player {i + 1}" for i in range(count)] if isinstance(count, int) else []

    def _seated(self) -> list[str]:
        """The players with their seats as the camera sees them (``Player 1 (bottom)``), as the station lists them."""
        from vision.runtime.seats import seating

        try:
            seats = [seat.name for seat in seating(len(self.names))]
        except ValueError:
            return list(self.names)
        return [f"{name} ({seat})" for name, seat in zip(self.names, seats, strict=True)]

    def _who(self, move: dict[str, Any]) -> str:
        """The mover as the station names them: ``Player 1``, or the name from the racks."""
        player = move.get("player")
        if isinstance(player, int) and 0 <= player < len(self.names):
            return self.names[player]
        return f"Player {player + 1}" if isinstance(player, int) else "?"

    def _did(self, move: dict[str, Any]) -> str:
        if move.get("kind") == "draw":
            return "drew a tile"
        played = move["ruling"].get("played") or []
        return f"played {len(played)} tile{'s' if len(played) != 1 else ''}" if played else "changed the table"

    def _duration(self) -> float:
        if self.end is not None and self.end.get("time_s"):
            return float(self.end["time_s"])
        if self.summary.get("video_s"):
            return float(self.summary["video_s"])
        return max((float(e.get("time_s") or 0.0) for e in self.events), default=0.0)

    def _before_pictures(self) -> dict[int, tuple[str, float]]:
        """The picture of the table as each move found it: the last move, restore or table reading before it."""
        pictures: dict[int, tuple[str, float]] = {}
        latest: tuple[str, float] | None = None
        for event in self.events:
            kind = event["event"]
            if kind == "move" and latest is not None:
                pictures[event["number"]] = latest
            if kind in BEFORE_EVENTS and event.get("snapshot"):
                if kind == "table" and event.get("reason") == "changed during the turn":
                    continue  # a turn still being played (clock mode), not the table the move started from
                latest = (event["snapshot"], float(event.get("time_s") or 0.0))
        return pictures


# -- a move's pictures at the camera's resolution ----------------------------------------------------------------


class MoveCrops:
    """The region each move changed, cut at full resolution from the analysed video, before and after the move.

    The region holds the sets the move changed (as read after it) and those it broke up (as read before), with
    :data:`CROP_PAD_TILES` around; the changed sets are outlined in blue, the offending ones (the ruling's
    violations) in red. Frames are found by their index in the log, reading the video once from the start.
    """

    def __init__(self, folder: Path, start: Mapping[str, Any], events: list[dict[str, Any]]) -> None:
        self.folder, self.start, self.events = folder, start, events

    def cut(self) -> dict[int, dict[str, Any]]:
        """``{move number: {"after", "before" (data URIs), "width", "height", "offending"}}``; empty when the video
        cannot be read (moved, deleted, a camera): the report then shows the snapshots."""
        plans = self._plans()
        video = self._video()
        if not plans or video is None:
            return {}
        wanted: dict[int, list[tuple[int, str]]] = {}
        for number, plan in plans.items():
            wanted.setdefault(plan["frame"], []).append((number, "after"))
            if plan.get("before_frame") is not None:
                wanted.setdefault(plan["before_frame"], []).append((number, "before"))
        images = self._frames(video, sorted(wanted))
        crops: dict[int, dict[str, Any]] = {}
        for index, uses in wanted.items():
            image = images.get(index)
            if image is None:
                continue
            for number, which in uses:
                plan = plans[number]
                x0, y0, x1, y1 = _clip(_at_least(plan["region"], image.shape[1], image.shape[0]), *image.shape[1::-1])
                if x1 - x0 < 8 or y1 - y0 < 8:
                    continue
                crop = image[y0:y1, x0:x1].copy()
                outlines = plan["outlines"] if which == "after" else plan["before_outlines"]
                _outline(crop, outlines, (x0, y0))
                entry = crops.setdefault(number, {"offending": plan["offending"]})
                entry[which] = _jpeg_uri(crop)
                entry["width"], entry["height"] = x1 - x0, y1 - y0
        return {n: c for n, c in crops.items() if "after" in c}

    def _video(self) -> Path | None:
        source = self.start.get("video") or self.start.get("source")
        if not isinstance(source, str) or "://" in source:
            return None
        path = Path(source)
        candidates = [path] if path.is_absolute() else [path, self.folder / path, self.folder.parent / path]
        return next((c for c in candidates if c.is_file()), None)

    def _plans(self) -> dict[int, dict[str, Any]]:
        plans: dict[int, dict[str, Any]] = {}
        before_frame: int | None = None
        for event in self.events:
            kind = event["event"]
            if kind == "move" and isinstance(event.get("frame"), int):
                plan = _crop_plan(event)
                if plan is not None:
                    plans[int(event["number"])] = {**plan, "frame": event["frame"], "before_frame": before_frame}
            if kind in BEFORE_EVENTS and isinstance(event.get("frame"), int):
                if kind == "table" and event.get("reason") == "changed during the turn":
                    continue
                before_frame = event["frame"]
        return plans

    @staticmethod
    def _frames(video: Path, indices: list[int]) -> dict[int, Any]:
        from vision.runtime.capture import CaptureError, open_source

        images: dict[int, Any] = {}
        try:
            source = open_source(str(video))
        except (CaptureError, OSError, ValueError):
            return images
        try:
            position = 0
            for index in indices:
                if index - position > SEEK_FRAMES:
                    if not source.seek(index):
                        break  # the video ends before it
                    position = index
                elif index > position:
                    position += source.skip(index - position)
                if index != position:
                    break
                frame = source.read()
                if frame is None:
                    break
                position = frame.index + 1
                if frame.index == index:
                    images[index] = frame.image
        except (CaptureError, OSError, ValueError):
            pass  # the frames read so far are kept
        finally:
            source.close()
        return images


def _crop_plan(move: Mapping[str, Any]) -> dict[str, Any] | None:
    """Which region of the frame a move changed and which of its sets to outline (None: nothing to show)."""
    after, before = move.get("after"), move.get("before")
    if not isinstance(after, Mapping):
        return None
    after_sets, before_sets = _boxed_sets(after), _boxed_sets(before) if isinstance(before, Mapping) else []
    changed = _unmatched(after_sets, before_sets) | set((move["ruling"].get("revert") or {}).get("changed_sets") or [])
    gone = _unmatched(before_sets, after_sets)
    offending = _offending_sets(move["ruling"], after_sets) & set(range(len(after_sets)))
    changed = (changed | offending) & set(range(len(after_sets)))
    boxes = [box for i in changed for _, box in after_sets[i]] + [box for i in gone for _, box in before_sets[i]]
    boxes += [box for _, box in _boxed(after.get("loose") or [])]
    boxes = [b for b in boxes if b is not None]
    if not boxes:
        return None
    corners = np.asarray(boxes, float)
    pad = CROP_PAD_TILES * float(np.median(corners[:, 3] - corners[:, 1]))
    region = (
        corners[:, 0].min() - pad,
        corners[:, 1].min() - pad,
        corners[:, 2].max() + pad,
        corners[:, 3].max() + pad,
    )
    outlines = [(_union(after_sets[i]), OFFENDING_BGR if i in offending else CHANGED_BGR) for i in sorted(changed)]
    before_outlines = [(_union(before_sets[i]), CHANGED_BGR) for i in sorted(gone)]
    return {
        "region": region,
        "outlines": [o for o in outlines if o[0] is not None],
        "before_outlines": [o for o in before_outlines if o[0] is not None],
        "offending": bool(offending),
    }


def _boxed(tiles: Iterable[Any]) -> list[tuple[str, tuple[float, float, float, float] | None]]:
    out: list[tuple[str, tuple[float, float, float, float] | None]] = []
    for tile in tiles:
        box = tile.get("box") if isinstance(tile, Mapping) else None
        if isinstance(box, list | tuple) and len(box) == 4 and all(isinstance(v, int | float) for v in box):
            x0, y0, x1, y1 = (float(v) for v in box)
            out.append((_label(tile), (x0, y0, x1, y1)))
        else:
            out.append((_label(tile), None))
    return out


def _boxed_sets(table: Mapping[str, Any]) -> list[list[tuple[str, Any]]]:
    return [_boxed(tiles) for tiles in table.get("sets") or [] if isinstance(tiles, list)]


def _set_key(tiles: list[tuple[str, Any]]) -> Any:
    labels = [label for label, _ in tiles]
    try:
        return TileSet.of(labels).layout_key
    except ValueError:
        return tuple(labels)


def _unmatched(sets: list[list[tuple[str, Any]]], others: list[list[tuple[str, Any]]]) -> set[int]:
    """The sets of one table with no equal set on the other (each set of the other matched once)."""
    available = Counter(_set_key(s) for s in others)
    unmatched = set()
    for i, tiles in enumerate(sets):
        key = _set_key(tiles)
        if available[key] > 0:
            available[key] -= 1
        else:
            unmatched.add(i)
    return unmatched


def _offending_sets(ruling: Mapping[str, Any], sets: list[list[tuple[str, Any]]]) -> set[int]:
    """The sets the violations name, or, for one that names tiles only, the sets holding those tiles."""
    offending: set[int] = set()
    for violation in ruling.get("violations") or []:
        named = [i for i in violation.get("sets") or [] if isinstance(i, int)]
        if named:
            offending.update(named)
            continue
        tiles = {_normal(t) for t in violation.get("tiles") or []}
        offending.update(i for i, s in enumerate(sets) if any(_normal(label) in tiles for label, _ in s))
    return offending


def _union(tiles: list[tuple[str, Any]]) -> tuple[float, float, float, float] | None:
    boxes = [box for _, box in tiles if box is not None]
    if not boxes:
        return None
    corners = np.asarray(boxes, float)
    return (*corners[:, :2].min(axis=0), *corners[:, 2:].max(axis=0))


def _at_least(region: tuple[float, ...], width: int, height: int) -> tuple[float, ...]:
    """``region`` grown about its centre to :data:`CROP_MIN_SHARE` of the frame, then slid back inside it."""
    x0, y0, x1, y1 = region
    grown = []
    for low, high, size in ((x0, x1, width), (y0, y1, height)):
        span = max(high - low, CROP_MIN_SHARE * size)
        middle = (low + high) / 2
        start = min(max(0.0, middle - span / 2), max(0.0, size - span))
        grown.append((start, start + span))
    (gx0, gx1), (gy0, gy1) = grown
    return gx0, gy0, gx1, gy1


def _clip(region: tuple[float, ...], width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = region
    return max(0, int(x0)), max(0, int(y0)), min(width, int(np.ceil(x1))), min(height, int(np.ceil(y1)))


def _outline(
    crop: Any, outlines: list[tuple[tuple[float, ...], tuple[int, int, int]]], origin: tuple[int, int]
) -> None:
    import cv2

    height = crop.shape[0]
    thickness = max(2, round(height / 120))
    margin = thickness * 2
    for (x0, y0, x1, y1), colour in outlines:
        top_left = (round(x0 - origin[0]) - margin, round(y0 - origin[1]) - margin)
        bottom_right = (round(x1 - origin[0]) + margin, round(y1 - origin[1]) + margin)
        wide = thickness * 2 if colour == OFFENDING_BGR else thickness
        cv2.rectangle(crop, top_left, bottom_right, colour, wide, cv2.LINE_AA)


def _jpeg_uri(image: Any) -> str:
    import cv2

    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, CROP_QUALITY])
    return f"data:image/jpeg;base64,{base64.b64encode(data.tobytes()).decode()}" if ok else ""


def _crop_figure(uri: str | None, caption: str) -> str:
    if not uri:
        return f'<figure><div class="nopic">no picture</div><figcaption>{_e(caption)}</figcaption></figure>'
    return (
        f'<figure class="crop"><img src="{uri}" alt="{_e(caption)}" data-zoom="full" title="click: full size">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _played_sets(after: Any, played: list[str]) -> str:
    """The tiles played, set by set as they lie after the move (the whole set shown, the played tiles ringed)."""
    left = Counter(_normal(t) for t in played)
    rows = []
    sets = after.get("sets") if isinstance(after, Mapping) else None
    for tiles in sets or []:
        labels = [_normal(_label(t)) for t in tiles]
        here = Counter(labels) & left
        if not here:
            continue
        left -= here
        new = sum(here.values()) == len(labels)
        note = "new set" if new else f"added to a set of {len(labels) - sum(here.values())}"
        rows.append(
            f'<li><span class="set">{_chips(tiles, Counter(here))}</span> <span class="muted">{note}</span></li>'
        )
    if left:
        rows.append(f'<li><span class="set loose">{_chips(list(left.elements()))}</span>'
                    ' <span class="muted">not in a set</span></li>')  # fmt: skip
    return f'<ul class="played">{"".join(rows)}</ul>'


# -- small pieces -----------------------------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _badge(verdict: str, text: str | None = None) -> str:
    return f'<span class="badge {verdict}">{_e(text or VERDICT_TITLES[verdict])}</span>'


def _clock(seconds: Any) -> str:
    total = int(float(seconds or 0.0))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _ticks(duration: float) -> list[float]:
    """Round times for the timeline's scale, at most about ten of them."""
    for step in (5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600):
        if duration / step <= 10:
            break
    return [float(t) for t in range(0, int(duration) + 1, step)]


def _codes(move: dict[str, Any]) -> list[str]:
    """The violation codes of a move, each once, in the order the ruling gives them."""
    return list(dict.fromkeys(str(v.get("code", "?")) for v in move["ruling"].get("violations") or []))


def _label(tile: Any) -> str:
    return str(tile.get("label", "?")) if isinstance(tile, Mapping) else str(tile)


def _chip(tile: Any, *, uncertain: bool = False, ring: bool = False) -> str:
    """A tile drawn as a small tile: its number in its colour (a joker as J)."""
    label = _label(tile)
    if isinstance(tile, Mapping):
        uncertain = uncertain or bool(tile.get("uncertain"))
        confidence = tile.get("confidence")
    else:
        confidence = None
    try:
        parsed = Tile.parse(label)
        colour = "joker" if parsed.is_joker else parsed.colour.value if parsed.colour else "unknown"
        face, label = ("J" if parsed.is_joker else str(parsed.number)), str(parsed)
    except TileError:
        colour, face = "unknown", "?"
    tip = label + (f" ({float(confidence):.0%} sure)" if isinstance(confidence, int | float) else "")
    classes = " ".join(["chip", colour, *(["uncertain"] if uncertain else []), *(["ring"] if ring else [])])
    return f'<span class="{classes}" title="{_e(tip)}">{_e(face)}</span>'


def _chips(tiles: Iterable[Any], ringed: Counter[str] | None = None) -> str:
    out = []
    for tile in tiles:
        label = _label(tile)
        ring = ringed is not None and ringed[label] > 0
        if ring and ringed is not None:
            ringed[label] -= 1
        out.append(_chip(tile, ring=ring))
    return "".join(out)


def _layout(table: Any, played: Iterable[str] = ()) -> str:
    """A table as rows of sets (and the loose tiles), the tiles in ``played`` ringed."""
    if not isinstance(table, Mapping):
        return "<p class='muted'>(not recorded)</p>"
    ringed = Counter(str(_normal(t)) for t in played)
    sets = [f'<span class="set">{_chips(s, ringed)}</span>' for s in table.get("sets") or []]
    loose = table.get("loose") or []
    if loose:
        sets.append(f'<span class="set loose" title="loose tiles, in no set">loose {_chips(loose, ringed)}</span>')
    return f'<div class="layout">{"".join(sets) or "<i>empty table</i>"}</div>'


def _normal(label: Any) -> str:
    try:
        return str(Tile.parse(str(label)))
    except TileError:
        return str(label)


def _place_text(item: Mapping[str, Any]) -> str:
    which = "before the move" if item.get("table") == "before" else "after the move"
    place = item.get("place") or []
    if len(place) != 2:
        return which
    group, position = int(place[0]), int(place[1])
    where = f"loose tile {position + 1}" if group < 0 else f"set {group + 1}, tile {position + 1}"
    return f"{where}, {which}"


def _warning_detail(event: Mapping[str, Any]) -> str:
    kind = event["event"]
    if kind == "occluded" and event.get("seconds") is not None:
        return f"hands over the table for {event['seconds']:g} s"
    if kind == "camera-moved":
        shift = f"moved {event['shift_px']:g} px" if event.get("shift_px") is not None else ""
        return "; ".join(p for p in (shift, str(event.get("action", ""))) if p)
    if kind == "reading-disagrees":
        return "the still table read differently; checked again before ruling"
    extra = {k: v for k, v in event.items() if k not in ("event", "time_s", "frame", "snapshot")}
    return json.dumps(extra, sort_keys=True) if extra else ""


CSS = """
:root{--ok:#2e7d32;--revert:#c62828;--review:#e08a00;--ink:#1f2328;--muted:#656d76;--line:#d8dee4;--bg:#f6f8fa;
--black:#1d1d1d;--red:#c8102e;--blue:#0b5cad;--orange:#e07000}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
main{max-width:1120px;margin:0 auto;padding:20px 18px 40px}
h1{margin:0;font-size:26px}h2{font-size:19px;margin:0 0 10px}h3{font-size:16px;margin:0}
h4{margin:0 0 4px;font-size:14px}
section,header.top{background:#fff;border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin:0 0 16px}
.sub{margin:2px 0 12px;color:var(--muted);word-break:break-all;font-size:13px}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:8px 18px;margin:0}
.facts dt{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}.facts dd{margin:0}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:700;color:#fff;line-height:20px}
.badge.ok{background:var(--ok)}.badge.revert{background:var(--revert)}.badge.review{background:var(--review)}
.timeline{width:100%;height:auto;display:block}
.timeline .axis{stroke:#8c959f;stroke-width:2}.timeline .tick{stroke:#8c959f}
.timeline text{font-size:11px;fill:var(--muted);text-anchor:middle}
.timeline .turn{opacity:.16}.timeline .mark:hover{stroke:#000;stroke-width:1.5}
.ok{fill:var(--ok)}.revert{fill:var(--revert)}.review{fill:var(--review)}
.timeline .warn{fill:#6e7781}.timeline .restore{fill:#fff;stroke:var(--blue);stroke-width:2.5}
.timeline .hidden{opacity:.1}
.legend{font-size:13px;color:var(--muted);margin:4px 0 0}
.key{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 3px 0 10px;vertical-align:-1px}
.key.ok{background:var(--ok)}.key.revert{background:var(--revert)}.key.review{background:var(--review)}
.key.restore{border:2px solid var(--blue);border-radius:50%}.key.warn{background:#6e7781}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:12px}
figure{margin:0}figure img,.nopic{width:100%;border-radius:4px;border:1px solid var(--line);display:block}
.nopic{aspect-ratio:16/9;display:flex;align-items:center;justify-content:center;color:var(--muted);background:var(--bg)}
figcaption{font-size:13px;margin-top:4px}figure:target{outline:3px solid var(--blue);outline-offset:3px}
#filters{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid var(--line);padding:8px 0 10px;
margin-bottom:12px;display:flex;flex-direction:column;gap:6px;font-size:14px}
#filters label{margin-right:12px;white-space:nowrap;cursor:pointer}
article.move{border:1px solid var(--line);border-left:6px solid var(--ok);border-radius:6px;padding:12px 14px;
margin:0 0 12px}
article.move.revert{border-left-color:var(--revert)}article.move.review{border-left-color:var(--review)}
article.move:target{box-shadow:0 0 0 3px #0b5cad55}
article.hidden{display:none}
h3 a{color:inherit;text-decoration:none}.what{font-weight:400}
.meta{color:var(--muted);font-size:13px;margin:2px 0 10px}
.cols{display:grid;grid-template-columns:minmax(0,1.15fr) minmax(0,1fr);gap:16px}
@media (max-width:800px){.cols{grid-template-columns:1fr}}
.shots{display:grid;grid-template-columns:1fr 1fr;gap:8px}
.ruling p{margin:4px 0}
.violations{margin:6px 0;padding-left:18px}.violations li{margin:3px 0}
code{background:#eff1f3;border-radius:4px;padding:0 4px;font-size:13px}
.plan{border:1px solid #f1c7c7;background:#fff6f6;border-radius:6px;padding:8px 10px;margin:8px 0}
.plan.review{border-color:#f3dca8;background:#fffaf0}
.uncertain{margin:4px 0;padding-left:18px;list-style:none}.uncertain li{margin:3px 0}
.penalty{font-weight:600}.note{color:var(--muted);font-size:13px}.muted{color:var(--muted)}
details{margin-top:8px;font-size:14px}summary{cursor:pointer;color:var(--muted)}
.layout{display:flex;flex-wrap:wrap;gap:6px;margin:4px 0}
.set{display:inline-flex;gap:2px;padding:3px;border:1px solid var(--line);border-radius:5px;background:#faf6ea;
align-items:center;font-size:12px;color:var(--muted)}.set.loose{border-style:dashed;gap:3px}
.chip{display:inline-block;min-width:22px;height:28px;padding:0 3px;line-height:26px;text-align:center;
font-weight:800;font-size:14px;border:1px solid #cfc6ad;border-radius:4px;background:#fffdf5;
box-shadow:0 1px 0 #bfb6a0;margin:0 1px;vertical-align:middle}
.chip.black{color:var(--black)}.chip.red{color:var(--red)}.chip.blue{color:var(--blue)}.chip.orange{color:var(--orange)}
.chip.joker{color:#fff;background:linear-gradient(135deg,var(--red),var(--blue) 50%,var(--orange))}
.chip.unknown{color:var(--muted)}
.chip.uncertain{border:2px dashed var(--review);line-height:24px}
.chip.ring{outline:2px solid var(--blue);outline-offset:1px}
table.score{border-collapse:collapse;width:100%}
table.score th,table.score td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
table.score th{font-size:12px;text-transform:uppercase;color:var(--muted)}
table.score .n{text-align:right;font-variant-numeric:tabular-nums}
table.score tr.winner td{background:#eef7ee;font-weight:600}
footer{text-align:center;color:var(--muted);font-size:12px}
figure img{cursor:zoom-in}
.shots{align-content:start}.shots.crops{align-items:start}
.shots.crops figure img{background:#000;object-fit:contain;max-height:340px}
.crop-note{grid-column:1/-1;font-size:12px;margin:0}
.key.changed{background:#1478e6}.key.offending{background:#dc1e1e}
ul.played{list-style:none;margin:2px 0 6px;padding:0}ul.played li{margin:3px 0}
#zoom{display:none;position:fixed;inset:0;z-index:9;background:#000d;overflow:auto;cursor:zoom-out}
#zoom img{display:block;margin:auto;max-width:96vw;max-height:94vh;border-radius:4px}
#zoom img{margin-top:3vh}
#zoom img.full{width:96vw;height:92vh;max-width:none;max-height:none;object-fit:contain;background:#000}
@media print{#filters{position:static}article.move{break-inside:avoid}body{background:#fff}}
"""

SCRIPT = """
(function(){
  var boxes=[].slice.call(document.querySelectorAll('#filters input'));
  var shown=document.getElementById('shown');
  function apply(){
    var on=function(attr){return boxes.filter(function(b){return b.checked&&b.dataset[attr];})
      .map(function(b){return b.dataset[attr];});};
    var verdicts=on('verdict'),codes=on('code'),count=0,total=0;
    document.querySelectorAll('[data-move]').forEach(function(el){
      var own=el.dataset.codes?el.dataset.codes.split(' '):[];
      var visible=verdicts.indexOf(el.dataset.verdict)>=0&&
        (own.length===0||own.some(function(c){return codes.indexOf(c)>=0;}));
      el.classList.toggle('hidden',!visible);
      if(el.tagName==='ARTICLE'){total++;if(visible)count++;}
    });
    if(shown)shown.textContent=count+' of '+total+' moves shown';
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  var zoom=document.createElement('div');zoom.id='zoom';document.body.appendChild(zoom);
  zoom.addEventListener('click',function(){zoom.style.display='none';});
  document.querySelectorAll('figure img').forEach(function(img){img.addEventListener('click',function(){
    var big=new Image();big.src=img.src;big.alt=img.alt;
    if(img.dataset.zoom==='full')big.className='full';
    zoom.replaceChildren(big);zoom.style.display='block';});});
})();
"""
