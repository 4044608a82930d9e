"""The draw for the first player (referee/draw.py): highest tile starts; ties, jokers, unsure tiles draw again."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.draw import (
    DRAW_RULES,
    DrawError,
    Drawn,
    DrawRuling,
    Redraw,
    draw_rule,
    rule_draw,
    starting_order,
)
from referee.profiles import PROFILES
from referee.tiles import ALL_LABELS, Tile


@pytest.mark.parametrize(
    ("drawn", "starter", "redraw"),
    [
        # One highest number: it starts, whatever its colour.
        ({0: "red-7", 1: "blue-13", 2: "black-2", 3: "orange-12"}, 1, {}),
        # Two players.
        ({0: "orange-1", 2: "orange-2"}, 2, {}),
        # Tied for the highest: only the tied players draw again.
        ({0: "red-11", 1: "blue-11", 2: "black-3"}, None, {0: Redraw.TIE, 1: Redraw.TIE}),
        # Same number in the same colour (two copies of each tile): still a tie.
        ({0: "red-9", 1: "red-9"}, None, {0: Redraw.TIE, 1: Redraw.TIE}),
        # A joker bears no number: its seat draws again, and nobody starts yet (it could beat the 13... or tie it).
        ({0: "joker", 1: "blue-13", 2: "red-1"}, None, {0: Redraw.JOKER}),
        # An uncertain reading is never a guess, even when it reads highest.
        ({0: "red-13?", 1: "blue-4"}, None, {0: Redraw.UNCERTAIN}),
        # ...nor when it reads lowest: it might be a misread 13.
        ({0: "red-1?", 1: "blue-4"}, None, {0: Redraw.UNCERTAIN}),
        # Something nobody could name in front of a seat.
        ({0: "-?", 1: "blue-4"}, None, {0: Redraw.UNCERTAIN}),
        # No tile in front of a seat; two tiles in front of another.
        ({0: "-", 1: "blue-4+red-9", 2: "black-8"}, None, {0: Redraw.NO_TILE, 1: Redraw.SEVERAL}),
        # Something to draw again and a tie at once: the tile that did not count comes first.
        ({0: "red-12", 1: "blue-12", 2: "joker"}, None, {2: Redraw.JOKER}),
    ],
)
def test_the_highest_number_starts_and_anything_unsure_draws_again(
    drawn: dict[int, str], starter: int | None, redraw: dict[int, Redraw]
) -> None:
    ruling = rule_draw(drawn, "pl-championship")
    assert ruling.starter == starter
    assert dict(ruling.redraw) == redraw
    assert ruling.decided == (starter is not None)


def test_a_play_off_is_between_the_tied_players_only() -> None:
    first = rule_draw({0: "red-11", 1: "blue-11", 2: "black-3", 3: "orange-11"}, "official")
    assert first.next_among == (0, 1, 3)
    # The tied players draw again; seat 2's 3 still lies on the table but is out of the play-off.
    second = rule_draw({0: "red-5", 1: "blue-2", 2: "black-13", 3: "orange-4"}, "official", among=first.next_among)
    assert second.starter == 0
    assert second.among == (0, 1, 3)


def test_after_an_unreadable_tile_everyone_stays_in_the_draw() -> None:
    first = rule_draw({0: "red-11?", 1: "blue-9", 2: "black-3"}, "wejherowo")
    assert first.next_among == (0, 1, 2)
    second = rule_draw({0: "red-8", 1: "blue-9", 2: "black-3"}, "wejherowo", among=first.next_among)
    assert second.starter == 1


def test_a_seat_of_the_draw_with_nothing_read_draws_again() -> None:
    ruling = rule_draw({0: "red-5"}, "house", among=(0, 1, 2))
    assert dict(ruling.redraw) == {1: Redraw.NO_TILE, 2: Redraw.NO_TILE}


def test_every_profile_has_its_seed_s_draw_rule() -> None:
    for profile in PROFILES.values():
        assert profile.seed in DRAW_RULES, profile.name


def test_przasnysz_draws_seats_not_tiles() -> None:
    with pytest.raises(DrawError, match="seat A starts"):
        rule_draw({0: "red-5", 1: "blue-7"}, "przasnysz")


@pytest.mark.parametrize(
    ("profile", "silent_on_ties"),
    [
        ("pl-championship", True),  # seed 004: silent on ties
        ("wejherowo", True),  # seed 000: the same words
        ("official", False),  # seed 003: "dogrywkę między remisującymi graczami"
        ("house", True),  # seed 002: "w sposób losowy", nothing more
    ],
)
def test_the_notes_cite_the_seed_and_say_where_it_is_silent(profile: str, silent_on_ties: bool) -> None:
    notes = rule_draw({0: "red-5", 1: "blue-7"}, profile).notes
    assert PROFILES[profile].seed in notes[0]
    assert any("tie" in note for note in notes[1:]) == silent_on_ties
    assert any("joker" in note for note in notes[1:])  # no seed says what a joker counts
    assert draw_rule(profile).ties_stated == (not silent_on_ties)


@pytest.mark.parametrize(
    "bad",
    [
        {0: "red-5"},  # one player
        {0: "red-5", 1: "purple-3"},  # not a tile
        {0: "red-5", 1: 7},  # not a reading
    ],
)
def test_bad_input_is_a_draw_error(bad: dict[int, object]) -> None:
    with pytest.raises(DrawError):
        rule_draw(bad, "official")  # type: ignore[arg-type]


def test_a_seat_named_twice_is_refused() -> None:
    with pytest.raises(DrawError, match="twice"):
        rule_draw({0: "red-5", 1: "red-6"}, "official", among=(0, 1, 1))


def test_starting_order_goes_round_from_the_starter() -> None:
    assert starting_order((0, 3, 2, 1), 2) == (2, 1, 0, 3)
    with pytest.raises(DrawError):
        starting_order((0, 1), 5)


readings = st.builds(
    Drawn,
    st.lists(st.sampled_from(ALL_LABELS).map(Tile.parse), max_size=2).map(tuple),
    st.booleans(),
)


@given(readings)
def test_drawn_text_round_trips(drawn: Drawn) -> None:
    assert Drawn.parse(str(drawn)) == drawn


@given(st.lists(readings, min_size=2, max_size=6))
def test_a_starter_is_the_one_sure_highest_number(drawn: list[Drawn]) -> None:
    ruling = rule_draw(dict(enumerate(drawn)), "official")
    assert DrawRuling.from_json(ruling.to_json()) == ruling
    if ruling.starter is None:
        assert ruling.redraw
        return
    assert all(d.problem is None for d in drawn)
    numbers = [d.tiles[0].face_value for d in drawn]
    assert numbers.count(max(numbers)) == 1
    assert numbers[ruling.starter] == max(numbers)
