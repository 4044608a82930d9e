"""analyze_video and the ``analyze`` command on a scripted game recorded as a real (MJPG) video file."""

from __future__ import annotations

import io
import json
import os
import signal
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from referee.table import Table
from vision.cli import main
from vision.game.gamelog import GameSetup, read_log
from vision.game.moves import GameKeeper
from vision.session.analyze import AnalyzeOptions, OutputFolderError, ProgressBar, analyze_video

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


def options(first_player: int = 0) -> AnalyzeOptions:
    return AnalyzeOptions(setup=GameSetup.of("official", 2, first_player), calibration="frame", progress=False)


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


def test_analysing_again_into_the_same_folder_starts_afresh_when_told_to(
    game_video: Path, tmp_path: Path, scenes: Any
) -> None:
    first = analyze_video(game_video, tmp_path, options(), scenes.PixelReader())
    with pytest.raises(OutputFolderError, match="--overwrite"):
        analyze_video(game_video, tmp_path, options(), scenes.PixelReader())
    second = analyze_video(game_video, tmp_path, options(first_player=1), scenes.PixelReader(), overwrite=True)
    assert second["moves"] == first["moves"]
    events = read_log(tmp_path / "game-log.jsonl")
    assert [e["event"] for e in events].count("start") == 1  # not appended to the old log
    assert [e["player"] for e in events if e["event"] == "move"] == [0, 1, 0]  # the hands' sides decide


def test_keyframes_only_under_hands_change_nothing_the_game_sees(game_video: Path, tmp_path: Path, scenes: Any) -> None:
    """With PyAV, keyframes only while an arm stays over the table (every frame of this MJPG video is one: under the
    arm a sample a second instead of five): the same events, moves and rulings as with every busy sample decoded."""
    from dataclasses import replace

    summaries, logs = [], []
    for hands in (True, False):
        out = tmp_path / f"hands-{hands}"
        how = replace(options(), decoder="pyav", hands_keyframes=hands)
        summaries.append(analyze_video(game_video, out, how, scenes.PixelReader()))
        logs.append([{k: v for k, v in e.items() if k != "wall_time"} for e in read_log(out / "game-log.jsonl")])
    thinned, dense = summaries
    assert thinned["decode"]["hand_probes"] > 0 and dense["decode"]["hand_probes"] == 0
    assert thinned["moves"] == 3 and thinned["verdicts"] == dense["verdicts"]
    assert thinned["pipeline"]["samples"] < dense["pipeline"]["samples"]
    assert logs[0][1:-1] == logs[1][1:-1]  # every event between the start and the end line alike, frame for frame


def test_each_ruling_is_heard_as_soon_as_it_is_made(game_video: Path, tmp_path: Path, scenes: Any) -> None:
    """``on_event`` hears a move while most of the video is still to be read, not all of them at the end."""
    frames = [0]

    def count_frames() -> None:  # asked between frames
        frames[0] += 1

    heard: list[tuple[str, int]] = []
    analyze_video(game_video, tmp_path, options(), scenes.PixelReader(), stop=count_frames,
                  on_event=lambda event: heard.append((event["event"], frames[0])))  # fmt: skip
    moves = [at for kind, at in heard if kind == "move"]
    assert len(moves) == 3 and heard[-1][0] == "end"
    assert moves[0] < frames[0] / 2 and moves[0] < moves[1] < moves[2]  # move 1 at 4 s of 17
    # move 3, a REVERT with nobody reaching in after it, is held (the move may go on) until the video ends
    assert moves[2] == frames[0]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_steps_aside_for_a_ruling() -> None:
    screen = Terminal()
    bar = ProgressBar(100, screen)
    bar.advance(40)
    assert screen.getvalue().startswith("\r[############..................] 40/100 frames")
    bar.clear()  # a ruling is printed now, from the left edge
    assert screen.getvalue().endswith("\r\x1b[K")
    bar.advance(10)  # and the bar is drawn again below it
    assert "50/100 frames" in screen.getvalue().rsplit("\x1b[K", 2)[-2]
    bar.close()
    assert screen.getvalue().endswith("\r\x1b[K")

    log = io.StringIO()  # not a terminal: a line every 10 %, nothing to rub out
    bar = ProgressBar(100, log)
    for _ in range(100):
        bar.advance()
    bar.clear()
    assert log.getvalue().count("\n") == 11 and "\r" not in log.getvalue()


# -- the command line ------------------------------------------------------------------------------------------


