"""Trained weights back out of the shipped ONNX models, so training can continue from them (issue 14).

Only ONNX files ship; the ``.pt`` weights of the runs that made them were never kept. The exports folded every
BatchNorm into the convolution before it (a conv with a bias), so the folded weights go back into the training
module as: the conv's weight, and a BatchNorm that adds the folded bias (weight 1, bias b, running mean 0,
running variance 1 - eps). That module computes exactly what the ONNX graph computes in eval mode.

In *train* mode a BatchNorm normalises by each batch's own statistics, which that identity BatchNorm would
turn into a different function (every channel rescaled to unit variance): training would start far from the
trained weights. :func:`recalibrate_batchnorm` therefore re-parameterises each BatchNorm with the statistics of
its input on real training inputs, keeping the eval function (running mean/variance = the data's, weight and
bias such that the output is unchanged), so that a training batch sees about the function it was trained as.

- Classifier: ``model.init: models/tile-classifier.onnx`` in a classifier recipe (``train_model`` converts it
  and recalibrates on training crops). The temperature the ONNX graph multiplies the logits by (``inv_t``) is
  read out and reported; training fits a new one after training anyway.
- Detector: ``model: cache/tile-detector-fp32.onnx`` in a detector recipe (``train_detector`` converts it to
  ``<out>/init-from-onnx.pt``, recalibrated on training images), or on its own::

      python -m vision.train.onnxinit detector cache/tile-detector-fp32.onnx cache/detector-v2-from-onnx.pt

  which also checks the rebuilt model's raw outputs against ONNX Runtime on real training photos. The shipped
  detector is INT8 (QDQ); its FP32 source is in git history (see models/detector-from-onnx-smoke.yaml).

``torch`` (and Ultralytics for the detector) are imported inside the functions: this module is for training.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CLASSIFIER_BASE_CHANNELS = (24, 48, 96, 192)
"""``TileNet``'s channels (stem, stages, last) at width 1.0: the width of an exported classifier is read back
from its convolutions' channels."""
CLASSIFIER_STAGE_CONVS = (0, 1, 4, 7)
"""Graph positions of the first conv of the stem, the two stages and the last block among the folded convs."""
CALIBRATION_CROPS = 1024
"""Augmented training crops whose statistics recalibrate the classifier's BatchNorms."""
CALIBRATION_IMAGES = 64
"""Training images (letterboxed) whose statistics recalibrate the detector's BatchNorms."""


class OnnxWeightsError(ValueError):
    """The ONNX model does not fit the training module (another architecture, width or class count)."""


@dataclass(frozen=True)
class FoldedConv:
    """One Conv node of an exported graph: its node name, weight and bias (``None`` without one)."""

    node: str
    weight_name: str
    weight: np.ndarray
    bias: np.ndarray | None


@dataclass
class ClassifierFromOnnx:
    """A ``TileNet`` holding an exported classifier's weights, its width and the exported temperature."""

    net: Any
    width: float
    temperature: float


def _load_onnx(path: Path | str) -> Any:
    import onnx

    path = Path(path)
    if not path.is_file():
        raise OnnxWeightsError(f"no ONNX model {str(path)!r}")
    try:
        return onnx.load(str(path))
    except Exception as error:  # protobuf's errors are many and unhelpful
        raise OnnxWeightsError(f"{path}: not an ONNX model ({str(error).splitlines()[0][:200]})") from None


def is_quantized(model: Any) -> bool:
    """Whether the graph holds quantized tensors (QDQ pairs or quantized operators)."""
    return any(n.op_type in ("DequantizeLinear", "QLinearConv", "ConvInteger") for n in model.graph.node)


def initializers(model: Any) -> dict[str, np.ndarray]:
    """The graph's initializers by name (float weights as numpy arrays), with the names the exporter aliased to
    them through Identity nodes (it keeps one copy of equal tensors, e.g. heads' biases never trained apart)."""
    from onnx import numpy_helper

    found = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Identity" and node.input[0] in found:
            found[node.output[0]] = found[node.input[0]]
    return found


def folded_convs(model: Any) -> list[FoldedConv]:
    """Every Conv node whose weight is an initializer, in graph order."""
    weights = initializers(model)
    out = []
    for node in model.graph.node:
        if node.op_type != "Conv" or node.input[1] not in weights:
            continue
        bias = weights[node.input[2]] if len(node.input) > 2 and node.input[2] else None
        out.append(FoldedConv(node.name, node.input[1], weights[node.input[1]], bias))
    return out


