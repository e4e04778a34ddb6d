"""Frame-to-frame distance of Kovar, Gleicher & Pighin (2002), for all frame pairs at once.

The distance between frame ``i`` of clip A and frame ``j`` of clip B compares two point clouds:
the joint positions of the ``k`` frames of a window starting at ``i`` in A and at ``j`` in B.
B's cloud is first moved by the rigid 2-D transform (rotation about the vertical +Y axis and a
translation in the ground plane) that brings it closest to A's cloud in the weighted
least-squares sense; the distance is what remains.

Closed form (derived here; it is Kovar's formula written with weighted centred coordinates).
With weights ``w`` (sum ``W``), centred ground-plane coordinates ``p`` (A) and ``q`` (B) and

    a = sum w (px qx + pz qz),        b = sum w (px qz - pz qx),

the optimal rotation is ``theta = atan2(b, a)`` (rotating B by ``theta`` about +Y maps
``(x, z) -> (x cos + z sin, -x sin + z cos)``, as :func:`evalkit.motion.quat.about_y` does), the
translation maps B's weighted centroid onto A's, and the minimal weighted sum of squares is

    D = sum w (|p|^2 + |q|^2) - 2 sqrt(a^2 + b^2) + sum w (py - qy)^2.

Every sum over points is a dot product between a row of A's window matrix and a row of B's, so
all pairs come from a handful of matrix products (BLAS) computed in row blocks: this is why the
module is hand-written rather than a per-pair call to a library Procrustes routine (see
``bench/bench_synth_distance.py`` for the measured ratio against a per-pair loop).

Distances returned are **root-mean-square point distances in metres** (``sqrt(D / W)``), so a
threshold reads as "the windows differ by about this many metres per joint".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from evalkit.errors import InputError
from evalkit.motion.planar import align_2d, apply_2d


@dataclass(frozen=True)
class Alignment:
    """Rigid 2-D transforms aligning B's windows onto A's, for every pair ``(i, j)``.

    Attributes:
        theta: ``(nA, nB)`` rotation of B about +Y, radians.
        tx, tz: ``(nA, nB)`` translation of B in the ground plane after rotation, metres.
    """

    theta: np.ndarray
    tx: np.ndarray
    tz: np.ndarray


def _window_matrix(positions: np.ndarray, window: int) -> np.ndarray:
    """``(frames, joints, 3)`` -> ``(windows, 3, window * joints)`` (a copy, C-contiguous)."""
    pos = np.asarray(positions, dtype=np.float64)
    if pos.ndim != 3 or pos.shape[2] != 3:
        raise InputError(f"positions must be (frames, joints, 3), got {pos.shape}")
    if pos.shape[0] < window:
        raise InputError(f"a clip of {pos.shape[0]} frames is shorter than the {window}-frame window")
    win = sliding_window_view(pos, window, axis=0)  # (n, joints, 3, window)
    win = np.transpose(win, (0, 2, 3, 1))  # (n, 3, window, joints)
    return np.ascontiguousarray(win.reshape(win.shape[0], 3, window * pos.shape[1]))


# One vectorised computation (about 600x a per-pair loop, bench/bench_synth_distance.py):
# long: its length is the docstring and the blocked loop over window arrays it keeps in place
def point_cloud_distance(
    positions_a: np.ndarray,
    positions_b: np.ndarray,
    weights: np.ndarray,
    window: int,
    align: bool = True,
    return_alignment: bool = False,
    block: int = 1024,
) -> np.ndarray | tuple[np.ndarray, Alignment]:
    """Distance matrix between all windows of two clips.

    Args:
        positions_a: ``(frames_a, joints, 3)`` world joint positions of clip A, metres.
        positions_b: ``(frames_b, joints, 3)`` the same joints in clip B, metres.
        weights: ``(joints,)`` non-negative joint weights (not all zero).
        window: window length ``k`` in frames (>= 1).
        align: find the optimal rotation about +Y and ground-plane translation of B's window
            (Kovar). With ``False`` the clouds are compared as they are (use this for point
            clouds already expressed in a body-fixed frame).
        return_alignment: also return the :class:`Alignment` of every pair (needs ``align``).
        block: rows of A processed at once (bounds memory to ``block * windows_b`` floats).

    Returns:
        ``(frames_a - k + 1, frames_b - k + 1)`` RMS point distances in metres; entry ``[i, j]``
        compares A's window starting at frame ``i`` with B's starting at ``j``.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or np.any(w < 0) or not np.any(w > 0):
        raise InputError("joint weights must be a 1-D array of non-negative numbers, not all zero")
    if window < 1:
        raise InputError(f"window must be at least 1 frame, got {window}")
    keep = w > 0
    pa = np.asarray(positions_a, dtype=np.float64)[:, keep]
    pb = np.asarray(positions_b, dtype=np.float64)[:, keep]
    if pa.shape[1:] != pb.shape[1:]:
        raise InputError(f"clips have different joint sets: {pa.shape[1:]} vs {pb.shape[1:]}")
    if return_alignment and not align:
        raise InputError("return_alignment needs align=True")
    wv = np.tile(w[keep], window)  # (N,) weight of every point of a window (frame-major)
    total = float(wv.sum())
    A = _window_matrix(pa, window)  # (nA, 3, N)
    B = _window_matrix(pb, window)
    nA, nB = A.shape[0], B.shape[0]

    if align:
        mean_a = (A @ wv) / total  # (nA, 3)
        mean_b = (B @ wv) / total
        # Centre x and z (the alignment translates in the ground plane); y stays absolute.
        A = A.copy()
        B = B.copy()
        A[:, (0, 2)] -= mean_a[:, (0, 2), None]
        B[:, (0, 2)] -= mean_b[:, (0, 2), None]
    sq_a = np.einsum("nck,k,nck->n", A, wv, A)  # (nA,) sum w |p|^2
    sq_b = np.einsum("nck,k,nck->n", B, wv, B)
    Bx, By, Bz = B[:, 0].T, B[:, 1].T, B[:, 2].T  # (N, nB)

    out = np.empty((nA, nB))
    if return_alignment:
        theta = np.empty((nA, nB))
        tx = np.empty((nA, nB))
        tz = np.empty((nA, nB))
    for s in range(0, nA, block):
        e = min(nA, s + block)
        Ax = A[s:e, 0] * wv
        Ay = A[s:e, 1] * wv
        Az = A[s:e, 2] * wv
        if align:
            xx = Ax @ Bx
            zz = Az @ Bz
            xz = Ax @ Bz
            zx = Az @ Bx
            a = xx + zz
            b = xz - zx
            cross = np.hypot(a, b) + Ay @ By
        else:
            cross = Ax @ Bx + Ay @ By + Az @ Bz
        d = sq_a[s:e, None] + sq_b[None, :] - 2.0 * cross
        np.maximum(d, 0.0, out=d)  # rounding can leave tiny negatives
        out[s:e] = np.sqrt(d / total)
        if return_alignment:
            th = np.arctan2(b, a)
            c, sn = np.cos(th), np.sin(th)
            bx = mean_b[None, :, 0]
            bz = mean_b[None, :, 2]
            theta[s:e] = th
            tx[s:e] = mean_a[s:e, None, 0] - (c * bx + sn * bz)
            tz[s:e] = mean_a[s:e, None, 2] - (-sn * bx + c * bz)
    if return_alignment:
        return out, Alignment(theta, tx, tz)
    return out


