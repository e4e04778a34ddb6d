"""SMPL-family parameter files (AMASS SMPL / SMPL-H / SMPL-X ``.npz``, BEAT2/EMAGE SMPL-X ``.npz``),
body-model rest joints, and the writer back to those files.

A parameter file holds per-frame axis-angle joint rotations ``poses (frames, 3·joints)`` relative
to the body model's rest pose, the pelvis translation ``trans (frames, 3)``, the body shape
``betas`` and a frame rate. Joint world positions are forward kinematics of those rotations on
the model's rest joints, which are the model's joint regressor applied to its template mesh
shaped by ``betas`` (:class:`BodyModel`, a few lines of numpy; no PyTorch). Without a model file
the default adult skeleton of :mod:`evalkit.motion.topology` stands in, with a warning.

Coordinates: the models are Y-up in their own frame; AMASS files are Z-up in the world (their
root rotation includes the turn), BEAT2 files Y-up. The up axis is detected from head vs feet
as for BVH (``--up`` overrides) and the clip is turned to evalkit's Y-up. Lengths are metres.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np
from scipy.spatial.transform import Rotation

from evalkit.errors import FileFormatError, InputError
from evalkit.motion import topology as topo
from evalkit.motion.formats.npz import npz_arrays
from evalkit.motion.model import Motion, Skeleton

#: keys that may hold the frame rate, in order of preference
FPS_KEYS = ("mocap_frame_rate", "mocap_framerate", "frame_rate", "framerate", "fps")
#: the keys of a parameter file a reader uses (no other member is loaded)
PARAM_KEYS = FPS_KEYS + ("poses", "root_orient", "pose_body", "pose_jaw", "pose_eye", "pose_hand", "trans",
                         "betas", "expressions", "gender", "surface_model_type", "model")
_ROT_CH = ("Zrotation", "Xrotation", "Yrotation")
_POS_CH = ("Xposition", "Yposition", "Zposition")


# -- body model --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class BodyModel:
    """The joint part of an SMPL-family body model.

    Attributes:
        joints: ``(joints, 3)`` rest joints of the mean shape (regressor x template), metres.
        shape_dirs: ``(joints, 3, n_betas)`` change of the rest joints per unit of each beta.
        expr_dirs: ``(joints, 3, n_expr)`` the same for SMPL-X expression coefficients (or empty).
        parents: ``(joints,)`` parent indices from the model's ``kintree_table``.
        source: the file it was read from.
    """

    joints: np.ndarray
    shape_dirs: np.ndarray
    expr_dirs: np.ndarray
    parents: np.ndarray
    source: str = ""

    @property
    def n_joints(self) -> int:
        return int(self.joints.shape[0])

    def rest_joints(self, betas: np.ndarray | None = None, expressions: np.ndarray | None = None) -> np.ndarray:
        """Rest joint positions shaped by ``betas`` (``(n,)``, extra or missing coefficients are
        dropped / zero, as the model's own code does), metres: ``(joints, 3)``, or
        ``(frames, joints, 3)`` when per-frame SMPL-X ``expressions (frames, n)`` are given."""
        j = self.joints.copy()
        if betas is not None and np.size(betas):
            b = np.asarray(betas, dtype=np.float64).ravel()[: self.shape_dirs.shape[2]]
            j = j + self.shape_dirs[:, :, : len(b)] @ b
        if expressions is not None and self.expr_dirs.shape[2] and np.size(expressions):
            e = np.asarray(expressions, dtype=np.float64)
            e = e.reshape(len(e), -1)[:, : self.expr_dirs.shape[2]]
            n_j, n_e = self.n_joints, e.shape[1]
            dirs = self.expr_dirs[:, :, :n_e].reshape(n_j * 3, n_e)
            return j[None] + (e @ dirs.T).reshape(len(e), n_j, 3)  # one BLAS product
        return j


def load_body_model(path: str | os.PathLike, allow_pickle: bool = False) -> BodyModel:
    """Read an SMPL / SMPL-H / SMPL-X model file (``.npz``, or ``.pkl`` through the restricted
    unpickler of :mod:`evalkit.motion.formats.safepickle`) and keep what joints need: ``v_template``,
    ``shapedirs``, ``J_regressor``, ``kintree_table``. The vertices are not kept."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--body-model {p}: file not found")
    if p.suffix.lower() == ".npz":
        data = npz_arrays(p, ("v_template", "shapedirs", "J_regressor", "kintree_table"))
    elif p.suffix.lower() == ".pkl":
        from evalkit.motion.formats.safepickle import safe_loads

        obj = safe_loads(p.read_bytes(), p, allow_pickle)
        if not isinstance(obj, dict):
            raise FileFormatError(p, None, f"expected a dict of model arrays, found {type(obj).__name__}")
        data = obj
    else:
        raise InputError(f"--body-model {p}: expected the model's .npz or .pkl file")
    for key in ("v_template", "shapedirs", "J_regressor"):
        if key not in data:
            raise FileFormatError(p, None, f"missing key {key!r} of a body model (found: {', '.join(sorted(map(str, data)))})")
    try:
        v = np.asarray(data["v_template"], dtype=np.float64)
        sd = np.asarray(data["shapedirs"], dtype=np.float64)
        jr = data["J_regressor"]
        jr = np.asarray(jr.toarray() if hasattr(jr, "toarray") else jr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise FileFormatError(p, None, f"model arrays are not numeric ({exc})") from None
    n_v = v.shape[0] if v.ndim == 2 else -1
    if v.ndim != 2 or v.shape[1] != 3:
        raise FileFormatError(p, None, f"v_template: expected (vertices, 3), found {v.shape}")
    if sd.ndim != 3 or sd.shape[:2] != (n_v, 3):
        raise FileFormatError(p, None, f"shapedirs: expected ({n_v}, 3, components), found {sd.shape}")
    if jr.ndim != 2 or jr.shape[1] != n_v:
        raise FileFormatError(p, None, f"J_regressor: expected (joints, {n_v}), found {jr.shape}")
    n_j = jr.shape[0]
    if "kintree_table" in data:
        kt = np.asarray(data["kintree_table"]).astype(np.int64)
        if kt.shape != (2, n_j):
            raise FileFormatError(p, None, f"kintree_table: expected (2, {n_j}), found {kt.shape}")
        parents = kt[0].copy()
        parents[0] = -1
    else:
        key = topo.BY_JOINT_COUNT.get(n_j)
        if key is None:
            raise FileFormatError(p, None, f"no kintree_table and {n_j} joints, not a known SMPL-family topology")
        parents = np.array(topo.TOPOLOGIES[key][1])
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(sd)) and np.all(np.isfinite(jr))):
        raise FileFormatError(p, None, "the model holds NaN or infinite values")
    n_c = sd.shape[2]
    if n_j == 55 and n_c > 300:      # SMPL-X v1.1: 300 shape + 100 expression components
        n_shape = 300
    elif n_j == 55 and n_c == 20:    # SMPL-X v1.0: 10 + 10
        n_shape = 10
    else:
        n_shape = n_c
    joints = jr @ v
    dirs = (jr @ sd.reshape(n_v, -1)).reshape(n_j, 3, n_c)  # one BLAS product (SMPL-X: 55 x 10475 x 1200)
    return BodyModel(joints=joints, shape_dirs=dirs[:, :, :n_shape], expr_dirs=dirs[:, :, n_shape:],
                     parents=parents, source=str(p))


