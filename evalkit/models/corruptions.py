"""Corruptions: unnatural clips made from natural capture, the way synthesis really fails.

Each corruption takes a natural :class:`~evalkit.motion.Motion`, a ``severity`` in ``[0, 1]`` and
a ``seed`` and returns a :class:`Corrupted` clip with its :class:`Provenance` (source clip,
corruption, every parameter drawn, and the time intervals it touched, in seconds of the output).
Severity 0 leaves the clip unchanged (or, for ``transition`` and ``transplant``, picks the least
dissimilar of the candidates that differ visibly at all); severity 1 is the worst case; the
evaluation's "moderate" severity is 0.5. All magnitudes scale linearly with severity; the
physical value at severity 1 is a keyword parameter of each corruption (``max_*``) and lengths
are scaled by the body height relative to 1.7 m.

Types (:data:`CORRUPTION_TYPES`):

``transition``
    A bad motion-graph transition: at a seam frame ``i`` the clip jumps to a frame ``j`` of the
    same clip (or of ``donor``) whose pose is dissimilar (``j`` is, among the local minima of
    pose-and-velocity distance to frame ``i`` -- the transitions a motion graph considers --
    that are at least as far as the pose typically moves in 0.1 s, the one at the
    ``severity`` quantile; a clip without such frames cannot get a bad transition), aligned on the ground plane and in heading as a
    motion graph aligns it, and blended over ``max_blend_s * (1 - severity) * U(0.5, 1)``
    seconds with ease-in/out weights (slerp). Severity 1 is a hard cut.
``foot_skate``
    Feet slide: the root gets extra horizontal motion over an interval, either a drift of up to
    ``max_speed`` m/s in a slowly turning direction (``mode="drift"``) or its own horizontal
    velocity scaled by ``1 +- max_stride`` (``mode="stride"``, a retimed root path whose steps
    no longer match the distance travelled).
``jitter``
    Per-frame Gaussian noise on every joint rotation (std up to ``max_rot_deg`` degrees, as a
    rotation vector) and on the root position (std up to ``max_root_m``), over the whole clip
    (``mode="clip"``) or a burst (``mode="burst"``).
``time_warp``
    Unnatural timing: the playback rate changes abruptly between constant values
    (``mode="steps"``, log-rate uniform in ``+-log(1 + (max_rate - 1) * severity)`` per
    0.25-0.8 s segment) or oscillates smoothly (``mode="wave"``).
``freeze``
    Frozen joints: one or two limbs hold their local rotations for up to ``max_hold_s`` seconds
    while the rest moves (``mode="limb"``; the hold starts at the most active of five random
    places, since freezing a limb that is still anyway changes nothing), or the whole body holds a frame and then jumps to
    where the clip has got to (``mode="body"``, a dropped-frames stall).
``keyframe``
    Keyframe-like linear interpolation: over an interval, the rotations of the whole body
    (``mode="body"``, root translation too) or of some limbs (``mode="limbs"``) are replaced by
    slerp between keys spaced up to ``max_key_s`` seconds apart (constant velocity between keys,
    no ease).
``transplant``
    Limb transplant (Ikemoto & Forsyth 2004): the local rotations of one or two limbs over an
    interval come from another time of the clip (or from ``donor``), the donor time chosen at
    the ``severity`` quantile of limb dissimilarity among donor times that differ from the limb
    by more than it moves in 0.25 s (a smaller change is invisible); 0.15 s slerp blends at the
    edges.
``bone_length``
    Bone-length errors: the bones of a limb are scaled by ``1 +- max_scale`` for the whole clip
    (``mode="limb"``: one limb, so one foot sinks into the ground and the other floats) or
    oscillate in time over an interval (``mode="stretch"``, rubber limbs, as noisy position data
    retargeted naively gives). ``mode="proportion"`` (both legs or both arms, a symmetric error)
    exists but is not drawn by default: real rigs differ in proportions about as much.
``ground``
    Ground-height errors: the body floats above or sinks into the ground by up to
    ``max_offset_m`` over an interval (``mode="interval"``, 0.25 s ramps). ``mode="drift"``
    (a linear rise or sink over the clip) exists but is not drawn by default: real capture
    floors are not always level (CMU subject 7's walks rise 13 cm over 4 m). A constant offset
    of the whole clip is not included: with the ground estimated from the clip itself it is
    indistinguishable from a rig whose floor is elsewhere.

Options not given (``mode``, which limb, where the interval lies) are drawn from the seeded
generator, so ``corrupt(m, kind, severity, seed)`` is a pure function of its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

import numpy as np
from scipy.spatial.transform import Rotation

from evalkit.errors import InputError
from evalkit.features.body import LIMB_ROOTS, NORMALISED_HEIGHT_M, body_of, bone_directions, limb_joints
from evalkit.motion import Motion, find_roles, skeleton_height
from evalkit.motion import quat


@dataclass(frozen=True)
class Provenance:
    """Where an example comes from.

    Attributes:
        source: name of the natural source clip (file stem or path).
        corruption: corruption type, or ``"none"`` for an unedited natural clip.
        severity: severity in ``[0, 1]`` (0 for natural clips).
        seed: the seed the corruption's random choices were drawn from.
        params: every parameter the corruption used (JSON-serialisable).
        intervals: ``((start_s, end_s), ...)`` time spans of the output clip the corruption
            changed, seconds; empty for natural clips.
        donor: name of the donor clip for ``transition``/``transplant`` across clips.
    """

    source: str
    corruption: str = "none"
    severity: float = 0.0
    seed: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    intervals: tuple[tuple[float, float], ...] = ()
    donor: str | None = None

    @property
    def natural(self) -> bool:
        return self.corruption == "none"

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "corruption": self.corruption,
            "severity": self.severity,
            "seed": self.seed,
            "params": self.params,
            "intervals": [list(iv) for iv in self.intervals],
            "donor": self.donor,
        }


@dataclass(frozen=True, eq=False)
class Corrupted:
    """A corrupted clip and its provenance."""

    motion: Motion
    provenance: Provenance


# ---------------------------------------------------------------------------------------------
# helpers


def _scale(motion: Motion) -> float:
    return skeleton_height(motion) / NORMALISED_HEIGHT_M


def _interval(rng: np.random.Generator, n: int, fps: float, frac: tuple[float, float],
              min_s: float = 0.5, whole_p: float = 0.0) -> tuple[int, int]:
    """A random frame interval ``[a, b)`` covering ``frac`` of the clip (at least ``min_s``)."""
    if rng.random() < whole_p:
        return 0, n
    length = int(round(rng.uniform(*frac) * n))
    length = min(n, max(length, int(round(min_s * fps)), 2))
    a = int(rng.integers(0, n - length + 1))
    return a, a + length


def _envelope(n: int, a: int, b: int, ramp: int) -> np.ndarray:
    """``(n,)`` weights: 0 outside ``[a, b)``, 1 inside, raised-cosine ramps of ``ramp`` frames."""
    w = np.zeros(n)
    w[a:b] = 1.0
    if ramp > 0:
        r = 0.5 - 0.5 * np.cos(np.pi * (np.arange(1, ramp + 1) / (ramp + 1)))
        lo = max(a - ramp, 0)
        w[lo:a] = r[ramp - (a - lo):]
        hi = min(b + ramp, n)
        w[b:hi] = r[::-1][: hi - b]
    return w


def _seconds(motion_fps: float, spans: list[tuple[int, int]], n: int) -> tuple[tuple[float, float], ...]:
    out = []
    for a, b in spans:
        a, b = max(0, a), min(n, b)
        if b > a:
            out.append((round(a / motion_fps, 4), round(b / motion_fps, 4)))
    return tuple(out)


def _sample_frames(motion: Motion, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotations and translations at fractional frame positions ``t`` (slerp / linear)."""
    n = motion.n_frames
    t = np.clip(np.asarray(t, dtype=np.float64), 0, n - 1)
    i0 = np.floor(t).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    w = t - i0
    rot = quat.make_continuous(motion.rotations, axis=0)
    r = quat.slerp(rot[i0], rot[i1], np.broadcast_to(w[:, None], (len(t), motion.n_joints)))
    tr = motion.translations[i0] * (1 - w)[:, None, None] + motion.translations[i1] * w[:, None, None]
    return r, tr


