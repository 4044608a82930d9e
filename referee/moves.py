"""Rulings on a move: compare the table before and after, report every problem, say what to restore.

>>> before = Table.parse("[red-5 red-6 red-7]")
>>> after = Table.parse("[red-5 red-6] [red-7 blue-7 black-7]")
>>> ruling = check_move(before, after, opened=True)
>>> ruling.verdict.value, [v.code.value for v in ruling.violations]
('revert', ['invalid-set'])

Size: 668 lines, one module on purpose: the ruling's value types (:class:`Code`, :class:`Violation`,
:class:`RevertPlan`, :class:`Ruling`), :func:`check_move` and the checks it runs (tile counts, sets, removed tiles, the
opening, the time limit) with the revert plan: every check writes to the same findings with the codes defined here, so
they are read together.
"""

from __future__ import annotations

import enum
import math
import numbers
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from referee.profiles import DEFAULT_PROFILE, Profile, TimeoutRule, get_profile
from referee.sets import TileSet, check_set
from referee.table import LOOSE, Place, Table
from referee.tiles import JOKER, Tile


class Code(enum.Enum):
    """The violation codes of RULES.md §9, and ``run-out-of-order`` for the reordered runs of §2."""

    INVALID_SET = "invalid-set"
    TILE_RETURNED_TO_RACK = "tile-returned-to-rack"
    JOKER_KEPT = "joker-kept"
    NO_TILE_FROM_RACK = "no-tile-from-rack"
    OPENING_BELOW_THRESHOLD = "opening-below-threshold"
    OPENING_MANIPULATION = "opening-manipulation"
    TIMEOUT = "timeout"
    IMPOSSIBLE_TABLE = "impossible-table"
    RUN_OUT_OF_ORDER = "run-out-of-order"
    """A set that is a valid run only once its tiles are put in order: no fault any seed names (REVIEW)."""


class MoveError(ValueError):
    """Arguments no move can have: a time that is not a finite, non-negative number of seconds."""


class Verdict(enum.Enum):
    OK = "ok"
    REVERT = "revert"
    REVIEW = "review"


@dataclass(frozen=True, slots=True)
class Violation:
    code: Code
    detail: str
    sets: tuple[int, ...] = ()
    """Indices of the sets concerned in the table after the move (or before, for opening-manipulation)."""
    tiles: tuple[Tile, ...] = ()
    players_fault: bool = True
    """False when the problem cannot be blamed on the player on move (a misread, a set already broken)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "detail": self.detail,
            "sets": list(self.sets),
            "tiles": [str(t) for t in self.tiles],
            "players_fault": self.players_fault,
        }

    @classmethod
    def from_json(cls, data: Any) -> Violation:
        """The violation :meth:`to_dict` wrote (fields it does not know are ignored: a log from a later version)."""
        return cls(
            code=Code(data["code"]),
            detail=str(data.get("detail", "")),
            sets=tuple(int(s) for s in data.get("sets", ())),
            tiles=tuple(Tile.parse(t) for t in data.get("tiles", ())),
            players_fault=bool(data.get("players_fault", True)),
        )


@dataclass(frozen=True, slots=True)
class RevertPlan:
    """How to undo a move: the layout to restore, which tiles go where, and the penalty."""

    restore: Table
    to_rack: tuple[Tile, ...]
    """Tiles the player put on the table from the rack: they go back to the rack."""
    to_table: tuple[Tile, ...]
    """Tiles that were on the table and left it: the player puts them back."""
    changed_sets: tuple[int, ...]
    """Sets of the table after the move that are not in the before-layout (the tiles to move)."""
    penalty_tiles: int
    fallback_keep: tuple[TileSet, ...]
    """RULES.md §6 fallback when the layout cannot be restored: these valid sets stay on the table..."""
    fallback_take: tuple[Tile, ...]
    """...and the player takes every tile that is not part of a valid set onto the rack."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "restore": self.restore.to_json(),
            "to_rack": [str(t) for t in self.to_rack],
            "to_table": [str(t) for t in self.to_table],
            "changed_sets": list(self.changed_sets),
            "penalty_tiles": self.penalty_tiles,
            "fallback": {
                "keep": [[str(t) for t in s] for s in self.fallback_keep],
                "take": [str(t) for t in self.fallback_take],
            },
        }

    @classmethod
    def from_json(cls, data: Any) -> RevertPlan:
        fallback = data.get("fallback") or {}
        return cls(
            restore=Table.from_json(data["restore"]),
            to_rack=tuple(Tile.parse(t) for t in data.get("to_rack", ())),
            to_table=tuple(Tile.parse(t) for t in data.get("to_table", ())),
            changed_sets=tuple(int(s) for s in data.get("changed_sets", ())),
            penalty_tiles=int(data.get("penalty_tiles", 0)),
            fallback_keep=tuple(TileSet.of(s) for s in fallback.get("keep", ())),
            fallback_take=tuple(Tile.parse(t) for t in fallback.get("take", ())),
        )


