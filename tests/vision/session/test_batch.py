"""``batch``: a manifest of game videos analysed as ``analyze`` does, each in its folder, on a process pool (or
Ray), resumable, with batch.json, moves.csv and archive.html. Two tiny synthetic games (0.2 min, 480x270, 12 fps:
synth-game asks for a frame rate on the pipeline's sampling grid) and a corrupt video; the shipped models."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from referee.profiles import PROFILES
from vision.cli import main
from vision.session.analyze import ANALYSIS_FILES
from vision.session.batch import (
    GameJob,
    GameSpec,
    ManifestError,
    read_manifest,
    run_batch,
    worker_threads,
)

MANIFEST_HEAD = "video,event,round,table,profile,players,first_player,calibration,time_limit\n"


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two short synthetic games and a corrupt video, listed in a CSV manifest."""
    folder = tmp_path_factory.mktemp("season")
    for seed in (3, 4):
        game = ["--players", "2", "--profile", "official", "--seed", str(seed), "--minutes", "0.2"]
        status = main(["synth-game", "--out", str(folder / f"g{seed}"), *game, "--size", "480x270", "--fps", "12"])
        assert status == 0
    (folder / "broken.mp4").write_bytes(b"this is not a video")
    manifest = folder / "season.csv"
    manifest.write_text(
        MANIFEST_HEAD
        + "g3/game.mp4,Open 2026,1,1,official,2,1,auto,\n"
        + "g4/game.mp4,Open 2026,1,2,official,2,2,,none\n"
        + "broken.mp4,Open 2026,2,1,official,2,,,\n"
    )
    return manifest


