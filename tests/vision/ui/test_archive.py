"""The archive of a batch (``vision/ui/archive.py``): moves.csv, moves.parquet and archive.html from hand-made game
folders (each a ``moves.json``), no video analysed."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from referee.events import Move
from referee.moves import Code, Ruling, Verdict, Violation
from referee.table import Table
from vision.ui.archive import CSV_FIELDS, MOVES_PARQUET, SECONDS_FIELDS, WHOLE_FIELDS, write_archive


def a_move(
    number: int, player: int, verdict: str, codes: list[str], seconds: float | None, notes: list[str]
) -> dict[str, Any]:
    """A move as ``moves.json`` holds it (a game log's move line), with the ruling's verdict, codes and notes."""
    violations = tuple(Violation(Code(c), c) for c in codes)
    ruling = Ruling(Verdict(verdict), violations, (), (), 0, "official", True, notes=tuple(notes))
    return Move(number, player, 0.0, Table(), Table(), ruling, elapsed_s=seconds).to_json()


def a_game(out: Path, label: str, moves: list[dict[str, Any]], status: str = "done") -> dict[str, Any]:
    (out / label).mkdir()
    (out / label / "moves.json").write_text(json.dumps(moves))
    event, round_, table = label.split("_")
    verdicts: dict[str, int] = {}
    for move in moves:
        verdicts[move["ruling"]["verdict"]] = verdicts.get(move["ruling"]["verdict"], 0) + 1
    return {"label": label, "event": event, "round": round_, "table": table, "profile": "official", "status": status,
            "errors": [], "moves": len(moves), "verdicts": verdicts}  # fmt: skip


def a_summary(games: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {s: sum(1 for g in games if g["status"] == s) for s in ("done", "skipped", "failed")}
    return {"games": games, "counts": counts, "video_hours_analysed": 0.01}


def test_an_amended_move_is_one_row_as_last_ruled(tmp_path: Path) -> None:
    # a moves.json that kept the first part of move 1 before its amendment (the whole turn, ruled again)
    moves = [a_move(1, 0, "review", [], 5.0, []), {**a_move(1, 0, "ok", [], 12.0, []), "amends": 1}]
    files = write_archive(tmp_path, a_summary([a_game(tmp_path, "E_1_1", [*moves, a_move(2, 1, "ok", [], 3.0, [])])]))
    with files.moves_csv.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["move"], r["verdict"], r["seconds"]) for r in rows] == [("1", "ok", "12.0"), ("2", "ok", "3.0")]


def test_the_archive_counts_reverts_and_reviews_apart(tmp_path: Path) -> None:
    moves = [
        a_move(1, 0, "ok", [], 12.0, []),
        a_move(2, 1, "revert", ["invalid-set", "joker-kept"], 61.5, []),
        a_move(3, 0, "review", ["invalid-set"], 30.0, ["2 tile(s) read with low confidence: a person decides"]),
        a_move(4, 1, "review", [], 8.0, ["1 tile(s) read with low confidence: a person decides"]),
    ]
    files = write_archive(tmp_path, a_summary([a_game(tmp_path, "E_1_1", moves)]))
    with files.moves_csv.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["move"], r["player"], r["verdict"], r["codes"], r["seconds"]) for r in rows] == [
        ("1", "1", "ok", "", "12.0"),
        ("2", "2", "revert", "invalid-set joker-kept", "61.5"),
        ("3", "1", "review", "invalid-set", "30.0"),
        ("4", "2", "review", "", "8.0"),
    ]
    assert {r["review_cause"] for r in rows if r["verdict"] == "review"} == {"N tile(s) read with low confidence"}
    page = files.page.read_text()
    assert "REVIEW: 2 of 4 moves (50.0 %), by cause" in page
    assert ">invalid-set</text>" in page and ">2 (1 REVIEW)</text>" in page  # one REVERT, one REVIEW
    assert ">joker-kept</text>" in page
    slowest = page.split("Slowest moves", 1)[1]
    assert slowest.index("move 2,") < slowest.index("move 3,") < slowest.index("move 1,")  # 61.5 s, 30 s, 12 s


def typed_csv(path: Path) -> list[dict[str, Any]]:
    """moves.csv read back with the archive's column types (an empty cell: unknown)."""

    def value(name: str, text: str) -> Any:
        if name in WHOLE_FIELDS:
            return int(text)
        if name in SECONDS_FIELDS:
            return float(text) if text else None
        return text

    with path.open(newline="", encoding="utf-8") as handle:
        return [{name: value(name, row[name]) for name in CSV_FIELDS} for row in csv.DictReader(handle)]


def test_moves_parquet_reads_back_equal_to_the_csv(tmp_path: Path) -> None:
    """pyarrow reads the file as pandas.read_parquet and polars do (pandas uses pyarrow for it)."""
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the [parquet] extra) is not installed")
    moves = [
        a_move(1, 0, "ok", [], 12, []),  # whole seconds in moves.json: 12.0 in both files
        a_move(2, 1, "revert", ["invalid-set"], None, []),  # no move time: empty cell, null
        a_move(3, 0, "review", [], 7.25, ["1 tile(s) read with low confidence: a person decides"]),
    ]
    games = [
        a_game(tmp_path, "Open-2026_1_1", moves),
        a_game(tmp_path, "Open-2026_1_2", [a_move(1, 1, "ok", [], 3.5, [])], status="skipped"),
        a_game(tmp_path, "Open-2026_2_1", [a_move(1, 0, "ok", [], 1.0, [])], status="failed"),  # not in the archive
    ]
    files = write_archive(tmp_path, a_summary(games))
    assert files.moves_parquet == tmp_path / MOVES_PARQUET
    table = pq.read_table(files.moves_parquet)
    assert table.column_names == list(CSV_FIELDS)
    assert str(table.schema.field("move").type) == "int64" and str(table.schema.field("seconds").type) == "double"
    from_csv = typed_csv(files.moves_csv)
    assert table.to_pylist() == from_csv
    assert [(r["label"], r["move"], r["seconds"]) for r in from_csv] == [
        ("Open-2026_1_1", 1, 12.0), ("Open-2026_1_1", 2, None), ("Open-2026_1_1", 3, 7.25), ("Open-2026_1_2", 1, 3.5),
    ]  # fmt: skip


def test_no_pyarrow_no_parquet_and_no_stale_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    (tmp_path / MOVES_PARQUET).write_bytes(b"from an earlier run")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    files = write_archive(tmp_path, a_summary([a_game(tmp_path, "E_1_1", [a_move(1, 0, "ok", [], 5.0, [])])]))
    assert files.moves_parquet is None and not (tmp_path / MOVES_PARQUET).exists()
    assert len(typed_csv(files.moves_csv)) == 1


def test_a_game_whose_moves_cannot_be_read_is_left_out(tmp_path: Path) -> None:
    good = a_game(tmp_path, "E_1_1", [a_move(1, 0, "ok", [], 5.0, [])])
    broken = a_game(tmp_path, "E_1_2", [a_move(1, 0, "ok", [], 5.0, [])])
    line = json.loads((tmp_path / "E_1_2" / "moves.json").read_text())[0]
    del line["ruling"]  # a move the game cannot take (what a log of another program might hold)
    (tmp_path / "E_1_2" / "moves.json").write_text(json.dumps([line]))
    files = write_archive(tmp_path, a_summary([good, broken]))
    with files.moves_csv.open(newline="") as handle:
        assert [r["label"] for r in csv.DictReader(handle)] == ["E_1_1"]
