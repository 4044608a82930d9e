import pytest
from hypothesis import given
from hypothesis import strategies as st

from referee.profiles import PROFILES
from referee.sets import SetKind, TileSet
from referee.tiles import COLOURS, JOKER, Tile


@pytest.mark.parametrize(
    ("tiles", "kind", "value"),
    [
        ("r5 r6 r7", SetKind.RUN, 18),
        ("k1 k2 k3 k4 k5 k6 k7 k8 k9 k10 k11 k12 k13", SetKind.RUN, 91),  # the longest run
        ("r5 j r7", SetKind.RUN, 18),  # joker inside a run stands for red 6
        ("j r2 r3", SetKind.RUN, 6),  # joker at the start of a run is red 1
        ("j k12 k13", SetKind.RUN, 36),  # joker before 12-13 is 11 (13 is never followed by 1)
        ("r5 b5 o5", SetKind.GROUP, 15),
        ("r5 b5 o5 k5", SetKind.GROUP, 20),
        ("r5 b5 j j", SetKind.GROUP, 20),  # jokers fill a 4-tile group
        ("b5 j j", SetKind.RUN, 18),  # group of 5s (15) or run 5-6-7 (18): the highest reading counts
        ("j j k13", SetKind.GROUP, 39),  # run 11-12-13 (36) loses to the group of 13s (39)
    ],
)
def test_valid_sets_and_their_highest_valued_reading(tiles: str, kind: SetKind, value: int) -> None:
    check = TileSet.parse(tiles).check()
    assert check.valid and check.kind is kind and check.value == value


def test_ambiguous_set_takes_the_run_when_it_is_worth_more() -> None:
    # red 11, joker, joker: group of 11s = 33, run 11-12-13 = 36
    check = TileSet.parse("r11 j j").check()
    assert (check.kind, check.value) == (SetKind.RUN, 36)
    # group of 11s, run 11-12-13 and run 11-10-9 (descending)
    assert len(TileSet.parse("r11 j j").readings()) == 3


@pytest.mark.parametrize(
    ("tiles", "reason"),
    [
        ("r5 r6", "at least 3"),
        ("j j j", "only jokers"),
        ("r5 b5 r5", "repeats red"),
        ("r5 b5 o5 k5 j", "at most 4"),
        ("k12 k13 j", "pass 13"),  # no wrap from 13 to 1
        ("k13 k1 k2", "not consecutive"),
        ("j j r1 r2", "below 1"),
        ("r5 r7 r8", "5 then 7"),
        ("r8 r7 r5", "7 then 5"),  # laid descending: the break is named that way
        ("o6 o7 o8 o2", "8 then 2"),  # a tile added at the wrong end: the break is where the run stops
        ("r9 r8 r7 r12", "7 then 12"),
        ("r5 j r8", "joker(s) between"),
        ("r1 b2 o3", "neither a run nor a group"),
    ],
)
def test_invalid_sets_say_why(tiles: str, reason: str) -> None:
    check = TileSet.parse(tiles).check("pl-championship")
    assert not check.valid and reason in (check.reason or "")


@pytest.mark.parametrize("tiles", ["r7 r6 j", "r13 r12 r11", "j k12 k11", "o13 j j o10", "b3 b2 b1"])
def test_descending_runs_are_valid_in_every_profile(tiles: str) -> None:
    # RULES.md §2 (corrected 2026-11-23): no seed requires a direction; przasnysz rule 19 allows both.
    run = TileSet.parse(tiles)
    assert [p for p in PROFILES if run.is_valid(p)] == list(PROFILES)
    assert run.check().kind is SetKind.RUN and run.check().reordered is None


def test_a_descending_run_is_worth_its_numbers_jokers_by_position() -> None:
    assert TileSet.parse("r7 r6 j").check().value == 18  # the joker is red-5
    tiles = TileSet.parse("j k12 k11")
    assert tiles.check().reading.joker_meanings(tiles.tiles) == ["black-13"]
    # joker joker 5: ascending 3-4-5 (12), descending 7-6-5 (18), group of 5s (15): the highest reading counts
    assert TileSet.parse("j j r5").check("official").value == 18