def set_folded(conv: Any, bn: Any, folded: FoldedConv, where: str) -> None:
    """``conv`` + ``bn`` computing the folded conv in eval mode: the weight, and the bias in the BatchNorm
    (identity: weight 1, running mean 0, running variance 1 - eps) or on the conv when it has a bias."""
    import torch

    _check_shape(conv.weight, folded.weight, f"{where} weight ({folded.node})")
    bias = folded.bias if folded.bias is not None else np.zeros(folded.weight.shape[0], np.float32)
    with torch.no_grad():
        conv.weight.copy_(torch.from_numpy(np.array(folded.weight, np.float32)))
        if bn is None:
            if conv.bias is None:
                raise OnnxWeightsError(f"{where}: the exported conv {folded.node} has a bias the module cannot hold")
            _check_shape(conv.bias, bias, f"{where} bias")
            conv.bias.copy_(torch.from_numpy(np.array(bias, np.float32)))
            return
        if conv.bias is not None:
            conv.bias.zero_()
        _check_shape(bn.bias, bias, f"{where} bias")
        bn.weight.fill_(1.0)
        bn.bias.copy_(torch.from_numpy(np.array(bias, np.float32)))
        bn.running_mean.zero_()
        bn.running_var.fill_(1.0 - bn.eps)


def _check_shape(tensor: Any, array: np.ndarray, where: str) -> None:
    if tuple(tensor.shape) != tuple(array.shape):
        raise OnnxWeightsError(f"{where}: the module has shape {tuple(tensor.shape)}, the ONNX model {array.shape}")


def _copy(param: Any, array: np.ndarray, where: str) -> None:
    import torch

    _check_shape(param, array, where)
    with torch.no_grad():
        param.copy_(torch.from_numpy(np.array(array, np.float32)))


def conv_bn_pairs(net: Any) -> list[tuple[str, Any, Any]]:
    """(name, conv, BatchNorm) of every Conv2d followed by a BatchNorm2d in the same ``nn.Sequential``, in the
    order the modules are registered (which is the order of the forward pass, and of the exported graph, for
    ``TileNet``)."""
    from torch import nn

    pairs = []
    for name, module in net.named_modules():
        if not isinstance(module, nn.Sequential):
            continue
        children = list(module.named_children())
        for (child, conv), (_, bn) in itertools.pairwise(children):
            if isinstance(conv, nn.Conv2d) and isinstance(bn, nn.BatchNorm2d):
                pairs.append((f"{name}.{child}" if name else child, conv, bn))
    return pairs


def scope_name(module_path: str) -> str:
    """The node-name prefix torch's ONNX exporter gives a module: ``stages.0.body.3`` ->
    ``/stages/stages.0/body/body.3`` (a Sequential's child is named with its parent's attribute)."""
    parts: list[str] = []
    for part in module_path.split("."):
        parts.append(f"{parts[-1].split('.')[0]}.{part}" if part.isdigit() and parts else part)
    return "/" + "/".join(parts)


# --------------------------------------------------------------------------------------------------- classifier


