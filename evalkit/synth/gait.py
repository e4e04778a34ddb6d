"""Gait phase (stance/swing per foot) and a foot-skate measure for synthesized clips.

Contacts come from :func:`evalkit.features.contacts.foot_contacts` when that module is present
(the project's reference detector). Without it, a small rule is used here: a foot is in stance
when its ankle or toe joint is within ``height`` of its low-percentile height and moves slower
than ``speed`` (both scaled by body height; Ikemoto et al. 2006 / Kovar et al. 2002 style). The
skate measure likewise prefers :mod:`evalkit.features.footskate` and otherwise reports the mean
horizontal speed of planted feet. Each result says which implementation produced it.
"""

from __future__ import annotations

import numpy as np

from evalkit.motion.model import Motion
from evalkit.motion.ops import skeleton_height
from evalkit.motion.roles import find_roles


def _simple_contacts(motion: Motion, height: float = 0.05, speed: float = 0.4,
                     roles: dict[str, int] | None = None) -> np.ndarray:
    """``(frames, 2)`` bool stance of left/right foot with the simple height+speed rule."""
    roles = roles if roles is not None else find_roles(motion.skeleton, strict=False)
    scale = skeleton_height(motion) / 1.75
    pos = motion.positions
    out = np.zeros((motion.n_frames, 2), dtype=bool)
    for k, side in enumerate(("left", "right")):
        joints = [roles[f"{side}_{p}"] for p in ("ankle", "toe") if f"{side}_{p}" in roles]
        for j in joints:
            y = pos[:, j, 1]
            low = np.percentile(y, 5)
            v = np.zeros(motion.n_frames)
            if motion.n_frames > 1:
                v[1:] = np.linalg.norm(np.diff(pos[:, j], axis=0), axis=1) * motion.fps
                v[0] = v[1]
            out[:, k] |= (y - low < height * scale) & (v < speed * scale)
    return out


def foot_contacts(motion: Motion, roles: dict[str, int] | None = None) -> tuple[np.ndarray, str]:
    """Stance of each foot.

    Args:
        motion: the clip.
        roles: joint roles overridden by the user; then the synth rule is used with them
            (``evalkit.features`` finds its roles itself).

    Returns:
        ``(contacts, source)``: ``(frames, 2)`` bool (left, right) and the name of the detector
        used (``"evalkit.features"`` or ``"synth height+speed rule"``).
    """
    if roles is not None:
        return _simple_contacts(motion, roles=roles), "synth height+speed rule (user roles)"
    try:
        from evalkit.features.contacts import foot_contacts as _fc
    except ImportError:
        return _simple_contacts(motion), "synth height+speed rule"
    return np.asarray(_fc(motion), dtype=bool), "evalkit.features"


def skate(motion: Motion) -> dict[str, float | str]:
    """Foot-skate figures of a clip (see the module docstring for the implementation used).

    Returns a dict with ``skate_source`` and, from :mod:`evalkit.features` when available,
    ``skate_fraction``, ``skate_speed_mean`` (m/s), ``skate_distance_per_s`` (m/s),
    ``skating_ratio``; otherwise ``skate_speed_mean`` (mean horizontal speed of planted feet,
    m/s) and ``skate_fraction`` (share of planted frames sliding faster than 0.1 m/s).
    """
    try:
        from evalkit.features.footskate import skate_metrics, skating_ratio_metric
        from evalkit.features.ground import foot_track
    except ImportError:
        return _simple_skate(motion)
    track = foot_track(motion)
    out: dict[str, float | str] = {"skate_source": "evalkit.features"}
    out.update({k: float(v) for k, v in skate_metrics(track).items()})
    out.update({k: float(v) for k, v in skating_ratio_metric(track).items()})
    return out


def _simple_skate(motion: Motion) -> dict[str, float | str]:
    contacts = _simple_contacts(motion)
    roles = find_roles(motion.skeleton, strict=False)
    pos = motion.positions
    speeds = []
    for k, side in enumerate(("left", "right")):
        j = roles.get(f"{side}_toe", roles.get(f"{side}_ankle"))
        if j is None or motion.n_frames < 2:
            continue
        v = np.linalg.norm(np.diff(pos[:, j][:, [0, 2]], axis=0), axis=1) * motion.fps
        on = contacts[1:, k] & contacts[:-1, k]
        speeds.append(v[on])
    allv = np.concatenate(speeds) if speeds else np.zeros(0)
    return {
        "skate_source": "synth horizontal foot-slide (evalkit.features not available)",
        "skate_speed_mean": float(allv.mean()) if allv.size else 0.0,
        "skate_fraction": float((allv > 0.1).mean()) if allv.size else 0.0,
    }
