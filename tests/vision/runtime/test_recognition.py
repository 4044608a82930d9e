"""Recognition with ONNX Runtime: letterbox, YOLO decoding, the stand-in models, image and model errors."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest

from referee.tiles import ALL_LABELS
from vision.runtime.detections import Detections
from vision.runtime.recognition import (
    CLASSIFIER_FILE,
    DETECTOR_FILE,
    ImageReadError,
    Letterbox,
    ModelLoadError,
    ModelNotFoundError,
    OnnxTileClassifier,
    Region,
    TileReader,
    YoloOnnxDetector,
    decode_yolo,
    default_models_dir,
    load_image,
    tile_likelihood,
    windows,
)


def test_letterbox_matches_ultralytics_for_a_wide_image() -> None:
    boxed, scale, pad = Letterbox(640).apply(np.zeros((720, 1280, 3), np.uint8))
    assert boxed.shape == (640, 640, 3) and scale == 0.5 and pad == (0.0, 140.0)
    assert boxed[0, 0].tolist() == [114, 114, 114] and boxed[320, 320].tolist() == [0, 0, 0]


def test_decode_maps_letterbox_boxes_back_to_original_pixels(make_yolo_output: Callable) -> None:
    # A 640x480 photo in a 320 input: scale 0.5, 40 px of padding above and below.
    tensor = make_yolo_output(
        [(60, 105, 20, 30), (61, 105, 20, 30), (310, 160, 40, 40), (10, 10, 5, 5)], [0.9, 0.8, 0.7, 0.1]
    )
    found = decode_yolo(tensor, scale=0.5, pad=(0.0, 40.0), image_shape=(480, 640), confidence=0.25, iou=0.5)
    # The second box overlaps the first (NMS), the last is under the threshold; the third is clipped at x=640.
    np.testing.assert_allclose(found.xyxy, [[100, 100, 140, 160], [580, 200, 640, 280]])
    assert found.confidence.tolist() == pytest.approx([0.9, 0.7])
    assert found.class_id.tolist() == [-1, -1]


@pytest.fixture
def models(standin_models: Callable, make_yolo_output: Callable) -> Path:
    # Letterbox space of a 640x480 photo in a 320 input; original boxes (100,100)-(140,160) and (200,100)-(240,160).
    return standin_models(make_yolo_output([(60, 105, 20, 30), (110, 105, 20, 30)], [0.9, 0.6]))


def tiles_photo() -> np.ndarray:
    image = np.full((480, 640, 3), 0, np.uint8)
    image[100:160, 100:140] = (0, 0, 255)  # red (BGR) -> red-5 by the stand-in classifier
    image[100:160, 200:240] = (128, 128, 128)  # grey -> equal odds, an uncertain reading
    return image


def test_detector_and_classifier_stand_ins(models: Path) -> None:
    detector = YoloOnnxDetector(models / "tile-detector.onnx")
    assert detector._session is None  # lazy: nothing loaded before the first detect
    boxes = detector.detect(tiles_photo())
    assert detector.input_size == 320
    np.testing.assert_allclose(boxes.xyxy, [[100, 100, 140, 160], [200, 100, 240, 160]], atol=0.01)
    read = OnnxTileClassifier(models / "tile-classifier.onnx").classify(tiles_photo(), boxes)
    assert read.labels[0] == "red-5" and read.confidence[0] > 0.99
    assert read.confidence[1] == pytest.approx(1 / 53, abs=0.01)  # grey: equal odds
    assert read.data["probs"].shape == (2, 53) and read.data["angle_deg"].tolist() == [0.0, 0.0]
    assert read.data["detector_confidence"].tolist() == pytest.approx([0.9, 0.6])
    assert "features" not in read.data  # a classifier without a features output still reads


def test_the_shipped_classifier_gives_the_features_its_label_head_reads() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    from vision.runtime.detections import Detections
    from vision.runtime.recognition import CLASSIFIER_FILE

    path = default_models_dir() / CLASSIFIER_FILE
    crops = np.random.default_rng(0).integers(0, 256, (5, 64, 64, 3), dtype=np.uint8)
    read = OnnxTileClassifier(path).classify_crops(crops, Detections.of_boxes(np.zeros((5, 4))))
    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    logits = read.data["features"].astype(np.float64) @ weights["net.label.weight"].T + weights["net.label.bias"]
    z = logits * float(weights["inv_t"])
    expected = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(read.data["probs"], expected / expected.sum(1, keepdims=True), atol=1e-5)
    assert read.data["features"].shape == (5, 192) and read.data["features"].dtype == np.float32


def test_the_shipped_detector_weights_fit_in_7_bits() -> None:
    """Full-range int8 weights saturate ONNX Runtime's u8s8 kernels on CPUs without VNNI: the 8-bit v3 detector read
    real held-out photos at F1 0.9797 there (0.9893 in float) and gave 2 false REVERTs in bench pipeline."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    from vision.runtime.recognition import DETECTOR_FILE

    model = onnx.load(str(default_models_dir() / DETECTOR_FILE))
    weights = [numpy_helper.to_array(i) for i in model.graph.initializer if i.data_type == onnx.TensorProto.INT8]
    assert len(weights) > 50  # the convolutions are quantized
    assert max(int(np.abs(w.astype(np.int16)).max()) for w in weights) <= 64


