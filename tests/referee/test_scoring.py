from fractions import Fraction
from typing import Any

import pytest

from referee.scoring import Game, PlayerScore, ScoreError, score_game, tournament_sheet


def score(profile: str, ending: str, *players: dict[str, Any]) -> dict[str, tuple[Any, int]]:
    game = Game.from_json({"profile": profile, "ending": ending, "players": list(players)})
    return {s.name: (s.small_points, s.big_points) for s in score_game(game)}


def test_official_pool_exhausted_example_from_the_seed() -> None:
    # A 1 point left (winner), B 5, C 10, D 15 -> B -4, C -9, D -14, A +27
    result = score(
        "official",
        "pool-exhausted",
        {"name": "A", "rack": ["r1"]},
        {"name": "B", "rack": ["b5"]},
        {"name": "C", "rack": ["k4", "k6"]},
        {"name": "D", "rack": ["o13", "o2"]},
    )
    assert result == {"A": (27, 1), "B": (-4, 0), "C": (-9, 0), "D": (-14, 0)}


def test_official_score_sheet_example_ranks_by_big_then_small_points() -> None:
    # The seed's 4-game sheet: C wins with 2 big points; D (+33) before A (-24) on small points.
    sheet_rows = {
        "A": [(1, 24), (0, -6), (0, -32), (0, -10)],
        "B": [(0, -5), (0, -11), (0, -13), (0, -25)],
        "C": [(0, -16), (1, 22), (0, -2), (1, 41)],
        "D": [(0, -3), (0, -5), (1, 47), (0, -6)],
    }
    games = [
        [PlayerScore(name, 0, rows[g][1], rows[g][0], 0, rows[g][0] == 1) for name, rows in sheet_rows.items()]
        for g in range(4)
    ]
    standings = {s.name: (s.rank, s.big_points, s.small_points) for s in tournament_sheet(games)}
    assert standings == {"C": (1, 2, 45), "D": (2, 1, 33), "A": (3, 1, -24), "B": (4, 0, -54)}


def test_championship_out_with_joker_on_a_rack_and_places() -> None:
    result = score(
        "pl-championship",
        "out",
        {"name": "A", "rack": []},
        {"name": "B", "rack": ["r5", "joker"]},  # 5 + 50 for the joker
        {"name": "C", "rack": ["k9"]},
        {"name": "D", "rack": ["b2"]},
    )
    assert result == {"A": (66, 4), "B": (-55, 0), "C": (-9, 1), "D": (-2, 2)}


def test_championship_ties_get_the_better_place() -> None:
    # Seed: two players on -9 share 2nd place and both get 2 big points.
    result = score(
        "pl-championship",
        "out",
        {"name": "A", "rack": []},
        {"name": "B", "rack": ["r9"]},
        {"name": "C", "rack": ["b9"]},
        {"name": "D", "rack": ["k12"]},
    )
    assert {name: big for name, (_, big) in result.items()} == {"A": 4, "B": 2, "C": 2, "D": 0}


def test_championship_three_player_table() -> None:
    result = score(
        "wejherowo", "out", {"name": "A", "rack": []}, {"name": "B", "rack": ["r3"]}, {"name": "C", "rack": ["r4"]}
    )
    assert result == {"A": (7, 4), "B": (-3, 2), "C": (-4, 0)}


def test_championship_pool_exhausted_difference_to_the_winner() -> None:
    result = score(
        "pl-championship",
        "pool-exhausted",
        {"name": "A", "rack": ["r3"]},
        {"name": "B", "rack": ["r10"]},
        {"name": "C", "rack": ["k13", "k12"]},
    )
    assert result == {"A": (29, 4), "B": (-7, 2), "C": (-22, 0)}


def test_przasnysz_tie_for_the_win_gives_each_one_big_point() -> None:
    result = score(
        "przasnysz",
        "pool-exhausted",
        {"name": "A", "rack": ["r3"]},
        {"name": "B", "rack": ["b3"]},
        {"name": "C", "rack": ["k10"]},
    )
    assert result == {"A": (Fraction(7, 2), 1), "B": (Fraction(7, 2), 1), "C": (-7, 0)}


NEVER_OPENED_CAN_OPEN = ["k10", "k11", "k12", "r1"]  # 33 points in one run
NEVER_OPENED_CANNOT_OPEN = ["k1", "k2", "k3", "r9", "b12", "o13", "o11"]  # best is 6 points