def classifier_from_onnx(path: Path | str, width: float | None = None) -> ClassifierFromOnnx:
    """``build_model()``'s module with the weights of an exported classifier (``models/tile-classifier.onnx``).

    Folded convs are matched in graph order to the module's conv + BatchNorm pairs (shapes checked, and node
    names where the exporter named them after the modules); the heads are copied by name. ``width`` defaults
    to the one the convolutions' channels imply. The BatchNorms are the identity plus the folded bias: call
    :func:`recalibrate_batchnorm` on training inputs before training in train mode. A quantized (INT8) classifier is
    read from its float weights beside it (:func:`vision.runtime.models.float_weights`): int8 weights are not
    trained on."""
    from vision.train.classifier import build_model

    model = _load_onnx(path)
    if is_quantized(model):
        from vision.runtime.models import float_weights

        float_path = float_weights(Path(path))
        if not float_path.is_file():
            raise OnnxWeightsError(f"{path}: an INT8 model, and its float weights {float_path.name} are not beside it")
        path, model = float_path, _load_onnx(float_path)
        if is_quantized(model):
            raise OnnxWeightsError(f"{path}: quantized too; float weights are needed")
    weights = initializers(model)
    convs = _backbone_convs(model)
    if not convs:
        raise OnnxWeightsError(f"{path}: no convolution in the graph")
    width = classifier_width(convs, path) if width is None else float(width)
    net = build_model(width)
    pairs = conv_bn_pairs(net)
    if len(pairs) != len(convs):
        raise OnnxWeightsError(
            f"{path}: {len(convs)} folded convolutions, the width-{width:g} classifier has {len(pairs)}"
        )
    for (name, conv, bn), folded in zip(pairs, convs, strict=True):
        if folded.node.startswith("/net/") and not folded.node.startswith(f"/net{scope_name(name)}/"):
            raise OnnxWeightsError(f"{path}: graph node {folded.node} where the module has {name}")
        set_folded(conv, bn, folded, f"{path}: {name}")
    state = net.state_dict()
    for key in state:
        if key.startswith(("label.", "angle.")):
            source = f"net.{key}"
            if source not in weights:
                raise OnnxWeightsError(f"{path}: no initializer {source} for the head")
            _copy(state[key], weights[source], f"{path}: {key}")
    inv_t = weights.get("inv_t")
    temperature = 1.0 / float(inv_t) if inv_t is not None and float(inv_t) > 0 else 1.0
    net.eval()
    return ClassifierFromOnnx(net, width, temperature)


def classifier_width(convs: Sequence[FoldedConv], path: Path | str) -> float:
    """The ``width`` whose ``TileNet`` has the exported convolutions' channels."""
    if len(convs) <= max(CLASSIFIER_STAGE_CONVS):
        raise OnnxWeightsError(f"{path}: {len(convs)} convolutions, too few for the tile classifier")
    channels = [int(convs[i].weight.shape[0]) for i in CLASSIFIER_STAGE_CONVS]
    for found, base in zip(channels, CLASSIFIER_BASE_CHANNELS, strict=True):
        width = found / base
        if [max(8, round(b * width / 8) * 8) for b in CLASSIFIER_BASE_CHANNELS] == channels:
            return width
    raise OnnxWeightsError(f"{path}: channels {channels} are no width of the tile classifier")


def _backbone_convs(model: Any) -> list[FoldedConv]:
    """The folded convs of a classifier export: every conv but the heads' (whose weights keep their names)."""
    return [c for c in folded_convs(model) if not c.node.startswith("/net/angle/")]


def classifier_batches(train_set: Any, crops: int, batch: int, seed: int) -> Iterable[Any]:
    """Tensors of augmented crops drawn from a ``CropDataset`` (the crops training will see)."""
    import torch

    from vision.runtime.crops import to_input

    rng = np.random.default_rng(seed)
    picks = rng.choice(len(train_set), min(crops, len(train_set)), replace=False)
    for i in range(0, len(picks), batch):
        images = np.stack([train_set[int(j)][0] for j in picks[i : i + batch]])
        yield torch.from_numpy(to_input(images))


# ------------------------------------------------------------------------------------------------- batch norm


def recalibrate_batchnorm(net: Any, batches: Iterable[Any]) -> int:
    """Give every BatchNorm2d the mean and variance of its input over ``batches`` without changing what the
    network computes in eval mode (so train-mode batch statistics land near the running ones); returns the
    number of inputs seen.

    A BatchNorm computes ``a * z + c`` in eval mode (``a = weight / sqrt(var + eps)``, ``c = bias - a * mean``);
    with the data's ``mu`` and ``s2`` it becomes weight ``a * sqrt(s2 + eps)``, bias ``a * mu + c``."""
    import torch
    from torch import nn

    norms = [m for m in net.modules() if isinstance(m, nn.BatchNorm2d)]
    sums: dict[int, list[Any]] = {}

    def hook(module: Any, inputs: tuple[Any, ...]) -> None:
        z = inputs[0].detach().double()
        acc = sums.setdefault(id(module), [0.0, 0.0, 0])
        acc[0] = acc[0] + z.sum((0, 2, 3))
        acc[1] = acc[1] + (z * z).sum((0, 2, 3))
        acc[2] += z.numel() // z.shape[1]

    handles = [m.register_forward_pre_hook(hook) for m in norms]
    was_training = net.training
    net.eval()
    seen = 0
    try:
        with torch.no_grad():
            for x in batches:
                net(x)
                seen += len(x)
    finally:
        for handle in handles:
            handle.remove()
    if not seen:
        raise ValueError("no inputs to recalibrate the BatchNorms on")
    with torch.no_grad():
        for bn in norms:
            total, squares, count = sums[id(bn)]
            assert bn.running_mean is not None and bn.running_var is not None  # the model's norms track statistics
            mu = total / count
            var = (squares / count - mu * mu).clamp_min(0.0)
            a = bn.weight.double() / (bn.running_var.double() + bn.eps).sqrt()
            c = bn.bias.double() - a * bn.running_mean.double()
            bn.running_mean.copy_(mu)
            bn.running_var.copy_(var)
            bn.weight.copy_(a * (var + bn.eps).sqrt())
            bn.bias.copy_(a * mu + c)
    net.train(was_training)
    return seen


