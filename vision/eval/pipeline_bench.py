"""``bench pipeline``: analyse synthetic game videos and compare moves and rulings with their ground truth.

Each game folder holds ``game.mp4`` and ``truth.jsonl`` from ``synth-game`` (fresh seeds are generated when
no folder is given: :data:`BENCH_TABLES`, tables as users film them). Each video is analysed twice:

- **the user's path** (the headline): as ``analyze`` does with its defaults, the play area found on its own
  (no markers, nothing from the truth);
- **the true play area**: with the play area's corners from the truth header as the calibration (what an
  operator would give by hand), to tell what the automatic play area costs from what reading costs. It is the upper
  bound for finding moves because the films show a player's hands over the play area for as long as the truth
  says they are over the table (:data:`vision.synth.video.HAND_DEPTH_MM`); tilted games filmed before that
  (issue 16) showed the table clear ~1 s before the truth's settling, and this row lost their long plays.
- **a venue that enrolled its own set** (``bench pipeline --enrol``, off by default): before each game, two grid
  photos of the film's own tile set are rendered (its style from the truth header, the grid camera, their own
  light) and ``rummikub-referee enrol`` makes a model folder of them (:func:`vision.eval.enrol_bench.enrol_venue`;
  a take ``enrol`` refuses is taken again); the game is then analysed as on the user's path with ``--models`` of
  that folder. With an enrolment head the familiarity check is off; its statistics only tell the enrolled head
  where the classifier's own head may vouch for a label (:meth:`vision.runtime.enrolhead.EnrolmentHead.read`). Each
  game's row says how its folder was made and the enrolment's own figures (accuracy on the grid photos and on
  held-out augmented crops, before -> after).

Then, for each:

- a detected move matches a true move when it is ruled between the true move's settling and
  :data:`MATCH_WINDOW_S` later (each used once); *moves found* = matched / true moves, *with the right
  tables* when its before and after tables equal the truth's (a group's order does not count);
- *by the right player*: found moves ruled for the player who made them (the seat the hands came from, or the
  turn order);
- *precision* = matched / detected moves (a detected move at the wrong time is a phantom); a move the same hands went
  on with after it was ruled is one move, as last ruled: its amendment (a move line of the same number with
  ``amends``) replaces it, and the summary counts amendments (``amended_moves``);
- per injected code: moves carrying it, moves flagged (verdict not ``ok``), moves ruled with that code;
- *false revert*: a ``revert`` where the truth's verdict is not ``revert`` (phantom moves included);
- latency: ruling time minus the true settling time, in video seconds;
- speed: video seconds per second of analysis, and sampled frames per second.

The enrolled row measured (2026-11-26, code of 59936a4 from a ``git archive`` export, shipped models; the 10-game
bench set of issue 16, ``/work/tmp/bench16``; ``bench pipeline --enrol --json --games ...``, as
``/work/tmp/s28/A/bench.sh`` runs it): default row 137/137 moves found, 135/137 with the right tables, 23/23 injected
violations flagged, 15/114 clean moves ruled REVIEW, 0 false REVERT, 0 phantoms; enrolled row 137/137, 135/137,
23/23, 13/114, 0, 0. Enrolments took 15-106 s each on 2 shared cores, 3 of 10 first takes refused by ``enrol`` and
taken again (models/README.md, "Enrolment", says where the clean REVIEWs went). The default row with only the
familiarity check off had 7/114 clean REVIEW in an experiment on the same export: the enrolment head gives back part
of what dropping that check gains. ``--enrol film`` (07ac7ae): ``enrol`` refused all 4 takes of every game (tiles
~25 px at the film's scale), the row empty.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from referee.events import amendments, last_rulings
from referee.moves import Code
from referee.table import Table
from vision.synth.truth import load_truth, play_area_calibration

MATCH_WINDOW_S = 3.0
"""A ruling later than this after the table settled does not count as finding that move."""


def score_game(truth: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[str, Any]:
    """Compare one analysed game's events with its truth lines (see the module docstring)."""
    true_moves = [t for t in truth if t["event"] == "move"]
    lines = [e for e in events if e["event"] == "move"]
    found = last_rulings(lines)  # an amended move is one move, as last ruled
    used: set[int] = set()
    rows = []
    for t in true_moves:
        match = next(
            (
                i
                for i, d in enumerate(found)
                if i not in used and t["settle_s"] - 0.5 <= d["time_s"] <= t["settle_s"] + MATCH_WINDOW_S
            ),
            None,
        )
        if match is not None:
            used.add(match)
        rows.append(_row(t, None if match is None else found[match]))
    phantoms = [d for i, d in enumerate(found) if i not in used]
    return {
        "rows": rows, "phantoms": [_phantom(d) for d in phantoms], "detected": len(found), "amended": amendments(lines),
    }  # fmt: skip


