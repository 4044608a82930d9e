"""Enrolment measured on synthetic photos: one tile set of an edition, enrolled from rendered grid photos, read in
held-out scenes of the same set before and after.

``python -m vision.eval.enrol_bench --edition classic --scenes 40`` renders two grid photos (:mod:`vision.synth.grid`)
and ``--scenes`` scenes from the held-out editions recipe (``datasets/synth-editions-heldout.yaml``) restricted to
the edition and to one table style (``style_pool: 1``: a venue's one set), enrols from the grid photos with
:func:`vision.runtime.enrolment.enrol` and scores both model folders with :mod:`vision.eval.evaluate` (tile F1,
detection recall, wrong labels at confidence >= 0.8). The detector is not adapted: its recall bounds F1 after enrolment.

:func:`enrol_venue` enrols a filmed game's own set the way a venue would before play, for ``bench pipeline
--enrol``: two grid photos of the set the film shows (:func:`vision.synth.grid.film_style`; the first copy with the
jokers, the second without), photographed by the grid camera under their own light, at the film's frame size, then
``rummikub-referee enrol`` run on them as a user runs it (another process; nothing from the truth but the tile style).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.eval.evaluate import Sample, match, score_image, summarize, washed_out
from vision.runtime.enrolment import ADAPTATIONS, enrol
from vision.runtime.recognition import TileReader, default_models_dir
from vision.synth.grid import film_style, render_grid_scene
from vision.synth.recipe import load_recipe
from vision.synth.scene import SceneParams, render_scene
from vision.synth.truth import load_truth
from vision.train import enrolnet

HELDOUT_RECIPE = "synth-editions-heldout"
GRID_SEEDS = (7001, 7002)
"""The two grid photos: the first copy with both jokers, the second without."""


VENUE_GRID_SEED = 7000
"""A game's grid photos are rendered with seeds ``VENUE_GRID_SEED + 100 * game seed + 10 * take + copy`` (copy 1
and 2; take 0, and 1, 2... when ``enrol`` refused the last take's photos)."""
VENUE_TAKES = 4
"""Photos taken again at most this many times in all: a referee whose photo ``enrol`` refuses (a glare over a tile,
a tile outside the frame) takes another, as the command's message asks."""


class VenueEnrolmentError(RuntimeError):
    """``enrol`` refused a venue's grid photos (its one-line message quoted)."""


VENUE_CAMERAS = ("grid", "film")
"""Where the venue's grid photos are taken from: ``grid``, the grid camera (held over the grid so that it fills most of
the frame: tiles 34-70 px on their short side at 1280x720); ``film``, at the film's own scale (the referee camera
fixed over the table, the grid laid out where the game is played: tiles as large as in the game, ~25 px there)."""


def film_px_per_mm(header: dict[str, Any]) -> float:
    """The film's scale on the table: the true play area's mean width in pixels over its width in mm."""
    corners = np.array(header["play_area_px"], np.float64)
    width_px = (np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[3])) / 2
    return float(width_px / header["play_area_mm"][0])


def venue_grid_photos(
    header: dict[str, Any], work: Path, take: int = 0, camera: str = "grid"
) -> tuple[list[Path], dict[str, Any]]:
    """The two grid photos of the set a game was filmed with (``take``: taken again that many times; ``camera``: one
    of :data:`VENUE_CAMERAS`), written to ``work``; and how they were made."""
    if camera not in VENUE_CAMERAS:
        raise ValueError(f"the venue's camera is one of {', '.join(VENUE_CAMERAS)}, not {camera!r}")
    px_per_mm = film_px_per_mm(header) if camera == "film" else None
    index, style = film_style(header)
    params = SceneParams(size=(int(header["size"][0]), int(header["size"][1])), split="train")
    work.mkdir(parents=True, exist_ok=True)
    photos, made = [], []
    for copy in (1, 2):
        seed = VENUE_GRID_SEED + 100 * int(header["seed"]) + 10 * take + copy
        grid = render_grid_scene(seed, params, jokers=2 if copy == 1 else 0, style=style, px_per_mm=px_per_mm)
        path = work / f"grid-{copy}.jpg"
        cv2.imwrite(str(path), grid.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        photos.append(path)
        lighting = grid.meta["lighting"]
        made.append({"photo": path.name, "seed": seed, "tiles": len(grid.readable()),
                     "colour_temperature_k": round(lighting["colour_temperature_k"]),
                     "camera_tilt_deg": grid.meta["camera"].get("tilt_deg"),
                     "material": grid.meta["material"]})  # fmt: skip
    where = "the grid camera" if camera == "grid" else f"the camera at the film's scale ({px_per_mm:.2f} px/mm)"
    how = {
        "what": "two grid photos of the film's own tile set (the first copy with both jokers, the second without),"
        f" rendered by vision/synth/grid.py with {where} and their own light at the film's frame size,"
        " enrolled by `rummikub-referee enrol` (nothing from the truth but the tile style"
        + (" and the film's scale)" if camera == "film" else ")"),
        "camera": camera,
        "style_index": index,
        "style": style.name,
        "size": list(params.size),
        "photos": made,
    }
    return photos, how


def enrol_venue(
    folder: Path, out: Path, models: Path | None = None, camera: str = "grid", adapt: str | None = None
) -> dict[str, Any]:
    """Enrol the set a synth-game folder was filmed with into the model folder ``out``, as a venue would before play
    (see the module's docstring). A folder already enrolled from the same photos (the card's sha256) is kept.
    Returns how it was made and the enrolment's own figures (the model card's)."""
    header, _ = load_truth(folder)
    adapt = adapt or enrolnet.default_adaptation()
    refused: list[str] = []
    for take in range(VENUE_TAKES):
        photos, how = venue_grid_photos(header, out.parent / f"{out.name}-photos", take, camera)
        card_path = out / "model-card.json"
        sums = [hashlib.sha256(p.read_bytes()).hexdigest() for p in photos]
        card = json.loads(card_path.read_text()) if card_path.is_file() else None
        reused = (
            card is not None
            and [p["sha256"] for p in card["photos"]] == sums
            and card.get("adaptation", "head") == adapt
        )
        if reused:
            break
        try:
            card = run_enrol(photos, out, models, adapt)
            break
        except VenueEnrolmentError as refusal:
            refused.append(str(refusal))
    else:
        raise VenueEnrolmentError(f"{folder.name}: every one of {VENUE_TAKES} takes refused; the last: {refused[-1]}")
    assert card is not None
    return {
        **how,
        "takes": take + 1,
        "refused": refused,
        "models": str(out),
        "reused": reused,
        "adaptation": card.get("adaptation", "head"),
        "enrol_s": card["seconds"],
        "tiles_enrolled": card["tiles_enrolled"],
        "jokers_enrolled": card["jokers_enrolled"],
        "figures": card["figures"],
        "read_differently_before": len(card["read_differently_before"]),
        "warnings": card["warnings"],
    }


def run_enrol(photos: list[Path], out: Path, models: Path | None = None, adapt: str | None = None) -> dict[str, Any]:
    """``rummikub-referee enrol PHOTO... --out DIR --json`` in a process of its own, on this tree's code; its card."""
    root = Path(__file__).resolve().parents[2]  # the tree this module is in: an export benches its own code
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-c", "import sys; from vision.cli import main; sys.exit(main(sys.argv[1:]))",
               "enrol", *map(str, photos), "--out", str(out), "--json"]  # fmt: skip
    if models is not None:
        command += ["--models", str(models)]
    if adapt is not None:
        command += ["--adapt", adapt]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise VenueEnrolmentError(last.removeprefix("rummikub-referee: error: "))
    card: dict[str, Any] = json.loads(done.stdout)
    return card


