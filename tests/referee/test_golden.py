"""Golden rulings: hand-written cases in ``tests/golden/*.json``, checked against ``check_move``.

The files are the oracle, like perft files for a chess engine: each was written from RULES.md and the seed
documents, never produced by running the engine. When the engine disagrees with a file and the rules side with
the file, the file stays and its name goes in ``KNOWN_ENGINE_BUGS`` (a strict xfail), so the bug stays visible
and the test turns red the moment the engine is fixed and the entry is stale.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from referee.moves import Code, Ruling, check_move
from referee.profiles import PROFILES, get_profile
from referee.table import Table

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "golden"
GOLDEN_FILES = sorted(GOLDEN_DIR.glob("*.json"))

VERDICTS = {"ok", "revert", "review"}
OPTIONAL_FIELDS = {"opening_value", "revert_to_rack", "revert_to_table"}

# file name -> why the engine is wrong (RULES.md / seed reasoning). Each entry is a strict xfail.
KNOWN_ENGINE_BUGS: dict[str, str] = {}


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _params() -> Iterator[Any]:
    for path in GOLDEN_FILES:
        marks = []
        if path.name in KNOWN_ENGINE_BUGS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_ENGINE_BUGS[path.name]))
        yield pytest.param(path, id=path.stem, marks=marks)


def _rule(case: dict[str, Any]) -> Ruling:
    # "profile" or absent: the profile's own limit; a number or null replaces it (a limit agreed at the table).
    limit = case.get("time_limit_s", "profile")
    rules = get_profile(case["profile"])
    kwargs: dict[str, Any] = {
        "opened": case["opened"],
        "profile": rules if limit == "profile" else replace(rules, time_limit_s=limit),
        "elapsed_s": case.get("elapsed_s"),
    }
    # What the camera knows of a late move (RULES.md §6): the table when the time ran out, hands over it after.
    if "at_limit" in case:
        kwargs["table_at_limit"] = Table.from_json(case["at_limit"])
    if "touched_after_limit" in case:
        kwargs["touched_after_limit"] = case["touched_after_limit"]
    return check_move(Table.from_json(case["before"]), Table.from_json(case["after"]), **kwargs)


def _labels(tiles: Any) -> list[str]:
    # Sorted by label text on both sides, so a file never depends on the engine's canonical tile order.
    return sorted(str(t) for t in tiles)


def test_golden_files_exist() -> None:
    assert len(GOLDEN_FILES) >= 45, f"only {len(GOLDEN_FILES)} golden files in {GOLDEN_DIR}"


def test_known_engine_bugs_name_real_files() -> None:
    # A renamed or deleted file must not leave a stale entry that hides nothing.
    names = {p.name for p in GOLDEN_FILES}
    assert set(KNOWN_ENGINE_BUGS) <= names, sorted(set(KNOWN_ENGINE_BUGS) - names)


@pytest.mark.parametrize("path", list(_params()))
def test_golden(path: Path) -> None:
    case = _load(path)
    expected = case["expected"]
    ruling = _rule(case)
    got = {
        "verdict": ruling.verdict.value,
        "codes": sorted(ruling.codes),
        "penalty_tiles": ruling.penalty_tiles,
        "played": _labels(ruling.played),
    }
    want = {
        "verdict": expected["verdict"],
        "codes": sorted(expected["codes"]),
        "penalty_tiles": expected["penalty_tiles"],
        "played": sorted(expected["played"]),
    }
    if "opening_value" in expected:
        got["opening_value"] = ruling.opening_value
        want["opening_value"] = expected["opening_value"]
    for name in ("revert_to_rack", "revert_to_table"):
        if name in expected:
            assert ruling.revert is not None, f"{path.name}: expected a revert plan, the verdict is {got['verdict']}"
            plan = ruling.revert.to_rack if name == "revert_to_rack" else ruling.revert.to_table
            got[name] = _labels(plan)
            want[name] = sorted(expected[name])
    assert got == want, f"{path.name}: {case['about']}"


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=[p.stem for p in GOLDEN_FILES])
def test_golden_file_shape(path: Path) -> None:
    # Catches typos in hand-written files (a misspelt code or key would otherwise just fail to match).
    case = _load(path)
    assert set(case) <= {
        "about", "profile", "seed", "rule", "opened", "elapsed_s", "time_limit_s", "at_limit", "touched_after_limit",
        "before", "after", "expected",
    }  # fmt: skip
    assert case["about"].strip()
    assert case["profile"] in PROFILES
    assert isinstance(case["opened"], bool)
    expected = case["expected"]
    assert set(expected) <= {"verdict", "codes", "penalty_tiles", "played"} | OPTIONAL_FIELDS
    assert expected["verdict"] in VERDICTS
    assert {c for c in expected["codes"]} <= {c.value for c in Code}
    assert expected["codes"] == sorted(expected["codes"]), "codes are written sorted"
    profile = PROFILES[case["profile"]]
    if "rule" in case:  # a case citing a seed rule cites one the profile has, from the profile's own seed
        assert case["seed"] == profile.seed
        assert case["rule"] in {r.rule for r in profile.rules.values()}, case["rule"]
    # Only a revert costs tiles; ok and review never do. A revert costs the profile's penalty, or the count the
    # seed names for each rule broken (house: 1 for a move with no tile from the rack or a short opening).
    if expected["verdict"] != "revert":
        assert expected["penalty_tiles"] == 0
    else:
        sources = [profile.source(code) for code in expected["codes"]]
        counts = [profile.penalty_tiles if s is None or s.penalty_tiles is None else s.penalty_tiles for s in sources]
        assert expected["penalty_tiles"] == max(counts)
    if expected["verdict"] == "ok":
        assert expected["codes"] == []


def test_every_code_and_profile_is_covered() -> None:
    # Coverage must not shrink silently when files are removed or a code/profile is added to the engine.
    cases = [_load(p) for p in GOLDEN_FILES]
    codes = {c for case in cases for c in case["expected"]["codes"]}
    profiles = {case["profile"] for case in cases}
    assert {c.value for c in Code} - codes == set(), "codes with no golden file"
    assert set(PROFILES) - profiles == set(), "profiles with no golden file"
    # Every verdict too, and each profile both ruled ok and reverted/reviewed at least once.
    assert {case["expected"]["verdict"] for case in cases} == VERDICTS
    for name in PROFILES:
        verdicts = {case["expected"]["verdict"] for case in cases if case["profile"] == name}
        assert "ok" in verdicts and verdicts - {"ok"}, f"{name}: {sorted(verdicts)}"


def test_every_seed_rule_has_a_golden_case_citing_it() -> None:
    # Issue 17: each rule a profile enforces (a violation code and the seed rule behind it) has a hand-written
    # case that cites the seed document and the rule, and whose expected ruling names that code.
    cases = [_load(p) for p in GOLDEN_FILES]
    cited = {
        (case["seed"], case["rule"], code) for case in cases if "rule" in case for code in case["expected"]["codes"]
    }
    missing = sorted(
        f"{profile.seed} {rule.rule} ({code})"
        for profile in PROFILES.values()
        for code, rule in profile.rules.items()
        if (profile.seed, rule.rule, code) not in cited
        and not (code == "opening-below-threshold" and not profile.opening_threshold)
    )
    assert missing == []
