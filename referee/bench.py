"""Benchmark of the rules solver against the ILP reference, on reproducible random inputs.

Inputs follow how tables arise in play: a table is a union of valid sets from one 106-tile set
(2 copies + 2 jokers). It is made by laying the whole set out in random valid sets, putting the
jokers in place of random tiles, and then taking tiles off run ends, fourth tiles off groups and
whole sets until the table has the size wanted. Racks are random draws from the tiles not on the
table (topped up from a second set when a nearly full table leaves too few).

Every input is also solved by the ILP reference; the rows count disagreements, which are bugs.

    python -c "from referee.bench import *; print(format_rules_benchmark(run_rules_benchmark()))"
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from referee.sets import TileSet
from referee.solver import arrange, best_play, can_open
from referee.tiles import COLOURS, JOKER, MAX_NUMBER, Tile

__all__ = ["format_rules_benchmark", "full_set", "random_table", "run_rules_benchmark"]

Sets = list[list[Tile]]


def full_set(copies: int = 2, jokers: int = 2) -> list[Tile]:
    return [Tile(c, n) for c in COLOURS for n in range(1, MAX_NUMBER + 1) for _ in range(copies)] + [JOKER] * jokers


def _lay_out_numbers(rng: random.Random, copies: int) -> Sets:
    """All number tiles of the set as random valid sets (runs of random lengths and groups)."""
    while True:
        sets = _try_lay_out(rng, copies)
        if sets is not None:
            return sets


def _try_lay_out(rng: random.Random, copies: int) -> Sets | None:
    closed: Sets = []
    runs: list[Sets] = [[] for _ in COLOURS]
    for v in range(1, MAX_NUMBER + 1):
        for _attempt in range(30):
            step = _try_number(rng, v, copies, runs)
            if step is not None:
                break
        else:
            return None
        runs, ended, groups = step
        closed.extend(ended)
        closed.extend(groups)
    for colour_runs in runs:
        if any(len(run) < 3 for run in colour_runs):
            return None
        closed.extend(colour_runs)
    return closed


def _try_number(rng: random.Random, v: int, copies: int, runs: list[Sets]) -> tuple[list[Sets], Sets, Sets] | None:
    """One random step at number ``v``: extend, end or start runs; the rest forms groups (or fail)."""
    new_runs: list[Sets] = []
    ended: Sets = []
    to_groups: list[int] = []
    for c, colour in enumerate(COLOURS):
        tile = Tile(colour, v)
        left = copies
        kept: Sets = []
        for run in runs[c]:
            if left and (len(run) < 3 or rng.random() < 0.6):
                kept.append([*run, tile])
                left -= 1
            elif len(run) >= 3:
                ended.append(run)
            else:
                return None
        grouped = 0
        for _ in range(left):
            if v <= MAX_NUMBER - 2 and rng.random() < 0.55:
                kept.append([tile])
            else:
                grouped += 1
        new_runs.append(kept)
        to_groups.append(grouped)
    groups = _random_groups(rng, v, to_groups)
    if groups is None:
        return None
    return new_runs, ended, groups


def _random_groups(rng: random.Random, v: int, counts: list[int]) -> Sets | None:
    total = sum(counts)
    if total == 0:
        return []
    options = [m for m in range(1, total + 1) if max(counts) <= m and 3 * m <= total <= 4 * m]
    if not options:
        return None
    m = rng.choice(options)
    groups: Sets = [[] for _ in range(m)]
    slot = 0
    for c, count in enumerate(counts):
        for _ in range(count):
            groups[slot % m].append(Tile(COLOURS[c], v))
            slot += 1
    return groups


def _put_jokers(rng: random.Random, sets: Sets, jokers: int) -> list[Tile]:
    """Jokers replace random number tiles (each set keeps a number tile); returns the tiles replaced."""
    replaced: list[Tile] = []
    for _ in range(jokers):
        s = rng.choice([s for s in sets if sum(not t.is_joker for t in s) >= 2])
        i = rng.choice([i for i, t in enumerate(s) if not t.is_joker])
        replaced.append(s[i])
        s[i] = JOKER
    return replaced


def _shrink(rng: random.Random, sets: Sets, size: int) -> tuple[Sets, list[Tile]] | None:
    """Take tiles off (run ends, a group's fourth tile, whole sets) until ``size`` tiles are left."""
    removed: list[Tile] = []
    current = sum(len(s) for s in sets)
    for _ in range(10_000):
        if current == size:
            return sets, removed
        i = rng.randrange(len(sets))
        s = sets[i]
        excess = current - size
        if len(s) <= excess and rng.random() < 0.5:
            removed.extend(sets.pop(i))
            current -= len(s)
        elif len(s) >= 4 and _is_group(s):
            removed.append(s.pop(rng.randrange(len(s))))
            current -= 1
        elif len(s) >= 4:
            removed.append(s.pop(0 if rng.random() < 0.5 else -1))
            current -= 1
        if any(all(t.is_joker for t in s) for s in sets):
            return None
    return None


def _is_group(tiles: Sequence[Tile]) -> bool:
    return len({t.number for t in tiles if not t.is_joker}) == 1 and len(tiles) <= 4 and len(tiles) < 5


def random_table(rng: random.Random, size: int, jokers: int = 2) -> tuple[list[TileSet], list[Tile]]:
    """A valid table of ``size`` tiles from one 106-tile set, and the tiles left over (shuffled)."""
    while True:
        sets = _lay_out_numbers(rng, 2)
        spare = _put_jokers(rng, sets, jokers)
        shrunk = _shrink(rng, sets, size)
        if shrunk is None:
            continue
        sets, removed = shrunk
        pool = spare + removed
        rng.shuffle(pool)
        rng.shuffle(sets)
        return [TileSet(tuple(s)) for s in sets], pool


def _rack_from(rng: random.Random, pool: list[Tile], size: int) -> list[Tile]:
    """``size`` tiles from the pool, topped up from a second set when the pool is too small."""
    rack = pool[:size]
    while len(rack) < size:
        rack.append(rng.choice(full_set()))
    return rack


def _table_tiles(sets: Sequence[TileSet]) -> list[Tile]:
    return [t for s in sets for t in s.tiles]


# --------------------------------------------------------------------------- timing


def _time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best-of-``repeats`` wall time in ms (the first call counts too: caches warm up in play as well)."""
    best = float("inf")
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best * 1000.0, result


_Case = tuple[Callable[[], object], Callable[[], object] | None]
"""One input: the solver's call and, when scipy is there, the ILP reference's call."""


def _row(name: str, cases: Sequence[_Case], repeats: int, note: str = "") -> dict[str, Any]:
    times: list[float] = []
    ilp_times: list[float] = []
    disagreements = 0
    for solve, reference in cases:
        ms, got = _time(solve, repeats)
        times.append(ms)
        if reference is not None:
            ref_ms, expected = _time(reference, 1)
            ilp_times.append(ref_ms)
            if got != expected:
                disagreements += 1
    row: dict[str, Any] = {
        "name": name,
        "n": len(cases),
        "median_ms": statistics.median(times),
        "max_ms": max(times),
        "ilp_median_ms": statistics.median(ilp_times) if ilp_times else None,
        "ilp_max_ms": max(ilp_times) if ilp_times else None,
        "disagreements": disagreements if ilp_times else None,
        "note": note,
    }
    row["ratio"] = row["median_ms"] / row["ilp_median_ms"] if ilp_times else None
    row["ratio_max"] = row["max_ms"] / row["ilp_max_ms"] if ilp_times else None
    return row


def _ilp_available() -> bool:
    try:
        import scipy.optimize  # noqa: F401
    except ImportError:
        return False
    return True


def run_rules_benchmark(repeats: int = 3, seed: int = 0, inputs: int = 20) -> list[dict[str, Any]]:
    """Time the solver (best of ``repeats`` per input) and the ILP reference on ``inputs`` inputs per row."""
    rng = random.Random(seed)
    have_ilp = _ilp_available()
    if have_ilp:
        from referee import ilp
    rows: list[dict[str, Any]] = []

    for size in (14, 20, 30):
        cases: list[_Case] = []
        for _ in range(inputs):
            deck = full_set()
            rng.shuffle(deck)
            rack = deck[:size]
            cases.append((partial(can_open, rack, 30), partial(ilp.ilp_can_open, rack, 30) if have_ilp else None))
        rows.append(_row(f"can_open, rack of {size}", cases, repeats))

    tables = {size: [random_table(rng, size) for _ in range(inputs)] for size in (40, 80, 104)}
    for size, made in tables.items():
        cases = []
        for sets, _pool in made:
            tiles = _table_tiles(sets)
            rng.shuffle(tiles)
            cases.append(
                (
                    partial(_arranges, tiles),
                    partial(ilp.ilp_arrange_feasible, tiles) if have_ilp else None,
                )
            )
        rows.append(_row(f"arrange, valid table of {size}", cases, repeats))
    for size, made in tables.items():
        cases = []
        for sets, pool in made:
            tiles = _table_tiles(sets) + _rack_from(rng, pool, rng.randint(1, 3))
            rng.shuffle(tiles)
            cases.append(
                (
                    partial(_arranges, tiles),
                    partial(ilp.ilp_arrange_feasible, tiles) if have_ilp else None,
                )
            )
        rows.append(_row(f"arrange, table of {size} + 1-3 tiles", cases, repeats, "often infeasible"))

    for size, made in tables.items():
        for rack_size in (1, 2, 3):
            cases = []
            for sets, pool in made:
                table = _table_tiles(sets)
                rack = _rack_from(rng, pool, rack_size)
                cases.append(
                    (
                        partial(_best_play_value, table, rack),
                        partial(ilp.ilp_best_play_value, table, rack) if have_ilp else None,
                    )
                )
            rows.append(_row(f"best_play, table of {size} + rack of {rack_size}", cases, repeats))

    rows.append(_check_move_row(rng, inputs, repeats, have_ilp))
    return rows


def _arranges(tiles: list[Tile]) -> bool:
    return arrange(tiles) is not None


def _best_play_value(table: list[Tile], rack: list[Tile]) -> int | None:
    arrangement = best_play(table, rack)
    return None if arrangement is None else arrangement.value


def _check_move_row(rng: random.Random, inputs: int, repeats: int, have_ilp: bool) -> dict[str, Any]:
    """``check_move`` on a 100-tile table where a rack tile joins a set (the other engineer's module)."""
    note = "ILP reference: ilp_arrange_feasible of the after table"
    try:
        from referee.moves import check_move
        from referee.profiles import get_profile
        from referee.table import Table
    except ImportError as exc:
        return {"name": "check_move, table of 100", "n": 0, "note": f"skipped: {exc}"}
    if have_ilp:
        from referee import ilp
    profile = get_profile("pl-championship")
    cases: list[_Case] = []
    for _ in range(inputs):
        sets, pool = random_table(rng, 100)
        tile = pool[0]
        before = Table(sets=tuple(sets), loose=())
        after = Table(sets=tuple(sets), loose=(tile,))
        after_tiles = [*_table_tiles(sets), tile]
        cases.append(
            (
                partial(check_move, before, after, profile=profile, opened=True, elapsed_s=10.0),
                partial(ilp.ilp_arrange_feasible, after_tiles) if have_ilp else None,
            )
        )
    row = _row("check_move, table of 100", cases, repeats, note)
    row["disagreements"] = None  # a ruling and a feasibility flag are different answers
    return row


def format_rules_benchmark(rows: Sequence[dict[str, Any]]) -> str:
    """A plain-text table of the rows, with the reference's availability spelled out."""
    header = (
        f"{'row':<40} {'n':>3} {'median ms':>10} {'max ms':>9} {'ILP med':>9} {'ILP max':>9}"
        f" {'ratio':>7} {'ratio max':>9} {'disagree':>8}"
    )
    lines = [header, "-" * len(header)]
    notes = []
    for row in rows:
        if not row.get("n"):
            lines.append(f"{row['name']:<40} {'-':>3}  {row.get('note', '')}")
            continue
        ilp = row.get("ilp_median_ms")
        cells = [
            f"{row['name']:<40}",
            f"{row['n']:>3}",
            f"{row['median_ms']:>10.2f}",
            f"{row['max_ms']:>9.2f}",
            f"{ilp:>9.2f}" if ilp is not None else f"{'n/a':>9}",
            f"{row['ilp_max_ms']:>9.2f}" if ilp is not None else f"{'n/a':>9}",
            f"{row['ratio']:>7.3f}" if ilp is not None else f"{'n/a':>7}",
            f"{row['ratio_max']:>9.3f}" if ilp is not None else f"{'n/a':>9}",
            f"{row['disagreements']:>8}" if row.get("disagreements") is not None else f"{'-':>8}",
        ]
        lines.append(" ".join(cells))
        if row.get("note"):
            notes.append(f"{row['name']}: {row['note']}")
    if all(row.get("ilp_median_ms") is None for row in rows if row.get("n")):
        notes.append('ILP reference unavailable: pip install scipy (or pip install -e ".[bench]"); solver figures only')
    lines.extend(["", *notes] if notes else [])
    return "\n".join(lines)
