"""The draw for the first player measured on synthetic draw photos (:mod:`vision.synth.draw`): one row per photo.

Each photo draws 2-6 players and a random tile (jokers included) for each seat from its index; the truth is
:func:`referee.draw.rule_draw` on the drawn tiles. A row says what the camera's ruling was against it:

- ``right``: the right starter;
- ``redraw-right``: the truth asks for a redraw too (a tie or a joker), of the same seats for the same reasons;
- ``redraw-extra``: a seat draws again that would not have (an uncertain, unread or doubled tile): safe, but a
  redraw the players did not need;
- ``WRONG``: a starter other than the truth's, or a starter where the truth asks for a redraw: must never happen.

``python -m vision.eval.draw_bench --photos 30 --staging clutter --csv rows.csv``
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.draw import rule_draw
from referee.tiles import ALL_LABELS
from vision.game.draw import ZOOM, read_draw, rule_camera_draw
from vision.runtime.calibrate import Calibration, CalibrationError
from vision.runtime.recognition import TileReader
from vision.runtime.seats import seating
from vision.synth.draw import draw_photo
from vision.synth.video import Staging

STAGINGS = {
    "plain": Staging(),
    "clutter": Staging(clutter=True),
    "tilt": Staging(tilt_deg=25.0),
}
PROFILE = "official-6p"
"""Played by 2 to 6: every table size, the box rules' draw (highest number, ties played off)."""


def bench_row(
    reader: Any, index: int, staging: str, play_area: str, size: tuple[int, int], zoom: float = ZOOM
) -> dict[str, Any]:
    rng = random.Random(index)
    players = rng.choice([2, 3, 4, 5, 6])
    seats = [seat.number for seat in seating(players)]
    tiles = {seat: rng.choice(ALL_LABELS) for seat in seats}
    truth = rule_draw(tiles, PROFILE)
    photo = draw_photo(tiles, players, seed=1000 + index, size=size, staging=STAGINGS[staging])
    area = None
    if play_area == "auto":
        try:
            area = Calibration.auto(photo.image)
        except CalibrationError:
            area = None
    started = time.perf_counter()
    reading = read_draw(reader, photo.image, players, area, zoom=zoom)
    read_s = time.perf_counter() - started
    draw = rule_camera_draw(reading, PROFILE)
    ruling = draw.ruling
    if ruling.starter is not None:
        outcome = "right" if ruling.starter == truth.starter else "WRONG"
    else:
        outcome = "redraw-right" if dict(ruling.redraw) == dict(truth.redraw) else "redraw-extra"
    misread = {str(seat): [tiles[seat], str(draw.reading.drawn[seat])] for seat in seats
               if str(draw.reading.drawn[seat]) != tiles[seat]}  # fmt: skip
    return {
        "index": index, "players": players, "staging": staging, "play_area": play_area,
        "play_area_found": area is not None, "zoom": zoom, "outcome": outcome,
        "seats_read_right": len(seats) - len(misread),
        "seats": len(seats), "misread": json.dumps(misread), "read_s": round(read_s, 3),
    }  # fmt: skip


def summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    outcomes = Counter(row["outcome"] for row in rows)
    return {
        "photos": len(rows),
        **{name: outcomes.get(name, 0) for name in ("right", "redraw-right", "redraw-extra", "WRONG")},
        "photos_all_seats_read_right": sum(row["seats_read_right"] == row["seats"] for row in rows),
        "mean_read_s": round(sum(row["read_s"] for row in rows) / max(len(rows), 1), 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.eval.draw_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--photos", type=int, default=30)
    parser.add_argument("--first", type=int, default=0, help="the first photo's index")
    parser.add_argument("--staging", choices=list(STAGINGS), default="plain")
    parser.add_argument("--play-area", choices=["auto", "frame"], default="auto")
    parser.add_argument("--zoom", type=float, default=ZOOM, help="read again this much larger when a seat is unsure")
    parser.add_argument("--csv", type=Path, help="write one row per photo")
    args = parser.parse_args(argv)
    if not 1 <= args.photos <= 10_000:
        parser.error("--photos is 1 to 10000")
    reader = TileReader()
    reader.check_models()
    rows = [
        bench_row(reader, index, args.staging, args.play_area, (1280, 720), args.zoom)
        for index in range(args.first, args.first + args.photos)
    ]
    if args.csv:
        with args.csv.open("w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    print(json.dumps({"staging": args.staging, "play_area": args.play_area, "zoom": args.zoom, **summary(rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
