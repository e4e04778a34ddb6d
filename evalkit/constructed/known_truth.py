"""SMPL-family, HumanML3D and MDM files with known truth, built from real capture.

No AMASS, BEAT2, HumanML3D or MDM file may be downloaded or shipped here (their licences forbid
it), so evalkit's readers are checked on files written by :func:`write_samples` from the bundled
CMU capture: each clip is retargeted onto the SMPL topology by its joint roles
(:func:`evalkit.motion.formats.smpl.retarget_positions`), rotations are fitted on evalkit's default
SMPL skeleton (:func:`evalkit.motion.formats.smpl.to_smpl`), and the result is written in each format.
The returned truth is the world positions (metres, Y-up) each file must read back as. These are
files made here, not by the original tools: docs/formats.md says which checks rest on them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.motion.model import Motion

DEFAULT_CLIPS = ("16_15.amc", "07_05-walk.amc", "09_06-run.amc")


def _clip(path: str | os.PathLike) -> Motion:
    from evalkit.motion.formats import load_motion

    return load_motion(path)


def write_samples(out_dir: str | os.PathLike, clips: Sequence[str | os.PathLike], fps: float = 30.0) -> dict:
    """Write one file per format into ``out_dir`` from the capture files ``clips`` (e.g. the bundled
    CMU clips :data:`DEFAULT_CLIPS` in ``evalkit/data/samples/cmu``) and return
    ``{file name: truth}`` where truth is
    ``{"path", "positions" (frames, joints, 3) or a list of them, "fps", "skeleton", "source"}``.

    Files: ``amass_smplh.npz`` (SMPL-H, Z-up), ``amass_smplx.npz`` (SMPL-X, Z-up),
    ``beat2_smplx.npz`` (SMPL-X, Y-up, expressions), ``hml_joints.npy`` (22 joints, 20 fps),
    ``hml_vecs.npy`` (263 features, 20 fps; truth: the joints turned to HumanML3D's start pose),
    ``results.npy`` (MDM dict, one sample per clip, 20 fps), ``positions_smpl24.npy`` (24 joints,
    ``--array-fps`` needed), ``positions.csv`` (24 joints, ``--array-fps`` needed).
    """
    from evalkit.motion.formats import humanml3d as hml
    from evalkit.motion.ops import resample
    from evalkit.motion.formats.smpl import retarget_positions, smpl_arrays, to_smpl

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    motions = [resample(_clip(c), fps) for c in clips]
    first = motions[0]
    truth: dict = {}

    def put(name, positions, rate, skeleton, **extra):
        truth[name] = {"path": out / name, "positions": positions, "fps": rate, "skeleton": skeleton,
                       "source": str(clips[0]), **extra}

    for name, topology, style in (("amass_smplh.npz", "smplh52", "amass"), ("amass_smplx.npz", "smplx55", "amass"),
                                  ("beat2_smplx.npz", "smplx55", "beat2")):
        m = to_smpl(first, topology)
        np.savez(out / name, **smpl_arrays(m, style=style))
        put(name, np.array(m.positions), fps, topology)

    m20 = resample(_clip(clips[0]), hml.FPS)
    joints = retarget_positions(m20, "smpl22")
    np.save(out / "hml_joints.npy", joints.astype(np.float32))
    put("hml_joints.npy", joints.astype(np.float32).astype(np.float64), hml.FPS, "smpl22")
    np.save(out / "hml_vecs.npy", hml.joints_to_features(joints).astype(np.float32))
    put("hml_vecs.npy", hml.canonical(joints), hml.FPS, "smpl22")

    samples = [retarget_positions(resample(_clip(c), hml.FPS), "smpl22") for c in clips]
    t_max = max(len(s) for s in samples)
    motion = np.zeros((len(samples), 22, 3, t_max), dtype=np.float32)
    for i, s in enumerate(samples):
        motion[i, :, :, : len(s)] = np.moveaxis(s, 0, 2)
    texts = [f"a person moves as in capture clip {Path(c).stem}" for c in clips]
    np.save(out / "results.npy", {"motion": motion, "text": texts, "lengths": np.array([len(s) for s in samples]),
                                  "num_samples": len(samples), "num_repetitions": 1}, allow_pickle=True)
    put("results.npy", [s.astype(np.float32).astype(np.float64) for s in samples], hml.FPS, "smpl22", text=texts)

    p24 = retarget_positions(first, "smpl24")
    np.save(out / "positions_smpl24.npy", p24)
    put("positions_smpl24.npy", p24, fps, "smpl24")
    from evalkit.motion.topology import TOPOLOGIES

    cols = [f"{n}_{a}" for n in TOPOLOGIES["smpl24"][0] for a in "xyz"]
    np.savetxt(out / "positions.csv", p24.reshape(len(p24), -1), fmt="%.7f", delimiter=",",
               header=",".join(cols), comments="")
    put("positions.csv", p24, fps, "smpl24")
    return truth


# ---------------------------------------------------------------------------------------------
# Terrain with known truth: real walks lifted onto constructed steps and slopes
# ---------------------------------------------------------------------------------------------
#
# No openly licensed capture of walking over steps, stairs or slopes exists here (the fetchable
# CMU subsets are on a level floor), so uneven-ground checks use *constructed* terrain: a real
# flat-floor walk is lifted, contact by contact, onto a terrain whose height under every foot
# contact is known. The body is raised rigidly (root translation) and each leg is re-posed by
# two-bone inverse kinematics so that its foot lands on the terrain with its original world
# orientation; bone lengths are unchanged. Everything resting on these clips says so.


@dataclass(frozen=True)
class Terrain:
    """A constructed ground: height above the source clip's floor as a function of the
    horizontal position along ``direction``.

    Attributes:
        kind: ``"steps"`` (piecewise constant: ``levels[i]`` between ``edges[i-1]`` and
            ``edges[i]``) or ``"slope"`` (``grade × distance``).
        direction: ``(2,)`` unit x, z direction the terrain rises along.
        origin: ``(2,)`` x, z where the distance is 0, metres.
        edges: ``(E,)`` distances of the step edges along ``direction``, metres (steps only).
        levels: ``(E + 1,)`` heights of the treads, metres (steps only; ``levels[0]`` before
            the first edge).
        grade: rise over run (slope only).
    """

    kind: str
    direction: np.ndarray
    origin: np.ndarray
    edges: np.ndarray = field(default_factory=lambda: np.zeros(0))
    levels: np.ndarray = field(default_factory=lambda: np.zeros(1))
    grade: float = 0.0

    def height(self, xz: np.ndarray) -> np.ndarray:
        """Terrain height (metres above the source floor) at horizontal positions ``(..., 2)``."""
        d = (np.asarray(xz, dtype=np.float64) - self.origin) @ self.direction
        if self.kind == "slope":
            return self.grade * d
        return np.asarray(self.levels)[np.searchsorted(self.edges, d, side="right")]


@dataclass(frozen=True)
class LiftedClip:
    """A clip lifted onto a constructed terrain, with its truth.

    Attributes:
        motion: the lifted clip (same skeleton, rotations re-posed, root raised).
        terrain: the terrain it walks on.
        contacts: ``[(side, first frame, last frame), ...]`` foot contacts of the source clip
            (side 0 left, 1 right), in time order.
        support: ``(contacts,)`` terrain height under each contact (at the foot's mean
            position over it), metres above the source floor: what a per-contact support
            estimate must recover.
        foot_offset: ``(frames, 2)`` vertical offset given to each foot (left, right), metres.
        root_offset: ``(frames,)`` vertical offset given to the root, metres.
        sink: ``(frames, 2)`` depth by which each foot is below the terrain (0 unless ``sink``
            was asked for), metres.
        ik_error: largest distance between a foot's target and where the re-posed leg puts it, m.
    """

    motion: Motion
    terrain: Terrain
    contacts: list
    support: np.ndarray
    foot_offset: np.ndarray
    root_offset: np.ndarray
    sink: np.ndarray
    ik_error: float


def source_contacts(motion: Motion, min_s: float = 0.08) -> list[tuple[int, int, int]]:
    """Foot contacts of a clip on a **level** floor: ``[(side, first, last frame), ...]``
    (side 0 left, 1 right), in time order: the planted feet of
    :func:`evalkit.features.contacts.foot_contacts`, without contacts shorter than ``min_s``
    seconds (a foot brushing the floor at a cut end is no footprint to build terrain under).
    Meant for flat source clips only."""
    from evalkit.features.contacts import contact_intervals, foot_contacts

    return [(side, a, b - 1) for side, a, b in contact_intervals(foot_contacts(motion))
            if b - a >= min_s * motion.fps]


def _hips_xz(motion: Motion) -> np.ndarray:
    """``(frames, 2)`` horizontal position of the hips role (some rigs keep a static root joint)."""
    from evalkit.motion.roles import find_roles

    return np.asarray(motion.positions[:, find_roles(motion.skeleton)["hips"]][:, [0, 2]], dtype=np.float64)


def walking_direction(motion: Motion) -> np.ndarray:
    """``(2,)`` unit x, z direction of the hips from the first to the last frame."""
    xz = _hips_xz(motion)
    d = xz[-1] - xz[0]
    n = np.linalg.norm(d)
    if n < 1e-6:
        raise InputError("the clip does not travel: no walking direction to build terrain along")
    return d / n


def step_terrain(motion: Motion, rise: float, every: int = 1, first: int = 1,
                 contacts: list | None = None) -> Terrain:
    """Steps (stairs when ``every == 1``) under a walk: each edge lies half-way between two
    consecutive footprints along the walking direction, so no contact straddles an edge.

    Args:
        rise: height of each step, metres (negative: steps down).
        every: a new step every ``every`` contacts (1: one foot per tread, stairs; 2: both feet
            on each tread).
        first: index of the first contact on the first raised tread (earlier contacts stay on
            the source floor).
    """
    contacts = source_contacts(motion) if contacts is None else contacts
    direction = walking_direction(motion)
    origin = _hips_xz(motion)[0]
    centres = _contact_centres(motion, contacts)
    along = (centres - origin) @ direction
    edges, levels = [], [0.0]
    for k in range(first, len(contacts), every):
        if k == 0:
            continue
        edges.append(0.5 * (along[k - 1] + along[k]))
        levels.append(levels[-1] + rise)
    if np.any(np.diff(edges) <= 0):
        raise InputError("footprints do not advance along the walking direction: cannot place step edges")
    return Terrain("steps", direction, origin, np.asarray(edges), np.asarray(levels))


def slope_terrain(motion: Motion, grade: float) -> Terrain:
    """A constant slope of ``grade`` (rise over run) along the walking direction, 0 where the
    hips start."""
    return Terrain("slope", walking_direction(motion), _hips_xz(motion)[0], grade=float(grade))


def _contact_centres(motion: Motion, contacts: list) -> np.ndarray:
    """``(contacts, 2)`` mean x, z of the foot (ankle–toe midpoint) over each contact."""
    from evalkit.motion.roles import find_roles

    roles = find_roles(motion.skeleton)
    pos = motion.positions
    out = []
    for side, a, b in contacts:
        p = "left" if side == 0 else "right"
        mid = 0.5 * (pos[a:b + 1, roles[f"{p}_ankle"]] + pos[a:b + 1, roles[f"{p}_toe"]])
        out.append(mid[:, [0, 2]].mean(axis=0))
    return np.asarray(out).reshape(-1, 2)


def _smoothstep(u: np.ndarray) -> np.ndarray:
    u = np.clip(u, 0.0, 1.0)
    return u * u * (3 - 2 * u)


def lift_onto_terrain(motion: Motion, terrain: Terrain, sink: float = 0.0, sink_from: int = 0,
                      root_window_s: float = 0.2, contacts: list | None = None) -> LiftedClip:
    """Lift a real level-floor walk onto ``terrain`` (constructed truth; see :class:`Terrain`).

    **Steps**: each foot contact of the source (:func:`source_contacts`) is raised by the
    height of the tread under it (at the ankle–toe midpoint's mean position over the contact);
    between its contacts a foot moves to the next level during its swing (stepping up: over
    10–60 % of the swing, stepping down: over 40–90 %, smoothstep). **Slopes**: every frame,
    the ankle is raised by the ground's height under it and the foot tilted so that the toe
    rises by the height under the toe (the legs are sheared onto the slope; a planted foot stays
    planted, and rolls over its toe on the slope). The root rises by the largest smooth curve that never exceeds
    either foot's offset (a running minimum over ``±root_window_s`` then a Gaussian of a third
    of it), so the legs only ever shorten; each leg is re-posed by two-bone IK (hip fixed,
    knee kept in its original bending plane -- of a straight or hyperextended leg, the way the
    pelvis faces -- and the foot keeping its world orientation).

    Args:
        motion: a real walk on a level floor.
        terrain: the ground to put it on.
        sink: metres; if > 0, every contact from index ``sink_from`` on touches down on the
            terrain and then sinks into it, reaching ``sink`` at the end of the contact
            (smoothstep), rising back during the next swing: feet sinking into the steps (an
            artifact with known depth).

    Returns:
        the lifted clip and its truth (:class:`LiftedClip`).
    """
    from scipy.ndimage import gaussian_filter1d, minimum_filter1d

    from evalkit.motion import quat
    from evalkit.motion.fk import forward_kinematics
    from evalkit.motion.roles import find_roles

    contacts = source_contacts(motion) if contacts is None else list(contacts)
    if not contacts:
        raise InputError(f"{motion.name or 'clip'}: no foot contacts found; lifting needs a walk")
    roles = find_roles(motion.skeleton)
    parents = motion.skeleton.parents
    pos, grot = forward_kinematics(motion)
    offset, toe_rise, sink_depth, support = _foot_offsets(pos, roles, terrain, contacts, sink, sink_from)
    w = max(1, int(round(root_window_s * motion.fps)))
    low = minimum_filter1d(offset.min(axis=1), size=2 * w + 1, mode="nearest")
    root = gaussian_filter1d(low, sigma=w / 3.0, truncate=3.0, mode="nearest")
    root = np.minimum(root, offset.min(axis=1))  # rounding guard: legs never lengthen

    rot = np.array(motion.rotations, dtype=np.float64)
    trans = np.array(motion.translations, dtype=np.float64)
    trans[:, int(np.flatnonzero(parents < 0)[0]), 1] += root
    worst = 0.0
    for side in (0, 1):
        p = "left" if side == 0 else "right"
        if parents[roles[f"{p}_knee"]] != roles[f"{p}_hip"] or parents[roles[f"{p}_ankle"]] != roles[f"{p}_knee"]:
            raise InputError(f"{motion.name or 'clip'}: the {p} leg is not a hip-knee-ankle chain; cannot re-pose it")
        err = _repose_leg(rot, pos, grot, parents, roles, p, offset[:, side] - root,
                          toe_rise[:, side] if terrain.kind == "slope" else None)
        worst = max(worst, err)
    rot = quat.make_continuous(rot, axis=0)
    meta = dict(motion.meta)
    meta["constructed"] = (f"real clip lifted onto constructed {terrain.kind} (evalkit.constructed.known_truth."
                           f"lift_onto_terrain){'; feet sink into the terrain' if sink > 0 else ''}")
    lifted = replace(motion, rotations=rot, translations=trans, name=f"{motion.name}~{terrain.kind}", meta=meta)
    return LiftedClip(lifted, terrain, contacts, support, offset + sink_depth, root, sink_depth, worst)


def _foot_offsets(pos: np.ndarray, roles: dict, terrain: Terrain, contacts: list, sink: float,
                  sink_from: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Vertical offsets of :func:`lift_onto_terrain`: ``(frames, 2)`` of each ankle (sink
    included), ``(frames, 2)`` toe rise above the ankle's (slopes), ``(frames, 2)`` sink depth,
    and ``(contacts,)`` terrain height under each contact, metres."""
    n = pos.shape[0]
    offset = np.zeros((n, 2))
    toe_rise = np.zeros((n, 2))  # toe above the ankle's offset (a foot tilted with a slope)
    sink_depth = np.zeros((n, 2))
    support = np.zeros(len(contacts))
    slope = terrain.kind == "slope"
    for side in (0, 1):
        p = "left" if side == 0 else "right"
        ank, toe = pos[:, roles[f"{p}_ankle"]], pos[:, roles[f"{p}_toe"]]
        mid = 0.5 * (ank + toe)
        mine = [(i, a, b) for i, (s, a, b) in enumerate(contacts) if s == side]
        if slope:  # a continuous ground: every leg point raised by the height under it (a shear)
            offset[:, side] = terrain.height(ank[:, [0, 2]])
            toe_rise[:, side] = terrain.height(toe[:, [0, 2]]) - offset[:, side]
        for i, a, b in mine:
            support[i] = float(terrain.height(mid[a:b + 1, [0, 2]].mean(axis=0)))
            if not slope:  # a tread: a planted foot does not move
                offset[a:b + 1, side] = support[i]
            if sink > 0 and i >= sink_from:
                sink_depth[a:b + 1, side] = sink * _smoothstep(np.arange(b - a + 1) / max(1, b - a))
        if mine and not slope:  # swings: to the next tread; before the first / after the last: hold
            offset[: mine[0][1], side] = offset[mine[0][1], side]
            offset[mine[-1][2] + 1:, side] = offset[mine[-1][2], side]
            for (_, _, b0), (_, a1, _) in zip(mine[:-1], mine[1:]):
                lo, hi = offset[b0, side] - sink_depth[b0, side], offset[a1, side]
                u = (np.arange(b0 + 1, a1) - b0) / max(a1 - b0, 1)
                ramp = _smoothstep((u - 0.1) / 0.5) if hi >= lo else _smoothstep((u - 0.4) / 0.5)
                offset[b0 + 1:a1, side] = lo + (hi - lo) * ramp
        offset[:, side] -= sink_depth[:, side]  # during a sinking contact the foot is below the terrain
    return offset, toe_rise, sink_depth, support


def _repose_leg(rot: np.ndarray, pos: np.ndarray, grot: np.ndarray, parents: np.ndarray, roles: dict,
                p: str, lift: np.ndarray, toe_rise: np.ndarray | None) -> float:
    """Two-bone IK of one leg (``p`` = "left"/"right") of :func:`lift_onto_terrain`: the ankle
    raised by ``lift`` ``(frames,)`` metres relative to the hip, the foot keeping its world
    orientation (tilted so the toe rises by ``toe_rise`` more, if given). Writes the hip, knee
    and ankle local rotations into ``rot``; returns the largest miss of the ankle target, m."""
    from evalkit.motion import quat
    from evalkit.motion.fit import shortest_arc

    up = np.array([0.0, 1.0, 0.0])
    hip, knee, ankle = roles[f"{p}_hip"], roles[f"{p}_knee"], roles[f"{p}_ankle"]
    H, K, A = pos[:, hip], pos[:, knee], pos[:, ankle]
    l1 = np.linalg.norm(K - H, axis=1)
    l2 = np.linalg.norm(A - K, axis=1)
    T = A + lift[:, None] * up
    dist = np.linalg.norm(T - H, axis=1)
    reach = np.clip(dist, np.abs(l1 - l2) + 1e-6, l1 + l2 - 1e-6)
    u = (T - H) / dist[:, None]

    def across(v):  # unit component of v normal to u
        v = v - np.sum(v * u, axis=1)[:, None] * u
        return v / np.maximum(np.linalg.norm(v, axis=1), 1e-12)[:, None]

    # the knee bends in the source leg's own plane; a nearly straight (or hyperextended) leg
    # has none, and then it bends the way the pelvis faces
    facing = np.cross(pos[:, roles["left_hip"]] - pos[:, roles["right_hip"]], up)
    u0 = (A - H) / np.linalg.norm(A - H, axis=1)[:, None]  # the source leg's hip-ankle line
    perp = (K - H) - np.sum((K - H) * u0, axis=1)[:, None] * u0  # how its knee bends off it
    own, fwd = across(perp), across(facing)
    w = np.clip(np.sum(perp * fwd, axis=1) / (0.02 * l1), 0.0, 1.0)  # knee ahead of the line
    bend = across(w[:, None] * own + (1 - w[:, None]) * fwd)
    a = (l1 ** 2 - l2 ** 2 + reach ** 2) / (2 * reach)
    K2 = H + a[:, None] * u + np.sqrt(np.maximum(l1 ** 2 - a ** 2, 0.0))[:, None] * bend
    A2 = H + reach[:, None] * u
    # world rotations: thigh turned by r1, shin by r2 after r1; the foot keeps its own
    r1 = quat.to_matrix(shortest_arc((K - H) / l1[:, None], (K2 - H) / l1[:, None]))
    shin = np.einsum("fij,fj->fi", r1, A - K)
    r2 = quat.to_matrix(shortest_arc(shin / l2[:, None], (A2 - K2) / l2[:, None]))
    g_hip = r1 @ grot[:, hip]
    g_knee = r2 @ r1 @ grot[:, knee]
    g_ankle = grot[:, ankle]
    if toe_rise is not None:  # tilt the foot with the slope: the toe rises by the ground's rise under it
        t0 = pos[:, roles[f"{p}_toe"]] - A
        want = t0 + toe_rise[:, None] * up
        g_ankle = quat.to_matrix(shortest_arc(t0 / np.linalg.norm(t0, axis=1)[:, None],
                                              want / np.linalg.norm(want, axis=1)[:, None])) @ g_ankle

    def inv(m):  # rotation inverse
        return np.swapaxes(m, -1, -2)

    rot[:, hip] = quat.from_matrix(inv(grot[:, parents[hip]]) @ g_hip)
    rot[:, knee] = quat.from_matrix(inv(g_hip) @ g_knee)
    rot[:, ankle] = quat.from_matrix(inv(g_knee) @ g_ankle)
    return float(np.max(np.linalg.norm(A2 - T, axis=1)))
