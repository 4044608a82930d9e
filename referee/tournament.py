"""A tournament around the tables: players drawn to tables, rounds per the profile's format, score sheets and
standings from game files or entered results.

Formats, as the seeds give them:

- ``pl-championship`` and ``wejherowo`` (seeds 004 and 000, PUNKTACJA): two games at each table, then the score
  sheet goes to the chief referee; a semi-final and a final, each won on big points, then the balance of small
  points. The seeds do not say how many players of a semi-final table go to the final: by default as many as keep
  the final at one table (one per table from three tables up, two from two tables), ``advance`` otherwise.
- ``przasnysz`` (seed 001, rules 1, 10, 32, 33): 4 rounds of 3 games; players sit in the order they drew (1A, 1B,
  1C, 1D); game 1 of a round starts at seat A, game 2 at B, game 3 at C; after each round the tables are re-sorted
  (the best four of the standings to table 1, and so on); after 4 rounds the winning four are known.

Every draw comes from a seeded random generator (the tournament's ``seed`` and the round), so the same file gives
the same seating anywhere. A round is drawn once every game of the rounds before it has a result.

>>> t = Tournament.from_json({"profile": "przasnysz", "seed": 1, "players": [f"P{i}" for i in range(1, 9)]})
>>> [len(table.players) for table in t.tables(1)]
[4, 4]

Size: 656 lines, one module on purpose: the formats (data), the value types (table plans, results, standings) and
:class:`Tournament` (about 370 lines: draws, results read and checked, standings and score sheets) are one feature
beside the rules core, and the helpers below the class serve only it. ``standings_html`` (about 45 lines) could move to
a presentation module (to do).
"""

from __future__ import annotations

import html
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeGuard

from referee.profiles import Profile, ProfileError, get_profile
from referee.scoring import Game, PlayerScore, ScoreError, big_points, places_by_small_points, score_game


class TournamentError(ValueError):
    """A tournament file or result that cannot be used as given."""


SEAT_LETTERS = "ABCDEF"


@dataclass(frozen=True, slots=True)
class Stage:
    name: str
    games: int
    """Games at each table in this round."""
    seating: str
    """``draw``: every player drawn to a table; ``sorted``: tables filled from the standings so far, seats drawn;
    ``finalists``: the best of each table of the round before, seats drawn."""


@dataclass(frozen=True, slots=True)
class Format:
    name: str
    stages: tuple[Stage, ...]
    source: str
    """The seed document and rule the format follows."""
    notes: tuple[str, ...] = ()
    table_size: int = 4
    rotate_start: bool = False
    """Game g of a round starts at seat g (A, B, C...: przasnysz rule 10); otherwise the seed's draw for the first
    player decides (the highest tile drawn), which the camera can read at the table."""


_CHAMPIONSHIP_NOTES = (
    "The seed does not say how many players of a semi-final table reach the final; by default as many as keep the"
    " final at one table of 4 (set 'advance' to change it).",
    "Players who do not reach the final are ranked after the finalists by their semi-final big, then small points.",
    "First player of a game: the highest tile drawn at the table (PRZYGOTOWANIE GRY).",
)
_CHAMPIONSHIP_STAGES = (Stage("semi-final", 2, "draw"), Stage("final", 2, "finalists"))
FORMATS: Mapping[str, Format] = {
    "pl-championship": Format(
        "pl-championship",
        _CHAMPIONSHIP_STAGES,
        "seeds/004_edb1b3e580c8d7dd.txt, PUNKTACJA: 'Po rozegraniu dwóch gier przy jednym stoliku sumuje się"
        " uzyskane punkty ... Przy zwycięstwie w półfinale i finale liczą się najpierw duże punkty a następnie"
        " bilans małych punktów'",
        _CHAMPIONSHIP_NOTES,
    ),
    "wejherowo": Format(
        "wejherowo",
        _CHAMPIONSHIP_STAGES,
        "seeds/000_d223ae7d75066ede.txt, PUNKTACJA (as the Polish Championship)",
        _CHAMPIONSHIP_NOTES,
    ),
    "przasnysz": Format(
        "przasnysz",
        (
            Stage("round 1", 3, "draw"),
            Stage("round 2", 3, "sorted"),
            Stage("round 3", 3, "sorted"),
            Stage("round 4", 3, "sorted"),
        ),
        "seeds/001_94ad5f67870580e0.txt, rules 5.1, 10, 32 and 33: 'Rozgrywane są 4 rundy po 3 gry. Po każdej"
        " rundzie następuje sortowanie stolików'",
        (
            "Standings: big points, then small points (the seed names no tie-break; small points as the other"
            " seeds do). Tables are re-sorted by those standings: the best to table 1.",
        ),
        rotate_start=True,
    ),
}


