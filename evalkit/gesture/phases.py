"""Gesture phases from hand speed: rest, preparation, stroke, hold, retraction; strokes and apexes.

Method (Kendon's and McNeill's phases, found kinematically):

1. **Rest** (per hand): the wrist is slow (< ``move_speed``) and within ``rest_radius`` of its
   rest position (the median position of the slow frames at the lowest wrist heights). Frames
   where both hands rest are *rest*; the stretches between rests of at least ``min_rest_s`` are
   **gesture phrases** (GP).
2. **Movement units**: inside a GP, peaks of the faster hand's speed higher than ``min_peak_speed``
   and standing ``min_prominence`` (a fraction of the peak) above the valleys around them; the
   units are split at the lowest speed between consecutive peaks.
3. **Roles**: the first unit is the preparation when the GP starts at rest and the last is the
   retraction when it ends at rest (a GP of two units between rests keeps the first as its
   stroke unless the second is ``return_ratio`` times faster); the **main stroke** is the fastest remaining unit, and other remaining units at
   least ``stroke_ratio`` as fast are strokes too; the rest are preparations (before a stroke)
   or retractions (after the last one). Slow frames
   (< ``hold_speed``) inside a GP, away from rest, are **holds**.
4. **Apex** of a stroke (``apex="stop"``, default): the moment the stroke ends, when the speed
   falls below ``apex_fraction`` of the stroke's peak after the peak (linear interpolation
   between frames), i.e. when the hand reaches the stroke's target; ``apex="peak"`` takes the
   speed peak instead (parabolic interpolation).

Speeds are in m/s of a body rescaled to 1.70 m (see :mod:`evalkit.gesture.trajectory`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import find_peaks

from evalkit.errors import InputError
from evalkit.gesture.trajectory import HandTrajectories

PHASES = ("rest", "preparation", "stroke", "hold", "retraction")


@dataclass(frozen=True)
class PhaseConfig:
    """Thresholds of the phase segmentation (speeds in m/s of a 1.70 m body, times in seconds).

    Attributes:
        move_speed: a hand slower than this may be resting or holding.
        hold_speed: frames slower than this inside a phrase (away from rest) are holds.
        rest_radius: metres from the rest position within which a slow hand rests.
        min_rest_s: shorter rests do not split phrases.
        min_peak_speed: slower speed peaks are not movement units.
        min_prominence: a unit's peak must rise this fraction of its height above its valleys.
        stroke_ratio: units at least this fraction as fast as the main stroke are strokes too.
        return_ratio: in a two-unit phrase between rests the return is the stroke only if it is
            this many times faster than the movement out of rest.
        apex: ``"stop"`` (end of the stroke) or ``"peak"`` (peak speed).
        apex_fraction: the ``"stop"`` apex is where speed falls below this fraction of the peak.
        min_phrase_s: shorter phrases are ignored (twitches).
    """

    move_speed: float = 0.25
    hold_speed: float = 0.12
    rest_radius: float = 0.12
    min_rest_s: float = 0.2
    min_peak_speed: float = 0.5
    min_prominence: float = 0.4
    stroke_ratio: float = 0.6
    return_ratio: float = 1.3
    apex: str = "stop"
    apex_fraction: float = 0.25
    min_phrase_s: float = 0.3

    def __post_init__(self) -> None:
        if self.apex not in ("stop", "peak"):
            raise InputError(f"apex must be 'stop' or 'peak', got {self.apex!r}")
        if not 0 < self.apex_fraction < 1:
            raise InputError(f"apex_fraction must be between 0 and 1, got {self.apex_fraction}")


@dataclass(frozen=True)
class Stroke:
    """One stroke.

    Attributes:
        start, end: frames of the stroke's movement unit (``end`` exclusive).
        peak_frame: frame of its peak speed; peak_speed: m/s (1.70 m body).
        apex_frame: sub-frame apex (float frame index); apex_time: seconds.
        hand: ``"left"``, ``"right"`` or ``"both"`` (both peaks within 30 % of each other).
        main: the GP's main (fastest) stroke.
    """

    start: int
    end: int
    peak_frame: int
    peak_speed: float
    apex_frame: float
    apex_time: float
    hand: str
    main: bool = False


@dataclass(frozen=True)
class PhraseSegment:
    """A gesture phrase found in a clip: frames ``start``..``end`` (exclusive) and its strokes."""

    start: int
    end: int
    strokes: tuple[Stroke, ...]
    starts_at_rest: bool
    ends_at_rest: bool

    @property
    def main_stroke(self) -> Stroke:
        return next(s for s in self.strokes if s.main)


@dataclass(frozen=True, eq=False)
class Segmentation:
    """Per-frame phase labels and the gesture phrases of a clip.

    Attributes:
        fps: frames per second.
        labels: ``(frames,)`` phase names from :data:`PHASES`.
        phrases: the gesture phrases, in time order.
    """

    fps: float
    labels: np.ndarray
    phrases: tuple[PhraseSegment, ...]

    @property
    def strokes(self) -> list[Stroke]:
        return [s for p in self.phrases for s in p.strokes]

    @property
    def apex_times(self) -> np.ndarray:
        """``(strokes,)`` apex times of every stroke, seconds."""
        return np.array([s.apex_time for s in self.strokes], dtype=float)

    def intervals(self) -> list[tuple[str, int, int]]:
        """Runs of equal labels as ``(phase, start_frame, end_frame_exclusive)``."""
        out = []
        if len(self.labels) == 0:
            return out
        change = np.flatnonzero(self.labels[1:] != self.labels[:-1]) + 1
        bounds = np.concatenate([[0], change, [len(self.labels)]])
        for a, b in zip(bounds[:-1], bounds[1:]):
            out.append((str(self.labels[a]), int(a), int(b)))
        return out


def _rest_position(pos: np.ndarray, speed: np.ndarray, cfg: PhaseConfig) -> np.ndarray:
    slow = np.flatnonzero(speed < cfg.move_speed)
    if len(slow) == 0:
        return pos[int(np.argmin(pos[:, 1]))]
    h = pos[slow, 1]
    low = slow[h <= h.min() + 0.05]
    return np.median(pos[low], axis=0)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(start, end_exclusive)`` of the True runs of a boolean array."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def _parabolic(values: np.ndarray, i: int) -> float:
    if 0 < i < len(values) - 1:
        y0, y1, y2 = values[i - 1:i + 2]
        den = y0 - 2 * y1 + y2
        if den < 0:
            d = 0.5 * (y0 - y2) / den
            if abs(d) <= 1:
                return i + d
    return float(i)


def _apex(speed: np.ndarray, start: int, end: int, peak: int, cfg: PhaseConfig) -> float:
    """Sub-frame apex of the stroke unit ``start..end`` (exclusive) with its peak at ``peak``."""
    if cfg.apex == "peak":
        return _parabolic(speed, peak)
    level = cfg.apex_fraction * speed[peak]
    # first crossing below `level` after the peak, searched up to the unit's end (or beyond,
    # into a following hold, when the unit is cut by the next peak before slowing that much)
    stop = min(len(speed), max(end, peak + 1) + 1)
    seg = speed[peak:stop]
    below = np.flatnonzero(seg < level)
    if len(below) == 0:
        i = peak + int(np.argmin(seg))
        return _parabolic(-speed, i) if 0 < i < len(speed) - 1 else float(i)
    j = peak + int(below[0])
    s0, s1 = speed[j - 1], speed[j]
    return float(j - 1 + (s0 - level) / (s0 - s1)) if s0 != s1 else float(j)


def segment_gestures(traj: HandTrajectories, config: PhaseConfig = PhaseConfig()) -> Segmentation:
    """Phase labels, gesture phrases, strokes and apexes of a clip (see the module docstring)."""
    cfg = config
    n = traj.n_frames
    fps = traj.fps
    resting = np.ones(n, dtype=bool)
    for pos, sp in ((traj.left, traj.left_speed), (traj.right, traj.right_speed)):
        rest = _rest_position(pos, sp, cfg)
        near = np.linalg.norm(pos - rest, axis=1) < cfg.rest_radius
        resting &= near & (sp < cfg.move_speed)
    # short rests do not split phrases
    min_rest = max(1, int(round(cfg.min_rest_s * fps)))
    for a, b in _runs(resting):
        if b - a < min_rest and a > 0 and b < n:
            resting[a:b] = False
    labels = np.full(n, "rest", dtype=object)
    speed = traj.speed
    phrases: list[PhraseSegment] = []
    for a, b in _runs(~resting):
        if (b - a) < cfg.min_phrase_s * fps:
            continue
        seg = speed[a:b]
        peaks, props = find_peaks(np.concatenate([[0.0], seg, [0.0]]), height=cfg.min_peak_speed)
        peaks = peaks - 1
        # prominence relative to each peak's own height
        if len(peaks):
            from scipy.signal import peak_prominences

            prom = peak_prominences(np.concatenate([[0.0], seg, [0.0]]), peaks + 1)[0]
            keep = prom >= cfg.min_prominence * seg[peaks]
            peaks = peaks[keep]
        if len(peaks) == 0:
            labels[a:b] = "hold"
            continue
        bounds = [0]
        for p0, p1 in zip(peaks[:-1], peaks[1:]):
            bounds.append(p0 + int(np.argmin(seg[p0:p1 + 1])))
        bounds.append(b - a)
        units = [(a + bounds[k], a + bounds[k + 1], a + int(peaks[k])) for k in range(len(peaks))]
        starts_rest = bool(a > 0 and resting[a - 1])
        ends_rest = bool(b < n and resting[b])
        k_units = len(units)
        pool = list(range(k_units))
        if k_units >= 2 and (starts_rest or a == 0):
            pool = pool[1:]
        if len(pool) >= 1 and k_units >= 2 and (ends_rest or b == n):
            pool = pool[:-1]
        if not pool:  # two units from rest to rest: the first (out of rest) is the stroke,
            # unless the return is clearly faster (a beat that ends at rest)
            pool = [1 if speed[units[1][2]] > cfg.return_ratio * speed[units[0][2]] else 0]
        main = max(pool, key=lambda k: speed[units[k][2]])
        stroke_ids = [k for k in pool if speed[units[k][2]] >= cfg.stroke_ratio * speed[units[main][2]]]
        strokes = []
        for k, (u0, u1, pk) in enumerate(units):
            if k in stroke_ids:
                role = "stroke"
            elif k < min(stroke_ids):
                role = "preparation"
            elif k > max(stroke_ids):
                role = "retraction"
            else:
                role = "preparation"  # a movement between two strokes prepares the next one
            labels[u0:u1] = role
            if role == "stroke":
                apex = _apex(speed, u0, u1, pk, cfg)
                lp, rp = traj.left_speed[pk], traj.right_speed[pk]
                hand = "both" if min(lp, rp) >= 0.7 * max(lp, rp) else ("left" if lp > rp else "right")
                strokes.append(Stroke(int(u0), int(u1), int(pk), float(speed[pk]), float(apex), float(apex / fps), hand, k == main))
        quiet = speed[a:b] < cfg.hold_speed
        labels[a:b][quiet] = "hold"
        phrases.append(PhraseSegment(int(a), int(b), tuple(strokes), starts_rest, ends_rest))
    return Segmentation(fps=float(fps), labels=labels.astype(str), phrases=tuple(phrases))
