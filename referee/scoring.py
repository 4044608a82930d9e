"""Scoring a finished game (small and big points per profile) and a tournament sheet over games.

A game is described by what is on the racks when it ends:

>>> game = Game.from_json({"ending": "pool-exhausted", "profile": "official", "players": [
...     {"name": "A", "rack": ["red-1"]}, {"name": "B", "rack": ["red-5"]},
...     {"name": "C", "rack": ["red-10"]}, {"name": "D", "rack": ["red-13", "red-2"]}]})
>>> [(r.name, r.small_points) for r in score_game(game)]
[('A', 27), ('B', -4), ('C', -9), ('D', -14)]
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from referee.profiles import DEFAULT_PROFILE, BigPointScheme, Profile, ProfileError, get_profile
from referee.tiles import Tile, TileError


class ScoreError(ValueError):
    """A game that cannot be scored as described."""


class Ending(enum.Enum):
    OUT = "out"
    """A player emptied the rack."""
    POOL_EXHAUSTED = "pool-exhausted"
    """The pool ran out (and the last round was played) before anyone went out."""


@dataclass(frozen=True, slots=True)
class PlayerRack:
    name: str
    rack: tuple[Tile, ...]
    opened: bool = True
    announced_opening: bool = False
    """Said "Wyłożę się w następnej rundzie" ("I'll open next round") before the game ended."""
    drawn_last_round: tuple[Tile, ...] | None = None
    """Tiles drawn in the last round, when known: the announcement only helps if one of them made the opening."""


@dataclass(frozen=True, slots=True)
class Game:
    players: tuple[PlayerRack, ...]
    ending: Ending
    profile: Profile

    @classmethod
    def from_json(cls, data: Any, *, profile: Profile | str | None = None) -> Game:
        if not isinstance(data, Mapping):
            raise ScoreError("a game is a JSON object with 'players' and 'ending'")
        try:
            ending = Ending(data.get("ending", Ending.OUT.value))
        except ValueError:
            raise ScoreError(f"unknown ending {data.get('ending')!r} (expected 'out' or 'pool-exhausted')") from None
        if "moves" in data and "players" not in data:
            raise ScoreError(
                "this is a move script, not a finished game: run it with `rummikub-referee demo --rules FILE`"
                " (score takes a game's players and racks, e.g. referee/samples/finished-game.json)"
            )
        raw_players = data.get("players")
        if not isinstance(raw_players, list) or not 2 <= len(raw_players) <= 6:
            raise ScoreError("'players' must be a list of 2 to 6 players")
        players = tuple(_read_player(p, i) for i, p in enumerate(raw_players))
        if len({p.name for p in players}) != len(players):
            raise ScoreError("player names must be distinct")
        players = _read_events(data.get("events", []), players)
        rules = _read_profile(profile or data.get("profile", DEFAULT_PROFILE))
        if len(players) > rules.max_players:
            raise ScoreError(f"{len(players)} players; {rules.name} allows at most {rules.max_players}")
        _check_copies(players, rules)
        return cls(players, ending, rules)

    def with_announcements(self, names: Iterable[str]) -> Game:
        """The game with these players' "I'll open next round" declarations recorded (``score --announced``)."""
        wanted = set(names)
        return replace(
            self, players=tuple(replace(p, announced_opening=True) if p.name in wanted else p for p in self.players)
        )


ANNOUNCED_OPENING = "announced-opening"
"""The event a game file records when a player says "Wyłożę się w następnej rundzie" ("I'll open next round")."""


def _read_events(events: Any, players: tuple[PlayerRack, ...]) -> tuple[PlayerRack, ...]:
    """Apply the game's events that scoring uses (the declaration); events of other kinds are the game log's."""
    if not isinstance(events, list):
        raise ScoreError("'events' must be a list of {event, player} objects")
    names = {p.name for p in players}
    announced = set()
    for index, event in enumerate(events):
        if not isinstance(event, Mapping) or not isinstance(event.get("event"), str):
            raise ScoreError(f"events[{index}]: an event is an object with an 'event' name")
        if event["event"] != ANNOUNCED_OPENING:
            continue
        if event.get("player") not in names:
            raise ScoreError(f"events[{index}]: {event.get('player')!r} is not one of the players")
        announced.add(event["player"])
    return tuple(replace(p, announced_opening=True) if p.name in announced else p for p in players)


def _read_profile(name: Any) -> Profile:
    if isinstance(name, Profile):
        return name
    if not isinstance(name, str):
        raise ScoreError(f"'profile' must be a profile name, got {name!r:.60}")
    try:
        return get_profile(name)
    except ProfileError as error:
        raise ScoreError(str(error)) from None


