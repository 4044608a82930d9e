"""The README's commands exist: every ``rummikub-referee`` line in its shell blocks parses with the real command line
(a command, an option or a choice that is not there fails here), and "Use it" says how to reach the command."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from vision.cli import build_parser

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def readme_commands() -> list[str]:
    """Every ``rummikub-referee`` invocation in the README's ``sh`` blocks (also after ``&&``), comments cut off."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.splitlines():
            for part in line.split("  #")[0].split("&&"):
                words = shlex.split(part)
                if words and Path(words[0]).name == "rummikub-referee":
                    found.append(shlex.join(["rummikub-referee", *words[1:]]))
    return found


def parses(command: str) -> bool:
    try:
        build_parser().parse_args(shlex.split(command)[1:])
    except SystemExit:
        return False
    return True


COMMANDS = readme_commands()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_readme_command_parses(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert parses(command), capsys.readouterr().err


def test_the_readme_commands_are_found_and_a_wrong_one_would_fail() -> None:
    assert len(COMMANDS) >= 25 and any(c.startswith("rummikub-referee demo") for c in COMMANDS)
    assert not parses("rummikub-referee analyze game.mp4 --out a --no-such-option")
    assert not parses("rummikub-referee no-such-command")
    assert not parses("rummikub-referee check before.json after.json --opened --profile no-such-profile")


def test_use_it_says_to_activate_the_environment() -> None:
    use_it = README.split("## Use it", 1)[1].split("\n## ", 1)[0]
    first_block = use_it.index("```sh")
    assert "source .venv/bin/activate" in use_it[:first_block]
