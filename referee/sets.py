"""Sets on the table: runs and groups, jokers, reading order, and the highest-valued valid reading.

A run may be laid ascending or descending in every profile (RULES.md §2); a set whose tiles form a run only
when reordered is not valid as laid, and its check carries the order that would make it one.

>>> TileSet.parse("r5 j r7").check().value
18
>>> TileSet.parse("b5 j j").check().value   # group of fives (15) or run 5-6-7 (18): the higher counts
18
>>> TileSet.parse("r7 r6 r5").check().valid   # descending
True
>>> [str(t) for t in TileSet.parse("r5 r7 r6").check().reordered.tiles]
['red-5', 'red-6', 'red-7']
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise

from referee.profiles import DEFAULT_PROFILE, Profile, get_profile
from referee.tiles import JOKER, MAX_NUMBER, MIN_NUMBER, Colour, Tile, TileError, parse_tiles

MIN_SET_SIZE = 3
MAX_GROUP_SIZE = 4
MAX_RUN_SIZE = MAX_NUMBER - MIN_NUMBER + 1


class SetKind(enum.Enum):
    RUN = "run"
    GROUP = "group"


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read a set: its kind, the number each position stands for, and its value."""

    kind: SetKind
    numbers: tuple[int, ...]
    colour: Colour | None
    """The run's colour; ``None`` for a group."""
    descending: bool = False

    @property
    def value(self) -> int:
        return sum(self.numbers)

    def joker_meanings(self, tiles: Sequence[Tile]) -> list[str]:
        """What each joker stands for, e.g. ``['red-6']`` or ``['5 (blue or orange)']``."""
        if self.kind is SetKind.RUN:
            return [str(Tile(self.colour, n)) for t, n in zip(tiles, self.numbers, strict=True) if t.is_joker]
        present = {t.colour for t in tiles if not t.is_joker}
        missing = " or ".join(c.value for c in Colour if c not in present)
        return [f"{self.numbers[0]} ({missing})" for t in tiles if t.is_joker]


@dataclass(frozen=True, slots=True)
class Reordering:
    """The order in which the tiles of a set that is invalid as laid would make a valid run, and that reading."""

    tiles: tuple[Tile, ...]
    reading: Reading

    def __str__(self) -> str:
        return " ".join(str(t) for t in self.tiles)


@dataclass(frozen=True, slots=True)
class SetCheck:
    """The verdict on one set: valid or not, its best reading, and why not when it is invalid."""

    valid: bool
    reading: Reading | None
    reason: str | None
    reordered: Reordering | None = None
    """For an invalid set whose tiles make a valid run in another order: that order (a person asks for it)."""

    @property
    def kind(self) -> SetKind | None:
        return None if self.reading is None else self.reading.kind

    @property
    def value(self) -> int:
        return 0 if self.reading is None else self.reading.value

    @property
    def out_of_order(self) -> bool:
        """Invalid as laid, valid once its tiles are put in order."""
        return self.reordered is not None

    def to_dict(self) -> dict[str, object]:
        order = self.reordered
        return {
            "valid": self.valid,
            "kind": None if self.kind is None else self.kind.value,
            "value": self.value,
            "reason": self.reason,
            "order": None if order is None else [str(t) for t in order.tiles],
        }


@dataclass(frozen=True, slots=True)
class TileSet:
    """Tiles laid together on the table, in reading order."""

    tiles: tuple[Tile, ...]

    @classmethod
    def parse(cls, text: str | Iterable[str]) -> TileSet:
        return cls(tuple(parse_tiles(text)))

    @classmethod
    def of(cls, tiles: Iterable[Tile | str]) -> TileSet:
        return cls(tuple(t if isinstance(t, Tile) else Tile.parse(t) for t in tiles))

    def __post_init__(self) -> None:
        for tile in self.tiles:
            if not isinstance(tile, Tile):
                raise TileError(f"not a tile: {tile!r}")

    def __iter__(self) -> Iterator[Tile]:
        return iter(self.tiles)

    def __len__(self) -> int:
        return len(self.tiles)

    def __str__(self) -> str:
        return " ".join(str(t) for t in self.tiles)

    def __repr__(self) -> str:
        return f"TileSet.parse({str(self)!r})"

    @property
    def layout_key(self) -> tuple[Tile, ...]:
        """What identifies this set on the table: a group's order means nothing, a run's order does."""
        real = [t for t in self.tiles if not t.is_joker]
        is_group_like = (
            len(real) >= 2 and len({t.number for t in real}) == 1 and len({t.colour for t in real}) == len(real)
        )
        return tuple(sorted(self.tiles)) if is_group_like else self.tiles

    def readings(self, profile: Profile | str = DEFAULT_PROFILE) -> list[Reading]:
        return list(valid_readings(self.tiles, get_profile(profile)))

    def check(self, profile: Profile | str = DEFAULT_PROFILE) -> SetCheck:
        return check_set(self.tiles, get_profile(profile))

    def is_valid(self, profile: Profile | str = DEFAULT_PROFILE) -> bool:
        return self.check(profile).valid


def valid_readings(tiles: Sequence[Tile], profile: Profile) -> Iterator[Reading]:
    """Every valid reading of ``tiles`` in their physical order under ``profile`` (runs either way, RULES.md §2;
    today every profile has the same sets: the profiles differ in timing, opening and scoring)."""
    if len(tiles) < MIN_SET_SIZE or all(t.is_joker for t in tiles):
        return
    group = _group_reading(tiles)
    if group is not None:
        yield group
    yield from _run_readings(tiles, descending=False)
    yield from _run_readings(tiles, descending=True)


