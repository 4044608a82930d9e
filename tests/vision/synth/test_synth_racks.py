"""Racks revealed at the end of a game (issue 14, part 1): tiles standing in a rack seen from the front and
obliquely, with labels as exact as the table's; off by default, so default scenes render as before."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import cv2
import numpy as np
import pytest

from tests.vision.synth.test_synth_scene import polygon_mask
from vision.synth.recipe import load_recipe
from vision.synth.scene import RenderedScene, SceneParams, render_scene

RACKS = SceneParams(size=(640, 480), rack_view_probability=1.0)


@pytest.fixture(scope="module")
def racks() -> list[RenderedScene]:
    return [render_scene(seed, RACKS) for seed in range(8)]


def test_rack_views_are_off_by_default_and_a_share_of_scenes_when_asked() -> None:
    assert SceneParams().rack_view_probability == 0.0
    assert "view" not in render_scene(0, SceneParams(size=(320, 240))).meta
    some = replace(RACKS, rack_view_probability=0.5)
    kinds = Counter("view" in render_scene(seed, some).meta for seed in range(12))
    assert kinds[True] and kinds[False]


def test_racks_are_seen_from_the_front_and_obliquely_with_upright_readable_tiles(racks) -> None:
    kinds = Counter(scene.meta["view"]["kind"] for scene in racks)
    assert set(kinds) == {"rack-front", "rack-oblique"}
    for scene in racks:
        view = scene.meta["view"]
        readable = scene.readable()
        assert readable and all(t.kind == "rack" for t in scene.tiles)
        # The camera stands in front of the rack with the table's up as the image's up: tiles read upright
        # (tilted by perspective towards the frame's corners and a little roll, never lying on their side).
        assert all(abs(t.rotation_deg) < 45 for t in readable), [round(t.rotation_deg) for t in readable]
        if view["kind"] == "rack-oblique":
            assert 20 <= abs(view["azimuth_deg"]) <= 55
        # Never more copies than the set holds (two of each number tile, two jokers).
        assert max(Counter(scene.meta["rack"]["tiles"]).values()) <= 2


def test_rack_polygons_match_the_drawn_faces(racks) -> None:
    """Each fully visible standing tile's polygon is the face drawn for it, to a pixel (as on the table)."""
    checked = 0
    kernel = np.ones((3, 3), np.uint8)
    for scene in racks:
        shape = scene.image.shape[:2]
        height, width = shape
        for tile in scene.tiles:
            x0, y0, x1, y1 = tile.box
            # A face running out of the frame is cut there (lens distortion moves the cut): not comparable.
            if tile.visible < 1.0 or min(x0, y0) < 4 or x1 > width - 4 or y1 > height - 4:
                continue
            cx, cy = np.mean(np.array(tile.polygon), axis=0).round().astype(int)
            drawn = scene.instance_map == scene.instance_map[cy, cx]
            if not scene.instance_map[cy, cx] or drawn.sum() < 150:
                continue
            expected = polygon_mask(np.array(tile.polygon), shape).astype(np.uint8)
            outer, inner = cv2.dilate(expected, kernel).astype(bool), cv2.erode(expected, kernel).astype(bool)
            assert (drawn & ~outer).sum() <= 0.01 * drawn.sum(), f"{tile.label}: pixels drawn outside its polygon"
            assert (inner & ~drawn).sum() <= 0.08 * inner.sum(), f"{tile.label}: polygon covers pixels not drawn"
            # Seen obliquely, the nearer neighbour's side wall may hide a sliver along one edge (<= 8 % above).
            ys, xs = np.nonzero(drawn)
            assert abs(xs.min() - x0) <= 4 and abs(xs.max() + 1 - x1) <= 4
            assert abs(ys.min() - y0) <= 4 and abs(ys.max() + 1 - y1) <= 4
            checked += 1
    assert checked >= 40


def test_a_front_rows_tiles_hide_the_lower_part_of_the_second_row(racks) -> None:
    """Two-row racks: the back row stands higher, its digits showing above the front row, which hides its lower
    part; the labels measure what shows (the digit's region is the face's upper part)."""
    two_rows = [scene for scene in racks if scene.meta["view"]["rows"] == 2]
    assert two_rows
    height, width = two_rows[0].image.shape[:2]
    inside = [t for scene in two_rows for t in scene.tiles
              if min(t.box[:2]) > 4 and t.box[2] < width - 4 and t.box[3] < height - 4]  # fmt: skip
    lower_hidden = [t for t in inside if t.visible < 0.95 and t.digit_visible > t.visible]
    assert len(lower_hidden) >= 3
    assert any(t.readable for t in lower_hidden)


def test_the_rack_recipes_train_on_train_editions_and_hold_out_the_rest() -> None:
    train, _ = load_recipe("synth-racks-train")
    heldout, _ = load_recipe("synth-racks-heldout")
    assert 0 < train.rack_view_probability < 1 and train.split == "train" and "large-print" not in train.editions
    assert heldout.rack_view_probability == 1.0 and heldout.split == "heldout"


def test_a_rack_seen_from_above_shows_slivers_that_are_not_labelled() -> None:
    # A held-out edition scene (the 49th of seed 14's draw) looking almost straight down at two racks: their tiles'
    # faces lean back, 27 px wide but 1-8 px tall, and no one could read their digits.
    params, _ = load_recipe("datasets/synth-editions-heldout.yaml")
    scene = render_scene(3774107903, params)

    def sides(tile) -> tuple[float, float]:
        corners = np.asarray(tile.polygon)
        return float(np.linalg.norm(corners[1] - corners[0])), float(np.linalg.norm(corners[3] - corners[0]))

    slivers = [t for t in scene.tiles if t.kind == "rack" and sides(t)[0] >= 20 and sides(t)[1] < params.min_face_px]
    assert len(slivers) >= 8 and not any(t.readable for t in slivers)
    assert scene.readable() and all(min(sides(t)) >= params.min_face_px for t in scene.readable())
