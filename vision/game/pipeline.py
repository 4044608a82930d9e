"""Frames in, game events out: activity, readings, temporal fusion, settled tables, moves and rulings.

Per sampled frame the pipeline measures activity (cheap, :mod:`vision.runtime.motion`); the tile reader (the
expensive part) runs only when the table has gone still after activity, and now and then to verify a still
table. Phases:

- ``stable``: nothing over the table. Activity starts a move; every ``verify_every_s`` one reading checks
  the table did not change unseen.
- ``active``: hands or motion over the table. ``quiet_s`` seconds without either -> ``settling``.
- ``settling``: ``readings`` readings (spaced by about ``1 / sample_hz``) are fused (:func:`vision.runtime.track.fuse`)
  into one table, handed to the :class:`~vision.game.moves.GameKeeper`, which rules on the move; activity in
  between goes back to ``active``. A fused reading with a tile that more looks could settle (a label split, a cap
  on some readings only: :func:`vision.runtime.track.resolvable`) takes more readings first, up to
  ``max_readings``, while they keep to their schedule and rule within ``rule_within_s`` (DESIGN: a second) of the
  table settling; hands back during those settle the table on the readings made.

Reading is the expensive part, so a reading is not made again of a picture already read
(:attr:`PipelineConfig.reuse_unchanged`): a table that settles showing the picture the still table was read from (a
draw) takes that table's readings, a settling table whose first reading is sure takes it again for frames showing
its picture (:attr:`PipelineConfig.reuse_sure`), and an unchanged still table with nothing to refine is not
verified.

A move may pause: the player's hands leave the table before anything is laid (or rest out of the play area), the
table settles as it was, then the same hands come back and make the move. Such a settled table, unchanged, with
hands seen from one seat, would be ruled a draw at once; it is *held* instead (:attr:`PipelineConfig.pause_hold_s`)
and ruled a draw only once the turn has passed: another seat's hands over the table, a clock press, the end of the
source (:meth:`TablePipeline.finish`), or the table still for ``pause_hold_s``. The same seat's hands back before
that continue the move, ruled once when the table settles again (RULES.md §3: a move is a draw or a play, not
both). A table that changed and would be ruled REVERT, or REVIEW for a player's fault that uncertain tiles leave in
doubt (the game asked without applying it, :meth:`GameKeeper.would_move`), is held the same way
(:attr:`PipelineConfig.hold_half_laid`): a move paused with some tiles laid must be valid only at the end of the turn
(issue 16); after the turn's time limit it is not held. The same hands back putting the table as it was before the
move give the move up: the held table is ruled as it settled and the table put back is its restore. Any other
changed table is ruled when it settles (a valid one too, unless :attr:`PipelineConfig.hold_valid`): a ruling within a
second. The same hands going on with it before the turn passes *amend* it: the turn is ruled again as one move from
the table before it and logged under the same number (``amends``; :meth:`TablePipeline._rule_rest`); a whole that
breaks a rule the rest alone would not (:meth:`TablePipeline._doubt`) is held like a half-laid table, then ruled
REVIEW, never REVERT. The time limit of such a turn is the turn's (its start plus the limit, not the part's ruling
plus the limit): the camera watches it on across the pause (``_Ruled.limit``), and the amendment is ruled on the table
when it passed and hands after it, as any move over time (RULES.md §6).

A hand resting on the table keeps the phase ``active`` (the tiles under it cannot be read), with an
``occluded`` warning after ``occluded_warn_s``. A camera bump is detected by :class:`CameraMotionCheck` on
still frames and the play area follows the measured shift. A lamp's hot spot that washes part of the play area out
(:mod:`vision.runtime.glare`: tiles laid there are white on white, not seen at all) raises a ``glare`` warning when
a settled table first shows it, and a move (a draw too) whose activity reached it (:attr:`ActivityMeter.footprint`)
is ruled REVIEW with :data:`BLIND_SPOT` in its notes; so is one whose settled table changed, unread, where a glare
washes the play area out short of saturation (:data:`UNSEEN_IN_GLARE`).

Every pipeline starts in ``starting``, a resumed game's too: until the table has been seen still once, there is
no hand-free picture of it to tell hands from (the first frame after a restart may well show an arm), so only
changes between samples count, and that first still frame becomes the camera check's reference.

Size: about 750 lines, one module on purpose: the state machine :class:`TablePipeline` (about 510 lines: the phases
above, a method each, sharing the timers, the readings of one move and a held draw) with its config, stats and reader
set-up, plus the play-area filters it applies to readings (:func:`on_play_area`, :func:`detection_region`); the
activity measure, the fusion and the rulings it drives live in their own modules.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from referee.events import Event as GameEvent
from referee.events import Move
from referee.game import Game
from referee.moves import Ruling, Verdict
from referee.table import Table
from vision.game.moves import GameKeeper, looks_restored
from vision.game.tilememory import TileMemory
from vision.game.timelimit import LimitWatch
from vision.runtime.detections import Detections
from vision.runtime.detector import TILE_PX, Region
from vision.runtime.glare import TILE_AREA_MM2, WASHED_LEVEL, BlindSpots, blind_spots, median_tile_area
from vision.runtime.layout import MIN_CONFIDENCE, SetFinder
from vision.runtime.motion import Activity, ActivityMeter, ReadPicture
from vision.runtime.reader import Reader, TileReader
from vision.runtime.seats import seat_at
from vision.runtime.tables import FRAMES, WEAK_DETECTION, read_table
from vision.runtime.track import fuse, resolvable, unanimous

if TYPE_CHECKING:
    from vision.runtime.calibrate import Calibration, CameraMotionCheck

Line = dict[str, Any]
"""An event the pipeline says itself (a warning: occluded, camera-moved...), as the game log writes it."""
Event = Line | GameEvent
"""What the pipeline hands on: the game's typed events (from the keeper) and its own lines."""
MAX_STATE_READINGS = 9
READING_SPACING = 0.75
"""Share of ``1 / sample_hz`` that must pass between two readings of a settling table: a camera metered
faster than readings are due reads back to back once a reading takes longer than this."""
SETTLE_LATE_S = 0.3
"""A settling table's readings are *late* when the last one due is this far behind its schedule (readings spaced by
``READING_SPACING / sample_hz`` from the first): each reading took longer than the samples leave it (a live camera
on a busy CPU). Hands back over the table then end a still table that was never read: see
:meth:`TablePipeline._read_too_late`. At 0.3 s, readings of up to 0.27 s each (these 2 cores idle: 0.17-0.19 s on
720p, ``bench live``) finish every settling on schedule; on issue 16's 10-game set under load (0.25-0.5 s a reading)
a play taken back 1.35 s after it settled was merged with its taking back, unsaid, before this check."""
QUIET_SLACK_S = 0.01
"""Frame times are rounded (30 fps: steps of 0.0333 s), so quiet for ``quiet_s`` allows this much less."""
OVERHEAD_NMS_IOU = 0.3
"""Seen from above, tiles on the table never overlap: a box overlapping another by this much is a duplicate."""

WHOLE_TAKEN_BACK = (
    "the same player took back the whole move after its first part was ruled and the rest was held: a person decides"
)
"""The note of a table the same hands put back as it was before a move ruled in parts (``TablePipeline._settle``)."""

BLIND_SPOT = "hands reached a part of the table a glare washes out, where tiles cannot be read: a person checks"
"""The note of a move (or a draw) whose activity reached a blind spot (:mod:`vision.runtime.glare`): tiles laid
there may be missing from the table read, so the move is ruled REVIEW."""
UNSEEN_IN_GLARE = "something was laid where a glare washes the table out, and not read: a person checks"
"""The note of a move whose settled table changed, against the table before, where a glare washes it out, with no
tile read there (:func:`vision.runtime.glare.blind_spots` ``within`` the change): tiles white on white."""

LIMIT_LOOKAHEAD_S = 1.0
"""From this long before a turn's time limit until the turn ends, every sample counts (the table at the limit, a
touch after it): :attr:`TablePipeline.near_limit` tells a recording's sampler not to thin out samples then."""


