"""The solver against a brute force (small inputs), the ILP reference and hand-written traps."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee import solver
from referee.bench import random_table
from referee.ilp import ilp_arrange_feasible, ilp_best_play_value, ilp_can_open, ilp_max_meld
from referee.profiles import get_profile
from referee.sets import check_set
from referee.solver import Arrangement, arrange, best_play, can_open, max_meld
from referee.tiles import COLOURS, JOKER, MAX_NUMBER, Tile, parse_tiles

PROFILE = get_profile("pl-championship")
_QUIET = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
FAST = settings(max_examples=120, deadline=None, suppress_health_check=_QUIET)
SLOW = settings(max_examples=30, deadline=None, suppress_health_check=_QUIET)


# --------------------------------------------------------------------------- brute force


def _candidate_sets(tiles: Counter[Tile]) -> list[tuple[tuple[Tile, ...], int]]:
    """Every valid set (as laid out) that fits in ``tiles``, with its value per ``check_set``."""
    jokers = tiles[JOKER]
    found: dict[tuple[Tile, ...], int] = {}

    def fits(seq: Sequence[Tile]) -> bool:
        return all(tiles[t] >= n for t, n in Counter(seq).items())

    for colour in COLOURS:
        for first in range(1, MAX_NUMBER + 1):
            for length in range(3, MAX_NUMBER - first + 2):
                if length > sum(tiles.values()):
                    break
                numbers = range(first, first + length)
                for mask in range(1 << length):
                    seq = tuple(JOKER if mask >> i & 1 else Tile(colour, n) for i, n in enumerate(numbers))
                    if bin(mask).count("1") > jokers or not fits(seq):
                        continue
                    check = check_set(seq, PROFILE)
                    if check.valid:
                        found[seq] = check.value
    for number in range(1, MAX_NUMBER + 1):
        for size in range(1, 5):
            for colours in combinations(COLOURS, size):
                for k in range(0, 5 - size):
                    seq = tuple(Tile(c, number) for c in colours) + (JOKER,) * k
                    if len(seq) >= 3 and fits(seq):
                        check = check_set(seq, PROFILE)
                        if check.valid:
                            found[seq] = check.value
    return list(found.items())


def brute_force(mandatory: Iterable[Tile], optional: Iterable[Tile] = ()) -> int | None:
    """Max value of disjoint valid sets using every mandatory tile; None if there is no such layout."""
    mand, opt = Counter(mandatory), Counter(optional)
    candidates = _candidate_sets(mand + opt)

    @cache
    def best(mand_key: frozenset, opt_key: frozenset) -> int | None:
        m, o = Counter(dict(mand_key)), Counter(dict(opt_key))
        rest = m + o
        if not rest:
            return 0
        tile = min(rest, key=lambda t: t.sort_key)
        results = []
        if m[tile] == 0:  # an optional tile may stay unused
            o2 = o.copy()
            o2[tile] -= 1
            results.append(best(_key(m), _key(o2)))
        for seq, value in candidates:
            if tile not in seq:
                continue
            need = Counter(seq)
            if any(rest[t] < n for t, n in need.items()):
                continue
            m2, o2 = m.copy(), o.copy()
            for t, n in need.items():  # mandatory copies first: identical tiles are interchangeable
                from_m = min(m2[t], n)
                m2[t] -= from_m
                o2[t] -= n - from_m
            sub = best(_key(m2), _key(o2))
            if sub is not None:
                results.append(sub + value)
        results = [r for r in results if r is not None]
        return max(results) if results else None

    return best(_key(mand), _key(opt))


def _key(counts: Counter[Tile]) -> frozenset:
    return frozenset((t, n) for t, n in counts.items() if n > 0)


# --------------------------------------------------------------------------- strategies


@st.composite
def small_tiles(draw: st.DrawFn, max_size: int = 9) -> list[Tile]:
    """Dense small multisets: a few neighbouring numbers, so that sets actually form."""
    low = draw(st.integers(1, MAX_NUMBER - 3))
    numbers = st.integers(low, min(MAX_NUMBER, low + draw(st.integers(2, 5))))
    colours = st.sampled_from(COLOURS[: draw(st.integers(1, 4))])
    tile = st.builds(Tile, colours, numbers)
    size = draw(st.integers(0, max_size))
    jokers = draw(st.integers(0, min(3, size)))
    tiles = draw(st.lists(tile, min_size=size - jokers, max_size=size - jokers))
    capped = [t for t, n in Counter(tiles).items() for _ in range(min(n, 3))]
    return capped + [JOKER] * jokers


def _valid_union(seed: int, size: int) -> tuple[list[Tile], list[Tile]]:
    sets, pool = random_table(random.Random(seed), size)
    tiles = [t for s in sets for t in s.tiles]
    random.Random(seed).shuffle(tiles)
    return tiles, pool


def assert_partition(result: Arrangement, given: Iterable[Tile]) -> None:
    """Every set is valid, the value is theirs, and sets + unused are exactly the input."""
    for s in result.sets:
        assert check_set(s.tiles, PROFILE).valid, str(s)
    assert result.value == sum(check_set(s.tiles, PROFILE).value for s in result.sets)
    used = Counter(t for s in result.sets for t in s.tiles)
    assert used + Counter(result.unused) == Counter(given)
    assert list(result.unused) == sorted(result.unused)


# --------------------------------------------------------------------------- properties


@pytest.fixture(params=["downwards", "upwards"])
def direction(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the solver sweeping 13..1 only, or 1..13 only (the mirrored search).

    Normally both directions take turns and the first to finish answers, so small inputs would
    rarely exercise the mirrored one: here both turns use the same direction.
    """
    upwards = request.param == "upwards"

    class OneWay(solver._Search):
        def __init__(self, mandatory: Counter, optional: Counter, exact: bool, mirrored: bool = False) -> None:
            super().__init__(mandatory, optional, exact, upwards)

    monkeypatch.setattr(solver, "_Search", OneWay)
    return request.param


