"""Bring a freshly read motion to evalkit's conventions: metres and Y-up."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from evalkit.motion import quat
from evalkit.motion.model import Motion
from evalkit.motion.units import (
    detect_unit,
    detect_up,
    parse_up,
    resolve_unit,
    up_conversion,
    up_name,
)


def _sample(motion: Motion, max_frames: int = 60) -> Motion:
    """A few evenly spaced frames: enough to detect units and up axis, cheap to FK."""
    if motion.n_frames <= max_frames:
        return motion
    idx = np.linspace(0, motion.n_frames - 1, max_frames).round().astype(int)
    return replace(motion, rotations=motion.rotations[idx], translations=motion.translations[idx])


def normalize_motion(motion: Motion, units: str | float = "auto", up: str = "auto") -> Motion:
    """Scale to metres and rotate to Y-up. ``units`` / ``up`` as in :func:`read_bvh`.

    The chosen unit and the file's up axis are recorded in ``motion.meta``
    (``units``, ``unit_scale``, ``up_axis``, and whether each was ``detected``).
    """
    from evalkit.motion.fk import global_positions
    from evalkit.motion.roles import find_roles

    meta = dict(motion.meta)
    resolved = resolve_unit(units)
    sample = _sample(motion)
    if resolved is None:
        unit_name, scale = detect_unit(global_positions(sample))
        meta["units_detected"] = True
    else:
        unit_name, scale = resolved
        meta["units_detected"] = False
    meta["units"] = unit_name
    meta["unit_scale"] = scale
    skeleton = motion.skeleton.scaled(scale)
    motion = replace(motion, skeleton=skeleton, translations=motion.translations * scale, meta=meta)

    parsed = parse_up(up)
    if parsed is None:
        roles = find_roles(skeleton, strict=False)
        head = roles.get("head")
        feet = [roles[r] for r in ("left_ankle", "right_ankle", "left_toe", "right_toe") if r in roles]
        axis, sign = detect_up(global_positions(_sample(motion)), head, feet)
        meta["up_detected"] = True
    else:
        axis, sign = parsed
        meta["up_detected"] = False
    meta["up_axis"] = up_name(axis, sign)
    if not (axis == 1 and sign > 0):
        q = up_conversion(axis, sign)
        rot = motion.rotations.copy()
        tr = motion.translations.copy()
        rot[:, 0] = quat.multiply(q, rot[:, 0])
        tr[:, 0] = quat.rotate(q, tr[:, 0])
        motion = replace(motion, rotations=rot, translations=tr)
    return replace(motion, meta=meta)
