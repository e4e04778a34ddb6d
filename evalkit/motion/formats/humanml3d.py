"""HumanML3D joints and 263-dim feature vectors, and MDM-style ``results.npy`` files.

* **Joints** (HumanML3D's ``new_joints``): ``(frames, 22, 3)`` world positions of the first 22
  SMPL joints, metres, Y-up, 20 fps.
* **Features** (``new_joint_vecs``): ``(frames, 263)`` per frame — root rotation velocity about Y
  (1, the half-angle change to the next frame, radians), root linear velocity in the root's
  facing frame (2: x, z, to the next frame, metres), root height (1), the 21 other joints relative
  to the root in the facing frame (63), joint rotations as 6-D vectors (126), local joint
  velocities (66) and four foot contacts (4). Joints are recovered as the public definition
  (``recover_from_ric`` of the HumanML3D code) does: integrate the rotation velocity from a first
  frame facing +Z, rotate the root velocity back to the world and integrate it from the origin,
  take the root height, and rotate the root-relative positions back. The 126 rotation and 66
  velocity columns are not needed for joints and are not read. Features must be un-normalised
  (multiply by the data set's ``Std`` and add its ``Mean`` first); a clip whose root height is
  implausible gets a warning saying so.
* **MDM results**: ``np.save`` of a dict with ``motion (N, 22, 3, T)`` joint positions, ``text``
  (N prompts) and ``lengths`` (N frame counts). Sample ``i`` is ``motion[i]`` trimmed to
  ``lengths[i]`` frames, named ``<stem>#<i>``, its prompt kept as ``meta["text"]`` (and as the
  ``text`` column of ``evalkit score``). The dict is read with the restricted unpickler of
  :mod:`evalkit.motion.formats.safepickle` (plain data only); ``--allow-pickle`` trusts the file instead.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path

import numpy as np

from evalkit.errors import FileFormatError
from evalkit.motion import quat

FPS = 20.0
N_JOINTS = 22
N_FEATURES = 4 + (N_JOINTS - 1) * 3 + (N_JOINTS - 1) * 6 + N_JOINTS * 3 + 4  # 263
#: (right hip, left hip, right shoulder, left shoulder): the facing direction, as HumanML3D
FACE_JOINTS = (2, 1, 17, 16)
FOOT_JOINTS = ((7, 10), (8, 11))  # (left ankle, left foot), (right ankle, right foot)


def _about_y(half_angle: np.ndarray) -> np.ndarray:
    """Quaternions (x, y, z, w) ``(cos a, 0, sin a, 0)`` in HumanML3D's (w, x, y, z) order:
    rotations about +Y by ``2 a``."""
    z = np.zeros_like(half_angle)
    return np.stack([z, np.sin(half_angle), z, np.cos(half_angle)], axis=-1)


def features_to_joints(features: np.ndarray) -> np.ndarray:
    """``(frames, 263)`` un-normalised HumanML3D features -> ``(frames, 22, 3)`` joints, metres."""
    f = np.asarray(features, dtype=np.float64)
    n = len(f)
    ang = np.zeros(n)
    ang[1:] = f[:-1, 0]
    ang = np.cumsum(ang)
    inv = quat.inverse(_about_y(ang))
    vel = np.zeros((n, 3))
    vel[1:, [0, 2]] = f[:-1, 1:3]
    root = np.cumsum(quat.rotate(inv, vel), axis=0)
    root[:, 1] = f[:, 3]
    ric = f[:, 4:4 + (N_JOINTS - 1) * 3].reshape(n, N_JOINTS - 1, 3)
    pos = quat.rotate(inv[:, None, :], ric)
    pos[..., 0] += root[:, None, 0]
    pos[..., 2] += root[:, None, 2]
    return np.concatenate([root[:, None], pos], axis=1)


def facing_half_angles(joints: np.ndarray) -> np.ndarray:
    """``(frames,)`` half the angle about +Y that turns each frame's facing direction (normal to
    the hips and shoulders, as HumanML3D) onto +Z, unwrapped over frames."""
    r_hip, l_hip, r_sh, l_sh = FACE_JOINTS
    across = (joints[:, r_hip] - joints[:, l_hip]) + (joints[:, r_sh] - joints[:, l_sh])
    fwd = np.cross(np.array([0.0, 1.0, 0.0]), across)
    heading = np.arctan2(fwd[:, 0], fwd[:, 2])  # angle of the facing direction from +Z towards +X
    return np.unwrap(-heading) / 2.0


def canonical(joints: np.ndarray) -> np.ndarray:
    """The clip turned about +Y and shifted on the ground so that its first frame faces +Z with the
    root above the origin (HumanML3D's starting pose; heights unchanged)."""
    j = np.asarray(joints, dtype=np.float64)
    a0 = facing_half_angles(j[:1])[0]
    q = _about_y(np.array(a0))
    out = quat.rotate(q, j - np.array([j[0, 0, 0], 0.0, j[0, 0, 2]]))
    return out


def joints_to_features(joints: np.ndarray, fps: float = FPS) -> np.ndarray:
    """``(frames, 22, 3)`` joints (metres, Y-up) -> ``(frames, 263)`` features, laid out as
    HumanML3D's, such that :func:`features_to_joints` gives back :func:`canonical` of the joints.
    The 6-D rotation columns are written as identity (a positions-only clip has no twist), the
    contacts from foot speed (< 0.05 m per frame at 20 fps); the last frame has zero velocities."""
    j = canonical(joints)
    n = len(j)
    ang = facing_half_angles(j)
    ang = ang - ang[0]
    q = _about_y(ang)
    root = j[:, 0]
    feats = np.zeros((n, N_FEATURES))
    feats[:-1, 0] = np.diff(ang)
    step = np.zeros((n, 3))
    step[1:] = root[1:] - root[:-1]
    loc = quat.rotate(q, step)  # step t-1 -> t in the facing frame of frame t
    feats[:-1, 1:3] = loc[1:, [0, 2]]
    feats[:, 3] = root[:, 1]
    rel = j[:, 1:] - np.stack([root[:, 0], np.zeros(n), root[:, 2]], axis=-1)[:, None]
    feats[:, 4:67] = quat.rotate(q[:, None], rel).reshape(n, -1)
    col = 67
    feats[:, col:col + 126] = np.tile([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], (n, N_JOINTS - 1))
    col += 126
    lv = np.zeros((n, N_JOINTS, 3))
    lv[:-1] = quat.rotate(q[:-1, None], j[1:] - j[:-1])
    feats[:, col:col + 66] = lv.reshape(n, -1)
    col += 66
    thresh = 0.05 * FPS / fps
    for k, (a, b) in enumerate(FOOT_JOINTS):
        for m, jj in enumerate((a, b)):
            sp = np.zeros(n)
            sp[:-1] = np.linalg.norm(j[1:, jj] - j[:-1, jj], axis=-1)
            feats[:, col + 2 * k + m] = (sp < thresh).astype(float)
    return feats


def check_features(path: Path, feats: np.ndarray) -> None:
    """Warn if the features look normalised (root height not that of a person)."""
    h = float(np.median(feats[:, 3]))
    if not (0.3 <= h <= 2.0):
        warnings.warn_explicit(
            f"{path}: the median root height of these HumanML3D features is {h:.2f} m; features "
            "must be un-normalised (x * Std + Mean of the data set) before they are read",
            UserWarning, str(path), 0)


# -- MDM results ---------------------------------------------------------------------------------
def read_results(path: str | os.PathLike, allow_pickle: bool = False, data: bytes | None = None) -> dict:
    """The validated content of an MDM-style ``results.npy``: ``{"clips": [(T_i, 22, 3) ...],
    "text": [...], "fps": 20.0}``. Errors name the file, the key and the shape found.

    Kept per file version (path, modification time, size) for the process, so scoring the N
    samples of one file reads it once; ``data``: the file's bytes, when already read."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise FileFormatError(path, None, f"cannot read ({exc.strerror})") from None
    key = (str(path), st.st_mtime_ns, st.st_size, bool(allow_pickle))
    if key not in _RESULTS:
        from evalkit.motion.formats.npz import read_file_bytes

        data = read_file_bytes(path) if data is None else data
        res = _read_results(path, allow_pickle, data)
        res["sha256"] = hashlib.sha256(data)  # of the file's bytes, for load_motion(digest=True)
        while len(_RESULTS) >= _RESULTS_KEPT:
            _RESULTS.pop(next(iter(_RESULTS)))
        _RESULTS[key] = res
    return _RESULTS[key]


def results_kept(path: str | os.PathLike, allow_pickle: bool = False) -> bool:
    """Whether this version of the results file ``path`` is already in memory (read once)."""
    try:
        st = Path(path).stat()
    except OSError:
        return False
    return (str(path), st.st_mtime_ns, st.st_size, bool(allow_pickle)) in _RESULTS


#: Results files kept in memory per process (the last two read), by version.
_RESULTS_KEPT = 2
_RESULTS: dict = {}


def _read_results(path: Path, allow_pickle: bool, data: bytes | None) -> dict:
    from evalkit.motion.formats.safepickle import read_object_npy

    obj = read_object_npy(path, allow_pickle, data)
    if not isinstance(obj, dict):
        raise FileFormatError(path, None, f"expected a dict with 'motion', 'text', 'lengths' (MDM results), "
                                          f"found {type(obj).__name__}")
    if "motion" not in obj:
        raise FileFormatError(path, None, f"missing key 'motion' (N, 22, 3, frames); found keys: "
                                          f"{', '.join(map(str, obj))}")
    motion = obj["motion"]
    if not isinstance(motion, np.ndarray) or motion.dtype.kind not in "fiu" or motion.ndim != 4 \
            or motion.shape[1:3] != (N_JOINTS, 3) or motion.shape[0] == 0 or motion.shape[3] == 0:
        shape = getattr(motion, "shape", type(motion).__name__)
        raise FileFormatError(path, None, f"motion: expected a numeric array (samples, 22, 3, frames), found {shape}")
    n, t = motion.shape[0], motion.shape[3]
    lengths = obj.get("lengths")
    if lengths is None:
        lengths = np.full(n, t)
    lengths = np.asarray(lengths)
    if lengths.shape != (n,) or lengths.dtype.kind not in "iuf" or not np.all(np.isfinite(lengths)):
        raise FileFormatError(path, None, f"lengths: expected {n} frame counts, found {lengths.shape} {lengths.dtype}")
    if np.any(lengths < 1) or np.any(lengths > t) or np.any(lengths != np.round(lengths)):
        raise FileFormatError(path, None, f"lengths: expected whole frame counts from 1 to {t}, found "
                                          f"{lengths.min():g}..{lengths.max():g}")
    text = obj.get("text", [""] * n)
    if isinstance(text, np.ndarray):
        text = text.tolist()
    if not isinstance(text, (list, tuple)) or len(text) != n:
        raise FileFormatError(path, None, f"text: expected {n} prompts, found {len(text) if hasattr(text, '__len__') else type(text).__name__}")
    text = [t_.decode("utf-8", "replace") if isinstance(t_, bytes) else str(t_) for t_ in text]
    clips = [np.moveaxis(motion[i, :, :, : int(lengths[i])], 2, 0) for i in range(n)]
    return {"clips": clips, "text": text, "fps": FPS}


# -- readers (the dispatcher picks them by the file's content) ----------------------------------
def read_features(path: str | os.PathLike, arr: np.ndarray, units="auto", up="auto", fps: float | None = None,
                  roles=None):
    """``(frames, 263)`` HumanML3D features ``arr`` read from ``path`` into a :class:`Motion`
    (joints recovered by :func:`features_to_joints`, rotations fitted; 20 fps unless ``fps``)."""
    from evalkit.motion.formats.arrays import frame_rate, positions_to_motion, preset

    path = Path(path)
    feats = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(feats)):
        f, c = np.argwhere(~np.isfinite(feats))[0]
        raise FileFormatError(path, None, f"NaN or infinite value at frame {f}, column {c}")
    if len(feats) < 2:
        raise FileFormatError(path, None, f"expected at least 2 frames, found shape {arr.shape}")
    check_features(path, feats)
    return positions_to_motion(path, features_to_joints(feats), preset("smpl22"), frame_rate(path, None, fps, FPS),
                               units, up, roles, meta={"format": "humanml3d-features"})


def read_results_clip(path: str | os.PathLike, clip: int | None = None, units="auto", up="auto",
                      fps: float | None = None, skeleton=None, roles=None, allow_pickle: bool = False,
                      data: bytes | None = None, digest: bool = False):
    """Sample ``clip`` of an MDM ``results.npy`` (the first, with a warning, when ``None`` and the
    file holds several) as a :class:`Motion` named ``<stem>#<clip>`` with its prompt in ``meta``
    (``data``: the file's bytes, when already read; ``digest``: ``meta["sha256"]`` as
    :func:`~evalkit.motion.formats.file_digest` gives it for the name read)."""
    from evalkit.errors import InputError
    from evalkit.motion.formats.arrays import frame_rate, positions_to_motion, skeleton_for

    path = Path(path)
    res = read_results(path, allow_pickle, data)
    n = len(res["clips"])
    named = clip is not None
    if clip is None:
        if n > 1:
            warnings.warn_explicit(f"{path}: holds {n} clips; reading the first (name another as "
                                   f"{path.stem}#<i>{path.suffix})", UserWarning, str(path), 0)
        clip = 0
    if not 0 <= clip < n:
        raise InputError(f"{path}: has clips 0 to {n - 1}, no clip {clip}")
    spec = skeleton_for(path, N_JOINTS, skeleton)
    return positions_to_motion(path, np.asarray(res["clips"][clip], dtype=np.float64), spec,
                               frame_rate(path, None, fps, res["fps"]), units, up, roles,
                               name=f"{path.stem}#{clip}",
                               meta={"source": str(path.with_name(f"{path.stem}#{clip}{path.suffix}")),
                                     "file": str(path), "format": "mdm-results", "clip_index": clip,
                                     "text": res["text"][clip], "table_columns": {"text": res["text"][clip]},
                                     **({"sha256": _clip_digest(res, clip, named)} if digest else {})})


def _clip_digest(res: dict, clip: int, named: bool) -> str:
    """SHA-256 of the results file's bytes (and, for a sample named ``results#3.npy``, ``#3``)."""
    h = res["sha256"].copy()
    if named:
        h.update(f"#{clip}".encode())
    return h.hexdigest()