@pytest.fixture
def stand_in_reader(monkeypatch: pytest.MonkeyPatch, scenes: Any) -> None:
    """``analyze`` and ``live`` get the pixel reader instead of the ONNX models."""
    import vision.game.pipeline

    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", lambda models=None: scenes.PixelReader())


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.count("\n") == 1, captured.err
    return captured.err


def test_the_analyze_command_prints_the_rulings_then_the_report(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "analysis"
    assert main(analyze_command(game_video, out, "--profile", "official")) == 0
    lines = capsys.readouterr().out.splitlines()
    moves = [i for i, line in enumerate(lines) if line.startswith("[") and "] Move " in line]
    assert [lines[i].split("] ", 1)[1].split(":")[0] for i in moves] == ["Move 1", "Move 2", "Move 3"]
    assert "player 1 played red-10 red-11 red-12" in lines[moves[0]] and lines[moves[0]].endswith(": OK")
    assert lines[moves[2]].endswith(": REVERT (invalid-set)") and lines[moves[2] + 1].strip().startswith("invalid-set")
    assert lines[moves[-1] + 5] == "[00:17] Game ended after 3 moves (end of the video)"
    summary = next(line for line in lines[moves[-1] :] if line.startswith("3 moves: "))
    assert summary.startswith("3 moves: 2 OK, 1 REVERT, 0 REVIEW (17 s of video analysed in")
    assert lines[-2:] == [f"game log: {out / 'game-log.jsonl'}", f"report: {out / 'report.html'}"]
    assert not any("{" in line for line in lines)  # no Python dict


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


# -- the output folder -----------------------------------------------------------------------------------------


def analyze_command(video: Path, out: Path, *more: str) -> list[str]:
    return ["analyze", str(video), "--out", str(out), "--players", "2", "--calibration", "frame", "--quiet", *more]


def test_a_folder_that_is_not_empty_is_refused_and_left_as_it_is(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "analysis"
    (out / "frames").mkdir(parents=True)
    (out / "game-log.jsonl").write_text("the referee's own notes\n")
    (out / "frames" / "holiday.jpg").write_bytes(b"\xff\xd8 a photo")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert main(analyze_command(game_video, out)) == 2
    error = one_line_error(capsys)
    assert f"{out} is not empty (frames, game-log.jsonl)" in error and "--overwrite" in error
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_overwrite_replaces_only_what_an_analysis_wrote(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "analysis"
    assert main(analyze_command(game_video, out)) == 0
    old_snapshots = {p.name for p in (out / "frames").iterdir()}
    (out / "frames" / "9999999.jpg").write_bytes(b"a snapshot of an older analysis")
    keep = {
        out / "notes.txt": b"table 3, final",
        out / "frames" / "holiday.jpg": b"\xff\xd8 a photo",
        out / "frames" / "0000001.png": b"not a snapshot: another suffix",
        out / "raw" / "0000001.jpg": b"not in frames/",
    }
    for path, data in keep.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
    assert main(analyze_command(game_video, out, "--overwrite")) == 0
    assert all(path.read_bytes() == data for path, data in keep.items())  # nothing it did not write is gone
    assert not (out / "frames" / "9999999.jpg").exists()
    assert {p.name for p in (out / "frames").iterdir()} == old_snapshots | {"holiday.jpg", "0000001.png"}
    assert [e["event"] for e in read_log(out / "game-log.jsonl")].count("start") == 1
    assert (out / "report.html").is_file()


def test_an_analysis_that_fails_to_start_leaves_the_previous_one_alone(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "analysis"
    assert main(analyze_command(game_video, out)) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(analyze_command(tmp_path / "missing.mp4", out, "--overwrite")) == 2
    one_line_error(capsys)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    ("more", "message"),
    [
        (["--first-player", "3"], "--first-player is 1 to 2 at a 2-player table, not 3"),
        (["--first-player", "0"], "argument --first-player: must be a whole number of at least 1, not 0"),  # wrapped
        (["--time-limit", "nan"], ""),  # "the limit is nan s": valid moves reverted
        (["--time-limit", "inf"], ""),
    ],
)
def test_game_options_out_of_range_are_one_line_before_any_file_is_written(
    game_video: Path,
    tmp_path: Path,
    stand_in_reader: None,
    capsys: pytest.CaptureFixture[str],
    more: list[str],
    message: str,
) -> None:
    out = tmp_path / "analysis"
    try:
        status = main(analyze_command(game_video, out, *more))
    except SystemExit as refused:  # argparse's own one-line error
        status = refused.code
    assert status == 2 and message in one_line_error(capsys)
    assert not out.exists()


# -- Ctrl-C and SIGTERM ------------------------------------------------------------------------------------------


class SignallingReader:
    """The stand-in reader, which sends this process ``sent`` at its second reading (Ctrl-C, or a service manager
    stopping the program, during an analysis)."""

    def __init__(self, reader: Any, sent: signal.Signals) -> None:
        self.reader, self.sent, self.calls = reader, sent, 0

    def read(self, image: Any, region: object = None, on_table: Any = None) -> Any:
        self.calls += 1
        if self.calls == 2:
            os.kill(os.getpid(), self.sent)
        return self.reader.read(image, region, on_table=on_table)


@pytest.mark.parametrize(
    ("sent", "reason", "status"), [(signal.SIGINT, "Ctrl-C", 130), (signal.SIGTERM, "SIGTERM", 143)]
)
def test_ctrl_c_and_sigterm_end_the_analysis_with_everything_written(
    game_video: Path,
    tmp_path: Path,
    scenes: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    sent: signal.Signals,
    reason: str,
    status: int,
) -> None:
    import vision.game.pipeline

    signalling = SignallingReader(scenes.PixelReader(), sent)
    monkeypatch.setattr(vision.game.pipeline, "pipeline_reader", lambda models=None: signalling)
    out = tmp_path / "analysis"
    assert main(analyze_command(game_video, out, "--json")) == status
    captured = capsys.readouterr()
    summary = json.loads(captured.out)  # the summary is still printed
    assert summary["reason"] == reason and summary["video_s"] < 10.0  # stopped early in the 17 s game
    assert captured.err.count("\n") == 1 and f"analysis stopped by {reason} at 00:0" in captured.err
    events = read_log(out / "game-log.jsonl")
    assert events[-1]["event"] == "end" and events[-1]["reason"] == reason
    assert json.loads((out / "summary.json").read_text()) == {k: v for k, v in summary.items() if k != "report"}
    assert (out / "moves.json").is_file() and (out / "report.html").is_file()


# -- videos that cannot be read --------------------------------------------------------------------------------


def spoil_frames(video: Path, path: Path, keep: int) -> Path:
    """``video`` with every frame after the first ``keep`` starting with random bytes instead of its JPEG header,
    as a failing disk or a broken transfer leaves it: the decoder finds no picture there."""
    data = bytearray(video.read_bytes())
    starts = [i for i in range(len(data) - 2) if data[i : i + 3] == b"\xff\xd8\xff"]
    rng = np.random.default_rng(13)
    for start in starts[keep:]:
        data[start : start + 300] = rng.integers(0, 256, 300, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(data))
    return path


def test_a_mostly_undecodable_video_is_an_error_not_zero_moves(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    spoilt = spoil_frames(game_video, tmp_path / "spoilt.avi", keep=15)
    out = tmp_path / "analysis"
    assert main(analyze_command(spoilt, out, "--json")) == 2
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    damage = summary["damage"]
    assert damage["frames"] == 170 and damage["unreadable_frames"] > 85 and summary["moves"] == 0
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert f"error: video {str(spoilt)!r}: {damage['unreadable_frames']} of 170 frames could not be decoded" in (
        captured.err
    )
    assert "could not really be analysed" in captured.err
    assert read_log(out / "game-log.jsonl")[-1]["damage"] == damage  # the log says it too


def test_a_video_with_a_few_undecodable_frames_is_analysed_with_a_warning(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str]
) -> None:
    data = game_video.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[: len(data) * 9 // 10])  # the recording lost its last seconds
    assert main(analyze_command(cut, tmp_path / "out", "--json")) == 0
    captured = capsys.readouterr()
    damage = json.loads(captured.out)["damage"]
    assert 0 < damage["unreadable_frames"] <= 85
    assert captured.err.count("\n") == 1 and "warning: " in captured.err and "moves there may be missed" in captured.err


@pytest.mark.parametrize("decoder", ["opencv", "pyav"])
def test_either_decoder_gives_the_same_moves(
    game_video: Path, tmp_path: Path, stand_in_reader: None, capsys: pytest.CaptureFixture[str], decoder: str
) -> None:
    pytest.importorskip("av")  # the decode extra (in dev)
    assert main(analyze_command(game_video, tmp_path / decoder, "--json", "--decoder", decoder)) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["decode"]["decoder"] == decoder
    assert summary["moves"] == 3 and summary["verdicts"] == {"ok": 2, "revert": 1}  # as the library call finds