@pytest.mark.parametrize(
    ("player", "small"),
    [
        ({"rack": NEVER_OPENED_CANNOT_OPEN, "opened": False}, -100),  # the rack never allowed an opening
        ({"rack": NEVER_OPENED_CAN_OPEN, "opened": False}, -200),  # it did, and the player did not open
        ({"rack": ["k10", "k11", "joker", "r1"], "opened": False}, -200),  # jokers count for the opening
        ({"rack": NEVER_OPENED_CAN_OPEN, "opened": False, "announced_opening": True}, -100),  # "next round"
        # the announcement does not help when the rack could open before the last draw
        ({"rack": NEVER_OPENED_CAN_OPEN, "opened": False, "announced_opening": True, "drawn_last_round": ["r1"]}, -200),
        # ...and does when the tile drawn last round made the opening
        (
            {"rack": NEVER_OPENED_CAN_OPEN, "opened": False, "announced_opening": True, "drawn_last_round": ["k12"]},
            -100,
        ),
        ({"rack": NEVER_OPENED_CAN_OPEN, "opened": True}, -34),  # opened players count their rack
    ],
)
def test_never_opened_penalties(player: dict[str, Any], small: int) -> None:
    result = score("pl-championship", "out", {"name": "W", "rack": []}, {"name": "P", **player})
    assert result["P"][0] == small
    assert result["W"][0] == -small


def test_free_opening_profile_needs_only_one_valid_set_to_have_been_able_to_open() -> None:
    result = score(
        "official-free-opening",
        "out",
        {"name": "W", "rack": []},
        {"name": "P", "rack": ["k1", "k2", "k3"], "opened": False},
    )
    assert result["P"][0] == -200


def test_house_rules_winner_keeps_jokers_for_30_each_and_no_never_opened_rule() -> None:
    # Seed 002: a winner who laid everything but jokers scores 30 for each; it gives a loser's joker no value
    # (issue 17: the -30 charged before is in no seed), and has no -100/-200 rule.
    game = Game.from_json({"profile": "house", "ending": "out", "players": [
        {"name": "W", "rack": ["joker"]},
        {"name": "P", "rack": ["k10", "k11", "k12", "joker"], "opened": False},
    ]})  # fmt: skip
    scores = {s.name: s for s in score_game(game)}
    assert {n: (s.small_points, s.big_points) for n, s in scores.items()} == {"W": (63, 1), "P": (-33, 0)}
    assert "count 0" in scores["P"].note and "no value" in scores["P"].note
    assert "+30 for 1 joker" in scores["W"].note


# Every seed ties the -100/-200 to "another player finishing the game" (gdy inny z graczy skończy grę).
@pytest.mark.parametrize("profile", ["pl-championship", "wejherowo", "przasnysz", "official"])
def test_an_exhausted_pool_does_not_charge_the_never_opened_penalty_and_says_so(profile: str) -> None:
    game = Game.from_json({"profile": profile, "ending": "pool-exhausted", "players": [
        {"name": "A", "rack": ["r1"]},
        {"name": "N", "rack": ["k10", "k11", "k12", "b1"], "opened": False},  # could have opened: 33
        {"name": "B", "rack": ["b5"]},
    ]})  # fmt: skip
    scores = {s.name: s for s in score_game(game)}
    assert scores["N"].small_points == -(33 + 1 - 1)
    assert "never opened; not -100/-200" in scores["N"].note and "pool ran out" in scores["N"].note
    assert scores["A"].small_points == 33 + 4 and scores["B"].note == ""


def test_a_profile_may_charge_the_never_opened_penalty_on_an_exhausted_pool() -> None:
    from dataclasses import replace

    from referee.profiles import get_profile

    strict = replace(get_profile("official"), never_opened_on_pool_end=True)
    game = Game.from_json({"ending": "pool-exhausted", "players": [
        {"name": "A", "rack": ["r1"]}, {"name": "N", "rack": ["k10", "k11", "k12"], "opened": False},
    ]}, profile=strict)  # fmt: skip
    scores = {s.name: s.small_points for s in score_game(game)}
    assert scores == {"A": 200, "N": -200}


