"""Sets from detections: rows of touching tiles in any of four orientations, read as the player reads them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from referee.table import LOOSE, Table
from referee.tiles import ALL_LABELS
from vision.runtime.detections import Detections
from vision.runtime.layout import MIN_CONFIDENCE, group_tiles

TILE_W, TILE_H = 30.0, 40.0


def row(
    labels: list[str],
    origin: tuple[float, float],
    angle_deg: float = 0.0,
    *,
    gap: float = 2.0,
    jitter: float = 0.0,
    seed: int = 0,
    confidence: float = 0.99,
) -> Detections:
    """Tiles in reading order from ``origin``, rotated ``angle_deg`` (up clockwise from image up)."""
    rng = np.random.default_rng(seed)
    boxes, angles = [], []
    for i in range(len(labels)):
        nominal = math.radians(angle_deg)
        right = np.array([math.cos(nominal), math.sin(nominal)])
        centre = np.array(origin) + i * (TILE_W + gap) * right + rng.uniform(-jitter, jitter, 2) / 2
        angle = angle_deg + rng.uniform(-jitter, jitter) * 1.5  # each tile a few degrees off
        theta = math.radians(angle)
        c, s = abs(math.cos(theta)), abs(math.sin(theta))
        half = np.array([TILE_W * c + TILE_H * s, TILE_W * s + TILE_H * c]) / 2
        boxes.append([*(centre - half), *(centre + half)])
        angles.append(angle % 360)
    return Detections.of_boxes(boxes, [confidence] * len(labels), labels, angle_deg=angles)


def shuffled(detections: Detections, seed: int = 1) -> Detections:
    return detections[np.random.default_rng(seed).permutation(len(detections))]


RUN = ["red-5", "red-6", "red-7", "red-8"]


@pytest.mark.parametrize("angle", [0, 90, 180, 270])
def test_a_run_is_read_in_the_players_order_in_every_orientation(angle: float) -> None:
    table = group_tiles(shuffled(row(RUN, (300, 300), angle)))
    assert table == Table.of([RUN])
    # The reading goes along the tile's "right": upside down in the image, that is right to left.
    reading = np.array([math.cos(math.radians(angle)), math.sin(math.radians(angle))])
    along = [np.add(*np.reshape(table.extras[(0, p)]["box"], (2, 2))) @ reading for p in range(4)]
    assert along == sorted(along)


@pytest.mark.parametrize("seed", range(5))
def test_jittered_boxes_and_angles_still_form_one_set(seed: int) -> None:
    table = group_tiles(shuffled(row(RUN, (200, 200), 90, jitter=4.0, seed=seed), seed))
    assert table == Table.of([RUN])


def test_two_rows_close_together_are_two_sets() -> None:
    top = row(["blue-1", "blue-2", "blue-3"], (100, 100))
    below = row(["black-9", "red-9", "blue-9"], (100, 100 + TILE_H + 6))  # a gap of 0.15 tile heights
    table = group_tiles(shuffled(Detections.merge([below, top])))
    assert table == Table.of([["blue-1", "blue-2", "blue-3"], ["black-9", "red-9", "blue-9"]])


def test_two_sets_in_one_row_with_a_tile_wide_gap_are_two_sets() -> None:
    left = row(["blue-1", "blue-2", "blue-3"], (100, 100))
    right = row(["orange-4", "orange-5", "orange-6"], (100 + 3 * 32 + TILE_W, 100))
    assert group_tiles(Detections.merge([right, left])) == Table.of(
        [["blue-1", "blue-2", "blue-3"], ["orange-4", "orange-5", "orange-6"]]
    )


def test_a_rotated_tile_does_not_join_a_row() -> None:
    tiles = Detections.merge([row(["red-1", "red-2", "red-3"], (100, 100)), row(["joker"], (100 + 3 * 33, 100), 90)])
    assert group_tiles(tiles) == Table.of([["red-1", "red-2", "red-3"]], ["joker"])


def test_lone_tiles_are_loose_and_pairs_stay_sets() -> None:
    tiles = Detections.merge(
        [
            row(["red-1", "red-2", "red-3"], (100, 100)),
            row(["orange-13"], (400, 400)),
            row(["blue-4", "blue-5"], (100, 300)),
        ]
    )
    table = group_tiles(tiles)
    assert table == Table.of([["red-1", "red-2", "red-3"], ["blue-4", "blue-5"]], ["orange-13"])
    assert not table.sets[1].is_valid()  # the referee flags the pair


def test_low_confidence_tiles_are_uncertain_with_their_box_and_confidence() -> None:
    shaky = row(["black-7"], (100 + 2 * 32, 100), confidence=MIN_CONFIDENCE - 0.1)
    table = group_tiles(Detections.merge([row(["black-5", "black-6"], (100, 100)), shaky]))
    assert str(table) == "[black-5 black-6 black-7]"
    assert table.uncertain == {(0, 2)}
    assert set(table.extras[(0, 2)]) == {"box", "confidence"}
    assert table.to_json(with_extras=True)["sets"][0][2]["uncertain"] is True
    assert Table.from_json(table.to_json(with_extras=True)).uncertain == {(0, 2)}


def test_no_tiles_is_an_empty_table_and_unclassified_tiles_are_refused() -> None:
    assert group_tiles(Detections.empty()) == Table()
    with pytest.raises(ValueError, match="classified"):
        group_tiles(Detections.of_boxes([[0, 0, 10, 10]]))


def test_a_loose_place_uses_the_loose_index() -> None:
    table = group_tiles(row([ALL_LABELS[0]], (50, 50), confidence=0.1))
    assert table.uncertain == {(LOOSE, 0)}


def with_probs(detections: Detections, runner_up: dict[int, tuple[str, float]]) -> Detections:
    """Probabilities: each tile's label at its confidence, and for tiles in ``runner_up`` a second label."""
    probs = np.zeros((len(detections), len(ALL_LABELS)), np.float32)
    for i, (label, confidence) in enumerate(zip(detections.class_id, detections.confidence, strict=True)):
        probs[i, label] = confidence
        if i in runner_up:
            name, p = runner_up[i]
            probs[i, ALL_LABELS.index(name)] = p
    return detections.with_(probs=probs)


