"""Length units and up axis: detection and conversion to evalkit's metres / Y-up.

Detection uses the body's size: a person's largest extent in a pose (height standing, arm span in
a T-pose) is about 1.7 m, so the unit whose scale puts the median extent closest to 1.7 m wins.
An explicit unit always overrides detection.
"""

from __future__ import annotations

import math

import numpy as np

from evalkit.errors import InputError

#: metres per file unit. ``cmu`` is the CMU ASF/cgspeed unit: inches / 0.45.
UNIT_SCALES: dict[str, float] = {
    "m": 1.0,
    "cm": 0.01,
    "mm": 0.001,
    "inch": 0.0254,
    "cmu": 0.0254 / 0.45,
}

TYPICAL_EXTENT_M = 1.7


def resolve_unit(units: str | float) -> tuple[str, float] | None:
    """``"cm"`` -> ``("cm", 0.01)``; a number is metres per unit; ``"auto"`` -> ``None``."""
    if isinstance(units, (int, float)) and not isinstance(units, bool):
        if not (units > 0 and math.isfinite(units)):
            raise InputError(f"unit scale must be a positive number of metres, got {units}")
        return (f"{units:g} m", float(units))
    key = str(units).strip().lower()
    aliases = {"meters": "m", "metres": "m", "meter": "m", "metre": "m", "centimeters": "cm",
               "centimetres": "cm", "in": "inch", "inches": "inch", "millimetres": "mm",
               "millimeters": "mm"}
    key = aliases.get(key, key)
    if key == "auto":
        return None
    if key not in UNIT_SCALES:
        raise InputError(
            f"unknown unit {units!r}; use one of auto, {', '.join(UNIT_SCALES)} or a number "
            "(metres per file unit)"
        )
    return key, UNIT_SCALES[key]


def detect_unit(positions: np.ndarray) -> tuple[str, float]:
    """Guess the file unit from ``(frames, joints, 3)`` positions in file units."""
    extent = body_extent(positions)
    med = float(np.median(extent))
    if not (med > 0 and math.isfinite(med)):
        return "m", 1.0
    best = min(UNIT_SCALES.items(), key=lambda kv: abs(math.log(kv[1] * med / TYPICAL_EXTENT_M)))
    return best


def body_extent(positions: np.ndarray) -> np.ndarray:
    """``(frames,)`` largest side of the joints' bounding box, file units. The root joint is
    left out when there are others: some rigs (Bandai Namco's ``joint_Root``) keep it at the
    origin while the hips carry the body away, and the box would measure the walk."""
    pts = positions[:, 1:] if positions.shape[1] > 1 else positions
    return np.ptp(pts, axis=1).max(axis=1)


_AXES = {"x": 0, "y": 1, "z": 2}


def parse_up(up: str) -> tuple[int, float] | None:
    """``"z"`` / ``"+z"`` / ``"-y"`` -> ``(axis, sign)``; ``"auto"`` -> ``None``."""
    key = str(up).strip().lower()
    if key == "auto":
        return None
    sign = -1.0 if key.startswith("-") else 1.0
    key = key.lstrip("+-")
    if key not in _AXES:
        raise InputError(f"unknown up axis {up!r}; use auto, x, y, z, -x, -y or -z")
    return _AXES[key], sign


def up_name(axis: int, sign: float) -> str:
    return ("-" if sign < 0 else "") + "xyz"[axis]


def detect_up(positions: np.ndarray, head: int | None, feet: list[int]) -> tuple[int, float]:
    """Up axis of ``(frames, joints, 3)`` positions: from feet to head if those roles are known,
    else the axis of the largest root-relative extent (taken as positive)."""
    if head is not None and feet:
        v = np.median(positions[:, head] - positions[:, feet].mean(axis=1), axis=0)
        axis = int(np.argmax(np.abs(v)))
        return axis, float(np.sign(v[axis]) or 1.0)
    rel = positions - positions[:, :1]
    axis = int(np.argmax(np.median(np.ptp(rel, axis=1), axis=0)))
    return axis, 1.0


def up_share(positions: np.ndarray, head: int, feet: list[int], axis: int) -> float:
    """Share (0–1) of the median feet-to-head vector's length along ``axis``: near 1 for a
    standing person, lower for a lying body or a four-legged rig."""
    v = np.median(positions[:, head] - positions[:, feet].mean(axis=1), axis=0)
    n = float(np.linalg.norm(v))
    return abs(float(v[axis])) / n if n > 0 else 0.0


def up_conversion(axis: int, sign: float) -> np.ndarray:
    """Quaternion ``(4,)`` of the rotation mapping the file's up direction onto +Y."""
    from scipy.spatial.transform import Rotation

    src = np.zeros(3)
    src[axis] = sign
    if axis == 1 and sign > 0:
        return np.array([0.0, 0.0, 0.0, 1.0])
    if axis == 1:  # upside down: half turn about X
        return np.array([1.0, 0.0, 0.0, 0.0])
    rot, _ = Rotation.align_vectors([[0.0, 1.0, 0.0]], [src])
    return rot.as_quat()
