"""The game log: every event on disk as it happens, a torn last line survived, the same file continued."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.gamelog import LOG_FORMAT, GameLog, GameLogError, read_log

START = {"profile": "official", "players": 2, "source": "0"}


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
