"""A reference integer programme for the same meld problems as ``referee.solver``: the test oracle.

It is deliberately independent of the solver's DP, and avoids two faults of a published Rummikub
ILP: jokers may stand at *every* position of every run (both ends included) and in groups of
three and of four, and the objective is the *value* of the tiles laid (jokers at the value they
stand for), not their count.

Formulation (``scipy.optimize.milp``, HiGHS):

* runs are windows (colour, first number, length); a window may be laid ``x`` times, and at each
  of its positions ``j <= x`` copies hold a joker and ``x - j`` the number tile. ``sum (x - j) >= x``
  per window keeps every copy holding a number tile (spreading the number tiles round-robin over
  the copies shows the aggregate is exact). The window's value is ``x`` times its numbers'
  sum whichever tiles fill it. Lengths run from 3 to ``max(5, jokers + 3)``: any longer
  run splits into two valid runs unless its number tiles all sit within three places of one end,
  which needs ``length - 3`` jokers, so the model is exact for any number of jokers;
* groups are, per number, a colour subset S and a joker count k with 3 <= |S| + k <= 4, |S| >= 1;
* every tile count is an upper bound (a lower bound for mandatory tiles); jokers likewise.

scipy is imported lazily so that the rules engine keeps no dependency.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from itertools import combinations
from typing import Any

from referee.tiles import COLOURS, JOKER, MAX_NUMBER, Colour, Tile

__all__ = ["ilp_arrange_feasible", "ilp_best_play_value", "ilp_can_open", "ilp_max_meld"]

_MISSING_SCIPY = "the ILP reference needs scipy: pip install scipy"

_Key = Tile | tuple[Colour, int]
"""A constraint row: the joker, or one (colour, number) tile."""
_Entries = list[tuple[_Key, int]]
"""A variable's (row key, coefficient) pairs."""
_Rows = list[tuple[list[tuple[int, int]], float, float]]
"""Rows over variable indices: (coefficients, lower, upper)."""


def _scipy() -> tuple[Any, Any, Any, Any, Any]:  # scipy ships no type stubs
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_array
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(_MISSING_SCIPY) from exc
    return np, Bounds, LinearConstraint, milp, coo_array