@FAST
@given(tiles=small_tiles())
def test_max_meld_matches_brute_force(direction: str, tiles: list[Tile]) -> None:
    result = max_meld(tiles)
    assert_partition(result, tiles)
    assert result.value == brute_force((), tiles)


@FAST
@given(tiles=small_tiles())
def test_arrange_matches_brute_force(direction: str, tiles: list[Tile]) -> None:
    result = arrange(tiles)
    assert (result is not None) == (brute_force(tiles) is not None)
    if result is not None:
        assert_partition(result, tiles)
        assert result.unused == ()


@FAST
@given(table=small_tiles(max_size=6), rack=small_tiles(max_size=4))
def test_best_play_matches_brute_force(direction: str, table: list[Tile], rack: list[Tile]) -> None:
    result = best_play(table, rack)
    expected = brute_force(table, rack)
    assert (None if result is None else result.value) == expected
    if result is not None:
        assert_partition(result, table + rack)
        assert not Counter(result.unused) - Counter(rack), "every table tile is used"


@FAST
@given(small_tiles(), st.sampled_from([0, 1, 10, 20, 30, 40]))
def test_can_open_matches_max_meld(tiles: list[Tile], threshold: int) -> None:
    assert can_open(tiles, threshold) == (max_meld(tiles).value >= max(threshold, 1))


@SLOW
@given(small_tiles(), st.sampled_from([0, 20, 30]))
def test_solver_matches_ilp_small(tiles: list[Tile], threshold: int) -> None:
    assert max_meld(tiles).value == ilp_max_meld(tiles)
    assert can_open(tiles, threshold) == ilp_can_open(tiles, threshold)
    assert (arrange(tiles) is not None) == ilp_arrange_feasible(tiles)


@SLOW
@given(st.integers(0, 10**6), st.integers(0, 3))
def test_solver_matches_ilp_on_racks(seed: int, jokers: int) -> None:
    """Racks of 14-30 tiles from the 6-player set (3 copies, up to 4 jokers)."""
    rng = random.Random(seed)
    deck = [Tile(c, n) for c in COLOURS for n in range(1, MAX_NUMBER + 1) for _ in range(3)]
    rng.shuffle(deck)
    rack = deck[: rng.randint(14, 30)] + [JOKER] * jokers
    result = max_meld(rack)
    assert_partition(result, rack)
    assert result.value == ilp_max_meld(rack)
    assert can_open(rack, 30) == (result.value >= 30)


@SLOW
@given(st.integers(0, 10**6), st.sampled_from([20, 40, 60]), st.integers(0, 3))
def test_union_of_valid_sets_is_arrangeable(seed: int, size: int, extra: int) -> None:
    tiles, pool = _valid_union(seed, size)
    result = arrange(tiles)
    assert result is not None
    assert_partition(result, tiles)
    # With a few extra tiles the answer may go either way; the ILP decides.
    more = tiles + pool[:extra]
    got = arrange(more)
    assert (got is not None) == ilp_arrange_feasible(more)
    if got is not None:
        assert_partition(got, more)


