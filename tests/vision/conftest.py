"""Stand-in ONNX models for the recognition tests: tiny graphs built with ``onnx.helper``, no training needed.

- the detector ignores its input and returns a fixed (1, 5, A) YOLOv8 tensor (boxes in letterbox pixels);
- the classifier maps each crop's mean colour to probabilities: red -> red-5, green -> red-6, blue -> red-7,
  anything grey -> equal odds (an uncertain reading); ``angle_deg`` is a constant.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from referee.tiles import ALL_LABELS

STANDIN_LABELS = ("red-5", "red-6", "red-7")
"""What a red, a green and a blue crop read as."""
LOGIT_SCALE = 60.0


def _save(model: object, path: Path) -> Path:
    import onnx

    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def build_detector(path: Path, output: np.ndarray, imgsz: int = 320, any_size: bool = False) -> Path:
    """A "detector" that always outputs ``output`` (1, 5, A), with Ultralytics' ``imgsz`` metadata; with
    ``any_size`` its input has dynamic height and width, like a detector exported with dynamic axes."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    output = np.asarray(output, np.float32)
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], keepdims=0),
        helper.make_node("Mul", ["mean", "zero"], ["nothing"]),
        helper.make_node("Add", ["fixed", "nothing"], ["output0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "standin-detector",
        [
            helper.make_tensor_value_info(
                "images", TensorProto.FLOAT, [1, 3, *(["height", "width"] if any_size else [imgsz, imgsz])]
            )
        ],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(output.shape))],
        [numpy_helper.from_array(output, "fixed"), numpy_helper.from_array(np.float32(0), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.helper.set_model_props(model, {"imgsz": f"[{imgsz}, {imgsz}]", "task": "detect"})
    return _save(model, path)


def build_classifier(path: Path, angle_deg: float = 0.0) -> Path:
    """A "classifier": softmax of the crop's mean RGB times a fixed matrix; a constant angle."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    weights = np.zeros((3, len(ALL_LABELS)), np.float32)
    for channel, label in enumerate(STANDIN_LABELS):
        weights[channel, ALL_LABELS.index(label)] = LOGIT_SCALE
    # Colour channels minus their mean, so a grey crop gives equal logits whatever its brightness.
    centre = (np.eye(3) - 1 / 3).astype(np.float32)
    nodes = [
        helper.make_node("ReduceMean", ["crops"], ["rgb"], axes=[2, 3], keepdims=0),
        helper.make_node("MatMul", ["rgb", "centre"], ["centred"]),
        helper.make_node("MatMul", ["centred", "weights"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
        helper.make_node("ReduceMean", ["rgb"], ["level"], axes=[1], keepdims=0),
        helper.make_node("Mul", ["level", "zero"], ["nothing"]),
        helper.make_node("Add", ["nothing", "angle"], ["angle_deg"]),
    ]
    graph = helper.make_graph(
        nodes,
        "standin-classifier",
        [helper.make_tensor_value_info("crops", TensorProto.FLOAT, ["N", 3, 64, 64])],
        [
            helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", len(ALL_LABELS)]),
            helper.make_tensor_value_info("angle_deg", TensorProto.FLOAT, ["N"]),
        ],
        [
            numpy_helper.from_array(weights, "weights"),
            numpy_helper.from_array(centre, "centre"),
            numpy_helper.from_array(np.float32(0), "zero"),
            numpy_helper.from_array(np.float32(angle_deg), "angle"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return _save(model, path)


def yolo_output(boxes_cxcywh: list[tuple[float, float, float, float]], scores: list[float], anchors: int = 64):
    """A (1, 5, anchors) tensor holding the given boxes and scores, zeros elsewhere."""
    tensor = np.zeros((1, 5, anchors), np.float32)
    for k, (box, score) in enumerate(zip(boxes_cxcywh, scores, strict=True)):
        tensor[0, :4, k] = box
        tensor[0, 4, k] = score
    return tensor


@pytest.fixture
def standin_models(tmp_path: Path) -> Callable[..., Path]:
    """``make(output, imgsz=320, angle_deg=0, any_size=False) -> models dir`` with a stand-in detector and
    classifier."""

    def make(output: np.ndarray, imgsz: int = 320, angle_deg: float = 0.0, any_size: bool = False) -> Path:
        folder = tmp_path / "models"
        folder.mkdir(exist_ok=True)
        build_detector(folder / "tile-detector.onnx", output, imgsz, any_size)
        build_classifier(folder / "tile-classifier.onnx", angle_deg)
        return folder

    return make


@pytest.fixture
def make_yolo_output() -> Callable[..., np.ndarray]:
    """The :func:`yolo_output` builder, for tests (conftest modules are not imported by name)."""
    return yolo_output


# -- scripted table scenes (for the live pipeline's tests) -------------------------------------------------

TABLE_BGR = (60, 120, 50)
"""A green cloth: coloured, so the reader's "whitish" test never mistakes it for a tile."""
TILE_BGR = (225, 230, 235)
BIT_BGR = (40, 40, 40)
ARM_BGR = (120, 160, 215)
"""Skin: brighter than the cloth in grey levels (the activity meter compares grey images)."""
TILE_W, TILE_H, TILE_GAP = 24, 32, 5
"""A tile's box in a 480 x 360 frame; neighbours in a set are TILE_GAP apart (layout links them)."""
BIT = 5
BIT_SPOTS = ((5, 5), (14, 5), (5, 13), (14, 13), (5, 21), (14, 21))
"""Top-left corners, inside a tile, of the six squares that write its label (index + 1 in binary)."""
ROW_STEP = 50
SIDES = ("bottom", "right", "top", "left")


class TableScene:
    """A table seen from above, drawn with cv2, that a :class:`PixelReader` reads back from the pixels.

    ``show(table)`` lays each set on its own row and the loose tiles on the last one; ``arm`` is the side an
    arm reaches in from (``None``: no arm); it wiggles (hands at work) unless ``arm_still``. ``shift`` moves
    the whole picture (a bumped camera) and ``brightness`` scales it (a lamp, a cloud). ``glare`` (x, y, radius)
    washes a disk of the table out to white, tiles and all (a lamp's hot spot, saturated); an arm over it shows. With
    ``glare_bgr`` the disk is that colour instead (a hot spot short of saturation), and tiles in it are white with
    faint digits (washed out: neither the reader nor a person can read them).
    """

    def __init__(self, size: tuple[int, int] = (480, 360)) -> None:
        self.size = size
        self.tiles: dict[tuple[int, int], str] = {}
        self.arm: str | None = None
        self.arm_at = 0.5
        """Where along its side the arm comes in (share of the side)."""
        self.arm_reach = 0.5
        self.arm_still = False
        self.shift = (0, 0)
        self.brightness = 1.0
        self.glare: tuple[int, int, int] | None = None
        self.glare_bgr: tuple[int, int, int] | None = None
        self._wiggle = 0
        self._frames = 0

    def show(self, table: object) -> None:
        from referee.table import Table

        table = table if isinstance(table, Table) else Table.parse(str(table))
        self.tiles = {}
        x0, y0 = 60, 40
        for row, tile_set in enumerate(table.sets):
            for k, tile in enumerate(tile_set):
                self.tiles[(x0 + k * (TILE_W + TILE_GAP), y0 + row * ROW_STEP)] = str(tile)
        for k, tile in enumerate(table.loose):
            self.tiles[(x0 + k * 2 * TILE_W, y0 + len(table.sets) * ROW_STEP)] = str(tile)

    def centre_of(self, label: str) -> tuple[float, float]:
        (x, y) = next(xy for xy, lab in self.tiles.items() if lab == label)
        return x + self.shift[0] + TILE_W / 2, y + self.shift[1] + TILE_H / 2

    def aim_arm(self, side: str, label: str) -> None:
        """An arm from ``side`` whose hand covers the tile ``label``."""
        width, height = self.size
        x, y = self.centre_of(label)
        self.arm = side
        along, centre, span = (x, y, height) if side in ("bottom", "top") else (y, x, width)
        self.arm_at = along / (width if side in ("bottom", "top") else height)
        reach = (span - centre if side in ("bottom", "right") else centre) + 0.75 * TILE_H  # just past the tile
        self.arm_reach = min(reach / span, 0.95)  # never across the whole table

    def film(self, path: Path, script: list[tuple[str, object, int]]) -> Path:
        """A 10 fps MJPG video of ``script``: steps of (arm's side or "", table shown halfway through the step or
        None, frames), starting from the table shown now."""
        import cv2

        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, self.size)
        for side, table, count in script:
            self.arm = side or None
            for k in range(count):
                if table is not None and k == count // 2:
                    self.show(table)
                writer.write(self.frame())
        writer.release()
        return path

    def frame(self) -> np.ndarray:
        import cv2

        width, height = self.size
        image = np.empty((height, width, 3), np.uint8)
        image[:] = TABLE_BGR
        dx, dy = self.shift
        washed_out = self.glare is not None and self.glare_bgr is not None
        if washed_out:
            gx, gy, radius = self.glare
            cv2.circle(image, (gx + dx, gy + dy), radius, self.glare_bgr, -1)
        for (x, y), label in self.tiles.items():
            x, y = x + dx, y + dy
            washed = washed_out and np.hypot(x + TILE_W / 2 - gx - dx, y + TILE_H / 2 - gy - dy) < radius
            body, ink = ((246, 246, 246), (238, 238, 238)) if washed else (TILE_BGR, BIT_BGR)
            cv2.rectangle(image, (x, y), (x + TILE_W - 1, y + TILE_H - 1), body, -1)
            code = ALL_LABELS.index(label) + 1
            for bit, (bx, by) in enumerate(BIT_SPOTS):
                if code >> bit & 1:
                    cv2.rectangle(image, (x + bx, y + by), (x + bx + BIT - 1, y + by + BIT - 1), ink, -1)
        if self.glare is not None and not washed_out:
            gx, gy, radius = self.glare
            cv2.circle(image, (gx + dx, gy + dy), radius, (255, 255, 255), -1)
        if self.arm is not None:
            self._frames += 1  # the hand moves in a 5-frame cycle: sampling every 2nd or 3rd frame still sees it
            self._wiggle = 0 if self.arm_still else (0, 6, -6, 3, -3)[self._frames % 5]
            cv2.fillConvexPoly(image, self._arm_polygon(), ARM_BGR)
        if self.brightness != 1.0:
            image = np.clip(image * self.brightness, 0, 255).astype(np.uint8)
        return image

    def _arm_polygon(self) -> np.ndarray:
        width, height = self.size
        half = 30
        if self.arm in ("bottom", "top"):
            cx = round(self.arm_at * width) + self._wiggle
            depth = round(self.arm_reach * height)
            y0, y1 = (height - depth, height) if self.arm == "bottom" else (0, depth)
            return np.array([[cx - half, y0], [cx + half, y0], [cx + half, y1], [cx - half, y1]], np.int32)
        cy = round(self.arm_at * height) + self._wiggle
        depth = round(self.arm_reach * width)
        x0, x1 = (width - depth, width) if self.arm == "right" else (0, depth)
        return np.array([[x0, cy - half], [x1, cy - half], [x1, cy + half], [x0, cy + half]], np.int32)


class PixelReader:
    """A stand-in tile reader: finds the scene's tiles in the pixels (tile-sized whitish blobs) and decodes
    their labels from the dark squares, so a shifted, dimmed, covered or video-compressed frame reads as it
    looks. ``confidence`` maps labels to the probability reported (default 0.97); ``calls`` counts readings."""

    def __init__(self, confidence: dict[str, float] | None = None, default: float = 0.97) -> None:
        self.confidence = dict(confidence or {})
        self.default = default
        self.calls = 0

    def read(self, image: np.ndarray, region: object = None, on_table: object = None) -> object:
        from vision.runtime.reader import Reading

        self.calls += 1
        return Reading(self.detect(image))

    def detect(self, image: np.ndarray) -> object:
        """The labelled tiles of :meth:`read`'s reading."""
        import cv2

        from vision.runtime.detections import Detections

        pixels = image.astype(np.int16)
        high, low = pixels.max(axis=2), pixels.min(axis=2)
        mask = ((low * 10 > high * 7) & (high > 60)).astype(np.uint8)
        count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        boxes, labels = [], []
        for k in range(1, count):
            x, y, w, h = (int(v) for v in stats[k, :4])
            if abs(w - TILE_W) > 3 or abs(h - TILE_H) > 3:
                continue  # not a tile, or a tile partly covered
            bright = float(np.percentile(gray[y : y + h, x : x + w], 90))
            code = 0
            for bit, (bx, by) in enumerate(BIT_SPOTS):
                if gray[y + by + BIT // 2, x + bx + BIT // 2] < 0.5 * bright:
                    code |= 1 << bit
            if 1 <= code <= len(ALL_LABELS):
                boxes.append([x, y, x + w, y + h])
                labels.append(ALL_LABELS[code - 1])
        if not boxes:
            return Detections.empty().with_(angle_deg=np.zeros(0))
        confidence = [self.confidence.get(label, self.default) for label in labels]
        return Detections.of_boxes(boxes, confidence, labels, angle_deg=np.zeros(len(boxes)))


class SceneFeed:
    """Feeds a scene to a pipeline, ``hz`` samples per second of scene time; keeps every event as the game log
    writes it (the game's typed events as their ``to_json`` lines)."""

    def __init__(self, pipeline: object, scene: TableScene, hz: float = 6.0) -> None:
        self.pipeline, self.scene, self.hz = pipeline, scene, hz
        self.time_s = 0.0
        self.events: list[dict] = []

    @property
    def frame(self) -> int:
        return round(self.time_s * 30)

    def run(self, seconds: float) -> list[dict]:
        """Samples for ``seconds`` of the scene as it is; the events they produced."""
        new: list[dict] = []
        for _ in range(max(1, round(seconds * self.hz))):
            new += map(log_line, self.pipeline.process(self.scene.frame(), self.time_s, self.frame))
            self.time_s += 1 / self.hz
        self.events += new
        return new

    def hands(self, side: str, change: object = None, seconds: float = 2.0) -> list[dict]:
        """An arm from ``side`` over the table for ``seconds``; halfway the table becomes ``change`` (a table)."""
        self.scene.arm = side
        new = self.run(seconds / 2)
        if change is not None:
            self.scene.show(change)
        new += self.run(seconds / 2)
        self.scene.arm = None
        return new

    def clock(self) -> list[dict]:
        new = [log_line(e) for e in self.pipeline.clock(self.time_s, self.frame)]
        self.events += new
        return new

    def of_kind(self, kind: str) -> list[dict]:
        return [e for e in self.events if e["event"] == kind]


def log_line(event: object) -> dict:
    """An event as the game log writes it: a typed game event's ``to_json``, a warning's line as it is."""
    return event if isinstance(event, dict) else event.to_json()


@pytest.fixture(scope="session")
def scenes() -> SimpleNamespace:
    """The scripted-scene kit: ``TableScene``, ``PixelReader``, ``SceneFeed`` and ``pipeline(scene, ...)``."""

    def pipeline(
        scene: TableScene,
        *,
        reader: object = None,
        players: int = 2,
        profile: str = "official",
        config: object = None,
        keeper: object = None,
        **options: object,
    ) -> object:
        from vision.game.moves import GameKeeper
        from vision.game.pipeline import TablePipeline

        keeper = keeper or GameKeeper(profile, players)
        return TablePipeline(reader or PixelReader(), keeper, scene.size, config=config, **options)

    return SimpleNamespace(TableScene=TableScene, PixelReader=PixelReader, SceneFeed=SceneFeed, pipeline=pipeline)


# -- enrolment: rendered grid photos and the shipped classifier's features ------------------------------------


def needs_features() -> None:
    """Skip where the shipped classifier has no ``features`` output (what enrolment adapts)."""
    import onnxruntime as ort

    from vision.runtime.recognition import CLASSIFIER_FILE, default_models_dir

    session = ort.InferenceSession(str(default_models_dir() / CLASSIFIER_FILE), providers=["CPUExecutionProvider"])
    if "features" not in [o.name for o in session.get_outputs()]:
        pytest.skip("the shipped classifier has no 'features' output")


@pytest.fixture(scope="session")
def grid_photos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Rendered enrolment grid photos of one held-out modern-circle set: ``whole``, and ``missing`` (red-7 left
    out)."""
    import cv2

    from vision.synth.grid import GridChange, render_grid_scene
    from vision.synth.scene import SceneParams

    params = SceneParams(split="heldout", editions=("modern-circle",), style_pool=1)
    folder = tmp_path_factory.mktemp("grid")
    photos = {}
    for name, change in (("whole", None), ("missing", GridChange(missing=((2, 7),)))):
        path = folder / f"{name}.jpg"
        cv2.imwrite(str(path), render_grid_scene(3, params, change=change).image)
        photos[name] = path
    return photos