def test_set_context_rereads_an_unsure_tile_that_breaks_a_set_and_marks_it_uncertain() -> None:
    read = row(["black-13", "black-11", "black-12"], (300, 300))
    read = read.with_(confidence=np.array([0.55, 0.99, 0.99]))
    table = group_tiles(with_probs(read, {0: ("black-10", 0.40)}))
    assert table.same_layout(Table.of([["black-10", "black-11", "black-12"]]))
    assert (0, 0) in table.uncertain  # a person confirms before anything is reverted
    assert table.extras[(0, 0)]["read_as"] == "black-13" and table.extras[(0, 0)]["confidence"] == 0.4


def test_set_context_leaves_a_confident_invalid_set_and_a_valid_set_alone() -> None:
    confident = with_probs(row(["black-13", "black-11", "black-12"], (300, 300)), {0: ("black-10", 0.01)})
    assert group_tiles(confident).same_layout(Table.of([["black-13", "black-11", "black-12"]]))
    assert group_tiles(confident).uncertain == frozenset()
    valid = row(["red-5", "red-6", "red-7"], (300, 300)).with_(confidence=np.array([0.5, 0.99, 0.99]))
    assert group_tiles(with_probs(valid, {0: ("red-8", 0.45)})).same_layout(Table.of([["red-5", "red-6", "red-7"]]))