def _solve(mandatory: Counter[Tile], optional: Counter[Tile]) -> int | None:
    """Maximum value of disjoint valid sets using every mandatory tile; None when infeasible."""
    np, Bounds, LinearConstraint, milp, coo_array = _scipy()
    total = mandatory + optional
    jokers = total[JOKER]
    copies = max([count for tile, count in total.items() if not tile.is_joker], default=0)
    most = copies + jokers  # no window or group can be laid more often than this

    columns: list[tuple[int, int, _Entries]] = []
    """(value, upper bound, [(row key, coefficient)]) per variable."""
    extra_rows: _Rows = []
    """Rows over variable indices: (coefficients, lower, upper)."""

    def add(value: int, upper: int, entries: _Entries) -> int:
        columns.append((value, upper, entries))
        return len(columns) - 1

    longest = min(MAX_NUMBER, max(5, jokers + 3))
    per_window = jokers >= 3  # only then can a window's copies run out of number tiles
    for colour in COLOURS:
        covering: dict[int, list[int]] = {n: [] for n in range(1, MAX_NUMBER + 1)}
        for length in range(3, longest + 1):
            for first in range(1, MAX_NUMBER - length + 2):
                numbers = range(first, first + length)
                present = sum(total[Tile(colour, n)] > 0 for n in numbers)
                if present == 0 or length - present > jokers:
                    continue
                x = add(sum(numbers), most, [((colour, n), 1) for n in numbers])
                for n in numbers:
                    covering[n].append(x)
                if per_window:
                    _joker_slots(x, colour, numbers, jokers, add, extra_rows)
        if jokers and not per_window:
            # With at most two jokers every run of 3+ holds a number tile, so it is enough to
            # know how many jokers stand for each tile: z of the runs through it.
            for n, windows in covering.items():
                if windows:
                    z = add(0, jokers, [((colour, n), -1), (JOKER, 1)])
                    extra_rows.append(([(z, -1), *((w, 1) for w in windows)], 0, np.inf))
    for number in range(1, MAX_NUMBER + 1):
        colours_present = [c for c in COLOURS if total[Tile(c, number)] > 0]
        for size in range(1, min(4, len(colours_present)) + 1):
            for subset in combinations(colours_present, size):
                for k in range(max(0, 3 - size), 4 - size + 1):
                    if k > jokers:
                        continue
                    entries: _Entries = [((c, number), 1) for c in subset]
                    if k:
                        entries.append((JOKER, k))
                    add(number * (size + k), most, entries)

    if not columns:
        return 0 if not mandatory else None
    keys = sorted({key for _v, _u, entries in columns for key, _c in entries}, key=str)
    row_of = {key: i for i, key in enumerate(keys)}
    n_rows = len(keys) + len(extra_rows)
    rows: list[int] = []
    cols: list[int] = []
    data: list[float] = []
    lower = np.zeros(n_rows)
    upper = np.zeros(n_rows)
    for col, (_value, _upper, column) in enumerate(columns):
        for key, coef in column:
            rows.append(row_of[key])
            cols.append(col)
            data.append(coef)
    for key, i in row_of.items():
        tile = key if isinstance(key, Tile) else Tile(*key)  # the only Tile key is JOKER
        lower[i] = mandatory[tile]
        upper[i] = total[tile]
    for offset, (coefs, lo, hi) in enumerate(extra_rows):
        row = len(keys) + offset
        for col, coef in coefs:
            rows.append(row)
            cols.append(col)
            data.append(coef)
        lower[row], upper[row] = lo, hi
    a = coo_array((data, (rows, cols)), shape=(n_rows, len(columns))).tocsr()
    # Mandatory tiles that no variable can hold make the problem infeasible outright.
    for tile, count in mandatory.items():
        key = JOKER if tile.colour is None or tile.number is None else (tile.colour, tile.number)
        if count and key not in row_of:
            return None
    values = np.array([-v for v, _u, _e in columns], dtype=float)
    result = milp(
        values,
        constraints=LinearConstraint(a, lower, upper),
        integrality=np.ones(len(columns)),
        bounds=Bounds(np.zeros(len(columns)), np.array([u for _v, u, _e in columns], dtype=float)),
    )
    if result.status == 2 or result.x is None:  # infeasible
        return None
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not finish: {result.message}")
    optimum: float = result.fun
    return round(-optimum)


def _joker_slots(
    x: int, colour: Colour, numbers: range, jokers: int, add: Callable[[int, int, _Entries], int], rows: _Rows
) -> None:
    """Per position of a window, the copies holding a joker; every copy keeps a number tile."""
    inf = float("inf")
    holds_real: list[tuple[int, int]] = [(x, len(numbers) - 1)]
    for n in numbers:
        j = add(0, jokers, [((colour, n), -1), (JOKER, 1)])
        rows.append(([(j, 1), (x, -1)], -inf, 0))
        holds_real.append((j, -1))
    rows.append((holds_real, 0, inf))


def ilp_max_meld(tiles: Iterable[Tile]) -> int:
    """Maximum total value of disjoint valid sets (jokers at the value they stand for)."""
    value = _solve(Counter(), Counter(tiles))
    return 0 if value is None else value


def ilp_can_open(tiles: Iterable[Tile], threshold: int = 30) -> bool:
    """Whether sets worth at least ``threshold`` (0: any one set) can be laid."""
    return ilp_max_meld(tiles) >= max(threshold, 1)


def ilp_arrange_feasible(tiles: Iterable[Tile]) -> bool:
    """Whether all the tiles, jokers included, can be partitioned into valid sets."""
    given = Counter(tiles)
    return not given or _solve(given, Counter()) is not None


def ilp_best_play_value(table: Iterable[Tile], rack: Iterable[Tile]) -> int | None:
    """Best total value using every table tile and any rack tiles; None if the table cannot be laid."""
    table_counts = Counter(table)
    return _solve(table_counts, Counter(rack))