# -- reading parameter files -----------------------------------------------------------------
def is_param_file(keys) -> bool:
    """Whether ``.npz`` keys are those of a parameter file (a broken one included: ``trans`` or a
    frame rate without ``poses`` is a parameter file that lacks its poses)."""
    return any(k in keys for k in ("poses", "root_orient", "pose_body", "trans", "mocap_framerate",
                                   "mocap_frame_rate"))


def _text(v) -> str:
    v = np.asarray(v)
    item = v.item() if v.size == 1 else (v.ravel()[0] if v.size else "")
    return item.decode("latin-1") if isinstance(item, bytes) else str(item)


def _frame_rate(path: Path, data: Mapping, fps: float | None) -> tuple[float, str]:
    for key in FPS_KEYS:
        if key in data:
            try:
                value = float(np.asarray(data[key]).ravel()[0])
            except (IndexError, TypeError, ValueError):
                raise FileFormatError(path, None, f"{key}: expected a frame rate, found {np.asarray(data[key])!r}") from None
            if not (np.isfinite(value) and 0 < value <= 2000):
                raise FileFormatError(path, None, f"{key}: expected a frame rate above 0 and at most 2000, found {value:g}")
            return value, key
    if fps is not None:
        return float(fps), "--array-fps"
    raise FileFormatError(path, None, f"no frame rate: expected one of the keys {', '.join(FPS_KEYS[:2])}; "
                                      "pass --array-fps to give it")


