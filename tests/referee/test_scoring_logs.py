"""Scoring driven by the game log (issue 17): golden cases in ``tests/golden/scores/*.json``, each citing the seed
rule it follows, hand-computed from the seed; and the ways a log and a game file can disagree, each one line.

A case plays its steps through :class:`referee.game.Game` (the state machine the camera's game runs on), writes the
events as a game log's lines, and scores the racks at the end with what the log says: the ending the referee
recorded, who opened, who declared the opening for next round, the re-deals."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.events import event_from_json
from referee.game import Game as Played
from referee.profiles import PROFILES
from referee.scoring import Game, ScoreError, read_game_log, replay_log, score_game
from referee.table import Table

SCORES_DIR = Path(__file__).resolve().parents[1] / "golden" / "scores"
SCORE_FILES = sorted(SCORES_DIR.glob("*.json"))


def write_log(spec: dict[str, Any], path: Path) -> Path:
    """The game log of a case's steps (``settle``: a still table, ``event``: the referee's word), as lines."""
    game = Played.start(spec["profile"], len(spec["players"]))
    lines: list[dict[str, Any]] = [{"event": "start", "format": "rummikub-referee/game-log/1",
                                    "profile": spec["profile"], "players": len(spec["players"])}]  # fmt: skip
    for step in spec["steps"]:
        t = float(step["t"])
        if "settle" in step:
            game, events = game.on_settled(Table.parse(step["settle"]), time_s=t, frame=int(t * 30), start_s=None,
                                           hands_seat=None, hands=step.get("hands", True))  # fmt: skip
        else:
            event = game.complete(event_from_json({"time_s": t, **step["event"]}))
            game, events = game.apply(event), [event]
        lines += [event.to_json() for event in events]
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def scored(spec: dict[str, Any], log: Path) -> tuple[Game, dict[str, dict[str, Any]]]:
    game = Game.from_json({"profile": spec["profile"], "players": spec["players"]}).with_log(
        replay_log(read_game_log(log))
    )
    return game, {s.name: s.to_dict() for s in score_game(game)}


@pytest.mark.parametrize("path", SCORE_FILES, ids=[p.stem for p in SCORE_FILES])
def test_golden_score(path: Path, tmp_path: Path) -> None:
    spec = json.loads(path.read_text(encoding="utf-8"))
    game, scores = scored(spec, write_log(spec, tmp_path / "game.jsonl"))
    expected = spec["expected"]
    assert game.ending.value == expected["ending"] and game.redeals == expected["redeals"]
    for name, want in expected["scores"].items():
        got = scores[name]
        assert (got["small_points"], got["big_points"], got["place"]) == (want["small"], want["big"], want["place"]), (
            f"{path.name} {name}: {got}"
        )
        if "note" in want:
            assert want["note"] in got["note"], f"{path.name} {name}: {got['note']!r}"


@pytest.mark.parametrize("path", SCORE_FILES, ids=[p.stem for p in SCORE_FILES])
def test_golden_score_file_shape(path: Path) -> None:
    # Every case cites its profile's own seed document and a rule of it, quoted in its 'about'.
    spec = json.loads(path.read_text(encoding="utf-8"))
    assert set(spec) == {"about", "profile", "seed", "rule", "players", "steps", "expected"}
    assert spec["seed"] == PROFILES[spec["profile"]].seed
    assert spec["seed"] in spec["about"] and spec["rule"].split()[0] in spec["about"]
    assert set(spec["expected"]["scores"]) == {p["name"] for p in spec["players"]}


def test_golden_scores_cover_the_endings_the_declaration_and_the_re_deal() -> None:
    specs = [json.loads(p.read_text(encoding="utf-8")) for p in SCORE_FILES]
    words = {step["event"]["event"] for spec in specs for step in spec["steps"] if "event" in step}
    assert {"pool-empty", "out", "announced-opening", "redeal"} <= words
    seeds = {spec["seed"] for spec in specs}
    assert seeds == {profile.seed for profile in PROFILES.values()}  # all five seed documents


# -- a log and a game file that disagree ---------------------------------------------------------------------

OUT = {"profile": "official", "players": [{"name": "A", "rack": []}, {"name": "B", "rack": ["red-5"]}],
       "steps": [{"t": 0, "settle": "", "hands": False}, {"t": 20, "settle": "[red-10 red-11 red-12]"},
                 {"t": 30, "event": {"event": "out", "player": 0}}]}  # fmt: skip


def test_the_log_s_winner_must_have_emptied_the_rack(tmp_path: Path) -> None:
    spec = {**OUT, "players": [{"name": "A", "rack": ["red-5"]}, {"name": "B", "rack": []}]}
    with pytest.raises(ScoreError, match=r"^the game log says player 1 \(A\) went out, but the rack holds red-5$"):
        scored(spec, write_log(spec, tmp_path / "game.jsonl"))


def test_a_log_that_does_not_say_how_the_game_ended_is_named(tmp_path: Path) -> None:
    spec = {**OUT, "steps": OUT["steps"][:2]}
    with pytest.raises(ScoreError, match="does not say how the game ended: no 'out' and no 'pool-empty' event"):
        scored(spec, write_log(spec, tmp_path / "game.jsonl"))


def test_the_log_decides_who_opened(tmp_path: Path) -> None:
    # The file says B opened (the default); the log shows B never played: B loses 100 (5 points, no opening).
    game, scores = scored(OUT, write_log(OUT, tmp_path / "game.jsonl"))
    assert [p.opened for p in game.players] == [True, False]
    assert scores["B"]["small_points"] == -100


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"event": "table"}'], "game.jsonl: not a game log (it starts with a 'start' line)"),
        (['{"event": "start", "profile": "chess", "players": 2}'], "game.jsonl:1: unknown profile 'chess'"),
        (['{"event": "start", "profile": "official", "players": 2}', "{oops", "{}"],
         "game.jsonl:2: not a game log line (malformed JSON)"),
        (['{"event": "start", "profile": "official", "players": 2}', '{"event": "out", "player": 5}'],
         "game.jsonl:2: player 5 is not one of the 2 at the table"),
        (['{"event": "start", "profile": "official", "players": 3}', '{"event": "out", "player": 0}'],
         "the game log has 3 players, the game file 2"),
    ],
)  # fmt: skip
def test_a_bad_log_is_one_line_naming_where(tmp_path: Path, lines: list[str], message: str) -> None:
    log = tmp_path / "game.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ScoreError) as error:
        Game.from_json(OUT).with_log(replay_log(read_game_log(log), where=str(log)))
    assert message in str(error.value) and "\n" not in str(error.value)


# -- the score command ----------------------------------------------------------------------------------------


def score_command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "referee.cli", "score", *args], capture_output=True, text=True)


def test_score_with_the_game_log(tmp_path: Path) -> None:
    spec = json.loads((SCORES_DIR / "official-out-declaration-saves-from-200.json").read_text(encoding="utf-8"))
    log = write_log(spec, tmp_path / "game.jsonl")
    racks = tmp_path / "racks.json"
    racks.write_text(json.dumps({"players": spec["players"]}), encoding="utf-8")  # no profile, no ending: the log's
    done = score_command(str(racks), "--log", str(log), "--json")
    assert done.returncode == 0, done.stderr
    (game,) = json.loads(done.stdout)["games"]
    assert {s["name"]: s["small_points"] for s in game} == {"A": 300, "B": -100, "C": -200}
    assert [s["announced_opening"] for s in game] == [False, True, False]

    two = score_command(str(racks), "--log", str(log), "--log", str(log))
    assert two.returncode == 2 and "--log: 2 game log(s) for 1 game(s)" in two.stderr
    assert len(two.stderr.strip().splitlines()) == 1
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    done = score_command(str(racks), "--log", str(unfinished))
    assert done.returncode == 2 and "does not say how the game ended" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("fields", "limit"),
    [
        ({"format": "rummikub-referee/game-log/2", "time_limit_s": None}, None),  # this version: null is no limit
        ({"format": "rummikub-referee/game-log/2", "time_limit_s": 45}, 45.0),
        ({"format": "rummikub-referee/game-log/1"}, 40.0),  # an old log: missing is the profile's (przasnysz: 40 s)
        ({"format": "rummikub-referee/game-log/1", "time_limit_s": None}, 40.0),  # ... and so was null
        ({"format": "rummikub-referee/game-log/1", "time_limit_s": "none"}, None),  # ... and "none" no limit
    ],
)
def test_a_log_is_replayed_under_its_start_line_s_time_limit(fields: dict[str, Any], limit: float | None) -> None:
    start = {"event": "start", "profile": "przasnysz", "players": 2, **fields}
    assert replay_log([(1, start)]).time_limit_s == limit


def test_a_start_line_s_bad_time_limit_is_one_line_naming_it() -> None:
    start = {"event": "start", "format": "rummikub-referee/game-log/2", "profile": "official", "players": 2}
    with pytest.raises(ScoreError, match=r"^game\.jsonl:1: the start line's time_limit_s is missing, not seconds"):
        replay_log([(1, start)], "game.jsonl")