def test_set_context_rereads_a_fairly_sure_tile_whose_runner_up_would_make_the_set_valid() -> None:
    # a bench game's black 13 read as 10 at 0.86, 13 the runner-up at 0.11: within the odds of 20
    read = row(["black-10", "black-11", "black-12"], (300, 300))  # valid as read
    sure = row(["joker", "black-12", "black-10"], (300, 400)).with_(confidence=np.array([0.99, 0.99, 0.86]))
    table = group_tiles(Detections.merge([with_probs(read, {}), with_probs(sure, {2: ("black-13", 0.11)})]))
    assert table.same_layout(Table.of([["black-10", "black-11", "black-12"], ["joker", "black-12", "black-13"]]))
    assert table.uncertain == {(1, 2)} and table.extras[(1, 2)]["read_as"] == "black-10"
    unlikely = with_probs(sure, {2: ("black-13", 0.04)})  # 0.86 / 0.04 = 21.5 against: left as read, invalid
    assert group_tiles(unlikely).same_layout(Table.of([["joker", "black-12", "black-10"]]))
    assert group_tiles(unlikely).uncertain == frozenset()


def with_probabilities(detections: Detections, rows: list[dict[str, float]]) -> Detections:
    """Each tile's probabilities as given (label -> probability); the label read is the first."""
    probs = np.zeros((len(detections), len(ALL_LABELS)), np.float32)
    for i, row_probs in enumerate(rows):
        for name, p in row_probs.items():
            probs[i, ALL_LABELS.index(name)] = p
    return detections.with_(probs=probs)


def test_set_context_mends_two_tiles_when_that_is_likelier_than_changing_one() -> None:
    # a bench game: three 10s read 10, 13, 13 in a font where 10 and 13 look alike
    read = row(["red-10", "blue-13", "orange-13"], (300, 300)).with_(confidence=np.array([0.95, 0.78, 0.48]))
    rows = [
        {"red-10": 0.946, "red-13": 0.048},  # one tile changed (13, 13, 13): 0.05 as likely as read
        {"blue-13": 0.776, "blue-10": 0.211},
        {"orange-13": 0.477, "orange-10": 0.493},  # two tiles changed (10, 10, 10): 0.28 as likely
    ]
    table = group_tiles(with_probabilities(read, rows))
    assert table.same_layout(Table.of([["red-10", "blue-10", "orange-10"]]))
    assert table.uncertain == {(0, 1), (0, 2)} and table.extras[(0, 1)]["read_as"] == "blue-13"
    unlikely = [rows[0], {"blue-13": 0.97, "blue-10": 0.03}, {"orange-13": 0.9, "orange-10": 0.09}]
    sure = read.with_(confidence=np.array([0.946, 0.97, 0.9]))  # no check doubted them (see weighed_by_doubt)
    assert group_tiles(with_probabilities(sure, unlikely)).same_layout(Table.of([["red-13", "blue-13", "orange-13"]]))
    hopeless = [{"red-10": 0.99}, *unlikely[1:]]  # 0.033 x 0.1 for two tiles, nothing for one: left as read
    surer = sure.with_(confidence=np.array([0.99, 0.97, 0.9]))
    assert group_tiles(with_probabilities(surer, hopeless)).same_layout(Table.of([["red-10", "blue-13", "orange-13"]]))
    # with a joker in the set already (two more jokers there would be three: no shortcut, still mended)
    joker_read = row(["joker", "red-13", "red-11", "red-13"], (300, 300))
    joker_rows = [{"joker": 0.99}, {"red-13": 0.6, "red-10": 0.4}, {"red-11": 0.99}, {"red-13": 0.6, "red-12": 0.4}]
    table = group_tiles(with_probabilities(joker_read.with_(confidence=np.array([0.99, 0.6, 0.99, 0.6])), joker_rows))
    assert table.same_layout(Table.of([["joker", "red-10", "red-11", "red-12"]]))


def test_a_tile_a_check_doubted_keeps_its_doubt_and_its_runners_up_share_the_rest() -> None:
    from vision.runtime.layout import weighed_by_doubt

    labels = ["orange-1", "orange-7", "orange-4"]
    probs = np.zeros((2, len(ALL_LABELS)))
    probs[:, [ALL_LABELS.index(name) for name in labels]] = [0.998, 0.0015, 0.0005]
    class_id = np.full(2, ALL_LABELS.index("orange-1"))
    weighed = weighed_by_doubt(probs, class_id, np.array([0.5, 0.998]))  # the first doubted by a check, to 0.5
    np.testing.assert_allclose(weighed[0, [ALL_LABELS.index(name) for name in labels]], [0.5, 0.375, 0.125])
    np.testing.assert_allclose(weighed[1], probs[1])  # no check doubted it: the classifier's own
    assert weighed.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert weighed_by_doubt(probs[:0], class_id[:0], np.zeros(0)).shape == (0, len(ALL_LABELS))


