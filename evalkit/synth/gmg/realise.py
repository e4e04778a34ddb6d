"""Realising a GMG plan as a clip: time-scaled GPs, blended transitions, the rest pose.

* **Time scaling**: a GP's source time follows a cubic Hermite curve through (start, apex, end)
  with slopes ``speed_pre`` at its start, ``speed_post`` at its end and their harmonic mean at the
  apex, so each part plays at its planned average speed, the apex lands exactly on its output
  time and the playback rate changes smoothly (the speed ratio is below 3, so the curve is
  monotone by the Fritsch–Carlson condition).
* **Transitions** between two GPs (and between a GP and the rest pose): the outgoing GP keeps
  playing its recording past its end while its playback rate eases to zero (``(1 - u)^2``, so
  its velocity is continuous), the incoming GP plays the frames before its start the same way,
  and the two are blended per joint (slerp / lerp) with Kovar's C1 weight over the gap (over
  ``max_blend_s`` in its middle when the gap is longer; the poses hold on either side; into the
  rest pose after ``settle_s`` of slowing down). Position and velocity are therefore continuous
  at every seam.
* **Root**: each GP (and the rest pose) is moved by a rotation about the vertical and a ground
  shift so that its first frame stands where and faces where the motion before it ended (the
  midpoint of the ankles, so blends do not slide the feet, and the hips' heading); the first
  segment faces +Z at the origin, and the finished clip is shifted so its mean hips position
  lies above the origin.
* **Feet**: with ``plant_feet`` (default ``"auto"``: when the capture is performed standing, see
  :func:`standing_capture`) the feet stay where the rest pose puts them, by two-bone IK of the
  legs (:func:`plant_feet`): a standing speaker, no foot sliding in blends.
* **Bones**: joints whose local translation is constant in every recording get the first
  recording's value, so bone lengths are exactly constant in the output. On rigs whose root is a
  fixed reference joint with the hips moving above it, the root is put on the ground under the
  hips (world positions unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.interpolate import CubicHermiteSpline

from evalkit.errors import InputError, RolesNotFoundError
from evalkit.motion import Motion, find_roles, quat
from evalkit.motion.ops import sample
from evalkit.motion.planar import transform_root
from evalkit.synth.blend import blend_poses
from evalkit.synth.gmg.db import standing_capture

#: Heading of the first segment: the body's left->right axis along -X, i.e. facing +Z.
FACING = np.pi
#: Seconds over which the playback rate of a GP running on past its end (or before its start)
#: eases to zero.
DECAY_S = 0.2
#: Shortest period of the idle rest's slow sweep over the captured rest, seconds.
IDLE_PERIOD_S = 6.0
#: Cutoff of the low-pass applied to the idle rest, Hz.
IDLE_CUTOFF_HZ = 2.0
#: Fastest playback rate of the captured rest in the idle sweep (1 = captured speed).
IDLE_SPEED = 0.5
#: Seconds either side of a seam within which :func:`smooth_seams` low-passes the clip.
SEAM_RADIUS_S = 0.25


@dataclass(frozen=True, eq=False)
class _Recording:
    motion: Motion
    anchor_xz: np.ndarray  # (frames, 2) world ground position the body is aligned by, metres
    heading: np.ndarray  # (frames,) unwrapped heading, radians

    def state(self, frame: float, T: tuple[float, float, float]) -> tuple[float, float, float]:
        """World ``(x, z, heading)`` of the body (feet midpoint, hips heading) at a fractional
        frame after transform ``T``."""
        f = np.clip(frame, 0, self.motion.n_frames - 1)
        idx = np.arange(self.motion.n_frames)
        x = np.interp(f, idx, self.anchor_xz[:, 0])
        z = np.interp(f, idx, self.anchor_xz[:, 1])
        h = np.interp(f, idx, self.heading)
        th, tx, tz = T
        c, s = np.cos(th), np.sin(th)
        return (c * x + s * z + tx, -s * x + c * z + tz, h - th)

    def align(self, frame: float, target: tuple[float, float, float]) -> tuple[float, float, float]:
        """Transform ``(theta, tx, tz)`` that puts this recording's body at ``frame`` on ``target``."""
        x, z, h = self.state(frame, (0.0, 0.0, 0.0))
        th = h - target[2]
        c, s = np.cos(th), np.sin(th)
        return (th, target[0] - (c * x + s * z), target[1] - (-s * x + c * z))

    def pose(self, frames: np.ndarray, T: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
        rot, tr = sample(self.motion, frames)
        return transform_root(rot, tr, *T)


def _recordings(db) -> dict[str, _Recording]:
    roles = find_roles(db.skeleton, strict=False)
    if "hips" not in roles:
        raise RolesNotFoundError("realising a GMG plan needs the hips joint")
    pair = next(((a, b) for a, b in (("left_hip", "right_hip"), ("left_shoulder", "right_shoulder")) if a in roles and b in roles), None)
    if pair is None:
        raise RolesNotFoundError("realising a GMG plan needs left/right hips or shoulders to find the body's heading")
    # align by the feet (both ankles' midpoint) so that blends between GPs do not slide the feet;
    # by the hips when the rig has no ankles
    feet = [roles[r] for r in ("left_ankle", "right_ankle") if r in roles] if all(r in roles for r in ("left_ankle", "right_ankle")) else [roles["hips"]]
    out = {}
    for name, m in db.recordings.items():
        m = _root_under_hips(m, roles["hips"])
        pos = m.positions
        lat = pos[:, roles[pair[1]]] - pos[:, roles[pair[0]]]
        heading = np.unwrap(np.arctan2(lat[:, 2], lat[:, 0]))
        out[name] = _Recording(m, pos[:, feet].mean(axis=1)[:, [0, 2]], heading)
    return out


def _root_under_hips(m: Motion, hips: int) -> Motion:
    """On rigs whose root is a reference joint apart from the body (Bandai Namco's
    ``joint_Root``, with the hips as its child), move the root's ground position under the hips
    on every frame (world positions unchanged). Root transforms and blends turn the body about
    its root: about a root metres away they would swing the body along an arc."""
    if hips == 0 or m.skeleton.parents[hips] != 0:
        return m
    tr = m.translations.copy()
    world_hips = m.positions[:, hips]
    new_root = tr[:, 0].copy()
    new_root[:, 0], new_root[:, 2] = world_hips[:, 0], world_hips[:, 2]
    tr[:, hips] = tr[:, hips] + quat.rotate(quat.inverse(m.rotations[:, 0]), tr[:, 0] - new_root)
    tr[:, 0] = new_root
    return replace(m, translations=tr)


def _constant_joints(db) -> tuple[np.ndarray, np.ndarray]:
    """``(joints,)`` bool: local translation constant in every recording (root excluded), and
    ``(joints, 3)`` the reference translations (the first recording's first frame)."""
    first = next(iter(db.recordings.values()))
    const = np.ones(db.skeleton.n_joints, dtype=bool)
    const[0] = False
    for m in db.recordings.values():
        const &= np.ptp(m.translations, axis=0).max(axis=1) < 1e-6
    return const, first.translations[0].copy()


def _rotation_between(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(n, 3, 3)`` shortest-arc rotations taking directions ``a`` to ``b`` (``(n, 3)`` each)."""
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    v = np.cross(a, b)
    c = np.clip(np.sum(a * b, axis=-1), -1 + 1e-9, 1.0)
    vx = np.zeros(v.shape[:-1] + (3, 3))
    vx[..., 0, 1], vx[..., 0, 2] = -v[..., 2], v[..., 1]
    vx[..., 1, 0], vx[..., 1, 2] = v[..., 2], -v[..., 0]
    vx[..., 2, 0], vx[..., 2, 1] = -v[..., 1], v[..., 0]
    return np.eye(3) + vx + vx @ vx / (1.0 + c)[..., None, None]


def plant_feet(motion: Motion, roles: dict[str, int], frame: int = 0) -> Motion:
    """Keep both feet where they are at ``frame`` (position of the ankle and orientation of the
    foot) on every frame, by analytic two-bone IK of each leg (hip and knee turned in the plane
    of the current knee, so the knee keeps pointing where it pointed). A standing speaker's feet
    then never slide, whatever the blends between GPs do; where the hips stand higher than the
    legs reach, the whole body is lowered just enough (by the root's height). Returns ``motion`` unchanged
    when the rig lacks hip/knee/ankle roles in a hip -> knee -> ankle chain.

    This is hand-written (closed form, vectorised over frames) because no installed library
    offers two-bone IK on this data model.
    """
    from evalkit.motion.fk import forward_kinematics

    parents = motion.skeleton.parents
    legs = []
    for side in ("left", "right"):
        h, k, a = (roles.get(f"{side}_{r}") for r in ("hip", "knee", "ankle"))
        if h is None or k is None or a is None or parents[k] != h or parents[a] != k or parents[h] < 0:
            return motion
        legs.append((h, k, a))
    pos, _ = forward_kinematics(motion)
    # where the hips stand higher than the legs can reach (a straighter stance than the rest
    # pose's), lower the whole body just enough: knees bend a little rather than feet lifting
    drop = np.zeros(motion.n_frames)
    for h, k, a in legs:
        w = pos[frame, a][None] - pos[:, h]
        reach = 0.995 * (np.linalg.norm(motion.translations[:, k], axis=-1) + np.linalg.norm(motion.translations[:, a], axis=-1))
        horiz = np.minimum(np.hypot(w[:, 0], w[:, 2]), reach)
        drop = np.maximum(drop, -np.sqrt(reach**2 - horiz**2) - w[:, 1])
    if np.any(drop > 0):
        tr = motion.translations.copy()
        tr[:, 0, 1] -= drop  # the root's translation is in world coordinates
        motion = replace(motion, translations=tr)
    pos, W = forward_kinematics(motion)
    rot = motion.rotations.copy()
    n = motion.n_frames
    for h, k, a in legs:
        A, B, C = pos[:, h], pos[:, k], pos[:, a]
        T = np.broadcast_to(C[frame], C.shape)
        L1 = np.linalg.norm(motion.translations[:, k], axis=-1)
        L2 = np.linalg.norm(motion.translations[:, a], axis=-1)
        to = T - A
        d = np.clip(np.linalg.norm(to, axis=-1), np.abs(L1 - L2) + 1e-4, L1 + L2 - 1e-4)
        u = to / np.linalg.norm(to, axis=-1, keepdims=True)
        pole = (B - A) - np.sum((B - A) * u, axis=-1, keepdims=True) * u
        fallback = np.einsum("fij,j->fi", W[:, h], np.array([0.0, 0.0, 1.0]))  # any direction off the leg line
        fallback -= np.sum(fallback * u, axis=-1, keepdims=True) * u
        small = np.linalg.norm(pole, axis=-1, keepdims=True) < 1e-6
        pole = np.where(small, fallback, pole)
        v = pole / np.linalg.norm(pole, axis=-1, keepdims=True)
        cos_a = np.clip((L1**2 + d**2 - L2**2) / (2 * L1 * d), -1.0, 1.0)
        B2 = A + L1[:, None] * (cos_a[:, None] * u + np.sqrt(1 - cos_a**2)[:, None] * v)
        C2 = A + d[:, None] * u
        R1 = _rotation_between(B - A, B2 - A)
        Wh = R1 @ W[:, h]
        Wk = R1 @ W[:, k]
        shin = np.einsum("fij,fj->fi", R1, C - B)
        Wk = _rotation_between(shin, C2 - B2) @ Wk
        Wa = np.broadcast_to(W[frame, a], (n, 3, 3))
        P = W[:, parents[h]]
        rot[:, h] = quat.from_matrix(np.swapaxes(P, -1, -2) @ Wh)
        rot[:, k] = quat.from_matrix(np.swapaxes(Wh, -1, -2) @ Wk)
        rot[:, a] = quat.from_matrix(np.swapaxes(Wk, -1, -2) @ Wa)
    return replace(motion, rotations=quat.make_continuous(rot, axis=0))


def _ground_root(motion: Motion, db, roles: dict[str, int]) -> Motion:
    """For rigs whose root is a fixed reference joint above which the hips move (Bandai Namco's
    ``joint_Root``), put the root on the ground under the hips and re-express the hips' local
    translation, so the root-to-hips "bone" stays vertical. World positions are unchanged."""
    h = roles.get("hips")
    if h is None or h == 0 or motion.skeleton.parents[h] != 0:
        return motion
    for m in db.recordings.values():
        if np.ptp(m.translations[:, 0], axis=0).max() > 1e-6 or np.ptp(m.rotations[:, 0], axis=0).max() > 1e-6:
            return motion  # a moving root: leave it as it is
    tr = motion.translations.copy()
    hips = motion.positions[:, h]
    ground = np.stack([hips[:, 0], tr[:, 0, 1], hips[:, 2]], axis=1)
    tr[:, h] = quat.rotate(quat.inverse(motion.rotations[:, 0]), hips - ground)
    tr[:, 0] = ground
    return replace(motion, translations=tr)


def _consistent_offsets(motion: Motion) -> Motion:
    """Set the rest OFFSET of every joint whose position channels move to the median of its
    output translation: BVH position channels replace the offset anyway, and readers that guess
    whether channels are relative to the offset (evalkit's does) then read the file back as
    written."""
    sk = motion.skeleton
    has_pos = sk.has_position_channels()
    moving = has_pos & (np.ptp(motion.translations, axis=0).max(axis=1) > 1e-9)
    if not moving.any():
        return motion
    offsets = sk.offsets.copy()
    offsets[moving] = np.median(motion.translations[:, moving], axis=0)
    return replace(motion, skeleton=replace(sk, offsets=offsets))


def ease_c2(u: np.ndarray) -> np.ndarray:
    """Weight of the origin pose at normalised time ``u`` in [0, 1]: ``1 - (6u^5 - 15u^4 + 10u^3)``.

    Like Kovar's weight but with zero slope *and* zero curvature at both ends, so a blend adds
    no jump in acceleration where it starts and ends (an acceleration spike at every seam is
    what natural capture never has).
    """
    u = np.clip(np.asarray(u, dtype=np.float64), 0.0, 1.0)
    return 1.0 - u**3 * (10.0 + u * (-15.0 + 6.0 * u))


def _decayed(t: np.ndarray, rate: float, d: float) -> np.ndarray:
    """Source frames advanced after ``t`` seconds by a rate ``rate`` (frames/s) easing to zero
    over ``d`` seconds: ``rate d / 3 (1 - (1 - t/d)^3)``."""
    if d <= 0:
        return np.zeros_like(t)
    u = np.clip(t / d, 0.0, 1.0)
    return rate * d / 3.0 * (1.0 - (1.0 - u) ** 3)


def gp_time_warp(placement, phrase, stop: tuple[float, float | None, float | None] | None = None):
    """Source frame (float) of a GP's recording as a function of output time (s), on
    ``[placement.start_time, placement.end_time]``.

    A cubic Hermite curve through ``(start_time, start_frame)``, ``(apex_time, apex_frame)`` and
    ``(end_time, end_frame)`` with slopes ``speed_pre * fps`` at the start, ``speed_post * fps``
    at the end and their harmonic mean at the apex (frames per second of output).

    ``stop=(peak_frame, start_rate, apex_rate)`` (:func:`stroke_stop`) renders a stroke cut from
    continuous movement as a gesture: with ``start_rate`` the GP starts from a nearly still hand
    (its playback rate at the start that many times the planned one) and speeds up to the planned
    rate at the stroke's peak; with ``apex_rate`` it slows to that many times the planned rate at
    the apex (the hand reaching its target), and after the apex the rate eases to zero within
    :data:`STOP_S` and the pose holds until ``end_time`` (the few captured frames after the apex
    are not played). The apex stays exactly on its planned time.
    """
    f = phrase.fps
    k1f, k2f = placement.speed_pre * f, placement.speed_post * f
    t0, ta, t1 = placement.start_time, placement.apex_time, max(placement.end_time, placement.start_time + 1e-6)
    ka = 2.0 / (1.0 / k1f + 1.0 / k2f)
    if stop is not None and ta - t0 > 1e-6 and (stop[1] is not None or stop[2] is not None):
        peak, r0, ra = stop
        xs, ys, ds = [t0], [float(phrase.start_frame)], [k1f * (r0 if r0 is not None else 1.0)]
        tp = t0 + (peak - phrase.start_frame) / k1f
        if phrase.start_frame < peak < phrase.apex_frame and t0 + 1e-6 < tp < ta - 1e-6:
            xs.append(tp)
            ys.append(float(peak))
            ds.append(k1f)
        xs.append(ta)
        ys.append(float(phrase.apex_frame))
        if ra is None:
            if t1 - ta > 1e-6:
                ds.append(ka)
                xs.append(t1)
                ys.append(float(phrase.end_frame))
                ds.append(k2f)
            else:
                ds.append(k2f)
            return CubicHermiteSpline(np.array(xs), np.array(ys), np.array(ds))
        ds.append(ra * ka)
        pre = CubicHermiteSpline(np.array(xs), np.array(ys), np.array(ds))
        a_rate = ra * ka
        apex_frame = float(phrase.apex_frame)

        def warp(tt):
            tt = np.asarray(tt, dtype=float)
            out = pre(np.minimum(tt, ta))
            late = tt > ta
            if np.any(late):
                out = np.where(late, apex_frame + _decayed(tt - ta, a_rate, STOP_S), out)
            return out

        return warp
    xs, ys, ds = [t0], [float(phrase.start_frame)], [k1f]
    if ta - t0 > 1e-9 and placement.end_time - ta > 1e-9:
        xs.append(ta)
        ys.append(float(phrase.apex_frame))
        ds.append(ka)
    xs.append(t1)
    ys.append(float(phrase.end_frame))
    ds.append(k2f)
    return CubicHermiteSpline(np.array(xs), np.array(ys), np.array(ds))


#: Seconds within which a stroke rendered with a stop (:func:`stroke_stop`) comes to rest after
#: its apex.
STOP_S = 0.1


#: A GP whose hand is still moving at the apex and that ends at most this long after it is taken
#: as cut at the next movement (its stroke gets a stop and a hold), seconds.
CUT_POST_S = 0.25


def stroke_stop(db, gp: int) -> tuple[float, float | None, float | None] | None:
    """``(peak_frame, start_rate, apex_rate)`` for GP ``gp`` when its capture lacks the still
    hand a gesture starts from or stops at, else ``None``.

    A stroke ends where the hand reaches its target and stops: the gesture analysis puts the
    apex where the speed falls below ``apex_fraction`` of the stroke's peak. Strokes cut from
    continuous movement (arm swings of a walk, beats in a row) have no such stop: their "apex"
    is the speed valley before the next movement, often above that level, and the GP is cut
    there, so whatever is played after it (the next movement's run-on, a blend) decides afresh
    where the stroke ends — not at the planned apex; likewise they start in full swing, and a
    blend into a moving hand adds to its speed.
    Those are rendered with a stop and a start from stillness (:func:`gp_time_warp`):
    ``apex_rate`` (``start_rate``) is the playback rate at the apex (start), relative to the
    planned one, that brings the hand's speed there to 80 % of the stop level (at most 1;
    ``apex_rate`` is ``None`` where the GP goes on for more than :data:`STOP_S` after its apex,
    or more than :data:`CUT_POST_S` after an apex where the hand still moves: its captured hold
    or retraction is played; ``start_rate`` where the capture starts slowly).
    """
    ph = db.phrases[gp]
    st = db.strokes[gp]
    tr = db.trajectories.get(ph.clip) if hasattr(db.trajectories, "get") else None
    if tr is None:
        return None
    speed = tr.speed
    peak = int(st.peak_frame)
    v_peak = float(speed[peak])
    if not (v_peak > 0 and ph.start_frame <= peak < ph.apex_frame):
        return None
    idx = np.arange(len(speed))
    level = 0.8 * db.config.phase.apex_fraction * v_peak
    v_apex = float(np.interp(ph.apex_frame, idx, speed))
    v_start = float(speed[ph.start_frame])
    # the hold replaces the captured frames after the apex only where there are hardly any (the
    # GP was cut at the next movement's start), or where the hand never stops at the apex and the
    # GP ends soon after it (the next movement under way); a captured hold or retraction is
    # played as it is
    post = (ph.end_frame - ph.apex_frame) / ph.fps
    moving = v_apex > db.config.phase.apex_fraction * v_peak
    ra = min(1.0, level / v_apex) if v_apex > 0 and (post <= STOP_S or (moving and post <= CUT_POST_S)) else None
    r0 = level / v_start if v_start > level and ph.start_frame < peak else None
    if ra is None and r0 is None:
        return None
    return float(peak), r0, ra


@dataclass(frozen=True)
class _Seg:
    rec: str
    src_start: float  # source frames
    src_end: float
    rate_start: float  # source frames per output second
    rate_end: float
    T: tuple[float, float, float]
    warp: object  # callable: out time -> source frame, within [start_time, end_time]
    start_time: float
    end_time: float


@dataclass(frozen=True, eq=False)
class Realised:
    """A plan realised as a clip.

    Attributes:
        motion: the clip.
        seams: ``(k,)`` frames where a GP starts or ends or a blend starts or ends.
        gp_frames: ``(frames,)`` bool, frames inside a GP (not transitions or rest).
    """

    motion: Motion
    seams: np.ndarray
    gp_frames: np.ndarray


def _idle_frames(db, rec: _Recording, rest_frame: int) -> tuple[float, float]:
    """``(centre, amplitude)`` in source frames of the captured rest the idle pose plays: the run
    of "rest" labels of the rest recording around ``rest_frame`` (amplitude 0: too short)."""
    from evalkit.gesture.phases import segment_gestures

    name = db.rest[0]
    traj = db.trajectories.get(name) if hasattr(db.trajectories, "get") else None
    if traj is None:
        return float(rest_frame), 0.0
    for phase, a, b in segment_gestures(traj, db.config.phase).intervals():
        if phase == "rest" and a <= rest_frame < b:
            return (a + b - 1) / 2.0, max(0.0, 0.45 * (b - 1 - a))
    return float(rest_frame), 0.0


class _GesturePlanRealiser:
    """Fills the frames of one realised plan: GP spans, blends, the idle rest pose (see the
    module docstring). One instance realises one plan."""

    def __init__(self, gmg, plan, fps: float):
        db = gmg.database
        self.db, self.plan, self.fps = db, plan, fps
        self.stops = bool(getattr(plan, "stroke_stops", True))
        self.recs = _recordings(db)
        self.n = max(2, int(np.ceil(plan.duration * fps - 1e-9)))
        self.t = np.arange(self.n) / fps
        J = db.skeleton.n_joints
        self.rot = np.empty((self.n, J, 4))
        self.tr = np.empty((self.n, J, 3))
        self.done = np.zeros(self.n, dtype=bool)
        self.gp_frames = np.zeros(self.n, dtype=bool)
        self.seams: list[float] = []
        rest_rec, self.rest_frame = db.rest
        self.rest = self.recs[rest_rec]
        self.idle_centre, self.idle_amp = _idle_frames(db, self.rest, self.rest_frame)
        self.idle = self._idle_poses()
        self.segs = self._segments()

    # -- pose sources --------------------------------------------------------------------------
    def _segments(self) -> list[_Seg]:
        """Segments of the placements, root transforms chained in time order: each GP stands
        where the previous one ended; the first faces +Z at the origin."""
        segs: list[_Seg] = []
        target = (0.0, 0.0, FACING)
        for p in self.plan.placements:
            ph = self.db.phrases[p.gp]
            rec = self.recs[ph.clip]
            T = rec.align(ph.start_frame, target)
            f = rec.motion.fps
            stop = stroke_stop(self.db, p.gp) if self.stops else None
            warp = gp_time_warp(p, ph, stop)
            src_end, rate_end, rate_start = float(ph.end_frame), p.speed_post * f, p.speed_pre * f
            if stop is not None and stop[2] is not None:  # the pose holds after the stroke's stop
                src_end, rate_end = float(min(warp(p.end_time), rec.motion.n_frames - 1)), 0.0
            if stop is not None and stop[1] is not None:  # it starts from a nearly still hand
                rate_start *= stop[1]
            segs.append(_Seg(ph.clip, float(ph.start_frame), src_end, rate_start, rate_end, T,
                             warp, p.start_time, p.end_time))
            target = rec.state(src_end, T)
        return segs

    def seg_pose(self, seg: _Seg, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pose of a segment at output times, running on (easing to a stop) outside its span;
        the run-on stops within the recording."""
        rec = self.recs[seg.rec]
        last = rec.motion.n_frames - 1
        tt = np.asarray(times, dtype=float)
        frames = np.empty_like(tt)
        inside = (tt >= seg.start_time) & (tt <= seg.end_time)
        frames[inside] = seg.warp(tt[inside])
        before = tt < seg.start_time
        d0 = _decay_within(seg.src_start, seg.rate_start)
        frames[before] = seg.src_start - _decayed(seg.start_time - tt[before], seg.rate_start, d0)
        after = tt > seg.end_time
        d1 = _decay_within(last - seg.src_end, seg.rate_end)
        frames[after] = seg.src_end + _decayed(tt[after] - seg.end_time, seg.rate_end, d1)
        return rec.pose(frames, seg.T)

    def _idle_poses(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(rotations, translations)`` of the idle rest on every output frame (untransformed):
        the captured rest around the rest frame swept slowly back and forth (a sine over the
        run, at most half the captured speed), low-passed at :data:`IDLE_CUTOFF_HZ` so that the
        kinks of sampling between captured frames do not read as acceleration spikes in a body
        that hardly moves. ``None`` when the captured rest is too short (a still pose then)."""
        from scipy.signal import butter, filtfilt

        A = self.idle_amp
        if A < 1.0 or self.n < 16:
            return None
        period = max(IDLE_PERIOD_S, 2 * np.pi * A / (IDLE_SPEED * self.rest.motion.fps))
        rot, tr = sample(self.rest.motion, self.idle_centre + A * np.sin(2 * np.pi * self.t / period))
        b, a = butter(2, min(IDLE_CUTOFF_HZ / (self.fps / 2.0), 0.99))
        pad = min(self.n - 1, 60)
        rot = filtfilt(b, a, quat.make_continuous(rot, axis=0), axis=0, padlen=pad)
        tr = filtfilt(b, a, tr, axis=0, padlen=pad)
        return quat.normalize(rot), tr

    def rest_pose(self, T, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The idle rest pose at output times (frames of this realisation), moved by ``T``: a
        resting figure breathes and sways as captured instead of freezing."""
        tt = np.asarray(times, dtype=float)
        if self.idle is None:
            return self.rest.pose(np.full(len(tt), float(self.rest_frame)), T)
        idx = np.clip(np.rint(tt * self.fps).astype(int), 0, self.n - 1)
        return transform_root(self.idle[0][idx], self.idle[1][idx], *T)

    # -- filling frames ------------------------------------------------------------------------
    def put(self, mask: np.ndarray, r: np.ndarray, x: np.ndarray) -> None:
        self.rot[mask], self.tr[mask] = r, x
        self.done[mask] = True

    def fill_blend(self, m: np.ndarray, pa, pb, w0: float, w1: float) -> None:
        """Frames ``m``: blend of pose sources ``pa`` -> ``pb`` with the C2 weight over [w0, w1]."""
        tt = self.t[m]
        if not len(tt):
            return
        ra, xa = pa(tt)
        rb, xb = pb(tt)
        r, x = blend_poses(ra, xa, rb, xb, ease_c2((tt - w0) / max(w1 - w0, 1e-9)))
        self.put(m, r, x)
        self.seams.extend([w0, w1])

    def hold_rest(self, m: np.ndarray, T) -> None:
        if m.any():
            self.put(m, *self.rest_pose(T, self.t[m]))

    def rest_after(self, seg: _Seg):
        return self.rest.align(self.rest_frame, self.recs[seg.rec].state(seg.src_end, seg.T))

    def fill_gps(self) -> None:
        for seg in self.segs:
            m = (self.t >= seg.start_time) & (self.t <= seg.end_time)
            if m.any():
                self.put(m, *self.seg_pose(seg, self.t[m]))
                self.gp_frames |= m
            self.seams.extend([seg.start_time, seg.end_time])

    def fill_start(self) -> None:
        """Rest before the first GP, and the blend out of it (all rest without GPs)."""
        t, segs = self.t, self.segs
        if not segs:
            self.hold_rest(np.ones(self.n, dtype=bool), self.rest.align(self.rest_frame, (0.0, 0.0, FACING)))
            return
        q = segs[0]
        m = t < q.start_time
        rest_T = self.rest.align(self.rest_frame, self.recs[q.rec].state(q.src_start, q.T))
        a = max(0.0, q.start_time - self.plan.placements[0].blend_in_s)
        self.hold_rest(m & (t < a), rest_T)
        self.fill_blend(m & (t >= a), lambda tt: self.rest_pose(rest_T, tt), lambda tt: self.seg_pose(q, tt), a, q.start_time)

    def fill_between(self, k: int) -> None:
        """The gap between GP ``k`` and GP ``k + 1``: a blend along an edge, or through rest."""
        p, q = self.segs[k], self.segs[k + 1]
        t, plan = self.t, self.plan
        m = (t > p.end_time) & (t < q.start_time)
        placement = plan.placements[k + 1]
        if placement.entry != "rest":
            if m.any():
                w = max(plan.max_blend_s, placement.blend_in_s)
                w0, w1 = p.end_time, q.start_time
                if w1 - w0 > w:
                    mid = (w0 + w1) / 2
                    w0, w1 = mid - w / 2, mid + w / 2
                self.fill_blend(m, lambda tt: self.seg_pose(p, tt), lambda tt: self.seg_pose(q, tt), w0, w1)
            return
        T_r = self.rest_after(p)
        ro, ri = plan.placements[k].rest_out_s, placement.blend_in_s
        gap = q.start_time - p.end_time
        if ro + ri > gap:
            ro, ri = gap * ro / (ro + ri), gap * ri / (ro + ri)
        a, b = p.end_time + ro, q.start_time - ri
        w0 = p.end_time + min(plan.settle_s, ro / 2)
        self.fill_blend(m & (t <= a), lambda tt: self.seg_pose(p, tt), lambda tt: self.rest_pose(T_r, tt), w0, a)
        self.hold_rest(m & (t > a) & (t < b), T_r)
        self.fill_blend(m & (t >= b), lambda tt: self.rest_pose(T_r, tt), lambda tt: self.seg_pose(q, tt), b, q.start_time)

    def fill_end(self) -> None:
        """After the last GP: settle, blend to rest, rest to the clip's end."""
        if not self.segs:
            return
        t, p = self.t, self.segs[-1]
        m = t > p.end_time
        if not m.any():
            return
        T_r = self.rest_after(p)
        ro = self.plan.placements[-1].rest_out_s
        a = p.end_time + ro
        w0 = p.end_time + min(self.plan.settle_s, ro / 2)
        self.fill_blend(m & (t <= a), lambda tt: self.seg_pose(p, tt), lambda tt: self.rest_pose(T_r, tt), w0, a)
        self.hold_rest(m & (t > a), T_r)

    def realise(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rotations, translations)`` of every frame."""
        self.fill_gps()
        self.fill_start()
        for k in range(len(self.segs) - 1):
            self.fill_between(k)
        self.fill_end()
        if not self.done.all():  # pragma: no cover - defensive: every frame belongs to some part
            raise RuntimeError(f"realising a GMG plan left {int((~self.done).sum())} frames empty")
        return quat.normalize(self.rot), self.tr


def _decay_within(room: float, rate: float) -> float:
    """Seconds of easing to a stop (at most :data:`DECAY_S`) that advance at most ``room``
    source frames at an initial ``rate`` frames/s (the run-on covers ``rate d / 3``)."""
    if rate <= 0:
        return DECAY_S
    return float(min(DECAY_S, max(0.0, 3.0 * room / rate)))


def smooth_seams(motion: Motion, seams_s: np.ndarray, cutoff_hz: float, radius_s: float = SEAM_RADIUS_S) -> Motion:
    """Low-pass the clip around its seams: a zero-phase Butterworth filter (2nd order,
    ``cutoff_hz``) of the local rotations (sign-continuous quaternions, renormalised) and
    translations, crossfaded in within ``radius_s`` seconds of every seam, so that what is left of
    an acceleration jump where a blend or a time warp starts or ends is spread over the time
    human movement takes; away from seams the captured frames are untouched."""
    from scipy.signal import butter, filtfilt

    n = motion.n_frames
    nyq = motion.fps / 2.0
    if cutoff_hz >= nyq or n < 16 or not len(seams_s):
        return motion
    b, a = butter(2, cutoff_hz / nyq)
    pad = min(n - 1, 3 * max(len(a), len(b)) * 4)
    q = quat.make_continuous(motion.rotations, axis=0)
    qf = filtfilt(b, a, q, axis=0, padlen=pad)
    tf = filtfilt(b, a, motion.translations, axis=0, padlen=pad)
    t = np.arange(n) / motion.fps
    dist = np.min(np.abs(t[:, None] - np.asarray(seams_s, dtype=float)[None, :]), axis=1)
    w = ease_c2(np.clip((dist - radius_s / 2) / (radius_s / 2), 0.0, 1.0))  # 1 at a seam, 0 beyond radius
    rot = quat.normalize(q * (1 - w)[:, None, None] + qf * w[:, None, None])
    tr = motion.translations * (1 - w)[:, None, None] + tf * w[:, None, None]
    return replace(motion, rotations=rot, translations=tr)


def _finish(out: Motion, db, plan, seams_s: np.ndarray, smooth_hz: float | None) -> Motion:
    """Smoothed seams, planted feet, centred, grounded root, BVH-consistent offsets."""
    const, ref = _constant_joints(db)
    if smooth_hz:
        out = smooth_seams(out, seams_s, smooth_hz)
    tr = out.translations.copy()
    tr[:, const] = ref[const]
    out = replace(out, translations=tr)
    roles = find_roles(db.skeleton, strict=False)
    if plan.plant_feet is True or (plan.plant_feet == "auto" and standing_capture(db)):
        out = plant_feet(out, roles, 0)  # frame 0 is always the rest pose
    # centre: mean hips position above the origin (a constant ground shift of the root)
    centre = out.positions[:, roles["hips"]][:, [0, 2]].mean(axis=0)
    tr = out.translations.copy()
    tr[:, 0, 0] -= centre[0]
    tr[:, 0, 2] -= centre[1]
    out = replace(out, translations=tr)
    out = _ground_root(out, db, roles)
    return _consistent_offsets(out)


def realise_gesture_plan(gmg, plan, fps: float | None = None, name: str = "gmg") -> Realised:
    """The clip of a GMG plan (a :class:`~evalkit.synth.gmg.plan.Plan`) at ``fps`` (default: the
    database's frame rate), on the database's skeleton (see the module docstring)."""
    db = gmg.database
    fps = float(fps or db.fps)
    if not fps > 0:
        raise InputError(f"fps must be > 0, got {fps}")
    r = _GesturePlanRealiser(gmg, plan, fps)
    rot, tr = r.realise()
    out = Motion(db.skeleton, fps, rot, tr, name=name, meta={"source": name, "generator": "evalkit GMG"})
    seams = np.asarray(r.seams, dtype=float)
    out = _finish(out, db, plan, seams, getattr(plan, "smooth_hz", None))
    seam_frames = np.unique(np.clip(np.round(seams * fps).astype(int), 0, r.n - 1))
    return Realised(out, seam_frames, r.gp_frames)
