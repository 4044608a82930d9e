"""``bench colour``: recognition under coloured light, with and without the table's colour model.

The real held-out photos (:mod:`vision.runtime.realdata`, the ``val`` side of the by-source split) are re-tinted with
per-channel gains: the light of a blackbody at 2700, 4000, 6500 and 7500 K seen by a camera whose white balance
stays at 5500 K, and a failed automatic white balance (a camera set for 2900 K tungsten under 5500 K daylight).
Each is read by the reader with the colour model off (the crop alone, as before issue 14) and on
(:class:`vision.runtime.recognition.TableColour`: balance and check). Per tint and reader: tile F1 and its ratio to the
untinted photos read by the same reader in the same run, photos with a colour flipped wholesale (half or more
of a colour's tiles read as another colour), wrong labels read with confidence >= 0.8 (and their share of the
tiles), tiles made uncertain by the check, and the colour step's median time per photo. A last row times the
colour step on a rendered 1280x960 table.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vision.runtime.detections import Detections

CONFIDENT = 0.8
"""A wrong label read at this confidence or more is not marked uncertain: it can cause a false REVERT."""
CAMERA_KELVIN = 5500.0
TUNGSTEN_PRESET_KELVIN = 2900.0


def blackbody_bgr(kelvin: float) -> np.ndarray:
    """B, G, R of a blackbody (Tanner Helland's fit, as in :mod:`vision.synth.effects`)."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.7 * (t - 60) ** -0.1332
    g = 99.47 * math.log(t) - 161.12 if t <= 66 else 288.12 * (t - 60) ** -0.0755
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.52 * math.log(t - 10) - 305.04)
    return np.clip(np.array([b, g, r], np.float64), 1.0, 255.0)


def light_gains(kelvin: float, camera_kelvin: float = CAMERA_KELVIN) -> np.ndarray:
    """B, G, R gains of a ``kelvin`` light seen by a camera balanced for ``camera_kelvin`` (largest gain 1, so
    nothing clips)."""
    gains = blackbody_bgr(kelvin) / blackbody_bgr(camera_kelvin)
    return (gains / gains.max()).astype(np.float32)


TINTS: dict[str, np.ndarray] = {
    "none": np.ones(3, np.float32),
    **{f"{k}K": light_gains(k) for k in (2700, 4000, 6500, 7500)},
    "awb-failed": light_gains(CAMERA_KELVIN, TUNGSTEN_PRESET_KELVIN),
}