def test_set_context_rereads_a_tile_a_check_doubted_though_the_classifier_was_sure() -> None:
    # an orange 7 read 1 at 0.998 (7 the runner-up at 0.0015), its turned crop naming another label: 0.5
    read = row(["orange-4", "orange-5", "orange-6", "orange-1"], (300, 300))
    rows = [{"orange-4": 0.99}, {"orange-5": 0.99}, {"orange-6": 0.99}, {"orange-1": 0.998, "orange-7": 0.0015}]
    doubted = with_probabilities(read.with_(confidence=np.array([0.99, 0.99, 0.99, 0.5])), rows)
    table = group_tiles(doubted)
    assert table.same_layout(Table.of([["orange-4", "orange-5", "orange-6", "orange-7"]]))
    assert (0, 3) in table.uncertain and table.extras[(0, 3)]["read_as"] == "orange-1"
    sure = with_probabilities(read.with_(confidence=np.array([0.99, 0.99, 0.99, 0.998])), rows)
    assert group_tiles(sure).same_layout(Table.of([["orange-4", "orange-5", "orange-6", "orange-1"]]))  # as read


def test_set_context_never_re_reads_a_tile_as_a_joker() -> None:
    # a blurred red 9 read 8 in a group of 8s: the joker mends any set, so the set is no evidence for it
    read = row(["blue-8", "red-8", "red-9"], (300, 300)).with_(confidence=np.array([0.99, 0.99, 0.5]))
    rows = [{"blue-8": 0.99}, {"red-8": 0.99}, {"red-9": 0.5, "joker": 0.3, "orange-8": 0.1}]
    table = group_tiles(with_probabilities(read, rows))
    assert table.same_layout(Table.of([["blue-8", "red-8", "orange-8"]]))  # the next label that mends it
    rows[2] = {"red-9": 0.5, "joker": 0.45}
    assert group_tiles(with_probabilities(read, rows)).same_layout(Table.of([["blue-8", "red-8", "red-9"]]))


def test_set_context_can_be_switched_off() -> None:
    read = row(["black-13", "black-11", "black-12"], (300, 300)).with_(confidence=np.array([0.55, 0.99, 0.99]))
    table = group_tiles(with_probs(read, {0: ("black-10", 0.40)}), use_context=False)
    assert table.same_layout(Table.of([["black-13", "black-11", "black-12"]]))


def test_pieces_of_a_row_that_are_one_valid_set_are_joined_and_the_join_is_uncertain() -> None:
    pair = row(["blue-12", "orange-12"], (300, 300))
    apart = row(["black-12"], (300 + 2 * (TILE_W + 2) + 0.6 * TILE_W, 300))  # a gap of 0.6 tile widths
    table = group_tiles(Detections.merge([pair, apart]))
    assert table.same_layout(Table.of([["blue-12", "orange-12", "black-12"]]))
    assert table.uncertain == {(0, 1), (0, 2)}
    assert group_tiles(Detections.merge([pair, apart]), use_context=False).same_layout(
        Table.of([["blue-12", "orange-12"]], ["black-12"])
    )


def test_two_valid_sets_in_a_row_stay_two_and_an_invalid_join_stays_apart() -> None:
    first = row(["red-1", "red-2", "red-3"], (300, 300))
    second = row(["blue-7", "blue-8", "blue-9"], (300 + 3 * (TILE_W + 2) + 0.6 * TILE_W, 300))
    assert group_tiles(Detections.merge([first, second])) == Table.of(
        [["red-1", "red-2", "red-3"], ["blue-7", "blue-8", "blue-9"]]
    )
    stray = row(["orange-5"], (300 + 3 * (TILE_W + 2) + 0.6 * TILE_W, 300))
    table = group_tiles(Detections.merge([first, stray]))
    assert table.same_layout(Table.of([["red-1", "red-2", "red-3"]], ["orange-5"])) and not table.uncertain


