"""Kinetic-energy features and FMDistance.

* **Kinetic features** as popularised by the AIST++ / Bailando dance-generation code (the
  "fairmotion" kinetic features; ``FID_k`` is computed on them): per joint, the average kinetic
  energy of horizontal and of vertical motion (unit mass, ``v²``, the ½ omitted as in that code)
  and the "energy expenditure" (average acceleration magnitude), where velocity and acceleration
  at each frame are averaged over a sliding window of ``±window`` frames. The widely copied
  implementation computes the previous-frame velocity inside the acceleration as
  ``p[t] - p[t-1] / dt`` — an operator-precedence bug that divides only ``p[t-1]`` by the frame
  time, so its "energy expenditure" mixes metres and metres per second. We compute
  ``(p[t] - p[t-1]) / dt``. ``bench/bench_kinetic.py`` restates the loop-style public version
  (with the bug, and with it fixed) and checks our vectorised result against the fixed loop.
* **FMDistance** (Onuma, Faloutsos & Hodgins 2008): a clip is summarised by each joint's total
  kinetic energy (unit masses), ``E_j = Σ_t ½ |v_j(t)|² Δt`` — integrated over time so that it
  does not depend on the frame rate — log-scaled; the distance between two clips is the Euclidean
  distance between these vectors. To compare clips of different rigs we use the joints of the
  semantic roles, in a fixed order (:data:`FM_ROLES`).
"""

from __future__ import annotations

import numpy as np

from evalkit.features.body import BodyIndex
from evalkit.features.signal import DEFAULT_CUTOFF_HZ, derivative, smooth_derivative
from evalkit.motion.roles import ROLE_NAMES
from evalkit.motion.vectors import norm

#: Roles whose joints make up the FMDistance vector, in this order.
FM_ROLES: tuple[str, ...] = ROLE_NAMES
_EPS = 1e-6


def kinetic_features(positions: np.ndarray, fps: float, window: int = 2, up_axis: int = 1) -> np.ndarray:
    """Per-joint kinetic features (vectorised, precedence bug fixed).

    Args:
        positions: ``(frames, joints, 3)`` metres.
        fps: frames per second.
        window: half-width of the sliding window, frames (the public code's ``sliding_window``).
        up_axis: index of the vertical axis (1 = Y-up).

    Returns:
        ``(joints, 3)``: average horizontal kinetic energy (m²/s²), average vertical kinetic
        energy (m²/s²) and average acceleration magnitude ("energy expenditure", m/s²), each
        averaged over frames ``1 … frames−1``.
    """
    p = np.asarray(positions, dtype=np.float64)
    n = p.shape[0]
    if n < 3:
        return np.full((p.shape[1], 3), np.nan)
    dt = 1.0 / fps
    i = np.arange(1, n)
    # velocity: mean of the displacements d[k] = p[k+1] - p[k], k in [i-w-1, i+w-1] ∩ [0, n-2];
    # their sum telescopes to p[hi+1] - p[lo]
    lo = np.maximum(0, i - window - 1)
    hi = np.minimum(n - 2, i + window - 1)
    v = (p[hi + 1] - p[lo]) / ((hi - lo + 1)[:, None, None] * dt)
    horiz = [a for a in range(3) if a != up_axis]
    ke_h = (norm(v[..., horiz]) ** 2).mean(axis=0)
    ke_v = (v[..., up_axis] ** 2).mean(axis=0)
    # acceleration: mean of the second differences dd[c-1] = d[c] - d[c-1] centred at c in
    # [i-w, i+w] ∩ [1, n-2]; their sum telescopes to d[hi_a+1] - d[lo_a]
    d = np.diff(p, axis=0)
    lo_a = np.maximum(1, i - window) - 1
    hi_a = np.minimum(n - 2, i + window) - 1
    cnt = hi_a - lo_a + 1
    acc = (d[np.maximum(hi_a, lo_a) + 1] - d[lo_a]) / (np.maximum(cnt, 1)[:, None, None] * dt * dt)
    acc[cnt <= 0] = 0.0
    ee = norm(acc).mean(axis=0)
    return np.stack([ke_h, ke_v, ee], axis=1)


def kinetic_metrics(positions: np.ndarray, fps: float, body: BodyIndex, window: int = 2) -> dict[str, float]:
    """Clip-level kinetic features: means over the role joints.

    Returns:
        ``kinetic_h`` and ``kinetic_v`` (m²/s²), ``energy_expenditure`` (m/s²).
    """
    joints = sorted(set(int(j) for j in body.roles.values()))
    k = kinetic_features(positions[:, joints], fps, window)
    return {"kinetic_h": float(k[:, 0].mean()), "kinetic_v": float(k[:, 1].mean()),
            "energy_expenditure": float(k[:, 2].mean())}


def fm_vector(positions: np.ndarray, fps: float, body: BodyIndex,
              cutoff_hz: float | None = DEFAULT_CUTOFF_HZ,
              smooth: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """``(len(FM_ROLES),)`` log total kinetic energy per role joint, ``log(Σ ½ v² Δt + 1e-6)``.

    Velocities are low-pass filtered derivatives (m/s). Roles missing from the skeleton are NaN.
    ``smooth``: ``(joints, (frames, len(joints), 3))`` positions of (at least) the role joints
    already low-passed at ``cutoff_hz``, metres (not filtered again).
    """
    out = np.full(len(FM_ROLES), np.nan)
    idx = [(k, body.roles[r]) for k, r in enumerate(FM_ROLES) if r in body.roles]
    if not idx:
        return out
    cols = [j for _, j in idx]
    if smooth is not None:
        at = np.searchsorted(smooth[0], cols)
        if not (at < len(smooth[0])).all() or not np.array_equal(smooth[0][at], cols):
            raise ValueError("fm_vector: smooth lacks some role joints")
        v = derivative(smooth[1][:, at], fps, 1)
    else:
        v = smooth_derivative(positions[:, cols], fps, 1, cutoff_hz)
    e = 0.5 * (norm(v) ** 2).sum(axis=0) / fps
    out[[k for k, _ in idx]] = np.log(e + _EPS)
    return out


def fm_distance(a: np.ndarray, b: np.ndarray) -> float:
    """FMDistance: Euclidean distance between two :func:`fm_vector` results (shared roles only)."""
    return float(fm_distances(a, np.asarray(b, float)[None])[0])


def fm_distances(a: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """:func:`fm_distance` of one :func:`fm_vector` ``a`` ``(D,)`` to each row of ``refs``
    ``(K, D)``, in one pass: ``(K,)`` distances (NaN where the two share no finite entry)."""
    a = np.asarray(a, float)
    refs = np.asarray(refs, float)
    ok = np.isfinite(a) & np.isfinite(refs)
    with np.errstate(invalid="ignore"):  # inf - inf where a side is not finite: masked out
        diff = np.where(ok, a - refs, 0.0)
    d = np.sqrt(np.einsum("kd,kd->k", diff, diff))
    d[~ok.any(axis=1)] = np.nan
    return d
