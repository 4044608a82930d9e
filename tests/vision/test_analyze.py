"""analyze_video and the ``analyze`` command on a scripted game recorded as a real (MJPG) video file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import pytest

from referee.table import Table
from vision.analyze import AnalyzeOptions, analyze_video
from vision.cli import main
from vision.gamelog import read_log
from vision.moves import GameKeeper

FPS = 10.0
START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
SCRIPT: list[tuple[str, str | None, float]] = [
    ("", None, 2.0),  # the table as the game starts
    ("bottom", OPENED, 2.0),  # player 0 opens
    ("", None, 3.0),
    ("top", None, 2.0),  # player 1 draws
    ("", None, 3.0),
    ("bottom", f"{OPENED} [blue-7 blue-8]", 2.0),  # player 0 lays a pair: revert
    ("", None, 3.0),
]


def record(path: Path, scene: Any, script: list[tuple[str, str | None, float]]) -> Path:
    """Play ``script`` (arm side or "", the table it leaves, seconds) into a video file."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, scene.size)
    assert writer.isOpened()
    for side, table, seconds in script:
        scene.arm = side or None
        frames = round(seconds * FPS)
        for k in range(frames):
            if table is not None and k == frames // 2:
                scene.show(table)
            writer.write(scene.frame())
    writer.release()
    return path


@pytest.fixture(scope="module")
def game_video(tmp_path_factory: pytest.TempPathFactory, scenes: Any) -> Path:
    scene = scenes.TableScene()
    scene.show(START)
    return record(tmp_path_factory.mktemp("video") / "final.avi", scene, SCRIPT)


def options(**changes: Any) -> AnalyzeOptions:
    return AnalyzeOptions(**{"profile": "official", "players": 2, "calibration": "frame", "progress": False, **changes})


def test_a_recorded_game_becomes_a_log_a_move_list_and_a_summary(game_video: Path, tmp_path: Path, scenes: Any) -> None:
    out = tmp_path / "analysis"
    summary = analyze_video(game_video, out, options(), scenes.PixelReader())
    assert summary["moves"] == 3 and summary["verdicts"] == {"ok": 2, "revert": 1}
    assert summary["codes"] == {"invalid-set": 1} and summary["restores"] == 0
    assert summary["video_s"] == pytest.approx(17.0, abs=0.2) and summary["speed_x_real_time"] > 1
    assert json.loads((out / "summary.json").read_text()) == summary

    events = read_log(out / "game-log.jsonl")
    kinds = [e["event"] for e in events]
    assert kinds[:3] == ["start", "calibration", "table"] and kinds[-1] == "end" and kinds.count("move") == 3
    assert events[0]["mode"] == "analyze" and events[0]["fps"] == FPS and events[0]["size"] == [480, 360]
    moves = json.loads((out / "moves.json").read_text())
    assert moves == [e for e in events if e["event"] == "move"]
    assert [(m["player"], m["kind"], m["ruling"]["verdict"]) for m in moves] == [
        (0, "play", "ok"),
        (1, "draw", "ok"),
        (0, "play", "revert"),
    ]
    assert Table.from_json(moves[2]["ruling"]["revert"]["restore"]).same_layout(Table.parse(OPENED))
    # each move is ruled soon after the hands left (the video's own clock, not the analysis')
    assert [m["time_s"] for m in moves] == pytest.approx([4.0, 9.0, 14.0], abs=1.0)
    for event in events:
        if event["event"] in ("table", "move"):
            assert (out / event["snapshot"]).is_file()  # the frame it happened on, for the report


def test_the_log_of_an_analysis_replays_into_the_same_game(game_video: Path, tmp_path: Path, scenes: Any) -> None:
    analyze_video(game_video, tmp_path, options(), scenes.PixelReader())
    keeper = GameKeeper("official", 2)
    keeper.replay(read_log(tmp_path / "game-log.jsonl"))
    assert (keeper.moves, keeper.player, keeper.opened) == (3, 1, [True, False])
    assert keeper.pending is not None and keeper.pending.table.same_layout(Table.parse(OPENED))


def test_analysing_again_into_the_same_folder_starts_afresh(game_video: Path, tmp_path: Path, scenes: Any) -> None:
    first = analyze_video(game_video, tmp_path, options(), scenes.PixelReader())
    second = analyze_video(game_video, tmp_path, options(first_player=1), scenes.PixelReader())
    assert second["moves"] == first["moves"]
    events = read_log(tmp_path / "game-log.jsonl")
    assert [e["event"] for e in events].count("start") == 1  # not appended to the old log
    assert [e["player"] for e in events if e["event"] == "move"] == [0, 1, 0]  # the hands' sides decide


# -- the command line ------------------------------------------------------------------------------------------


@pytest.fixture
def stand_in_reader(monkeypatch: pytest.MonkeyPatch, scenes: Any) -> None:
    """``analyze`` and ``live`` get the pixel reader instead of the ONNX models."""
    import vision.pipeline

    monkeypatch.setattr(vision.pipeline, "pipeline_reader", lambda models=None: scenes.PixelReader())


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.count("\n") == 1, captured.err
    return captured.err


def test_the_analyze_command_prints_the_summary(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["analyze", str(game_video), "--out", str(tmp_path), "--players", "2", "--profile", "official",
                   "--calibration", "frame", "--no-report", "--json"])  # fmt: skip
    assert status == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["moves"] == 3 and summary["verdicts"] == {"ok": 2, "revert": 1}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"RIFF\x00\x00\x00\x00AVI LIST" + bytes(200), "cannot open video"),  # a header and nothing else
        (b"this is not a video", "cannot open video"),
        (b"", "cannot open video"),
    ],
)
def test_a_corrupt_video_is_a_one_line_error(
    tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    video = tmp_path / "final.avi"
    video.write_bytes(content)
    assert main(["analyze", str(video), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    error = one_line_error(capsys)
    assert message in error and str(video) in error


def test_a_video_cut_short_is_analysed_as_far_as_it_goes(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    data = game_video.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[: len(data) * 6 // 10])  # the recording stopped after the first move
    status = main(["analyze", str(cut), "--out", str(tmp_path / "out"), "--players", "2", "--calibration", "frame",
                   "--no-report", "--json"])  # fmt: skip
    assert status == 0
    assert json.loads(capsys.readouterr().out)["moves"] >= 1


def test_a_missing_model_file_is_named_before_the_video_is_opened(
    game_video: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "models"
    empty.mkdir()
    assert main(["analyze", str(game_video), "--out", str(tmp_path / "out"), "--models", str(empty)]) == 2
    error = one_line_error(capsys)
    assert str(empty) in error and ".onnx" in error and "not found" in error
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "malformed JSON"),
        ('{"corners_px": [[0, 0], [1, 0]], "size_mm": [1000, 700], "method": "corners"}', "corners"),
        ('{"size_mm": [1000, 700]}', "lacks corners_px"),
    ],
)
def test_a_malformed_calibration_file_is_a_one_line_error(
    game_video: Path,
    tmp_path: Path,
    stand_in_reader: None,
    capsys: pytest.CaptureFixture[str],
    content: str,
    message: str,
) -> None:
    calibration = tmp_path / "table.json"
    calibration.write_text(content)
    status = main(["analyze", str(game_video), "--out", str(tmp_path / "out"), "--calibration", str(calibration)])
    assert status == 2
    error = one_line_error(capsys)
    assert str(calibration) in error and message in error
