import pytest

from referee.profiles import PROFILES, ProfileError, get_profile

SEEDS = "../shared/seeds"


def test_all_profiles_of_rules_md_are_registered() -> None:
    assert set(PROFILES) == {
        "pl-championship", "wejherowo", "przasnysz", "official", "official-6p", "official-free-opening",
        "official-6p-free-opening", "house"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "threshold", "limit", "penalty", "tiles"),
    [
        ("pl-championship", 30, 60, 1, 106),
        ("wejherowo", 30, 60, 1, 106),
        ("przasnysz", 30, 40, 1, 106),  # rule 12: 40 s per move
        ("official", 30, 60, 1, 106),
        ("official-6p", 30, 60, 1, 160),  # three copies, four jokers
        ("official-free-opening", 0, 60, 1, 106),
        ("official-6p-free-opening", 0, 60, 1, 160),  # OTWARCIE: no threshold recommended at 5-6 players
        ("house", 30, 120, 3, 106),  # "np. 2 minuty", three penalty tiles
    ],
)
def test_profile_parameters_follow_the_seeds(name: str, threshold: int, limit: int, penalty: int, tiles: int) -> None:
    profile = get_profile(name)
    assert (profile.opening_threshold, profile.time_limit_s, profile.penalty_tiles, profile.tile_count) == (
        threshold, limit, penalty, tiles
    )  # fmt: skip


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(ProfileError, match=r"unknown profile 'chess'.*pl-championship"):
        get_profile("chess")


def test_every_profile_names_an_existing_seed() -> None:
    from pathlib import Path

    shared = Path(__file__).resolve().parents[3] / "shared"
    if not shared.is_dir():
        pytest.skip("../shared is not beside the project")
    for profile in PROFILES.values():
        assert (shared / profile.seed).is_file(), profile.seed


def test_describe_is_json_friendly() -> None:
    import json
    from dataclasses import fields

    from referee.profiles import Profile

    for profile in PROFILES.values():
        described = json.loads(json.dumps(profile.describe()))
        assert set(described) == {f.name for f in fields(Profile)}, profile.name  # every parameter, no other key
        assert described["name"] == profile.name and described["big_points"] == profile.big_points.value


@pytest.mark.parametrize(
    ("name", "direction"),
    [
        ("pl-championship", "clockwise"),  # "w kolejności zgodnej z ruchem wskazówek zegara"
        ("wejherowo", "clockwise"),
        ("official", "clockwise"),  # the next game starts "po lewej stronie": play passes to the left
        ("house", "counterclockwise"),  # "kolejna jest osoba, która siedzi po jego prawej stronie"
    ],
)
def test_play_direction_follows_the_seed(name: str, direction: str) -> None:
    profile = get_profile(name)
    assert profile.direction.value == direction and profile.direction_rule


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("pl-championship", "LIMIT CZASU"),  # a manipulation not finished when the time runs out
        ("wejherowo", "LIMIT CZASU"),
        ("przasnysz", "rules 14, 15, 17 and 20"),
        ("official", "LIMIT CZASOWY"),  # "Jeśli czas został przekroczony": any overrun
        ("house", "time paragraph"),
    ],
)
def test_every_profile_names_the_seed_rule_of_its_time_limit(name: str, rule: str) -> None:
    source = get_profile(name).source("timeout")
    assert source is not None and source.rule == rule and source.words


def test_every_players_fault_has_a_seed_rule_in_every_profile() -> None:
    # The engine reverts only what a seed names; every code a player can be at fault for is named by every seed.
    faults = {"invalid-set", "tile-returned-to-rack", "joker-kept", "no-tile-from-rack", "opening-below-threshold",
              "opening-manipulation", "timeout"}  # fmt: skip
    for profile in PROFILES.values():
        assert set(profile.rules) == faults, profile.name
