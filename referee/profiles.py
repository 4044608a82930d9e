"""Rule profiles: every tournament's variant of the rules as data, found by name in one registry.

The sources are the five Polish rule documents distilled in ``RULES.md``; each profile names its seed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType


class ProfileError(ValueError):
    """An unknown profile name."""


class TimeoutRule(enum.Enum):
    """What a move over the time limit costs, as each seed words it (RULES.md §6)."""

    ANY_OVERRUN = "any-overrun"
    """Any move over time is restored, with the penalty (box rules: "Jeśli czas został przekroczony")."""
    UNFINISHED_AT_LIMIT = "unfinished-at-limit"
    """Only a manipulation not finished when the time ran out is restored ("nie zdąży jej zakończyć przed upływem
    czasu"); a move finished by then stands, whenever the clock was pressed."""
    TABLE_AT_LIMIT = "table-at-limit"
    """The table as it stood when the time ran out is the move: valid, it stands; not finished, restore and draw;
    touching the tiles after the limit voids the move, restore and draw (przasnysz rules 14, 15, 17, 20)."""


class PlayDirection(enum.Enum):
    """Which way the turn passes, seen from above the table."""

    CLOCKWISE = "clockwise"
    """To the player on the left (each player's left neighbour is the next one clockwise)."""
    COUNTERCLOCKWISE = "counterclockwise"
    """To the player on the right."""


@dataclass(frozen=True, slots=True)
class SeedRule:
    """Where a seed document says something: the section or rule number, and its words (Polish, as written)."""

    rule: str
    words: str = ""
    penalty_tiles: int | None = None
    """Tiles drawn when this rule alone is broken, where the seed names another number than the profile's."""

    def cite(self, profile: Profile) -> str:
        return f"{profile.name}: {profile.seed}, {self.rule}"


class BigPointScheme(enum.Enum):
    """How a game's places turn into big points."""

    PLACES = "places"
    """Points by place (e.g. 4/2/1/0); tied players get the points of the better place."""
    WINNER = "winner"
    """1 for the winner (each tied winner too), 0 for everyone else."""


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    title: str
    seed: str
    copies: int = 2
    """Copies of every number tile in the set."""
    jokers: int = 2
    max_players: int = 4
    rack_size: int = 14
    opening_threshold: int = 30
    """Points the first play must reach; 0 means any valid set opens."""
    time_limit_s: float | None = 60.0
    penalty_tiles: int = 1
    timeout_rule: TimeoutRule = TimeoutRule.ANY_OVERRUN
    joker_on_rack_points: int | None = 50
    """What a joker left on a loser's rack counts against them; None: the seed gives it no value (it counts 0, and
    the score says so)."""
    winner_joker_bonus: int = 0
    """Points a winner scores for each joker kept on the rack (house rules: 30); 0 = a winner must empty the rack."""
    never_opened_points: tuple[int, int] | None = (100, 200)
    """(points lost when the rack never allowed an opening, when it did); None = no such rule."""
    never_opened_on_pool_end: bool = False
    """Whether ``never_opened_points`` applies when the pool ran out and nobody went out. Every seed ties the
    penalty to "another player finishing the game" (``gdy inny z graczy skończy grę``), which an exhausted pool
    is not: False for every profile, and the score notes it."""
    direction: PlayDirection = PlayDirection.CLOCKWISE
    direction_rule: str = ""
    """Where the seed says which way play goes (or that it does not)."""
    rules: Mapping[str, SeedRule] = field(default_factory=dict)
    """Violation code (``referee.moves.Code`` value) -> the seed rule that makes it the player's fault. A code a
    profile has no seed rule for is never reverted, only reviewed (see ``referee.moves``)."""
    big_points: BigPointScheme = BigPointScheme.WINNER
    big_points_by_table: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """For ``PLACES``: table size -> big points for 1st, 2nd, ..."""
    drawn_tile_playable_same_turn: bool = True
    notes: tuple[str, ...] = ()

    @property
    def tile_count(self) -> int:
        return 52 * self.copies + self.jokers

    @property
    def valid_table_at_timeout_stands(self) -> bool:
        """A valid move over time may stand: its ruling depends on the table when the time ran out (przasnysz rule
        15; pl-championship, wejherowo, house: only a manipulation not finished then is restored). Only the box
        rules restore every late move (synthetic games inject timeouts only there)."""
        return self.timeout_rule is not TimeoutRule.ANY_OVERRUN

    def source(self, code: str) -> SeedRule | None:
        """The seed rule behind a violation code in this profile, or None when no seed names it."""
        return self.rules.get(code)

    def describe(self) -> dict[str, object]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["big_points"] = self.big_points.value
        data["timeout_rule"] = self.timeout_rule.value
        data["direction"] = self.direction.value
        data["rules"] = {code: {"rule": r.rule, "words": r.words} for code, r in self.rules.items()}
        data["big_points_by_table"] = {str(k): list(v) for k, v in self.big_points_by_table.items()}
        data["notes"] = list(self.notes)
        return data


_CHAMPIONSHIP_PLACES = MappingProxyType({4: (4, 2, 1, 0), 3: (4, 2, 0), 2: (4, 0)})

_UNFINISHED = "nie zdąży jej zakończyć przed upływem czasu, musi poukładać kostki na stole tak, jak leżały przed jego"
_CHAMPIONSHIP_RULES = MappingProxyType(
    {
        # Seeds 004 and 000 share their wording. The only penalty they name is for a manipulation not finished when
        # the time runs out; a move that ends with a broken table is such a manipulation.
        "invalid-set": SeedRule(
            "JOKER ('Podsumowując') and LIMIT CZASU",
            "pod warunkiem, że w ich efekcie pozostaną na stole prawidłowe układy; " + _UNFINISHED + " ruchem",
        ),
        "tile-returned-to-rack": SeedRule(
            "MANIPULACJE and LIMIT CZASU",
            "gracz może dokładać kostki ze swojej tabliczki do leżących na stole układów, a także ... przebudowywać"
            " układy leżące na stole",
        ),
        "joker-kept": SeedRule(
            "JOKER",
            "Musi jednak w tej samej kolejce wyłożyć jokera w innej serii lub grupie – nie może pozostawić"
            " go na swojej tabliczce",
        ),
        "no-tile-from-rack": SeedRule(
            "MANIPULACJE", "Musi jednak wyłożyć w każdym ruchu co najmniej jedną kostkę ze swojej tabliczki"
        ),
        "opening-below-threshold": SeedRule(
            "OTWARCIE", "jeden lub kilka układów o łącznej wartości co najmniej 30 punktów"
        ),
        "opening-manipulation": SeedRule(
            "OTWARCIE", "gracz nie może wykonywać żadnych MANIPULACJI. Może tego dokonać dopiero w następnej kolejce"
        ),
        "timeout": SeedRule("LIMIT CZASU", "Jeżeli gracz rozpocznie manipulację i " + _UNFINISHED + " ruchem"),
    }
)
_CLOCKWISE_RULE = "OTWARCIE: 'następny gracz, w kolejności zgodnej z ruchem wskazówek zegara'"

_PRZASNYSZ_RULES = MappingProxyType(
    {
        "invalid-set": SeedRule(
            "rules 14 and 17", "Jeżeli gracz nie dokończy manipulacji przed upływem czasu, musi poukładać kostki"
        ),
        "tile-returned-to-rack": SeedRule(
            "rule 13", "Jeżeli graczowi pozostanie w ręku kostka pochodząca ze stołu, ruch uznaje się za niewykonany"
        ),
        "joker-kept": SeedRule(
            "rule 13", "Jeżeli graczowi pozostanie w ręku kostka pochodząca ze stołu, ruch uznaje się za niewykonany"
        ),
        "no-tile-from-rack": SeedRule(
            "rules 13 and 27",
            "Jeśli gracz dołożył swoja kostkę, ruch uznaje się za wykonany; musi w tym ruchu użyć"
            " co najmniej jednej kostki ze swojej tabliczki",
        ),
        "opening-below-threshold": SeedRule("rule 18", "Do wyłożenia gracz potrzebuje minimum 30 punktów"),
        "opening-manipulation": SeedRule(
            "rule 18", "Przy pierwszym wyłożeniu gracz nie może wykonywać żadnych innych manipulacji"
        ),
        "timeout": SeedRule(
            "rules 14, 15, 17 and 20",
            "Jeśli gracz dotyka kostek po upływie czasu ruch uznaje się za nieważny."
            " Należy cofnąć ruch i wziąć jedną kostkę",
        ),
    }
)

_BOX_ERROR = (
    "Jeśli czas został przekroczony lub zrobisz błąd w manipulacji kostkami, musisz przywrócić wszystkie układy"
)
_BOX_RULES = MappingProxyType(
    {
        "invalid-set": SeedRule("LIMIT CZASOWY", _BOX_ERROR),
        "tile-returned-to-rack": SeedRule("MANIPULACJE and LIMIT CZASOWY", _BOX_ERROR),
        "joker-kept": SeedRule("JOKER", "Nie można wziąć Jokera ze stołu na swoją podstawkę"),
        "no-tile-from-rack": SeedRule(
            "MANIPULACJE", "Musi jednak wyłożyć w każdym ruchu co najmniej jedną kostkę ze swojej podstawki"
        ),
        "opening-below-threshold": SeedRule("OTWARCIE", "o łącznej wartości co najmniej 30 punktów"),
        "opening-manipulation": SeedRule(
            "OTWARCIE", "Podczas otwarcia nie wolno manipulować układami, które już znajdują się na stole"
        ),
        "timeout": SeedRule("LIMIT CZASOWY", _BOX_ERROR),
    }
)
_BOX_DIRECTION = (
    "PRZYGOTOWANIE GRY names only who starts the next game: 'gracz po lewej stronie'; play is taken to pass the same"
    " way, to the left (clockwise)"
)

_HOUSE_RULES = MappingProxyType(
    {
        # Seed 002 names a penalty (3 tiles) only for manipulations not finished in the agreed time; for a move that
        # lays no tile or opens short it says the player draws one tile.
        "invalid-set": SeedRule(
            "manipulations and time paragraphs",
            "Manipulacje muszą być przeprowadzane w taki sposób aby na stole zawsze znajdowały się pełne serie i"
            " grupy; Jeśli gracz nie zdąży skończyć swoich manipulacji w tym czasie ... wziąć karnie z banku 3 kostki",
        ),
        "tile-returned-to-rack": SeedRule(
            "manipulations paragraph", "żadna z kostek już wyłożonych nie może powrotem trafić na tablicę"
        ),
        "joker-kept": SeedRule("joker example", "joker musi pozostać wyłożony na stole"),
        "no-tile-from-rack": SeedRule(
            "manipulations paragraph",
            "Gracz podczas manipulacji musi pozbyć się, co najmniej jednej kości ze swojej tablicy, jeśli tego nie"
            " zrobi, to musi pobrać jedna kość z banku",
            penalty_tiles=1,
        ),
        "opening-below-threshold": SeedRule(
            "opening paragraph",
            "wyłożyć na raz układy i/lub grupy o wartości, co najmniej 30 punktów ... W przypadku nie posiadania"
            " przez gracza wystarczającej ilości układów, musi on pobrać jedną kostkę",
            penalty_tiles=1,
        ),
        "opening-manipulation": SeedRule(
            "manipulations paragraph", "Po otwarciu gry przez gracza, może on wykonywać manipulacje"
        ),
        "timeout": SeedRule(
            "time paragraph", "Jeśli gracz nie zdąży skończyć swoich manipulacji w tym czasie musi poukładać kostki"
        ),
    }
)

_PROFILES = (
    Profile(
        name="pl-championship",
        title="Polish Championship (Zasady Mistrzostw Polski)",
        seed="seeds/004_edb1b3e580c8d7dd.txt",
        timeout_rule=TimeoutRule.UNFINISHED_AT_LIMIT,
        big_points=BigPointScheme.PLACES,
        big_points_by_table=_CHAMPIONSHIP_PLACES,
        direction_rule=_CLOCKWISE_RULE,
        rules=_CHAMPIONSHIP_RULES,
        notes=("2-player tables are not in the seed; they score 4/0 here.",),
    ),
    Profile(
        name="wejherowo",
        title="2nd Wejherowo County Championship",
        seed="seeds/000_d223ae7d75066ede.txt",
        timeout_rule=TimeoutRule.UNFINISHED_AT_LIMIT,
        big_points=BigPointScheme.PLACES,
        big_points_by_table=_CHAMPIONSHIP_PLACES,
        direction_rule=_CLOCKWISE_RULE,
        rules=_CHAMPIONSHIP_RULES,
        notes=("2-player tables are not in the seed; they score 4/0 here.",),
    ),
    Profile(
        name="przasnysz",
        title="Przasnysz St Nicholas county tournament",
        seed="seeds/001_94ad5f67870580e0.txt",
        time_limit_s=40.0,
        timeout_rule=TimeoutRule.TABLE_AT_LIMIT,
        direction_rule="not stated (rule 10 names only the starting seats A, B, C, D); clockwise assumed",
        rules=_PRZASNYSZ_RULES,
        notes=("Pool exhausted: every player makes one more move, then fewest points wins (rule 24).",),
    ),
    Profile(
        name="official",
        title="The Original Rummikub box rules, 2-4 players",
        seed="seeds/003_ed43451ecbd65de4.txt",
        drawn_tile_playable_same_turn=False,
        direction_rule=_BOX_DIRECTION,
        rules=_BOX_RULES,
        notes=("Time limit 30 s, 40 s or none by agreement: pass --time-limit.",),
    ),
    Profile(
        name="official-6p",
        title="The Original Rummikub box rules, 5-6 player edition",
        seed="seeds/003_ed43451ecbd65de4.txt",
        copies=3,
        jokers=4,
        max_players=6,
        drawn_tile_playable_same_turn=False,
        direction_rule=_BOX_DIRECTION,
        rules=_BOX_RULES,
    ),
    Profile(
        name="official-free-opening",
        title="The Original Rummikub box rules without an opening threshold",
        seed="seeds/003_ed43451ecbd65de4.txt",
        opening_threshold=0,
        drawn_tile_playable_same_turn=False,
        direction_rule=_BOX_DIRECTION,
        rules=_BOX_RULES,
    ),
    Profile(
        name="official-6p-free-opening",
        title="The Original Rummikub box rules, 5-6 player edition without an opening threshold",
        seed="seeds/003_ed43451ecbd65de4.txt",
        copies=3,
        jokers=4,
        max_players=6,
        opening_threshold=0,
        drawn_tile_playable_same_turn=False,
        direction_rule=_BOX_DIRECTION,
        rules=_BOX_RULES,
        notes=(
            "OTWARCIE: 'zwłaszcza przy 5 lub 6 osobach, rekomendujemy wariant bez progów otwarcia' (the seed's"
            " recommendation for 5-6 players).",
        ),
    ),
    Profile(
        name="house",
        title="Generic Polish rules summary (house rules)",
        seed="seeds/002_5fea8088a58074b7.txt",
        time_limit_s=120.0,
        penalty_tiles=3,
        timeout_rule=TimeoutRule.UNFINISHED_AT_LIMIT,
        joker_on_rack_points=None,
        winner_joker_bonus=30,
        never_opened_points=None,
        direction=PlayDirection.COUNTERCLOCKWISE,
        direction_rule="preparation paragraph: 'kolejna jest osoba, która siedzi po jego prawej stronie'",
        rules=_HOUSE_RULES,
        notes=(
            "Time per move is agreed before the game (the seed suggests 2 minutes): pass --time-limit.",
            "The seed has no -100/-200 rule for a player who never opened and no rule for an exhausted pool;"
            " an exhausted pool is scored like the other profiles (fewest points wins).",
            "The seed gives a joker left on a loser's rack no value: it counts 0, and the score says so; a winner"
            " who kept jokers scores +30 for each.",
        ),
    ),
)

PROFILES: Mapping[str, Profile] = MappingProxyType({p.name: p for p in _PROFILES})
DEFAULT_PROFILE = "pl-championship"


def get_profile(name: str | Profile) -> Profile:
    if isinstance(name, Profile):
        return name
    try:
        return PROFILES[name]
    except KeyError:
        raise ProfileError(f"unknown profile {name!r} (known: {', '.join(PROFILES)})") from None
