"""check_move: unit tests per rule (RULES.md §3-§6, §9) and hypothesis properties over random tables.

The properties use their own small oracle for set validity and value (``_oracle_value``), written from RULES.md §2
and independent of ``referee.sets``, so a bug in the set checker cannot hide behind a test that asks it for the answer.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from referee.moves import Code, MoveError, Ruling, Verdict, check_move
from referee.profiles import PROFILES, Profile, TimeoutRule, get_profile
from referee.sets import TileSet
from referee.table import LOOSE, Table
from referee.tiles import COLOURS, JOKER, NUMBER_TILES, Tile

# Enough examples to find layout bugs, few enough that the whole file runs in a few seconds.
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PROFILE_NAMES = sorted(PROFILES)
TWO_COPY_PROFILES = sorted(name for name, p in PROFILES.items() if p.copies == 2)
OPENING_THRESHOLD = {name: 0 if name.endswith("free-opening") else 30 for name in PROFILE_NAMES}


def _penalty_of(ruling: Ruling, profile: Profile) -> int:
    """The profile's penalty, or the most tiles a seed names for one of the broken rules (house: 1 for a move with
    no tile from the rack or a short opening, "musi pobrać jedną kostkę")."""
    named = [profile.source(v.code.value) for v in ruling.violations if v.players_fault]
    counts = [profile.penalty_tiles if s is None or s.penalty_tiles is None else s.penalty_tiles for s in named]
    return max(counts, default=profile.penalty_tiles)


def T(text: str) -> Table:
    """Short for Table.parse: the unit tests read like the RULES.md examples."""
    return Table.parse(text)


def codes(ruling: Ruling) -> list[str]:
    return sorted(ruling.codes)


# -- an independent oracle for RULES.md §2 -----------------------------------------------------------------------


def _oracle_value(tiles: Sequence[Tile]) -> int | None:
    """Best value of a valid reading of ``tiles`` in this physical order, or None when no reading is valid.

    Brute force over every group number and every run start, either way (runs are valid ascending or descending in
    every profile), so it shares no logic with referee.sets.
    """
    real = [(i, t) for i, t in enumerate(tiles) if not t.is_joker]
    size = len(tiles)
    if size < 3 or not real:
        return None
    values = []
    numbers = {t.number for _, t in real}
    colours = [t.colour for _, t in real]
    if size <= 4 and len(numbers) == 1 and len(set(colours)) == len(colours):
        values.append(real[0][1].number * size)
    if len(set(colours)) == 1 and size <= 13:
        for step in (1, -1):
            for start in range(1, 14):
                run = [start + step * i for i in range(size)]
                if min(run) >= 1 and max(run) <= 13 and all(t.number == run[i] for i, t in real):
                    values.append(sum(run))
    return max(values, default=None)


def _oracle_valid(tiles: Sequence[Tile]) -> bool:
    return _oracle_value(tiles) is not None


def _oracle_run_in_another_order(tiles: Sequence[Tile]) -> bool:
    """Invalid as laid, but a valid run once reordered: one colour, distinct numbers, all inside some window of
    consecutive numbers 1-13 as long as the set (jokers fill the rest). Brute force over every window."""
    real = [t for t in tiles if not t.is_joker]
    size = len(tiles)
    if _oracle_valid(tiles) or not 3 <= size <= 13 or not real or len({t.colour for t in real}) != 1:
        return False
    numbers = {t.number for t in real}
    return len(numbers) == len(real) and any(numbers <= set(range(a, a + size)) for a in range(1, 15 - size))


def _oracle_fault(tiles: Sequence[Tile]) -> list[str]:
    """The code a set of the table after a move gets: none when valid (RULES.md §2)."""
    if _oracle_valid(tiles):
        return []
    return ["run-out-of-order"] if _oracle_run_in_another_order(tiles) else ["invalid-set"]


def test_oracle_agrees_with_rules_examples() -> None:
    # The oracle itself is checked on the examples of RULES.md §2 before the properties lean on it.
    assert _oracle_value(TileSet.parse("r5 j r7").tiles) == 18
    assert _oracle_value(TileSet.parse("b5 j j").tiles) == 18
    assert _oracle_value(TileSet.parse("r13 j j").tiles) == 39
    assert _oracle_value(TileSet.parse("r7 r6 r5").tiles) == 18  # descending: valid everywhere
    assert _oracle_value(TileSet.parse("j k12 k11").tiles) == 36
    for reorderable in ("r12 r13 j", "j b1 b2", "r5 r7 r6"):  # valid only when reordered
        assert _oracle_fault(TileSet.parse(reorderable).tiles) == ["run-out-of-order"]
    for broken in ("k13 k1 k2", "r5 r5 r6", "r5 b6 r7", "r5 r6"):
        assert _oracle_fault(TileSet.parse(broken).tiles) == ["invalid-set"]


# -- strategies ------------------------------------------------------------------------------------------------


def full_pool(profile: Profile) -> Counter[Tile]:
    """Every tile of the profile's set: 2 (or 3) copies of each number tile plus 2 (or 4) jokers."""
    pool: Counter[Tile] = Counter({t: profile.copies for t in NUMBER_TILES})
    pool[JOKER] = profile.jokers
    return pool


