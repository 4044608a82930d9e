"""Temporal fusion: several readings of a still table become one, so a single bad frame never changes the state.

Between moves the camera and the tiles are still, so the same tile lands in (nearly) the same box in every
reading. Boxes are matched across readings by overlap; a tile counts when it is seen in most readings and its
label is the confidence-weighted vote. Its confidence (:func:`vote_confidence`) weighs two kinds of doubt apart:

- **a doubtful look**: a reading of the winning label at a low confidence (the familiarity or colour check's cap of
  0.5, a second look's split). It is one look among several at the same label, not a vote for another: the tile's
  confidence is the *lower median* of its readings' confidences (another label's reading counts 0), so it is
  certain when more than half its readings read it certain: 0.99, 0.99, 0.5 stays certain (the mean gave 0.83) and
  0.99, 0.5, 0.5 uncertain (0.66); with five readings 0.99 x 3 and 0.5 x 2 is certain, where the mean (0.794) left
  it uncertain however many looks agreed.
- **a label that split**: another label read in some reading. The winning label's share of the readings bounds the
  confidence (2 of 3: 0.67, 3 of 4: 0.75, 4 of 5: 0.8, certain; 5 of 6: 0.83), and a reading that named another label
  *confidently* (at the layout's :data:`~vision.runtime.layout.MIN_CONFIDENCE` or over) leaves the tile uncertain
  whatever the count (:data:`DISSENT_CONFIDENCE`): the reader was sure of two labels, one of them wrong, and nothing
  says which (as :mod:`vision.game.tilememory` across two settled tables). A split tile stays uncertain: REVIEW,
  never a confident label that could send a player back.

A still table whose fused reading has a tile under the threshold that more readings could still make certain
(:func:`resolvable`: some reading read it certain, no reading confidently another label) is read again by the
pipeline, up to a bound (:attr:`vision.game.pipeline.PipelineConfig.max_readings`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from vision.runtime.detections import Detections, box_iou
from vision.runtime.layout import MIN_CONFIDENCE

MATCH_IOU = 0.35
"""Boxes of the same tile in two readings of a still table overlap at least this much."""
MIN_SHARE = 0.5
"""A tile must be seen in more than this share of the readings."""
DISSENT_CONFIDENCE = 0.5
"""The most a tile is worth when some reading named another label at the layout's threshold or over (uncertain)."""


@dataclass
class _Cluster:
    boxes: list[np.ndarray] = field(default_factory=list)
    votes: dict[int, float] = field(default_factory=dict)
    rows: list[tuple[int, int]] = field(default_factory=list)
    """(reading, row) of each member, to carry the extra columns of the best member."""
    looks: list[tuple[int, float]] = field(default_factory=list)
    """(label, confidence) of each member."""

    @property
    def winner(self) -> int:
        return max(self.votes, key=self.votes.__getitem__)

    def box(self) -> np.ndarray:
        return np.median(np.stack(self.boxes), axis=0)


def fuse(readings: Sequence[Detections], *, min_share: float = MIN_SHARE, match_iou: float = MATCH_IOU) -> Detections:
    """One reading from several readings of the same still scene (see the module's docstring)."""
    if not readings:
        return Detections.empty()
    if len(readings) == 1:
        return readings[0]
    clusters = _clusters(readings, match_iou)
    needed = math.floor(min_share * len(readings)) + 1
    kept = [c for c in clusters if len(c.boxes) >= needed]
    if not kept:
        return Detections.empty()
    boxes, confidence, class_id, best_rows = [], [], [], []
    for cluster in kept:
        winner = cluster.winner
        boxes.append(cluster.box())
        confidence.append(vote_confidence(cluster.looks, winner))
        class_id.append(winner)
        best_rows.append(_best_member(cluster, winner, readings))
    data = _carry_columns(readings, best_rows)
    if "probs" in data:  # every reading's opinion, not the best member's alone (set context weighs runner-ups)
        data["probs"] = np.stack([_mean_probs(cluster, readings) for cluster in kept]).astype(np.float32)
    if "angle_deg" in data:  # one reading's angle is off by up to ~15 degrees; their mean is steadier
        data["angle_deg"] = np.array([_mean_angle(cluster, readings) for cluster in kept], np.float32)
    return Detections(np.stack(boxes), np.array(confidence), np.array(class_id), data)


def unanimous(readings: Sequence[Detections], *, match_iou: float = MATCH_IOU) -> bool:
    """Every tile seen in every reading, with the same label each time (two or more readings)."""
    if len(readings) < 2:
        return False
    return all(len(c.boxes) == len(readings) and len(c.votes) == 1 for c in _clusters(readings, match_iou))


