"""Body parts for BPMGs: kinematic chains found from joint roles, grouped by split profiles.

Thesis ch. 3 (Fig. 3.6, Table 3.1) splits the skeleton into six kinematic chains — head, trunk,
upper left, upper right, lower left, lower right — and groups them into 2 to 5 body parts with a
*split profile* (Fig. 3.13). Here the chains are derived from the semantic roles
(:func:`evalkit.motion.find_roles`), so any rig with recognisable hips, spine, head, shoulders and
hips/legs works:

* ``lower_left`` / ``lower_right``: the subtree of the highest joint on the path from the hips to
  that leg's hip joint that is not shared with the other leg or the spine (CMU: ``lhipjoint``);
* ``upper_left`` / ``upper_right``: likewise for the shoulder (CMU: ``lclavicle`` and below);
* ``head``: the subtree of the highest joint above the head that leads to neither shoulder
  (CMU: ``lowerneck`` and below);
* ``root``: the hips and their ancestors (root translation and orientation), plus joints that
  lead only to the legs (e.g. a pelvis bone);
* ``trunk``: everything else (the spine up to where arms and neck branch off).

The lower body (``root`` + both legs) is always one part: it carries the root trajectory and the
gait phase, so both legs must stay together. Profiles (the names are this project's):

======== ==========================================================
profile  parts
======== ==========================================================
``sp2``  lower body | upper body (trunk, head, arms)
``sp3a`` lower body | trunk + head | both arms
``sp3b`` lower body | trunk + head + left arm | right arm
``sp4a`` lower body | trunk + head | left arm | right arm   (Fig. 3.12)
``sp4b`` lower body | trunk | head | both arms
``sp5``  lower body | trunk | head | left arm | right arm
======== ==========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.errors import InputError
from evalkit.motion.model import Skeleton
from evalkit.motion.roles import find_roles

CHAINS = ("root", "lower_left", "lower_right", "trunk", "head", "upper_left", "upper_right")

#: Split profiles: profile name -> tuple of parts, each part a tuple of chains. The first part
#: is always the lower body.
SPLIT_PROFILES: dict[str, tuple[tuple[str, ...], ...]] = {
    "sp2": (("root", "lower_left", "lower_right"), ("trunk", "head", "upper_left", "upper_right")),
    "sp3a": (("root", "lower_left", "lower_right"), ("trunk", "head"), ("upper_left", "upper_right")),
    "sp3b": (("root", "lower_left", "lower_right"), ("trunk", "head", "upper_left"), ("upper_right",)),
    "sp4a": (("root", "lower_left", "lower_right"), ("trunk", "head"), ("upper_left",), ("upper_right",)),
    "sp4b": (("root", "lower_left", "lower_right"), ("trunk",), ("head",), ("upper_left", "upper_right")),
    "sp5": (("root", "lower_left", "lower_right"), ("trunk",), ("head",), ("upper_left",), ("upper_right",)),
}

PART_NAMES = {
    ("root", "lower_left", "lower_right"): "lower",
    ("trunk", "head", "upper_left", "upper_right"): "upper",
    ("trunk", "head"): "trunk+head",
    ("upper_left", "upper_right"): "arms",
    ("trunk", "head", "upper_left"): "trunk+head+left_arm",
    ("upper_left",): "left_arm",
    ("upper_right",): "right_arm",
    ("trunk",): "trunk",
    ("head",): "head",
}

_REQUIRED = ("hips", "head", "left_shoulder", "right_shoulder", "left_hip", "right_hip")


def _ancestors(sk: Skeleton, j: int) -> list[int]:
    """``j`` and its ancestors, from ``j`` up to the root."""
    out = [j]
    while sk.parents[out[-1]] >= 0:
        out.append(int(sk.parents[out[-1]]))
    return out


def _branch_top(sk: Skeleton, target: int, others: list[int], stop: int) -> int:
    """Highest joint on the path ``stop -> target`` (excluding ``stop``) that is an ancestor
    of none of ``others``."""
    path = _ancestors(sk, target)
    if stop in path:
        path = path[: path.index(stop)]
    shared = set()
    for o in others:
        shared.update(_ancestors(sk, o))
    top = target
    for j in path:  # from target upwards
        if j in shared:
            break
        top = j
    return top


def kinematic_chains(skeleton: Skeleton, roles: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Joint indices of each chain in :data:`CHAINS` (every joint in exactly one chain).

    Raises:
        RolesNotFoundError / InputError: if the roles needed to split the body are missing.
    """
    sk = skeleton
    r = dict(roles) if roles is not None else find_roles(sk, required=_REQUIRED, strict=True)
    missing = [k for k in _REQUIRED if k not in r]
    if missing:
        raise InputError(f"cannot split the body into parts: roles {', '.join(missing)} not found")
    hips = r["hips"]
    heads = [r["head"]] + ([r["neck"]] if "neck" in r else [])
    chain_of = np.full(sk.n_joints, "", dtype=object)

    def mark(top: int, name: str) -> None:
        for j in [top] + sk.descendants(top):
            if chain_of[j] == "":
                chain_of[j] = name

    ls, rs, lh, rh = r["left_shoulder"], r["right_shoulder"], r["left_hip"], r["right_hip"]
    spine_targets = heads + [ls, rs]
    mark(_branch_top(sk, lh, [rh] + spine_targets, hips), "lower_left")
    mark(_branch_top(sk, rh, [lh] + spine_targets, hips), "lower_right")
    mark(_branch_top(sk, ls, [rs] + heads + [lh, rh], hips), "upper_left")
    mark(_branch_top(sk, rs, [ls] + heads + [lh, rh], hips), "upper_right")
    mark(_branch_top(sk, r["head"], [ls, rs, lh, rh], hips), "head")
    for j in _ancestors(sk, hips):
        chain_of[j] = "root"
    # Remaining joints (parents come before children): a joint on the way to the neck or an arm
    # is trunk; one on the way to the legs only is root; any other hangs off its parent's chain.
    spine_anc = set().union(*(_ancestors(sk, t) for t in spine_targets))
    leg_anc = set().union(*(_ancestors(sk, t) for t in (lh, rh)))
    for j in range(sk.n_joints):
        if chain_of[j] != "":
            continue
        if j in spine_anc:
            chain_of[j] = "trunk"
        elif j in leg_anc:
            chain_of[j] = "root"
        else:
            chain_of[j] = chain_of[sk.parents[j]] if sk.parents[j] >= 0 else "root"
    return {c: np.flatnonzero(chain_of == c) for c in CHAINS}