def _poses(path: Path, data: Mapping) -> np.ndarray:
    if "poses" in data:
        poses = np.asarray(data["poses"])
        key = "poses"
    elif "root_orient" in data and "pose_body" in data:
        parts = [np.asarray(data["root_orient"]), np.asarray(data["pose_body"])]
        for k in ("pose_jaw", "pose_eye", "pose_hand"):
            if k in data:
                parts.append(np.asarray(data[k]))
        try:
            poses = np.concatenate([x.reshape(len(x), -1) for x in parts], axis=1)
        except ValueError as exc:
            raise FileFormatError(path, None, f"root_orient/pose_body/...: frame counts disagree ({exc})") from None
        key = "root_orient+pose_body"
    else:
        raise FileFormatError(path, None, "missing key 'poses' (frames, 3·joints axis-angle rotations); "
                                          f"found keys: {', '.join(k for k in data.get('__keys__', data) if k != '__keys__')}")
    if poses.dtype.kind not in "fiu":
        raise FileFormatError(path, None, f"{key}: expected numbers, found {poses.dtype}")
    if poses.ndim == 3 and poses.shape[2] == 3:
        poses = poses.reshape(len(poses), -1)
    cols = poses.shape[1] if poses.ndim == 2 else None
    if poses.ndim != 2 or cols % 3 or cols // 3 not in topo.BY_JOINT_COUNT or len(poses) == 0:
        expected = ", ".join(f"{3 * j} ({topo.BY_JOINT_COUNT[j]})" for j in sorted(topo.BY_JOINT_COUNT))
        raise FileFormatError(path, None, f"{key}: expected (frames, columns) with columns one of {expected}, "
                                          f"found shape {poses.shape}")
    poses = poses.astype(np.float64)
    bad = ~np.isfinite(poses)
    if bad.any():
        f, c = np.argwhere(bad)[0]
        raise FileFormatError(path, None, f"{key}: NaN or infinite value at frame {f}, column {c}")
    return poses