def _draw_set(
    draw: st.DrawFn, pool: Counter[Tile], profile: Profile, *, jokers: bool = True, avoid: frozenset[Tile] = frozenset()
) -> tuple[Tile, ...] | None:
    """A random valid run or group taken from ``pool`` (which it updates), or None when the pool lacks a tile.

    Jokers replace some positions of a set built from real numbers, so a valid reading always exists.
    """
    if draw(st.booleans()):
        # Mostly short runs (the common case on a table), sometimes up to the full 1-13.
        length = draw(st.one_of(st.integers(3, 5), st.integers(3, 13)))
        start = draw(st.integers(1, 14 - length))
        colour = draw(st.sampled_from(COLOURS))
        tiles = [Tile(colour, n) for n in range(start, start + length)]
        if draw(st.booleans()):  # runs are laid either way in every profile
            tiles.reverse()
    else:
        number = draw(st.integers(1, 13))
        colours = draw(st.permutations(COLOURS))[: draw(st.integers(3, 4))]
        tiles = [Tile(c, number) for c in colours]
    if jokers:
        # At least one number tile stays: a set of jokers only is not a set.
        most = min(pool[JOKER], len(tiles) - 1, 2)
        for position in draw(st.sets(st.integers(0, len(tiles) - 1), max_size=most)):
            tiles[position] = JOKER
    need = Counter(tiles)
    if need - pool or avoid & set(need):
        return None
    pool.subtract(need)
    return tuple(tiles)


@dataclass
class Setup:
    profile: Profile
    before: Table
    pool: Counter[Tile]
    """Tiles not on the table: where the player's rack comes from."""


@st.composite
def setups(draw: st.DrawFn, profiles: Sequence[str] = PROFILE_NAMES, min_sets: int = 0) -> Setup:
    """A random profile and a table of valid sets, respecting the profile's copies and jokers."""
    profile = get_profile(draw(st.sampled_from(profiles)))
    pool = full_pool(profile)
    sets = []
    for _ in range(draw(st.integers(min_sets, 7))):
        tiles = _draw_set(draw, pool, profile)
        if tiles is not None:
            sets.append(TileSet(tiles))
    assume(len(sets) >= min_sets)
    return Setup(profile, Table(tuple(sets)), pool)


def rack_set(
    draw: st.DrawFn, setup: Setup, *, jokers: bool = True, avoid: frozenset[Tile] = frozenset()
) -> tuple[Tile, ...]:
    """A new valid set from the rack (the pool); a few tries, since a nearly empty pool can refuse a shape."""
    for _ in range(5):
        tiles = _draw_set(draw, setup.pool, setup.profile, jokers=jokers, avoid=avoid)
        if tiles is not None:
            return tiles
    assume(False)
    raise AssertionError("unreachable")


def insert_set(draw: st.DrawFn, table: Table, tiles: Sequence[Tile]) -> Table:
    """``table`` with a new set at a random position: where a set lies on the table never matters."""
    sets = list(table.sets)
    sets.insert(draw(st.integers(0, len(sets))), TileSet(tuple(tiles)))
    return Table(tuple(sets), table.loose)


def in_time(profile: Profile) -> float | None:
    return None if profile.time_limit_s is None else profile.time_limit_s / 2


# -- properties --------------------------------------------------------------------------------------------------


@PROPERTY
@given(st.data(), setups())
def test_new_valid_set_from_rack_is_ok(data: st.DataObject, setup: Setup) -> None:
    new = rack_set(data.draw, setup)
    after = insert_set(data.draw, setup.before, new)
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile, elapsed_s=in_time(setup.profile))
    assert (ruling.verdict, ruling.codes) == (Verdict.OK, [])
    assert sorted(ruling.played) == sorted(new)
    assert ruling.removed == () and ruling.penalty_tiles == 0 and ruling.revert is None and ruling.kind == "play"


@PROPERTY
@given(setups())
def test_unchanged_table_is_a_draw(setup: Setup) -> None:
    ruling = check_move(setup.before, setup.before, opened=True, profile=setup.profile, elapsed_s=10_000.0)
    # Even far over time: the table is as it was, so the turn simply ends with a draw (RULES.md §3).
    assert (ruling.verdict, ruling.codes, ruling.kind, ruling.played) == (Verdict.OK, [], "draw", ())


@PROPERTY
@given(st.data(), setups())
def test_opening_needs_the_threshold(data: st.DataObject, setup: Setup) -> None:
    new_sets = [rack_set(data.draw, setup) for _ in range(data.draw(st.integers(1, 3)))]
    after = setup.before
    for tiles in new_sets:
        after = insert_set(data.draw, after, tiles)
    value = sum(_oracle_value(s) or 0 for s in new_sets)
    ruling = check_move(setup.before, after, opened=False, profile=setup.profile)
    assert ruling.opening_value == value
    below = value < OPENING_THRESHOLD[setup.profile.name]
    assert ruling.codes == (["opening-below-threshold"] if below else [])


@PROPERTY
@given(st.data(), setups(min_sets=1))
def test_number_tile_back_to_rack(data: st.DataObject, setup: Setup) -> None:
    index = data.draw(st.integers(0, len(setup.before.sets) - 1))
    old = setup.before.sets[index].tiles
    numbers = [i for i, t in enumerate(old) if not t.is_joker]
    position = data.draw(st.sampled_from(numbers))
    taken = old[position]
    rest = old[:position] + old[position + 1 :]
    sets = list(setup.before.sets)
    sets[index] = TileSet(rest)
    # A new set from the rack as well, so the only faults are the ones this test plants; it must not hold another
    # copy of the taken tile, or the tile would merely have moved.
    new = rack_set(data.draw, setup, avoid=frozenset({taken}))
    after = insert_set(data.draw, Table(tuple(sets)), new)
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile)
    expected = ["tile-returned-to-rack", *_oracle_fault(rest)]
    assert codes(ruling) == sorted(expected)
    # A run left valid only in another order is a person's to settle (RULES.md §2): review, never a penalty.
    if "run-out-of-order" in expected:
        assert (ruling.verdict, ruling.penalty_tiles) == (Verdict.REVIEW, 0)
    else:
        assert ruling.verdict is Verdict.REVERT and ruling.penalty_tiles == setup.profile.penalty_tiles
    assert ruling.removed == (taken,)


