"""Training from shipped ONNX models: folded weights go back into the training modules and compute the same."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.extras import TRAIN_EXTRA

torch = pytest.importorskip("torch", reason=f"needs torch, {TRAIN_EXTRA}")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from vision.train import classifier as C  # noqa: E402
from vision.train import classifier_data as D  # noqa: E402
from vision.train import onnxinit as O  # noqa: E402


def _random_batchnorms(net: object, seed: int) -> None:
    """Trained-looking BatchNorms (scale, shift, running statistics far from the identity), so that folding
    them into the convolutions changes the exported weights."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in (m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)):
            n = bn.num_features
            bn.weight.copy_(torch.rand(n, generator=generator) * 1.5 + 0.25)
            bn.bias.copy_(torch.randn(n, generator=generator) * 0.3)
            bn.running_mean.copy_(torch.randn(n, generator=generator) * 0.5)
            bn.running_var.copy_(torch.rand(n, generator=generator) * 2 + 0.1)


def _crops(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, 64, 64, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    """A random width-0.5 TileNet and its ONNX export (temperature 1.7)."""
    torch.manual_seed(3)
    net = C.build_model(0.5)
    _random_batchnorms(net, 4)
    net.eval()
    path = tmp_path_factory.mktemp("onnx") / "random-classifier.onnx"
    C.export_onnx(net, 1.7, path)
    return net, path


def test_classifier_round_trips_through_onnx(exported: tuple[object, Path]) -> None:
    net, path = exported
    loaded = O.classifier_from_onnx(path)
    assert loaded.width == pytest.approx(0.5) and loaded.temperature == pytest.approx(1.7, rel=1e-6)
    crops = _crops(64, 0)
    logits, angles = C.predict_logits(net, crops)
    again, again_angles = C.predict_logits(loaded.net, crops)
    assert np.abs(again - logits).max() < 1e-4 * max(1.0, np.abs(logits).max())
    assert C.angle_errors(again_angles, angles).max() < 1e-2
    probs, onnx_angles = C.onnx_predict(C.onnx_session(path), crops)
    ours = C.softmax(again, loaded.temperature)
    assert np.abs(ours - probs).max() < 1e-5
    assert (ours.argmax(1) == probs.argmax(1)).all()
    assert C.angle_errors(again_angles, onnx_angles).max() < 1e-2
    # the export folded its BatchNorms: theirs are now the identity with the folded bias
    bn = net.stem[1]
    assert not torch.allclose(bn.weight, torch.ones_like(bn.weight))
    assert torch.equal(loaded.net.stem[1].weight, torch.ones_like(bn.weight))


def test_recalibrated_batchnorms_keep_the_function_and_fit_train_mode(exported: tuple[object, Path]) -> None:
    _, path = exported
    net = O.classifier_from_onnx(path).net
    crops = _crops(256, 1)
    before, _ = C.predict_logits(net, crops)
    x = torch.from_numpy(C.to_input(crops))

    def train_mode_gap() -> float:
        state = {k: v.clone() for k, v in net.state_dict().items()}
        net.train()
        net.drop.eval()  # dropout's noise is not the BatchNorms' doing
        with torch.no_grad():
            gap = float((net(x)[0] - torch.from_numpy(before)).abs().max())
        net.load_state_dict(state)  # train mode moved the running statistics
        net.eval()
        return gap

    identity_gap = train_mode_gap()
    assert O.recalibrate_batchnorm(net, [x[:128], x[128:]]) == 256
    after, _ = C.predict_logits(net, crops)
    assert np.abs(after - before).max() < 1e-4 * max(1.0, np.abs(before).max())
    assert train_mode_gap() < identity_gap / 20  # a batch of the same data now sees the same function
    stem_input = net.stem[0]((x - 0.5) * 4.0)  # TileNet.forward scales its input so
    assert torch.allclose(net.stem[1].running_mean, stem_input.mean((0, 2, 3)), atol=1e-4)


def test_another_width_is_refused(exported: tuple[object, Path]) -> None:
    _, path = exported
    with pytest.raises(O.OnnxWeightsError, match="shape"):
        O.classifier_from_onnx(path, width=1.0)


def test_not_an_onnx_file_is_one_message(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00not onnx at all" * 10)
    for path in (garbage, tmp_path / "missing.onnx"):
        with pytest.raises(O.OnnxWeightsError) as error:
            O.classifier_from_onnx(path)
        assert "\n" not in str(error.value)


def test_an_int8_classifier_is_read_from_its_float_weights_beside_it(
    exported: tuple[object, Path], tmp_path: Path
) -> None:
    from vision.train.quantize import quantize_classifier

    net, path = exported
    int8 = tmp_path / "tile-classifier.onnx"
    crops = np.stack([np.transpose(c, (2, 0, 1)) for c in _crops(64, 5)]).astype(np.float32) / 255
    quantize_classifier(path, int8, crops, tmp_path / "work")
    with pytest.raises(O.OnnxWeightsError, match=r"tile-classifier-fp32\.onnx are not beside it") as error:
        O.classifier_from_onnx(int8)
    assert "\n" not in str(error.value)
    shutil.copyfile(path, tmp_path / "tile-classifier-fp32.onnx")
    loaded = O.classifier_from_onnx(int8)
    logits, _ = C.predict_logits(net, _crops(8, 6))
    again, _ = C.predict_logits(loaded.net, _crops(8, 6))
    assert np.abs(again - logits).max() < 1e-4 * max(1.0, np.abs(logits).max())  # the float weights, exactly


def test_recipe_init_from_onnx_trains_from_those_weights(exported: tuple[object, Path], tmp_path: Path) -> None:
    """``model.init: X.onnx`` in train_model: with a zero learning rate the weights stay the export's."""
    net, path = exported
    tiles = D.TileSet()
    rng = np.random.default_rng(0)
    for i in range(8):
        patch = rng.integers(0, 256, (120, 120, 3), dtype=np.uint8)
        tiles.add(patch, np.float32([[40, 30], [80, 30], [80, 90], [40, 90]]), i % 4, 0.0, "x")
    train_set = D.CropDataset(tiles, list(range(8)) * 4, D.AugmentParams(), 0)
    dev = [C.DevSet("train_slice", *D.fixed_crops(tiles, 0))]
    cfg = {"init": str(path), "width": 0.5, "epochs": 1, "batch": 16, "lr": 0.0, "weight_decay": 0.0, "workers": 0}
    trained, history = C.train_model(train_set, dev, cfg, log=lambda message: None)
    crops = _crops(32, 2)
    ours, _ = C.predict_logits(trained, crops)
    theirs, _ = C.predict_logits(net, crops)
    # the training batches still move the running statistics a little (BatchNorm momentum)
    assert history and np.abs(ours - theirs).max() < 2e-2 * max(1.0, np.abs(theirs).max())


def test_scope_names_follow_torch_exporter() -> None:
    assert O.scope_name("stages.0.body.3") == "/stages/stages.0/body/body.3"
    assert O.scope_name("stem.0") == "/stem/stem.0"
    assert O.scope_name("last.skip.0") == "/last/skip/skip.0"


def test_detector_round_trips_through_a_fused_onnx_export(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics", reason=f"needs ultralytics, {TRAIN_EXTRA}")
    from ultralytics.nn.tasks import DetectionModel

    torch.manual_seed(0)
    net = DetectionModel("yolov8n.yaml", nc=1, verbose=False)
    _random_batchnorms(net, 1)
    net.eval()
    x = torch.rand(2, 3, 128, 128)
    with torch.no_grad():
        expected = net(x)[0].numpy()
        fused = DetectionModel("yolov8n.yaml", nc=1, verbose=False)
        fused.load_state_dict(net.state_dict())
        fused = fused.fuse().eval()  # what Ultralytics' export does before writing the graph
        path = tmp_path / "detector.onnx"
        torch.onnx.export(
            fused,
            (x,),
            str(path),
            dynamo=False,
            opset_version=17,
            input_names=["images"],
            dynamic_axes={"images": {0: "n"}},
        )
    loaded = O.detector_from_onnx(path)
    assert loaded.names == {0: "tile"}
    ours = O.detector_raw(loaded, x.numpy())
    assert np.abs(ours - expected).max() < 1e-3 * max(1.0, np.abs(expected).max())
    diff = O.compare_detector(loaded, path, x.numpy())
    assert diff.max_abs_scores < 1e-4 and diff.max_abs_boxes < 1e-2
    checkpoint = O.save_detector_checkpoint(loaded, tmp_path / "from-onnx.pt", str(path), imgsz=128)
    from ultralytics.nn.tasks import load_checkpoint

    again, ckpt = load_checkpoint(checkpoint)
    assert ckpt["train_args"]["imgsz"] == 128
    assert np.abs(O.detector_raw(again, x.numpy()) - ours).max() < 1e-5 * max(1.0, np.abs(ours).max())
