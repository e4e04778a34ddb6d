"""Physical plausibility: centre of mass, zero-moment point, support polygon, flight.

* **Centre of mass (COM)** from the segment table of Winter (*Biomechanics and Motor Control of
  Human Movement*, 4th ed., Wiley 2009, Table 4.1, after Dempster 1955): mass fraction of each
  segment and the position of its COM along the segment from the proximal joint. Segments are
  found from joint roles (hips, knees, ankles, toes, shoulders, elbows, wrists, neck, head); the
  hand, which rigs end in very different ways, is placed beyond the wrist along the forearm using
  Drillis & Contini's proportions (hand length ≈ 0.74 × forearm length). Every segment COM is a
  fixed linear combination of joint positions, so the whole-body COM is one matrix product.
* **Zero-moment point (ZMP)** (Vukobratović & Juričić 1969) on the ground plane ``y = ground``:
  multi-segment, ignoring segment rotational inertia,
  ``x_zmp = Σ m_i ((ÿ_i + g) x_i − (y_i − ground) ẍ_i) / Σ m_i (ÿ_i + g)`` (same for z), and the
  cart-table approximation (Kajita et al. 2003), the same formula with one mass at the COM.
  Accelerations come from low-pass filtered positions (cut-off in Hz).
* **Support polygon**: the convex hull of the ground-level foot points (ankle, toe) of the planted
  feet, grown by ``support_margin`` (half a foot's width: joints are inside the foot, not on its
  outline). On grounded frames we report how far the ZMP lies outside it.
* **Ballistic check**: on flight frames (no foot planted, lowest foot point above the contact
  height) the COM must fall freely, ``ÿ_com ≈ −g``; we report ``|ÿ_com + g|``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from evalkit.errors import RolesNotFoundError
from evalkit.features.body import BodyIndex
from evalkit.features.contacts import ContactConfig
from evalkit.features.ground import FootTrack
from evalkit.features.signal import DEFAULT_CUTOFF_HZ, MATRIX_MAX_WORK, derivative, smooth_derivative
from evalkit.motion.vectors import norm

#: Standard gravity, m/s².
GRAVITY = 9.81

#: Winter (2009) Table 4.1: segment -> (proximal role(s), distal role(s), mass fraction,
#: COM distance from the proximal end as a fraction of segment length). A tuple of roles means
#: their midpoint. "hand" is handled separately (see module docstring).
WINTER_SEGMENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...], float, float]] = {
    "head_neck": (("neck",), ("head",), 0.081, 1.000),
    "trunk": (("left_hip", "right_hip"), ("left_shoulder", "right_shoulder"), 0.497, 0.500),
    **{
        f"{s}_{seg}": ((f"{s}_{a}",), (f"{s}_{b}",), m, c)
        for s in ("left", "right")
        for seg, a, b, m, c in (
            ("upper_arm", "shoulder", "elbow", 0.028, 0.436),
            ("forearm", "elbow", "wrist", 0.016, 0.430),
            ("thigh", "hip", "knee", 0.100, 0.433),
            ("leg", "knee", "ankle", 0.0465, 0.433),
            ("foot", "ankle", "toe", 0.0145, 0.500),
        )
    },
}
HAND_MASS = 0.006
HAND_COM = 0.506
HAND_TO_FOREARM = 0.108 / 0.146  # Drillis & Contini segment lengths as fractions of height


@dataclass(frozen=True)
class PhysicsConfig:
    """Settings of the physics metrics.

    Attributes:
        cutoff_hz: low-pass cut-off before taking accelerations, Hz.
        support_margin: the support polygon is grown by this distance, metres (1.75 m body,
            scaled by body height).
        zmp_tolerance: ZMP excursions within this distance outside the support are ignored in
            ``zmp_outside_frac``, metres (scaled).
        flight_trim: seconds at each end of a flight phase left out of the ballistic check (the
            low-pass filter blurs take-off and landing).
        gravity: m/s².
    """

    cutoff_hz: float | None = DEFAULT_CUTOFF_HZ
    support_margin: float = 0.05
    zmp_tolerance: float = 0.05
    flight_trim: float = 0.05
    gravity: float = GRAVITY


#: Where a rig has no head (or no neck) joint, the centre of mass places them from the trunk:
#: the neck (C7) at the shoulders' midpoint, the head's segment centre this fraction of the
#: hips-to-neck distance above the neck (Winter 2009: head and neck ≈ 0.18, trunk ≈ 0.52 of
#: the height between the hips and the top of the head; the head-neck COM sits about a third
#: of the way up it).
HEAD_ABOVE_NECK = 0.3


def estimated_roles(body: BodyIndex) -> list[str]:
    """Roles the centre of mass estimates because the rig lacks them (``neck``, ``head``)."""
    return [r for r in ("neck", "head") if r not in body.roles]


def segment_weights(body: BodyIndex, n_joints: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Linear maps from joint positions to segment COMs.

    Args:
        body: resolved roles (needs hips/knees/ankles, shoulders/elbows/wrists; the neck and
            head are estimated from the trunk when missing, see :data:`HEAD_ABOVE_NECK` and
            :func:`estimated_roles`).
        n_joints: number of joints of the skeleton.

    Returns:
        ``(names, W, masses)``: segment names, ``(segments, joints)`` weights such that
        ``segment_com = W @ positions`` and ``(segments,)`` mass fractions summing to 1.

    Raises:
        RolesNotFoundError: a needed role is missing.
    """
    roles = dict(body.roles)
    n_j = int(n_joints)
    needed = {r for prox, dist, _, _ in WINTER_SEGMENTS.values() for r in prox + dist
              if not r.endswith("toe") and r not in ("neck", "head")}
    missing = sorted(needed - set(roles))
    if missing:
        raise RolesNotFoundError(
            f"centre of mass needs joint roles {', '.join(missing)}; map them with --roles FILE"
        )
    names, rows, masses = [], [], []

    def point(rs: tuple[str, ...]) -> np.ndarray:
        w = np.zeros(n_j)
        for r in rs:
            if r.endswith("toe") and r not in roles:
                r = r.replace("toe", "ankle")
            if r not in roles:
                w += _estimated(r) / len(rs)
                continue
            w[roles[r]] += 1.0 / len(rs)
        return w

    def _estimated(r: str) -> np.ndarray:
        neck = point(("neck",)) if "neck" in roles else point(("left_shoulder", "right_shoulder"))
        if r == "neck":
            return neck
        hips = point(("left_hip", "right_hip"))
        return neck + HEAD_ABOVE_NECK * (neck - hips)  # the head

    for name, (prox, dist, m, c) in WINTER_SEGMENTS.items():
        p, d = point(prox), point(dist)
        names.append(name)
        rows.append(p + c * (d - p))
        masses.append(m)
    for s in ("left", "right"):
        e, w = point((f"{s}_elbow",)), point((f"{s}_wrist",))
        names.append(f"{s}_hand")
        rows.append(w + HAND_COM * HAND_TO_FOREARM * (w - e))
        masses.append(HAND_MASS)
    masses_a = np.array(masses)
    return names, np.array(rows), masses_a / masses_a.sum()


