"""The notebooks in notebooks/ run top to bottom (in a scratch folder), are committed without outputs, and show
what their text says: after the last cell, a check cell runs in the same kernel and asserts on the values the
notebook displayed (:data:`CHECKS`).

Running them is slow-ish (seconds to a minute or two each on two cores): deselect with ``-m "not notebook"``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT_S = 300


def test_there_are_notebooks() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path: Path) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code and all(not cell["outputs"] and cell["execution_count"] is None for cell in code)


CHECKS = {
    "01-quickstart": """
from referee.moves import check_move as _check_move
# the reading shown is close to the truth shown beside it
assert sum((truth & read).values()) >= 0.9 * sum(truth.values()), (truth, read)
# a run added to the table just read: OK (tiles read with low confidence that the move left alone do not matter)
_after = Table.from_json({**layout, "sets": [*layout["sets"], ["red-11", "red-12", "red-13"]]})  # cell 12 took "after"
_added = _check_move(table, _after, opened=True, profile="official")
assert _added.verdict.value == "ok" and sorted(map(str, _added.played)) == ["red-11", "red-12", "red-13"], _added
# the opening with a gapped run: both faults, the table restored, the six tiles back, one penalty tile
assert ruling.verdict.value == "revert"
assert sorted(v.code.value for v in ruling.violations) == ["invalid-set", "opening-below-threshold"]
assert plan.restore == before and ruling.penalty_tiles == 1
assert sorted(map(str, plan.to_rack)) == sorted("blue-8 blue-9 blue-12 orange-3 red-3 black-3".split())
""",
    "02-synthetic-data": """
assert np.array_equal(render_scene(4, params).image, scene.image)  # the same seed and recipe, the same picture
assert 0 < len(readable) <= len(scene.tiles) and scene.table.sets
assert summary["images"] == 4 and len(list((out / "images").iterdir())) == 4
_lines = (out / "labels" / "000000.txt").read_text().splitlines()
assert _lines and all(len(line.split()) == 5 and 0 <= int(line.split()[0]) < 53 for line in _lines)  # class box
assert len(_lines) == sum(tile["readable"] for tile in sidecar["tiles"])  # a line per readable tile of the sidecar
""",
    "03-training-and-evaluation": """
assert len(rows) == 6 and summary["end_to_end"]["f1"] >= F1_FLOOR, summary["end_to_end"]
assert facts["classifier"]["temperature"] > 0 and classifier["history"]
if importlib.util.find_spec("torch") is not None:
    assert metrics["onnx_max_abs_diff_vs_torch"] < 1e-4
""",
    "04-video-analysis": """
from vision.eval.pipeline_bench import score_game, summarise
_scores = summarise([score_game(truth_moves, events)])
# every move of the filmed game found, none made up, nobody sent back by mistake
assert _scores["move_recall"] == 1.0 and _scores["phantom_moves"] == 0 and _scores["false_reverts"] == 0, _scores
assert summary["moves"] == len(moves) == _scores["moves_found"]
assert report.is_file() and Counter(event["event"] for event in events)["move"] == len(moves)
""",
}
"""Per notebook: Python run after its last cell, in its kernel, asserting what the notebook showed."""
NOTEBOOK_F1_FLOOR = 0.812 - 0.03
"""Tile F1 of the shipped models on notebook 03's six held-out synthetic scenes (253 tiles), measured 0.812 on the
AVX2 CPU, less 0.03 (about 8 tiles)."""


def test_every_notebook_has_its_checks() -> None:
    assert sorted(CHECKS) == [p.stem for p in NOTEBOOKS]


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # the kernel is a child process: it gets the repository through PYTHONPATH, and works in tmp_path
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    notebook = nbformat.read(path, as_version=4)
    check = f"F1_FLOOR = {NOTEBOOK_F1_FLOOR}\n" + CHECKS[path.stem]
    notebook.cells.append(nbformat.v4.new_code_cell(check))  # a failed assert fails the run, naming the cell
    client = nbclient.NotebookClient(
        notebook, timeout=CELL_TIMEOUT_S, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # a failing cell raises CellExecutionError, with the cell and its traceback
    errors = [out for cell in notebook.cells for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    assert not errors