@dataclass(frozen=True, slots=True)
class Ruling:
    verdict: Verdict
    violations: tuple[Violation, ...]
    played: tuple[Tile, ...]
    """Tiles that came onto the table from the rack."""
    removed: tuple[Tile, ...]
    """Tiles that were on the table before and are not after."""
    penalty_tiles: int
    profile: str
    opened: bool
    opening_value: int | None = None
    """Value of the sets laid from the rack in an opening turn."""
    revert: RevertPlan | None = None
    uncertain: tuple[tuple[str, Place, Tile], ...] = ()
    """("before"|"after", place, tile) of every reading not certain enough to rule on."""
    notes: tuple[str, ...] = ()
    kind: str = "play"
    """"draw" when the table did not change, "play" otherwise."""

    @property
    def codes(self) -> list[str]:
        return [v.code.value for v in self.violations]

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "kind": self.kind,
            "violations": [v.to_dict() for v in self.violations],
            "penalty_tiles": self.penalty_tiles,
            "played": [str(t) for t in self.played],
            "removed": [str(t) for t in self.removed],
            "opening_value": self.opening_value,
            "revert": None if self.revert is None else self.revert.to_dict(),
            "uncertain": [{"table": which, "place": list(place), "tile": str(t)} for which, place, t in self.uncertain],
            "notes": list(self.notes),
            "profile": self.profile,
            "opened": self.opened,
        }

    def to_json(self) -> dict[str, Any]:
        """The ruling as JSON (what game logs and ``check --json`` write); :meth:`from_json` reads it back."""
        return self.to_dict()

    @classmethod
    def from_json(cls, data: Any) -> Ruling:
        """The ruling :meth:`to_json` wrote: ``Ruling.from_json(r.to_json()) == r``.

        A field missing takes its default (a log from an earlier version); a value that is not what the field
        holds is a ``ValueError``, ``KeyError`` or ``TypeError`` (the caller names the line it came from).
        """
        if not isinstance(data, dict):
            raise TypeError(f"a ruling is a JSON object, not {type(data).__name__}")
        revert = data.get("revert")
        value = data.get("opening_value")
        return cls(
            verdict=Verdict(data["verdict"]),
            violations=tuple(Violation.from_json(v) for v in data.get("violations", ())),
            played=tuple(Tile.parse(t) for t in data.get("played", ())),
            removed=tuple(Tile.parse(t) for t in data.get("removed", ())),
            penalty_tiles=int(data.get("penalty_tiles", 0)),
            profile=str(data.get("profile", DEFAULT_PROFILE)),
            opened=bool(data.get("opened", False)),
            opening_value=None if value is None else int(value),
            revert=None if revert is None else RevertPlan.from_json(revert),
            uncertain=tuple(
                (str(u["table"]), (int(u["place"][0]), int(u["place"][1])), Tile.parse(u["tile"]))
                for u in data.get("uncertain", ())
            ),
            notes=tuple(str(n) for n in data.get("notes", ())),
            kind=str(data.get("kind", "play")),
        )


@dataclass
class _Findings:
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, code: Code, detail: str, **kwargs: Any) -> None:
        self.violations.append(Violation(code, detail, **kwargs))


