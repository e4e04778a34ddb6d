"""Vectorised quaternion helpers (scalar-last ``(x, y, z, w)``, scipy's order).

scipy's :class:`~scipy.spatial.transform.Rotation` does conversions; these few functions exist
because evalkit needs them on ``(frames, joints, 4)`` arrays at once (slerp between two arrays
element-wise, sign-continuity), which scipy's ``Slerp`` (one key sequence at a time) does not do.
"""

from __future__ import annotations

import numpy as np


def to_matrix(q: np.ndarray) -> np.ndarray:
    """``(..., 4)`` quaternions -> ``(..., 3, 3)`` rotation matrices."""
    # written out (normalising like scipy's Rotation.from_quat) so that reading and solving a
    # clip needs no scipy.spatial import, a third of a second at every command's start
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    xx, yy, zz, ww = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = xx - yy - zz + ww
    out[..., 1, 0] = 2 * (xy + zw)
    out[..., 2, 0] = 2 * (xz - yw)
    out[..., 0, 1] = 2 * (xy - zw)
    out[..., 1, 1] = -xx + yy - zz + ww
    out[..., 2, 1] = 2 * (yz + xw)
    out[..., 0, 2] = 2 * (xz + yw)
    out[..., 1, 2] = 2 * (yz - xw)
    out[..., 2, 2] = -xx - yy + zz + ww
    return out


def from_matrix(m: np.ndarray) -> np.ndarray:
    """``(..., 3, 3)`` rotation matrices -> ``(..., 4)`` quaternions."""
    from scipy.spatial.transform import Rotation

    m = np.asarray(m, dtype=np.float64)
    flat = m.reshape(-1, 3, 3)
    return Rotation.from_matrix(flat).as_quat().reshape(m.shape[:-2] + (4,))


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` (apply ``b`` then ``a``), broadcasting over leading axes."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, dtype=np.float64), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, dtype=np.float64), -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def inverse(q: np.ndarray) -> np.ndarray:
    """Conjugate of unit quaternions."""
    out = np.array(q, dtype=np.float64, copy=True)
    out[..., :3] *= -1
    return out


def normalize(q: np.ndarray) -> np.ndarray:
    q = np.asarray(q, dtype=np.float64)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def make_continuous(q: np.ndarray, axis: int = 0) -> np.ndarray:
    """Flip signs so consecutive quaternions along ``axis`` lie in the same hemisphere."""
    q = np.moveaxis(np.array(q, dtype=np.float64, copy=True), axis, 0)
    if q.shape[0] > 1:
        dots = np.sum(q[1:] * q[:-1], axis=-1)
        flips = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
        q[1:] *= flips[..., None]
    return np.moveaxis(q, 0, axis)


def slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Spherical linear interpolation, element-wise over broadcast leading axes.

    ``t`` in [0, 1] broadcasts against ``q0[..., 0]``; shortest arc is taken.
    """
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot)
    dot = np.clip(dot, -1.0, 1.0)
    theta = np.arccos(dot)
    sin = np.sin(theta)
    small = sin < 1e-6
    safe = np.where(small, 1.0, sin)
    w0 = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(small, t, np.sin(t * theta) / safe)
    return normalize(w0 * q0 + w1 * q1)


def rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors ``v (..., 3)`` by quaternions ``q (..., 4)`` (broadcasting)."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def about_y(angle: np.ndarray | float) -> np.ndarray:
    """Quaternions of rotations by ``angle`` radians about +Y, shape ``angle.shape + (4,)``."""
    a = np.asarray(angle, dtype=np.float64) / 2.0
    z = np.zeros_like(a)
    return np.stack([z, np.sin(a), z, np.cos(a)], axis=-1)


def euler_to_quat(angles_deg: np.ndarray, order: str) -> np.ndarray:
    """Intrinsic Euler angles (degrees, ``(..., 3)`` in ``order``, e.g. ``"ZXY"``) -> quaternions.

    BVH ``CHANNELS ... Zrotation Xrotation Yrotation`` means ``R = Rz @ Rx @ Ry``, which is the
    intrinsic sequence ``"ZXY"``. Written out (product of three elemental half-angle
    quaternions) rather than through scipy, because it runs on every joint of every frame at
    load time and the closed form is several times faster on ``(frames, joints)`` arrays.
    """
    a = np.radians(np.asarray(angles_deg, dtype=np.float64)) * 0.5
    order = order.upper()
    out = None
    for k, axis in enumerate(order):
        e = np.zeros(a.shape[:-1] + (4,))
        e[..., "XYZ".index(axis)] = np.sin(a[..., k])
        e[..., 3] = np.cos(a[..., k])
        out = e if out is None else multiply(out, e)
    return out


def quat_to_euler(q: np.ndarray, order: str) -> np.ndarray:
    """Quaternions -> intrinsic Euler angles in degrees in ``order`` (``(..., 3)``)."""
    from scipy.spatial.transform import Rotation

    q = np.asarray(q, dtype=np.float64)
    flat = q.reshape(-1, 4)
    import warnings

    with warnings.catch_warnings():
        # Gimbal-lock warnings: the returned angles still represent the rotation exactly.
        warnings.simplefilter("ignore", UserWarning)
        e = Rotation.from_quat(flat).as_euler(order.upper(), degrees=True)
    return e.reshape(q.shape[:-1] + (3,))
