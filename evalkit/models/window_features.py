"""Windowed features of a clip for the naturalness discriminator.

A clip is resampled to :attr:`WindowConfig.fps` (and low-passed there at
:attr:`WindowConfig.band_hz` where set: :func:`at_working_rate`), reduced to its 18 role joints
(:mod:`evalkit.features.body`), and cut into overlapping windows (default 1 s every 0.5 s). Each
window gets one row of features, computed from per-frame signals of the whole clip (so that a
discontinuity on a window's edge is still seen):

* **kinematics** (lengths in body heights ``H``, time in seconds): joint speed, acceleration and
  jerk (mean and max over joints), root acceleration and jerk, heading rate and acceleration,
  bone-direction angular speed / acceleration / jerk, per-limb angular activity (a frozen limb
  moves much less than the body), trajectory linearity (``|second difference| / |first
  difference|`` of bone directions: near 0 for keyframe-like linear interpolation, high for
  jitter), the share of velocity energy above 6 and 10 Hz;
* **joint rotations** (the rig's own local rotations, per limb): how constant each moving
  joint's angular velocity is (``log10 |Δω| / |ω|`` per frame: natural capture ≈ -0.4, a
  linearly interpolated (slerped) joint is exactly constant, ≈ -6) and the share of frames in
  which every joint of a limb that moves in the clip is exactly still (a frozen limb);
* **limbs relative to their parent segment** (arms and head in a torso frame, legs in a pelvis
  frame): angular speed, the least active limb relative to the others, linearity;
* **spikes**: a frame's acceleration, jerk or joint speed against the median of the surrounding
  second (cuts and short blends are brief), and log-ratios of the worst window values to the
  clip's typical window (capture pipelines differ in noise; a seam stands out in its own clip);
* **kinetic energy** (unit masses, ``sum_j |v_j|^2`` in ``H^2/s^2``, log-scaled);
* **feet and ground** (foot-joint heights above each joint's own floor, the 5th percentile of its
  height over the clip): lowest foot height (penetration), contact fraction, foot-skate speed and
  skate ratio while in contact, vertical speed of planted feet, height of stationary feet
  relative to the clip's typical value (floating/sinking), frames airborne without ballistic
  centre-of-mass motion;
* **balance**: distance of the zero-moment point (cart-table model on the centre of mass from
  segment mass fractions) outside the support polygon of the planted foot joints;
* **skeleton**: time variation of bone lengths, left/right asymmetry of whole-limb lengths,
  signed knee flexion (hyperextension is negative), elbow angle;
* **scoring pipeline** (``fx_*``, :attr:`WindowConfig.scoring_features`): the per-frame traces
  of :mod:`evalkit.features` (foot-skate speed, penetration, floating, full-body ZMP outside
  the support polygon, ballistic error in flight);
* **coordination**: correlation of left and right foot forward velocities, of each wrist with
  the same-side foot, and of the two wrists; correlation of the swing (forward component) of
  the two thighs, the two upper arms, and each arm with the opposite thigh (limb transplants
  break these), and how steadily the arms keep phase with the legs over 3 s of gait
  (:func:`swing_locking`); the vertical component of the whole-body angular momentum about the centre of
  mass (``H^2/s`` per unit mass; natural arms counter the legs' and pelvis' twist, a limb out of
  step leaves it unbalanced) and the correlation of the arms' and legs' shares of it;
* **clip context** (``*_rel``): some of the above minus their median over the clip's windows, so
  a local anomaly stands out against the clip's own style;
* **pose samples** (``pose_*`` columns): heading-frame bone directions and their velocities at
  :attr:`WindowConfig.pose_samples` frames of the window; the discriminator turns them into a
  PCA reconstruction error against natural poses (:class:`~evalkit.models.discriminator.PoseResidual`).

Foot contacts, skate, ZMP and the centre of mass are also computed here, on the role joints and
a floor plane fitted to the stationary feet (:func:`ground_heights`), because real floors are
not always level (CMU subject 7's walks rise 13 cm over 4 m) and :mod:`evalkit.features`
assumes a level floor; both sets go into the model.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.ndimage import median_filter
from scipy.signal import savgol_filter
from scipy.spatial.transform import Rotation

from evalkit.errors import InputError
from evalkit.features.body import (BONES, FOOT_ROLES, LIMB_ROOTS, ROLE_INDEX, Body, body_of, bone_vectors,
                                 limb_joints, to_heading_frame)
from evalkit.features.ground import terrain_heights
from evalkit.motion import Motion, find_roles, low_pass, quat, resample
from evalkit.motion.ops import BAND_SHARE

GRAVITY = 9.81  # m/s^2
FEATURE_PREFIX = "f_"
POSE_PREFIX = "pose_"

# Segment mass fractions (Winter 2009 / de Leva 1996, rounded), segment = (proximal, distal)
# role; each segment's centre of mass is taken at its midpoint (an approximation: Winter's
# proximal ratios are 0.43-0.5).
_SEGMENTS: tuple[tuple[str, str, float], ...] = (
    ("hips", "neck", 0.497),
    ("neck", "head", 0.081),
    ("left_shoulder", "left_elbow", 0.028), ("right_shoulder", "right_elbow", 0.028),
    ("left_elbow", "left_wrist", 0.022), ("right_elbow", "right_wrist", 0.022),
    ("left_hip", "left_knee", 0.100), ("right_hip", "right_knee", 0.100),
    ("left_knee", "left_ankle", 0.0465), ("right_knee", "right_ankle", 0.0465),
    ("left_ankle", "left_toe", 0.0145), ("right_ankle", "right_toe", 0.0145),
)

_ARM_SEGMENTS = [i for i, (a, b, _) in enumerate(_SEGMENTS) if "elbow" in a or "elbow" in b]
_LEG_SEGMENTS = [i for i, (a, b, _) in enumerate(_SEGMENTS) if "knee" in a or "knee" in b or "ankle" in a]

#: Noise floors: each feature below reads what no one can see as zero, so that rounding in a
#: file (a nanometre, a micro-degree) or the constant proportions of a rig never move a verdict.
#: Left/right difference of whole-limb lengths (share of their mean) that real bodies and rigs
#: show (CMU subjects: up to 4.9 % in the arms; Bandai Namco and the Reallusion retargets: 0),
#: with a margin so that no rig sits near the edge; a limb scaled as an artifact differs by 12 %
#: and more.
ASYMMETRY_TOLERANCE = 0.08
#: Variation of a bone's length within a window (std / mean) that joints placed by capture or
#: pose fitting show (HumanML3D-style joint positions: about 1 %); rubber bones vary by 8 % and more.
BONE_LENGTH_TOLERANCE = 0.02
#: Smallest relative change of a joint's angular velocity per frame the rotation-linearity
#: signal resolves (``log10``: -3). Key interpolation reads -6 in double precision and -4 after
#: a text file: both are far below natural capture (-0.3 to -1.25) and both read -3 here.
LINEARITY_FLOOR = 1e-3
#: A limb is still in a frame when every moving joint of it turns by less than this (radians
#: per frame, 0.006 degrees): far below what anyone can see, far above a file's rounding.
STILL_RAD = 1e-4

_BONE_INDEX = {pair: i for i, pair in enumerate(BONES)}
_LIMB_BONES = {
    "left_arm": [_BONE_INDEX[("left_shoulder", "left_elbow")], _BONE_INDEX[("left_elbow", "left_wrist")]],
    "right_arm": [_BONE_INDEX[("right_shoulder", "right_elbow")], _BONE_INDEX[("right_elbow", "right_wrist")]],
    "left_leg": [_BONE_INDEX[("left_hip", "left_knee")], _BONE_INDEX[("left_knee", "left_ankle")],
                 _BONE_INDEX[("left_ankle", "left_toe")]],
    "right_leg": [_BONE_INDEX[("right_hip", "right_knee")], _BONE_INDEX[("right_knee", "right_ankle")],
                  _BONE_INDEX[("right_ankle", "right_toe")]],
    "head": [_BONE_INDEX[("neck", "head")]],
}


@dataclass(frozen=True)
class WindowConfig:
    """How clips are cut into windows.

    Attributes:
        fps: frame rate the clip is resampled to before features are computed (frames/s).
        window_s: window length, seconds.
        hop_s: step between window starts, seconds.
        pose_samples: frames per window whose pose goes into the ``pose_*`` columns.
        min_clip_s: shortest clip that can be scored, seconds (a shorter clip than
            ``window_s`` becomes one window).
        contact_height: a foot is on the ground when its lower joint (ankle or toe) is below
            this height above the joint's floor, in body heights (0.015 H is 2.6 cm for a 1.7 m
            body).
        skate_speed: horizontal speed of a planted foot counted as skating, body heights/s
            (0.1 H/s is 17 cm/s for a 1.7 m body).
        scoring_features: add the per-frame traces of :mod:`evalkit.features` (``fx_*``:
            foot-skate speed, penetration, floating, full-body ZMP outside the support polygon,
            ballistic error in flight, on 6 Hz low-passed positions with a level floor) to the
            windows' features.
        still_speed: RMS speed per body point (body heights/s, after the window's mean velocity
            is removed) below which a window counts as nearly still for the spectral share
            ``vhf_ratio`` (energy above 10 Hz): its denominator is at least the energy of this
            speed, so the few millimetres of capture noise in a still pose are not read as a
            high-frequency share of almost nothing (0.1 H/s: standing gestures of the Bandai
            Namco set read 0.08 at most, natural CMU capture up to 0.12; clips jittered at severity 0.5: 0.4 and
            more). ``hf_ratio`` (above 6 Hz, a feature of the trees only) keeps the window's own
            energy: floored too, it lowered natural locomotion scores (docs/discriminator.md).
        band_hz: with a frequency (Hz), every clip's movement is low-passed there at the
            working rate, whatever rate it came at (:func:`at_working_rate`). ``None`` (the
            default): see ``working_band``.
        working_band: a clip that reaches the working rate without band-limited decimation
            (a file at or below it, often decimated from capture without a filter, as datasets
            make their rates) is low-passed at the band decimation keeps
            (:data:`evalkit.motion.ops.BAND_SHARE` of the rate: 12 Hz at 30 frames/s), so the
            same take at 20, 30, 60 or 120 frames/s is judged on the same band: verdicts within
            0.02 instead of 0.08 (docs/discriminator.md). A clip whose ``meta["band_hz"]``
            already lies at or below that band is left as it is. Off by default in this class
            (a plain feature extractor); ``evalkit train`` turns it on, and the shipped model
            has it. Training examples, made at the working rate by the training set, keep their
            own band (:func:`evalkit.models.dataset.example_windows`).
    """

    fps: float = 30.0
    window_s: float = 1.0
    hop_s: float = 0.5
    pose_samples: int = 6
    min_clip_s: float = 0.5
    contact_height: float = 0.015
    skate_speed: float = 0.1
    scoring_features: bool = True
    still_speed: float = 0.1
    band_hz: float | None = None
    working_band: bool = False

    def __post_init__(self) -> None:
        for name in ("fps", "window_s", "hop_s", "min_clip_s", "contact_height", "skate_speed", "still_speed"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise InputError(f"window config: {name} must be positive, got {v}")
        if self.pose_samples < 1:
            raise InputError("window config: pose_samples must be at least 1")
        if self.band_hz is not None and not (np.isfinite(self.band_hz) and self.band_hz > 0):
            raise InputError(f"window config: band_hz must be positive or None, got {self.band_hz}")

    def to_dict(self) -> dict:
        return asdict(self)


def at_working_rate(motion: Motion, config: WindowConfig = WindowConfig()) -> Motion:
    """The clip at ``config.fps`` (band-limited resampling, :func:`evalkit.motion.resample`: a
    brief event between the kept frames is not lost), low-passed there at ``config.band_hz``
    (:func:`evalkit.motion.low_pass`) whatever its own rate was, or with
    ``config.working_band`` at the band decimation keeps where it has a wider one."""
    return _banded(_resampled(motion, config), config)


def _banded(resampled: Motion, config: WindowConfig) -> Motion:
    """A clip at the working rate low-passed at ``config.band_hz``, or with
    ``config.working_band`` at the band decimation keeps (``BAND_SHARE`` of the working rate)
    unless its ``meta["band_hz"]`` says it is no wider (band-limited decimation sets it)."""
    if config.band_hz is not None:
        return low_pass(resampled, config.band_hz)
    band = BAND_SHARE * config.fps
    if config.working_band and float(resampled.meta.get("band_hz", np.inf)) > band + 1e-9:
        return low_pass(resampled, band)
    return resampled


def _resampled(motion: Motion, config: WindowConfig) -> Motion:
    """The clip at ``config.fps`` by band-limited resampling (itself if it is at that rate)."""
    return motion if abs(motion.fps - config.fps) <= 1e-6 else resample(motion, config.fps, band_limited=True)


def prepare(motion: Motion, config: WindowConfig = WindowConfig(), roles: dict[str, int] | None = None) -> Body:
    """The clip's :class:`Body` at ``config.fps`` (:func:`at_working_rate`).

    Raises :class:`InputError` if the clip is shorter than ``config.min_clip_s`` seconds.
    """
    if motion.duration < config.min_clip_s:
        raise InputError(
            f"{motion.name or 'clip'}: {motion.duration:.2f} s is too short to score "
            f"(at least {config.min_clip_s:g} s)"
        )
    return body_of(at_working_rate(motion, config), roles)


def _diff(x: np.ndarray, order: int, fps: float) -> np.ndarray:
    """Backward differences of ``order`` along axis 0, padded at the start to the input length."""
    d = x
    for _ in range(order):
        if d.shape[0] < 2:
            return np.zeros_like(x)
        d = np.diff(d, axis=0) * fps
    pad = np.repeat(d[:1], x.shape[0] - d.shape[0], axis=0)
    return np.concatenate([pad, d], axis=0)


def _norm(x: np.ndarray) -> np.ndarray:
    return np.linalg.norm(x, axis=-1)


def _savgol(x: np.ndarray, fps: float, deriv: int) -> np.ndarray:
    n = x.shape[0]
    win = min(7, n if n % 2 == 1 else n - 1)
    if win < 3:
        return np.zeros_like(x)
    return savgol_filter(x, win, min(2, win - 1), deriv=deriv, delta=1.0 / fps, axis=0, mode="interp")


def _cross2(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """z component of the cross product of ``(..., 2)`` vectors."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _outside_support(points: np.ndarray, valid: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Distance of ``q (F, 2)`` outside the convex hull of the valid ``points (F, K, 2)``.

    0 inside, NaN when no point is valid. For a point outside a convex hull the nearest hull
    point lies on an edge, and every segment between two member points lies inside the hull, so
    the minimum over all point pairs' segments (and single points) equals the hull distance.
    """
    f, k, _ = points.shape
    best = np.full(f, np.inf)
    for i in range(k):
        d = _norm(q - points[:, i])
        best = np.where(valid[:, i], np.minimum(best, d), best)
        for j in range(i + 1, k):
            a, b = points[:, i], points[:, j]
            ab = b - a
            t = np.clip(np.sum((q - a) * ab, axis=1) / np.maximum(np.sum(ab * ab, axis=1), 1e-12), 0, 1)
            d = _norm(q - (a + t[:, None] * ab))
            ok = valid[:, i] & valid[:, j]
            best = np.where(ok, np.minimum(best, d), best)
    inside = np.zeros(f, dtype=bool)
    for i in range(k):
        for j in range(i + 1, k):
            for m in range(j + 1, k):
                a, b, c = points[:, i], points[:, j], points[:, m]
                s1 = _cross2(b - a, q - a)
                s2 = _cross2(c - b, q - b)
                s3 = _cross2(a - c, q - c)
                tri = ((s1 >= 0) & (s2 >= 0) & (s3 >= 0)) | ((s1 <= 0) & (s2 <= 0) & (s3 <= 0))
                area = np.abs(_cross2(b - a, c - a))
                inside |= tri & (area > 1e-8) & valid[:, i] & valid[:, j] & valid[:, m]
    out = np.where(inside, 0.0, best)
    return np.where(np.isfinite(out), out, np.nan)


_LOCAL_ARM = (("left_shoulder", "left_elbow"), ("left_elbow", "left_wrist"),
              ("right_shoulder", "right_elbow"), ("right_elbow", "right_wrist"))
_LOCAL_LEG = (("left_hip", "left_knee"), ("left_knee", "left_ankle"), ("left_ankle", "left_toe"),
              ("right_hip", "right_knee"), ("right_knee", "right_ankle"), ("right_ankle", "right_toe"))


def _frame(right: np.ndarray, up: np.ndarray) -> np.ndarray:
    """``(F, 3, 3)`` orthonormal bases (rows: right, up, forward) from rough right/up vectors."""
    u = up / np.maximum(_norm(up)[:, None], 1e-9)
    r = right - np.sum(right * u, 1)[:, None] * u
    r = r / np.maximum(_norm(r)[:, None], 1e-9)
    f = np.cross(r, u)
    return np.stack([r, u, f], axis=1)


def local_limb_directions(p: np.ndarray) -> np.ndarray:
    """``(frames, 11, 3)`` unit limb-bone directions relative to the parent segment.

    Arm bones (upper arm, forearm, left then right) and the head (neck to head) are expressed in
    a torso frame (up: hips to neck, right: the shoulder line); leg bones (thigh, shin, foot,
    left then right) in a pelvis frame (right: the hip line). ``p``: ``(frames, 18, 3)``.
    """
    I = ROLE_INDEX
    trunk = p[:, I["neck"]] - p[:, I["hips"]]
    torso = _frame(p[:, I["right_shoulder"]] - p[:, I["left_shoulder"]], trunk)
    pelvis = _frame(p[:, I["right_hip"]] - p[:, I["left_hip"]], trunk)

    def dirs(pairs, basis):
        v = np.stack([p[:, I[b]] - p[:, I[a]] for a, b in pairs], axis=1)
        v = np.einsum("fij,fbj->fbi", basis, v)
        return v / np.maximum(_norm(v)[..., None], 1e-9)

    return np.concatenate([dirs(_LOCAL_ARM, torso), dirs(_LOCAL_LEG, pelvis),
                           dirs((("neck", "head"),), torso)], axis=1)


def ground_heights(feet: np.ndarray, speed: np.ndarray, slope_ridge: float = 0.05,
                   fps: float | None = None) -> np.ndarray:
    """``(frames, joints)`` heights of foot joints above the floor.

    The floor is a plane ``y = a_j + b x + c z`` with one offset per joint (an ankle sits higher
    than a toe) and a shared slope, fitted by least squares to the joints' positions in frames
    where they are stationary (horizontal speed under 0.05 H/s; all frames if none), with a
    ridge penalty ``slope_ridge`` pulling the slope towards level (in-place motion does not
    determine it) and two rounds of outlier rejection (residuals beyond 2.5 robust standard
    deviations), so a floating interval of the clip does not tilt it. Real capture floors are
    not always level: CMU subject 7's walks rise 13 cm over 4 m. Heights are then shifted so
    each joint's 5th percentile is 0.

    With ``fps`` (and the four foot roles), heights are taken above the support of each contact
    instead when a terrain of level treads fits the contacts far better than the plane
    (:func:`evalkit.features.ground.terrain_heights`: steps, stairs; never on a level floor,
    so the heights of a flat clip are unchanged), unless the floor had to be fitted to all
    frames (too few stationary ones).

    Args:
        feet: ``(frames, joints, 3)`` positions in body heights (left ankle, left toe, right
            ankle, right toe for the local support).
        speed: ``(frames, joints)`` horizontal speeds in body heights per second.
        fps: frames per second (``None``: the plane only).
    """
    f, k, _ = feet.shape
    still = speed < 0.05
    fitted = still.sum() >= 3 * k
    if not fitted:
        still = np.ones_like(still)
    jj, tt = np.nonzero(still.T)
    pts = feet[tt, jj]
    keep = np.ones(len(pts), dtype=bool)
    coef = np.zeros(k + 2)
    for _ in range(3):
        A = np.zeros((int(keep.sum()), k + 2))
        A[np.arange(len(A)), jj[keep]] = 1.0
        A[:, k] = pts[keep, 0]
        A[:, k + 1] = pts[keep, 2]
        b = pts[keep, 1]
        # ridge on the two slope terms only: (A'A + R) x = A'b
        R = np.zeros((k + 2, k + 2))
        R[k, k] = R[k + 1, k + 1] = slope_ridge * max(len(A), 1)
        coef = np.linalg.lstsq(A.T @ A + R, A.T @ b, rcond=None)[0]
        res = pts[:, 1] - (coef[jj] + coef[k] * pts[:, 0] + coef[k + 1] * pts[:, 2])
        mad = np.median(np.abs(res - np.median(res))) * 1.4826 + 1e-9
        keep = np.abs(res - np.median(res)) < 2.5 * mad
        if keep.sum() < k + 2:
            break
    plane = coef[k] * feet[..., 0] + coef[k + 1] * feet[..., 2]
    h = feet[..., 1] - plane
    if fps is not None and k == 4 and fitted:  # steps, stairs: the support under each contact
        terrain = terrain_heights(feet, speed, fps, h - coef[:k])
        h = h if terrain is None else terrain
    return h - np.percentile(h, 5, axis=0)


def centre_of_mass(positions: np.ndarray) -> np.ndarray:
    """``(frames, 3)`` centre of mass from role positions ``(frames, 18, 3)`` (same units)."""
    com = np.zeros((positions.shape[0], 3))
    total = 0.0
    for a, b, w in _SEGMENTS:
        com += w * 0.5 * (positions[:, ROLE_INDEX[a]] + positions[:, ROLE_INDEX[b]])
        total += w
    return com / total


def frame_signals(body: Body, config: WindowConfig = WindowConfig()) -> dict[str, np.ndarray]:
    """Per-frame signals of a clip, each ``(frames,)`` (NaN where undefined).

    Lengths are in body heights ``H`` and time in seconds unless the name says otherwise
    (``*_m`` metres). See the module docstring for what each family measures; the families are
    computed by the ``_*_signals`` functions below, in this order (the order of the keys is the
    order of the window table's columns, which a saved model relies on).
    """
    fps = body.fps
    pm = body.positions  # metres
    p = pm / body.height
    vn, an, jn = (_norm(_diff(p, k, fps)) for k in (1, 2, 3))  # (F, 18) speed, acc., jerk
    yaw = np.unwrap(body.heading)
    vec = bone_vectors(pm)
    loc = local_limb_directions(p)
    l1 = _norm(_diff(loc, 1, fps))  # (F, local bones), rad/s
    l2 = _norm(_diff(loc, 2, fps))
    sig = _body_speed_signals(p, vn, an, jn, fps)
    sig.update(_heading_signals(yaw, fps))
    sig.update(_bone_direction_signals(vec, yaw, fps))
    sig.update(_local_limb_signals(l1, l2, fps))
    sig.update(_spike_signals(vn, an, jn, l2, fps))
    sig.update(_bone_length_signals(vec, body.height))
    sig.update(_knee_elbow_signals(p))
    foot_sig, fh, contact = _foot_signals(p, fps, config)
    sig.update(foot_sig)
    sig.update(_balance_signals(pm, body.height, fh, contact, fps))
    sig.update(_angular_momentum_signals(p, fps))
    return sig


def _body_speed_signals(p: np.ndarray, vn: np.ndarray, an: np.ndarray, jn: np.ndarray,
                        fps: float) -> dict[str, np.ndarray]:
    """Mean and largest speed, acceleration and jerk over the roles (H/s, H/s², H/s³), the
    hips' acceleration and jerk, and log kinetic energy (``p``: ``(F, 18, 3)`` in H)."""
    hips = p[:, ROLE_INDEX["hips"]]
    return {
        "speed": vn.mean(1), "speed_max": vn.max(1),
        "acc": an.mean(1), "acc_max": an.max(1),
        "jerk": jn.mean(1), "jerk_max": jn.max(1),
        "root_acc": _norm(_diff(hips, 2, fps)),
        "root_jerk": _norm(_diff(hips, 3, fps)),
        "ke": np.log(np.sum(vn ** 2, axis=1) + 1e-4),
    }


def _heading_signals(yaw: np.ndarray, fps: float) -> dict[str, np.ndarray]:
    """Turning rate and its change of the body's heading (rad/s, rad/s²)."""
    return {"yaw_rate": np.abs(_diff(yaw, 1, fps)), "yaw_acc": np.abs(_diff(yaw, 2, fps))}


def _bone_direction_signals(vec: np.ndarray, yaw: np.ndarray, fps: float) -> dict[str, np.ndarray]:
    """Angular speed, acceleration and jerk of the bone directions in the heading frame
    (rad/s...), how straight they move, and the activity of the least active limb."""
    dirs = to_heading_frame(vec, yaw)
    dirs = dirs / np.maximum(_norm(dirs)[..., None], 1e-9)
    d1 = _norm(_diff(dirs, 1, fps))  # (F, bones) ~ angular speed, rad/s
    d2 = _norm(_diff(dirs, 2, fps))
    d3 = _norm(_diff(dirs, 3, fps))
    limb_act = np.stack([d1[:, idx].mean(1) for idx in _LIMB_BONES.values()], axis=1)
    return {
        "ang_speed": d1.mean(1),
        "ang_acc": d2.mean(1),
        "ang_acc_max": d2.max(1),
        "ang_jerk": d3.mean(1),
        "linearity": np.median(d2 / fps / (d1 + 0.05), axis=1),
        "limb_activity_min": limb_act.min(1) / (d1.mean(1) + 0.05),
        "limb_acc_max": np.stack([d2[:, idx].mean(1) for idx in _LIMB_BONES.values()], axis=1).max(1),
    }


def _local_limb_signals(l1: np.ndarray, l2: np.ndarray, fps: float) -> dict[str, np.ndarray]:
    """Limbs relative to their parent segment (arms and head in a torso frame, legs in a pelvis
    frame; ``l1``, ``l2``: ``(F, local bones)`` angular speed and acceleration): a frozen or
    keyframed limb shows here even while the body carries it around."""
    groups = [[0, 1], [2, 3], [4, 5, 6], [7, 8, 9], [10]]  # l arm, r arm, l leg, r leg, head
    g1 = np.stack([l1[:, g].mean(1) for g in groups], axis=1)
    g2 = np.stack([l2[:, g].mean(1) for g in groups], axis=1)
    return {
        "local_speed": l1.mean(1),
        "local_speed_min_ratio": g1[:, :4].min(1) / (g1[:, :4].mean(1) + 0.05),
        "local_linearity": np.median(l2 / fps / (l1 + 0.05), axis=1),
        "local_linearity_min": (g2 / fps / (g1 + 0.05))[:, :4].min(1),
        "local_acc_max": g2.max(1),
    }


def _spike_signals(vn: np.ndarray, an: np.ndarray, jn: np.ndarray, l2: np.ndarray,
                   fps: float) -> dict[str, np.ndarray]:
    """A frame's acceleration / jerk against the median of the surrounding second (cuts and
    short blends are brief; natural vigour lasts), and the same per joint for speed (a joint
    that teleports), then the worst joint."""
    size = max(3, int(round(fps)) | 1)
    sig = {}
    for name, x in (("acc_spike", an.mean(1)), ("jerk_spike", jn.mean(1)), ("local_acc_spike", l2.mean(1))):
        med = median_filter(x, size=size, mode="nearest")
        sig[name] = x / (med + 0.1 * float(np.median(x)) + 1e-9)
    med = median_filter(vn, size=(size, 1), mode="nearest")
    sig["joint_vel_spike"] = (vn / (med + 0.1 * np.median(vn, axis=0) + 1e-9)).max(1)
    return sig


def _bone_length_signals(vec: np.ndarray, height: float) -> dict[str, np.ndarray]:
    """Bone lengths in H (``_lengths``, ``(F, bones)``, consumed by :func:`window_features`) and
    the left/right asymmetry of whole-limb lengths (upper + lower segment; feet are left out:
    real CMU skeletons differ left to right by up to 7.5 % in the foot, 5 % in single arm
    bones, less over a whole limb)."""
    lengths = _norm(vec) / height
    asym = []
    for a, b, c in (("shoulder", "elbow", "wrist"), ("hip", "knee", "ankle")):
        ll = lengths[:, _BONE_INDEX[(f"left_{a}", f"left_{b}")]] + lengths[:, _BONE_INDEX[(f"left_{b}", f"left_{c}")]]
        rl = lengths[:, _BONE_INDEX[(f"right_{a}", f"right_{b}")]] + lengths[:, _BONE_INDEX[(f"right_{b}", f"right_{c}")]]
        asym.append(np.abs(ll - rl) / np.maximum(0.5 * (ll + rl), 1e-6))
    # only the excess beyond what real bodies and rigs show counts: below it the value says
    # which rig this is (constant over a clip), not how the body moves
    asym = np.maximum(np.stack(asym, axis=1) - ASYMMETRY_TOLERANCE, 0.0)
    return {"_lengths": lengths, "asym_max": asym.max(1), "asym_mean": asym.mean(1)}


def _knee_elbow_signals(p: np.ndarray) -> dict[str, np.ndarray]:
    """Signed knee flexion (radians; negative bends the knee backwards) of the two legs, and the
    larger elbow angle (radians)."""
    right = p[:, ROLE_INDEX["right_hip"]] - p[:, ROLE_INDEX["left_hip"]]
    right = right / np.maximum(_norm(right)[:, None], 1e-9)
    knee = []
    elbow = []
    for side in ("left", "right"):
        thigh = p[:, ROLE_INDEX[f"{side}_knee"]] - p[:, ROLE_INDEX[f"{side}_hip"]]
        shin = p[:, ROLE_INDEX[f"{side}_ankle"]] - p[:, ROLE_INDEX[f"{side}_knee"]]
        cosang = np.sum(thigh * shin, 1) / np.maximum(_norm(thigh) * _norm(shin), 1e-9)
        ang = np.arccos(np.clip(cosang, -1, 1))
        sign = -np.sign(np.sum(np.cross(thigh, shin) * right, 1))
        knee.append(np.where(sign == 0, 1.0, sign) * ang)
        upper = p[:, ROLE_INDEX[f"{side}_elbow"]] - p[:, ROLE_INDEX[f"{side}_shoulder"]]
        fore = p[:, ROLE_INDEX[f"{side}_wrist"]] - p[:, ROLE_INDEX[f"{side}_elbow"]]
        cose = np.sum(upper * fore, 1) / np.maximum(_norm(upper) * _norm(fore), 1e-9)
        elbow.append(np.arccos(np.clip(cose, -1, 1)))
    return {"knee_flex_min": np.minimum(*knee), "knee_flex_max": np.maximum(*knee), "elbow_max": np.maximum(*elbow)}


def _foot_signals(p: np.ndarray, fps: float, config: WindowConfig) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Foot heights above the floor (a plane fitted to stationary feet, see
    :func:`ground_heights`), contacts, skating and stance.

    Returns:
        the signals; ``fh``: ``(F, 4)`` heights (H) of left ankle, left toe, right ankle, right
        toe; ``contact``: ``(F, 2)`` bool, left and right foot on the ground.
    """
    n = p.shape[0]
    fidx = [ROLE_INDEX[r] for r in FOOT_ROLES]  # l_ankle, l_toe, r_ankle, r_toe
    fv = np.gradient(p[:, fidx], axis=0) * fps if n > 1 else np.zeros((n, 4, 3))
    fvh = _norm(fv[..., [0, 2]])
    fvy = np.abs(fv[..., 1])
    fh = ground_heights(p[:, fidx], fvh, fps=fps)
    sig = {"foot_h_min": fh.min(1)}
    contact = []
    skate = []
    stance_h = []
    stance_vy = []
    for s_i in (0, 2):  # left (ankle, toe), right (ankle, toe)
        h_side = np.minimum(fh[:, s_i], fh[:, s_i + 1])
        sp_side = np.minimum(fvh[:, s_i], fvh[:, s_i + 1])
        c = h_side < config.contact_height
        contact.append(c)
        skate.append(np.where(c, sp_side, np.nan))
        stationary = sp_side < 0.05
        stance_h.append(np.where(stationary, h_side, np.nan))
        stance_vy.append(np.where(c, np.minimum(fvy[:, s_i], fvy[:, s_i + 1]), np.nan))
    contact = np.stack(contact, 1)
    skate = np.stack(skate, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # the slower of the planted feet: in double support the planted one
        sig["skate"] = np.nanmin(skate, axis=1)
        sig["skating"] = np.where(np.isnan(sig["skate"]), np.nan, (sig["skate"] > config.skate_speed).astype(float))
        sig["stance_h"] = np.nanmean(np.stack(stance_h, 1), axis=1)
        sig["stance_vy"] = np.nanmean(np.stack(stance_vy, 1), axis=1)
    sig["contact"] = contact.any(1).astype(float)
    sig["contact_both"] = contact.all(1).astype(float)
    return sig, fh, contact


def _balance_signals(pm: np.ndarray, height: float, fh: np.ndarray, contact: np.ndarray,
                     fps: float) -> dict[str, np.ndarray]:
    """Centre of mass, flight and ZMP (``pm`` in metres; m/s²): non-ballistic flight while
    airborne, and how far the zero-moment point leaves the support polygon (H)."""
    n = pm.shape[0]
    fidx = [ROLE_INDEX[r] for r in FOOT_ROLES]
    com = centre_of_mass(pm)
    acc_com = _savgol(com, fps, 2)
    airborne = ~contact.any(1)
    ballistic_err = np.abs(acc_com[:, 1] + GRAVITY) / GRAVITY
    sig = {"flight_nonballistic": np.where(airborne, (ballistic_err > 0.35).astype(float), np.nan)}
    # COM height above the floor under the lowest foot joint (metres)
    low = np.argmin(fh, axis=1)
    floor_y = pm[np.arange(n), np.asarray(fidx)[low], 1] - fh[np.arange(n), low] * height
    denom = acc_com[:, 1] + GRAVITY
    ok = denom > 0.2 * GRAVITY
    hc = com[:, 1] - floor_y
    safe = np.where(ok, denom, 1.0)
    zmp = com[:, [0, 2]] - (hc / safe)[:, None] * acc_com[:, [0, 2]]
    pts = pm[:, fidx][:, :, [0, 2]]
    valid = np.repeat(contact, 2, axis=1)
    out = _outside_support(pts, valid, zmp) / height
    sig["zmp_out"] = np.where(ok & contact.any(1), out, np.nan)
    return sig


def _angular_momentum_signals(p: np.ndarray, fps: float) -> dict[str, np.ndarray]:
    """Angular momentum about the COM (point segment masses at segment midpoints; body heights,
    mass fractions, per second): in natural movement the arms counter the legs' and the
    pelvis' twist about the vertical, so a limb moving out of step with the rest (a limb from
    another moment or clip) leaves the vertical component unbalanced."""
    seg = np.stack([0.5 * (p[:, ROLE_INDEX[a_]] + p[:, ROLE_INDEX[b_]]) for a_, b_, _ in _SEGMENTS], 1)
    mass = np.array([w_ for *_, w_ in _SEGMENTS])
    mass = mass / mass.sum()
    com_h = np.einsum("fsk,s->fk", seg, mass)
    r = seg - com_h[:, None]
    dv = _diff(seg, 1, fps) - _diff(com_h, 1, fps)[:, None]
    ly = mass[None] * (r[..., 2] * dv[..., 0] - r[..., 0] * dv[..., 2])  # (F, segments) vertical part
    return {
        "ang_mom_y": np.abs(ly.sum(1)),
        "ang_mom_arms_y": ly[:, _ARM_SEGMENTS].sum(1),
        "ang_mom_legs_y": ly[:, _LEG_SEGMENTS].sum(1),
    }


def scoring_signals(motion: Motion, height: float, roles: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Per-frame traces of :func:`evalkit.features.score.analyse` (the ``evalkit score``
    pipeline) as ``(frames,)`` signals in body heights and ``g`` (NaN where undefined, and on
    end frames that pipeline drops as pops)."""
    from evalkit.features.score import ScoreConfig, analyse, traces_table

    names = {r: motion.skeleton.names[j] for r, j in roles.items()} if roles else None
    tt = traces_table(analyse(motion, ScoreConfig(roles=names)))
    n = motion.n_frames
    idx = tt["frame"].to_numpy(dtype=int)

    def put(values) -> np.ndarray:
        out = np.full(n, np.nan)
        out[idx] = np.asarray(values, dtype=float)
        return out

    contact = tt["contact_left"].to_numpy() | tt["contact_right"].to_numpy()
    skate = np.where(tt["contact_left"], tt["skate_left"], 0.0)
    skate = np.maximum(skate, np.where(tt["contact_right"], tt["skate_right"], 0.0))
    return {
        "fx_contact": put(contact),
        "fx_skate": put(np.where(contact, skate, np.nan) / height),
        "fx_penetration": put(tt["penetration"] / height),
        "fx_floating": put(tt["floating"] / height),
        "fx_zmp_outside": put(tt["zmp_outside"] / height),
        "fx_ballistic_error": put(tt["ballistic_error"] / GRAVITY),
    }


