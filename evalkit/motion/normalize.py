"""Bring a freshly read motion to evalkit's conventions: metres and Y-up."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

import numpy as np

from evalkit.motion import quat
from evalkit.motion.model import Motion
from evalkit.motion.formats.limits import warn_clip
from evalkit.motion.units import (
    body_extent,
    detect_unit,
    detect_up,
    up_share,
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


#: Larger than any body (m across) or capture volume (m from the origin): beyond these the file
#: or ``--units`` is wrong, and metrics would only allocate absurd grids or overflow.
MAX_BODY_M = 50.0
#: Extent (m) of a human body in any pose; with an explicit unit outside it, a warning.
PLAUSIBLE_BODY_M = (0.9, 3.5)
MAX_REACH_M = 1e5


def _check_size(motion: Motion, explicit: bool, pos: np.ndarray | None = None) -> None:
    """Refuse a motion that is not body-sized once in metres (see :data:`MAX_BODY_M`); ``pos``:
    the world positions of :func:`_sample` of ``motion`` when already solved."""
    from evalkit.errors import FileFormatError, InputError
    from evalkit.motion.fk import global_positions

    pos = global_positions(_sample(motion)) if pos is None else pos
    body = float(body_extent(pos).max()) if pos.size else 0.0
    reach = float(np.abs(pos).max()) if pos.size else 0.0
    if body <= MAX_BODY_M and reach <= MAX_REACH_M:
        if explicit and not PLAUSIBLE_BODY_M[0] <= body <= PLAUSIBLE_BODY_M[1]:
            import warnings

            source = motion.meta.get("source")
            # warn_explicit without a registry: shown for every clip, not once per call site
            warnings.warn_explicit(f"{source + ': ' if source else ''}the body is {body:.2f} m across with "
                                   f"units of {motion.meta.get('units')}; a person is about 1.5-2 m tall: "
                                   "check --units (or leave it out to detect the unit)",
                                   UserWarning, str(source or "<motion>"), 0)
        return
    what = (f"the body is {body:.3g} m across" if body > MAX_BODY_M
            else f"joints are {reach:.3g} m from the origin")
    unit = motion.meta.get("units")
    source = motion.meta.get("source")
    if explicit:
        raise InputError(f"{source + ': ' if source else ''}{what} with units of {unit}; "
                         "expected a body about 1.7 m tall, check --units")
    raise FileFormatError(source, None, f"{what} in metres (units detected: {unit}); expected a "
                                        "body about 1.7 m tall; the file's lengths are implausible")


def normalize_motion(motion: Motion, units: str | float = "auto", up: str = "auto",
                     roles: Mapping[str, str] | None = None) -> Motion:
    """Scale to metres and rotate to Y-up. ``units`` / ``up`` as in :func:`read_bvh`; ``roles``
    (a role map, :func:`~evalkit.motion.roles.load_role_map`) names the head and feet that the
    up axis is detected from, is checked against the skeleton, and is kept on it
    (:attr:`~evalkit.motion.Skeleton.roles`).

    The chosen unit and the file's up axis are recorded in ``motion.meta``
    (``units``, ``unit_scale``, ``up_axis``, and whether each was ``detected``).
    """
    from evalkit.motion.fk import global_positions
    from evalkit.motion.roles import find_roles

    meta = dict(motion.meta)
    resolved = resolve_unit(units)
    raw_pos = None
    if resolved is None:
        raw_pos = global_positions(_sample(motion))
        unit_name, scale = detect_unit(raw_pos)
        meta["units_detected"] = True
    else:
        unit_name, scale = resolved
        meta["units_detected"] = False
    meta["units"] = unit_name
    meta["unit_scale"] = scale
    skeleton = motion.skeleton.scaled(scale)
    motion = replace(motion, skeleton=skeleton, translations=motion.translations * scale, meta=meta)
    # solved once for the size and up-axis checks: positions are linear in the translations, so
    # those solved to detect the unit only scale (short clips paid a second solve for them)
    sample_pos = raw_pos * scale if raw_pos is not None else global_positions(_sample(motion))
    _check_size(motion, resolved is not None, sample_pos)

    parsed = parse_up(up)
    if parsed is None:
        found = find_roles(skeleton, overrides=roles, strict=False)
        head = found.get("head")
        feet = [found[r] for r in ("left_ankle", "right_ankle", "left_toe", "right_toe") if r in found]
        axis, sign = detect_up(sample_pos, head, feet)
        meta["up_detected"] = True
    else:
        axis, sign = parsed
        meta["up_detected"] = False
        if roles:
            find_roles(skeleton, overrides=roles, strict=False)  # a joint the map names must exist
    meta["up_axis"] = up_name(axis, sign)
    if parsed is None and head is not None and feet:
        share = up_share(sample_pos, head, feet, axis)
        if share < MIN_UP_SHARE:
            warn_clip(motion.meta.get("source"),
                      f"up axis detected as {meta['up_axis']}, but the head is not above the feet along any "
                      f"axis (only {share:.0%} of the feet-to-head direction lies along {meta['up_axis']}): "
                      "not a standing human clip? Pass --up with the file's up axis if this is wrong")
    if roles:  # the clip keeps its role map, so later operations find the same roles
        motion = replace(motion, skeleton=replace(motion.skeleton, roles=dict(roles)))
    if not (axis == 1 and sign > 0):
        q = up_conversion(axis, sign)
        rot = motion.rotations.copy()
        tr = motion.translations.copy()
        rot[:, 0] = quat.multiply(q, rot[:, 0])
        tr[:, 0] = quat.rotate(q, tr[:, 0])
        motion = replace(motion, rotations=rot, translations=tr)
    motion = replace(motion, meta=meta)
    if resolved is None:  # a unit given explicitly is checked by _check_size (with its own warning)
        _check_height(motion)
    return motion


#: Standing heights (m) of people: a clip outside them gets a warning naming ``--units``.
PLAUSIBLE_HEIGHT_M = (0.9, 2.4)
#: Least share of the feet-to-head direction along the detected up axis (else a warning).
MIN_UP_SHARE = 0.8


def _check_height(motion: Motion) -> None:
    """Warn when the body, in metres, is not a person's height (a wrong unit read silently
    scales every speed and acceleration by the same factor)."""
    from evalkit.motion.ops import skeleton_height

    h = skeleton_height(_sample(motion))
    if np.isfinite(h) and not PLAUSIBLE_HEIGHT_M[0] <= h <= PLAUSIBLE_HEIGHT_M[1]:
        warn_clip(motion.meta.get("source"),
                  f"the body is {h:.2f} m tall with units of {motion.meta.get('units')} (detected); people are "
                  f"{PLAUSIBLE_HEIGHT_M[0]:g}-{PLAUSIBLE_HEIGHT_M[1]:g} m: if the unit is wrong, pass --units "
                  "(m, cm, mm, inch or metres per file unit)")
