"""Golden games: a sequence of what the table did -> the events logged, the rulings and the game's state.

Each ``tests/golden/games/*.json`` is a game written from RULES.md, the way chess engines keep perft files: steps
(a settled table, a clock press, the referee's override or undo...) each with the events it must log, and the
state the game must end in. The runner plays the steps on :class:`referee.game.Game` (no camera), then replays
the logged events, through JSON as from a log file, on a fresh game, which must end in the same state.

A step's keys: ``t`` (seconds); one of ``settle`` (a table: text or JSON; ``seat``: where the hands were seen,
null when not located; ``hands``: default true), ``amend`` (a table the same hands left going on with the last move:
:meth:`Game.on_amended`; ``start_s``, ``seat``), ``clock`` (true, or the table settled since the last reading;
with either, ``at_limit``: the table the camera read when the time limit passed, ``touched``: hands over the table
after it),
``activity``, ``unread`` (seconds), ``override`` (the override's fields, as the station sends them), ``undo``,
``event`` (a referee's event as a log line without its time: ``pool-empty``, ``out``, ``redeal``; with ``refused``:
the start of the one-line :class:`GameStateError` the game must answer, nothing logged); ``expect``: the events it
logs, each a subset of :func:`summary`; ``state``: a subset of :func:`state` after it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.events import (
    Activity,
    ClockPress,
    Move,
    Note,
    OpeningDeclared,
    Override,
    PoolEmpty,
    RedealRequest,
    Restore,
    TableRead,
    Undo,
    Unread,
    WentOut,
    describe,
    event_from_json,
)
from referee.game import Game, GameStateError
from referee.moves import Ruling, check_move
from referee.profiles import Profile, get_profile
from referee.table import Table

GAMES_DIR = Path(__file__).resolve().parents[1] / "golden" / "games"
GAME_FILES = sorted(GAMES_DIR.glob("*.json"))

# file name -> the bug it shows (a strict xfail: the test turns red the moment the bug is fixed and the entry stale)
KNOWN_BUGS: dict[str, str] = {}


def table(data: Any) -> Table:
    return Table.parse(data) if isinstance(data, str) else Table.from_json(data)


def summary(event: Any) -> dict[str, Any]:
    """What a golden file says about a logged event."""
    if isinstance(event, Move):
        return {"event": "move", "number": event.number, "player": event.player, "kind": event.kind,
                "verdict": event.ruling.verdict.value, "codes": event.ruling.codes,
                "played": [str(t) for t in event.ruling.played], "penalty_tiles": event.ruling.penalty_tiles,
                "ended_by": event.ended_by, "notes": list(event.ruling.notes), "amends": event.amends}  # fmt: skip
    if isinstance(event, Restore):
        return {"event": "restore", "after_move": event.after_move, "player": event.player, "complete": event.complete}
    if isinstance(event, TableRead):
        return {"event": "table", "reason": event.reason}
    if isinstance(event, ClockPress):
        return {"event": "clock", "confirms": event.confirms}
    if isinstance(event, Activity):
        return {"event": "activity"}
    if isinstance(event, Unread):
        return {"event": "unread", "seconds": event.seconds}
    if isinstance(event, Override):
        ruling = None if event.ruling is None else event.ruling.verdict.value
        return {"event": "override", "action": event.action, "move": event.move, "verdict": ruling}
    if isinstance(event, Undo):
        undone = None if event.undoes is None else event.undoes.get("action", event.undoes.get("event"))
        return {"event": "undo", "undoes": undone}
    if isinstance(event, PoolEmpty):
        return {"event": "pool-empty", "player": event.player, "cause": event.cause, "rule": event.rule}
    if isinstance(event, WentOut):
        return {"event": "out", "player": event.player}
    if isinstance(event, RedealRequest):
        return {"event": "redeal", "player": event.player, "pairs": event.pairs, "rule": event.rule}
    if isinstance(event, OpeningDeclared):
        return {"event": "announced-opening", "player": event.player, "rule": event.rule}
    return {"event": event.kind}


def state(game: Game) -> dict[str, Any]:
    """What a golden file says about the game between steps."""
    pending = game.pending
    last = game.last_move
    owed = None if pending is None else {"after_move": pending.after_move, "player": pending.player,
                                         "owed": pending.owed, "table": str(pending.table)}  # fmt: skip
    if pending is not None and pending.overruled:
        owed["overruled"] = True
    return {
        "player": game.player,
        "opened": list(game.opened),
        "moves": game.moves,
        "clock_mode": game.clock_mode,
        "table": None if game.table is None else str(game.table),
        "pending": owed,
        "last_verdict": None if last is None else last.ruling.verdict.value,
        "pool_empty": game.pool_empty,
        "last_round": None if game.last_round is None else list(game.last_round),
        "over": game.over,
        "winner": game.winner,
        "redeals": game.redeals,
        "declared": list(game.declared),
    }  # fmt: skip


def subset(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``expected`` whose value ``actual`` does not have."""
    return {key: (value, actual.get(key, "missing")) for key, value in expected.items() if actual.get(key) != value}