@PROPERTY
@given(st.data(), setups(min_sets=1))
def test_joker_kept(data: st.DataObject, setup: Setup) -> None:
    with_joker = [i for i, s in enumerate(setup.before.sets) if JOKER in s.tiles]
    assume(with_joker)
    index = data.draw(st.sampled_from(with_joker))
    old = setup.before.sets[index].tiles
    position = data.draw(st.sampled_from([i for i, t in enumerate(old) if t.is_joker]))
    rest = old[:position] + old[position + 1 :]
    sets = list(setup.before.sets)
    sets[index] = TileSet(rest)
    # No joker in the new set: jokers are all alike, so one laid from the rack would count as the kept one.
    new = rack_set(data.draw, setup, jokers=False)
    after = insert_set(data.draw, Table(tuple(sets)), new)
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile)
    expected = ["joker-kept", *_oracle_fault(rest)]
    assert codes(ruling) == sorted(expected)
    assert ruling.verdict is (Verdict.REVIEW if "run-out-of-order" in expected else Verdict.REVERT)
    assert ruling.removed == (JOKER,)


@PROPERTY
@given(st.data(), setups(min_sets=2))
def test_tile_moved_between_sets(data: st.DataObject, setup: Setup) -> None:
    source, target = data.draw(st.permutations(range(len(setup.before.sets))))[:2]
    old = setup.before.sets[source].tiles
    position = data.draw(st.integers(0, len(old) - 1))
    moved = old[position]
    rest = old[:position] + old[position + 1 :]
    into = list(setup.before.sets[target].tiles)
    into.insert(data.draw(st.integers(0, len(into))), moved)
    faults = [*_oracle_fault(rest), *_oracle_fault(into)]
    assume(faults)
    sets = list(setup.before.sets)
    sets[source], sets[target] = TileSet(rest), TileSet(tuple(into))
    after = Table(tuple(sets))
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile)
    assert codes(ruling) == sorted(["no-tile-from-rack", *faults])
    assert ruling.played == () and ruling.removed == ()
    assert ruling.verdict is (Verdict.REVIEW if "run-out-of-order" in faults else Verdict.REVERT)


@PROPERTY
@given(st.data(), setups(), st.floats(0.1, 1000.0))
def test_over_time(data: st.DataObject, setup: Setup, late_by: float) -> None:
    limit = setup.profile.time_limit_s
    assume(limit is not None)
    after = insert_set(data.draw, setup.before, rack_set(data.draw, setup))
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile, elapsed_s=limit + late_by)
    # RULES.md §6: the box rules restore any move over time; the tournament seeds rule on the table when the time
    # ran out, which two tables do not show: a valid move over time is a review there, never a revert.
    if setup.profile.timeout_rule is TimeoutRule.ANY_OVERRUN:
        assert (ruling.verdict, ruling.codes) == (Verdict.REVERT, ["timeout"])
    else:
        assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["timeout"], 0)
        assert not ruling.violations[0].players_fault
        # Told that nothing was touched after the limit, the table now is the table then: the move stands.
        untouched = check_move(
            setup.before, after, opened=True, profile=setup.profile, elapsed_s=limit + late_by,
            touched_after_limit=False,
        )  # fmt: skip
        assert (untouched.verdict, untouched.codes) == (Verdict.OK, [])
    # An agreed limit replaces the profile's; None means no limit at all.
    unlimited = replace(setup.profile, time_limit_s=None)
    assert check_move(setup.before, after, opened=True, profile=unlimited, elapsed_s=1e9).codes == []


@PROPERTY
@given(st.data(), setups(profiles=PROFILE_NAMES, min_sets=1))
def test_more_copies_than_the_set_has(data: st.DataObject, setup: Setup) -> None:
    # Laying copies of a table set again pushes each of its tiles past the profile's number of copies.
    copied = data.draw(st.sampled_from(setup.before.sets))
    after = setup.before
    for _ in range(setup.profile.copies if JOKER not in copied.tiles else max(setup.profile.copies, 3)):
        after = insert_set(data.draw, after, copied.tiles)
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile)
    assert set(ruling.codes) == {"impossible-table"}
    assert ruling.verdict is Verdict.REVIEW and ruling.penalty_tiles == 0
    assert all(not v.players_fault for v in ruling.violations)


@PROPERTY
@given(st.data(), setups(profiles=TWO_COPY_PROFILES, min_sets=1))
def test_third_copy_of_a_tile(data: st.DataObject, setup: Setup) -> None:
    # The literal case: one more copy of a tile that already lies twice on the table, inside an otherwise valid set.
    counts = setup.before.counts()
    doubled = [t for t, n in counts.items() if n == 2 and not t.is_joker]
    assume(doubled)
    tile = data.draw(st.sampled_from(doubled))
    others = [c for c in COLOURS if c is not tile.colour][:2]
    group = (tile, *(Tile(c, tile.number) for c in others))
    after = insert_set(data.draw, setup.before, group)
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile)
    assert "impossible-table" in ruling.codes and ruling.verdict is Verdict.REVIEW


@PROPERTY
@given(st.data(), setups())
def test_any_order_of_a_new_run_that_is_not_a_run_is_reviewed_never_reverted(data: st.DataObject, setup: Setup) -> None:
    new = list(rack_set(data.draw, setup))
    shuffled = data.draw(st.permutations(new))
    assume(not _oracle_valid(shuffled))
    after = insert_set(data.draw, setup.before, shuffled)
    ruling = check_move(setup.before, after, opened=True, profile=setup.profile, elapsed_s=in_time(setup.profile))
    # Only a run can be out of order (a group is valid in any order), and some order of its tiles is a run.
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["run-out-of-order"], 0)