@pytest.mark.parametrize(
    ("tiles", "order", "numbers"),
    [
        ("r5 r7 r6", "r5 r6 r7", (5, 6, 7)),  # a zigzag
        ("r12 r13 j", "j r12 r13", (11, 12, 13)),  # 12, 13, 14 passes 13: only joker-12-13 is a run
        ("j b1 b2", "b1 b2 j", (1, 2, 3)),  # 0, 1, 2 is below 1: only 1-2-joker is a run
        ("r13 r11 r12", "r13 r12 r11", (13, 12, 11)),  # laid downwards: put in order downwards
        ("r5 j r6", "r5 r6 j", (5, 6, 7)),
        ("r2 r1 j j", "j j r2 r1", (4, 3, 2, 1)),
        ("k9 k12 k10 k11 k13", "k9 k10 k11 k12 k13", (9, 10, 11, 12, 13)),
    ],
)
def test_a_run_valid_only_in_another_order_carries_that_order(tiles: str, order: str, numbers: tuple) -> None:
    # RULES.md §2: not a fault any seed names; the referee says which order makes it a run (a person asks for it).
    for profile in PROFILES:
        check = TileSet.parse(tiles).check(profile)
        assert not check.valid and check.out_of_order
        assert check.reordered is not None and check.reordered.tiles == TileSet.parse(order).tiles
        assert check.reordered.reading.numbers == numbers and check.reordered.reading.kind is SetKind.RUN
        assert TileSet(check.reordered.tiles).check(profile).valid
        assert f"put in order ({TileSet.parse(order)})" in (check.reason or "")
        assert check.to_dict()["order"] == [str(t) for t in TileSet.parse(order)]


@pytest.mark.parametrize(
    "tiles",
    ["r5 r5 r6", "k13 k1 k2", "r5 r7 r9", "r5 j r8", "r5 b6 r7", "r5 b5 r5", "r5 r6", "j j j", "r5 b5 o5 k5 j"],
)
def test_sets_no_order_makes_valid_have_no_order(tiles: str) -> None:
    check = TileSet.parse(tiles).check()
    assert not check.valid and check.reordered is None and check.to_dict()["order"] is None


def test_joker_meanings() -> None:
    tiles = TileSet.parse("r5 j r7")
    assert tiles.check().reading.joker_meanings(tiles.tiles) == ["red-6"]
    group = TileSet.parse("r5 b5 j")
    assert group.check().reading.joker_meanings(group.tiles) == ["5 (black or orange)"]


@st.composite
def runs(draw: st.DrawFn) -> list[Tile]:
    colour = draw(st.sampled_from(COLOURS))
    start = draw(st.integers(1, 11))
    length = draw(st.integers(3, 14 - start))
    tiles = [Tile(colour, n) for n in range(start, start + length)]
    for index in draw(st.sets(st.integers(0, length - 1), max_size=2)):
        tiles[index] = JOKER
    if all(t.is_joker for t in tiles):
        tiles[0] = Tile(colour, start)
    return tiles


@given(runs())
def test_any_run_with_jokers_is_valid_and_worth_its_numbers(tiles: list[Tile]) -> None:
    check = TileSet.of(tiles).check()
    real = next((i, t.number) for i, t in enumerate(tiles) if not t.is_joker)
    start = real[1] - real[0]
    assert check.valid
    assert check.value >= sum(range(start, start + len(tiles)))


@given(runs(), st.sampled_from(sorted(PROFILES)))
def test_any_valid_run_reversed_is_valid_and_worth_as_much(tiles: list[Tile], profile: str) -> None:
    forwards, backwards = TileSet.of(tiles).check(profile), TileSet.of(reversed(tiles)).check(profile)
    assert forwards.valid and backwards.valid and backwards.value == forwards.value


@given(runs(), st.randoms(use_true_random=False))
def test_any_order_of_a_runs_tiles_is_valid_or_carries_a_valid_order(tiles: list[Tile], random) -> None:
    shuffled = list(tiles)
    random.shuffle(shuffled)
    check = TileSet.of(shuffled).check()
    if check.valid:
        assert check.reordered is None
        return
    assert check.reordered is not None
    assert sorted(check.reordered.tiles) == sorted(shuffled)  # the same tiles, only moved
    in_order = TileSet(check.reordered.tiles).check()
    assert in_order.valid and in_order.kind is SetKind.RUN and in_order.value == check.reordered.reading.value


@given(st.lists(st.sampled_from(COLOURS), min_size=3, max_size=4, unique=True), st.integers(1, 13), st.data())
def test_groups_with_jokers(colours: list, number: int, data: st.DataObject) -> None:
    tiles = [Tile(c, number) for c in colours]
    for index in data.draw(st.sets(st.integers(0, len(tiles) - 1), max_size=len(tiles) - 1)):
        tiles[index] = JOKER
    check = TileSet.of(tiles).check()
    assert check.valid and check.value >= number * len(tiles)


@given(st.lists(st.sampled_from([*COLOURS]), min_size=1))
def test_text_round_trip(colours: list) -> None:
    tile_set = TileSet.of([Tile(c, 1 + i % 13) for i, c in enumerate(colours)] + [JOKER])
    assert TileSet.parse(str(tile_set)) == tile_set
    assert eval(repr(tile_set)) == tile_set
