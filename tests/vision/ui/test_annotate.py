"""The overlays ``read --annotate`` and the station draw: labels that stay readable on a crowded table."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import numpy as np
import pytest

from vision.runtime.detections import Detections
from vision.ui.annotate import LabelAnnotator, annotate_all, items_of

TILE_W, TILE_H = 40, 56
ROW = ["orange-13", "black-12", "red-11", "blue-10", "orange-9", "black-8", "red-7", "blue-6", "orange-5", "black-4"]


def row_of_tiles(y: int, labels: list[str], x: int = 60, gap: int = 0) -> tuple[list[list[float]], list[str]]:
    boxes = [[x + k * (TILE_W + gap), y, x + k * (TILE_W + gap) + TILE_W, y + TILE_H] for k in range(len(labels))]
    return boxes, labels


def crowded_table() -> Detections:
    """Three runs of ten touching tiles, rows 70 px apart: every label ("orange-13 0.97") is wider than its tile."""
    boxes, labels = [], []
    for row in range(3):
        more_boxes, more_labels = row_of_tiles(80 + row * 70, ROW)
        boxes += more_boxes
        labels += more_labels
    confidence = np.linspace(0.9, 0.99, len(boxes))
    return Detections.of_boxes(boxes, confidence, labels)


def overlap(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    return max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))


@pytest.mark.parametrize("short", [False, True])  # read --annotate's labels; the station's short ones
def test_labels_of_neighbouring_tiles_do_not_overlap(short: bool) -> None:
    annotator = LabelAnnotator(short=short)
    items = items_of(crowded_table())
    places = annotator.places(items, 640, 480)
    widths = [x1 - x0 for x0, _, x1, _ in places]
    if not short:
        assert min(widths) > TILE_W  # flush above its tile, each label would cover the next one's
    assert [(i, j) for (i, a), (j, b) in itertools.combinations(enumerate(places), 2) if overlap(a, b)] == []
    for item, (x0, y0, x1, y1) in zip(items, places, strict=True):
        assert x0 >= 0 and x1 <= 640 and y0 >= 0 and y1 <= 480  # in the picture
        assert x0 < item.box[2] and x1 > item.box[0]  # over or under its own tile
        assert y1 >= item.box[1] - LabelAnnotator.MAX_ROWS * (y1 - y0 + 1) - 1  # and near it


def test_a_label_goes_next_to_its_tile_where_there_is_room() -> None:
    boxes, labels = row_of_tiles(200, ["red-7", "blue-7"], gap=120)  # two tiles far apart
    items = items_of(Detections.of_boxes(boxes, [0.97, 0.97], labels))
    places = LabelAnnotator().places(items, 640, 480)
    for item, (x0, _, _, y1) in zip(items, places, strict=True):
        assert (x0, y1) == (round(item.box[0]), round(item.box[1]))  # just above it, flush left, as before


def test_the_annotated_picture_keeps_its_size(tmp_path: Path) -> None:
    scene = np.full((480, 640, 3), 90, np.uint8)
    drawn = annotate_all(scene, crowded_table())
    assert drawn.shape == scene.shape and (drawn != scene).any() and (scene == 90).all()  # a copy is drawn on
    folder = os.environ.get("STATION_SCREENSHOTS")
    if folder:  # for a person to look at, beside the station's screenshots
        import cv2

        Path(folder).mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(Path(folder) / "annotate-crowded.png"), drawn)