def pipeline_reader(
    models: str | Path | None = None, *, threads: int | None = None, provider: str = "cpu"
) -> TileReader:
    """The tile reader for table frames (models checked now, so a missing file fails before any frame).

    ``threads``: ONNX Runtime's threads per model (None: the default, 2); ``provider``: "cpu" or "cuda" (refused in
    one line where this ONNX Runtime lacks it)."""
    from vision.runtime.models import check_provider

    providers = check_provider(provider)
    reader = TileReader(  # frames: regions, every box kept; fused, then judged by read_table's FRAMES policy
        models,
        iou=OVERHEAD_NMS_IOU,
        not_a_tile=FRAMES.reader_not_a_tile,
        near_frame=None,  # fitted on photos; frames at tile scale sit nearer the threshold (NEAR_FRAME's docstring)
        rescale=False,
        providers=providers,
        threads=threads,
    )
    reader.check_models()
    return reader


@dataclass(frozen=True)
class PipelineConfig:
    sample_hz: float = 6.0
    """Frames per second read while the table settles; a video file is sampled at this rate."""
    meter_hz: float = 15.0
    """Frames per second a camera's activity is measured at (cheap: 2 ms a 1080p frame). Sooner than
    ``sample_hz`` it sees the hands leave; on the bench games it cut the wall-clock latency of live rulings."""
    quiet_s: float = 0.25
    """Seconds without motion or hands since the last busy sample before the table counts as settling: two
    quiet samples at 6 a second (one after hands leave can still show a tile sliding, or a video encoder's
    smear of the arm), and two at 7.5 (a 15 fps video sampled every other frame; 0.3 took three there: the first
    reading 0.4 s after the last busy sample, and rulings up to 1.03 s after the hands left, over DESIGN's second).
    Issue 16's 10 games (15 fps) + g11, g12 and the demo game, exports of bd15a71 and bd15a71 + this and
    :attr:`rule_within_s`, same run: latency median 0.741 -> 0.607 s, max 1.033 -> 0.94 s (0.87 on the 15 fps
    games; the demo game is 10 fps); every move ruled the same but one (below, :attr:`max_readings`)."""
    readings: int = 3
    """Readings fused into one settled table..."""
    agreeing_readings: int = 3
    """...or this many when they agree on every tile and label. 2 saved 0.15 s of latency on the eight
    bench games but read two fewer tables right and ruled one more false revert (218 moves): off by default."""
    max_readings: int = 5
    """...or up to this many when the fused reading holds a tile more looks could settle
    (:func:`vision.runtime.track.resolvable`: a tile under the threshold that some reading read certain, none
    confidently as another label), the move ruled on them all. Bounded three times: a settle reads on only while its
    readings keep to their schedule (:meth:`TablePipeline._read_more`; a busy live machine settles on the usual
    ``readings``) and while the next one would still rule within :attr:`rule_within_s` of the table settling (a 15 fps
    video sampled at 7.5 a second: all 5; 6 samples a second: 4), and hands back over the table during the extra
    readings settle the table on those made (it was still for ``readings`` of them: no move lost, none merged with
    the next). 4 of 5 readings are enough to settle a tile split 2:1 or doubted 2:1 by a cap (see
    :mod:`vision.runtime.track`). ``readings``: never more.

    With :attr:`rule_within_s` and ``quiet_s`` 0.25 (exports of bd15a71 and bd15a71 + both, same run): 13 games
    169/169 found, 169/169 right tables, 29/29 flagged, 0 false REVERT, 0 phantoms both; clean REVIEW 6 -> 7 of 140:
    the tilted g3b's move 4, REVIEW for a joker of the table before it, in a set the move changed: move 3's five
    readings, now a sample earlier (120.80-121.33 s against 120.93-121.47 s), had it capped by the familiarity check
    in 3 of 5 (2 of 5 before: certain). The rule alone (``quiet_s`` 0.3): 6 -> 8 (g3b's moves 3 and 4), max 0.96 s.
    Extra readings on the video's very next frames instead (the sampler asked for them, an experiment): 6 -> 8, max
    0.94 s: the frame right after a read frame (the 15 fps MPEG-4's P-frames) doubted tiles the frames two on read
    certain.

    Measured with ``reuse_sure`` and the fusion of :mod:`vision.runtime.track` (94367aa against the same tree without
    them, ``git archive`` exports, same run, auto play area): issue 16's 10 games clean REVIEW 7 -> 6 of 114 (the
    tilted g3b's move 4), 137/137 right tables, 23/23 flagged, 0 false REVERT, 0 phantoms, 6 extra readings; g11,
    g12 and the demo game 32/32 right tables, 0/26 clean REVIEW both; latency at most 0.94 -> 1.03 video s (g3b, a
    recording sampled at 6 a second). ``bench live`` on g10 (1.5 min, idle and one core busy): 7/7 moves, 7 right
    tables, no warning, nothing unread, both. Every settle read 6 times instead (an experiment): clean REVIEW 11 -> 15,
    more looks find more caps: more readings only where they can settle a tile."""
    rule_within_s: float = 1.0
    """DESIGN: a ruling within this long of the table settling. The table settles when the hands have left it and
    nothing on it moves any more (``bench pipeline``'s and ``bench live``'s settling: the truth's ``settle_s``, the
    hands leaving); the pipeline knows it only from its samples: the table was not settled before the sample ahead of
    the last one with motion or hands (it changed after that sample), so the ruling's frame must come within this
    long of that sample. The usual ``readings`` are not held back (the 13 games' median 0.61 s after the hands left);
    an extra reading (``max_readings``) is taken only where the sample after it would still come in time (as far on
    as the last one came after the one before it: :meth:`TablePipeline._read_more`). A live camera's ruling reaches
    the game log its last reading's duration after its frame."""
    verify_every_s: float = 3.0
    """While the table is still, read it this often to catch a change the activity meter missed."""
    reuse_unchanged: bool = True
    """A reading due on a frame whose play area shows the picture the still table was last read from
    (:class:`vision.runtime.motion.ReadPicture`: same to a few pixels of shake) is not made again: a table that
    settles unchanged (a draw, a move that paused) takes that table's readings, and a verification of it is skipped
    unless it has uncertain tiles to refine. False: every reading made, as before (``bench decode --baseline``)."""
    reuse_sure: bool = True
    """With ``reuse_unchanged``: a settling table whose first reading is sure (:func:`sure_reading`: every box read
    at :data:`SURE_CONFIDENCE` or over, or certain and vouched for by the tile memory as the tile it read certain in
    the last settled table, and detected well) takes that reading again for each later frame showing its
    picture (:class:`~vision.runtime.motion.ReadPicture`, compared each time: 45 ms at 1080p against a reading's
    150-250 ms), instead of reading it again; a frame whose picture changed is read, and every one after it. A first
    reading with any doubt is followed by independent readings, as without it (the readings that outvote a doubtful
    look: :mod:`vision.runtime.track`)."""
    occluded_warn_s: float = 15.0
    """A hand or object over the table for longer than this raises an ``occluded`` warning."""
    camera_check_every_s: float = 1.0
    clock_wait_s: float = 5.0
    """A clock press still waiting for the table to settle after this long raises a ``clock-waiting`` warning
    (hands still over the table?); the press is ruled when the table settles, at the time it was pressed."""
    tile_px: float = TILE_PX
    """Width of a tile, in pixels, at the detector's input (what it learnt; the frame is scaled to it)."""
    default_width_px: int = 896
    """Width the play area is scaled to when the calibration does not say how big a tile is."""
    pause_hold_s: float = 6.0
    """A table settled unchanged after one seat's hands (a draw, or a move paused before any tile is laid) is ruled
    a draw once it has stayed still this long, or at once when another seat's hands come, the clock is pressed or
    the source ends; the same seat's hands back before that continue the move (0: a draw ruled when it settles).
    On issue 16's 10-game bench set (a 2 s pause in every play of one game) the same hands came back 1.33 to 1.47 s
    after such a table settled, and 3 s ruled every move as 6 s did; 6 s leaves room for players who think longer.
    (Returns after up to 4.0 s, first taken for pauses, were a fault of the synthetic film of tilted cameras, whose
    arms fell short of the play area: fixed in 0c77393.)"""
    hold_half_laid: bool = True
    """Hold a changed table that would be ruled REVERT after one seat's hands too (a move paused with some tiles laid,
    issue 16; see the module's docstring); False: ruled REVERT when it settles. Measured with ``bench pipeline`` (both
    rows) at ffa74a7 and again at 8a2545b: on issue 16's 10-game set and the bundled demo game the same moves, tables
    and verdicts on and off (137/137 found, 0 false REVERT); on a game whose 4 plays pause midway (``synth-game
    --paused-midway 2``, 4 players, 13 moves) off: 10/13 found, 5 phantom moves, 4 false REVERTs (auto row); on: 13/13,
    13 right tables, 3/3 violations flagged, none made up."""
    hold_valid: bool = False
    """With ``hold_half_laid``, hold a changed table the game would rule OK (or REVIEW) as well: the same hands back
    go on with the move, ruled once (False: ruled when it settles, and the rest of the move amends it, the whole turn
    ruled again under its number: :meth:`TablePipeline._rule_rest`; it was a second move before). On: it gives up the
    ruling within a second of every play (16 tests of tests/vision/game fail with it on). Measured on a game whose
    plays pause after valid half tables (``synth-game --paused-midway 2 --players 3 --profile official --seed 1614``,
    13 moves, 6 paused plays, 4 half tables valid; bench pipeline auto row at 2b2d271): off 13/13 moves found, 9 right
    tables, 5 phantom moves (the valid halves ruled as moves, and a REVIEW for the whole move taken back), the injected
    violation flagged (REVIEW), 0 false REVERT (at 8a2545b the violation was lost); on 13/13, 13 right tables, 1/1
    flagged, no phantom; hold_half_laid off (8a2545b): 11/13, 7 right tables, 3 false REVERTs. Since the same hands
    going on amend the move (the whole turn ruled again under its number, ``amends``), off gives one move per turn
    too: the same game at a0ad48f (auto row, ``git archive`` export, /work/tmp/s29/bench_auto.py) 13/13 found, 13
    right tables, 0 phantoms, 4 moves amended, the violation flagged (REVIEW), 0 false REVERT; the 10-game set
    (828b700), g11 and the demo game ruled move for move as at 29cda3d, none amended."""


