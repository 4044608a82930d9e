"""The recognition commands (detect, read, eval) and photos as inputs of check, with stand-in models."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee import cli as rules_cli
from vision.cli import build_parser, main

RED, GREEN, BLUE = (0, 0, 255), (0, 255, 0), (255, 0, 0)
TORN = (0, 255, 255)
"""Red and green at once: the stand-in classifier is torn between red-5 and red-6, an unsure tile (next to a blue
tile, whose colour at the crop's edge tips neither way)."""
TILE_BOXES = [(100, 100, 140, 160), (150, 100, 190, 160), (200, 100, 240, 160)]
"""Three tiles in a row of a 640x480 photo, 10 px apart (a crop then holds no neighbour)."""


def standin(make: Callable, make_output: Callable, imgsz: int) -> Path:
    """Stand-in models whose detector finds :data:`TILE_BOXES` in a 640x480 photo letterboxed to ``imgsz``."""
    scale = imgsz / 640
    pad = (imgsz - 480 * scale) / 2
    letterboxed = [
        ((x0 + x1) / 2 * scale, (y0 + y1) / 2 * scale + pad, (x1 - x0) * scale, (y1 - y0) * scale)
        for x0, y0, x1, y1 in TILE_BOXES
    ]
    return make(make_output(letterboxed, [0.9, 0.9, 0.9]), imgsz=imgsz)


@pytest.fixture
def models(standin_models: Callable, make_yolo_output: Callable) -> Path:
    """A 448 input: the 40-px tiles come out 28 px wide, big enough to be read once (see SMALL_TILE_PX)."""
    return standin(standin_models, make_yolo_output, 448)


def photo(path: Path, colours: list[tuple[int, int, int]]) -> Path:
    image = np.zeros((480, 640, 3), np.uint8)
    for (x0, y0, x1, y1), colour in zip(TILE_BOXES, colours, strict=True):
        image[y0:y1, x0:x1] = colour
    cv2.imwrite(str(path), image)
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("name", ["detect", "read", "eval"])
def test_recognition_commands_have_help_with_an_example(name: str) -> None:
    sub = rules_cli.subcommands(build_parser()).choices[name]
    assert sub.description and "Example:" in (sub.epilog or "")


def test_detect_json_follows_the_contract(tmp_path: Path, models: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = photo(tmp_path / "table.png", [RED, GREEN, BLUE])
    out = tmp_path / "boxes.png"
    code, stdout, _ = run(["detect", str(image), "--models", str(models), "--json", "--annotate", str(out)], capsys)
    assert code == 0 and out.is_file()
    (result,) = json.loads(stdout)["images"]
    assert (result["path"], result["width"], result["height"]) == (str(image), 640, 480)
    assert [t["label"] for t in result["tiles"]] == ["red-5", "red-6", "red-7"]
    assert result["tiles"][0]["box"] == [100.0, 100.0, 140.0, 160.0] and result["tiles"][0]["confidence"] > 0.99


def test_read_gives_the_table_with_uncertain_tiles_flagged(
    tmp_path: Path, models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = photo(tmp_path / "table.png", [RED, BLUE, TORN])
    code, stdout, _ = run(["read", str(image), "--models", str(models), "--json"], capsys)
    table = json.loads(stdout)
    assert code == 0 and [t["label"] for t in table["sets"][0]][:2] == ["red-5", "red-7"] and table["loose"] == []
    assert table["sets"][0][2]["uncertain"] is True and "uncertain" not in table["sets"][0][0]
    code, text, _ = run(["read", str(image), "--models", str(models)], capsys)
    assert code == 0 and text.startswith("set 1: red-5 red-7 ") and "? " in text.splitlines()[0] and "uncertain" in text


def test_check_reads_photos_and_uncertain_tiles_ask_for_review(
    tmp_path: Path, models: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUMMIKUB_MODELS", str(models))
    clear = photo(tmp_path / "before.jpg", [RED, GREEN, BLUE])
    shaky = photo(tmp_path / "after.png", [RED, BLUE, TORN])
    code, stdout, _ = run(["check", str(clear), str(clear), "--opened", "--json"], capsys)
    assert code == 0 and json.loads(stdout)["verdict"] == "ok"
    code, stdout, _ = run(["check", str(clear), str(shaky), "--opened", "--json"], capsys)
    assert code == 0 and json.loads(stdout)["verdict"] == "review"


def test_rules_only_check_still_refuses_photos(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_parser()  # the full command line built first changes nothing in the rules package's
    assert rules_cli.main(["check", "a.jpg", "b.jpg", "--opened"]) == 2
    assert "needs the tile recognition model" in capsys.readouterr().err


def test_eval_on_a_yolo_folder_writes_rows(tmp_path: Path, models: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    (data / "images").mkdir(parents=True)
    (data / "labels").mkdir()
    (data / "data.yaml").write_text("names: [red_5, red_6, red_7]\n")
    photo(data / "images" / "one.png", [RED, GREEN, BLUE])
    lines = [
        f"{k} {(x0 + x1) / 1280} {(y0 + y1) / 960} {(x1 - x0) / 640} {(y1 - y0) / 480}"
        for k, (x0, y0, x1, y1) in enumerate(TILE_BOXES)
    ]
    (data / "labels" / "one.txt").write_text("\n".join(lines))
    rows = tmp_path / "rows.csv"
    code, stdout, _ = run(["eval", "--data", str(data), "--models", str(models), "--csv", str(rows), "--json"], capsys)
    summary = json.loads(stdout)
    assert code == 0 and summary["end_to_end"]["f1"] == 1.0 and summary["perfect_images"] == 1.0
    assert len(rows.read_text().splitlines()) == 2


@pytest.mark.parametrize(
    ("command", "content", "message"),
    [
        ("detect", b"\x89PNG\r\n\x1a\n broken", "not a readable image"),  # corrupt image
        ("read", None, "no such image file"),  # missing image
        ("check", b"\xff\xd8\xff broken jpeg", "not a readable image"),  # corrupt photo given to check
    ],
)
def test_bad_photos_are_one_line_errors(
    command: str, content: bytes | None, message: str, tmp_path: Path, models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.png"
    if content is not None:
        path.write_bytes(content)
    args = {
        "detect": ["detect", str(path), "--models", str(models)],
        "read": ["read", str(path), "--models", str(models)],
        "check": ["check", str(path), str(path), "--opened"],
    }[command]
    code, _, err = run(args, capsys)
    assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.parametrize("command", ["detect", "read", "eval"])
def test_missing_models_are_one_line_errors(command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = photo(tmp_path / "table.png", [RED, GREEN, BLUE])
    target = ["--data", str(tmp_path)] if command == "eval" else [str(image)]
    code, _, err = run([command, *target, "--models", str(tmp_path / "nowhere")], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "tile-detector.onnx: model file not found" in err and "models/" in err


def test_eval_without_a_dataset_is_a_one_line_error(models: Path, tmp_path: Path, capsys) -> None:
    code, _, err = run(["eval", "--data", str(tmp_path / "none"), "--models", str(models)], capsys)
    assert code == 2 and "no images/ folder" in err and err.count("\n") == 1


def test_eval_with_a_match_iou_out_of_range_is_a_one_line_error(models: Path, tmp_path: Path, capsys) -> None:
    code, _, err = run(["eval", "--data", str(tmp_path), "--models", str(models), "--match-iou", "1.5"], capsys)
    assert code == 2 and "argument --match-iou: must be more than 0 and at most 1" in err and err.count("\n") == 1


def test_a_photo_of_small_tiles_is_read_again_at_tile_scale_unless_one_pass(
    tmp_path: Path, standin_models: Callable, make_yolo_output: Callable, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from vision.runtime.recognition import YoloOnnxDetector

    models = standin(standin_models, make_yolo_output, 320)  # the 40-px tiles come out 20 px wide: small
    image = photo(tmp_path / "table.png", [RED, GREEN, BLUE])
    regions = []
    detect_region = YoloOnnxDetector.detect_region
    monkeypatch.setattr(
        YoloOnnxDetector,
        "detect_region",
        lambda self, img, region: regions.append(region) or detect_region(self, img, region),
    )
    code, stdout, _ = run(["detect", str(image), "--models", str(models), "--json", "--one-pass"], capsys)
    assert code == 0 and regions == []
    assert [t["label"] for t in json.loads(stdout)["images"][0]["tiles"]] == ["red-5", "red-6", "red-7"]
    code, _, _ = run(["detect", str(image), "--models", str(models), "--json"], capsys)
    assert code == 0 and [r.width_px for r in regions] == [512]  # 640 px scaled: 40-px tiles to PHOTO_TILE_PX


def test_a_photo_with_a_blind_spot_is_said_on_stderr_and_counted_for_check(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.vision.runtime.test_glare import table
    from vision.cli.commands import _blind_spots
    from vision.runtime.detections import Detections
    from vision.runtime.reader import Reading

    glared, boxes = table(spot=(1200, 700, 110), tiles=[(300 + 60 * i, 300) for i in range(4)])
    reading = Reading(Detections.of_boxes(boxes[:3], [0.9] * 3), Detections.of_boxes(boxes[3:], [0.1]))
    tiles = _blind_spots("table.jpg", glared, reading)
    said = capsys.readouterr().err
    assert tiles > 5 and said.startswith("warning: table.jpg: glare washes out about") and "cannot be seen" in said
    plain, _ = table(tiles=[(300 + 60 * i, 300) for i in range(4)])
    assert _blind_spots("table.jpg", plain, reading) == 0.0 and capsys.readouterr().err == ""
