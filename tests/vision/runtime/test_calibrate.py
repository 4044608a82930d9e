"""The table plane: markers, automatic table detection, files, the camera-motion check, CLI (``markers`` too)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.cli import main
from vision.runtime.calibrate import (
    TABLE_SIZE_MM,
    Calibration,
    CalibrationError,
    CameraMotionCheck,
    _largest_free_rectangle,
    calibrate,
    find_markers,
    find_table,
)

FRAME = (1920, 1080)
TABLE_MM = (1200.0, 900.0)
PLAY_MM = (100.0, 100.0, 1100.0, 800.0)
"""The play area inside the table (x0, y0, x1, y1): 1000 x 700 mm."""
MARKER_MM = 60.0
TABLE_PX = np.float64([(390, 180), (1575, 225), (1770, 975), (180, 930)])
"""Where the table's corners land in the frame: a camera above the referee's side, tilted."""


def render_table(drop: tuple[int, ...] = (), seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A green table in perspective on a dark floor, markers 0-3 outside the play area's corners
    (their inner corners on it); returns the frame and the table-mm -> image homography."""
    scale = 2.0  # canvas pixels per mm
    rng = np.random.default_rng(seed)
    canvas = np.empty((int(TABLE_MM[1] * scale), int(TABLE_MM[0] * scale), 3), np.uint8)
    canvas[:] = (60, 130, 40)
    canvas = cv2.add(canvas, rng.integers(0, 12, canvas.shape, dtype=np.uint8))
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side, paper = int(MARKER_MM * scale), int(6 * scale)
    x0, y0, x1, y1 = PLAY_MM
    outer_corner = {0: (x0 - MARKER_MM, y0 - MARKER_MM), 1: (x1, y0 - MARKER_MM), 2: (x1, y1), 3: (x0 - MARKER_MM, y1)}
    for marker_id, (mx, my) in outer_corner.items():
        if marker_id in drop:
            continue
        col, row = int(mx * scale), int(my * scale)
        canvas[row - paper : row + side + paper, col - paper : col + side + paper] = 255
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
        canvas[row : row + side, col : col + side] = marker[:, :, None]
    canvas = cv2.GaussianBlur(canvas, (0, 0), 1.0)  # the optics, and no aliasing when shrunk
    table_mm = np.float32([[0, 0], [TABLE_MM[0], 0], [TABLE_MM[0], TABLE_MM[1]], [0, TABLE_MM[1]]])
    homography = cv2.getPerspectiveTransform(table_mm, TABLE_PX.astype(np.float32)).astype(np.float64)
    # Canvas pixel i covers [i, i + 1) / scale mm, so mm -> canvas (pixel-centre) coordinates is scale * mm - 0.5.
    to_canvas = np.array([[scale, 0, -0.5], [0, scale, -0.5], [0, 0, 1]])
    warp = homography @ np.linalg.inv(to_canvas)
    floor = cv2.add(
        np.full((FRAME[1], FRAME[0], 3), (40, 45, 50), np.uint8),
        rng.integers(0, 20, (FRAME[1], FRAME[0], 3), dtype=np.uint8),
    )
    table = cv2.warpPerspective(canvas, warp, FRAME, flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full(canvas.shape[:2], 255, np.uint8), warp, FRAME)
    return np.where(mask[:, :, None] > 127, table, floor), homography


def project(homography: np.ndarray, points: list[tuple[float, float]]) -> np.ndarray:
    return cv2.perspectiveTransform(np.float64([points]), homography)[0]


def play_corners_px(homography: np.ndarray) -> np.ndarray:
    x0, y0, x1, y1 = PLAY_MM
    return project(homography, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)])


@pytest.fixture(scope="module")
def scene() -> tuple[np.ndarray, np.ndarray]:
    return render_table()


