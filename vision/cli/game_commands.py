"""The game commands: ``live`` (a camera, stream or video, rulings as they happen), ``analyze`` (a recorded
game, as fast as it can be read) and ``demo`` (the bundled game video)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee import cli as rules_cli
from referee.cli import Command
from referee.commands import demo as rules_demo
from vision.cli.options import add_engine_options, add_game_options, game_from

if TYPE_CHECKING:
    from vision.game.gamelog import GameSetup
    from vision.runtime.capture import Damage
    from vision.session.live import LiveSession, LoggedGame
    from vision.ui.station import StationServer
    from vision.ui.station_access import StationAddress

PROG = rules_cli.PROG


CONSOLE_EVENTS = ("move", "restore", "dropout", "reconnected", "camera-moved", "occluded", "glare", "gave-up",
                  "behind", "caught-up", "end", "override-refused")  # fmt: skip
"""What the console says as it happens (besides the first reading of the table): in the words of
:func:`referee.events.describe`, as the station and the report say them."""


def format_event(event: dict[str, Any]) -> str | None:
    """One line (a few for a ruling that sends the table back) for the events a referee needs to see."""
    from referee.events import describe_line

    kind, at = event["event"], f"[{_clock(event.get('time_s', 0.0))}]"
    first_reading = kind == "table" and event.get("reason") == "first reading"
    if kind not in CONSOLE_EVENTS and not first_reading:
        return None
    line = f"{at} {describe_line(event)}"
    if kind == "move":
        ruling = event["ruling"]
        details = [f"    {v['code']}: {v['detail']}" for v in ruling["violations"]]
        if ruling["verdict"] == "review" and ruling["uncertain"]:
            details.append("    uncertain: " + " ".join(u["tile"] for u in ruling["uncertain"]))
        if ruling["verdict"] == "revert" and ruling["revert"]:
            plan = ruling["revert"]
            details.append(f"    restore: {_table_text(plan['restore'])}")
            if plan.get("to_rack"):
                details.append("    back to the rack: " + " ".join(plan["to_rack"]))
            details.append(f"    penalty: {ruling['penalty_tiles']} tile(s)")
        return "\n".join([line, *details])
    if kind == "behind":  # said at once (vision.session.pacing.KeepingUp): the referee must know moves may go unseen
        dropped = event.get("frames_dropped")
        return f"{at} WARNING: {describe_line(event)} ({dropped} frames dropped; the next move is REVIEW)"
    if kind == "end":
        return f"{line} ({event.get('reason', 'stopped')})"
    if first_reading:
        return f"{line}\n    {_table_text(event['table'])}"
    return line


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes:02d}:{secs:02d}"


def _table_text(table: dict[str, Any]) -> str:
    def label(tile: Any) -> str:
        return tile if isinstance(tile, str) else tile["label"]

    sets = " ".join("[" + " ".join(label(t) for t in s) + "]" for s in table.get("sets", []))
    loose = table.get("loose", [])
    return (sets or "(empty)") + (" loose: " + " ".join(label(t) for t in loose) if loose else "")


# -- analyze ----------------------------------------------------------------------------------------------


def cmd_analyze(args: argparse.Namespace) -> int:
    from vision.game.pipeline import pipeline_reader
    from vision.session.analyze import AnalyzeOptions, analyze_video
    from vision.session.stopping import StopSignals

    game = game_from(args)
    _check_calibration_file(args.calibration)
    from vision.session.common import engine_kwargs

    reader = pipeline_reader(args.models, **engine_kwargs(args))  # a missing model fails before the video is opened
    options = AnalyzeOptions(
        setup=game, calibration=args.calibration, progress=not args.quiet and not args.json, decoder=args.decoder
    )
    with StopSignals() as signals:  # Ctrl-C, SIGTERM: the analysis ends between frames, everything written
        summary = analyze_video(
            args.video, args.out, options, reader, overwrite=args.overwrite, stop=lambda: signals.reason,
            on_event=None if args.json else _print_event,
        )  # fmt: skip
    if args.report:
        from vision.ui.report import write_report

        _writing_report(args)
        summary["report"] = str(write_report(args.out))
    rules_cli.emit(args, summary, "\n".join(analysis_lines(summary)))
    return _analysis_status(summary, args.out)


def _writing_report(args: argparse.Namespace) -> None:
    """Say so on a terminal: cutting each move's pictures from the video takes a few seconds more."""
    if not args.json and sys.stderr.isatty():
        print("writing the report (each move's pictures cut from the video)...", file=sys.stderr, flush=True)


