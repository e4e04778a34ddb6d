"""Which joints the metrics look at, and how big the body is.

``BodyIndex`` resolves the semantic roles a metric needs (feet, legs, trunk, arms) once per
skeleton, using :func:`evalkit.motion.find_roles`; ``body_scale`` turns thresholds given for a
reference body of 1.75 m into thresholds for this skeleton.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from evalkit.errors import RolesNotFoundError
from evalkit.motion import Motion, find_roles, skeleton_height

#: Body height (metres) at which the default thresholds are stated.
REFERENCE_HEIGHT_M = 1.75
SIDES = ("left", "right")


@dataclass(frozen=True)
class BodyIndex:
    """Joint indices of the roles used by the metrics.

    Attributes:
        roles: ``{role: joint index}`` as found by :func:`evalkit.motion.find_roles`.
        foot_points: ``(2, P)`` joint indices of the contact points of the left and right foot
            (ankle and, when present, toe; ``P`` is 1 or 2).
        height: standing height of the skeleton, metres.
    """

    roles: Mapping[str, int]
    foot_points: np.ndarray
    height: float

    @property
    def scale(self) -> float:
        """Body height relative to :data:`REFERENCE_HEIGHT_M` (dimensionless)."""
        return self.height / REFERENCE_HEIGHT_M

    @property
    def toes(self) -> np.ndarray:
        """``(2,)`` the most distal foot point of each foot (toe if present, else ankle)."""
        return self.foot_points[:, -1]


def body_index(motion: Motion, roles: Mapping[str, str] | None = None) -> BodyIndex:
    """Resolve foot points and body height for ``motion``.

    Args:
        motion: the clip.
        roles: optional ``{role: joint name}`` overrides (see :func:`evalkit.motion.find_roles`).

    Raises:
        RolesNotFoundError: if the left/right ankles (needed by every foot metric) are missing.
    """
    found = find_roles(motion.skeleton, overrides=roles, strict=False)
    needed = [f"{s}_ankle" for s in SIDES]
    missing = [r for r in needed if r not in found]
    if missing:
        find_roles(motion.skeleton, overrides=roles, required=needed, strict=True)
        raise RolesNotFoundError(f"missing roles {missing}")  # pragma: no cover - strict raised
    has_toe = all(f"{s}_toe" in found and found[f"{s}_toe"] != found[f"{s}_ankle"] for s in SIDES)
    pts = [[found[f"{s}_ankle"]] + ([found[f"{s}_toe"]] if has_toe else []) for s in SIDES]
    return BodyIndex(roles=dict(found), foot_points=np.array(pts, dtype=np.int64),
                     height=float(skeleton_height(motion)))
