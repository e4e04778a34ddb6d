"""Operations on motions: resampling, low-pass filtering, sampling at fractional frames, mirroring, size."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import quat
from evalkit.motion.model import Motion, Skeleton


#: Band-limited resampling keeps movement below this share of the new frame rate (0.4: 12 Hz at
#: 30 frames/s, 8 Hz at 20; human movement has little energy above 10 Hz).
BAND_SHARE = 0.4


def resample(motion: Motion, fps: float, band_limited: bool = False) -> Motion:
    """The clip at another frame rate (frames per second), same duration.

    By default rotations are interpolated by slerp and translations linearly. With
    ``band_limited`` the clip is resampled the way a signal is: when the rate falls, the
    continuous quaternions and translations are first low-passed (zero-phase 4th-order
    Butterworth at :data:`BAND_SHARE` of the new rate), so a brief event between the kept
    frames (a popped frame at 120 frames/s) is not dropped or kept by chance but spread over
    the new frames it falls between; the samples are then read off a cubic spline through
    the frames (also when the rate rises, so upsampled motion has no piecewise-constant
    velocity) and the quaternions renormalised. The new clip has
    ``floor((frames - 1) * fps / motion.fps) + 1`` frames spanning the same time.

    The new clip's ``meta`` records ``resampled_from_fps`` and, when a band-limited resampling
    low-passed it, ``band_hz`` (the cutoff, Hz).
    """
    if not (np.isfinite(fps) and fps > 0):
        raise InputError(f"target frame rate must be positive, got {fps}")
    n_old = motion.n_frames
    if abs(fps - motion.fps) < 1e-9:
        return motion
    n_new = int(np.floor((n_old - 1) * fps / motion.fps + 1e-9)) + 1
    t = np.arange(n_new) * (motion.fps / fps)  # positions in old-frame units
    t = np.clip(t, 0, n_old - 1)
    rot = quat.make_continuous(motion.rotations, axis=0)
    tr = motion.translations
    if band_limited and n_old >= 4:
        new_rot, new_tr = _band_limited(rot, tr, t, motion.fps, fps)
    else:
        i0 = np.floor(t).astype(int)
        i1 = np.minimum(i0 + 1, n_old - 1)
        w = (t - i0)[:, None]
        new_rot = quat.slerp(rot[i0], rot[i1], np.broadcast_to(w, (n_new, motion.n_joints)))
        new_tr = tr[i0] * (1 - w[..., None]) + tr[i1] * w[..., None]
    meta = dict(motion.meta)
    meta["resampled_from_fps"] = motion.fps
    if band_limited and n_old >= 4 and fps < motion.fps:
        meta["band_hz"] = min(float(meta.get("band_hz", np.inf)), BAND_SHARE * fps)
    return replace(motion, fps=float(fps), rotations=new_rot, translations=new_tr, meta=meta)


def low_pass(motion: Motion, cutoff_hz: float) -> Motion:
    """The clip with its movement low-passed at ``cutoff_hz`` (Hz), at its own frame rate.

    The continuous quaternions and the translations go through a zero-phase 4th-order
    Butterworth low-pass (the filter :func:`resample` uses when the rate falls) and the
    quaternions are renormalised; frames, rate and skeleton are unchanged. A clip of fewer than
    4 frames, or a cutoff at or above the clip's Nyquist rate (``fps / 2``), is returned as is.
    The new clip's ``meta["band_hz"]`` is the lowest cutoff it has been through, Hz.
    """
    if not (np.isfinite(cutoff_hz) and cutoff_hz > 0):
        raise InputError(f"low-pass cutoff must be positive, got {cutoff_hz}")
    n = motion.n_frames
    if n < 4 or cutoff_hz >= 0.5 * motion.fps:
        return motion
    rot = quat.make_continuous(motion.rotations, axis=0)
    j = rot.shape[1]
    flat = np.concatenate([rot.reshape(n, -1), motion.translations.reshape(n, -1)], axis=1)
    flat = _low_passed(flat, cutoff_hz, motion.fps)
    meta = dict(motion.meta)
    meta["band_hz"] = min(float(meta.get("band_hz", np.inf)), float(cutoff_hz))
    return replace(motion, rotations=quat.normalize(flat[:, : j * 4].reshape(n, j, 4)),
                   translations=flat[:, j * 4:].reshape(n, j, 3), meta=meta)


def _low_passed(flat: np.ndarray, cutoff_hz: float, fps: float) -> np.ndarray:
    """Zero-phase 4th-order Butterworth low-pass of ``(F, columns)`` along frames."""
    from scipy.signal import butter, sosfiltfilt

    sos = butter(4, cutoff_hz, fs=fps, output="sos")
    # odd extension keeps level and slope at the ends; short clips pad less
    return sosfiltfilt(sos, flat, axis=0, padlen=min(3 * (2 * len(sos) + 1), len(flat) - 1))


def _band_limited(rot: np.ndarray, tr: np.ndarray, t: np.ndarray, old_fps: float,
                  new_fps: float) -> tuple[np.ndarray, np.ndarray]:
    """Low-pass (when the rate falls) and cubic-spline sampling at old-frame positions ``t`` of
    continuous quaternions ``(F, J, 4)`` and translations ``(F, J, 3)``."""
    from scipy.interpolate import CubicSpline

    n = len(rot)
    flat = np.concatenate([rot.reshape(n, -1), tr.reshape(n, -1)], axis=1)
    if new_fps < old_fps:
        flat = _low_passed(flat, BAND_SHARE * new_fps, old_fps)
    out = CubicSpline(np.arange(n), flat, axis=0)(t)
    j = rot.shape[1]
    new_rot = quat.normalize(out[:, : j * 4].reshape(len(t), j, 4))
    new_tr = out[:, j * 4:].reshape(len(t), j, 3)
    return new_rot, new_tr


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
    """``(joints,)`` index of each joint's left/right counterpart (itself if unpaired).

    Joints are paired by name (Left/Right, L/R prefixes and suffixes). A rig whose names do not
    say the side has its sided joints paired through its role map
    (:attr:`Skeleton.roles`, from ``--roles``): the joints of ``left_knee`` and ``right_knee``,
    then, where the two sides have the same shape, the joints between them and their common
    ancestor (a clavicle) and their subtrees (feet, fingers) child by child.
    """
    names = skeleton.names
    idx = np.arange(skeleton.n_joints)
    for j, n in enumerate(names):
        m = _mirror_name(n)
        if m != n and m in names:
            idx[j] = names.index(m)
    if skeleton.roles:
        _pair_by_roles(skeleton, idx)
    return idx


def _pair_by_roles(skeleton: Skeleton, idx: np.ndarray) -> None:
    """Pair still-unpaired joints of the two sides through the role map (in place)."""
    from evalkit.motion.roles import SIDED, find_roles

    roles = find_roles(skeleton, strict=False)

    def pair(a: int, b: int) -> bool:
        if a == b or idx[a] not in (a, b) or idx[b] not in (a, b):
            return False  # one of them is paired with a third joint already
        idx[a], idx[b] = b, a
        return True

    def subtrees(a: int, b: int) -> None:
        ca, cb = skeleton.children(a), skeleton.children(b)
        if len(ca) == len(cb):
            for x, y in zip(ca, cb):
                if pair(x, y):
                    subtrees(x, y)

    for part in SIDED:
        a, b = roles.get(f"left_{part}"), roles.get(f"right_{part}")
        if a is None or b is None or not pair(a, b):
            continue
        subtrees(a, b)
        pa, pb = int(skeleton.parents[a]), int(skeleton.parents[b])
        # up to the common ancestor, while neither side's joint is an ancestor of the other side
        while (pa >= 0 and pb >= 0 and pa != pb and not _is_ancestor(skeleton, pa, b)
               and not _is_ancestor(skeleton, pb, a) and pair(pa, pb)):
            pa, pb = int(skeleton.parents[pa]), int(skeleton.parents[pb])


def _is_ancestor(skeleton: Skeleton, a: int, b: int) -> bool:
    p = int(skeleton.parents[b])
    while p >= 0:
        if p == a:
            return True
        p = int(skeleton.parents[p])
    return False


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
    toes (falls back to the median vertical extent of the poses if roles are missing). The rest
    height of a rig is worked out once per process (:func:`_rest_height`).
    """
    sk = motion.skeleton
    h = _rest_height(sk.names, sk.parents.tobytes(), sk.offsets.tobytes(), tuple(sorted(sk.roles.items())))
    if h is not None:
        return h
    pos = motion.positions
    return float(np.median(np.ptp(pos[..., 1], axis=1)))


