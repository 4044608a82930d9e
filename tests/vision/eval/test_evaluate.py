"""Evaluation: per-image rows, headline numbers computed from the rows, the rules engine as a check."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from vision.eval.evaluate import (
    DatasetError,
    Row,
    Sample,
    SetFigures,
    evaluate,
    folder_name,
    format_summary,
    group_summaries,
    impossible_reads,
    load_yolo_folder,
    match,
    score_image,
    score_sets,
    score_table_labels,
    summarize,
    washed_out,
    write_csv,
)
from vision.runtime.detections import Detections
from vision.runtime.reader import Reading, ReadTimings


def row(n_true: int, n_pred: int, tp: int, correct: int, ms: float, pairs=(), predicted=()) -> Row:
    return Row("x.jpg", n_true, n_pred, tp, n_pred - tp, n_true - tp, correct, correct,
               correct == n_true == n_pred, ms, tuple(pairs), tuple(predicted))  # fmt: skip


def test_headline_numbers_come_from_the_rows() -> None:
    rows = [
        row(4, 4, 4, 4, 10.0, [("red-1", "red-1")] * 4),  # perfect
        row(4, 3, 3, 2, 20.0, [("red-1", "red-1")] * 2 + [("blue-6", "blue-9")]),  # one missed, one misread
        row(2, 3, 1, 1, 60.0, [("joker", "joker")]),  # one missed, two extra boxes
    ]
    summary = summarize(rows)
    assert summary["detection"] == {"precision": round(8 / 10, 4), "recall": round(8 / 10, 4)}
    assert summary["label_accuracy"] == round(7 / 8, 4)
    precision, recall = 7 / 10, 7 / 10
    assert summary["end_to_end"] == {"precision": 0.7, "recall": 0.7, "f1": round(2 * precision * recall / 1.4, 4)}
    assert summary["perfect_images"] == round(1 / 3, 4)
    assert summary["ms"] == {"mean": 30.0, "median": 20.0}
    assert summary["top_confusions"] == [{"true": "blue-6", "predicted": "blue-9", "count": 1}]
    matrix = np.array(summary["confusion"]["matrix"])
    assert matrix.shape == (53, 53) and matrix.sum() == 8
    assert matrix[ALL_LABELS.index("blue-6"), ALL_LABELS.index("blue-9")] == 1


def test_no_rows_give_no_ratios_rather_than_errors() -> None:
    summary = summarize([])
    assert summary["images"] == 0 and summary["detection"]["precision"] is None and summary["ms"]["mean"] is None


def test_impossible_reads_count_images_with_too_many_copies() -> None:
    rows = [
        row(3, 3, 3, 3, 1, predicted=["red-1", "red-1", "joker"]),  # two copies: possible
        row(3, 3, 3, 3, 1, predicted=["red-1", "red-1", "red-1"]),  # three red-1s: impossible
        row(3, 3, 3, 3, 1, predicted=["joker", "joker", "joker"]),  # three jokers: impossible
    ]
    assert impossible_reads(rows) == 2
    assert impossible_reads(rows, profile="official-6p") == 0  # three copies and four jokers in the big set


def test_matching_is_greedy_by_confidence() -> None:
    truth = np.array([[0, 0, 10, 10], [100, 100, 110, 110]], np.float32)
    # Both predictions overlap the first tile; the more confident one gets it, the other is a false positive.
    predicted = Detections.of_boxes([[1, 0, 11, 10], [0, 0, 10, 10], [200, 200, 210, 210]], [0.6, 0.9, 0.5])
    assert match(truth, predicted) == [(0, 1)]


def test_score_image_counts_boxes_and_labels() -> None:
    sample = Sample(Path("a.jpg"), ("red-1", "red-2"), np.array([[0, 0, 10, 10], [20, 0, 30, 10]], np.float32))
    predicted = Detections.of_boxes([[0, 0, 10, 10], [20, 0, 30, 10]], [0.9, 0.9], ["red-1", "red-3"])
    result = score_image(sample, predicted, 12.5)
    assert (result.tp, result.fp, result.fn, result.label_correct, result.perfect) == (2, 0, 0, 1, False)
    assert result.pairs == (("red-1", "red-1"), ("red-2", "red-3"))


def test_a_label_box_drawn_off_its_tile_matches_at_a_lower_iou() -> None:
    sample = Sample(Path("a.jpg"), ("red-1",), np.array([[0, 0, 10, 10]], np.float32))
    predicted = Detections.of_boxes([[4, 0, 14, 10]], [0.9], ["red-1"])  # IoU 6/14 = 0.43
    strict, tolerant = score_image(sample, predicted, 1.0), score_image(sample, predicted, 1.0, iou=0.4)
    assert (strict.tp, strict.fp, strict.fn) == (0, 1, 1) and (tolerant.tp, tolerant.fp, tolerant.fn) == (1, 0, 0)


def test_a_tile_washed_white_is_told_from_a_faint_one_by_its_pixels() -> None:
    rng = np.random.default_rng(0)
    image = np.clip(rng.normal(250, 1.5, (40, 200, 3)), 0, 255).astype(np.uint8)  # a glare spot, camera noise
    image[:, 150:] = 120  # a grey cloth beside it
    image[15:25, 58:62] = 30  # a black digit in the glare
    image[15:25, 98:102] = (255, 255, 225)  # a digit lifted nearly white, yet 25+ levels from its body
    boxes = np.array([[10, 5, 30, 35], [50, 5, 70, 35], [90, 5, 110, 35], [160, 5, 180, 35]], np.float32)
    # white on white; a digit that shows; a faint digit that still shows; flat but grey, not washed
    assert washed_out(image, boxes).tolist() == [True, False, False, False]
    assert washed_out(image, np.zeros((0, 4), np.float32)).tolist() == []


def test_tiles_washed_out_count_as_missed_and_are_left_out_of_the_visible_figures() -> None:
    boxes = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 70, 10]], np.float32)
    sample = Sample(Path("a.jpg"), ("red-1", "red-2", "red-3", "red-4"), boxes)
    # red-1 and red-2 found and read right; red-3 washed out, found and misread; red-4 washed out, not found
    predicted = Detections.of_boxes(boxes[:3], [0.9, 0.9, 0.4], ["red-1", "red-2", "red-5"])
    row = score_image(sample, predicted, 1.0, washed=np.array([False, False, True, True]))
    assert (row.tp, row.fn, row.washed_out, row.washed_found, row.washed_right) == (3, 1, 2, 1, 0)
    assert score_image(sample, predicted, 1.0).washed_out == 0  # no flags: none washed out
    summary = summarize([row])
    assert summary["detection"]["recall"] == 0.75 and summary["end_to_end"]["recall"] == 0.5
    # without red-3 and red-4 (and the box matched to red-3): 2 tiles, both found and read right
    assert summary["visible"] == {
        "tiles": 2, "washed_out": 2, "detection_recall": 1.0, "detection_precision": 1.0, "f1": 1.0
    }  # fmt: skip
    assert "without the 2 tiles washed white by glare" in format_summary(summary)
    group = summary["groups"][-1]
    assert (group["washed_out"], group["visible_detection_recall"], group["visible_f1"]) == (2, 1.0, 1.0)


class FixedReader:
    """Reads every image as the same two tiles, leaving one box out, in 3 + 2 + 1 + 0.5 ms by its own clock."""

    def read(self, image: np.ndarray, *, region: object = None) -> Reading:
        return Reading(
            Detections.of_boxes([[10, 10, 30, 40], [40, 10, 60, 40]], [0.9, 0.8], ["black-1", "red-7"]),
            left_out=Detections.of_boxes([[70, 10, 90, 40]], [0.05], ["joker"]),
            timings=ReadTimings(detect_ms=3.0, classify_ms=2.0, colour_ms=1.0, familiarity_ms=0.5),
        )

    def check_models(self) -> None:
        pass


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "ds" / "valid"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    # Class names one level up, as Roboflow exports them, spelt the dataset's way.
    (tmp_path / "ds" / "data.yaml").write_text("names: [black_1, red-7, tile]\n")
    for name in ("a", "b"):
        cv2.imwrite(str(root / "images" / f"{name}.jpg"), np.zeros((80, 100, 3), np.uint8))
    # a: one plain box and one polygon, both right; b: one tile with the dataset's non-tile class.
    (root / "labels" / "a.txt").write_text("0 0.2 0.3125 0.2 0.375\n1 0.4 0.125 0.6 0.125 0.6 0.5 0.4 0.5\n")
    (root / "labels" / "b.txt").write_text("2 0.2 0.3125 0.2 0.375\n")
    return root


def test_evaluate_a_yolo_folder(dataset: Path, tmp_path: Path) -> None:
    samples = load_yolo_folder(dataset)
    assert samples[0].labels == ("black-1", "red-7")
    np.testing.assert_allclose(samples[0].boxes, [[10, 10, 30, 40], [40, 10, 60, 40]], atol=1e-4)
    rows, summary = evaluate(FixedReader(), dataset)
    assert summary["match_iou"] == 0.5
    assert [(r.tp, r.fp, r.fn, r.e2e_tp, r.perfect) for r in rows] == [(2, 0, 0, 2, True), (1, 1, 0, 0, False)]
    assert summary["images"] == 2 and summary["perfect_images"] == 0.5
    # the reader's own timings by step and the boxes it left out, per row and in the summary
    assert [(r.left_out, r.detect_ms, r.classify_ms, r.colour_ms, r.familiarity_ms) for r in rows] == [
        (1, 3.0, 2.0, 1.0, 0.5)
    ] * 2
    assert summary["left_out"] == 2
    assert summary["step_ms_median"] == {"detect": 3.0, "classify": 2.0, "colour": 1.0, "familiarity": 0.5}
    said = "median ms by step: detect 3.0, classify 2.0, colour 1.0, familiarity 0.5; boxes left out as not tiles 2"
    assert said in format_summary(summary)
    write_csv(rows, tmp_path / "rows.csv")
    with open(tmp_path / "rows.csv", newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [r["perfect"] for r in written] == ["True", "False"] and [r["left_out"] for r in written] == ["1", "1"]


def test_a_folder_without_images_or_names_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no images/ folder"):
        load_yolo_folder(tmp_path)
    (tmp_path / "images").mkdir()
    with pytest.raises(DatasetError, match="no class names"):
        load_yolo_folder(tmp_path)


def test_confident_wrong_labels_and_whole_colour_flips_are_counted() -> None:
    boxes = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [60, 0, 70, 10]], np.float32)
    sample = Sample(Path("a.jpg"), ("blue-1", "blue-2", "red-3", "joker"), boxes)
    # Both blue tiles read black (one at 0.98, one at 0.5): a colour flipped wholesale, one confident error.
    predicted = Detections.of_boxes(boxes, [0.98, 0.5, 0.99, 0.9], ["black-1", "black-2", "red-3", "joker"])
    result = score_image(sample, predicted, 1.0)
    assert (result.confident_wrong, result.colour_flipped) == (1, True)
    # One blue of three read black is a misread, not a flipped colour.
    sample3 = Sample(Path("b.jpg"), ("blue-1", "blue-2", "blue-3"), boxes[:3])
    misread = Detections.of_boxes(boxes[:3], [0.9, 0.9, 0.9], ["black-1", "blue-2", "blue-3"])
    assert (score_image(sample3, misread, 1.0).confident_wrong, score_image(sample3, misread, 1.0).colour_flipped) == (
        1,
        False,
    )
    # Numbers read as jokers are misread shapes, not a flipped colour.
    jokers = Detections.of_boxes(boxes[:3], [0.9, 0.9, 0.9], ["joker", "joker", "blue-3"])
    assert not score_image(sample3, jokers, 1.0).colour_flipped
    summary = summarize([result])
    assert summary["confident_wrong"] == {"count": 1, "share_of_tiles": 0.25} and summary["colour_flipped_images"] == 1


def test_synthetic_images_are_grouped_by_edition_and_others_by_folder(dataset: Path) -> None:
    """A sidecar naming style.edition puts its image in that edition's group; an image without one (or a sidecar
    without a style) falls in the folder's group ("ds": a split folder such as valid/ is named by its parent)."""
    (dataset / "meta").mkdir()
    (dataset / "meta" / "a.json").write_text(json.dumps({"style": {"edition": "classic"}}))
    rows, summary = evaluate(FixedReader(), dataset)
    assert [r.group for r in rows] == ["classic", "ds"]
    groups = {g["group"]: g for g in summary["groups"]}
    assert list(groups) == ["classic", "ds", "all"]
    assert (groups["classic"]["images"], groups["classic"]["f1"], groups["classic"]["detection_recall"]) == (
        1,
        1.0,
        1.0,
    )
    assert (groups["ds"]["tiles"], groups["ds"]["f1"], groups["ds"]["detection_precision"]) == (1, 0.0, 0.5)
    assert groups["all"]["images"] == 2 and groups["all"]["f1"] == summary["end_to_end"]["f1"]
    text = format_summary(summary)
    assert text.splitlines()[0].startswith("images 2") and "\nclassic " in text and "\nall " in text
    (dataset / "meta" / "b.json").write_text(json.dumps({"style": {"name": "an old style"}}))  # before editions
    assert [r.group for r in evaluate(FixedReader(), dataset)[0]] == ["classic", "legacy"]
    (dataset / "meta" / "b.json").write_text(json.dumps({"style": {"edition": "classic~travel@0.49"}}))  # a blend
    assert [r.group for r in evaluate(FixedReader(), dataset)[0]] == ["classic", "mix"]


