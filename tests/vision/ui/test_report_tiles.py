"""Tiles, sets and tables drawn as HTML for the report (``vision/ui/report_tiles.py``), from typed tables."""

from __future__ import annotations

import re

import pytest

from referee.table import Table
from referee.tiles import Tile
from vision.ui.report_tiles import Chip, chip, layout, played_sets


def _chips(html: str) -> list[str]:
    """Each chip as ``class|title``."""
    return [f"{c}|{t}" for c, t in re.findall(r'<span class="(chip[^"]*)" title="([^"]*)">', html)]


@pytest.mark.parametrize(
    ("tile", "expected"),
    [
        (Chip(Tile.parse("red-7")), '<span class="chip red" title="red-7">7</span>'),
        (Chip(Tile.parse("joker")), '<span class="chip joker" title="joker">J</span>'),
        (
            Chip(Tile.parse("blue-12"), 0.25, True),
            '<span class="chip blue uncertain" title="blue-12 (25% sure)">12</span>',
        ),
    ],
    ids=["plain", "joker", "uncertain-with-confidence"],
)
def test_a_tile_is_drawn_in_its_colour(tile: Chip, expected: str) -> None:
    assert chip(tile) == expected


def test_a_reading_the_table_holds_uncertain_is_drawn_uncertain_flagged_or_not() -> None:
    # The second tile's confidence is under 0.5 without an "uncertain" flag: the referee's Table reads it as
    # uncertain (and rules on it so), and the report draws what the ruling saw.
    table = Table.from_json({"sets": [[{"label": "red-1", "confidence": 0.9}, {"label": "red-2", "confidence": 0.3},
                                       {"label": "red-3", "uncertain": True}]], "loose": []})  # fmt: skip
    assert _chips(layout(table)) == ["chip red|red-1 (90% sure)", "chip red uncertain|red-2 (30% sure)",
                                     "chip red uncertain|red-3"]  # fmt: skip


def test_played_tiles_are_ringed_once_each_and_loose_ones_listed_apart() -> None:
    after = Table.parse("[red-1 red-2 red-3 red-4] [black-7 blue-7 orange-7] loose: red-9")
    played = tuple(Tile.parse(t) for t in ("red-4", "black-7", "blue-7", "orange-7", "red-9"))
    drawn = layout(after, played)
    assert drawn.count(" ring") == 5 and "loose" in drawn
    rows = re.findall(r"<li>(.*?)</li>", played_sets(after, played))
    assert len(rows) == 3 and "added to a set of 3" in rows[0] and "new set" in rows[1] and "not in a set" in rows[2]
    assert layout(Table()) == '<div class="layout"><i>empty table</i></div>'
