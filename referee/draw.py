"""The draw for the first player: each player turns one tile face up, the highest number starts.

Pure rules, no imaging: what lies face up in front of each seat (:class:`Drawn`, read by a camera or typed in) in,
a :class:`DrawRuling` out: the seat that starts, or the seats that must draw again and why. Seats are whatever
numbers the caller uses (the camera's seat numbers, or players); :func:`starting_order` turns a ruling into the
order of play from the play order the caller knows (``vision.runtime.seats.turn_order`` for the camera's seats).

What each seed says (``DRAW_RULES``, by seed document):

- 004 (Polish Championship) and 000 (Wejherowo), PRZYGOTOWANIE GRY: "każdy gracz bierze jedną kostkę. Ten, kto
  wylosował najwyższą liczbę, będzie rozpoczynał pierwszą partię". Silent on ties and on jokers.
- 003 (the box rules): "Każdy z graczy losuje kostkę; gracz z najwyższą liczbą na kostce rozpoczyna grę. W
  przypadku remisu należy zrobić dogrywkę między remisującymi graczami": a tie is played off among the tied
  players. Silent on jokers.
- 002 (house rules): "Gracza, który pierwszy wykonuje ruch wybiera się w sposób losowy": chosen at random, the way
  not given; the tile draw of the other seeds is such a way. Silent on ties and on jokers.
- 001 (Przasnysz): no tile draw: players draw their seats 1A-1D (rule 5.1) and the player in seat A starts the
  first game, B the next (rule 5.10). :func:`rule_draw` refuses the profile with that reason.

Where a seed is silent the referee never guesses: a joker bears no number, so its seat draws again; a tie is played
off among the tied players (as seed 003 says). An unreadable tile, a seat with no tile or with more than one, is
drawn again too: nobody starts on a reading the referee is not sure of.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from referee.profiles import Profile, get_profile
from referee.tiles import Tile, TileError


class DrawError(ValueError):
    """A draw that cannot be ruled: bad input, or a profile whose seed has no tile draw."""


class DrawMethod(enum.Enum):
    HIGHEST_TILE = "highest-tile"
    """Each player turns one tile face up; the highest number starts."""
    SEATING = "seating"
    """The seats are drawn (A, B, C, D) and seat A starts: nothing for the camera to read."""


@dataclass(frozen=True, slots=True)
class DrawRule:
    """How a seed document picks the first player, and what it leaves unsaid."""

    method: DrawMethod
    rule: str
    """Where the seed says it."""
    words: str
    """The seed's words (Polish, as written)."""
    ties_stated: bool = False
    """The seed says what a tie does (a play-off among the tied); otherwise the referee does the same, and says so."""
    jokers_stated: bool = False

    def notes(self, profile: Profile) -> tuple[str, ...]:
        """The seed rule applied, and each silence filled with the safe choice."""
        notes = [f"{profile.name}: {profile.seed}, {self.rule}: '{self.words}'"]
        if not self.ties_stated:
            notes.append("the seed does not say what a tie does: the tied players draw again (as seed 003 says)")
        if not self.jokers_stated:
            notes.append(
                "the seed does not say what a joker counts in the draw: it bears no number, so it is drawn again"
            )
        return tuple(notes)


_HIGHEST = "każdy gracz bierze jedną kostkę. Ten, kto wylosował najwyższą liczbę, będzie rozpoczynał pierwszą partię"
DRAW_RULES: Mapping[str, DrawRule] = MappingProxyType(
    {
        "seeds/004_edb1b3e580c8d7dd.txt": DrawRule(DrawMethod.HIGHEST_TILE, "PRZYGOTOWANIE GRY", _HIGHEST),
        "seeds/000_d223ae7d75066ede.txt": DrawRule(DrawMethod.HIGHEST_TILE, "PRZYGOTOWANIE GRY", _HIGHEST),
        "seeds/003_ed43451ecbd65de4.txt": DrawRule(
            DrawMethod.HIGHEST_TILE,
            "PRZYGOTOWANIE GRY",
            "Każdy z graczy losuje kostkę; gracz z najwyższą liczbą na kostce rozpoczyna grę. W przypadku remisu"
            " należy zrobić dogrywkę między remisującymi graczami",
            ties_stated=True,
        ),
        "seeds/002_5fea8088a58074b7.txt": DrawRule(
            DrawMethod.HIGHEST_TILE,
            "preparation paragraph (the way is not given; the other seeds' tile draw is one)",
            "Gracza, który pierwszy wykonuje ruch wybiera się w sposób losowy",
        ),
        "seeds/001_94ad5f67870580e0.txt": DrawRule(
            DrawMethod.SEATING,
            "rules 5.1 and 5.10",
            "Każdy z graczy siada do stolika według kolejności, w jakiej wylosował numer 1A, 1B, 1C, 1D; Grę"
            " rozpoczyna osoba, która siadła do stołu jak osoba „A”, w następnej rundzie B, C itd.",
            ties_stated=True,
            jokers_stated=True,
        ),
    }
)
"""Seed document -> its draw for the first player (every profile of a seed shares it)."""