def _row(truth: dict[str, Any], move: dict[str, Any] | None) -> dict[str, Any]:
    expected = truth["expected"]
    row: dict[str, Any] = {
        "index": truth["index"],
        "injected": truth["injected"],
        "true_verdict": expected["verdict"],
        "true_codes": [v["code"] for v in expected["violations"]],
        "found": move is not None,
    }
    if move is None:
        return row
    before_ok = Table.from_json(move["before"]).same_layout(Table.from_json(truth["before"]))
    after_ok = Table.from_json(move["after"]).same_layout(Table.from_json(truth["after"]))
    ruling = move["ruling"]
    row.update(
        tables_right=before_ok and after_ok,
        before_right=before_ok,
        after_right=after_ok,
        verdict=ruling["verdict"],
        codes=[v["code"] for v in ruling["violations"]],
        latency_s=round(move["time_s"] - truth["settle_s"], 3),
        player_right=move["player"] == truth["player"],
        number=move["number"],
    )
    if ruling["verdict"] == "review":
        row["review_causes"] = review_causes(ruling, tables_right=before_ok and after_ok)
    return row


def review_causes(ruling: dict[str, Any], *, tables_right: bool) -> list[str]:
    """Why a move was ruled REVIEW, from its ruling: tiles read with low confidence in what the move changed
    (``uncertain tiles``), a finding that is not the player's fault (``not the player's: CODE``), and whether
    the tables were misread as well (``tables misread``); ``other`` when the ruling names none of these."""
    causes = ["uncertain tiles"] if ruling.get("uncertain") else []
    causes += [f"not the player's: {v['code']}" for v in ruling["violations"] if not v.get("players_fault", True)]
    causes += [] if tables_right else ["tables misread"]
    return causes or ["other"]


def _phantom(move: dict[str, Any]) -> dict[str, Any]:
    return {"number": move["number"], "time_s": move["time_s"], "verdict": move["ruling"]["verdict"]}


def summarise(games: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for g in games for r in g["rows"]]
    found = [r for r in rows if r["found"]]
    detected = sum(g["detected"] for g in games)
    phantoms = [p for g in games for p in g["phantoms"]]
    false_reverts = sum(1 for r in found if r["verdict"] == "revert" and r["true_verdict"] != "revert")
    false_reverts += sum(1 for p in phantoms if p["verdict"] == "revert")
    per_code = {}
    for code in (c.value for c in Code):
        carrying = [r for r in rows if code in r["injected"]]
        per_code[code] = {
            "injected": len(carrying),
            "flagged": sum(1 for r in carrying if r.get("verdict") in ("revert", "review")),
            "ruled_with_code": sum(1 for r in carrying if code in r.get("codes", [])),
        }
    latencies = [r["latency_s"] for r in found]
    right_tables = [r for r in found if r["tables_right"]]
    return {
        "games": len(games),
        "true_moves": len(rows),
        "detected_moves": detected,
        "moves_found": len(found),
        "move_recall": _ratio(len(found), len(rows)),
        "move_precision": _ratio(len(found), detected),
        "moves_with_right_tables": len(right_tables),
        "moves_by_the_right_player": sum(1 for r in found if r["player_right"]),
        "right_tables_share": _ratio(len(right_tables), len(rows)),
        "verdict_accuracy": _ratio(sum(1 for r in found if r["verdict"] == r["true_verdict"]), len(found)),
        "verdict_accuracy_right_tables": _ratio(
            sum(1 for r in right_tables if r["verdict"] == r["true_verdict"]), len(right_tables)
        ),
        "verdicts": dict(Counter(f"{r['true_verdict']}->{r['verdict']}" for r in found)),
        "false_reverts": false_reverts,
        "phantom_moves": len(phantoms),
        "amended_moves": sum(g.get("amended", 0) for g in games),
        "per_code": per_code,
        "latency_s_median": round(statistics.median(latencies), 3) if latencies else None,
        "latency_s_max": round(max(latencies), 3) if latencies else None,
    }


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