def _check_copies(players: Sequence[PlayerRack], rules: Profile) -> None:
    """The racks together cannot hold more copies of a tile than the profile's set has (a typo, not a game)."""
    counts = Counter(t for p in players for t in p.rack)
    for tile, count in sorted(counts.items()):
        allowed = rules.jokers if tile.is_joker else rules.copies
        if count > allowed:
            holders = ", ".join(p.name for p in players if tile in p.rack)
            raise ScoreError(f"{count} copies of {tile} on the racks ({holders}); the {rules.name} set has {allowed}")


@dataclass(frozen=True, slots=True)
class PlayerScore:
    name: str
    rack_points: int
    small_points: int | float | Fraction
    """An int, or a Fraction; a tournament result's fractional small points arrive as a float (its ``_number``)."""
    big_points: int
    place: int
    winner: bool
    note: str = ""
    announced_opening: bool = False
    """The player said "I'll open next round" (recorded on the score sheet: it decides -100 or -200)."""

    def to_dict(self) -> dict[str, Any]:
        small = self.small_points
        return {
            "name": self.name,
            "rack_points": self.rack_points,
            "small_points": int(small) if small == int(small) else float(small),
            "big_points": self.big_points,
            "place": self.place,
            "winner": self.winner,
            "note": self.note,
            "announced_opening": self.announced_opening,
        }


def rack_points(rack: Iterable[Tile], profile: Profile) -> int:
    """What a rack counts against its owner: the numbers, each joker at the profile's joker points (0 where the seed
    gives a joker on the rack no value: house rules)."""
    joker = profile.joker_on_rack_points or 0
    return sum(joker if t.is_joker else t.face_value for t in rack)


def _unvalued_jokers(player: PlayerRack, rules: Profile) -> str:
    """The note for jokers left on a rack the seed gives no value (house rules), else ''."""
    jokers = sum(t.is_joker for t in player.rack)
    if not jokers or rules.joker_on_rack_points is not None:
        return ""
    return f"{jokers} joker(s) on the rack count 0: {rules.seed} gives a loser's joker no value"


def score_game(game: Game) -> list[PlayerScore]:
    rules = game.profile
    racks = {p.name: rack_points(p.rack, rules) for p in game.players}
    if game.ending is Ending.OUT:
        small, notes = _score_out(game, racks)
    else:
        small, notes = _score_pool_exhausted(game, racks)
    places = places_by_small_points({p.name: small[p.name] for p in game.players})
    winners = {name for name, place in places.items() if place == 1}
    big = big_points(places, rules)
    return [
        PlayerScore(
            p.name,
            racks[p.name],
            small[p.name],
            big[p.name],
            places[p.name],
            p.name in winners,
            notes.get(p.name, ""),
            p.announced_opening,
        )
        for p in game.players
    ]


def _score_out(game: Game, racks: Mapping[str, int]) -> tuple[dict[str, int | Fraction], dict[str, str]]:
    rules = game.profile
    out = [p for p in game.players if _went_out(p, rules)]
    if len(out) != 1:
        allowed = "an empty rack" + (" (or only jokers)" if rules.winner_joker_bonus else "")
        raise ScoreError(f"a game ending 'out' needs exactly one player with {allowed}; found {len(out)}")
    (winner,) = out
    small: dict[str, int | Fraction] = {}
    notes: dict[str, str] = {}
    for player in game.players:
        if player is winner:
            continue
        small[player.name], notes[player.name] = _loser_points(player, racks[player.name], rules)
        if player.opened or rules.never_opened_points is None:
            notes[player.name] = _join(notes[player.name], _unvalued_jokers(player, rules))
    jokers_kept = sum(t.is_joker for t in winner.rack)
    small[winner.name] = -sum(small.values()) + jokers_kept * rules.winner_joker_bonus
    if jokers_kept:
        notes[winner.name] = f"+{jokers_kept * rules.winner_joker_bonus} for {jokers_kept} joker(s) kept"
    return {p.name: small[p.name] for p in game.players}, notes


def _went_out(player: PlayerRack, rules: Profile) -> bool:
    return all(t.is_joker for t in player.rack) if rules.winner_joker_bonus else not player.rack


def _loser_points(player: PlayerRack, rack_total: int, rules: Profile) -> tuple[int, str]:
    if player.opened or rules.never_opened_points is None:
        return -rack_total, ""
    could_not, could = rules.never_opened_points
    if not _could_open(player.rack, rules):
        return -could_not, f"never opened; the rack never allowed an opening: -{could_not}"
    if player.announced_opening and _opening_came_last_round(player, rules):
        return -could_not, f"never opened; announced the opening for next round: -{could_not}"
    return -could, f"never opened although the rack allowed it: -{could}"


def _could_open(rack: Sequence[Tile], rules: Profile) -> bool:
    from referee.solver import can_open

    return can_open(rack, rules.opening_threshold)


