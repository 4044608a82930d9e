"""The full command line against hostile input: a scripted sweep of bad inputs over every subcommand.

Every case must end with the documented exit status (2 for bad input), exactly one line on standard error and no
traceback. The commands come from the parser, so a new command fails :func:`test_every_command_is_swept` until it
has cases here; every numeric option of every command gets nan, inf, -1... (:func:`test_bad_numbers_are_refused`).
Files are made in the test: degenerate and bomb images, corrupt videos, deep and malformed JSON/YAML, broken game
logs, outputs under a file (unwritable for any user, root included). Cases run in-process for speed; a few run the
real console script to prove that it behaves the same, native libraries' own stderr chatter included.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee import cli as rules_cli
from tests.cli_probes import ANY_INTEGER, BAD_NUMBERS, minimal_arguments, numeric_options
from vision.cli import DECODER_LIMITS, QUIET_NATIVE_LOGS, build_parser, main

GAME_LOG_PENDING = pytest.mark.xfail(strict=True, reason="issue 13: game-log part in progress")
CONSOLE_SCRIPT = Path(sys.executable).with_name(rules_cli.PROG)


def assert_one_line(code: int, err: str, statuses: frozenset[int] = frozenset({2})) -> None:
    """The contract of every failure: the documented status, exactly one line on stderr, no traceback."""
    assert code in statuses, f"exit status {code}, stderr: {err!r}"
    assert err.count("\n") == 1 and err.endswith("\n"), f"not one line: {err!r}"
    assert "Traceback" not in err and err.startswith(rules_cli.PROG), err


def crashing(monkeypatch: pytest.MonkeyPatch, name: str, run: rules_cli.Handler) -> None:
    """The command ``name`` of the full command line runs ``run`` instead."""
    import vision.cli

    commands = vision.cli.all_commands()
    patched = tuple(dataclasses.replace(c, run=run) if c.name == name else c for c in commands)
    assert patched != commands
    monkeypatch.setattr(vision.cli, "all_commands", lambda: patched)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """The command's exit status, standard output and standard error (usage errors exit from argparse)."""
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def crash_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Crash files go to this test's folder, not the machine's temporary folder."""
    folder = tmp_path / "crashes"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    monkeypatch.delenv(rules_cli.DEBUG_ENV, raising=False)
    return folder


# -- the hostile files ------------------------------------------------------------------------------------


def png_claiming(path: Path, width: int, height: int) -> None:
    """A PNG of a few hundred bytes whose header claims ``width`` x ``height`` pixels: a decompression bomb."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = zlib.compress(bytes(1000))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b""))


def write_video(path: Path, frames: int = 12, size: tuple[int, int] = (160, 120)) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10, size)
    rng = np.random.default_rng(0)
    for _ in range(frames):
        writer.write(rng.integers(0, 255, (size[1], size[0], 3), np.uint8))
    writer.release()


def damaged(data: bytes, start: int, step: int) -> bytes:
    """``data`` with every ``step``-th byte from ``start`` flipped: a file that opens but mostly does not decode."""
    broken = bytearray(data)
    for index in range(start, len(broken) - 16, step):
        broken[index] ^= 0x55
    return bytes(broken)


LOG_START = {"event": "start", "format": "rummikub-referee/game-log/1", "source": "x", "profile": "official",
             "players": 2, "first_player": 0, "mode": "live", "time_limit_s": None}  # fmt: skip
"""The first line of a game log, as ``live`` writes it."""


def log_lines(*events: dict) -> str:
    return "".join(json.dumps(event) + "\n" for event in events)


