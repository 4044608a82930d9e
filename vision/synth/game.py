"""Simulated Rummikub games with injected violations: the ground truth a filmed game is benchmarked against.

A renderer films each move from above; the referee pipeline reads the video and its rulings are compared
with ``expected``, which is what the rules engine says about the exact tables. Pure Python (standard
library and :mod:`referee` only) so that the ground truth never depends on the imaging stack.

Layout convention, so that a renderer can keep every set where it lies: a set the move did not touch keeps
its tiles and its place in the order; a set that grew, shrank or had a joker replaced stays in its place;
sets the move made (new sets, the results of a split or a rearrangement) are appended at the end.

>>> game = simulate_game(players=2, seed=1, violation_rate=0.0, max_moves=6)
>>> len(game.moves), game.ending
(6, 'move-limit')

Size: 873 lines: the simulated game's value types and their JSON (about 140 lines), the plan helpers and ``_Simulator``
(about 500 lines), of which the violation injectors (``_inject_*`` and their helpers, about 240 lines) only read and
change the simulator's plan. The next split is the injectors into a module of their own (to do).
"""

from __future__ import annotations

import json
import random
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from referee.moves import Code, Ruling, Verdict, check_move
from referee.profiles import Profile, get_profile
from referee.sets import SetKind, TileSet, check_set
from referee.solver import best_play, max_meld
from referee.table import Table
from referee.tiles import COLOURS, JOKER, NUMBER_TILES, Tile

__all__ = ["CODES", "ENDINGS", "LATE_MOVES", "LateMove", "SimGame", "SimMove", "full_set", "simulate_game"]

CODES: tuple[str, ...] = tuple(code.value for code in Code)
"""Every violation code of RULES.md §9, in the order injections cycle through them."""
ENDINGS = ("out", "pool-exhausted", "move-limit", "time-limit", "late-move")
LATE_MOVES = ("valid-at-limit", "touched-after-limit", "unfinished-at-limit")
"""The moves over time a game can script (issue 17, RULES.md §6): every set valid when the time limit passes and
nothing touched after it; the same, but hands back over the tiles after the limit; a new set still two tiles when
the limit passes (the rest in hand), finished after it."""
FORMAT = "rummikub-sim-game/1"

P_JOKER_SWAP = 0.7
"""How often an opened player who can swap a table joker (and reuse it) does so."""
P_REARRANGE = 0.5
"""How often an opened player with tiles left after laying and extending tries a rearrangement."""
MAX_REARRANGE_SETS = 4
"""Table sets a rearrangement may take apart: few, so the solver stays fast and the move looks human."""
MAX_RACK_SUBSET = 3


MIN_AGREED_LIMIT_S = 6.0
"""The shortest limit a simulated game agrees: its moves last a few seconds (a draw 2-8 s, at least 1 s under it)."""
LATE_OVERRUN_S = 1.5
"""How long after the time limit a scripted late move ends (its ``duration_s`` is the limit plus this)."""

# --------------------------------------------------------------------------- public data


@dataclass(frozen=True, slots=True)
class LateMove:
    """A move scripted over the time limit: the table when the limit passed and hands over the table after it, what
    the camera can see and the ruling follows (:func:`referee.moves.check_move`'s ``table_at_limit`` and
    ``touched_after_limit``)."""

    kind: str
    """One of :data:`LATE_MOVES`."""
    limit_s: float
    """The time limit the move overran (the profile's, or one agreed at the table)."""
    table_at_limit: Table
    touched_after_limit: bool

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "limit_s": self.limit_s, "table_at_limit": self.table_at_limit.to_json(),
                "touched_after_limit": self.touched_after_limit}  # fmt: skip


@dataclass(frozen=True, slots=True)
class SimMove:
    """One move as the camera sees it, the player's rack around it and the engine's ruling on it."""

    index: int
    player: int
    kind: str
    """"draw" (the table is unchanged, a tile was drawn) or "play"."""
    before: Table
    after: Table
    opened: bool
    """The player had opened before this move."""
    duration_s: float
    """How long the move took, from the end of the previous move."""
    injected: tuple[str, ...]
    """Violation codes deliberately injected in this move; empty for a plausible move."""
    expected: dict[str, Any]
    """``check_move(before, after, opened=opened, profile=profile, elapsed_s=duration_s).to_dict()``."""
    rack_before: tuple[Tile, ...]
    rack_after: tuple[Tile, ...]
    """After the ruling was applied: a revert gives the played tiles back and adds the penalty tiles."""
    pool_before: int = 0
    """Tiles in the pool before the move (with the racks and the table it accounts for every tile)."""
    pool_after: int = 0
    late: LateMove | None = None
    """How a move scripted over time stood at the limit (``expected`` is ruled on it); None for the others."""

    @property
    def verdict(self) -> str:
        return self.expected["verdict"]

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "player": self.player,
            "kind": self.kind,
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "opened": self.opened,
            "duration_s": self.duration_s,
            "injected": list(self.injected),
            "expected": self.expected,
            "rack_before": [str(t) for t in self.rack_before],
            "rack_after": [str(t) for t in self.rack_after],
            "pool_before": self.pool_before,
            "pool_after": self.pool_after,
            **({} if self.late is None else {"late": self.late.to_json()}),
        }


