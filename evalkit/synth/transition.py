"""Transition plans and their rendering into clips (shared by SMG and BPMG).

A :class:`TransitionPlan` says how the character gets from clip A, where a transition to clip B
is requested at frame ``request``, into B: a sequence of :class:`Hop` s (one graph transition
each, from clip X into clip Y), and for every body part the frame it leaves X, the frame of Y it
blends into and how much its path is time-scaled. An SMG plan has a single part (the whole body)
that follows the graph; a BPMG plan has one move per body part (progressive transition).

Timing of one hop (frames of the graph's frame rate). X is entered at frame ``entry``. The lower
body (or whole body) leaves X at ``i_lower`` and blends into Y from ``j_lower`` over ``k`` frames,
without time-scaling; all parts are back in sync at Y frame ``sync`` at X-time
``T = i_lower + sync - j_lower``. A part leaving X at ``i`` into Y at ``j`` covers the ``sync - j``
frames of its path (blend, then Y) in the ``T - i`` output frames it has: its time-scale is
``(sync - j) / (T - i)`` (1 for the lower body and for every SMG hop).

Measures (thesis Fig. 3.10), in output frames: **response** = first frame at which any part
starts transitioning minus the request frame; **duration** = end of the last part's blend minus
that first start.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.motion.model import Motion
from evalkit.motion.ops import sample
from evalkit.motion.planar import compose_2d, transform_root
from evalkit.synth.blend import blend_poses, ease
from evalkit.synth.bodyparts import BodyPart


@dataclass(frozen=True)
class PartMove:
    """One body part's transition within a hop.

    Attributes:
        i: frame of the origin clip where the part starts blending.
        j: frame of the target clip where its blend starts.
        cost: the part's distance at ``(i, j)``, metres RMS.
        forced: the part had no candidate of its own and follows the lower body.
    """

    i: int
    j: int
    cost: float
    forced: bool = False


@dataclass(frozen=True)
class Hop:
    """One graph transition from clip ``src`` into clip ``dst`` (see the module docstring)."""

    src: int
    dst: int
    entry: int
    i_lower: int
    j_lower: int
    sync: int
    align: tuple[float, float, float]
    moves: tuple[PartMove, ...]

    @property
    def T(self) -> int:
        """X-frame at which all parts are synchronised in Y."""
        return self.i_lower + self.sync - self.j_lower

    def scale(self, p: int) -> float:
        """Time-scale of part ``p``'s path (nominal frames per output frame)."""
        m = self.moves[p]
        return (self.sync - m.j) / max(self.T - m.i, 1)


@dataclass(frozen=True)
class TransitionPlan:
    """How to go from clip ``src`` (request at frame ``request``) into clip ``dst``.

    Attributes:
        method: ``"smg"`` or ``"bpmg"``.
        parts: body parts (one whole-body part for the SMG).
        hops: the graph transitions, in order.
        window: blend window ``k``, frames.
        fps: frames per second.
        part_weights: weight of each part's cost in the transition cost.
    """

    method: str
    src: int
    dst: int
    request: int
    window: int
    fps: float
    parts: tuple[BodyPart, ...]
    hops: tuple[Hop, ...]
    part_weights: tuple[float, ...] = ()
    norm: str = "rms"
    info: dict = field(default_factory=dict, compare=False)

    def _hop_offsets(self) -> list[int]:
        """Output time (relative to the request) at which each hop's origin clip is entered."""
        tau, out = 0, []
        for h in self.hops:
            out.append(tau)
            tau += h.T - h.entry
        out.append(tau)
        return out

    @property
    def arrival(self) -> int:
        """Output frames from the request until all parts play the target clip in sync."""
        return self._hop_offsets()[-1]

    @property
    def response(self) -> int:
        """Frames from the request to the first part leaving the origin motion."""
        h = self.hops[0]
        return int(min(m.i for m in h.moves) - h.entry)

    def _blend_end(self, hop_index: int, p: int) -> float:
        h = self.hops[hop_index]
        tau = self._hop_offsets()[hop_index]
        m = h.moves[p]
        start = tau + (m.i - h.entry)
        return start + self.window / h.scale(p)

    @property
    def duration(self) -> float:
        """Frames from the first part leaving to the end of the last part's blend."""
        last = len(self.hops) - 1
        end = max(self._blend_end(last, p) for p in range(len(self.parts)))
        return float(end - self.response)

    @property
    def cost(self) -> float:
        """Mean over hops of the whole-body-equivalent distance of the parts' chosen frames
        (see :func:`evalkit.synth.clipset.combine_costs`), metres."""
        from evalkit.synth.clipset import combine_costs

        w = np.asarray(self.part_weights or [1.0] * len(self.parts), dtype=float)
        return float(np.mean([combine_costs([m.cost for m in h.moves], w, self.norm) for h in self.hops]))

    @property
    def forced_parts(self) -> int:
        return sum(m.forced for h in self.hops for m in h.moves)

    def summary(self) -> dict:
        """Plain numbers for tables and manifests (frames at :attr:`fps`)."""
        return {
            "method": self.method,
            "request_frame": self.request,
            "response_frames": self.response,
            "duration_frames": round(self.duration, 3),
            "arrival_frames": self.arrival,
            "hops": len(self.hops),
            "cost_m": round(self.cost, 6),
            "forced_parts": self.forced_parts,
            "time_scales": [[round(h.scale(p), 4) for p in range(len(self.parts))] for h in self.hops],
        }


