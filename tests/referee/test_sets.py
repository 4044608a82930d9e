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
    assert len(TileSet.parse("r11 j j").readings()) == 2


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
        ("r7 r6 r5", "descending"),  # only przasnysz accepts descending runs
        ("r5 r7 r8", "5 then 7"),
        ("r5 j r8", "joker(s) between"),
        ("r1 b2 o3", "neither a run nor a group"),
    ],
)
def test_invalid_sets_say_why(tiles: str, reason: str) -> None:
    check = TileSet.parse(tiles).check("pl-championship")
    assert not check.valid and reason in (check.reason or "")


def test_descending_runs_only_in_przasnysz() -> None:
    run = TileSet.parse("r7 r6 j")
    assert run.check("przasnysz").valid and run.check("przasnysz").value == 18
    assert [p for p in PROFILES if run.is_valid(p)] == ["przasnysz"]


def test_descending_reading_can_be_worth_more() -> None:
    # joker joker 5: ascending 3-4-5 (12), descending 7-6-5 (18), group of 5s (15)
    assert TileSet.parse("j j r5").check("przasnysz").value == 18
    assert TileSet.parse("j j r5").check("official").value == 15


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


@given(runs())
def test_a_run_read_backwards_is_valid_only_where_descending_runs_are(tiles: list[Tile]) -> None:
    backwards = TileSet.of(reversed(tiles))
    assert backwards.is_valid("przasnysz")
    if len([t for t in tiles if not t.is_joker]) > 1 and len(tiles) > 4:
        assert not backwards.is_valid("official")


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