def _opening_came_last_round(player: PlayerRack, rules: Profile) -> bool:
    if player.drawn_last_round is None:
        return True  # the announcement stands unless the draws are known
    remaining = Counter(player.rack) - Counter(player.drawn_last_round)
    return not _could_open(list(remaining.elements()), rules)


def _score_pool_exhausted(game: Game, racks: Mapping[str, int]) -> tuple[dict[str, int | Fraction], dict[str, str]]:
    """Fewest points wins; losers lose the difference to the winner's rack; winners share the sum.

    A player who never opened: the profile decides whether the -100/-200 applies (``never_opened_on_pool_end``), and
    the player's note says which way it went.
    """
    rules = game.profile
    best = min(racks.values())
    winners = [p.name for p in game.players if racks[p.name] == best]
    small: dict[str, int | Fraction] = {}
    notes: dict[str, str] = {}
    for player in game.players:
        if player.name in winners:
            continue
        small[player.name] = -(racks[player.name] - best)
        if not player.opened and rules.never_opened_points is not None:
            if rules.never_opened_on_pool_end:
                small[player.name], notes[player.name] = _loser_points(player, racks[player.name], rules)
            else:
                notes[player.name] = (
                    f"never opened; not -{rules.never_opened_points[0]}/-{rules.never_opened_points[1]}:"
                    f" {rules.seed} ties that penalty to another player finishing the game, and the pool ran out"
                    " with nobody out"
                )
    share = Fraction(-sum(small.values()), len(winners))
    for name in winners:
        small[name] = int(share) if share.denominator == 1 else share
        if len(winners) > 1:
            notes[name] = f"tied for the fewest points ({best})"
    for player in game.players:
        notes[player.name] = _join(notes.get(player.name, ""), _unvalued_jokers(player, rules))
    return {p.name: small[p.name] for p in game.players}, notes


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def places_by_small_points(small: Mapping[str, int | Fraction]) -> dict[str, int]:
    """Competition ranking by small points: tied players share the better place (in ``small``'s order)."""
    ordered = sorted(small.values(), reverse=True)
    return {name: ordered.index(points) + 1 for name, points in small.items()}


def big_points(places: Mapping[str, int], rules: Profile) -> dict[str, int]:
    """Each player's big points for their place at the table (a winner is a player in first place)."""
    if rules.big_points is BigPointScheme.WINNER:
        return {name: int(place == 1) for name, place in places.items()}
    table = rules.big_points_by_table.get(len(places))
    if table is None:
        raise ScoreError(f"{rules.name} has no big points for a table of {len(places)}")
    return {name: table[place - 1] for name, place in places.items()}


def _read_player(data: Any, index: int) -> PlayerRack:
    where = f"players[{index}]"
    if not isinstance(data, Mapping) or "name" not in data:
        raise ScoreError(f"{where}: a player is an object with a 'name' and a 'rack'")
    unknown = set(data) - {"name", "rack", "opened", "announced_opening", "drawn_last_round"}
    if unknown:
        raise ScoreError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")

    def tiles(field_name: str) -> tuple[Tile, ...]:
        items = data.get(field_name, [])
        if not isinstance(items, list) or not all(isinstance(t, str) for t in items):
            raise ScoreError(f"{where}.{field_name}: a list of tile labels")
        try:
            return tuple(Tile.parse(t) for t in items)
        except TileError as error:
            raise ScoreError(f"{where}.{field_name}: {error}") from None

    for flag in ("opened", "announced_opening"):
        if not isinstance(data.get(flag, False), bool):
            raise ScoreError(f"{where}.{flag}: true or false")
    return PlayerRack(
        name=str(data["name"]),
        rack=tiles("rack"),
        opened=data.get("opened", True),
        announced_opening=data.get("announced_opening", False),
        drawn_last_round=tiles("drawn_last_round") if "drawn_last_round" in data else None,
    )


# -- tournament sheet ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Standing:
    name: str
    big_points: int
    small_points: int | float | Fraction
    games: int
    rank: int

    def to_dict(self) -> dict[str, Any]:
        small = self.small_points
        return {
            "name": self.name,
            "big_points": self.big_points,
            "small_points": int(small) if small == int(small) else float(small),
            "games": self.games,
            "rank": self.rank,
        }


def tournament_sheet(games: Iterable[Sequence[PlayerScore]]) -> list[Standing]:
    """Sum the games per player and rank by big points, then small points (ties share a rank)."""
    big: Counter[str] = Counter()
    small: dict[str, int | float | Fraction] = {}
    played: Counter[str] = Counter()
    for game in games:
        for score in game:
            big[score.name] += score.big_points
            small[score.name] = small.get(score.name, 0) + score.small_points
            played[score.name] += 1
    keys = sorted(((big[n], small[n]) for n in small), reverse=True)
    standings = [Standing(n, big[n], small[n], played[n], keys.index((big[n], small[n])) + 1) for n in small]
    return sorted(standings, key=lambda s: (s.rank, s.name))
