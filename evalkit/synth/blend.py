"""Blending poses for transitions: ease-in/out weights, slerp of poses, blended clips.

Sampling a clip at fractional frames is :func:`evalkit.motion.ops.sample`; moving its root on
the ground plane, :mod:`evalkit.motion.planar`.

Used by the SMG and BPMG synthesis and reusable for any graph whose edges blend two clips:

* :func:`ease` — Kovar et al.'s C1 weight ``2 t^3 - 3 t^2 + 1`` going from 1 (origin) to 0
  (target) over the window.
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
from evalkit.motion.planar import transform_root


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