@dataclass(frozen=True)
class _Held:
    """A settled table that looks like a draw, held until the turn is seen to pass (see the module's docstring)."""

    table: Table
    time_s: float
    frame: int
    start_s: float | None
    seat: int
    left_out: int
    at_limit: Table | None
    touched: bool | None
    faulty: bool = False
    """The game would rule a move ending on ``table`` REVERT, or REVIEW for a player's fault left in doubt by
    uncertain tiles (:func:`_faulty`); False for a draw held, or a valid table (``hold_valid``)."""
    doubt: str | None = None
    """Why it is to be ruled REVIEW (a whole move taken back: :data:`WHOLE_TAKEN_BACK`), or None."""
    part: _Ruled | None = None
    """The play ruled as it settled that the same hands went on with to leave this table: ruled as an amendment of
    it, the turn as one move (:meth:`TablePipeline._rule_rest`). ``at_limit`` and ``touched`` are then the turn's
    (:attr:`_Ruled.limit`), and ``alone`` what the camera saw of the limit of a move from the part on."""
    alone: tuple[Table | None, bool | None] = (None, None)
    """With ``part``: the table at the limit and hands after it of the move the rest would be alone (its turn begun
    as the part was ruled), to rule the rest as a move of its own."""


@dataclass(frozen=True)
class _Ruled:
    """A play ruled OK as it settled after one seat's hands, the turn not yet seen to pass: the same hands may go on
    with it (a move paused with a valid table). ``game``: the game before it, to rule the move as a whole."""

    seat: int
    game: Game
    start_s: float | None
    time_s: float
    limit: LimitWatch | None = None
    """The turn's time limit as the camera sees it (the turn's start plus the limit, not the part's ruling plus the
    limit): fed on while the same hands may go on, so an amendment carries the whole turn's evidence, wherever the
    limit passed: in the part, the pause or the rest (RULES.md §6). None: no limit."""


@dataclass
class PipelineStats:
    samples: int = 0
    readings: int = 0
    reading_s: float = 0.0
    reused: int = 0
    """Readings not made: the picture was the one the still table was read from (``reuse_unchanged``)."""
    copied: int = 0
    """Readings not made: a settling table's sure first reading taken again for its picture (``reuse_sure``)."""
    extra: int = 0
    """Readings of a settling table beyond ``readings``: a tile more looks could settle (``max_readings``)."""
    verifies_skipped: int = 0
    settles: int = 0
    phases: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "readings": self.readings,
            "reading_ms_mean": round(1000 * self.reading_s / self.readings, 1) if self.readings else None,
            "readings_reused": self.reused,
            "readings_copied": self.copied,
            "readings_extra": self.extra,
            "verifies_skipped": self.verifies_skipped,
            "settles": self.settles,
            "phases": dict(self.phases),
        }


