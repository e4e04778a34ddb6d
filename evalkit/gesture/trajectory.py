"""Hand (wrist) trajectories in the body's frame, and their speeds.

Gestures are movements of the hands relative to the body, so wrist positions are expressed in a
frame that follows the hips: origin at the hips joint, axes turned about the vertical by the
body's heading (from the left-hip -> right-hip direction, or the shoulders when hips are
missing). Positions are also rescaled to a standard body height of :data:`NORMALISED_HEIGHT_M`
so that speeds and thresholds mean the same on any rig (a child, a giant, centimetre files).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import savgol_filter

from evalkit.errors import InputError, RolesNotFoundError
from evalkit.features.body import NORMALISED_HEIGHT_M  # the height gesture positions are rescaled to
from evalkit.motion import Motion, find_roles, skeleton_height


@dataclass(frozen=True, eq=False)
class HandTrajectories:
    """Wrist paths of both hands in the body frame, rescaled to a 1.70 m body.

    Attributes:
        fps: frames per second.
        left, right: ``(frames, 3)`` wrist positions, metres (of the 1.70 m body), body frame:
            x = body's left->right, y = up, -z = forward (right-handed).
        left_speed, right_speed: ``(frames,)`` smoothed wrist speeds, m/s (1.70 m body).
        body_positions: ``(frames, joints, 3)`` every joint in the body frame (for energies).
        scale: factor applied to the capture's metres (1.70 / measured height).
        height_m: measured body height of the capture, metres.
    """

    fps: float
    left: np.ndarray
    right: np.ndarray
    left_speed: np.ndarray
    right_speed: np.ndarray
    body_positions: np.ndarray
    scale: float
    height_m: float

    @property
    def n_frames(self) -> int:
        return int(self.left.shape[0])

    @property
    def times(self) -> np.ndarray:
        """``(frames,)`` frame times, seconds."""
        return np.arange(self.n_frames) / self.fps

    @property
    def speed(self) -> np.ndarray:
        """``(frames,)`` the faster hand's speed, m/s."""
        return np.maximum(self.left_speed, self.right_speed)


def _smooth_window(fps: float, seconds: float) -> int:
    w = int(round(seconds * fps)) | 1
    return max(w, 5)


def body_frame_positions(motion: Motion, roles: dict[str, int] | None = None) -> np.ndarray:
    """``(frames, joints, 3)`` joint positions relative to the hips, turned about the vertical so
    the body's left->right axis is +x (forward is then -z).

    The heading is taken per frame from the hips (left hip -> right hip) or, failing that, the
    shoulders, smoothed over 0.5 s.
    """
    roles = roles if roles is not None else find_roles(motion.skeleton, strict=False)
    if "hips" not in roles:
        raise RolesNotFoundError(f"{motion.name or 'motion'}: no hips joint found; map it with --roles")
    pos = np.asarray(motion.positions)
    for a, b in (("left_hip", "right_hip"), ("left_shoulder", "right_shoulder")):
        if a in roles and b in roles:
            lateral = pos[:, roles[b]] - pos[:, roles[a]]
            break
    else:
        raise RolesNotFoundError(f"{motion.name or 'motion'}: need left/right hips or shoulders to find the body's heading")
    lateral = lateral[:, [0, 2]]
    if motion.n_frames >= 5:
        w = min(_smooth_window(motion.fps, 0.5), (motion.n_frames // 2) * 2 - 1)
        if w >= 3:
            lateral = savgol_filter(lateral, w, 1, axis=0)
    angle = np.arctan2(lateral[:, 1], lateral[:, 0])  # angle of the right-pointing axis in xz
    c, s = np.cos(angle), np.sin(angle)
    rel = pos - pos[:, roles["hips"]][:, None, :]
    x = rel[..., 0] * c[:, None] + rel[..., 2] * s[:, None]
    z = -rel[..., 0] * s[:, None] + rel[..., 2] * c[:, None]
    # x runs along the body's left->right axis, y up; in this right-handed frame forward is -z
    return np.stack([x, rel[..., 1], z], axis=-1)


def hand_trajectories(motion: Motion, roles: dict[str, int] | None = None, smooth_s: float = 0.1) -> HandTrajectories:
    """Wrist trajectories and speeds of ``motion`` (see :class:`HandTrajectories`).

    Args:
        roles: joint roles (default: found from joint names).
        smooth_s: Savitzky–Golay window for the speeds, seconds (quadratic fit).
    """
    roles = roles if roles is not None else find_roles(motion.skeleton, strict=False)
    missing = [r for r in ("left_wrist", "right_wrist", "hips") if r not in roles]
    if missing:
        raise RolesNotFoundError(f"{motion.name or 'motion'}: gesture analysis needs joints for {', '.join(missing)}; map them with --roles")
    if motion.n_frames < 5:
        raise InputError(f"{motion.name or 'motion'}: {motion.n_frames} frames are too few for gesture analysis")
    height = skeleton_height(motion)
    if not (height > 0):
        raise InputError(f"{motion.name or 'motion'}: cannot measure the body's height")
    scale = NORMALISED_HEIGHT_M / height
    body = body_frame_positions(motion, roles) * scale
    w = min(_smooth_window(motion.fps, smooth_s), (motion.n_frames // 2) * 2 - 1)
    dt = 1.0 / motion.fps

    def speed(p: np.ndarray) -> np.ndarray:
        v = savgol_filter(p, w, 2, deriv=1, delta=dt, axis=0) if w >= 3 else np.gradient(p, dt, axis=0)
        return np.linalg.norm(v, axis=1)

    left = body[:, roles["left_wrist"]]
    right = body[:, roles["right_wrist"]]
    return HandTrajectories(
        fps=float(motion.fps), left=left, right=right, left_speed=speed(left), right_speed=speed(right),
        body_positions=body, scale=float(scale), height_m=float(height),
    )