def start(spec: dict[str, Any]) -> Game:
    """The golden game's start: a limit agreed at the table (``time_limit_s``) replaces the profile's."""
    profile: str | Profile = spec["profile"]
    if "time_limit_s" in spec:
        profile = replace(get_profile(spec["profile"]), time_limit_s=spec["time_limit_s"])
    return Game.start(profile, spec["players"], first_player=spec.get("first_player", 0))


def at_limit(step: dict[str, Any]) -> dict[str, Any]:
    """What the camera saw of the time limit, for a step that ends a move."""
    seen = step.get("at_limit")
    return {"table_at_limit": None if seen is None else table(seen), "touched_after_limit": step.get("touched")}


def play(spec: dict[str, Any]) -> tuple[Game, list[Any]]:
    """Play a golden game's steps; checks each step's events and state; returns the game and every event logged."""
    game = start(spec)
    logged: list[Any] = []
    for number, step in enumerate(spec["steps"], start=1):
        where = f"step {number} ({step.get('about', '')})"
        t = float(step["t"])
        if "settle" in step:
            game, events = game.on_settled(
                table(step["settle"]), time_s=t, frame=int(t * 30), start_s=None, hands_seat=step.get("seat"),
                hands=step.get("hands", True), left_out=step.get("left_out", 0), **at_limit(step),
            )  # fmt: skip
        elif "amend" in step:  # the same hands went on with the last move: the turn ruled again as one
            game, events = game.on_amended(
                table(step["amend"]), time_s=t, frame=int(t * 30), start_s=step.get("start_s"),
                hands_seat=step.get("seat"), **at_limit(step),
            )  # fmt: skip
        elif "clock" in step:
            settled = None if step["clock"] is True else table(step["clock"])
            game, events = game.on_clock(time_s=t, frame=int(t * 30), table=settled, **at_limit(step))
        elif "activity" in step:
            game, events = game.on_activity(time_s=t, frame=int(t * 30))
        elif "unread" in step:
            events = [Unread(float(step["unread"]), t)]
            game = game.apply(events[0])
        elif "event" in step:
            event = game.complete(event_from_json({"time_s": t, **step["event"]}))
            if "refused" in step:
                with pytest.raises(GameStateError, match="^" + re.escape(step["refused"])) as refused:
                    game.apply(event)
                assert "\n" not in str(refused.value), f"{where}: a refusal is one line"
                events = []
            else:
                game, events = game.apply(event), [event]
        elif "override" in step or "undo" in step:
            fields = {"action": "undo"} if "undo" in step else step["override"]
            event = game.complete(event_from_json({"event": "override", "time_s": t, **fields}))
            game, events = game.apply(event), [event]
        else:
            raise AssertionError(f"{where}: no action")
        got = [summary(e) for e in events]
        expected = step.get("expect")
        if expected is not None:
            assert len(got) == len(expected), f"{where}: logged {got}, expected {expected}"
            for want, have in zip(expected, got, strict=True):
                assert not subset(want, have), f"{where}: {subset(want, have)} (logged {have})"
        if "state" in step:
            assert not subset(step["state"], state(game)), f"{where}: {subset(step['state'], state(game))}"
        logged += events
    return game, logged


