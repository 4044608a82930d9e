"""Scoring a finished game (small and big points per profile) and a tournament sheet over games.

A game is described by what is on the racks when it ends:

>>> game = Game.from_json({"ending": "pool-exhausted", "profile": "official", "players": [
...     {"name": "A", "rack": ["red-1"]}, {"name": "B", "rack": ["red-5"]},
...     {"name": "C", "rack": ["red-10"]}, {"name": "D", "rack": ["red-13", "red-2"]}]})
>>> [(r.name, r.small_points) for r in score_game(game)]
[('A', 27), ('B', -4), ('C', -9), ('D', -14)]

The game log of the same game says what the racks cannot (:meth:`Game.with_log`): how it ended (the referee's
``pool-empty`` or ``out``), who opened, who said "I'll open next round" (``announced-opening``), re-deals (a re-deal
starts the game afresh: a declaration made before it is forgotten). :func:`read_game_log` and :func:`replay_log`
play the log through :class:`referee.game.Game`, the same state machine the camera's game runs on.
"""

from __future__ import annotations

import enum
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

from referee import game as played
from referee.events import GameStateError, event_from_json, logged_time_limit
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
    redeals: int = 0
    """Re-deals the game log recorded before the first move (the game was dealt again: nothing before counts)."""

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

    def with_log(self, game: played.Game) -> Game:
        """The game as its log played it (``game``: :func:`replay_log`): the ending the referee recorded (``out``: the
        player who went out, whose rack must be empty; ``pool-empty``), who opened, who declared the opening for next
        round (on top of the file's own ``announced_opening``), the re-deals. The log's players are the file's, in
        order (player 1 is the file's first)."""
        rules = get_profile(game.profile)
        if rules.name != self.profile.name:
            raise ScoreError(f"the game log is a {rules.name} game, the game file says {self.profile.name}")
        if game.players != len(self.players):
            raise ScoreError(f"the game log has {game.players} players, the game file {len(self.players)}")
        if game.winner is not None:
            winner = self.players[game.winner]
            if not _went_out(winner, self.profile):
                raise ScoreError(
                    f"the game log says player {game.winner + 1} ({winner.name}) went out, but the rack holds"
                    f" {' '.join(map(str, winner.rack))}"
                )
            ending = Ending.OUT
        elif game.pool_empty:
            ending = Ending.POOL_EXHAUSTED
        else:
            raise ScoreError(
                "the game log does not say how the game ended: no 'out' and no 'pool-empty' event (the station's"
                " Table… button, or `rummikub-referee record LOG out PLAYER`)"
            )
        players = tuple(
            replace(p, opened=game.opened[i], announced_opening=p.announced_opening or i in game.declared)
            for i, p in enumerate(self.players)
        )
        return replace(self, players=players, ending=ending, redeals=game.redeals)

    def with_announcements(self, names: Iterable[str]) -> Game:
        """The game with these players' "I'll open next round" declarations recorded (``score --announced``)."""
        wanted = set(names)
        return replace(
            self, players=tuple(replace(p, announced_opening=True) if p.name in wanted else p for p in self.players)
        )


ANNOUNCED_OPENING = "announced-opening"
"""The event a game file records when a player says "Wyłożę się w następnej rundzie" ("I'll open next round")."""


def read_game_log(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """A game log's events with their line numbers (blank lines and a torn last line skipped, as a crash leaves
    it); a :class:`ScoreError` naming the file or the line for anything else."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ScoreError(
            f"cannot read the game log {str(path)!r}: {getattr(error, 'strerror', None) or error}"
        ) from None
    lines = text.split("\n")
    events: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            if number >= len(lines) - 1:  # the line being written when the program stopped
                break
            raise ScoreError(f"{path}:{number}: not a game log line (malformed JSON)") from None
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise ScoreError(f"{path}:{number}: not a game log line (no 'event')")
        events.append((number, event))
    return events


def replay_log(events: Sequence[tuple[int, Mapping[str, Any]]], where: str = "the game log") -> played.Game:
    """The game a log's events played, from its ``start`` line (profile, players, first player, time limit)."""
    if not events or events[0][1].get("event") != "start":
        raise ScoreError(f"{where}: not a game log (it starts with a 'start' line)")
    number, start = events[0]
    try:
        profile: Any = start.get("profile")  # checked by Game.start, as it checks any setup
        players: Any = start.get("players")
        if isinstance(profile, str):  # the game starts with the limit in force (old logs' encodings too)
            rules = get_profile(profile)
            profile = replace(rules, time_limit_s=logged_time_limit(start, rules.time_limit_s))
        game = played.Game.start(profile, players, first_player=start.get("first_player", 0))
    except (GameStateError, ProfileError) as error:
        raise ScoreError(f"{where}:{number}: {error}") from None
    for number, event in events[1:]:
        try:
            game = game.apply(event_from_json(event))
        except GameStateError as error:
            raise ScoreError(f"{where}:{number}: {error}") from None
    return game


def _read_events(events: Any, players: tuple[PlayerRack, ...]) -> tuple[PlayerRack, ...]:
    """Apply the game's events that scoring uses (the declaration); events of other kinds are the game log's.
    A declaration names its player by name, or by number (0-based, as a game log writes it)."""
    if not isinstance(events, list):
        raise ScoreError("'events' must be a list of {event, player} objects")
    names = {p.name for p in players}
    announced = set()
    for index, event in enumerate(events):
        if not isinstance(event, Mapping) or not isinstance(event.get("event"), str):
            raise ScoreError(f"events[{index}]: an event is an object with an 'event' name")
        if event["event"] != ANNOUNCED_OPENING:
            continue
        who = event.get("player")
        if isinstance(who, int) and not isinstance(who, bool) and 0 <= who < len(players):
            who = players[who].name
        if who not in names:
            raise ScoreError(f"events[{index}]: {event.get('player')!r} is not one of the players")
        announced.add(who)
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