def test_reader_combines_both_and_times_them(models: Path) -> None:
    reader = TileReader(models, not_a_tile=0.0, rescale=False)  # the stand-in finds the same two boxes at any scale
    reading = reader.read(tiles_photo())
    read, timings = reading.detections, reading.timings
    assert len(read) == 2 and len(reading.left_out) == 0
    steps = (timings.detect_ms, timings.classify_ms, timings.colour_ms, timings.familiarity_ms)
    assert all(ms >= 0 for ms in steps) and timings.detect_ms > 0 and timings.total_ms == pytest.approx(sum(steps))
    assert len(reader.classifier.classify(tiles_photo(), read[:0])) == 0  # no boxes, no session call
    with pytest.raises(dataclasses.FrozenInstanceError):
        reading.left_out = read  # type: ignore[misc]


def test_reader_drops_boxes_the_classifier_cannot_name(standin_models: Callable, make_yolo_output: Callable) -> None:
    # Detector 0.9 and 0.6 on a red and a grey crop: 0.9 x 1.0 is a tile; 0.6 x 1/53 (equal odds) is texture.
    models = standin_models(make_yolo_output([(60, 105, 20, 30), (110, 105, 20, 30)], [0.9, 0.6]))
    reading = TileReader(models, rescale=False).read(tiles_photo())
    assert reading.detections.labels == ["red-5"] and len(reading.left_out) == 1  # the grey crop, labelled too
    assert tile_likelihood(reading.left_out).tolist() == pytest.approx([0.6 / 53], abs=0.01)
    kept = TileReader(models, not_a_tile=0.0, rescale=False).read(tiles_photo()).detections  # fused, then judged
    assert len(kept) == 2 and tile_likelihood(kept).tolist() == pytest.approx([0.9, 0.6 / 53], abs=0.01)


def test_tiled_detection_covers_the_frame_and_stays_inside_it(models: Path) -> None:
    detector = YoloOnnxDetector(models / "tile-detector.onnx", tiled=True)
    found = detector.detect(np.zeros((1080, 1920, 3), np.uint8))
    assert len(found) >= 2
    assert (found.xyxy[:, [0, 2]] <= 1920).all() and (found.xyxy[:, [1, 3]] <= 1080).all()


class CountingSession:
    """Wraps an ONNX Runtime session and records the input shape of every run."""

    def __init__(self, session: object) -> None:
        self.session, self.shapes = session, []

    def __getattr__(self, name: str) -> object:
        return getattr(self.session, name)

    def run(self, names: object, feeds: dict[str, np.ndarray]) -> object:
        self.shapes.append(next(iter(feeds.values())).shape)
        return self.session.run(names, feeds)


