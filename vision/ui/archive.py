"""The archive of a batch: every move of every analysed game as ``moves.csv`` (and ``moves.parquet`` where pyarrow
is installed: the ``parquet`` extra), and ``archive.html``, one self-contained page of plots (inline SVG: verdicts,
violations by code, player, profile and round, REVIEW causes, move times) with links to each game's report.

Built from what ``batch`` leaves in its folder (``batch.json``'s game rows and each game's ``moves.json``, its moves
read as the typed :class:`referee.events.Move` a game log's line gives); it imports nothing of the session layer that
wrote them.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from referee.events import Move, event_from_json, last_rulings
from referee.moves import Ruling

MOVES_CSV = "moves.csv"
ARCHIVE_NAME = "archive.html"
MOVES_PARQUET = "moves.parquet"
CSV_FIELDS = ("event", "round", "table", "label", "profile", "move", "player", "kind", "verdict", "codes", "seconds",
              "time_s", "review_cause")  # fmt: skip
WHOLE_FIELDS = ("move", "player")
"""Columns of whole numbers; ``seconds`` and ``time_s`` are seconds (float, empty when unknown); the rest text."""
SECONDS_FIELDS = ("seconds", "time_s")


class ArchiveFiles(NamedTuple):
    page: Path
    moves_csv: Path
    moves_parquet: Path | None
    """None where pyarrow is not installed."""


def archive_moves(out: str | Path, records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every move of every analysed game (done or skipped), one row each (player counted from 1); a game whose
    ``moves.json`` cannot be read as moves is left out."""
    rows = []
    for game in records:
        if game["status"] not in ("done", "skipped"):
            continue
        moves = read_moves(Path(out) / game["label"] / "moves.json")
        for move in moves or ():
            ruling, verdict = move.ruling, move.ruling.verdict.value
            rows.append({
                "event": game["event"], "round": game["round"], "table": game["table"], "label": game["label"],
                "profile": game["profile"], "move": move.number, "player": move.player + 1, "kind": move.kind,
                "verdict": verdict, "codes": " ".join(ruling.codes), "seconds": _seconds(move.elapsed_s),
                "time_s": _seconds(move.time_s), "review_cause": review_cause(ruling) if verdict == "review" else "",
            })  # fmt: skip
    return rows