def _games() -> list[Any]:
    return [
        pytest.param(path, id=path.stem, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[path.stem])]
                     if path.stem in KNOWN_BUGS else [])
        for path in GAME_FILES
    ]  # fmt: skip


@pytest.mark.parametrize("path", _games())
def test_golden_game(path: Path) -> None:
    spec = json.loads(path.read_text(encoding="utf-8"))
    game, logged = play(spec)
    final = spec["final"]
    assert not subset(final, state(game)), subset(final, state(game))
    # The log read back replays to the same game, and every event reads back as itself.
    lines = [json.loads(json.dumps(event.to_json())) for event in logged]
    replayed = start(spec).replay(event_from_json(line) for line in lines)
    assert state(replayed) == state(game)
    assert replayed.ledger == game.ledger and replayed.last_move == game.last_move
    for event, line in zip(logged, lines, strict=True):
        assert event_from_json(line) == event and event_from_json(line).to_json() == line
        assert describe(event)


def test_golden_games_cover_what_the_issue_asks() -> None:
    specs = [json.loads(p.read_text(encoding="utf-8")) for p in GAME_FILES]
    assert {2, 4, 5, 6} <= {s["players"] for s in specs}
    assert any(s["profile"] == "official-6p" and s["players"] == 6 for s in specs)
    actions = {s["steps"][i].get("override", {}).get("action") for s in specs for i in range(len(s["steps"]))}
    assert {"ok", "revert", "correct"} <= actions
    assert any("undo" in step for s in specs for step in s["steps"])
    assert any("clock" in step for s in specs for step in s["steps"])
    assert any("at_limit" in step for s in specs for step in s["steps"])  # a move over time seen by the camera
    assert any("amend" in step for s in specs for step in s["steps"])  # a turn gone on with after it was ruled
    # The end of the pool as each seed has it, and the re-deal granted and refused (issue 17).
    events = {(s["profile"], step["event"]["event"], "refused" in step) for s in specs for step in s["steps"]
              if "event" in step}  # fmt: skip
    for profile in ("official", "przasnysz", "pl-championship", "house"):
        assert (profile, "pool-empty", False) in events, profile
    assert ("official", "out", False) in events
    assert ("house", "redeal", True) in events
    assert {"przasnysz", "wejherowo"} <= {
        profile for profile, kind, refused in events if kind == "redeal" and not refused
    }


# -- the game's setup ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "players", "message"),
    [
        ("official", 5, "official is played by 2 to 4 players, not 5"),
        ("official-6p", 7, "official-6p is played by 2 to 6 players, not 7"),
        ("official", 1, "not 1"),
        ("official", True, "not True"),
    ],
)
def test_players_are_bounded_by_the_profile(profile: str, players: Any, message: str) -> None:
    with pytest.raises(GameStateError, match=message):
        Game.start(profile, players)


def test_six_players_sit_in_the_seats_given() -> None:
    game = Game.start("official-6p", 6, seats=(4, 5, 1, 6, 7, 3), first_player=5)
    assert game.player == 5 and game.seat_of(5) == 3 and game.player_at(6) == 3 and game.player_at(0) is None


def test_a_time_limit_agreed_at_the_table_replaces_the_profiles() -> None:
    assert Game.start("official", 2).time_limit_s == 60.0
    official = get_profile("official")
    assert Game.start(replace(official, time_limit_s=None), 2).time_limit_s is None
    assert Game.start(replace(official, time_limit_s=30), 2).time_limit_s == 30.0
    assert Game.start(replace(official, time_limit_s=30), 2).profile == "official"
    with pytest.raises(GameStateError, match="a time limit is a finite number"):
        Game.start(replace(official, time_limit_s=float("nan")), 2)


@pytest.mark.parametrize(
    "profile",
    [
        replace(get_profile("official"), opening_threshold=0),  # other rules than the registered profile's
        replace(get_profile("official"), name="mine"),  # not a registered profile
    ],
)
def test_a_profile_replaced_in_more_than_its_time_limit_is_refused(profile: Profile) -> None:
    with pytest.raises(GameStateError, match="only its time limit"):
        Game.start(profile, 2)


# -- values and their JSON -------------------------------------------------------------------------------------