@pytest.mark.parametrize("any_size", [False, True])
def test_a_region_is_read_in_one_pass_when_the_detector_takes_any_input_size(
    any_size: bool, standin_models: Callable, make_yolo_output: Callable
) -> None:
    models = standin_models(make_yolo_output([(100, 105, 20, 30)], [0.9]), any_size=any_size)
    detector = YoloOnnxDetector(models / "tile-detector.onnx")
    detector._session = counting = CountingSession(detector.session)
    found = detector.detect_region(np.zeros((1080, 1920, 3), np.uint8), Region(200, 100, 1400, 900, width_px=800))
    if not any_size:
        assert len(counting.shapes) == 6 and set(counting.shapes) == {(1, 3, 320, 320)}  # windows of the input
        return
    # the 1200x800 region scaled to 800x533, padded (centred) to 800x544: one pass at the tiles' own scale
    assert detector.any_size and counting.shapes == [(1, 3, 544, 800)]
    np.testing.assert_allclose(found.xyxy, [[335, 227.5, 365, 272.5]], atol=0.5)


@pytest.mark.parametrize(("width", "height"), [(3840, 2160), (640, 480), (320, 320)])
def test_windows_cover_the_image(width: int, height: int) -> None:
    covered = np.zeros((height, width), bool)
    for x0, y0, x1, y1 in windows(width, height, 640):
        assert x1 - x0 <= 640 and y1 - y0 <= 640
        covered[y0:y1, x0:x1] = True
    assert covered.all()


def test_tiled_windows_are_native_resolution_unless_that_needs_too_many(models: Path) -> None:
    detector = YoloOnnxDetector(models / "tile-detector.onnx", tiled=True, max_windows=8)
    assert detector.window_for(640, 480) == 320  # 6 windows of the 320 input at native resolution
    side = detector.window_for(3840, 2160)
    assert side > 320 and len(windows(3840, 2160, side)) <= 8


def test_missing_model_names_the_file_and_where_models_ship(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match=r"tile-detector\.onnx: model file not found.*ship in models/"):
        TileReader(tmp_path).check_models()


@pytest.mark.parametrize("corrupt", ["tile-detector.onnx", "tile-classifier.onnx"])
def test_checking_the_models_loads_them(tmp_path: Path, corrupt: str) -> None:
    """analyze and live check the models before the video: a corrupt one must fail there, not on the first table."""
    for name in ("tile-detector.onnx", "tile-classifier.onnx"):
        shutil.copy(default_models_dir() / name, tmp_path / name)
    (tmp_path / corrupt).write_bytes(b"not a model")
    with pytest.raises(ValueError, match=rf"{re.escape(corrupt)}: cannot load the model"):
        TileReader(tmp_path).check_models()


def test_corrupt_model_is_a_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "tile-detector.onnx").write_bytes(b"not a model")
    with pytest.raises(ValueError, match="cannot load the model") as error:
        YoloOnnxDetector(tmp_path / "tile-detector.onnx").detect(np.zeros((8, 8, 3), np.uint8))
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such image file"),  # missing
        (b"", "not a readable image"),  # empty
        (b"\xff\xd8\xff\xe0 truncated jpeg", "not a readable image"),  # corrupt
    ],
)
def test_bad_images_are_one_line_errors(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "photo.jpg"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ImageReadError, match=message):
        load_image(path)


def test_load_image_gives_bgr_for_grey_pngs(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "grey.png"), np.full((16, 24), 200, np.uint8))
    assert load_image(tmp_path / "grey.png").shape == (16, 24, 3)


