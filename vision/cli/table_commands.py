"""The table-setup commands: ``markers`` (print the corner markers) and ``calibrate`` (find the play area)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from referee import cli as rules_cli
from referee.cli import Command

if TYPE_CHECKING:
    import numpy as np

PROG = rules_cli.PROG


_millimetres = rules_cli.POSITIVE
"""A printed size in mm: a positive finite number."""
_margin = rules_cli.NumberArg(minimum=0, maximum=0.49)
"""The share of the frame cut off each side by ``--method frame``: half or more would leave nothing."""


def _pair(text: str, separator: str, example: str, what: str) -> tuple[float, float]:
    """Two finite numbers written ``A<separator>B``, or argparse's one-line error quoting ``example``."""
    try:
        first, second = (rules_cli.NumberArg()(v) for v in text.lower().split(separator))
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"{what}, e.g. {example}, not {text!r}") from None
    return float(first), float(second)


def _area(text: str) -> tuple[float, float]:
    width, height = _pair(text, "x", "1000x700", "a play area is WIDTHxHEIGHT in mm")
    if width <= 0 or height <= 0:
        raise argparse.ArgumentTypeError("a play area's sides must be positive")
    return width, height


def _point(text: str) -> tuple[float, float]:
    return _pair(text, ",", "412,220", "a corner is X,Y in pixels")


def cmd_markers(args: argparse.Namespace) -> int:
    from vision.runtime.calibrate import CORNER_NAMES
    from vision.runtime.markerpages import markers_pdf

    pages = markers_pdf(args.out, marker_mm=args.size_mm, page=args.page)
    data = {"out": str(args.out), "marker_mm": args.size_mm, "page": args.page, "pages": pages, "ids": [0, 1, 2, 3]}
    where = ", ".join(f"{i} {name}" for i, name in enumerate(CORNER_NAMES))
    text = f"wrote {args.out}: 4 markers of {args.size_mm:g} mm on {pages} {args.page} page(s) ({where})"
    rules_cli.emit(args, data, text)
    return 0


def write_image(path: Path, image: np.ndarray) -> None:
    """An image written, or a one-line error (a folder that does not exist, an unknown extension)."""
    import cv2

    try:
        written = cv2.imwrite(str(path), image)
    except cv2.error:
        written = False
    if not written:
        raise rules_cli.CommandError(f"{path}: cannot write the preview (a .png or .jpg in an existing folder)")


def cmd_calibrate(args: argparse.Namespace) -> int:
    from vision.runtime.calibrate import CORNER_NAMES, Calibration, calibrate, preview
    from vision.runtime.recognition import load_image

    if (args.method == "corners") != (args.corners is not None):
        raise rules_cli.CommandError("--corners goes with --method corners (four X,Y points: TL TR BR BL)")
    image = load_image(args.image)
    search = None
    if args.method == "auto":
        calibration, search = Calibration.auto_search(image, size_mm=args.area_mm)
    else:
        calibration = calibrate(
            image, args.method, args.corners, size_mm=args.area_mm, marker_mm=args.marker_mm, margin=args.margin
        )
    if args.out:
        calibration.save(args.out)
    if args.preview:
        write_image(args.preview, preview(image, calibration, search))
    data = {"image": args.image, **calibration.to_json()}
    width, height = calibration.size_mm
    lines = [f"{args.image}: play area {width:.0f} x {height:.0f} mm found by {calibration.method}"]
    lines += [
        f"  {name:<13} ({x:.1f}, {y:.1f}) px" for name, (x, y) in zip(CORNER_NAMES, calibration.corners_px, strict=True)
    ]
    if args.out:
        lines.append(f"wrote {args.out}")
    if args.preview:
        data["preview"] = str(args.preview)
        lines.append(
            f"wrote {args.preview} (play area in green; with auto, the table top in blue, what was kept out in red)"
        )
    rules_cli.emit(args, data, "\n".join(lines))
    return 0


def _markers_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, type=Path, metavar="PDF", help="the PDF to write")
    parser.add_argument(
        "--size-mm", type=_millimetres, default=60.0, metavar="MM", help="printed marker width (default 60)"
    )
    parser.add_argument("--page", choices=["A4", "Letter"], default="A4", help="paper size (default A4)")
    rules_cli.add_json_option(parser)


def _calibrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", metavar="IMAGE", help="a photo or video frame from the referee camera")
    parser.add_argument(
        "--method", choices=["markers", "auto", "frame", "corners"], default="markers", help="default: markers"
    )
    parser.add_argument("--out", type=Path, metavar="JSON", help="write the calibration to this file")
    parser.add_argument(
        "--preview", type=Path, metavar="IMAGE", help="write the photo with the play area drawn on it (PNG or JPEG)"
    )
    parser.add_argument(
        "--area-mm", type=_area, metavar="WxH", help="play area size in mm (default: measured from the markers)"
    )
    parser.add_argument(
        "--marker-mm", type=_millimetres, default=60.0, metavar="MM", help="printed marker width (default 60)"
    )
    parser.add_argument(
        "--corners", type=_point, nargs=4, metavar="X,Y", help="with --method corners: TL TR BR BL in pixels"
    )
    parser.add_argument(
        "--margin", type=_margin, default=0.0, help="with --method frame: share cut off each side (0 to 0.49)"
    )
    rules_cli.add_json_option(parser)


MARKERS = Command(
    "markers",
    "Write a printable PDF of the four ArUco corner markers (ids 0-3) with a scale bar, at 300 dpi.",
    f"{PROG} markers --out markers.pdf --size-mm 60",
    _markers_arguments,
    cmd_markers,
)
CALIBRATE = Command(
    "calibrate",
    "Find the play area in a photo of the table: corner markers; auto (the table top less racks, pool, cups and"
    " sheets at its edges); four corners; or the whole frame. --preview draws what was chosen.",
    f"{PROG} calibrate table.jpg --method markers --out calibration.json",
    _calibrate_arguments,
    cmd_calibrate,
)