@st.composite
def impossible_before(draw: st.DrawFn) -> tuple[Setup, Table]:
    """A random move (see :func:`mutated`) whose before-table holds a tile more often than the set has it."""
    setup, after = draw(mutated())
    counts = setup.before.counts()
    tile = draw(st.sampled_from([*NUMBER_TILES, JOKER]))
    allowed = setup.profile.jokers if tile.is_joker else setup.profile.copies
    phantom = (tile,) * (allowed + 1 - counts[tile])
    where = draw(st.sampled_from(["loose", "set"]))
    if where == "loose" or not setup.before.sets:
        before = Table(setup.before.sets, (*setup.before.loose, *phantom))
    else:
        index = draw(st.integers(0, len(setup.before.sets) - 1))
        sets = list(setup.before.sets)
        sets[index] = TileSet((*sets[index].tiles, *phantom))
        before = Table(tuple(sets), setup.before.loose)
    return Setup(setup.profile, before, setup.pool), after


@PROPERTY
@given(impossible_before(), st.booleans(), st.one_of(st.none(), st.floats(0, 500)))
def test_a_move_from_an_impossible_table_is_never_reverted(
    pair: tuple[Setup, Table], opened: bool, elapsed: float | None
) -> None:
    setup, after = pair
    ruling = check_move(setup.before, after, opened=opened, profile=setup.profile, elapsed_s=elapsed)
    assert ruling.verdict is not Verdict.REVERT and ruling.penalty_tiles == 0
    assert "impossible-table" in ruling.codes


# -- random mutations: revert plans, serialisation, robustness ---------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn) -> tuple[Setup, Table]:
    """A valid table and a random mutation of it: tiles played, removed, moved or left loose."""
    setup = draw(setups())
    sets = [list(s.tiles) for s in setup.before.sets]
    loose: list[Tile] = []
    for _ in range(draw(st.integers(1, 4))):
        action = draw(st.sampled_from(["play", "remove", "move", "loose"]))
        if action == "play":
            tiles = _draw_set(draw, setup.pool, setup.profile)
            if tiles is not None:
                sets.insert(draw(st.integers(0, len(sets))), list(tiles))
        elif action == "loose":
            spare = sorted(t for t in setup.pool if setup.pool[t] > 0)
            if spare:
                tile = draw(st.sampled_from(spare))
                setup.pool[tile] -= 1
                loose.append(tile)
        elif sets and any(sets):
            source = draw(st.sampled_from([i for i, s in enumerate(sets) if s]))
            tile = sets[source].pop(draw(st.integers(0, len(sets[source]) - 1)))
            if action == "move":
                target = draw(st.integers(0, len(sets) - 1))
                sets[target].insert(draw(st.integers(0, len(sets[target]))), tile)
    after = Table(tuple(TileSet(tuple(s)) for s in sets if s), tuple(loose))
    return setup, after


@PROPERTY
@given(mutated(), st.booleans())
def test_revert_plan_restores_the_before_layout(pair: tuple[Setup, Table], opened: bool) -> None:
    setup, after = pair
    before = setup.before
    ruling = check_move(before, after, opened=opened, profile=setup.profile)
    played = Counter(after.counts() - before.counts())
    removed = Counter(before.counts() - after.counts())
    assert Counter(ruling.played) == played and Counter(ruling.removed) == removed
    if ruling.verdict is Verdict.OK:
        assert ruling.revert is None
        return
    plan = ruling.revert
    assert plan is not None
    assert plan.restore == before and plan.restore.same_layout(before)
    assert Counter(plan.to_rack) == played and Counter(plan.to_table) == removed
    # Undoing the move tile by tile gives back exactly the tiles of the before-table.
    assert after.counts() - Counter(plan.to_rack) + Counter(plan.to_table) == before.counts()
    assert plan.penalty_tiles == _penalty_of(ruling, setup.profile)
    assert ruling.penalty_tiles == (plan.penalty_tiles if ruling.verdict is Verdict.REVERT else 0)
    # The fallback (§6) keeps only valid sets and hands back every other tile on the table.
    kept = Counter(t for s in plan.fallback_keep for t in s)
    assert kept + Counter(plan.fallback_take) == after.counts()
    assert all(_oracle_valid(s.tiles) for s in plan.fallback_keep)


@PROPERTY
@given(mutated(), st.booleans(), st.one_of(st.none(), st.floats(0, 500)))
def test_ruling_to_dict_is_json(pair: tuple[Setup, Table], opened: bool, elapsed: float | None) -> None:
    setup, after = pair
    ruling = check_move(setup.before, after, opened=opened, profile=setup.profile, elapsed_s=elapsed)
    data = ruling.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["verdict"] == ruling.verdict.value and [v["code"] for v in data["violations"]] == ruling.codes
    if data["revert"] is not None:
        # The restore layout read back from JSON is the before-table.
        assert Table.from_json(data["revert"]["restore"]) == setup.before


LABELS = [str(t) for t in NUMBER_TILES] + ["joker"]
_json_tile = st.one_of(
    st.sampled_from(LABELS),
    st.builds(lambda label, c: {"label": label, "confidence": c}, st.sampled_from(LABELS), st.floats(0, 1)),
    st.builds(lambda label, u: {"label": label, "uncertain": u}, st.sampled_from(LABELS), st.booleans()),
)
_json_table = st.fixed_dictionaries(
    {
        "sets": st.lists(st.lists(_json_tile, max_size=15), max_size=8),
        "loose": st.lists(_json_tile, max_size=4),
    }
)