def draw_rule(profile: str | Profile) -> DrawRule:
    rules = get_profile(profile)
    try:
        return DRAW_RULES[rules.seed]
    except KeyError:
        raise DrawError(f"{rules.name}: no draw rule for its seed {rules.seed}") from None


class Redraw(enum.Enum):
    """Why a seat draws again."""

    NO_TILE = "no-tile"
    """No face-up tile in front of the seat."""
    UNCERTAIN = "uncertain"
    """The tile was read with low confidence: never a guess."""
    SEVERAL = "several-tiles"
    """More than one tile in front of the seat (or a tile between two seats): which one was drawn is unclear."""
    JOKER = "joker"
    """A joker bears no number (no seed says what it counts)."""
    TIE = "tie"
    """Tied for the highest number: a play-off among the tied players."""


@dataclass(frozen=True, slots=True)
class Drawn:
    """What lies face up in front of one seat: the tiles read there, and whether every reading is sure.

    Text codec: ``red-7``, ``red-7?`` (uncertain), ``-`` (no tile), ``red-7+blue-3`` (two tiles).
    """

    tiles: tuple[Tile, ...] = ()
    certain: bool = True

    @classmethod
    def of(cls, tile: Tile | str | None, certain: bool = True) -> Drawn:
        if tile is None:
            return cls((), certain)
        return cls((tile if isinstance(tile, Tile) else Tile.parse(tile),), certain)

    @classmethod
    def parse(cls, text: str) -> Drawn:
        if not isinstance(text, str):
            raise DrawError(f"a drawn tile is text such as red-7, red-7? or -, not {text!r}")
        body = text.strip()
        certain = not body.endswith("?")
        body = body.rstrip("?").strip()
        if body in ("", "-", "none"):
            return cls((), certain)
        try:
            return cls(tuple(Tile.parse(part) for part in body.split("+")), certain)
        except TileError as error:
            raise DrawError(f"cannot read the drawn tile {text!r}: {error}") from None

    def __str__(self) -> str:
        body = "+".join(str(tile) for tile in self.tiles) or "-"
        return body if self.certain else f"{body}?"

    @property
    def problem(self) -> Redraw | None:
        """Why this reading cannot count, or None when it is one sure number tile."""
        if not self.tiles:  # uncertain with no tile: something lay there that nobody could name
            return Redraw.NO_TILE if self.certain else Redraw.UNCERTAIN
        if len(self.tiles) > 1:
            return Redraw.SEVERAL
        if not self.certain:
            return Redraw.UNCERTAIN
        if self.tiles[0].is_joker:
            return Redraw.JOKER
        return None


