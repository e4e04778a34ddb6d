"""Automatic motion-quality metrics (foot contacts, skate, ground, physics, kinematics, kinetic
energy, beat alignment) and the scoring pipeline behind ``evalkit score``.

Per-frame building blocks (reused on windows by the naturalness models):

* :func:`foot_track` — foot points, filtered velocities and the per-clip ground estimate.
* :func:`foot_contacts` — ``(frames, 2)`` bool planted feet; :func:`contact_intervals`.
* :func:`skate_speed` — ``(frames, 2)`` horizontal slide speed of planted feet, m/s.
* :func:`penetration`, :func:`floating`, :func:`lowest_foot_height` — ``(frames,)`` metres.
* :func:`center_of_mass` — ``(frames, 3)``; :func:`physics_traces` — COM, ZMP, distance of the
  ZMP outside the support polygon, flight and ballistic error per frame.
* :func:`frame_traces` — all of the above as one per-frame table.

Clip-level: :func:`score_motion` returns ``{metric: value}`` for one clip.
"""

from evalkit.features.body import BodyIndex, body_index
from evalkit.features.ground import (
    FootTrack, GroundConfig, floating, foot_track, ground_metrics, lowest_foot_height, penetration,
)
from evalkit.features.contacts import ContactConfig, contact_intervals, foot_contacts
from evalkit.features.footskate import SkateConfig, skate_metrics, skate_speed, skating_ratio
from evalkit.features.physics import (
    PhysicsConfig, PhysicsTraces, center_of_mass, physics_metrics, physics_traces, zmp,
)

__all__ = [
    "BodyIndex", "body_index",
    "FootTrack", "GroundConfig", "floating", "foot_track", "ground_metrics", "lowest_foot_height",
    "penetration",
    "ContactConfig", "contact_intervals", "foot_contacts",
    "SkateConfig", "skate_metrics", "skate_speed", "skating_ratio",
    "PhysicsConfig", "PhysicsTraces", "center_of_mass", "physics_metrics", "physics_traces", "zmp",
]