@dataclass
class SimGame:
    profile: str
    players: int
    seed: int
    moves: list[SimMove]
    final_racks: list[tuple[Tile, ...]]
    ending: str
    """One of :data:`ENDINGS`."""
    violation_rate: float = 0.0
    time_limit_s: float | None = None
    """A time limit agreed at the table (None: the profile's)."""
    late_move: str | None = None
    """The kind of move scripted over time (:data:`LATE_MOVES`): the game's first play, and its last move."""

    def injection_counts(self) -> dict[str, int]:
        """Moves with each injected code, every code listed (zeros included) so headers compare across games."""
        counts = Counter(code for move in self.moves for code in move.injected)
        return {code: counts[code] for code in CODES}

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "profile": self.profile,
            "players": self.players,
            "seed": self.seed,
            "violation_rate": self.violation_rate,
            "injected": self.injection_counts(),
            "moves": len(self.moves),
            "duration_s": round(sum(m.duration_s for m in self.moves), 1),
            "ending": self.ending,
            "final_racks": [[str(t) for t in rack] for rack in self.final_racks],
            **({} if self.time_limit_s is None else {"time_limit_s": self.time_limit_s}),
            **({} if self.late_move is None else {"late_move": self.late_move}),
        }

    def to_jsonl_lines(self) -> Iterator[str]:
        """The header, then one line per move; keys sorted so equal games give byte-identical lines."""
        yield json.dumps(self.header(), sort_keys=True)
        for move in self.moves:
            yield json.dumps(move.to_json(), sort_keys=True)


def full_set(profile: Profile | str) -> list[Tile]:
    """Every tile of the profile's box in canonical order: ``copies`` of each number tile, then the jokers."""
    rules = get_profile(profile)
    return [tile for tile in NUMBER_TILES for _ in range(rules.copies)] + [JOKER] * rules.jokers


def simulate_game(
    *,
    players: int,
    seed: int,
    violation_rate: float = 0.1,
    profile: str = "pl-championship",
    max_moves: int | None = None,
    max_duration_s: float | None = None,
    time_limit_s: float | None = None,
    late_move: str | None = None,
) -> SimGame:
    """Play one game; the same arguments always give the same game (``random.Random(seed)`` is the only chance).

    ``time_limit_s``: a limit agreed at the table (None: the profile's). ``late_move`` (one of :data:`LATE_MOVES`):
    the game's first play goes over the limit that way and the game ends after it (ending ``late-move``; a game that
    ends before any play has none).
    """
    return _Simulator(
        players=players,
        seed=seed,
        violation_rate=violation_rate,
        profile=profile,
        max_moves=max_moves,
        max_duration_s=max_duration_s,
        time_limit_s=time_limit_s,
        late_move=late_move,
    ).run()


# --------------------------------------------------------------------------- plans


@dataclass
class _Plan:
    """A move being built: the table layout at its end and what the player holds in hand."""

    sets: list[TileSet]
    hand: Counter[Tile]
    manipulated: bool = False

    def copy(self) -> _Plan:
        return _Plan(list(self.sets), Counter(self.hand), self.manipulated)

    def table(self) -> Table:
        return Table(tuple(self.sets))

    def hand_tiles(self, *, jokers: bool = True) -> list[Tile]:
        return sorted(t for t in (+self.hand).elements() if jokers or not t.is_joker)

    def lay(self, tile_sets: Iterable[TileSet]) -> None:
        """New sets from the hand go at the end of the table."""
        for tile_set in tile_sets:
            self.hand -= Counter(tile_set.tiles)
            self.sets.append(tile_set)

    def played(self, before: Table) -> Counter[Tile]:
        return self.table().counts() - before.counts()


def _valid(tiles: Sequence[Tile], rules: Profile) -> bool:
    return check_set(tiles, rules).valid


