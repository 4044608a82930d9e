"""What the scripted-scene tests of paused moves read from a feed's log lines (tests/vision/conftest.py's scenes), and
a reader too slow for the camera."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from referee.profiles import get_profile
from referee.table import Table
from vision.game.moves import GameKeeper
from vision.runtime.reader import Reading


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


class TimedTurn:
    """A feed whose pipeline has read ``table``, both players opened, under ``profile`` with a limit of ``limit_s``
    agreed at the table; :meth:`until` runs it to a time relative to the limit of player 0's turn (fixed as the turn
    starts)."""

    def __init__(self, scenes: Any, profile: str, table: str, limit_s: float) -> None:
        scene = scenes.TableScene()
        scene.show(table)
        keeper = GameKeeper(replace(get_profile(profile), time_limit_s=limit_s), 2)
        keeper.opened = [True, True]
        self.scene, self.keeper = scene, keeper
        self.feed = scenes.SceneFeed(scenes.pipeline(scene, keeper=keeper), scene)
        assert [e["event"] for e in self.feed.run(1.0)] == ["table"]
        limit = keeper.time_limit_at_s
        assert limit is not None
        self.limit_s = limit

    def until(self, seconds_from_limit: float) -> None:
        self.feed.run(self.limit_s + seconds_from_limit - self.feed.time_s)


class SlowReader:
    """The pixel reader on a CPU too busy for it: each reading takes ``seconds`` of the camera's time, and a live
    session then looks at the newest frame (the feed jumps ahead). Set ``feed`` before the first reading."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self.inner, self.seconds, self.feed = inner, seconds, None

    def read(self, image: np.ndarray, region: object = None, on_table: Any = None) -> Reading:
        assert self.feed is not None
        self.feed.time_s += self.seconds
        return self.inner.read(image, region, on_table=on_table)
