"""What the scripted-scene tests of paused moves read from a feed's log lines (tests/vision/conftest.py's scenes)."""

from __future__ import annotations

from typing import Any

from referee.table import Table


def same(table_json: dict, text: str) -> bool:
    """A logged table has the layout written in ``text``."""
    return Table.from_json(table_json).same_layout(Table.parse(text))


def moves(events: list[dict]) -> list[dict]:
    return [e for e in events if e["event"] == "move"]


def summary(events: list[dict]) -> list[tuple]:
    """Each move's number, player, kind and verdict."""
    return [(m["number"], m["player"], m["kind"], m["ruling"]["verdict"]) for m in moves(events)]


def started(scenes: Any, table: str, **options: Any) -> Any:
    """A feed (``scenes.pipeline(scene, **options)``) whose pipeline has read ``table`` as the game's start."""
    scene = scenes.TableScene()
    scene.show(table)
    feed = scenes.SceneFeed(scenes.pipeline(scene, **options), scene)
    assert [e["event"] for e in feed.run(2.0)] == ["table"]
    return feed
