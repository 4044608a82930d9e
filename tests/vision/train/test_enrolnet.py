"""Enrolment that adapts the network (the train extra): the model folder it writes and what the network learns."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.vision.conftest import needs_features
from vision.cli import main
from vision.runtime import enrolment
from vision.runtime.enrolcrops import EnrolledPhoto, network_frames
from vision.runtime.enrolhead import HEAD_FILE, EnrolmentHead
from vision.runtime.familiarity import FAMILIARITY_FILE, file_sha256
from vision.runtime.models import BASE_CLASSIFIER_FILE, float_weights
from vision.runtime.recognition import CLASSIFIER_FILE, TileReader, default_models_dir
from vision.train import enrolnet

pytest.importorskip("torch", reason="the train extra adapts the network")
pytest.importorskip("onnx", reason="the train extra adapts the network")


@pytest.fixture
def short_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(enrolnet, "EPOCHS", 2)
    monkeypatch.setattr(enrolnet, "ROUNDS_PER_EPOCH", 4)
    monkeypatch.setattr(enrolment, "HOLDOUT_ROUNDS", 2)


def test_enrol_adapts_the_network_into_a_folder_read_uses(
    grid_photos: dict[str, Path], tmp_path: Path, short_training: None, capsys: pytest.CaptureFixture
) -> None:
    needs_features()
    out = tmp_path / "venue"
    assert main(["enrol", str(grid_photos["whole"]), "--out", str(out), "--json"]) == 0  # the default with torch
    card = json.loads(capsys.readouterr().out)
    assert card["adaptation"] == "network" and card["tiles_enrolled"] == 54
    network = card["network"]
    assert network["epochs"] == 2 and network["steps"] > 0 and network["export_max_diff"] < 1e-3
    shipped = default_models_dir() / CLASSIFIER_FILE
    assert network["base_classifier_sha256"] == file_sha256(shipped)
    assert (out / CLASSIFIER_FILE).read_bytes() != shipped.read_bytes()
    # the classifier it started from stays beside it, with the statistics that describe that one
    assert (out / BASE_CLASSIFIER_FILE).read_bytes() == shipped.read_bytes()
    assert float_weights(out / BASE_CLASSIFIER_FILE).read_bytes() == float_weights(shipped).read_bytes()
    assert not float_weights(out / CLASSIFIER_FILE).exists()  # the adapted classifier is float itself
    assert (out / FAMILIARITY_FILE).read_bytes() == (default_models_dir() / FAMILIARITY_FILE).read_bytes()
    classifier_card = json.loads((out / "tile-classifier.json").read_text())
    assert classifier_card["temperature"] == card["head"]["temperature"]
    assert classifier_card["enrolment"]["base_classifier_sha256"] == network["base_classifier_sha256"]
    # the head is the adapted network's own label layer: the same labels as its probs, at the same temperature
    reader = TileReader(out)
    head = reader.classifier.head
    assert isinstance(head, EnrolmentHead) and head.temperature == card["head"]["temperature"]
    assert reader.classifier.base_path == out / BASE_CLASSIFIER_FILE
    tiles = reader.read(cv2.imread(str(grid_photos["whole"]))).detections
    assert len(tiles) >= 50
    own = np.asarray(tiles.data["probs"])
    assert np.array_equal(own.argmax(axis=1), head.probs(np.asarray(tiles.data["features"])).argmax(axis=1))
    holdout = card["figures"]["holdout"]
    assert holdout["after"]["accuracy"] >= holdout["before"]["accuracy"]
    assert main(["read", str(grid_photos["whole"]), "--models", str(out)]) == 0
    assert (out / HEAD_FILE).is_file()


def test_the_network_learns_what_the_grid_says_not_what_it_read(grid_photos: dict[str, Path], tmp_path: Path) -> None:
    """Labels the shipped network disagrees with everywhere (every black tile labelled as the red of its number) are
    learnt within a short training: a network that did not train, or trained on other labels, fails."""
    needs_features()
    reader = TileReader(not_a_tile=0.0)
    photo = enrolment.locate_photo(reader, grid_photos["whole"], trust_grid=False)
    labels = photo.labels.copy()
    black = np.array([enrolment.ALL_LABELS[i].startswith("black-") for i in labels])
    labels[black] = [enrolment.LABEL_INDEX[enrolment.ALL_LABELS[i].replace("black", "red")] for i in labels[black]]
    relabelled = EnrolledPhoto(
        photo.path, photo.sha256, photo.image, photo.boxes, labels, photo.angles_deg, photo.differ
    )
    rng = np.random.default_rng(1)
    adapted = enrolnet.adapt_network(
        default_models_dir() / CLASSIFIER_FILE,
        lambda _epoch: network_frames([relabelled], rng, 6, degrade_small=False),  # the learning, in 4 short epochs
        epochs=4,
        learning_rate=1e-3,
    )
    held = network_frames([relabelled], np.random.default_rng(2), 2, degrade_small=False)
    _, logits = adapted.features(held.tiles)
    read = logits.argmax(axis=1)
    was_black = np.tile(black, 2)
    assert (read[was_black] == held.labels[was_black]).mean() >= 0.8  # 13 black tiles now read red
    assert (read[~was_black] == held.labels[~was_black]).mean() >= 0.8  # and the rest still read as before
