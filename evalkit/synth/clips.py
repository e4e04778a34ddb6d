"""Bring source clips onto one skeleton, one frame rate and one floor before building a graph.

Transitions blend joint rotations of two clips, so all clips of a graph must share a skeleton.
CMU clips of different subjects have different bone lengths (and the Reallusion retargets come
with two variants of one rig, with and without an ``RL_BoneRoot`` joint above the hips), so
:func:`prepare_clips` **retargets by joint name**: each joint of the reference skeleton takes the
world rotation of the same-named joint of the source clip (joints are matched by name; if the
names differ but the hierarchies are identical, by index), its local rotation is recomputed
against its parent in the reference skeleton, and the root trajectory is scaled by the ratio of
leg lengths so that strides fit the new legs. This is the simple "copy rotations" retarget; it is
exact when the rigs share rest-pose conventions (CMU ASF: world-aligned rest directions; the
Reallusion rig: identical offsets) and approximate otherwise (slightly different rest bone
directions of different CMU subjects show up as small pose differences).

Clips are also **grounded** (shifted vertically so that the feet's low percentile height is 0),
which puts clips whose files disagree about the root offset on the same floor (some Reallusion
BVH files store the root position relative to the root ``OFFSET``).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import quat
from evalkit.motion.fk import forward_kinematics
from evalkit.motion.formats import LoadOptions
from evalkit.motion.model import Motion, Skeleton
from evalkit.motion.ops import resample
from evalkit.motion.roles import find_roles
from evalkit.runner import load_clips

#: Motion labels of known CMU takes (CMU's own descriptions), used in tables and manifests.
KNOWN_LABELS: dict[str, str] = {
    "16_15": "walk",
    "07_05": "slow walk",
    "07_04": "slow walk",
    "09_06": "run",
    "02_01": "walk",
    "02_02": "walk",
    "02_03": "run",
    "07_01": "walk",
    "07_02": "walk",
    "07_12": "brisk walk",
    "002_01": "walk",
    "002_02": "walk",
    "002_03": "run",
    "007_01": "walk",
    "007_02": "walk",
    "007_03": "walk",
    "007_04": "slow walk",
    "007_05": "slow walk",
    "007_12": "brisk walk",
}

#: The bundled locomotion clips used when no clips are given (fresh clone, no ../shared).
BUNDLED_LOCOMOTION = ("16_15.amc", "07_05-walk.amc", "09_06-run.amc")


def clip_label(name: str) -> str:
    """Motion type of a clip name (``"07_05-walk"`` -> ``"slow walk"``), else the name itself."""
    stem = name.split("-")[0]
    return KNOWN_LABELS.get(stem, name)


def bundled_locomotion() -> list[Path]:
    """Paths of the bundled CMU walk, slow walk and run (ASF/AMC, 120 fps)."""
    from evalkit.data import sample_path

    return [sample_path("cmu", f) for f in BUNDLED_LOCOMOTION]


def _leg_length(skeleton: Skeleton, roles: dict[str, int]) -> float:
    lengths = skeleton.bone_lengths()
    best = 0.0
    for side in ("left", "right"):
        if f"{side}_ankle" not in roles or "hips" not in roles:
            continue
        j, total = roles[f"{side}_ankle"], 0.0
        while j != roles["hips"] and j > 0:
            total += lengths[j]
            j = int(skeleton.parents[j])
        best = max(best, total)
    return best


def joint_correspondence(source: Skeleton, target: Skeleton) -> np.ndarray:
    """``(target joints,)`` index of each target joint in ``source`` (``-1`` if absent).

    Joints are matched by name; if fewer than half of them match but both skeletons have the
    same parent structure, they are matched by index (e.g. cgspeed BVH vs ASF of CMU, which
    share the hierarchy but name most joints differently).
    """
    index = {n: i for i, n in enumerate(source.names)}
    corr = np.array([index.get(n, -1) for n in target.names], dtype=np.int64)
    if (corr >= 0).sum() < target.n_joints / 2 and source.n_joints == target.n_joints and np.array_equal(source.parents, target.parents):
        corr = np.arange(target.n_joints)
    return corr


def retarget(motion: Motion, target: Skeleton, scale_root: bool = True) -> Motion:
    """Copy a clip's joint rotations onto another skeleton (see the module docstring).

    Args:
        motion: the source clip.
        target: the skeleton to animate; its root joint must exist in the source.
        scale_root: scale the root trajectory by target / source leg length.

    Returns:
        A clip on ``target`` with the source's frame count and rate; ``meta["retargeted_from"]``
        names the source skeleton's root and leg-length ratio.
    """
    src = motion.skeleton
    if src is target or (src.names == target.names and np.allclose(src.offsets, target.offsets)):
        return motion
    corr = joint_correspondence(src, target)
    if corr[0] < 0:
        raise InputError(
            f"{motion.name}: cannot retarget onto a skeleton whose root {target.names[0]!r} is not a "
            f"joint of the clip (joints: {', '.join(src.names[:8])}, ...); choose another reference clip"
        )
    matched = int((corr >= 0).sum())
    if matched < min(10, target.n_joints):
        raise InputError(
            f"{motion.name}: only {matched} of {target.n_joints} joints match the reference skeleton by "
            "name; clips of one graph need comparable rigs"
        )
    pos, world = forward_kinematics(motion)  # (F, J, 3), (F, J, 3, 3)
    n_f = motion.n_frames
    n_t = target.n_joints
    tw = np.empty((n_f, n_t, 3, 3))
    for t in range(n_t):
        s = corr[t]
        p = target.parents[t]
        if s >= 0:
            tw[:, t] = world[:, s]
        else:
            tw[:, t] = tw[:, p]  # unmatched joint: rest pose relative to its parent
    local = np.empty_like(tw)
    local[:, 0] = tw[:, 0]
    par = target.parents[1:]
    local[:, 1:] = np.einsum("fjki,fjkl->fjil", tw[:, par], tw[:, 1:])
    rot = quat.make_continuous(quat.from_matrix(local), axis=0)
    tr = np.broadcast_to(target.offsets, (n_f, n_t, 3)).copy()
    ratio = 1.0
    if scale_root:
        ls = _leg_length(src, find_roles(src, strict=False))
        lt = _leg_length(target, find_roles(target, strict=False))
        if ls > 0 and lt > 0:
            ratio = lt / ls
    tr[:, 0] = pos[:, corr[0]] * ratio
    # Joints whose translation moves in the source (position channels below the root, e.g. a
    # rig carrying the trajectory on the hips under a static root) keep that motion: their
    # offset from the parent, in the parent's frame, scaled like the root.
    moving = np.ptp(motion.translations, axis=0).max(axis=1) > 1e-9  # (source joints,)
    for t in range(1, n_t):
        s = corr[t]
        if s >= 0 and moving[s]:
            p = target.parents[t]
            rel = pos[:, s] - pos[:, corr[p]] if corr[p] >= 0 else None
            if rel is not None:
                tr[:, t] = np.einsum("fki,fk->fi", tw[:, p], rel) * ratio
    meta = dict(motion.meta)
    meta["retargeted_from"] = {"root": src.names[0], "joints": src.n_joints, "matched": matched, "root_scale": ratio}
    return replace(motion, skeleton=target, rotations=rot, translations=tr, meta=meta)


def foot_joints(skeleton: Skeleton, roles: dict[str, int] | None = None) -> list[int]:
    """Indices of ankle and toe joints (those found)."""
    r = roles if roles is not None else find_roles(skeleton, strict=False)
    return [r[k] for k in ("left_ankle", "right_ankle", "left_toe", "right_toe") if k in r]


def ground(motion: Motion, percentile: float = 2.0) -> Motion:
    """Shift the clip vertically so that the ``percentile`` of foot-joint heights is 0 metres."""
    feet = foot_joints(motion.skeleton)
    if not feet:
        return motion
    h = float(np.percentile(motion.positions[:, feet, 1], percentile))
    if abs(h) < 1e-9:
        return motion
    tr = motion.translations.copy()
    tr[:, 0, 1] -= h
    meta = dict(motion.meta)
    meta["grounded_shift_m"] = -h
    return replace(motion, translations=tr, meta=meta)


def _pick_reference(motions: Sequence[Motion]) -> Skeleton:
    """First clip's skeleton whose root joint exists (by name) in every clip."""
    for m in motions:
        root = m.skeleton.names[0]
        if all(root in o.skeleton.names or joint_correspondence(o.skeleton, m.skeleton)[0] >= 0 for o in motions):
            return m.skeleton
    raise InputError(
        "no clip's root joint exists in all the others ("
        + ", ".join(f"{m.name}: {m.skeleton.names[0]}" for m in motions)
        + "); pass a reference skeleton"
    )


