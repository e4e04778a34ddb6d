"""Trim a pose pop at the ends of a clip, and find cuts inside it (operations on a :class:`Motion`).

Some exports prepend a reference pose (the cgspeed CMU BVH conversions start with a T-pose at
frame 0; the Reallusion retargets too). Such a frame is not motion and would dominate velocity,
skate and physics metrics. We drop an end frame only when the jump into it is a *pop*: some joint
moves, relative to the root, faster than ``speed`` m/s (1.75 m body, scaled) **and** more than
``ratio`` times the clip's median of that quantity. File names are never consulted.

A *cut* (:func:`find_cuts`) is a frame step in which the whole body moves farther than a body
can move in that time: a file holding several takes one after another, or a clip whose frames
were repeated without carrying the body on, "teleports" there. It is an edit, not motion, so the
naturalness verdict judges the takes on either side separately and reports the cut
(:func:`evalkit.models.discriminator.score_naturalness`).

A *repeat* (:func:`find_repeat`) is a clip that is copies of one stretch played one after
another (a clip naively looped, frame for frame or with the body carried on): after the first
copy it holds no motion that was not in it but the joins between copies, which are all alike, so
the verdict judges the first two copies and the join between them once and reports how many copies
there were.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.motion import quat
from evalkit.motion.model import Motion
from evalkit.motion.vectors import norm


@dataclass(frozen=True)
class PopConfig:
    """Attributes: ``speed`` (m/s, scaled by body height / 1.75 m), ``ratio`` (× median),
    ``max_frames`` (at most this many frames dropped at each end)."""

    speed: float = 15.0
    ratio: float = 8.0
    max_frames: int = 3


def pose_jump_speed(positions: np.ndarray, fps: float) -> np.ndarray:
    """``(frames - 1,)`` the largest root-relative joint speed between consecutive frames, m/s.

    Args:
        positions: ``(frames, joints, 3)`` world positions, metres (joint 0 is the root).
    """
    rel = positions - positions[:, :1]
    return norm(np.diff(rel, axis=0)).max(axis=1) * fps


def find_end_pops(positions: np.ndarray, fps: float, scale: float = 1.0, config: PopConfig | None = None) -> tuple[int, int]:
    """Number of frames to drop at the start and at the end of a clip (both usually 0)."""
    cfg = config or PopConfig()
    if positions.shape[0] < 2 * cfg.max_frames + 4:
        return 0, 0
    d = pose_jump_speed(positions, fps)
    limit = max(cfg.speed * scale, cfg.ratio * float(np.median(d)))
    pop = d > limit
    head = 0
    for i in range(cfg.max_frames):
        if pop[i]:
            head = i + 1
    tail = 0
    for i in range(cfg.max_frames):
        if pop[-1 - i]:
            tail = i + 1
    return head, tail


def drop_end_pops(motion: Motion, scale: float = 1.0, config: PopConfig | None = None) -> tuple[Motion, int, int]:
    """``(motion without popped end frames, frames dropped at start, frames dropped at end)``.

    The trimmed clip keeps the already computed world positions (sliced, not solved again)."""
    head, tail = find_end_pops(motion.positions, motion.fps, scale, config)
    if head == 0 and tail == 0:
        return motion, 0, 0
    return motion.slice(head, motion.n_frames - tail), head, tail


@dataclass(frozen=True)
class CutConfig:
    """When a frame step is a cut: the body's centre (mean of all joint positions) moves more
    than ``distance`` metres **and** faster than ``speed`` m/s (both scaled by body height /
    1.75 m) **and** more than ``ratio`` times the clip's median step.

    15 m/s is faster than any human runs (sprint peaks are about 12 m/s) and 0.8 m is about half
    a body height in one frame, so natural capture has none (tested on every clip here). A jump
    out of ``stall_frames`` or more frames in which no joint moved (less than 10 µm) is not a
    cut but a dropped-frames stall (a generator's or player's freeze: the body holds, then jumps
    to where the motion has got to), which is motion gone wrong and is judged as such.
    """

    distance: float = 0.8
    speed: float = 15.0
    ratio: float = 8.0
    stall_frames: int = 3


def find_cuts(positions: np.ndarray, fps: float, scale: float = 1.0, config: CutConfig | None = None) -> np.ndarray:
    """Frames at which a new take starts: ``(cuts,)`` sorted frame indices ``i`` (the step from
    frame ``i - 1`` to frame ``i`` is a cut, :class:`CutConfig`); empty for a continuous clip.

    Args:
        positions: ``(frames, joints, 3)`` world positions, metres.
        fps: frames per second.
        scale: body height / 1.75 m (:func:`evalkit.features.body.body_index`'s ``scale``).
    """
    cfg = config or CutConfig()
    if positions.shape[0] < 3:
        return np.zeros(0, dtype=np.int64)
    step = norm(np.diff(positions.mean(axis=1), axis=0))
    limit = max(cfg.distance * scale, cfg.speed * scale / fps, cfg.ratio * float(np.median(step)))
    jumps = np.flatnonzero(step > limit)
    if len(jumps) and cfg.stall_frames > 0:
        still = norm(np.diff(positions, axis=0)).max(axis=1) < 1e-5  # (frames - 1,) no joint moved
        k = cfg.stall_frames
        stalled = [i >= k and bool(still[i - k:i].all()) for i in jumps]
        jumps = jumps[~np.asarray(stalled, dtype=bool)]
    return jumps.astype(np.int64) + 1


@dataclass(frozen=True)
class RepeatConfig:
    """When a clip is copies of one stretch: every joint, relative to the root and turned to the
    root's heading, is within ``tolerance`` metres (scaled by body height / 1.75 m) of where it
    was one period earlier, over the whole clip, and the clip holds at least ``min_copies`` whole
    copies. A period in which no joint moves ``min_motion`` metres (a held pose) is no repeat.

    0.1 mm is far below capture noise (natural capture never repeats itself this closely for a
    whole stretch; tested on every clip here) and far above a text file's rounding."""

    tolerance: float = 1e-4
    min_copies: int = 2
    min_motion: float = 0.01
    max_candidates: int = 200


def repeat_features(motion: Motion) -> np.ndarray:
    """``(frames - 1, joints * 3 + 5)`` what a copy repeats, per frame: joint positions relative
    to joint 0, turned about +Y by minus joint 0's heading (its twist about +Y); joint 0's
    height; joint 0's step to the next frame in that turned frame (3 values); and the turn of the
    heading to the next frame (radians). Metres.

    Together these fix the motion up to where it stands on the floor and which way it faces, so a
    copy moved along the floor and turned about the vertical (a loop with the body carried on,
    :func:`evalkit.models.lengths.repeat_loop`) has the features of the stretch it copies, while
    a copy that slides or turns differently (e.g. feet skating as the body drifts) does not."""
    q = motion.rotations[:, 0]
    heading = 2 * np.arctan2(q[:, 1], q[:, 3])  # twist about +Y, radians; exact under a turn about +Y
    pos = motion.positions
    turn = quat.about_y(-heading)
    rel = quat.rotate(np.broadcast_to(turn[:, None, :], pos.shape[:2] + (4,)), pos - pos[:, :1])
    step = quat.rotate(turn[:-1], np.diff(pos[:, 0], axis=0))
    yaw = np.angle(np.exp(1j * np.diff(heading)))  # wrapped to (-pi, pi]
    return np.concatenate([rel[:-1].reshape(len(rel) - 1, -1), pos[:-1, 0, 1:2], step, yaw[:, None]], axis=1)


def find_repeat(motion: Motion, min_frames: int, scale: float = 1.0, config: RepeatConfig | None = None) -> int:
    """The clip's period in frames when it is copies of its first ``period`` frames, else 0.

    Frame ``i + period`` repeats frame ``i`` (:func:`repeat_features`, within
    :attr:`RepeatConfig.tolerance`; radians count as metres) for every ``i``; the last copy may
    be cut short. The shortest such period of at least ``min_frames`` frames is returned.

    Args:
        motion: the clip.
        min_frames: the shortest period worth finding (e.g. the shortest clip a model judges).
        scale: body height / 1.75 m.
    """
    cfg = config or RepeatConfig()
    frames = motion.n_frames
    min_frames = max(int(min_frames), 2)
    if frames < cfg.min_copies * min_frames:
        return 0
    f = repeat_features(motion)  # (frames - 1, features): frame i and its step to frame i + 1
    n = len(f)
    tol = cfg.tolerance * scale
    # candidate periods: frames that repeat frame 0 (few in real capture; checked in order)
    start = np.abs(f - f[0]).max(axis=1) <= tol
    start[:min_frames] = False
    start[frames // cfg.min_copies + 1:] = False
    for p in np.flatnonzero(start)[:cfg.max_candidates]:
        p = int(p)
        if np.abs(f[p:] - f[:n - p]).max() > tol:
            continue
        if np.ptp(f[:p], axis=0).max() < cfg.min_motion * scale:  # a held pose, not a copy of motion
            return 0
        return p
    return 0
