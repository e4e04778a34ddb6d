"""Blending poses for transitions: ease-in/out weights, slerp, root alignment, time sampling.

Used by the SMG and BPMG synthesis and reusable for any graph whose edges blend two clips:

* :func:`ease` — Kovar et al.'s C1 weight ``2 t^3 - 3 t^2 + 1`` going from 1 (origin) to 0
  (target) over the window.
* :func:`sample` — a clip at fractional frames (slerp of neighbouring rotations, linear
  translations), for time-scaled paths.
* :func:`transform_root` — move a clip's root by a rigid 2-D transform (rotation about +Y and a
  ground-plane shift), the alignment found by :mod:`evalkit.synth.distance`.
* :func:`blend_poses` — per-joint slerp of rotations and lerp of translations with a weight per
  frame (and optionally per joint).
* :func:`blend_clips` — a complete transition ``A[i:i+k] -> B[j:j+k]`` as a new clip.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import quat
from evalkit.motion.model import Motion


def ease(t: np.ndarray | float) -> np.ndarray:
    """Weight of the origin pose at normalised time ``t`` in [0, 1]: ``2 t^3 - 3 t^2 + 1``.

    1 at ``t = 0``, 0 at ``t = 1``, zero slope at both ends (continuous velocity).
    """
    t = np.clip(np.asarray(t, dtype=np.float64), 0.0, 1.0)
    return 2.0 * t**3 - 3.0 * t**2 + 1.0


def window_weights(k: int) -> np.ndarray:
    """``(k,)`` origin weights for a ``k``-frame blend: ``ease((p + 1) / (k + 1))`` for p = 0..k-1.

    Neither end is exactly 0 or 1, so the first blended frame already moves towards the target
    and the last one still carries a little of the origin; the frame after the window is pure
    target.
    """
    if k < 1:
        raise InputError(f"blend window must be at least 1 frame, got {k}")
    return ease((np.arange(k) + 1.0) / (k + 1.0))


def sample(motion: Motion, frames: np.ndarray, joints: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pose arrays of ``motion`` at fractional frame indices.

    Args:
        motion: the clip.
        frames: ``(n,)`` frame indices (floats allowed), clipped to ``[0, frames - 1]``.
        joints: optional ``(m,)`` joint indices to sample (default all).

    Returns:
        ``(rotations (n, m, 4), translations (n, m, 3))`` local values; rotations interpolated
        by slerp, translations linearly (metres).
    """
    f = np.clip(np.asarray(frames, dtype=np.float64), 0.0, motion.n_frames - 1)
    i0 = np.floor(f).astype(np.int64)
    i1 = np.minimum(i0 + 1, motion.n_frames - 1)
    w = f - i0
    jsel = slice(None) if joints is None else np.asarray(joints, dtype=np.int64)
    r0 = motion.rotations[i0][:, jsel]
    r1 = motion.rotations[i1][:, jsel]
    t0 = motion.translations[i0][:, jsel]
    t1 = motion.translations[i1][:, jsel]
    exact = w == 0.0
    rot = r0.copy()
    if not exact.all():
        m = ~exact
        rot[m] = quat.slerp(r0[m], r1[m], np.broadcast_to(w[m, None], r0[m].shape[:2]))
    tr = t0 + (t1 - t0) * w[:, None, None]
    return rot, tr


def transform_root(rotations: np.ndarray, translations: np.ndarray, theta: float, tx: float, tz: float) -> tuple[np.ndarray, np.ndarray]:
    """Apply a rigid 2-D transform (rotate ``theta`` radians about +Y, shift ``(tx, 0, tz)``
    metres) to the root joint (index 0) of ``(n, joints, 4)`` / ``(n, joints, 3)`` pose arrays.

    Returns new arrays; the inputs are not modified.
    """
    rot = np.array(rotations, dtype=np.float64, copy=True)
    tr = np.array(translations, dtype=np.float64, copy=True)
    q = quat.about_y(theta)
    rot[:, 0] = quat.multiply(q, rot[:, 0])
    c, s = np.cos(theta), np.sin(theta)
    x, z = tr[:, 0, 0].copy(), tr[:, 0, 2].copy()
    tr[:, 0, 0] = c * x + s * z + tx
    tr[:, 0, 2] = -s * x + c * z + tz
    return rot, tr


def compose_2d(first: tuple[float, float, float], second: tuple[float, float, float]) -> tuple[float, float, float]:
    """The 2-D transform "apply ``second``, then ``first``" as one ``(theta, tx, tz)``."""
    t1, x1, z1 = first
    t2, x2, z2 = second
    c, s = np.cos(t1), np.sin(t1)
    return (t1 + t2, c * x2 + s * z2 + x1, -s * x2 + c * z2 + z1)


def blend_poses(
    rot_a: np.ndarray,
    tr_a: np.ndarray,
    rot_b: np.ndarray,
    tr_b: np.ndarray,
    weight_a: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Blend two pose sequences.

    Args:
        rot_a, rot_b: ``(n, joints, 4)`` local rotations.
        tr_a, tr_b: ``(n, joints, 3)`` local translations, metres.
        weight_a: ``(n,)`` or ``(n, joints)`` weight of A in [0, 1] (1 = all A).

    Returns:
        ``(rotations, translations)`` blended by slerp / lerp.
    """
    wa = np.asarray(weight_a, dtype=np.float64)
    if wa.ndim == 1:
        wa = np.broadcast_to(wa[:, None], rot_a.shape[:2])
    rot = quat.slerp(rot_a, rot_b, 1.0 - wa)
    tr = tr_a * wa[..., None] + tr_b * (1.0 - wa[..., None])
    return rot, tr


def blend_clips(a: Motion, b: Motion, i: int, j: int, k: int, align: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> Motion:
    """The ``k``-frame transition from ``a`` at frame ``i`` into ``b`` at frame ``j``.

    ``b`` is first moved by ``align`` (``(theta, tx, tz)``, see :func:`transform_root`) so that its
    window lies on ``a``'s. Returns ``k`` frames: frame ``p`` blends ``a[i + p]`` and
    ``b[j + p]`` with weight :func:`window_weights` on ``a``.
    """
    if i < 0 or j < 0 or i + k > a.n_frames or j + k > b.n_frames:
        raise InputError(f"transition window {i}..{i + k} / {j}..{j + k} outside the clips ({a.n_frames}, {b.n_frames} frames)")
    ra, ta = a.rotations[i:i + k], a.translations[i:i + k]
    rb, tb = transform_root(b.rotations[j:j + k], b.translations[j:j + k], *align)
    rot, tr = blend_poses(ra, ta, rb, tb, window_weights(k))
    return replace(a, rotations=rot, translations=tr, name=f"{a.name}->{b.name}", meta={})