def prepare_clips(
    clips: Iterable[str | os.PathLike | Motion],
    fps: float = 60.0,
    reference: Skeleton | Motion | None = None,
    grounded: bool = True,
    load: LoadOptions | None = None,
) -> list[Motion]:
    """Load clips and put them on one skeleton, frame rate and floor.

    Args:
        clips: paths of BVH/AMC files (or folders) or :class:`Motion` objects; at least one.
        fps: frame rate of the graph, frames per second (the thesis measures at 60).
        reference: skeleton to retarget onto (default: the first clip's whose root joint is
            present in all clips).
        grounded: shift each clip so the feet stand on ``y = 0`` (see :func:`ground`).
        load: how the files are read (:class:`~evalkit.motion.LoadOptions`: units, up axis, ...).

    Returns:
        Clips in input order, named by file stem, with ``meta["source"]`` kept.
    """
    clips = list(clips)
    paths = [c for c in clips if not isinstance(c, Motion)]
    motions: list[Motion] = load_clips(clips, load)
    if not motions:
        raise InputError("no motion clips given" + (f" (looked in {', '.join(map(str, paths))})" if paths else ""))
    names = [m.name for m in motions]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise InputError(f"clip names must be unique within a graph; repeated: {', '.join(sorted(dup))}")
    ref = reference.skeleton if isinstance(reference, Motion) else reference
    if ref is None:
        ref = _pick_reference(motions)
    out = []
    for m in motions:
        m = resample(m, fps)
        m = retarget(m, ref)
        if grounded:
            m = ground(m)
        out.append(m)
    return out