def _broken(tiles: Sequence[Tile], rules: Profile) -> bool:
    """Invalid in any order: not even a run once put in order (that is ``run-out-of-order``, not ``invalid-set``)."""
    check = check_set(tiles, rules)
    return not check.valid and check.reordered is None


def _extended(tile_set: TileSet, tile: Tile, rules: Profile) -> TileSet | None:
    """The set with ``tile`` added at an end, if that is still a valid set."""
    for tiles in ((*tile_set.tiles, tile), (tile, *tile_set.tiles)):
        if _valid(tiles, rules):
            return TileSet(tiles)
    return None


def _extend_sets(plan: _Plan, rules: Profile, indices: Sequence[int] | None = None, limit: int | None = None) -> int:
    """Add hand tiles (never jokers: players keep them) at the ends of sets, in place; returns how many."""
    added = 0
    progress = True
    while progress and (limit is None or added < limit):
        progress = False
        for tile in sorted(set(plan.hand_tiles(jokers=False))):
            for i in indices if indices is not None else range(len(plan.sets)):
                grown = _extended(plan.sets[i], tile, rules)
                if grown is not None:
                    plan.sets[i] = grown
                    plan.hand[tile] -= 1
                    added += 1
                    progress = True
                    break
            if limit is not None and added >= limit:
                break
    return added


def _joker_swaps(sets: Sequence[TileSet], hand: Counter[Tile], rules: Profile) -> list[tuple[int, TileSet, Tile]]:
    """(set index, set with a joker replaced, the replacing tile) for every joker the hand can replace."""
    swaps = []
    for index, tile_set in enumerate(sets):
        check = check_set(tile_set.tiles, rules)
        if not check.valid or check.reading is None or JOKER not in tile_set.tiles:  # a valid set has a reading
            continue
        reading = check.reading
        for position, tile in enumerate(tile_set.tiles):
            if not tile.is_joker:
                continue
            if reading.kind is SetKind.RUN:
                options = [Tile(reading.colour, reading.numbers[position])]
            else:
                present = {t.colour for t in tile_set.tiles if not t.is_joker}
                options = [Tile(c, reading.numbers[0]) for c in COLOURS if c not in present]
            for option in options:
                tiles = (*tile_set.tiles[:position], option, *tile_set.tiles[position + 1 :])
                if hand[option] > 0 and _valid(tiles, rules):
                    swaps.append((index, TileSet(tiles), option))
    return swaps


def _near(a: Tile, b: Tile) -> bool:
    """Tiles that could end up in one set: same number, or same colour within two."""
    if a.number is None or b.number is None:  # a joker
        return False
    return a.number == b.number or (a.colour == b.colour and abs(a.number - b.number) <= 2)


def _relayout(
    sets: Sequence[TileSet], taken: Sequence[int], result: Iterable[TileSet], original: Sequence[TileSet] = ()
) -> tuple[list[TileSet], int]:
    """Replace the sets at ``taken`` by ``result``: sets that came out as they were stay put, the rest go at the end.

    "As they were" is now or, for a set that grew earlier in the move, as it lay before the move (``original``
    is the table before the move; sets only ever get appended during a move, so its indices still hold).
    Returns the new layout and how many of the taken sets really changed.
    """
    layout = list(sets)
    unmatched = list(taken)
    fresh = []
    for tile_set in result:
        same = next((i for i in unmatched if layout[i].layout_key == tile_set.layout_key), None)
        if same is None:
            same = next(
                (i for i in unmatched if i < len(original) and original[i].layout_key == tile_set.layout_key), None
            )
            if same is not None:
                layout[same] = original[same]
        if same is None:
            fresh.append(tile_set)
        else:
            unmatched.remove(same)
    gone = set(unmatched)
    return [s for i, s in enumerate(layout) if i not in gone] + fresh, len(gone)


def _removable(tile_set: TileSet, rules: Profile) -> list[tuple[int, TileSet]]:
    """(position, what is left) for each number tile whose removal leaves a valid set (run ends, groups of 4)."""
    positions = range(len(tile_set)) if len(tile_set) <= 4 else (0, len(tile_set) - 1)
    out = []
    for position in positions:
        if tile_set.tiles[position].is_joker:
            continue
        rest = tile_set.tiles[:position] + tile_set.tiles[position + 1 :]
        if _valid(rest, rules):
            out.append((position, TileSet(rest)))
    return out


@dataclass(frozen=True, slots=True)
class _Late:
    """A plausible move scripted over the time limit: the table it ends on, its duration, its ruling, its truth."""

    after: Table
    duration_s: float
    ruling: Ruling
    move: LateMove