CALIBRATIONS = ("auto", "truth")
"""The two ways each game is analysed: the play area found on its own, and the true one."""


def analyse_folder(
    folder: Path, out: Path, reader: Any, *, progress: bool = False, calibration: str = "truth"
) -> dict[str, Any]:
    """Analyse one synthetic game (``calibration``: ``auto``, the play area found on its own as ``analyze`` finds
    it, or ``truth``, the truth's play area); returns scores and speed."""
    from vision.game.gamelog import GameSetup, read_log
    from vision.session.analyze import AnalyzeOptions, analyze_video

    header, truth = load_truth(folder)
    how = "auto" if calibration == "auto" else str(truth_calibration(header, out))
    setup = GameSetup.of(header["profile"], header["players"])
    options = AnalyzeOptions(setup=setup, calibration=how, progress=progress)
    summary = analyze_video(folder / header["video"], out, options, reader, overwrite=True)  # the bench's own folder
    events = read_log(out / "game-log.jsonl")
    scores = score_game(truth, events)
    scores.update(
        folder=str(folder),
        calibration=calibration,
        players=header["players"],
        profile=header["profile"],
        staging=header.get("staging"),
        play_area=_play_area_found(header, events),
        video_s=summary["video_s"],
        seconds=summary["seconds"],
        speed_x_real_time=summary["speed_x_real_time"],
        samples=summary["pipeline"]["samples"],
        frame_size=header["size"],
    )
    return scores