@dataclass(frozen=True)
class BodyPart:
    """One body part of a split profile.

    Attributes:
        name: e.g. ``"lower"``, ``"left_arm"``.
        chains: the kinematic chains it groups.
        joints: ``(n,)`` joint indices, sorted.
        is_lower: the lower body (carries the root trajectory and the gait phase).
    """

    name: str
    chains: tuple[str, ...]
    joints: np.ndarray
    is_lower: bool


def split_profile(skeleton: Skeleton, profile: str = "sp4a", roles: dict[str, int] | None = None) -> list[BodyPart]:
    """The body parts of ``profile`` (see :data:`SPLIT_PROFILES`) for a skeleton."""
    if profile not in SPLIT_PROFILES:
        raise InputError(f"unknown split profile {profile!r}; profiles are {', '.join(SPLIT_PROFILES)}")
    chains = kinematic_chains(skeleton, roles)
    parts = []
    for n, group in enumerate(SPLIT_PROFILES[profile]):
        joints = np.sort(np.concatenate([chains[c] for c in group]))
        parts.append(BodyPart(PART_NAMES.get(group, "+".join(group)), group, joints, n == 0))
    return parts


def joint_part_index(n_joints: int, parts: list[BodyPart]) -> np.ndarray:
    """``(joints,)`` index of the part owning each joint."""
    out = np.full(n_joints, -1, dtype=np.int64)
    for k, p in enumerate(parts):
        out[p.joints] = k
    if (out < 0).any():  # pragma: no cover - kinematic_chains assigns every joint
        raise InputError("some joints belong to no body part")
    return out
