"""Tiles, sets and tables drawn as HTML for the report (:mod:`vision.ui.report`): a tile as a small tile (its number
in its colour, dashed where its reading is uncertain, ringed where it was played), a table as rows of sets, the tiles
a move played set by set. They take the typed :class:`~referee.table.Table` of a move: the reader's confidence of
each tile from its :attr:`~referee.table.Table.extras`, uncertain where the table holds it so
(:attr:`~referee.table.Table.uncertain`: flagged in the log, or read under 0.5), as the ruling saw it. (The report
read the log's dicts before, and drew only the flagged ones so; logs this program writes flag every one.)
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from referee.table import LOOSE, Place, Table
from referee.tiles import Tile


@dataclass(frozen=True, slots=True)
class Chip:
    """A tile as the page draws it: with the reader's confidence and doubt where the table has them."""

    tile: Tile
    confidence: float | None = None
    uncertain: bool = False


def placed(table: Table, set_index: int) -> list[Chip]:
    """The chips of one set of a table (or its loose tiles, :data:`~referee.table.LOOSE`)."""
    tiles = table.loose if set_index == LOOSE else table.sets[set_index].tiles
    out = []
    for position, tile in enumerate(tiles):
        place: Place = (set_index, position)
        confidence = table.extras.get(place, {}).get("confidence")
        number = confidence if isinstance(confidence, int | float) else None
        out.append(Chip(tile, number, place in table.uncertain))
    return out


def played_sets(after: Table, played: Sequence[Tile]) -> str:
    """The tiles played, set by set as they lie after the move (the whole set shown, the played tiles ringed)."""
    left = Counter(played)
    rows = []
    for index in range(len(after.sets)):
        drawn = placed(after, index)
        here = Counter(c.tile for c in drawn) & left
        if not here:
            continue
        left -= here
        new = sum(here.values()) == len(drawn)
        note = "new set" if new else f"added to a set of {len(drawn) - sum(here.values())}"
        rows.append(
            f'<li><span class="set">{chips(drawn, Counter(here))}</span> <span class="muted">{note}</span></li>'
        )
    if left:
        rows.append(f'<li><span class="set loose">{chips(map(Chip, left.elements()))}</span>'
                    ' <span class="muted">not in a set</span></li>')  # fmt: skip
    return f'<ul class="played">{"".join(rows)}</ul>'


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def chip(drawn: Chip, *, ring: bool = False) -> str:
    """A tile drawn as a small tile: its number in its colour (a joker as J)."""
    tile = drawn.tile
    colour = "joker" if tile.is_joker else tile.colour.value if tile.colour else "unknown"
    face = "J" if tile.is_joker else str(tile.number)
    tip = str(tile) + (f" ({float(drawn.confidence):.0%} sure)" if drawn.confidence is not None else "")
    classes = " ".join(["chip", colour, *(["uncertain"] if drawn.uncertain else []), *(["ring"] if ring else [])])
    return f'<span class="{classes}" title="{_e(tip)}">{_e(face)}</span>'


def chips(drawn: Iterable[Chip], ringed: Counter[Tile] | None = None) -> str:
    """Tiles drawn one after the other; ``ringed``: how many of each tile to ring (counted down as they are)."""
    out = []
    for one in drawn:
        ring = ringed is not None and ringed[one.tile] > 0
        if ring and ringed is not None:
            ringed[one.tile] -= 1
        out.append(chip(one, ring=ring))
    return "".join(out)


def layout(table: Table, played: Iterable[Tile] = ()) -> str:
    """A table as rows of sets (and the loose tiles), the tiles in ``played`` ringed."""
    ringed = Counter(played)
    sets = [f'<span class="set">{chips(placed(table, i), ringed)}</span>' for i in range(len(table.sets))]
    if table.loose:
        loose = chips(placed(table, LOOSE), ringed)
        sets.append(f'<span class="set loose" title="loose tiles, in no set">loose {loose}</span>')
    return f'<div class="layout">{"".join(sets) or "<i>empty table</i>"}</div>'