def test_the_declaration_is_an_event_of_the_game_file_and_spares_the_200() -> None:
    players = [{"name": "W", "rack": []}, {"name": "N", "rack": ["k10", "k11", "k12"], "opened": False}]
    plain = score_game(Game.from_json({"profile": "official", "ending": "out", "players": players}))
    declared = Game.from_json({"profile": "official", "ending": "out", "players": players,
                               "events": [{"event": "announced-opening", "player": "N", "round": 9},
                                          {"event": "re-deal-request", "player": "W"}]})  # fmt: skip
    scored = {s.name: s for s in score_game(declared)}
    assert {s.name: s.small_points for s in plain}["N"] == -200
    assert scored["N"].small_points == -100 and scored["N"].announced_opening
    assert scored["N"].to_dict()["announced_opening"] is True
    same = Game.from_json({"profile": "official", "ending": "out", "players": players}).with_announcements(["N"])
    assert [s.small_points for s in score_game(same)] == [s.small_points for s in scored.values()]
    # As a game log writes it: the player by number (0-based), N being the second.
    numbered = Game.from_json({"profile": "official", "ending": "out", "players": players,
                               "events": [{"event": "announced-opening", "player": 1}]})  # fmt: skip
    assert [s.small_points for s in score_game(numbered)] == [s.small_points for s in scored.values()]


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ({"event": "announced-opening"}, "must be a list"),
        ([{"event": "announced-opening", "player": "X"}], "'X' is not one of the players"),
        ([{"event": "announced-opening", "player": 2}], "2 is not one of the players"),
        (["announced-opening"], r"events\[0\]: an event is an object"),
    ],
)
def test_bad_events_are_score_errors(events: Any, message: str) -> None:
    with pytest.raises(ScoreError, match=message):
        Game.from_json({"profile": "official", "ending": "out", "events": events,
                        "players": [{"name": "W", "rack": []}, {"name": "N", "rack": ["k1"]}]})  # fmt: skip


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ([{"name": "A", "rack": ["r1"]}, {"name": "B", "rack": ["r2"]}], "exactly one player with an empty rack"),
        ([{"name": "A", "rack": []}, {"name": "B", "rack": ["red-14"]}], "players[1].rack: unknown tile label"),
        ([{"name": "A", "rack": []}, {"name": "A", "rack": []}], "distinct"),
        ([{"name": "A", "rack": []}], "2 to 6 players"),
        ([{"name": "A", "rack": []}, {"name": "B", "rack": [], "colour": "red"}], "unknown field"),
        ([{"name": "A", "rack": []}, {"name": "B", "rack": [], "opened": "yes"}], "true or false"),
    ],
)
def test_bad_games_are_score_errors(players: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ScoreError, match=message.replace("[", r"\[").replace("]", r"\]")):
        score_game(Game.from_json({"profile": "official", "ending": "out", "players": players}))


@pytest.mark.parametrize(
    ("profile", "players", "message"),
    [
        ("official", [{"name": "A", "rack": []}, {"name": "B", "rack": ["r5", "r5", "r5"]}], "3 copies of red-5"),
        ("official", [{"name": "A", "rack": ["r5"]}, {"name": "B", "rack": ["r5", "r5"]}], r"racks \(A, B\)"),
        ("official", [{"name": "A", "rack": []}, {"name": "B", "rack": ["j", "j", "j"]}], "3 copies of joker.* has 2"),
        ("official-6p", [{"name": "A", "rack": []}, {"name": "B", "rack": ["r5"] * 4}], "4 copies.* has 3"),
        ("official-6p", [{"name": "A", "rack": []}, {"name": "B", "rack": ["j"] * 5}], "5 copies of joker.* has 4"),
    ],
)
def test_more_copies_than_the_set_has_are_score_errors(profile: str, players: list, message: str) -> None:
    with pytest.raises(ScoreError, match=message):
        Game.from_json({"profile": profile, "ending": "out", "players": players})


def test_the_most_copies_the_set_has_are_scored() -> None:
    players = [{"name": "A", "rack": []}, {"name": "B", "rack": ["r5", "r5", "j", "j"]}]
    assert [s.small_points for s in score_game(Game.from_json({"profile": "official", "players": players}))] == [
        110,
        -110,
    ]


@pytest.mark.parametrize("profile", [[], {}, 5, True, ["official"], ""])
def test_a_profile_that_is_not_a_name_is_a_score_error(profile: Any) -> None:
    players = [{"name": "A", "rack": []}, {"name": "B", "rack": []}]
    with pytest.raises(ScoreError, match="profile"):
        Game.from_json({"profile": profile, "players": players})


def test_too_many_players_for_the_profile() -> None:
    players = [{"name": str(i), "rack": []} for i in range(5)]
    with pytest.raises(ScoreError, match="at most 4"):
        Game.from_json({"profile": "official", "players": players})
    assert Game.from_json({"profile": "official-6p", "players": players}).profile.name == "official-6p"