def analysis_lines(summary: dict[str, Any]) -> list[str]:
    """The end of an analysis in words: the verdicts, the speed, where the log and the report are."""
    from vision.ui.report import summary_text

    speed = summary.get("speed_x_real_time")
    lines = [
        f"{summary_text(summary['moves'], summary['verdicts'])} ({summary['video_s']:.0f} s of video analysed in"
        f" {summary['seconds']:.0f} s" + (f", {speed:g}x real time)" if speed else ")"),
        f"game log: {summary['log']}",
    ]
    if summary.get("report"):
        lines.append(f"report: {summary['report']}")
    return lines


def _analysis_status(summary: dict[str, Any], out: Path) -> int:
    """Exit status of an analysis, with a line on standard error when it is not a whole one: stopped by a signal
    (130, 143), or a video mostly undecodable (2, see :data:`vision.runtime.capture.UNUSABLE_SHARE`)."""
    from vision.runtime.capture import Damage
    from vision.session.common import END_OF_VIDEO
    from vision.session.stopping import EXIT_STATUS

    if summary["reason"] != END_OF_VIDEO:
        print(f"{PROG}: analysis stopped by {summary['reason']} at {_clock(summary['video_s'])} of the video;"
              f" {out} holds what was analysed up to there", file=sys.stderr)  # fmt: skip
        return EXIT_STATUS.get(summary["reason"], 1)
    return _damage_status(Damage.from_json(summary["damage"]), f"video {summary['video']!r}", "analysed")


def _damage_status(damage: Damage, name: str, done: str) -> int:
    """0 for a whole video; a warning for some frames lost; an error (2) when most of it could not be decoded."""
    if damage.unusable:
        print(f"{PROG}: error: {damage.describe(name)}: the game could not really be {done}", file=sys.stderr)
        return rules_cli.EXIT_USAGE
    if damage.unreadable:
        print(f"{PROG}: warning: {damage.describe(name)}; moves there may be missed", file=sys.stderr)
    return 0


def _check_calibration_file(how: str) -> None:
    """A calibration file given to ``--calibration`` is read now, so a bad one fails before a camera, a stream or a
    video is opened (and before a game log is started); it is read again once the first frame is there."""
    from vision.runtime.calibrate import Calibration
    from vision.session.common import CALIBRATION_METHODS

    if how not in CALIBRATION_METHODS:
        Calibration.load(how)


# -- live -------------------------------------------------------------------------------------------------


def cmd_live(args: argparse.Namespace) -> int:
    from vision.game.pipeline import pipeline_reader
    from vision.session.live import LiveOptions, LiveSession

    choice = None if args.resume else game_from(args)  # a resumed game is played at the table its log names
    _check_calibration_file(args.calibration)
    from vision.session.common import engine_kwargs

    reader = pipeline_reader(args.models, **engine_kwargs(args))  # --threads, --provider checked before the source
    if args.serve:
        _station_at(args)  # a refused address or secret fails before a game log is started
    game = _open_game(args, choice)
    options = LiveOptions(
        source=args.source, setup=game.setup, calibration=args.calibration, realtime=not args.fast,
        resume=game.resumption,
    )  # fmt: skip
    session = LiveSession(options, reader, game.log, game.keeper)
    heard: list[dict[str, Any]] = []
    session.subscribe(heard.append)
    station = None
    try:
        summary, station = _watch(args, session)
    except BaseException:
        if not session.started:
            game.log.discard()  # the game never started: no stub log is left to block the next try
        raise
    finally:
        game.log.close()
    if not args.json:
        print(game_summary(heard, session.log.path), flush=True)
    status = 0
    if summary.get("damage") is not None:
        from vision.runtime.capture import Damage, describe

        status = _damage_status(Damage.from_json(summary["damage"]), describe(args.source), "refereed")
    if station is not None:
        _hold_station(station, summary["reason"])
    return status