class TablePipeline:
    """Feed it frames (:meth:`process`); it returns the events of the game as they happen."""

    def __init__(
        self,
        reader: Reader,
        keeper: GameKeeper,
        frame_size: tuple[int, int],
        *,
        calibration: Calibration | None = None,
        config: PipelineConfig | None = None,
        on_event: Callable[[Event], None] | None = None,
        motion_check: CameraMotionCheck | None = None,
    ) -> None:
        self.reader = reader
        self.keeper = keeper
        self.frame_size = frame_size
        self.calibration = calibration
        self.config = config or PipelineConfig()
        self.on_event = on_event
        self.motion_check = motion_check
        self.meter = self._meter()
        self.phase = "starting"
        self.seen_still = False
        """The table was seen still (settled) in this session: the meter has a hand-free background."""
        self.readings: list[Detections] = []
        self.state_readings: list[Detections] = []
        """Readings of the table since it last settled (fused together to verify and refine it)."""
        self.still_readings: list[Detections] = []
        self.still_picture = ReadPicture()
        """The picture the still table was last read from and its readings of that picture, kept through the next
        move: a table that settles showing that picture again takes them (:attr:`PipelineConfig.reuse_unchanged`)."""
        self.slot_picture = ReadPicture()
        self.slots_reused = False
        """The picture of the settling table's first reading, and whether it showed the still table's picture (so
        this settling takes its readings)."""
        self.first_sure = False
        """The settling table's first reading is sure (:func:`sure_reading`): its frames showing its picture take it
        (:attr:`PipelineConfig.reuse_sure`)."""
        self.disagreement: Table | None = None
        self.busy_s = -1e9
        """Time of the last sample with motion or hands."""
        self.unsettled_s: float | None = None
        """Time of the sample before the last one with motion or hands: the table settled after it
        (:attr:`PipelineConfig.rule_within_s`; None: no hands or motion seen yet, the first table no move's)."""
        self.sample_s: float | None = None
        self.sample_gap_s = 0.0
        """Time of the last sample, and how long after the one before it came: the next one's spacing, about."""
        self.read_s = -1e9
        """Time of the frame last read while settling."""
        self.first_read_s: float | None = None
        """Time of the settling table's first reading (None: no reading of it yet)."""
        self.last_read: tuple[np.ndarray, float, int] | None = None
        """The settling table's frame last read (image, time, frame): hands back during its extra readings settle the
        table on it."""
        self.activity_start: float | None = None
        self.seats: Counter[int] = Counter()
        """Samples with an arm over the table, by the seat number it reaches in from."""
        self.hands = False
        self.last_verify = -1e9
        self.last_camera_check = -1e9
        self.warned_occluded = False
        self.clock_pressed: tuple[float, int] | None = None
        """A clock press waiting for the table to settle (time, frame)."""
        self.warned_clock = False
        self.warned_blind = False
        """A ``glare`` warning was given for the blind spots seen since the last settle without one."""
        self.limit: LimitWatch | None = None
        """The time limit of the turn under way, as the camera saw it pass (:mod:`vision.game.timelimit`)."""
        self.last_sample: tuple[np.ndarray, float, int] | None = None
        """The last sample processed (image, time, frame): :meth:`finish` reads it when the source ends."""
        self.held: _Held | None = None
        """A settled table that looks like a draw, not yet ruled (the move may go on: see the module's docstring)."""
        self.ruled: _Ruled | None = None
        """The last play, ruled OK as it settled, while the same hands may still go on with it."""
        self.tile_memory = TileMemory()
        """The last settled table and its picture: a tile lying as it lay then is weighed against its reading then."""
        self.stats = PipelineStats()
        self.latest: dict[str, Any] = {"table": keeper.table, "detections": None, "activity": None}

    # -- the loop ---------------------------------------------------------------------------------
    def process(self, image: np.ndarray, time_s: float, frame: int) -> list[Event]:
        self.stats.samples += 1
        self.last_sample = (image, time_s, frame)
        before_s, self.sample_s = self.sample_s, time_s
        self.sample_gap_s = 0.0 if before_s is None else time_s - before_s
        activity = self.meter.measure(image)
        if not self.seen_still:
            # No still table seen yet, so no hand-free background: the first frame may show an arm, which would then
            # count as an arm for good once it left. Until the first settling, only changes between samples count.
            self.meter.set_background(image)
        self.latest["activity"] = activity
        self._watch_limit(image, time_s, activity)
        events: list[Event] = []
        phase = self.phase
        if phase == "starting":
            events += self._starting(image, time_s, frame, activity)
        elif phase == "stable":
            events += self._stable(image, time_s, frame, activity)
        elif phase == "active":
            events += self._active(time_s, frame, activity)
        if phase == "settling" or (phase in ("starting", "active") and self.phase == "settling"):
            events += self._settling(image, time_s, frame, activity)
        events += self._clock_waiting(time_s, frame)
        self.stats.phases[self.phase] += 1
        for event in events:
            if self.on_event:
                self.on_event(event)
        return events

    def clock(self, time_s: float, frame: int) -> list[Event]:
        """The clock key was pressed.

        Players press it as their hands leave the table, before it has settled: such a press waits for the
        settled table (and is ruled at the time of the press), so the move is ruled on the table as it was left.
        """
        if self.phase in ("starting", "active", "settling") and self.keeper.table is not None:
            if self.clock_pressed is None:  # a second press while waiting changes nothing
                self.clock_pressed, self.warned_clock = (time_s, frame), False
            return []
        self.ruled = None
        held = self._rule_held()  # the press ends the turn: a held draw was one
        table = self.keeper.table if self.phase == "stable" else None
        if self.limit is not None and self.limit.due(time_s) and table is not None:
            self.limit.reached(None, table, time_s)  # pressed after the limit, before any sample saw it pass: still
        at_limit, touched = self._limit_evidence(table, None)
        events: list[Event] = held + list(
            self.keeper.clock(
                time_s=time_s, frame=frame, table=table, table_at_limit=at_limit, touched_after_limit=touched
            )
        )
        for event in events:
            if self.on_event:
                self.on_event(event)
        return events

    def finish(self) -> list[Event]:
        """The source ended (or the game is stopped). A table quiet since the hands left (settling) is settled on the
        readings taken so far and the last sample (the ruling's tiles are uncertain where they disagree), and a held
        draw is ruled, as it was when it settled."""
        events: list[Event] = []
        if self.phase == "settling" and self.last_sample is not None:
            image, time_s, frame = self.last_sample
            if self.read_s < time_s:
                self.readings.append(self._read(image))
            events += self._settle(image, time_s, frame)
        events += self._rule_held()
        for event in events:
            if self.on_event:
                self.on_event(event)
        return events

    def _clock_waiting(self, time_s: float, frame: int) -> list[Event]:
        if self.clock_pressed is None or self.warned_clock:
            return []
        waited = time_s - self.clock_pressed[0]
        if waited < self.config.clock_wait_s:
            return []
        self.warned_clock = True
        return [{"event": "clock-waiting", "time_s": round(time_s, 3), "frame": frame, "seconds": round(waited, 1)}]

    # -- phases ---------------------------------------------------------------------------------
    def _starting(self, image: np.ndarray, time_s: float, frame: int, activity: Activity) -> list[Event]:
        if activity.busy:
            self.readings = []
            return []
        self.phase = "settling"
        self.activity_start, self.hands = None, False
        return []

    def _stable(self, image: np.ndarray, time_s: float, frame: int, activity: Activity) -> list[Event]:
        events: list[Event] = []
        if self.held is not None and time_s - self.held.time_s >= self.config.pause_hold_s:
            events += self._rule_held()  # still for long enough: the move was a draw
        if self.ruled is not None and time_s - self.ruled.time_s >= self.config.pause_hold_s:
            self.ruled = None  # the turn has passed
        if activity.busy or activity.global_change:
            return events + self._begin_activity(time_s, frame, activity)
        check = self.motion_check
        if check is not None and time_s - self.last_camera_check >= self.config.camera_check_every_s:
            self.last_camera_check = time_s
            events += self._check_camera(check, image, time_s, frame)
        if time_s - self.last_verify >= self.config.verify_every_s:
            self.last_verify = time_s
            events += self._verify(image, time_s, frame)
        return events

    def _verify(self, image: np.ndarray, time_s: float, frame: int) -> list[Event]:
        """Read the still table again: refine the state's confidences, or notice a change nobody was seen making.

        Readings of one still period are fused together (nothing moved between them). A fused reading that
        disagrees with the state twice in a row, with no hands seen, is handed on as a settled table.
        """
        same_picture = self.config.reuse_unchanged and self.still_picture.same(image, self._region_box())
        if same_picture and self._nothing_to_verify():
            self.stats.verifies_skipped += 1
            return []
        latest = self._read(image)
        self.state_readings = [*self.state_readings[-(MAX_STATE_READINGS - 1) :], latest]
        if self.config.reuse_unchanged:
            self._note_still(image, latest, same_picture)
        if len(self.state_readings) < self.config.readings:
            return []
        current = self._table_now
        reading = read_table(fuse(self.state_readings))
        table = reading.table
        at: dict[str, Any] = {"time_s": round(time_s, 3), "frame": frame}
        if current is not None and _same_tiles(table, current):
            self.disagreement = None
            if len(table.uncertain) < len(current.uncertain) and self.held is None:
                return list(self.keeper.refine(table, **at))
            return []
        if self.disagreement is None or not _same_tiles(table, self.disagreement):
            self.disagreement = table
            return [{"event": "reading-disagrees", **at, "table": table.to_json()}]
        self.disagreement = None
        self.ruled = None
        held = self._rule_held()
        at_limit, touched = self._limit_evidence(table, None)
        events: list[Event] = held + list(self.keeper.settled(
            table, **at, start_s=None, seat=None, hands=False, left_out=len(reading.left_out), table_at_limit=at_limit,
            touched_after_limit=touched,
        ))  # fmt: skip
        self.meter.set_background(image)
        return events

    def _active(self, time_s: float, frame: int, activity: Activity) -> list[Event]:
        events: list[Event] = self._count_hands(activity, time_s, frame)
        if activity.busy or activity.global_change:
            self.busy_s, self.unsettled_s = time_s, time_s - self.sample_gap_s
            started = self.activity_start if self.activity_start is not None else time_s
            resting = activity.arm and activity.motion < 0.002
            if resting and time_s - started > self.config.occluded_warn_s and not self.warned_occluded:
                self.warned_occluded = True
                events.append(
                    {
                        "event": "occluded",
                        "time_s": round(time_s, 3),
                        "frame": frame,
                        "seconds": round(time_s - started, 1),
                    }
                )
            return events
        if time_s - self.busy_s >= self.config.quiet_s - QUIET_SLACK_S:
            self.phase, self.readings, self.read_s = "settling", [], -1e9
        return events

    def _settling(self, image: np.ndarray, time_s: float, frame: int, activity: Activity) -> list[Event]:
        if activity.busy or activity.global_change:
            if self.phase == "settling" and not self.seen_still:
                self.readings = []
                return []
            if len(self.readings) >= self.config.readings and self.last_read is not None:
                # hands back during extra readings: the table was still for the usual readings, settled on them
                events = self._settle(*self.last_read)
                return events + self._begin_activity(time_s, frame, activity)
            events = self._read_too_late(time_s, frame)
            return events + self._begin_activity(time_s, frame, activity, keep_start=True)
        if time_s - self.read_s < READING_SPACING / self.config.sample_hz:
            return []  # metered only: still quiet, and the next reading is not due yet
        self.read_s = time_s
        if not self.readings:
            self.first_read_s = time_s
        if len(self.readings) >= self.config.readings:
            self.stats.extra += 1
        self.readings.append(self._settling_reading(image))
        self.last_read = (image, time_s, frame)
        count = len(self.readings)
        if count < self.config.readings and not (count >= self.config.agreeing_readings and unanimous(self.readings)):
            return []
        if count >= self.config.readings and self._read_more(time_s):
            return []
        return self._settle(image, time_s, frame)

    def _read_more(self, time_s: float) -> bool:
        """Whether the settling table is read once more before it settles (:attr:`PipelineConfig.max_readings`): a
        tile of the readings so far that more looks could settle, the readings on their schedule (each within
        ``READING_SPACING / sample_hz`` of the last, :data:`SETTLE_LATE_S` allowed in all, as :meth:`_read_too_late`
        counts them), so a machine that reads slowly settles on time rather than fall further behind, and the next
        sample, as far on as the last one came after the one before it, within :attr:`PipelineConfig.rule_within_s`
        of the table settling."""
        count = len(self.readings)
        if count >= self.config.max_readings or self.first_read_s is None:
            return False
        if self.slots_reused and len(self.still_readings) <= count:
            return False  # the still table's readings taken, no other to take
        if time_s - self.first_read_s > (count - 1) * READING_SPACING / self.config.sample_hz + SETTLE_LATE_S:
            return False
        unsettled_s = self.unsettled_s
        if unsettled_s is not None and time_s + self.sample_gap_s > unsettled_s + self.config.rule_within_s + 1e-6:
            return False  # the next reading would rule too late (DESIGN: within a second of the table settling)
        return resolvable(self.readings, self.config.max_readings)

    def _read_too_late(self, time_s: float, frame: int) -> list[Event]:
        """Hands back over a table still long enough to have settled, had its readings kept to their schedule
        (:data:`SETTLE_LATE_S`): what the hands left was never read in full, so it is not known (a play taken back,
        a half move). The move goes on as one, as if the pause had been short, but the camera counts as unread from
        the first reading on (an ``unread`` line: the move is REVIEW, and the console and station say so at once),
        never a draw or a verdict on a table nobody read."""
        if not self.readings or self.first_read_s is None:
            return []
        due_s = (self.config.readings - 1) * READING_SPACING / self.config.sample_hz + SETTLE_LATE_S
        if time_s - self.first_read_s < due_s:
            return []  # a short pause: the readings were on schedule, the move simply went on
        event: dict[str, Any] = {
            "event": "unread", "time_s": round(time_s, 3), "frame": frame, "from_s": round(self.first_read_s, 3),
            "seconds": round(time_s - self.first_read_s, 3), "readings": len(self.readings),
            "cause": "the table went still but hands came back before it was read",
        }  # fmt: skip
        self.keeper.apply(event)
        return [event]

    def _settle(self, image: np.ndarray, time_s: float, frame: int) -> list[Event]:
        """The readings taken since the table went quiet, fused: the settled table, handed to the game."""
        fused = self.tile_memory.weigh(image, fuse(self.readings))
        reading = read_table(fused)
        table, left_out = reading.table, len(reading.left_out)
        self.tile_memory.remember(image, table)
        self.latest["table"], self.latest["left_out"] = table, reading.left_out
        self.stats.settles += 1
        seat = self.seats.most_common(1)[0][0] if self.seats else None
        seen = np.concatenate([fused.xyxy, reading.left_out.xyxy])
        blind = self._blind_spots(image, seen)
        blind_doubt = BLIND_SPOT if blind.reached_by(self.meter.footprint) else None
        changed = self.meter.faint_change(image) if blind_doubt is None else None
        if changed is not None:
            unseen = self._blind_spots(image, seen, level=WASHED_LEVEL, within=changed)
            blind_doubt = UNSEEN_IN_GLARE if unseen else None
        start_s, hands, events = self.activity_start, self.hands, self._warn_blind(blind, time_s, frame)
        ruled = self.ruled if self.ruled is not None and set(self.seats) == {self.ruled.seat} else None
        if ruled is not None:  # the same hands at work: the turn goes on, pause_hold_s counts from now
            ruled = replace(ruled, time_s=time_s)
        self.ruled = ruled  # another seat's hands, or none seen: the turn passed
        whole_back = False
        if self.held is not None and seat == self.held.seat and set(self.seats) == {seat}:
            if ruled is None and self._taken_back(self.held, table):
                events += self._rule_held()  # an invalid table put back as it was: the REVERT, then its restore
            elif ruled is not None and self.held.faulty and _restores(table, ruled.game.table):
                # the rest held, then the whole move taken back (its first part was ruled): the rest as it settled,
                # the turn amended as one move, and this table its restore; else (the move not amended) this table
                # ruled REVIEW, never a REVERT for the tiles of the first part going back
                events += self._rule_held()
                pending = self.keeper.pending
                whole_back = pending is None or not looks_restored(table, pending.table)
                self.ruled, ruled = None, None
            else:
                start_s, self.held = self.held.start_s, None  # the same hands came back: the move went on
        else:
            events += self._rule_held()
        at_limit, touched = self._limit_evidence(table, seat)
        held = (
            _Held(table, time_s, frame, start_s, seat, left_out, at_limit, touched, doubt=blind_doubt)
            if seat is not None
            else None
        )
        if held is not None and whole_back:
            held = replace(held, doubt=WHOLE_TAKEN_BACK)
        elif held is not None and ruled is not None:  # the turn's limit, not the one counted from the part's ruling
            turn_at, turn_touched = _evidence(ruled.limit, table, self._mover(seat))
            held = replace(held, part=ruled, at_limit=turn_at, touched=turn_touched, alone=(at_limit, touched))
        if ruled is not None and self.keeper.table is not None and table.same_layout(self.keeper.table):
            pass  # the same hands left the table as their move, ruled, left it: no move of its own (not a draw)
        elif held is not None and self._looks_like_a_draw(table, seat, hands):
            self.held = held
        elif held is not None and (faulty := self._half_laid(held, hands)) is not None:
            self.held = replace(held, faulty=faulty)
        else:
            game = self.keeper.game
            if held is not None and held.part is not None:
                settled = self._rule_rest(held)
            else:
                doubt = blind_doubt if held is None else held.doubt
                settled = self.keeper.settled(
                    table, time_s=time_s, frame=frame, start_s=start_s, seat=seat, hands=hands, left_out=left_out,
                    table_at_limit=at_limit, touched_after_limit=touched, doubt=doubt,
                )  # fmt: skip
            events += settled
            if seat is not None and hands and not whole_back and any(_standing_play(e) for e in settled):
                self.ruled = ruled or _Ruled(seat, game, start_s, time_s, self._watch_of(game))
        if self.clock_pressed is not None:
            self.ruled = None  # the press ends the turn
            pressed_s, pressed_frame = self.clock_pressed
            self.clock_pressed = None
            events += self.keeper.clock(
                time_s=pressed_s, frame=pressed_frame, table=table, left_out=left_out, table_at_limit=at_limit,
                touched_after_limit=touched,
            )  # fmt: skip
        self.phase, self.state_readings, self.readings, self.last_read = "stable", self.readings, [], None
        if self.config.reuse_unchanged and (self.slots_reused or self.slot_picture.same(image, self._region_box())):
            self._remember_still(image)
        else:  # the table changed while it was read: its picture stands for no reading
            self.still_picture.forget()
        self.slots_reused = False
        self.disagreement = None
        self.meter.set_background(image)
        if not self.seen_still and self.motion_check is not None and self.calibration is not None:
            # The first frame may have shown hands (a game resumed mid-move), which a still table would then
            # differ from as if the camera had moved: the check compares with the table as first seen still.
            self.motion_check = self.motion_check.rebased(self.calibration, image)
        if not self.seen_still:
            events += self._first_still(image, time_s, frame)
        self.seen_still = True
        self.last_verify = time_s
        self.warned_occluded = False
        return events

    def _blind_spots(self, image: np.ndarray, boxes_xyxy: np.ndarray, **washed: Any) -> BlindSpots:
        """The play area's blind spots in a settled frame, outside the boxes seen (:mod:`vision.runtime.glare`;
        ``washed``: its ``level`` and ``within``)."""
        meter = self.meter
        return blind_spots(image, meter.mask, meter.scale, boxes_xyxy, self._tile_area_px(boxes_xyxy), **washed)

    def _tile_area_px(self, boxes_xyxy: np.ndarray) -> float:
        """A tile's area in the frame: from the play area's size in millimetres, else the boxes' median (0: none)."""
        px_per_mm = measured_px_per_mm(self.calibration)
        if px_per_mm is not None:
            return TILE_AREA_MM2 * px_per_mm * px_per_mm
        return median_tile_area(boxes_xyxy)

    def _warn_blind(self, blind: BlindSpots, time_s: float, frame: int) -> list[Event]:
        """A ``glare`` warning when blind spots appear (again after a settle without them)."""
        if not blind:
            self.warned_blind = False
            return []
        if self.warned_blind:
            return []
        self.warned_blind = True
        return [{"event": "glare", "time_s": round(time_s, 3), "frame": frame, **blind.to_json()}]

    def _begin_activity(
        self, time_s: float, frame: int, activity: Activity, *, keep_start: bool = False
    ) -> list[Event]:
        if not keep_start or self.activity_start is None:
            self.activity_start = time_s
            self.seats = Counter()
            self.hands = False
        events: list[Event] = list(self.keeper.activity(time_s=time_s, frame=frame)) if self.phase == "stable" else []
        self.phase, self.readings, self.state_readings, self.busy_s = "active", [], [], time_s
        self.unsettled_s = time_s - self.sample_gap_s
        self.last_read = None
        return events + self._count_hands(activity, time_s, frame)

    def _count_hands(self, activity: Activity, time_s: float, frame: int) -> list[Event]:
        """An arm over the table counts for the seat it reaches in from (by seat number, as the game logs it).
        Another seat's arm than a held draw's ends that turn: the draw is ruled, and this move's activity logged."""
        if not activity.arm:
            return []
        self.hands = True
        seat = self.arm_seat(activity)
        if seat is None:
            return []
        self.seats[seat] += 1
        if self.ruled is not None and seat != self.ruled.seat:
            self.ruled = None  # the next player's hands: the turn has passed
        if self.held is None or seat == self.held.seat:
            return []
        events = self._rule_held()
        started = self.activity_start if self.activity_start is not None else time_s
        return events + list(self.keeper.activity(time_s=started, frame=frame))

    def _looks_like_a_draw(self, table: Table, seat: int | None, hands: bool) -> bool:
        """The settled table would be ruled a draw by the seat's hands, and may yet be a move that paused."""
        keeper = self.keeper
        return (
            self.config.pause_hold_s > 0
            and hands
            and seat is not None
            and self.clock_pressed is None
            and keeper.table is not None
            and (keeper.game.pending is None or not looks_restored(table, keeper.game.pending.table))
            and not keeper.clock_mode
            and not keeper.game.over
            and table.same_layout(keeper.table)
        )

    def _half_laid(self, held: _Held, hands: bool) -> bool | None:
        """Whether a move ending on the settled table would be faulty (:func:`_faulty`), when that table changed
        after one seat's hands and may be a move paused halfway (tiles laid, the hands off to think) that is to be
        held, as the rules judge the table at the end of the turn (RULES.md §3, §5): a faulty one always, a valid one
        with ``hold_valid``. None: not held. The game is asked without applying the move
        (:meth:`GameKeeper.would_move`); a table it would take as no move (a restore) is not held. Not after the
        turn's time limit: the turn is over then (RULES.md §6), whatever the hands do next."""
        keeper = self.keeper
        if not (
            self.config.hold_half_laid
            and self.config.pause_hold_s > 0
            and hands
            and self.clock_pressed is None
            and keeper.table is not None
            and not keeper.clock_mode
            and not keeper.game.over
            and not held.table.same_layout(keeper.table)
        ):
            return None
        part = self._amending(held)  # the same hands going on with a move ruled: the turn as a whole is asked
        limit_at = keeper.time_limit_at_s if part is None else _limit_at(part.game)  # the turn's, from its start
        if limit_at is not None and held.time_s >= limit_at:
            return None
        move = keeper.would_move(
            held.table, time_s=held.time_s, frame=held.frame, start_s=held.start_s if part is None else part.start_s,
            seat=held.seat, hands=True, left_out=held.left_out, table_at_limit=held.at_limit,
            touched_after_limit=held.touched, game=None if part is None else part.game,
        )  # fmt: skip
        if move is None or not (_faulty(move.ruling) or self.config.hold_valid):
            return None
        return _faulty(move.ruling)

    @property
    def _table_now(self) -> Table | None:
        """The table as the turn stands: a held move's (not yet ruled), else the game's."""
        return self.held.table if self.held is not None else self.keeper.table

    def _taken_back(self, held: _Held, table: Table) -> bool:
        """The same hands, back over a held table the game would rule REVERT (or REVIEW for a fault in doubt), left
        the table as it was before the move: the move was given up, not finished. That is the REVERT (RULES.md §6:
        restore the table and draw the penalty), ruled as the held table settled, and this table its restore; taken
        as the move going on, the violation would be lost in a draw (the bundled demo game's opening under the
        threshold did so)."""
        return held.faulty and _restores(table, self.keeper.table)

    def _amending(self, held: _Held) -> _Ruled | None:
        """The play ``held`` goes on with (:attr:`_Held.part`) while the game may still amend it (no referee's word,
        restore or clock key since: :attr:`GameKeeper.amendable`); else None."""
        part = held.part
        if part is None or self.keeper.amendable != part.game.moves + 1:
            return None
        return part

    def _rule_rest(self, held: _Held) -> list[GameEvent]:
        """The table the same hands left going on with a play ruled as it settled (:attr:`_Held.part`; its table
        was a pause, the turn not over): the turn ruled again as one move, an amendment of that play
        (:meth:`GameKeeper.amend`: the table before the play, the whole turn's tiles, opening value and time), REVIEW
        where the whole is at fault and the rest alone would not be ruled so (:meth:`_doubt`). The table put back as
        the restore the game waits for is that restore; where the game can no longer amend the play (the referee's
        word came since), the rest is a move of its own, REVIEW where ruled alone it would differ from the whole."""
        part = held.part
        assert part is not None
        at: dict[str, Any] = {
            "time_s": held.time_s, "frame": held.frame, "seat": held.seat, "left_out": held.left_out,
            "table_at_limit": held.at_limit, "touched_after_limit": held.touched,
        }  # fmt: skip
        pending = self.keeper.pending
        if self._amending(held) is not None and (pending is None or not looks_restored(held.table, pending.table)):
            doubt = self._doubt(part, held) or held.doubt
            amended = self.keeper.amend(held.table, start_s=part.start_s, doubt=doubt, **at)
            if amended is not None:
                return amended
        doubt = self._doubt(part, held, amending=False) or held.doubt
        at["table_at_limit"], at["touched_after_limit"] = held.alone  # a move of its own: its own limit
        return self.keeper.settled(held.table, start_s=held.start_s, hands=True, doubt=doubt, **at)

    def _doubt(self, ruled: _Ruled, held: _Held, *, amending: bool = True) -> str | None:
        """The same hands went on with a play already ruled OK as it settled (its valid table was a pause, the move
        unfinished). The turn as a whole (``amending``: the amendment's ruling) may be ruled otherwise than the rest
        as a move of its own: then the camera cannot tell which the rules mean (the turn may have passed unseen),
        and the move is ruled REVIEW with this sentence. An amendment is doubted where the whole is at fault (a
        manipulation in the opening turn: REVERT as one move, OK alone) or the table is put back as before the play
        (a draw as one move); one whose whole is valid stands (a tile laid then taken back, the table rearranged with
        no tile from the rack: alone a false REVERT). So does one at fault only for the time: the turn over its limit,
        counted from its start (RULES.md §6), that in time would stand; it is ruled as the profile rules any move
        over time, on what the camera saw of the turn's limit (:attr:`_Ruled.limit`; the table at the limit unseen:
        REVIEW where the ruling depends on it), as the pause was taken for one turn (the same hands back within
        ``pause_hold_s``, no other seat's) for every amendment. The rest as a move of its own (not ``amending``) is
        doubted wherever both differ. None: no doubt."""
        at: dict[str, Any] = {
            "time_s": held.time_s, "frame": held.frame, "seat": held.seat, "hands": True, "left_out": held.left_out,
        }  # fmt: skip
        alone_at, alone_touched = held.alone
        alone = self.keeper.would_rule(
            held.table, start_s=held.start_s, table_at_limit=alone_at, touched_after_limit=alone_touched, **at
        )
        as_one = self.keeper.would_move(
            held.table, start_s=ruled.start_s, game=ruled.game, table_at_limit=held.at_limit,
            touched_after_limit=held.touched, **at,
        )  # fmt: skip
        whole = None if as_one is None else as_one.ruling.verdict
        if alone is None or whole is None or alone is whole:
            return None
        assert as_one is not None
        if amending and not _faulty(as_one.ruling) and as_one.kind == "play":
            return None
        if amending and as_one.kind == "play" and self._late_only(ruled, held):
            return None
        return (
            f"the same player went on after the last move was ruled ok: ruled as one move with it this is"
            f" {whole.value}, alone {alone.value}; a person decides"
        )

    def _late_only(self, ruled: _Ruled, held: _Held) -> bool:
        """The turn as one move (from ``ruled``'s game to ``held``'s table) is over its time limit, and would stand
        ended in time: its only fault is the time."""
        start = ruled.game.turn_started_s
        if ruled.game.time_limit_s is None or held.time_s - start <= ruled.game.time_limit_s:
            return False
        in_time = self.keeper.would_move(
            held.table, time_s=start, frame=held.frame, start_s=ruled.start_s, seat=held.seat, hands=True,
            left_out=held.left_out, game=ruled.game,
        )  # fmt: skip
        return in_time is not None and not _faulty(in_time.ruling)

    def _rule_held(self) -> list[Event]:
        """The held draw ruled (the game's events), as it was when it settled; nothing when none is held."""
        held, self.held = self.held, None
        if held is None:
            return []
        if held.part is not None:
            return list[Event](self._rule_rest(held))
        return list(self.keeper.settled(
            held.table, time_s=held.time_s, frame=held.frame, start_s=held.start_s, seat=held.seat, hands=True,
            left_out=held.left_out, table_at_limit=held.at_limit, touched_after_limit=held.touched, doubt=held.doubt,
        ))  # fmt: skip

    # -- the time limit -------------------------------------------------------------------------
    @property
    def near_limit(self) -> bool:
        """The turn under way has a time limit that passes within :data:`LIMIT_LOOKAHEAD_S` of the last sample, or
        has passed: a recording is then sampled at the full rate even on a still table (with PyAV, not only at
        keyframes), so the first sample after the limit comes in time and a brief touch after it is seen. A turn
        ruled in part that the same hands may still go on with counts with its own limit (:attr:`_Ruled.limit`)."""
        if self.phase == "starting" or self.last_sample is None:
            return False
        turn = None if self.ruled is None or self.ruled.limit is None else self.ruled.limit.at_s
        return any(
            at_s is not None and self.last_sample[1] >= at_s - LIMIT_LOOKAHEAD_S
            for at_s in (self.keeper.time_limit_at_s, turn)
        )

    def _watch_limit(self, image: np.ndarray, time_s: float, activity: Activity) -> None:
        """The turn's time limit: the table when it passes, hands over the table after it (the game rules on them
        for a move over time). Read there and then when the table is quiet but not yet settled. A turn ruled in
        part that the same hands may go on with is watched on to its own limit (:attr:`_Ruled.limit`), beside the
        limit counted from the part's ruling."""
        at_s = self.keeper.time_limit_at_s
        if at_s is None or self.phase == "starting":
            self.limit = None
        elif self.limit is None or self.limit.at_s != at_s:
            self.limit = LimitWatch(at_s)
        turn = None if self.ruled is None else self.ruled.limit
        watches = [w for w in (self.limit, turn if turn is not self.limit else None) if w is not None]
        table: Table | None = None
        quiet = not (activity.busy or activity.global_change)
        if quiet and any(w.due(time_s) for w in watches):
            if self.phase == "stable":
                table = self._table_now  # a held move's table
            else:  # hands just left: this frame (and the quiet ones before it) is the table at the limit
                table = read_table(fuse([*self.readings, self._read(image)])).table
        for watch in watches:
            if watch.due(time_s):
                watch.reached(activity, table, time_s, self.arm_seat(activity))
            elif watch.passed:
                watch.sample(activity, self.arm_seat(activity))

    def _limit_evidence(self, settled: Table | None, hands_seat: int | None) -> tuple[Table | None, bool | None]:
        """What the camera saw of the limit, for a move ending on ``settled`` by the player whose hands were seen
        at ``hands_seat`` (None: not located, a clock press: the player on move, as the game takes it)."""
        return _evidence(self.limit, settled, self._mover(hands_seat))

    def _mover(self, hands_seat: int | None) -> int:
        return hands_seat if hands_seat is not None else self.keeper.seat_of(self.keeper.player)

    def _watch_of(self, game: Game) -> LimitWatch | None:
        """The watch of ``game``'s turn under way (this pipeline's, when its limit is that turn's), else None."""
        at_s = _limit_at(game)
        return self.limit if self.limit is not None and at_s is not None and self.limit.at_s == at_s else None

    def arm_seat(self, activity: Activity) -> int | None:
        """The seat number an arm over the table reaches in from (None: no arm, or its side not found)."""
        if not activity.arm or activity.edge is None:
            return None
        return seat_at(self.keeper.players, activity.edge, activity.along).number

    # -- helpers --------------------------------------------------------------------------------
    def _settling_reading(self, image: np.ndarray) -> Detections:
        """The reading of a settling table's frame: made, or (``reuse_unchanged``) one of the still table's readings
        when the frame shows the picture they read (the n-th reading due takes the n-th latest of them, so a table
        that settles unchanged fuses the readings its state was fused from)."""
        if not self.config.reuse_unchanged:
            return self._read(image)
        if not self.readings:
            # A picture compared costs a phase correlation (45 ms at 1080p), so only the first reading's is: the
            # later ones come while the activity meter sees nothing move (else the table is active again), and the
            # last is compared with the first once the table has settled (whether its picture stands for them).
            region = self._region_box()
            self.slot_picture.remember(image, region)
            self.slots_reused = len(self.still_readings) >= self.config.readings and self.still_picture.same(
                image, region
            )
        if self.slots_reused:
            self.stats.reused += 1
            return self.still_readings[-1 - len(self.readings) % len(self.still_readings)]
        if self.readings and self.first_sure:
            if self.slot_picture.same(image, self._region_box()):
                self.stats.copied += 1
                return self.readings[0]
            self.first_sure = False  # the picture changed under the meter's eyes: every reading made from here
        reading = self._read(image)
        if not self.readings and self.config.reuse_sure:
            self.first_sure = sure_reading(reading) or sure_reading(reading, self._vouched(image, reading))
        return reading

    def _vouched(self, image: np.ndarray, reading: Detections) -> np.ndarray:
        """Which tiles of a reading of ``image`` the tile memory vouches for: each lies where a tile lay in the last
        settled table, read certain then with the same label, and shows the same face (:class:`TileMemory`, which
        gives such a tile, doubted, its certainty back: asked here with every tile doubted)."""
        if not len(reading):
            return np.zeros(0, bool)
        doubted = reading.with_(confidence=np.zeros(len(reading), np.float32))
        return np.asarray(self.tile_memory.weigh(image, doubted).confidence >= MIN_CONFIDENCE)

    def _nothing_to_verify(self) -> bool:
        """A still table showing the picture its state was read from needs no verification: no disagreement waits,
        there is nothing to refine (no uncertain tile, or as many readings fused as are kept), and the picture has
        readings enough of its own."""
        table = self._table_now
        return (
            self.disagreement is None
            and table is not None
            and (not table.uncertain or len(self.state_readings) >= MAX_STATE_READINGS)
            and len(self.still_readings) >= self.config.readings
        )

    def _note_still(self, image: np.ndarray, reading: Detections, same_picture: bool) -> None:
        """A verification's reading: one more of the picture remembered, or the first of a new one (a lamp, a
        change nobody was seen making), which needs ``readings`` of its own before it stands for them."""
        region = self._region_box()
        if same_picture:
            self.still_readings = [*self.still_readings[-(MAX_STATE_READINGS - 1) :], reading]
        else:
            self.still_picture.remember(image, region)
            self.still_readings = [reading]

    def _remember_still(self, image: np.ndarray) -> None:
        self.still_readings = self.state_readings
        self.still_picture.remember(image, self._region_box())

    def _region_box(self) -> tuple[float, float, float, float]:
        region = self.region
        return (region.x0, region.y0, region.x1, region.y1)

    def _read(self, image: np.ndarray) -> Detections:
        started = time.perf_counter()
        # the reader judges colours and familiarity on the play area's tiles only (not the racks or the pool in
        # its bounding box); what it returns is filtered again for readers that keep every box
        reading = self.reader.read(image, region=self.region, on_table=self._on_table)
        found = on_play_area(reading.detections, self.calibration)
        self.stats.readings += 1
        self.stats.reading_s += time.perf_counter() - started
        self.latest["detections"] = found
        return found

    def _on_table(self, detections: Detections) -> np.ndarray:
        return play_area_mask(detections, self.calibration)

    def _meter(self) -> ActivityMeter:
        corners = None if self.calibration is None else self.calibration.corners_px
        self.region = detection_region(self.frame_size, self.calibration, self.config)
        return ActivityMeter(self.frame_size, corners)

    def _refound(self, image: np.ndarray) -> Calibration | None:
        """The play area found again on this frame, for a calibration found automatically; else None."""
        if self.calibration is None or self.calibration.method != "auto":
            return None
        from vision.runtime.calibrate import Calibration, CalibrationError

        try:
            return Calibration.auto(image)
        except CalibrationError:
            return None

    def _use_calibration(self, calibration: Calibration, image: np.ndarray) -> None:
        self.calibration = calibration
        if self.motion_check is not None:
            self.motion_check = self.motion_check.rebased(calibration, image)
        self.meter = self._meter()
        self.meter.set_background(image)

    def _first_still(self, image: np.ndarray, time_s: float, frame: int) -> list[Event]:
        """The table seen still for the first time: no hands over it, so an automatic play area is found again
        there (the first frame may have shown an arm resting on the table, which would have cut the area short)."""
        refound = self._refound(image)
        if refound is None or self.calibration is None:
            return []
        if np.abs(refound.corners_px - self.calibration.corners_px).max() < 4.0:
            return []
        self._use_calibration(refound, image)
        return [{"event": "calibration", "time_s": round(time_s, 3), "frame": frame, **refound.to_json(),
                 "reason": "play area found again on the first still table"}]  # fmt: skip

    def _check_camera(self, check: CameraMotionCheck, image: np.ndarray, time_s: float, frame: int) -> list[Event]:
        result = check.check(image)
        if not result.moved:
            return []
        event: Line = {"event": "camera-moved", "time_s": round(time_s, 3), "frame": frame,
                        "shift_px": round(float(result.shift_px), 1)}  # fmt: skip
        shift = result.shift
        # A translation moves the play area with it (tiles near its edge stay on it); a view no translation
        # explains (turned, tilted, zoomed) has its automatic play area found again.
        refound = self._refound(image) if shift is None else None
        if refound is not None:
            self._use_calibration(refound, image)
            event["corners_px"] = np.round(refound.corners_px, 1).tolist()
            event["action"] = "play area found again"
        elif shift is not None and self.calibration is not None:
            self.calibration = self.calibration.shifted(float(shift[0]), float(shift[1]))
            event["corners_px"] = np.round(self.calibration.corners_px, 1).tolist()
            self.motion_check = check.rebased(self.calibration, image)
            self.meter = self._meter()
            self.meter.set_background(image)
            event["action"] = "play area moved with the camera"
        else:
            # The view changed in a way no shift explains: say so once, then watch for changes from here.
            event["action"] = "warning: the view changed; re-calibrate if the play area moved"
            if self.calibration is not None:  # (a camera check is made with a calibration: always so)
                self.motion_check = check.rebased(self.calibration, image)
        return [event]


