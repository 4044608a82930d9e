"""The second look (:mod:`vision.runtime.secondlook`): doubtful tiles cut again a few ways, probabilities averaged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from tests.vision.runtime.fakes import FixedBoxes, classified
from vision.runtime.crops import CROP_SIZE, crop_boxes
from vision.runtime.detections import Detections
from vision.runtime.familiarity import steady_probability
from vision.runtime.reader import TableColour, TileReader
from vision.runtime.secondlook import (
    CHECKED,
    DOUBTFUL,
    LOOKED_PROBS,
    SPLIT_CONFIDENCE,
    VARIANTS,
    SecondLook,
    TurnedLook,
    Variant,
    crop_variant,
)

TEN, THIRTEEN = ALL_LABELS.index("red-10"), ALL_LABELS.index("red-13")


def _image(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (120, 160, 3), np.uint8)


@pytest.mark.parametrize(
    "boxes",
    [
        [[10.0, 20.0, 40.0, 60.0]],  # upright
        [[50.3, 30.7, 91.2, 61.9], [100.0, 10.0, 130.5, 48.25]],  # lying on its side; sub-pixel edges
        [[0.0, 0.0, 20.0, 25.0]],  # at the image's corner: the border replicated
    ],
)
def test_the_identity_variant_cuts_the_first_crop(boxes: list[list[float]]) -> None:
    image = _image()
    assert np.array_equal(crop_variant(image, np.array(boxes), Variant()), crop_boxes(image, np.array(boxes)))


def _dot_image(x: int, y: int) -> np.ndarray:
    image = np.zeros((200, 200, 3), np.uint8)
    image[y - 2 : y + 3, x - 2 : x + 3] = 255
    return image


def _bright_centre(crop: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(crop[..., 0] > 128)
    return float(xs.mean()), float(ys.mean())


BOX = np.array([[80.0, 80.0, 120.0, 120.0]])
"""A 40-px box around the image's middle (100, 100); its crop's side is 40 * 1.24 px."""


def test_a_shifted_variant_moves_the_crop_not_the_tile() -> None:
    # the crop's centre moved right by 0.1 of its side: the dot at the box's centre lies left of the crop's middle
    x, y = _bright_centre(crop_variant(_dot_image(100, 100), BOX, Variant(dx=0.1))[0])
    assert x == pytest.approx(CROP_SIZE / 2 - 0.1 * CROP_SIZE, abs=1.0)
    assert y == pytest.approx(CROP_SIZE / 2 - 0.5, abs=1.0)


def test_a_turned_variant_turns_the_tile_clockwise() -> None:
    # a dot right of the box's centre shows below the crop's middle after a quarter turn clockwise
    x, y = _bright_centre(crop_variant(_dot_image(110, 100), BOX, Variant(turn_deg=90.0))[0])
    assert x == pytest.approx(CROP_SIZE / 2 - 0.5, abs=1.0)
    assert y > CROP_SIZE / 2 + 5


def test_a_larger_variant_shows_the_tile_smaller() -> None:
    # a dot 10 px right of the centre: 10 * 64 / 49.6 px from the middle at scale 1, 1/1.25 of that at scale 1.25
    near = _bright_centre(crop_variant(_dot_image(110, 100), BOX, Variant())[0])[0] - CROP_SIZE / 2
    nearer = _bright_centre(crop_variant(_dot_image(110, 100), BOX, Variant(scale=1.25))[0])[0] - CROP_SIZE / 2
    assert nearer == pytest.approx(near / 1.25, abs=0.7)


class Brightness:
    """A classifier whose red-10 probability is the crop's mean brightness (the rest red-13), its features the mean
    of each channel: every crop of a tile gives another opinion."""

    labels = ALL_LABELS

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        return self.classify_crops(crop_boxes(image_bgr, detections.xyxy), detections)

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        n = len(detections)
        ten = crops.reshape(n, -1).mean(axis=1) / 255.0
        probs = np.zeros((n, len(ALL_LABELS)), np.float32)
        probs[:, TEN], probs[:, THIRTEEN] = ten, 1.0 - ten
        return classified(detections, probs, crops.reshape(n, -1, 3).mean(axis=1).astype(np.float32))

    def load(self) -> None:
        pass


def _ramp() -> np.ndarray:
    """Black up to column 60, brightness rising to column 140, white after: a crop's reading depends on where it is
    cut."""
    row = np.clip((np.arange(200) - 60) * 255 / 80, 0, 255).astype(np.uint8)
    return np.repeat(np.repeat(row[None, :, None], 200, axis=0), 3, axis=2)


def _looks(image: np.ndarray, box: np.ndarray, classifier: Brightness) -> Detections:
    """The first crop and every variant of ``box``, read by ``classifier`` one by one (what the mean is taken of)."""
    crops = np.stack([crop_variant(image, box[None], v)[0] for v in (Variant(), *VARIANTS)])
    return classifier.classify_crops(crops, Detections.of_boxes(np.repeat(box[None], len(crops), axis=0)))


def test_doubtful_tiles_take_the_mean_of_their_looks_and_sure_ones_are_left_alone() -> None:
    image = _ramp()
    boxes = np.array([[0.0, 50.0, 20.0, 90.0], [85.0, 50.0, 115.0, 90.0], [180.0, 50.0, 200.0, 90.0]])
    classifier = Brightness()
    first = classifier.classify(image, Detections.of_boxes(boxes))
    assert first.confidence[1] < DOUBTFUL  # the middle one is doubted, those at the ends are sure
    assert min(first.confidence[0], first.confidence[2]) >= CHECKED
    looked = SecondLook(classifier).look(image, first)
    expected = _looks(image, boxes[1], classifier)
    mean = np.asarray(expected.data["probs"]).mean(axis=0)
    assert np.allclose(looked.data["probs"][1], mean, atol=1e-6)
    assert looked.confidence[1] == pytest.approx(mean.max(), abs=1e-6)
    assert int(looked.class_id[1]) == int(mean.argmax())
    assert np.array_equal(looked.data["features"][1], first.data["features"][1])  # the familiarity check's own
    for sure in (0, 2):  # read surely: as the first reading had them
        assert np.array_equal(looked.data["probs"][sure], first.data["probs"][sure])
        assert looked.confidence[sure] == first.confidence[sure]
        assert np.array_equal(looked.data["features"][sure], first.data["features"][sure])


def _edge(at: int) -> np.ndarray:
    """Dark left of column ``at``, bright right of it."""
    image = np.zeros((100, 100, 3), np.uint8)
    image[:, at:] = 255
    return image


TILE = np.array([30.0, 30.0, 70.0, 70.0])
"""A 40-px box: its crop spans 25.2-74.8."""


@pytest.mark.parametrize(
    ("variants", "label", "capped"),
    [
        ([Variant(dx=0.6), Variant(dx=0.7)], TEN, True),  # the looks see the bright side (0.7, 0.8): red-10
        ([Variant(dx=-0.02), Variant(dy=0.02)], THIRTEEN, False),  # the looks agree: the first reading stands
    ],
)
def test_a_fairly_sure_tile_keeps_its_reading_unless_the_look_names_another_label(
    variants: list[Variant], label: int, capped: bool
) -> None:
    image = _edge(70)  # the first crop is 0.1 bright: red-13 at 0.9, between DOUBTFUL and CHECKED
    classifier = Brightness()
    first = classifier.classify(image, Detections.of_boxes(TILE[None]))
    assert int(first.class_id[0]) == THIRTEEN and DOUBTFUL <= first.confidence[0] < CHECKED
    looked = SecondLook(classifier, variants=variants).look(image, first)
    assert int(looked.class_id[0]) == label
    if capped:
        assert looked.confidence[0] == SPLIT_CONFIDENCE  # two looks, two labels: uncertain
        assert looked.data["probs"][0][TEN] > looked.data["probs"][0][THIRTEEN]  # runner-ups for the set context
    else:
        assert looked.confidence[0] == first.confidence[0]
        assert np.array_equal(looked.data["probs"], first.data["probs"])


def test_the_crops_are_prepared_as_the_first_reading_had_them() -> None:
    image = np.full((100, 100, 3), 100, np.uint8)
    first = Brightness().classify(image, Detections.of_boxes([[30.0, 30.0, 70.0, 70.0]]))
    brighter = SecondLook(Brightness()).look(image, first, prepare=lambda crops: crops * 2)
    assert brighter.data["probs"][0][TEN] > first.data["probs"][0][TEN]


@pytest.mark.parametrize("second_look", [False, True])
def test_the_reader_looks_again_only_when_asked(second_look: bool) -> None:
    image = _image()  # noise: each crop reads about 0.5, each a little differently
    boxes = [[90.0, 50.0, 120.0, 90.0]]
    reader = TileReader(
        Path("/nonexistent"),
        not_a_tile=0.0,
        colour=TableColour(balance=False, check=False),
        familiarity=False,
        detector=FixedBoxes(boxes, 0.9),
        classifier=Brightness(),
        second_look=second_look,
    )
    tiles = reader.read(image).detections
    first = Brightness().classify(image, Detections.of_boxes(boxes, [0.9]))
    looked = SecondLook(Brightness()).look(image, first)
    assert np.allclose(tiles.data["probs"], (looked if second_look else first).data["probs"])
    assert not np.allclose(looked.data["probs"], first.data["probs"])  # the two cases differ


@pytest.mark.parametrize("average_features", [True, False])
def test_a_tile_taking_the_average_keeps_its_first_features_when_asked(average_features: bool) -> None:
    image = _ramp()
    box = np.array([85.0, 50.0, 115.0, 90.0])  # doubted: it takes the average
    classifier = Brightness()
    first = classifier.classify(image, Detections.of_boxes(box[None]))
    looked = SecondLook(classifier, average_features=average_features).look(image, first)
    mean = np.asarray(_looks(image, box, classifier).data["features"]).mean(axis=0)
    assert np.allclose(looked.data["features"][0], mean if average_features else first.data["features"][0], atol=1e-4)
    assert not np.allclose(mean, first.data["features"][0], atol=1e-4)  # the two cases differ
    assert np.allclose(looked.data["probs"][0], np.asarray(_looks(image, box, classifier).data["probs"]).mean(axis=0))


class Counting(Brightness):
    """:class:`Brightness`, counting the crops it reads."""

    def __init__(self) -> None:
        self.read = 0

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        self.read += len(crops)
        return super().classify_crops(crops, detections)


def test_the_familiarity_confirmation_takes_the_second_looks_mean_and_cuts_only_the_tiles_it_did_not_look_at() -> None:
    image = _ramp()
    boxes = np.array([[0.0, 50.0, 20.0, 90.0], [85.0, 50.0, 115.0, 90.0], [180.0, 50.0, 200.0, 90.0]])
    classifier = Counting()
    looked = SecondLook(classifier).look(image, classifier.classify(image, Detections.of_boxes(boxes)))
    assert np.isnan(looked.data[LOOKED_PROBS][[0, 2]]).all() and not np.isnan(looked.data[LOOKED_PROBS][1]).any()
    classifier.read = 0
    steady = steady_probability(classifier, image, looked)
    assert classifier.read == 2 * (1 + len(VARIANTS))  # the two sure tiles' nine cuts; the doubted one's kept
    unlooked = Detections(looked.xyxy, looked.confidence, looked.class_id)  # the same tiles, no second look's mean
    assert np.array_equal(steady, steady_probability(classifier, image, unlooked))  # the same, bit for bit


def test_a_fairly_sure_tile_whose_looks_keep_its_label_but_not_its_confidence_takes_their_average() -> None:
    """One crop at 0.9, the other cuts at 0.65-0.7 for the same label: no confident reading (issue 16)."""
    image = _edge(70)  # the first crop is 0.1 bright: red-13 at 0.9
    classifier = Brightness()
    first = classifier.classify(image, Detections.of_boxes(TILE[None]))
    assert int(first.class_id[0]) == THIRTEEN and DOUBTFUL <= first.confidence[0] < CHECKED
    variants = [Variant(dx=0.2), Variant(dx=0.25)]  # the looks see more of the bright side: red-13 at 0.65-0.7
    looked = SecondLook(classifier, variants=variants).look(image, first)
    crops = np.stack([crop_variant(image, TILE[None], v)[0] for v in (Variant(), *variants)])
    mean = np.asarray(classifier.classify_crops(crops, Detections.of_boxes(np.repeat(TILE[None], 3, 0))).data["probs"])
    mean = mean.mean(axis=0)
    assert int(mean.argmax()) == THIRTEEN and SPLIT_CONFIDENCE < mean.max() < DOUBTFUL  # the label held, not its doubt
    assert int(looked.class_id[0]) == THIRTEEN
    assert looked.confidence[0] == pytest.approx(mean.max(), abs=1e-6)
    assert np.allclose(looked.data["probs"][0], mean, atol=1e-6)


class TopHeavy:
    """A classifier that reads red-10 where a crop's top half is the brighter, red-13 where its bottom half is, at
    0.6 + 0.4 x the halves' difference in brightness: a tile turned half-way round reads the other label."""

    labels = ALL_LABELS

    def __init__(self) -> None:
        self.crops_read = 0

    def classify(self, image_bgr: np.ndarray, detections: Detections) -> Detections:
        return self.classify_crops(crop_boxes(image_bgr, detections.xyxy), detections)

    def classify_crops(self, crops: np.ndarray, detections: Detections) -> Detections:
        n = len(detections)
        self.crops_read += n
        half = crops.shape[1] // 2
        difference = (crops[:, :half].reshape(n, -1).mean(1) - crops[:, half:].reshape(n, -1).mean(1)) / 255.0
        top = 0.6 + 0.4 * np.abs(difference)
        probs = np.zeros((n, len(ALL_LABELS)), np.float32)
        probs[np.arange(n), np.where(difference > 0, TEN, THIRTEEN)] = top
        probs[np.arange(n), np.where(difference > 0, THIRTEEN, TEN)] = 1.0 - top
        return classified(detections, probs, np.zeros((n, 3), np.float32))

    def load(self) -> None:
        pass


