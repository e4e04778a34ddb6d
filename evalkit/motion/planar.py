"""Rigid motions of the ground plane (rotation about +Y, shift along X and Z): applying them
to points and to a clip's root, composing them, and the closed-form alignment of one point
cloud onto another (Kovar et al. 2002). Angles in radians, lengths in metres."""

from __future__ import annotations

import numpy as np

from evalkit.motion import quat


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


def align_2d(p: np.ndarray, q: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float, float]:
    """Optimal rigid 2-D transform of cloud ``q`` onto cloud ``p`` (one pair, closed form).

    Args:
        p, q: ``(points, 3)`` positions in metres (Y-up).
        weights: ``(points,)`` non-negative weights (default: all 1).

    Returns:
        ``(theta, tx, tz)``: rotate ``q`` by ``theta`` radians about +Y, then translate by
        ``(tx, 0, tz)`` metres (see :func:`apply_2d`).
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    w = np.ones(len(p)) if weights is None else np.asarray(weights, dtype=np.float64)
    total = w.sum()
    mp = (w @ p) / total
    mq = (w @ q) / total
    pc = p - mp
    qc = q - mq
    a = np.sum(w * (pc[:, 0] * qc[:, 0] + pc[:, 2] * qc[:, 2]))
    b = np.sum(w * (pc[:, 0] * qc[:, 2] - pc[:, 2] * qc[:, 0]))
    th = float(np.arctan2(b, a))
    c, s = np.cos(th), np.sin(th)
    tx = mp[0] - (c * mq[0] + s * mq[2])
    tz = mp[2] - (-s * mq[0] + c * mq[2])
    return th, float(tx), float(tz)


def apply_2d(points: np.ndarray, theta: float, tx: float, tz: float) -> np.ndarray:
    """Rotate ``(..., 3)`` points by ``theta`` radians about +Y, then shift by ``(tx, 0, tz)``."""
    pts = np.asarray(points, dtype=np.float64)
    c, s = np.cos(theta), np.sin(theta)
    out = pts.copy()
    out[..., 0] = c * pts[..., 0] + s * pts[..., 2] + tx
    out[..., 2] = -s * pts[..., 0] + c * pts[..., 2] + tz
    return out