@PROPERTY
@given(
    _json_table,
    _json_table,
    st.booleans(),
    st.sampled_from(PROFILE_NAMES),
    st.one_of(st.none(), st.floats(0, 1e6)),
    st.one_of(st.just("profile"), st.none(), st.floats(0, 1e3)),
)
def test_never_raises_on_any_tables(
    before: dict[str, Any], after: dict[str, Any], opened: bool, profile: str, elapsed: float | None, limit: Any
) -> None:
    # Anything vision can read (empty sets, 15-tile sets, six jokers, low confidence) gets a ruling, never a crash.
    rules = get_profile(profile) if limit == "profile" else replace(get_profile(profile), time_limit_s=limit)
    ruling = check_move(
        Table.from_json(before), Table.from_json(after), opened=opened, profile=rules, elapsed_s=elapsed
    )
    json.dumps(ruling.to_dict())
    assert ruling.verdict in Verdict
    assert (ruling.verdict is Verdict.OK) == (ruling.revert is None)


# -- unit tests per rule -------------------------------------------------------------------------------------------


def test_invalid_set_names_the_set_and_why() -> None:
    ruling = check_move(T("[r5 r6 r7]"), T("[r5 r6 r7] [b2 b3]"), opened=True)
    (violation,) = ruling.violations
    assert violation.code is Code.INVALID_SET and violation.sets == (1,) and violation.players_fault
    assert "blue-2 blue-3" in violation.detail and "at least 3" in violation.detail


def test_loose_tiles_are_an_invalid_set() -> None:
    ruling = check_move(T("[r5 r6 r7]"), T("[r5 r6 r7] loose: b9"), opened=True)
    assert ruling.codes == ["invalid-set"] and ruling.violations[0].tiles == (Tile.parse("b9"),)
    assert ruling.revert is not None and LOOSE in ruling.revert.changed_sets


def test_no_tile_from_rack_for_a_pure_rearrangement() -> None:
    ruling = check_move(T("[r5 r6 r7 r8] [k8 b8 o8]"), T("[r5 r6 r7] [k8 r8 b8 o8]"), opened=True)
    assert (ruling.verdict, ruling.codes) == (Verdict.REVERT, ["no-tile-from-rack"])


def test_joker_swap_and_reuse_is_fine_but_keeping_it_is_not() -> None:
    before = T("[r5 j r7]")
    assert check_move(before, T("[r5 r6 r7] [j b9 b10]"), opened=True).verdict is Verdict.OK
    kept = check_move(before, T("[r5 r6 r7]"), opened=True)
    assert kept.codes == ["joker-kept"] and kept.revert is not None and kept.revert.to_table == (JOKER,)


def test_opening_counts_jokers_at_the_value_they_replace() -> None:
    ruling = check_move(T(""), T("[r9 j r11]"), opened=False)
    assert (ruling.verdict, ruling.opening_value) == (Verdict.OK, 30)
    short = check_move(T(""), T("[r8 j r10]"), opened=False)
    assert (short.codes, short.opening_value) == (["opening-below-threshold"], 27)


def test_opening_may_not_touch_the_table() -> None:
    ruling = check_move(T("[r5 r6 r7]"), T("[r5 r6 r7 r8] [k10 b10 o10]"), opened=False)
    assert ruling.codes == ["opening-manipulation"] and ruling.opening_value == 30
    assert ruling.violations[0].sets == (0,)


def test_free_opening_has_no_threshold() -> None:
    move = (T(""), T("[k1 k2 k3]"))
    assert check_move(*move, opened=False, profile="official-free-opening").verdict is Verdict.OK
    assert check_move(*move, opened=False, profile="official").codes == ["opening-below-threshold"]


@pytest.mark.parametrize(
    ("profile", "elapsed", "late"),
    [
        ("pl-championship", 60.0, False),
        ("pl-championship", 60.5, True),
        ("wejherowo", 61.0, True),
        ("official", 61.0, True),
        ("house", 119.0, False),
        ("house", 121.0, True),
    ],
)
def test_time_limits_per_profile(profile: str, elapsed: float, late: bool) -> None:
    ruling = check_move(T("[r5 r6 r7]"), T("[r5 r6 r7] [b1 b2 b3]"), opened=True, profile=profile, elapsed_s=elapsed)
    assert ruling.codes == (["timeout"] if late else [])
    # Only the box rules restore any move over time; the others rule on the table when the time ran out (unknown).
    reverted = late and get_profile(profile).timeout_rule is TimeoutRule.ANY_OVERRUN
    assert ruling.verdict is (Verdict.REVERT if reverted else Verdict.REVIEW if late else Verdict.OK)
    assert ruling.penalty_tiles == (get_profile(profile).penalty_tiles if reverted else 0)


def test_agreed_time_limit_overrides_the_profile() -> None:
    move = (T("[r5 r6 r7]"), T("[r5 r6 r7] [b1 b2 b3]"))
    official = get_profile("official")  # 60 s: 35 s is in time under it, 999 s late
    assert check_move(*move, opened=True, profile=official, elapsed_s=35.0).codes == []
    assert check_move(*move, opened=True, profile=official, elapsed_s=999.0).codes == ["timeout"]
    agreed = replace(official, time_limit_s=30.0)
    assert check_move(*move, opened=True, profile=agreed, elapsed_s=35.0).codes == ["timeout"]
    ruling = check_move(*move, opened=True, profile=agreed, elapsed_s=35.0)
    assert ruling.profile == "official" and "the limit is 30 s" in ruling.violations[0].detail
    unlimited = replace(official, time_limit_s=None)
    assert check_move(*move, opened=True, profile=unlimited, elapsed_s=999.0).codes == []