def eval_folder(root: Path, data_yaml: str | None, *, image: str = "ok", label: bytes = b"0 0.5 0.5 0.2 0.2\n") -> Path:
    """A YOLO folder with one image (``ok``: a 64x48 photo; ``bomb``: a PNG claiming 33000x33000 pixels)."""
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    if image == "bomb":
        png_claiming(root / "images" / "a.png", 33000, 33000)
    else:
        cv2.imwrite(str(root / "images" / "a.png"), np.full((48, 64, 3), 90, np.uint8))
    (root / "labels" / "a.txt").write_bytes(label)
    if data_yaml is not None:
        (root / "data.yaml").write_text(data_yaml)
    return root


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths of hostile inputs by name, for ``{name}`` in the cases' arguments."""
    root = tmp_path_factory.mktemp("hostile")
    paths: dict[str, Path] = {"missing": root / "no-such-file.json", "dir": root / "a-folder"}
    paths["dir"].mkdir()
    deep_json, deep_yaml = "[" * 100_000 + "]" * 100_000, "[" * 100_000 + "]" * 100_000
    texts = {
        "table.json": json.dumps({"sets": [["red-5", "red-6", "red-7"]]}),
        "empty.json": "",
        "deep.json": deep_json,
        "malformed.json": '{"sets": [',
        "deep.yaml": deep_yaml,
        "malformed.yaml": "a: [1, 2\nb: {",
        "list.yaml": "- 1\n- 2\n",
        "empty.yaml": "",
        "unknown-key.yaml": "images: 1\ncamera:\n  tilt: [0, 10]\n",
        "wrong-type.yaml": "images: 1\nsize: big\n",
        "nan-param.yaml": "images: 1\npool_probability: .nan\n",
        "bad-images.yaml": "images: -5\n",
        "bad-split.yaml": "images: 1\nsplit: nope\n",
        "no-kind.yaml": "data: {}\n",
        "bad-kind.yaml": "kind: rocket\n",
        "detector-data-5.yaml": "kind: detector\ndata: 5\n",
        "classifier-model-list.yaml": "kind: classifier\nmodel: [1, 2]\n",
        "log-empty.jsonl": "",
        "log-deep.jsonl": deep_json + "\n",
        "log-no-profile.jsonl": log_lines({k: v for k, v in LOG_START.items() if k != "profile"}),
        "log-move-no-after.jsonl": log_lines(
            LOG_START,
            {
                "event": "move",
                "number": 1,
                "player": 0,
                "time_s": 3.0,
                "ruling": {"verdict": "ok"},
                "before": {"sets": []},
            },
        ),
        "log-move-by-player-5.jsonl": log_lines(
            LOG_START,
            {
                "event": "move",
                "number": 1,
                "player": 5,
                "time_s": 3.0,
                "ruling": {"verdict": "ok"},
                "before": {"sets": []},
                "after": {"sets": []},
            },
        ),
        "log-nan-time.jsonl": log_lines(LOG_START) + '{"event": "table", "time_s": NaN, "table": {"sets": []}}\n',
        "log-deep-line.jsonl": log_lines(LOG_START) + deep_json + "\n",
    }
    for name, text in texts.items():
        paths[name] = root / name
        paths[name].write_text(text)
    rng = np.random.default_rng(13)
    for name in ("garbage.bin", "garbage.json", "garbage.yaml", "garbage.png", "garbage.jpg", "garbage.mp4",
                 "garbage.jsonl", "garbage.pt"):  # fmt: skip
        paths[name] = root / name
        paths[name].write_bytes(rng.integers(0, 256, 4096, np.uint8).tobytes())
    for name in ("empty.png", "empty.mp4"):
        paths[name] = root / name
        paths[name].write_bytes(b"")
    for width, height in ((5000, 1), (1, 5000), (3000, 2)):
        paths[f"strip-{width}x{height}"] = root / f"strip-{width}x{height}.png"
        cv2.imwrite(str(paths[f"strip-{width}x{height}"]), np.full((height, width, 3), 128, np.uint8))
    paths["big.hdr"] = root / "big.hdr"
    paths["big.hdr"].write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 12000 +X 12000\n" + bytes(4096))
    paths["bomb.png"] = root / "bomb.png"
    png_claiming(paths["bomb.png"], 33000, 33000)
    photo = rng.integers(0, 255, (240, 320, 3), np.uint8)
    paths["blank.png"] = root / "blank.png"
    cv2.imwrite(str(paths["blank.png"]), np.full((240, 320, 3), 60, np.uint8))
    png = cv2.imencode(".png", photo)[1].tobytes()
    paths["cut.png"] = root / "cut.png"
    paths["cut.png"].write_bytes(png[: len(png) // 2])
    paths["damaged.jpg"] = root / "damaged.jpg"
    paths["damaged.jpg"].write_bytes(damaged(cv2.imencode(".jpg", photo)[1].tobytes(), 1000, 50))
    paths["video.mp4"] = root / "video.mp4"
    write_video(paths["video.mp4"])
    paths["corrupt.mp4"] = root / "corrupt.mp4"
    video = paths["video.mp4"].read_bytes()
    frames_end = video.rfind(b"moov") - 8  # the index after the frames stays whole: the file opens
    paths["corrupt.mp4"].write_bytes(damaged(video[:frames_end], 200, 3) + video[frames_end:])
    paths["models-garbage"] = root / "models-garbage"
    paths["models-garbage"].mkdir()
    for model in ("tile-detector.onnx", "tile-classifier.onnx"):
        (paths["models-garbage"] / model).write_bytes(rng.integers(0, 256, 2048, np.uint8).tobytes())
    paths["full"] = root / "full-folder"
    paths["full"].mkdir()
    (paths["full"] / "keep-me.txt").write_text("not the analysis's")
    names = "names: [red_5, red_6]\n"
    paths["eval-no-images"] = root / "eval-no-images"
    paths["eval-no-images"].mkdir()
    paths["eval-malformed-yaml"] = eval_folder(root / "eval-malformed-yaml", "names: [red_5\n")
    paths["eval-deep-yaml"] = eval_folder(root / "eval-deep-yaml", deep_yaml)
    paths["eval-names-number"] = eval_folder(root / "eval-names-number", "names: 5\n")
    paths["eval-names-gaps"] = eval_folder(root / "eval-names-gaps", "names: {0: red_5, 7: red_6}\n")
    paths["eval-bomb"] = eval_folder(root / "eval-bomb", names, image="bomb")
    paths["eval-nan-label"] = eval_folder(root / "eval-nan-label", names, label=b"0 nan 0.5 0.2 0.2\n")
    paths["eval-negative-class"] = eval_folder(root / "eval-negative-class", names, label=b"-1 0.5 0.5 0.2 0.2\n")
    paths["eval-binary-label"] = eval_folder(root / "eval-binary-label", names, label=bytes(range(256)))
    paths["eval-ok"] = eval_folder(root / "eval-ok", names)
    paths["under-file"] = paths["table.json"] / "out"  # a path below a file: unwritable for root too
    return {name: str(path) for name, path in paths.items()}


# -- the sweep --------------------------------------------------------------------------------------------


def case(command: str, *args: str, marks: tuple = (), statuses: frozenset[int] = frozenset({2}), name: str = ""):
    """One hostile case: the command line (``{name}`` for a hostile file, ``{out}`` for a fresh output path)."""
    label = name or "-".join(a.strip("{}-").replace("/", "_")[:24] for a in args if a.startswith(("{", "--")))
    return pytest.param([command, *args], statuses, marks=marks, id=f"{command}-{label or 'args'}")


IMAGE_INPUTS = ("missing", "dir", "empty.png", "garbage.png", "garbage.jpg", "table.json", "strip-5000x1",
                "strip-1x5000", "strip-3000x2", "bomb.png", "cut.png", "damaged.jpg")  # fmt: skip
YAML_INPUTS = ("missing", "dir", "garbage.yaml", "malformed.yaml", "deep.yaml", "list.yaml")
VIDEO_INPUTS = ("missing", "dir", "empty.mp4", "garbage.mp4")
# fmt: off
CASES = [
    case("validate", "purple-5", "red-6", "red-7", name="unknown-colour"),
    case("validate", "", "red-6", "red-7", name="empty-label"),
    case("validate", "red-\u0663", "red-4", "red-5", name="arabic-indic-digit"),
    *[case("check", f"{{{name}}}", "{table.json}", "--opened") for name in ("missing", "dir", "empty.json",
      "garbage.json", "malformed.json", "deep.json")],
    *[case("check", "{table.json}", f"{{{name}}}", "--opened") for name in IMAGE_INPUTS if name != "table.json"],
    *[case("record", f"{{{name}}}", "pool-empty") for name in ("missing", "dir", "log-empty.jsonl", "garbage.jsonl",
      "log-no-profile.jsonl", "log-move-by-player-5.jsonl", "log-nan-time.jsonl", "log-deep-line.jsonl")],
    case("record", "{log-empty.jsonl}", "out", name="no-player"),
    case("record", "{log-empty.jsonl}", "out", "0", name="player-0"),
    case("score", "{deep.json}"),
    case("score", "{garbage.json}"),
    case("tournament", "{deep.json}"),
    case("tournament", "{garbage.json}"),
    case("profiles", "--bogus"),
    case("bench", "nope"),
    case("bench", "pipeline", "--games", "{missing}"),
    case("bench", "live", "--games", "{dir}"),
    case("demo", "--out", "{under-file}"),
    case("demo", "--out", "{table.json}", name="out-is-a-file"),
    *[case("synth", "--out", "{out}", "--recipe", f"{{{name}}}", "--images", "1") for name in YAML_INPUTS],
    *[case("synth", "--out", "{out}", "--recipe", f"{{{name}}}") for name in ("unknown-key.yaml", "wrong-type.yaml",
      "nan-param.yaml", "bad-images.yaml", "bad-split.yaml")],
    case("synth", "--out", "{under-file}", "--recipe", "{empty.yaml}", "--images", "1", "--size", "64x64"),
    case("synth-game", "--out", "{under-file}", "--players", "2", "--minutes", "0.01", "--size", "64x64"),
    case("synth-game", "--out", "{out}", "--size", "10x10"),
    case("synth-game", "--out", "{out}", "--players", "5"),  # the default profile is played by 2 to 4
    case("synth-game", "--out", "{out}", "--players", "7", "--profile", "official-6p"),
    *[case("detect", f"{{{name}}}") for name in IMAGE_INPUTS],
    case("detect", "{blank.png}", "--annotate", "{out}.xyz", name="annotate-unknown-suffix"),
    case("detect", "{blank.png}", "--annotate", "{under-file}.png", name="annotate-under-a-file"),
    case("detect", "{blank.png}", "{blank.png}", "--annotate", "{out}.png", name="annotate-two-images"),
    case("detect", "{blank.png}", "--models", "{missing}"),
    case("detect", "{blank.png}", "--models", "{models-garbage}"),
    *[case("read", f"{{{name}}}") for name in ("missing", "strip-5000x1", "bomb.png", "cut.png")],
    case("read", "{blank.png}", "--annotate", "{out}.xyz", "--models", "{missing}", name="annotate-before-models"),
    case("read", "{blank.png}", "--models", "{models-garbage}"),
    *[case("eval", "--data", f"{{{name}}}") for name in ("missing", "table.json", "eval-no-images",
      "eval-malformed-yaml", "eval-deep-yaml", "eval-names-number", "eval-names-gaps", "eval-bomb", "eval-nan-label",
      "eval-negative-class", "eval-binary-label")],
    case("eval", "--data", "{eval-ok}", "--csv", "{under-file}.csv"),
    *[case("enrol", f"{{{name}}}", "--out", "{out}") for name in IMAGE_INPUTS],
    case("enrol", "{blank.png}", name="no-out"),
    case("enrol", "{blank.png}", "--out", "{table.json}", name="out-is-a-file"),
    case("enrol", "{blank.png}", "--out", "{out}", name="no-tiles"),
    case("enrol", "{blank.png}", "--out", "{out}", "--models", "{models-garbage}"),
    *[case("train", "--recipe", f"{{{name}}}") for name in (*YAML_INPUTS, "empty.yaml", "no-kind.yaml",
      "bad-kind.yaml", "detector-data-5.yaml", "classifier-model-list.yaml")],
    *[case("export", "--weights", f"{{{name}}}", "--out", "{out}.onnx") for name in ("missing", "dir", "garbage.pt")],
    case("quantize", "--model", "{missing}", "--out", "{out}.onnx"),
    case("quantize", "--model", "{garbage.bin}", "--out", "{out}.onnx", "--photos", "0", "--game", "{missing}"),
    case("quantize", "--model", "{garbage.bin}", "--out", "{garbage.bin}", name="out-overwrites-model"),
    *[case("analyze", f"{{{name}}}", "--out", "{out}", "--quiet") for name in VIDEO_INPUTS],
    case("analyze", "{video.mp4}", "--out", "{under-file}", "--quiet"),
    case("analyze", "{video.mp4}", "--out", "{full}", "--quiet", name="out-not-empty"),
    case("analyze", "{video.mp4}", "--out", "{out}", "--quiet", "--players", "6", name="players-over-profile"),
    case("analyze", "{video.mp4}", "--out", "{out}", "--models", "{models-garbage}", "--quiet"),
    *[case("analyze", "{video.mp4}", "--out", "{out}", "--quiet", "--calibration", f"{{{name}}}")
      for name in ("missing", "deep.json", "garbage.json", "malformed.json", "table.json")],
    case("analyze", "{corrupt.mp4}", "--out", "{out}", "--quiet", statuses=frozenset({0, 2}), name="mostly-corrupt"),
    *[case("batch", f"{{{name}}}", "--out", "{out}") for name in (*YAML_INPUTS, "table.json", "garbage.bin")],
    case("batch", "{list.yaml}", "--out", "{out}", "--provider", "cuda", name="no-cuda"),
    *[case("live", "--source", f"{{{name}}}", "--log", "{out}.jsonl", "--fast") for name in VIDEO_INPUTS],
    case("live", "--source", "{video.mp4}", "--log", "{under-file}.jsonl", "--fast"),
    case("live", "--source", "{video.mp4}", "--log", "{out}.jsonl", "--players", "5", name="players-over-profile"),
    case("live", "--source", "{video.mp4}", "--log", "{out}.jsonl", "--fast", "--calibration", "{deep.json}"),
    case("live", "--source", "{video.mp4}", "--log", "{out}.jsonl", "--fast", "--models", "{models-garbage}"),
    case("live", "--source", "{video.mp4}", "--log", "{out}.jsonl", "--serve", "999.1.2.3:99999"),
    *[case("live", "--source", "{video.mp4}", "--resume", f"{{{name}}}", "--fast") for name in ("missing", "dir",
      "log-empty.jsonl", "garbage.jsonl", "log-no-profile.jsonl", "log-move-no-after.jsonl",
      "log-move-by-player-5.jsonl", "log-nan-time.jsonl", "log-deep.jsonl", "log-deep-line.jsonl")],
    case("markers", "--out", "{under-file}.pdf"),
    case("markers", "--out", "{dir}"),
    case("markers", "--out", "{out}.pdf", "--size-mm", "5"),
    *[case("calibrate", f"{{{name}}}") for name in ("missing", "garbage.png", "strip-3000x2", "bomb.png")],
    case("calibrate", "{blank.png}", "--method", "markers", name="no-markers"),
    case("calibrate", "{blank.png}", "--method", "corners", "--corners", "0,0", "0,0", "0,0", "0,0"),
    case("calibrate", "{blank.png}", "--method", "frame", "--out", "{under-file}.json"),
    *[case("draw", f"{{{name}}}", "--players", "4") for name in ("garbage.png", "strip-3000x2", "bomb.png")],
    case("draw", "{blank.png}", "--players", "6", "--profile", "official", name="more-players-than-the-profile"),
]
# fmt: on


def resolve(argv: list[str], files: dict[str, str], out: Path) -> list[str]:
    """The arguments with ``{name}`` replaced by the hostile file's path, ``{out}`` by a fresh output path."""
    paths = {**files, "out": str(out)}
    return [re.sub(r"\{([^{}]+)\}", lambda found: paths[found.group(1)], arg) for arg in argv]


@pytest.mark.parametrize(("argv", "statuses"), CASES)
def test_hostile_input_is_one_line(
    argv: list[str], statuses: frozenset[int], hostile: dict[str, str], tmp_path: Path, crash_dir: Path, capsys
) -> None:
    code, _, err = run(resolve(argv, hostile, tmp_path / "out"), capsys)
    assert_one_line(code, err, statuses)
    saved = list(crash_dir.iterdir())
    assert not saved, f"only the boundary's safety net caught it: the file's reader should say what is wrong ({err})"


def test_every_command_is_swept() -> None:
    swept = {param.values[0][0] for param in CASES}
    assert set(rules_cli.subcommands(build_parser()).choices) == swept


# -- numeric options, listed from the parser ------------------------------------------------------------


def numeric_cases() -> list:
    cases = []
    for command, option, _ in numeric_options(build_parser()):
        for bad in BAD_NUMBERS:
            if option in ANY_INTEGER and bad == "-1":
                continue
            cases.append(pytest.param(command, option, bad, id=f"{command}{option}={bad}"))
    return cases


@pytest.mark.parametrize(("command", "option", "bad"), numeric_cases())
def test_bad_numbers_are_refused(command: str, option: str, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Parsing alone: a bad number wrongly accepted runs nothing, it only fails the test."""
    parser = build_parser()
    sub = rules_cli.subcommands(parser).choices[command]
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([command, *minimal_arguments(sub), f"{option}={bad}"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}" in err
    assert_one_line(2, err)


@pytest.mark.parametrize(
    ("command", "option"), [("check", "--elapsed"), ("check", "--time-limit"), ("analyze", "--time-limit"),
                            ("live", "--time-limit")],
)  # fmt: skip
@pytest.mark.parametrize("absurd", ["86401", "1e7", "-0.5"])
def test_times_over_a_day_or_negative_are_refused(
    command: str, option: str, absurd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = build_parser()
    sub = rules_cli.subcommands(parser).choices[command]
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([command, *minimal_arguments(sub), f"{option}={absurd}"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}" in err
    assert_one_line(2, err)


def test_the_numeric_sweep_finds_every_kind_of_number() -> None:
    found = {(command, option) for command, option, _ in numeric_options(build_parser())}
    assert {("synth-game", "--minutes"), ("synth", "--images"), ("bench", "--repeats"), ("eval", "--match-iou"),
            ("markers", "--size-mm"), ("calibrate", "--margin"), ("export", "--imgsz"), ("check", "--elapsed"),
            ("synth-game", "--violations")} <= found  # fmt: skip


# -- the boundary with the vision libraries --------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        lambda: __import__("yaml").safe_load("a: [1"),  # yaml.YAMLError: not a ValueError
        lambda: cv2.resize(np.zeros((1, 5000, 3), np.uint8), (0, 0), fx=0.0, fy=0.0),  # cv2.error
        lambda: __import__("PIL.Image").Image._decompression_bomb_check((40000, 40000)),  # DecompressionBombError
    ],
    ids=["yaml", "cv2", "pil-bomb"],
)
def test_library_input_errors_no_reader_caught_are_exit_2(error, monkeypatch, capsys) -> None:
    """The safety net: a library's input error that escaped every reader is still one line and exit status 2."""

    def raising(args: argparse.Namespace) -> int:
        error()
        return 0

    crashing(monkeypatch, "profiles", raising)
    code, _, err = run(["profiles"], capsys)
    assert_one_line(code, err)
    assert "traceback in" in err


@pytest.mark.parametrize(("error", "status"), [(KeyboardInterrupt(), 130), (ImportError("no module named cv2"), 1)])
def test_building_the_parser_is_inside_the_boundary(
    error: BaseException, status: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while the commands' modules import, or a broken install: no traceback either."""
    import vision.cli

    def broken() -> argparse.ArgumentParser:
        raise error

    monkeypatch.setattr(vision.cli, "build_parser", broken)
    code, _, err = run(["profiles"], capsys)
    assert code == status and "Traceback" not in err
    if status == 1:
        assert_one_line(code, err, frozenset({1}))


# -- the real console script ------------------------------------------------------------------------------

SUBPROCESS_CASES = [
    case("check", "{deep.json}", "{table.json}", "--opened"),
    case("read", "{strip-5000x1}"),
    case("detect", "{bomb.png}"),
    case("read", "{cut.png}"),  # libpng complains on stderr by itself
    case("read", "{damaged.jpg}"),  # so does libjpeg
    case("analyze", "{garbage.mp4}", "--out", "{out}"),  # and FFmpeg
    case("synth", "--out", "{out}", "--recipe", "{deep.yaml}"),
    case("synth-game", "--out", "{out}", "--minutes", "-1"),
    case("read", "{big.hdr}"),  # a format PIL cannot read the header of: OpenCV's own cap, set by the CLI
]
NATIVE_SETTINGS = (*QUIET_NATIVE_LOGS, *DECODER_LIMITS)
"""Set by the CLI itself (and so in this process once an in-process case ran): never passed down to the script."""


@pytest.mark.skipif(not CONSOLE_SCRIPT.is_file(), reason="the console script is not installed beside this Python")
@pytest.mark.parametrize(("argv", "statuses"), SUBPROCESS_CASES)
def test_the_console_script_behaves_the_same(
    argv: list[str], statuses: frozenset[int], hostile: dict[str, str], tmp_path: Path
) -> None:
    unset = (rules_cli.DEBUG_ENV, *NATIVE_SETTINGS)
    env = {k: v for k, v in os.environ.items() if k not in unset} | {"TMPDIR": str(tmp_path)}
    result = subprocess.run(
        [str(CONSOLE_SCRIPT), *resolve(argv, hostile, tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert_one_line(result.returncode, result.stderr, statuses)


@pytest.mark.skipif(not CONSOLE_SCRIPT.is_file(), reason="the console script is not installed beside this Python")
def test_a_bug_in_the_console_script_is_one_line_and_a_crash_file(tmp_path: Path) -> None:
    code = (
        "import sys, dataclasses; from vision import cli as full\n"
        "commands = full.all_commands()\n"
        "full.all_commands = lambda: tuple(dataclasses.replace(c, run=lambda args: 1 / 0) for c in commands)\n"
        "sys.exit(full.main(['profiles']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != rules_cli.DEBUG_ENV} | {"TMPDIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert_one_line(result.returncode, result.stderr, frozenset({1}))
    (crash,) = tmp_path.glob(f"{rules_cli.PROG}-crash-*.txt")
    assert "internal error (ZeroDivisionError" in result.stderr and str(crash) in result.stderr
    assert "Traceback" in crash.read_text()


# -- fuzzed recipes through the boundary -------------------------------------------------------------------

YAML_SCALARS = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats() | st.text(max_size=6)
YAML_VALUES = st.recursive(
    YAML_SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
RECIPE_KEYS = ("size", "split", "content", "layout", "camera", "pool_probability", "min_face_px", "style_pool",
               "fonts", "images", "label_format", "tiles", "copies", "tile_scale", "tilt_deg", "nope")  # fmt: skip
RECIPES = st.dictionaries(st.sampled_from(RECIPE_KEYS), YAML_VALUES, max_size=4) | YAML_VALUES


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recipe=RECIPES)
def test_fuzzed_synth_recipes_render_or_are_refused_in_one_line(
    recipe: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recipe renders (status 0) or is refused in one line (2); never a bug (1), never a traceback."""
    import yaml

    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / "recipe.yaml").write_text(yaml.safe_dump(recipe))
    argv = ["synth", "--out", str(folder / "out"), "--recipe", str(folder / "recipe.yaml"), "--images", "1",
            "--size", "64x64", "--workers", "1", "--json"]  # fmt: skip
    code, _, err = run(argv, capsys)
    if code:
        assert_one_line(code, err)
    shutil.rmtree(folder)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(recipe=st.dictionaries(st.sampled_from(("kind", "data", "model", "train", "augment", "evaluate")),
                              YAML_VALUES, max_size=4) | YAML_VALUES)  # fmt: skip
def test_fuzzed_training_recipes_are_refused_before_training(
    recipe: object, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fuzzed recipe that reaches training is stopped there (no training in a test): the rest must be refused
    in one line before any slow step."""
    import yaml

    from vision.train import classifier, detector

    class Reached(Exception):
        pass

    def reached(*args: object, **kwargs: object) -> dict:
        raise Reached

    monkeypatch.setattr(detector, "train_detector", reached)
    monkeypatch.setattr(classifier, "train_classifier", reached)
    path = Path(tempfile.mkdtemp(dir=tmp_path)) / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    try:
        code, _, err = run(["train", "--recipe", str(path), "--out", str(path.parent / "run")], capsys)
    except Reached:
        assert isinstance(recipe, dict) and recipe.get("kind") in ("detector", "classifier")
        return
    assert_one_line(code, err)