def tint(image: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return np.clip(image.astype(np.float32) * gains, 0, 255).astype(np.uint8)


@dataclass(frozen=True, slots=True)
class ColourRow:
    tint: str
    colour_model: str
    photos: int
    tiles: int
    f1: float
    f1_ratio: float | None
    """F1 over the same reader's F1 on the untinted photos."""
    flipped_photos: int
    confident_wrong: int
    confident_wrong_share: float
    doubted: int
    colour_ms_median: float


@dataclass
class _Tally:
    photos: int = 0
    tiles: int = 0
    predicted: int = 0
    right: int = 0
    flipped: int = 0
    confident_wrong: int = 0
    doubted: int = 0

    def add(self, labels: Sequence[str], predicted: Detections, pairs: list[tuple[int, int]]) -> None:
        read = predicted.labels
        self.photos += 1
        self.tiles += len(labels)
        self.predicted += len(predicted)
        self.doubted += int(np.asarray(predicted.data.get("colour_doubt", np.zeros(0, bool))).sum())
        by_colour: dict[str, list[str]] = {}
        for i, j in pairs:
            self.right += labels[i] == read[j]
            self.confident_wrong += labels[i] != read[j] and float(predicted.confidence[j]) >= CONFIDENT
            if labels[i] != "joker":
                by_colour.setdefault(labels[i].split("-")[0], []).append(read[j].split("-")[0])
        self.flipped += any(sum(c != colour for c in seen) * 2 >= len(seen) for colour, seen in by_colour.items())

    @property
    def f1(self) -> float:
        if not self.right:
            return 0.0
        precision, recall = self.right / self.predicted, self.right / self.tiles
        return 2 * precision * recall / (precision + recall)


def run_colour_benchmark(
    data: Path | None = None, models: Path | None = None, limit: int | None = None
) -> list[ColourRow]:
    from vision.eval.evaluate import load_real_split, match
    from vision.runtime import realdata
    from vision.runtime.recognition import TableColour, TileReader, load_image

    samples = load_real_split(data or realdata.default_root(), "val")[:limit]
    readers = {"off": TileReader(models, colour=TableColour(False, False)), "on": TileReader(models)}
    images = [load_image(sample.path) for sample in samples]
    rows = []
    for name, reader in readers.items():
        reference = None
        for tint_name, gains in TINTS.items():
            tally, times = _Tally(), []
            for sample, image in zip(samples, images, strict=True):
                reading = reader.read(tint(image, gains))
                predicted = reading.detections
                times.append(reading.timings.colour_ms)
                tally.add(sample.labels, predicted, match(sample.boxes, predicted))
            reference = tally.f1 if reference is None else reference
            rows.append(
                ColourRow(
                    tint=tint_name,
                    colour_model=name,
                    photos=tally.photos,
                    tiles=tally.tiles,
                    f1=round(tally.f1, 4),
                    f1_ratio=round(tally.f1 / reference, 4) if reference else None,
                    flipped_photos=tally.flipped,
                    confident_wrong=tally.confident_wrong,
                    confident_wrong_share=round(tally.confident_wrong / max(1, tally.tiles), 5),
                    doubted=tally.doubted,
                    colour_ms_median=round(statistics.median(times), 2) if times else 0.0,
                )
            )
    return rows


def time_colour_step(models: Path | None = None, repeats: int = 7, seed: int = 0) -> dict[str, Any]:
    """The colour step's time on a rendered 1280x960 table (median and max over ``repeats`` reads), untinted
    and under the failed white balance (which adds a second detection, counted as detection)."""
    from vision.runtime.recognition import TileReader
    from vision.synth.scene import SceneParams, render_scene

    reader = TileReader(models)
    image = render_scene(seed, SceneParams(size=(1280, 960), hand_probability=0.0)).image
    out: dict[str, Any] = {"frame": "1280x960"}
    for name, picture in (("none", image), ("awb-failed", tint(image, TINTS["awb-failed"]))):
        reader.read(picture)
        colour, total = [], []
        for _ in range(repeats):
            reading = reader.read(picture)
            found = reading.detections
            colour.append(reading.timings.colour_ms)
            total.append(reading.timings.total_ms)
        out[name] = {
            "tiles": len(found),
            "colour_ms_median": round(statistics.median(colour), 2),
            "colour_ms_max": round(max(colour), 2),
            "read_ms_median": round(statistics.median(total), 1),
        }
    return out


def format_colour_benchmark(rows: Sequence[ColourRow], timing: dict[str, Any]) -> str:
    header = ("tint", "colour", "photos", "tiles", "F1", "/none", "flipped", "wrong>=0.8", "share", "doubted", "ms")
    lines = ["{:<11} {:<6} {:>6} {:>5} {:>7} {:>6} {:>7} {:>10} {:>7} {:>7} {:>6}".format(*header)]
    for r in rows:
        ratio = "" if r.f1_ratio is None else f"{r.f1_ratio:.3f}"
        lines.append(
            f"{r.tint:<11} {r.colour_model:<6} {r.photos:>6} {r.tiles:>5} {r.f1:>7.4f} {ratio:>6} {r.flipped_photos:>7}"
            f" {r.confident_wrong:>10} {100 * r.confident_wrong_share:>6.2f}% {r.doubted:>7} {r.colour_ms_median:>6.2f}"
        )
    lines.append(
        "flipped: photos with half or more of a colour's tiles read as another colour; ms: the colour step per photo"
    )
    for name in ("none", "awb-failed"):
        t = timing[name]
        lines.append(
            f"{timing['frame']} rendered table ({name}): colour step median {t['colour_ms_median']} ms,"
            f" max {t['colour_ms_max']} ms; whole read {t['read_ms_median']} ms ({t['tiles']} tiles)"
        )
    return "\n".join(lines)


def bench_suite(args: Any) -> tuple[dict[str, Any], str]:
    models = Path(args.models) if getattr(args, "models", None) else None
    rows = run_colour_benchmark(models=models, limit=getattr(args, "inputs", None))
    timing = time_colour_step(models, seed=args.seed)
    return {"rows": [asdict(r) for r in rows], "timing": timing}, format_colour_benchmark(rows, timing)