def test_a_game_is_a_value_apply_returns_a_new_one() -> None:
    game = Game.start("official", 2)
    after, _ = game.on_settled(Table.parse("[red-1 red-2 red-3]"), time_s=1.0, frame=30, start_s=None,
                               hands_seat=None, hands=False)  # fmt: skip
    assert game.table is None and after.table is not None
    with pytest.raises(AttributeError):
        after.player = 1  # type: ignore[misc]


def test_rulings_round_trip_through_json() -> None:
    before = Table.parse("[red-5 red-6 red-7] [blue-1 blue-2 blue-3]")
    after = Table.parse("[red-5 red-6] [blue-1 blue-2 blue-3] [red-7 black-7 orange-7] loose: joker")
    for opened in (True, False):
        ruling = check_move(before, after, opened=opened, profile="official", elapsed_s=75.0)
        assert Ruling.from_json(json.loads(json.dumps(ruling.to_json()))) == ruling


def test_lines_the_game_does_not_model_go_back_out_as_they_came() -> None:
    for line in (
        {"event": "start", "format": "rummikub-referee/game-log/1", "profile": "official", "players": 2},
        {"event": "camera-moved", "time_s": 3.0, "shift_px": 12, "action": "recalibrated"},
        {"event": "override", "time_s": 4.0, "action": "shrug", "move": "one"},
        {"event": "clock", "time_s": 5.0, "frame": 150, "by": "station"},
    ):
        event = event_from_json(line)
        assert event.to_json() == line
    assert isinstance(event_from_json({"event": "end", "moves": 3}), Note)


# -- any game replays to itself ---------------------------------------------------------------------------------

LAYOUTS = (
    "[black-5 blue-5 orange-5]",
    "[black-5 blue-5 orange-5] [red-10 red-11 red-12]",
    "[black-5 blue-5 orange-5] [red-10 red-11 blue-12]",
    "[black-5 blue-5 orange-5] [red-10 red-11]",
    "[black-5 blue-5 orange-5] [red-10 red-11 red-12] [blue-1 blue-2 blue-3]",
    "[black-5 blue-5] [red-10 red-11 red-12] loose: orange-5",
    "",
)
STEP = st.one_of(
    st.tuples(st.just("settle"), st.sampled_from(LAYOUTS), st.one_of(st.none(), st.integers(0, 6)), st.booleans()),
    st.tuples(st.just("clock"), st.one_of(st.none(), st.sampled_from(LAYOUTS))),
    st.tuples(st.just("activity")),
    st.tuples(st.just("unread"), st.sampled_from([0.5, 2.0])),
    st.tuples(st.just("override"), st.sampled_from(["accept", "ok", "revert", "correct", "undo"]), st.integers(1, 4),
              st.sampled_from(["before", "after"]), st.integers(-1, 2), st.integers(0, 3)),
)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.integers(2, 6), first=st.integers(0, 5), steps=st.lists(STEP, max_size=25))
def test_any_game_replayed_from_its_log_is_the_same_game(players: int, first: int, steps: list[tuple]) -> None:
    game = Game.start("official-6p", players, first_player=first % players)
    logged: list[Any] = []
    t = 0.0
    for step in steps:
        t += 7.0
        events: list[Any]
        if step[0] == "settle":
            game, events = game.on_settled(Table.parse(step[1]), time_s=t, frame=int(t), start_s=None,
                                           hands_seat=step[2], hands=step[3])  # fmt: skip
        elif step[0] == "clock":
            settled = None if step[1] is None else Table.parse(step[1])
            game, events = game.on_clock(time_s=t, frame=int(t), table=settled)
        elif step[0] == "activity":
            game, events = game.on_activity(time_s=t, frame=int(t))
        elif step[0] == "unread":
            events = [Unread(step[1], t)]
            game = game.apply(events[0])
        else:
            _, action, move, which, set_index, position = step
            fields = {"action": action} if action == "undo" else {"action": action, "move": move}
            if action == "correct":
                fields |= {"table": which, "place": [set_index, position], "label": "red-12"}
            event = game.complete(event_from_json({"event": "override", "time_s": t, **fields}))
            game, events = game.apply(event), [event]
        logged += events
    lines = [json.loads(json.dumps(event.to_json())) for event in logged]
    assert [event_from_json(line) for line in lines] == logged
    replayed = Game.start("official-6p", players, first_player=first % players).replay(map(event_from_json, lines))
    assert replayed == game


