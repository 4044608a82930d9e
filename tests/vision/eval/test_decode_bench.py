"""``bench decode`` (vision/eval/decode_bench.py): plain decoding and both decoders' analyses of one tiny synthetic game
(0.2 min, 480x270, 12 fps) and of its H.264 copy, with the shipped models. No timing is checked here: the numbers
are whatever this machine gives, and they must be consistent with each other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision.cli import main
from vision.eval.decode_bench import DECODERS, format_decode_benchmark, h264_copy

av = pytest.importorskip("av")


def test_the_h264_copy_has_a_keyframe_each_second(game: Path, tmp_path: Path) -> None:
    copy = h264_copy(game / "game.mp4", tmp_path / "copy.mp4")
    with av.open(str(copy)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264" and (stream.width, stream.height) == (480, 270)
        keys = [i for i, p in enumerate(p for p in container.demux(stream) if p.size) if p.is_keyframe]
        container.seek(0)
        kinds = {int(frame.pict_type) for frame in container.decode(stream)}
    assert keys[:3] == [0, 12, 24]
    assert kinds == {1, 2, 3}  # I, P and B frames: x264's own choice, not the source's frame types
    assert h264_copy(game / "game.mp4", tmp_path / "copy.mp4") == copy  # made once


def test_decoding_and_both_analyses_in_one_run(
    game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the suite writes its analyses and copies in cache/bench-decode
    assert main(["bench", "decode", "--games", str(game), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (tmp_path / "cache" / "bench-decode" / "h264" / "g5.mp4").is_file()
    assert [row["video"] for row in result["rows"]] == ["mp4", "h264"]
    for row in result["rows"]:
        frames = row["frames"]
        assert frames > 100 and row["video_s"] == pytest.approx(frames / 12, abs=0.01)
        assert row["decode"]["pyav"]["frames"] == frames  # both decoders see every frame
        opencv = row["decode"]["opencv"]
        assert opencv["share_of_decode_wall"] == 1.0 and opencv["share_of_decode_cpu"] == 1.0
        assert list(row["analyze"]) == [*DECODERS, "pyav-dense", "pyav-reread"]  # the command adds both baselines
        for analysis in row["analyze"].values():
            assert analysis["true_moves"] > 0 and 0 <= analysis["moves_found"] <= analysis["true_moves"]
            assert analysis["x_real_time_wall"] == pytest.approx(row["video_s"] / analysis["wall_s"], rel=0.01)
            assert analysis["share_of_decode_wall"] == pytest.approx(opencv["wall_s"] / analysis["wall_s"], abs=0.002)
        stats = row["analyze"]["pyav"]["decode"]
        assert stats["decoder"] == "pyav" and stats["delivered"] == row["analyze"]["pyav"]["samples"]
        assert stats["decoded"] <= frames and stats["packets"] == frames
        assert row["analyze"]["opencv"]["decode"] == {"decoder": "opencv"}
        expected = row["analyze"]["opencv"]["moves"] == row["analyze"]["pyav"]["moves"]
        assert row["same_moves"] is expected and isinstance(row["same_uncertain_tiles"], bool)
    assert result["calibration"] == "auto"  # the user's path: the play area found, not handed over
    text = format_decode_benchmark(result)
    assert text.count("decode opencv") == 2 and text.count("analyze pyav ") == 2 and "share" in text
    assert text.count("analyze pyav-reread") == 2 and "play area: found" in text


def test_the_baseline_makes_every_reading_in_the_same_run(game: Path, tmp_path: Path) -> None:
    from vision.eval.decode_bench import run_decode_benchmark

    result = run_decode_benchmark([game], tmp_path, baseline=True)
    [row] = result["rows"]
    assert list(row["analyze"]) == [*DECODERS, "pyav-dense", "pyav-reread"]
    dense = row["analyze"]["pyav-dense"]
    assert dense["decode"]["hand_probes"] == 0  # every busy sample decoded: no keyframes only under hands
    reread, pyav = row["analyze"]["pyav-reread"], row["analyze"]["pyav"]
    assert reread["readings_reused"] == 0 and reread["verifies_skipped"] == 0  # every reading made
    assert reread["decode"]["decoder"] == "pyav" and reread["true_moves"] == pyav["true_moves"]
    assert reread["share_of_decode_cpu"] == pytest.approx(row["decode"]["opencv"]["cpu_s"] / reread["cpu_s"], abs=0.01)
    expected = len({str(a["moves"]) for a in row["analyze"].values()}) == 1
    assert row["same_moves"] is expected
    text = format_decode_benchmark(result)
    assert "analyze pyav-reread" in text and "not made again" in text


def test_two_sets_listed_the_other_way_round_are_the_same_move() -> None:
    from referee.table import Table
    from vision.eval.decode_bench import _move_key, _uncertain

    def move(*sets: list[str], verdict: str = "ok") -> dict[str, object]:
        after = Table.of(sets).to_json()
        return {
            "player": 1,
            "before": Table().to_json(),
            "after": after,
            "ruling": {"verdict": verdict, "violations": []},
        }

    run, group = ["red-7", "red-8", "red-9"], ["black-1", "blue-1", "orange-1"]
    assert _move_key(move(run, group)) == _move_key(move(group, run))  # where two sets lie swapped between frames
    laid = [run[0], {"label": "red-8", "uncertain": True}, run[2]]  # its middle tile doubted
    one = {"before": {"sets": [], "loose": []}, "after": {"sets": [laid, group], "loose": []}}
    other = {**one, "after": {"sets": [group, laid], "loose": []}}
    assert _uncertain(one) == _uncertain(other) == [[], ["[red-7 red-8 red-9] red-8"]]  # named by its set, not place
    assert _move_key(move(run, group)) != _move_key(move(["red-9", "red-8", "red-7"], group))  # a set's tile order
    assert _move_key(move(run, group)) != _move_key(move(run, group, verdict="review"))
