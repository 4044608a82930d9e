"""YAML files users hand the commands: every way one is unreadable is one YamlFileError naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.runtime.yamlfile import YamlFileError, read_yaml, require_mapping


def test_reads_yaml(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("names: [red_5, red_6]\n")
    assert read_yaml(tmp_path / "a.yaml", "dataset file") == {"names": ["red_5", "red_6"]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read recipe '.*a.yaml': no such file"),
        (b"\xff\xfe\x00 binary", "not a YAML text file \\(not UTF-8 at byte 0\\)"),
        (b"a: [1, 2\nb: {", "malformed YAML \\(expected ',' or '\\]', but got ':' at line 2 column 2\\)"),
        (b"a: *undefined", "malformed YAML \\(found undefined alias 'undefined' at line 1 column 4\\)"),
        (b"[" * 100_000, "YAML nested too deeply to be a recipe"),  # was a RecursionError traceback
    ],
)
def test_unreadable_files_are_one_line(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "a.yaml"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(YamlFileError, match=message) as error:
        read_yaml(path, "recipe")
    assert "\n" not in str(error.value)


def test_a_folder_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(YamlFileError, match="a folder, not a file"):
        read_yaml(tmp_path, "recipe")


@pytest.mark.parametrize(
    ("data", "says"),
    [([1, 2], "not a list"), ("text", "not a single text"), (5, "not a number"), ({1: 2}, "keys that are not names")],
)
def test_a_mapping_is_required(data: object, says: str, tmp_path: Path) -> None:
    with pytest.raises(YamlFileError, match=says):
        require_mapping(data, tmp_path / "a.yaml", "recipe")


def test_an_empty_file_is_an_empty_mapping(tmp_path: Path) -> None:
    assert require_mapping(None, tmp_path / "a.yaml", "recipe") == {}