def game_summary(events: list[dict[str, Any]], log: Path) -> str:
    """A game's end in words: its rulings as they stand after the referee's overrides, the restores, the log."""
    from vision.ui.report import final_verdicts, summary_text

    verdicts = final_verdicts(events)
    restores = sum(1 for e in events if e.get("event") == "restore" and e.get("complete"))
    text = summary_text(len(verdicts), Counter(verdicts.values()))
    return f"game summary: {text}; {restores} table{'s' if restores != 1 else ''} restored; game log: {log}"


def _hold_station(station: StationServer, reason: str) -> None:
    """A video watched to its end (not a game stopped by the user): the station stays up with the last ruling and
    the game's summary until Ctrl-C, so the referee can still read it; then it stops."""
    from vision.session.stopping import SIGNAL_REASONS

    try:
        if reason not in SIGNAL_REASONS.values() and reason != "stopped":
            print(f"{PROG}: the game is over ({reason}); the station stays up at {station.url} with the last ruling"
                  " and the summary: Ctrl-C stops it", file=sys.stderr, flush=True)  # fmt: skip
            _wait_for_stop()
    finally:
        station.stop()


def _wait_for_stop() -> None:
    """Until Ctrl-C or SIGTERM."""
    import time

    from vision.session.stopping import StopSignals

    with StopSignals() as signals:
        while signals.reason is None:
            time.sleep(0.2)


def _open_game(args: argparse.Namespace, choice: GameSetup | None) -> LoggedGame:
    """The game log to write, locked: resumed (``--resume``), or new (``--log``, default game-DATE.jsonl)."""
    from vision.session.live import LoggedGame

    if choice is None:
        return LoggedGame.resume(args.resume, args.source)
    return LoggedGame.start(args.log or Path(f"game-{_stamp()}.jsonl"), args.source, choice)


def _watch(args: argparse.Namespace, session: LiveSession) -> tuple[dict[str, Any], StationServer | None]:
    """Print events as they come (serve the station), and run the session until it ends; Ctrl-C and SIGTERM end
    it in order (the log's end event says which). Returns the session's summary and the station (None without
    ``--serve``), still serving."""
    from vision.session.stopping import StopSignals

    if not args.json:
        session.subscribe(_print_event)
    else:
        session.subscribe(lambda event: print(json.dumps(event, sort_keys=True), flush=True))
    station = None
    if args.serve:
        from vision.ui.station import serve_in_thread

        station = serve_in_thread(session, _station_at(args))
    if sys.stdin is not None and sys.stdin.isatty():
        threading.Thread(target=_enter_is_clock, args=(session,), daemon=True).start()

    def announce() -> None:  # once the source has given a frame: a start that fails says only what failed
        print(f"{PROG}: game log {session.log.path} (Ctrl-C ends the game; Enter is the clock key)", file=sys.stderr)

    with StopSignals(session.stop):
        return session.run(on_start=announce), station


def _station_at(args: argparse.Namespace) -> StationAddress:
    """The station's address and secret from ``--serve``, ``--token-file`` (or the environment), ``--allow-host``."""
    from vision.ui.station import station_address

    return station_address(args.serve, token=args.token, token_file=args.token_file, allow_hosts=args.allow_host)


def _print_event(event: dict[str, Any]) -> None:
    text = format_event(event)
    if text:
        print(text, flush=True)


def _enter_is_clock(session: LiveSession) -> None:
    for _ in sys.stdin:
        session.press_clock()


def _stamp() -> str:
    import time

    return time.strftime("%Y%m%d-%H%M%S")