# ----------------------------------------------------------------------------------------------------- detector


def detector_from_onnx(path: Path | str, names: dict[int, str] | None = None) -> Any:
    """An Ultralytics YOLOv8n ``DetectionModel`` holding an FP32 detector export's weights (by initializer name:
    ``model.N....conv.weight`` into that Conv's conv + bn, the heads' plain convs with their bias; the DFL conv
    is fixed and only checked). Every ONNX conv weight must find its module and every module its weight."""
    import torch
    from torch import nn
    from ultralytics.nn.tasks import DetectionModel

    model = _load_onnx(path)
    convs = {c.weight_name: c for c in folded_convs(model)}
    names = names or {0: "tile"}
    net = DetectionModel("yolov8n.yaml", nc=len(names), verbose=False)
    net.names = dict(names)
    modules = dict(net.named_modules())
    for name, conv in net.named_modules():
        if not isinstance(conv, nn.Conv2d):
            continue
        folded = convs.pop(f"{name}.weight", None)
        if folded is None:
            raise OnnxWeightsError(f"{path}: no weight for {name} (not a YOLOv8n export with {len(names)} classes?)")
        if name.endswith(".dfl.conv"):
            expected = torch.arange(conv.weight.shape[1], dtype=torch.float32).view(conv.weight.shape).numpy()
            if not np.array_equal(folded.weight, expected):
                raise OnnxWeightsError(f"{path}: the DFL conv is not the fixed 0..15 projection")
            continue
        parent = modules.get(name.rsplit(".", 1)[0]) if name.endswith(".conv") else None
        bn = getattr(parent, "bn", None) if parent is not None else None
        set_folded(conv, bn, folded, f"{path}: {name}")
    if convs:
        raise OnnxWeightsError(f"{path}: weights the model has no place for: {', '.join(sorted(convs))[:200]}")
    net.eval()
    return net


def letterboxed(images_bgr: Sequence[np.ndarray], size: int) -> np.ndarray:
    """(N, 3, size, size) float32 RGB in [0, 1]: the runtime's letterbox (``vision.runtime.recognition.Letterbox``)."""
    from vision.runtime.recognition import Letterbox

    box = Letterbox(size)
    return np.stack([box.apply(img)[0][..., ::-1].transpose(2, 0, 1) for img in images_bgr]).astype(np.float32) / 255


def read_images(paths: Sequence[Path]) -> list[np.ndarray]:
    import cv2

    images = [cv2.imread(str(p), cv2.IMREAD_COLOR) for p in paths]
    return [img for img in images if img is not None]


def detector_raw(net: Any, x: np.ndarray) -> np.ndarray:
    """The decoded head output (N, 4 + classes, anchors) of a DetectionModel in eval mode, like ONNX's output0."""
    import torch

    net.eval()
    with torch.no_grad():
        out = net(torch.from_numpy(x))
    return (out[0] if isinstance(out, list | tuple) else out).numpy()


@dataclass(frozen=True)
class OutputDiff:
    """How far a rebuilt detector is from ONNX Runtime on the same inputs."""

    inputs: int
    max_abs: float
    max_abs_scores: float
    """Largest difference of the class scores (sigmoid, 0..1)."""
    max_abs_boxes: float
    """Largest difference of the boxes' cx, cy, w, h in input pixels."""


