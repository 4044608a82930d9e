"""ActivityMeter: motion, arms reaching in from a side (which side, and where along it), lighting that is not a
move."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from vision.runtime.motion import ActivityMeter
from vision.runtime.seats import Edge

TABLE = "[red-5 red-6 red-7] [black-9 blue-9 orange-9]"


def settled_meter(scene: Any, play_area: Any = None) -> ActivityMeter:
    """A meter that has seen the scene still for two samples (its background is that table)."""
    meter = ActivityMeter(scene.size, play_area)
    meter.measure(scene.frame())
    meter.measure(scene.frame())
    return meter


def test_a_still_table_is_quiet(scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    for _ in range(3):
        activity = meter.measure(scene.frame())
        assert (activity.motion, activity.arm, activity.edge, activity.global_change) == (0.0, False, None, False)
        assert not activity.busy


@pytest.mark.parametrize("side", [edge.label for edge in Edge])
def test_an_arm_names_the_side_it_comes_from(scenes: Any, side: str) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    scene.arm = side
    activity = meter.measure(scene.frame())
    assert activity.arm and activity.busy and not activity.global_change
    assert activity.edge == Edge[side.upper()] and activity.to_json()["edge"] == side
    assert activity.along is not None and abs(activity.along - 0.5) < 0.1  # the scene's arm comes in mid-side


@pytest.mark.parametrize(("side", "along"), [("bottom", 0.15), ("bottom", 0.85), ("left", 0.2), ("right", 0.8)])
def test_an_arm_near_a_corner_still_names_its_own_side(scenes: Any, side: str, along: float) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    scene.arm, scene.arm_at, scene.arm_reach = side, along, 0.3
    activity = meter.measure(scene.frame())
    assert activity.edge == Edge[side.upper()]
    assert activity.along is not None and abs(activity.along - along) < 0.1  # where along it too


@pytest.mark.parametrize(("side", "along"), [("bottom", 0.25), ("bottom", 0.75), ("top", 0.3), ("top", 0.7)])
def test_two_players_on_one_edge_are_told_apart_by_where_their_arms_come_in(
    scenes: Any, side: str, along: float
) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    scene.arm, scene.arm_at = side, along
    for _ in range(3):  # the arm wiggles sideways as hands work
        activity = meter.measure(scene.frame())
        assert activity.edge == Edge[side.upper()] and activity.along is not None
        assert abs(activity.along - along) < 0.08 and (activity.along < 0.5) == (along < 0.5)


def test_a_hand_resting_still_on_the_table_still_counts(scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    scene.arm, scene.arm_still = "right", True
    meter.measure(scene.frame())
    for _ in range(5):
        activity = meter.measure(scene.frame())
        assert activity.motion == 0.0  # nothing moves...
        assert activity.arm and activity.edge == Edge.RIGHT and activity.busy  # ...but the table is not free


def test_tiles_put_down_inside_the_area_are_motion_but_not_an_arm(scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    scene.show(f"{TABLE} [blue-1 blue-2 blue-3 blue-4]")
    first = meter.measure(scene.frame())
    assert first.motion > 0.002 and first.busy and not first.arm
    after = meter.measure(scene.frame())
    assert not after.busy and after.foreground > 0  # still, but different from the background...
    meter.set_background(scene.frame())
    assert meter.measure(scene.frame()).foreground == 0.0  # ...until the new table becomes the reference


@pytest.mark.parametrize("factor", [0.6, 0.8, 1.08])  # dimmer, brighter (short of clipping the tiles)
def test_a_lighting_change_is_not_activity(scenes: Any, factor: float) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    scene.brightness = factor
    for _ in range(3):
        activity = meter.measure(scene.frame())
        assert not activity.arm and not activity.busy, activity


def test_an_arm_is_found_in_dim_light_too(scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    scene.brightness = 0.6
    meter = settled_meter(scene)
    scene.arm = "top"
    activity = meter.measure(scene.frame())
    assert activity.arm and activity.edge == Edge.TOP


def test_a_change_over_most_of_the_picture_is_global_not_an_arm() -> None:
    stripes = np.zeros((360, 480, 3), np.uint8)
    for x in range(0, 480, 32):  # a striped cloth
        stripes[:, x : x + 16] = 225
        stripes[:, x + 16 : x + 32] = 30
    meter = ActivityMeter((480, 360))
    meter.measure(stripes)
    meter.measure(stripes)
    bumped = np.roll(stripes, 16, axis=1)  # the camera was knocked sideways by one stripe
    activity = meter.measure(bumped)
    assert activity.global_change and not activity.arm and activity.edge is None


def test_only_the_play_area_counts(scenes: Any) -> None:
    scene = scenes.TableScene()
    scene.show(TABLE)
    width, height = scene.size
    # the play area stops 60 px short of the right edge: something along that edge is off the table
    area = np.array([[0, 0], [width - 60, 0], [width - 60, height], [0, height]], np.float64)
    meter = settled_meter(scene, area)
    scene.arm, scene.arm_reach = "right", 0.1  # 48 px: a hand beside the table
    outside = meter.measure(scene.frame())
    assert not outside.arm and outside.motion == 0.0 and not outside.busy
    scene.arm_reach = 0.4  # it reaches over the play area's right border: that side's seat
    inside = meter.measure(scene.frame())
    assert inside.arm and inside.edge == Edge.RIGHT


BEIGE_BGR = (150, 160, 165)
"""A grey-beige table top."""
SKIN_BGR = (120, 150, 200)
"""Skin as bright as that table in grey levels (on ``synth-game --seed 6``'s grey-beige table arms were 17 apart,
under the meter's grey threshold): only its colour tells it from the table."""


def beige_table(arm_from_right: bool = False) -> np.ndarray:
    image = np.empty((360, 480, 3), np.uint8)
    image[:] = BEIGE_BGR
    image[100:132, 150:174] = image[100:132, 179:203] = (225, 230, 235)  # two tiles
    if arm_from_right:
        image[150:210, 260:] = SKIN_BGR
    return image


def test_an_arm_as_bright_as_the_table_is_seen_by_its_colour() -> None:
    import cv2

    table, arm = beige_table(), beige_table(arm_from_right=True)
    grey_table, grey_arm = (float(cv2.cvtColor(np.array([[c]], np.uint8), cv2.COLOR_BGR2GRAY)[0, 0]) for c in
                            (BEIGE_BGR, SKIN_BGR))  # fmt: skip
    assert abs(grey_table - grey_arm) < 3  # the premise: grey alone cannot tell them apart
    meter = ActivityMeter((480, 360))
    meter.measure(table)
    meter.measure(table)
    for _ in range(3):  # resting still too: it stays an arm, not a one-off motion
        activity = meter.measure(arm)
        assert activity.arm and activity.edge == Edge.RIGHT and activity.busy and not activity.global_change


@pytest.mark.parametrize("tint", [(0.85, 1.0, 1.1), (1.1, 1.0, 0.9)])  # a warmer bulb, a cooler daylight
def test_light_of_another_colour_is_not_an_arm(tint: tuple[float, float, float]) -> None:
    table = beige_table()
    meter = ActivityMeter((480, 360))
    meter.measure(table)
    meter.measure(table)
    tinted = np.clip(table * np.array(tint), 0, 255).astype(np.uint8)
    for _ in range(3):
        activity = meter.measure(tinted)
        assert not activity.arm and not activity.busy and not activity.global_change, activity


def test_a_grey_camera_is_metered_in_grey() -> None:
    import cv2

    table, arm = (cv2.cvtColor(beige_table(), cv2.COLOR_BGR2GRAY), cv2.cvtColor(beige_table(), cv2.COLOR_BGR2GRAY))
    arm[150:210, 260:] = 60  # a dark sleeve
    meter = ActivityMeter((480, 360))
    meter.measure(table)
    meter.measure(table)
    activity = meter.measure(arm)
    assert activity.arm and activity.edge == Edge.RIGHT


def _textured(size: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A frame whose every pixel differs from its neighbours: any pixel computed from the wrong ones shows."""
    width, height = size
    return np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)


AREA_1080P = np.array([[239.4, 82.4], [1670.8, 82.4], [1755.5, 1017.0], [175.0, 1017.0]])
"""game-1000's automatic play area (1920x1080), as ``analyze`` found it."""


@pytest.mark.parametrize(
    ("size", "cropped"),
    [
        ((1920, 1080), True),  # 6 frame pixels to a small one: only the play area's box is made small
        ((1280, 720), True),  # 4 to one
        ((1440, 1080), False),  # 4.5 to one: the whole frame, as before
    ],
)
def test_the_small_images_inside_the_play_area_are_those_of_the_whole_frame(
    size: tuple[int, int], cropped: bool
) -> None:
    width, height = size
    area = AREA_1080P * (width / 1920, height / 1080)
    meter, whole = ActivityMeter(size, area), ActivityMeter(size, area)
    whole.crop = (0, 0, whole.shape[1], whole.shape[0])  # the meter as it was: everything from the whole frame
    assert (meter.crop != whole.crop) == cropped
    inside = meter.mask.astype(bool)
    for seed in range(3):
        frame = _textured(size, seed)
        assert np.array_equal(meter.small(frame)[inside], whole.small(frame)[inside])
        chroma, chroma_whole = meter.small_chroma(frame), whole.small_chroma(frame)
        assert chroma is not None and chroma_whole is not None
        assert np.array_equal(chroma[inside], chroma_whole[inside])


def _arm_film(scene: Any) -> list[np.ndarray]:
    """A still table, an arm reaching in and working, then gone."""
    scene.show(TABLE)
    frames = [scene.frame(), scene.frame()]
    scene.arm, scene.arm_at = "bottom", 0.3
    frames += [scene.frame() for _ in range(3)]
    scene.arm = None
    frames += [scene.frame(), scene.frame()]
    return frames


@pytest.mark.parametrize("size", [(480, 360), (1280, 960)])
def test_a_frame_peeked_at_measures_as_it_would_have_and_changes_nothing(scenes: Any, size: tuple[int, int]) -> None:
    frames = _arm_film(scenes.TableScene(size))
    plain, peeking = ActivityMeter(size), ActivityMeter(size)
    measured = [plain.measure(frame) for frame in frames]
    seen = []
    for k, frame in enumerate(frames):
        peeked = peeking.peek(frame)
        assert peeking.peek(frames[k - 1]) is not None  # another look, at another frame, counts for nothing
        assert peeking.peek(frame) == peeked  # the meter did not move on
        seen.append(peeking.measure(frame))
    assert seen == measured
    assert any(activity.arm for activity in measured)


def test_a_peek_at_one_frame_is_not_taken_for_another(scenes: Any) -> None:
    frames = _arm_film(scenes.TableScene())
    plain, peeking = ActivityMeter(scenes.TableScene().size), ActivityMeter(scenes.TableScene().size)
    for k, frame in enumerate(frames):
        peeking.peek(frames[-1 - k])  # a keyframe that showed the hands gone: the decoder hands out another frame
        assert peeking.measure(frame) == plain.measure(frame)


def test_a_frame_of_another_size_is_made_small_whole_as_before() -> None:
    """A stream that changed resolution under the meter: its frames are resized whole, never cut where the meter's
    own size would be cut."""
    meter, whole = ActivityMeter((1920, 1080), AREA_1080P), ActivityMeter((1920, 1080), AREA_1080P)
    whole.crop = (0, 0, whole.shape[1], whole.shape[0])
    frame = _textured((1280, 720))
    assert np.array_equal(meter.small(frame), whole.small(frame))
    assert np.array_equal(meter.small_chroma(frame), whole.small_chroma(frame))


def test_the_footprint_is_where_the_activity_reached_since_the_background(scenes: Any) -> None:
    """Where hands reached since the last still table (an arm's hand, not the rest of it, which only passes over) and
    what else is new over it, kept until the next background; a frame peeked at counts once it is measured."""
    scene = scenes.TableScene()
    scene.show(TABLE)
    meter = settled_meter(scene)
    assert meter.footprint is not None and not meter.footprint.any()
    scene.arm, scene.arm_at, scene.arm_reach = "left", 0.2, 0.4  # the hand's tip at x = 0.4 of the width
    meter.measure(scene.frame())
    scene.arm, scene.arm_at = "right", 0.8
    meter.peek(frame := scene.frame())
    meter.measure(frame)
    width = meter.shape[1]
    xs = np.nonzero(meter.footprint)[1]
    left, right = xs[xs < width / 2], xs[xs >= width / 2]
    assert 0.3 * width < left.min() and left.max() <= 0.41 * width  # the left hand, not its forearm
    assert 0.59 * width <= right.min() and right.max() < 0.7 * width  # the right hand too, though the left has gone
    scene.arm = None
    scene.show(f"{TABLE} [red-1 red-2 red-3]")
    meter.measure(scene.frame())
    assert meter.footprint[:, : int(0.3 * width)].any()  # the tiles laid
    meter.set_background(scene.frame())
    assert meter.footprint is None


def test_a_faint_change_is_seen_where_the_foreground_is_not(scenes: Any) -> None:
    """A tile-sized patch 12 grey levels lighter than the background (a tile laid white on a washed-out hot spot): under
    the foreground's level, over the faint one; the still table itself shows no faint change."""
    scene = scenes.TableScene()
    scene.show(TABLE)
    assert ActivityMeter(scene.size).faint_change(scene.frame()) is None  # no background yet
    meter = settled_meter(scene)
    frame = scene.frame()
    assert not meter.faint_change(frame).any()
    frame[250:290, 300:330] = np.clip(frame[250:290, 300:330].astype(int) + 12, 0, 255).astype(np.uint8)
    assert meter.faint_change(frame).any() and not meter.measure(frame).busy