def unsure_of_left_out(ruling: Ruling, left_out: int) -> Ruling:
    """A REVERT becomes REVIEW when boxes were left out of the tables as not tiles: one of them may have been
    a tile (under glare, say), and a tile missing from the reading looks like a tile taken back."""
    if not left_out:
        return ruling
    return _unsure(ruling, f"{left_out} weak box(es) left out of the reading as not tiles: a tile may be missing")


def unsure_of_blind_spots(ruling: Ruling, blind_tiles: float) -> Ruling:
    """A REVERT becomes REVIEW when glare washed part of a photo white (``blind_tiles``: its area in tiles' areas,
    outside the tiles read): a tile lying there cannot be seen, and a tile missing looks like a tile taken back."""
    if blind_tiles <= 0:
        return ruling
    return _unsure(ruling, f"glare washes out about {blind_tiles:.1f} tiles' area of a photo: a tile there is unseen")


def _unsure(ruling: Ruling, why: str) -> Ruling:
    """A REVERT ruled REVIEW, no penalty, with ``why`` noted; any other ruling, and one over time whatever the tiles
    are, as it is."""
    if ruling.verdict is not Verdict.REVERT or all(v.code is Code.TIMEOUT for v in ruling.violations):
        return ruling
    note = f"{why}; a person decides"
    return replace(ruling, verdict=Verdict.REVIEW, penalty_tiles=0, notes=(*ruling.notes, note))


def check_move(
    before: Table,
    after: Table,
    *,
    opened: bool,
    profile: Profile | str = DEFAULT_PROFILE,
    elapsed_s: float | None = None,
    table_at_limit: Table | None = None,
    touched_after_limit: bool | None = None,
) -> Ruling:
    """Rule on one move. ``opened``: the player had opened before this move.

    The time limit is the profile's ``time_limit_s`` (``None``: no limit); a limit agreed at the table is the profile
    with it replaced, ``dataclasses.replace(profile, time_limit_s=...)``. A time (elapsed or limit) that is not a
    finite number of seconds, at least 0, is a :class:`MoveError` (``nan`` would rule every move late).

    For a move over the limit the camera may know more than a human referee (RULES.md §6): ``table_at_limit``, the
    table as it stood when the time ran out, and ``touched_after_limit``, whether hands were over the tiles after it.
    Each profile's :class:`~referee.profiles.TimeoutRule` says what they decide; where the ruling depends on one that
    is not given, it is REVIEW. Every violation's detail ends with the seed rule it enforces; a fault no seed rule
    of the profile names is REVIEW, never REVERT.
    """
    rules = get_profile(profile)
    limit = rules.time_limit_s
    _check_seconds("elapsed_s", elapsed_s)
    _check_seconds("time_limit_s", limit)
    over = elapsed_s is not None and limit is not None and elapsed_s > limit
    if touched_after_limit is not None and not isinstance(touched_after_limit, bool):
        raise MoveError(f"touched_after_limit must be true, false or None, not {touched_after_limit!r}")
    if (table_at_limit is not None or touched_after_limit is not None) and not over:
        took = "no elapsed time" if elapsed_s is None else f"{elapsed_s:g} s"
        raise MoveError(
            f"the table at the limit and touches after it describe a move over the time limit; this one took {took}"
            f" (limit: {'none' if limit is None else f'{limit:g} s'})"
        )
    exam = _examine(before, after, opened=opened, rules=rules)
    judged = exam
    if over:
        assert elapsed_s is not None and isinstance(limit, numbers.Real)
        late = f"the move took {elapsed_s:.1f} s; the limit is {limit:g} s"
        judged = _rule_on_time(before, after, exam, rules, late, opened, table_at_limit, touched_after_limit)

    findings = judged.findings
    violations = _cite(findings.violations, rules)
    uncertain = judged.uncertain
    verdict = _verdict(violations, uncertain)
    notes = list(findings.notes)
    if uncertain:
        notes.append(f"{len(uncertain)} tile(s) read with low confidence: a person decides")
    if judged.untouched:
        notes.append(
            f"{judged.untouched} tile(s) read with low confidence lie in sets the move left as they were: the ruling"
            " does not depend on them"
        )
    penalty = _penalty(violations, rules)  # what a revert costs (a review costs nothing until a person rules)
    revert = (
        _revert_plan(before, after, exam.played, exam.removed, rules, penalty) if verdict is not Verdict.OK else None
    )
    return Ruling(
        verdict=verdict,
        violations=tuple(violations),
        played=exam.played,
        removed=exam.removed,
        penalty_tiles=penalty if verdict is Verdict.REVERT else 0,
        profile=rules.name,
        opened=opened,
        opening_value=judged.opening_value,
        revert=revert,
        uncertain=uncertain,
        notes=tuple(notes),
        kind="draw" if exam.unchanged else "play",
    )


