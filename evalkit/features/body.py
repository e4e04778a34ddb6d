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

Both are derived once per clip and kept on it (:meth:`evalkit.motion.Motion.derived`): the roles
(:func:`roles_of`), the role positions (:func:`body_of`) and the heading (:attr:`Body.heading`)
are worked out the first time an analysis asks and shared by every later one (metrics,
naturalness, distribution features, corruptions). The body's heading is defined here once
(:func:`heading`, :func:`yaw_of_lateral`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
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
        ``(H,)`` joint indices (empty when nothing hangs below the wrists; read-only, found
        once per rig).
    """
    wrists = tuple(sorted({int(roles[r]) for r in ("left_wrist", "right_wrist") if r in roles}))
    return _hand_joints(np.asarray(parents, dtype=np.int64).tobytes(), wrists)


@lru_cache(maxsize=256)
def _hand_joints(parents_key: bytes, wrists: tuple[int, ...]) -> np.ndarray:
    parents = np.frombuffer(parents_key, dtype=np.int64)
    below = np.zeros(len(parents), dtype=bool)
    for j in range(len(parents)):  # parents come before children in evalkit's skeletons
        p = int(parents[j])
        below[j] = p >= 0 and (p in wrists or below[p])
    out = np.flatnonzero(below)
    out.setflags(write=False)
    return out


def _roles_key(roles: Mapping | None) -> tuple:
    return tuple(sorted((roles or {}).items()))


def roles_of(motion: Motion, roles: Mapping[str, str] | None = None) -> dict[str, int]:
    """``{role: joint index}`` of every role found in ``motion``'s skeleton (not strict), found
    once per clip and overrides and kept on the clip.

    Args:
        motion: the clip.
        roles: optional ``{role: joint name}`` overrides (see :func:`evalkit.motion.find_roles`).

    >>> from evalkit.data import SAMPLES_DIR
    >>> from evalkit.motion import load_motion
    >>> m = load_motion(SAMPLES_DIR / "cmu" / "01_01.bvh")
    >>> m.skeleton.names[roles_of(m)["left_ankle"]]
    'LeftFoot'
    """
    found = motion.derived(("roles", _roles_key(roles)),
                           lambda: find_roles(motion.skeleton, overrides=roles, strict=False))
    return dict(found)


def body_index(motion: Motion, roles: Mapping[str, str] | None = None) -> BodyIndex:
    """Resolve foot points and body height for ``motion``.

    Args:
        motion: the clip.
        roles: optional ``{role: joint name}`` overrides (see :func:`evalkit.motion.find_roles`).

    Raises:
        RolesNotFoundError: if the left/right ankles (needed by every foot metric) are missing.
    """
    found = roles_of(motion, roles)
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

    @cached_property
    def heading(self) -> np.ndarray:
        """``(frames,)`` yaw of the body's forward direction about +Y, radians (:func:`heading`)."""
        yaw = heading(self.positions)
        yaw.setflags(write=False)
        return yaw


def body_of(motion: Motion, roles: dict[str, int] | None = None) -> Body:
    """The :class:`Body` of a motion, built once per clip (and role map) and kept on it.

    Args:
        motion: the clip.
        roles: ``{role: joint index}`` of all 18 roles, or ``None`` to find them.

    Raises:
        RolesNotFoundError: a role is missing (the message says how to map it).

    >>> from evalkit.data import SAMPLES_DIR
    >>> from evalkit.motion import load_motion
    >>> m = load_motion(SAMPLES_DIR / "cmu" / "01_01.bvh")
    >>> b = body_of(m)
    >>> b.positions.shape[1:], b is body_of(m), b.heading.shape == (m.n_frames,)
    ((18, 3), True, True)
    """
    def build() -> Body:
        found = roles or find_roles(motion.skeleton, strict=True)
        idx = [found[r] for r in ROLE_NAMES]
        pos = np.asarray(motion.positions[:, idx])
        pos.setflags(write=False)  # shared by every analysis of the clip
        return Body(positions=pos, height=skeleton_height(motion), fps=motion.fps)

    return motion.derived(("body", _roles_key(roles)), build)


def yaw_of_lateral(lateral: np.ndarray) -> np.ndarray:
    """``(...)`` yaw about +Y, radians, of the forward direction of a body whose left-to-right
    axis is ``lateral`` (``(..., 3)``, metres or any unit): forward is ``up x lateral``, and the
    yaw grows with :func:`evalkit.motion.quat.about_y`. The one definition of a body's heading."""
    # forward = up x lateral = (0,1,0) x (lx, ly, lz) = (lz, 0, -lx)
    return np.arctan2(lateral[..., 2], -lateral[..., 0])


def heading(positions: np.ndarray, shoulders: bool = True) -> np.ndarray:
    """``(frames,)`` yaw of the body's forward direction about +Y, radians (:func:`yaw_of_lateral`).

    The left-to-right axis is the horizontal vector from the left to the right hip, with the
    shoulders' added for robustness (``shoulders=False``: the hips alone).
    ``positions``: ``(frames, 18, 3)`` role positions (:class:`Body`).
    """
    right = positions[:, ROLE_INDEX["right_hip"]] - positions[:, ROLE_INDEX["left_hip"]]
    if shoulders:
        right = right + (positions[:, ROLE_INDEX["right_shoulder"]] - positions[:, ROLE_INDEX["left_shoulder"]])
    return yaw_of_lateral(right)


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
