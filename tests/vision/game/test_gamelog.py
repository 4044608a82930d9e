"""The game log: every event on disk as it happens, a torn last line survived, the same file continued, one
writer at a time (other processes are refused), and a start line checked before a game is set up from it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from referee.profiles import PROFILES
from vision.game.gamelog import LOG_FORMAT, GameLog, GameLogError, GameSetup, read_events, read_log

START = GameSetup.of("official", 2)


def lines_on_disk(path: Path) -> list[dict]:
    """What another process (a crash report, the station, `tail -f`) reads from the file right now."""
    with path.open(encoding="utf-8") as other_handle:
        return [json.loads(line) for line in other_handle.read().splitlines() if line]


def test_every_append_is_on_disk_before_append_returns(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    log = GameLog.create(path, START)
    try:
        on_disk = lines_on_disk(path)
        assert len(on_disk) == 1 and on_disk[0]["event"] == "start" and on_disk[0]["format"] == LOG_FORMAT
        assert on_disk[0]["profile"] == "official" and "wall_time" in on_disk[0]
        for number in range(1, 4):
            log.append({"event": "move", "number": number})
            assert lines_on_disk(path)[-1] == {"event": "move", "number": number}  # the log is still open
        assert log.count == 4
    finally:
        log.close()


def test_create_makes_the_folder_and_refuses_to_overwrite_a_log(tmp_path: Path) -> None:
    path = tmp_path / "finals" / "table-1.jsonl"
    with GameLog.create(path, START) as log:
        log.append({"event": "move", "number": 1})
    before = path.read_bytes()
    with pytest.raises(GameLogError, match="already there") as error:
        GameLog.create(path, START)
    assert "\n" not in str(error.value) and str(path) in str(error.value)
    assert path.read_bytes() == before  # the old game is untouched


def test_a_file_where_the_logs_folder_should_be_is_named_not_reported_as_existing(tmp_path: Path) -> None:
    table = tmp_path / "table.json"
    table.write_text("{}")
    with pytest.raises(GameLogError, match=r"table\.json is a file, not a folder"):
        GameLog.create(table / "deeper" / "out.jsonl", START)
    assert table.read_text() == "{}"


def test_an_empty_file_may_be_used_for_a_new_log(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    path.touch()
    GameLog.create(path, START).close()
    assert [e["event"] for e in read_log(path)] == ["start"]


def write_log(path: Path, tail: bytes) -> None:
    with GameLog.create(path, START) as log:
        log.append({"event": "move", "number": 1})
    with path.open("ab") as raw:
        raw.write(tail)


@pytest.mark.parametrize(
    "torn",
    [
        b'{"event": "move", "numb',  # the program died mid-line
        b'{"event": "move", "numb\n',  # ...after a newline made it to the disk
        b"\x00\x00\x00\x00",  # a file system that extended the file but not its data
    ],
)
def test_a_torn_last_line_is_skipped_and_cut_off_on_resume(tmp_path: Path, torn: bytes) -> None:
    path = tmp_path / "game.jsonl"
    write_log(path, torn)
    assert [e["event"] for e in read_log(path)] == ["start", "move"]
    log, events = GameLog.resume(path)
    with log:
        assert [e["event"] for e in events] == ["start", "move"] and log.count == 2
        log.append({"event": "resume"})
        log.append({"event": "move", "number": 2})
    assert [e["event"] for e in read_log(path)] == ["start", "move", "resume", "move"]
    assert lines_on_disk(path)[-1] == {"event": "move", "number": 2}


def test_a_last_line_that_lost_only_its_newline_is_kept_and_the_next_line_starts_on_its_own(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    write_log(path, b'{"event":"move","number":2}')
    log, events = GameLog.resume(path)
    with log:
        assert [e.get("number") for e in events] == [None, 1, 2]
        log.append({"event": "move", "number": 3})
    assert [e.get("number") for e in read_log(path)] == [None, 1, 2, 3]


def test_a_malformed_line_in_the_middle_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "game.jsonl"
    write_log(path, b'{"event": broken}\n{"event":"move","number":2}\n')
    for attempt in (read_log, GameLog.resume):
        with pytest.raises(GameLogError) as error:
            attempt(path)
        message = str(error.value)
        assert f"{path}:3:" in message and "malformed" in message and "\n" not in message
    assert path.read_bytes().endswith(b'"number":2}\n')  # nothing was cut off


@pytest.mark.parametrize("tail", [b"\n", b""])  # in the middle of the log, or its last line
def test_a_line_nested_too_deeply_for_python_is_an_error_naming_it_not_a_torn_line(tmp_path: Path, tail: bytes) -> None:
    path = tmp_path / "game.jsonl"
    write_log(path, b"[" * 100_000 + b"]" * 100_000 + tail)  # json.loads raises RecursionError, not ValueError
    for attempt in (read_log, GameLog.resume):
        with pytest.raises(GameLogError) as error:
            attempt(path)
        assert str(error.value) == f"{path}:3: not a game log line (JSON nested too deeply)"
    assert_not_locked(path)  # the failed resume let its lock go


def assert_not_locked(path: Path) -> None:
    """Nobody holds ``path``'s lock (a descriptor left open by this process would hold it too)."""
    import fcntl

    with path.open("rb") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if anyone holds it


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the game log"),  # no such file
        (b"", "not a rummikub-referee game log"),
        (b'{"event": "move", "number": 1}\n', "no start line"),  # a log whose head is missing
        (b'{"event": "start", "format": "something/else/9"}\n', "no start line"),
    ],
)
def test_a_file_that_is_not_a_game_log_is_one_line_error(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "game.jsonl"
    if content is not None:
        path.write_bytes(content)
    for attempt in (read_log, GameLog.resume):
        with pytest.raises(GameLogError, match=message) as error:
            attempt(path)
        assert "\n" not in str(error.value) and isinstance(error.value, ValueError)


# -- one writer per log ----------------------------------------------------------------------------------------

HOLD_A_LOG = """
import sys
from vision.game.gamelog import GameLog, GameSetup
log = GameLog.create(sys.argv[1], GameSetup.of("official", 2)) if sys.argv[2] == "create" else (
    GameLog.resume(sys.argv[1])[0])
print("holding", flush=True)
sys.stdin.read()  # until the test closes our standard input
log.append({"event": "end"})
log.close()
"""


@pytest.fixture
def other_process(tmp_path: Path) -> Iterator[Callable[[Path, str], subprocess.Popen[str]]]:
    """``start(path, "create" | "resume")``: another process that opens the log and holds it until told to stop."""
    started: list[subprocess.Popen[str]] = []

    def start(path: Path, how: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", HOLD_A_LOG, str(path), how], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, cwd=ROOT,
        )  # fmt: skip
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == "holding\n"
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.communicate("", timeout=20)


ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("how", ["create", "resume"])
def test_a_log_another_process_is_writing_is_refused_in_one_line(
    tmp_path: Path, other_process: Callable[[Path, str], subprocess.Popen[str]], how: str
) -> None:
    path = tmp_path / "game.jsonl"
    if how == "resume":
        GameLog.create(path, START).close()
    holder = other_process(path, how)
    before = path.read_bytes()
    for attempt in (lambda: GameLog.create(path, START), lambda: GameLog.resume(path), lambda: GameLog.remove(path)):
        with pytest.raises(GameLogError) as error:
            attempt()
        assert str(error.value).startswith(f"{path} is being written by another referee process")
        assert "\n" not in str(error.value)
    assert path.read_bytes() == before  # nothing cut off, nothing appended
    holder.communicate("", timeout=20)
    log, events = GameLog.resume(path)  # free again once the other process is done
    log.close()
    assert events[-1] == {"event": "end"}


RACE = """
import os, sys, time
from vision.game.gamelog import GameLog, GameLogError, GameSetup
path, go = sys.argv[1], sys.argv[2]
while not os.path.exists(go):
    time.sleep(0.001)
try:
    log = GameLog.create(path, GameSetup.of("official", 2), {"writer": os.getpid()})
except GameLogError as error:
    print(error)
    sys.exit(0)
for number in range(1, 21):
    log.append({"event": "move", "number": number, "writer": os.getpid()})
time.sleep(0.2)
log.close()
print("wrote")
"""


def test_of_processes_racing_to_start_one_log_exactly_one_writes_it(tmp_path: Path) -> None:
    path, go = tmp_path / "game.jsonl", tmp_path / "go"
    racers = [
        subprocess.Popen([sys.executable, "-c", RACE, str(path), str(go)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for _ in range(5)
    ]
    time.sleep(0.5)  # all started and waiting
    go.touch()
    said = sorted(racer.communicate(timeout=60)[0].strip() for racer in racers)
    assert said.count("wrote") == 1, said
    losers = [line for line in said if line != "wrote"]
    assert all("being written by another referee process" in line or "already there" in line for line in losers)
    events = read_log(path)
    assert [e["event"] for e in events] == ["start"] + ["move"] * 20
    assert len({e["writer"] for e in events}) == 1 and [e["number"] for e in events[1:]] == list(range(1, 21))


def test_a_log_discarded_before_its_game_started_leaves_nothing_behind(tmp_path: Path) -> None:
    made = tmp_path / "new.jsonl"
    log = GameLog.create(made, START)
    log.discard()
    assert not made.exists()  # this process made it: removed
    given = tmp_path / "given.jsonl"
    given.touch()
    GameLog.create(given, START).discard()
    assert given.read_bytes() == b""  # an empty file it was given: left empty, not removed
    resumed = tmp_path / "resumed.jsonl"
    write_log(resumed, b'{"event": "move", "numb')  # a torn line, cut off on resume
    kept = read_log(resumed)
    log, _ = GameLog.resume(resumed)
    log.append({"event": "resume"})
    log.discard()
    assert read_log(resumed) == kept and resumed.read_bytes().endswith(b"}\n")
    GameLog.create(made, START).close()  # nothing blocks the next try


# -- the start line, checked -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "message"),
    [
        ({"players": 2}, "profile is missing"),
        ({"profile": [], "players": 2}, "profile is []"),  # a list, not a name
        ({"profile": "no-such-rules", "players": 2}, 'profile is "no-such-rules", not one of'),
        ({"profile": "official"}, "players is missing"),
        ({"profile": "official", "players": 5}, "players is 5, not 2 to 4 (official)"),  # a table of 2-4
        ({"profile": "official-6p", "players": 7}, "players is 7, not 2 to 6 (official-6p)"),
        ({"profile": "official", "players": True}, "players is true"),
        ({"profile": "official", "players": 2, "first_player": 2}, "first_player is 2, not 0 to 1"),
        ({"profile": "official", "players": 2, "first_player": -1}, "first_player is -1"),
        ({"profile": "official", "players": 2, "time_limit_s": float("nan")}, "time_limit_s is nan"),
        ({"profile": "official", "players": 2, "time_limit_s": float("inf")}, "time_limit_s is inf"),
        ({"profile": "official", "players": 2, "time_limit_s": -5}, "time_limit_s is -5"),
        ({"profile": "official", "players": 2, "time_limit_s": "soon"}, 'time_limit_s is "soon"'),
        # this version's logs: seconds or null, always there ("none" was the old logs' way of saying null)
        ({"format": LOG_FORMAT, "profile": "official", "players": 2}, "time_limit_s is missing, not seconds"),
        ({"format": LOG_FORMAT, "profile": "official", "players": 2, "time_limit_s": "none"}, 'is "none", not'),
    ],
)
def test_a_start_line_that_sets_up_no_game_is_one_line_naming_line_1(tmp_path: Path, start: dict, message: str) -> None:
    path = tmp_path / "game.jsonl"
    with pytest.raises(GameLogError) as error:
        GameSetup.from_start(start, path)
    assert str(error.value).startswith(f"{path}:1: the start line's ") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_good_start_line_gives_the_games_setup(tmp_path: Path) -> None:
    assert GameSetup.from_start({"profile": "official", "players": 3}, tmp_path) == GameSetup.of("official", 3)
    start = {"profile": "przasnysz", "players": 4, "first_player": 3, "time_limit_s": 90}
    przasnysz = PROFILES["przasnysz"]
    assert GameSetup.from_start(start, tmp_path) == GameSetup(replace(przasnysz, time_limit_s=90.0), 4, 3)
    for players in (5, 6):  # the 5-6 player edition
        six = {"profile": "official-6p", "players": players, "first_player": players - 1}
        assert GameSetup.from_start(six, tmp_path) == GameSetup.of("official-6p", players, players - 1)


OLD_FORMAT = "rummikub-referee/game-log/1"
"""The format the logs were written in before the time limit had one encoding (still resumed, reported, scored)."""


@pytest.mark.parametrize(
    ("fields", "limit"),
    [
        ({}, 40.0),  # old logs: missing (analyze never wrote it)...
        ({"time_limit_s": None}, 40.0),  # ...or null: the profile's own limit (przasnysz: 40 s)
        ({"time_limit_s": "none"}, None),  # "none": no limit
        ({"time_limit_s": 90}, 90.0),  # a limit agreed at the table
    ],
)
def test_an_old_start_line_s_time_limit_is_read_as_it_was_written(
    tmp_path: Path, fields: dict, limit: float | None
) -> None:
    assert PROFILES["przasnysz"].time_limit_s == 40.0
    start = {"event": "start", "format": OLD_FORMAT, "profile": "przasnysz", "players": 2, **fields}
    assert GameSetup.from_start(start, tmp_path).rules.time_limit_s == limit
    assert GameSetup.from_start({k: v for k, v in start.items() if k != "format"}, tmp_path).rules.time_limit_s == limit


@pytest.mark.parametrize("limit", [None, 0.0, 45.0, 40.0])  # no limit, none at all, agreed, the profile's own
def test_the_start_line_holds_the_time_limit_in_force_as_one_value_and_reads_it_back(
    tmp_path: Path, limit: float | None
) -> None:
    setup = GameSetup(replace(PROFILES["przasnysz"], time_limit_s=limit), 3, 1)
    path = tmp_path / "game.jsonl"
    GameLog.create(path, setup, {"source": "0", "mode": "live"}).close()
    (start,) = read_log(path)
    assert (start["format"], start["time_limit_s"], start["source"]) == (LOG_FORMAT, limit, "0")
    assert GameSetup.from_start(start, path) == setup
    assert setup.keeper().game.time_limit_s == limit  # the game rules with it


@pytest.mark.parametrize(
    ("fields", "limit"), [({}, 60.0), ({"time_limit_s": "none"}, None), ({"time_limit_s": 30}, 30.0)]
)
def test_an_old_log_resumes_with_the_time_limit_it_was_played_under(
    tmp_path: Path, fields: dict, limit: float | None
) -> None:
    path = tmp_path / "old.jsonl"
    lines = _old_log_lines()
    lines[0] = {**lines[0], **fields}
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    log, events = GameLog.resume(path)
    with log:
        keeper = GameSetup.from_start(events[0], path).keeper()
        keeper.replay(events)
    assert keeper.game.time_limit_s == limit and keeper.moves == 2


def _old_log_lines() -> list[dict]:
    """A game as the first version of the log wrote it (496f0ae): moves without ``turn_order_player``, a revert
    and its restore, the clock key, an override without the station's details, and lines the game does not use."""
    start = {"event": "start", "format": OLD_FORMAT, "wall_time": "2026-01-01T10:00:00+0000", "profile": "official",
             "players": 2, "source": "game.mp4", "mode": "analyze"}  # fmt: skip
    first = {"sets": [["black-5", "blue-5", "orange-5"]], "loose": []}
    opened = {"sets": [*first["sets"], ["red-10", "red-11", "red-12"]], "loose": []}
    low = {"sets": [*opened["sets"], ["blue-1", "blue-2", "blue-3"]], "loose": []}

    def ruling(verdict: str, played: list[str], codes: list[str], restore: dict | None) -> dict:
        plan = None if restore is None else {"restore": restore, "to_rack": played, "to_table": [], "changed_sets": [2],
                                             "penalty_tiles": 1, "fallback": {"keep": [], "take": []}}  # fmt: skip
        violations = [{"code": c, "detail": c, "sets": [], "tiles": [], "players_fault": True} for c in codes]
        return {"verdict": verdict, "kind": "play", "violations": violations, "penalty_tiles": 1 if plan else 0,
                "played": played, "removed": [], "opening_value": None, "revert": plan, "uncertain": [], "notes": [],
                "profile": "official", "opened": False}  # fmt: skip

    def move(number: int, player: int, t: float, before: dict, after: dict, ruled: dict) -> dict:
        return {"event": "move", "time_s": t, "frame": int(t * 30), "number": number, "player": player,
                "seat": player * 2, "hands_seat": None, "kind": "play", "opened": False, "start_s": None,
                "turn_started_s": 0.0, "elapsed_s": 10.0, "ended_by": "settle", "before": before, "after": after,
                "ruling": ruled}  # fmt: skip

    revert = ruling("revert", ["blue-1", "blue-2", "blue-3"], ["opening-below-threshold"], opened)
    restore = {"event": "restore", "time_s": 30.0, "frame": 900, "after_move": 2, "player": 1, "complete": True,
               "table": opened}  # fmt: skip
    return [
        start,
        {"event": "calibration", "time_s": 0.0, "method": "whole frame"},
        {"event": "table", "time_s": 1.0, "frame": 30, "reason": "first reading", "table": first},
        move(1, 0, 10.0, first, opened, ruling("ok", ["red-10", "red-11", "red-12"], [], None)),
        {"event": "activity", "time_s": 12.0, "frame": 360},
        move(2, 1, 20.0, opened, low, revert),
        {"event": "override", "time_s": 22.0, "action": "accept", "move": 2},
        restore,
        {"event": "clock", "time_s": 35.0, "frame": 1050},
        {"event": "occluded", "time_s": 36.0, "seconds": 2.0},
    ]


def test_an_old_log_resumes_to_the_game_it_held(tmp_path: Path) -> None:
    from vision.game.moves import GameKeeper

    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _old_log_lines()), encoding="utf-8")
    log, events = GameLog.resume(path)
    with log:
        keeper = GameSetup.from_start(events[0], path).keeper()
        keeper.replay(events)
        assert (keeper.moves, keeper.player, keeper.opened, keeper.pending) == (2, 0, [True, False], None)
        assert keeper.clock_mode and keeper.table is not None and len(keeper.table) == 6
        # the game goes on: player 1 draws at the clock key
        (_, move) = keeper.clock(time_s=50.0, frame=1500)
        assert (move.number, move.player, move.kind, move.ruling.verdict.value) == (3, 0, "draw", "ok")
        log.append(move.to_json())
    again = GameKeeper("official", 2)
    again.replay(read_log(path))
    assert again.status() == keeper.status()


def test_read_events_gives_typed_events_and_names_a_line_the_game_cannot_take(tmp_path: Path) -> None:
    from referee.events import Move, Note, Restore, TableRead

    path = tmp_path / "old.jsonl"
    lines = _old_log_lines()
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    events = read_events(path)
    assert [type(e) for e in events][:4] == [Note, Note, TableRead, Move] and isinstance(events[7], Restore)
    assert [e.to_json() for e in events] == lines  # each line goes back out as it came in
    lines[3] = {**lines[3], "time_s": "soon"}
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with pytest.raises(GameLogError, match=r"old\.jsonl:4: move 1: time_s is 'soon'"):
        read_events(path)