# --------------------------------------------------------------------------- the simulator


class _Simulator:
    """The state of one game: pool, racks, table, who has opened, the clock, and the injections still owed."""

    def __init__(
        self,
        *,
        players: int,
        seed: int,
        violation_rate: float,
        profile: str,
        max_moves: int | None,
        max_duration_s: float | None,
        time_limit_s: float | None = None,
        late_move: str | None = None,
    ) -> None:
        self.rules = get_profile(profile)
        if not 2 <= players <= self.rules.max_players:
            raise ValueError(f"{self.rules.name} is played by 2 to {self.rules.max_players} players, not {players}")
        if not 0.0 <= violation_rate <= 1.0:
            raise ValueError(f"violation_rate must lie in [0, 1], got {violation_rate}")
        if time_limit_s is not None and not MIN_AGREED_LIMIT_S <= time_limit_s <= 3600:
            raise ValueError(f"a synthetic game's time limit is {MIN_AGREED_LIMIT_S:g} to 3600 s, not {time_limit_s:g}")
        if late_move is not None and late_move not in LATE_MOVES:
            raise ValueError(f"a late move is one of {', '.join(LATE_MOVES)}, not {late_move!r}")
        self.agreed_limit_s = time_limit_s
        if time_limit_s is not None:  # the one carrier of an agreed limit: the profile, replaced
            self.rules = replace(self.rules, time_limit_s=time_limit_s)
        self.limit_s = self.rules.time_limit_s
        if late_move is not None and self.limit_s is None:
            raise ValueError(f"{self.rules.name} has no time limit: agree one to script a late move")
        self.late_move = late_move
        self.players, self.seed, self.rate = players, seed, violation_rate
        self.max_moves, self.max_duration_s = max_moves, max_duration_s
        self.rng = random.Random(seed)
        self.pool = full_set(self.rules)
        self.rng.shuffle(self.pool)
        self.racks: list[list[Tile]] = []
        for _ in range(players):
            self.racks.append(sorted(self.pool[-self.rules.rack_size :]))
            del self.pool[-self.rules.rack_size :]
        self.table = Table()
        self.opened = [False] * players
        self.clock = 0.0
        self.moves: list[SimMove] = []
        self.pending: deque[str] = deque(CODES)
        """Codes in the order to try next: an injected code goes to the back, one not possible now stays ahead."""

    # -- the game loop ---------------------------------------------------------------------------
    def run(self) -> SimGame:
        ending = self._play()
        return SimGame(
            profile=self.rules.name,
            players=self.players,
            seed=self.seed,
            moves=self.moves,
            final_racks=[tuple(rack) for rack in self.racks],
            ending=ending,
            violation_rate=self.rate,
            time_limit_s=self.agreed_limit_s,
            late_move=self.late_move,
        )

    def _play(self) -> str:
        while True:
            if self.max_moves is not None and len(self.moves) >= self.max_moves:
                return "move-limit"
            if self.max_duration_s is not None and self.clock >= self.max_duration_s:
                return "time-limit"
            move = self._turn(len(self.moves))
            self.moves.append(move)
            self.clock += move.duration_s
            if move.late is not None:
                return "late-move"
            if move.kind == "play" and move.verdict == Verdict.OK.value and not move.rack_after:
                return "out"
            if not self.pool:
                return "pool-exhausted"

    def _turn(self, index: int) -> SimMove:
        player = index % self.players
        rack = tuple(self.racks[player])
        before, opened, pool_before = self.table, self.opened[player], len(self.pool)
        base = self._plausible(player)
        late = self._late(player, base) if self.late_move is not None and base is not None else None
        chosen = self._inject(player, base) if late is None and self.rng.random() < self.rate else None
        injected: tuple[str, ...] = ()
        if late is not None:
            after, duration, ruling = late.after, late.duration_s, late.ruling
        elif chosen is None:
            duration = self._duration(base)
            after = before if base is None else base.table()
            ruling = self._rule(before, after, opened, duration)
            if ruling.verdict is not Verdict.OK:  # a bug in the plausible moves, never the players' luck
                raise AssertionError(f"plausible move {index} was ruled {ruling.codes}: {before} -> {after}")
        else:
            after, duration, injected, ruling = chosen
        rack_after = self._apply(player, before, after, ruling)
        return SimMove(
            index=index,
            player=player,
            kind=ruling.kind,
            before=before,
            after=after,
            opened=opened,
            duration_s=duration,
            injected=injected,
            expected=ruling.to_dict(),
            rack_before=rack,
            rack_after=rack_after,
            pool_before=pool_before,
            pool_after=len(self.pool),
            late=None if late is None else late.move,
        )

    def _rule(self, before: Table, after: Table, opened: bool, duration: float) -> Ruling:
        return check_move(before, after, opened=opened, profile=self.rules, elapsed_s=duration)

    def _late(self, player: int, base: _Plan) -> _Late | None:
        """The plausible move ``base`` over the time limit, as ``self.late_move`` scripts it; None when it cannot
        be (an unfinished move needs a new set of three or more, to be two tiles when the time runs out)."""
        assert self.late_move is not None and self.limit_s is not None
        done = base.table()
        at_limit, touched = done, self.late_move == "touched-after-limit"
        if self.late_move == "unfinished-at-limit":
            laid = Counter(s.layout_key for s in self.table.sets)
            new = []
            for i, tile_set in enumerate(done.sets):
                if laid[tile_set.layout_key]:
                    laid[tile_set.layout_key] -= 1
                elif len(tile_set) >= 3:
                    new.append(i)
            if not new:
                return None
            index = new[-1]  # the set laid last
            half = TileSet(done.sets[index].tiles[:2])
            at_limit, touched = Table((*done.sets[:index], half, *done.sets[index + 1 :])), True
        duration = round(self.limit_s + LATE_OVERRUN_S, 1)
        opened = self.opened[player]
        ruling = check_move(
            self.table, done, opened=opened, profile=self.rules, elapsed_s=duration, table_at_limit=at_limit,
            touched_after_limit=touched,
        )  # fmt: skip
        return _Late(done, duration, ruling, LateMove(self.late_move, self.limit_s, at_limit, touched))

    def _apply(self, player: int, before: Table, after: Table, ruling: Ruling) -> tuple[Tile, ...]:
        """Carry out the ruling the way a referee would: keep a good move, or restore and hand out the penalty.

        A review (a foreign tile, a run out of order) is corrected like a revert; its penalty is the ruling's,
        i.e. none.
        """
        rack = Counter(self.racks[player])
        if ruling.verdict is Verdict.OK and ruling.kind == "draw":
            rack.update(self._draw(1))
        elif ruling.verdict is Verdict.OK:
            played = Counter(ruling.played)
            if played - rack:
                raise AssertionError(f"tiles played that were not on the rack: {played - rack}")
            rack -= played
            self.table = after
            self.opened[player] = True
        else:
            self.table = before
            rack.update(self._draw(ruling.penalty_tiles))
        self.racks[player] = sorted(rack.elements())
        return tuple(self.racks[player])

    def _draw(self, count: int) -> list[Tile]:
        drawn = self.pool[len(self.pool) - min(count, len(self.pool)) :]
        del self.pool[len(self.pool) - len(drawn) :]
        return drawn

    def _duration(self, plan: _Plan | None, *, over_limit: bool = False) -> float:
        """Mostly 5-50 s for a play, more for a manipulation, a few seconds for a draw; under the limit unless told."""
        limit = self.limit_s
        if over_limit and limit is not None:
            return round(limit + self.rng.uniform(1.0, 30.0), 1)
        if plan is None:
            seconds = self.rng.uniform(2.0, 8.0)
        else:
            tiles = sum(plan.played(self.table).values())
            seconds = self.rng.uniform(5.0, 35.0) + 1.5 * tiles
            if plan.manipulated:
                seconds += self.rng.uniform(8.0, 20.0)
        if limit is not None:
            seconds = min(seconds, limit - self.rng.uniform(0.5, 5.0))
        return round(seconds, 1)

    # -- plausible moves ---------------------------------------------------------------------------
    def _start(self, player: int) -> _Plan:
        return _Plan(list(self.table.sets), Counter(self.racks[player]))

    def _plausible(self, player: int) -> _Plan | None:
        """What a sensible player does; None means draw."""
        plan = self._start(player)
        if not self.opened[player]:
            return self._opening(plan)
        return self._opened_play(plan)

    def _opening(self, plan: _Plan) -> _Plan | None:
        """Lay the best sets of the rack if they reach the threshold; the table is not touched."""
        meld = max_meld(plan.hand_tiles())
        if not meld.sets or meld.value < self.rules.opening_threshold:
            return None
        plan.lay(meld.sets)
        return plan

    def _opened_play(self, plan: _Plan) -> _Plan | None:
        """Swap a joker sometimes, lay new sets, extend sets, sometimes rearrange; None when nothing was played."""
        if self.rng.random() < P_JOKER_SWAP:
            self._swap_joker(plan)
        plan.lay(max_meld(plan.hand_tiles()).sets)
        _extend_sets(plan, self.rules)
        played = bool(plan.played(self.table))
        if plan.hand_tiles(jokers=False) and (not played or self.rng.random() < P_REARRANGE):
            self._rearrange(plan)
        return plan if plan.played(self.table) else None

    def _swap_joker(self, plan: _Plan) -> bool:
        """Replace a table joker by the tile it stands for and reuse the joker in a new set (RULES.md §5.4)."""
        swaps = _joker_swaps(plan.sets, plan.hand, self.rules)
        self.rng.shuffle(swaps)
        for index, replaced, tile in swaps:
            hand = plan.hand - Counter([tile]) + Counter([JOKER])
            meld = max_meld(sorted(hand.elements()))
            if sum(s.tiles.count(JOKER) for s in meld.sets) < 1:
                continue
            plan.sets[index] = replaced
            plan.hand = hand
            plan.lay(meld.sets)
            plan.manipulated = True
            return True
        return False

    def _rearrange(self, plan: _Plan) -> bool:
        """Take apart a few sets near 1-3 rack tiles and lay them out again with some of those tiles."""
        tiles = plan.hand_tiles(jokers=False)
        chosen = self.rng.sample(tiles, min(len(tiles), self.rng.randint(1, MAX_RACK_SUBSET)))
        related = [i for i, s in enumerate(plan.sets) if any(_near(a, b) for a in s.tiles for b in chosen)]
        if len(related) > MAX_REARRANGE_SETS:
            related = sorted(self.rng.sample(related, MAX_REARRANGE_SETS))
        if not related:
            return False
        table_tiles = [t for i in related for t in plan.sets[i].tiles]
        arrangement = best_play(table_tiles, chosen)
        if arrangement is None:
            return False
        used = Counter(chosen) - Counter(arrangement.unused)
        if not used:
            return False
        plan.sets, changed = _relayout(plan.sets, related, arrangement.sets, self.table.sets)
        plan.hand -= used
        plan.manipulated = plan.manipulated or changed > 0
        return True

    # -- injections ----------------------------------------------------------------------------------
    def _inject(self, player: int, base: _Plan | None) -> tuple[Table, float, tuple[str, ...], Ruling] | None:
        """Try the owed codes in turn; keep the first injection the engine rules exactly as meant.

        Codes whose chance is rare (a table joker the rack can replace, an opening onto a laid table) go first
        when the chance comes, or short games would never show them.
        """
        opened = self.opened[player]
        rare = self._rare_chances(player, base)
        for code in sorted(self.pending, key=lambda c: c not in rare):
            plan = _INJECTORS[code](self, player, None if base is None else base.copy())
            if plan is None:
                continue
            after = plan.table()
            duration = self._duration(plan, over_limit=code == Code.TIMEOUT.value)
            ruling = self._rule(self.table, after, opened, duration)
            if set(ruling.codes) != {code}:
                continue
            self.pending.remove(code)
            self.pending.append(code)
            return after, duration, (code,), ruling
        return None

    def _rare_chances(self, player: int, base: _Plan | None) -> set[str]:
        if not self.opened[player]:
            return {Code.OPENING_MANIPULATION.value} if base is not None and self.table.sets else set()
        if _joker_swaps(self.table.sets, Counter(self.racks[player]), self.rules):
            return {Code.JOKER_KEPT.value}
        return set()

    def _inject_invalid_set(self, player: int, base: _Plan | None) -> _Plan | None:
        """Leave a set of two tiles (a set not finished), or put a tile that does not fit at the end of a run."""
        plan = base or self._start(player)
        variants = [self._two_tile_set, self._wrong_tile_in_run]
        self.rng.shuffle(variants)
        for variant in variants:
            result = variant(plan.copy(), player)
            if result is not None:
                return result
        return None

    def _two_tile_set(self, plan: _Plan, player: int) -> _Plan | None:
        tiles = plan.hand_tiles(jokers=False)
        pairs = [(a, b) for a, b in combinations(tiles, 2) if a != b and _near(a, b)]
        if not pairs:
            return None
        plan.lay([TileSet(self.rng.choice(pairs))])
        return plan

    def _wrong_tile_in_run(self, plan: _Plan, player: int) -> _Plan | None:
        if not self.opened[player]:
            return None
        runs = [s for s in plan.sets if check_set(s.tiles, self.rules).kind is SetKind.RUN]
        tiles = plan.hand_tiles(jokers=False)
        options = [(s, t) for s in runs for t in tiles if t.colour == s.tiles[-1].colour or s.tiles[-1].is_joker]
        options = [
            (s, t) for s, t in options or [(s, t) for s in runs for t in tiles] if _broken((*s.tiles, t), self.rules)
        ]
        if not options:
            return None
        tile_set, tile = self.rng.choice(options)
        plan.sets[plan.sets.index(tile_set)] = TileSet((*tile_set.tiles, tile))
        plan.hand[tile] -= 1
        return plan

    def _inject_tile_returned(self, player: int, base: _Plan | None) -> _Plan | None:
        """A real move, plus a table tile (a run end, a group's fourth) taken into the rack; every set stays valid."""
        if base is None or not self.opened[player]:
            return None
        before, after = self.table.counts(), base.table().counts()
        options = [
            (i, rest, s.tiles[position])
            for i, s in enumerate(base.sets)
            for position, rest in _removable(s, self.rules)
            if after[s.tiles[position]] <= before[s.tiles[position]]
        ]
        if not options:
            return None
        index, rest, tile = self.rng.choice(options)
        base.sets[index] = rest
        base.hand[tile] += 1
        return base

    def _inject_joker_kept(self, player: int, base: _Plan | None) -> _Plan | None:
        """Replace a table joker by its tile from the rack and keep the joker; lay what else the rack allows."""
        if not self.opened[player]:
            return None
        plan = self._start(player)
        swaps = _joker_swaps(plan.sets, plan.hand, self.rules)
        if not swaps:
            return None
        index, replaced, tile = self.rng.choice(swaps)
        plan.sets[index] = replaced
        plan.hand[tile] -= 1
        plan.hand[JOKER] += 1
        plan.lay(max_meld(plan.hand_tiles(jokers=False)).sets)
        return plan

    def _inject_no_tile_from_rack(self, player: int, base: _Plan | None) -> _Plan | None:
        """Rearrange the table without a rack tile: move a tile from one set to another, or split a long run."""
        if not self.opened[player]:
            return None
        variants = [self._move_table_tile, self._split_run]
        self.rng.shuffle(variants)
        for variant in variants:
            plan = variant(self._start(player))
            if plan is not None:
                plan.manipulated = True
                return plan
        return None

    def _move_table_tile(self, plan: _Plan, among: Sequence[int] | None = None) -> _Plan | None:
        """Move a tile from one set (a run end, a group's fourth) onto another where it fits; both stay in place."""
        indices = sorted(range(len(plan.sets)) if among is None else among)
        moves = []
        for i in indices:
            donor = plan.sets[i]
            for _position, rest in _removable(donor, self.rules):
                tile = _removed_tile(donor, rest)
                for j in indices:
                    grown = None if i == j else _extended(plan.sets[j], tile, self.rules)
                    if grown is not None:
                        moves.append((i, rest, j, grown))
        if not moves:
            return None
        i, rest, j, grown = self.rng.choice(moves)
        plan.sets[i], plan.sets[j] = rest, grown
        return plan

    def _split_run(self, plan: _Plan, among: Sequence[int] | None = None) -> _Plan | None:
        """Split a long run in two: the first part stays in place, the second goes at the end."""
        splits = [
            (i, cut)
            for i in sorted(range(len(plan.sets)) if among is None else among)
            for s in (plan.sets[i],)
            for cut in range(3, len(s) - 2)
            if _valid(s.tiles[:cut], self.rules) and _valid(s.tiles[cut:], self.rules)
        ]
        if not splits:
            return None
        i, cut = self.rng.choice(splits)
        tiles = plan.sets[i].tiles
        plan.sets[i] = TileSet(tiles[:cut])
        plan.sets.append(TileSet(tiles[cut:]))
        return plan

    def _inject_opening_below(self, player: int, base: _Plan | None) -> _Plan | None:
        """An unopened player lays one low set (e.g. 2-3-4), worth less than the threshold."""
        if self.opened[player] or self.rules.opening_threshold <= 0:
            return None
        plan = self._start(player)
        low = [t for t in plan.hand_tiles() if t.number is None or t.number <= 9]
        for tiles in (low, [t for t in low if not t.is_joker]):
            for tile_set in max_meld(tiles).sets:
                small = tile_set.tiles[:3]
                check = check_set(small, self.rules)
                if check.valid and check.value < self.rules.opening_threshold:
                    plan.lay([TileSet(small)])
                    return plan
        return None

    def _inject_opening_manipulation(self, player: int, base: _Plan | None) -> _Plan | None:
        """An opening worth enough that also touches the sets already on the table.

        Either a rack tile goes onto an old set, or old sets are rearranged (a tile moved, a run split).
        """
        if self.opened[player] or base is None:
            return None
        old = list(range(len(self.table.sets)))
        self.rng.shuffle(old)
        variants: list[Callable[[_Plan], _Plan | None]] = [
            lambda plan: plan if _extend_sets(plan, self.rules, old, limit=1) else None,
            lambda plan: self._move_table_tile(plan, old),
            lambda plan: self._split_run(plan, old),
        ]
        for variant in variants:
            plan = variant(base.copy())
            if plan is not None:
                return plan
        return None

    def _inject_timeout(self, player: int, base: _Plan | None) -> _Plan | None:
        """A good move that takes too long (the duration is set over the limit by the caller)."""
        if base is None or self.limit_s is None or self.rules.valid_table_at_timeout_stands:
            return None
        return base

    def _inject_run_out_of_order(self, player: int, base: _Plan | None) -> _Plan | None:
        """A run laid from the rack with two neighbours swapped (5-7-6, 12-joker-13): valid only when reordered."""
        plan = base or self._start(player)
        laid = Counter(self.table.sets)
        new = []
        for index, tile_set in enumerate(plan.sets):
            if laid[tile_set] > 0:
                laid[tile_set] -= 1
            elif check_set(tile_set.tiles, self.rules).kind is SetKind.RUN:
                new.append(index)
        if not new:  # nothing laid this turn: lay a run of the rack
            runs = [s for s in max_meld(plan.hand_tiles()).sets if check_set(s.tiles, self.rules).kind is SetKind.RUN]
            if not runs:
                return None
            plan.lay([self.rng.choice(runs)])
            new = [len(plan.sets) - 1]
        index = self.rng.choice(new)
        tiles = list(plan.sets[index].tiles)
        swaps = list(range(len(tiles) - 1))
        self.rng.shuffle(swaps)
        for i in swaps:
            swapped = (*tiles[:i], tiles[i + 1], tiles[i], *tiles[i + 2 :])
            if check_set(swapped, self.rules).out_of_order:
                plan.sets[index] = TileSet(swapped)
                return plan
        return None

    def _inject_impossible(self, player: int, base: _Plan | None) -> _Plan | None:
        """A foreign tile: a copy more than the box holds of a tile whose copies are all on the table."""
        plan = base or self._start(player)
        on_table = plan.table().counts()
        foreign = [t for t in NUMBER_TILES if on_table[t] >= self.rules.copies]
        if self.rules.jokers and on_table[JOKER] >= self.rules.jokers:
            foreign.append(JOKER)
        self.rng.shuffle(foreign)
        hand = sorted(set(plan.hand_tiles(jokers=False)))
        for tile in foreign:
            places = [i for i, s in enumerate(plan.sets) if _extended(s, tile, self.rules) is not None]
            if places:
                index = self.rng.choice(places)
                extended = _extended(plan.sets[index], tile, self.rules)
                assert extended is not None  # places holds only the sets the tile extends
                plan.sets[index] = extended
                return plan
            for a, b in combinations(hand, 2):
                tiles = tuple(sorted((tile, a, b)))
                if _valid(tiles, self.rules):
                    plan.hand -= Counter((a, b))
                    plan.sets.append(TileSet(tiles))
                    return plan
        return None


def _removed_tile(tile_set: TileSet, rest: TileSet) -> Tile:
    ((tile, _),) = (Counter(tile_set.tiles) - Counter(rest.tiles)).items()
    return tile


_INJECTORS: dict[str, Callable[[_Simulator, int, _Plan | None], _Plan | None]] = {
    Code.INVALID_SET.value: _Simulator._inject_invalid_set,
    Code.TILE_RETURNED_TO_RACK.value: _Simulator._inject_tile_returned,
    Code.JOKER_KEPT.value: _Simulator._inject_joker_kept,
    Code.NO_TILE_FROM_RACK.value: _Simulator._inject_no_tile_from_rack,
    Code.OPENING_BELOW_THRESHOLD.value: _Simulator._inject_opening_below,
    Code.OPENING_MANIPULATION.value: _Simulator._inject_opening_manipulation,
    Code.TIMEOUT.value: _Simulator._inject_timeout,
    Code.IMPOSSIBLE_TABLE.value: _Simulator._inject_impossible,
    Code.RUN_OUT_OF_ORDER.value: _Simulator._inject_run_out_of_order,
}
assert set(_INJECTORS) == set(CODES), "every code of RULES.md §9 needs an injector"