def _part_schedule(plan: TransitionPlan, p: int, n_out: int, start: int, offsets: list[int],
                   seams: list[list[float]]) -> tuple[np.ndarray, ...]:
    """Per output frame, what body part ``p`` plays: ``(seg_a, f_a, seg_b, f_b, w_a)`` — the
    segment (0 = origin, ``h + 1`` = target of hop ``h``) and fractional source frame of the pose
    it plays, the segment and frame it blends towards (``seg_b = -1``: none) and the weight of the
    first. The output frame ranges of its blends are appended to ``seams``."""
    k = plan.window
    seg_a = np.zeros(n_out, dtype=np.int64)
    seg_b = np.full(n_out, -1, dtype=np.int64)
    f_b = np.zeros(n_out)
    w_a = np.ones(n_out)
    t = np.arange(n_out)
    f_a = (start + t).astype(float)  # before the first hop: the origin clip plays from `start`
    for hi, h in enumerate(plan.hops):
        tau, e, m = offsets[hi], h.entry, h.moves[p]
        dep = tau + (m.i - e)
        end = tau + (h.T - e)
        nominal = h.sync - m.j
        sel = t >= tau
        seg_a[sel] = hi
        f_a[sel] = e + (t[sel] - tau)
        span = (t >= dep) & (t < end)
        s = (t[span] - dep) * nominal / max(end - dep, 1)
        blend = s < k
        idx = np.flatnonzero(span)
        bi = idx[blend]
        seg_a[bi] = hi
        f_a[bi] = m.i + s[blend]
        seg_b[bi] = hi + 1
        f_b[bi] = m.j + s[blend]
        w_a[bi] = ease((s[blend] + 1.0) / (k + 1.0))
        pi = idx[~blend]
        seg_a[pi] = hi + 1
        f_a[pi] = m.j + s[~blend]
        after = t >= end
        seg_a[after] = hi + 1
        f_a[after] = h.sync + (t[after] - end)
        seg_b[after] = -1
        w_a[after] = 1.0
        if bi.size:
            seams.append([float(bi[0]), float(bi[-1] + 1)])
    return seg_a, f_a, seg_b, f_b, w_a


def _part_poses(clips, seg_clip, transforms, joints, seg_a, f_a, seg_b, f_b, w_a) -> tuple[np.ndarray, np.ndarray]:
    """``(rotations, translations)`` of ``joints`` on every output frame of a schedule from
    :func:`_part_schedule` (root moved by each segment's transform when the part holds it)."""
    has_root = bool(joints[0] == 0)
    n_out = len(seg_a)
    r_a = np.empty((n_out, len(joints), 4))
    t_a = np.empty((n_out, len(joints), 3))
    for s_id in np.unique(seg_a):
        sel = seg_a == s_id
        r, tt = sample(clips[seg_clip[s_id]], f_a[sel], joints)
        if has_root:
            r, tt = transform_root(r, tt, *transforms[s_id])
        r_a[sel], t_a[sel] = r, tt
    for s_id in np.unique(seg_b[seg_b >= 0]):
        sel = seg_b == s_id
        r, tt = sample(clips[seg_clip[s_id]], f_b[sel], joints)
        if has_root:
            r, tt = transform_root(r, tt, *transforms[s_id])
        r_a[sel], t_a[sel] = blend_poses(r_a[sel], t_a[sel], r, tt, w_a[sel])
    return r_a, t_a


