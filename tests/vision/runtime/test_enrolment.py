"""Enrolment: the readings checked against the grid, the command and its model folder used by
``read``/``check --models`` (the grid fitted to detections: ``test_enrolgrid.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from tests.vision.conftest import needs_features
from vision.cli import main
from vision.runtime import enrolment
from vision.runtime.enrolgrid import NUMBER_CELLS, Cell, EnrolmentError
from vision.runtime.enrolhead import HEAD_FILE, EnrolmentHead
from vision.runtime.enrolment import check_readings
from vision.runtime.models import float_weights
from vision.runtime.recognition import CLASSIFIER_FILE, DETECTOR_FILE, TileReader, default_models_dir

EVERY_CELL = [*NUMBER_CELLS, Cell(5, 1), Cell(5, 2)]


def probs_reading(cells: list[Cell], labels: list[str], confidence: float = 0.95) -> np.ndarray:
    probs = np.full((len(cells), len(ALL_LABELS)), (1 - confidence) / (len(ALL_LABELS) - 1), np.float32)
    for i, label in enumerate(labels):
        probs[i, ALL_LABELS.index(label)] = confidence
    return probs


def test_readings_that_differ_are_reported_not_refused() -> None:
    """An unfamiliar set is misread (a whole blue row read black, confidently): reported, never a refusal."""
    labels = [c.label.replace("blue", "black") for c in EVERY_CELL]
    differ, mistakes = check_readings(EVERY_CELL, probs_reading(EVERY_CELL, labels))
    assert len(differ) == 13 and mistakes == []
    assert differ[0].describe() == "row 3 (blue), column 1: blue-1 read as black-1 (0.95)"


def test_rows_laid_in_another_order_are_refused() -> None:
    swap = {"red": "blue", "blue": "red"}
    labels = [c.label if c.row == 5 else f"{swap.get(c.label.split('-')[0], c.label.split('-')[0])}-{c.column}"
              for c in EVERY_CELL]  # fmt: skip
    _, mistakes = check_readings(EVERY_CELL, probs_reading(EVERY_CELL, labels))
    assert any(m.startswith("rows 2 and 3 look swapped") for m in mistakes)


def test_a_row_laid_backwards_and_two_swapped_tiles_are_refused() -> None:
    labels = [f"orange-{14 - c.column}" if c.row == 4 else c.label for c in EVERY_CELL]
    labels[EVERY_CELL.index(Cell(1, 2))], labels[EVERY_CELL.index(Cell(1, 5))] = "black-5", "black-2"
    _, mistakes = check_readings(EVERY_CELL, probs_reading(EVERY_CELL, labels))
    assert "row 4 (orange) reads 13 to 1: lay each row out 1 to 13 from the left" in mistakes
    assert "row 1 (black), column 2 and row 1 (black), column 5 look swapped (black-2 and black-5)" in mistakes


# -- with the models ------------------------------------------------------------------------------------------


def test_a_rendered_grid_with_a_tile_missing_is_refused_by_place(grid_photos: dict[str, Path]) -> None:
    needs_features()
    reader = TileReader(not_a_tile=0.0)
    enrolment.locate_photo(reader, grid_photos["whole"], trust_grid=False)  # the whole grid matches
    with pytest.raises(EnrolmentError, match=r"row 2 \(red\), column 7: no tile found"):
        enrolment.locate_photo(reader, grid_photos["missing"], trust_grid=False)


def test_enrol_writes_a_model_folder_that_read_uses(
    grid_photos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    needs_features()
    monkeypatch.setattr(enrolment, "TRAIN_ROUNDS", 3)
    monkeypatch.setattr(enrolment, "HOLDOUT_ROUNDS", 1)
    out = tmp_path / "venue"
    assert main(["enrol", str(grid_photos["whole"]), "--out", str(out), "--adapt", "head", "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["adaptation"] == "head" and card["tiles_enrolled"] == 54 and card["photos"][0]["name"] == "whole.jpg"
    assert {"before", "after"} <= set(card["figures"]["holdout"])
    for name in (DETECTOR_FILE, CLASSIFIER_FILE, HEAD_FILE, enrolment.CARD_JSON, enrolment.CARD_MARKDOWN):
        assert (out / name).is_file()
    shipped = default_models_dir() / CLASSIFIER_FILE  # INT8: its float weights go with it, to enrol from out again
    assert float_weights(out / CLASSIFIER_FILE).read_bytes() == float_weights(shipped).read_bytes()
    assert TileReader(out).classifier.head is not None
    assert main(["read", str(grid_photos["whole"]), "--models", str(out)]) == 0


def test_without_torch_enrol_fits_a_head_and_says_so(
    grid_photos: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """The runtime alone (no train extra): the numpy head, with a warning that names what adapts the network; asking
    for the network is a one-line error."""
    needs_features()
    from vision.train import enrolnet

    monkeypatch.setattr(enrolnet, "torch_available", lambda: False)
    monkeypatch.setattr(enrolment, "TRAIN_ROUNDS", 2)
    monkeypatch.setattr(enrolment, "HOLDOUT_ROUNDS", 1)
    photo = str(grid_photos["whole"])
    assert main(["enrol", photo, "--out", str(tmp_path / "net"), "--adapt", "network"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "adapting the network needs torch and onnx" in err
    assert main(["enrol", photo, "--out", str(tmp_path / "venue"), "--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["adaptation"] == "head" and "network" not in card
    assert any(w.startswith("torch is not installed: only a head") for w in card["warnings"])


def joker_folder(tmp_path: Path) -> Path:
    """The shipped models with a head that reads every tile as a joker."""
    folder = tmp_path / "jokers"
    folder.mkdir()
    for name in (DETECTOR_FILE, CLASSIFIER_FILE):
        shutil.copyfile(default_models_dir() / name, folder / name)
    bias = np.full(len(ALL_LABELS), -10.0, np.float32)
    bias[ALL_LABELS.index("joker")] = 10.0
    EnrolmentHead(np.zeros((len(ALL_LABELS), 192), np.float32), bias).save(folder / HEAD_FILE)
    return folder


def test_read_and_check_take_an_enrolled_folder(
    grid_photos: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    needs_features()
    folder = joker_folder(tmp_path)
    assert main(["read", str(grid_photos["whole"]), "--models", str(folder), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    labels = [t["label"] if isinstance(t, dict) else t for s in table["sets"] for t in s] + list(table["loose"])
    labels = [x["label"] if isinstance(x, dict) else x for x in labels]
    assert labels and set(labels) == {"joker"}
    photo = str(grid_photos["whole"])
    assert main(["check", photo, photo, "--opened", "--models", str(tmp_path / "nowhere")]) == 2
    assert "nowhere/tile-detector.onnx: model file not found" in capsys.readouterr().err


def test_bad_input_is_one_line_and_exit_2(
    grid_photos: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["enrol", "--out", str(tmp_path / "x")]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    (tmp_path / "file").write_text("x")
    assert main(["enrol", str(grid_photos["whole"]), "--out", str(tmp_path / "file")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("keep me")
    assert main(["enrol", str(grid_photos["whole"]), "--out", str(busy)]) == 2
    assert "not empty and not an enrolled model folder" in capsys.readouterr().err
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for name in (DETECTOR_FILE, CLASSIFIER_FILE):
        shutil.copyfile(default_models_dir() / name, damaged / name)
    (damaged / HEAD_FILE).write_bytes(b"not a head")
    assert main(["read", str(grid_photos["whole"]), "--models", str(damaged)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{HEAD_FILE}: cannot load the enrolment head" in err


def test_layout_prints_the_grid(capsys: pytest.CaptureFixture) -> None:
    assert main(["enrol", "--layout"]) == 0
    text = capsys.readouterr().out
    assert "row 2 red       1   2   3" in text and "row 5 jokers    J   J" in text


def test_the_head_keeps_its_temperature_and_the_not_a_tile_rule_weighs_before_it(tmp_path: Path) -> None:
    from vision.runtime.detections import Detections
    from vision.runtime.recognition import tile_likelihood

    rng = np.random.default_rng(0)
    head = EnrolmentHead(
        rng.normal(0, 1, (len(ALL_LABELS), 8)).astype(np.float32) / 2, np.zeros(len(ALL_LABELS), np.float32), 2.0
    )
    head.save(tmp_path / HEAD_FILE)
    loaded = EnrolmentHead.load(tmp_path / HEAD_FILE, len(ALL_LABELS))
    assert loaded.temperature == 2.0
    features = rng.normal(0, 3, (5, 8)).astype(np.float32)
    assert (loaded.tile_confidence(features) > loaded.probs(features).max(axis=1)).all()
    tiles = Detections.of_boxes(np.tile([0.0, 0.0, 10.0, 10.0], (5, 1)), np.ones(5)).with_(
        confidence=np.full(5, 0.2), detector_confidence=np.ones(5), tile_confidence=np.full(5, 0.9)
    )
    assert np.allclose(tile_likelihood(tiles), 0.9)


def test_a_tile_the_two_heads_read_differently_is_doubted_with_its_label_kept() -> None:
    from vision.runtime.enrolhead import APART_CONFIDENCE, softmax

    rng = np.random.default_rng(1)
    head = EnrolmentHead(
        rng.normal(0, 1, (len(ALL_LABELS), 8)).astype(np.float32), np.zeros(len(ALL_LABELS), np.float32)
    )
    features = rng.normal(0, 4, (40, 8)).astype(np.float32)
    plain = head.probs(features)
    own = plain.copy()  # the classifier's own head: agrees on the first 20 crops, names another label on the rest
    own[20:] = softmax(np.roll(np.log(plain[20:]), 1, axis=1))
    read = head.read(features, own)
    assert np.allclose(read[:20], plain[:20])  # the heads agree: the enrolled head's reading, unchanged
    assert (read[20:].argmax(axis=1) == plain[20:].argmax(axis=1)).all()  # they disagree: its label kept ...
    assert (read[20:].max(axis=1) <= APART_CONFIDENCE + 1e-4).all()  # ... doubted
    confident = plain[20:].max(axis=1) > APART_CONFIDENCE
    assert confident.sum() >= 10 and np.allclose(read[20:][confident].max(axis=1), APART_CONFIDENCE, atol=1e-3)
    assert np.allclose(read.sum(axis=1), 1, atol=1e-5)


def test_a_familiar_tile_both_heads_agree_on_is_as_sure_as_the_less_sure_untempered_head() -> None:
    from vision.runtime.enrolhead import VOUCHED, softmax

    rng = np.random.default_rng(2)
    weight = rng.normal(0, 1, (len(ALL_LABELS), 8)).astype(np.float32)
    head = EnrolmentHead(weight / 2.3, np.zeros(len(ALL_LABELS), np.float32), 2.3)  # a cautious temperature
    features = rng.normal(0, 4, (30, 8)).astype(np.float32)
    untempered = softmax(features @ weight.T)
    own = untempered.copy()  # the classifier's own head: the same labels, at 0.95 where it is surer than that
    own = np.where(own.max(axis=1, keepdims=True) > 0.95, own * 0.95 / own.max(axis=1, keepdims=True), own)
    familiar = np.arange(30) < 20
    read = head.read(features, own, familiar)
    tempered = head.probs(features)
    sure = np.minimum(own.max(axis=1), untempered.max(axis=1))
    assert (read.argmax(axis=1) == tempered.argmax(axis=1)).all()
    vouched = np.where(sure >= VOUCHED, sure, 0)
    assert np.allclose(read[:20].max(axis=1), np.maximum(vouched[:20], tempered[:20].max(axis=1)), atol=1e-5)
    assert (read[:20].max(axis=1) > tempered[:20].max(axis=1) + 0.05).sum() >= 5  # lifted
    assert (vouched[:20] == 0).sum() >= 3  # and some not: the two heads not sure enough
    assert np.allclose(read[20:], tempered[20:])  # unfamiliar: the tempered reading
    assert np.allclose(read.sum(axis=1), 1, atol=1e-5)


def test_an_adapted_classifier_is_weighed_with_the_one_it_started_from(tmp_path: Path) -> None:
    """A folder whose classifier enrolment adapted keeps the classifier it started from (``tile-classifier-base.onnx``):
    the head's label is doubted where that one reads the tile otherwise, not where the adapted one does."""
    from tests.vision.conftest import build_classifier
    from vision.runtime.classifier import OnnxTileClassifier
    from vision.runtime.detections import Detections
    from vision.runtime.enrolhead import APART_CONFIDENCE
    from vision.runtime.models import BASE_CLASSIFIER_FILE

    needs_features()
    folder = tmp_path / "adapted"
    folder.mkdir()
    shutil.copyfile(default_models_dir() / CLASSIFIER_FILE, folder / CLASSIFIER_FILE)
    bias = np.full(len(ALL_LABELS), -10.0, np.float32)
    bias[ALL_LABELS.index("red-5")] = 10.0  # the head reads every tile red-5
    EnrolmentHead(np.zeros((len(ALL_LABELS), 192), np.float32), bias).save(folder / HEAD_FILE)
    build_classifier(folder / BASE_CLASSIFIER_FILE)  # the stand-in reads a red crop red-5 too
    red = np.zeros((1, 64, 64, 3), np.uint8)
    red[..., 2] = 220  # BGR
    tile = Detections.of_boxes(np.array([[0.0, 0.0, 64.0, 64.0]]), np.ones(1))
    weighed = OnnxTileClassifier(folder / CLASSIFIER_FILE).classify_crops(red, tile)
    assert weighed.labels == ["red-5"] and float(weighed.confidence[0]) > 0.99  # both say red-5
    (folder / BASE_CLASSIFIER_FILE).unlink()  # weighed with the adapted one's own reading: not red-5
    alone = OnnxTileClassifier(folder / CLASSIFIER_FILE).classify_crops(red, tile)
    assert alone.labels == ["red-5"] and float(alone.confidence[0]) <= APART_CONFIDENCE + 1e-6