def test_the_game_imports_no_camera_and_no_imaging() -> None:
    """The state machine is the rules package's: it stands without vision/, OpenCV or numpy."""
    code = (
        "import sys, referee.game, referee.events; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('vision', 'cv2', 'numpy', 'onnxruntime')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the end of the pool and the re-deal (issue 17) -------------------------------------------------------------


def test_the_ending_shows_in_the_status_only_once_there_is_one() -> None:
    game = Game.start("official", 3)
    assert "over" not in game.status() and "redeals" not in game.status()
    game = game.apply(game.complete(RedealRequest(1, 2.0, pairs=3)))
    assert game.status()["redeals"] == 1 and game.turn_started_s == 2.0
    game = game.apply(game.complete(PoolEmpty(5.0, player=0)))
    status = game.status()
    assert status["player"] == 1 and status["last_round"] == [1, 2, 0] and status["over"] is False


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"event": "out", "time_s": 1.0}, "out event lacks 'player'"),
        ({"event": "redeal", "player": "two"}, "redeal event: player is 'two', not a whole number"),
        ({"event": "pool-empty", "cause": 3}, "pool-empty event: cause is 3, not a word"),
        ({"event": "pool-empty", "rule": 3}, "pool-empty event: rule is 3, not text"),
    ],
)
def test_a_malformed_ending_or_redeal_line_is_named(line: dict[str, Any], message: str) -> None:
    with pytest.raises(GameStateError, match=re.escape(message)):
        event_from_json(line)


def test_a_pool_ending_cause_the_game_does_not_know_is_refused() -> None:
    with pytest.raises(GameStateError, match="cause is 'pool' or 'round-time', not 'rain'"):
        Game.start("official", 2).apply(PoolEmpty(1.0, cause="rain"))


def test_a_declaration_is_cited_per_seed_and_the_house_summary_names_none() -> None:
    # Przasnysz names it in rule 23b; the house summary has no never-opened penalty and so no declaration.
    przasnysz = Game.start("przasnysz", 2)
    cited = przasnysz.complete(OpeningDeclared(1, 3.0))
    assert cited.rule is not None and cited.rule.startswith("przasnysz: seeds/001_94ad5f67870580e0.txt, rule 23b")
    house = Game.start("house", 2)
    noted = house.complete(OpeningDeclared(1, 3.0))
    assert noted.rule is not None and "names no such declaration" in noted.rule
    assert house.apply(noted).declared == (1,)


def test_a_re_deal_forgets_a_declaration_made_on_the_tiles_dealt_before() -> None:
    game = Game.start("official", 3).apply(OpeningDeclared(2, 1.0))
    assert game.declared == (2,)
    assert game.apply(RedealRequest(0, 2.0, pairs=3)).declared == ()


def test_undo_takes_back_the_last_of_the_overrides_and_the_words_in_turn() -> None:
    game = Game.start("official", 2)
    game, _ = game.on_settled(Table.parse(""), time_s=0.0, frame=0, start_s=None, hands_seat=None, hands=False)
    game, _ = game.on_settled(Table.parse("[red-1 red-2]"), time_s=5.0, frame=1, start_s=None, hands_seat=None,
                              hands=True)  # fmt: skip
    assert game.last_move is not None and game.last_move.ruling.verdict.value == "revert"
    game = game.apply(game.complete(Override("ok", 6.0, move=1)))
    game = game.apply(game.complete(OpeningDeclared(1, 7.0)))
    undo = game.complete(Undo(8.0))
    assert undo.undoes is not None and undo.undoes["event"] == "announced-opening"
    assert describe(undo) == "Referee: undo (player 2 will open next round)"
    game = game.apply(undo)
    assert game.declared == ()
    second = game.complete(Undo(9.0))
    assert second.undoes is not None and second.undoes["action"] == "ok"
    assert game.apply(second).pending is not None  # the revert is owed again