EDGE_ROW_MM = 60.0
"""A box this near the play area is kept when it continues a row of tiles from inside it (a set laid across the
edge); farther out, or alone, it is not on the table. (The detector looks at the play area's box and 2 % more.)"""


def on_play_area(detections: Detections, calibration: Calibration | None) -> Detections:
    """The boxes on the play area: tiles standing in racks, the face-down pool, tiles in a hand and the next table's
    tiles lie outside it and are no table tiles, so they are dropped here (never counted as left out). A box just
    outside that continues a row of tiles from inside it stays: its set was laid across the edge."""
    if calibration is None or not len(detections):
        return detections
    return detections[play_area_mask(detections, calibration)]


def play_area_mask(detections: Detections, calibration: Calibration | None) -> np.ndarray:
    """Which boxes :func:`on_play_area` keeps (every box without a calibration)."""
    if calibration is None or not len(detections):
        return np.ones(len(detections), bool)
    centres = detections.centers
    inside = calibration.contains(centres)
    near = calibration.contains(centres, margin_mm=EDGE_ROW_MM) & ~inside
    if near.any():
        candidates = np.flatnonzero(inside | near)
        for chain in SetFinder().find(detections[candidates]):
            members = candidates[chain]
            if inside[members].any():
                inside[members] = True
    return inside