def read_moves(path: Path) -> list[Move] | None:
    """The moves of an analysed game's ``moves.json`` (each a game log's move line), each number once as last ruled
    (an amendment replaces the move it amends: :func:`referee.events.last_rulings`); None where it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            return None
        moves = [event_from_json({"event": "move", **line}) for line in data]
    except (OSError, ValueError, TypeError):  # GameStateError is a ValueError
        return None
    return last_rulings(m for m in moves if isinstance(m, Move))


def _seconds(value: float | None) -> float | None:
    """Seconds as a float (a whole number in ``moves.json`` too), so the CSV and the Parquet file agree."""
    return None if value is None else float(value)


def review_cause(ruling: Ruling) -> str:
    """Why a move went to a person, in a few words that group alike (numbers left out)."""
    notes = [re.sub(r"\d+(\.\d+)?", "N", n).split(":")[0] for n in ruling.notes]
    if notes:
        return notes[0][:80]
    if ruling.uncertain:
        return "tiles read with low confidence"
    return ", ".join(ruling.codes) or "unstated"


def write_archive(out: str | Path, summary: dict[str, Any]) -> ArchiveFiles:
    """``out/moves.csv`` (every move), ``out/moves.parquet`` (the same, typed; where pyarrow is installed) and
    ``out/archive.html`` (one self-contained page); returns their paths."""
    out = Path(out)
    rows = archive_moves(out, summary["games"])
    with (out / MOVES_CSV).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    parquet = write_parquet(out / MOVES_PARQUET, rows)
    page = archive_html(summary, rows)
    (out / ARCHIVE_NAME).write_text(page, encoding="utf-8")
    return ArchiveFiles(out / ARCHIVE_NAME, out / MOVES_CSV, parquet)


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> Path | None:
    """The move rows as a Parquet file with typed columns (whole numbers as int64, seconds as float64 with nulls
    where unknown, the rest strings), for pandas and polars; None, and no file, where pyarrow is not installed
    (``pip install 'rummikub-referee[parquet]'``). A stale file from an earlier run is removed first."""
    path.unlink(missing_ok=True)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return None
    types = {name: pa.int64() if name in WHOLE_FIELDS else pa.float64() if name in SECONDS_FIELDS else pa.string()
             for name in CSV_FIELDS}  # fmt: skip
    schema = pa.schema([(name, types[name]) for name in CSV_FIELDS])
    table = pa.table({name: pa.array([row[name] for row in rows], type=types[name]) for name in CSV_FIELDS}, schema)
    pq.write_table(table, path)
    return path


def _count(rows: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], Iterable[str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        for value in key(row):
            counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def bar_svg(
    counts: dict[str, int],
    *,
    part: dict[str, int] | None = None,
    part_name: str = "",
    width: int = 560,
    colour: str = "#4a7ab5",
    part_colour: str = "#c49a2c",
) -> str:
    """Horizontal bars, one per key, with the count at the end (inline SVG: the page needs nothing else); ``part``:
    how much of each bar is of another kind, drawn in ``part_colour`` and named after the count."""
    from html import escape

    if not counts:
        return "<p class=none>none</p>"
    part = part or {}
    most = max(counts.values()) or 1
    row_h, label_w = 20, 250
    parts = []
    for i, (name, n) in enumerate(counts.items()):
        y = i * row_h
        w = max(1, round((width - label_w - 90) * n / most))
        k = part.get(name, 0)
        w_part = round(w * k / n) if n else 0
        label = f"{n} ({k} {part_name})" if k else str(n)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{escape(str(name)[:42])}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{w}" height="{row_h - 6}" fill="{colour}"/>'
            + (f'<rect x="{label_w + w - w_part}" y="{y + 3}" width="{w_part}" height="{row_h - 6}"'
               f' fill="{part_colour}"/>' if w_part else "")
            + f'<text x="{label_w + w + 4}" y="{y + 14}">{escape(label)}</text>'
        )  # fmt: skip
    height = row_h * len(counts)
    return f'<svg width="{width}" height="{height}" font-size="12" font-family="sans-serif">{"".join(parts)}</svg>'


def histogram_svg(values: list[float], *, bins: int = 12, width: int = 520, height: int = 160) -> str:
    """Move times as a histogram (seconds on the x axis)."""
    if not values:
        return "<p class=none>no move times</p>"
    top = max(values) or 1.0
    step = top / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int(v / step)) if step else 0] += 1
    most = max(counts) or 1
    bar_w = (width - 40) / bins
    parts = []
    for i, n in enumerate(counts):
        h = (height - 30) * n / most
        x = 30 + i * bar_w
        parts.append(f'<rect x="{x:.1f}" y="{height - 20 - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}"'
                     f' fill="#6a9f58"><title>{i * step:.0f}-{(i + 1) * step:.0f} s: {n}</title></rect>')  # fmt: skip
        if i % 3 == 0:
            parts.append(f'<text x="{x:.1f}" y="{height - 5}">{i * step:.0f}s</text>')
    parts.append(f'<text x="{width - 40}" y="{height - 5}">{top:.0f}s</text>')
    return f'<svg width="{width}" height="{height}" font-size="11" font-family="sans-serif">{"".join(parts)}</svg>'


def archive_html(summary: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    from html import escape

    games = summary["games"]
    analysed = [g for g in games if g["status"] in ("done", "skipped")]
    reviews = [r for r in rows if r["verdict"] == "review"]
    review_rate = len(reviews) / len(rows) if rows else 0.0

    def violations(key: Callable[[dict[str, Any]], str] | None, verdicts: tuple[str, ...]) -> dict[str, int]:
        """Violations found, one per code, grouped by ``key`` (the code itself without one)."""
        chosen = (r for r in rows if r["codes"] and r["verdict"] in verdicts)
        return _count(chosen, lambda r: r["codes"].split() if key is None else [key(r)] * len(r["codes"].split()))

    def chart(key: Callable[[dict[str, Any]], str] | None) -> str:
        # a REVIEW's violations are what the referee would rule if the reading is right: shown apart
        found = violations(key, ("revert", "review"))
        return bar_svg(found, part=violations(key, ("review",)), part_name="REVIEW", colour="#b5544a")

    sections = [
        ("Verdicts", bar_svg(_count(rows, lambda r: [r["verdict"]]))),
        ("Violations by code (red: REVERT, gold: REVIEW)", chart(None)),
        ("Violations by player (seat in turn order)", chart(lambda r: f"player {r['player']}")),
        ("Violations by profile", chart(lambda r: str(r["profile"]))),
        ("Violations by round", chart(lambda r: f"{r['event']} round {r['round']}")),
        (
            f"REVIEW: {len(reviews)} of {len(rows)} moves ({100 * review_rate:.1f} %), by cause",
            bar_svg(_count(reviews, lambda r: [r["review_cause"]]), colour="#c49a2c"),
        ),
        ("Move times (seconds)", histogram_svg([float(r["seconds"]) for r in rows if r["seconds"] is not None])),
    ]
    slowest = sorted((r for r in rows if r["seconds"] is not None), key=lambda r: -float(r["seconds"]))[:10]
    disputed = [r for r in rows if r["verdict"] in ("revert", "review")][:20]

    def move_list(items: list[dict[str, Any]]) -> str:
        if not items:
            return "<p class=none>none</p>"
        lines = "".join(
            f'<li><a href="{escape(r["label"])}/report.html">{escape(r["label"])}</a> move {r["move"]}, player'
            f" {r['player']}: {escape(r['verdict'].upper())} {escape(r['codes'])} ({r['seconds']} s)</li>"
            for r in items
        )
        return f"<ol>{lines}</ol>"

    game_rows = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in (g["event"], g["round"], g["table"], g["profile"]))
        + (f'<td><a href="{escape(g["label"])}/report.html">{escape(g["status"])}</a></td>' if g in analysed
           else f'<td class=failed title="{escape("; ".join(g["errors"]))}">{escape(g["status"])}:'
                f' {escape(g["errors"][-1] if g["errors"] else "")}</td>')
        + f"<td>{g['moves'] if g['moves'] is not None else ''}</td>"
        + f"<td>{escape(', '.join(f'{n} {v}' for v, n in sorted(g['verdicts'].items())))}</td></tr>"
        for g in games
    )  # fmt: skip
    body = "".join(f"<section><h2>{escape(title)}</h2>{svg}</section>" for title, svg in sections)
    counts = summary["counts"]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Archive: {len(games)} games</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:70em}}section{{display:inline-block;vertical-align:top;
margin:0 2em 1.5em 0}}h2{{font-size:1.05em}}table{{border-collapse:collapse}}td,th{{border-bottom:1px solid #ddd;
padding:2px 8px;text-align:left}}.failed{{color:#a33}}.none{{color:#888}}</style></head><body>
<h1>Archive: {len(games)} games, {len(rows)} moves</h1>
<p>{counts.get("done", 0)} analysed now, {counts.get("skipped", 0)} already analysed, {counts.get("failed", 0)}
failed; {summary["video_hours_analysed"]:.2f} video hours analysed in this run.</p>
{body}
<section><h2>Slowest moves</h2>{move_list(slowest)}</section>
<section><h2>Disputed moves (REVERT, REVIEW)</h2>{move_list(disputed)}</section>
<h2>Games</h2><table><tr><th>event</th><th>round</th><th>table</th><th>profile</th><th>status</th><th>moves</th>
<th>verdicts</th></tr>{game_rows}</table>
</body></html>
"""
