"""Local joint rotations fitted to joint positions, so position-only clips become full `Motion`s.

Generated motion is often only joint positions (HumanML3D, MDM). Everything in evalkit that needs
rotations (resampling by slerp, mirroring, the discriminator's corruptions and features,
retargeting, the BVH the web player shows) then works on the fitted rotations.

The fit, joint by joint from the root down (vectorised over frames):

* a joint with **one child** gets the *shortest-arc* rotation that turns the child's rest bone
  direction onto its observed direction, expressed in the parent's frame. This is the twist
  convention: **no twist about the bone** relative to the parent (swing only), the rotation a
  positions-only clip cannot tell apart from any other;
* a joint with **several children** (pelvis, upper chest) gets the rotation that best aligns all
  its child bones at once (least squares over bone directions weighted by length, the Kabsch /
  Wahba solution); if the children are collinear in a frame, the shortest arc of the longest;
* a joint with **no child** (head top, wrists of HumanML3D, finger tips) keeps its parent's
  orientation (identity local rotation);
* a child that starts where its parent is (zero rest offset, e.g. CMU's hip joints and lower
  back) is looked through: its own children orient the parent.

Local translations are the exact observed bone vectors in the parent's fitted frame, so forward
kinematics gives back the input positions (to rounding, ~1e-12 m) for every joint. Where the
observed bone keeps its rest direction (every joint with one child) the translation equals the
rest offset scaled to that frame's bone length; joints whose translation strays from the rest
offset by more than :data:`STRETCH_TOL` (varying bone lengths of generated motion, children of
a multi-child joint that do not move rigidly) are given BVH position channels, so a BVH written
from the clip keeps them.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import quat
from evalkit.motion.model import Motion, Skeleton

#: metres: a joint whose fitted local translation departs further from its rest offset gets
#: position channels (see the module docstring)
STRETCH_TOL = 5e-4
_EPS = 1e-9


def shortest_arc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quaternions ``(..., 4)`` of the smallest rotations turning unit vectors ``a`` onto ``b``
    (``(..., 3)``, broadcasting). Opposite vectors: a half turn about an axis normal to ``a``
    (the one normal to ``a`` and to the coordinate axis least aligned with it)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a, b = np.broadcast_arrays(a, b)
    w = 1.0 + np.sum(a * b, axis=-1)
    xyz = np.cross(a, b)
    q = np.concatenate([xyz, w[..., None]], axis=-1)
    opposite = w < 1e-9
    if np.any(opposite):
        ao = a[opposite]
        axis_idx = np.argmin(np.abs(ao), axis=-1)
        e = np.zeros_like(ao)
        e[np.arange(len(ao)), axis_idx] = 1.0
        perp = np.cross(ao, e)
        perp /= np.linalg.norm(perp, axis=-1, keepdims=True)
        q[opposite] = np.concatenate([perp, np.zeros((len(ao), 1))], axis=-1)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return q / np.where(n < _EPS, 1.0, n)


def _best_rotation(d: np.ndarray, u: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kabsch: rotations ``(frames, 3, 3)`` minimising ``sum_k w_k |R d_k - u_k|^2`` for rest
    directions ``d (k, 3)`` and observed ``u (frames, k, 3)``; also whether each frame was
    well-posed (two non-parallel directions)."""
    b = np.einsum("k,fki,kj->fij", w, u, d)
    uu, s, vt = np.linalg.svd(b)
    det = np.sign(np.linalg.det(uu @ vt))
    det[det == 0] = 1.0
    dd = np.ones((len(b), 3))
    dd[:, 2] = det
    r = (uu * dd[:, None, :]) @ vt
    ok = s[:, 1] > 1e-6 * np.maximum(s[:, 0], _EPS)
    return r, ok


