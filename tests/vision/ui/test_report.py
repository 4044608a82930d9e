"""report.html: one self-contained page per analysed game, built from the folder ``analyze`` writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.moves import check_move
from referee.table import Table
from vision.game.gamelog import GameLog, GameSetup
from vision.ui.report import ReportError, write_report

RACKS = {
    "ending": "out",
    "players": [
        {"name": "Ala", "rack": [], "opened": True},
        {"name": "Bartek", "rack": ["red-10", "joker"], "opened": True},
    ],
}


def _snapshot(folder: Path, frame: int, shade: int) -> str:
    path = folder / "frames" / f"{frame:07d}.jpg"
    path.parent.mkdir(exist_ok=True)
    cv2.imwrite(str(path), np.full((18, 32, 3), shade, np.uint8))
    return path.relative_to(folder).as_posix()


def _move(number: int, player: int, time_s: float, before: Table, after: Table, opened: bool = True) -> dict[str, Any]:
    ruling = check_move(before, after, opened=opened, profile="official", elapsed_s=20.0)
    return {
        "event": "move", "number": number, "player": player, "seat": (0, 2)[player], "kind": ruling.kind,
        "opened": opened, "time_s": time_s, "frame": int(time_s * 30), "start_s": time_s - 5, "elapsed_s": 20.0,
        "ended_by": "settle", "before": before.to_json(with_extras=True), "after": after.to_json(with_extras=True),
        "ruling": ruling.to_dict(),
    }  # fmt: skip


@pytest.fixture
def game_dir(tmp_path: Path) -> Path:
    """A hand-made analysis: a first table, an OK move, a REVERT, a restore, an occlusion, a REVIEW."""
    first = Table.parse("[red-1 red-2 red-3]")
    extended = Table.parse("[red-1 red-2 red-3 red-4]")
    broken = Table.parse("[red-1 red-2 red-3 red-4] [blue-5 blue-7 blue-9]")
    unsure = Table.from_json({"sets": [["red-1", "red-2", "red-3", "red-4"], ["black-9", "red-9",
                              {"label": "blue-9", "confidence": 0.2}]], "loose": []})  # fmt: skip
    moves = [
        _move(1, 0, 20.0, first, extended),
        _move(2, 1, 45.0, extended, broken),
        _move(3, 1, 90.0, extended, unsure),
    ]
    assert [m["ruling"]["verdict"] for m in moves] == ["ok", "revert", "review"]
    events: list[dict[str, Any]] = [
        {"event": "calibration", "time_s": 0.0, "frame": 0, "method": "frame"},
        {"event": "table", "time_s": 1.0, "frame": 30, "reason": "first reading", "table": first.to_json()},
        moves[0],
        moves[1],
        {"event": "restore", "time_s": 60.0, "frame": 1800, "after_move": 2, "player": 1, "complete": True},
        {"event": "occluded", "time_s": 70.0, "frame": 2100, "seconds": 12.5},
        moves[2],
        {"event": "end", "time_s": 100.0, "moves": 3, "pipeline": {"reading_ms_mean": 80.0, "readings": 40}},
    ]
    events[4]["table"] = extended.to_json()
    for shade, event in enumerate(events):
        if event["event"] in ("table", "move", "restore", "occluded"):
            event["snapshot"] = _snapshot(tmp_path, event["frame"], 40 * shade)
    start = {"source": "final.mp4", "fps": 30.0, "size": [1920, 1080]}
    with GameLog.create(tmp_path / "game-log.jsonl", GameSetup.of("official", 2), start, sync=False) as log:
        for event in events:
            log.append(event)
    summary = {"video_s": 100.0, "seconds": 20.0, "speed_x_real_time": 5.0, "moves": 3}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    return tmp_path


def _article(page: str, number: int) -> str:
    match = re.search(rf'<article[^>]*id="move-{number}".*?</article>', page, re.S)
    assert match, f"move {number} is missing"
    return match.group(0)


def test_report_is_one_self_contained_file(game_dir: Path) -> None:
    path = write_report(game_dir)
    assert path == game_dir / "report.html"
    page = path.read_text(encoding="utf-8")
    assert 'src="http' not in page and 'href="http' not in page and "<link" not in page
    assert "<script src" not in page and "url(http" not in page
    sources = re.findall(r'<img src="([^"]*)"', page)
    # before/after per move (3 x 2), three problems (revert, review, occlusion), one restore
    assert len(sources) == 10
    assert all(s.startswith("data:image/jpeg;base64,") for s in sources)


def test_every_move_is_there_with_its_verdict(game_dir: Path) -> None:
    page = write_report(game_dir).read_text(encoding="utf-8")
    for number, verdict in enumerate(["ok", "revert", "review"], start=1):
        card = _article(page, number)
        assert f'data-verdict="{verdict}"' in card
        assert card.count("<img") == 2  # before and after
        assert f'href="#move-{number}"' in page  # the timeline's mark
    assert 'title="red-4"' in _article(page, 1)  # the tile played, as a chip


def test_an_amended_move_is_one_card_as_last_ruled(tmp_path: Path) -> None:
    # move 1's first part ruled REVIEW as it settled, then the same player went on: the whole turn, ruled again
    first, part = Table.parse("[red-1 red-2 red-3]"), Table.parse("[red-1 red-2 red-3] [blue-5 blue-6]")
    whole = Table.parse("[red-1 red-2 red-3] [blue-5 blue-6 blue-7]")
    lines = [
        {"event": "table", "time_s": 1.0, "frame": 30, "reason": "first reading", "table": first.to_json()},
        _move(1, 0, 20.0, first, part),
        {**_move(1, 0, 30.0, first, whole), "amends": 1},
        _move(2, 1, 45.0, whole, whole),
    ]
    assert [m["ruling"]["verdict"] for m in lines[1:]] == ["revert", "ok", "ok"]
    with GameLog.create(
        tmp_path / "game-log.jsonl", GameSetup.of("official", 2), {"source": "x.mp4"}, sync=False
    ) as log:
        for line in lines:
            log.append(line)
    page = write_report(tmp_path).read_text(encoding="utf-8")
    assert page.count('<article class="move') == 2 and 'data-verdict="ok"' in _article(page, 1)
    assert "the whole turn" in _article(page, 1) and 'class="move revert"' not in page


def test_revert_shows_the_layout_to_restore_and_the_penalty(game_dir: Path) -> None:
    page = write_report(game_dir).read_text(encoding="utf-8")
    card = _article(page, 2)
    plan = card[card.index("Restore this layout") :]
    layout = re.search(r'<div class="layout">.*?</div>', plan, re.S)
    assert layout
    assert re.findall(r'title="([a-z0-9-]+)', layout.group(0)) == ["red-1", "red-2", "red-3", "red-4"]
    assert "Back to the player's rack" in card and 'title="blue-7"' in plan
    assert "<b>Penalty</b> 1 tile from the pool" in card  # the official profile's penalty
    assert "Table restored at 01:00" in card
    assert "invalid-set" in card


def test_review_names_the_uncertain_tiles(game_dir: Path) -> None:
    card = _article(write_report(game_dir).read_text(encoding="utf-8"), 3)
    assert "For the referee to decide" in card
    assert re.search(r'class="chip blue uncertain" title="blue-9[^"]*">9</span> set 2, tile 3, after the move', card)


def test_filters_for_each_verdict_and_code(game_dir: Path) -> None:
    page = write_report(game_dir).read_text(encoding="utf-8")
    codes = {v["code"] for line in (game_dir / "game-log.jsonl").read_text().splitlines()
             for v in json.loads(line).get("ruling", {}).get("violations", [])}  # fmt: skip
    assert codes
    for code in codes:
        assert f'<input type="checkbox" checked data-code="{code}">' in page
    for verdict in ("ok", "revert", "review"):
        assert f'<input type="checkbox" checked data-verdict="{verdict}">' in page


def test_problems_and_restores_are_listed(game_dir: Path) -> None:
    page = write_report(game_dir).read_text(encoding="utf-8")
    problems = page[page.index('id="problems"') : page.index('id="restores"')]
    assert "Something over the table for 12.5 s: tiles hidden" in problems  # as the console and station say it
    assert 'href="#move-2"' in problems and 'href="#move-3"' in problems and 'href="#move-1"' not in problems
    restores = page[page.index('id="restores"') : page.index('id="moves"')]
    assert "Table restored after" in restores


def test_score_sheet_only_when_the_racks_are_known(game_dir: Path) -> None:
    assert "Final score" not in write_report(game_dir).read_text(encoding="utf-8")
    page = write_report(game_dir, racks=RACKS).read_text(encoding="utf-8")
    sheet = page[page.index('id="score"') : page.index('id="timeline"')]
    assert "Ala" in sheet and "Bartek" in sheet and "<td>1</td><td>Ala</td>" in sheet
    assert "Bartek (top)" in _article(page, 2)  # the names replace "Player 2"; the seat as the station names it


def test_a_missing_picture_is_no_error(game_dir: Path) -> None:
    for picture in (game_dir / "frames").iterdir():
        picture.unlink()
    page = write_report(game_dir).read_text(encoding="utf-8")
    assert "<img" not in page and "no picture" in page


def test_pictures_outside_the_folder_are_not_embedded(game_dir: Path) -> None:
    (game_dir.parent / "secret.jpg").write_bytes(b"not for the report")
    log = game_dir / "game-log.jsonl"
    log.write_text(log.read_text().replace('"frames/0000600.jpg"', '"../secret.jpg"'))
    page = write_report(game_dir).read_text(encoding="utf-8")
    assert "bm90IGZvciB0aGUgcmVwb3J0" not in page  # base64 of the secret


def _break(folder: Path, how: str) -> None:
    log = folder / "game-log.jsonl"
    lines = log.read_text().splitlines()
    if how == "garbage":
        lines.insert(2, "{not json")
    elif how == "no-start":
        lines = lines[1:]
    elif how == "no-ruling":
        lines = [line.replace('"ruling":', '"ruled":') for line in lines]
    elif how == "no-log":
        log.unlink()
        return
    log.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("garbage", "malformed JSON"),  # a line that is not JSON in the middle of the log
        ("no-start", "no start line"),  # not a game log at all
        ("no-ruling", "game-log.jsonl:4: move 1 lacks 'ruling'"),  # a move the report cannot draw, its line named
        ("no-log", "no game-log.jsonl (run analyze first)"),  # analyze never ran here
    ],
    ids=["garbage", "no-start", "no-ruling", "no-log"],
)
def test_a_bad_folder_is_a_report_error(game_dir: Path, how: str, message: str) -> None:
    _break(game_dir, how)
    with pytest.raises(ReportError, match=re.escape(message)) as caught:
        write_report(game_dir)
    assert "\n" not in str(caught.value)
    assert not (game_dir / "report.html").exists()


@pytest.mark.parametrize(
    "racks",
    [
        {
            "ending": "out",
            "players": [{"name": "Ala", "rack": ["red-1"]}, {"name": "B", "rack": ["red-2"]}],
        },  # no one out
        {
            "ending": "out",
            "players": [{"name": "Ala", "rack": ["purple-3"]}, {"name": "B", "rack": []}],
        },  # no such tile
        ["not", "a", "game"],
    ],
    ids=["nobody-out", "unknown-tile", "not-a-game"],
)
def test_bad_racks_are_a_report_error(game_dir: Path, racks: Any) -> None:
    with pytest.raises(ReportError, match=r"^racks: "):
        write_report(game_dir, racks=racks)


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no such folder"):
        write_report(tmp_path / "nowhere")


def test_analyze_writes_a_report_end_to_end(tmp_path: Path) -> None:
    from vision.cli import main
    from vision.runtime import calibrate
    from vision.synth.video import write_game

    write_game(tmp_path / "game", players=2, seed=3, violation_rate=0.5, profile="official", minutes=0.5,
               size=(640, 360), progress=False)  # fmt: skip
    header = json.loads((tmp_path / "game" / "truth.jsonl").read_text().splitlines()[0])
    calibration = tmp_path / "calibration.json"
    calibrate.from_corners(header["play_area_px"], size_mm=tuple(header["play_area_mm"])).save(calibration)
    out = tmp_path / "analysis"
    argv = ["analyze", str(tmp_path / "game" / "game.mp4"), "--out", str(out), "--players", "2", "--profile",
            "official", "--calibration", str(calibration), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    moves = json.loads((out / "moves.json").read_text())
    assert moves and all(f'id="move-{m["number"]}"' in page for m in moves)
    assert 'src="data:image/jpeg;base64,' in page and 'src="http' not in page


# -- a move's pictures at the camera's resolution -------------------------------------------------------------

TILE_W, TILE_H = 50, 70


def _laid(text: str, places: list[tuple[int, int]]) -> Table:
    """A table whose set ``k`` starts at ``places[k]`` (x, y of its first tile, in the frame's pixels)."""
    sets = []
    for tile_set, (x, y) in zip(Table.parse(text).sets, places, strict=True):
        sets.append([{"label": str(tile), "confidence": 0.99, "box": [x + k * TILE_W, y, x + (k + 1) * TILE_W - 4,
                     y + TILE_H]} for k, tile in enumerate(tile_set)])  # fmt: skip
    return Table.from_json({"sets": sets, "loose": []})


def _shade(frame: int) -> int:
    return 20 + 6 * frame


@pytest.fixture
def filmed_dir(tmp_path: Path) -> Path:
    """An analysis of a real 1280 x 720 video (each frame its own shade of grey): a first table, an OK move that
    lays a new set, a REVERT that lays an invalid one."""
    video = tmp_path / "final.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (1280, 720))
    for frame in range(30):
        writer.write(np.full((720, 1280, 3), _shade(frame), np.uint8))
    writer.release()
    first = _laid("[red-1 red-2 red-3]", [(100, 100)])
    laid = _laid("[red-1 red-2 red-3] [black-7 blue-7 orange-7]", [(100, 100), (800, 500)])
    broken = _laid("[red-1 red-2 red-3] [black-7 blue-7 orange-7] [blue-5 blue-7 blue-9]",
                   [(100, 100), (800, 500), (300, 450)])  # fmt: skip
    moves = [_move(1, 0, 1.0, first, laid), _move(2, 1, 2.0, laid, broken)]
    moves[0]["frame"], moves[1]["frame"] = 10, 20
    assert [m["ruling"]["verdict"] for m in moves] == ["ok", "revert"]
    start = {"source": str(video), "fps": 10.0, "size": [1280, 720]}
    with GameLog.create(tmp_path / "game-log.jsonl", GameSetup.of("official", 2), start, sync=False) as log:
        log.append({"event": "table", "time_s": 0.2, "frame": 2, "reason": "first reading", "table": first.to_json()})
        for move in moves:
            log.append(move)
        log.append({"event": "end", "time_s": 3.0, "moves": 2})
    return tmp_path


def _picture(uri: str) -> np.ndarray:
    import base64

    data = base64.b64decode(uri.split(",", 1)[1])
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)