@dataclass(frozen=True, slots=True)
class TablePlan:
    round: int
    number: int
    players: tuple[str, ...]
    """In seat order: A, B, C, D."""
    starts: tuple[str | None, ...]
    """Who starts each game (None: the draw for the first player at the table decides)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "table": self.number,
            "seats": {SEAT_LETTERS[i]: name for i, name in enumerate(self.players)},
            "starts": list(self.starts),
        }


@dataclass(frozen=True, slots=True)
class GameResult:
    round: int
    table: int
    game: int
    scores: tuple[PlayerScore, ...]
    source: str
    """``entered`` or the game file it was scored from."""


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    name: str
    big_points: int
    small_points: int | Fraction
    games: int
    stage: str = ""
    """Which stage ranks the player (championship: ``final`` or ``semi-final``)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "name": self.name,
            "big_points": self.big_points,
            "small_points": _number(self.small_points),
            "games": self.games,
            "stage": self.stage,
        }


@dataclass(frozen=True)
class Tournament:
    profile: Profile
    format: Format
    players: tuple[str, ...]
    seed: int
    advance: int | None = None
    entries: tuple[Mapping[str, Any], ...] = ()
    base: Path = field(default=Path("."))
    """Where game files named by relative paths are."""

    # -- reading ------------------------------------------------------------------------------------------------

    @classmethod
    def from_json(cls, data: Any, *, base: Path | str = ".") -> Tournament:
        if not isinstance(data, Mapping):
            raise TournamentError("a tournament is a JSON object with 'profile', 'seed', 'players' and 'results'")
        unknown = set(data) - {"profile", "seed", "players", "advance", "results", "title"}
        if unknown:
            raise TournamentError(f"unknown field(s) {', '.join(sorted(unknown))}")
        try:
            profile = get_profile(data.get("profile", ""))
        except ProfileError as error:
            raise TournamentError(str(error)) from None
        if profile.name not in FORMATS:
            raise TournamentError(
                f"{profile.name}: its seed gives no tournament format (formats: {', '.join(FORMATS)})"
            )
        seed = data.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TournamentError(f"'seed' must be a whole number, not {seed!r}")
        players = data.get("players")
        if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
            raise TournamentError("'players' must be a list of names")
        names = tuple(p.strip() for p in players)
        doubles = sorted(name for name, count in Counter(names).items() if count > 1)
        if doubles:
            raise TournamentError(f"player names must be distinct: {', '.join(doubles)}")
        if len(names) < 2:
            raise TournamentError("a tournament needs at least 2 players")
        advance = data.get("advance")
        if advance is not None and (not isinstance(advance, int) or isinstance(advance, bool) or advance < 1):
            raise TournamentError(f"'advance' must be a whole number of at least 1, not {advance!r}")
        results = data.get("results", [])
        if not isinstance(results, list) or not all(isinstance(r, Mapping) for r in results):
            raise TournamentError("'results' must be a list of objects")
        tournament = cls(profile, FORMATS[profile.name], names, seed, advance, tuple(results), Path(base))
        tournament.results()  # every result is checked now, not when it is first shown
        return tournament

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"profile": self.profile.name, "seed": self.seed, "players": list(self.players)}
        if self.advance is not None:
            data["advance"] = self.advance
        data["results"] = [dict(entry) for entry in self.entries]
        return data

    def with_entry(self, entry: Mapping[str, Any]) -> Tournament:
        """The tournament with one more result (checked like those already there)."""
        updated = Tournament(
            self.profile, self.format, self.players, self.seed, self.advance, (*self.entries, entry), self.base
        )
        updated.results()
        return updated

    # -- the draw -----------------------------------------------------------------------------------------------

    @property
    def rounds(self) -> int:
        return len(self.format.stages)

    def stage(self, round_number: int) -> Stage:
        return self.format.stages[round_number - 1]

    def tables(self, round_number: int) -> tuple[TablePlan, ...]:
        """The tables of a round; a :class:`TournamentError` while a round before it lacks results."""
        if not 1 <= round_number <= self.rounds:
            raise TournamentError(f"round {round_number}: {self.format.name} has rounds 1 to {self.rounds}")
        return self._tables(round_number, self._results_by_round())

    def _tables(self, round_number: int, results: Mapping[int, list[GameResult]]) -> tuple[TablePlan, ...]:
        stage = self.stage(round_number)
        rng = random.Random(f"rummikub-referee tournament {self.seed} round {round_number}")
        if stage.seating == "draw":
            drawn = list(self.players)
            rng.shuffle(drawn)
            groups = _split(drawn, self.format.table_size)
        else:
            previous = round_number - 1
            missing = self._missing(previous, results)
            if missing:
                called = "" if stage.name == f"round {round_number}" else f" ({stage.name})"
                raise TournamentError(
                    f"round {round_number}{called} is drawn when round {previous} is complete; it lacks"
                    f" {missing[0]}" + (f" and {len(missing) - 1} more" if len(missing) > 1 else "")
                )
            if stage.seating == "sorted":
                ranked = [s.name for s in _sheet(g for r in range(1, round_number) for g in results.get(r, []))]
                groups = _split(ranked, self.format.table_size)
            else:
                groups = [self._finalists(previous, results)]
            for group in groups:
                rng.shuffle(group)  # seats at a table by draw (przasnysz rule 5.1: 1A, 1B, 1C, 1D as drawn)
        return tuple(
            TablePlan(round_number, number, tuple(group), self._starts(group, stage))
            for number, group in enumerate(groups, 1)
        )

    def _starts(self, group: Sequence[str], stage: Stage) -> tuple[str | None, ...]:
        if not self.format.rotate_start:
            return (None,) * stage.games
        return tuple(group[game % len(group)] for game in range(stage.games))

    def _finalists(self, semi: int, results: Mapping[int, list[GameResult]]) -> list[str]:
        finalists = []
        for ranked, advance, _ in self._cuts(semi, results):
            finalists += [s.name for s in ranked[:advance]]
        if len(finalists) > max(6, self.format.table_size):
            raise TournamentError(f"{len(finalists)} finalists do not fit at one table: lower 'advance'")
        return finalists

    def _cuts(self, semi: int, results: Mapping[int, list[GameResult]]) -> list[tuple[list[Standing], int, TablePlan]]:
        """Each semi-final table's ranking and how many of it reach the final."""
        tables = self._tables(semi, results)
        advance = self.advance or max(1, self.format.table_size // len(tables))
        return [
            (_sheet(g for g in results.get(semi, []) if g.table == table.number), advance, table) for table in tables
        ]

    def notes(self) -> list[str]:
        """What a person must look at: a tie at the cut for the final, which the seeds do not settle (the players
        are then listed by name, and the first goes through)."""
        if self.format.stages[-1].seating != "finalists":
            return []
        by_round = self._results_by_round()
        semi = self.rounds - 1
        if self._missing(semi, by_round):
            return []
        notes = []
        for ranked, advance, table in self._cuts(semi, by_round):
            if len(ranked) > advance and ranked[advance - 1].rank == ranked[advance].rank:
                tied = [s.name for s in ranked if s.rank == ranked[advance].rank]
                notes.append(
                    f"{self.stage(semi).name} table {table.number}: {', '.join(tied)} tie on big and small points at"
                    " the cut for the final; the seeds do not say how to break it (listed by name): a person decides"
                )
        return notes

    def _missing(self, round_number: int, results: Mapping[int, list[GameResult]]) -> list[str]:
        have = {(g.table, g.game) for g in results.get(round_number, [])}
        games = self.stage(round_number).games
        return [
            f"round {round_number} table {t.number} game {g}"
            for t in self._tables(round_number, results)
            for g in range(1, games + 1)
            if (t.number, g) not in have
        ]

    # -- results ------------------------------------------------------------------------------------------------

    def results(self) -> list[GameResult]:
        return [g for games in self._results_by_round().values() for g in games]

    def _results_by_round(self) -> dict[int, list[GameResult]]:
        """Every entry read and checked against the table it was played at, round by round (a round's tables
        depend on the results of the rounds before it)."""
        by_round: dict[int, list[GameResult]] = {}
        pending = list(enumerate(self.entries))
        for round_number in range(1, self.rounds + 1):
            here = [(i, e) for i, e in pending if _round_of(e, i) == round_number]
            if not here:
                continue
            tables = {t.number: t for t in self._tables(round_number, by_round)}
            seen: set[tuple[int, int]] = set()
            games = []
            for index, entry in here:
                result = self._read_result(index, entry, tables)
                if (result.table, result.game) in seen:
                    raise TournamentError(
                        f"results[{index}]: round {round_number} table {result.table} game {result.game} twice"
                    )
                seen.add((result.table, result.game))
                games.append(result)
            by_round[round_number] = games
        for index, entry in pending:
            round_number = _round_of(entry, index)
            if not 1 <= round_number <= self.rounds:
                raise TournamentError(
                    f"results[{index}]: round {round_number}; {self.format.name} has rounds 1 to {self.rounds}"
                )
        return by_round

    def _read_result(self, index: int, entry: Mapping[str, Any], tables: Mapping[int, TablePlan]) -> GameResult:
        where = f"results[{index}]"
        unknown = set(entry) - {"round", "table", "game", "small", "big", "game_file", "scored_game"}
        if unknown:
            raise TournamentError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        round_number, table_number, game_number = (_whole(entry, key, where) for key in ("round", "table", "game"))
        table = tables.get(table_number)
        if table is None:
            raise TournamentError(f"{where}: round {round_number} has tables 1 to {len(tables)}")
        games = self.stage(round_number).games
        if not 1 <= game_number <= games:
            raise TournamentError(f"{where}: a table plays games 1 to {games} in {self.stage(round_number).name}")
        sources = [key for key in ("small", "game_file", "scored_game") if key in entry]
        if len(sources) != 1:
            raise TournamentError(f"{where}: give one of 'small' (entered points), 'game_file' or 'scored_game'")
        if "small" in entry:
            scores, source = self._entered(entry, table, where), "entered"
        else:
            scores, source = self._scored(entry, table, where)
        return GameResult(round_number, table_number, game_number, scores, source)

    def _entered(self, entry: Mapping[str, Any], table: TablePlan, where: str) -> tuple[PlayerScore, ...]:
        small = entry["small"]
        if not isinstance(small, Mapping) or not all(_is_number(v) for v in small.values()):
            raise TournamentError(f"{where}.small: an object of player -> small points")
        _same_players(small, table, where)
        big = entry.get("big")
        if big is not None and (not isinstance(big, Mapping) or not all(_is_whole(v) for v in big.values())):
            raise TournamentError(f"{where}.big: an object of player -> big points")
        if big is not None:
            _same_players(big, table, where)
        points = {name: Fraction(small[name]).limit_denominator(1000) for name in table.players}
        places = places_by_small_points(points)
        try:
            computed = big_points(places, self.profile)
        except ScoreError as error:
            raise TournamentError(str(error)) from None
        return tuple(
            PlayerScore(
                name,
                0,
                _number(points[name]),
                computed[name] if big is None else int(big[name]),
                places[name],
                places[name] == 1,
            )
            for name in table.players
        )

    def _scored(self, entry: Mapping[str, Any], table: TablePlan, where: str) -> tuple[tuple[PlayerScore, ...], str]:
        import json

        if "game_file" in entry:
            name = entry["game_file"]
            if not isinstance(name, str) or not name:
                raise TournamentError(f"{where}.game_file: a path")
            path = Path(name) if Path(name).is_absolute() else self.base / name
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except OSError as error:
                raise TournamentError(f"{where}: cannot read {name!r}: {error.strerror or error}") from None
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                raise TournamentError(f"{where}: {name} is not a JSON game file ({error})") from None
            source = name
        else:
            data, source = entry["scored_game"], "scored_game"
        try:
            game = Game.from_json(data, profile=self.profile)
        except ScoreError as error:
            raise TournamentError(f"{where}: {source}: {error}") from None
        _same_players({p.name: 0 for p in game.players}, table, where)
        return tuple(score_game(game)), source

    # -- standings ----------------------------------------------------------------------------------------------

    def standings(self) -> list[Standing]:
        """The tournament's ranking as far as the results go."""
        by_round = self._results_by_round()
        every = [g for games in by_round.values() for g in games]
        if self.format.stages[-1].seating != "finalists":
            return [_stage(s, "") for s in _sheet(every)]
        final = self.rounds
        finals = by_round.get(final, [])
        try:
            finalists = {name for t in self._tables(final, by_round) for name in t.players}
        except TournamentError:
            finalists = set()
        ranked = [_stage(s, self.stage(final).name) for s in _sheet(finals)]
        ranked_names = {s.name for s in ranked}
        ranked += [_stage(s, self.stage(final).name) for s in _unplayed(finalists - ranked_names)]
        semi = [g for r in range(1, final) for g in by_round.get(r, [])]
        others = _rerank([s for s in _sheet(semi) if s.name not in finalists])
        offset = len(ranked)
        ranked += [_stage(s, self.stage(1).name, offset) for s in others]
        return ranked

    def sheets(self) -> list[dict[str, Any]]:
        """A score sheet per table per round: each player's big and small points per game and their sums."""
        by_round = self._results_by_round()
        sheets = []
        for round_number in range(1, self.rounds + 1):
            try:
                tables = self._tables(round_number, by_round)
            except TournamentError:
                break
            for table in tables:
                games = sorted((g for g in by_round.get(round_number, []) if g.table == table.number),
                               key=lambda g: g.game)  # fmt: skip
                rows: list[dict[str, Any]] = []
                for name in table.players:
                    per_game = [next((s for s in g.scores if s.name == name), None) for g in games]
                    rows.append(
                        {
                            "seat": SEAT_LETTERS[table.players.index(name)],
                            "name": name,
                            "games": [
                                {"game": g.game, "big": s.big_points, "small": _number(s.small_points)}
                                for g, s in zip(games, per_game, strict=True)
                                if s is not None
                            ],
                            "big_points": sum(s.big_points for s in per_game if s is not None),
                            "small_points": _number(sum((s.small_points for s in per_game if s is not None), 0)),
                        }
                    )
                ranked = _sheet(games)
                places = {s.name: s.rank for s in ranked}
                for row in rows:
                    row["place"] = places.get(row["name"])
                sheets.append(
                    {
                        "round": round_number,
                        "stage": self.stage(round_number).name,
                        **table.to_dict(),
                        "games_played": [g.game for g in games],
                        "rows": rows,
                    }
                )
        return sheets

    def summary(self) -> dict[str, Any]:
        """Everything a standings page or ``--json`` shows."""
        by_round = self._results_by_round()
        rounds = []
        for round_number in range(1, self.rounds + 1):
            try:
                tables = self._tables(round_number, by_round)
            except TournamentError as error:
                rounds.append({"round": round_number, "stage": self.stage(round_number).name, "pending": str(error)})
                continue
            missing = self._missing(round_number, by_round)
            rounds.append(
                {
                    "round": round_number,
                    "stage": self.stage(round_number).name,
                    "tables": [t.to_dict() for t in tables],
                    "complete": not missing,
                    "missing": missing,
                }
            )
        return {
            "profile": self.profile.name,
            "format": {"source": self.format.source, "notes": list(self.format.notes)},
            "seed": self.seed,
            "players": list(self.players),
            "rounds": rounds,
            "sheets": self.sheets(),
            "standings": [s.to_dict() for s in self.standings()],
            "notes": self.notes(),
            "complete": all(r.get("complete") for r in rounds),
        }


# -- helpers ---------------------------------------------------------------------------------------------------


def _split(players: Sequence[str], size: int) -> list[list[str]]:
    """Players in order into as few tables of at most ``size`` as possible, their sizes as even as can be (12:
    4/4/4; 13: 4/3/3/3), the larger tables first."""
    count = -(-len(players) // size)
    base, extra = divmod(len(players), count)
    groups, start = [], 0
    for index in range(count):
        end = start + base + (1 if index < extra else 0)
        groups.append(list(players[start:end]))
        start = end
    return groups


def _round_of(entry: Mapping[str, Any], index: int) -> int:
    return _whole(entry, "round", f"results[{index}]")


def _whole(entry: Mapping[str, Any], key: str, where: str) -> int:
    value = entry.get(key)
    if not _is_whole(value) or value < 1:
        raise TournamentError(f"{where}.{key}: a whole number of at least 1, not {value!r}")
    return int(value)


def _is_whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    import math

    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _same_players(named: Mapping[str, Any], table: TablePlan, where: str) -> None:
    if set(named) != set(table.players):
        raise TournamentError(
            f"{where}: the players at round {table.round} table {table.number} are {', '.join(table.players)};"
            f" the result names {', '.join(sorted(named)) or 'nobody'}"
        )


def _number(value: int | float | Fraction) -> int | float:
    return int(value) if value == int(value) else float(value)


def _sheet(games: Iterable[GameResult]) -> list[Standing]:
    """Big points, then small points, summed over the games; ties share a rank (listed by name)."""
    big: Counter[str] = Counter()
    small: dict[str, Fraction] = {}
    played: Counter[str] = Counter()
    for game in games:
        for score in game.scores:
            big[score.name] += score.big_points
            small[score.name] = small.get(score.name, Fraction(0)) + Fraction(score.small_points)
            played[score.name] += 1
    keys = sorted(((big[n], small[n]) for n in small), reverse=True)
    rows = [Standing(keys.index((big[n], small[n])) + 1, n, big[n], small[n], played[n]) for n in small]
    return sorted(rows, key=lambda s: (s.rank, s.name))


def _rerank(rows: Sequence[Standing]) -> list[Standing]:
    """Ranks 1, 2... among these rows alone (ties share a rank)."""
    keys = [(s.big_points, s.small_points) for s in rows]
    return [
        Standing(keys.index(k) + 1, s.name, s.big_points, s.small_points, s.games)
        for s, k in zip(rows, keys, strict=True)
    ]


def _unplayed(names: Iterable[str]) -> list[Standing]:
    return [Standing(1, name, 0, 0, 0) for name in sorted(names)]


def _stage(standing: Standing, stage: str, offset: int = 0) -> Standing:
    return Standing(standing.rank + offset, standing.name, standing.big_points,
                    standing.small_points, standing.games, stage)  # fmt: skip


# -- the standings page ------------------------------------------------------------------------------------------


def standings_html(tournament: Tournament, title: str = "") -> str:
    """A self-contained HTML page: the standings, then each round's tables with their score sheets."""
    summary = tournament.summary()
    heading = title or f"Rummikub tournament ({tournament.profile.title})"
    esc = html.escape
    out = [
        "<!doctype html>",
        '<html lang="pl"><head><meta charset="utf-8">',
        f"<title>{esc(heading)}</title>",
        "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
        "th,td{border:1px solid #999;padding:.3em .6em;text-align:right}th:nth-child(2),td:nth-child(2)"
        "{text-align:left}caption{font-weight:bold;text-align:left}.pending{color:#a50}</style>",
        "</head><body>",
        f"<h1>{esc(heading)}</h1>",
        f"<p>{esc(summary['format']['source'])}</p>",
        "<table><caption>Standings" + ("" if summary["complete"] else " (so far)") + "</caption>",
        "<tr><th>Place</th><th>Player</th><th>Big points</th><th>Small points</th><th>Games</th><th>Stage</th></tr>",
    ]
    for row in summary["standings"]:
        out.append(
            f"<tr><td>{row['rank']}</td><td>{esc(row['name'])}</td><td>{row['big_points']}</td>"
            f"<td>{row['small_points']:+g}</td><td>{row['games']}</td><td>{esc(row['stage'])}</td></tr>"
        )
    out.append("</table>")
    for sheet in summary["sheets"]:
        out.append(
            f"<table><caption>{esc(sheet['stage'])}, table {sheet['table']}</caption>"
            "<tr><th>Seat</th><th>Player</th><th>Games (big / small)</th><th>Big</th><th>Small</th><th>Place</th></tr>"
        )
        for row in sheet["rows"]:
            games = ", ".join(f"{g['big']} / {g['small']:+g}" for g in row["games"]) or "-"
            place = row["place"] if row["place"] is not None else "-"
            out.append(
                f"<tr><td>{row['seat']}</td><td>{esc(row['name'])}</td><td>{esc(games)}</td>"
                f"<td>{row['big_points']}</td><td>{row['small_points']:+g}</td><td>{place}</td></tr>"
            )
        out.append("</table>")
    for round_info in summary["rounds"]:
        if "pending" in round_info:
            out.append(f'<p class="pending">{esc(round_info["stage"])}: {esc(round_info["pending"])}</p>')
    for note in summary["notes"]:
        out.append(f'<p class="pending">{esc(note)}</p>')
    for note in summary["format"]["notes"]:
        out.append(f"<p><small>{esc(note)}</small></p>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
