"""The report shows a move over time's table at the limit (issue 17): the golden game
``tests/golden/games/przasnysz-late-moves-table-at-limit.json`` played by the game, logged, and written as a page; and
a synthetic game with a move unfinished when the limit passed, filmed, analysed and reported."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.game import Game
from referee.profiles import get_profile
from referee.table import Table
from vision.game.gamelog import GameLog, GameSetup
from vision.session.analyze import AnalyzeOptions, analyze_video
from vision.synth.game import simulate_game
from vision.synth.video import timeline
from vision.ui.report import write_report

GOLDEN = Path(__file__).parents[2] / "golden" / "games" / "przasnysz-late-moves-table-at-limit.json"


def _logged_golden(folder: Path, *, unseen: int | None = None) -> Path:
    """The golden game's log in ``folder`` (its steps all tables settling); ``unseen``: the step (1-based) whose
    table at the limit the camera did not see (hands over it)."""
    spec = json.loads(GOLDEN.read_text(encoding="utf-8"))
    game = Game.start(spec["profile"], spec["players"])
    lines: list[dict[str, Any]] = []
    for number, step in enumerate(spec["steps"], start=1):
        t, seen = float(step["t"]), step.get("at_limit")
        game, events = game.on_settled(
            Table.parse(step["settle"]), time_s=t, frame=int(t * 30), start_s=None, hands_seat=step.get("seat"),
            hands=step.get("hands", True), table_at_limit=None if seen is None or number == unseen else
            Table.parse(seen), touched_after_limit=step.get("touched"),
        )  # fmt: skip
        lines += [event.to_json() for event in events]
    with GameLog.create(folder / "game-log.jsonl", GameSetup.of(spec["profile"], spec["players"]), sync=False) as log:
        for line in lines:
            log.append(line)
    return folder


def _article(page: str, number: int) -> str:
    match = re.search(rf'<article[^>]*id="move-{number}".*?</article>', page, re.S)
    assert match, f"move {number} is missing"
    return match.group(0)


def _chips(html: str) -> list[str]:
    """The tiles a piece of the page draws, by their tooltips (without the reader's confidence)."""
    return [title.split(" (")[0] for title in re.findall(r'<span class="chip[^"]*" title="([^"]*)"', html)]


def _at_limit_figure(article: str) -> str:
    match = re.search(r'<figure class="at-limit".*?</figure>', article, re.S)
    assert match, "no table at the limit"
    return match.group(0)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = _logged_golden(tmp_path_factory.mktemp("late"))
    return write_report(folder).read_text(encoding="utf-8")


def test_a_late_move_shows_the_table_at_the_limit_beside_before_and_after(page: str) -> None:
    first = _article(page, 1)  # 41.5 s on przasnysz's 40 s: the limit passed at 0:40, the turn having begun at 0
    figure = _at_limit_figure(first)
    assert "at the limit · 00:40" in figure
    assert _chips(figure) == ["black-5", "blue-5", "orange-5", "red-10", "red-11", "red-12"]
    assert "Over the 40 s limit by 1.5 s: the table at the limit: 6 tiles, 2 sets; not touched after the limit" in first
    # the group still two tiles when the limit passed (turn from 41.5 s: the limit at 81.5 s), touched after it
    second = _article(page, 2)
    assert "at the limit · 01:21" in _at_limit_figure(second)
    assert _chips(_at_limit_figure(second))[-2:] == ["black-11", "blue-11"]
    assert "; touched after the limit" in second
    assert "Table before, at the limit and after (as read)" in second


def test_a_move_in_time_shows_no_table_at_the_limit(page: str) -> None:
    fourth = _article(page, 4)  # a draw in 20 s; the camera's stale report of a limit was not logged
    assert 'class="at-limit"' not in fourth and "Time limit" not in fourth
    assert "Table before and after (as read)" in fourth


def test_a_table_at_the_limit_under_hands_is_not_seen(tmp_path: Path) -> None:
    page = write_report(_logged_golden(tmp_path, unseen=5)).read_text(encoding="utf-8")  # move 3's step
    third = _article(page, 3)
    assert "not seen (hands over the table)" in _at_limit_figure(third)
    assert _chips(_at_limit_figure(third)) == []
    assert "the table at the limit not seen (hands over the table); touched after the limit" in third


def test_an_analysed_late_move_shows_the_table_the_camera_read_at_the_limit(tmp_path: Path, scenes: Any) -> None:
    # synth-game --time-limit 6 --late-move unfinished-at-limit, filmed as a scripted scene (as
    # tests/vision/synth/test_synth_late_move.py does) and analysed under pl-championship with the 6 s agreed
    limit_s, fps = 6.0, 12.0
    game = next(
        g
        for seed in range(40)
        if (g := simulate_game(players=2, seed=seed, violation_rate=0.0, profile="pl-championship",
                               time_limit_s=limit_s, late_move="unfinished-at-limit")).ending == "late-move"
        and len(g.moves) <= 2
    )  # fmt: skip
    segments, truth, states = timeline(game, np.random.default_rng(0), fps=fps)
    late = next(line for line in truth if "late" in line)
    scene, video = scenes.TableScene(), tmp_path / "late.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), fps, scene.size)
    index = 0
    for frame in range(round(segments[-1].end_s * fps)):
        while index < len(segments) - 1 and frame / fps >= segments[index].end_s:
            index += 1
        scene.show(states[segments[index].state][0])
        scene.arm = None if segments[index].hands_seat is None else segments[index].hands_seat.edge.label
        writer.write(scene.frame())
    writer.release()
    setup = GameSetup(replace(get_profile("pl-championship"), time_limit_s=limit_s), 2)
    out = tmp_path / "analysed"
    analyze_video(video, out, AnalyzeOptions(setup=setup, calibration="frame", progress=False), scenes.PixelReader())
    page = write_report(out).read_text(encoding="utf-8")
    number = max(int(n) for n in re.findall(r'<article[^>]*id="move-(\d+)"', page))
    article = _article(page, number)
    figure = _at_limit_figure(article)
    expected = Table.from_json(late["late"]["table_at_limit"])
    assert sorted(_chips(figure)) == sorted(str(tile) for tile in expected.tiles())
    assert "Over the 6 s limit by " in article and "; touched after the limit" in article
