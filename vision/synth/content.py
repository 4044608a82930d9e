"""What lies on a synthetic table: sets as in play (valid runs and groups with jokers, some invalid), loose tiles.

Drawn from a physical tile supply (copies x 52 + jokers) so tables are possible, unless a recipe raises
the copies to balance the classes for training.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from referee.sets import TileSet
from referee.table import Table
from referee.tiles import COLOURS, JOKER, NUMBER_TILES, Tile


@dataclass(frozen=True, slots=True)
class ContentParams:
    tiles: tuple[int, int] = (12, 80)
    """Range of tiles on the table (sets + loose)."""
    invalid_set_share: float = 0.1
    loose_share: float = 0.05
    joker_share: float = 0.06
    """Probability that a tile position in a set becomes a joker (capped by the supply)."""
    copies: int = 2
    jokers: int = 2


class Supply:
    """The tiles still available to lay: each number tile ``copies`` times, ``jokers`` jokers."""

    def __init__(self, copies: int, jokers: int) -> None:
        self.left: Counter[Tile] = Counter({t: copies for t in NUMBER_TILES})
        self.left[JOKER] = jokers

    def take(self, tiles: list[Tile]) -> bool:
        need = Counter(tiles)
        if any(self.left[t] < n for t, n in need.items()):
            return False
        self.left -= need
        return True

    def any_tile(self, rng: np.random.Generator) -> Tile | None:
        available = [t for t, n in self.left.items() if n > 0 and not t.is_joker]
        if not available:
            return None
        tile = available[rng.integers(len(available))]
        self.left[tile] -= 1
        return tile


def random_table(rng: np.random.Generator, params: ContentParams) -> Table:
    supply = Supply(params.copies, params.jokers)
    target = int(rng.integers(params.tiles[0], params.tiles[1] + 1))
    sets: list[TileSet] = []
    laid = 0
    for _ in range(200):
        if laid >= target:
            break
        candidate = _random_set(rng, params, supply)
        if candidate is None:
            continue
        sets.append(TileSet(tuple(candidate)))
        laid += len(candidate)
    loose = []
    for _ in range(int(rng.binomial(max(1, laid // 10), params.loose_share * 4))):
        tile = supply.any_tile(rng)
        if tile is not None:
            loose.append(tile)
    return Table(tuple(sets), tuple(loose))


def _random_set(rng: np.random.Generator, params: ContentParams, supply: Supply) -> list[Tile] | None:
    if rng.random() < 0.55:
        colour = COLOURS[rng.integers(4)]
        length = int(min(13, rng.choice([3, 3, 3, 4, 4, 5, 6, 7, 9, 13])))
        start = int(rng.integers(1, 15 - length))
        tiles = [Tile(colour, n) for n in range(start, start + length)]
    else:
        number = int(rng.integers(1, 14))
        colours = list(rng.permutation(4)[: rng.choice([3, 4])])
        tiles = [Tile(COLOURS[c], number) for c in colours]
    tiles = [JOKER if rng.random() < params.joker_share else t for t in tiles]
    if all(t.is_joker for t in tiles):
        return None
    if rng.random() < params.invalid_set_share:
        tiles = _break(rng, tiles)
    return tiles if supply.take(tiles) else None


def _break(rng: np.random.Generator, tiles: list[Tile]) -> list[Tile]:
    """Make a set invalid the way players do: too short, a wrong tile, or tiles swapped."""
    roll = rng.random()
    if roll < 0.4 and len(tiles) > 2:
        return tiles[:2]
    if roll < 0.8:
        index = int(rng.integers(len(tiles)))
        other = NUMBER_TILES[rng.integers(len(NUMBER_TILES))]
        return [*tiles[:index], other, *tiles[index + 1 :]]
    if len(tiles) > 2:
        i, j = rng.choice(len(tiles), 2, replace=False)
        tiles = list(tiles)
        tiles[i], tiles[j] = tiles[j], tiles[i]
    return tiles
