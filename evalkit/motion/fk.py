"""Forward kinematics, vectorised over frames (the hierarchy walk is the only loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from evalkit.motion import quat

if TYPE_CHECKING:  # Motion imports this module to cache its positions; annotations only here
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


def _solve(motion: Motion, leaf_rotations: bool) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``(joints, frames, 3)`` and rotations ``(joints, frames, 3, 3)``, joint-major
    (gathers of whole joints are contiguous). All joints at one depth are solved together, so
    the Python loop runs once per level (about 10 for a human rig); without ``leaf_rotations``
    the rotations of joints without children are left unset (positions do not need them)."""
    local_r = quat.to_matrix(motion.rotations).transpose(1, 0, 2, 3)
    local_t = motion.translations.transpose(1, 0, 2)
    parents = motion.skeleton.parents
    n_j, n_f = local_t.shape[:2]
    inner = np.zeros(n_j, dtype=bool)
    inner[parents[parents >= 0]] = True
    g_r = np.empty((n_j, n_f, 3, 3))
    g_p = np.empty((n_j, n_f, 3))
    roots = np.flatnonzero(parents < 0)
    g_r[roots] = local_r[roots]
    g_p[roots] = local_t[roots]
    for joints, par in depth_levels(parents):
        pr = g_r[par]
        g_p[joints] = np.einsum("kfij,kfj->kfi", pr, local_t[joints]) + g_p[par]
        need = slice(None) if leaf_rotations else inner[joints]
        g_r[joints[need]] = np.matmul(pr[need], local_r[joints[need]])
    return g_p, g_r


def forward_kinematics(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions and rotations.

    Returns:
        positions: ``(frames, joints, 3)`` metres, Y-up world space.
        rotations: ``(frames, joints, 3, 3)`` world rotation matrices of each joint's frame.
    """
    g_p, g_r = _solve(motion, leaf_rotations=True)
    return np.ascontiguousarray(g_p.transpose(1, 0, 2)), np.ascontiguousarray(g_r.transpose(1, 0, 2, 3))


def global_positions(motion: Motion) -> np.ndarray:
    """``(frames, joints, 3)`` world joint positions in metres (see :func:`forward_kinematics`;
    skips the world rotations of joints without children, which positions do not need)."""
    return np.ascontiguousarray(_solve(motion, leaf_rotations=False)[0].transpose(1, 0, 2))


def end_site_positions(motion: Motion) -> dict[int, np.ndarray]:
    """World positions of end sites: joint index -> ``(frames, 3)`` metres."""
    pos, rot = forward_kinematics(motion)
    return {
        j: pos[:, j] + rot[:, j] @ np.asarray(off)
        for j, off in motion.skeleton.end_sites.items()
    }
