"""Forward kinematics, vectorised over frames (the hierarchy walk is the only loop)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from evalkit.motion import quat

if TYPE_CHECKING:  # Motion imports this module to cache its positions; annotations only here
    from evalkit.motion.model import Motion


def depth_levels(parents: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Joints grouped by depth below the root: ``[(joints, their parents), ...]`` from depth 1
    down (read-only arrays). Parents come before children, so one pass over the joints finds
    every depth; the levels of a rig are found once per process (a test set's clips share a
    few rigs, and short clips paid the walk on every clip)."""
    return list(_depth_levels(np.asarray(parents, dtype=np.int64).tobytes()))


@lru_cache(maxsize=256)
def _depth_levels(key: bytes) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    parents = np.frombuffer(key, dtype=np.int64)
    depth = np.zeros(len(parents), dtype=np.int64)
    for j, p in enumerate(parents):
        if p >= 0:
            depth[j] = depth[p] + 1
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(1, depth.max(initial=0) + 2))
    levels = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        joints, par = order[a:b], parents[order[a:b]]
        joints.setflags(write=False)
        par.setflags(write=False)
        levels.append((joints, par))
    return tuple(levels)


def _solve(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World positions ``(joints, frames, 3)`` and rotations ``(joints, frames, 3, 3)``, joint-major
    (gathers of whole joints are contiguous). All joints at one depth are solved together, so
    the Python loop runs once per level (about 10 for a human rig)."""
    local_r = quat.to_matrix(motion.rotations).transpose(1, 0, 2, 3)
    local_t = motion.translations.transpose(1, 0, 2)
    parents = motion.skeleton.parents
    n_j, n_f = local_t.shape[:2]
    g_r = np.empty((n_j, n_f, 3, 3))
    g_p = np.empty((n_j, n_f, 3))
    roots = np.flatnonzero(parents < 0)
    g_r[roots] = local_r[roots]
    g_p[roots] = local_t[roots]
    for joints, par in depth_levels(parents):
        pr = g_r[par]
        g_p[joints] = np.einsum("kfij,kfj->kfi", pr, local_t[joints]) + g_p[par]
        g_r[joints] = np.matmul(pr, local_r[joints])
    return g_p, g_r


def forward_kinematics(motion: Motion) -> tuple[np.ndarray, np.ndarray]:
    """World joint positions and rotations.

    Returns:
        positions: ``(frames, joints, 3)`` metres, Y-up world space.
        rotations: ``(frames, joints, 3, 3)`` world rotation matrices of each joint's frame.
    """
    g_p, g_r = _solve(motion)
    return np.ascontiguousarray(g_p.transpose(1, 0, 2)), np.ascontiguousarray(g_r.transpose(1, 0, 2, 3))


#: Component orders (y, z, x) and (z, x, y) for cross products of stacked ``(3, ...)`` vectors.
_NEXT = [1, 2, 0]
_AFTER = [2, 0, 1]


def global_positions(motion: Motion) -> np.ndarray:
    """``(frames, joints, 3)`` world joint positions in metres (the positions of
    :func:`forward_kinematics`, to ~1e-15 m).

    Composes unit quaternions instead of rotation matrices, on contiguous ``(joints, frames)``
    rows of each component, a whole depth level of the hierarchy per step, and
    skips the world rotations of joints without children: two to three times faster than the
    matrix solve on long clips, where forward kinematics was the largest single cost of scoring.
    Clips up to :data:`MATRIX_FK_MAX_FRAMES` frames go through rotation matrices laid out the same
    way instead.
    """
    parents = motion.skeleton.parents
    q = np.ascontiguousarray(np.asarray(motion.rotations, dtype=np.float64).transpose(2, 1, 0))  # (4, J, F)
    q /= np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])  # unit, as quat.to_matrix does
    t = np.ascontiguousarray(np.asarray(motion.translations, dtype=np.float64).transpose(2, 1, 0))  # (3, J, F)
    inner = np.zeros(len(parents), dtype=bool)
    inner[parents[parents >= 0]] = True
    if q.shape[2] <= MATRIX_FK_MAX_FRAMES:
        return _positions_by_matrices(q, t, parents, inner)
    world = np.empty_like(q)
    pos = np.empty_like(t)
    roots = np.flatnonzero(parents < 0)
    world[:, roots] = q[:, roots]
    pos[:, roots] = t[:, roots]
    for joints, par in depth_levels(parents):
        parent = world[:, par]
        u, w = parent[:3], parent[3]  # vector and scalar parts of the parents' world rotations
        u1, u2 = u[_NEXT], u[_AFTER]  # cross products as u1 * b2 - u2 * b1, one array op each
        v = t[:, joints]
        # v rotated by the parent's world rotation: v + w s + u x s with s = 2 u x v
        s = 2 * (u1 * v[_AFTER] - u2 * v[_NEXT])
        pos[:, joints] = pos[:, par] + v + w * s + (u1 * s[_AFTER] - u2 * s[_NEXT])
        need = inner[joints]
        if not need.any():
            continue
        if not need.all():
            u, w, u1, u2 = u[:, need], w[need], u1[:, need], u2[:, need]
        kids = joints[need]
        b = q[:, kids]  # Hamilton product: the parent's world rotation, then the local one
        bv, bw = b[:3], b[3]
        world[:3, kids] = w * bv + bw * u + (u1 * bv[_AFTER] - u2 * bv[_NEXT])
        world[3, kids] = w * bw - (u[0] * bv[0] + u[1] * bv[1] + u[2] * bv[2])
    return np.ascontiguousarray(pos.transpose(2, 1, 0))


def end_site_positions(motion: Motion) -> dict[int, np.ndarray]:
    """World positions of end sites: joint index -> ``(frames, 3)`` metres."""
    pos, rot = forward_kinematics(motion)
    return {
        j: pos[:, j] + rot[:, j] @ np.asarray(off)
        for j, off in motion.skeleton.end_sites.items()
    }


#: Clips up to this many frames are solved with rotation matrices (:func:`_positions_by_matrices`):
#: fewer array operations per level, which is what costs on short clips (25 % faster at 200
#: frames); longer clips compose quaternions, which moves less memory (20 % faster at 1,500
#: frames; measured on CMU clips of 200 to 3,261 frames, equal near 700).
MATRIX_FK_MAX_FRAMES = 600


def _positions_by_matrices(q: np.ndarray, t: np.ndarray, parents: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """:func:`global_positions` from unit quaternions ``q`` ``(4, J, F)`` and translations ``t``
    ``(3, J, F)`` through ``(3, 3, J, F)`` rotation matrices, one ``einsum`` per product over the
    contiguous frame axis."""
    x, y, z, w = q  # quat.to_matrix's formula on contiguous (J, F) components
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    r = np.empty((3, 3) + x.shape)
    r[0, 0] = xx - yy - zz + ww
    r[1, 0] = 2 * (xy + zw)
    r[2, 0] = 2 * (xz - yw)
    r[0, 1] = 2 * (xy - zw)
    r[1, 1] = -xx + yy - zz + ww
    r[2, 1] = 2 * (yz + xw)
    r[0, 2] = 2 * (xz + yw)
    r[1, 2] = 2 * (yz - xw)
    r[2, 2] = -xx - yy + zz + ww
    world = np.empty_like(r)
    pos = np.empty_like(t)
    roots = np.flatnonzero(parents < 0)
    world[:, :, roots] = r[:, :, roots]
    pos[:, roots] = t[:, roots]
    for joints, par in depth_levels(parents):
        rp = world[:, :, par]
        pos[:, joints] = pos[:, par] + np.einsum("ijkf,jkf->ikf", rp, t[:, joints])
        need = inner[joints]
        if need.any():
            world[:, :, joints[need]] = np.einsum("ijkf,jlkf->ilkf", rp[:, :, need], r[:, :, joints[need]])
    return np.ascontiguousarray(pos.transpose(2, 1, 0))
