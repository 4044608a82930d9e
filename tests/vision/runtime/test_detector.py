"""The detector's input and its ONNX Runtime sessions (the rest of the detector: test_recognition.py)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.runtime import models
from vision.runtime.detector import Letterbox, YoloOnnxDetector, to_tensor
from vision.runtime.models import DETECTOR_FILE, default_models_dir


@pytest.mark.parametrize(
    ("height", "width"),
    [
        (448, 448),  # a photo's first reading
        (672, 864),  # a 1280x960 photo read again at tile scale
        (1, 7),  # a strip
    ],
)
def test_the_input_tensor_holds_the_same_floats_as_dividing_the_whole_image(height: int, width: int) -> None:
    image = np.random.default_rng(height * width).integers(0, 256, (height, width, 3), dtype=np.uint8)
    expected = np.ascontiguousarray(image[..., ::-1].transpose(2, 0, 1)[None], dtype=np.float32) / 255.0
    tensor = to_tensor(image)
    assert tensor.dtype == np.float32 and tensor.flags.c_contiguous
    assert np.array_equal(tensor, expected)  # bit for bit: RGB planes, 0..255 -> 0..1


def test_the_input_of_a_letterboxed_crop_of_a_frame() -> None:
    frame = np.random.default_rng(0).integers(0, 256, (300, 500, 3), dtype=np.uint8)
    boxed, _, _ = Letterbox(160).apply(frame[50:250, 100:400])  # a window: a view into the frame
    assert np.array_equal(to_tensor(boxed)[0, 0], boxed[..., 2] / np.float32(255.0))


@pytest.mark.parametrize("spin", [False, True])
def test_sessions_spin_wait_only_when_asked(spin: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "SPIN_WAIT", spin)
    session = YoloOnnxDetector(default_models_dir() / DETECTOR_FILE).session
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == ("1" if spin else "0")
    assert options.intra_op_num_threads == models.INTRA_OP_THREADS