def _shape_and_path(path: Path, data: Mapping, n_f: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``trans (frames, 3)``, ``betas (n,)`` and ``expressions (frames, n)`` or ``None``, checked."""
    if "trans" in data:
        trans = np.asarray(data["trans"])
        if trans.dtype.kind not in "fiu" or trans.shape != (n_f, 3):
            raise FileFormatError(path, None, f"trans: expected shape ({n_f}, 3) (one root position per pose), found {trans.shape}")
        trans = trans.astype(np.float64)
        if not np.all(np.isfinite(trans)):
            f = int(np.argwhere(~np.isfinite(trans))[0][0])
            raise FileFormatError(path, None, f"trans: NaN or infinite value at frame {f}")
    else:
        raise FileFormatError(path, None, f"missing key 'trans' (frames, 3) root translation, metres; found keys: "
                                          f"{', '.join(data['__keys__'])}")
    betas = np.asarray(data["betas"]) if "betas" in data else np.zeros(0)
    if betas.dtype.kind not in "fiu":
        raise FileFormatError(path, None, f"betas: expected shape coefficients (numbers), found {betas.dtype}")
    betas = betas.astype(np.float64).ravel()
    if betas.size and not np.all(np.isfinite(betas)):
        raise FileFormatError(path, None, "betas: NaN or infinite value")
    expressions = None
    if "expressions" in data:
        expressions = np.asarray(data["expressions"])
        if expressions.ndim != 2 or len(expressions) != n_f or expressions.dtype.kind not in "fiu":
            raise FileFormatError(path, None, f"expressions: expected ({n_f}, coefficients), found {expressions.shape}")
        if not np.all(np.isfinite(expressions)):
            raise FileFormatError(path, None, "expressions: NaN or infinite value")
    return trans, betas, expressions


def read_smpl_params(
    path: str | os.PathLike,
    units: str | float = "auto",
    up: str = "auto",
    fps: float | None = None,
    body_model: str | os.PathLike | BodyModel | None = None,
    allow_pickle: bool = False,
    roles: Mapping[str, str] | None = None,
    data: bytes | None = None,
) -> Motion:
    """Read an AMASS-style or BEAT2/EMAGE-style SMPL-family ``.npz`` into a :class:`Motion`.

    Args:
        path: the ``.npz`` with ``poses (frames, 3·joints)`` (or AMASS's ``root_orient``,
            ``pose_body``, ...), ``trans (frames, 3)``, optional ``betas``, ``expressions``,
            ``gender``, ``mocap_frame_rate`` / ``mocap_framerate``, ``surface_model_type``.
        units: metres unless overridden (SMPL-family models are metric).
        up: ``"auto"`` (detected from head vs feet), or ``"y"``, ``"z"`` ...
        fps: frame rate if the file carries none.
        body_model: the official model file (``.npz``/``.pkl``) or a :class:`BodyModel`; without
            one the default adult skeleton is used and a warning says so.
        roles: a role map (``--roles``) on top of the topology's roles by index.
        data: the file's bytes, when already read (``path`` then only names it).

    Returns:
        The clip in metres, Y-up, on the topology of the pose vector (SMPL 24, SMPL-H 52,
        SMPL-X 55 joints); ``meta`` records betas, gender, model type and the skeleton source.
    """
    from evalkit.motion.normalize import normalize_motion

    path = Path(path)
    data = npz_arrays(path, PARAM_KEYS, data)
    poses = _poses(path, data)
    n_f = len(poses)
    n_j = poses.shape[1] // 3
    key = topo.BY_JOINT_COUNT[n_j]
    rate, rate_key = _frame_rate(path, data, fps)
    trans, betas, expressions = _shape_and_path(path, data, n_f)
    gender = _text(data["gender"]) if "gender" in data else ""
    model_type = _text(data["surface_model_type"]) if "surface_model_type" in data else (
        _text(data["model"]) if "model" in data else "")

    names, parents = topo.TOPOLOGIES[key]
    meta = {"source": str(path), "format": "smpl-params", "topology": key, "fps_key": rate_key,
            "betas": betas.tolist(), "gender": gender, "surface_model_type": model_type,
            "style": "beat2" if expressions is not None else "amass"}
    if body_model is not None:
        model = body_model if isinstance(body_model, BodyModel) else load_body_model(body_model, allow_pickle)
        if model.n_joints != n_j or not np.array_equal(model.parents, np.array(parents)):
            raise InputError(f"{path}: the pose vector has {n_j} joints ({key}) but the body model "
                             f"{model.source} has {model.n_joints} joints with another hierarchy; "
                             "give the matching model (SMPL 24, SMPL-H 52, SMPL-X 55 joints)")
        rest = model.rest_joints(betas, expressions)
        meta["skeleton"] = f"body model {model.source}"
    else:
        rest = topo.default_rest_joints(key)
        meta["skeleton"] = "evalkit default adult skeleton (no --body-model)"
        warnings.warn_explicit(
            f"{path}: no --body-model given: joint positions use evalkit's default adult skeleton "
            f"({key}, bone lengths measured from CMU capture), not this clip's own body shape (betas); "
            "pass --body-model with the official model file for exact joints",
            UserWarning, str(path), 0)
    motion = params_to_motion(poses.reshape(n_f, n_j, 3), trans, rest, key, rate, name=path.stem, meta=meta)
    unit = "m" if units == "auto" else units
    merged = {**{r: names[i] for r, i in topo.ROLE_INDEX[key].items()}, **dict(roles or {})}
    from evalkit.motion.fit import with_positions

    return with_positions(normalize_motion(motion, units=unit, up=up, roles=merged))


def params_to_motion(axis_angle: np.ndarray, trans: np.ndarray, rest_joints: np.ndarray, topology: str,
                     fps: float, name: str = "", meta: Mapping | None = None) -> Motion:
    """A :class:`Motion` (in the file's frame) from ``axis_angle (frames, joints, 3)`` radians,
    ``trans (frames, 3)`` metres and rest joints ``(joints, 3)`` or ``(frames, joints, 3)``."""
    key = topo.resolve(topology)
    names, parents = topo.TOPOLOGIES[key]
    # build the clip with its joints depth-first (evalkit's order) straight away
    order = topo.depth_first(parents)
    new_index = np.empty_like(order)
    new_index[order] = np.arange(len(order))
    names = tuple(names[o] for o in order)
    parents_a = np.array([new_index[parents[o]] if parents[o] >= 0 else -1 for o in order])
    axis_angle = axis_angle[:, order]
    n_f, n_j = axis_angle.shape[:2]
    rot = Rotation.from_rotvec(axis_angle.reshape(-1, 3)).as_quat().reshape(n_f, n_j, 4)
    rest = np.asarray(rest_joints, dtype=np.float64)[..., order, :]
    per_frame = rest.ndim == 3
    rest0 = rest[0] if per_frame else rest
    pidx = np.maximum(parents_a, 0)
    offsets = rest0 - rest0[pidx]
    offsets[0] = rest0[0]
    if per_frame:
        tr = rest - rest[:, pidx]
        tr[:, 0] = rest[:, 0] + trans
        moving = np.ptp(tr[:, 1:], axis=0).max(axis=-1) > 1e-9
    else:
        tr = np.broadcast_to(offsets, (n_f, n_j, 3)).copy()
        tr[:, 0] = trans + rest0[0]
        moving = np.zeros(n_j - 1, dtype=bool)
    channels = [_POS_CH + _ROT_CH] + [(_POS_CH + _ROT_CH) if m else _ROT_CH for m in moving]
    sk = Skeleton(names=names, parents=parents_a, offsets=offsets, channels=channels)
    return Motion(sk, float(fps), rot, tr, name=name, meta=dict(meta or {}))


# -- retargeting and writing -------------------------------------------------------------------
def _along(points: np.ndarray, fractions) -> np.ndarray:
    """Points at arc-length ``fractions`` along polylines ``points (frames, k, 3)``."""
    seg = np.linalg.norm(np.diff(points, axis=1), axis=-1)  # (frames, k-1)
    cum = np.concatenate([np.zeros((len(points), 1)), np.cumsum(seg, axis=1)], axis=1)
    total = np.maximum(cum[:, -1:], 1e-12)
    out = []
    for f in fractions:
        target = f * total[:, 0]
        i = np.clip((cum < target[:, None]).sum(axis=1) - 1, 0, points.shape[1] - 2)
        a = points[np.arange(len(points)), i]
        b = points[np.arange(len(points)), i + 1]
        s = seg[np.arange(len(points)), i]
        w = np.where(s > 1e-12, (target - cum[np.arange(len(points)), i]) / np.maximum(s, 1e-12), 0.0)
        out.append(a + (b - a) * np.clip(w, 0, 1)[:, None])
    return np.stack(out, axis=1)


def retarget_positions(motion: Motion, topology: str = "smpl24", roles: Mapping[str, str] | None = None) -> np.ndarray:
    """World positions ``(frames, joints, 3)`` of an SMPL-topology body (22 or 24 joints) on any
    clip, from its joint roles: pelvis, hips, knees, ankles, feet (toes), shoulders, elbows,
    wrists, neck and head are the clip's own joints; ``spine1..3`` lie on the clip's spine chain
    from the hips to the neck at the default skeleton's proportions, collars a third of the way
    from ``spine3`` to the shoulders, hands at the wrist's first child (or 0.097 m along the
    forearm). Metres, Y-up, as the clip."""
    from evalkit.motion.roles import find_roles

    key = topo.resolve(topology)
    if key not in ("smpl22", "smpl24"):
        raise InputError(f"retarget_positions gives the 22- or 24-joint body, not {key}")
    names = topo.TOPOLOGIES[key][0]
    sk = motion.skeleton
    r = find_roles(sk, overrides=roles)
    pos = motion.positions
    out = np.zeros((motion.n_frames, len(names), 3))
    direct = {"pelvis": "hips", "neck": "neck", "head": "head"}
    for s in ("left", "right"):
        for j, role in (("hip", "hip"), ("knee", "knee"), ("ankle", "ankle"), ("foot", "toe"),
                        ("shoulder", "shoulder"), ("elbow", "elbow"), ("wrist", "wrist")):
            direct[f"{s}_{j}"] = f"{s}_{role}"
    for j, role in direct.items():
        out[:, names.index(j)] = pos[:, r[role]]
    chain = [r["neck"]]
    while chain[-1] != r["hips"] and sk.parents[chain[-1]] >= 0:
        chain.append(int(sk.parents[chain[-1]]))
    chain = chain[::-1]
    if chain[0] != r["hips"] or len(chain) < 2:
        chain = [r["hips"], r["neck"]]
    lens = topo._L
    total = lens["spine1"] + lens["spine2"] + lens["spine3"] + lens["lower_neck"]
    fr = np.cumsum([lens["spine1"], lens["spine2"], lens["spine3"]]) / total
    spine = _along(pos[:, chain], fr)
    for k, j in enumerate(("spine1", "spine2", "spine3")):
        out[:, names.index(j)] = spine[:, k]
    s3 = out[:, names.index("spine3")]
    for s in ("left", "right"):
        sh = out[:, names.index(f"{s}_shoulder")]
        out[:, names.index(f"{s}_collar")] = s3 + (sh - s3) / 3.0
        if key == "smpl24":
            w = r[f"{s}_wrist"]
            kids = [c for c in sk.children(w) if np.linalg.norm(sk.offsets[c]) > 1e-4]
            if kids:
                out[:, names.index(f"{s}_hand")] = pos[:, kids[0]]
            else:
                fore = pos[:, w] - pos[:, r[f"{s}_elbow"]]
                fore /= np.maximum(np.linalg.norm(fore, axis=-1, keepdims=True), 1e-9)
                out[:, names.index(f"{s}_hand")] = pos[:, w] + fore * lens["hand"]
    return out


def to_smpl(motion: Motion, topology: str = "smplx55", roles: Mapping[str, str] | None = None,
            rest_joints: np.ndarray | None = None) -> Motion:
    """The clip retargeted onto an SMPL-family skeleton (default adult skeleton unless
    ``rest_joints (joints, 3)`` are given): body joint rotations fitted to
    :func:`retarget_positions`, fingers flat, jaw and eyes at rest. A clip already on the
    topology is returned as it is."""
    from evalkit.motion.fit import fit_rotations, reorder_depth_first

    key = topo.resolve(topology)
    names, parents = topo.TOPOLOGIES[key]
    if topo.topology_of(motion.skeleton.names) == key and rest_joints is None:
        return motion
    body = "smpl22" if key == "smpl22" else "smpl24"
    bnames, bparents = topo.TOPOLOGIES[body]
    pos = retarget_positions(motion, body, roles)
    rest = topo.default_rest_joints(key) if rest_joints is None else np.asarray(rest_joints, dtype=np.float64)
    parents_a = np.array(parents)
    offsets = rest - np.where(parents_a[:, None] >= 0, rest[np.maximum(parents_a, 0)], 0.0)
    offsets[0] = rest[0]
    # fit the body on rest directions of the target (the hand joint continues the forearm)
    body_off = np.array([offsets[names.index(n)] if n in names else topo.default_offsets(body)[i]
                         for i, n in enumerate(bnames)])
    rot_b, _ = fit_rotations(pos, bparents, body_off)
    rot = np.zeros((motion.n_frames, len(names), 4))
    rot[..., 3] = 1.0
    for i, n in enumerate(bnames):
        if n in names:
            rot[:, names.index(n)] = rot_b[:, i]
    tr = np.broadcast_to(offsets, (motion.n_frames, len(names), 3)).copy()
    tr[:, 0] = pos[:, 0]
    channels = [_POS_CH + _ROT_CH] + [_ROT_CH] * (len(names) - 1)
    sk = Skeleton(names=names, parents=parents_a, offsets=offsets, channels=channels)
    meta = {**dict(motion.meta), "retargeted_to": key}
    return reorder_depth_first(Motion(sk, motion.fps, rot, tr, name=motion.name, meta=meta))


def joint_positions(motion: Motion) -> np.ndarray:
    """``(frames, joints, 3)`` world positions (metres, Y-up) of a clip on an SMPL-family or
    HumanML3D skeleton, in the official joint order (evalkit keeps joints depth-first)."""
    key = topo.topology_of(motion.skeleton.names)
    if key is None:
        raise InputError("joint_positions needs a clip on an SMPL-family or HumanML3D skeleton")
    return motion.positions[:, [motion.skeleton.index(n) for n in topo.TOPOLOGIES[key][0]]]


#: rotation taking evalkit's Y-up world to AMASS's Z-up (+90 degrees about X)
Y_TO_Z = Rotation.from_euler("x", 90, degrees=True)


def smpl_arrays(motion: Motion, style: str = "amass", rest_joints: np.ndarray | None = None) -> dict:
    """Arrays of a parameter file for a clip on an SMPL-family skeleton (see :func:`to_smpl`):
    ``poses (frames, 3·joints)`` axis-angle, ``trans (frames, 3)`` (``pelvis - rest pelvis``),
    ``betas``, ``gender``, frame rate; AMASS style is Z-up, BEAT2 style Y-up with
    ``expressions``."""
    key = topo.topology_of(motion.skeleton.names)
    if key is None:
        raise InputError("smpl_arrays needs a clip on an SMPL-family skeleton; retarget it with to_smpl first")
    rest = topo.default_rest_joints(key) if rest_joints is None else np.asarray(rest_joints)
    order = [motion.skeleton.index(n) for n in topo.TOPOLOGIES[key][0]]  # official joint order
    q = motion.rotations[:, order].copy()
    root = motion.translations[:, order[0]].copy()
    if style == "amass":
        q[:, 0] = (Y_TO_Z * Rotation.from_quat(q[:, 0])).as_quat()
        root = Y_TO_Z.apply(root)
    elif style != "beat2":
        raise InputError(f"unknown parameter-file style {style!r}; use amass or beat2")
    poses = Rotation.from_quat(q.reshape(-1, 4)).as_rotvec().reshape(motion.n_frames, -1)
    out = {"poses": poses.astype(np.float32), "trans": (root - rest[0]).astype(np.float32),
           "gender": np.array("neutral")}
    if style == "amass":
        out.update(betas=np.zeros(16), mocap_framerate=np.array(float(motion.fps)),
                   surface_model_type=np.array({"smplx55": "smplx", "smplh52": "smplh"}.get(key, "smpl")))
    else:
        out.update(betas=np.zeros(300), expressions=np.zeros((motion.n_frames, 100), dtype=np.float32),
                   mocap_frame_rate=np.array(float(motion.fps)), model=np.array("smplx2020"))
    return out
