"""Exact solver for Rummikub meld problems: best opening, full partitions and the best play.

The algorithm is the dynamic programme of van Rijn, Takes & Vis (2015, "The Complexity of Rummikub
Problems"), run as a branch-and-bound depth-first search with memoisation:

* the numbers are processed from 13 down to 1, so the high-valued decisions come first and the
  value bound (what the remaining tiles are worth) prunes early;
* the state at a number is, per colour, the multiset of open runs (length capped at 3, plus
  whether the run already holds a number tile, so that no all-joker run is ever closed) and the
  number of jokers left;
* at a number, every colour decides which of its runs go on (with a number tile or a joker),
  which stop (only at length >= 3) and which start; the tiles left over go to groups of that
  number, which are feasible iff some count ``m`` of groups has every colour at most ``m`` times,
  at least one number tile per group and 3-4 tiles per group once the jokers fill them;
* the memo keeps, per (number, state, jokers left), a proven lower and upper bound of the best
  value still reachable, which makes the search the DP when it has to prove optimality and a
  quick DFS when the first branch already succeeds.

Tiles are either mandatory (a table that must be re-partitioned) or optional (a rack); one core
answers ``max_meld``, ``can_open``, ``arrange`` and ``best_play``.

The solver is exact for any number of copies of a tile and for up to ``_JOKER_CAP`` jokers.

>>> from referee.tiles import parse_tiles
>>> max_meld(parse_tiles("r10 r11 r12 r13 b1 k1 o1")).value
49
>>> can_open(parse_tiles("r1 r2 r3 b9 b10"), 30)
False
>>> [str(s) for s in arrange(parse_tiles("j r12 r13")).sets]
['joker red-12 red-13']

Size: 615 lines, one module on purpose: the per-colour run moves, the group feasibility and the search with its memo
(``_Search``, about 200 lines) are one algorithm sharing one private state encoding (``_State``, the ``_AFTER_*``
tables), and the four public questions above are thin calls into it; split apart, that encoding would have to become an
interface.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache

from referee.sets import TileSet
from referee.tiles import COLOURS, JOKER, MAX_NUMBER, Colour, Tile

__all__ = ["Arrangement", "arrange", "best_play", "can_open", "max_meld"]

_NEG = -(10**9)
"""Value of an infeasible node; far below any real value so sums stay negative."""
_JOKER_CAP = 8
"""Jokers one colour may use at one number; beyond 8 jokers in one input the search would be partial."""
_N_COLOURS = len(COLOURS)

# Open-run codes: 1-3 = run holding a number tile, of length 1, 2, >=3; 4-6 = run of jokers only
# (started by jokers, its number tile still to come), of length 1, 2, >=3.
_CLOSABLE = 3
_AFTER_REAL = {1: 2, 2: 3, 3: 3, 4: 2, 5: 3, 6: 3}
_AFTER_JOKER = {1: 2, 2: 3, 3: 3, 4: 5, 5: 6, 6: 6}
_STILL_NEEDED = {1: 2, 2: 1, 3: 0, 4: 2, 5: 1, 6: 1}
"""Tiles a run still needs below the current number before it may be closed."""


_State = tuple[tuple[int, ...], ...]
"""Per colour, the sorted codes of the runs left open (a search node with the jokers left)."""
_Node = tuple[_State, int]
_Detail = tuple[tuple["_ColourMove", ...], int, int]
"""How a step was made: each colour's move, the jokers given to groups, the tiles groups took."""
_Child = tuple[int, _Node, _Detail]
"""A successor node with the best gain reaching it."""


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Disjoint valid sets made from some tiles, their value and the tiles left over."""

    sets: tuple[TileSet, ...]
    value: int
    unused: tuple[Tile, ...]


# --------------------------------------------------------------------------- per-colour moves


@dataclass(frozen=True, slots=True)
class _ColourMove:
    """What one colour does at one number: the runs it leaves open and the tiles it hands to groups."""

    runs: tuple[int, ...]
    """Open-run codes after this number, sorted."""
    real: int
    """Number tiles of this colour and number placed in runs."""
    jokers: int
    """Jokers placed in this colour's runs at this number."""
    group_min: int
    """Mandatory tiles left over, which groups must take."""
    group_max: int
    """All tiles left over, which groups may take."""
    actions: tuple[str, ...]
    """Per open run (in sorted order): 'R' go on with a tile, 'J' go on with a joker, 'E' stop."""
    starts: tuple[int, int]
    """Runs started here: (with a number tile, with a joker)."""