def detection_region(frame_size: tuple[int, int], calibration: Calibration | None, config: PipelineConfig) -> Region:
    """The play area's bounding box, to be scaled so a tile comes out ``config.tile_px`` wide for the detector.

    The tile's size in pixels comes from the calibration (play area in millimetres and in pixels); without a
    measured size (whole-frame calibration) the area is scaled to ``config.default_width_px``.
    """
    width, height = frame_size
    if calibration is None:
        return Region(0, 0, width, height, config.default_width_px)
    corners = np.asarray(calibration.corners_px, np.float64)
    (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
    margin = 0.02 * max(x1 - x0, y1 - y0)
    x0, y0, x1, y1 = max(0.0, x0 - margin), max(0.0, y0 - margin), min(width, x1 + margin), min(height, y1 + margin)
    px_per_mm = measured_px_per_mm(calibration)
    if px_per_mm is None:
        return Region(x0, y0, x1, y1, config.default_width_px)
    scale = min(1.0, config.tile_px / (TILE_WIDTH_MM * px_per_mm))
    return Region(x0, y0, x1, y1, max(64, round((x1 - x0) * scale)))


def measured_px_per_mm(calibration: Calibration | None) -> float | None:
    """Frame pixels per millimetre of the table along the play area's top edge; None without a measured size (no
    calibration, or a whole-frame one)."""
    if calibration is None or calibration.method == "frame" or not calibration.size_mm:
        return None
    corners = np.asarray(calibration.corners_px, np.float64)
    return float(np.linalg.norm(corners[1] - corners[0])) / float(calibration.size_mm[0])


TILE_WIDTH_MM = 26.0
"""Width of a tile face on the table."""


SURE_CONFIDENCE = 0.99
"""A reading is sure when every box of it is read at this confidence or over (the second look's ``CHECKED``: a tile
over it was not looked at twice; a familiarity or colour cap, a second look's split are all under it)... On the 177
settles of issue 16's 10 games, each read 6 times (no tile memory), the first reading taken three times fused to the
same table and doubts as the independent readings in 59 of 59 settles at 0.99; at 0.98, 81 of 83 (two doubts that
the independent readings found were lost). With the tile memory's vouching (94367aa, against the tree without it and
without ``reuse_sure``, same run): readings made on the 10 games 314 -> 233, on g11, g12 and the demo game 123 -> 96,
every move ruled the same but the one of ``max_readings``; game-1000's H.264 copy (``decode_bench.bench_video``,
PyAV) 62 -> 48 readings, CPU 37.0 -> 33.8 s (11.6x -> 12.8x real time), 25 right tables both, 0 false REVERT; with
OpenCV 60 -> 50 readings, 26 right tables both, one true REVERT ruled REVIEW before now REVERT."""


def sure_reading(reading: Detections, vouched: np.ndarray | None = None) -> bool:
    """...or at the layout's :data:`~vision.runtime.layout.MIN_CONFIDENCE` or over where ``vouched`` (the same tile,
    with the same label, read certain in the last settled table: :meth:`TablePipeline._vouched`), and detected at
    :data:`~vision.runtime.tables.WEAK_DETECTION` or over (a weak box is judged by its neighbours after fusing, and a
    box seen in one reading of three is dropped: one reading cannot vouch for it). An empty reading is not sure:
    nothing in it vouches for the picture."""
    if not len(reading):
        return False
    strength = reading.data.get("detector_confidence")
    if strength is not None and not (np.asarray(strength) >= WEAK_DETECTION).all():
        return False
    sure = reading.confidence >= SURE_CONFIDENCE
    if vouched is not None:
        sure |= vouched & (reading.confidence >= MIN_CONFIDENCE)
    return bool(sure.all())


def _limit_at(game: Game) -> float | None:
    """When the time limit of ``game``'s turn under way passes (as :attr:`GameKeeper.time_limit_at_s`)."""
    if game.time_limit_s is None or game.table is None or game.over:
        return None
    return game.turn_started_s + game.time_limit_s


def _evidence(watch: LimitWatch | None, settled: Table | None, mover_seat: int) -> tuple[Table | None, bool | None]:
    """:meth:`LimitWatch.evidence`, ``(None, None)`` with no watch (no limit)."""
    return (None, None) if watch is None else watch.evidence(settled, mover_seat)


def _faulty(ruling: Ruling) -> bool:
    """Ruled REVERT, or REVIEW with a player's fault found (tiles read with low confidence leave it in doubt): as a
    half-laid table, both may be a move not yet finished (a REVIEW counts as standing: an opening so ruled would
    open the player)."""
    return ruling.verdict is Verdict.REVERT or (
        ruling.verdict is Verdict.REVIEW and any(v.players_fault for v in ruling.violations)
    )


def _restores(table: Table, before: Table | None) -> bool:
    return before is not None and looks_restored(table, before)


def _standing_play(event: Event) -> bool:
    """A play ruled OK, or REVIEW for no fault of the player (uncertain tiles): it stands, and may yet go on."""
    return (
        isinstance(event, Move)
        and event.ruling.kind == "play"
        and not _faulty(event.ruling)  # a REVERT among the faulty
    )


def _same_tiles(a: Table, b: Table) -> bool:
    return a.counts() == b.counts() and a.same_layout(b)
