"""fuse: several readings of a still table become one; a single bad reading never changes the state."""

from __future__ import annotations

import numpy as np
import pytest

from vision.runtime.detections import Detections
from vision.runtime.layout import MIN_CONFIDENCE, group_tiles
from vision.runtime.track import fuse

RUN = ["red-5", "red-6", "red-7", "red-8"]


def reading(
    labels: list[str], *, jitter: float = 0.0, seed: int = 0, confidence: float = 0.95, drop: int | None = None
) -> Detections:
    """A run of tiles side by side (24 x 32 px, 5 px apart), boxes jittered by up to ``jitter`` pixels."""
    rng = np.random.default_rng(seed)
    boxes = np.array([[40 + 29 * k, 50, 64 + 29 * k, 82] for k in range(len(labels))], np.float64)
    boxes += rng.uniform(-jitter, jitter, boxes.shape)
    angle = np.zeros(len(labels))
    found = Detections.of_boxes(boxes, [confidence] * len(labels), labels, angle_deg=angle)
    return found if drop is None else found[[i for i in range(len(labels)) if i != drop]]


def as_dict(found: Detections) -> dict[str, float]:
    """Label -> confidence, ordered left to right."""
    order = np.argsort(found.xyxy[:, 0])
    return {found.labels[i]: round(float(found.confidence[i]), 3) for i in order}


def test_agreeing_readings_fuse_to_the_same_tiles_with_their_confidence() -> None:
    fused = fuse([reading(RUN, jitter=2, seed=s) for s in range(3)])
    assert as_dict(fused) == dict.fromkeys(RUN, 0.95)
    assert group_tiles(fused).same_layout(group_tiles(reading(RUN)))


def test_the_fused_box_is_the_median_of_the_members() -> None:
    readings = [reading(RUN[:1]).with_(xyxy=[[40 + dx, 50, 64 + dx, 82]]) for dx in (0.0, 1.0, 6.0)]
    assert fuse(readings).xyxy.tolist() == [[41.0, 50.0, 65.0, 82.0]]  # one far-off box does not drag it


def test_a_tile_missing_in_one_of_three_readings_stays() -> None:
    fused = fuse([reading(RUN, seed=1), reading(RUN, drop=2, seed=2), reading(RUN, jitter=2, seed=3)])
    assert list(as_dict(fused)) == RUN
    assert as_dict(fused)["red-7"] == pytest.approx(0.95)  # seen in 2 of 3 and read the same both times


def test_a_tile_seen_in_only_one_of_three_readings_goes() -> None:
    fused = fuse([reading(RUN), reading(RUN, drop=3), reading(RUN, drop=3)])
    assert list(as_dict(fused)) == RUN[:3]


def test_a_spurious_box_in_one_reading_goes() -> None:
    ghost = Detections.of_boxes([[300, 200, 324, 232]], [0.99], ["joker"], angle_deg=[0.0])
    fused = fuse([reading(RUN), Detections.merge([reading(RUN, seed=4), ghost]), reading(RUN, seed=5)])
    assert "joker" not in as_dict(fused) and list(as_dict(fused)) == RUN


def test_a_label_that_flips_in_one_reading_keeps_the_majority_label_but_is_uncertain() -> None:
    flipped = ["red-5", "red-6", "red-9", "red-8"]  # red-7 misread once (a 7 and a 9 look alike when turned)
    fused = fuse([reading(RUN), reading(flipped), reading(RUN)])
    confidence = as_dict(fused)
    assert list(confidence) == RUN
    assert confidence["red-7"] < MIN_CONFIDENCE
    assert all(confidence[label] >= MIN_CONFIDENCE for label in ("red-5", "red-6", "red-8"))
    table = group_tiles(fused)
    assert [str(table.tile_at(p)) for p in table.uncertain] == ["red-7"]


def test_a_very_confident_wrong_reading_cannot_outvote_two_agreeing_ones_into_certainty() -> None:
    sure_wrong = reading(["red-5", "red-6", "red-9", "red-8"], confidence=1.0)
    fused = fuse([reading(RUN, confidence=0.6), sure_wrong, reading(RUN, confidence=0.6)])
    assert as_dict(fused)["red-7"] < MIN_CONFIDENCE  # 1.2 vs 1.0: red-7, but not certain


def test_neighbouring_tiles_in_one_reading_never_merge_into_one_tile() -> None:
    tight = Detections.of_boxes([[40, 50, 64, 82], [58, 50, 82, 82]], [0.9, 0.9], ["blue-1", "blue-2"])
    fused = fuse([tight, tight, tight])
    assert sorted(fused.labels) == ["blue-1", "blue-2"]


def test_extra_columns_come_from_each_tiles_best_member() -> None:
    a = reading(RUN).with_(detector_confidence=np.full(4, 0.5))
    b = reading(RUN, confidence=0.99).with_(detector_confidence=np.full(4, 0.75))
    fused = fuse([a, b, a])
    assert fused.data["detector_confidence"].tolist() == [0.75] * 4