@dataclass
class _Examination:
    """What one comparison of two tables found, before the clock is considered."""

    findings: _Findings
    played: tuple[Tile, ...]
    removed: tuple[Tile, ...]
    unchanged: bool
    opening_value: int | None
    uncertain: tuple[tuple[str, Place, Tile], ...]
    untouched: int

    @property
    def at_fault(self) -> bool:
        return any(v.players_fault for v in self.findings.violations)

    @property
    def certain(self) -> bool:
        """Nothing in it needs a person: no uncertain reading, no problem that is not the player's."""
        return not self.uncertain and all(v.players_fault for v in self.findings.violations)

    def with_timeout(self, detail: str, *, players_fault: bool = True) -> _Examination:
        findings = _Findings(list(self.findings.violations), list(self.findings.notes))
        findings.add(Code.TIMEOUT, detail, players_fault=players_fault)
        return replace(self, findings=findings)

    def with_note(self, note: str) -> _Examination:
        return replace(self, findings=_Findings(list(self.findings.violations), [*self.findings.notes, note]))


def _examine(before: Table, after: Table, *, opened: bool, rules: Profile) -> _Examination:
    played, removed = _difference(after.counts(), before.counts())
    findings = _Findings()
    unchanged = before.same_layout(after)

    phantom = _check_tile_counts(before, after, rules, findings)
    _check_sets(before, after, rules, findings)
    _check_removed(removed, phantom, findings)
    if not unchanged and not played:
        findings.add(Code.NO_TILE_FROM_RACK, "the table changed but no tile came from the rack")
    opening_value = None
    if not opened and not unchanged:
        _check_untouched_during_opening(before, after, findings)
    if not opened and played:
        opening_value = _check_opening_value(before, after, played, rules, findings)
    uncertain, untouched = _uncertain_places(before, after)
    return _Examination(findings, played, removed, unchanged, opening_value, uncertain, untouched)