def realise_transition_plan(
    clips: Sequence[Motion],
    plan: TransitionPlan,
    lead: int,
    tail: int,
    name: str | None = None,
) -> tuple[Motion, dict]:
    """Render a plan into a clip.

    Args:
        clips: the graph's clips (one skeleton).
        plan: the plan.
        lead: frames of the origin clip to show before the request (clipped at its start).
        tail: frames of the target clip to show after the parts are synchronised (clipped at
            its end).

    Returns:
        ``(motion, timing)``: the clip, in the origin clip's world coordinates, and a dict with
        ``request_frame`` (index of the request in the output), ``seams`` (output frame ranges
        of every blend, ``[[start, end], ...]``) and ``start_frame`` (origin frame of output 0).
    """
    h0 = plan.hops[0]
    start = max(0, plan.request - lead)
    pre = plan.request - start
    offsets = [o + pre for o in plan._hop_offsets()]
    last = plan.hops[-1]
    tail = max(0, min(tail, clips[last.dst].n_frames - 1 - last.sync))
    n_out = offsets[-1] + tail + 1
    seg_clip = [h0.src] + [h.dst for h in plan.hops]
    transforms = [(0.0, 0.0, 0.0)]
    for h in plan.hops:
        transforms.append(compose_2d(transforms[-1], h.align))
    n_parts = len(plan.parts)
    skeleton = clips[h0.src].skeleton
    rot = np.empty((n_out, skeleton.n_joints, 4))
    tr = np.empty((n_out, skeleton.n_joints, 3))
    seams: list[list[float]] = []
    for p in range(n_parts):
        seg_a, f_a, seg_b, f_b, w_a = _part_schedule(plan, p, n_out, start, offsets, seams)
        joints = plan.parts[p].joints
        has_root = bool(joints[0] == 0)
        rot[:, joints], tr[:, joints] = _part_poses(clips, seg_clip, transforms, joints, seg_a, f_a, seg_b, f_b, w_a)
        if has_root:
            tr[:, 0, [0, 2]] = _integrated_root(clips, seg_clip, transforms, seg_a, f_a, seg_b, f_b, w_a, tr[0, 0, [0, 2]])
    src_clip = clips[h0.src]
    out = replace(
        src_clip,
        rotations=rot,
        translations=tr,
        name=name or f"{plan.method}_{src_clip.name}_to_{clips[last.dst].name}",
        meta={"synthesized": plan.method},
    )
    seams.sort()
    timing = {"request_frame": pre, "start_frame": start, "seams": seams, "frames": n_out}
    return out, timing


