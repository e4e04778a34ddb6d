"""Joint topologies of the SMPL body-model family and HumanML3D, and their default rest skeleton.

Joint order and parents are those of the published models (SMPL 24, SMPL-H 52, SMPL-X 55
joints; HumanML3D keeps the first 22 SMPL joints). Roles are fixed by index here, so clips on
these skeletons need no name matching.

Default rest skeleton (used when no body-model file is given) — a T-pose in the models' own
frame (Y up, facing +Z, the body's left at +X), metres:

* **bone lengths measured from real capture**: the mean over the five CMU subjects whose ASF
  skeletons ship with evalkit (subjects 07, 09, 16, 131, 135; ``evalkit/data/samples/cmu``),
  left and right averaged — pelvis→hip 0.139, thigh 0.407, shin 0.421, foot 0.123, the three
  spine segments 0.118 / 0.117 / 0.119, lower neck 0.095, upper neck 0.095, clavicle 0.193,
  upper arm 0.291, forearm 0.195, hand 0.097 (CMU's lowerback, upperback, thorax, lowerneck,
  upperneck, clavicle, humerus, radius, wrist bones). ``tests/motion/test_topology.py``
  re-measures them from the bundled files.
* **directions set by hand** to the models' T-pose: legs vertical, feet forward and down,
  spine and neck vertical, clavicles as measured in the CMU rest pose, arms horizontal.
* **fingers** (SMPL-H, SMPL-X): segment lengths from the Reallusion CC rig of the
  ``cmu-reallusion`` data set (a character model, not a capture), flat hand, thumb forward.
* **jaw and eyes** (SMPL-X): placed by hand at typical adult head geometry (not measured).

The result is a person about 1.75 m tall. It is a stand-in: without the body model and
``betas`` of a clip, bone lengths are those of an average adult, not the clip's own.
"""

from __future__ import annotations

import numpy as np

BODY22 = (
    "pelvis", "left_hip", "right_hip", "spine1", "left_knee", "right_knee", "spine2",
    "left_ankle", "right_ankle", "spine3", "left_foot", "right_foot", "neck", "left_collar",
    "right_collar", "head", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow",
    "left_wrist", "right_wrist",
)
BODY22_PARENTS = (-1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 12, 13, 14, 16, 17, 18, 19)
_FINGERS = ("index", "middle", "pinky", "ring", "thumb")


def _hand(side: str) -> tuple[str, ...]:
    return tuple(f"{side}_{f}{k}" for f in _FINGERS for k in (1, 2, 3))


def _hand_parents(wrist: int, start: int) -> tuple[int, ...]:
    out = []
    for f in range(5):
        base = start + 3 * f
        out += [wrist, base, base + 1]
    return tuple(out)


#: name -> (joint names, parent indices)
TOPOLOGIES: dict[str, tuple[tuple[str, ...], tuple[int, ...]]] = {
    "smpl22": (BODY22, BODY22_PARENTS),
    "smpl24": (BODY22 + ("left_hand", "right_hand"), BODY22_PARENTS + (20, 21)),
    "smplh52": (BODY22 + _hand("left") + _hand("right"),
                BODY22_PARENTS + _hand_parents(20, 22) + _hand_parents(21, 37)),
    "smplx55": (BODY22 + ("jaw", "left_eye_smplhf", "right_eye_smplhf") + _hand("left") + _hand("right"),
                BODY22_PARENTS + (15, 15, 15) + _hand_parents(20, 25) + _hand_parents(21, 40)),
}
#: other names accepted for the presets (``--skeleton``)
ALIASES = {"humanml3d": "smpl22", "t2m": "smpl22", "smpl": "smpl24", "smplh": "smplh52",
           "smpl-h": "smplh52", "smplx": "smplx55", "smpl-x": "smplx55"}
#: joints in the pose vector -> topology (AMASS / BEAT2 ``poses`` has 3 values per joint)
BY_JOINT_COUNT = {22: "smpl22", 24: "smpl24", 52: "smplh52", 55: "smplx55"}

_ROLE_JOINTS = {
    "hips": "pelvis", "spine": "spine1", "neck": "neck", "head": "head",
    **{f"{s}_{p}": f"{s}_{j}" for s in ("left", "right") for p, j in (
        ("shoulder", "shoulder"), ("elbow", "elbow"), ("wrist", "wrist"), ("hip", "hip"),
        ("knee", "knee"), ("ankle", "ankle"), ("toe", "foot"))},
}
#: topology -> {role: joint index}
ROLE_INDEX: dict[str, dict[str, int]] = {
    key: {role: names.index(j) for role, j in _ROLE_JOINTS.items()} for key, (names, _) in TOPOLOGIES.items()
}


#: topology -> {role: joint name}
ROLE_JOINTS: dict[str, dict[str, str]] = {key: dict(_ROLE_JOINTS) for key in TOPOLOGIES}


