"""The canonical joint set and the normalisations every distribution metric works on.

Any rig maps onto one joint set through its joint roles (:data:`CANONICAL_ROLES`, the 18 roles of
:data:`evalkit.motion.ROLE_NAMES`: hips, spine, neck, head and, per side, shoulder (upper-arm
joint), elbow, wrist, hip (upper-leg joint), knee, ankle, toe). A rig without toe joints uses the
ankle for the toe (said in the protocol's ``joint_set``); every other role must be found (a
``--roles`` YAML file maps unusual names).

Two normalisations:

* ``frame``: each frame on its own -- joint positions minus the hips of that frame, turned about
  the vertical so that the hip line (right hip -> left hip) points along +X, divided by the body
  height (so a 1.5 m and a 1.9 m body doing the same thing look the same). Used for the raw-pose
  FGD and the L1 divergence.
* ``window``: a window of frames as a whole -- minus the hips of the window's first frame and
  turned by that frame's heading, divided by the body height, so travel and turning inside the
  window are kept. Used for the FGD autoencoder.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from evalkit.errors import RolesNotFoundError
from evalkit.features.body import heading, roles_of
from evalkit.motion import Motion, resample, skeleton_height
from evalkit.motion.roles import ROLE_NAMES

#: The canonical joint set, in this order.
CANONICAL_ROLES: tuple[str, ...] = ROLE_NAMES
#: Roles that may fall back to another joint when the rig lacks them.
FALLBACK = {"left_toe": "left_ankle", "right_toe": "right_ankle"}
#: Index of a role in the canonical set.
IDX = {r: i for i, r in enumerate(CANONICAL_ROLES)}


def canonical_joints(motion: Motion, roles: Mapping[str, str] | None = None) -> tuple[np.ndarray, list[str]]:
    """Joint indices of :data:`CANONICAL_ROLES` in ``motion``'s skeleton.

    Returns:
        ``(18,)`` joint indices and the list of roles that fell back (toe -> ankle).

    Raises:
        RolesNotFoundError: a role other than the toes is missing (the message says how to map it).
    """
    found = roles_of(motion, roles)
    fell_back = []
    out = []
    missing = []
    for r in CANONICAL_ROLES:
        if r in found:
            out.append(found[r])
        elif r in FALLBACK and FALLBACK[r] in found:
            out.append(found[FALLBACK[r]])
            fell_back.append(r)
        else:
            missing.append(r)
    if missing:
        example = "\n".join(f"  {r}: <joint name>" for r in missing[:4])
        raise RolesNotFoundError(
            f"{motion.name or 'clip'}: the distribution metrics need the joint roles "
            f"{', '.join(missing)}, not found among joints {', '.join(motion.skeleton.names)}. "
            f"Map them in a YAML file passed with --roles:\nroles:\n{example}")
    return np.asarray(out, dtype=int), fell_back


def canonical_positions(motion: Motion, fps: float, roles: Mapping[str, str] | None = None
                        ) -> tuple[np.ndarray, float, list[str]]:
    """World positions of the canonical joints at ``fps``.

    Args:
        motion: the clip (any rig whose roles are found).
        fps: frame rate to resample to (slerp of rotations, then forward kinematics).
        roles: ``{role: joint name}`` overrides.

    Returns:
        ``(frames, 18, 3)`` metres (Y-up), the body height in metres, and the roles that fell back.
    """
    idx, fell_back = canonical_joints(motion, roles)
    height = float(skeleton_height(motion))
    m = motion if abs(motion.fps - fps) < 1e-9 else resample(motion, fps)
    pos = np.asarray(m.positions)[:, idx].astype(np.float64)
    return pos, height, fell_back


def _heading_rotation(pos: np.ndarray) -> np.ndarray:
    """``(N, 2, 2)`` rotations of the (x, z) plane that turn each pose's hip line onto +X."""
    theta = -heading(pos, shoulders=False)  # the hip line's angle from +X
    c, s = np.cos(theta), np.sin(theta)
    # x' = c x + s z ; z' = -s x + c z
    return np.stack([np.stack([c, s], -1), np.stack([-s, c], -1)], -2)


def _apply(pos: np.ndarray, origin: np.ndarray, rot: np.ndarray, height: float) -> np.ndarray:
    """``(N, T, J, 3)`` poses minus ``origin`` (N, 3), turned by ``rot`` (N, 2, 2), / height."""
    p = pos - origin[:, None, None, :]
    xz = p[..., [0, 2]]
    xz = np.einsum("nab,ntjb->ntja", rot, xz)
    out = np.empty_like(p)
    out[..., 0] = xz[..., 0]
    out[..., 1] = p[..., 1]
    out[..., 2] = xz[..., 1]
    return out / height


def frame_poses(pos: np.ndarray, height: float) -> np.ndarray:
    """Frame-normalised poses (see module doc): ``(frames, 18, 3)`` in body heights."""
    pos = np.asarray(pos, float)
    rot = _heading_rotation(pos)
    return _apply(pos[:, None], pos[:, IDX["hips"]], rot, height)[:, 0]


def window_starts(n_frames: int, window: int, stride: int) -> np.ndarray:
    """First frames of the windows ``[s, s + window)`` that fit in ``n_frames`` (every ``stride``)."""
    if n_frames < window:
        return np.zeros(0, dtype=int)
    return np.arange(0, n_frames - window + 1, stride)


def windows(pos: np.ndarray, height: float, window: int, stride: int) -> np.ndarray:
    """Window-normalised windows (see module doc).

    Args:
        pos: ``(frames, 18, 3)`` canonical positions, metres.
        height: body height, metres.
        window, stride: window length and step, frames.

    Returns:
        ``(n_windows, window, 18, 3)`` in body heights (``n_windows`` is 0 for a short clip).
    """
    pos = np.asarray(pos, float)
    starts = window_starts(pos.shape[0], window, stride)
    if starts.size == 0:
        return np.zeros((0, window) + pos.shape[1:])
    w = np.lib.stride_tricks.sliding_window_view(pos, window, axis=0)[starts]  # (N, J, 3, W)
    w = np.moveaxis(w, -1, 1)
    first = pos[starts]
    return _apply(w, first[:, IDX["hips"]], _heading_rotation(first), height)