def _root_xz(clips, seg_clip, transforms, seg: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """``(n, 2)`` world ground-plane root position of each (segment, fractional frame)."""
    out = np.zeros((len(seg), 2))
    for s_id in np.unique(seg):
        sel = seg == s_id
        clip = clips[seg_clip[s_id]]
        f = np.clip(frames[sel], 0.0, clip.n_frames - 1)
        i0 = np.floor(f).astype(np.int64)
        i1 = np.minimum(i0 + 1, clip.n_frames - 1)
        w = (f - i0)[:, None]
        root = clip.translations[:, 0][:, [0, 2]]
        xz = root[i0] * (1.0 - w) + root[i1] * w
        th, tx, tz = transforms[s_id]
        c, s_ = np.cos(th), np.sin(th)
        out[sel, 0] = c * xz[:, 0] + s_ * xz[:, 1] + tx
        out[sel, 1] = -s_ * xz[:, 0] + c * xz[:, 1] + tz
    return out


def _integrated_root(clips, seg_clip, transforms, seg_a, f_a, seg_b, f_b, w_a, start_xz) -> np.ndarray:
    """Ground-plane root trajectory from blended root *velocities*.

    Blending root positions (Kovar) adds a velocity ``w'(t) (A - B)`` when the aligned windows
    do not coincide, which can push the body faster than either clip moves; blending velocities
    keeps the root speed between the two sources. Returns ``(n, 2)`` positions, metres.
    """
    n = len(seg_a)

    def velocity(seg, f):
        n_f = np.array([clips[seg_clip[s]].n_frames for s in seg])
        f0 = np.minimum(f, n_f - 2.0)
        return _root_xz(clips, seg_clip, transforms, seg, f0 + 1.0) - _root_xz(clips, seg_clip, transforms, seg, f0)

    v = velocity(seg_a, f_a)
    blend = seg_b >= 0
    if blend.any():
        vb = velocity(seg_b[blend], f_b[blend])
        v[blend] = w_a[blend, None] * v[blend] + (1.0 - w_a[blend, None]) * vb
    out = np.empty((n, 2))
    out[0] = start_xz
    out[1:] = start_xz + np.cumsum(v[:-1], axis=0)
    return out


def seam_frames(seams: Sequence[Sequence[float]], n_frames: int, margin: int = 2) -> np.ndarray:
    """``(frames,)`` bool: frames inside a blend window (with ``margin`` frames either side)."""
    out = np.zeros(n_frames, dtype=bool)
    for a, b in seams:
        out[max(0, int(np.floor(a)) - margin): min(n_frames, int(np.ceil(b)) + margin + 1)] = True
    return out


def joint_speeds(motion: Motion) -> np.ndarray:
    """``(frames - 1, joints)`` joint speeds between consecutive frames, m/s."""
    pos = motion.positions
    return np.linalg.norm(np.diff(pos, axis=0), axis=-1) * motion.fps


def seam_speed_ratio(motion: Motion, source_max: np.ndarray, seams: Sequence[Sequence[float]]) -> np.ndarray:
    """``(joints,)`` largest joint speed at the seams divided by that joint's largest speed in
    the sources (``source_max``, m/s); 0 for joints that never move in the sources."""
    v = joint_speeds(motion)
    mask = seam_frames(seams, motion.n_frames)
    sel = mask[1:] | mask[:-1]
    seam_max = v[sel].max(axis=0) if sel.any() else np.zeros(motion.n_joints)
    moving = source_max > 1e-6
    return np.where(moving, seam_max / np.where(moving, source_max, 1.0), 0.0)


def plan_clips(plan: TransitionPlan) -> list[int]:
    """Indices of the clips a plan plays (origin, intermediates, target)."""
    return sorted({plan.hops[0].src} | {h.dst for h in plan.hops})


def fast_joints(clipset, plan: TransitionPlan, tolerance: float) -> np.ndarray:
    """Joints whose speed around the plan's seams exceeds ``tolerance`` times their fastest
    speed in the clips the plan plays (renders the plan without lead-in or tail)."""
    motion, timing = realise_transition_plan(clipset.clips, plan, lead=2, tail=2)
    source_max = np.max([clipset.max_joint_speed(c) for c in plan_clips(plan)], axis=0)
    return np.flatnonzero(seam_speed_ratio(motion, source_max, timing["seams"]) > tolerance)


def check_clip(motion: Motion, source_max: np.ndarray, seams: Sequence[Sequence[float]], tolerance: float = 1.1,
               rigid: np.ndarray | None = None) -> dict:
    """Quality checks of a synthesized clip against its source clips.

    Args:
        motion: the synthesized clip.
        source_max: ``(joints,)`` fastest speed of each joint in the source clips, m/s.
        seams: blend ranges in output frames (from :func:`realise_transition_plan`).
        tolerance: a joint "pops" when its seam speed exceeds this times its source maximum.
        rigid: ``(joints,)`` bool, joints whose bone to the parent must keep its length (default:
            every non-root joint; pass :meth:`ClipSet.rigid_bones` for rigs with moving
            position channels below the root).

    Returns a dict: ``finite`` (no NaN/inf), ``bone_length_max_dev_m`` (largest change of any
    rigid bone's length over the clip, metres), ``seam_speed_max_ratio`` (max over joints of
    :func:`seam_speed_ratio`), ``pops`` (number of joints above ``tolerance``) and ``ok``.
    """
    pos = motion.positions
    finite = bool(np.isfinite(motion.rotations).all() and np.isfinite(motion.translations).all() and np.isfinite(pos).all())
    par = motion.skeleton.parents
    mask = np.ones(motion.n_joints, dtype=bool) if rigid is None else np.asarray(rigid, dtype=bool).copy()
    mask[0] = False
    child = np.flatnonzero(mask)
    lengths = np.linalg.norm(pos[:, child] - pos[:, par[child]], axis=-1)
    dev = float(np.ptp(lengths, axis=0).max()) if motion.n_frames > 1 and child.size else 0.0
    ratio = seam_speed_ratio(motion, source_max, seams)
    pops = int((ratio > tolerance).sum())
    return {
        "finite": finite,
        "bone_length_max_dev_m": dev,
        "seam_speed_max_ratio": float(ratio.max()),
        "pops": pops,
        "ok": bool(finite and dev < 1e-6 and pops == 0),
    }


def validate_request(clips: Sequence[Motion], src: int, dst: int, request: int) -> None:
    if src == dst:
        raise InputError(f"origin and target clip are the same ({clips[src].name}); a transition needs two motions")
    n = clips[src].n_frames
    if not 0 <= request < n:
        raise InputError(
            f"request at frame {request} is outside {clips[src].name} (0..{n - 1}, "
            f"{n / clips[src].fps:.2f} s at {clips[src].fps:g} fps)"
        )