@pytest.mark.parametrize(
    ("width", "height", "message"),
    [
        (5000, 1, "a 5000x1 image is too small to hold a tile"),  # was a cv2.error traceback in the letterbox
        (1, 5000, "a 1x5000 image is too small"),
        (3000, 2, "a 3000x2 image is too small"),
        (15, 400, "a 15x400 image is too small"),  # one pixel under the limit
    ],
)
def test_images_too_small_to_hold_a_tile_are_refused(tmp_path: Path, width: int, height: int, message: str) -> None:
    path = tmp_path / "strip.png"
    cv2.imwrite(str(path), np.full((height, width, 3), 128, np.uint8))
    with pytest.raises(ImageReadError, match=message):
        load_image(path)


def test_the_smallest_image_is_read(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "small.png"), np.full((16, 16, 3), 128, np.uint8))
    assert load_image(tmp_path / "small.png").shape == (16, 16, 3)


def png_claiming(path: Path, width: int, height: int) -> Path:
    """A PNG of a few hundred bytes whose header claims ``width`` x ``height`` pixels (a decompression bomb)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(1000))) + chunk(b"IEND", b"")
    )
    return path


@pytest.mark.parametrize(
    ("width", "height"),
    [
        (33000, 33000),  # PIL's own bomb error (over 179 megapixels): was a traceback
        (12000, 10001),  # between PIL's warning and its error: our limit, from the header alone
    ],
)
def test_images_too_large_are_refused_from_the_header(tmp_path: Path, width: int, height: int) -> None:
    path = png_claiming(tmp_path / "bomb.png", width, height)
    with pytest.raises(ImageReadError, match="too large to read") as error:
        load_image(path)
    assert "\n" not in str(error.value) and str(path) in str(error.value)


def test_a_damaged_photo_is_refused_not_read_half_grey(tmp_path: Path) -> None:
    """libjpeg decodes a damaged JPEG, grey where the data broke, and says so on stderr: a table read from half a
    photo could send a player back for tiles that are only missing from the file."""
    image = np.random.default_rng(0).integers(0, 255, (240, 320, 3), np.uint8)
    _, encoded = cv2.imencode(".jpg", image)
    damaged = bytearray(encoded.tobytes())
    for index in range(1000, len(damaged) - 2, 50):
        damaged[index] ^= 0x55
    (tmp_path / "damaged.jpg").write_bytes(bytes(damaged))
    with pytest.raises(ImageReadError, match=r"damaged image data .*premature end"):
        load_image(tmp_path / "damaged.jpg")


def test_a_truncated_png_names_the_decoders_complaint(tmp_path: Path) -> None:
    _, encoded = cv2.imencode(".png", np.random.default_rng(0).integers(0, 255, (240, 320, 3), np.uint8))
    (tmp_path / "cut.png").write_bytes(encoded.tobytes()[: len(encoded) // 2])
    with pytest.raises(ImageReadError, match=r"not a readable image .*libpng error"):
        load_image(tmp_path / "cut.png")


def test_opencvs_own_size_cap_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """For formats PIL cannot read the header of, OpenCV's cap (OPENCV_IO_MAX_IMAGE_PIXELS, set by the CLI) refuses
    the image with a cv2.error: the file is named, in one line."""
    path = tmp_path / "big.hdr"
    path.write_bytes(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 12000 +X 12000\n" + bytes(64))

    def capped(*args: object) -> None:
        raise cv2.error(
            "OpenCV(5.0.0) loadsave.cpp:79: error: (-215:Assertion failed) pixels <= CV_IO_MAX_IMAGE_PIXELS"
        )

    monkeypatch.setattr(cv2, "imdecode", capped)
    with pytest.raises(ImageReadError, match=r"big\.hdr: the image is too large to read"):
        load_image(path)


def test_the_letterbox_keeps_a_row_of_an_extreme_strip() -> None:
    boxed, scale, _ = Letterbox(640).apply(np.zeros((16, 20000, 3), np.uint8))
    assert boxed.shape == (640, 640, 3) and scale == pytest.approx(640 / 20000)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_shipped_detector_finds_the_tiles_of_a_non_square_frame(seed: int) -> None:
    """A 960x540 synthetic table (held-out faces, no hands or racks) through models/tile-detector.onnx: the
    frame letterboxed into the model's 448 input, the boxes back in the frame's pixels, on the tiles.
    Measured on seeds 1-3: 34 of 34, 37 of 37 and 37 of 38 tiles found, 0, 1 and 2 boxes on no tile."""
    from dataclasses import replace

    from vision.eval.evaluate import match
    from vision.runtime.recognition import default_models_dir
    from vision.synth.recipe import load_recipe
    from vision.synth.scene import render_scene

    params, _ = load_recipe("synth-heldout")
    params = replace(
        params, size=(960, 540), camera=replace(params.camera, tilt_deg=(0.0, 20.0), fill=(0.9, 1.1)),
        content=replace(params.content, tiles=(20, 45)), hand_probability=0.0, rack_probability=0.0,
        pool_probability=0.0,
    )  # fmt: skip
    scene = render_scene(seed, params)
    detector = YoloOnnxDetector(default_models_dir() / "tile-detector.onnx")
    found = detector.detect(scene.image)
    assert detector.input_size == 448
    assert (found.xyxy[:, [0, 2]] >= 0).all() and (found.xyxy[:, [0, 2]] <= 960).all()
    assert (found.xyxy[:, [1, 3]] >= 0).all() and (found.xyxy[:, [1, 3]] <= 540).all()
    true_boxes = np.array([tile.box for tile in scene.readable()], np.float32)
    matched = len(match(true_boxes, found))
    assert matched >= 0.9 * len(true_boxes) and matched >= 0.9 * len(found), (matched, len(true_boxes), len(found))


def test_small_tiles_are_read_again_at_tile_scale_and_large_ones_are_not() -> None:
    from vision.runtime.detections import Detections
    from vision.runtime.recognition import PHOTO_TILE_PX, SMALL_TILE_PX, tile_scale_region

    def boxes(side: float) -> Detections:
        return Detections.of_boxes([[10 * k, 10, 10 * k + side, 10 + side * 1.35] for k in range(5)], [0.9] * 5)

    # 1280x960 photo, 448-px detector: a 40-px tile shrinks to 14 px -> read at 32 px: the photo scaled by 0.8
    region = tile_scale_region((960, 1280), boxes(40.0), 448, margin=None)
    assert region is not None and (region.x0, region.y0, region.x1, region.y1) == (0, 0, 1280, 960)
    assert region.width_px == round(1280 * PHOTO_TILE_PX / 40.0) == 1024
    assert tile_scale_region((960, 1280), boxes(1280 * SMALL_TILE_PX / 448 - 1), 448) is not None  # still small
    assert tile_scale_region((960, 1280), boxes(1280 * SMALL_TILE_PX / 448 + 1), 448) is None  # big enough
    assert tile_scale_region((960, 1280), boxes(40.0)[:2], 448) is None  # too few tiles to tell their size


@pytest.mark.parametrize(
    ("size", "width_px", "expected"),
    [
        ((1280, 960), 861, 853),  # 861x646 padded to 864x672; 853x640 to 864x640
        ((1280, 960), 1024, 1024),  # 1024x768: nothing to spare
        ((1280, 960), 832, 810),  # 832x624 padded to 832x640; 810x608 to 832x608
        ((1920, 1080), 1000, 992),  # 1000x563 padded to 1024x576; 992x558 to 992x576
        ((640, 640), 300, 300),  # 300x300 to 320x320: 288 is 4 % smaller
    ],
)
def test_the_second_reading_can_spare_a_row_of_the_stride_for_3_percent_of_its_scale(
    size: tuple[int, int], width_px: int, expected: int
) -> None:
    from vision.runtime.reader import STRIDE_FIT, fit_to_stride

    width, height = size
    fitted = fit_to_stride(width, height, width_px, share=0.97)
    assert fitted == expected and fitted >= 0.97 * width_px
    assert fit_to_stride(width, height, width_px) == (width_px if STRIDE_FIT == 1.0 else fitted)  # off by default

    def padded(w: int) -> int:
        return -(-w // 32) * 32 * (-(-round(height * w / width) // 32) * 32)

    assert padded(fitted) <= padded(width_px)


@pytest.mark.parametrize(
    ("margin", "expected"),
    [
        (2.0, (0, 0, 160, 144)),  # the tiles span x 0..80, y 10..64: 80 px more each side, clipped at the photo
        (0.5, (0, 0, 100, 84)),  # 20 px more
        (40.0, (0, 0, 1280, 960)),  # wider than the photo: the whole photo
    ],
)
def test_the_second_reading_covers_only_the_tiles_found_and_a_margin(
    margin: float, expected: tuple[int, int, int, int]
) -> None:
    from vision.runtime.recognition import PHOTO_TILE_PX, tile_scale_region

    boxes = Detections.of_boxes([[10 * k, 10, 10 * k + 40, 64] for k in range(5)], [0.9] * 5)
    region = tile_scale_region((960, 1280), boxes, 448, margin=margin)
    assert region is not None and (region.x0, region.y0, region.x1, region.y1) == expected
    assert region.width_px == round(expected[2] * PHOTO_TILE_PX / 40.0)  # the same scale as the whole photo's
    smaller = tile_scale_region((960, 1280), boxes, 448, margin=margin, tile_px=28.0)
    assert smaller is not None and smaller.width_px == round(expected[2] * 28.0 / 40.0)  # tiles read 28 px wide


class RecordingDetector(YoloOnnxDetector):
    """Finds five tiles of ``tile`` px in any image; records each call (``detect``'s size, or the region read)."""

    input_size = 448  # type: ignore[assignment]
    any_size = True  # type: ignore[assignment]

    def __init__(self, tile: float) -> None:
        super().__init__("none.onnx")
        self.tile, self.calls = tile, []

    def detect(self, image_bgr: np.ndarray, *, size: int | None = None, **_: object) -> Detections:
        self.calls.append(size)
        return self.tiles()

    def tiles(self) -> Detections:
        side = self.tile
        return Detections.of_boxes(
            [[100 + side * 1.5 * k, 100, 100 + side * (1.5 * k + 1), 100 + side] for k in range(5)], [0.9] * 5
        )

    def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
        self.calls.append(region)
        return Detections.empty()


@pytest.mark.parametrize(
    ("scout", "tile", "shape", "expected"),
    [
        (320, 30.0, (960, 1280), [320, "region"]),  # small tiles: the scout's reading, then the one at tile scale
        (320, 100.0, (960, 1280), [320, None]),  # large tiles: read again at the detector's input size
        (None, 30.0, (960, 1280), [None, "region"]),  # no scout: the input size first
        (320, 30.0, (400, 440), [None]),  # a photo no bigger than the input: one reading, nothing to scout
    ],
)
def test_a_scout_reading_finds_the_scale_and_a_photo_of_large_tiles_is_read_at_input_size(
    scout: int | None,
    tile: float,
    shape: tuple[int, int],
    expected: list[object],
    standin_models: Callable,
    make_yolo_output: Callable,
) -> None:
    detector = RecordingDetector(tile)
    reader = TileReader(standin_models(make_yolo_output([], [])), detector=detector, scout=scout, not_a_tile=0)
    reader.read(np.full((*shape, 3), 90, np.uint8))
    assert ["region" if isinstance(call, Region) else call for call in detector.calls] == expected


@pytest.mark.parametrize(
    ("around", "expected"),
    [
        (None, (0, 0, 1280, 960)),  # the whole photo
        (2.0, (40, 40, 370, 190)),  # the five 30-px tiles (x 100..310, y 100..130) and 60 px more each side
    ],
)
def test_the_reader_reads_again_the_whole_photo_or_only_around_its_tiles(
    around: float | None, expected: tuple[int, int, int, int], standin_models: Callable, make_yolo_output: Callable
) -> None:
    detector = RecordingDetector(30.0)
    reader = TileReader(standin_models(make_yolo_output([], [])), detector=detector, around=around, not_a_tile=0)
    reader.read(np.full((960, 1280, 3), 90, np.uint8))
    (region,) = [call for call in detector.calls if isinstance(call, Region)]
    assert (region.x0, region.y0, region.x1, region.y1) == expected


@pytest.mark.parametrize(
    ("sides", "shape", "expected"),
    [
        ([30.0, 32.0], (960, 1280), True),  # two tiles of 10 px at the 448 input: most were likely missed
        ([], (960, 1280), True),  # nothing found: the tiles may all be too small
        ([30.0, 30.0, 30.0], (960, 1280), False),  # three: enough to tell the scale (tile_scale_region's job)
        ([120.0], (960, 1280), False),  # one large tile: a close-up, read once
        ([30.0, 120.0], (960, 1280), False),  # one of them large
        ([], (400, 440), False),  # a photo no bigger than the input is read whole already
    ],
)
def test_a_photo_whose_first_reading_found_too_few_small_tiles_gets_a_closer_look(
    sides: list[float], shape: tuple[int, int], expected: bool
) -> None:
    from vision.runtime.reader import MIN_TILES_FOR_SCALE, needs_a_closer_look

    found = Detections.of_boxes([[50 * k, 10, 50 * k + side, 10 + side * 1.35] for k, side in enumerate(sides)],
                                [0.9] * len(sides))  # fmt: skip
    assert MIN_TILES_FOR_SCALE == 3
    assert needs_a_closer_look(shape, found, 448) is expected


def test_the_closer_look_reads_the_whole_photo_at_twice_the_input_and_then_at_tile_scale(
    standin_models: Callable, make_yolo_output: Callable
) -> None:
    from vision.runtime.reader import CLOSER_LOOK, PHOTO_TILE_PX, closer_region

    region = closer_region((960, 1280), 448)
    assert (region.x0, region.y0, region.x1, region.y1, region.width_px) == (0, 0, 1280, 960, 896)
    assert CLOSER_LOOK == 2.0

    class FindsTwoAtInputSize(RecordingDetector):
        """Two of the five tiles at the input size, all five in the first region read (the closer look)."""

        def detect(self, image_bgr: np.ndarray, *, size: int | None = None, **_: object) -> Detections:
            return super().detect(image_bgr, size=size)[:2]

        def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
            self.calls.append(region)
            return self.tiles() if len(self.calls) == 2 else Detections.empty()

    detector = FindsTwoAtInputSize(30.0)
    reader = TileReader(standin_models(make_yolo_output([], [])), detector=detector, not_a_tile=0)
    reader.read(np.full((960, 1280, 3), 90, np.uint8))
    first, closer, tile_scale = detector.calls
    assert first is None and closer == region  # the input size, then the closer look
    assert isinstance(tile_scale, Region) and tile_scale.width_px == round(1280 * PHOTO_TILE_PX / 30.0)

    large = FindsTwoAtInputSize(120.0)  # two large tiles at the input size: read once
    TileReader(standin_models(make_yolo_output([], [])), detector=large, not_a_tile=0).read(
        np.full((960, 1280, 3), 90, np.uint8)
    )
    assert large.calls == [None]


# -- the label order of a classifier, checked against its model card when it loads ------------------------------


def _card(models: Path, labels: object) -> None:
    card = {"name": "tile-classifier", "kind": "classifier", "labels": labels}
    (models / CLASSIFIER_FILE).with_suffix(".json").write_text(json.dumps(card), encoding="utf-8")


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        # two labels swapped: every red-5 would be read as red-6, confidently
        (
            [*ALL_LABELS[:17], ALL_LABELS[18], ALL_LABELS[17], *ALL_LABELS[19:]],
            "labels are in another order than the code reads them (column 17: the model card says 'red-6', the code"
            " 'red-5')",
        ),
        # trained without the joker
        (list(ALL_LABELS[:-1]), "the model card lists 52 labels; the code reads 53"),
        # a card written by hand, wrong
        ("black-1 black-2", "the model card's labels are not a list"),
    ],
)
def test_a_classifier_whose_card_lists_its_labels_otherwise_is_refused_in_one_line(
    models: Path, labels: object, said: str
) -> None:
    _card(models, labels)
    with pytest.raises(ModelLoadError) as error:
        TileReader(models).check_models()
    message = str(error.value)
    assert message.startswith(f"{models / 'tile-classifier.json'}: ") and said in message and "\n" not in message
    with pytest.raises(ModelLoadError, match=r"another order|lists 52|not a list"):  # reading fails the same way
        TileReader(models).read(tiles_photo())


