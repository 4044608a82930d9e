"""The table: sets in reading order plus loose tiles, with JSON and text codecs that round-trip.

Text: ``[red-5 red-6 red-7] [black-3 red-3 blue-3] loose: orange-1``.
JSON: ``{"sets": [["red-5", "red-6", "red-7"], ...], "loose": ["orange-1"]}``; a tile may also be an
object with at least ``"label"`` (vision adds ``"box"``, ``"confidence"`` and ``"uncertain"``). A confidence
that is ``NaN`` or null, or missing beside a ``box``, reads as uncertain; one outside 0-1 is an error.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.sets import TileSet
from referee.tiles import Tile, TileError, parse_tiles

LOOSE = -1
"""Set index used for loose tiles in a :data:`Place`."""

Place = tuple[int, int]
"""Where a tile lies: (set index or :data:`LOOSE`, position)."""

UNCERTAIN_BELOW = 0.5
"""A tile read with a confidence under this is uncertain unless the reader says otherwise."""


class TableError(ValueError):
    """A table that cannot be read: malformed JSON, a bad shape or an unknown tile label."""


@dataclass(frozen=True, slots=True)
class Table:
    sets: tuple[TileSet, ...] = ()
    loose: tuple[Tile, ...] = ()
    uncertain: frozenset[Place] = frozenset()
    """Places whose reading is not certain enough to rule on (from vision)."""
    extras: Mapping[Place, Mapping[str, Any]] = field(default_factory=dict, compare=False, hash=False)
    """Per-place fields carried through from JSON (``box``, ``confidence``...), not part of equality."""

    # -- constructors ---------------------------------------------------------------------------
    @classmethod
    def of(cls, sets: Iterable[Iterable[Tile | str]] = (), loose: Iterable[Tile | str] = ()) -> Table:
        return cls(tuple(TileSet.of(s) for s in sets), tuple(TileSet.of(loose).tiles))

    @classmethod
    def parse(cls, text: str) -> Table:
        """Read the text form; sets in brackets or separated by ``|``, loose tiles after ``loose:``."""
        body, _, loose_text = text.partition("loose:")
        chunks = re.findall(r"\[([^\]]*)\]", body) if "[" in body else body.split("|")
        if "[" in body and re.sub(r"\[[^\]]*\]", "", body).strip():
            raise TableError(f"text outside brackets in table {text!r}")
        try:
            sets = [TileSet.parse(chunk) for chunk in chunks if chunk.strip()]
            loose = parse_tiles(loose_text)
        except TileError as error:
            raise TableError(f"{error} in table {text!r}") from None
        return cls(tuple(sets), tuple(loose))

    @classmethod
    def from_json(cls, data: Any, *, uncertain_below: float = UNCERTAIN_BELOW) -> Table:
        if not isinstance(data, Mapping):
            raise TableError(f"a table is a JSON object with 'sets' and 'loose', got {_preview(data)}")
        unknown = set(data) - {"sets", "loose", "image", "path", "width", "height", "tiles", "meta"}
        if unknown:
            raise TableError(f"unknown field(s) in table: {', '.join(sorted(unknown))}")
        raw_sets, raw_loose = data.get("sets", []), data.get("loose", [])
        if not isinstance(raw_sets, list) or not all(isinstance(s, list) for s in raw_sets):
            raise TableError(f"'sets' must be a list of lists of tiles, got {_preview(raw_sets)}")
        if not isinstance(raw_loose, list):
            raise TableError(f"'loose' must be a list of tiles, got {_preview(raw_loose)}")
        uncertain: set[Place] = set()
        extras: dict[Place, Mapping[str, Any]] = {}

        def read(items: list[Any], set_index: int, where: str) -> tuple[Tile, ...]:
            tiles = []
            for position, item in enumerate(items):
                place = (set_index, position)
                tile, extra, is_uncertain = _read_tile(item, f"{where}[{position}]", uncertain_below)
                tiles.append(tile)
                if extra:
                    extras[place] = extra
                if is_uncertain:
                    uncertain.add(place)
            return tuple(tiles)

        sets = tuple(TileSet(read(s, i, f"sets[{i}]")) for i, s in enumerate(raw_sets))
        loose = read(raw_loose, LOOSE, "loose")
        return cls(sets, loose, frozenset(uncertain), extras)

    @classmethod
    def from_json_text(cls, text: str, *, source: str = "table") -> Table:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise TableError(
                f"{source}: malformed JSON ({error.msg} at line {error.lineno} column {error.colno})"
            ) from None
        try:
            return cls.from_json(data)
        except TableError as error:
            raise TableError(f"{source}: {error}") from None

    @classmethod
    def load(cls, path: str | Path) -> Table:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise TableError(
                f"cannot read table file {str(path)!r}: {getattr(error, 'strerror', None) or error}"
            ) from None
        return cls.from_json_text(text, source=str(path))

    # -- views ----------------------------------------------------------------------------------
    def tiles(self) -> Iterator[Tile]:
        for tile_set in self.sets:
            yield from tile_set
        yield from self.loose

    def places(self) -> Iterator[tuple[Place, Tile]]:
        for i, tile_set in enumerate(self.sets):
            for j, tile in enumerate(tile_set):
                yield (i, j), tile
        for j, tile in enumerate(self.loose):
            yield (LOOSE, j), tile

    def tile_at(self, place: Place) -> Tile:
        set_index, position = place
        return self.loose[position] if set_index == LOOSE else self.sets[set_index].tiles[position]

    def counts(self) -> Counter[Tile]:
        return Counter(self.tiles())

    def __len__(self) -> int:
        return sum(len(s) for s in self.sets) + len(self.loose)

    def is_empty(self) -> bool:
        return len(self) == 0

    def same_layout(self, other: Table) -> bool:
        """The same sets (runs in the same reading order, groups in any) anywhere on the table, same loose tiles."""
        return Counter(s.layout_key for s in self.sets) == Counter(s.layout_key for s in other.sets) and Counter(
            self.loose
        ) == Counter(other.loose)

    # -- codecs ---------------------------------------------------------------------------------
    def to_json(self, *, with_extras: bool = False) -> dict[str, Any]:
        def encode(place: Place, tile: Tile) -> Any:
            extra = self.extras.get(place) if with_extras else None
            flagged = with_extras and place in self.uncertain
            if not extra and not flagged:
                return str(tile)
            return {"label": str(tile), **(extra or {}), **({"uncertain": True} if flagged else {})}

        return {
            "sets": [[encode((i, j), t) for j, t in enumerate(s)] for i, s in enumerate(self.sets)],
            "loose": [encode((LOOSE, j), t) for j, t in enumerate(self.loose)],
        }

    def __str__(self) -> str:
        parts = [f"[{s}]" for s in self.sets]
        if self.loose:
            parts.append("loose: " + " ".join(str(t) for t in self.loose))
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Table.parse({str(self)!r})"


def _read_tile(item: Any, where: str, uncertain_below: float) -> tuple[Tile, dict[str, Any], bool]:
    extra: dict[str, Any] = {}
    if isinstance(item, Mapping):
        if "label" not in item:
            raise TableError(f"{where}: a tile object needs a 'label', got {_preview(item)}")
        extra = {k: v for k, v in item.items() if k not in ("label", "uncertain")}
        label = item["label"]
    else:
        label = item
    if not isinstance(label, str):
        raise TableError(f"{where}: a tile label must be a string, got {_preview(label)}")
    try:
        tile = Tile.parse(label)
    except TileError as error:
        raise TableError(f"{where}: {error}") from None
    flagged = isinstance(item, Mapping) and bool(item.get("uncertain"))
    return tile, extra, flagged or _unsure_confidence(extra, where, uncertain_below)


def _unsure_confidence(extra: Mapping[str, Any], where: str, uncertain_below: float) -> bool:
    """Whether a tile's confidence makes its reading uncertain: under ``uncertain_below``, ``NaN`` or null (a
    reader that could not say), or missing from a tile with a ``box`` (a reading without its confidence). A value
    that no confidence can have (a string, infinity, outside 0-1) is a :class:`TableError`."""
    if "confidence" not in extra:
        return "box" in extra
    confidence = extra["confidence"]
    if confidence is None:
        return True
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise TableError(f"{where}: 'confidence' must be a number, got {_preview(confidence)}")
    if math.isnan(confidence):
        return True
    if not 0 <= confidence <= 1:
        raise TableError(f"{where}: 'confidence' must be between 0 and 1, got {confidence!r}")
    return confidence < uncertain_below


def _preview(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
