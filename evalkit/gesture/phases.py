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
   least ``stroke_ratio`` as fast as the fastest remaining unit within ``stroke_window_s`` of
   them (peak to peak) are strokes too — a local comparison, so that in a long phrase of many
   gestures (a speaker gesturing without returning to rest) a soft beat is judged against its
   neighbours, not against the strongest movement seconds away (``stroke_window_s=None``: against
   the main stroke of the whole phrase, as in a short phrase); the rest are preparations (before a stroke)
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
from scipy.signal import find_peaks, peak_prominences

from evalkit.errors import InputError
from evalkit.features.signal import runs
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
        stroke_window_s: a unit is a stroke when at least ``stroke_ratio`` as fast as the fastest
            candidate unit whose peak lies within this many seconds of its own (``None``: the
            phrase's main stroke).
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
    stroke_window_s: float | None = 1.0

    def __post_init__(self) -> None:
        if self.apex not in ("stop", "peak"):
            raise InputError(f"apex must be 'stop' or 'peak', got {self.apex!r}")
        if not 0 < self.apex_fraction < 1:
            raise InputError(f"apex_fraction must be between 0 and 1, got {self.apex_fraction}")
        if self.stroke_window_s is not None and not self.stroke_window_s > 0:
            raise InputError(f"stroke_window_s must be > 0 seconds or None, got {self.stroke_window_s}")


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


def _resting(traj: HandTrajectories, cfg: PhaseConfig) -> np.ndarray:
    """``(frames,)`` bool: both hands near their rest position and slow; rests shorter than
    ``min_rest_s`` inside the clip do not count."""
    n = traj.n_frames
    resting = np.ones(n, dtype=bool)
    for pos, sp in ((traj.left, traj.left_speed), (traj.right, traj.right_speed)):
        rest = _rest_position(pos, sp, cfg)
        near = np.linalg.norm(pos - rest, axis=1) < cfg.rest_radius
        resting &= near & (sp < cfg.move_speed)
    min_rest = max(1, int(round(cfg.min_rest_s * traj.fps)))
    for a, b in zip(*runs(resting)):
        if b - a < min_rest and a > 0 and b < n:
            resting[a:b] = False
    return resting


def _movement_units(seg: np.ndarray, cfg: PhaseConfig) -> list[tuple[int, int, int]]:
    """Movement units of a phrase's speed ``seg`` as ``(start, end_exclusive, peak)`` offsets:
    prominent speed peaks, split at the slowest frame between neighbours."""
    padded = np.concatenate([[0.0], seg, [0.0]])
    peaks, _ = find_peaks(padded, height=cfg.min_peak_speed)
    if len(peaks):
        prom = peak_prominences(padded, peaks)[0]
        peaks = peaks[prom >= cfg.min_prominence * padded[peaks]]
    peaks = peaks - 1
    if len(peaks) == 0:
        return []
    bounds = [0] + [p0 + int(np.argmin(seg[p0:p1 + 1])) for p0, p1 in zip(peaks[:-1], peaks[1:])] + [len(seg)]
    return [(bounds[k], bounds[k + 1], int(peaks[k])) for k in range(len(peaks))]


def _stroke_units(peak_speeds: list[float], peak_times: list[float], opens: bool, closes: bool,
                  cfg: PhaseConfig) -> tuple[list[int], int]:
    """Which movement units of a phrase are strokes (indices), and the main one, from the units'
    peak speeds (m/s) and peak times (s). ``opens``: the phrase starts at rest or at the clip's
    start (its first unit prepares); ``closes``: it ends at rest or at the clip's end (its last
    unit retracts)."""
    k_units = len(peak_speeds)
    pool = list(range(k_units))
    if k_units >= 2 and opens:
        pool = pool[1:]
    if len(pool) >= 1 and k_units >= 2 and closes:
        pool = pool[:-1]
    if not pool:  # two units from rest to rest: the first (out of rest) is the stroke,
        # unless the return is clearly faster (a beat that ends at rest)
        pool = [1 if peak_speeds[1] > cfg.return_ratio * peak_speeds[0] else 0]
    main = max(pool, key=lambda k: peak_speeds[k])
    W = np.inf if cfg.stroke_window_s is None else cfg.stroke_window_s

    def strongest_near(k: int) -> float:
        return max(peak_speeds[j] for j in pool if abs(peak_times[j] - peak_times[k]) <= W)

    return [k for k in pool if peak_speeds[k] >= cfg.stroke_ratio * strongest_near(k)], main


def _segment_phrase(traj: HandTrajectories, labels: np.ndarray, a: int, b: int, starts_rest: bool, ends_rest: bool,
                    cfg: PhaseConfig) -> PhraseSegment | None:
    """Label frames ``a..b`` (exclusive) of one gesture phrase and find its strokes (``None``:
    no movement unit, the phrase is a hold)."""
    speed = traj.speed
    units = [(a + u0, a + u1, a + pk) for u0, u1, pk in _movement_units(speed[a:b], cfg)]
    if not units:
        labels[a:b] = "hold"
        return None
    n = traj.n_frames
    stroke_ids, main = _stroke_units([float(speed[pk]) for _, _, pk in units], [pk / traj.fps for _, _, pk in units],
                                     starts_rest or a == 0, ends_rest or b == n, cfg)
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
            strokes.append(Stroke(int(u0), int(u1), int(pk), float(speed[pk]), float(apex), float(apex / traj.fps), hand, k == main))
    labels[a:b][speed[a:b] < cfg.hold_speed] = "hold"
    return PhraseSegment(int(a), int(b), tuple(strokes), starts_rest, ends_rest)


def segment_gestures(traj: HandTrajectories, config: PhaseConfig = PhaseConfig()) -> Segmentation:
    """Phase labels, gesture phrases, strokes and apexes of a clip (see the module docstring)."""
    cfg = config
    n = traj.n_frames
    resting = _resting(traj, cfg)
    labels = np.full(n, "rest", dtype=object)
    phrases: list[PhraseSegment] = []
    for a, b in zip(*runs(~resting)):
        if (b - a) < cfg.min_phrase_s * traj.fps:
            continue
        ph = _segment_phrase(traj, labels, a, b, bool(a > 0 and resting[a - 1]), bool(b < n and resting[b]), cfg)
        if ph is not None:
            phrases.append(ph)
    return Segmentation(fps=float(traj.fps), labels=labels.astype(str), phrases=tuple(phrases))