def center_of_mass(positions: np.ndarray, body: BodyIndex) -> np.ndarray:
    """``(frames, 3)`` whole-body centre of mass, metres, from ``(frames, joints, 3)`` positions."""
    _, w, m = segment_weights(body, positions.shape[1])
    return np.einsum("s,sj,fjc->fc", m, w, positions)


def segment_coms(positions: np.ndarray, body: BodyIndex, joints: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """``((frames, segments, 3) segment COMs in metres, (segments,) mass fractions)``.

    ``joints``: ``positions`` holds only these joints of the skeleton (``(frames, len(joints), 3)``),
    which must include every joint the segments are built from (the roles' joints do)."""
    if joints is None:
        _, w, m = _cached_weights(tuple(sorted(body.roles.items())), positions.shape[1])
    else:
        _, w, m = _cached_weights(tuple(sorted(body.roles.items())), int(max(body.roles.values())) + 1)
        w = w[:, joints]
    return _segment_product(positions, w), m


def _segment_product(positions: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``(frames, segments, 3)``: ``w @ positions`` per frame for ``(segments, joints)`` weights."""
    f, j, _ = positions.shape
    # (frames*3, joints) @ (joints, segments) products instead of an einsum loop, in blocks of
    # rows small enough for single-threaded BLAS (see evalkit.features.signal.apply_matrix)
    flat = positions.transpose(0, 2, 1).reshape(f * 3, j)
    step = max(1, MATRIX_MAX_WORK // max(1, w.size))
    seg = np.concatenate([flat[i:i + step] @ w.T for i in range(0, f * 3, step)]) if f else flat @ w.T
    return seg.reshape(f, 3, -1).transpose(0, 2, 1)


@lru_cache(maxsize=64)
def _cached_weights(roles: tuple[tuple[str, int], ...], n_joints: int):
    """:func:`segment_weights` per rig (clips of one rig share them; read-only arrays)."""
    names, w, m = segment_weights(BodyIndex(roles=dict(roles), foot_points=np.zeros((2, 0), np.int64),
                                            height=1.0), n_joints)
    w.setflags(write=False)
    m.setflags(write=False)
    return names, w, m


def zmp(points: np.ndarray, masses: np.ndarray, fps: float, ground: float = 0.0,
        cutoff_hz: float | None = DEFAULT_CUTOFF_HZ, gravity: float = GRAVITY,
        acc: np.ndarray | None = None) -> np.ndarray:
    """Zero-moment point of point masses on the plane ``y = ground``.

    Args:
        points: ``(frames, masses, 3)`` positions of the point masses, metres (use ``(frames, 1,
            3)`` COM for the cart-table model).
        masses: ``(masses,)`` masses (any unit; only ratios matter).
        fps: frames per second.
        ground: world y of the ground, metres.
        acc: ``(frames, masses, 3)`` accelerations of the points (m/s²) when already computed;
            otherwise :func:`smooth_derivative` of ``points`` at ``cutoff_hz``.

    Returns:
        ``(frames, 2)`` ZMP (x, z) on the ground, metres. Frames where the total vertical force
        is near zero (free fall) get NaN.
    """
    if acc is None:
        acc = smooth_derivative(points, fps, 2, cutoff_hz)
    pts = points
    fy = (acc[..., 1] + gravity) * masses  # (F, M)
    den = fy.sum(axis=1)
    h = pts[..., 1] - ground
    num_x = (fy * pts[..., 0] - masses * h * acc[..., 0]).sum(axis=1)
    num_z = (fy * pts[..., 2] - masses * h * acc[..., 2]).sum(axis=1)
    ok = np.abs(den) > 0.05 * gravity * masses.sum()
    out = np.full((points.shape[0], 2), np.nan)
    out[ok, 0] = num_x[ok] / den[ok]
    out[ok, 1] = num_z[ok] / den[ok]
    return out


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance from points ``p`` to segments ``ab``; all ``(..., 2)``."""
    ab = b - a
    denom = np.einsum("...i,...i->...", ab, ab)
    t = np.where(denom > 1e-12, np.einsum("...i,...i->...", p - a, ab) / np.where(denom > 1e-12, denom, 1.0), 0.0)
    t = np.clip(t, 0.0, 1.0)
    return norm(p - (a + t[..., None] * ab))


def _in_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    def cross(o, u, v):
        return (u[..., 0] - o[..., 0]) * (v[..., 1] - o[..., 1]) - (u[..., 1] - o[..., 1]) * (v[..., 0] - o[..., 0])

    d1, d2, d3 = cross(a, b, p), cross(b, c, p), cross(c, a, p)
    neg = (d1 < 0) | (d2 < 0) | (d3 < 0)
    pos = (d1 > 0) | (d2 > 0) | (d3 > 0)
    area = np.abs(cross(a, b, c))
    return ~(neg & pos) & (area > 1e-12)


def distance_outside_hull(p: np.ndarray, pts: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Distance of a 2-D point outside the convex hull of a few points, per frame.

    Hand-vectorised rather than calling ``scipy.spatial.ConvexHull`` per frame (millions of
    frames in a batch, at most a handful of points each): a point is inside the hull iff it is
    inside a triangle of three of the points (Carathéodory), and outside, its distance to the
    hull is its distance to the nearest segment between two of the points.

    Args:
        p: ``(frames, 2)`` query points (NaN allowed → NaN), or ``(frames, Q, 2)``: Q query
            points per frame against the same hulls.
        pts: ``(frames, K, 2)`` candidate hull points.
        valid: ``(frames, K)`` bool, which points exist on each frame.

    Returns:
        ``(frames,)`` (or ``(frames, Q)``) distance ≥ 0 (0 inside), NaN where no point is valid.
    """
    n, k = valid.shape
    p = np.asarray(p, dtype=np.float64)
    queries = p[:, None] if p.ndim == 2 else p  # (frames, Q, 2)
    # every point, pair and triple of points of a frame at once: (frames, Q, combinations)
    q, pts, valid = queries[:, :, None], pts[:, None], valid[:, None]
    dist = np.where(valid, norm(q - pts), np.inf).min(axis=2, initial=np.inf)
    if k >= 2:
        i, j = np.array(list(combinations(range(k), 2))).T
        d = np.where(valid[..., i] & valid[..., j], _segment_distance(q, pts[:, :, i], pts[:, :, j]), np.inf)
        dist = np.minimum(dist, d.min(axis=2))
    if k >= 3:
        i, j, l = np.array(list(combinations(range(k), 3))).T
        inside = (_in_triangle(q, pts[:, :, i], pts[:, :, j], pts[:, :, l])
                  & valid[..., i] & valid[..., j] & valid[..., l])
        dist[inside.any(axis=2)] = 0.0
    dist[~valid[:, 0].any(axis=1)] = np.nan
    dist[np.isnan(queries).any(axis=2)] = np.nan
    return dist.reshape(p.shape[:-1])


def support_points(track: FootTrack, contacts: np.ndarray, contact_config: ContactConfig | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Ground-level points of the planted feet.

    Args:
        track: foot points.
        contacts: ``(frames, 2)`` planted feet at the clip's frames.

    Returns:
        ``((frames, 2P, 2) x-z positions in metres, (frames, 2P) bool valid)``: the foot points of
        planted feet that are near the ground (all points of a planted foot if none is).
    """
    cfg = contact_config or ContactConfig()
    f, _, p, _ = track.positions.shape
    near = track.heights < cfg.height * track.body.scale  # (F, 2, P)
    near = np.where(near.any(axis=2, keepdims=True), near, True)
    valid = near & contacts[:, :, None]
    xz = track.positions[..., [0, 2]].reshape(f, 2 * p, 2)
    return xz, valid.reshape(f, 2 * p)


def zmp_outside(track: FootTrack, contacts: np.ndarray, zmp_xz: np.ndarray, config: PhysicsConfig | None = None,
                contact_config: ContactConfig | None = None, track_frames: int = 1) -> np.ndarray:
    """``(frames,)`` distance of the ZMP outside the support polygon (grown by the margin), metres.

    0 inside; NaN on frames without a planted foot or without a ZMP (free fall).
    ``track_frames``: ``contacts`` and ``zmp_xz`` hold that many ZMP traces of the clip one
    after another (the track's foot points are repeated to match).
    """
    cfg = config or PhysicsConfig()
    pts, valid = support_points(track, contacts[:len(contacts) // track_frames], contact_config)
    if track_frames > 1:
        pts = np.concatenate([pts] * track_frames)
        valid = np.concatenate([support_points(track, c, contact_config)[1]
                                for c in np.split(contacts, track_frames)])
    d = distance_outside_hull(zmp_xz, pts, valid)
    return np.maximum(0.0, d - cfg.support_margin * track.body.scale)


def flight_frames(track: FootTrack, contacts: np.ndarray, fps: float, trim_s: float = 0.05,
                  contact_config: ContactConfig | None = None) -> np.ndarray:
    """``(frames,)`` bool: airborne (no foot planted, every foot point above the contact height),
    with ``trim_s`` seconds removed at each end of every flight phase."""
    from evalkit.features.signal import runs

    cfg = contact_config or ContactConfig()
    low = track.heights.reshape(track.heights.shape[0], -1).min(axis=1)
    air = ~contacts.any(axis=1) & (low > cfg.height * track.body.scale)
    trim = int(round(trim_s * fps))
    out = np.zeros_like(air)
    for a, b in zip(*runs(air)):
        if b - a > 2 * trim:
            out[a + trim:b - trim] = True
    return out


def ballistic_error(com: np.ndarray, flight: np.ndarray, fps: float, cutoff_hz: float | None = DEFAULT_CUTOFF_HZ,
                    gravity: float = GRAVITY, acc: np.ndarray | None = None) -> np.ndarray:
    """``(frames,)`` ``|ÿ_com + g|`` on flight frames (m/s²), NaN elsewhere.

    Args:
        com: ``(frames, 3)`` centre of mass, metres.
        flight: ``(frames,)`` bool flight frames (:func:`flight_frames`).
        acc: ``(frames,)`` vertical COM acceleration (m/s²) when already computed.
    """
    if acc is None:
        acc = smooth_derivative(com[:, 1], fps, 2, cutoff_hz)
    return np.where(flight, np.abs(acc + gravity), np.nan)


def _nanmean(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")


@dataclass(frozen=True, eq=False)
class PhysicsTraces:
    """Per-frame physics of a clip (all arrays have ``frames`` rows).

    Attributes:
        com: ``(frames, 3)`` centre of mass, metres.
        zmp: ``(frames, 2)`` multi-segment ZMP (x, z), metres.
        zmp_cart: ``(frames, 2)`` cart-table ZMP (x, z), metres.
        zmp_outside: ``(frames,)`` multi-segment ZMP distance outside the support, m (NaN off ground).
        zmp_cart_outside: ``(frames,)`` the same for the cart-table ZMP.
        flight: ``(frames,)`` bool flight frames.
        ballistic_error: ``(frames,)`` ``|ÿ_com + g|`` on flight frames, m/s² (NaN elsewhere).
    """

    com: np.ndarray
    zmp: np.ndarray
    zmp_cart: np.ndarray
    zmp_outside: np.ndarray
    zmp_cart_outside: np.ndarray
    flight: np.ndarray
    ballistic_error: np.ndarray


def physics_traces(positions: np.ndarray, track: FootTrack, contacts: np.ndarray,
                   config: PhysicsConfig | None = None, contact_config: ContactConfig | None = None,
                   smooth: tuple[np.ndarray, np.ndarray] | None = None) -> PhysicsTraces:
    """Compute COM, both ZMPs, support distances and the ballistic check for one clip.

    Args:
        positions: ``(frames, joints, 3)`` world positions, metres.
        track: foot points and ground (:func:`evalkit.features.ground.foot_track`).
        contacts: ``(frames, 2)`` planted feet (:func:`evalkit.features.contacts.foot_contacts`).
        smooth: ``(joints, (frames, len(joints), 3))`` the role joints' positions already
            low-passed at ``config.cutoff_hz`` (metres): the segment accelerations are taken from
            them (filtering is linear, so this equals filtering the segment COMs) instead of
            filtering again.
    """
    cfg = config or PhysicsConfig()
    fps = track.fps
    seg, m = segment_coms(positions, track.body)
    com = np.einsum("s,fsc->fc", m, seg)
    ground = track.ground
    # accelerations of the segment COMs; the COM's are their mass-weighted sum (all linear)
    seg_smooth = seg_acc = None
    if smooth is not None:
        seg_smooth, _ = segment_coms(smooth[1], track.body, smooth[0])
    seg_acc = smooth_derivative(seg, fps, 2, cfg.cutoff_hz) if seg_smooth is None else derivative(seg_smooth, fps, 2)
    com_acc = np.einsum("s,fsc->fc", m, seg_acc)
    z_multi = zmp(seg, m, fps, ground, cfg.cutoff_hz, cfg.gravity, acc=seg_acc)
    z_cart = zmp(com[:, None], np.ones(1), fps, ground, cfg.cutoff_hz, cfg.gravity, acc=com_acc[:, None])
    flight = flight_frames(track, contacts, fps, cfg.flight_trim, contact_config)
    # both ZMPs against the same support polygons in one pass (as zmp_outside measures them)
    pts, valid = support_points(track, contacts, contact_config)
    d = distance_outside_hull(np.stack([z_multi, z_cart], axis=1), pts, valid)
    outside = np.maximum(0.0, d - cfg.support_margin * track.body.scale).T.reshape(-1)
    n = len(com)
    return PhysicsTraces(
        com=com, zmp=z_multi, zmp_cart=z_cart,
        zmp_outside=outside[:n],
        zmp_cart_outside=outside[n:],
        flight=flight,
        ballistic_error=ballistic_error(com, flight, fps, cfg.cutoff_hz, cfg.gravity, acc=com_acc[:, 1]),
    )


def physics_metrics(tr: PhysicsTraces, scale: float = 1.0, config: PhysicsConfig | None = None) -> dict[str, float]:
    """Clip-level physics metrics.

    Returns:
        ``zmp_outside_mean`` / ``zmp_outside_max`` (m, over grounded frames),
        ``zmp_outside_frac`` (share of grounded frames with the ZMP more than ``zmp_tolerance``
        outside), the same three for the cart-table ZMP (``zmp_cart_*``), ``flight_frac``,
        ``ballistic_error_mean`` (m/s², NaN without flight).
    """
    cfg = config or PhysicsConfig()
    out = {}
    for name, d in (("zmp", tr.zmp_outside), ("zmp_cart", tr.zmp_cart_outside)):
        g = d[np.isfinite(d)]
        out[f"{name}_outside_mean"] = float(g.mean()) if g.size else float("nan")
        out[f"{name}_outside_max"] = float(g.max()) if g.size else float("nan")
        out[f"{name}_outside_frac"] = float((g > cfg.zmp_tolerance * scale).mean()) if g.size else float("nan")
    out["flight_frac"] = float(tr.flight.mean())
    out["ballistic_error_mean"] = _nanmean(tr.ballistic_error)
    return out
