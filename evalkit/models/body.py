"""A rig-independent view of a clip: the semantic role joints, body height, heading, limbs.

Everything the discriminator computes goes through this view, so that a model trained on one rig
(CMU's 31 joints) can score another (Reallusion's 100, Bandai Namco's 22): only the 18 roles of
:data:`evalkit.motion.ROLE_NAMES` are used, lengths are divided by the body height, and poses are
expressed as unit bone directions in the body's heading frame (independent of bone lengths and of
where a rig puts its joint centres).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.motion import ROLE_NAMES, Motion, find_roles, skeleton_height

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
    from evalkit.errors import InputError

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
