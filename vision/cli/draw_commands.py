"""``draw``: who starts, from a photo (or a camera's frame) of the draw for the first player.

At the table: before the first game each player turns one tile face up in front of them, near their edge of the
table; the referee photographs the table (or points the game's camera at it: ``draw 0``) and runs ``draw``. It
prints each seat's tile, who starts or who draws again (a tie, a joker, a tile read uncertainly, no tile), and once
someone starts the order of play and the ``--first-player K`` to start ``live``/``analyze`` (or a batch manifest's
``first_player``) with. A play-off after a tie is another photo with ``--among`` the tied players.

Exit status: 0 someone starts, 1 draw again, 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from referee import cli as rules_cli

NAME = "draw"
PROG = rules_cli.PROG
EXIT_DRAW_AGAIN = 1
CAMERA_SETTLE_FRAMES = 15
"""A camera's or stream's frame taken after this many (exposure and focus settle); a video file's first frame."""


def _players_list(text: str) -> tuple[int, ...]:
    """``--among 1,3``: player numbers (as ``draw`` prints them), whole numbers from 1."""
    try:
        numbers = tuple(int(part) for part in text.replace(" ", "").split(",") if part)
    except ValueError:
        raise argparse.ArgumentTypeError(f"player numbers separated by commas (e.g. 1,3), not {text!r}") from None
    if not numbers or any(n < 1 for n in numbers) or not text.isascii():
        raise argparse.ArgumentTypeError(f"player numbers from 1 separated by commas (e.g. 1,3), not {text!r}")
    return numbers


def _image(source: str) -> Any:
    """A photo file, or one frame of a camera, stream or video file."""
    from vision.runtime.recognition import load_image

    if Path(source).suffix.lower() in rules_cli.IMAGE_SUFFIXES:
        return load_image(source)
    from vision.runtime.capture import open_source

    image = None
    with open_source(source, reconnect=False) as frames:
        for frame in frames:
            image = frame.image
            if not frames.is_live or frame.index >= CAMERA_SETTLE_FRAMES:
                break
    if image is None:
        raise rules_cli.CommandError(f"{source}: no frame to read the draw from")
    return image


def _play_area(choice: str, image: Any) -> tuple[Any, str]:
    """The play area whose edges the seats sit at, and how it was found: ``auto`` (the table found in the picture;
    the whole picture when none is), ``frame`` (the whole picture) or a calibration file (``calibrate --out``)."""
    from vision.runtime.calibrate import Calibration, CalibrationError

    if choice == "frame":
        return None, "the picture"
    if choice == "auto":
        try:
            return Calibration.auto(image), "the play area found in the picture"
        except CalibrationError:
            return None, "the picture (no play area found)"
    return Calibration.load(choice), f"the play area of {choice}"


def _live_takes_orientation() -> bool:
    """Whether ``live``/``analyze`` take the camera's orientation (``--seat1``): they then number players round the
    table the profile's way (:func:`vision.game.draw.player_seats`); without it, in seating order (bottom, right,
    top, left), and ``draw`` numbers them so too, so its ``--first-player`` is the same player."""
    from vision.cli import options

    parser = argparse.ArgumentParser(add_help=False)
    options.add_game_options(parser)
    return "--seat1" in parser._option_string_actions