def vote_confidence(looks: Sequence[tuple[int, float]], winner: int) -> float:
    """The confidence of a tile read as ``looks`` ((label, confidence) per reading it was seen in), labelled
    ``winner``: the lower median of the looks' confidences in ``winner`` (another label: 0), at most the winner's
    share of the looks when the label split, and under the threshold when another label was read confidently (see the
    module's docstring)."""
    values = sorted(confidence if label == winner else 0.0 for label, confidence in looks)
    fused = values[(len(values) - 1) // 2]
    others = [confidence for label, confidence in looks if label != winner]
    if others:
        fused = min(fused, (len(looks) - len(others)) / len(looks))
        if max(others) >= MIN_CONFIDENCE:
            fused = min(fused, DISSENT_CONFIDENCE)
    return fused


def resolvable(readings: Sequence[Detections], limit: int, *, match_iou: float = MATCH_IOU) -> bool:
    """Whether more readings, up to ``limit`` in all, could make a tile of the fused reading certain: a tile fused
    under the layout's threshold that some reading read certain, no reading confidently as another label, and that
    many readings more of it as certain as its best would lift it to the threshold (a tile every reading doubted, a
    familiarity cap that holds, is not read again for nothing)."""
    more = limit - len(readings)
    if more <= 0 or len(readings) < 2:
        return False
    needed = math.floor(MIN_SHARE * len(readings)) + 1
    for cluster in _clusters(readings, match_iou):
        if len(cluster.boxes) < needed:
            continue
        winner = cluster.winner
        if vote_confidence(cluster.looks, winner) >= MIN_CONFIDENCE:
            continue
        best = max(confidence for label, confidence in cluster.looks if label == winner)
        if best < MIN_CONFIDENCE:
            continue
        if vote_confidence([*cluster.looks, *[(winner, best)] * more], winner) >= MIN_CONFIDENCE:
            return True
    return False


def _clusters(readings: Sequence[Detections], match_iou: float) -> list[_Cluster]:
    """The readings' boxes grouped by tile (see :func:`_assign`)."""
    clusters: list[_Cluster] = []
    for r, reading in enumerate(readings):
        _assign(reading, r, clusters, match_iou)
    return clusters


def _assign(reading: Detections, r: int, clusters: list[_Cluster], match_iou: float) -> None:
    """Each box joins the cluster it overlaps most (one box per cluster per reading) or starts a new one."""
    if not len(reading):
        return
    taken: set[int] = set()
    if clusters:
        iou = box_iou(reading.xyxy, np.stack([c.box() for c in clusters]))
        order = np.argsort(-iou.max(axis=1))
    else:
        iou, order = None, np.arange(len(reading))
    for i in order:
        target = None
        if iou is not None:
            for j in np.argsort(-iou[i]):
                if iou[i, j] < match_iou:
                    break
                if j not in taken:
                    target = int(j)
                    break
        if target is None:
            clusters.append(_Cluster())
            target = len(clusters) - 1
        else:
            taken.add(target)
        cluster = clusters[target]
        cluster.boxes.append(reading.xyxy[i])
        label = int(reading.class_id[i])
        cluster.votes[label] = cluster.votes.get(label, 0.0) + float(reading.confidence[i])
        cluster.rows.append((r, int(i)))
        cluster.looks.append((label, float(reading.confidence[i])))


def _mean_probs(cluster: _Cluster, readings: Sequence[Detections]) -> np.ndarray:
    return np.mean([np.asarray(readings[r].data["probs"])[i] for r, i in cluster.rows], axis=0)


def _mean_angle(cluster: _Cluster, readings: Sequence[Detections]) -> float:
    """Circular mean of the members' up directions (degrees clockwise, in [0, 360))."""
    radians = np.radians([float(readings[r].data["angle_deg"][i]) for r, i in cluster.rows])
    return float(np.degrees(np.arctan2(np.sin(radians).mean(), np.cos(radians).mean())) % 360.0)


def _best_member(cluster: _Cluster, winner: int, readings: Sequence[Detections]) -> tuple[int, int]:
    members = [(r, i) for r, i in cluster.rows if int(readings[r].class_id[i]) == winner]
    return max(members, key=lambda ri: float(readings[ri[0]].confidence[ri[1]]))


def _carry_columns(readings: Sequence[Detections], rows: list[tuple[int, int]]) -> dict[str, np.ndarray]:
    """Extra columns (the tile's angle...) present in every reading, taken from each tile's best member."""
    keys = set(readings[0].data)
    for reading in readings[1:]:
        keys &= set(reading.data)
    return {key: np.array([readings[r].data[key][i] for r, i in rows]) for key in sorted(keys)}