@pytest.fixture(scope="module")
def first_run(season: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    out = tmp_path_factory.mktemp("batch") / "archive"
    status = main(["batch", str(season), "--out", str(out), "--workers", "2"])
    return status, out


def batch_json(out: Path) -> dict[str, Any]:
    return json.loads((out / "batch.json").read_text())


def test_every_game_is_analysed_and_a_corrupt_video_is_listed_failed(first_run: tuple[int, Path]) -> None:
    status, out = first_run
    assert status == 1  # a game failed: the batch completed all the same
    summary = batch_json(out)
    assert summary["counts"] == {"done": 2, "skipped": 0, "failed": 1}
    games = {g["label"]: g for g in summary["games"]}
    assert set(games) == {"Open-2026_1_1", "Open-2026_1_2", "Open-2026_2_1"}
    broken = games["Open-2026_2_1"]
    assert broken["status"] == "failed" and broken["attempts"] == 2  # tried once more
    assert all("cannot open video" in e and "broken.mp4" in e for e in broken["errors"])
    for label in ("Open-2026_1_1", "Open-2026_1_2"):
        assert games[label]["status"] == "done" and games[label]["attempts"] == 1
        assert games[label]["cpu_s"] > 0 and games[label]["pid"] is not None
        for name in ANALYSIS_FILES:
            assert (out / label / name).is_file(), (label, name)
    assert not (out / "Open-2026_2_1").exists()
    assert summary["engine"]["threads"] == worker_threads(2)  # the cores shared out between the two workers
    assert sum(summary["cpu_s_by_worker"].values()) == pytest.approx(
        sum(games[label]["cpu_s"] for label in ("Open-2026_1_1", "Open-2026_1_2")), abs=0.02
    )


def test_a_game_folder_is_what_analyze_writes(first_run: tuple[int, Path], season: Path, tmp_path: Path) -> None:
    _, out = first_run
    alone = tmp_path / "alone"
    game = ["--players", "2", "--profile", "official", "--first-player", "2", "--time-limit", "none"]
    status = main(["analyze", str(season.parent / "g4" / "game.mp4"), "--out", str(alone), *game, "--quiet", "--json"])
    assert status == 0
    batch_moves = json.loads((out / "Open-2026_1_2" / "moves.json").read_text())
    assert batch_moves == json.loads((alone / "moves.json").read_text())
    assert events(out / "Open-2026_1_2") == events(alone)
    assert sorted(p.name for p in (out / "Open-2026_1_2").iterdir()) == sorted(p.name for p in alone.iterdir())


def test_moves_csv_has_every_move_and_the_archive_links_every_report(first_run: tuple[int, Path]) -> None:
    _, out = first_run
    with (out / "moves.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for label in ("Open-2026_1_1", "Open-2026_1_2"):
        moves = json.loads((out / label / "moves.json").read_text())
        mine = [r for r in rows if r["label"] == label]
        assert [int(r["move"]) for r in mine] == [m["number"] for m in moves]
        assert [r["verdict"] for r in mine] == [m["ruling"]["verdict"] for m in moves]
        assert [int(r["player"]) for r in mine] == [m["player"] + 1 for m in moves]
        assert {r["event"] for r in mine} == {"Open 2026"} and {r["round"] for r in mine} == {"1"}
    import importlib.util

    has_pyarrow = importlib.util.find_spec("pyarrow") is not None
    assert (out / "moves.parquet").is_file() == has_pyarrow  # beside moves.csv exactly where pyarrow is installed
    if has_pyarrow:
        import pyarrow.parquet as pq

        table = pq.read_table(out / "moves.parquet")
        assert table.column("label").to_pylist() == [r["label"] for r in rows]
        assert table.column("move").to_pylist() == [int(r["move"]) for r in rows]
    page = (out / "archive.html").read_text()
    assert 'href="Open-2026_1_1/report.html"' in page and 'href="Open-2026_1_2/report.html"' in page
    assert "<svg" in page and "<script" not in page and "http" not in page.split("<body>", 1)[1]
    assert "failed" in page and "cannot open video" in page


def typed_csv(path: Path) -> list[dict[str, Any]]:
    """moves.csv's rows with the Parquet file's types: whole numbers, seconds (None where empty), text."""
    from vision.ui.archive import SECONDS_FIELDS, WHOLE_FIELDS

    def typed(name: str, text: str) -> Any:
        if name in WHOLE_FIELDS:
            return int(text)
        if name in SECONDS_FIELDS:
            return float(text) if text else None
        return text

    with path.open(newline="") as handle:
        return [{name: typed(name, text) for name, text in row.items()} for row in csv.DictReader(handle)]


def test_pandas_reads_moves_parquet_as_moves_csv_typed(first_run: tuple[int, Path]) -> None:
    """What people who analyse further do with the archive: ``pandas.read_parquet`` (through pyarrow) gives the CSV's
    columns in its order, a row per move, whole numbers as int64, seconds as float64 (NaN where unknown), text as
    strings; the same frame as the CSV read with those types."""
    pd = pytest.importorskip("pandas", reason="pandas is not installed (.ci/run installs it for this test)")
    pytest.importorskip("pyarrow", reason="pyarrow (the [parquet] extra) is not installed")
    from vision.ui.archive import CSV_FIELDS, SECONDS_FIELDS, WHOLE_FIELDS

    _, out = first_run
    frame = pd.read_parquet(out / "moves.parquet")
    rows = typed_csv(out / "moves.csv")
    assert list(frame.columns) == list(CSV_FIELDS) and len(frame) == len(rows) > 0
    text = [name for name in CSV_FIELDS if name not in WHOLE_FIELDS + SECONDS_FIELDS]
    assert {name: str(frame[name].dtype) for name in WHOLE_FIELDS + SECONDS_FIELDS} == {
        "move": "int64", "player": "int64", "seconds": "float64", "time_s": "float64"
    }  # fmt: skip
    assert all(pd.api.types.is_string_dtype(frame[name]) for name in text)
    from_csv = pd.read_csv(
        out / "moves.csv", keep_default_na=False, na_values={name: [""] for name in SECONDS_FIELDS},
        dtype={**dict.fromkeys(text, "str"), **dict.fromkeys(WHOLE_FIELDS, "int64"),
               **dict.fromkeys(SECONDS_FIELDS, "float64")},
    )  # fmt: skip
    pd.testing.assert_frame_equal(frame, from_csv)
    for label in ("Open-2026_1_1", "Open-2026_1_2"):  # a row per move of each analysed game
        assert (frame["label"] == label).sum() == len(json.loads((out / label / "moves.json").read_text()))


def test_polars_reads_moves_parquet_as_moves_csv_typed(first_run: tuple[int, Path]) -> None:
    pl = pytest.importorskip("polars", reason="polars is not installed (a 180 MB install: in no extra, nor in CI)")
    pytest.importorskip("pyarrow", reason="pyarrow (the [parquet] extra) is not installed")
    from vision.ui.archive import CSV_FIELDS, SECONDS_FIELDS, WHOLE_FIELDS

    _, out = first_run
    frame = pl.read_parquet(out / "moves.parquet")
    types = {name: pl.Int64 if name in WHOLE_FIELDS else pl.Float64 if name in SECONDS_FIELDS else pl.String
             for name in CSV_FIELDS}  # fmt: skip
    assert dict(frame.schema) == types and frame.columns == list(CSV_FIELDS)
    assert frame.rows(named=True) == typed_csv(out / "moves.csv") != []


def test_a_second_run_skips_finished_games_and_redoes_an_incomplete_one(
    first_run: tuple[int, Path], season: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, first = first_run
    out = tmp_path / "archive"
    shutil.copytree(first, out)
    kept = (out / "Open-2026_1_1" / "summary.json").stat().st_mtime_ns
    (out / "Open-2026_1_2" / "report.html").unlink()  # killed before its report was written
    capsys.readouterr()
    assert main(["batch", str(season), "--out", str(out)]) == 1
    summary = batch_json(out)
    games = {g["label"]: g["status"] for g in summary["games"]}
    assert games == {"Open-2026_1_1": "skipped", "Open-2026_1_2": "done", "Open-2026_2_1": "failed"}
    assert (out / "Open-2026_1_1" / "summary.json").stat().st_mtime_ns == kept
    assert (out / "Open-2026_1_2" / "report.html").is_file()
    progress = [line for line in capsys.readouterr().err.splitlines() if line.startswith("batch: ")]
    assert len(progress) == 3 and progress[-1].startswith("batch: 3/3 games (1 done, 1 failed, 1 skipped)")


def test_a_failed_attempt_is_retried_once_and_others_go_on(tmp_path: Path) -> None:
    """The pool's worker killed mid-game looks like this to the batch: a failed attempt."""
    calls: list[str] = []

    def flaky(jobs: list[GameJob]) -> Any:
        for job in jobs:
            calls.append(job.spec.label)
            first_try = calls.count(job.spec.label) == 1
            if job.spec.table == "1" and first_try:
                yield job, {"status": "failed", "error": "the worker process died"}
            elif job.spec.table == "2":
                yield job, {"status": "failed", "error": f"bad video {job.spec.video}"}
            else:
                yield job, {"status": "done", "video_s": 10.0, "moves": 1, "verdicts": {"ok": 1}}

    games = [GameSpec(video=f"v{t}.mp4", event="E", round="1", table=t) for t in ("1", "2", "3")]
    summary = run_batch(games, tmp_path, runner=flaky)
    statuses = {g["table"]: (g["status"], g["attempts"]) for g in summary["games"]}
    assert statuses == {"1": ("done", 2), "2": ("failed", 2), "3": ("done", 1)}
    assert calls == ["E_1_1", "E_1_2", "E_1_3", "E_1_1", "E_1_2"]
    assert batch_json(tmp_path)["counts"] == {"done": 2, "skipped": 0, "failed": 1}


def dies_on_first_try(job: GameJob) -> dict[str, Any]:
    """In a pool worker: game 1's first attempt kills its process (as the OOM killer or ``kill -9`` would). Every
    finished analysis adds a line to ``<game>.done``: how many times the game was analysed."""
    import os

    marker = Path(job.out).with_suffix(".tried")
    if job.spec.table == "1" and not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(9)
    with Path(job.out).with_suffix(".done").open("a") as handle:
        handle.write(f"{os.getpid()}\n")
    return {"status": "done", "video_s": 1.0, "moves": 0, "verdicts": {}, "pid": os.getpid()}


def analysed(out: Path, label: str) -> int:
    done = out / f"{label}.done"
    return len(done.read_text().splitlines()) if done.exists() else 0


def test_a_worker_killed_mid_game_fails_that_attempt_and_a_fresh_pool_finishes_the_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vision.session.batch import pool_runner

    monkeypatch.syspath_prepend(str(Path(__file__).parents[3]))  # spawned workers import this module by its name

    games = [GameSpec(video=f"v{t}.mp4", event="E", round="1", table=t) for t in ("1", "2")]
    summary = run_batch(games, tmp_path, runner=pool_runner(1, work=dies_on_first_try))
    by_table = {g["table"]: g for g in summary["games"]}
    assert by_table["1"]["status"] == "done" and by_table["1"]["attempts"] == 2
    assert by_table["1"]["errors"] == ["the worker process died (killed, or out of memory)"]
    killed = int((tmp_path / "E_1_1.tried").read_text())
    assert by_table["1"]["pid"] != killed  # the retry ran in a new worker
    assert by_table["2"]["status"] == "done" and summary["counts"]["failed"] == 0
    assert [analysed(tmp_path, label) for label in ("E_1_1", "E_1_2")] == [1, 1]  # each game analysed once


def test_a_ray_worker_killed_mid_game_fails_that_attempt_and_the_batch_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ray = pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")
    from vision.session.batch import ray_runner

    monkeypatch.syspath_prepend(str(Path(__file__).parents[3]))  # Ray's workers import this module by its name
    games = [GameSpec(video=f"v{t}.mp4", event="E", round="1", table=t) for t in ("1", "2", "3")]
    try:
        summary = run_batch(games, tmp_path, runner=ray_runner("local", work=dies_on_first_try), backend="ray:local")
    finally:
        ray.shutdown()
    by_table = {g["table"]: g for g in summary["games"]}
    assert summary["counts"] == {"done": 3, "skipped": 0, "failed": 0}
    assert by_table["1"]["attempts"] == 2 and len(by_table["1"]["errors"]) == 1  # Ray's worker-died error
    assert by_table["1"]["pid"] != int((tmp_path / "E_1_1.tried").read_text())
    assert [by_table[t]["attempts"] for t in ("2", "3")] == [1, 1]
    assert [analysed(tmp_path, g.label) for g in games] == [1, 1, 1]  # each game analysed once


LENGTHS = {"v1.mp4": 60.0, "v2.mp4": 431.0, "v3.mp4": 0.0, "v4.mp4": 180.0, "v5.mp4": 0.0}
"""Video seconds as the container's header gives them (0: unknown, a header without a length or no video)."""
SIZES = {"v1.mp4": 500, "v2.mp4": 200, "v3.mp4": 1000, "v4.mp4": 200}
"""File sizes in bytes; v5 has no file (its size unknown)."""
HEAVIEST_FIRST = ["v3.mp4", "v1.mp4", "v2.mp4", "v4.mp4", "v5.mp4"]
"""The largest file first (v3 of unknown length too), the longer of two files of one size first (v2 before v4),
a file whose size cannot be read last."""


def games_of_unequal_work(folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[GameSpec]:
    """Five games in manifest order v1..v5 (:data:`LENGTHS`, :data:`SIZES`)."""
    from vision.session import batch

    for name, size in SIZES.items():
        (folder / name).write_bytes(b"x" * size)
    monkeypatch.setattr(batch, "video_seconds", lambda video: LENGTHS[Path(video).name])
    return [GameSpec(video=str(folder / f"v{t}.mp4"), event="E", round="1", table=t) for t in "12345"]


def test_the_largest_files_start_first_and_their_retries_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The most work first (a file's size: the bits to decode): the light games fill the gaps at the end instead of
    a heavy one started last keeping one worker busy alone. The longer video first between files of one size."""
    handed: list[list[str]] = []

    def finishes_in_reverse(jobs: list[GameJob]) -> Any:
        handed.append([Path(job.spec.video).name for job in jobs])
        for job in reversed(jobs):  # the light games finish first: the failures come back lightest first
            failing = job.spec.table in "12" and len(handed) == 1
            yield job, {"status": "failed", "error": "died"} if failing else {"status": "done", "video_s": 1.0}

    summary = run_batch(games_of_unequal_work(tmp_path, monkeypatch), tmp_path / "out", runner=finishes_in_reverse)
    assert handed == [HEAVIEST_FIRST, ["v1.mp4", "v2.mp4"]]
    assert [g["table"] for g in summary["games"]] == list("12345")  # batch.json keeps the manifest's order
    assert summary["counts"]["done"] == 5


def records_start(job: GameJob) -> dict[str, Any]:
    """In a pool worker: appends the game's video to ``started.txt`` beside the games' folders."""
    with (Path(job.out).parent / "started.txt").open("a") as handle:
        handle.write(Path(job.spec.video).name + "\n")
    return {"status": "done", "video_s": 1.0, "moves": 0, "verdicts": {}}


def test_a_pool_worker_starts_the_largest_file_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vision.session.batch import pool_runner

    monkeypatch.syspath_prepend(str(Path(__file__).parents[3]))  # spawned workers import this module by its name
    games = games_of_unequal_work(tmp_path, monkeypatch)
    summary = run_batch(games, tmp_path / "out", runner=pool_runner(1, work=records_start))
    assert summary["counts"]["done"] == 5
    assert (tmp_path / "out" / "started.txt").read_text().split() == HEAVIEST_FIRST


YAML_MANIFEST = """
defaults: {profile: official, players: 2}
games:
  - {video: a.mp4, event: Open, round: 1, table: 1}
  - {video: b.mp4, event: Open, round: 1, table: 2, first_player: 2, time_limit: 90, calibration: frame}
"""


def test_a_yaml_manifest_with_defaults(tmp_path: Path) -> None:
    path = tmp_path / "season.yaml"
    path.write_text(YAML_MANIFEST)
    games = read_manifest(path)
    assert [(g.label, g.rules.name, g.players, g.first_player, g.rules.time_limit_s, g.calibration) for g in games] == [
        ("Open_1_1", "official", 2, 1, PROFILES["official"].time_limit_s, "auto"),  # the profile's own limit
        ("Open_1_2", "official", 2, 2, 90.0, "frame"),  # time_limit: 90 applied to the profile at parse time
    ]
    assert games[0].video == str(tmp_path / "a.mp4")  # relative to the manifest


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("s.csv", "", "the manifest is empty"),
        ("s.csv", MANIFEST_HEAD, "lists no game"),
        ("s.csv", "video,event,round,table,colour\na.mp4,E,1,1,red\n", "unknown column 'colour'"),
        ("s.csv", "video,event,round\na.mp4,E,1\n", "row 2 lacks table"),
        ("s.csv", "video,event,round,table,players\na.mp4,E,1,1,four\n", "players is a whole number"),
        ("s.csv", "video,event,round,table,players\na.mp4,E,1,1,9\n", "row 2"),  # more than the profile seats
        ("s.csv", "video,event,round,table,players,first_player\na.mp4,E,1,1,2,3\n", "first_player is 1 to 2"),
        ("s.csv", "video,event,round,table,profile\na.mp4,E,1,1,chess\n", "unknown profile 'chess'"),
        ("s.csv", "video,event,round,table,time_limit\na.mp4,E,1,1,soon\n", "time_limit is seconds"),
        ("s.csv", "video,event,round,table\na.mp4,E,1,1\nb.mp4,E,1,1\n", "row 3 has the same event"),
        ("s.csv", "video,event,round,table\na.mp4,A B,1,1\nb.mp4,A-B,1,1\n", "(folder A-B_1_1)"),
        ("s.csv", "video,event,round,table\na.mp4,E,1,1,extra\n", "more cells than the header"),
        ("s.yaml", "games: [\n", "not valid YAML"),
        ("s.yaml", "just text\n", "a list of games"),
        ("s.yaml", "- [a.mp4]\n", "game 1 is not a mapping"),
        ("s.yaml", "games: []\nextra: 1\n", "not extra"),
    ],
)
def test_a_bad_manifest_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ManifestError, match=re.escape(message)):
        read_manifest(path)
    assert main(["batch", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and message in err
    assert not (tmp_path / "out").exists()


def test_a_missing_manifest_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["batch", str(tmp_path / "none.csv"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read the manifest" in err


@pytest.mark.parametrize(("cores", "workers", "threads"), [(2, 1, 2), (2, 2, 1), (2, 3, 1), (16, 4, 4), (1, 1, 1)])
def test_batch_shares_the_cores_out_between_its_workers(
    monkeypatch: pytest.MonkeyPatch, cores: int, workers: int, threads: int
) -> None:
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert worker_threads(workers) == threads


def test_the_threads_option_reaches_onnx_runtime() -> None:
    from vision.game.pipeline import pipeline_reader

    default = pipeline_reader(None)
    one = pipeline_reader(None, threads=1)
    threads = [m.session.get_session_options().intra_op_num_threads for m in (default.detector, one.detector)]
    assert threads == [2, 1]
    assert one.classifier.session.get_session_options().intra_op_num_threads == 1


def test_cuda_is_refused_in_one_line_where_onnx_runtime_lacks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this ONNX Runtime has CUDA")
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    assert main(["analyze", str(video), "--out", str(tmp_path / "o"), "--provider", "cuda"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--provider cuda" in err and "onnxruntime-gpu" in err


def test_ray_without_ray_says_how_to_install_it(
    season: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("ray is installed")
    assert main(["batch", str(season), "--out", str(tmp_path / "o"), "--ray", "local"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "rummikub-referee[cluster]" in err


def test_a_local_ray_gives_the_pools_outputs(first_run: tuple[int, Path], season: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")
    from vision.session.batch import ray_runner

    _, pool_out = first_run
    games = read_manifest(season)
    try:
        summary = run_batch(games, tmp_path / "ray", runner=ray_runner("local"), backend="ray:local")
    finally:
        ray.shutdown()
    assert summary["counts"] == {"done": 2, "skipped": 0, "failed": 1}
    for label in ("Open-2026_1_1", "Open-2026_1_2"):
        ours, pools = tmp_path / "ray" / label, pool_out / label
        assert json.loads((ours / "moves.json").read_text()) == json.loads((pools / "moves.json").read_text())
        assert events(ours) == events(pools)  # the log's timings (its header's clock, the speed) differ


def events(folder: Path) -> list[tuple[str, Any]]:
    lines = [json.loads(line) for line in (folder / "game-log.jsonl").read_text().splitlines()]
    return [(e["event"], e.get("frame")) for e in lines]


def test_a_worker_with_its_threads_set_runs_opencv_on_as_many() -> None:
    """A worker given ``threads`` keeps OpenCV's own threads to that many too: with OpenCV's default (the cores) one
    worker used 1.2 cores and two workers on two cores read 0.73 of one worker's video hours per core-hour (bench
    batch, 2026-11-26; 0.87 with this)."""
    import cv2

    from vision.session.batch import _READERS, reader_for
    from vision.session.common import Engine

    before = cv2.getNumThreads()
    engine = Engine(threads=1)
    try:
        cv2.setNumThreads(2)
        reader_for(engine)
        assert cv2.getNumThreads() == 1
    finally:
        _READERS.pop(engine, None)
        cv2.setNumThreads(before)
