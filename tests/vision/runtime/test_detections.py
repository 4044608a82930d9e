"""The detections container: construction, indexing, merge, NMS and the JSON codec."""

from __future__ import annotations

import numpy as np
import pytest

from vision.runtime.detections import Detections, box_iou


def three() -> Detections:
    return Detections.of_boxes(
        [[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 70]],
        [0.9, 0.8, 0.7],
        ["red-7", "red-7", "joker"],
        angle_deg=[0.0, 5.0, 90.0],
    )


def test_columns_must_have_one_row_per_box() -> None:
    with pytest.raises(ValueError, match="'confidence' has 1 rows, expected 2"):
        Detections(np.zeros((2, 4)), [0.5], [0, 1])


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (1, [0.8]),  # an int keeps a Detections of one
        (slice(0, 2), [0.9, 0.8]),  # a slice
        (np.array([True, False, True]), [0.9, 0.7]),  # a boolean mask
        (np.array([2, 0]), [0.7, 0.9]),  # an index array, in its order
    ],
)
def test_indexing_returns_new_detections(index: object, expected: list[float]) -> None:
    picked = three()[index]
    assert isinstance(picked, Detections)
    assert picked.confidence.tolist() == pytest.approx(expected)
    assert len(picked.data["angle_deg"]) == len(expected)


def test_arrays_are_read_only_and_operations_copy() -> None:
    detections = three()
    with pytest.raises(ValueError):
        detections.confidence[0] = 0.0
    moved = detections.with_(xyxy=detections.xyxy + 1, probs=np.zeros((3, 53)))
    assert detections.xyxy[0, 0] == 0 and moved.xyxy[0, 0] == 1 and "probs" in moved.data


def test_labels_area_and_json() -> None:
    detections = three()
    assert detections.labels == ["red-7", "red-7", "joker"]
    assert detections.area.tolist() == [100, 100, 200]
    assert Detections.of_boxes([[0, 0, 1, 1]]).labels == ["tile"]  # before classification
    item = detections.to_json(columns=("angle_deg",))[2]
    assert item == {"label": "joker", "box": [50.0, 50.0, 60.0, 70.0], "confidence": 0.7, "angle_deg": 90.0}


def test_merge_keeps_common_columns_and_skips_empty_parts() -> None:
    merged = Detections.merge([three(), Detections.empty(), three()[:1]])
    assert len(merged) == 4 and list(merged.data) == ["angle_deg"]
    assert len(Detections.merge([])) == 0


def test_nms_keeps_the_most_confident_of_overlapping_boxes() -> None:
    kept = three().with_nms(0.5)
    assert kept.confidence.tolist() == pytest.approx([0.9, 0.7])


def test_nms_per_class_keeps_overlapping_boxes_of_different_classes() -> None:
    detections = Detections.of_boxes([[0, 0, 10, 10], [1, 1, 11, 11]], [0.9, 0.8], ["red-7", "red-8"])
    assert len(detections.with_nms(0.5, class_agnostic=False)) == 2
    assert len(detections.with_nms(0.5)) == 1


def test_iou() -> None:
    iou = box_iou(np.array([[0, 0, 10, 10]]), np.array([[0, 0, 10, 10], [5, 0, 15, 10], [20, 20, 30, 30]]))
    assert iou[0].tolist() == pytest.approx([1.0, 1 / 3, 0.0])


def test_a_box_inside_a_more_confident_one_is_the_same_tile_and_neighbours_stay() -> None:
    boxes = [[0, 0, 100, 140], [10, 15, 90, 125], [101, 0, 201, 140], [150, 10, 260, 150]]
    found = Detections.of_boxes(boxes, [0.9, 0.8, 0.85, 0.95])
    kept = found.without_nested(0.8)
    # the inner box goes (IoU 0.63 with the outer one: NMS at 0.7 would keep it); a touching neighbour and one
    # overlapping it by 43 % stay
    assert kept.xyxy.tolist() == [[0, 0, 100, 140], [101, 0, 201, 140], [150, 10, 260, 150]]
    # the more confident box wins whichever is inside: an outline inside a more confident face box goes
    swapped = Detections.of_boxes(boxes[:2], [0.5, 0.9]).without_nested(0.8)
    assert swapped.xyxy.tolist() == [[10, 15, 90, 125]]
