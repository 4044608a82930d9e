"""A season's archive in one command: every video of a manifest analysed as ``analyze`` does, each into its own
folder, on a local process pool (or as Ray tasks), with a summary of every game and an archive report.

The manifest (CSV with a header row, or YAML: a list of games, or ``{defaults: {...}, games: [...]}``) names per
game ``video``, ``event``, ``round``, ``table`` (the label) and, optionally, ``profile``, ``players``,
``first_player`` (1-N), ``calibration`` and ``time_limit`` (as ``analyze``'s options; a relative video or
calibration path is read from the manifest's folder). Each game goes to ``DIR/<event>_<round>_<table>/``: exactly
what ``analyze`` writes there (game log, moves, summary, report.html).

Resumable: a game whose folder holds a whole analysis (its summary says the video was read to its end, and the
report is there) is skipped; a game that fails is tried once more, then listed with its error; one bad video never
stops the batch. The largest files start first (:func:`heaviest_first`), so the light ones fill the gaps at the
end. ``DIR/batch.json`` says how every game went (each game's worker, CPU seconds, start and finish); the archive
of every move (``moves.csv``, ``moves.parquet``, ``archive.html``) is :mod:`vision.ui.archive`'s.

Size: 651 lines: the batch command from manifest to summary: reading and checking the manifest (CSV and YAML, about 150
lines), running one game as ``analyze`` does and telling a finished folder, the batch loop with its records and
progress, the two runners (process pool, Ray) and ``cmd_batch``. The next split is the manifest reader
(``ManifestError``, ``GameSpec``, ``read_manifest`` and its helpers) into a module of its own (to do).
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from referee import cli as rules_cli
from referee.profiles import DEFAULT_PROFILE, PROFILES, Profile
from vision.game.gamelog import GameSetup
from vision.session.common import Engine, engine_from_args
from vision.ui.archive import write_archive

if TYPE_CHECKING:
    import argparse
    from concurrent.futures import Future

    from vision.runtime.reader import TileReader

BATCH_NAME = "batch.json"
FIELDS = ("video", "event", "round", "table", "profile", "players", "first_player", "calibration", "time_limit")
REQUIRED = ("video", "event", "round", "table")
ATTEMPTS = 2
"""A failed game is tried once more (a worker killed, a file busy): then it is listed with its error."""
SAFE_PART = re.compile(r"[^A-Za-z0-9.+-]+")


class ManifestError(ValueError):
    """A manifest that cannot be read as a list of games (the message names the file and, where known, the row)."""


@dataclass(frozen=True, kw_only=True)
class GameSpec:
    """One game of the manifest, its options checked."""

    video: str
    event: str
    round: str
    table: str
    rules: Profile = field(default_factory=lambda: PROFILES[DEFAULT_PROFILE])
    """The profile with the move time in force: the manifest's ``time_limit`` (seconds, or "none" for no limit)
    applied at parse time as ``dataclasses.replace(profile, time_limit_s=...)``, as ``analyze --time-limit`` is."""
    players: int = 4
    first_player: int = 1
    calibration: str = "auto"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled for a worker process or a Ray task with its profile as a name and a limit (a profile holds a
        read-only mapping, which does not pickle)."""
        spec = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "rules"}
        return _unpickled_spec, (spec, self.rules.name, self.rules.time_limit_s)

    @property
    def label(self) -> str:
        """The game's folder name in the batch's output."""
        return "_".join(SAFE_PART.sub("-", part).strip("-") or "-" for part in (self.event, self.round, self.table))


def _unpickled_spec(spec: dict[str, Any], profile: str, time_limit_s: float | None) -> GameSpec:
    return GameSpec(**spec, rules=replace(PROFILES[profile], time_limit_s=time_limit_s))


@dataclass(frozen=True)
class GameJob:
    spec: GameSpec
    out: str
    engine: Engine = field(default_factory=Engine)


# -- the manifest --------------------------------------------------------------------------------------------


