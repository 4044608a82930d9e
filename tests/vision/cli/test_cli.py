"""The full command line: the rules commands plus synth and synth-game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.cli import PROG, subcommands
from tests.extras import TRAIN_EXTRA
from vision.cli import build_parser, main


def test_every_command_is_documented_with_an_example() -> None:
    for name, sub in subcommands(build_parser()).choices.items():
        assert sub.description, f"{name} has no description"
        assert "Example:" in (sub.epilog or ""), f"{name} --help has no example"


def test_the_main_help_says_of_each_command_what_its_own_help_says() -> None:
    commands = subcommands(build_parser())
    listed = {action.dest: action.help for action in commands._choices_actions}
    assert listed == {name: sub.description for name, sub in commands.choices.items()}
    assert "video" in listed["demo"] and "--rules" in listed["demo"]  # not the old sample-table demo


def test_every_profile_option_has_the_one_default_and_says_it() -> None:
    from referee.profiles import DEFAULT_PROFILE

    found = {}
    for name, sub in subcommands(build_parser()).choices.items():
        for option in (a for a in sub._actions if "--profile" in a.option_strings):
            found[name] = option.default
            assert f"default {DEFAULT_PROFILE}" in option.help or f"else {DEFAULT_PROFILE}" in option.help, name
    # every command that rules, or films a game to rule, defaults to it; score and tournament take a file's own
    # profile unless given (its default is theirs to say: the game's, else the default profile)
    assert {name for name, default in found.items() if default == DEFAULT_PROFILE} >= {
        "validate", "check", "live", "analyze", "synth-game"
    }  # fmt: skip
    assert {name for name, default in found.items() if default != DEFAULT_PROFILE} == {"score", "tournament"}


def test_the_full_command_line_leaves_the_rules_command_line_as_it_was() -> None:
    """No registry of the rules package is patched: its own parser is the same before and after the full one."""
    from referee import cli as rules_cli

    def shape() -> dict[str, list[str]]:
        commands = subcommands(rules_cli.build_parser()).choices
        return {name: sorted(o for a in sub._actions for o in a.option_strings) for name, sub in commands.items()}

    def suites() -> list[str]:
        (suite,) = [a for a in subcommands(rules_cli.build_parser()).choices["bench"]._actions if a.dest == "suite"]
        return list(suite.choices)

    before, before_suites = shape(), suites()
    full = subcommands(build_parser()).choices
    assert "--models" in {o for a in full["check"]._actions for o in a.option_strings}
    assert shape() == before and "--models" not in before["check"] and suites() == before_suites == ["rules"]


def test_a_command_listed_twice_is_refused() -> None:
    from referee import cli as rules_cli
    from vision.cli import all_commands

    commands = all_commands()
    with pytest.raises(ValueError, match="listed twice"):
        rules_cli.build_parser([*commands, commands[0]])


def test_every_help_example_parses() -> None:
    import shlex

    examples = []
    for name, sub in subcommands(build_parser()).choices.items():
        lines = (sub.epilog or "").split("Example:", 1)[-1].strip().splitlines()
        lines = [line.split("  #")[0].split(" > ")[0].strip() for line in lines]  # a comment, a redirection cut off
        examples += [(name, line) for line in lines if line.startswith(PROG)]
    assert len(examples) >= len(subcommands(build_parser()).choices)
    for name, example in examples:
        try:
            build_parser().parse_args(shlex.split(example)[1:])
        except SystemExit:
            pytest.fail(f"{name} --help: the example does not parse: {example}")


def test_synth_writes_a_yolo_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds"
    code = main(
        [
            "synth",
            "--out",
            str(out),
            "--images",
            "3",
            "--seed",
            "5",
            "--size",
            "320x240",
            "--workers",
            "1",
            "--preview",
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["images"] == 3 and summary["labelled_tiles"] > 0
    assert sorted(p.name for p in out.iterdir()) == [
        "data.yaml",
        "images",
        "labels",
        "meta",
        "preview.png",
        "recipe.yaml",
        "summary.json",
    ]
    assert len(list((out / "labels").glob("*.txt"))) == 3
    meta = json.loads((out / "meta" / "000000.json").read_text())
    assert {"seed", "camera", "lighting", "style", "tiles"} <= set(meta)


def test_synth_is_deterministic_whatever_the_workers(tmp_path: Path) -> None:
    args = ["synth", "--images", "4", "--seed", "9", "--size", "256x192", "--json"]
    assert main([*args, "--out", str(tmp_path / "a"), "--workers", "1"]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--workers", "2"]) == 0
    for name in ("000000", "000003"):
        assert (tmp_path / "a" / "labels" / f"{name}.txt").read_text() == (
            tmp_path / "b" / "labels" / f"{name}.txt"
        ).read_text()
        assert (tmp_path / "a" / "images" / f"{name}.jpg").read_bytes() == (
            tmp_path / "b" / "images" / f"{name}.jpg"
        ).read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["synth", "--out", "x", "--recipe", "no-such-recipe"], "cannot read recipe"),
        (["synth", "--out", "x", "--size", "big"], "WIDTHxHEIGHT"),
        (["synth-game", "--out", "x", "--violations", "2"], "between 0 and 1"),
    ],
)
def test_bad_synth_arguments_are_one_line(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


def test_unknown_recipe_parameter_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = tmp_path / "bad.yaml"
    recipe.write_text("camera:\n  tilt: [0, 10]\n")
    assert main(["synth", "--out", str(tmp_path / "o"), "--recipe", str(recipe), "--images", "1"]) == 2
    assert "unknown parameter(s) tilt for CameraParams" in capsys.readouterr().err


def test_synth_dataset_loads_in_ultralytics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ultralytics", reason=f"needs ultralytics, {TRAIN_EXTRA}")
    from ultralytics.data.dataset import YOLODataset
    from ultralytics.data.utils import check_det_dataset

    out = tmp_path / "ds"
    assert (
        main(
            [
                "synth",
                "--out",
                str(out),
                "--images",
                "2",
                "--seed",
                "1",
                "--size",
                "320x240",
                "--workers",
                "1",
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    data = check_det_dataset(str(out / "data.yaml"))
    assert data["nc"] == 53 and data["names"][0] == "black-1" and data["names"][52] == "joker"
    dataset = YOLODataset(img_path=data["train"], data=data, task="detect", imgsz=320, augment=False)
    labels = sum(len(item["cls"]) for item in dataset.labels)
    assert len(dataset) == 2 and labels == summary["labelled_tiles"]


@pytest.mark.parametrize(
    "command", [["live", "--source", "{video}", "--log", "{log}"], ["analyze", "{video}", "--out", "{out}"]]
)
def test_a_bad_calibration_file_is_named_before_the_source_is_opened(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calibration = tmp_path / "calibration.json"
    calibration.write_text("not json")
    places = {"video": str(tmp_path / "missing.mp4"), "log": str(tmp_path / "game.jsonl"), "out": str(tmp_path / "o")}
    argv = [part.format(**places) for part in command] + ["--players", "2", "--calibration", str(calibration)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "calibration.json: malformed JSON" in err and "missing.mp4" not in err and err.count("\n") == 1
    assert not (tmp_path / "game.jsonl").exists() and not (tmp_path / "o").exists()
