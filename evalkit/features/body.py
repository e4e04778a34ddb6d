"""The body of a clip: which joints are its roles, how big it is, and a rig-independent view.

Two views, both built on :func:`evalkit.motion.find_roles` and :func:`evalkit.motion.skeleton_height`:

* :class:`BodyIndex` (:func:`body_index`): the joint indices of the roles the per-clip metrics
  need (feet, legs, trunk, arms) and the body height; :attr:`BodyIndex.scale` turns thresholds
  stated for the reference body of :data:`REFERENCE_HEIGHT_M` into thresholds for this skeleton.
* :class:`Body` (:func:`body_of`): the world positions of the 18 roles of
  :data:`evalkit.motion.ROLE_NAMES`, with heading, bone directions and limbs. Everything the
  discriminator (:mod:`evalkit.models`) computes goes through it, so a model trained on one rig
  (CMU's 31 joints) can score another (Reallusion's 100, Bandai Namco's 22): only the roles are
  used, lengths are divided by the body height, and poses are expressed as unit bone directions
  in the body's heading frame (independent of bone lengths and of where a rig puts its joint
  centres).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from evalkit.errors import InputError, RolesNotFoundError
from evalkit.motion import ROLE_NAMES, Motion, find_roles, skeleton_height

#: Body height (metres) of the reference body at which the metric thresholds are stated
#: (docs/metrics.md): a threshold is multiplied by ``height / REFERENCE_HEIGHT_M``.
REFERENCE_HEIGHT_M = 1.75
#: Body height (metres) that gesture analysis rescales hand positions to
#: (:mod:`evalkit.gesture.trajectory`) and at which the corruption amplitudes of the
#: discriminator's training data are stated (:mod:`evalkit.models.corruptions`). It is not
#: :data:`REFERENCE_HEIGHT_M` because the gesture phase thresholds, the default GSI calibration
#: and the shipped discriminator were fitted at 1.70 m: moving it would change their outputs.
NORMALISED_HEIGHT_M = 1.70
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


def hand_joints(parents: np.ndarray, roles: Mapping[str, int]) -> np.ndarray:
    """Joints below either wrist (fingers, hand ends), sorted: kept apart from the body's joints
    by the kinematic metrics, since a hand holds up to 15 joints of noisier capture (SMPL-H and
    SMPL-X: 30 of 52/55 joints) and would otherwise set the clip's figure.

    Args:
        parents: ``(joints,)`` parent indices (-1 for a root).
        roles: ``{role: joint index}`` (:func:`evalkit.motion.find_roles`); without wrist roles
            no joint is a hand joint.

    Returns:
        ``(H,)`` joint indices (empty when nothing hangs below the wrists).
    """
    wrists = {roles[r] for r in ("left_wrist", "right_wrist") if r in roles}
    below = np.zeros(len(parents), dtype=bool)
    for j in range(len(parents)):  # parents come before children in evalkit's skeletons
        p = int(parents[j])
        below[j] = p >= 0 and (p in wrists or below[p])
    return np.flatnonzero(below)


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


# -- the rig-independent view of the discriminator --------------------------------------
#: Bones between roles whose directions describe a pose (parent role, child role).
BONES: tuple[tuple[str, str], ...] = (
    ("hips", "neck"),  # not hips->spine: CMU's lower-back joint sits on the hips

    ("neck", "head"),
    ("left_shoulder", "right_shoulder"),
    ("left_shoulder", "left_elbow"),
    ("left_elbow", "left_wrist"),
    ("right_shoulder", "right_elbow"),
    ("right_elbow", "right_wrist"),
    ("left_hip", "right_hip"),
    ("left_hip", "left_knee"),
    ("left_knee", "left_ankle"),
    ("left_ankle", "left_toe"),
    ("right_hip", "right_knee"),
    ("right_knee", "right_ankle"),
    ("right_ankle", "right_toe"),
)

#: Body parts as role lists (used for per-part statistics and by the Ren-style baseline).
PARTS: dict[str, tuple[str, ...]] = {
    "trunk": ("hips", "spine", "neck", "head"),
    "left_arm": ("left_shoulder", "left_elbow", "left_wrist"),
    "right_arm": ("right_shoulder", "right_elbow", "right_wrist"),
    "left_leg": ("left_hip", "left_knee", "left_ankle", "left_toe"),
    "right_leg": ("right_hip", "right_knee", "right_ankle", "right_toe"),
}

#: Limbs that corruptions act on: the role whose subtree (the role joint and all its
#: descendants) is the limb.
LIMB_ROOTS: dict[str, str] = {
    "left_arm": "left_shoulder",
    "right_arm": "right_shoulder",
    "left_leg": "left_hip",
    "right_leg": "right_hip",
    "head": "neck",
}

ROLE_INDEX = {r: i for i, r in enumerate(ROLE_NAMES)}
FOOT_ROLES = ("left_ankle", "left_toe", "right_ankle", "right_toe")


@dataclass(frozen=True, eq=False)
class Body:
    """Role-joint positions of a clip.

    Attributes:
        positions: ``(frames, 18, 3)`` world positions of the roles in :data:`ROLE_NAMES` order,
            metres, Y-up.
        height: standing height, metres (:func:`evalkit.motion.skeleton_height`).
        fps: frames per second.
    """

    positions: np.ndarray
    height: float
    fps: float

    @property
    def n_frames(self) -> int:
        return int(self.positions.shape[0])

    def role(self, name: str) -> np.ndarray:
        """``(frames, 3)`` world position of one role, metres."""
        return self.positions[:, ROLE_INDEX[name]]


def body_of(motion: Motion, roles: dict[str, int] | None = None) -> Body:
    """The :class:`Body` of a motion (raises :class:`RolesNotFoundError` if roles are missing)."""
    roles = roles or find_roles(motion.skeleton, strict=True)
    idx = [roles[r] for r in ROLE_NAMES]
    return Body(positions=np.asarray(motion.positions[:, idx]), height=skeleton_height(motion), fps=motion.fps)


def heading(positions: np.ndarray) -> np.ndarray:
    """``(frames,)`` yaw of the body's forward direction about +Y, radians.

    Forward is ``up x right`` with ``right`` the horizontal vector from the left to the right
    hip (averaged with the shoulders' for robustness). ``positions``: ``(frames, 18, 3)``.
    """
    right = (positions[:, ROLE_INDEX["right_hip"]] - positions[:, ROLE_INDEX["left_hip"]]) + (
        positions[:, ROLE_INDEX["right_shoulder"]] - positions[:, ROLE_INDEX["left_shoulder"]]
    )
    # forward = up x right = (0,1,0) x (rx, ry, rz) = (rz, 0, -rx)
    fx, fz = right[:, 2], -right[:, 0]
    return np.arctan2(fx, fz)


def to_heading_frame(vectors: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """Rotate ``(frames, ..., 3)`` vectors by ``-yaw`` about +Y (body-forward becomes +Z)."""
    c = np.cos(-yaw).reshape((-1,) + (1,) * (vectors.ndim - 2))
    s = np.sin(-yaw).reshape((-1,) + (1,) * (vectors.ndim - 2))
    x, y, z = vectors[..., 0], vectors[..., 1], vectors[..., 2]
    return np.stack([c * x + s * z, y, -s * x + c * z], axis=-1)


def bone_vectors(positions: np.ndarray) -> np.ndarray:
    """``(frames, bones, 3)`` child-minus-parent vectors of :data:`BONES`, metres."""
    a = [ROLE_INDEX[p] for p, _ in BONES]
    b = [ROLE_INDEX[c] for _, c in BONES]
    return positions[:, b] - positions[:, a]


def bone_directions(positions: np.ndarray) -> np.ndarray:
    """``(frames, bones, 3)`` unit bone directions in the heading frame (pose, length-free)."""
    v = to_heading_frame(bone_vectors(positions), heading(positions))
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-9)


def limb_joints(motion: Motion, limb: str, roles: dict[str, int] | None = None) -> list[int]:
    """Joint indices of a limb (its root role joint and all descendants).

    ``limb`` is one of :data:`LIMB_ROOTS`; for ``"head"`` the arms are excluded when a rig hangs
    them below the neck.
    """
    if limb not in LIMB_ROOTS:
        raise InputError(f"unknown limb {limb!r}; expected one of {', '.join(LIMB_ROOTS)}")
    roles = roles or find_roles(motion.skeleton, strict=True)
    sk = motion.skeleton
    root = roles[LIMB_ROOTS[limb]]
    joints = [root] + sk.descendants(root)
    if limb == "head":
        arms: set[int] = set()
        for side in ("left", "right"):
            s = roles[f"{side}_shoulder"]
            arms.update([s] + sk.descendants(s))
            # a clavicle between the neck and the shoulder belongs to the arm too
            p = sk.parents[s]
            while p >= 0 and p != root and p in joints:
                arms.add(int(p))
                p = sk.parents[p]
        joints = [j for j in joints if j not in arms]
    return sorted(joints)