@pytest.fixture(scope="module")
def scene_png(scene: tuple[np.ndarray, np.ndarray], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scene") / "table.png"
    cv2.imwrite(str(path), scene[0])
    return path


# -- markers -----------------------------------------------------------------------------------------------


def test_markers_span_the_play_area_and_map_to_millimetres(scene: tuple[np.ndarray, np.ndarray]) -> None:
    image, homography = scene
    assert set(find_markers(image)) == {0, 1, 2, 3}
    measured = Calibration.from_markers(image)
    assert np.abs(measured.corners_px - play_corners_px(homography)).max() < 2.0
    assert measured.size_mm == pytest.approx((1000, 700), rel=0.01)  # from the printed markers' size
    assert measured.method == "markers" and measured.image_size == FRAME

    calibration = Calibration.from_markers(image, size_mm=(1000, 700))
    known_mm = [(350.0, 420.0), (0.0, 0.0), (1000.0, 700.0), (812.0, 35.0)]  # play-area mm
    in_image = project(homography, [(x + PLAY_MM[0], y + PLAY_MM[1]) for x, y in known_mm])
    assert np.abs(calibration.to_table(in_image) - known_mm).max() < 2.0
    assert np.allclose(calibration.to_image(calibration.to_table(in_image)), in_image)
    assert calibration.to_table(in_image[0]).shape == (2,)


def test_contains_tells_the_play_area_from_the_rest(scene: tuple[np.ndarray, np.ndarray]) -> None:
    image, homography = scene
    calibration = Calibration.from_markers(image, size_mm=(1000, 700))
    centre, beside, far = project(homography, [(600, 450), (1120, 450), (1180, 880)])  # table mm
    assert calibration.contains([centre, beside, far]).tolist() == [True, False, False]
    assert calibration.contains([centre, beside, far], margin_mm=30).tolist() == [True, True, False]
    assert calibration.contains(np.array([[centre]])).shape == (1, 1)


@pytest.mark.parametrize(
    ("drop", "named"),
    [
        ((1,), "marker 1 (top-right) not found"),  # one marker covered
        ((0, 3), "markers 0 (top-left), 3 (bottom-left) not found"),  # the near edge hidden
    ],
)
def test_missing_markers_are_named(drop: tuple[int, ...], named: str) -> None:
    image, _ = render_table(drop=drop)
    with pytest.raises(CalibrationError, match=r"^" + named.replace("(", r"\(").replace(")", r"\)")):
        Calibration.from_markers(image)


# -- other ways to calibrate -------------------------------------------------------------------------------


def test_find_table_finds_the_table_top(scene: tuple[np.ndarray, np.ndarray]) -> None:
    assert np.abs(find_table(scene[0]) - TABLE_PX).max() < 0.01 * FRAME[0]


def test_auto_is_the_table_top_less_what_lies_at_its_edges(scene: tuple[np.ndarray, np.ndarray]) -> None:
    """The markers lie 40 mm from the table's edge: things at the edge are no play area; the table's middle is."""
    image, homography = scene
    calibration, search = Calibration.auto_search(image)
    assert calibration.method == "auto" and search.table_found
    assert np.abs(search.table_px - TABLE_PX).max() < 0.01 * FRAME[0]
    x0, y0, x1, y1 = PLAY_MM
    markers = project(homography, [(x0 - 30, y0 - 30), (x1 + 30, y0 - 30), (x1 + 30, y1 + 30), (x0 - 30, y1 + 30)])
    assert not calibration.contains(markers).any()
    middle = project(homography, [(x0 + 90, y0 + 90), (x1 - 90, y0 + 90), (x1 - 90, y1 - 90), (x0 + 90, y1 - 90)])
    assert calibration.contains(middle).all()
    # Its size is measured on a table top of TABLE_SIZE_MM: the play area is a part of that.
    assert 0.5 * TABLE_SIZE_MM[0] < calibration.size_mm[0] < TABLE_SIZE_MM[0]


def test_auto_without_a_table_says_so() -> None:
    """A frame covered edge to edge with things that are not a table (big patches of every colour)."""
    patches = np.random.default_rng(1).integers(0, 255, (9, 16, 3), dtype=np.uint8)
    with pytest.raises(CalibrationError, match="no play area found"):
        Calibration.auto(cv2.resize(patches, (640, 360), interpolation=cv2.INTER_NEAREST))


def test_largest_free_rectangle() -> None:
    free = np.ones((6, 8), bool)
    free[0, :] = False  # a rack along the top
    free[:, 6] = False  # and one down the right side
    assert _largest_free_rectangle(free) == (0, 1, 6, 6)
    assert _largest_free_rectangle(np.zeros((3, 3), bool)) is None


# Filmed games as users set their cameras up (vision.synth.video): 2 to 6 racks, clutter, tilted, distorted lenses.
OPENINGS = [
    # players, seed, staging
    (2, 1, {}),  # two racks facing each other, the pool in a corner
    (4, 3, {}),
    (6, 5, {}),  # two racks on each long edge
    (4, 6, {"clutter": True}),  # cups, a sheet, a phone, a tablecloth, sleeves, the next table
    (4, 9, {"tilt_deg": 30, "distortion": -0.08}),  # a camera tilted to 30 degrees, barrel distortion
    (3, 11, {"glare": True}),
]


@pytest.mark.parametrize(("players", "seed", "staging"), OPENINGS)
def test_auto_play_area_of_a_filmed_table(players: int, seed: int, staging: dict) -> None:
    """Every tile standing in a rack and every face-down pool tile lies outside; the true play area inside."""
    from vision.synth.video import Staging, opening_frame

    profile = "official-6p" if players > 4 else "official"
    frame = opening_frame(players=players, seed=seed, profile=profile, size=(960, 540), staging=Staging(**staging))
    calibration = Calibration.auto(frame.image)
    assert not calibration.contains(frame.rack_tiles_px).any()
    assert not calibration.contains(frame.pool_px).any()
    assert calibration.contains(frame.play_area_px, margin_mm=5.0).all()


def test_corners_and_whole_frame() -> None:
    calibration = Calibration.from_corners([(100, 50), (900, 60), (950, 700), (60, 690)], size_mm=(800, 600))
    assert np.allclose(calibration.to_table([(100, 50), (950, 700)]), [(0, 0), (800, 600)])
    frame = Calibration.whole_frame(1280, 720, margin=0.1)
    assert np.allclose(frame.corners_px[0], (128, 72)) and frame.method == "frame"
    assert np.allclose(frame.to_table((640, 360)), np.array(frame.size_mm) / 2)
    assert frame.size_mm[0] == 1000


@pytest.mark.parametrize(
    ("corners", "message"),
    [
        ([(100, 50), (60, 690), (950, 700), (900, 60)], "clockwise"),  # anticlockwise
        ([(100, 50), (950, 700), (900, 60), (60, 690)], "clockwise"),  # crossing
        ([(100, 50), (900, 60), (950, 700)], "4 \\[x, y\\] pairs"),  # three corners
        ("corners", "4 \\[x, y\\] pairs"),  # not numbers
    ],
)
def test_bad_corners_are_refused(corners: object, message: str) -> None:
    with pytest.raises(CalibrationError, match=message):
        Calibration.from_corners(corners)


def test_calibrate_does_what_it_is_asked(scene: tuple[np.ndarray, np.ndarray]) -> None:
    image = scene[0]
    assert calibrate(image, "frame", margin=0.05).reference is not None
    assert calibrate(image, "corners", TABLE_PX).method == "corners"
    with pytest.raises(CalibrationError, match="needs the four corners"):
        calibrate(image, "corners")
    with pytest.raises(CalibrationError, match="unknown calibration method 'magic'"):
        calibrate(image, "magic")


# -- files -------------------------------------------------------------------------------------------------


def test_json_round_trip(scene: tuple[np.ndarray, np.ndarray], tmp_path: Path) -> None:
    calibration = Calibration.from_markers(scene[0])
    calibration.save(tmp_path / "calibration.json")
    loaded = Calibration.load(tmp_path / "calibration.json")
    assert loaded.to_json() == calibration.to_json()
    assert np.allclose(loaded.homography, calibration.homography) and loaded.reference is None
    assert json.loads((tmp_path / "calibration.json").read_text())["method"] == "markers"


SQUARE = "[[0, 0], [90, 0], [90, 90], [0, 90]]"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no such calibration file"),
        ("{corners", "malformed JSON"),
        ("[1, 2]", "a JSON object"),
        ('{"corners_px": [[0, 0], [1, 0], [1, 1], [0, 1]], "size_mm": [1, 1]}', "lacks method"),
        ('{"corners_px": [[0, 0]], "size_mm": [1, 1], "method": "markers"}', "4 \\[x, y\\] pairs"),
        ('{"corners_px": [[0, 0], [90, 0], [90, 90], [0, 90]], "size_mm": [-1, 1], "method": "auto"}', "positive"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),  # was a RecursionError traceback
        (f'{{"corners_px": {SQUARE}, "size_mm": [1, 1], "method": "auto", "image_size": [1e309, 5]}}', "image_size"),
        (f'{{"corners_px": {SQUARE}, "size_mm": [1, 1], "method": "auto", "image_size": [-4, 5]}}', "whole pixels"),
        (f'{{"corners_px": {SQUARE}, "size_mm": [1, 1], "method": ["auto"]}}', "method must be a name"),
        (f'{{"corners_px": {SQUARE}, "size_mm": [1e300, 1], "method": "auto"}}', "size_mm"),
    ],
)
def test_malformed_calibration_files_are_one_line_errors(tmp_path: Path, text: str | None, message: str) -> None:
    path = tmp_path / "calibration.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(CalibrationError, match=message) as error:
        Calibration.load(path)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=20,
)
NUMBERS = st.integers(-(10**20), 10**20) | st.floats()
CALIBRATION_FIELDS = {
    "corners_px": st.lists(st.lists(NUMBERS, min_size=2, max_size=2), min_size=3, max_size=5) | JSON_VALUES,
    "size_mm": st.lists(NUMBERS, min_size=2, max_size=2) | JSON_VALUES,
    "method": st.sampled_from(["markers", "auto", "corners", "frame", "edge"]) | JSON_VALUES,
    "image_size": st.lists(NUMBERS, min_size=2, max_size=2) | JSON_VALUES,
}


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({}, optional=CALIBRATION_FIELDS) | JSON_VALUES)
def test_any_calibration_json_loads_or_is_one_calibration_error(data: object) -> None:
    """Fuzzed files (numbers of any size, nan, wrong types, missing fields): a calibration, or a CalibrationError
    naming the file in one line; nothing else escapes (it would be a traceback of analyze and live)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "calibration.json"
        path.write_text(json.dumps(data))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # an overflow warning would be a second line on stderr
                calibration = Calibration.load(path)
        except CalibrationError as error:
            assert str(error).startswith(str(path)) and "\n" not in str(error)
        else:
            assert np.isfinite(calibration.homography).all() and np.isfinite(calibration.inverse).all()


# -- camera motion -----------------------------------------------------------------------------------------


def test_motion_check_sees_a_shift_but_not_noise_or_light(scene: tuple[np.ndarray, np.ndarray]) -> None:
    image, _ = scene
    check = CameraMotionCheck(Calibration.from_markers(image))
    noisy = np.clip(image + np.random.default_rng(2).normal(0, 8, image.shape), 0, 255).astype(np.uint8)
    darker = np.clip(image * 0.6 + 30, 0, 255).astype(np.uint8)
    shifted = cv2.warpAffine(image, np.float64([[1, 0, 15], [0, 1, 0]]), FRAME, borderMode=cv2.BORDER_REPLICATE)

    assert not check.check(noisy).moved
    assert not check.check(darker).moved and check.check(darker).score > 0.9
    result = check.check(shifted)
    assert result.moved and result.shift_px == pytest.approx(15, abs=1.5)
    assert result.shift == pytest.approx((15, 0), abs=1.5)
    covered = check.check(np.zeros_like(image))  # the picture is gone: a covered lens, another scene
    assert covered.moved and covered.shift is None


def test_a_shifted_calibration_follows_the_camera(scene: tuple[np.ndarray, np.ndarray]) -> None:
    image, _ = scene
    calibration = Calibration.from_markers(image, size_mm=(1000, 700))
    moved = cv2.warpAffine(image, np.float64([[1, 0, -9], [0, 1, 12]]), FRAME, borderMode=cv2.BORDER_REPLICATE)
    check = CameraMotionCheck(calibration)
    result = check.check(moved)
    assert result.moved and result.shift is not None
    followed = calibration.shifted(*result.shift)
    again = Calibration.from_markers(moved, size_mm=(1000, 700))
    assert np.abs(followed.corners_px - again.corners_px).max() < 2.0
    assert not check.rebased(followed, moved).check(moved).moved


# -- command line ------------------------------------------------------------------------------------------


def test_markers_command_writes_the_pdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.pdf"
    assert main(["markers", "--out", str(out), "--size-mm", "50", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "out": str(out), "marker_mm": 50.0, "page": "A4", "pages": 1, "ids": [0, 1, 2, 3]
    }  # fmt: skip
    assert out.read_bytes().startswith(b"%PDF")


def test_calibrate_command_prints_and_saves_the_corners(
    scene_png: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "calibration.json"
    assert main(["calibrate", str(scene_png), "--method", "markers", "--out", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["method"] == "markers" and len(printed["corners_px"]) == 4
    assert Calibration.load(out).to_json()["corners_px"] == printed["corners_px"]
    assert main(["calibrate", str(scene_png), "--method", "auto"]) == 0
    text = capsys.readouterr().out
    assert "found by auto" in text and "bottom-left" in text


def test_calibrate_preview_draws_the_play_area_chosen(scene_png: Path, tmp_path: Path) -> None:
    preview_png = tmp_path / "preview.png"
    assert main(["calibrate", str(scene_png), "--method", "auto", "--preview", str(preview_png)]) == 0
    drawn, photo = cv2.imread(str(preview_png)), cv2.imread(str(scene_png))
    assert drawn.shape == photo.shape
    corners = Calibration.auto(photo).corners_px
    x, y = np.round(corners.mean(axis=0)).astype(int)
    assert (drawn[y, x] == photo[y, x]).all()  # the middle of the play area is left as it is
    green = (drawn[:, :, 1] > 200) & (drawn[:, :, 0] < 40) & (drawn[:, :, 2] < 40)
    x0, y0 = np.round(corners[0]).astype(int)
    assert green[y0 - 3 : y0 + 4, x0 - 3 : x0 + 4].any()  # its outline in green
    assert main(["calibrate", str(scene_png), "--method", "auto", "--preview", str(tmp_path / "no" / "p.png")]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["calibrate", "no-such-photo.jpg"], "no such image file"),
        (["calibrate", "{png}", "--method", "corners"], "--corners goes with --method corners"),
        (["markers", "--out", "no/such/folder/m.pdf"], "cannot write the PDF"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], message: str, scene_png: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.replace("{png}", str(scene_png)) for a in args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