def read_manifest(path: str | Path) -> list[GameSpec]:
    """The games a manifest lists, every field checked: a :class:`ManifestError` naming the file and row else."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}: cannot read the manifest ({getattr(error, 'strerror', None) or error})") from None
    rows = _yaml_rows(path, text) if path.suffix.lower() in (".yaml", ".yml") else _csv_rows(path, text)
    if not rows:
        raise ManifestError(f"{path}: the manifest lists no game")
    games = [_game(path, number, row) for number, row in rows]
    seen: dict[str, int] = {}
    for (number, _), game in zip(rows, games, strict=True):
        if game.label in seen:
            raise ManifestError(
                f"{path}: {_where(number)} has the same event, round and table as {_where(seen[game.label])}"
                f" (folder {game.label})"
            )
        seen[game.label] = number
    return games


def _where(number: int) -> str:
    return f"row {number}"


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    if reader.fieldnames is None:
        raise ManifestError(f"{path}: the manifest is empty (a CSV header row names {', '.join(REQUIRED)}, ...)")
    _check_columns(path, [name.strip() for name in reader.fieldnames], "column")
    rows = []
    for number, row in enumerate(reader, start=2):  # the header is row 1
        if None in row:
            raise ManifestError(f"{path}: {_where(number)} has more cells than the header names")
        cleaned = {k.strip(): (v or "").strip() for k, v in row.items()}
        if any(cleaned.values()):
            rows.append((number, {k: v for k, v in cleaned.items() if v != ""}))
    return rows


def _yaml_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ManifestError(f"{path}: not valid YAML{where}") from None
    except RecursionError:
        raise ManifestError(f"{path}: nested too deep to be a manifest") from None
    defaults: dict[str, Any] = {}
    if isinstance(data, dict):
        unknown = sorted(set(data) - {"defaults", "games"})
        if unknown or "games" not in data:
            raise ManifestError(f"{path}: a YAML manifest is a list of games or has 'games:' (and 'defaults:')"
                                + (f", not {', '.join(map(str, unknown))}" if unknown else ""))  # fmt: skip
        defaults = data.get("defaults") or {}
        if not isinstance(defaults, dict):
            raise ManifestError(f"{path}: 'defaults:' is a mapping of field: value")
        _check_columns(path, list(defaults), "field")
        data = data["games"]
    if not isinstance(data, list):
        raise ManifestError(f"{path}: a YAML manifest is a list of games (each a mapping of field: value)")
    rows = []
    for number, game in enumerate(data, start=1):
        if not isinstance(game, dict):
            raise ManifestError(f"{path}: game {number} is not a mapping of field: value")
        _check_columns(path, list(game), "field")
        rows.append((number, {**defaults, **{k: v for k, v in game.items() if v is not None}}))
    return rows


def _check_columns(path: Path, names: list[Any], what: str) -> None:
    unknown = [str(n) for n in names if n not in FIELDS]
    if unknown:
        raise ManifestError(f"{path}: unknown {what} {unknown[0]!r} (known: {', '.join(FIELDS)})")


def _game(path: Path, number: int, row: dict[str, Any]) -> GameSpec:
    where = f"{path}: {_where(number)}"
    missing = [name for name in REQUIRED if str(row.get(name, "")).strip() == ""]
    if missing:
        raise ManifestError(f"{where} lacks {', '.join(missing)}")
    profile = str(row.get("profile", DEFAULT_PROFILE))
    if profile not in PROFILES:
        raise ManifestError(f"{where}: unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    players = _whole(where, "players", row.get("players", 4))
    try:
        rules_cli.players_under(profile, players)
    except ValueError as error:
        raise ManifestError(f"{where}: {error}") from None
    if players < 2:
        raise ManifestError(f"{where}: players is 2 or more, not {players}")
    first = _whole(where, "first_player", row.get("first_player", 1))
    if not 1 <= first <= players:
        raise ManifestError(f"{where}: first_player is 1 to {players} at a {players}-player table, not {first}")
    rules = PROFILES[profile]
    limit = row.get("time_limit")
    if limit is not None:  # the manifest's syntax, as --time-limit's: seconds, or "none"; typed from here on
        try:
            rules = replace(rules, time_limit_s=rules_cli.time_limit_arg(str(limit)))
        except Exception:  # argparse's ArgumentTypeError: its message names the value
            raise ManifestError(f"{where}: time_limit is seconds or 'none', not {limit!r}") from None
    calibration = str(row.get("calibration", "auto"))
    from vision.session.common import CALIBRATION_METHODS

    if calibration not in CALIBRATION_METHODS:
        calibration = str(path.parent / calibration)
    return GameSpec(
        video=str(path.parent / str(row["video"])), event=str(row["event"]), round=str(row["round"]),
        table=str(row["table"]), rules=rules, players=players, first_player=first, calibration=calibration,
    )  # fmt: skip


def _whole(where: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not re.fullmatch(r"\d{1,3}", str(value).strip()):
        raise ManifestError(f"{where}: {name} is a whole number, not {value!r}")
    return int(str(value).strip())


# -- one game (in a worker) ----------------------------------------------------------------------------------

_READERS: dict[Engine, TileReader] = {}
"""Each worker loads the models once, for all the games it analyses."""


def reader_for(engine: Engine) -> TileReader:
    from vision.game.pipeline import pipeline_reader

    if engine not in _READERS:
        if engine.threads is not None:  # OpenCV's own threads too, or a worker takes more than its share of cores
            import cv2

            cv2.setNumThreads(engine.threads)
        _READERS[engine] = pipeline_reader(engine.models, threads=engine.threads, provider=engine.provider)
    return _READERS[engine]


def run_game(job: GameJob) -> dict[str, Any]:
    """Analyse one game as ``analyze`` does (its folder replaced, the report written); never raises: a failure is
    ``{"status": "failed", "error": one line}``."""
    import os

    from vision.session.analyze import AnalyzeOptions, analyze_video
    from vision.ui.report import write_report

    spec, out = job.spec, Path(job.out)
    started_at = time.time()
    started, cpu_started = time.perf_counter(), time.process_time()
    try:
        if spec.calibration not in ("markers", "auto", "frame"):
            from vision.runtime.calibrate import Calibration

            Calibration.load(spec.calibration)  # a bad file fails before the video is opened, as in analyze
        setup = GameSetup(spec.rules, spec.players, spec.first_player - 1)
        options = AnalyzeOptions(setup=setup, calibration=spec.calibration, progress=False)
        summary = analyze_video(spec.video, out, options, reader_for(job.engine), overwrite=True)
        problem = _incomplete(summary)
        if problem is None:
            write_report(out)
    except Exception as error:  # one bad video never stops the batch: its error is listed
        problem = _one_line(error)
        summary = {}
    result = {
        "status": "failed" if problem else "done", "error": problem, "pid": os.getpid(),
        "wall_s": round(time.perf_counter() - started, 2), "cpu_s": round(time.process_time() - cpu_started, 2),
        "started_at": round(started_at, 3), "finished_at": round(time.time(), 3), **_game_numbers(summary),
    }  # fmt: skip
    return result


def _incomplete(summary: dict[str, Any]) -> str | None:
    """Why an analysis is not a whole one (stopped before the end, a video mostly undecodable), or None."""
    from vision.runtime.capture import Damage
    from vision.session.common import END_OF_VIDEO

    if summary.get("reason") != END_OF_VIDEO:
        return f"analysis stopped: {summary.get('reason')}"
    damage = Damage.from_json(summary["damage"])
    if damage.unusable:
        return damage.describe(f"video {summary['video']!r}")
    return None


def is_complete(folder: Path) -> bool:
    """A folder that holds a whole analysis: its summary says the video was read to the end, the report is there."""
    from vision.session.analyze import SUMMARY_NAME
    from vision.ui.report import REPORT_NAME

    try:
        summary = json.loads((folder / SUMMARY_NAME).read_text())
        return (folder / REPORT_NAME).is_file() and _incomplete(summary) is None
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _game_numbers(summary: dict[str, Any]) -> dict[str, Any]:
    keys = ("video_s", "seconds", "speed_x_real_time", "moves", "verdicts", "codes")
    return {k: summary[k] for k in keys if k in summary}


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:300]


# -- the batch -----------------------------------------------------------------------------------------------


@dataclass
class GameRecord:
    """How one game of the batch went (a row of ``batch.json``)."""

    label: str
    event: str
    round: str
    table: str
    video: str
    profile: str
    players: int
    status: str = "pending"
    """done, skipped (already complete), failed."""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    video_s: float | None = None
    wall_s: float | None = None
    moves: int | None = None
    verdicts: dict[str, int] = field(default_factory=dict)
    pid: int | None = None
    """The worker process that analysed it."""
    cpu_s: float | None = None
    """CPU seconds that worker spent on it (ONNX Runtime's threads included)."""
    started_at: float | None = None
    finished_at: float | None = None
    """When that worker started and finished it (Unix seconds, the worker's clock): who idled while who worked."""


Runner = Callable[[list[GameJob]], Iterator[tuple[GameJob, dict[str, Any]]]]
"""Runs jobs somewhere (a process pool, Ray) and yields each with its result as it finishes."""


def run_batch(
    games: list[GameSpec],
    out: str | Path,
    *,
    workers: int = 1,
    engine: Engine | None = None,
    runner: Runner | None = None,
    progress: TextIO | None = None,
    manifest: str | None = None,
    backend: str = "local",
) -> dict[str, Any]:
    """Analyse every game not yet complete in ``out``; returns (and writes to ``out/batch.json``) how each went."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    engine = engine or Engine()
    runner = runner or pool_runner(workers)
    started, started_at = time.perf_counter(), time.time()
    records = {g.label: _record(g) for g in games}
    lengths = {g.label: video_seconds(g.video) for g in games}
    bar = BatchProgress(len(games), sum(lengths.values()), progress)
    todo: list[GameJob] = []
    for game in heaviest_first(games, lengths):
        record = records[game.label]
        if is_complete(out / game.label):
            record.status = "skipped"
            _fill(record, _summary_of(out / game.label))
            bar.finish(lengths[game.label], "skipped")
        else:
            todo.append(GameJob(game, str(out / game.label), engine))
    for attempt in range(1, ATTEMPTS + 1):
        if not todo:
            break
        failed: list[GameJob] = []
        for job, result in runner(todo):
            record = records[job.spec.label]
            record.attempts = attempt
            if result["status"] == "done":
                record.status = "done"
                _fill(record, result)
                bar.finish(lengths[job.spec.label], "done")
            else:
                record.errors.append(result.get("error") or "unknown error")
                failed.append(job)
                if attempt < ATTEMPTS:
                    bar.warn(f"{job.spec.label}: {record.errors[-1]}; trying it once more")
                else:
                    record.status = "failed"
                    bar.finish(lengths[job.spec.label], "failed")
        todo = sorted(failed, key=lambda job: start_order(job.spec, lengths))  # the retries too, heaviest first
    wall = time.perf_counter() - started
    rows = [asdict(records[g.label]) for g in games]
    analysed_s = sum(r["video_s"] or 0.0 for r in rows if r["status"] == "done")
    summary = {
        "manifest": manifest,
        "backend": backend,
        "workers": workers,
        "engine": asdict(engine),
        "wall_s": round(wall, 2),
        "started_at": round(started_at, 3),
        "counts": {s: sum(1 for r in rows if r["status"] == s) for s in ("done", "skipped", "failed")},
        "video_hours_analysed": round(analysed_s / 3600, 4),
        "video_hours_per_wall_hour": round(analysed_s / wall, 2) if wall > 0 and analysed_s else None,
        "cpu_s_by_worker": _cpu_by_worker(rows),
        "games": rows,
    }
    (out / BATCH_NAME).write_text(json.dumps(summary, indent=2, sort_keys=True))
    return summary


def _cpu_by_worker(rows: list[dict[str, Any]]) -> dict[str, float]:
    """CPU seconds each worker process spent on the games it finished in this run (pid: seconds)."""
    spent: dict[str, float] = {}
    for row in rows:
        if row["status"] == "done" and row["pid"] is not None and row["cpu_s"] is not None:
            spent[str(row["pid"])] = round(spent.get(str(row["pid"]), 0.0) + row["cpu_s"], 2)
    return spent


def _record(game: GameSpec) -> GameRecord:
    return GameRecord(
        label=game.label, event=game.event, round=game.round, table=game.table, video=game.video,
        profile=game.rules.name, players=game.players,
    )  # fmt: skip


def _fill(record: GameRecord, numbers: dict[str, Any]) -> None:
    record.video_s = numbers.get("video_s")
    record.wall_s = numbers.get("wall_s", numbers.get("seconds"))
    record.moves = numbers.get("moves")
    record.verdicts = dict(numbers.get("verdicts") or {})
    record.pid = numbers.get("pid")
    record.cpu_s = numbers.get("cpu_s")
    record.started_at, record.finished_at = numbers.get("started_at"), numbers.get("finished_at")


def _summary_of(folder: Path) -> dict[str, Any]:
    try:
        return json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        return {}


def heaviest_first(games: list[GameSpec], lengths: dict[str, float]) -> list[GameSpec]:
    """The order games are handed to the workers (the most work first): the largest file first, then, for files of
    the same size or whose size cannot be read, the longest video; ties keep the manifest's order. Started last, a
    heavy game keeps one worker busy while the others have nothing left to do; started first, the light games fill
    the gaps at the end.

    The file's size, not the video's length, because decoding is most of the analysis (vision/README.md, "Scaling a
    batch to N machines") and its work grows with the bits to decode: four fresh 1080p games of 409-447 s took 17-45
    CPU s each, in the order of their files' sizes (104 MB to 2.2 GB), not of their lengths. Two workers on them,
    the longest first: the two heaviest games met on one worker, 33-34 s idle tail of 82 s, per core-hour 0.73-0.75
    of one worker's; the largest first: 0.1-0.4 s of 69-71 s, 0.91-0.99 (two runs each, vision/README.md). An
    archive filmed at one bitrate is ordered as by length. Started last rather than first, game-1000 and three 3-4
    minute games (load 7-10): idle tail 21.1 s of 56.8 s against 3.2 s of 55.6 s."""
    return sorted(games, key=lambda game: start_order(game, lengths))


def start_order(game: GameSpec, lengths: dict[str, float]) -> tuple[float, float]:
    """``heaviest_first``'s key; ``lengths``: video seconds by label from the container's header, 0 when unknown."""
    return -_file_size(game.video), -lengths.get(game.label, 0.0)


def _file_size(path: str) -> float:
    try:
        return float(Path(path).stat().st_size)
    except OSError:
        return 0.0


def video_seconds(video: str) -> float:
    """A video's length from its header (0 when it cannot be opened): for the progress line's video hours."""
    try:
        import cv2

        capture = cv2.VideoCapture(video)
        try:
            fps, frames = capture.get(cv2.CAP_PROP_FPS), capture.get(cv2.CAP_PROP_FRAME_COUNT)
        finally:
            capture.release()
        return float(frames / fps) if fps and frames and math.isfinite(frames / fps) and frames > 0 else 0.0
    except Exception:
        return 0.0


class BatchProgress:
    """One line per finished game on standard error: games and video hours done of all, the throughput."""

    def __init__(self, games: int, video_s: float, stream: TextIO | None) -> None:
        self.games, self.video_s, self.stream = games, video_s, stream
        self.done = 0
        self.seen_s = 0.0
        self.analysed_s = 0.0
        """Video analysed in this run (not skipped): the throughput's numerator."""
        self.counts: dict[str, int] = {}
        self.start = time.perf_counter()

    def warn(self, text: str) -> None:
        """A one-line warning (a game that failed an attempt) between the progress lines."""
        if self.stream is not None:
            self.stream.write(f"warning: {text}\n")
            self.stream.flush()

    def finish(self, video_s: float, status: str) -> None:
        self.done += 1
        self.seen_s += video_s
        if status == "done":
            self.analysed_s += video_s
        self.counts[status] = self.counts.get(status, 0) + 1
        if self.stream is None:
            return
        elapsed = time.perf_counter() - self.start
        counts = ", ".join(f"{n} {s}" for s, n in sorted(self.counts.items()))
        rate = ""
        if elapsed > 0 and self.analysed_s:
            speed = self.analysed_s / elapsed  # video hours per wall hour
            left = max(0.0, self.video_s - self.seen_s) / speed
            rate = f", {speed:.1f} video h per wall h, ETA {left / 60:.0f} min"
        self.stream.write(
            f"batch: {self.done}/{self.games} games ({counts}), {self.seen_s / 3600:.2f}/{self.video_s / 3600:.2f}"
            f" video hours{rate}\n"
        )
        self.stream.flush()


# -- where the games run -------------------------------------------------------------------------------------


def pool_runner(workers: int, *, method: str = "spawn", work: Callable[[GameJob], dict[str, Any]] = run_game) -> Runner:
    """A local pool of ``workers`` spawned processes (no state copied from the parent, as on a cluster node) running
    ``work`` (a top-level function) on each job, one game at a time per worker; a worker keeps its models from game
    to game. Each worker is a one-process ``ProcessPoolExecutor`` of its own: a worker that dies (killed from
    outside, out of memory) breaks only its own executor (one executor for all would fail every running and queued
    game, and end the other workers mid-game), so only its game fails this attempt; a fresh worker takes its place
    and the others go on."""

    def run(jobs: list[GameJob]) -> Iterator[tuple[GameJob, dict[str, Any]]]:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        context = multiprocessing.get_context(method)
        queue = list(reversed(jobs))
        slots = [ProcessPoolExecutor(max_workers=1, mp_context=context) for _ in range(min(max(1, workers), len(jobs)))]
        running: dict[Future[dict[str, Any]], tuple[int, GameJob]] = {}
        try:
            while queue or running:
                busy = {slot for slot, _ in running.values()}
                for slot in range(len(slots)):
                    if queue and slot not in busy:
                        job = queue.pop()
                        running[slots[slot].submit(work, job)] = (slot, job)
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    slot, job = running.pop(future)
                    if isinstance(future.exception(), BrokenProcessPool):  # its worker died: a fresh one instead
                        slots[slot].shutdown(wait=True)
                        slots[slot] = ProcessPoolExecutor(max_workers=1, mp_context=context)
                    yield job, _result_of(future)
        finally:
            for pool in slots:
                pool.shutdown(wait=True, cancel_futures=True)

    return run


def _result_of(future: Future[dict[str, Any]]) -> dict[str, Any]:
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        return {"status": "failed", "error": "the worker process died (killed, or out of memory)"}
    except Exception as error:
        return {"status": "failed", "error": _one_line(error)}


RAY_MISSING = "--ray needs Ray: pip install 'rummikub-referee[cluster]' (or pip install 'ray>=2.9')"


def ray_runner(address: str, *, work: Callable[[GameJob], dict[str, Any]] = run_game) -> Runner:
    """The same per-game function (``work``) as Ray tasks (one CPU each) on the cluster at ``address`` (``auto``,
    ``ray://host:port``), or ``local``: a Ray started here with 2 CPUs. A task whose worker dies is not retried by
    Ray (``max_retries=0``): it is a failed attempt, which the batch tries once more, so no game runs twice."""
    try:
        import ray
    except ImportError:
        raise rules_cli.CommandError(RAY_MISSING) from None
    if not ray.is_initialized():
        try:
            if address == "local":
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        except Exception as error:  # Ray's own exception types: no cluster there, a refused address
            raise rules_cli.CommandError(f"--ray {address}: cannot start or reach Ray ({_one_line(error)})") from None
    task = ray.remote(num_cpus=1, max_retries=0)(work)

    def run(jobs: list[GameJob]) -> Iterator[tuple[GameJob, dict[str, Any]]]:
        pending = {task.remote(job): job for job in jobs}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                job = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as error:  # a worker or node lost: this game's attempt failed
                    result = {"status": "failed", "error": _one_line(error)}
                yield job, result

    return run


# -- the command ---------------------------------------------------------------------------------------------


def cmd_batch(args: argparse.Namespace) -> int:
    engine = engine_from_args(args)
    try:
        games = read_manifest(args.manifest)
    except ManifestError as error:
        raise rules_cli.CommandError(str(error)) from None
    if engine.threads is None:
        engine = replace(engine, threads=1 if args.ray else worker_threads(args.workers))
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise rules_cli.CommandError(f"{out} is a file, not a folder for the batch")
    runner = ray_runner(args.ray) if args.ray else pool_runner(args.workers)
    summary = run_batch(
        games, out, workers=args.workers, engine=engine, runner=runner, progress=None if args.json else sys.stderr,
        manifest=str(args.manifest), backend=f"ray:{args.ray}" if args.ray else "local",
    )  # fmt: skip
    files = write_archive(out, summary)
    failed = [g for g in summary["games"] if g["status"] == "failed"]
    counts = summary["counts"]
    text = [
        f"{len(games)} games: {counts['done']} analysed, {counts['skipped']} already done (skipped),"
        f" {counts['failed']} failed; {summary['wall_s']:.0f} s",
        *(f"  failed: {g['label']}: {g['errors'][-1]}" for g in failed),
        f"archive: {files.page}",
        f"moves: {files.moves_csv}" + (f", {files.moves_parquet}" if files.moves_parquet else ""),
        f"batch summary: {out / BATCH_NAME}",
    ]
    rules_cli.emit(args, summary, "\n".join(text))
    return 1 if failed else 0


def worker_threads(workers: int) -> int:
    """ONNX Runtime threads per model in each of ``workers`` local workers when ``--threads`` is not given: the cores
    shared out (2 cores: 2 threads for one worker, as ``analyze``; 1 each for two). Oversubscribed, the threads only
    contend: on this shared 2-core machine (load average 13-15), 4 games of 28 s with 2 workers took 15.8 s at 2
    threads each and 11.0 s at 1 (1 worker: 16.0 s at 2 threads, 8.9 s at 1), the same moves ruled."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cores // max(1, workers))