def _rule_on_time(
    before: Table,
    after: Table,
    exam: _Examination,
    rules: Profile,
    late: str,
    opened: bool,
    at_limit: Table | None,
    touched: bool | None,
) -> _Examination:
    """A move over the limit, ruled as the profile's seed words it (RULES.md §6)."""
    if at_limit is None and touched is False:
        at_limit = after  # no hands over the tiles after the limit: the table now is the table then
    moved_after = at_limit is not None and not at_limit.same_layout(after)
    if touched is False and moved_after:
        return exam.with_timeout(
            f"{late}; the table read when the time ran out differs from the table now, yet no hands were seen over"
            " it after the limit: one of the readings is wrong, a person decides",
            players_fault=False,
        )
    if touched is None and moved_after and (at_limit.uncertain or after.uncertain):  # type: ignore[union-attr]
        return exam.with_timeout(
            f"{late}; the table read when the time ran out differs from the table now, and some tiles were read with"
            " low confidence: whether tiles were moved after the limit is for a person to say",
            players_fault=False,
        )
    touched_after = True if (touched or moved_after) else (False if at_limit is not None else None)
    if exam.unchanged and (at_limit is None or at_limit.same_layout(before)):
        if touched_after:
            return exam.with_timeout(
                f"{late}; the table is as it was, but tiles were touched after the time ran out: a person decides",
                players_fault=False,
            )
        return exam.with_note(f"{late}; the table is as it was, so the turn ends with a draw from the pool")
    limit_exam = _examine(before, at_limit, opened=opened, rules=rules) if at_limit is not None else None
    seed = f"{rules.seed}"

    if rules.timeout_rule is TimeoutRule.ANY_OVERRUN:
        return exam.with_timeout(f"{late}: any move over time is restored")

    if rules.timeout_rule is TimeoutRule.UNFINISHED_AT_LIMIT:
        if limit_exam is None:
            if exam.at_fault:
                return exam.with_timeout(f"{late}; the manipulation is not finished even now")
            return exam.with_timeout(
                f"{late}; the move is finished now, but {seed} restores only a manipulation not finished when the"
                " time ran out, and the table at that moment was not seen: a person decides",
                players_fault=False,
            )
        if not limit_exam.certain:
            return exam.with_timeout(f"{late}; the table when the time ran out was not read with certainty",
                                     players_fault=False)  # fmt: skip
        if limit_exam.at_fault:
            problems = ", ".join(sorted({v.code.value for v in limit_exam.findings.violations}))
            return exam.with_timeout(f"{late}; when the time ran out the manipulation was not finished ({problems})")
        if touched_after:
            return exam.with_timeout(
                f"{late}; the move was finished when the time ran out and tiles were touched after it: {seed} names"
                " no ruling for that, a person decides",
                players_fault=False,
            )
        return exam.with_note(f"{late}, but the move was finished when the time ran out: it stands")

    # TimeoutRule.TABLE_AT_LIMIT: the table when the time ran out is the move (przasnysz rules 14, 15, 17, 20).
    if limit_exam is None:
        if exam.at_fault:
            return exam.with_timeout(
                f"{late}; not finished when the time ran out (rule 14) or changed after it (rule 20): restored either"
                " way"
            )
        return exam.with_timeout(
            f"{late}; the move stands only if every set was valid when the time ran out (rule 15) and no tile was"
            " touched after it (rule 20); the table at that moment was not seen: a person decides",
            players_fault=False,
        )
    if limit_exam.at_fault:
        also = "; tiles were touched after it too (rule 20)" if touched_after else ""
        return limit_exam.with_timeout(
            f"{late}; the table when the time ran out is the move, and it is not finished (rule 14){also}"
        )
    if touched_after:
        return exam.with_timeout(f"{late}; tiles were touched after the time ran out: the move is void (rule 20)")
    return limit_exam.with_note(
        f"{late}, but every set was valid when the time ran out and nothing was touched after: the move stands"
        f" ({rules.name} rules 15 and 17)"
    )


def _cite(violations: Iterable[Violation], rules: Profile) -> list[Violation]:
    """Each violation's detail names its source; a fault no seed rule of the profile names becomes a review."""
    cited = []
    for violation in violations:
        source = rules.source(violation.code.value)
        if source is not None:
            where = f" [{source.cite(rules)}]"
        elif violation.players_fault:
            where = f" [{rules.name}: no rule of {rules.seed} names this; a person decides]"
            violation = replace(violation, players_fault=False)
        else:
            where = f" [{rules.name}: {rules.seed} names no fault here; RULES.md: not the player's doing]"
        cited.append(replace(violation, detail=violation.detail + where))
    return cited


def _penalty(violations: Iterable[Violation], rules: Profile) -> int:
    """The most tiles any broken rule costs: the profile's penalty unless the seed names another for that rule."""
    counts = []
    for violation in violations:
        if violation.players_fault:
            source = rules.source(violation.code.value)
            named = None if source is None else source.penalty_tiles
            counts.append(rules.penalty_tiles if named is None else named)
    return max(counts, default=rules.penalty_tiles)


def _uncertain_places(before: Table, after: Table) -> tuple[tuple[tuple[str, Place, Tile], ...], int]:
    """Uncertain readings the ruling depends on, and the count of those it does not.

    A set read the same before and after the move (same tiles; a group's order aside) is one the move did not
    touch: an uncertain tile in it was read the same way twice, and whatever it really is, the ruling is the
    same (its set was valid or broken before the move as much as after). Uncertain tiles in changed sets and
    loose tiles do count.
    """
    changed_before = set(_unmatched(before.sets, after.sets))
    changed_after = set(_unmatched(after.sets, before.sets))

    def counts(place: Place, changed: set[int]) -> bool:
        return place[0] == LOOSE or place[0] in changed

    found = tuple(("before", p, before.tile_at(p)) for p in sorted(before.uncertain) if counts(p, changed_before))
    found += tuple(("after", p, after.tile_at(p)) for p in sorted(after.uncertain) if counts(p, changed_after))
    return found, len(before.uncertain) + len(after.uncertain) - len(found)