@lru_cache(maxsize=1 << 16)
def _colour_moves(
    runs: tuple[int, ...], mandatory: int, optional: int, jokers: int, below: int, next1: int, next2: int
) -> tuple[tuple[int, int, int, int, tuple[_ColourMove, ...]], ...]:
    """Every useful move of one colour at one number, cached because the same small cases recur.

    Moves come in buckets of equal (jokers used, tiles in runs, tiles left for groups), which
    differ only in the runs they leave open: the group check is made once per bucket.

    ``below`` is how many numbers remain under this one (capped at 3), ``next1``/``next2`` how many
    tiles of this colour lie one and two numbers lower: they reject moves that leave runs that
    cannot be finished. Ending a closable run while starting a new one is never useful (going on
    with the same tile is at least as good), so those moves are not generated.
    """
    tiles = mandatory + optional
    moves: dict[tuple[tuple[int, ...], int, int], _ColourMove] = {}
    for actions in _run_actions(runs):
        used_real = actions.count("R")
        used_jokers = actions.count("J")
        if used_real > tiles or used_jokers > jokers:
            continue
        kept = [
            (_AFTER_REAL if a == "R" else _AFTER_JOKER)[code] for code, a in zip(runs, actions, strict=True) if a != "E"
        ]
        may_start = "E" not in actions
        for real_starts in range(tiles - used_real + 1 if may_start else 1):
            for joker_starts in range(jokers - used_jokers + 1 if may_start else 1):
                new_runs = tuple(sorted(kept + [1] * real_starts + [4] * joker_starts))
                real = used_real + real_starts
                jokers_here = used_jokers + joker_starts
                if not _can_finish(new_runs, below, next1, next2, jokers - jokers_here):
                    continue
                key = (new_runs, real, jokers_here)
                if key in moves:
                    continue
                moves[key] = _ColourMove(
                    new_runs,
                    real,
                    jokers_here,
                    max(0, mandatory - real),
                    tiles - real,
                    actions,
                    (real_starts, joker_starts),
                )
    buckets: dict[tuple[int, int], list[_ColourMove]] = {}
    for move in moves.values():
        buckets.setdefault((move.jokers, move.real), []).append(move)
    return tuple(
        (jokers_used, real, group[0].group_min, group[0].group_max, tuple(group))
        for (jokers_used, real), group in buckets.items()
    )


def _run_actions(runs: tuple[int, ...]) -> list[tuple[str, ...]]:
    """Actions for the sorted open runs, one per multiset choice (runs with equal codes are interchangeable)."""
    out: list[tuple[str, ...]] = [()]
    i = 0
    while i < len(runs):
        code = runs[i]
        j = i
        while j < len(runs) and runs[j] == code:
            j += 1
        count = j - i
        choices = "RJE" if code == _CLOSABLE else "RJ"
        blocks = _multiset_blocks(choices, count)
        out = [prefix + block for prefix in out for block in blocks]
        i = j
    return out


@cache
def _multiset_blocks(choices: str, count: int) -> tuple[tuple[str, ...], ...]:
    """Sorted action tuples of length ``count``: one representative per multiset of actions."""
    if count == 0:
        return ((),)
    out = []
    for k, first in enumerate(choices):
        for rest in _multiset_blocks(choices[k:], count - 1):
            out.append((first, *rest))
    return tuple(out)


def _can_finish(runs: tuple[int, ...], below: int, next1: int, next2: int, jokers: int) -> bool:
    """Necessary check that the open runs can still be completed by the numbers below."""
    need1 = need2 = 0
    for code in runs:
        still = _STILL_NEEDED[code]
        if still > below:
            return False
        if code > _CLOSABLE:
            # A joker-only run needs a number tile of its colour within reach of the jokers left.
            if below == 0:
                return False
            if next1 == 0 and (next2 == 0 or jokers == 0) and jokers < 2:
                return False
        if still >= 1:
            need1 += 1
        if still >= 2:
            need2 += 1
    missing = max(0, need1 - next1) + max(0, need2 - next2)
    return missing <= jokers


# --------------------------------------------------------------------------- groups