def edition_params(edition: str, recipe: str = HELDOUT_RECIPE) -> Any:
    params, _ = load_recipe(recipe)
    return replace(params, editions=(edition,), style_pool=1)


def measure(
    edition: str, scenes: int, work: Path, models: Path, seed: int = 1, adapt: str | None = None
) -> dict[str, Any]:
    params = edition_params(edition)
    grid_paths = []
    for index, grid_seed in enumerate(GRID_SEEDS):
        grid = render_grid_scene(grid_seed, params, jokers=2 if index == 0 else 0)
        path = work / f"grid-{edition}-{index + 1}.jpg"
        cv2.imwrite(str(path), grid.image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        grid_paths.append(path)
    started = time.perf_counter()
    adapt = adapt or enrolnet.default_adaptation()
    adapter = enrolnet.adapt_enrolment if adapt == "network" else None
    enrolled = enrol(grid_paths, work / f"models-{edition}", models, adapt=adapt, adapter=adapter)
    enrol_s = time.perf_counter() - started
    readers = {"before": TileReader(models), "after": TileReader(enrolled.out)}
    rows: dict[str, list[Any]] = {name: [] for name in readers}
    confident_wrong = dict.fromkeys(readers, 0)
    for scene_seed in range(seed, seed + scenes):
        scene = render_scene(scene_seed, params)
        readable = scene.readable()
        sample = Sample(Path(f"scene-{scene_seed}"), tuple(t.label for t in readable),
                        np.array([t.box for t in readable], np.float32).reshape(-1, 4))  # fmt: skip
        washed = washed_out(scene.image, sample.boxes)
        for name, reader in readers.items():
            start = time.perf_counter()
            found = reader.read(scene.image).detections
            row = score_image(sample, found, (time.perf_counter() - start) * 1e3, washed=washed)
            rows[name].append(row)
            confident = np.asarray(found.confidence) >= 0.8
            labels = found.labels
            for i, j in match(sample.boxes, found):
                confident_wrong[name] += int(confident[j] and labels[j] != sample.labels[i])
    result: dict[str, Any] = {
        "edition": edition, "scenes": scenes, "adaptation": enrolled.adaptation, "enrol_s": round(enrol_s, 1)
    }  # fmt: skip
    card = enrolled.card()
    result["enrolment"] = {"figures": card["figures"], "read_differently": len(card["read_differently_before"])}
    for name, name_rows in rows.items():
        summary = summarize(name_rows)
        result[name] = {
            "tiles": summary["tiles_true"],
            "f1": summary["end_to_end"]["f1"],
            "detection_recall": summary["detection"]["recall"],
            "visible": summary["visible"],
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
    parser.add_argument("--adapt", choices=ADAPTATIONS, default=None, help="as enrol --adapt")
    args = parser.parse_args(argv)
    models = args.models or default_models_dir()
    with tempfile.TemporaryDirectory() as temp:
        work = args.work or Path(temp)
        work.mkdir(parents=True, exist_ok=True)
        for edition in args.edition:
            print(json.dumps(measure(edition, args.scenes, work, models, adapt=args.adapt)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