def test_przasnysz_rule_15_valid_table_at_timeout_stands() -> None:
    move = (T("[r5 r6 r7]"), T("[r5 r6 r7 r8]"))
    valid = check_move(*move, opened=True, profile="przasnysz", elapsed_s=45.0, touched_after_limit=False)
    assert (valid.verdict, valid.codes) == (Verdict.OK, []) and any("rules 15 and 17" in n for n in valid.notes)
    # Two tables alone cannot tell whether it was valid at the limit and left alone after it (rules 15, 20).
    unknown = check_move(*move, opened=True, profile="przasnysz", elapsed_s=45.0)
    assert (unknown.verdict, unknown.codes, unknown.penalty_tiles) == (Verdict.REVIEW, ["timeout"], 0)
    broken = check_move(T("[r5 r6 r7 r8]"), T("[r5 r6] [r7 r8 r9]"), opened=True, profile="przasnysz", elapsed_s=45.0)
    assert sorted(broken.codes) == ["invalid-set", "timeout"] and broken.penalty_tiles == 1


# The late move of issue 17, three ways: valid at the limit and left alone, valid at the limit and touched after it,
# not finished at the limit. Before: one run; the player adds blue 1-2-3 and red 8.
LATE_BEFORE = "[r5 r6 r7]"
VALID_AT_LIMIT = "[r5 r6 r7] [b1 b2 b3]"
UNFINISHED_AT_LIMIT = "[r5 r6 r7] [b1 b2]"
TOUCHED_AFTER = "[r5 r6 r7 r8] [b1 b2 b3]"


@pytest.mark.parametrize(
    ("profile", "at_limit", "after", "touched", "verdict", "penalty"),
    [
        # przasnysz rules 15, 17: the table at the limit is the move; valid and left alone, it stands.
        ("przasnysz", VALID_AT_LIMIT, VALID_AT_LIMIT, False, "ok", 0),
        # rule 20: touching the tiles after the limit voids the move: restore, draw 1.
        ("przasnysz", VALID_AT_LIMIT, TOUCHED_AFTER, True, "revert", 1),
        ("przasnysz", VALID_AT_LIMIT, TOUCHED_AFTER, None, "revert", 1),  # the tables differ: touched
        # rule 14: not finished at the limit: restore, draw 1 (even if finished later).
        ("przasnysz", UNFINISHED_AT_LIMIT, VALID_AT_LIMIT, True, "revert", 1),
        # Polish Championship, Wejherowo, house: a manipulation not finished at the limit is restored...
        ("pl-championship", UNFINISHED_AT_LIMIT, VALID_AT_LIMIT, True, "revert", 1),
        ("wejherowo", UNFINISHED_AT_LIMIT, UNFINISHED_AT_LIMIT, False, "revert", 1),
        ("house", UNFINISHED_AT_LIMIT, VALID_AT_LIMIT, True, "revert", 3),
        # ...one finished by then stands, the clock pressed late...
        ("pl-championship", VALID_AT_LIMIT, VALID_AT_LIMIT, False, "ok", 0),
        # ...and touching it after the limit is a case the seed does not name: a person decides.
        ("pl-championship", VALID_AT_LIMIT, TOUCHED_AFTER, True, "review", 0),
        # The box rules: any move over time is restored, whatever the table at the limit.
        ("official", VALID_AT_LIMIT, VALID_AT_LIMIT, False, "revert", 1),
        ("official-6p-free-opening", VALID_AT_LIMIT, TOUCHED_AFTER, True, "revert", 1),
    ],
)
def test_a_late_move_is_ruled_on_the_table_at_the_limit_as_each_profile_says(
    profile: str, at_limit: str, after: str, touched: bool | None, verdict: str, penalty: int
) -> None:
    ruling = check_move(
        T(LATE_BEFORE), T(after), opened=True, profile=replace(get_profile(profile), time_limit_s=60.0),
        elapsed_s=75.0, table_at_limit=T(at_limit), touched_after_limit=touched,
    )  # fmt: skip
    assert (ruling.verdict.value, ruling.penalty_tiles) == (verdict, penalty), ruling.to_dict()
    if verdict != "ok":
        assert "timeout" in ruling.codes
    if verdict == "revert":  # what is restored is the table before the move, from the table as it is now
        assert ruling.revert is not None and ruling.revert.restore == T(LATE_BEFORE)
        assert Counter(ruling.revert.to_rack) == T(after).counts() - T(LATE_BEFORE).counts()


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_two_tables_over_the_limit_are_a_review_where_the_ruling_needs_the_table_at_the_limit(profile: str) -> None:
    ruling = check_move(T(LATE_BEFORE), T(VALID_AT_LIMIT), opened=True, profile=profile, elapsed_s=200.0)
    if get_profile(profile).timeout_rule is TimeoutRule.ANY_OVERRUN:
        assert (ruling.verdict, ruling.codes) == (Verdict.REVERT, ["timeout"])
    else:
        assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["timeout"], 0)
    # A table broken at the end was not finished at the limit, or was changed after it: restored either way.
    broken = check_move(T(LATE_BEFORE), T(UNFINISHED_AT_LIMIT), opened=True, profile=profile, elapsed_s=200.0)
    assert broken.verdict is Verdict.REVERT and sorted(broken.codes) == ["invalid-set", "timeout"]


def test_tables_that_differ_though_no_hands_were_seen_are_a_review() -> None:
    ruling = check_move(
        T(LATE_BEFORE), T(TOUCHED_AFTER), opened=True, profile="przasnysz", elapsed_s=50.0,
        table_at_limit=T(VALID_AT_LIMIT), touched_after_limit=False,
    )  # fmt: skip
    assert (ruling.verdict, ruling.codes) == (Verdict.REVIEW, ["timeout"])


