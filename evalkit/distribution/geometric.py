"""Geometric (relational) features of Müller, Röder & Clausen 2005, as AIST++ uses them for FID_g.

Müller et al. describe a pose by boolean relations between joints -- is the right hand in front
of the body plane, is the left foot raised, is the knee bent, is the hand moving fast -- with
thresholds in units of the body's own humerus length (``hl``), shoulder width (``sw``) and hip
width (``hw``). AIST++ (Li et al. 2021) evaluates dance with 32 of them, averaged over the frames
of a clip (so each feature is the fraction of frames in which the relation holds); FID_g and
Div_g are computed on these 32-vectors. The 32 relations and thresholds below are the AIST++ set,
restated from the published definitions, on the canonical joint set (:mod:`.windows`):

=========  =================================================================================
kind       relation (true when ...)
=========  =================================================================================
plane      ``j4`` lies more than θ in front of the plane through ``j1, j2, j3`` (normal
           ``(j3 − j1) × (j2 − j1)``)
nplane     ``j4`` lies more than θ beyond the plane with normal ``j2 − j1`` through ``j3``
move       the velocity of ``j4`` relative to ``j1`` along ``j2 − j1`` exceeds θ per second
nmove      the velocity of ``j4`` relative to ``j1`` along the normal of plane ``(j1, j2, j3)``
           exceeds θ per second
angle      the angle between ``j2 − j1`` and ``j4 − j3`` lies strictly inside (lo, hi) degrees
fast       the speed of ``j1`` exceeds θ per second
=========  =================================================================================

Where this differs from the widely copied public code, and why:

* ``move``: Müller's definition moves ``j4``; the public code passes ``j3`` as the moving point
  (its ``f_move`` forwards ``j3, j3_prev``), so e.g. "right hand moves up" measures the chest.
  We follow the paper.
* Velocities use the clip's real frame time (the protocol's frame rate); the public code divides
  by a default of 1/120 s while AIST++ data is 60 fps, doubling every speed.
* ``hl``, ``sw`` and ``hw`` are measured on each clip's own body (median over frames), as in
  Müller et al.; the public code uses constants of the SMPL template (0.256, 0.391, 0.119 m).
* Joint set: the 18 canonical roles. SMPL's ``root`` is our hips, ``belly`` our spine role and
  ``chest`` the midpoint of the spine and neck roles (SMPL has three spine joints, most rigs
  fewer). The frame rate is the protocol's (30 fps by default; AIST++ used 60 fps).
"""

from __future__ import annotations

import numpy as np

from evalkit.distribution.canonical import IDX

#: Number of geometric features.
N_FEATURES = 32

# (kind, joints, threshold as (unit, factor) or angle range); joint names as in AIST++'s list,
# mapped in _points(); "zero", "y_unit", "minus_y_unit", "y_min" are virtual points.
FEATURES: tuple[tuple, ...] = (
    ("nmove", ("neck", "rhip", "lhip", "rwrist"), ("hl", 1.8)),
    ("nmove", ("neck", "lhip", "rhip", "lwrist"), ("hl", 1.8)),
    ("nplane", ("chest", "neck", "neck", "rwrist"), ("hl", 0.2)),
    ("nplane", ("chest", "neck", "neck", "lwrist"), ("hl", 0.2)),
    ("move", ("belly", "chest", "chest", "rwrist"), ("hl", 1.8)),
    ("move", ("belly", "chest", "chest", "lwrist"), ("hl", 1.8)),
    ("angle", ("relbow", "rshoulder", "relbow", "rwrist"), (0, 110)),
    ("angle", ("lelbow", "lshoulder", "lelbow", "lwrist"), (0, 110)),
    ("nplane", ("lshoulder", "rshoulder", "lwrist", "rwrist"), ("sw", 2.5)),
    ("move", ("lwrist", "rwrist", "rwrist", "lwrist"), ("hl", 1.4)),
    ("move", ("rwrist", "root", "lwrist", "root"), ("hl", 1.4)),
    ("move", ("lwrist", "root", "rwrist", "root"), ("hl", 1.4)),
    ("fast", ("rwrist",), ("hl", 2.5)),
    ("fast", ("lwrist",), ("hl", 2.5)),
    ("plane", ("root", "lhip", "ltoes", "rankle"), ("hl", 0.38)),
    ("plane", ("root", "rhip", "rtoes", "lankle"), ("hl", 0.38)),
    ("nplane", ("zero", "y_unit", "y_min", "rankle"), ("hl", 1.2)),
    ("nplane", ("zero", "y_unit", "y_min", "lankle"), ("hl", 1.2)),
    ("nplane", ("lhip", "rhip", "lankle", "rankle"), ("hw", 2.1)),
    ("angle", ("rknee", "rhip", "rknee", "rankle"), (0, 110)),
    ("angle", ("lknee", "lhip", "lknee", "lankle"), (0, 110)),
    ("fast", ("rankle",), ("hl", 2.5)),
    ("fast", ("lankle",), ("hl", 2.5)),
    ("angle", ("neck", "root", "rshoulder", "relbow"), (25, 180)),
    ("angle", ("neck", "root", "lshoulder", "lelbow"), (25, 180)),
    ("angle", ("neck", "root", "rhip", "rknee"), (50, 180)),
    ("angle", ("neck", "root", "lhip", "lknee"), (50, 180)),
    ("plane", ("rankle", "neck", "lankle", "root"), ("hl", 0.5)),
    ("angle", ("neck", "root", "zero", "y_unit"), (70, 110)),
    ("nplane", ("zero", "minus_y_unit", "y_min", "rwrist"), ("hl", -1.2)),
    ("nplane", ("zero", "minus_y_unit", "y_min", "lwrist"), ("hl", -1.2)),
    ("fast", ("root",), ("hl", 2.3)),
)