def depth_first(parents) -> np.ndarray:
    """Indices of the joints in depth-first order (children in index order), the order evalkit's
    :class:`~evalkit.motion.Skeleton` and BVH files keep. The SMPL family lists joints breadth-
    first-like (``pelvis, left_hip, right_hip, spine1, ...``); readers reorder on load, writers
    back to the official order."""
    parents = [int(p) for p in parents]
    children: dict[int, list[int]] = {}
    for j, p in enumerate(parents):
        children.setdefault(p, []).append(j)
    order: list[int] = []
    stack = list(reversed(children.get(-1, [])))
    while stack:
        j = stack.pop()
        order.append(j)
        stack.extend(reversed(children.get(j, [])))
    return np.array(order, dtype=np.int64)


def resolve(name: str) -> str:
    """Canonical preset name (``"smplx"`` -> ``"smplx55"``); ``KeyError`` if unknown."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in TOPOLOGIES:
        raise KeyError(name)
    return key


def topology_of(names: tuple[str, ...]) -> str | None:
    """The preset whose joints are ``names`` (in any order: official or depth-first), or ``None``."""
    for key, (n, _) in TOPOLOGIES.items():
        if len(names) == len(n) and set(names) == set(n):
            return key
    return None


# -- default rest skeleton -------------------------------------------------------------------
_L = {  # bone lengths, metres (see the module docstring for their source)
    "pelvis_hip": 0.139, "thigh": 0.407, "shin": 0.421, "foot": 0.123,
    "spine1": 0.118, "spine2": 0.117, "spine3": 0.119, "lower_neck": 0.095, "upper_neck": 0.095,
    "clavicle": 0.193, "upper_arm": 0.291, "forearm": 0.195, "hand": 0.097,
}
_HIP_DIR = np.array([0.64, -0.72, 0.27])      # CMU root -> femur head, rest pose (mean)
_CLAV_DIR = np.array([0.935, 0.338, -0.064])  # CMU thorax end -> humerus head, rest pose (mean)
_FOOT_DIR = np.array([0.0, -0.38, 0.925])     # ankle -> ball of the foot
# finger offsets in a left hand along +X (palm down, thumb forward +Z), metres; from the
# Reallusion CC rig (knuckle offsets from the wrist joint, then the two phalanges)
_FINGER_OFF = {
    "index": [(0.110, 0.0, 0.052), (0.031, 0.0, 0.0), (0.026, 0.0, 0.0)],
    "middle": [(0.113, 0.0, 0.024), (0.042, 0.0, 0.0), (0.027, 0.0, 0.0)],
    "pinky": [(0.107, -0.005, -0.021), (0.028, 0.0, 0.0), (0.022, 0.0, 0.0)],
    "ring": [(0.113, 0.0, 0.0), (0.035, 0.0, 0.0), (0.025, 0.0, 0.0)],
    "thumb": [(0.050, -0.010, 0.052), (0.020, 0.0, 0.020), (0.026, 0.0, 0.026)],
}


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def default_offsets(topology: str) -> np.ndarray:
    """``(joints, 3)`` rest offsets of each joint from its parent (metres, Y up, facing +Z) of the
    default adult skeleton of ``topology`` (see the module docstring for their source)."""
    key = resolve(topology)
    names, _ = TOPOLOGIES[key]
    up = np.array([0.0, 1.0, 0.0])
    down = -up
    off: dict[str, np.ndarray] = {"pelvis": np.zeros(3)}
    for side, sx in (("left", 1.0), ("right", -1.0)):
        flip = np.array([sx, 1.0, 1.0])
        off[f"{side}_hip"] = _unit(_HIP_DIR) * flip * _L["pelvis_hip"]
        off[f"{side}_knee"] = down * _L["thigh"]
        off[f"{side}_ankle"] = down * _L["shin"]
        off[f"{side}_foot"] = _unit(_FOOT_DIR) * _L["foot"]
        off[f"{side}_collar"] = _unit(_CLAV_DIR) * flip * (_L["clavicle"] / 3)
        off[f"{side}_shoulder"] = _unit(_CLAV_DIR) * flip * (2 * _L["clavicle"] / 3)
        off[f"{side}_elbow"] = np.array([sx, 0.0, 0.0]) * _L["upper_arm"]
        off[f"{side}_wrist"] = np.array([sx, 0.0, 0.0]) * _L["forearm"]
        off[f"{side}_hand"] = np.array([sx, 0.0, 0.0]) * _L["hand"]
        for f, segs in _FINGER_OFF.items():
            for k, seg in enumerate(segs, start=1):
                off[f"{side}_{f}{k}"] = np.asarray(seg) * flip
        off[f"{side}_eye_smplhf"] = np.array([0.032 * sx, 0.065, 0.085])
    off["spine1"] = up * _L["spine1"]
    off["spine2"] = up * _L["spine2"]
    off["spine3"] = up * _L["spine3"]
    off["neck"] = up * _L["lower_neck"]
    off["head"] = up * _L["upper_neck"]
    off["jaw"] = np.array([0.0, -0.015, 0.025])
    return np.array([off[n] for n in names])


def default_rest_joints(topology: str) -> np.ndarray:
    """``(joints, 3)`` world rest positions of the default skeleton (pelvis at the origin)."""
    key = resolve(topology)
    _, parents = TOPOLOGIES[key]
    off = default_offsets(key)
    pos = np.zeros_like(off)
    for j, p in enumerate(parents):
        pos[j] = off[j] if p < 0 else pos[p] + off[j]
    return pos
