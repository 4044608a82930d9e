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
    valid_table_at_timeout_stands: bool = False
    """A move whose sets are all valid when time runs out stands (przasnysz rule 15)."""
    joker_on_rack_points: int = 50
    """What a joker left on a loser's rack counts against them."""
    winner_joker_bonus: int = 0
    """Points a winner scores for each joker kept on the rack (house rules: 30); 0 = a winner must empty the rack."""
    never_opened_points: tuple[int, int] | None = (100, 200)
    """(points lost when the rack never allowed an opening, when it did); None = no such rule."""
    big_points: BigPointScheme = BigPointScheme.WINNER
    big_points_by_table: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """For ``PLACES``: table size -> big points for 1st, 2nd, ..."""
    drawn_tile_playable_same_turn: bool = True
    notes: tuple[str, ...] = ()

    @property
    def tile_count(self) -> int:
        return 52 * self.copies + self.jokers

    def describe(self) -> dict[str, object]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["big_points"] = self.big_points.value
        data["big_points_by_table"] = {str(k): list(v) for k, v in self.big_points_by_table.items()}
        data["notes"] = list(self.notes)
        return data


_CHAMPIONSHIP_PLACES = MappingProxyType({4: (4, 2, 1, 0), 3: (4, 2, 0), 2: (4, 0)})

_PROFILES = (
    Profile(
        name="pl-championship",
        title="Polish Championship (Zasady Mistrzostw Polski)",
        seed="seeds/004_edb1b3e580c8d7dd.txt",
        big_points=BigPointScheme.PLACES,
        big_points_by_table=_CHAMPIONSHIP_PLACES,
        notes=("2-player tables are not in the seed; they score 4/0 here.",),
    ),
    Profile(
        name="wejherowo",
        title="2nd Wejherowo County Championship",
        seed="seeds/000_d223ae7d75066ede.txt",
        big_points=BigPointScheme.PLACES,
        big_points_by_table=_CHAMPIONSHIP_PLACES,
        notes=("2-player tables are not in the seed; they score 4/0 here.",),
    ),
    Profile(
        name="przasnysz",
        title="Przasnysz St Nicholas county tournament",
        seed="seeds/001_94ad5f67870580e0.txt",
        time_limit_s=40.0,
        valid_table_at_timeout_stands=True,
        notes=("Pool exhausted: every player makes one more move, then fewest points wins (rule 24).",),
    ),
    Profile(
        name="official",
        title="The Original Rummikub box rules, 2-4 players",
        seed="seeds/003_ed43451ecbd65de4.txt",
        drawn_tile_playable_same_turn=False,
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
    ),
    Profile(
        name="official-free-opening",
        title="The Original Rummikub box rules without an opening threshold",
        seed="seeds/003_ed43451ecbd65de4.txt",
        opening_threshold=0,
        drawn_tile_playable_same_turn=False,
    ),
    Profile(
        name="house",
        title="Generic Polish rules summary (house rules)",
        seed="seeds/002_5fea8088a58074b7.txt",
        time_limit_s=120.0,
        penalty_tiles=3,
        joker_on_rack_points=30,
        winner_joker_bonus=30,
        never_opened_points=None,
        notes=(
            "Time per move is agreed before the game (the seed suggests 2 minutes): pass --time-limit.",
            "The seed has no -100/-200 rule for a player who never opened and no rule for an exhausted pool;"
            " an exhausted pool is scored like the other profiles (fewest points wins).",
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