def turned_round_at(detections: Detections, *indices: int) -> Detections:
    """``detections`` with the tiles at ``indices`` read half-way round (their up 180 degrees off)."""
    angle = np.asarray(detections.data["angle_deg"], np.float64).copy()
    angle[list(indices)] = (angle[list(indices)] + 180.0) % 360.0
    return detections.with_(angle_deg=angle)


@pytest.mark.parametrize("angle", [0, 90, 180, 270])
@pytest.mark.parametrize("index", [0, 2, 3])
def test_a_tile_read_half_way_round_in_its_row_is_read_with_the_row(angle: float, index: int) -> None:
    tiles = shuffled(turned_round_at(row(RUN, (300, 300), angle, jitter=2.0), index))
    table = group_tiles(tiles)
    assert table == Table.of([RUN])
    assert not table.uncertain  # a 5, 7 or 8 is the same tile either way up
    assert [p for p, extra in table.extras.items() if extra.get("turned_round")] == [(0, index)]


@pytest.mark.parametrize(("labels", "index"), [(RUN, 1), (["blue-8", "blue-9", "blue-10"], 1), (RUN[:3], 1)])
def test_a_6_or_9_read_half_way_round_in_its_row_is_uncertain(labels: list[str], index: int) -> None:
    table = group_tiles(turned_round_at(row(labels, (200, 200), 90), index))
    assert table.sets == Table.of([labels]).sets
    assert table.uncertain == {(0, index)}  # turned round, it would be the other number


def test_a_set_laid_the_other_way_round_end_to_end_with_another_stays_a_set_of_its_own() -> None:
    left = row(["red-3", "red-4", "red-5"], (100, 100))
    right = row(["blue-7", "blue-8", "blue-9"], (100 + 5 * 32, 100), 180)  # read right to left, 2 px after red-5
    table = group_tiles(shuffled(Detections.merge([left, right])))
    assert table == Table.of([["red-3", "red-4", "red-5"], ["blue-7", "blue-8", "blue-9"]])
    assert not any(extra.get("turned_round") for extra in table.extras.values())


def test_two_tiles_turned_apart_are_left_as_read() -> None:
    """Which of two is turned round nobody can say: both stay loose, as before."""
    table = group_tiles(turned_round_at(row(["red-3", "red-4"], (100, 100)), 1))
    assert table == Table.of([], ["red-3", "red-4"])


def test_a_row_whose_tiles_drift_across_it_as_a_tilted_camera_shows_them_is_one_set() -> None:
    """Each tile 0.4 of a height further across than the one before (perspective, a sloppy row): one run."""
    tiles = Detections.merge([row([label], (100 + i * 32, 100 + i * 0.4 * TILE_H)) for i, label in enumerate(RUN)])
    assert group_tiles(shuffled(tiles)) == Table.of([RUN])


def test_tiles_half_a_height_across_from_each_other_are_not_one_row() -> None:
    tiles = Detections.merge([row([label], (100 + i * 32, 100 + i * 0.5 * TILE_H)) for i, label in enumerate(RUN)])
    assert group_tiles(tiles) == Table.of([], RUN)


def test_a_run_whose_ups_are_read_25_degrees_off_its_upright_boxes_is_one_set() -> None:
    """Upright boxes read as turned 25 degrees (a tilted camera's tile is no turned rectangle): solved exactly, the
    tiles would be 16 px wide and 37 high, and the run would fall apart into gaps of 0.8 such widths."""
    boxes = [[100 + i * 32, 100, 100 + i * 32 + TILE_W, 100 + TILE_H] for i in range(len(RUN))]
    tiles = Detections.of_boxes(boxes, [0.99] * len(RUN), RUN, angle_deg=[25.0] * len(RUN))
    assert group_tiles(shuffled(tiles)) == Table.of([RUN])
