"""Filming simulated games: stable layouts, frames that match the ground truth, a readable MP4."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.table import Table
from vision.synth.layout import LayoutParams
from vision.synth.video import PLAY_AREA, LayoutKeeper, write_game

GAME = {
    "players": 3,
    "seed": 4,
    "violation_rate": 0.5,
    "profile": "pl-championship",
    "minutes": 1.5,
    "size": (320, 180),
    "fps": 8.0,
    "progress": False,
}


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("game")
    summary = write_game(out, **GAME)
    return out, summary


def truth_lines(out: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(line) for line in (out / "truth.jsonl").read_text().splitlines()]
    return lines[0], lines[1:]


def test_video_has_the_frames_the_truth_says(game: tuple[Path, dict]) -> None:
    out, summary = game
    header, events = truth_lines(out)
    capture = cv2.VideoCapture(str(out / "game.mp4"))
    assert capture.isOpened()
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == header["frames"] == summary["frames"] > 0
    assert (int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))) == (320, 180)
    previous_end = 0
    for event in events:
        assert previous_end <= event["start_frame"] <= event["settle_frame"] <= event["end_frame"] <= header["frames"]
        previous_end = event["end_frame"]


def test_every_injected_violation_is_in_the_truth(game: tuple[Path, dict]) -> None:
    out, _ = game
    header, events = truth_lines(out)
    moves = [e for e in events if e["event"] == "move"]
    injected = [code for m in moves for code in m["injected"]]
    assert injected, "a game at violation rate 0.5 injected nothing"
    assert sum(header["injected"].values()) == len(injected)
    for move in moves:
        codes = {v["code"] for v in move["expected"]["violations"]}
        assert set(move["injected"]) <= codes
    # After every ruling other than ok, the table is restored before the next move.
    for move, following in itertools.pairwise(moves):
        if move["expected"]["verdict"] != "ok" and following["before"] != move["after"]:
            restores = [e for e in events if e["event"] == "restore" and e["after_move"] == move["index"]]
            assert restores and restores[0]["table"] == following["before"]


def test_table_is_still_between_moves(game: tuple[Path, dict]) -> None:
    """Two frames of the same still stretch differ only by sensor noise and a pixel or two of jitter."""
    out, _ = game
    _, events = truth_lines(out)
    move = next(e for e in events if e["event"] == "move" and e["end_frame"] - e["settle_frame"] >= 3)
    capture = cv2.VideoCapture(str(out / "game.mp4"))
    frames = []
    for index in (move["settle_frame"] + 1, move["end_frame"] - 1):
        capture.set(cv2.CAP_PROP_POS_FRAMES, index)
        ok, frame = capture.read()
        assert ok
        frames.append(cv2.GaussianBlur(frame, (9, 9), 0).astype(np.int16))
    assert np.median(np.abs(frames[0] - frames[1])) <= 3


def test_same_seed_same_truth(tmp_path: Path, game: tuple[Path, dict]) -> None:
    out, _ = game
    again = tmp_path / "again"
    write_game(again, **GAME)
    assert (again / "truth.jsonl").read_text() == (out / "truth.jsonl").read_text()


def test_layout_keeps_unchanged_sets_in_place_and_never_overlaps() -> None:
    keeper = LayoutKeeper(PLAY_AREA, seed=1, scale=1.0, params=LayoutParams())
    first = keeper.place(Table.parse("[r5 r6 r7] [k3 b3 o3] [o10 o11 o12]"), seat=0)
    second = keeper.place(Table.parse("[r4 r5 r6 r7] [k3 b3 o3] [o10 o11 o12] [k9 k10 k11]"), seat=1)
    poses = {(p.set_id, p.position): p.pose for p in first}
    # Unchanged sets (1 and 2) keep every tile's pose; the grown run keeps its old tiles in place.
    assert all(
        second_tile.pose == poses[(second_tile.set_id, second_tile.position)]
        for second_tile in second
        if second_tile.set_id in (1, 2)
    )
    grown = {p.tile: (p.pose.x, p.pose.y) for p in second if p.set_id == 0}
    old = {p.tile: (p.pose.x, p.pose.y) for p in first if p.set_id == 0}
    for tile, (x, y) in old.items():
        assert abs(grown[tile][0] - x) < 3 and abs(grown[tile][1] - y) < 3
    footprints = [p.pose.corners()[:4, :2] for p in second]
    for i, a in enumerate(footprints):
        for b in footprints[i + 1 :]:
            assert not _overlap(a, b)


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating-axis test for two convex quads, with a 0.5 mm tolerance for touching tiles."""
    for quad in (a, b):
        for k in range(4):
            edge = quad[(k + 1) % 4] - quad[k]
            axis = np.array([-edge[1], edge[0]]) / np.linalg.norm(edge)
            pa, pb = a @ axis, b @ axis
            if pa.max() <= pb.min() + 0.5 or pb.max() <= pa.min() + 0.5:
                return False
    return True


def test_staging_adds_what_real_tables_have_and_keeps_the_game(tmp_path: Path, game: tuple[Path, dict]) -> None:
    """Clutter, a tilted camera and glare change the pictures, never the game: the same seed plays the same moves;
    the plain film's header says nothing of staging (earlier games' truth files stay as they were)."""
    from vision.synth.video import Staging

    plain_header, plain_events = truth_lines(game[0])
    assert "staging" not in plain_header
    staging = Staging(clutter=True, tilt_deg=30.0, glare=True, distortion=-0.05)
    write_game(tmp_path, **GAME, staging=staging)
    header, events = truth_lines(tmp_path)
    assert header["staging"] == staging.describe() and header["camera"]["tilt_deg"] == pytest.approx(30.0, abs=0.5)
    assert [e.get("after") for e in events] == [e.get("after") for e in plain_events]
    width, height = header["size"]
    corners = np.array(header["play_area_px"])
    assert (corners >= 0).all() and (corners[:, 0] <= width).all() and (corners[:, 1] <= height).all()
    top, bottom = np.linalg.norm(corners[1] - corners[0]), np.linalg.norm(corners[2] - corners[3])
    assert bottom > 1.15 * top  # the near edge looks longer: the camera leans towards seat 0


@pytest.mark.parametrize("bad", [{"tilt_deg": 60.0}, {"distortion": 0.5}])
def test_impossible_staging_is_refused(bad: dict) -> None:
    from vision.synth.video import Staging

    with pytest.raises(ValueError, match=r"tilt|distortion"):
        Staging(**bad)


def test_an_opening_frame_shows_where_the_racks_and_the_pool_are() -> None:
    from vision.synth.video import opening_frame

    frame = opening_frame(players=5, seed=2, profile="official-6p", size=(480, 270))
    assert frame.image.shape == (270, 480, 3)
    assert len(frame.rack_tiles_px) >= 5 * 8 and len(frame.pool_px) == 40
    x, y = np.round(frame.rack_tiles_px).astype(int).T
    inside = (x >= 0) & (x < 480) & (y >= 0) & (y < 270)
    assert inside.mean() > 0.9