def _play_area_found(header: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How the play area the analysis used (its last calibration) covers the true one: the share of the true
    area inside it, and its area over the true one's."""
    import cv2
    import numpy as np

    used = [e for e in events if e.get("event") == "calibration" or "corners_px" in e]
    if not used or "play_area_px" not in header:
        return None
    width, height = header["size"]
    truth, found = np.zeros((height, width), np.uint8), np.zeros((height, width), np.uint8)
    cv2.fillConvexPoly(truth, np.round(np.array(header["play_area_px"])).astype(np.int32), 1)
    cv2.fillConvexPoly(found, np.round(np.array(used[-1]["corners_px"])).astype(np.int32), 1)
    true_area = max(1, int(truth.sum()))
    return {
        "method": used[0].get("method"),
        "true_area_covered": round(float((truth & found).sum()) / true_area, 4),
        "area_ratio": round(float(found.sum()) / true_area, 3),
    }


def truth_calibration(header: dict[str, Any], out: Path) -> Path:
    """:func:`play_area_calibration`, saved as ``out/calibration.json``."""
    calibration = play_area_calibration(header)
    out.mkdir(parents=True, exist_ok=True)
    calibration.save(out / "calibration.json")
    return out / "calibration.json"


def generate_games(root: Path, count: int, seed: int, minutes: float, *, staged: bool = False) -> list[Path]:
    """Fresh synthetic games, or the ones already generated there: players 2-4 and profiles in turn on the plain
    table; ``staged``: :data:`BENCH_TABLES` in turn (2 to 6 players, clutter, tilted cameras, glare)."""
    from vision.synth.video import Staging, write_game

    profiles = ("pl-championship", "official", "przasnysz", "wejherowo")
    folders = []
    for k in range(count):
        game_seed = seed + k
        if staged:
            players, profile, staging = BENCH_TABLES[k % len(BENCH_TABLES)]
            folder = root / f"game-{game_seed}-{players}p-{_tag(staging)}"
        else:
            players, profile, staging = 2 + k % 3, profiles[k % len(profiles)], {}
            folder = root / f"game-{game_seed}"
        if not (folder / "truth.jsonl").is_file():
            write_game(
                folder, players=players, seed=game_seed, violation_rate=0.25, profile=profile, minutes=minutes,
                progress=False, staging=Staging(**staging),
            )  # fmt: skip
        folders.append(folder)
    return folders


BENCH_TABLES: tuple[tuple[int, str, dict[str, Any]], ...] = (
    (4, "pl-championship", {"clutter": True}),
    (2, "official", {"tilt_deg": 30.0, "distortion": -0.05}),
    (6, "official-6p", {"clutter": True, "glare": True}),
    (3, "przasnysz", {"glare": True}),
    (5, "official-6p", {"clutter": True, "tilt_deg": 20.0}),
    (4, "wejherowo", {}),
    (2, "pl-championship", {"clutter": True, "tilt_deg": 15.0, "distortion": 0.05}),
    (6, "official-6p", {}),
)
"""Tables as users film them (players, profile, :class:`vision.synth.video.Staging`), in the order games are made:
the default three have 2, 4 and 6 players, a camera tilted 30 degrees and a glare; eight cover 2 to 6 players."""


def _tag(staging: dict[str, Any]) -> str:
    parts = [name for name in ("clutter", "glare") if staging.get(name)]
    if staging.get("tilt_deg"):
        parts.append(f"tilt{staging['tilt_deg']:g}")
    if staging.get("distortion"):
        parts.append("lens")
    return "-".join(parts) or "plain"


ENROLLED = "enrolled"
"""The row of a venue that enrolled its own set before play: the user's path with ``--models`` of that folder."""


def run_pipeline_benchmark(
    folders: list[Path],
    out_root: Path,
    *,
    models: Path | None = None,
    progress: bool = True,
    calibrations: tuple[str, ...] = CALIBRATIONS,
    enrol: bool = False,
    venue_camera: str = "grid",
) -> dict[str, Any]:
    """Each game analysed per calibration (:data:`CALIBRATIONS`); ``summary`` is the first's (the user's path), and
    ``rows`` holds each calibration's summary and games. ``enrol``: one more row, :data:`ENROLLED`, where each game
    is analysed as on the user's path (play area found on its own) with the model folder its venue enrolled from
    grid photos of the film's own set (:func:`vision.eval.enrol_bench.enrol_venue`, into
    ``out_root/enrolled-models/<game>``; ``venue_camera``: where its photos are taken from,
    :data:`vision.eval.enrol_bench.VENUE_CAMERAS`); each of its games carries ``enrolment``: how the folder was made
    and the enrolment's own figures."""
    from vision.game.pipeline import pipeline_reader

    reader = pipeline_reader(models)
    rows = {}
    for calibration in calibrations:
        games = []
        for folder in folders:
            started = time.perf_counter()
            games.append(
                analyse_folder(
                    folder, out_root / calibration / folder.name, reader, progress=progress, calibration=calibration
                )
            )
            games[-1]["wall_s"] = round(time.perf_counter() - started, 1)
        rows[calibration] = {"summary": _summary_of(games), "games": games}
    if enrol:
        rows[ENROLLED] = _enrolled_row(folders, out_root, models, progress=progress, camera=venue_camera)
    first = rows[calibrations[0]] if calibrations else rows[ENROLLED]
    return {"summary": first["summary"], "games": first["games"], "rows": rows}


def _enrolled_row(
    folders: list[Path], out_root: Path, models: Path | None, *, progress: bool, camera: str = "grid"
) -> dict[str, Any]:
    """The :data:`ENROLLED` row: per game, its venue's enrolment, then the user's path read with that folder. A game
    whose every take ``enrol`` refuses is left out of the row and listed (``not_enrolled``, with the last refusal)."""
    from vision.eval.enrol_bench import VenueEnrolmentError, enrol_venue
    from vision.game.pipeline import pipeline_reader

    games, not_enrolled = [], []
    for folder in folders:
        started = time.perf_counter()
        kept = out_root / ("enrolled-models" if camera == "grid" else f"enrolled-models-{camera}") / folder.name
        try:
            enrolment = enrol_venue(folder, kept, models, camera)
        except VenueEnrolmentError as refused:
            not_enrolled.append({"folder": str(folder), "refused": str(refused)})
            continue
        reader = pipeline_reader(Path(enrolment["models"]))
        out = out_root / (ENROLLED if camera == "grid" else f"{ENROLLED}-{camera}") / folder.name
        scores = analyse_folder(folder, out, reader, progress=progress, calibration="auto")
        scores.update(row=ENROLLED, enrolment=enrolment, wall_s=round(time.perf_counter() - started, 1))
        games.append(scores)
    summary = _summary_of(games)
    summary["enrolment"] = {
        "how": games[0]["enrolment"]["what"] if games else None,
        "enrol_s": [g["enrolment"]["enrol_s"] for g in games],
        "holdout_accuracy": [_before_after(g["enrolment"]["figures"]["holdout"], "accuracy") for g in games],
        "holdout_wrong_at_0.8": [_before_after(g["enrolment"]["figures"]["holdout"], "wrong_confident") for g in games],
        "not_enrolled": not_enrolled,
    }
    return {"summary": summary, "games": games}


def _before_after(figures: dict[str, dict[str, Any]], key: str) -> list[Any]:
    return [figures["before"][key], figures["after"][key]]


def _summary_of(games: list[dict[str, Any]]) -> dict[str, Any]:
    summary = summarise(games)
    video = sum(g["video_s"] for g in games)
    seconds = sum(g["seconds"] for g in games)
    summary.update(
        video_s=round(video, 1),
        analyze_s=round(seconds, 1),
        speed_x_real_time=round(video / seconds, 2) if seconds else None,
        sampled_frames_per_s=round(sum(g["samples"] for g in games) / seconds, 1) if seconds else None,
        frame_sizes=sorted({"x".join(map(str, g["frame_size"])) for g in games}),
    )
    clean = [r for g in games for r in g["rows"] if r["true_verdict"] == "ok"]
    summary["clean_moves_ruled_review"] = sum(1 for r in clean if r.get("verdict") == "review")
    summary["clean_moves"] = len(clean)
    summary["clean_review_causes"] = dict(Counter(c for r in clean for c in r.get("review_causes", ())))
    return summary


ROW_LABELS = {
    "auto": "play area found on its own (analyze's default: no markers, nothing from the truth)",
    "truth": "true play area given as corners (for comparison)",
    ENROLLED: "the venue's own set enrolled before play (grid photos rendered in the film's tile style, `enrol`),"
    " then analyze's default with --models of that folder",
}


def format_pipeline_benchmark(result: dict[str, Any]) -> str:
    """Each calibration's row (:data:`ROW_LABELS`), labelled, the user's path first; one line per game."""
    rows = result.get("rows") or {"": {"summary": result["summary"], "games": result["games"]}}
    parts = []
    for calibration, row in rows.items():
        label = ROW_LABELS.get(calibration, calibration)
        text = _format_summary(row["summary"])
        enrolment = row["summary"].get("enrolment")
        if enrolment:
            refused = [f"\n  {Path(g['folder']).name}: not enrolled, left out: {g['refused']}"
                       for g in enrolment.get("not_enrolled", ())]  # fmt: skip
            text = f"{enrolment['how'] or 'no game enrolled'}{''.join(refused)}\n{text}"
        parts.append(f"== {label}\n{text}" if label else text)
        for game in row["games"]:
            parts.append(_format_game(game))
    return "\n".join(parts)


def _format_game(game: dict[str, Any]) -> str:
    rows = game["rows"]
    found = [r for r in rows if r["found"]]
    area = game.get("play_area") or {}
    staging = game.get("staging") or {}
    table = _tag(staging) if staging else "plain"
    covered = f", play area covers {area['true_area_covered']:.1%} of the true one" if area else ""
    enrolment = _format_enrolment(game["enrolment"]) if "enrolment" in game else ""
    return (
        f"  {Path(game['folder']).name}: {game.get('players', '?')} players, {game.get('profile', '?')}, {table}:"
        f" {len(found)}/{len(rows)} moves found, {sum(1 for r in found if r['tables_right'])} with the right"
        f" tables, {sum(1 for r in found if r['true_verdict'] == 'ok' and r['verdict'] == 'review')} clean moves"
        f" ruled review{covered}; {game.get('wall_s', '?')} s{enrolment}"
    )


def _format_enrolment(e: dict[str, Any]) -> str:
    photos, holdout = e["figures"]["photos"], e["figures"]["holdout"]
    kept = " (kept from the last run)" if e["reused"] else ""
    return (
        f"\n    enrolled {e['tiles_enrolled']} tiles ({e['jokers_enrolled']} jokers) from 2 grid photos in the film's"
        f" style {e['style_index']} ({e['style']}), {e['enrol_s']} s{kept}:"
        f" photos accuracy {photos['before']['accuracy']:.3f} -> {photos['after']['accuracy']:.3f}, held-out"
        f" augmentations {holdout['before']['accuracy']:.3f} -> {holdout['after']['accuracy']:.3f}, wrong at >= 0.8"
        f" {holdout['before']['wrong_confident']} -> {holdout['after']['wrong_confident']} of"
        f" {holdout['after']['crops']}; {e['read_differently_before']} read differently from the grid before"
        + "".join(f"; warning: {w}" for w in e["warnings"])
        + "".join(f"; a take refused by enrol: {r}" for r in e.get("refused", ()))
    )


def _format_summary(s: dict[str, Any]) -> str:
    lines = [
        f"games {s['games']}, video {s['video_s']} s ({', '.join(s['frame_sizes'])}), analysed in {s['analyze_s']} s"
        f" = {s['speed_x_real_time']}x real time ({s['sampled_frames_per_s']} sampled frames/s)",
        f"moves: {s['true_moves']} true, {s['detected_moves']} detected; found {s['moves_found']}"
        f" (recall {s['move_recall']}, precision {s['move_precision']}); with the right before/after tables"
        f" {s['moves_with_right_tables']} ({s['right_tables_share']}), by the right player"
        f" {s['moves_by_the_right_player']}",
        f"verdict accuracy {s['verdict_accuracy']} on found moves, {s['verdict_accuracy_right_tables']} where the"
        f" tables were read right; true->ruled {s['verdicts']}",
        f"false reverts {s['false_reverts']}, phantom moves {s['phantom_moves']}"
        + (f", moves amended {s['amended_moves']}" if s.get("amended_moves") else "")
        + (
            f", clean moves ruled review {s['clean_moves_ruled_review']} of {s['clean_moves']}"
            if "clean_moves" in s
            else ""
        )
        + (
            " (causes: " + ", ".join(f"{c} {n}" for c, n in sorted(s["clean_review_causes"].items())) + ")"
            if s.get("clean_review_causes")
            else ""
        ),
        f"latency from settling to ruling: median {s['latency_s_median']} s, max {s['latency_s_max']} s",
        "injected code              moves  flagged  ruled with the code",
    ]
    for code, c in s["per_code"].items():
        lines.append(f"{code:<26} {c['injected']:>5} {c['flagged']:>8} {c['ruled_with_code']:>8}")
    return "\n".join(lines)
