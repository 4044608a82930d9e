"""Seats around the table as the camera sees them: 2-4 players one to an edge (as logs have always numbered them),
5 and 6 with two players on a long edge; arms reaching in name the nearest seat on their edge."""

from __future__ import annotations

import math

import pytest

from referee.profiles import PROFILES, PlayDirection
from vision.runtime.seats import (
    MIDDLE,
    PLAYERS,
    SEATS,
    Edge,
    Orientation,
    Seat,
    seat_at,
    seat_numbered,
    seating,
    turn_order,
)  # fmt: skip


@pytest.mark.parametrize(
    ("players", "numbers"),
    [
        (2, (0, 2)),  # facing each other, bottom and top
        (3, (0, 1, 2)),
        (4, (0, 1, 2, 3)),  # the numbers every game log before five players wrote
    ],
)
def test_two_to_four_players_sit_in_the_middle_of_an_edge_as_before(players: int, numbers: tuple[int, ...]) -> None:
    seats = seating(players)
    assert tuple(seat.number for seat in seats) == numbers
    assert all(seat.along == MIDDLE and seat.edge == seat.number for seat in seats)
    assert [seat.name for seat in seats] == [("bottom", "right", "top", "left")[n] for n in numbers]


@pytest.mark.parametrize("players", [5, 6])
def test_five_and_six_players_have_distinct_seats_on_the_tables_edges(players: int) -> None:
    seats = seating(players)
    assert len(seats) == players
    assert len({(seat.edge, seat.along) for seat in seats}) == players  # no two players in one place
    assert len({seat.name for seat in seats}) == players
    assert all(0.0 < seat.along < 1.0 for seat in seats)  # on an edge, short of its corners
    assert all(SEATS[seat.number] == seat for seat in seats)  # a number a log writes names the seat back


def test_five_players_share_the_near_long_edge_six_share_both_long_edges() -> None:
    per_edge = {n: [sum(s.edge is edge for s in seating(n)) for edge in Edge] for n in (5, 6)}
    assert per_edge[5] == [2, 1, 1, 1]  # bottom, right, top, left
    assert per_edge[6] == [2, 1, 2, 1]
    assert [s.name for s in seating(6)] == ["bottom left", "bottom right", "right", "top right", "top left", "left"]


def _angle(seat: Seat) -> float:
    """The seat's direction from the table's centre in the picture, counter-clockwise from the right (y up)."""
    offset = 2 * seat.along - 1  # -1 to 1 as the picture runs: left to right, top to bottom
    x, y = {Edge.BOTTOM: (offset, -1.0), Edge.RIGHT: (1.0, -offset), Edge.TOP: (offset, 1.0),
            Edge.LEFT: (-1.0, -offset)}[seat.edge]  # fmt: skip
    return math.atan2(y, x) % (2 * math.pi)


@pytest.mark.parametrize("players", PLAYERS)
def test_turns_go_round_the_table_the_same_way_at_every_size(players: int) -> None:
    """Bottom (left to right), right, top (right to left), left: counter-clockwise in the picture."""
    turns = [_angle(seat) for seat in seating(players)]
    from_first = [(turn - turns[0]) % (2 * math.pi) for turn in turns]
    assert from_first == sorted(from_first) and len(set(from_first)) == players


def test_every_profile_can_be_seated() -> None:
    assert max(p.max_players for p in PROFILES.values()) <= PLAYERS[-1] and PLAYERS[0] == 2


@pytest.mark.parametrize(
    ("players", "edge", "along", "expected"),
    [
        (6, Edge.BOTTOM, 0.1, 4),  # the left one of the two at the bottom
        (6, Edge.BOTTOM, 0.45, 4),
        (6, Edge.BOTTOM, 0.6, 5),
        (6, Edge.TOP, 0.9, 6),
        (6, Edge.TOP, 0.2, 7),
        (6, Edge.LEFT, 0.9, 3),  # one player on a short edge: wherever the arm comes in
        (5, Edge.TOP, 0.1, 2),
        (5, Edge.BOTTOM, 0.8, 5),
        (2, Edge.RIGHT, 0.5, 1),  # nobody sits there: the edge's middle seat, nobody's (as before)
        (4, Edge.BOTTOM, 0.05, 0),
        (4, Edge.TOP, None, 2),
    ],
)
def test_an_arm_names_the_nearest_seat_on_its_edge(
    players: int, edge: Edge, along: float | None, expected: int
) -> None:
    assert seat_at(players, edge, along).number == expected


