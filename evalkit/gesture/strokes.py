"""Stroke features (FMDistance, velocity range, maximum velocity) and the GSI.

* ``fm_distance``: FMDistance (Onuma, Faloutsos & Hodgins 2008) between the stroke and the same
  pose held still for as long: per role joint, the kinetic energy summed over the stroke (unit
  masses, body frame, 1.70 m body), log-scaled, then the Euclidean distance of the two vectors.
  The energy vector and the distance are :func:`evalkit.features.kinetic.fm_vector` and
  :func:`~evalkit.features.kinetic.fm_distance` (the clip-level FMDistance of the scoring
  pipeline), applied to the stroke's frames; a local fallback with the same formula is used only
  if that module is unavailable.
* ``velocity_range``: maximum minus minimum speed of the faster hand within the stroke, m/s.
* ``max_velocity``: peak speed of the faster hand within the stroke, m/s.

GSI (Gesture Strength Indicator) in [0, 1]: a :class:`~evalkit.strength_scale.StrengthScale`
over the log of the three features, calibrated on real gesture capture (:data:`DEFAULT_GSI`),
or any fitted scale/classifier with ``features`` and ``strength()``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.gesture.phases import Stroke
from evalkit.gesture.trajectory import HandTrajectories

#: The thesis' three stroke features (Table 4.1).
STROKE_FEATURES = ("fm_distance", "velocity_range", "max_velocity")


def joint_kinetic_energy(positions: np.ndarray, fps: float) -> np.ndarray:
    """``(joints,)`` kinetic energy of each joint summed over frames, J per kg (unit masses).

    Args:
        positions: ``(frames, joints, 3)`` joint positions, metres.
        fps: frames per second.

    E_j = Σ_frames ½ |v_j|² · Δt with central-difference velocities. (evalkit.features.kinetic,
    when present, offers the clip-level version; strokes need it on a frame window of a clip
    whose velocities are taken on the whole clip, hence this small local function.)
    """
    pos = np.asarray(positions, dtype=float)
    if pos.shape[0] < 2:
        return np.zeros(pos.shape[1])
    v = np.gradient(pos, 1.0 / fps, axis=0)
    return 0.5 * np.sum(np.sum(v * v, axis=-1), axis=0) / fps


def stroke_fm_distance(positions: np.ndarray, fps: float, roles: dict[str, int]) -> float:
    """FMDistance between a stroke and its first pose held still (see the module docstring).

    Args:
        positions: ``(frames, joints, 3)`` the stroke's joint positions, metres.
        fps: frames per second; roles: joint roles (the FMDistance vector uses the role joints).
    """
    still = np.repeat(positions[:1], len(positions), axis=0)
    try:
        from evalkit.features.body import BodyIndex
        from evalkit.features.kinetic import fm_distance, fm_vector
    except ImportError:  # pragma: no cover - the scoring features are part of evalkit
        joints = sorted(set(roles.values()))
        e = joint_kinetic_energy(positions[:, joints], fps)
        return float(np.linalg.norm(np.log(e + 1e-6) - np.log(1e-6)))
    body = BodyIndex(roles=dict(roles), foot_points=np.zeros((2, 1), dtype=np.int64), height=1.7)  # only roles are used
    return float(fm_distance(fm_vector(positions, fps, body), fm_vector(still, fps, body)))


def stroke_features(traj: HandTrajectories, stroke: Stroke, roles: dict[str, int]) -> dict[str, float]:
    """The three features of a stroke (see the module docstring), on the 1.70 m body.

    Args:
        traj: the clip's hand trajectories; stroke: one of its strokes; roles: joint roles.
    """
    a, b = stroke.start, max(stroke.end, stroke.start + 2)
    sp = traj.speed[a:b]
    return {
        "fm_distance": stroke_fm_distance(traj.body_positions[a:b], traj.fps, roles),
        "velocity_range": float(sp.max() - sp.min()),
        "max_velocity": float(sp.max()),
    }


# Default GSI calibration: every stroke found with the default PhaseConfig in the 26 Bandai
# Namco gesture clips (../shared/data/gesture/bandai-namco, CC BY-NC 4.0; only these summary
# numbers are in the code). Reproduce with ``fit_gsi_scale`` (tests/gesture checks them).
_DEFAULT_GSI = {
    "features": ["fm_distance", "velocity_range", "max_velocity"],
    "log": ["fm_distance", "velocity_range", "max_velocity"],
    "weights": None,
    "mean": [3.2822, 0.0424, 0.2047],
    "scale": [0.1634, 0.4069, 0.3508],
    "spread": 0.8140,
    "n_reference": 100,
}


def default_gsi_scale():
    """The default GSI calibration (a fitted :class:`~evalkit.strength_scale.StrengthScale`)."""
    from evalkit.strength_scale import StrengthScale

    return StrengthScale.from_dict(_DEFAULT_GSI)


def fit_gsi_scale(features: pd.DataFrame):
    """A :class:`~evalkit.strength_scale.StrengthScale` over the log stroke features, calibrated
    on ``features`` (one row per stroke of a reference population)."""
    from evalkit.strength_scale import StrengthScale

    return StrengthScale(features=STROKE_FEATURES, log=STROKE_FEATURES).fit(features[list(STROKE_FEATURES)])
