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

Every sum over the points of a window is a sum over its frames of per-frame sums over joints,
so all pairs come from a handful of matrix products over the joints (BLAS) summed along the
diagonals of the frame-pair matrices, in row blocks: this is why the module is hand-written
rather than a per-pair call to a library Procrustes routine (see ``bench/bench_synth_distance.py``
for the measured ratio against a per-pair loop).

Distances returned are **root-mean-square point distances in metres** (``sqrt(D / W)``), so a
threshold reads as "the windows differ by about this many metres per joint".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

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


def _window_sums(x: np.ndarray, window: int) -> np.ndarray:
    """Sums of ``window`` consecutive rows: ``(frames, ...) -> (frames - window + 1, ...)``."""
    c = np.cumsum(x, axis=0)
    out = c[window - 1:].copy()
    out[1:] -= c[:-window]
    return out


# One vectorised computation (see the module docstring and bench/bench_synth_distance.py):
# long: its length is the docstring and the blocked loop that keeps the window sums in place
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

    Every window sum of the closed form is a sum of per-frame sums: the ``(frames_a,
    frames_b)`` matrices of weighted per-frame products (one BLAS product over the joints each)
    are summed along their diagonals over ``window`` frames, and the window centroids enter
    through ``sum w p q = sum w P Q - W mean_P mean_Q``. This costs one product over the
    joints per frame pair instead of one over the joints of a whole window (``window`` times
    fewer multiplications).

    Args:
        positions_a: ``(frames_a, joints, 3)`` world joint positions of clip A, metres.
        positions_b: ``(frames_b, joints, 3)`` the same joints in clip B, metres.
        weights: ``(joints,)`` non-negative joint weights (not all zero).
        window: window length ``k`` in frames (>= 1).
        align: find the optimal rotation about +Y and ground-plane translation of B's window
            (Kovar). With ``False`` the clouds are compared as they are (use this for point
            clouds already expressed in a body-fixed frame).
        return_alignment: also return the :class:`Alignment` of every pair (needs ``align``).
        block: windows of A processed at once (bounds memory to about
            ``6 * (block + window) * frames_b`` floats).

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
    pa = np.asarray(positions_a, dtype=np.float64)
    pb = np.asarray(positions_b, dtype=np.float64)
    for name, pos in (("positions_a", pa), ("positions_b", pb)):
        if pos.ndim != 3 or pos.shape[2] != 3:
            raise InputError(f"{name} must be (frames, joints, 3), got {pos.shape}")
        if pos.shape[0] < window:
            raise InputError(f"a clip of {pos.shape[0]} frames is shorter than the {window}-frame window")
    pa, pb = pa[:, keep], pb[:, keep]
    if pa.shape[1:] != pb.shape[1:]:
        raise InputError(f"clips have different joint sets: {pa.shape[1:]} vs {pb.shape[1:]}")
    if return_alignment and not align:
        raise InputError("return_alignment needs align=True")
    wj = w[keep]
    total = float(wj.sum() * window)
    # translation-invariant when aligned: remove each clip's ground-plane centroid so the
    # uncentred sums below stay small (conditioning)
    off_a = np.zeros(3)
    off_b = np.zeros(3)
    if align:
        off_a[[0, 2]] = pa[..., [0, 2]].mean(axis=(0, 1))
        off_b[[0, 2]] = pb[..., [0, 2]].mean(axis=(0, 1))
        pa = pa - off_a
        pb = pb - off_b
    nA, nB = pa.shape[0] - window + 1, pb.shape[0] - window + 1
    # per-window weighted sums of coordinates and of squared norms
    sum_a = _window_sums(np.einsum("fnc,n->fc", pa, wj), window)  # (nA, 3)
    sum_b = _window_sums(np.einsum("fnc,n->fc", pb, wj), window)
    sq_a = _window_sums(np.einsum("fnc,n,fnc->f", pa, wj, pa), window)  # (nA,)
    sq_b = _window_sums(np.einsum("fnc,n,fnc->f", pb, wj, pb), window)
    mean_a, mean_b = sum_a / total, sum_b / total
    if align:  # centre x and z (the alignment translates in the ground plane); y stays absolute
        sq_a = sq_a - total * (mean_a[:, 0] ** 2 + mean_a[:, 2] ** 2)
        sq_b = sq_b - total * (mean_b[:, 0] ** 2 + mean_b[:, 2] ** 2)
    Bx, By, Bz = (np.ascontiguousarray(pb[..., c].T) for c in range(3))  # (joints, frames_b)

    def diag_sums(g: np.ndarray, rows: int) -> np.ndarray:
        # sum of g[i + t, j + t] over t < window by doubling: sums over 1, 2, 4, ... shifts,
        # added where the window's binary digits say (log2(window) passes, not window)
        acc, cur, width, start, left = None, g, 1, 0, window
        while True:
            if left & 1:
                part = cur[start:start + rows, start:start + nB]
                acc = part.copy() if acc is None else acc + part
                start += width
            left >>= 1
            if not left:
                return acc
            cur = cur[:-width, :-width] + cur[width:, width:]
            width *= 2

    out = np.empty((nA, nB))
    if return_alignment:
        theta = np.empty((nA, nB))
        tx = np.empty((nA, nB))
        tz = np.empty((nA, nB))
    for s in range(0, nA, block):
        e = min(nA, s + block)
        rows = e - s
        fa = pa[s:e + window - 1] * wj[None, :, None]  # frames of this block's windows
        syy = diag_sums(fa[..., 1] @ By, rows)
        if align:
            ma, mb = mean_a[s:e], mean_b
            a = (diag_sums(fa[..., 0] @ Bx, rows) + diag_sums(fa[..., 2] @ Bz, rows)
                 - total * (ma[:, None, 0] * mb[None, :, 0] + ma[:, None, 2] * mb[None, :, 2]))
            b = (diag_sums(fa[..., 0] @ Bz, rows) - diag_sums(fa[..., 2] @ Bx, rows)
                 - total * (ma[:, None, 0] * mb[None, :, 2] - ma[:, None, 2] * mb[None, :, 0]))
            cross = np.hypot(a, b) + syy
        else:
            cross = diag_sums(fa[..., 0] @ Bx, rows) + diag_sums(fa[..., 2] @ Bz, rows) + syy
        d = sq_a[s:e, None] + sq_b[None, :] - 2.0 * cross
        np.maximum(d, 0.0, out=d)  # rounding can leave tiny negatives
        out[s:e] = np.sqrt(d / total)
        if return_alignment:
            th = np.arctan2(b, a)
            c, sn = np.cos(th), np.sin(th)
            bx = mean_b[None, :, 0] + off_b[0]
            bz = mean_b[None, :, 2] + off_b[2]
            theta[s:e] = th
            tx[s:e] = mean_a[s:e, None, 0] + off_a[0] - (c * bx + sn * bz)
            tz[s:e] = mean_a[s:e, None, 2] + off_a[2] - (-sn * bx + c * bz)
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
