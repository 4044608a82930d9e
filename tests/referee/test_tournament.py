"""Tournaments around the tables (issue 17): a 12-player Przasnysz-format tournament and a Polish Championship one,
run end to end from game files and entered results to the standings page."""

from __future__ import annotations

import json
import random
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.scoring import Game, score_game
from referee.tiles import JOKER, NUMBER_TILES
from referee.tournament import Tournament, TournamentError, standings_html

PLAYERS = [f"Gracz {i:02d}" for i in range(1, 13)]


def _game_file(path: Path, players: tuple[str, ...], rng: random.Random) -> dict[str, Any]:
    """A finished game as the score command reads it: one player out, the others with random racks from one set."""
    bag = [str(t) for t in NUMBER_TILES for _ in range(2)] + [str(JOKER)] * 2
    rng.shuffle(bag)
    winner = rng.choice(players)
    rows = []
    for name in players:
        size = 0 if name == winner else rng.randint(1, 9)
        rows.append({"name": name, "rack": [bag.pop() for _ in range(size)], "opened": True})
    game = {"profile": "ignored: the tournament's profile scores it", "ending": "out", "players": rows}
    game.pop("profile")
    path.write_text(json.dumps(game), encoding="utf-8")
    return game


def _totals(games: list[dict[str, Any]], profile: str) -> dict[str, tuple[int, Fraction]]:
    """The test's own sums of big and small points per player."""
    totals: dict[str, tuple[int, Fraction]] = {}
    for game in games:
        for s in score_game(Game.from_json(game, profile=profile)):
            big, small = totals.get(s.name, (0, Fraction(0)))
            totals[s.name] = (big + s.big_points, small + Fraction(s.small_points))
    return totals


def _by_totals(totals: dict[str, tuple[int, Fraction]]) -> list[str]:
    return sorted(totals, key=lambda name: (-totals[name][0], -totals[name][1], name))


def test_a_12_player_przasnysz_tournament_from_game_files_to_standings(tmp_path: Path) -> None:
    tournament = Tournament.from_json({"profile": "przasnysz", "seed": 2025, "players": PLAYERS}, base=tmp_path)
    rng = random.Random(6)
    played: list[dict[str, Any]] = []
    for round_number in range(1, 5):
        tables = tournament.tables(round_number)
        assert [len(t.players) for t in tables] == [4, 4, 4]
        assert sorted(p for t in tables for p in t.players) == sorted(PLAYERS)
        if round_number > 1:  # rule 32: re-sorted after each round, the best four of the standings at table 1
            order = _by_totals(_totals(played, "przasnysz"))
            assert [sorted(t.players) for t in tables] == [sorted(order[i : i + 4]) for i in (0, 4, 8)]
        for table in tables:
            # rule 10: game 1 starts at seat A, game 2 at B, game 3 at C
            assert table.starts == table.players[:3]
            for game_number in range(1, 4):
                name = f"r{round_number}-t{table.number}-g{game_number}.json"
                played.append(_game_file(tmp_path / name, table.players, rng))
                entry = {"round": round_number, "table": table.number, "game": game_number, "game_file": name}
                tournament = tournament.with_entry(entry)
        if round_number < 3:
            with pytest.raises(TournamentError, match="is drawn when round"):
                Tournament.from_json(tournament.to_json(), base=tmp_path).tables(round_number + 2)
    standings = tournament.standings()
    totals = _totals(played, "przasnysz")
    assert [s.name for s in standings] == _by_totals(totals)
    assert all((s.big_points, s.small_points, s.games) == (*totals[s.name], 12) for s in standings)
    assert sum(s.big_points for s in standings) == 36  # 4 rounds x 3 tables x 3 games, one winner each
    assert [s.rank for s in standings] == sorted(s.rank for s in standings) and standings[0].rank == 1
    # The file round-trips, and the same seed draws the same tables.
    again = Tournament.from_json(json.loads(json.dumps(tournament.to_json())), base=tmp_path)
    assert [s.to_dict() for s in again.standings()] == [s.to_dict() for s in standings]
    summary = tournament.summary()
    assert summary["complete"] and len(summary["sheets"]) == 12
    page = standings_html(tournament)
    assert page.startswith("<!doctype html>") and all(name in page for name in PLAYERS)