def fit_rotations(positions: np.ndarray, parents: Sequence[int], rest_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Local rotations and translations that reproduce ``positions``.

    Args:
        positions: ``(frames, joints, 3)`` world joint positions (any length unit).
        parents: ``(joints,)`` parent indices, parents before children, ``-1`` for the root.
        rest_offsets: ``(joints, 3)`` rest offset of each joint from its parent (their
            directions define the rest pose the rotations are relative to).

    Returns:
        ``rotations (frames, joints, 4)`` local unit quaternions (x, y, z, w) and
        ``translations (frames, joints, 3)`` local translations (the root's is its position).
        See the module docstring for the twist convention.
    """
    pos = np.asarray(positions, dtype=np.float64)
    parents = np.asarray(parents, dtype=np.int64)
    rest = np.asarray(rest_offsets, dtype=np.float64)
    n_f, n_j = pos.shape[:2]
    if pos.ndim != 3 or pos.shape[2] != 3 or parents.shape != (n_j,) or rest.shape != (n_j, 3):
        raise InputError(f"positions {pos.shape}, parents {parents.shape} and rest offsets {rest.shape} disagree")
    children = [np.flatnonzero(parents == j) for j in range(n_j)]

    def targets(j: int, base: np.ndarray) -> list[tuple[int, np.ndarray]]:
        # bones that orient joint j: its children, looking through zero-length children (a CMU
        # root's hip joints and lower back start where it is) to their children
        out = []
        for c in children[j]:
            vec = base + rest[c]
            if np.linalg.norm(vec) > _EPS:
                out.append((int(c), vec))
            else:
                out.extend(targets(int(c), vec))
        return out

    world = np.empty((n_f, n_j, 4))
    local = np.empty((n_f, n_j, 4))
    ident = np.array([0.0, 0.0, 0.0, 1.0])
    for j in range(n_j):
        p = parents[j]
        tg = targets(j, np.zeros(3))
        kids = [c for c, _ in tg]
        parent_q = world[:, p] if p >= 0 else np.broadcast_to(ident, (n_f, 4))
        if not kids:
            local[:, j] = ident
        else:
            vecs = np.array([v for _, v in tg])
            lens = np.linalg.norm(vecs, axis=1)
            dirs = vecs / lens[:, None]
            inv_p = quat.inverse(parent_q)
            obs = pos[:, kids] - pos[:, j:j + 1]  # (frames, k, 3) world bone vectors
            u = quat.rotate(inv_p[:, None, :], obs)  # in the parent's frame
            u_len = np.linalg.norm(u, axis=-1)
            u_dir = u / np.where(u_len < _EPS, 1.0, u_len)[..., None]
            longest = int(np.argmax(lens))
            q = shortest_arc(dirs[longest], u_dir[:, longest])
            q[u_len[:, longest] < _EPS] = ident
            if len(kids) > 1:
                r, ok = _best_rotation(dirs, u_dir, lens)
                if np.any(ok):
                    q[ok] = quat.from_matrix(r[ok])
            local[:, j] = q
        world[:, j] = quat.multiply(parent_q, local[:, j]) if p >= 0 else local[:, j]
    local = quat.make_continuous(local, axis=0)
    trans = np.empty_like(pos)
    trans[:, 0] = pos[:, 0]
    for j in range(1, n_j):
        p = parents[j]
        if p < 0:
            trans[:, j] = pos[:, j]
        else:
            trans[:, j] = quat.rotate(quat.inverse(world[:, p]), pos[:, j] - pos[:, p])
    return local, trans


def rest_offsets_from_positions(positions: np.ndarray, parents: Sequence[int],
                                directions: np.ndarray | None = None) -> np.ndarray:
    """``(joints, 3)`` rest offsets: ``directions`` (unit rest bone directions, e.g. a preset's
    T-pose) scaled to the median observed bone length; without ``directions`` the first frame's
    pose is the rest pose."""
    pos = np.asarray(positions, dtype=np.float64)
    parents = np.asarray(parents, dtype=np.int64)
    n_j = pos.shape[1]
    off = np.zeros((n_j, 3))
    for j in range(n_j):
        p = parents[j]
        if p < 0:
            continue
        bone = pos[:, j] - pos[:, p]
        if directions is None:
            off[j] = bone[0]
        else:
            length = float(np.median(np.linalg.norm(bone, axis=-1)))
            d = np.asarray(directions[j], dtype=np.float64)
            n = np.linalg.norm(d)
            off[j] = d / n * length if n > _EPS else bone[0]
    return off


def motion_from_positions(
    positions: np.ndarray,
    names: Sequence[str],
    parents: Sequence[int],
    fps: float,
    rest_directions: np.ndarray | None = None,
    name: str = "",
    meta: Mapping[str, Any] | None = None,
    roles: Mapping[str, str] | None = None,
) -> Motion:
    """A :class:`Motion` whose forward kinematics gives back ``positions``, its joints in
    depth-first order (see :func:`reorder_depth_first`).

    Args:
        positions: ``(frames, joints, 3)`` world joint positions (units and up axis as in the
            file; normalise afterwards with :func:`evalkit.motion.normalize.normalize_motion`).
        names, parents: the joint hierarchy (parents before children).
        fps: frames per second.
        rest_directions: ``(joints, 3)`` rest bone directions (a preset's T-pose); ``None``: the
            first frame is the rest pose.
        roles: role map kept on the skeleton (e.g. a preset's roles by index).
    """
    pos = np.asarray(positions, dtype=np.float64)
    offsets = rest_offsets_from_positions(pos, parents, rest_directions)
    rot, trans = fit_rotations(pos, parents, offsets)
    stretch = np.abs(trans - offsets[None]).max(axis=0).max(axis=-1) if len(trans) else np.zeros(len(names))
    rot_ch = ("Zrotation", "Xrotation", "Yrotation")
    pos_ch = ("Xposition", "Yposition", "Zposition")
    moving = [j == 0 or stretch[j] > STRETCH_TOL for j in range(len(names))]
    channels = [pos_ch + rot_ch if mv else rot_ch for mv in moving]
    offsets = offsets.copy()
    for j in range(1, len(names)):
        if moving[j] and len(trans):  # BVH readers take position channels near the OFFSET as absolute
            offsets[j] = np.median(trans[:, j], axis=0)
    sk = Skeleton(names=tuple(names), parents=np.asarray(parents), offsets=offsets, channels=channels,
                  roles=dict(roles or {}))
    return reorder_depth_first(Motion(sk, float(fps), rot, trans, name=name, meta=dict(meta or {})))


def reorder_depth_first(motion: Motion) -> Motion:
    """The clip with its joints in depth-first order (the order BVH files and evalkit's skeletons
    keep); the same clip if it already is."""
    from evalkit.motion.topology import depth_first

    sk = motion.skeleton
    order = depth_first(sk.parents)
    if np.array_equal(order, np.arange(sk.n_joints)):
        return motion
    new_index = np.empty_like(order)
    new_index[order] = np.arange(len(order))
    parents = np.array([new_index[sk.parents[o]] if sk.parents[o] >= 0 else -1 for o in order])
    end_sites = {int(new_index[j]): v for j, v in sk.end_sites.items()}
    new_sk = Skeleton(names=tuple(sk.names[o] for o in order), parents=parents, offsets=sk.offsets[order],
                      channels=[sk.channels[o] for o in order], end_sites=end_sites, roles=dict(sk.roles))
    return Motion(new_sk, motion.fps, motion.rotations[:, order], motion.translations[:, order],
                  name=motion.name, meta=dict(motion.meta))


def quaternion_positions(motion: Motion) -> np.ndarray:
    """``(frames, joints, 3)`` world positions by forward kinematics on quaternions, metres
    (:func:`evalkit.motion.fk.global_positions`, which composes quaternions on contiguous
    per-joint rows). The array readers of this package store it as the clip's cached
    :attr:`Motion.positions`.
    """
    from evalkit.motion.fk import global_positions

    return global_positions(motion)


def with_positions(motion: Motion) -> Motion:
    """``motion`` with :attr:`Motion.positions` filled in by :func:`quaternion_positions`."""
    pos = quaternion_positions(motion)
    pos.setflags(write=False)
    motion.__dict__["positions"] = pos  # what functools.cached_property stores
    return motion