def _top_bright(height: int = 120, width: int = 160) -> np.ndarray:
    """White above row 60, black below: a crop across row 60 reads red-10, sure; one wholly on a side, unsure."""
    image = np.zeros((height, width, 3), np.uint8)
    image[:60] = 255
    return image


def test_a_confident_tile_whose_turned_crop_names_another_label_is_doubted_with_its_label_kept() -> None:
    image = _top_bright()
    boxes = np.array([[20.0, 40.0, 50.0, 80.0]])  # across the edge: red-10 at about 0.96
    classifier = TopHeavy()
    first = classifier.classify(image, Detections.of_boxes(boxes))
    assert first.labels == ["red-10"] and first.confidence[0] >= DOUBTFUL
    turned = TurnedLook(classifier).look(image, first)
    assert turned.labels == ["red-10"]
    assert turned.confidence[0] == pytest.approx(SPLIT_CONFIDENCE)
    assert np.array_equal(turned.data["probs"], first.data["probs"])


def test_a_tile_the_turn_does_not_change_keeps_its_confidence_and_unsure_tiles_are_not_read_again() -> None:
    image = _top_bright()
    boxes = np.array([[0.0, 0.0, 40.0, 40.0], [20.0, 40.0, 50.0, 80.0]])  # all white: 0.6, unsure; across: sure
    first = Brightness().classify(image, Detections.of_boxes(boxes))  # a turn changes no mean brightness
    assert TurnedLook(Brightness()).look(image, first) is first
    classifier = TopHeavy()
    first = classifier.classify(image, Detections.of_boxes(boxes))
    assert first.confidence[0] < DOUBTFUL <= first.confidence[1]
    classifier.crops_read = 0
    turned = TurnedLook(classifier).look(image, first)
    assert classifier.crops_read == 1  # the sure tile's turned crop only
    assert turned.confidence[0] == first.confidence[0]


@pytest.mark.parametrize("turned_look", [False, True])
def test_the_reader_turns_confident_tiles_round_only_when_asked(turned_look: bool) -> None:
    reader = TileReader(
        Path("/nonexistent"),
        not_a_tile=0.0,
        colour=TableColour(balance=False, check=False),
        familiarity=False,
        detector=FixedBoxes([[20.0, 40.0, 50.0, 80.0]], 0.9),
        classifier=TopHeavy(),
        second_look=False,
        turned_look=turned_look,
    )
    tiles = reader.read(_top_bright()).detections
    assert tiles.labels == ["red-10"]
    assert bool(tiles.confidence[0] == SPLIT_CONFIDENCE) is turned_look