@SLOW
@given(seed=st.integers(0, 10**6), size=st.sampled_from([30, 60, 104]), rack_size=st.integers(1, 4))
def test_best_play_matches_ilp(direction: str, seed: int, size: int, rack_size: int) -> None:
    table, pool = _valid_union(seed, size)
    rng = random.Random(seed)
    rack = pool[:rack_size] + [rng.choice(table) for _ in range(max(0, rack_size - len(pool)))]
    result = best_play(table, rack)
    assert result is not None
    assert_partition(result, table + rack)
    assert not Counter(result.unused) - Counter(rack)
    assert result.value == ilp_best_play_value(table, rack)


# --------------------------------------------------------------------------- hand-written cases


def _sets(result: Arrangement | None) -> list[str]:
    assert result is not None
    return sorted(" ".join(t.short for t in s.tiles) for s in result.sets)


@pytest.mark.parametrize(
    ("tiles", "value"),
    [
        ("j r2 r3", 9),  # the joker at the top end: r2 r3 j (2+3+4)
        ("r12 r13 j", 36),  # 13 is the top: the joker must be r11 (j r12 r13)
        ("b5 j j", 18),  # the run 5-6-7 (18) beats the group of fives (15)
        ("b13 j j", 39),  # no run above 13: the group of thirteens
        ("r5 b5 j j", 20),  # a group of four with two jokers
        ("r5 b5 k5 j", 20),  # a group of four with one joker
        ("r1 r2 r3 r4 k10 b10 o10", 40),  # a run and a group side by side: 10 + 30
        ("r12 r13 r1", 0),  # 1 never follows 13
        ("j j j", 0),  # all-joker sets are not sets
        ("j j j j", 0),  # not even with four jokers (6-player set)
        ("r7 r7 r7 b7 b7 b7 k7 k7 k7", 63),  # three copies (6-player): three groups of sevens
    ],
)
def test_max_meld_cases(tiles: str, value: int) -> None:
    given_tiles = parse_tiles(tiles)
    result = max_meld(given_tiles)
    assert result.value == value
    assert_partition(result, given_tiles)
    assert result.value == brute_force((), given_tiles)


def test_value_beats_tile_count() -> None:
    # the joker could fill r1 r2 [r3] r4 (4 tiles, 10 points) or join b13 k13 (3 tiles, 39 points)
    tiles = parse_tiles("r1 r2 r4 j b13 k13")
    result = max_meld(tiles)
    assert result.value == 39
    assert result.unused == tuple(parse_tiles("r1 r2 r4"))


def test_joker_at_both_run_ends() -> None:
    # the joker may stand below the run (11 before 12-13) or above it (4 after 2-3)
    assert _sets(arrange(parse_tiles("r12 r13 j"))) == ["j r12 r13"]
    assert arrange(parse_tiles("j r2 r3")) is not None
    assert _sets(arrange(parse_tiles("j j r1"))) == ["r1 j j"]


def test_arrange_rejects_what_cannot_be_laid() -> None:
    assert arrange(parse_tiles("r12 r13 r1")) is None  # no wrap past 13
    assert arrange(parse_tiles("j j j")) is None  # no all-joker set
    assert arrange(parse_tiles("r5 r5 b5")) is None  # a group repeats no colour
    assert arrange([]) == Arrangement((), 0, ())


def test_three_copies() -> None:
    # 6-player set: three identical runs
    tiles = parse_tiles("o1 o2 o3 " * 3)
    assert _sets(arrange(tiles)) == ["o1 o2 o3"] * 3
    assert max_meld(tiles).value == 18


def test_best_play_uses_every_table_tile() -> None:
    table = parse_tiles("r1 r2 r3 b9 k9 o9")
    result = best_play(table, parse_tiles("r4 b13 o13"))
    assert result is not None
    assert result.value == 6 + 27 + 4
    assert result.unused == tuple(parse_tiles("b13 o13"))
    assert best_play(parse_tiles("r1 r2"), parse_tiles("b7")) is None
    # a rack tile that frees a table joker: the joker moves on to make a longer run
    assert best_play(parse_tiles("r5 j r7"), parse_tiles("r6")).value == 5 + 6 + 7 + 8


def test_can_open_thresholds() -> None:
    assert can_open(parse_tiles("r10 r11 r12"), 30)  # exactly 33
    assert not can_open(parse_tiles("r9 r10 b10"), 30)
    assert can_open(parse_tiles("r1 r2 r3"), 0)  # any one set opens without a threshold
    assert not can_open(parse_tiles("r1 r2 b3"), 0)
    assert can_open(parse_tiles("j j r13"), 30)  # jokers count at the value they stand for: 39
