"""Enrolment measured on synthetic photos: one tile set of an edition, enrolled from rendered grid photos, read in
held-out scenes of the same set before and after.

``python -m vision.eval.enrol_bench --edition classic --scenes 40`` renders two grid photos (:mod:`vision.synth.grid`)
and ``--scenes`` scenes from the held-out editions recipe (``datasets/synth-editions-heldout.yaml``) restricted to
the edition and to one table style (``style_pool: 1``: a venue's one set), enrols from the grid photos with
:func:`vision.runtime.enrolment.enrol` and scores both model folders with :mod:`vision.eval.evaluate` (tile F1,
detection recall, wrong labels at confidence >= 0.8). The detector is not adapted: its recall bounds F1 after enrolment.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.eval.evaluate import Sample, match, score_image, summarize
from vision.runtime.enrolment import enrol
from vision.runtime.recognition import TileReader, default_models_dir
from vision.synth.grid import render_grid_scene
from vision.synth.recipe import load_recipe
from vision.synth.scene import render_scene

HELDOUT_RECIPE = "synth-editions-heldout"
GRID_SEEDS = (7001, 7002)
"""The two grid photos: the first copy with both jokers, the second without."""


def edition_params(edition: str, recipe: str = HELDOUT_RECIPE) -> Any:
    params, _ = load_recipe(recipe)
    return replace(params, editions=(edition,), style_pool=1)


def measure(edition: str, scenes: int, work: Path, models: Path, seed: int = 1) -> dict[str, Any]:
    params = edition_params(edition)
    grid_paths = []
    for index, grid_seed in enumerate(GRID_SEEDS):
        grid = render_grid_scene(grid_seed, params, jokers=2 if index == 0 else 0)
        path = work / f"grid-{edition}-{index + 1}.jpg"
        cv2.imwrite(str(path), grid.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        grid_paths.append(path)
    started = time.perf_counter()
    enrolled = enrol(grid_paths, work / f"models-{edition}", models)
    enrol_s = time.perf_counter() - started
    readers = {"before": TileReader(models), "after": TileReader(enrolled.out)}
    rows: dict[str, list[Any]] = {name: [] for name in readers}
    confident_wrong = dict.fromkeys(readers, 0)
    for scene_seed in range(seed, seed + scenes):
        scene = render_scene(scene_seed, params)
        readable = scene.readable()
        sample = Sample(Path(f"scene-{scene_seed}"), tuple(t.label for t in readable),
                        np.array([t.box for t in readable], np.float32).reshape(-1, 4))  # fmt: skip
        for name, reader in readers.items():
            start = time.perf_counter()
            found = reader.read(scene.image).detections
            row = score_image(sample, found, (time.perf_counter() - start) * 1e3)
            rows[name].append(row)
            confident = np.asarray(found.confidence) >= 0.8
            labels = found.labels
            for i, j in match(sample.boxes, found):
                confident_wrong[name] += int(confident[j] and labels[j] != sample.labels[i])
    result: dict[str, Any] = {"edition": edition, "scenes": scenes, "enrol_s": round(enrol_s, 1)}
    card = enrolled.card()
    result["enrolment"] = {"figures": card["figures"], "read_differently": len(card["read_differently_before"])}
    for name, name_rows in rows.items():
        summary = summarize(name_rows)
        result[name] = {
            "tiles": summary["tiles_true"],
            "f1": summary["end_to_end"]["f1"],
            "detection_recall": summary["detection"]["recall"],
            "label_accuracy": summary["label_accuracy"],
            "wrong_at_0.8": confident_wrong[name],
            "ms_median": summary["ms"]["median"],
        }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edition", action="append", required=True)
    parser.add_argument("--scenes", type=int, default=40)
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=None, help="keep the grid photos and model folders here")
    args = parser.parse_args(argv)
    models = args.models or default_models_dir()
    with tempfile.TemporaryDirectory() as temp:
        work = args.work or Path(temp)
        work.mkdir(parents=True, exist_ok=True)
        for edition in args.edition:
            print(json.dumps(measure(edition, args.scenes, work, models)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