@lru_cache(maxsize=256)
def _rest_height(names: tuple[str, ...], parents: bytes, offsets: bytes, roles: tuple) -> float | None:
    """Height from the rest bone lengths (×1.08, head joint to crown and ankle joint to sole),
    or ``None`` when the roles are missing. Keyed by the rig's content (names, parents,
    offsets, given roles), so that clips read from separate files of one rig share the value."""
    from evalkit.motion.roles import find_roles

    n = len(names)
    sk = Skeleton(names, np.frombuffer(parents, dtype=np.int64), np.frombuffer(offsets).reshape(n, 3),
                  channels=[()] * n, roles=dict(roles))
    roles_found = find_roles(sk, strict=False)
    lengths = sk.bone_lengths()

    def chain(a: int, b: int) -> float:
        # length from joint b up to its ancestor a
        total, j = 0.0, b
        while j != a and j >= 0:
            total += lengths[j]
            j = sk.parents[j]
        return total if j == a else float("nan")

    try:
        hips = roles_found["hips"]
        upper = chain(hips, roles_found["head"])
        lower = max(chain(hips, roles_found[f"{s}_ankle"]) for s in ("left", "right"))
    except KeyError:
        return None
    h = upper + lower
    return float(h * 1.08) if np.isfinite(h) and h > 0 else None  # head joint to crown, ankle to sole


def sample(motion: Motion, frames: np.ndarray, joints: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pose arrays of ``motion`` at fractional frame indices.

    Args:
        motion: the clip.
        frames: ``(n,)`` frame indices (floats allowed), clipped to ``[0, frames - 1]``.
        joints: optional ``(m,)`` joint indices to sample (default all).

    Returns:
        ``(rotations (n, m, 4), translations (n, m, 3))`` local values; rotations interpolated
        by slerp, translations linearly (metres).
    """
    f = np.clip(np.asarray(frames, dtype=np.float64), 0.0, motion.n_frames - 1)
    i0 = np.floor(f).astype(np.int64)
    i1 = np.minimum(i0 + 1, motion.n_frames - 1)
    w = f - i0
    jsel = slice(None) if joints is None else np.asarray(joints, dtype=np.int64)
    r0 = motion.rotations[i0][:, jsel]
    r1 = motion.rotations[i1][:, jsel]
    t0 = motion.translations[i0][:, jsel]
    t1 = motion.translations[i1][:, jsel]
    exact = w == 0.0
    rot = r0.copy()
    if not exact.all():
        m = ~exact
        rot[m] = quat.slerp(r0[m], r1[m], np.broadcast_to(w[m, None], r0[m].shape[:2]))
    tr = t0 + (t1 - t0) * w[:, None, None]
    return rot, tr