class RunReader:
    """Reads every image as three touching tiles in a row (``labels``), the last one at confidence ``last``."""

    def __init__(self, labels: tuple[str, ...] = ("red-1", "red-2", "red-3"), last: float = 0.9) -> None:
        self.labels, self.last = labels, last

    def read(self, image: np.ndarray, *, region: object = None) -> Reading:
        boxes = [[10, 10, 30, 40], [32, 10, 52, 40], [54, 10, 74, 40]]
        found = Detections.of_boxes(boxes, [0.9, 0.9, self.last], list(self.labels))
        return Reading(found.with_(angle_deg=np.zeros(3)))

    def check_models(self) -> None:
        pass


def test_the_sets_laid_on_a_synthetic_table_are_scored_as_a_table_the_reading_groups(dataset: Path) -> None:
    """A sidecar's valid sets that the photo shows whole are counted, and held whole when the table read from the
    photo holds them tile for tile (either way round); invalid sets in that table with no tile uncertain are counted
    too; a sidecar's invalid sets, sets with a tile hidden and images without a sidecar count for nothing."""
    (dataset / "meta").mkdir()
    laid = [
        {"id": 0, "labels": ["red-3", "red-2", "red-1"], "valid": True},  # read the other way round: whole
        {"id": 1, "labels": ["blue-5", "blue-6", "blue-7"], "valid": True},  # not read
        {"id": 2, "labels": ["red-1", "blue-2"], "valid": False},
        {"id": 3, "labels": ["black-4", "black-5", "black-6"], "valid": True},  # a tile hidden: never read whole
    ]
    shown = [(0, True)] * 3 + [(1, True)] * 3 + [(2, True)] * 2 + [(3, True), (3, False), (3, True)]
    tiles = [{"kind": "set", "set_id": i, "readable": readable} for i, readable in shown]
    tiles.append({"kind": "rack", "set_id": -1, "readable": True})
    sidecar = {"style": {"edition": "classic"}, "sets": laid, "tiles": tiles}
    (dataset / "meta" / "a.json").write_text(json.dumps(sidecar))
    assert load_yolo_folder(dataset)[0].sets == (("red-3", "red-2", "red-1"), ("blue-5", "blue-6", "blue-7"))
    rows, summary = evaluate(RunReader(), dataset)
    assert [(r.sets_true, r.sets_whole, r.sets_invalid_confident) for r in rows] == [(2, 1, 0), (0, 0, 0)]
    assert summary["sets"] == {"laid": 2, "read_whole": 1, "share": 0.5, "invalid_confident": 0}
    assert "1 of the 2 valid sets laid read whole (50.0%)" in format_summary(summary)
    misread = RunReader(("red-3", "red-2", "blue-1"))  # one tile misread: the run is held neither whole nor valid
    (row_a, row_b), summary = evaluate(misread, dataset)
    assert (row_a.sets_whole, row_a.sets_invalid_confident, row_b.sets_invalid_confident) == (0, 1, 0)
    assert evaluate(RunReader(("red-3", "red-2", "blue-1"), last=0.5), dataset)[1]["sets"]["invalid_confident"] == 0