_NAMES = {
    "root": "hips", "belly": "spine", "neck": "neck", "head": "head",
    "lhip": "left_hip", "rhip": "right_hip", "lknee": "left_knee", "rknee": "right_knee",
    "lankle": "left_ankle", "rankle": "right_ankle", "ltoes": "left_toe", "rtoes": "right_toe",
    "lshoulder": "left_shoulder", "rshoulder": "right_shoulder", "lelbow": "left_elbow",
    "relbow": "right_elbow", "lwrist": "left_wrist", "rwrist": "right_wrist",
}


def body_units(pos: np.ndarray) -> dict[str, float]:
    """Humerus length, shoulder width and hip width (metres), medians over frames."""
    def dist(a, b):
        return float(np.median(np.linalg.norm(pos[:, IDX[a]] - pos[:, IDX[b]], axis=-1)))

    hl = 0.5 * (dist("left_shoulder", "left_elbow") + dist("right_shoulder", "right_elbow"))
    return {"hl": hl, "sw": dist("left_shoulder", "right_shoulder"), "hw": dist("left_hip", "right_hip")}


def _points(pos: np.ndarray) -> dict[str, np.ndarray]:
    n = pos.shape[0]
    pts = {k: pos[:, IDX[v]] for k, v in _NAMES.items()}
    pts["chest"] = 0.5 * (pos[:, IDX["spine"]] + pos[:, IDX["neck"]])
    pts["zero"] = np.zeros((n, 3))
    pts["y_unit"] = np.tile([0.0, 1.0, 0.0], (n, 1))
    pts["minus_y_unit"] = np.tile([0.0, -1.0, 0.0], (n, 1))
    ymin = np.zeros((n, 3))
    ymin[:, 1] = pos[..., 1].min(axis=1)
    pts["y_min"] = ymin
    return pts


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.divide(v, n, out=np.zeros_like(v), where=n > 0)


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1)


def geometric_features(pos: np.ndarray, fps: float) -> np.ndarray:
    """The 32 AIST++ relational features of a clip (fractions of frames ``1 … n−1``).

    Args:
        pos: ``(frames, 18, 3)`` canonical positions, metres, Y-up.
        fps: frame rate, frames per second.

    Returns:
        ``(32,)`` values in [0, 1]; NaN if the clip has fewer than 2 frames.
    """
    pos = np.asarray(pos, float)
    if pos.shape[0] < 2:
        return np.full(N_FEATURES, np.nan)
    units = body_units(pos)
    p = _points(pos)
    cur = {k: v[1:] for k, v in p.items()}
    prev = {k: v[:-1] for k, v in p.items()}
    out = np.empty((pos.shape[0] - 1, N_FEATURES))
    for i, (kind, j, th) in enumerate(FEATURES):
        if kind == "angle":
            u = _unit(cur[j[1]] - cur[j[0]])
            v = _unit(cur[j[3]] - cur[j[2]])
            ang = np.degrees(np.arccos(np.clip(_dot(u, v), -1.0, 1.0)))
            out[:, i] = (ang > th[0]) & (ang < th[1])
            continue
        thr = units[th[0]] * th[1]
        if kind == "fast":
            speed = np.linalg.norm(cur[j[0]] - prev[j[0]], axis=-1) * fps
            out[:, i] = speed > thr
        elif kind == "plane":
            n = _unit(np.cross(cur[j[2]] - cur[j[0]], cur[j[1]] - cur[j[0]]))
            out[:, i] = _dot(n, cur[j[3]] - cur[j[0]]) > thr
        elif kind == "nplane":
            n = _unit(cur[j[1]] - cur[j[0]])
            out[:, i] = _dot(n, cur[j[3]] - cur[j[2]]) > thr
        else:  # move / nmove: velocity of j4 relative to j1
            rel_v = ((cur[j[3]] - cur[j[0]]) - (prev[j[3]] - prev[j[0]])) * fps
            if kind == "move":
                d = _unit(cur[j[1]] - cur[j[0]])
            else:
                d = _unit(np.cross(cur[j[2]] - cur[j[0]], cur[j[1]] - cur[j[0]]))
            out[:, i] = _dot(rel_v, d) > thr
    return out.mean(axis=0)