def test_a_polish_championship_tournament_semi_final_and_final_from_entered_results(tmp_path: Path) -> None:
    tournament = Tournament.from_json({"profile": "pl-championship", "seed": 11, "players": PLAYERS}, base=tmp_path)
    semi = tournament.tables(1)
    assert [len(t.players) for t in semi] == [4, 4, 4] and all(t.starts == (None, None) for t in semi)
    with pytest.raises(TournamentError, match="round 2 \\(final\\) is drawn when round 1 is complete"):
        tournament.tables(2)
    rng = random.Random(3)
    table_totals: dict[int, dict[str, tuple[int, int]]] = {}
    for table in semi:
        for game_number in (1, 2):  # 'Po rozegraniu dwóch gier przy jednym stoliku sumuje się uzyskane punkty'
            losers = {name: -rng.randint(1, 60) for name in table.players[1:]}
            winner = table.players[0] if game_number == 1 else table.players[1]
            small = {winner: 0, **{n: p for n, p in losers.items() if n != winner}}
            if winner != table.players[0]:
                small[table.players[0]] = -rng.randint(1, 60)
            small[winner] = -sum(v for n, v in small.items() if n != winner)
            ordered = sorted(small.values(), reverse=True)
            big = {n: (4, 2, 1, 0)[ordered.index(v)] for n, v in small.items()}
            for name in table.players:
                b, s = table_totals.setdefault(table.number, {}).get(name, (0, 0))
                table_totals[table.number][name] = (b + big[name], s + small[name])
            tournament = tournament.with_entry({"round": 1, "table": table.number, "game": game_number, "small": small})
    # The final: the best of each semi-final table on big points, then small points (3 tables: one each).
    (final,) = tournament.tables(2)
    expected = {max(t, key=lambda n: (t[n][0], t[n][1])) for t in table_totals.values()}
    assert set(final.players) == expected and len(final.players) == 3
    for game_number, winner in ((1, final.players[0]), (2, final.players[0])):
        others = [n for n in final.players if n != winner]
        small = {others[0]: -10 * game_number, others[1]: -20, winner: 10 * game_number + 20}
        path = tmp_path / f"final-{game_number}.json"
        racks = {others[0]: ["red-10"] * game_number, others[1]: ["blue-10", "blue-10"], winner: []}
        path.write_text(
            json.dumps({"ending": "out", "players": [{"name": n, "rack": racks[n]} for n in final.players]})
        )
        assert sum(small.values()) == 0
        tournament = tournament.with_entry({"round": 2, "table": 1, "game": game_number, "game_file": path.name})
    standings = tournament.standings()
    assert standings[0].name == final.players[0]
    assert {s.name for s in standings[:3]} == set(final.players) and all(s.stage == "final" for s in standings[:3])
    assert standings[0].big_points == 8  # 4 + 4 at a 3-player table
    rest = standings[3:]
    assert len(rest) == 9 and all(s.stage == "semi-final" and s.games == 2 for s in rest)
    semi_totals = {n: v for t in table_totals.values() for n, v in t.items() if n not in final.players}
    assert [s.name for s in rest] == sorted(semi_totals, key=lambda n: (-semi_totals[n][0], -semi_totals[n][1], n))
    assert rest[0].rank == 4
    page = standings_html(tournament, "Mistrzostwa Polski <test>")
    assert "Mistrzostwa Polski &lt;test&gt;" in page and "final, table 1" in page


def test_entered_results_give_tied_players_the_better_places_big_points() -> None:
    # Seed 004 PUNKTACJA: two players at -9 share 2nd place and each gets 2 big points.
    tournament = Tournament.from_json({"profile": "pl-championship", "seed": 1, "players": ["A", "B", "C", "D"]})
    (table,) = tournament.tables(1)
    a, b, c, d = table.players
    tournament = tournament.with_entry({"round": 1, "table": 1, "game": 1, "small": {a: 30, b: -9, c: -9, d: -12}})
    (game,) = tournament.results()
    assert {s.name: s.big_points for s in game.scores} == {a: 4, b: 2, c: 2, d: 0}


def test_the_draw_is_seeded() -> None:
    def first_round(seed: int) -> list[tuple[str, ...]]:
        data = {"profile": "przasnysz", "seed": seed, "players": PLAYERS}
        return [t.players for t in Tournament.from_json(data).tables(1)]

    assert first_round(5) == first_round(5)
    assert len({tuple(first_round(seed)) for seed in range(5)}) > 1