def test_two_copies_of_a_set_laid_need_two_sets_read() -> None:
    from vision.runtime.tables import PHOTO, read_table

    table = read_table(RunReader().read(np.zeros((80, 100, 3), np.uint8)), PHOTO).table
    run = ("red-1", "red-2", "red-3")
    assert score_sets([run, run[::-1]], table) == SetFigures(laid=2, whole=1, invalid_confident=0)


def test_the_labels_as_read_are_the_tables_where_a_tile_breaking_its_set_is_re_read() -> None:
    from vision.runtime.tables import PHOTO, read_table

    boxes = [[10, 10, 30, 40], [32, 10, 52, 40], [54, 10, 74, 40]]
    sample = Sample(Path("a.jpg"), ("red-1", "red-2", "red-3"), np.asarray(boxes, np.float32))
    probs = np.zeros((3, len(ALL_LABELS)), np.float32)
    for i, name, p in [(0, "red-1", 0.99), (1, "red-2", 0.99), (2, "red-8", 0.6), (2, "red-3", 0.35)]:
        probs[i, ALL_LABELS.index(name)] = p
    found = Detections.of_boxes(boxes, [0.99, 0.99, 0.6], ["red-1", "red-2", "red-8"])
    table = read_table(Reading(found.with_(angle_deg=np.zeros(3), probs=probs)), PHOTO).table
    assert [str(tile) for tile in table.tiles()] == ["red-1", "red-2", "red-3"]  # the run re-reads its last tile
    assert score_table_labels(sample, table) == (3, 3)
    assert score_table_labels(sample, read_table(Reading(found[:0]), PHOTO).table) == (0, 0)
    row = replace(score_image(sample, found, 1.0), table_tiles=3, table_right=3)
    summary = summarize([row])
    assert summary["end_to_end"]["f1"] == 0.6667 and summary["as_read"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert "as read       precision 100.0%  recall 100.0%  F1 100.0%" in format_summary(summary)
    assert summarize([row])["groups"][-1]["as_read_f1"] == 1.0


def test_a_folder_without_sidecars_is_one_group_named_after_it(tmp_path: Path) -> None:
    assert folder_name(tmp_path / "rummikub-nvypk-train") == "rummikub-nvypk-train"
    assert folder_name(tmp_path / "club-photos" / "valid") == "club-photos"
    groups = group_summaries(
        [replace(row(2, 2, 2, 2, 5.0), group="club-photos"), replace(row(2, 1, 1, 1, 7.0), group="club-photos")]
    )
    assert [(g.group, g.images, g.tiles, g.detection_recall) for g in groups] == [
        ("club-photos", 2, 4, 0.75),
        ("all", 2, 4, 0.75),
    ]