def pair_distance(p: np.ndarray, q: np.ndarray, weights: np.ndarray | None = None, align: bool = True) -> float:
    """RMS distance (metres) of two ``(points, 3)`` clouds after :func:`align_2d` (one pair).

    The straightforward per-pair definition; :func:`point_cloud_distance` computes the same
    number for all pairs at once (tests check they agree).
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    w = np.ones(len(p)) if weights is None else np.asarray(weights, dtype=np.float64)
    if align:
        q = apply_2d(q, *align_2d(p, q, w))
    return float(np.sqrt(np.sum(w * np.sum((p - q) ** 2, axis=1)) / w.sum()))


# -- joint weights -------------------------------------------------------------------------

WEIGHT_SCHEMES = ("paths", "roles", "all")


def joint_weights(skeleton, scheme: str | Mapping[str, float] = "paths", roles: Mapping[str, int] | None = None) -> np.ndarray:
    """``(joints,)`` weights for the point-cloud distance.

    Args:
        skeleton: the :class:`~evalkit.motion.Skeleton`.
        scheme: ``"paths"`` (default): weight 1 on the 18 semantic joints (hips, spine, neck,
            head, shoulders, elbows, wrists, hips, knees, ankles, toes) and on every joint on the
            way from the root to them (CMU: clavicles, hip joints, the spine bones), 0 elsewhere
            — rigs with fingers, twist and face bones then weigh the body like a 31-joint CMU
            rig; ``"roles"``: 1 on the semantic joints only; ``"all"``: 1 on every joint; or a
            mapping ``{joint name: weight}`` (joints not named get 0).
        roles: precomputed ``find_roles`` result (optional).
    """
    from evalkit.motion.roles import find_roles

    n = skeleton.n_joints
    if isinstance(scheme, Mapping):
        w = np.zeros(n)
        for name, value in scheme.items():
            if value < 0:
                raise InputError(f"joint weight of {name!r} is negative ({value})")
            w[skeleton.index(name)] = float(value)
        if not np.any(w > 0):
            raise InputError("joint weights are all zero")
        return w
    if scheme == "all":
        return np.ones(n)
    if scheme in ("roles", "paths"):
        r = dict(roles) if roles is not None else find_roles(skeleton, strict=False)
        w = np.zeros(n)
        w[list(r.values())] = 1.0
        if scheme == "paths":
            for j in r.values():
                while j >= 0:
                    w[j] = 1.0
                    j = int(skeleton.parents[j])
        if w.sum() < 4:
            return np.ones(n)
        return w
    raise InputError(f"unknown joint weight scheme {scheme!r}; use one of {', '.join(WEIGHT_SCHEMES)} or a mapping")
