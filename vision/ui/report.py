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
in blue and the offending ones in red (:mod:`vision.ui.report_crops`); a click shows a picture at its own size.
Without the video, the small whole-table snapshots of ``frames/`` stand in. Players are named as the station
names them (``Player 1 (bottom)``).

The log is read once into the typed events of :mod:`referee.events` by :mod:`vision.ui.report_game` (the one
place the report meets the log's JSON), and each part of the page takes those values. The crops are
:mod:`vision.ui.report_crops`, the tiles, sets and tables drawn as HTML :mod:`vision.ui.report_tiles`, and the CSS and
JavaScript files beside this module (``report_static/``, package data), put inline into the page.

Size: about 650 lines: :class:`Report` is about 420 of them, one method per part of the page (header, score sheet,
timeline, problems, restores, words, moves and a move's card with its parts), kept in one class because every part
reads the same game, names and pictures; the rest is :func:`write_report`, :func:`final_verdicts` (the console's and
the station's summary) and the score sheet's racks.
"""

from __future__ import annotations

import base64
import html
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from referee.events import (
    Event,
    GameStateError,
    Move,
    Note,
    OpeningDeclared,
    Override,
    PoolEmpty,
    RedealRequest,
    Restore,
    Undo,
    WentOut,
    describe,
    describe_at_limit,
    event_from_json,
    last_rulings,
    limit_passed_s,
)
from referee.table import Place
from referee.tiles import Tile
from vision.runtime.seats import seat_numbered
from vision.ui.report_crops import MoveCrop, MoveCrops, shows_table_before
from vision.ui.report_game import LoggedGame, ReportError, load_game, snapshot, undoes_a_word, warning_detail
from vision.ui.report_tiles import Chip, chip, chips, layout, played_sets

if TYPE_CHECKING:
    from referee.scoring import PlayerScore

REPORT_NAME = "report.html"
VERDICTS = ("ok", "revert", "review")
VERDICT_TITLES = {"ok": "OK", "revert": "REVERT", "review": "REVIEW"}
WARNINGS = ("occluded", "glare", "camera-moved", "reading-disagrees", "dropout", "reconnected", "corrupt-frames")
"""Events that are not moves but tell the reader to look at the video (said as :func:`referee.events.describe`
says them, as the console and the station do)."""
IMAGE_TYPES = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp"}
STATIC = "report_static"
"""The page's CSS and JavaScript, package data beside this module."""

__all__ = ["REPORT_NAME", "Report", "ReportError", "final_verdicts", "load_game", "summary_text", "write_report"]


def summary_text(moves: int, verdicts: Mapping[str, int]) -> str:
    """``6 moves: 4 OK, 2 REVERT, 0 REVIEW``: a game's rulings in one line (the console's, the station's)."""
    counts = ", ".join(f"{verdicts.get(v, 0)} {VERDICT_TITLES[v]}" for v in VERDICTS)
    return f"{moves} move{'s' if moves != 1 else ''}: {counts}"


def final_verdicts(events: Iterable[Event | Mapping[str, Any]]) -> dict[int, str]:
    """Each move's verdict as it stands after the referee's overrides (as the station shows it): ``ok`` and
    ``revert`` decide, a correction re-rules, ``undo`` takes back the last override still in force. Events are
    typed, or a game log's lines (a line the game cannot take counts for nothing)."""
    verdicts: dict[int, str] = {}
    standing: list[Override] = []
    for event in _typed(events):
        if isinstance(event, Move):
            verdicts[event.number] = event.ruling.verdict.value
        elif isinstance(event, Undo):
            if standing:
                standing.pop()
        elif isinstance(event, Override):
            standing.append(event)
    for override in standing:
        number, action = override.move, override.action
        if number not in verdicts:
            continue
        if action in ("ok", "revert"):
            verdicts[number] = action
        elif action == "correct" and override.ruling is not None:
            verdicts[number] = override.ruling.verdict.value
    return verdicts


def _typed(events: Iterable[Event | Mapping[str, Any]]) -> Iterable[Event]:
    for event in events:
        if not isinstance(event, Mapping):
            yield event
            continue
        try:
            yield event_from_json(event)
        except GameStateError:
            continue


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


@dataclass(frozen=True, slots=True)
class Score:
    """A player's line on the score sheet: the score and the rack it counts."""

    score: PlayerScore
    rack: tuple[Tile, ...]


def score_racks(racks: Mapping[str, Any], profile: str) -> list[Score]:
    """The score of each player (``referee.scoring``), in the order the racks list them."""
    from referee.scoring import Game, ScoreError, score_game
    from referee.tiles import TileError

    if not isinstance(racks, Mapping):
        raise ReportError("racks: a JSON object with 'players' and 'ending'")
    try:
        game = Game.from_json(racks, profile=racks.get("profile") or profile)
        scores = score_game(game)
    except (ScoreError, TileError, KeyError) as error:
        raise ReportError(f"racks: {error}") from None
    return [Score(s, p.rack) for s, p in zip(scores, game.players, strict=True)]


@cache
def _static(name: str) -> str:
    """One of the page's static files (read once)."""
    return files("vision.ui").joinpath(STATIC, name).read_text(encoding="utf-8")


# -- the page -------------------------------------------------------------------------------------------------


class Report:
    """The HTML of one analysed game (:meth:`html`)."""

    def __init__(self, folder: Path, game: LoggedGame, racks: Mapping[str, Any] | None = None) -> None:
        self.folder = folder
        self.game = game
        self.events = game.events
        self.start = game.start
        self.moves = last_rulings(e for e in self.events if isinstance(e, Move))
        """Each move once, as last ruled (an amendment replaces the move it amends: the whole turn ruled again)."""
        self._ruled = {id(m) for m in self.moves}
        self.profile = self.start.profile
        self.scores = None if racks is None else score_racks(racks, self.profile)
        self.names = self._names()
        self.duration = self._duration()
        self.before = self._before_pictures()
        self.crops = MoveCrops(self.folder, self.start.video, self.events).cut()
        self.restored: dict[int | None, list[Restore]] = {}
        for event in self.events:
            if isinstance(event, Restore):
                self.restored.setdefault(event.after_move, []).append(event)
        self._images: dict[str, str | None] = {}

    def html(self) -> str:
        source = self.start.source if self.start.source is not None else "game"
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
            f"<title>{_e(title)}</title>\n<style>\n{_static('report.css')}</style>\n</head>\n<body>\n<main>\n{body}\n"
            f"</main>\n<script>\n{_static('report.js')}</script>\n</body>\n</html>\n"
        )

    # -- sections ---------------------------------------------------------------------------------------
    def header(self) -> str:
        start, summary = self.start, self.game.summary
        source = start.source if start.source is not None else "?"
        verdicts = Counter(m.ruling.verdict.value for m in self.moves)
        draws = sum(1 for m in self.moves if m.kind == "draw")
        players = ", ".join(self._seated()) if self.names else start.players if start.players is not None else "?"
        facts = [
            ("Video", f'<span title="{_e(source)}">{_e(Path(source).name)}</span>'),
            ("Profile", _e(self.profile)),
            ("Players", _e(players)),
            ("Duration", _clock(self.duration)),
            ("Moves", f"{len(self.moves)} ({draws} draw{'s' if draws != 1 else ''})"),
            ("Verdicts", " ".join(_badge(v, f"{verdicts[v]} {VERDICT_TITLES[v]}") for v in VERDICTS)),
        ]
        if summary.seconds:
            speed = summary.speed_x_real_time
            facts.append(("Analysis", f"{summary.seconds:.0f} s" + (f" ({speed:g}&times; real time)" if speed else "")))
        pipeline = self.game.pipeline
        if pipeline is not None and pipeline.reading_ms_mean:
            facts.append(
                ("Reading", f"{pipeline.reading_ms_mean:g} ms per reading ({pipeline.readings} readings)")
            )  # fmt: skip
        if start.size:
            fps = start.fps
            facts.append(("Frames", f"{start.size[0]}&times;{start.size[1]}" + (f" at {fps:g} fps" if fps else "")))
        if start.wall_time:
            facts.append(("Analysed", _e(start.wall_time.replace("T", " ")[:16])))
        rows = "".join(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in facts)
        sub = f'<p class="sub">{_e(source)}</p>' if source != Path(source).name else ""
        return f'<header class="top"><h1>Game report</h1>{sub}<dl class="facts">{rows}</dl></header>'

    def score_sheet(self) -> str:
        if self.scores is None:
            return ""
        rows = []
        for line in sorted(self.scores, key=lambda line: line.score.place):
            s, small = line.score, line.score.small_points
            rows.append(
                f'<tr class="{"winner" if s.winner else ""}"><td>{s.place}</td><td>{_e(s.name)}</td>'
                f'<td class="tiles">{chips(map(Chip, line.rack)) or "<i>empty</i>"}</td>'
                f'<td class="n">{s.rack_points}</td><td class="n">{_number(small)}</td>'
                f'<td class="n">{s.big_points}</td>'
                f"<td>{_e(s.note)}</td></tr>"
            )
        return (
            '<section id="score"><h2>Final score</h2><table class="score"><thead><tr><th>Place</th><th>Player</th>'
            "<th>Rack</th><th>Rack points</th><th>Small points</th><th>Big points</th><th></th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></section>"
        )

    def timeline(self) -> str:
        width, left, right, axis = 1000.0, 24.0, 976.0, 34.0
        span = max(self.duration, 1e-6)

        def x(t: float | None) -> float:
            return left + (right - left) * min(max(float(t or 0.0), 0.0), span) / span

        shapes = [f'<line class="axis" x1="{left}" y1="{axis}" x2="{right}" y2="{axis}"/>']
        for tick in _ticks(self.duration):
            shapes.append(
                f'<line class="tick" x1="{x(tick):.1f}" y1="{axis + 14}" x2="{x(tick):.1f}" y2="{axis + 18}"/>'
                f'<text x="{x(tick):.1f}" y="{axis + 30}">{_clock(tick)}</text>'
            )
        for move in self.moves:
            verdict, end = move.ruling.verdict.value, x(move.time_s)
            began = x(move.start_s if move.start_s is not None else move.turn_started_s)
            tip = f"move {move.number} at {_clock(move.time_s)}: {self._who(move)} {self._did(move)}, {verdict}"
            codes = _codes(move)
            if codes:
                tip += " (" + ", ".join(codes) + ")"
            shapes.append(
                f'<a href="#move-{move.number}" data-move data-verdict="{verdict}"'
                f' data-codes="{_e(" ".join(codes))}"><title>{_e(tip)}</title>'
                f'<rect class="turn {verdict}" x="{began:.1f}" y="{axis - 9}" width="{max(end - began, 0):.1f}"'
                f' height="18"/><rect class="mark {verdict}" x="{end - 2.5:.1f}" y="{axis - 15}" width="5"'
                ' height="30" rx="1.5"/></a>'
            )
        for index, event in enumerate(self.events):
            if _is_warning(event):
                cx = x(event.time_s)
                shapes.append(
                    f'<a href="#event-{index}"><title>{_e(_clock(event.time_s))} {_e(describe(event))}'
                    f'</title><path class="warn" d="M{cx:.1f} {axis - 19} l-5 -9 h10 z"/></a>'
                )
            elif isinstance(event, Restore):
                shapes.append(
                    f'<a href="#event-{index}"><title>{_e(_clock(event.time_s))} table restored after move'
                    f' {_e(event.after_move)}</title><circle class="restore" cx="{x(event.time_s):.1f}"'
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
            if isinstance(event, Move) and id(event) in self._ruled and event.ruling.verdict.value != "ok":
                ruling = event.ruling
                what = ", ".join(_codes(event)) or ("uncertain reading" if ruling.uncertain else "")
                text = (
                    f'<a href="#move-{event.number}">Move {event.number}</a> '
                    f"{_badge(ruling.verdict.value)}<br>{_e(what)}"
                )
                crop = self.crops.get(event.number)
                uri = crop.after if crop is not None else None
                cards.append(self._figure(snapshot(event), _clock(event.time_s), text, uri=uri))
            elif _is_warning(event):
                details = warning_detail(event)
                text = f"<b>{_e(describe(event))}</b>" + (f"<br>{_e(details)}" if details else "")
                cards.append(self._figure(snapshot(event), _clock(event.time_s), text, f"event-{index}"))
        title = "<h2>Frames where something went wrong</h2>"
        if not cards:
            return f'<section id="problems">{title}<p>Nothing: every move was ruled OK, no warning.</p></section>'
        return f'<section id="problems">{title}<div class="gallery">{"".join(cards)}</div></section>'

    def restores(self) -> str:
        restores = [(i, e) for i, e in enumerate(self.events) if isinstance(e, Restore)]
        if not restores:
            return ""
        cards = []
        for index, event in restores:
            move = event.after_move
            said = _e(describe(event))  # "Table restored after move 3": the move links to its card
            text = said.replace(f"move {_e(move)}", f'<a href="#move-{_e(move)}">move {_e(move)}</a>', 1)
            if not event.complete:
                text += '<br><span class="muted">the layout still differs from the one to restore</span>'
            cards.append(self._figure(snapshot(event), _clock(event.time_s), text, f"event-{index}"))
        return f'<section id="restores"><h2>Restores</h2><div class="gallery">{"".join(cards)}</div></section>'

    def words(self) -> str:
        """The referee's words on the table in the order they came, with the seed rule each follows; a word taken
        back by the undo says so."""
        items: list[list[str]] = []
        for index, event in enumerate(self.events):
            if isinstance(event, Undo) and undoes_a_word(event):
                taken = next((item for item in reversed(items) if len(item) == 2), None)
                if taken is not None:
                    taken.append(" <b>(taken back)</b>")
            if not isinstance(event, PoolEmpty | RedealRequest | OpeningDeclared | WentOut):
                continue
            items.append([f'<li id="event-{index}">{_e(_clock(event.time_s))} ', _e(describe(event))])
        if not items:
            return ""
        listed = "".join("".join(item) + "</li>" for item in items)
        return f'<section id="words"><h2>The referee\'s words on the table</h2><ul>{listed}</ul></section>'

    def move_list(self) -> str:
        if not self.moves:
            return '<section id="moves"><h2>Moves</h2><p>No move was seen in this video.</p></section>'
        verdicts = Counter(m.ruling.verdict.value for m in self.moves)
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

    def move_card(self, move: Move) -> str:
        ruling, number = move.ruling, move.number
        verdict = ruling.verdict.value
        codes = _codes(move)
        elapsed = move.elapsed_s
        meta = [
            _e(self._who(move)) + (f" ({_e(seat.name)})" if (seat := seat_numbered(move.seat)) else ""),
            f"at {_clock(move.time_s)}" + (f", took {elapsed:.0f} s" if elapsed is not None else ""),
        ]
        if move.ended_by:
            meta.append("ended by " + ("the clock key" if move.ended_by == "clock" else "the table settling"))
        if not (move.opened if move.opened is not None else ruling.opened):
            meta.append("had not opened")
        if move.amends is not None:
            meta.append("the whole turn: the same player went on after its first part was ruled")
        head = (
            f'<h3><a href="#move-{number}">Move {number}</a> {_badge(verdict)}'
            f' <span class="what">{_e(self._did(move))}</span></h3><p class="meta">{" · ".join(meta)}</p>'
        )
        before = self.before.get(number)
        crops = self.crops.get(number)
        if crops is not None:
            shots = self._crop_shots(move, crops, before)
        else:
            shots = (
                '<div class="shots">'
                + self._figure(before[0] if before else None, "before" + (f" · {_clock(before[1])}" if before else ""))
                + self._figure(snapshot(move), f"after · {_clock(move.time_s)}")
                + "</div>"
            )
        limit = self._at_limit(move)
        if limit is not None:
            shots = shots.removesuffix("</div>") + limit.figure + "</div>"
        body = [self._tiles_part(move), "" if limit is None else limit.line, self._ruling_part(move)]
        tables = (
            f"<details><summary>Table before{' and' if limit is None else ', at the limit and'} after (as read)"
            f"</summary><p><b>Before</b></p>{layout(move.before)}"
            + ("" if limit is None else f"<p><b>At the limit</b> <span class='muted'>({limit.when})</span></p>"
               f"{limit.table}")
            + f"<p><b>After</b> <span class='muted'>(tiles played are ringed)</span></p>"
            f"{layout(move.after, ruling.played)}</details>"
        )  # fmt: skip
        return (
            f'<article class="move {verdict}" id="move-{number}" data-move data-verdict="{verdict}"'
            f' data-codes="{_e(" ".join(codes))}">{head}<div class="cols">{shots}<div class="ruling">'
            f"{''.join(body)}{tables}</div></div></article>"
        )

    # -- parts of a move ------------------------------------------------------------------------------------
    def _at_limit(self, move: Move) -> AtLimit | None:
        """A move over time's table at the limit, as the camera saw it (None for a move in time)."""
        limit_s = self.start.time_limit_s
        text, passed = describe_at_limit(move, limit_s), limit_passed_s(move, limit_s)
        if text is None or passed is None:
            return None
        when = _clock(passed)
        if move.table_at_limit is not None:
            table = layout(move.table_at_limit)
        elif self.start.old_log:  # the log's version kept no table at the limit: not "not seen"
            table = "<p class='muted'>not in the log (written before the camera kept it)</p>"
            text = text.split(": ", 1)[0] + ": what the camera saw at the limit is not in this log"
        else:
            table = "<p class='muted'>not seen (hands over the table)</p>"
        figure = (
            f'<figure class="at-limit" style="grid-column:1/-1">{table}'
            f"<figcaption>at the limit · {when}</figcaption></figure>"
        )
        return AtLimit(when, table, figure, f'<p class="limit"><b>Time limit</b> {_e(text)}</p>')

    @staticmethod
    def _crop_shots(move: Move, crops: MoveCrop, before: tuple[str, float] | None) -> str:
        size = f"{crops.width}&times;{crops.height} px of the camera's picture"
        return (
            '<div class="shots crops">'
            + _crop_figure(crops.before, "before" + (f" · {_clock(before[1])}" if before else ""))
            + _crop_figure(crops.after, f"after · {_clock(move.time_s)}")
            + f'<p class="muted crop-note">{size}: click to see it at full size'
            + (" · <span class='key offending'></span>offending set" if crops.offending else "")
            + " · <span class='key changed'></span>changed set</p></div>"
        )

    def _tiles_part(self, move: Move) -> str:
        ruling = move.ruling
        lines = []
        if ruling.played:
            worth = ruling.opening_value
            value = f" <span class='muted'>(opening worth {worth})</span>" if worth else ""
            lines.append(f"<p><b>Played</b>{value}</p>{played_sets(move.after, ruling.played)}")
        elif move.kind == "draw":
            lines.append("<p><b>Drew a tile</b> <span class='muted'>(the table did not change)</span></p>")
        if ruling.removed:
            lines.append(f"<p><b>Gone from the table</b> {chips(map(Chip, ruling.removed))}</p>")
        return "".join(lines)

    def _ruling_part(self, move: Move) -> str:
        ruling = move.ruling
        parts = []
        if ruling.violations:
            items = "".join(
                f"<li><code>{_e(v.code.value)}</code> {_e(v.detail)}"
                + ("" if v.players_fault else " <span class='muted'>(not the player's fault)</span>")
                + "</li>"
                for v in ruling.violations
            )
            parts.append(f'<ul class="violations">{items}</ul>')
        if ruling.verdict.value == "revert":
            parts.append(self._revert_part(move))
        if ruling.verdict.value == "review":
            parts.append(self._review_part(move))
        for note in ruling.notes:
            parts.append(f'<p class="note">{_e(note)}</p>')
        return "".join(parts)

    def _revert_part(self, move: Move) -> str:
        ruling, plan = move.ruling, move.ruling.revert
        penalty = ruling.penalty_tiles or (plan.penalty_tiles if plan else 0)
        lines = ['<div class="plan"><h4>Send the table back</h4>']
        if plan:
            lines.append(f"<p><b>Restore this layout</b></p>{layout(plan.restore)}")
        if plan and plan.to_rack:
            lines.append(f"<p><b>Back to the player's rack</b> {chips(map(Chip, plan.to_rack))}</p>")
        if plan and plan.to_table:
            lines.append(f"<p><b>Put back on the table</b> {chips(map(Chip, plan.to_table))}</p>")
        if plan and (plan.fallback_keep or plan.fallback_take):
            keep = " ".join(f'<span class="set">{chips(map(Chip, s))}</span>' for s in plan.fallback_keep)
            lines.append(
                "<p class='muted'>If the layout cannot be restored: keep the valid sets "
                f"{keep or '(none)'}; the player takes {chips(map(Chip, plan.fallback_take)) or 'nothing'}</p>"
            )
        lines.append(
            f'<p class="penalty"><b>Penalty</b> {penalty} tile{"s" if penalty != 1 else ""} from the pool</p>'
            if penalty
            else '<p class="penalty"><b>Penalty</b> none</p>'
        )
        for restore in self.restored.get(move.number, []):
            state = "restored" if restore.complete else "partly restored"
            lines.append(f"<p class='muted'>Table {state} at {_clock(restore.time_s)}.</p>")
        lines.append("</div>")
        return "".join(lines)

    @staticmethod
    def _review_part(move: Move) -> str:
        uncertain = move.ruling.uncertain
        lines = ['<div class="plan review"><h4>For the referee to decide</h4>']
        if uncertain:
            items = "".join(
                f"<li>{chip(Chip(tile, uncertain=True))} {_e(_place_text(which, place))}</li>"
                for which, place, tile in uncertain
            )
            lines.append(f"<p>Readings not certain enough to rule on:</p><ul class='uncertain'>{items}</ul>")
        else:
            lines.append("<p>The reading cannot be ruled on as it stands; check it against the picture.</p>")
        lines.append("</div>")
        return "".join(lines)

    # -- helpers --------------------------------------------------------------------------------------------
    def _figure(
        self, picture: str | None, caption: str, text: str = "", anchor: str | None = None, *, uri: str | None = None
    ) -> str:
        """A picture with its caption: ``uri`` (a move's full-resolution crop, zoomed at full size), else the
        snapshot ``picture`` (a path in the folder)."""
        full = ' data-zoom="full"' if uri else ""
        uri = uri or self._image(picture)
        shown = f'<img src="{uri}" alt="{_e(caption)}"{full}>' if uri else '<div class="nopic">no picture</div>'
        ident = f' id="{anchor}"' if anchor else ""
        return f"<figure{ident}>{shown}<figcaption>{_e(caption)}{'<br>' + text if text else ''}</figcaption></figure>"

    def _image(self, picture: str | None) -> str | None:
        """The picture as a data URI; None for no picture, a missing file or a path outside the folder."""
        if not picture:
            return None
        if picture not in self._images:
            path = (self.folder / picture).resolve()
            kind = IMAGE_TYPES.get(path.suffix.lower())
            inside = path.is_relative_to(self.folder.resolve())
            data = path.read_bytes() if kind and inside and path.is_file() else None
            self._images[picture] = f"data:{kind};base64,{base64.b64encode(data).decode()}" if data else None
        return self._images[picture]

    def _names(self) -> list[str]:
        """The players' names: from the racks (listed in turn order, player 1 first) when they are known."""
        count = self.start.players
        if self.scores is not None and (count is None or len(self.scores) == count):
            return [line.score.name for line in self.scores]
        return [f"Player {i + 1}" for i in range(count)] if count is not None else []

    def _seated(self) -> list[str]:
        """The players with their seats as the camera sees them (``Player 1 (bottom)``), as the station lists them."""
        from vision.runtime.seats import seating

        try:
            seats = [seat.name for seat in seating(len(self.names))]
        except ValueError:
            return list(self.names)
        return [f"{name} ({seat})" for name, seat in zip(self.names, seats, strict=True)]

    def _who(self, move: Move) -> str:
        """The mover as the station names them: ``Player 1``, or the name from the racks."""
        player = move.player
        return self.names[player] if 0 <= player < len(self.names) else f"Player {player + 1}"

    @staticmethod
    def _did(move: Move) -> str:
        if move.kind == "draw":
            return "drew a tile"
        played = move.ruling.played
        return f"played {len(played)} tile{'s' if len(played) != 1 else ''}" if played else "changed the table"

    def _duration(self) -> float:
        end, summary = self.game.end, self.game.summary
        if end is not None and end.time_s:
            return float(end.time_s)
        if summary.video_s:
            return float(summary.video_s)
        return max((float(e.time_s or 0.0) for e in self.events), default=0.0)

    def _before_pictures(self) -> dict[int, tuple[str, float]]:
        """The picture of the table as each move found it: the last move, restore or table reading before it."""
        pictures: dict[int, tuple[str, float]] = {}
        latest: tuple[str, float] | None = None
        for event in self.events:
            if isinstance(event, Move) and latest is not None:
                pictures.setdefault(event.number, latest)  # an amended move's: the table before its first part
            picture = snapshot(event)
            if picture and shows_table_before(event):
                latest = (picture, float(event.time_s or 0.0))
        return pictures


# -- small pieces -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AtLimit:
    """A move over time's table at the limit as the move's card shows it: when (the video's clock), the table (or
    why it is not shown), the figure beside the pictures before and after, and the line in the ruling's column."""

    when: str
    table: str
    figure: str
    line: str


def _is_warning(event: Event) -> TypeGuard[Note]:
    return isinstance(event, Note) and event.kind in WARNINGS


def _crop_figure(uri: str | None, caption: str) -> str:
    if not uri:
        return f'<figure><div class="nopic">no picture</div><figcaption>{_e(caption)}</figcaption></figure>'
    return (
        f'<figure class="crop"><img src="{uri}" alt="{_e(caption)}" data-zoom="full" title="click: full size">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _badge(verdict: str, text: str | None = None) -> str:
    return f'<span class="badge {verdict}">{_e(text or VERDICT_TITLES[verdict])}</span>'


def _clock(seconds: float | None) -> str:
    total = int(float(seconds or 0.0))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def _number(value: Any) -> str:
    """Small points as the score sheet writes them: a whole number as one, a fraction as a decimal."""
    if value != int(value):
        return f"{float(value):g}"
    return str(int(value))


def _ticks(duration: float) -> list[float]:
    """Round times for the timeline's scale, at most about ten of them."""
    for step in (5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600):
        if duration / step <= 10:
            break
    return [float(t) for t in range(0, int(duration) + 1, step)]


def _codes(move: Move) -> list[str]:
    """The violation codes of a move, each once, in the order the ruling gives them."""
    return list(dict.fromkeys(move.ruling.codes))


def _place_text(which: str, place: Place) -> str:
    """Where an uncertain reading lies: ``set 2, tile 3, after the move``."""
    group, position = place
    where = f"loose tile {position + 1}" if group < 0 else f"set {group + 1}, tile {position + 1}"
    return f"{where}, {'before the move' if which == 'before' else 'after the move'}"