def cmd_draw(args: argparse.Namespace) -> int:
    from vision.game.draw import ZOOM, player_seats, read_draw, rule_camera_draw
    from vision.runtime.recognition import TileReader, default_models_dir
    from vision.runtime.seats import Orientation, seating

    def seating_order(players: int) -> tuple[int, ...]:
        return tuple(seat.number for seat in seating(players))

    players = rules_cli.players_under(args.profile, args.players)
    orientation = Orientation.parse(args.seat1, args.mirrored)
    live_orientation = _live_takes_orientation()
    if not live_orientation and orientation != Orientation():
        raise rules_cli.CommandError("--seat1 and --mirrored: live and analyze take no orientation in this version")
    numbers = player_seats(players, args.profile, orientation) if live_orientation else seating_order(players)
    among = None
    if args.among is not None:
        wrong = [k for k in args.among if k > players]
        if wrong or len(set(args.among)) != len(args.among) or len(args.among) < 2:
            raise rules_cli.CommandError(
                f"--among {','.join(map(str, args.among))}: two or more different players, 1 to {players}"
            )
        among = [numbers[k - 1] for k in args.among]
    from referee.draw import draw_rule

    draw_rule(args.profile)  # a profile with no tile draw fails before the models load
    image = _image(args.source)
    reader = TileReader((args.models or default_models_dir()).resolve(), rescale=not args.one_pass)
    reader.check_models()
    play_area, where = _play_area(args.play_area, image)
    reading = read_draw(reader, image, players, play_area, zoom=1.0 if args.one_pass else ZOOM)
    result = rule_camera_draw(reading, args.profile, orientation=orientation, among=among, numbering=numbers)
    lines = [f"seats at the edges of {where}", result.describe()]
    if result.first_player is not None:
        command = ["live", "--source", "SOURCE", "--players", str(players), "--profile", args.profile]
        if live_orientation:
            command += ["--seat1", orientation.first.label] + (["--mirrored"] if orientation.mirrored else [])
        lines.append(
            f"start the game with: {PROG} {shlex.join(command)} --first-player {result.first_player}"
            " (analyze: the same options)"
        )
    else:
        again = [numbers.index(seat) + 1 for seat in result.ruling.next_among]
        options = ["--players", str(players), "--profile", args.profile]
        if live_orientation:
            options += ["--seat1", orientation.first.label] + (["--mirrored"] if orientation.mirrored else [])
        options += [] if len(again) == players else ["--among", ",".join(map(str, again))]
        lines.append(f"after the draw again: {PROG} draw PHOTO {shlex.join(options)}")
    if args.notes:
        lines += [f"note: {note}" for note in result.ruling.notes]
    rules_cli.emit(args, {**result.to_json(), "seats_at": where}, "\n".join(lines))
    return 0 if result.ruling.decided else EXIT_DRAW_AGAIN


HELP = (
    "Who starts: read the draw for the first player (one tile face up in front of each seat) from a photo or a"
    " camera's frame; the highest number starts, a tie, a joker or an unsure tile draws again (exit status 1);"
    " prints the order of play and the --first-player for live and analyze."
)
EXAMPLE = (
    f"{PROG} draw table.jpg --players 4 --profile pl-championship\n"
    f"  {PROG} draw 0 --players 4 --json                  # a frame of camera 0\n"
    f"  {PROG} draw playoff.jpg --players 4 --among 1,3   # the play-off after a tie between players 1 and 3"
)


def arguments(draw: argparse.ArgumentParser) -> None:
    from vision.runtime.seats import Edge

    draw.add_argument("source", metavar="SOURCE", help="a photo, or a camera index, stream URL or video file")
    draw.add_argument(
        "--players", type=rules_cli.PLAYERS, required=True, metavar="N", help="players at the table (2 to 6)"
    )
    rules_cli.add_profile_option(draw)
    draw.add_argument(
        "--among", type=_players_list, metavar="K,K", help="a play-off: only these players (1 to N) draw again"
    )
    draw.add_argument(
        "--seat1", choices=[edge.label for edge in Edge], default=Edge.BOTTOM.label, metavar="EDGE",
        help="the edge of the picture player 1 sits at (default bottom): the others follow round the table the"
        " profile's way, as live and analyze number them with the same --seat1 and --mirrored",
    )  # fmt: skip
    draw.add_argument(
        "--mirrored", action="store_true", help="the camera's picture is mirrored (play runs the other way in it)"
    )
    draw.add_argument(
        "--play-area", default="auto", metavar="auto|frame|FILE",
        help="where the seats are: at the edges of the play area found in the picture (auto, the default), of the"
        " whole picture (frame), or of a calibration file (calibrate --out); tiles off the play area are not counted",
    )  # fmt: skip
    draw.add_argument("--notes", action="store_true", help="also print the seed's rule and where it is silent")
    draw.add_argument(
        "--models", metavar="DIR", type=Path, help="folder with tile-detector.onnx and tile-classifier.onnx"
    )
    draw.add_argument(
        "--one-pass", action="store_true",
        help="read the photo once at the detector's input size (no second reading, at tile scale or zoomed)",
    )  # fmt: skip
    rules_cli.add_json_option(draw)


run = cmd_draw


def command() -> Any:
    """``draw`` as a :class:`referee.cli.Command`, for a static list of commands."""
    return getattr(rules_cli, "Command")(NAME, HELP, EXAMPLE, arguments, run)  # noqa: B009 - not in older trees


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``draw`` to a parser's subcommands (description and example in its ``--help``)."""
    sub = commands.add_parser(
        NAME, help=HELP, description=HELP, epilog=f"Example:\n  {EXAMPLE}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    arguments(sub)
    sub.set_defaults(func=run)