def _outlined(image: np.ndarray, bgr: tuple[int, int, int]) -> int:
    """Pixels of an outline's colour (grey frames have none)."""
    return int((np.abs(image.astype(int) - bgr).max(axis=2) < 60).sum())


@pytest.mark.parametrize("seek_frames", [300, 1])  # frames read one after the other; each reached by seeking
def test_a_move_is_shown_cut_from_the_video_at_full_resolution_with_the_offending_set_outlined(
    filmed_dir: Path, seek_frames: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import vision.ui.report_crops

    monkeypatch.setattr(vision.ui.report_crops, "SEEK_FRAMES", seek_frames)
    page = write_report(filmed_dir).read_text(encoding="utf-8")
    revert = _article(page, 2)
    after, before = (
        re.search(rf'<figure class="crop"><img src="([^"]+)" alt="{which}', revert).group(1)  # type: ignore[union-attr]
        for which in ("after", "before")
    )
    cut = _picture(after)
    # the invalid set: 3 tiles of 50 x 70 px at (300, 450), and three quarters of a tile's height around them
    pad = 0.75 * TILE_H
    assert cut.shape[:2] == (int(np.ceil(520 + pad)) - int(450 - pad), int(np.ceil(446 + pad)) - int(300 - pad))
    assert abs(int(cut[2, 2, 0]) - _shade(20)) <= 3  # cut from the frame the move was ruled on, at its full size
    assert abs(int(_picture(before)[2, 2, 0]) - _shade(10)) <= 3  # and from the frame the move found the table on
    assert _outlined(cut, (30, 30, 220)) > 500  # the offending set, in red
    assert "170&times;" not in revert and f"{cut.shape[1]}&times;{cut.shape[0]} px" in revert
    assert 'data-zoom="full"' in revert
    problems = page[page.index('<section id="problems">') : page.index('<section id="moves">')]
    assert f'<img src="{after}"' in problems  # the gallery of what went wrong shows the same crop
    ok = _picture(re.search(r'<figure class="crop"><img src="([^"]+)" alt="after', _article(page, 1)).group(1))  # type: ignore[union-attr]
    assert _outlined(ok, (30, 30, 220)) == 0 and _outlined(ok, (230, 120, 20)) > 300  # a changed set, in blue


def test_without_the_video_the_snapshots_stand_in(filmed_dir: Path) -> None:
    (filmed_dir / "final.avi").unlink()
    page = write_report(filmed_dir).read_text(encoding="utf-8")
    assert 'class="crop"' not in page and '<div class="nopic">no picture</div>' in _article(page, 2)


def test_played_tiles_are_shown_set_by_set(filmed_dir: Path) -> None:
    """Two sets laid in one move are two rows, each set whole with the played tiles ringed."""
    events = [json.loads(line) for line in (filmed_dir / "game-log.jsonl").read_text().splitlines()]
    two = _laid("[red-1 red-2 red-3 red-4] [black-7 blue-7 orange-7]", [(100, 100), (800, 500)])
    first = Table.from_json(events[1]["table"])
    move = _move(1, 0, 1.0, first, two)
    assert sorted(move["ruling"]["played"]) == ["black-7", "blue-7", "orange-7", "red-4"]
    (filmed_dir / "game-log.jsonl").unlink()
    setup = GameSetup.from_start(events[0], filmed_dir / "game-log.jsonl")
    with GameLog.create(filmed_dir / "game-log.jsonl", setup, events[0] | {"source": "gone.avi"}, sync=False) as log:
        log.append(events[1])
        log.append(move)
    played = re.search(r'<ul class="played">(.*?)</ul>', write_report(filmed_dir).read_text(encoding="utf-8"), re.S)
    rows = re.findall(r"<li>(.*?)</li>", played.group(1))  # type: ignore[union-attr]
    assert len(rows) == 2
    assert rows[0].count('class="chip') == 4 and rows[0].count(" ring") == 1 and "added to a set of 3" in rows[0]
    assert rows[1].count('class="chip') == 3 and rows[1].count(" ring") == 3 and "new set" in rows[1]


def test_players_are_named_as_the_station_names_them(game_dir: Path) -> None:
    page = write_report(game_dir).read_text(encoding="utf-8")
    assert "Player 2 (top)" in _article(page, 2) and "Player 1 (bottom)" in _article(page, 1)
    assert "(seat " not in page and "<dd>Player 1 (bottom), Player 2 (top)</dd>" in page


def test_the_filters_and_the_zoom_work_in_a_browser(filmed_dir: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    import shutil

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no Chromium to drive (apt-get install chromium)")
    path = write_report(filmed_dir)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(path.resolve().as_uri())
            expect = sync_api.expect
            articles = page.locator("article.move")
            expect(articles).to_have_count(2)
            expect(page.locator("#shown")).to_have_text("2 of 2 moves shown")
            page.uncheck("#filters input[data-verdict=revert]")
            expect(page.locator("#move-2")).to_be_hidden()
            expect(page.locator("#move-1")).to_be_visible()
            expect(page.locator("#shown")).to_have_text("1 of 2 moves shown")
            expect(page.locator('svg a[data-verdict="revert"]')).to_have_class("hidden")  # its mark on the timeline
            page.check("#filters input[data-verdict=revert]")
            page.uncheck("#filters input[data-code=invalid-set]")  # the REVERT's only code
            expect(page.locator("#move-2")).to_be_hidden()
            expect(page.locator("#shown")).to_have_text("1 of 2 moves shown")
            page.check("#filters input[data-code=invalid-set]")
            expect(page.locator("#shown")).to_have_text("2 of 2 moves shown")

            shown = page.locator('#move-2 figure.crop img[alt^="after"]')
            natural = shown.evaluate("(img) => [img.naturalWidth, img.naturalHeight]")
            assert shown.bounding_box()["width"] < natural[0] * 3  # type: ignore[index]
            shown.click()
            zoom = page.locator("#zoom")
            expect(zoom).to_be_visible()
            big = zoom.locator("img.full")
            assert big.evaluate("(img) => [img.naturalWidth, img.naturalHeight]") == natural  # the full crop
            assert big.bounding_box()["width"] > shown.bounding_box()["width"] * 2  # type: ignore[index]
            zoom.click()
            expect(zoom).to_be_hidden()
            assert errors == []
        finally:
            browser.close()


def test_the_referee_s_words_on_the_table_are_listed(game_dir: Path) -> None:
    # Recorded after the video (as `record` does): a declaration, an empty pool said and taken back, then went out.
    with GameLog.resume(game_dir / "game-log.jsonl")[0] as log:
        for event in (
            {"event": "announced-opening", "time_s": 95.0, "player": 1, "rule": "official: seeds/003, ZAKOŃCZENIE"},
            {"event": "pool-empty", "time_s": 96.0, "player": 1, "cause": "pool"},
            {"event": "override", "action": "undo", "time_s": 97.0, "undoes": {"event": "pool-empty"}},
            {"event": "out", "time_s": 98.0, "player": 0},
        ):
            log.append(event)
    page = write_report(game_dir).read_text(encoding="utf-8")
    words = page[page.index('id="words"') : page.index('id="moves"')]
    assert "player 2 will open next round" in words
    assert "the pool is empty (player 2 drew the last tile) <b>(taken back)</b>" in words
    assert "player 1 went out: the game is over" in words and words.count("taken back") == 1