def _unmatched(sets: Sequence[TileSet], reference: Sequence[TileSet]) -> list[int]:
    """Indices of ``sets`` that are not in ``reference`` (as a multiset of layouts): the changed sets."""
    available = Counter(s.layout_key for s in reference)
    changed = []
    for index, tile_set in enumerate(sets):
        if available[tile_set.layout_key] > 0:
            available[tile_set.layout_key] -= 1
        else:
            changed.append(index)
    return changed


def _difference(after: Counter[Tile], before: Counter[Tile]) -> tuple[tuple[Tile, ...], tuple[Tile, ...]]:
    played = sorted((after - before).elements())
    removed = sorted((before - after).elements())
    return tuple(played), tuple(removed)


def _check_seconds(name: str, value: object) -> None:
    """``None`` or a finite number of seconds, at least 0."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise MoveError(f"{name} must be a finite number of seconds, at least 0, not {value!r}")


def _check_tile_counts(before: Table, after: Table, rules: Profile, findings: _Findings) -> Counter[Tile]:
    """More copies of a tile than the profile's set holds, on the table before or after the move (one violation
    per tile): a misread or a foreign tile, never the player's fault. An impossible before-table is the last
    move's misread ruled REVIEW: whatever this move did, a person decides. Returns the copies too many before."""
    counts_before, counts_after = before.counts(), after.counts()
    excess: Counter[Tile] = Counter()
    for tile in sorted(set(counts_before) | set(counts_after)):
        allowed = rules.jokers if tile.is_joker else rules.copies
        was, now = counts_before[tile], counts_after[tile]
        if was <= allowed and now <= allowed:
            continue
        excess[tile] = max(was - allowed, 0)
        if was > allowed and now > allowed:
            where = f"{was} copies of {tile} on the table before the move and {now} after it"
        elif was > allowed:
            where = f"{was} copies of {tile} on the table before the move"
        else:
            where = f"{now} copies of {tile} on the table"
        findings.add(
            Code.IMPOSSIBLE_TABLE,
            f"{where}; the {rules.name} set has {allowed} (a misread or a foreign tile)",
            tiles=(tile,),
            players_fault=False,
        )
    return +excess


def _check_sets(before: Table, after: Table, rules: Profile, findings: _Findings) -> None:
    """Every set must be valid; a set or loose tile already broken before the move is not the mover's fault."""
    new = set(_unmatched(after.sets, before.sets))
    for index, tile_set in enumerate(after.sets):
        check = check_set(tile_set.tiles, rules)
        if check.valid:
            continue
        inherited = index not in new
        already = "; it was already like this before the move" if inherited else ""
        if check.reordered is not None:  # RULES.md §2: a person asks for the tiles to be put in order
            detail = (
                f"set {index + 1} ({tile_set}) is a valid run only in another order: {check.reordered}"
                f" (a person asks for the tiles to be put in order){already}"
            )
            findings.add(Code.RUN_OUT_OF_ORDER, detail, sets=(index,), tiles=tile_set.tiles, players_fault=False)
            continue
        detail = f"set {index + 1} ({tile_set}) is not a valid run or group: {check.reason}{already}"
        findings.add(Code.INVALID_SET, detail, sets=(index,), tiles=tile_set.tiles, players_fault=not inherited)
    left_before = Counter(before.loose)
    new_loose = tuple(sorted((Counter(after.loose) - left_before).elements()))
    old_loose = tuple(sorted((Counter(after.loose) & left_before).elements()))
    if new_loose:
        findings.add(Code.INVALID_SET, f"tiles left outside any set: {_labels(new_loose)}", tiles=new_loose)
    if old_loose:
        detail = f"tiles outside any set, already there before the move: {_labels(old_loose)}"
        findings.add(Code.INVALID_SET, detail, tiles=old_loose, players_fault=False)


def _labels(tiles: Iterable[Tile]) -> str:
    return " ".join(str(t) for t in tiles)


