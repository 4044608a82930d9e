"""A lamp's hot spot that washes part of the table out: moves whose hands reach it are ruled REVIEW, and it is said.

Scripted scenes (``scenes``: frames drawn with cv2, read back from the pixels): ``TableScene.glare`` paints a white
disk over the cloth and the tiles under it, as a hot spot leaves tiles white on white; an arm over it shows.
"""

from __future__ import annotations

from typing import Any

from referee.events import describe_line
from referee.table import Table
from vision.game.pipeline import BLIND_SPOT, UNSEEN_IN_GLARE

START = "[black-5 blue-5 orange-5]"
OPENED = f"{START} [red-10 red-11 red-12]"
"""Player 0 (bottom) opens with 33 points: the second set is laid on the row under the first."""
AWAY = (400, 290, 40)
"""A hot spot in the bottom-right corner, away from the sets' rows and from an arm reaching in from the bottom."""
OVER_ROW_TWO = (100, 116, 42)
"""A hot spot over the row the second set is laid on."""


def started(scenes: Any, glare: tuple[int, int, int]) -> Any:
    """A feed whose pipeline has read the starting table, then a hot spot lit (read once still)."""
    scene = scenes.TableScene()
    scene.show(START)
    feed = scenes.SceneFeed(scenes.pipeline(scene), scene)
    assert [e["event"] for e in feed.run(2.0)] == ["table"]
    scene.glare = glare
    feed.run(2.0)
    return feed


def rulings(events: list[dict]) -> list[tuple[str, str, list[str]]]:
    return [(e["kind"], e["ruling"]["verdict"], e["ruling"]["notes"]) for e in events if e["event"] == "move"]


def laid_then_next_turn(feed: Any, side: str) -> tuple[str, str, list[str]]:
    """The second set laid from ``side`` (the arm as set), then the next player's hands from the top (which rule a
    held draw): the first ruling."""
    feed.hands(side, OPENED)
    feed.run(3.0)
    feed.scene.arm_at, feed.scene.arm_reach = 0.5, 0.4
    feed.hands("top")
    feed.run(3.0)
    return rulings(feed.events)[0]


def test_a_move_whose_hands_reach_the_hot_spot_is_ruled_review(scenes: Any) -> None:
    feed = started(scenes, AWAY)
    scene = feed.scene
    scene.arm_at, scene.arm_reach = 290 / 360, 0.25  # from the right, the hand over the hot spot
    feed.hands("right", OPENED)
    feed.run(3.0)
    [(kind, verdict, notes)] = rulings(feed.events)
    assert (kind, verdict) == ("play", "review") and BLIND_SPOT in notes
    [warning] = feed.of_kind("glare")
    assert warning["tiles"] >= 5 and abs(warning["at_px"][0] - 400) < 5 and abs(warning["at_px"][1] - 290) < 5
    assert describe_line(warning).startswith(f"A glare washes out part of the table (about {round(warning['tiles'])} ")


def test_a_move_away_from_the_hot_spot_is_ruled_as_usual(scenes: Any) -> None:
    feed = started(scenes, AWAY)
    feed.hands("bottom", OPENED)
    feed.run(3.0)
    assert rulings(feed.events) == [("play", "ok", [])]
    assert len(feed.of_kind("glare")) == 1  # said once, though every settle sees it


def test_tiles_laid_in_the_hot_spot_are_not_taken_for_a_draw(scenes: Any) -> None:
    """The set laid under the hot spot is white on white: the table reads as before, as if the player drew. The
    hands reached the spot: a person checks (before, the draw was ruled OK with three tiles on the table unseen)."""
    feed = started(scenes, OVER_ROW_TWO)
    scene = feed.scene
    scene.arm_at, scene.arm_reach = 116 / 360, 0.3  # from the left, over the hot spot
    kind, verdict, notes = laid_then_next_turn(feed, "left")
    assert (kind, verdict) == ("draw", "review") and BLIND_SPOT in notes
    assert feed.pipeline.latest["table"].same_layout(Table.parse(START))


def test_the_warning_comes_again_when_the_hot_spot_comes_back(scenes: Any) -> None:
    feed = started(scenes, AWAY)
    assert len(feed.of_kind("glare")) == 1
    feed.scene.glare = None
    feed.hands("bottom", OPENED)
    feed.run(3.0)
    assert len(feed.of_kind("glare")) == 1
    feed.scene.glare = AWAY
    feed.run(3.0)
    assert len(feed.of_kind("glare")) == 2


def test_tiles_washed_white_in_a_hot_spot_short_of_saturation_make_the_move_review(scenes: Any) -> None:
    """A pink hot spot (not saturated: no blind spot) where the set laid comes out white on
    white, unread: the table changed there and no tile read explains it (game-2002 of issue 16's fresh glare set)."""
    scene = scenes.TableScene()
    scene.show(START)
    scene.glare, scene.glare_bgr = OVER_ROW_TWO, (200, 205, 250)
    feed = scenes.SceneFeed(scenes.pipeline(scene), scene)
    assert [e["event"] for e in feed.run(2.0)] == ["table"]
    kind, verdict, notes = laid_then_next_turn(feed, "bottom")
    assert (kind, verdict) == ("draw", "review") and UNSEEN_IN_GLARE in notes
    assert feed.of_kind("glare") == []  # no blind spot to warn of


def test_tiles_read_in_a_hot_spot_short_of_saturation_are_ruled_as_usual(scenes: Any) -> None:
    feed = started(scenes, AWAY)
    feed.scene.glare_bgr = (200, 205, 250)
    feed.hands("bottom", OPENED)
    feed.run(3.0)
    assert rulings(feed.events) == [("play", "ok", [])]