def test_tables_that_differ_only_through_uncertain_readings_never_void_a_move() -> None:
    # A misread at the limit would look like tiles moved after it (przasnysz rule 20: void): a person decides.
    at_limit = Table.from_json({"sets": [["red-5", "red-6", "red-7"], ["blue-1", "blue-2",
                                {"label": "blue-3", "confidence": 0.3}]]})  # fmt: skip
    ruling = check_move(
        T(LATE_BEFORE), T(VALID_AT_LIMIT + " [k9 b9 o9]"), opened=True, profile="przasnysz", elapsed_s=50.0,
        table_at_limit=at_limit,
    )  # fmt: skip
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["timeout"], 0)


def test_a_draw_over_time_is_no_fault_but_touching_the_table_after_the_limit_is_reviewed() -> None:
    draw = check_move(T(LATE_BEFORE), T(LATE_BEFORE), opened=True, profile="przasnysz", elapsed_s=50.0)
    assert (draw.verdict, draw.kind) == (Verdict.OK, "draw")
    touched = check_move(
        T(LATE_BEFORE), T(LATE_BEFORE), opened=True, profile="przasnysz", elapsed_s=50.0, touched_after_limit=True
    )
    assert (touched.verdict, touched.codes) == (Verdict.REVIEW, ["timeout"])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"elapsed_s": 30.0, "table_at_limit": Table.parse("[r5 r6 r7]")},  # within the limit: no limit passed
        {"table_at_limit": Table.parse("[r5 r6 r7]")},  # no time at all
        {"elapsed_s": 70.0, "touched_after_limit": "yes"},
    ],
)
def test_the_table_at_the_limit_only_describes_a_late_move(kwargs: dict[str, Any]) -> None:
    with pytest.raises(MoveError):
        check_move(T(LATE_BEFORE), T(VALID_AT_LIMIT), opened=True, profile="pl-championship", **kwargs)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_every_violation_names_the_seed_rule_it_enforces(profile: str) -> None:
    rules = get_profile(profile)
    ruling = check_move(
        T("[r5 r6 r7 r8] [k10 j k12]"), T("[r5 r6] [k10 k11 k12]"), opened=True, profile=profile, elapsed_s=500.0
    )
    assert ruling.verdict is Verdict.REVERT
    for violation in ruling.violations:
        source = rules.source(violation.code.value)
        assert source is not None and violation.detail.endswith(f"[{profile}: {rules.seed}, {source.rule}]")


def test_a_fault_no_seed_rule_of_the_profile_names_is_reviewed_never_reverted() -> None:
    from dataclasses import replace

    silent = replace(get_profile("pl-championship"), name="silent", rules={})
    ruling = check_move(T("[r5 r6 r7 r8]"), T("[r5 r6 r7] [b1 b2 b3]"), opened=True, profile=silent)
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["tile-returned-to-rack"], 0)
    (violation,) = ruling.violations
    assert not violation.players_fault and "no rule of seeds/004_edb1b3e580c8d7dd.txt names this" in violation.detail


def test_a_seed_names_its_own_count_for_a_rule_house_draws_one_for_a_move_with_no_rack_tile() -> None:
    # Seed 002: "jeśli tego nie zrobi, to musi pobrać jedna kość z banku": one tile, not the 3 of the time rule.
    ruling = check_move(T("[r5 r6 r7 r8] [b8 k8 o8]"), T("[r5 r6 r7] [r8 b8 k8 o8]"), opened=True, profile="house")
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVERT, ["no-tile-from-rack"], 1)
    # With a broken set as well, the 3 tiles of a manipulation not finished.
    broken = check_move(T("[r5 r6 r7 r8]"), T("[r5 r6] [r7 r8]"), opened=True, profile="house")
    assert sorted(broken.codes) == ["invalid-set", "invalid-set", "no-tile-from-rack"] and broken.penalty_tiles == 3


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_descending_runs_are_valid_in_every_profile(profile: str) -> None:
    # RULES.md §2 (corrected): no seed requires a direction; przasnysz rule 19 allows both.
    ruling = check_move(T("[k1 k2 k3]"), T("[k1 k2 k3] [r13 r12 r11] [j b9 b8]"), opened=True, profile=profile)
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.OK, [], 0)
    opening = check_move(T(""), T("[k12 k11 k10]"), opened=False, profile=profile)
    assert (opening.verdict, opening.opening_value) == (Verdict.OK, 33)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
@pytest.mark.parametrize("laid", ["r12 r13 j", "j b1 b2", "r5 r7 r6"])
def test_a_run_valid_only_in_another_order_is_reviewed_never_reverted(profile: str, laid: str) -> None:
    # The false REVERTs: 'red-12 red-13 joker', 'joker blue-1 blue-2', a zigzag. RULES.md §2: REVIEW.
    ruling = check_move(T("[k1 k2 k3]"), T(f"[k1 k2 k3] [{laid}]"), opened=True, profile=profile)
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["run-out-of-order"], 0)
    (violation,) = ruling.violations
    assert not violation.players_fault and violation.sets == (1,) and "only in another order" in violation.detail


def test_an_out_of_order_run_counts_at_its_value_in_order_for_the_opening() -> None:
    # red 10, 12, 11 is worth 33 once put in order: the opening is not also 'below threshold'.
    ruling = check_move(T(""), T("[r10 r12 r11]"), opened=False)
    assert (ruling.verdict, ruling.codes, ruling.opening_value) == (Verdict.REVIEW, ["run-out-of-order"], 33)
    short = check_move(T(""), T("[r1 r3 r2]"), opened=False)
    assert sorted(short.codes) == ["opening-below-threshold", "run-out-of-order"] and short.verdict is Verdict.REVIEW


