"""bench pipeline's true-play-area row is the upper bound only if the film's truth and its play area agree: while the
truth says a player's hands are over the table, the true play area shows them (issue 16: on a camera tilted 30
degrees the hands stopped up to 50 mm short of the play area for the last ~1.3 s of a move, so the truth row ruled
long plays a second before their truth's settle time and lost both injected violations of a game)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.runtime.motion import ActivityMeter
from vision.runtime.seats import SEATS
from vision.synth.layout import LayoutParams
from vision.synth.video import JITTER_PX, GameFilm, Segment, Staging, _with_hand, film_camera, play_area_px

SIZE = (640, 360)


@pytest.mark.parametrize(
    "staging",
    [
        Staging(),  # the plain table: its hands always reached well into the play area
        Staging(tilt_deg=30.0),  # the camera stands back: the hands, drawn towards the frame's middle, fell short
        Staging(tilt_deg=30.0, distortion=-0.1),  # and with a barrel lens
    ],
)
@pytest.mark.parametrize("phase", [0.0, 0.5, 1.0])  # reaching in, at the furthest, as the hands leave
def test_the_true_play_area_sees_every_seats_hands_while_the_truth_says_they_are_over_the_table(
    staging: Staging, phase: float
) -> None:
    width, height = SIZE
    film = GameFilm(film_camera(SIZE, np.random.default_rng(161), staging), SIZE, 161, LayoutParams(), staging)
    still = film.still([], [])
    meter = ActivityMeter(SIZE, np.asarray(play_area_px(film.camera)))

    def crop(frame: np.ndarray) -> np.ndarray:
        return frame[JITTER_PX : JITTER_PX + height, JITTER_PX : JITTER_PX + width]

    for seat in SEATS:
        segment = Segment(10.0, 14.0, 0, seat)
        meter.set_background(crop(still))
        meter.measure(crop(still))
        activity = meter.measure(crop(_with_hand(still, segment, 10.0 + 4.0 * phase, film, np.random.default_rng(0))))
        assert activity.arm and activity.edge is seat.edge, (seat.name, activity)