def check_set(tiles: Sequence[Tile], profile: Profile) -> SetCheck:
    best = max(valid_readings(tiles, profile), key=lambda r: r.value, default=None)
    if best is not None:
        return SetCheck(True, best, None)
    reason = _why_invalid(tiles)
    reordered = _run_in_order(tiles)
    if reordered is not None:
        reason += f"; put in order ({reordered}) it is a valid run"
    return SetCheck(False, None, reason, reordered)


def _run_in_order(tiles: Sequence[Tile]) -> Reordering | None:
    """The order that makes these tiles a valid run, when one exists (a group is valid in any order).

    The run goes the way the set was laid (descending when its first number tile is higher than its last), jokers
    fill the gaps and then go at the high end while there is room (the highest-valued reading), else the low end.
    """
    real = [t for t in tiles if not t.is_joker]
    numbers = sorted(t.number for t in real if t.number is not None)
    size = len(tiles)
    if size < MIN_SET_SIZE or size > MAX_RUN_SIZE or not real or len({t.colour for t in real}) != 1:
        return None
    if len(set(numbers)) != len(numbers) or numbers[-1] - numbers[0] + 1 > size:
        return None
    start = min(numbers[0], MAX_NUMBER - size + 1)
    run = tuple(range(start, start + size))
    by_number = {t.number: t for t in real}
    ordered = [by_number.get(n, JOKER) for n in run]
    descending = real[0].number > real[-1].number  # type: ignore[operator]
    if descending:
        ordered.reverse()
        run = run[::-1]
    return Reordering(tuple(ordered), Reading(SetKind.RUN, run, real[0].colour, descending))


def _group_reading(tiles: Sequence[Tile]) -> Reading | None:
    if len(tiles) > MAX_GROUP_SIZE:
        return None
    numbers = {t.number for t in tiles if t.number is not None}
    colours = [t.colour for t in tiles if not t.is_joker]
    if len(numbers) != 1 or len(set(colours)) != len(colours):
        return None
    (number,) = numbers
    return Reading(SetKind.GROUP, (number,) * len(tiles), None)


def _run_readings(tiles: Sequence[Tile], *, descending: bool) -> Iterator[Reading]:
    if len(tiles) > MAX_RUN_SIZE:
        return
    colours = {t.colour for t in tiles if not t.is_joker}
    if len(colours) != 1:
        return
    step = -1 if descending else 1
    starts = {t.number - step * i for i, t in enumerate(tiles) if t.number is not None}
    if len(starts) != 1:
        return
    (start,) = starts
    numbers = tuple(start + step * i for i in range(len(tiles)))
    if min(numbers) < MIN_NUMBER or max(numbers) > MAX_NUMBER:
        return
    (colour,) = colours
    yield Reading(SetKind.RUN, numbers, colour, descending)


def _why_invalid(tiles: Sequence[Tile]) -> str:
    size = len(tiles)
    if size < MIN_SET_SIZE:
        return f"only {size} tile{'s' if size != 1 else ''}; a set needs at least {MIN_SET_SIZE}"
    real = [t for t in tiles if not t.is_joker]
    if not real:
        return "only jokers; a set needs at least one number tile"
    colours = {t.colour for t in real if t.colour is not None}
    numbers = {t.number for t in real}
    if len(numbers) == 1 and len(colours) < len(real):
        repeated = next(c for c in colours if sum(t.colour == c for t in real) > 1)
        return f"group of {real[0].number}s repeats {repeated.value}"
    if len(numbers) == 1 and size > MAX_GROUP_SIZE:
        return f"a group has at most {MAX_GROUP_SIZE} tiles, this one has {size}"
    if len(colours) == 1:
        return _why_not_run(tiles)
    if len(numbers) == 1:
        return "not a valid group"
    return "mixes colours and numbers: neither a run nor a group"


def _why_not_run(tiles: Sequence[Tile]) -> str:
    if len(tiles) > MAX_RUN_SIZE:
        return f"a run has at most {MAX_RUN_SIZE} tiles, this one has {len(tiles)}"
    positions = [(i, t.number) for i, t in enumerate(tiles) if t.number is not None]
    (i0, n0) = positions[0]
    for step in (1, -1):
        if all(n == n0 + step * (i - i0) for i, n in positions):
            first, last = n0 - step * i0, n0 + step * (len(tiles) - 1 - i0)
            if min(first, last) < MIN_NUMBER:
                return f"run would need a tile below {MIN_NUMBER} for its jokers"
            return f"run would pass {MAX_NUMBER} (13 is never followed by 1)"
    # the way the set was laid (its first two numbers, else its ends), to name the first break
    step = 1 if positions[-1][1] >= n0 else -1
    if len(positions) > 1 and positions[1][1] != n0:
        step = 1 if positions[1][1] > n0 else -1
    for (i, a), (j, b) in pairwise(positions):
        if b - a != step * (j - i):
            gap = f"{a} then {b}" if j == i + 1 else f"{a} and {b} with {j - i - 1} joker(s) between"
            return f"numbers not consecutive in ascending or descending order: {gap}"
    return "numbers not consecutive in ascending or descending order"
