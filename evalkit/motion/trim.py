"""Trim a pose pop at the ends of a clip (an operation on a :class:`Motion`).

Some exports prepend a reference pose (the cgspeed CMU BVH conversions start with a T-pose at
frame 0; the Reallusion retargets too). Such a frame is not motion and would dominate velocity,
skate and physics metrics. We drop an end frame only when the jump into it is a *pop*: some joint
moves, relative to the root, faster than ``speed`` m/s (1.75 m body, scaled) **and** more than
``ratio`` times the clip's median of that quantity. File names are never consulted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