def compare_detector(net: Any, onnx_path: Path | str, x: np.ndarray) -> OutputDiff:
    from vision.train.classifier import onnx_session

    session = onnx_session(onnx_path)
    ours = detector_raw(net, x)
    theirs = np.concatenate([session.run(None, {"images": x[i : i + 1]})[0] for i in range(len(x))])
    diff = np.abs(ours - theirs)
    return OutputDiff(len(x), float(diff.max()), float(diff[:, 4:].max()), float(diff[:, :4].max()))


def save_detector_checkpoint(net: Any, path: Path | str, source: str, imgsz: int = 448) -> Path:
    """An Ultralytics checkpoint (``YOLO(path).train(...)`` continues from it): ``model`` (FP32, not the FP16
    Ultralytics writes itself: nothing is lost), ``train_args``, and where the weights came from."""
    import datetime

    import torch
    import ultralytics

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    net = net.float().eval()
    ckpt = {
        "epoch": -1,
        "best_fitness": None,
        "model": net,
        "ema": None,
        "updates": None,
        "optimizer": None,
        "train_args": {"task": "detect", "imgsz": imgsz, "single_cls": False},
        "date": datetime.datetime.now(datetime.UTC).isoformat(),
        "version": ultralytics.__version__,
        "source": source,
    }
    torch.save(ckpt, str(path))
    return path


def detector_checkpoint_from_onnx(
    onnx_path: Path | str, out: Path | str, calibration: Sequence[Path], *, imgsz: int = 448, check: int = 4
) -> tuple[Path, OutputDiff, OutputDiff]:
    """Convert, check against ONNX Runtime (before and after recalibrating the BatchNorms on ``calibration``
    images letterboxed to ``imgsz``) and write the checkpoint; returns (path, diff before, diff after)."""
    import torch

    net = detector_from_onnx(onnx_path)
    images = read_images(calibration)
    if not images:
        raise OnnxWeightsError("no calibration image could be read")
    x = letterboxed(images, imgsz)
    before = compare_detector(net, onnx_path, x[:check])
    recalibrate_batchnorm(net, (torch.from_numpy(x[i : i + 8]) for i in range(0, len(x), 8)))
    after = compare_detector(net, onnx_path, x[:check])
    path = save_detector_checkpoint(net, out, f"{onnx_path} (BatchNorms recalibrated on {len(images)} images)", imgsz)
    return path, before, after


def training_photo_paths(count: int, seed: int = 0) -> list[Path]:
    """``count`` real training photos (split "train" only; never the held-out ones), drawn with ``seed``."""
    from vision.runtime import realdata

    photos = realdata.load_photos(split="train")
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(photos), min(count, len(photos)), replace=False)
    return [photos[int(i)].path for i in picks]


# ---------------------------------------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m vision.train.onnxinit detector SRC.onnx OUT.pt`` or ``classifier SRC.onnx OUT.pt``."""
    parser = argparse.ArgumentParser(prog="python -m vision.train.onnxinit", description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("detector", "classifier"))
    parser.add_argument("onnx")
    parser.add_argument("out", help="checkpoint to write (.pt)")
    parser.add_argument("--images", type=int, default=CALIBRATION_IMAGES, help="real training photos to use")
    parser.add_argument("--imgsz", type=int, default=448)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        if args.kind == "detector":
            path, before, after = detector_checkpoint_from_onnx(
                args.onnx, args.out, training_photo_paths(args.images, args.seed), imgsz=args.imgsz
            )
            print(f"wrote {path}; raw output vs ONNX Runtime on {before.inputs} photos at {args.imgsz}:")
            print(f"  identity BatchNorms: {_diff_line(before)}")
            print(f"  recalibrated:        {_diff_line(after)}")
        else:
            import torch

            result = classifier_from_onnx(args.onnx)
            torch.save(result.net.state_dict(), args.out)
            print(f"wrote {args.out} (width {result.width:g}, exported temperature {result.temperature:.4f})")
    except OnnxWeightsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


def _diff_line(diff: OutputDiff) -> str:
    return f"max abs {diff.max_abs:.3g} (scores {diff.max_abs_scores:.3g}, boxes {diff.max_abs_boxes:.3g} px)"


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "ClassifierFromOnnx",
    "OnnxWeightsError",
    "classifier_from_onnx",
    "detector_checkpoint_from_onnx",
    "detector_from_onnx",
    "recalibrate_batchnorm",
]
