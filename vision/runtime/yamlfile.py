"""Reading the YAML files users hand the commands (synthesis and training recipes, a dataset's ``data.yaml``).

Every way such a file can be unreadable (missing, a folder, not text, malformed, nested too deeply for the parser)
is one :class:`YamlFileError` naming the file and the problem, never a parser's traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class YamlFileError(ValueError):
    """A YAML file that cannot be read; the message names the file and what is wrong with it."""


def read_yaml(path: Path, what: str) -> Any:
    """The data in a YAML file; ``what`` names the file's role in messages ("recipe", "dataset file")."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YamlFileError(f"cannot read {what} {str(path)!r}: no such file") from None
    except IsADirectoryError:
        raise YamlFileError(f"cannot read {what} {str(path)!r}: a folder, not a file") from None
    except UnicodeDecodeError as error:
        raise YamlFileError(f"{path}: not a YAML text file (not UTF-8 at byte {error.start})") from None
    except OSError as error:
        raise YamlFileError(f"cannot read {what} {str(path)!r}: {error.strerror or error}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise YamlFileError(f"{path}: malformed YAML ({_yaml_problem(error)})") from None
    except RecursionError:  # the parser recurses once per level of nesting
        raise YamlFileError(f"{path}: YAML nested too deeply to be a {what}") from None


def _yaml_problem(error: Exception) -> str:
    """The parser's problem and where, on one line (its message spans several, quoting the file)."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    return f"{problem} at line {mark.line + 1} column {mark.column + 1}" if mark is not None else str(problem)


def require_mapping(data: Any, path: Path, what: str) -> dict[str, Any]:
    """``data`` if it is a mapping with text keys (an empty file reads as an empty one), else one line saying so."""
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(key, str) for key in data):
        raise YamlFileError(f"{path}: a {what} is a mapping of names to values, not {_kind(data)}")
    return data


def _kind(data: Any) -> str:
    if isinstance(data, dict):
        return "a mapping with keys that are not names"
    return {list: "a list", str: "a single text", int: "a number", float: "a number", bool: "true/false"}.get(
        type(data), f"a {type(data).__name__}"
    )