def test_an_out_of_order_run_already_there_is_named_as_such() -> None:
    ruling = check_move(T("[r5 r7 r6]"), T("[r5 r7 r6] [b1 b2 b3]"), opened=True)
    assert (ruling.verdict, ruling.codes) == (Verdict.REVIEW, ["run-out-of-order"])
    assert "already like this before the move" in ruling.violations[0].detail


def test_an_impossible_before_table_is_reviewed_not_a_tile_returned_to_rack() -> None:
    # The case: a misread third red-5, ruled REVIEW, is the next move's before; the player only adds a tile.
    before = T("[r5 r6 r7] [r5 b5 o5] [r5 k5 o5]")
    after = T("[r5 r6 r7 r8] [r5 b5 o5] [b5 k5 o5]")  # the third red-5 now reads as the blue-5 it is
    ruling = check_move(before, after, opened=True)
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["impossible-table"], 0)
    assert "before the move" in ruling.violations[0].detail and not ruling.violations[0].players_fault
    assert any("read too many times before it: red-5" in note for note in ruling.notes)
    jokers = check_move(T("[j j j b4]"), T("[r1 r2 r3] [j j b4]"), opened=True)  # three jokers read, two are real
    assert (jokers.verdict, jokers.codes) == (Verdict.REVIEW, ["impossible-table"])


def test_a_tile_too_many_before_and_after_is_one_violation_naming_both_tables() -> None:
    before = T("[r5 b5 o5] [r5 k5 o5] [r5 r6 r7]")
    ruling = check_move(before, Table(T("[b1 b2 b3]").sets + before.sets), opened=True)
    assert (ruling.verdict, ruling.codes) == (Verdict.REVIEW, ["impossible-table"])
    assert "3 copies of red-5 on the table before the move and 3 after it" in ruling.violations[0].detail


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1.0, True, "60"])
@pytest.mark.parametrize("name", ["elapsed_s", "time_limit_s"])
def test_times_that_are_not_finite_seconds_are_refused(name: str, bad: Any) -> None:
    # `--elapsed nan` ruled valid moves late ("the limit is nan s"): a typed error instead, never a ruling.
    # The limit is the profile's field: a profile replaced with a bad one is refused the same way.
    times: dict[str, Any] = (
        {"elapsed_s": bad} if name == "elapsed_s" else {"profile": replace(get_profile("official"), time_limit_s=bad)}
    )
    with pytest.raises(MoveError, match=name):
        check_move(T("[r5 r6 r7]"), T("[r5 r6 r7] [b1 b2 b3]"), opened=True, **times)


def test_six_player_edition_has_three_copies_and_four_jokers() -> None:
    after = T("[r3 r4 r5] [r5 r6 r7] [k5 r5 b5] [j j b9] [o1 j j]")
    assert check_move(T(""), after, opened=True, profile="official-6p").verdict is Verdict.OK
    ruling = check_move(T(""), after, opened=True, profile="official")
    assert ruling.verdict is Verdict.REVIEW and ruling.codes == ["impossible-table", "impossible-table"]


def test_inherited_invalid_set_is_reviewed_not_reverted() -> None:
    ruling = check_move(T("[r5 r6] [k9 k10 k11]"), T("[r5 r6] [k9 k10 k11 k12]"), opened=True)
    assert (ruling.verdict, ruling.codes, ruling.penalty_tiles) == (Verdict.REVIEW, ["invalid-set"], 0)
    assert not ruling.violations[0].players_fault


def test_uncertain_reading_is_reviewed() -> None:
    after = Table.from_json(
        {"sets": [["red-5", "red-6", "red-7"], ["blue-1", {"label": "blue-2", "confidence": 0.2}, "blue-3"]]}
    )
    ruling = check_move(T("[r5 r6 r7]"), after, opened=True)
    assert (ruling.verdict, ruling.codes) == (Verdict.REVIEW, [])
    assert ruling.uncertain == (("after", (1, 1), Tile.parse("blue-2")),)


def test_house_penalty_is_three_tiles() -> None:
    ruling = check_move(T("[r5 r6 r7 r8]"), T("[r5 r6 r7] [b1 b2 b3]"), opened=True, profile="house")
    assert ruling.codes == ["tile-returned-to-rack"] and ruling.penalty_tiles == 3
    assert ruling.revert is not None and ruling.revert.penalty_tiles == 3


def test_revert_plan_lists_the_changed_sets() -> None:
    ruling = check_move(T("[k1 k2 k3] [r5 r6 r7 r8]"), T("[r5 r6 r7] [k1 k2 k3] [b12 b13]"), opened=True)
    plan = ruling.revert
    assert plan is not None
    assert plan.restore == T("[k1 k2 k3] [r5 r6 r7 r8]")
    assert plan.changed_sets == (0, 2)  # [r5 r6 r7] and [b12 b13] are new; [k1 k2 k3] only moved
    assert plan.to_rack == tuple(TileSet.parse("b12 b13")) and plan.to_table == (Tile.parse("r8"),)
    assert [list(map(str, s)) for s in plan.fallback_keep] == [
        ["red-5", "red-6", "red-7"],
        ["black-1", "black-2", "black-3"],
    ]
    assert plan.fallback_take == tuple(TileSet.parse("b12 b13"))


def test_revert_plan_does_not_count_a_reread_group_as_changed() -> None:
    # Regression: the revert plan compared sets by tile order while the rest of check_move ignores a group's order.
    before = Table.parse("[r5 r6 r7] [k3 b3 o3]")
    after = Table.parse("[r5 r6] [b3 k3 o3]")
    ruling = check_move(before, after, opened=True)
    assert ruling.revert is not None and ruling.revert.changed_sets == (0,)
