"""One ``read_table`` for a photo and for the fused frames of a game: the policy says what is left out where."""

from __future__ import annotations

import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from vision.runtime.detections import Detections
from vision.runtime.reader import PHOTO_NOT_A_TILE, Reading
from vision.runtime.tables import FRAMES, PHOTO, TablePolicy, read_table


def tiles(labels: list[str], xs: list[float], confidence: list[float], strength: list[float]) -> Detections:
    """Classified boxes in a row at ``xs`` (30 px wide, touching when 31 apart)."""
    return Detections(
        np.array([[x, 100, x + 30, 140] for x in xs], np.float32),
        np.array(confidence),
        np.array([ALL_LABELS.index(label) for label in labels]),
        {"detector_confidence": np.array(strength), "angle_deg": np.zeros(len(labels))},
    )


ROW = tiles(["red-5", "red-6", "red-7"], [100, 131, 162], [0.99, 0.99, 0.99], [0.9, 0.9, 0.9])
WEAK_ALONE = tiles(["joker"], [500], [0.95], [0.3])  # a box the detector barely saw, far from the row
GLARE = tiles(["blue-3"], [700], [0.1], [0.5])  # a box nobody can name: 0.5 x 0.1 < 0.3


def test_the_policies_are_the_readers_and_the_pipelines_thresholds() -> None:
    assert TablePolicy(reader_not_a_tile=PHOTO_NOT_A_TILE) == PHOTO and PHOTO.weak_below is None
    assert FRAMES.reader_not_a_tile == 0.0 and FRAMES.weak_below is not None and FRAMES.not_a_tile > 0


def test_a_photo_s_table_keeps_what_its_reader_kept_and_carries_what_it_left_out() -> None:
    # the photo's reader left the glare out already; a weak box alone is still a tile in a single photo
    reading = Reading(Detections.merge([ROW, WEAK_ALONE]), left_out=GLARE)
    table = read_table(reading, PHOTO)
    assert [[str(t) for t in s] for s in table.table.sets] == [["red-5", "red-6", "red-7"]]
    assert [str(t) for t in table.table.loose] == ["joker"]
    assert table.left_out.labels == ["blue-3"]


def test_fused_frames_leave_out_weak_lone_boxes_and_unnamed_weak_ones() -> None:
    fused = Detections.merge([ROW, WEAK_ALONE, tiles(["blue-3"], [193], [0.2], [0.44])])
    table = read_table(fused, FRAMES)
    assert [[str(t) for t in s] for s in table.table.sets] == [["red-5", "red-6", "red-7"]] and not table.table.loose
    assert sorted(table.left_out.labels) == ["blue-3", "joker"]


@pytest.mark.parametrize(
    "left_out",
    [
        Detections.empty(),  # the pipeline's readings keep every box: the same table as from the detections
        GLARE,  # a reading that left a box out already: carried along with those left out after it
    ],
)
def test_a_reading_gives_the_table_its_detections_give(left_out: Detections) -> None:
    fused = Detections.merge([ROW, WEAK_ALONE])
    from_detections, from_reading = read_table(fused, FRAMES), read_table(Reading(fused, left_out), FRAMES)
    assert from_reading.table == from_detections.table
    assert sorted(from_reading.left_out.labels) == sorted([*left_out.labels, *from_detections.left_out.labels])


def test_an_empty_reading_is_an_empty_table() -> None:
    for policy in (PHOTO, FRAMES):
        table = read_table(Reading(Detections.empty()), policy)
        assert not table.table.sets and not table.table.loose and len(table.left_out) == 0