# -- demo -------------------------------------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    """The whole pipeline on the bundled game video: rulings as they come, the report at the end."""
    if args.rules:
        return rules_demo.run(args)
    from importlib import resources

    from vision.game.gamelog import GameSetup
    from vision.game.pipeline import pipeline_reader
    from vision.session.analyze import AnalyzeOptions, analyze_video
    from vision.ui.report import write_report

    samples = resources.files("vision").joinpath("samples")
    video, calibration = samples.joinpath("demo-game.mp4"), samples.joinpath("demo-calibration.json")
    truth = [json.loads(line) for line in samples.joinpath("demo-truth.jsonl").read_text().splitlines()]
    header = truth[0]
    if not args.json:
        print(f"Analysing the bundled game ({header['players']} players, profile {header['profile']}, synthetic video"
              f" {header['size'][0]}x{header['size'][1]}) with the shipped models...", flush=True)  # fmt: skip
    options = AnalyzeOptions(
        setup=GameSetup.of(header["profile"], header["players"]), calibration=str(calibration),
        progress=not args.json and sys.stderr.isatty(),
    )  # fmt: skip
    expected = [t for t in truth[1:] if t["event"] == "move"]

    def say(event: dict[str, Any]) -> None:  # each ruling as soon as it is made, with what the game's script says
        _print_event(event)
        match = next((t for t in expected if abs(t["settle_s"] - event["time_s"]) < 3), None)
        if event["event"] == "move" and match is not None:
            codes = ", ".join(v["code"] for v in match["expected"]["violations"]) or "no violation"
            print(f"    (the game's script: {match['expected']['verdict'].upper()}, {codes})", flush=True)

    # demo-output/ is the command's own folder: each run replaces the previous run's analysis (nothing else there)
    summary = analyze_video(
        str(video), args.out, options, pipeline_reader(None), overwrite=True, on_event=None if args.json else say
    )
    _writing_report(args)
    summary["report"] = str(write_report(args.out))
    if args.json:
        moves = json.loads((Path(args.out) / "moves.json").read_text())
        rules_cli.emit(args, {"summary": summary, "moves": moves, "report": summary["report"]}, "")
        return 0
    print("\n" + "\n".join(analysis_lines(summary)))
    return 0


# -- the commands -----------------------------------------------------------------------------------------


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    rules_demo.arguments(parser)
    parser.add_argument(
        "--out", type=Path, default=Path("demo-output"), metavar="DIR", help="where the log and report go"
    )
    parser.add_argument("--rules", action="store_true", help="only the rules engine, on bundled sample tables")


def _analyze_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("video", metavar="VIDEO", help="a video file of the table seen from above")
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder for the log and rulings")
    parser.add_argument("--no-report", dest="report", action="store_false", help="skip report.html")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an analysis already in DIR (other files there are kept)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument(
        "--decoder", choices=("auto", "pyav", "opencv"), default="auto",
        help="pyav: decode only what the analysis needs (keyframes while the table is still; the decode extra);"
        " opencv: every frame; auto (default): pyav where it is installed",
    )  # fmt: skip
    add_game_options(parser)
    add_engine_options(parser)
    rules_cli.add_json_option(parser)


def _live_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", required=True, help="camera index (0), video file, or rtsp:// / http:// URL")
    parser.add_argument("--log", type=Path, metavar="LOG", help="game log to write (default game-DATE.jsonl)")
    parser.add_argument("--resume", type=Path, metavar="LOG", help="continue the game in this log after a stop")
    parser.add_argument("--fast", action="store_true", help="a video file is read as fast as possible, not at its pace")
    parser.add_argument(
        "--serve", nargs="?", const="127.0.0.1:8000", metavar="HOST:PORT", help="serve the referee station"
    )
    parser.add_argument("--token", help=argparse.SUPPRESS)  # refused in one line: a secret there shows in `ps`
    parser.add_argument(
        "--token-file", metavar="PATH", help="station: file with its secret, 16+ characters (off loopback, or set"
        " RUMMIKUB_STATION_TOKEN)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-host", action="append", metavar="NAME", help="station: one more host name it answers to"
    )
    add_game_options(parser)
    add_engine_options(parser)
    rules_cli.add_json_option(parser)


DEMO = Command(
    "demo",
    "Referee the bundled game video with the shipped models: rulings, game log, report"
    " (--rules: the rules engine alone on a sample move script).",
    f"{PROG} demo",
    _demo_arguments,
    cmd_demo,
)
ANALYZE = Command(
    "analyze",
    "Analyse a recorded game video: the game log, each move's ruling and report.html, in a folder.",
    f"{PROG} analyze final.mp4 --profile pl-championship --players 4 --out analysis/",
    _analyze_arguments,
    cmd_analyze,
)
LIVE = Command(
    "live",
    "Referee a game live from a camera, a stream or a video: rulings as they happen, all in a game log.",
    f"{PROG} live --source 0 --profile pl-championship --players 4 --log final.jsonl",
    _live_arguments,
    cmd_live,
)