@lru_cache(maxsize=1 << 16)
def _group_best(low: tuple[int, ...], high: tuple[int, ...], jokers: int) -> int:
    """Most number tiles groups of one number can take, or -1 when the mandatory ones do not fit.

    With ``m`` groups each colour appears at most ``m`` times; a balanced round-robin spread
    gives every group 1+ number tiles and room for the jokers iff m <= T, 3m <= T + jokers <= 4m.
    """
    best = -1
    if jokers == 0 and not any(low):
        best = 0
    top = (sum(high) + jokers) // 3
    for m in range(max(1, max(low)), top + 1):
        t_min = sum(low)
        t_max = sum(min(h, m) for h in high)
        lo = max(t_min, m, 3 * m - jokers)
        hi = min(t_max, 4 * m - jokers)
        if lo <= hi and hi > best:
            best = hi
    return best


def _group_split(low: tuple[int, ...], high: tuple[int, ...], jokers: int, total: int) -> tuple[list[int], int]:
    """Tiles per colour and group count that realise ``_group_best``'s total (for rebuilding sets)."""
    for m in range(max(1, max(low)), (sum(high) + jokers) // 3 + 1):
        caps = [min(h, m) for h in high]
        if not (max(sum(low), m, 3 * m - jokers) <= total <= min(sum(caps), 4 * m - jokers)):
            continue
        counts = list(low)
        extra = total - sum(counts)
        for c in range(len(counts)):
            add = min(extra, caps[c] - counts[c])
            counts[c] += add
            extra -= add
        return counts, m
    return [0] * len(low), 0


def _build_groups(number: int, counts: list[int], groups: int, jokers: int) -> list[list[Tile]]:
    """Spread the tiles round-robin over the groups (so no group repeats a colour), then the jokers."""
    sets: list[list[Tile]] = [[] for _ in range(groups)]
    slot = 0
    for c, count in enumerate(counts):
        for _ in range(count):
            sets[slot % groups].append(Tile(COLOURS[c], number))
            slot += 1
    for _ in range(jokers):
        target = min(sets, key=len)
        target.append(JOKER)
    return sets


# --------------------------------------------------------------------------- the search


class _Search:
    """One problem: tile counts split into mandatory and optional, and the memoised bounds."""

    def __init__(self, mandatory: Counter[Tile], optional: Counter[Tile], exact: bool, mirrored: bool = False) -> None:
        self.exact = exact
        self.mirrored = mirrored
        # The search runs over positions 13..1; a mirrored search reads number 14 - p at position p,
        # so that the same code also sweeps the numbers upwards (runs are symmetric, values are not).
        self.number = [MAX_NUMBER + 1 - p if mirrored else p for p in range(MAX_NUMBER + 3)]
        self.jokers = mandatory[JOKER] + optional[JOKER]
        self.optional_jokers = optional[JOKER]
        self.mandatory = [[0] * _N_COLOURS for _ in range(MAX_NUMBER + 3)]
        self.optional = [[0] * _N_COLOURS for _ in range(MAX_NUMBER + 3)]
        for source, table in ((mandatory, self.mandatory), (optional, self.optional)):
            for tile, count in source.items():
                if tile.colour is not None and tile.number is not None and count > 0:
                    position = MAX_NUMBER + 1 - tile.number if mirrored else tile.number
                    table[position][tile.colour.index] += count
        self.counts = [
            [a + b for a, b in zip(m, o, strict=True)] for m, o in zip(self.mandatory, self.optional, strict=True)
        ]
        self.usable = self._usable_counts()
        # bound[p]: value of the tiles at positions p or lower that could be in some set;
        # best_number[p]: the most a joker can stand for at positions p or lower.
        self.bound = [0] * (MAX_NUMBER + 2)
        self.best_number = [0] * (MAX_NUMBER + 2)
        for p in range(1, MAX_NUMBER + 1):
            self.bound[p] = self.bound[p - 1] + self.number[p] * sum(self.usable[p])
            self.best_number[p] = max(self.best_number[p - 1], self.number[p])
        self.memo: dict[tuple[int, _State, int], tuple[int, int]] = {}
        self.children_cache: dict[tuple[int, _State, int], list[_Child]] = {}
        self.budget = 1 << 60

    def _usable_counts(self) -> list[list[int]]:
        """Tiles that could join at least one set: a tile with no possible partner is worth nothing."""
        counts, jokers = self.counts, self.jokers
        usable = [[0] * _N_COLOURS for _ in range(MAX_NUMBER + 3)]
        for v in range(1, MAX_NUMBER + 1):
            colours_here = sum(1 for c in range(_N_COLOURS) if counts[v][c])
            for c in range(_N_COLOURS):
                if not counts[v][c]:
                    continue
                near = [counts[u][c] > 0 if 1 <= u <= MAX_NUMBER else None for u in range(v - 2, v + 3)]
                run_ok = False
                for start in range(3):
                    window = near[start : start + 3]
                    if None in window:
                        continue
                    if 3 - window.count(True) <= jokers:
                        run_ok = True
                group_ok = colours_here - 1 + jokers >= 2
                if run_ok or group_ok:
                    usable[v][c] = counts[v][c]
        return usable

    def infeasible_mandatory(self) -> bool:
        """Quick necessary check: a mandatory tile that could join no set makes a partition impossible."""
        for v in range(1, MAX_NUMBER + 1):
            for c in range(_N_COLOURS):
                if self.mandatory[v][c] > self.usable[v][c]:
                    return True
        return False

    def upper_bound(self, v: int, jokers: int) -> int:
        return self.bound[v] + jokers * self.best_number[v]

    def children(self, v: int, state: _State, jokers: int) -> list[_Child]:
        """Distinct successor nodes with the best gain reaching each, best gain first."""
        key = (v, state, jokers)
        cached = self.children_cache.get(key)
        if cached is not None:
            return cached
        if self.budget < 0:
            raise _OutOfBudget
        worth = self.number[v]
        mand, opt, counts = self.mandatory[v], self.optional[v], self.counts
        below = min(v - 1, 3)
        cap = min(jokers, _JOKER_CAP)
        per_colour = [
            _colour_moves(state[c], mand[c], opt[c], cap, below, counts[v - 1][c], counts[v - 2][c] if v > 2 else 0)
            for c in range(_N_COLOURS)
        ]
        best: dict[_Node, tuple[int, tuple[_ColourMove, ...], int, int]] = {}
        b0, b1, b2, b3 = per_colour
        for ja, ra, la, ha, ma in b0:
            for jb, rb, lb, hb, mb in b1:
                jab = ja + jb
                if jab > jokers:
                    continue
                for jc, rc, lc, hc, mc in b2:
                    jabc = jab + jc
                    if jabc > jokers:
                        continue
                    for jd, rd, ld, hd, md in b3:
                        used = jabc + jd
                        if used > jokers:
                            continue
                        left = jokers - used
                        placed = ra + rb + rc + rd + used
                        low = (la, lb, lc, ld)
                        high = (ha, hb, hc, hd)
                        for group_jokers in range(left + 1):
                            taken = _group_best(low, high, group_jokers)
                            if taken < 0:
                                continue
                            gain = worth * (placed + taken + group_jokers)
                            rest = left - group_jokers
                            for a in ma:
                                for b in mb:
                                    for c in mc:
                                        for d in md:
                                            node = ((a.runs, b.runs, c.runs, d.runs), rest)
                                            old = best.get(node)
                                            if old is None or gain > old[0]:
                                                best[node] = (gain, (a, b, c, d), group_jokers, taken)
        out = sorted(
            ((g, node, (moves, gj, taken)) for node, (g, moves, gj, taken) in best.items()), key=_by_gain, reverse=True
        )
        self.children_cache[key] = out
        self.budget -= len(out) + 1  # the work of a node grows with its successors
        return out

    def search(self, v: int, state: _State, jokers: int, need: int) -> int:
        """Best value reachable from positions v..1 if it is >= need, else an upper bound below need.

        When not exact, a success may return any value >= need (a lower bound of the best).
        """
        if v == 0:
            if jokers > self.optional_jokers:
                return _NEG
            for runs in state:
                for code in runs:
                    if code != _CLOSABLE:
                        return _NEG
            return 0
        key = (v, state, jokers)
        lo, hi = self.memo.get(key, (_NEG, 1 << 30))
        if hi < need:
            return hi
        if lo >= need and (lo == hi or not self.exact):
            return lo
        bound = self.upper_bound(v, jokers)
        if bound < need:
            return bound
        found = _NEG
        failed = _NEG
        goal = need
        child_bound = self.bound[v - 1]
        joker_worth = self.best_number[v - 1]
        for gain, (child_state, child_jokers), _detail in self.children(v, state, jokers):
            if gain + child_bound + child_jokers * joker_worth < goal:
                failed = max(failed, gain + child_bound + child_jokers * joker_worth)
                continue
            result = gain + self.search(v - 1, child_state, child_jokers, goal - gain)
            if result >= goal:
                found = result
                if not self.exact:
                    break
                goal = result + 1
            elif result > failed:
                failed = result
        if found >= need:
            hi_new = found if self.exact else hi
            self.memo[key] = (max(lo, found), hi_new)
            return found
        self.memo[key] = (lo, min(hi, max(failed, _NEG)))
        return max(failed, _NEG)

    def _step_towards(self, v: int, state: _State, jokers: int, target: int) -> tuple[_State, int, int, _Detail]:
        """The first child from which the memo proves ``target`` (minus the step's gain) reachable."""
        for gain, (child_state, child_jokers), detail in self.children(v, state, jokers):
            result = self.search(v - 1, child_state, child_jokers, target - gain)
            if result >= target - gain:
                return child_state, child_jokers, result, detail
        raise AssertionError("solver memo has no path for the value it reported")  # pragma: no cover

    def rebuild(self, total: int) -> list[list[Tile]]:
        """Walk the memo back down from the root and lay out concrete sets worth ``total``."""
        sets: list[list[Tile]] = []
        groups: list[list[Tile]] = []
        open_runs: list[list[tuple[int, list[Tile]]]] = [[] for _ in range(_N_COLOURS)]
        state: _State = ((),) * _N_COLOURS
        jokers = self.jokers
        target = total
        for v in range(MAX_NUMBER, 0, -1):
            step = self._step_towards(v, state, jokers, target)
            child_state, child_jokers, result, (moves, group_jokers, taken) = step
            number = self.number[v]
            for c, move in enumerate(moves):
                open_runs[c] = _apply_move(number, COLOURS[c], open_runs[c], move, sets)
            low = tuple(m.group_min for m in moves)
            high = tuple(m.group_max for m in moves)
            counts, group_count = _group_split(low, high, group_jokers, taken)
            groups.extend(_build_groups(number, counts, group_count, group_jokers))
            state, jokers, target = child_state, child_jokers, result
        for runs in open_runs:
            sets.extend(tiles for _code, tiles in runs)
        if self.mirrored:  # runs were laid from the top down: read them upwards
            sets = [tiles[::-1] for tiles in sets]
        return sets + groups


class _OutOfBudget(Exception):
    """A search direction used up its node budget; the other direction gets a turn."""


def _by_gain(item: tuple[int, *tuple[object, ...]]) -> int:
    return item[0]


def _apply_move(
    number: int, colour: Colour, runs: list[tuple[int, list[Tile]]], move: _ColourMove, closed: list[list[Tile]]
) -> list[tuple[int, list[Tile]]]:
    """Carry one colour's concrete runs through a move; runs that stop are appended to ``closed``."""
    runs = sorted(runs, key=_by_gain)
    tile = Tile(colour, number)
    out: list[tuple[int, list[Tile]]] = []
    for (code, tiles), action in zip(runs, move.actions, strict=True):
        if action == "E":
            closed.append(tiles)
        elif action == "R":
            out.append((_AFTER_REAL[code], [tile, *tiles]))
        else:
            out.append((_AFTER_JOKER[code], [JOKER, *tiles]))
    real_starts, joker_starts = move.starts
    out.extend((1, [tile]) for _ in range(real_starts))
    out.extend((4, [JOKER]) for _ in range(joker_starts))
    return out


# --------------------------------------------------------------------------- public API


def _root() -> _State:
    return ((),) * _N_COLOURS


_FIRST_BUDGET = 2000
"""Successors the first direction may generate before the other gets a turn; budgets double each round."""


def _solve(
    mandatory: Counter[Tile], optional: Counter[Tile], exact: bool, need: int, upwards_first: bool = False
) -> tuple[_Search, int]:
    """Search downwards from 13 and upwards from 1 in turns, with doubling node budgets.

    The direction matters: a constraint at the low end (a rack tile that only fits low) is found
    at once when sweeping upwards but only after every layout of the high numbers when sweeping
    downwards, and vice versa. Each direction keeps its memo between turns, so the work is at
    most about three times that of the better direction. The garbage collector is paused
    meanwhile: the memo only grows, and collecting it is pure overhead.
    """
    searches = [_Search(mandatory, optional, exact), _Search(mandatory, optional, exact, mirrored=True)]
    if upwards_first:
        searches.reverse()
    budget = _FIRST_BUDGET
    collecting = gc.isenabled()
    gc.disable()
    try:
        while True:
            for search in searches:
                search.budget = budget
                try:
                    return search, search.search(MAX_NUMBER, _root(), search.jokers, need)
                except _OutOfBudget:
                    pass
            budget *= 2
    finally:
        if collecting:
            gc.enable()


def _arrangement(search: _Search, total: int, given: Counter[Tile]) -> Arrangement:
    search.budget = 1 << 60  # the path is in the memo; rebuilding must not be cut short
    raw = search.rebuild(total)
    sets = tuple(TileSet(tuple(tiles)) for tiles in raw)
    used = Counter(t for tiles in raw for t in tiles)
    unused = given - used
    return Arrangement(sets, sum(_set_value(s.tiles) for s in sets), tuple(sorted(unused.elements())))


def _set_value(tiles: tuple[Tile, ...]) -> int:
    """The highest-valued reading of a set laid out by the solver (what ``check_set`` would report).

    Only a set with a single number tile is ambiguous: jokers beside one tile read as a run in
    the laid-out order, ascending or descending (RULES.md §2), or as a group of that number when
    there are at most four tiles.
    """
    real = [(i, t.number) for i, t in enumerate(tiles) if t.number is not None]
    if len(real) != 1:
        (i0, n0), (_, n1) = real[0], real[1]
        if n0 == n1:
            return n0 * len(tiles)
        step = 1 if n1 > n0 else -1
        first = n0 - step * i0
        return sum(first + step * i for i in range(len(tiles)))
    (index, number) = real[0]
    values = []
    for step in (1, -1):
        first, last = number - step * index, number + step * (len(tiles) - 1 - index)
        if min(first, last) >= 1 and max(first, last) <= MAX_NUMBER:
            values.append(sum(range(min(first, last), max(first, last) + 1)))
    if len(tiles) <= 4:
        values.append(number * len(tiles))
    return max(values)


def max_meld(tiles: Iterable[Tile]) -> Arrangement:
    """The most valuable disjoint valid sets the tiles can form (value, not tile count, is maximised)."""
    given = Counter(tiles)
    search, total = _solve(Counter(), given, True, 0)
    return _arrangement(search, total, given)


def can_open(tiles: Iterable[Tile], threshold: int = 30) -> bool:
    """Whether the tiles can form disjoint valid sets worth at least ``threshold`` (0: any one set)."""
    given = Counter(tiles)
    need = max(threshold, 1)
    if _Search(Counter(), given, exact=False).upper_bound(MAX_NUMBER, given[JOKER]) < need:
        return False
    return _solve(Counter(), given, False, need)[1] >= need


def arrange(tiles: Iterable[Tile]) -> Arrangement | None:
    """A partition of all the tiles (jokers included) into valid sets, or None when there is none."""
    given = Counter(tiles)
    if not given:
        return Arrangement((), 0, ())
    if _Search(given, Counter(), exact=False).infeasible_mandatory():
        return None
    search, total = _solve(given, Counter(), False, 0)
    if total < 0:
        return None
    return _arrangement(search, total, given)


def best_play(table: Iterable[Tile], rack: Iterable[Tile]) -> Arrangement | None:
    """The most valuable arrangement using every table tile and any rack tiles, or None if none exists."""
    mandatory = Counter(table)
    optional = Counter(rack)
    if _Search(mandatory, optional, exact=True).infeasible_mandatory():
        return None
    # The rack tiles are what the proof of optimality is about: sweep from their end first.
    numbers = [t.number for t in optional.elements() if t.number is not None]
    upwards = bool(numbers) and sum(numbers) < 7 * len(numbers)
    search, total = _solve(mandatory, optional, True, 0, upwards_first=upwards)
    if total < 0:
        return None
    return _arrangement(search, total, mandatory + optional)
