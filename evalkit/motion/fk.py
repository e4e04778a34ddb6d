"""Forward kinematics, vectorised over frames (the hierarchy walk is the only loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalkit.motion import quat

if TYPE_CHECKING:  # Motion imports this module to cache its positions; annotations only here
    from evalkit.motion.model import Motion


def forward_kinematics(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions and rotations.

    Returns:
        positions: ``(frames, joints, 3)`` metres, Y-up world space.
        rotations: ``(frames, joints, 3, 3)`` world rotation matrices of each joint's frame.
    """
    local_r = quat.to_matrix(motion.rotations)
    local_t = motion.translations
    parents = motion.skeleton.parents
    n_f, n_j = local_t.shape[:2]
    g_r = np.empty((n_f, n_j, 3, 3))
    g_p = np.empty((n_f, n_j, 3))
    for j in range(n_j):
        p = parents[j]
        if p < 0:
            g_r[:, j] = local_r[:, j]
            g_p[:, j] = local_t[:, j]
        else:
            g_r[:, j] = np.matmul(g_r[:, p], local_r[:, j])
            g_p[:, j] = np.einsum("fij,fj->fi", g_r[:, p], local_t[:, j]) + g_p[:, p]
    return g_p, g_r


def global_positions(motion: Motion) -> np.ndarray:
    """``(frames, joints, 3)`` world joint positions in metres (see :func:`forward_kinematics`)."""
    return forward_kinematics(motion)[0]


def end_site_positions(motion: Motion) -> dict[int, np.ndarray]:
    """World positions of end sites: joint index -> ``(frames, 3)`` metres."""
    pos, rot = forward_kinematics(motion)
    return {
        j: pos[:, j] + rot[:, j] @ np.asarray(off)
        for j, off in motion.skeleton.end_sites.items()
    }