@pytest.mark.parametrize("bad", [1, 7, 0, "4", None, 4.0, True])
def test_a_table_size_with_no_seating_is_a_value_error(bad: object) -> None:
    with pytest.raises(ValueError, match="a table seats 2 to 6 players"):
        seating(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("number", "name"), [(0, "bottom"), (3, "left"), (5, "bottom right"), (7, "top left")])
def test_a_logged_seat_number_names_its_seat(number: int, name: str) -> None:
    seat = seat_numbered(number)
    assert seat is not None and seat.name == name


@pytest.mark.parametrize("bad", [-1, 8, 99, "2", None, True, 2.0])
def test_a_number_that_is_no_seat_names_none(bad: object) -> None:
    assert seat_numbered(bad) is None


# -- the way play goes (issue 17): the profile's direction through the camera's orientation ------------------


@pytest.mark.parametrize("players", PLAYERS)
def test_the_default_orientation_with_no_direction_is_the_seating_every_log_has(players: int) -> None:
    assert turn_order(players) == seating(players)
    assert turn_order(players, None, Orientation()) == seating(players)


@pytest.mark.parametrize("players", PLAYERS)
def test_play_to_the_right_seen_from_above_is_the_old_order_play_to_the_left_its_reverse(players: int) -> None:
    # Not mirrored, the picture is the view from above: counter-clockwise in it is "to the right" (seed 002).
    assert turn_order(players, PlayDirection.COUNTERCLOCKWISE) == seating(players)
    clockwise = turn_order(players, "clockwise")
    assert clockwise[0] == seating(players)[0] if players <= 4 else clockwise[0].edge is Edge.BOTTOM
    assert set(clockwise) == set(seating(players))
    turns = [_angle(seat) for seat in clockwise]
    from_first = [(turns[0] - turn) % (2 * math.pi) for turn in turns]  # clockwise: the angle goes down
    assert from_first == sorted(from_first) and len(set(from_first)) == players


@pytest.mark.parametrize(
    ("players", "direction", "first", "mirrored", "names"),
    [
        (4, "clockwise", "bottom", False, ["bottom", "left", "top", "right"]),  # seeds 004, 000, 003
        (4, "counterclockwise", "bottom", False, ["bottom", "right", "top", "left"]),  # seed 002: to the right
        (4, "clockwise", "bottom", True, ["bottom", "right", "top", "left"]),  # a mirrored picture turns it round
        (4, "clockwise", "top", False, ["top", "right", "bottom", "left"]),  # player 1 across the table
        (3, "clockwise", "bottom", False, ["bottom", "top", "right"]),
        (2, "clockwise", "right", False, ["bottom", "top"]),  # nobody on the right: the next seat clockwise
        (6, "clockwise", "bottom", False, ["bottom right", "bottom left", "left", "top left", "top right", "right"]),
        (5, "counterclockwise", "left", False, ["left", "bottom left", "bottom right", "right", "top"]),
    ],
)
def test_turn_order_by_direction_and_orientation(
    players: int, direction: str, first: str, mirrored: bool, names: list[str]
) -> None:
    seats = turn_order(players, direction, Orientation.parse(first, mirrored))
    assert [seat.name for seat in seats] == names


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_profile_has_a_turn_order_at_every_size_it_is_played_by(profile: str) -> None:
    rules = PROFILES[profile]
    for players in range(2, rules.max_players + 1):
        seats = turn_order(players, rules.direction)
        assert sorted(s.number for s in seats) == sorted(s.number for s in seating(players))


@pytest.mark.parametrize(("first", "mirrored"), [("middle", False), ("", False), ("left", "yes")])
def test_an_orientation_that_names_no_edge_is_a_value_error(first: str, mirrored: object) -> None:
    with pytest.raises(ValueError, match=r"first player.s side|mirrored is true or false"):
        Orientation.parse(first, mirrored)  # type: ignore[arg-type]