@pytest.mark.parametrize(("count", "sizes"), [(12, [4, 4, 4]), (13, [4, 3, 3, 3]), (5, [3, 2]), (9, [3, 3, 3])])
def test_players_fill_as_few_tables_as_possible_as_evenly_as_possible(count: int, sizes: list[int]) -> None:
    data = {"profile": "przasnysz", "seed": 0, "players": [f"P{i}" for i in range(count)]}
    assert [len(t.players) for t in Tournament.from_json(data).tables(1)] == sizes


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"profile": "official", "players": ["A", "B"]}, "gives no tournament format"),
        ({"profile": "chess", "players": ["A", "B"]}, "unknown profile"),
        ({"profile": "przasnysz", "players": ["A", "A"]}, "distinct: A"),
        ({"profile": "przasnysz", "players": ["A"]}, "at least 2 players"),
        ({"profile": "przasnysz", "players": ["A", "B"], "seed": "x"}, "'seed' must be a whole number"),
        ({"profile": "przasnysz", "players": ["A", "B"], "colour": 1}, "unknown field"),
        (
            {
                "profile": "przasnysz",
                "players": ["A", "B"],
                "results": [{"round": 1, "table": 1, "game": 1, "small": {"A": 5, "C": -5}}],
            },
            "the result names A, C",
        ),
        (
            {
                "profile": "przasnysz",
                "players": ["A", "B"],
                "results": [{"round": 1, "table": 2, "game": 1, "small": {"A": 5, "B": -5}}],
            },
            "round 1 has tables 1 to 1",
        ),
        (
            {
                "profile": "przasnysz",
                "players": ["A", "B"],
                "results": [{"round": 1, "table": 1, "game": 4, "small": {"A": 5, "B": -5}}],
            },
            "games 1 to 3",
        ),
        (
            {
                "profile": "przasnysz",
                "players": ["A", "B"],
                "results": [{"round": 2, "table": 1, "game": 1, "small": {"A": 5, "B": -5}}],
            },
            "round 2 is drawn when round 1 is complete",
        ),
        (
            {
                "profile": "przasnysz",
                "players": ["A", "B"],
                "results": [{"round": 9, "table": 1, "game": 1, "small": {"A": 5, "B": -5}}],
            },
            "rounds 1 to 4",
        ),
        (
            {
                "profile": "przasnysz",
                "players": ["A", "B"],
                "results": [{"round": 1, "table": 1, "game": 1, "game_file": "nowhere.json"}],
            },
            "cannot read 'nowhere.json'",
        ),
        (
            {"profile": "przasnysz", "players": ["A", "B"], "results": [{"round": 1, "table": 1, "game": 1}]},
            "give one of",
        ),
    ],
)
def test_bad_tournament_files_are_one_line_errors(data: dict[str, Any], message: str, tmp_path: Path) -> None:
    with pytest.raises(TournamentError, match=message):
        Tournament.from_json(data, base=tmp_path)


def test_the_same_game_twice_is_an_error() -> None:
    entry = {"round": 1, "table": 1, "game": 1, "small": {"A": 5, "B": -5}}
    with pytest.raises(TournamentError, match="game 1 twice"):
        Tournament.from_json({"profile": "przasnysz", "players": ["A", "B"], "results": [entry, entry]})


def test_a_round_counts_its_games_once_each_in_the_sheets() -> None:
    entry = {"round": 1, "table": 1, "game": 2, "small": {"A": 5, "B": -5}}
    tournament = Tournament.from_json({"profile": "przasnysz", "players": ["A", "B"], "results": [entry]})
    (sheet,) = tournament.sheets()
    assert sheet["games_played"] == [2] and Counter(r["big_points"] for r in sheet["rows"]) == Counter({1: 1, 0: 1})


def test_a_tie_at_the_cut_for_the_final_is_left_to_a_person() -> None:
    players = [f"P{i}" for i in range(1, 13)]  # 3 semi-final tables: one player of each reaches the final
    tournament = Tournament.from_json({"profile": "wejherowo", "seed": 3, "players": players})
    for table in tournament.tables(1):
        a, b, c, d = table.players
        for game in (1, 2):  # a and b win one game each with the same points: tied on big and small points
            winner, other = (a, b) if game == 1 else (b, a)
            small = {winner: 30, other: -10, c: -10, d: -10}
            tournament = tournament.with_entry({"round": 1, "table": table.number, "game": game, "small": small})
    notes = tournament.notes()
    assert len(notes) == 3 and all("a person decides" in n for n in notes)
    assert tournament.summary()["notes"] == notes
    assert len(tournament.tables(2)[0].players) == 3


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 20), st.integers(0, 10**6), st.data())
def test_every_round_seats_every_player_once_at_tables_of_even_size(count: int, seed: int, data: st.DataObject) -> None:
    names = [f"P{i}" for i in range(count)]
    tournament = Tournament.from_json({"profile": "przasnysz", "seed": seed, "players": names})
    for round_number in range(1, 5):
        tables = tournament.tables(round_number)
        sizes = [len(t.players) for t in tables]
        assert sorted(p for t in tables for p in t.players) == sorted(names)
        assert max(sizes) <= 4 and max(sizes) - min(sizes) <= 1 and len(tables) == -(-count // 4)
        for table in tables:
            for game in (1, 2, 3):
                points = data.draw(st.permutations(range(len(table.players))))  # distinct: one winner a game
                small = {name: p - len(table.players) // 2 for name, p in zip(table.players, points, strict=True)}
                entry = {"round": round_number, "table": table.number, "game": game, "small": small}
                tournament = tournament.with_entry(entry)
    standings = tournament.standings()
    assert sum(s.big_points for s in standings) == 4 * 3 * -(-count // 4)
    assert all(s.games == 12 for s in standings) and tournament.summary()["complete"]