def _check_removed(removed: Sequence[Tile], phantom: Counter[Tile], findings: _Findings) -> None:
    """Tiles gone from the table. A tile the before-table held more copies of than the set has may never have been
    there (a misread): its absence is no fault, and the impossible before-table already sends the move to review."""
    unexplained = Counter(removed) - phantom
    explained = Counter(removed) - unexplained
    if explained:
        findings.notes.append(
            f"gone after the move but read too many times before it: {_labels(sorted(explained.elements()))};"
            " not counted as taken from the table"
        )
    removed = sorted(unexplained.elements())
    numbers = tuple(t for t in removed if not t.is_joker)
    jokers = len(removed) - len(numbers)
    if numbers:
        listed = " ".join(str(t) for t in numbers)
        findings.add(
            Code.TILE_RETURNED_TO_RACK,
            f"tile(s) on the table before the move are gone after it: {listed}",
            tiles=numbers,
        )
    if jokers:
        findings.add(
            Code.JOKER_KEPT,
            f"{jokers} joker(s) taken from the table are not on the table after the move",
            tiles=(JOKER,) * jokers,
        )


def _check_untouched_during_opening(before: Table, after: Table, findings: _Findings) -> None:
    """Until a player has opened, the sets already on the table are not theirs to touch (RULES.md §4)."""
    touched = _unmatched(before.sets, after.sets)
    loose_taken = Counter(before.loose) - Counter(after.loose)
    if not touched and not loose_taken:
        return
    names = ", ".join(f"set {i + 1} ({before.sets[i]})" for i in touched)
    names = names or f"loose tiles {_labels(sorted(loose_taken.elements()))}"
    findings.add(
        Code.OPENING_MANIPULATION,
        f"sets already on the table were changed before the player had opened: {names}",
        sets=tuple(touched),
        tiles=tuple(t for i in touched for t in before.sets[i]) + tuple(sorted(loose_taken.elements())),
    )


def _check_opening_value(
    before: Table, after: Table, played: Sequence[Tile], rules: Profile, findings: _Findings
) -> int:
    """The opening counts only new sets made of the player's own rack tiles, each rack tile once."""
    from_rack = Counter(played)
    new_sets = [after.sets[i] for i in _unmatched(after.sets, before.sets)]
    valued = sorted(((_value_in_order(s, rules), s) for s in new_sets), key=lambda pair: -pair[0])
    value = 0
    for set_value, tile_set in valued:
        needed = Counter(tile_set.tiles)
        if set_value and not needed - from_rack:
            from_rack -= needed
            value += set_value
    if value < rules.opening_threshold:
        findings.add(
            Code.OPENING_BELOW_THRESHOLD,
            f"opening sets from the rack are worth {value} points; {rules.name} needs at least"
            f" {rules.opening_threshold}",
            tiles=tuple(played),
        )
    return value


def _value_in_order(tile_set: TileSet, rules: Profile) -> int:
    """A set's value, an out-of-order run's once put in order (its order is for a person to settle, not its worth)."""
    check = check_set(tile_set.tiles, rules)
    return check.reordered.reading.value if check.reordered is not None else check.value


def _verdict(violations: Iterable[Violation], uncertain: Sequence[object]) -> Verdict:
    violations = list(violations)
    if uncertain or any(not v.players_fault for v in violations):
        return Verdict.REVIEW
    return Verdict.REVERT if violations else Verdict.OK


def _revert_plan(
    before: Table, after: Table, played: tuple[Tile, ...], removed: tuple[Tile, ...], rules: Profile, penalty: int
) -> RevertPlan:
    changed = _unmatched(after.sets, before.sets)
    valid = [s for s in after.sets if check_set(s.tiles, rules).valid]
    broken = [t for s in after.sets if s not in valid for t in s]
    return RevertPlan(
        restore=Table(before.sets, before.loose),
        to_rack=played,
        to_table=removed,
        changed_sets=tuple(changed) + ((LOOSE,) if after.loose else ()),
        penalty_tiles=penalty,
        fallback_keep=tuple(valid),
        fallback_take=tuple(sorted(broken + list(after.loose))),
    )