@dataclass(frozen=True, slots=True)
class DrawRuling:
    """The draw's outcome: ``starter`` (a seat) or the seats that draw again, each with its reason."""

    profile: str
    among: tuple[int, ...]
    """The seats this draw was between."""
    starter: int | None
    redraw: Mapping[int, Redraw] = field(default_factory=dict)
    numbers: Mapping[int, int] = field(default_factory=dict)
    """The numbers that counted, by seat."""
    notes: tuple[str, ...] = ()

    @property
    def decided(self) -> bool:
        return self.starter is not None

    @property
    def next_among(self) -> tuple[int, ...]:
        """The seats of the next draw: the tied players for a play-off; everyone still in when some tile did not
        count (the others' tiles stay face up); none once decided."""
        if self.decided:
            return ()
        if all(reason is Redraw.TIE for reason in self.redraw.values()):
            return tuple(seat for seat in self.among if seat in self.redraw)
        return self.among

    def describe(self, name: Mapping[int, str] | None = None) -> str:
        """One line: who starts, or who draws again and why."""
        call = (lambda seat: name.get(seat, str(seat))) if name is not None else str
        if self.starter is not None:
            return f"{call(self.starter)} starts (highest number: {self.numbers[self.starter]})"
        parts = [f"{call(seat)} ({reason.value})" for seat, reason in self.redraw.items()]
        return "draw again: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "among": list(self.among),
            "starter": self.starter,
            "redraw": [{"seat": seat, "reason": reason.value} for seat, reason in self.redraw.items()],
            "numbers": {str(seat): number for seat, number in self.numbers.items()},
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DrawRuling:
        try:
            return cls(
                str(data["profile"]),
                tuple(int(seat) for seat in data["among"]),
                None if data["starter"] is None else int(data["starter"]),
                {int(item["seat"]): Redraw(item["reason"]) for item in data["redraw"]},
                {int(seat): int(number) for seat, number in data["numbers"].items()},
                tuple(str(note) for note in data["notes"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise DrawError(f"not a draw ruling: {error}") from None


def rule_draw(
    drawn: Mapping[int, Drawn | Tile | str | None], profile: str | Profile, among: Iterable[int] | None = None
) -> DrawRuling:
    """Who starts, from each seat's face-up tile.

    ``among``: the seats still in the draw (default: every seat of ``drawn``, in its order); a seat of ``among``
    missing from ``drawn`` has no tile, a seat of ``drawn`` outside it is not in this draw (a play-off). Any seat
    whose tile cannot count (:attr:`Drawn.problem`) draws again, and nobody starts before it has; then the
    highest number starts, or the players tied for it draw again.
    """
    rules = get_profile(profile)
    rule = draw_rule(rules)
    if rule.method is not DrawMethod.HIGHEST_TILE:
        raise DrawError(
            f"{rules.name}: the seed has no tile draw for the first player ({rule.rule}: seats are drawn A, B, C, D"
            " and seat A starts the first game): give the first player"
        )
    seats = tuple(drawn) if among is None else tuple(among)
    if len(set(seats)) != len(seats):
        raise DrawError(f"a seat is named twice in the draw: {list(seats)}")
    if len(seats) < 2:
        raise DrawError(f"a draw needs at least 2 players, not {len(seats)}")
    readings = {seat: _as_drawn(drawn.get(seat)) for seat in seats}
    notes = rule.notes(rules)
    pending: dict[int, Redraw] = {}
    numbers: dict[int, int] = {}
    for seat, reading in readings.items():
        problem = reading.problem
        if problem is None:
            numbers[seat] = reading.tiles[0].face_value
        else:
            pending[seat] = problem
    if pending:
        return DrawRuling(rules.name, seats, None, pending, numbers, notes)
    best = max(numbers.values())
    top = tuple(seat for seat in seats if numbers[seat] == best)
    if len(top) > 1:
        return DrawRuling(rules.name, seats, None, dict.fromkeys(top, Redraw.TIE), numbers, notes)
    return DrawRuling(rules.name, seats, top[0], {}, numbers, notes)


def _as_drawn(value: Drawn | Tile | str | None) -> Drawn:
    if isinstance(value, Drawn):
        return value
    if value is None or isinstance(value, Tile):
        return Drawn.of(value)
    if isinstance(value, str):
        return Drawn.parse(value)
    raise DrawError(f"a drawn tile is a Drawn, a Tile, a label or None, not {value!r}")


def starting_order(order: Sequence[int], starter: int) -> tuple[int, ...]:
    """The play order (seats as the game goes round the table, from anyone) from ``starter`` on."""
    seats = tuple(order)
    if starter not in seats:
        raise DrawError(f"the starter {starter} is not one of the seats {list(seats)}")
    at = seats.index(starter)
    return seats[at:] + seats[:at]