def _yaw_shift(rot: np.ndarray, tr: np.ndarray, delta: float, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotate a whole clip by ``delta`` radians about the world's +Y axis, then shift it.

    Pre-multiplying the root's rotation and rotating its translation turns every world point
    ``x`` into ``R_y(delta) x + shift``, whichever joint carries the motion.
    """
    q = quat.about_y(delta)
    rot = rot.copy()
    tr = tr.copy()
    rot[:, 0] = quat.multiply(q, rot[:, 0])
    tr[:, 0] = quat.rotate(q, tr[:, 0]) + shift
    return rot, tr


def _donor_on(motion: Motion, donor: Motion) -> Motion:
    """``donor``'s animation on ``motion``'s skeleton (joints matched by name).

    Joints without position channels keep ``motion``'s rest offsets, so the result has the
    recipient's bone lengths.
    """
    names = motion.skeleton.names
    if donor.skeleton.names != names:
        missing = [n for n in names if n not in donor.skeleton.names]
        if missing:
            raise InputError(
                f"donor clip {donor.name!r} lacks joints {', '.join(missing[:5])} of {motion.name!r}; "
                "a donor must share the recipient's skeleton"
            )
        idx = [donor.skeleton.index(n) for n in names]
        donor = replace(donor, skeleton=motion.skeleton, rotations=donor.rotations[:, idx],
                        translations=donor.translations[:, idx])
    if abs(donor.fps - motion.fps) > 1e-6:
        from evalkit.motion import resample

        donor = resample(donor, motion.fps)
    tr = donor.translations.copy()
    fixed = ~motion.skeleton.has_position_channels()
    fixed[0] = False
    tr[:, fixed] = motion.skeleton.offsets[fixed]
    return replace(donor, skeleton=motion.skeleton, translations=tr)


def _pose_features(motion: Motion) -> np.ndarray:
    """``(frames, d)`` pose + velocity vectors for pose distances (heading-frame bone directions)."""
    d = bone_directions(body_of(motion).positions).reshape(motion.n_frames, -1)
    v = np.gradient(d, axis=0) * (motion.fps / 10.0) if motion.n_frames > 1 else np.zeros_like(d)
    return np.concatenate([d, v], axis=1)


def _quantile_pick(values: np.ndarray, s: float) -> int:
    order = np.argsort(values, kind="stable")
    return int(order[int(round(s * (len(order) - 1)))])


def _limb_choice(rng: np.random.Generator, options: list[tuple[str, ...]]) -> tuple[str, ...]:
    return options[int(rng.integers(0, len(options)))]


_SINGLE_LIMBS = [("left_arm",), ("right_arm",), ("left_leg",), ("right_leg",)]
_LIMB_SETS = _SINGLE_LIMBS + [("left_arm", "right_arm"), ("left_leg", "right_leg"),
                              ("left_arm", "right_leg"), ("head",)]


# ---------------------------------------------------------------------------------------------
# corruptions: (motion, severity, rng, donor, **options) -> (motion, params, frame spans)


def _transition(m: Motion, s: float, rng: np.random.Generator, donor: Motion | None = None, *,
                max_blend_s: float = 0.3, min_after_s: float = 1.0):
    fps, n = m.fps, m.n_frames
    same = donor is None
    b_m = m if same else _donor_on(m, donor)
    margin = max(2, int(round(0.4 * fps)))
    nb_max = int(round(max_blend_s * fps))
    lo, hi = margin, n - margin - nb_max
    if hi <= lo:
        raise InputError(f"{m.name}: clip of {n / fps:.2f} s is too short for a transition")
    i = int(rng.integers(int(lo + 0.25 * (hi - lo)), int(lo + 0.75 * (hi - lo)) + 1))
    after = min(int(round(min_after_s * fps)), max(n - i, 2))
    cand = np.arange(0, b_m.n_frames - after - nb_max)
    if same:
        cand = cand[np.abs(cand - i) >= int(round(0.5 * fps))]
    if len(cand) == 0:
        raise InputError(f"{m.name}: no transition target frames (clip too short)")
    fa = _pose_features(m)
    fb = fa if same else _pose_features(b_m)
    dist = np.linalg.norm(fb[cand] - fa[i], axis=1)
    # a motion graph only offers local minima of the distance as transitions; a loose
    # threshold lets the worse of them through. Severity is the quantile among local minima.
    contiguous = np.diff(cand) == 1
    is_min = np.ones(len(cand), dtype=bool)
    is_min[1:] &= ~contiguous | (dist[1:] <= dist[:-1])
    is_min[:-1] &= ~contiguous | (dist[:-1] <= dist[1:])
    # a "transition" to a frame closer than the pose normally changes in 0.1 s is seamless,
    # not a corruption: only dissimilar minima count
    lag = max(1, int(round(0.1 * fps)))
    change = np.median(np.linalg.norm(fa[lag:] - fa[:-lag], axis=1)) if n > lag else 0.0
    minima = np.flatnonzero(is_min & (dist >= change))
    if len(minima) == 0:
        raise InputError(f"{m.name}: no frame dissimilar enough to make a bad transition to")
    pick = minima[_quantile_pick(dist[minima], s)]
    j = int(cand[pick])
    nb = int(round(max_blend_s * (1.0 - s) * rng.uniform(0.5, 1.0) * fps))

    ba, bb = body_of(m), body_of(b_m)
    pa, pb = ba.positions, bb.positions
    delta = float(ba.heading[i] - bb.heading[j])
    hips_b = quat.rotate(quat.about_y(delta), pb[j, 0])
    shift = np.array([pa[i, 0, 0] - hips_b[0], 0.0, pa[i, 0, 2] - hips_b[2]])
    rot_b, tr_b = _yaw_shift(b_m.rotations, b_m.translations, delta, shift)

    parts_r = [m.rotations[:i]]
    parts_t = [m.translations[:i]]
    if nb > 0:
        k = np.arange(nb)
        w = (k + 1) / (nb + 1)
        w = w * w * (3 - 2 * w)  # ease in/out
        ra = m.rotations[i:i + nb]
        rb = rot_b[j:j + nb]
        parts_r.append(quat.slerp(ra, rb, np.broadcast_to(w[:, None], ra.shape[:2])))
        parts_t.append(m.translations[i:i + nb] * (1 - w)[:, None, None] + tr_b[j:j + nb] * w[:, None, None])
    parts_r.append(rot_b[j + nb:])
    parts_t.append(tr_b[j + nb:])
    out = replace(m, rotations=np.concatenate(parts_r), translations=np.concatenate(parts_t))
    params = {"seam_frame": i, "target_frame": j, "pose_distance": round(float(np.linalg.norm(fb[j] - fa[i])), 4),
              "distance_quantile_among_minima": s, "local_minima": int(len(minima)), "blend_frames": nb, "blend_s": round(nb / fps, 4),
              "yaw_change_deg": round(float(np.degrees(delta)), 2)}
    spans = [(i - int(round(0.2 * fps)), i + nb + int(round(0.4 * fps)))]
    return out, params, spans


def _foot_skate(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_speed: float = 0.5,
                max_stride: float = 0.6, mode: str | None = None):
    fps, n = m.fps, m.n_frames
    scale = _scale(m)
    hips = body_of(m).role("hips")
    vel = np.gradient(hips, axis=0) * fps if n > 1 else np.zeros_like(hips)
    hspeed = float(np.median(np.linalg.norm(vel[:, [0, 2]], axis=1)))
    if mode is None:
        mode = "stride" if (hspeed > 0.3 and rng.random() < 0.5) else "drift"
    a, b = _interval(rng, n, fps, (0.3, 0.7), min_s=1.5, whole_p=0.3)
    ramp = int(round(0.2 * fps))
    env = _envelope(n, a, b, ramp)
    if mode == "drift":
        speed = max_speed * s * scale
        theta0 = rng.uniform(-np.pi, np.pi)
        omega = rng.uniform(-1.0, 1.0)
        theta = theta0 + omega * np.arange(n) / fps
        v = speed * np.stack([np.cos(theta), np.sin(theta)], axis=1)
        params = {"mode": mode, "speed_m_s": round(speed, 4), "direction_deg": round(float(np.degrees(theta0)), 1),
                  "turn_rad_s": round(float(omega), 3)}
    elif mode == "stride":
        k = max_stride * s * (1 if rng.random() < 0.5 else -1)
        v = k * vel[:, [0, 2]]
        params = {"mode": mode, "velocity_scale": round(1 + k, 4)}
    else:
        raise InputError(f"foot_skate: mode must be 'drift' or 'stride', got {mode!r}")
    disp = np.cumsum(v * env[:, None], axis=0) / fps
    tr = m.translations.copy()
    tr[:, 0, 0] += disp[:, 0]
    tr[:, 0, 2] += disp[:, 1]
    params.update({"start_frame": a, "end_frame": b})
    return replace(m, translations=tr), params, [(a - ramp, b + ramp)]


def _jitter(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_rot_deg: float = 4.0,
            max_root_m: float = 0.015, mode: str | None = None):
    fps, n, nj = m.fps, m.n_frames, m.n_joints
    mode = mode or ("clip" if rng.random() < 0.5 else "burst")
    if mode == "clip":
        a, b = 0, n
    elif mode == "burst":
        a, b = _interval(rng, n, fps, (0.15, 0.4), min_s=0.5)
    else:
        raise InputError(f"jitter: mode must be 'clip' or 'burst', got {mode!r}")
    sigma = np.radians(max_rot_deg * s)
    noise = rng.normal(0.0, 1.0, size=(b - a, nj, 3)) * sigma
    q = Rotation.from_rotvec(noise.reshape(-1, 3)).as_quat().reshape(b - a, nj, 4)
    rot = m.rotations.copy()
    rot[a:b] = quat.multiply(rot[a:b], q)
    tr = m.translations.copy()
    sigma_t = max_root_m * s * _scale(m)
    tr[a:b, 0] += rng.normal(0.0, 1.0, size=(b - a, 3)) * sigma_t
    params = {"mode": mode, "rotation_std_deg": round(max_rot_deg * s, 4), "root_std_m": round(sigma_t, 5),
              "start_frame": a, "end_frame": b}
    return replace(m, rotations=rot, translations=tr), params, [(a, b)]


def _time_warp(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_rate: float = 3.5,
               mode: str | None = None):
    fps, n = m.fps, m.n_frames
    mode = mode or ("steps" if rng.random() < 0.6 else "wave")
    amp = float(np.log(1.0 + (max_rate - 1.0) * s))
    a, b = _interval(rng, n, fps, (0.4, 0.8), min_s=1.5, whole_p=0.3)
    # log playback rate as a function of source frame
    logr = np.zeros(n)
    if mode == "steps":
        t = a
        while t < b:
            seg = int(round(rng.uniform(0.25, 0.8) * fps))
            logr[t:min(b, t + seg)] = rng.uniform(-amp, amp)
            t += max(seg, 1)
    elif mode == "wave":
        period = rng.uniform(0.5, 1.5)
        phase = rng.uniform(0, 2 * np.pi)
        tt = np.arange(n) / fps
        logr[a:b] = amp * np.sin(2 * np.pi * tt[a:b] / period + phase)
    else:
        raise InputError(f"time_warp: mode must be 'steps' or 'wave', got {mode!r}")
    src, warped = [], []
    t = 0.0
    while t <= n - 1 and len(src) < 20 * n:
        src.append(t)
        k = int(t)
        warped.append(logr[k] != 0.0)
        t += float(np.exp(logr[k]))
    src = np.asarray(src)
    rot, tr = _sample_frames(m, src)
    out = replace(m, rotations=rot, translations=tr)
    flagged = np.flatnonzero(np.asarray(warped))
    spans = [(int(flagged[0]), int(flagged[-1]) + 1)] if len(flagged) else []
    params = {"mode": mode, "max_log_rate": round(amp, 4), "source_start_frame": a, "source_end_frame": b,
              "frames_in": n, "frames_out": len(src)}
    return out, params, spans


def _freeze(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_hold_s: float = 1.5,
            mode: str | None = None, limbs: tuple[str, ...] | None = None):
    fps, n = m.fps, m.n_frames
    mode = mode or ("limb" if rng.random() < 0.75 else "body")
    hold = int(round(max_hold_s * s * fps))
    hold = min(hold, n - 1)
    rot = m.rotations.copy()
    tr = m.translations.copy()
    params: dict[str, Any] = {"mode": mode, "hold_frames": hold, "hold_s": round(hold / fps, 4)}
    if hold < 2:
        return m, params, []
    starts = rng.integers(0, n - hold + 1, size=5)
    if mode == "limb":
        limbs = limbs or _limb_choice(rng, _LIMB_SETS[:-1])
        roles = find_roles(m.skeleton, strict=True)
        joints = sorted({j for limb in limbs for j in limb_joints(m, limb, roles)})
        # freeze where the limb was moving most of 5 random places: a limb that is still anyway
        # is not frozen in any visible sense
        q = quat.make_continuous(m.rotations[:, joints], axis=0)
        step = 2 * np.arccos(np.clip(np.abs(np.sum(q[1:] * q[:-1], axis=-1)), 0, 1)).sum(1)
        motion_in = [float(step[s0:s0 + hold - 1].sum()) for s0 in starts]
        a = int(starts[int(np.argmax(motion_in))])
        b = a + hold
        rot[a:b, joints] = rot[a, joints]
        params["limbs"] = list(limbs)
    elif mode == "body":
        a = int(starts[0])
        b = a + hold
        rot[a:b] = rot[a]
        tr[a:b] = tr[a]
    else:
        raise InputError(f"freeze: mode must be 'limb' or 'body', got {mode!r}")
    params.update({"start_frame": a, "end_frame": b})
    return replace(m, rotations=rot, translations=tr), params, [(a, b + int(round(0.1 * fps)))]


def _keyframe(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_key_s: float = 0.6,
              mode: str | None = None, limbs: tuple[str, ...] | None = None):
    fps, n = m.fps, m.n_frames
    mode = mode or ("body" if rng.random() < 0.5 else "limbs")
    k = int(round(max_key_s * s * fps))
    params: dict[str, Any] = {"mode": mode, "key_spacing_frames": k, "key_spacing_s": round(k / fps, 4)}
    if k < 2:
        return m, params, []
    a, b = _interval(rng, n, fps, (0.3, 0.7), min_s=max(1.5, 3 * k / fps), whole_p=0.3)
    keys = np.arange(a, b, k)
    if keys[-1] != b - 1:
        keys = np.append(keys, b - 1)
    t = np.arange(a, b)
    seg = np.clip(np.searchsorted(keys, t, side="right") - 1, 0, len(keys) - 2)
    k0, k1 = keys[seg], keys[seg + 1]
    w = (t - k0) / np.maximum(k1 - k0, 1)
    if mode == "body":
        joints = list(range(m.n_joints))
    elif mode == "limbs":
        limbs = limbs or _limb_choice(rng, _LIMB_SETS[:-1])
        roles = find_roles(m.skeleton, strict=True)
        joints = sorted({j for limb in limbs for j in limb_joints(m, limb, roles)})
        params["limbs"] = list(limbs)
    else:
        raise InputError(f"keyframe: mode must be 'body' or 'limbs', got {mode!r}")
    rot = quat.make_continuous(m.rotations, axis=0)
    r0, r1 = rot[k0][:, joints], rot[k1][:, joints]
    rot[a:b, joints] = quat.slerp(r0, r1, np.broadcast_to(w[:, None], r0.shape[:2]))
    tr = m.translations.copy()
    if mode == "body":
        tr[a:b] = tr[k0] * (1 - w)[:, None, None] + tr[k1] * w[:, None, None]
    params.update({"start_frame": a, "end_frame": b, "keys": len(keys)})
    return replace(m, rotations=rot, translations=tr), params, [(a, b)]


def _transplant(m: Motion, s: float, rng: np.random.Generator, donor: Motion | None = None, *,
                blend_s: float = 0.15, limbs: tuple[str, ...] | None = None):
    fps, n = m.fps, m.n_frames
    same = donor is None
    d_m = m if same else _donor_on(m, donor)
    limbs = limbs or _limb_choice(rng, _LIMB_SETS[:-1])
    roles = find_roles(m.skeleton, strict=True)
    joints = sorted({j for limb in limbs for j in limb_joints(m, limb, roles)})
    frac = (0.35, 0.6) if same else (0.5, 1.0)
    a, b = _interval(rng, n, fps, frac, min_s=min(1.5, 0.45 * n / fps))
    length = b - a
    cand = np.arange(0, d_m.n_frames - length + 1)
    if same:
        cand = cand[np.abs(cand - a) >= max(2, int(round(0.25 * fps)))]
    if len(cand) == 0 and not same:
        raise InputError(f"{donor.name}: donor clip of {d_m.n_frames / fps:.2f} s is too short to give "
                         f"{m.name} a limb transplant of {length / fps:.2f} s")
    if len(cand) == 0:
        raise InputError(f"{m.name}: clip of {n / fps:.2f} s is too short for a limb transplant")
    stride = max(1, len(cand) // 200)
    cand = cand[::stride]
    q_a = m.rotations[a:b][:, joints]
    q_d = d_m.rotations[:, joints]
    dis = np.empty(len(cand))
    for c_i, c in enumerate(cand):  # <= 200 candidates, each vectorised over frames and joints
        dot = np.abs(np.sum(q_a * q_d[c:c + length], axis=-1))
        dis[c_i] = float(np.mean(2 * np.arccos(np.clip(dot, 0, 1))))
    # a donor that differs from the limb by less than the limb itself moves in 0.25 s is not a
    # visible transplant: only candidates beyond that count
    lag = max(1, int(round(0.25 * fps)))
    qa = quat.make_continuous(m.rotations[:, joints], axis=0)
    moves = 2 * np.arccos(np.clip(np.abs(np.sum(qa[lag:] * qa[:-lag], axis=-1)), 0, 1)).mean(1)
    floor = float(np.median(moves)) if len(moves) else 0.0
    ok = np.flatnonzero(dis >= floor)
    if len(ok) == 0:
        raise InputError(f"{m.name}: no donor time differs enough for a visible limb transplant")
    cand, dis = cand[ok], dis[ok]
    d0 = int(cand[_quantile_pick(dis, s)])
    new = d_m.rotations[d0:d0 + length][:, joints]
    ramp = min(int(round(blend_s * fps)), length // 3)
    w = np.ones(length)
    if ramp > 0:
        r = (np.arange(1, ramp + 1)) / (ramp + 1)
        if a > 0:
            w[:ramp] = r
        if b < n:
            w[-ramp:] = r[::-1]
    rot = m.rotations.copy()
    rot[a:b, joints] = quat.slerp(q_a, new, np.broadcast_to(w[:, None], q_a.shape[:2]))
    params = {"limbs": list(limbs), "start_frame": a, "end_frame": b, "donor_start_frame": d0,
              "mean_limb_angle_change_deg": round(float(np.degrees(dis[_quantile_pick(dis, s)])), 2),
              "blend_frames": ramp}
    return replace(m, rotations=rot), params, [(a, b)]


def _bone_length(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_scale: float = 0.4,
                 mode: str | None = None):
    fps, n = m.fps, m.n_frames
    # "proportion" (a symmetric error) is not drawn by default: limb proportions differ between
    # real rigs by about as much (forearm / height: 0.128 CMU, 0.154 Bandai Namco), so without
    # knowing the performer it is not an error anyone can see.
    mode = mode or ("limb" if rng.random() < 0.5 else "stretch")
    roles = find_roles(m.skeleton, strict=True)
    sign = 1.0 if rng.random() < 0.5 else -1.0
    if mode == "limb" or mode == "stretch":
        limbs = _limb_choice(rng, _SINGLE_LIMBS)
    elif mode == "proportion":
        limbs = _limb_choice(rng, [("left_leg", "right_leg"), ("left_arm", "right_arm")])
    else:
        raise InputError(f"bone_length: mode must be 'limb', 'stretch' or 'proportion', got {mode!r}")
    joints = sorted({j for limb in limbs for j in limb_joints(m, limb, roles)
                     if j != roles[LIMB_ROOTS[limb]]})
    tr = m.translations.copy()
    sk = m.skeleton
    params: dict[str, Any] = {"mode": mode, "limbs": list(limbs)}
    if mode in ("limb", "proportion"):
        f = 1.0 + sign * max_scale * s
        tr[:, joints] *= f
        offsets = sk.offsets.copy()
        offsets[joints] *= f
        sk = replace(sk, offsets=offsets)
        spans = [(0, n)]
        params["scale"] = round(f, 4)
    else:
        a, b = _interval(rng, n, fps, (0.4, 0.8), min_s=1.5, whole_p=0.3)
        env = _envelope(n, a, b, int(round(0.2 * fps)))
        period = rng.uniform(0.6, 2.0)
        phase = rng.uniform(0, 2 * np.pi)
        amp = max_scale * s
        f = 1.0 + amp * env * np.sin(2 * np.pi * np.arange(n) / fps / period + phase)
        tr[:, joints] *= f[:, None, None]
        spans = [(a, b)]
        params.update({"amplitude": round(amp, 4), "period_s": round(period, 3), "start_frame": a, "end_frame": b})
    return replace(m, skeleton=sk, translations=tr), params, spans


def _ground(m: Motion, s: float, rng: np.random.Generator, donor=None, *, max_offset_m: float = 0.2,
            mode: str | None = None):
    fps, n = m.fps, m.n_frames
    # "drift" (a linear rise or sink over the clip) is not drawn by default: real capture
    # floors are not always level (CMU subject 7's walks rise 13 cm over 4 m)
    mode = mode or "interval"
    off = max_offset_m * s * _scale(m) * (1.0 if rng.random() < 0.5 else -1.0)
    if mode == "interval":
        a, b = _interval(rng, n, fps, (0.25, 0.5), min_s=0.6)
        ramp = int(round(0.25 * fps))
        env = _envelope(n, a, b, ramp)
        spans = [(a - ramp // 2, b + ramp // 2)]
        extra = {"start_frame": a, "end_frame": b}
    elif mode == "drift":
        env = np.linspace(0.0, 1.0, n)
        spans = [(int(0.3 * n), n)]
        extra = {}
    else:
        raise InputError(f"ground: mode must be 'interval' or 'drift', got {mode!r}")
    tr = m.translations.copy()
    tr[:, 0, 1] += off * env
    params = {"mode": mode, "offset_m": round(off, 4), **extra}
    return replace(m, translations=tr), params, spans


_Fn = Callable[..., tuple[Motion, dict, list]]

#: Corruption type -> implementation; see the module docstring for what each does.
CORRUPTIONS: dict[str, _Fn] = {
    "transition": _transition,
    "foot_skate": _foot_skate,
    "jitter": _jitter,
    "time_warp": _time_warp,
    "freeze": _freeze,
    "keyframe": _keyframe,
    "transplant": _transplant,
    "bone_length": _bone_length,
    "ground": _ground,
}
CORRUPTION_TYPES: tuple[str, ...] = tuple(CORRUPTIONS)


def corrupt(motion: Motion, kind: str, severity: float = 0.5, seed: int = 0, *,
            donor: Motion | None = None, **options: Any) -> Corrupted:
    """Make an unnatural clip from a natural one.

    Args:
        motion: natural source clip (any rig whose roles are found).
        kind: one of :data:`CORRUPTION_TYPES`.
        severity: in ``[0, 1]``; 0.5 is "moderate".
        seed: seed of every random choice (interval, mode, limb, noise).
        donor: for ``transition`` and ``transplant``: another clip on the same skeleton to take
            material from (default: the clip itself, at another time).
        options: keyword parameters of the corruption (``mode``, ``max_*`` magnitudes, ``limbs``).

    Returns:
        the corrupted clip (named ``<source>~<kind>``) with its :class:`Provenance`.
    """
    if kind not in CORRUPTIONS:
        raise InputError(f"unknown corruption {kind!r}; expected one of {', '.join(CORRUPTION_TYPES)}")
    if not (0.0 <= float(severity) <= 1.0):
        raise InputError(f"severity must be in [0, 1], got {severity}")
    if donor is not None and kind not in ("transition", "transplant"):
        raise InputError(f"corruption {kind!r} takes no donor clip")
    rng = np.random.default_rng(seed)
    out, params, spans = CORRUPTIONS[kind](motion, float(severity), rng, donor, **options)
    meta = dict(motion.meta)
    prov = Provenance(
        source=motion.name or str(motion.meta.get("source", "")),
        corruption=kind,
        severity=float(severity),
        seed=int(seed),
        params=_jsonable(params),
        intervals=_seconds(out.fps, spans, out.n_frames),
        donor=(donor.name if donor is not None else None),
    )
    meta["provenance"] = prov.to_dict()
    out = replace(out, name=f"{motion.name}~{kind}", meta=meta)
    return Corrupted(out, prov)


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, np.generic):
            v = v.item()
        elif isinstance(v, tuple):
            v = list(v)
        out[k] = v
    return out
