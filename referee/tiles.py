"""Tiles: the four colours, the numbers 1-13 and the joker, with a text codec that round-trips.

>>> Tile.parse("r7")
Tile.parse('red-7')
>>> str(Tile.parse("JOKER"))
'joker'
"""

from __future__ import annotations

import enum
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

MIN_NUMBER = 1
MAX_NUMBER = 13
JOKER_LABEL = "joker"


class TileError(ValueError):
    """A tile label that cannot be read."""


class Colour(enum.Enum):
    BLACK = "black"
    RED = "red"
    BLUE = "blue"
    ORANGE = "orange"

    @property
    def index(self) -> int:
        return _COLOUR_INDEX[self]

    @property
    def short(self) -> str:
        return _COLOUR_SHORT[self]

    @classmethod
    def parse(cls, text: str) -> Colour:
        key = text.strip().lower()
        try:
            return _COLOUR_BY_NAME[key]
        except KeyError:
            raise TileError(f"unknown colour {text!r} (expected black, red, blue or orange)") from None


COLOURS: tuple[Colour, ...] = tuple(Colour)
_COLOUR_INDEX = {colour: i for i, colour in enumerate(COLOURS)}
_COLOUR_SHORT = {Colour.BLACK: "k", Colour.RED: "r", Colour.BLUE: "b", Colour.ORANGE: "o"}
_COLOUR_BY_NAME = {
    **{c.value: c for c in COLOURS},
    **{short: c for c, short in _COLOUR_SHORT.items()},
    # Loose spellings seen in datasets and on score sheets.
    "bk": Colour.BLACK, "blk": Colour.BLACK, "yellow": Colour.ORANGE, "y": Colour.ORANGE,
}  # fmt: skip

_LABEL_PATTERN = re.compile(r"^\s*([a-z]+)\s*[-_ ]?\s*([0-9]{1,2})\s*$", re.IGNORECASE | re.ASCII)
"""ASCII letters and digits only (Python's ``\\d`` takes Arabic-Indic digits, and case-folding takes the Kelvin
sign for a ``k``): a label in other characters is a typo or a trick, never a tile."""
_JOKER_SPELLINGS = {"joker", "j", "jk", "*"}


@dataclass(frozen=True, slots=True)
class Tile:
    """A number tile (``colour`` and ``number``) or a joker (both ``None``)."""

    colour: Colour | None = None
    number: int | None = None

    def __post_init__(self) -> None:
        if (self.colour is None) != (self.number is None):
            raise TileError(f"a tile needs both a colour and a number, or neither: {self.colour}, {self.number}")
        if self.number is not None and not MIN_NUMBER <= self.number <= MAX_NUMBER:
            raise TileError(f"tile number {self.number} is outside {MIN_NUMBER}-{MAX_NUMBER}")

    @classmethod
    def joker(cls) -> Tile:
        return JOKER

    @classmethod
    def parse(cls, text: str) -> Tile:
        """Read a label loosely: ``red-7``, ``red_7``, ``r7``, ``R 7``, ``joker``, ``j``."""
        if not isinstance(text, str):
            raise TileError(f"a tile label must be text, got {text!r}")
        if text.isascii() and text.strip().lower() in _JOKER_SPELLINGS:
            return JOKER
        match = _LABEL_PATTERN.match(text) if text.isascii() else None
        if match is None:
            raise TileError(f"unknown tile label {text!r} (expected e.g. red-7, k13, joker)")
        colour_text, number_text = match.groups()
        try:
            colour = Colour.parse(colour_text)
        except TileError:
            raise TileError(f"unknown tile label {text!r}: no colour {colour_text!r}") from None
        number = int(number_text)
        if not MIN_NUMBER <= number <= MAX_NUMBER:
            raise TileError(f"unknown tile label {text!r}: numbers run {MIN_NUMBER}-{MAX_NUMBER}")
        return cls(colour, number)

    @property
    def sort_key(self) -> tuple[int, int]:
        """Canonical order: colour by colour (black, red, blue, orange), 1-13, then jokers."""
        if self.colour is None:
            return (len(COLOURS), 0)
        return (self.colour.index, self.number or 0)

    def __lt__(self, other: Tile) -> bool:
        if not isinstance(other, Tile):
            return NotImplemented
        return self.sort_key < other.sort_key

    @property
    def is_joker(self) -> bool:
        return self.colour is None

    @property
    def label(self) -> str:
        return str(self)

    @property
    def short(self) -> str:
        """Short form used in compact text: ``r7``, ``j``."""
        return "j" if self.colour is None else f"{self.colour.short}{self.number}"

    @property
    def face_value(self) -> int:
        """Points of a number tile; a joker's value depends on where it stands, so it has none here."""
        if self.number is None:
            raise ValueError("a joker has no face value of its own")
        return self.number

    def __str__(self) -> str:
        return JOKER_LABEL if self.colour is None else f"{self.colour.value}-{self.number}"

    def __repr__(self) -> str:
        return f"Tile.parse({str(self)!r})"


JOKER = Tile()
NUMBER_TILES: tuple[Tile, ...] = tuple(Tile(c, n) for c in COLOURS for n in range(MIN_NUMBER, MAX_NUMBER + 1))
ALL_LABELS: tuple[str, ...] = (*(str(t) for t in NUMBER_TILES), JOKER_LABEL)
"""The 53 labels in the project's canonical order (colour by colour, 1-13, then the joker)."""


def parse_tiles(text: str | Iterable[str]) -> list[Tile]:
    """Parse tiles separated by spaces or commas, or an iterable of labels."""
    items = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [Tile.parse(item) for item in items]


def format_tiles(tiles: Iterable[Tile]) -> str:
    return " ".join(str(t) for t in tiles)


def tile_counts(tiles: Iterable[Tile]) -> Counter[Tile]:
    return Counter(tiles)
