"""``record``'s library: the referee's words on the table appended to a game log after the fact, checked by the game
replayed from the log, completed as the station's are, and read back by scoring."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from referee.scoring import Game, read_game_log, replay_log, score_game
from referee.table import Table
from vision.game.gamelog import GameLog, GameLogError, GameSetup, read_log
from vision.game.moves import GameKeeper
from vision.game.words import record_word

OPENING = "[red-10 red-11 red-12]"


def played_log(path: Path, profile: str = "official") -> Path:
    """A finished video's log: the first reading, player 1 opens, player 2 draws, then the end line."""
    log = GameLog.create(path, GameSetup.of(profile, 2), sync=False)
    keeper = GameKeeper(profile, 2)
    for t, table, hands in ((0.0, "", False), (20.0, OPENING, True), (40.0, OPENING, True)):
        for event in keeper.settled(Table.parse(table), time_s=t, frame=0, start_s=None, seat=None, hands=hands):
            log.append(event if isinstance(event, dict) else event.to_json())
    log.append({"event": "end", "time_s": 45.0, "reason": "end of the video", "moves": 2})
    log.close()
    return path


def test_words_recorded_after_the_video_drive_the_score(tmp_path: Path) -> None:
    path = played_log(tmp_path / "game.jsonl")
    line, _ = record_word(path, "announced-opening", player=1)
    assert line["time_s"] == 45.0 and line["rule"].startswith("official: seeds/003_ed43451ecbd65de4.txt")
    line, keeper = record_word(path, "out", player=0, at_s=60.0)
    assert keeper.game.over and keeper.game.winner == 0
    assert [e["event"] for e in read_log(path)][-3:] == ["end", "announced-opening", "out"]
    played = replay_log(read_game_log(path))
    players = [{"name": "A", "rack": []}, {"name": "B", "rack": ["k10", "k11", "k12"]}]
    racks = Game.from_json({"profile": "official", "players": players})
    assert {s.name: s.small_points for s in score_game(racks.with_log(played))} == {"A": 100, "B": -100}


def test_a_word_the_game_refuses_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    path = played_log(tmp_path / "game.jsonl")
    before = path.read_bytes()
    with pytest.raises(GameLogError, match="a re-deal is asked for on the tiles dealt, before the first move"):
        record_word(path, "redeal", player=0, pairs=3)
    with pytest.raises(GameLogError, match="player 1 has opened already"):
        record_word(path, "announced-opening", player=0)
    with pytest.raises(GameLogError, match="no override or word to undo"):
        record_word(path, "undo")
    with pytest.raises(GameLogError, match="unknown word 'rain'"):
        record_word(path, "rain")
    assert path.read_bytes() == before


def test_undo_takes_back_the_word_just_recorded(tmp_path: Path) -> None:
    path = played_log(tmp_path / "game.jsonl")
    record_word(path, "pool-empty")
    _, keeper = record_word(path, "undo")
    assert not keeper.game.pool_empty
    assert read_log(path)[-1]["undoes"]["event"] == "pool-empty"


def test_a_log_being_written_is_refused(tmp_path: Path) -> None:
    path = played_log(tmp_path / "game.jsonl")
    log, _ = GameLog.resume(path)
    try:
        with pytest.raises(GameLogError):
            record_word(path, "pool-empty")
    finally:
        log.close()


def rummikub_referee(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys; from vision.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


def test_the_record_command(tmp_path: Path) -> None:
    path = played_log(tmp_path / "game.jsonl")
    done = rummikub_referee("record", str(path), "announced-opening", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{path}: Referee: player 2 will open next round")
    done = rummikub_referee("record", str(path), "out", "1", "--json")
    assert json.loads(done.stdout)["status"]["winner"] == 0
    for args, message in [
        (("out",), "out: which player? (a number from 1)"),
        (("redeal", "0"), "PLAYER is a player number from 1, not '0'"),
        (("undo", "2"), "undo takes back the last override or word: no player"),
        (("announced-opening", "2"), "declared an opening after the end of the game"),
    ]:
        refused = rummikub_referee("record", str(path), *args)
        assert refused.returncode == 2 and message in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_the_camera_s_orientation_comes_from_the_start_line_and_the_command_line(tmp_path: Path) -> None:
    from vision.cli import build_parser
    from vision.cli.options import game_from
    from vision.runtime.seats import Edge, Orientation

    start = {"profile": "pl-championship", "players": 4, "orientation": {"first": "left", "mirrored": True}}
    setup = GameSetup.of("pl-championship", 4, orientation=Orientation(Edge.LEFT, mirrored=True))
    log = GameLog.create(tmp_path / "game.jsonl", setup, sync=False)
    log.close()
    _, keeper = record_word(tmp_path / "game.jsonl", "announced-opening", player=1)
    assert keeper.orientation == Orientation(Edge.LEFT, mirrored=True)
    assert [seat.name for seat in keeper.seating] == ["left", "bottom", "right", "top"]
    with pytest.raises(GameLogError, match=r"game.jsonl:1: the start line's orientation: the first player's side"):
        GameSetup.from_start({**start, "orientation": {"first": "north"}}, tmp_path / "game.jsonl")
    args = build_parser().parse_args(["live", "--source", "0", "--players", "4", "--seat1", "top", "--mirrored"])
    assert game_from(args).orientation == Orientation(Edge.TOP, mirrored=True)
    assert game_from(build_parser().parse_args(["live", "--source", "0", "--players", "4"])).orientation is None