def test_no_reading_one_reading_and_empty_readings() -> None:
    single = reading(RUN)
    assert len(fuse([])) == 0
    assert fuse([single]) is single
    assert len(fuse([Detections.empty()] * 3)) == 0
    assert len(fuse([Detections.empty(), single, Detections.empty()])) == 0  # 1 of 3 is not a majority


def test_fused_probabilities_are_the_mean_over_the_readings() -> None:
    readings = []
    for p in (0.9, 0.6, 0.3):
        probs = np.zeros((1, 53), np.float32)
        probs[0, 0], probs[0, 1] = p, 1 - p
        readings.append(reading(RUN[:1]).with_(probs=probs))
    fused = fuse(readings)
    assert np.allclose(fused.data["probs"][0, :2], [0.6, 0.4])


def test_the_fused_up_direction_is_the_circular_mean_of_the_readings() -> None:
    readings = [reading(RUN[:1]).with_(angle_deg=np.array([a])) for a in (350.0, 10.0, 6.0)]
    assert float(fuse(readings).data["angle_deg"][0]) == pytest.approx(2.0, abs=0.1)


def test_readings_are_unanimous_only_when_every_tile_and_label_agrees() -> None:
    from vision.runtime.track import unanimous

    assert unanimous([reading(RUN, jitter=2, seed=s) for s in range(2)])
    assert not unanimous([reading(RUN)])  # one reading agrees with nothing
    assert not unanimous([reading(RUN), reading(RUN, drop=2)])  # a tile missing from one
    assert not unanimous([reading(RUN), reading(["red-5", "red-6", "red-9", "red-8"])])  # a label differs


def capped(confidences: list[float], label: str = "red-7") -> list[Detections]:
    """Readings of RUN whose ``label`` is read at each of ``confidences`` in turn (0.5: a familiarity or colour cap)."""
    return [reading(RUN).with_(confidence=[c if name == label else 0.95 for name in RUN]) for c in confidences]


@pytest.mark.parametrize(
    ("confidences", "certain"),
    [
        ([0.99, 0.99, 0.5], True),  # one look capped of three: certain (as the mean, 0.83, had it)
        ([0.99, 0.5, 0.5], False),  # capped in most looks
        ([0.99, 0.5, 0.5, 0.99, 0.99], True),  # read twice more, certain: 3 of 5 (the mean: 0.794, uncertain)
        ([0.5, 0.5, 0.5, 0.99, 0.99], False),
        ([0.99, 0.99, 0.5, 0.5], False),  # half the looks capped is not more than half certain
    ],
)
def test_a_capped_look_is_one_doubtful_look_not_a_vote_for_another_label(
    confidences: list[float], certain: bool
) -> None:
    assert (as_dict(fuse(capped(confidences)))["red-7"] >= MIN_CONFIDENCE) is certain


def flips(labels: list[tuple[str, float]]) -> list[Detections]:
    """Readings of RUN whose third tile (red-7) is read as each (label, confidence) in turn."""
    return [reading([*RUN[:2], label, RUN[3]]).with_(confidence=[0.95, 0.95, c, 0.95]) for label, c in labels]


@pytest.mark.parametrize(
    ("looks", "confidence"),
    [
        ([("red-7", 0.95)] * 4 + [("red-9", 0.6)], 0.8),  # 4:1, the dissent unsure: the winner's share, certain
        ([("red-7", 0.95)] * 3 + [("red-9", 0.6)], 0.75),  # 3:1 is not
        ([("red-7", 0.95)] * 5 + [("red-9", 0.9)], 0.5),  # 5:1 with a sure dissent: two sure labels, one wrong
        ([("red-7", 0.95)] * 2 + [("red-9", 0.6)], 2 / 3),
    ],
)
def test_a_split_label_is_worth_at_most_its_share_and_a_sure_dissent_keeps_it_uncertain(
    looks: list[tuple[str, float]], confidence: float
) -> None:
    fused = as_dict(fuse(flips(looks)))
    assert list(fused) == RUN and fused["red-7"] == pytest.approx(confidence, abs=1e-3)


@pytest.mark.parametrize(
    ("looks", "more"),
    [
        ([("red-7", 0.99), ("red-7", 0.5), ("red-7", 0.5)], True),  # two certain looks more make 3 of 5
        ([("red-7", 0.5)] * 3, False),  # no look certain: a cap that holds, more looks are for nothing
        ([("red-7", 0.95), ("red-9", 0.6), ("red-7", 0.95)], True),  # 4:1 within reach
        ([("red-7", 0.95), ("red-9", 0.9), ("red-7", 0.95)], False),  # a sure dissent: never certain
        ([("red-7", 0.95)] * 3, False),  # nothing to settle
    ],
)
def test_more_readings_are_asked_only_where_they_could_make_a_tile_certain(
    looks: list[tuple[str, float]], more: bool
) -> None:
    from vision.runtime.track import resolvable

    assert resolvable(flips(looks), 5) is more
    assert not resolvable(flips(looks), 3)  # the bound reached
