"""Forward kinematics, vectorised over frames (the hierarchy walk is the only loop)."""

from __future__ import annotations

import numpy as np

from evalkit.motion import quat
from evalkit.motion.model import Motion


def depth_levels(parents: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Joints grouped by depth below the root: ``[(joints, their parents), ...]`` from depth 1
    down. Parents come before children, so one pass over the joints finds every depth."""
    depth = np.zeros(len(parents), dtype=np.int64)
    for j, p in enumerate(parents):
        if p >= 0:
            depth[j] = depth[p] + 1
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(1, depth.max(initial=0) + 2))
    return [(order[a:b], parents[order[a:b]]) for a, b in zip(bounds[:-1], bounds[1:])]


def forward_kinematics(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions and rotations.

    All joints at one depth of the hierarchy are solved together, so the Python loop runs once
    per level (about 10 for a human rig), not once per joint.

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
    roots = np.flatnonzero(parents < 0)
    g_r[:, roots] = local_r[:, roots]
    g_p[:, roots] = local_t[:, roots]
    for joints, par in depth_levels(parents):
        pr = g_r[:, par]
        g_r[:, joints] = np.matmul(pr, local_r[:, joints])
        g_p[:, joints] = np.einsum("fkij,fkj->fki", pr, local_t[:, joints]) + g_p[:, par]
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