def test_the_command_line_says_a_mislabelled_classifier_in_one_line(
    models: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from vision.cli import main

    _card(models, list(reversed(ALL_LABELS)))
    photo = tmp_path / "photo.png"
    cv2.imwrite(str(photo), tiles_photo())
    assert main(["read", str(photo), "--models", str(models)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tile-classifier.json: the classifier's labels are in another order" in err


def test_a_classifier_whose_card_agrees_or_says_nothing_of_labels_loads(models: Path) -> None:
    _card(models, list(ALL_LABELS))
    TileReader(models).check_models()
    (models / "tile-classifier.json").write_text(json.dumps({"name": "tile-classifier"}), encoding="utf-8")
    TileReader(models).check_models()
    (models / "tile-classifier.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelLoadError, match=r"tile-classifier\.json: cannot read the model card"):
        TileReader(models).check_models()


def test_the_shipped_classifier_card_lists_the_labels_in_the_code_s_order() -> None:
    card = json.loads((default_models_dir() / "tile-classifier.json").read_text(encoding="utf-8"))
    assert card["labels"] == list(ALL_LABELS)
    OnnxTileClassifier.from_model_dir(default_models_dir()).load()


# -- the adapters behind the protocols ---------------------------------------------------------------------------


class BoxesAt:
    """A :class:`~vision.runtime.detector.Detector` that finds the same boxes in any image (no model)."""

    iou = 0.5
    input_size = 640

    def __init__(self, boxes: list[list[float]], confidence: list[float]) -> None:
        self.found = Detections.of_boxes(boxes, confidence)
        self.regions: list[Region] = []

    def detect(self, image_bgr: np.ndarray) -> Detections:
        return self.found

    def detect_region(self, image_bgr: np.ndarray, region: Region) -> Detections:
        self.regions.append(region)
        return self.found

    def load(self) -> None:
        pass


def test_a_reader_reads_with_the_detector_and_classifier_it_is_given(models: Path) -> None:
    detector = BoxesAt([[100, 100, 140, 160], [200, 100, 240, 160]], [0.95, 0.9])
    classifier = OnnxTileClassifier.from_model_dir(models)
    reader = TileReader(Path("/nonexistent"), detector=detector, classifier=classifier)
    reader.check_models()  # the given adapters load; the folder's files are never looked for
    reading = reader.read(tiles_photo(), region=Region(0, 0, 640, 480))
    assert reading.detections.labels == ["red-5"] and len(reading.left_out) == 1  # the grey crop: equal odds
    assert detector.regions == [Region(0, 0, 640, 480)]


def test_the_adapters_come_from_a_models_folder(models: Path) -> None:
    detector = YoloOnnxDetector.from_model_dir(models, tiled=True)
    assert detector.path == models / DETECTOR_FILE and detector.tiled and detector.input_size == 320
    classifier = OnnxTileClassifier.from_model_dir(models, batch=8)
    assert classifier.path == models / CLASSIFIER_FILE and classifier.batch == 8 and classifier.labels == ALL_LABELS