def rotation_signals(motion: Motion, n_frames: int, fps: float, roles: dict[str, int] | None = None,
                     moving_rad_s: float = 0.3) -> dict[str, np.ndarray]:
    """Per-frame, per-limb signals of the joints' local rotations, each ``(n_frames, limbs)``.

    Limbs are those of :data:`~evalkit.features.body.LIMB_ROOTS` (a limb's root joint and its
    descendants). Two signals:

    * ``rot_linearity``: ``log10(max(|ω_{t+1} - ω_t| / max(|ω_t|, |ω_{t+1}|), LINEARITY_FLOOR))``, the median
      over the limb's joints that turn faster than ``moving_rad_s`` (NaN when none does), where
      ``ω_t`` is the joint's local rotation from frame ``t`` to ``t + 1`` as a rotation vector
      (radians per frame). A joint slerped between keys turns at exactly constant velocity
      (-3, the floor :data:`LINEARITY_FLOOR`), natural capture at 30 frames/s
      never for long (window medians -0.3 to -0.8 in walks and runs; slow, smooth gestures
      reach -1.25, about ``log10(2π f / fps)`` for movement at ``f`` Hz).
    * ``rot_still``: 1 where every joint of the limb that moves in the clip (90th percentile
      faster than ``moving_rad_s``) turns by less than :data:`STILL_RAD` in the frame (a frozen limb), else 0.

    ``motion`` is the clip at ``fps`` with ``n_frames`` frames, or at its own lower frame rate:
    then the signals are computed there and held to the ``fps`` frames, because upsampling by
    slerp would itself make constant-velocity stretches.
    """
    roles = roles or find_roles(motion.skeleton, strict=True)
    q = quat.make_continuous(motion.rotations, axis=0)
    r = quat.multiply(quat.inverse(q[:-1]), q[1:])  # (F-1, J, 4) frame-to-frame, local frame
    omega = Rotation.from_quat(r.reshape(-1, 4)).as_rotvec().reshape(r.shape[:-1] + (3,))  # rad/frame
    speed = np.linalg.norm(omega, axis=-1)  # (F-1, J)
    floor = moving_rad_s / motion.fps
    fast = np.maximum(speed[1:], speed[:-1])
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(fast > floor, np.linalg.norm(np.diff(omega, axis=0), axis=-1) / fast, np.nan)
    moves = np.percentile(speed, 90, axis=0) > floor if len(speed) else np.zeros(motion.n_joints, bool)
    m = motion.n_frames
    lin = np.full((m, len(LIMB_ROOTS)), np.nan)
    still = np.zeros((m, len(LIMB_ROOTS)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN frames (limb at rest)
        for k, limb in enumerate(LIMB_ROOTS):
            joints = limb_joints(motion, limb, roles)
            if m > 2:
                lin[2:, k] = np.log10(np.maximum(np.nanmedian(ratio[:, joints], axis=1), LINEARITY_FLOOR))
            active = [j for j in joints if moves[j]]
            if active and m > 1:
                still[1:, k] = (speed[:, active] < STILL_RAD).all(1)
    if m != n_frames:
        src = np.clip(np.round(np.arange(n_frames) * motion.fps / fps).astype(int), 0, m - 1)
        lin, still = lin[src], still[src]
    return {"rot_linearity": lin, "rot_still": still}


_FX = ("fx_contact", "fx_skate", "fx_penetration", "fx_floating", "fx_zmp_outside", "fx_ballistic_error")

_MEAN_MAX = ("speed", "acc", "jerk", "root_acc", "root_jerk", "yaw_rate", "yaw_acc", "ang_speed",
             "ang_acc", "ang_jerk", "linearity", "limb_activity_min", "zmp_out", "stance_vy",
             "local_speed", "local_speed_min_ratio", "local_linearity", "local_linearity_min", "ang_mom_y")
_MEDIAN_P25 = ("skate",)  # robust: planted-foot speeds mix in toe-down swing frames
_MAX_ONLY = ("speed_max", "acc_max", "jerk_max", "ang_acc_max", "limb_acc_max", "asym_max",
             "knee_flex_max", "elbow_max", "local_acc_max", "acc_spike", "jerk_spike", "local_acc_spike",
             "joint_vel_spike")
_MEAN_ONLY = ("ke", "asym_mean", "contact", "contact_both", "skating", "flight_nonballistic", "stance_h")
_MIN_ONLY = ("foot_h_min", "knee_flex_min", "limb_activity_min", "local_speed_min_ratio", "local_linearity_min")
_RELATIVE = ("acc_max_max", "jerk_mean", "ang_acc_max_max", "ang_jerk_mean", "linearity_mean", "ke_mean",
             "speed_mean", "skate_median", "stance_h_mean", "foot_h_min_min", "zmp_out_mean",
             "limb_activity_min_min", "hf_ratio", "root_jerk_mean", "yaw_acc_max", "bone_len_var",
             "local_speed_min_ratio_min", "local_linearity_mean", "local_linearity_min_min", "local_acc_max_max",
             "jerk_spike_max", "acc_spike_max", "local_acc_spike_max", "ang_mom_y_mean", "ang_mom_y_max")


def window_starts(n_frames: int, config: WindowConfig = WindowConfig()) -> tuple[np.ndarray, int]:
    """Start frames of the windows of a clip and the window length in frames.

    Windows step by ``hop_s``; a last window is aligned to the clip's end so every frame is
    covered. A clip shorter than ``window_s`` is one window.
    """
    w = int(round(config.window_s * config.fps))
    hop = max(1, int(round(config.hop_s * config.fps)))
    if n_frames <= w:
        return np.array([0]), n_frames
    starts = list(range(0, n_frames - w + 1, hop))
    if starts[-1] != n_frames - w:
        starts.append(n_frames - w)
    return np.asarray(starts), w


PHASE_CONTEXT_S = 3.0  # seconds of motion around a window over which swing phase locking is measured


def swing_locking(swing: np.ndarray, starts: np.ndarray, w: int, fps: float,
                  context_s: float = PHASE_CONTEXT_S) -> dict[str, np.ndarray]:
    """How steadily the arms swing in phase with the legs, per window, ``(windows,)`` each.

    ``swing`` is ``(frames, 4)``: the forward component of the left and right upper arm (torso
    frame) and the left and right thigh (pelvis frame), as in :func:`local_limb_directions`.
    Each is band-passed to the band of gait (0.4-3.5 Hz) and made analytic (Hilbert); over
    ``context_s`` seconds centred on the window the amplitude-weighted phase-locking value of
    two limbs is ``|sum a conj(b)| / sum |a||b|`` (1: a constant phase difference, 0: none) and
    its real part is the weighted cosine of the phase difference. In walking and running each arm
    swings with the opposite thigh and against its own; an arm from another clip or another
    moment swings with another rhythm, which a 1-s window alone shows poorly (window AUC on arm
    transplants in locomotion 0.84 at 2 s, 0.87 at 3 s of context, against 0.77 for the
    zero-lag correlations, on the bundled and shared capture). For limbs that barely swing
    (standing, gesturing) the values carry little information.

    Returns ``swing_lock_contra`` / ``swing_lock_ipsi`` (the lower of the two sides, arm with
    the opposite / the same-side thigh, the latter sign-flipped), ``swing_lock_arms`` (left
    against the sign-flipped right arm) and ``swing_phase_contra`` (the lower weighted cosine
    of arm and opposite thigh).
    """
    from scipy.signal import butter, hilbert, sosfiltfilt

    n = swing.shape[0]
    x = swing - swing.mean(0)
    sos = butter(2, [0.4, min(3.5, 0.45 * fps)], btype="band", fs=fps, output="sos")
    if n > 3 * (2 * len(sos) + 1):  # sosfiltfilt's default padding needs a longer signal
        x = sosfiltfilt(sos, x, axis=0)
    a = hilbert(x, axis=0)
    la, ra, lt, rt = (a[:, i] for i in range(4))
    ctx = min(n, max(w, int(round(context_s * fps))))
    c0 = np.clip(starts + w // 2 - ctx // 2, 0, max(0, n - ctx))
    cidx = c0[:, None] + np.arange(ctx)[None, :]

    def lock(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = (u * np.conj(v))[cidx].sum(1)
        den = (np.abs(u) * np.abs(v))[cidx].sum(1) + 1e-12
        return np.abs(z) / den, z.real / den

    c_l, c_r, i_l, i_r, arms = lock(la, rt), lock(ra, lt), lock(la, -lt), lock(ra, -rt), lock(la, -ra)
    return {
        "swing_lock_contra": np.minimum(c_l[0], c_r[0]),
        "swing_lock_ipsi": np.minimum(i_l[0], i_r[0]),
        "swing_lock_arms": arms[0],
        "swing_phase_contra": np.minimum(c_l[1], c_r[1]),
    }


def _corr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation of ``(W, n)`` arrays; NaN where either barely varies."""
    xc = x - x.mean(1, keepdims=True)
    yc = y - y.mean(1, keepdims=True)
    den = np.sqrt((xc ** 2).sum(1) * (yc ** 2).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(1) / den
    return np.where(den > 1e-6, r, np.nan)


def window_features(motion: Motion | Body, config: WindowConfig = WindowConfig(),
                    roles: dict[str, int] | None = None) -> pd.DataFrame:
    """One row of features per window of a clip.

    Args:
        motion: the clip (or its prepared :class:`Body` at ``config.fps``).
        config: window length, hop, frame rate.
        roles: role -> joint index overrides for unusual rigs.

    Returns:
        DataFrame with ``start_s``, ``end_s`` (seconds from the clip's first frame), feature
        columns ``f_*`` and pose columns ``pose_*``.
    """
    if isinstance(motion, Body):
        body, work = motion, None
    else:
        if motion.duration < config.min_clip_s:
            prepare(motion, config, roles)  # raises the too-short error
        resampled = _resampled(motion, config)
        work = _banded(resampled, config)
        body = body_of(work, roles)
    fps = body.fps
    sig = frame_signals(body, config)
    if config.scoring_features:
        if work is None:
            raise InputError("scoring_features needs the Motion, not a prepared Body")
        sig.update(scoring_signals(work, body.height, roles))
    lengths = sig.pop("_lengths")
    n = body.n_frames
    if work is not None:
        # the rig's own rotations, not low-passed at the working rate: slerped keys and frozen
        # limbs are exact properties of them that the filter would blur; a clip below the
        # working rate is read at its own rate
        native = motion if motion.fps < config.fps - 1e-6 else resampled
        rot = rotation_signals(native, n, fps, roles)
    else:
        rot = {k: np.full((n, len(LIMB_ROOTS)), np.nan) for k in ("rot_linearity", "rot_still")}
    starts, w = window_starts(n, config)
    idx = starts[:, None] + np.arange(w)[None, :]  # (W, w)
    cols: dict[str, np.ndarray] = {
        "start_s": starts / fps,
        "end_s": (starts + w) / fps,
    }
    p = body.positions / body.height
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        cols.update(_window_signal_statistics(sig, rot, lengths, idx, config))
        cols.update(_velocity_spectrum_shares(p, idx, w, fps, config))
        cols.update(_coordination_features(body.heading, p, idx, fps))
        loc = local_limb_directions(p)
        cols.update(_swing_features(loc, sig, idx, starts, w, fps))
        cols.update(_relative_features(cols))
    out = {k if k in ("start_s", "end_s") else FEATURE_PREFIX + k: v for k, v in cols.items()}
    frame = pd.DataFrame(out)
    samples = _pose_samples(body, idx, w, config)
    pose_cols = [f"{POSE_PREFIX}{i}" for i in range(samples.shape[1])]
    frame = pd.concat([frame, pd.DataFrame(samples, columns=pose_cols)], axis=1)
    return frame


def _window_signal_statistics(sig: dict[str, np.ndarray], rot: dict[str, np.ndarray], lengths: np.ndarray,
                              idx: np.ndarray, config: WindowConfig) -> dict[str, np.ndarray]:
    """Per-window statistics (mean, max, median, 25th percentile, min as the signal lists say)
    of the per-frame signals; the worst limb's rotation linearity and stillness; the skate
    ratio; stance height relative to the clip; bone-length variation. ``idx``: ``(W, w)``
    frame indices of the windows."""
    cols: dict[str, np.ndarray] = {}
    for name in _MEAN_MAX:
        x = sig[name][idx]
        cols[f"{name}_mean"] = np.nanmean(x, 1)
        cols[f"{name}_max"] = np.nanmax(x, 1)
    if config.scoring_features:
        for name in _FX:
            x = sig[name][idx]
            cols[f"{name}_mean"] = np.nanmean(x, 1)
            cols[f"{name}_max"] = np.nanmax(x, 1)
    for name in _MEDIAN_P25:
        x = sig[name][idx]
        cols[f"{name}_median"] = np.nanmedian(x, 1)
        cols[f"{name}_p25"] = np.nanpercentile(x, 25, axis=1)
    for name in _MAX_ONLY:
        cols[f"{name}_max"] = np.nanmax(sig[name][idx], 1)
    for name in _MEAN_ONLY:
        cols[f"{name}_mean"] = np.nanmean(sig[name][idx], 1)
    for name in _MIN_ONLY:
        cols[f"{name}_min"] = np.nanmin(sig[name][idx], 1)
    # per limb over the window, then the worst limb
    cols["rot_linearity_min"] = np.nanmin(np.nanmedian(rot["rot_linearity"][idx], 1), 1)
    cols["rot_still_max"] = np.nanmax(rot["rot_still"][idx].mean(1), 1)
    # skate ratio: share of planted frames that skate
    cols["skate_ratio"] = np.nanmean(sig["skating"][idx], 1)
    # stationary-foot height relative to the clip (floating / sinking intervals)
    clip_stance = np.nanmedian(sig["stance_h"]) if np.isfinite(sig["stance_h"]).any() else np.nan
    cols["stance_h_mean"] = cols["stance_h_mean"] - clip_stance
    # bone-length variation within the window (rubber bones)
    lw = lengths[idx]  # (W, w, bones)
    # beyond the wobble of joints placed by a capture or fitting pipeline (rig bones: 0, with
    # rounding noise that must not count)
    rel = np.maximum(lw.std(1) / np.maximum(lw.mean(1), 1e-6) - BONE_LENGTH_TOLERANCE, 0.0)
    cols["bone_len_var"] = rel.max(1)
    cols["bone_len_var_mean"] = rel.mean(1)
    return cols


def _velocity_spectrum_shares(p: np.ndarray, idx: np.ndarray, w: int, fps: float,
                              config: WindowConfig) -> dict[str, np.ndarray]:
    """Spectral share of the velocity energy above 6 Hz (``hf_ratio``) and above 10 Hz
    (``vhf_ratio``, floored at the energy of ``config.still_speed``): jitter."""
    vel = _diff(p, 1, fps)[idx]  # (W, w, 18, 3)
    vel = vel - vel.mean(1, keepdims=True)
    spec = np.abs(np.fft.rfft(vel, axis=1)) ** 2
    freqs = np.fft.rfftfreq(w, 1.0 / fps)
    # Parseval: a window whose points move at RMS speed v has rfft energy ~ w^2 * points * v^2 / 2
    floor = 0.5 * w * w * vel.shape[2] * config.still_speed ** 2
    energy = spec.sum(axis=(1, 2, 3))
    total = np.maximum(energy, floor) + 1e-9
    return {"hf_ratio": spec[:, freqs > 6.0].sum(axis=(1, 2, 3)) / (energy + 1e-9),
            "vhf_ratio": spec[:, freqs > 10.0].sum(axis=(1, 2, 3)) / total}


def _coordination_features(heading_yaw: np.ndarray, p: np.ndarray, idx: np.ndarray, fps: float) -> dict[str, np.ndarray]:
    """Correlation of the feet's, the wrists' and each arm's with the opposite leg's forward
    velocity relative to the hips, in the heading frame (forward = +Z; ``heading_yaw``: the
    body's :attr:`~evalkit.features.body.Body.heading`)."""
    yaw = np.unwrap(heading_yaw)
    vloc = to_heading_frame(_diff(p, 1, fps), yaw)
    fwd = vloc[..., 2]
    la, ra = fwd[:, ROLE_INDEX["left_ankle"]][idx], fwd[:, ROLE_INDEX["right_ankle"]][idx]
    lw_, rw_ = fwd[:, ROLE_INDEX["left_wrist"]][idx], fwd[:, ROLE_INDEX["right_wrist"]][idx]
    hipf = fwd[:, ROLE_INDEX["hips"]][idx]
    return {
        "corr_feet": _corr(la - hipf, ra - hipf),
        "corr_wrists": _corr(lw_ - hipf, rw_ - hipf),
        "corr_arm_leg": np.nanmean(np.stack([_corr(lw_ - hipf, la - hipf), _corr(rw_ - hipf, ra - hipf)]), 0),
    }


def _swing_features(loc: np.ndarray, sig: dict[str, np.ndarray], idx: np.ndarray, starts: np.ndarray,
                    w: int, fps: float) -> dict[str, np.ndarray]:
    """Swing phase of limbs relative to their parent segment: forward component of the upper
    arms (torso frame) and thighs (pelvis frame); in gait the thighs swing in anti-phase and
    each arm with the opposite leg. Also the arms' and legs' angular-momentum correlation."""
    la_, ra_, lt_, rt_ = (loc[:, i, 2][idx] for i in (0, 2, 4, 7))
    arm_leg = np.stack([_corr(la_, rt_), _corr(ra_, lt_)])
    cols = {
        "phase_thighs": _corr(lt_, rt_),
        "phase_arms": _corr(la_, ra_),
        "phase_arm_leg_min": np.nanmin(arm_leg, 0),
        "phase_arm_leg_mean": np.nanmean(arm_leg, 0),
        "ang_mom_arm_leg": _corr(sig["ang_mom_arms_y"][idx], sig["ang_mom_legs_y"][idx]),
    }
    cols.update(swing_locking(loc[:, [0, 2, 4, 7], 2], starts, w, fps))
    cols["swing_thighs"] = lt_.std(1) + rt_.std(1)
    cols["swing_arms"] = la_.std(1) + ra_.std(1)
    return cols


def _relative_features(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Features relative to the clip's typical window: ``*_rel`` (minus the clip median) and
    spikes as log-ratios to it (capture pipelines differ in noise, CMU's raw marker data spikes
    more than Bandai Namco's cleaned data; a seam stands out against its own clip either way)."""
    out: dict[str, np.ndarray] = {}
    for name in _RELATIVE:
        x = cols[name]
        med = np.nanmedian(x) if np.isfinite(x).any() else np.nan
        out[f"{name}_rel"] = x - med
    for name in ("joint_vel_spike_max", "acc_spike_max", "jerk_spike_max", "local_acc_spike_max",
                 "acc_max_max", "ang_acc_max_max", "jerk_max_max"):
        x = np.maximum(cols[name], 1e-9)
        out[f"{name}_logratio"] = np.log(x / np.nanmedian(x))
    return out


def _pose_samples(body: Body, idx: np.ndarray, w: int, config: WindowConfig) -> np.ndarray:
    """``(W, pose_samples * bones * 6)`` float32 pose samples of each window for the PCA
    reconstruction error: bone directions in the heading frame and their change (×0.1 s)."""
    n = body.n_frames
    dirs = to_heading_frame(bone_vectors(body.positions), np.unwrap(body.heading))
    dirs = dirs / np.maximum(_norm(dirs)[..., None], 1e-9)
    ddirs = _diff(dirs, 1, body.fps) * 0.1
    pose = np.concatenate([dirs, ddirs], axis=-1).reshape(n, -1).astype(np.float32)  # (F, bones*6)
    pick = np.round(np.linspace(0, w - 1, config.pose_samples)).astype(int)
    return pose[idx[:, pick]].reshape(len(idx), -1)


def feature_columns(frame: pd.DataFrame) -> list[str]:
    """The ``f_*`` feature columns of a window table."""
    return [c for c in frame.columns if c.startswith(FEATURE_PREFIX)]


def pose_columns(frame: pd.DataFrame) -> list[str]:
    """The ``pose_*`` columns of a window table."""
    return [c for c in frame.columns if c.startswith(POSE_PREFIX)]


def window_labels(starts_s: np.ndarray, ends_s: np.ndarray, intervals, min_overlap_s: float = 0.2) -> np.ndarray:
    """``(windows,)`` int: 1 where a window overlaps the corrupted ``intervals`` (seconds) by at
    least ``min_overlap_s`` (or by its whole length if shorter), 0 where it does not touch them,
    -1 in between (ambiguous; left out of training)."""
    starts_s = np.asarray(starts_s, dtype=float)
    ends_s = np.asarray(ends_s, dtype=float)
    overlap = np.zeros(len(starts_s))
    for a, b in intervals:
        overlap += np.clip(np.minimum(ends_s, b) - np.maximum(starts_s, a), 0, None)
    need = np.minimum(min_overlap_s, ends_s - starts_s)
    return np.where(overlap >= need - 1e-9, 1, np.where(overlap <= 1e-9, 0, -1))
