"""Operations on motions: resampling, mirroring, size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import quat
from evalkit.motion.model import Motion, Skeleton


def resample(motion: Motion, fps: float) -> Motion:
    """The clip at another frame rate (frames per second), same duration.

    Rotations are interpolated by slerp, translations linearly. The new clip has
    ``round((frames - 1) * fps / motion.fps) + 1`` frames spanning the same time.
    """
    if not (np.isfinite(fps) and fps > 0):
        raise InputError(f"target frame rate must be positive, got {fps}")
    n_old = motion.n_frames
    if abs(fps - motion.fps) < 1e-9:
        return motion
    n_new = int(np.floor((n_old - 1) * fps / motion.fps + 1e-9)) + 1
    t = np.arange(n_new) * (motion.fps / fps)  # positions in old-frame units
    t = np.clip(t, 0, n_old - 1)
    i0 = np.floor(t).astype(int)
    i1 = np.minimum(i0 + 1, n_old - 1)
    w = (t - i0)[:, None]
    rot = quat.make_continuous(motion.rotations, axis=0)
    new_rot = quat.slerp(rot[i0], rot[i1], np.broadcast_to(w, (n_new, motion.n_joints)))
    tr = motion.translations
    new_tr = tr[i0] * (1 - w[..., None]) + tr[i1] * w[..., None]
    meta = dict(motion.meta)
    meta["resampled_from_fps"] = motion.fps
    return replace(motion, fps=float(fps), rotations=new_rot, translations=new_tr, meta=meta)


def _mirror_name(name: str) -> str:
    import re

    swaps = [("Left", "Right"), ("left", "right"), ("LEFT", "RIGHT")]
    for a, b in swaps:
        if a in name:
            return name.replace(a, b)
        if b in name:
            return name.replace(b, a)
    patterns = [
        (r"(^|[_.:\s-])L([_.:\s-]|$)", r"\1R\2"), (r"(^|[_.:\s-])R([_.:\s-]|$)", r"\1L\2"),
        (r"(^|[_.:\s-])l([_.:\s-]|$)", r"\1r\2"), (r"(^|[_.:\s-])r([_.:\s-]|$)", r"\1l\2"),
        (r"^L(?=[A-Z])", "R"), (r"^R(?=[A-Z])", "L"),
        (r"^l(?=[a-z])", "r"), (r"^r(?=[a-z])", "l"),
    ]
    for pat, rep in patterns:
        new = re.sub(pat, rep, name, count=1)
        if new != name:
            return new
    return name


def mirror_pairs(skeleton: Skeleton) -> np.ndarray:
    """``(joints,)`` index of each joint's left/right counterpart (itself if unpaired)."""
    names = skeleton.names
    idx = np.arange(skeleton.n_joints)
    for j, n in enumerate(names):
        m = _mirror_name(n)
        if m != n and m in names:
            idx[j] = names.index(m)
    return idx


def mirror(motion: Motion) -> Motion:
    """Mirror left/right: reflect across the world's YZ plane (x -> -x) and swap paired joints.

    Joints are paired by name (Left/Right, L/R prefixes and suffixes). Offsets of paired joints
    are swapped and reflected, so an asymmetric skeleton is mirrored too.
    """
    pairs = mirror_pairs(motion.skeleton)
    sk = motion.skeleton
    reflect = np.array([-1.0, 1.0, 1.0])
    offsets = sk.offsets[pairs] * reflect
    end_sites = {}
    for j, off in sk.end_sites.items():
        end_sites[int(pairs[j])] = np.asarray(off) * reflect
    new_sk = replace(sk, offsets=offsets, end_sites=end_sites)
    # A reflection S conjugates a rotation R to S R S; for S = diag(-1, 1, 1) the quaternion
    # (x, y, z, w) becomes (x, -y, -z, w).
    rot = motion.rotations[:, pairs] * np.array([1.0, -1.0, -1.0, 1.0])
    tr = motion.translations[:, pairs] * reflect
    return replace(motion, skeleton=new_sk, rotations=rot, translations=tr, name=motion.name + "_mirrored")


def skeleton_height(motion: Motion) -> float:
    """Standing height estimate in metres: head-to-toe length along the bone chains.

    Sum of rest bone lengths from the head to the hips plus the longer leg chain down to the
    toes (falls back to the median vertical extent of the poses if roles are missing).
    """
    from evalkit.motion.roles import find_roles

    sk = motion.skeleton
    roles = find_roles(sk, strict=False)

    def chain(a: int, b: int) -> float:
        # length from joint b up to its ancestor a
        lengths = sk.bone_lengths()
        total, j = 0.0, b
        while j != a and j >= 0:
            total += lengths[j]
            j = sk.parents[j]
        return total if j == a else float("nan")

    try:
        hips = roles["hips"]
        upper = chain(hips, roles["head"])
        lower = max(chain(hips, roles[f"{s}_ankle"]) for s in ("left", "right"))
        h = upper + lower
        if np.isfinite(h) and h > 0:
            return float(h * 1.08)  # head joint to crown, ankle joint to sole (~8 %)
    except KeyError:
        pass
    pos = motion.positions
    return float(np.median(np.ptp(pos[..., 1], axis=1)))
