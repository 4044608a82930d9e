"""``batch`` with a worker killed from outside (SIGKILL, as the OOM killer or an operator sends it) while it analyses
a game: the batch runs as a user runs it (``rummikub-referee batch``, a subprocess), the test finds the worker that
has the game's video open among the processes it started and kills it. The batch still completes, every game
analysed once, the killed game tried once more with a one-line warning naming it. On the local pool, and on a local
Ray cluster (``ray start --head``, ``--ray auto``). Three copies of one tiny synthetic game (0.2 min, 480x270)."""

from __future__ import annotations

import csv
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vision.cli import main
from vision.session.analyze import ANALYSIS_FILES

TABLES = ("1", "2", "3")
LABELS = tuple(f"Open_1_{table}" for table in TABLES)
DEADLINE_S = 600


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three games (copies of one video, so each worker's open file names its game), two workers: one game queued."""
    folder = tmp_path_factory.mktemp("season")
    game = ["--players", "2", "--profile", "official", "--seed", "5", "--minutes", "0.2"]
    assert main(["synth-game", "--out", str(folder / "g"), *game, "--size", "480x270", "--fps", "12"]) == 0
    rows = ["video,event,round,table,profile,players"]
    for table in TABLES:
        shutil.copy(folder / "g" / "game.mp4", folder / f"table{table}.mp4")
        rows.append(f"table{table}.mp4,Open,1,{table},official,2")
    path = folder / "season.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def command() -> list[str]:
    script = Path(sys.executable).with_name("rummikub-referee")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "vision.cli"]


def descendants(root: int) -> set[int]:
    """Every process under ``root`` (its children, theirs, ...), from the parents in /proc/PID/stat."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def reading_a_game(root: int, videos: dict[str, str]) -> tuple[int, str] | None:
    """A process under ``root`` with one of the games' videos open: (its pid, the game's label)."""
    for pid in descendants(root):
        try:
            targets = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:  # gone meanwhile, or a file descriptor closed while listed
            continue
        for target in targets:
            if target in videos:
                return pid, videos[target]
    return None


def kill_a_worker_mid_game(batch: subprocess.Popen[str], root: int, manifest: Path) -> tuple[int, str]:
    """SIGKILL the first process found analysing a game (the batch's own process excluded: it only reads the
    videos' lengths); returns its pid and the game's label."""
    paths = [str((manifest.parent / f"table{table}.mp4").resolve()) for table in TABLES]
    videos = dict(zip(paths, LABELS, strict=True))
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and batch.poll() is None:
        found = reading_a_game(root, videos)
        if found is not None and found[0] != batch.pid:
            os.kill(found[0], signal.SIGKILL)
            return found
        time.sleep(0.02)
    batch.kill()
    _, err = batch.communicate()
    pytest.fail(f"no worker was seen analysing a game (batch exit status {batch.returncode}): {err[-2000:]}")


def check_every_game_analysed_once(out: Path, status: int, err: str, killed: tuple[int, str]) -> dict[str, Any]:
    pid, label = killed
    assert status == 0, err  # every game done in the end: the documented 0 (1 only when a game failed twice)
    summary = json.loads((out / "batch.json").read_text())
    assert summary["counts"] == {"done": 3, "skipped": 0, "failed": 0}
    games = {g["label"]: g for g in summary["games"]}
    assert games[label]["attempts"] == 2 and len(games[label]["errors"]) == 1  # the killed game, tried once more
    assert games[label]["pid"] != pid
    others = [g for name, g in games.items() if name != label]
    assert [(g["attempts"], g["errors"]) for g in others] == [(1, []), (1, [])]  # the others never failed
    for name in LABELS:
        for file in ANALYSIS_FILES:
            assert (out / name / file).is_file(), (name, file)
    with (out / "moves.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for name in LABELS:  # each game's moves listed once in the archive
        moves = json.loads((out / name / "moves.json").read_text())
        assert [int(r["move"]) for r in rows if r["label"] == name] == [m["number"] for m in moves]
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: {label}: {games[label]['errors'][0]}; trying it once more"], err
    return summary


def run_and_kill(args: list[str], out: Path, manifest: Path, root: int | None, env: dict[str, str]) -> Any:
    batch = subprocess.Popen(
        [*command(), "batch", str(manifest), "--out", str(out), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        killed = kill_a_worker_mid_game(batch, batch.pid if root is None else root, manifest)
        _, err = batch.communicate(timeout=DEADLINE_S)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    return check_every_game_analysed_once(out, batch.returncode, err, killed)


def test_a_pool_worker_killed_from_outside_mid_game(manifest: Path, tmp_path: Path) -> None:
    summary = run_and_kill(["--workers", "2"], tmp_path / "archive", manifest, None, dict(os.environ))
    assert summary["backend"] == "local"
    errors = [e for g in summary["games"] for e in g["errors"]]
    assert errors == ["the worker process died (killed, or out of memory)"]


@pytest.fixture()
def ray_cluster(tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """A local Ray cluster of 2 CPUs started here (``ray start --head --block``, its own port, temporary folder and
    token: no other cluster on this machine is touched, nor ~/.ray); yields the pid of the process that owns it and
    the environment a driver reaches it with (``RAY_ADDRESS``, so ``--ray auto`` finds it, and the token). Ended by
    signalling that process, which stops what it started."""
    pytest.importorskip("ray", reason="the [cluster] extra (ray) is not installed")
    ray = Path(sys.executable).with_name("ray")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    temp = Path("/tmp") / f"rk{os.getpid()}"  # Ray's socket paths must stay short
    # Token authentication as Ray 2.5x+ enables it by default, with a token of this test's own (a token left in
    # ~/.ray by an earlier Ray would otherwise switch the head to it and leave the driver out)
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    head = subprocess.Popen(
        [str(ray), "start", "--head", "--block", "--num-cpus", "2", f"--port={port}", "--node-ip-address=127.0.0.1",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **auth},
    )  # fmt: skip
    try:
        said = started(head)
        if "Ray runtime started" not in said:
            pytest.fail(f"ray start --head did not start: {said[-2000:]}")
        yield head.pid, {**os.environ, **auth, "RAY_ADDRESS": f"127.0.0.1:{port}"}
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            head.kill()
            head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def started(head: subprocess.Popen[bytes], wait_s: float = 180) -> str:
    """What ``ray start`` printed until it said the node is up (or it ended, or ``wait_s`` passed), read from the
    pipe as it comes (a buffered ``readline`` could hold back the line that says so)."""
    import select

    assert head.stdout is not None
    pipe, said, deadline = head.stdout.fileno(), b"", time.monotonic() + wait_s
    while b"Ray runtime started" not in said and time.monotonic() < deadline:
        if select.select([pipe], [], [], 1.0)[0]:
            chunk = os.read(pipe, 65536)
            if not chunk:  # it ended
                break
            said += chunk
    return said.decode(errors="replace")


def test_a_ray_worker_killed_from_outside_mid_game(
    manifest: Path, tmp_path: Path, ray_cluster: tuple[int, dict[str, str]]
) -> None:
    head, env = ray_cluster
    summary = run_and_kill(["--ray", "auto"], tmp_path / "archive", manifest, head, env)
    assert summary["backend"] == "ray:auto"
    errors = [e for g in summary["games"] for e in g["errors"]]
    assert len(errors) == 1 and "worker died" in errors[0], errors  # Ray's own words for the task's lost worker
