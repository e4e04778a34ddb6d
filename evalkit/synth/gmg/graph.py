"""The gesture motion graph (GMG, thesis ch. 4): GPs as nodes, E1 and E2 edges, largest SCC.

* **Posture distance** between the last frame of GP ``a`` and the first frame of GP ``b``:
  the weighted root-mean-square of the angles (radians) between the two postures' local joint
  rotations, ``sqrt(sum_j w_j theta_j^2 / sum_j w_j)``, ``theta_j = 2 arccos |<q_a,j, q_b,j>|``.
  Local rotations make the distance independent of where the body stands and faces. The thesis'
  weights (Fig. 4.9, :func:`gmg_joint_weights` ``"thesis"``) put 1 on the spine joints, the neck,
  the upper arms and the forearms and 0 elsewhere. (The thesis does not give the formula of its
  distance; with this one its threshold range 0.3-1.0 spans from a sparse to a dense graph on
  real gesture capture, see docs/gmg.md.)
* **E1** edges join consecutive GPs of a recording (always kept; ``contiguous`` when the second
  starts on the frame where the first ends, so the original motion plays through).
* **E2** edges join GPs ``a -> b`` (``a != b``) whose posture distance is below the similarity
  threshold.
* The graph is reduced to its **largest strongly connected component** (SCC) so that a walk can
  always continue; statistics per threshold follow the thesis' Table 4.2 (size, branching factor
  = edges / nodes, SCC size, SCC branching factor).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.motion import Skeleton, find_roles
from evalkit.synth.gmg.db import GestureDatabase
from evalkit.synth.graph import Graph

#: Default similarity threshold (weighted RMS joint angle, radians): the middle of the thesis'
#: range 0.3-1.0 (see docs/gmg.md for the statistics on real gesture capture).
DEFAULT_THRESHOLD = 0.6
#: Thresholds of the statistics table (the thesis' Table 4.2 range).
TABLE_THRESHOLDS = tuple(np.round(np.arange(0.3, 1.0001, 0.1), 2))


def gmg_joint_weights(skeleton: Skeleton, spec: str | Mapping[str, float] = "thesis", roles: Mapping[str, int] | None = None) -> np.ndarray:
    """``(joints,)`` posture-distance weights.

    Args:
        skeleton: the rig.
        spec: ``"thesis"`` (default): 1 on the spine joints (every joint on the chain from the
            hips, exclusive, to the neck, inclusive), the upper arms (roles ``left_shoulder``,
            ``right_shoulder``) and the forearms (``left_elbow``, ``right_elbow``), 0 elsewhere;
            ``"all"``: 1 on every joint but the root; or ``{joint name: weight}``.
        roles: precomputed joint roles.

    Raises:
        RolesNotFoundError / InputError: a needed role is missing, a name is unknown, all zero.
    """
    n = skeleton.n_joints
    if isinstance(spec, Mapping):
        w = np.zeros(n)
        for name, value in spec.items():
            if not value >= 0:
                raise InputError(f"joint weight of {name!r} must be >= 0, got {value}")
            w[skeleton.index(name)] = float(value)
    elif spec == "all":
        w = np.ones(n)
        w[0] = 0.0
    elif spec == "thesis":
        from evalkit.errors import RolesNotFoundError

        r = dict(roles) if roles is not None else find_roles(skeleton, strict=False)
        need = ("hips", "neck", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow")
        missing = [k for k in need if k not in r]
        if missing:
            raise RolesNotFoundError(f"posture weights need the roles {', '.join(missing)}; map them with --roles or give weights by joint name")
        w = np.zeros(n)
        j = r["neck"]
        while j >= 0 and j != r["hips"]:
            w[j] = 1.0
            j = int(skeleton.parents[j])
        if j != r["hips"]:
            raise RolesNotFoundError("the neck is not below the hips in the skeleton")
        for k in need[2:]:
            w[r[k]] = 1.0
    else:
        raise InputError(f"unknown weight scheme {spec!r}; use 'thesis', 'all' or a mapping of joint names")
    if not np.any(w > 0):
        raise InputError("posture weights are all zero")
    return w


def posture_distance(rot_a: np.ndarray, rot_b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted RMS joint angle between postures, radians.

    Args:
        rot_a: ``(m, joints, 4)`` local rotations (unit quaternions); rot_b: ``(n, joints, 4)``.
        weights: ``(joints,)`` non-negative.

    Returns:
        ``(m, n)`` distances.
    """
    w = np.asarray(weights, dtype=float)
    keep = w > 0
    a = np.asarray(rot_a, dtype=float)[:, keep]
    b = np.asarray(rot_b, dtype=float)[:, keep]
    dot = np.abs(np.einsum("mjc,njc->mnj", a, b))
    theta = 2.0 * np.arccos(np.clip(dot, 0.0, 1.0))
    return np.sqrt(np.einsum("mnj,j->mn", theta**2, w[keep]) / w[keep].sum())


def boundary_postures(db: GestureDatabase) -> tuple[np.ndarray, np.ndarray]:
    """``(first, last)``: ``(gps, joints, 4)`` local rotations at each GP's first and last frame."""
    first, last = [], []
    for p in db.phrases:
        m = db.recordings[p.clip]
        first.append(m.rotations[p.start_frame])
        last.append(m.rotations[p.end_frame - 1])
    return np.asarray(first), np.asarray(last)


def _hands(db: GestureDatabase, clip: str, frame: int) -> np.ndarray:
    tr = db.trajectories[clip]
    f = int(np.clip(frame, 0, tr.n_frames - 1))
    return np.stack([tr.left[f], tr.right[f]])


def boundary_hands(db: GestureDatabase) -> tuple[np.ndarray, np.ndarray]:
    """``(first, last)``: ``(gps, 2, 3)`` left and right wrist positions (body frame, 1.70 m
    body, metres) at each GP's first and last frame."""
    first = np.array([_hands(db, p.clip, p.start_frame) for p in db.phrases])
    last = np.array([_hands(db, p.clip, p.end_frame - 1) for p in db.phrases])
    return first, last


def hand_travel(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(m, n)`` the larger of the two wrists' straight-line distances, metres, between hand
    positions ``a`` ``(m, 2, 3)`` and ``b`` ``(n, 2, 3)``."""
    return np.linalg.norm(a[:, None] - b[None], axis=-1).max(axis=-1)


def e1_pairs(db: GestureDatabase) -> list[tuple[int, int, bool]]:
    """``(a, b, contiguous)`` for consecutive GPs of each recording."""
    out = []
    for r in range(len(db.recordings)):
        ids = np.flatnonzero(db.recording_index == r)
        ids = sorted(ids, key=lambda i: db.phrases[i].start_frame)
        for a, b in zip(ids[:-1], ids[1:]):
            out.append((int(a), int(b), db.phrases[a].end_frame == db.phrases[b].start_frame))
    return out


@dataclass(frozen=True, eq=False)
class GestureMotionGraph:
    """A GMG built at one threshold.

    Attributes:
        database: the GPs and recordings.
        threshold: similarity threshold (weighted RMS joint angle, radians).
        weights: ``(joints,)`` posture weights.
        distance: ``(gps, gps)`` posture distance from the end of GP ``a`` (row) to the start of
            GP ``b`` (column), radians.
        graph: every GP with its E1 and E2 edges (edge columns ``src, dst, weight`` (= distance),
            ``kind`` (``E1``/``E2``), ``distance``, ``contiguous``).
        core: the largest SCC (the graph synthesis walks); core_nodes: ``(core gps,)`` index of
            each of its nodes in :attr:`graph` / the database.
        rest_from: ``(gps,)`` posture distance from the rest pose to each GP's first frame.
        rest_to: ``(gps,)`` posture distance from each GP's last frame to the rest pose.
        hand_distance: ``(gps, gps)`` how far a wrist moves (the farther of the two; metres of
            the 1.70 m body, body frame) from the end of GP ``a`` to the start of GP ``b``.
        rest_from_hand, rest_to_hand: ``(gps,)`` the same from / to the rest pose.
    """

    database: GestureDatabase
    threshold: float
    weights: np.ndarray
    distance: np.ndarray
    graph: Graph
    core: Graph
    core_nodes: np.ndarray
    rest_from: np.ndarray
    rest_to: np.ndarray
    hand_distance: np.ndarray
    rest_from_hand: np.ndarray
    rest_to_hand: np.ndarray

    def stats(self) -> dict:
        """Table 4.2 figures at this threshold (see :func:`graph_statistics`)."""
        return graph_statistics(self.graph, self.threshold)

    def summary(self) -> dict:
        """JSON-ready description."""
        names = self.database.skeleton.names
        return {
            "threshold": self.threshold,
            "distance": "weighted RMS joint angle between boundary postures, radians",
            "weights": {names[j]: float(self.weights[j]) for j in np.flatnonzero(self.weights > 0)},
            **self.stats(),
        }


def _edges(db: GestureDatabase, dist: np.ndarray, threshold: float, self_loops: bool) -> pd.DataFrame:
    rows = {}
    for a, b, contiguous in e1_pairs(db):
        rows[(a, b)] = (a, b, 0.0 if contiguous else float(dist[a, b]), "E1", bool(contiguous))
    ia, ib = np.nonzero(dist < threshold)
    for a, b in zip(ia.tolist(), ib.tolist()):
        if (a, b) in rows or (a == b and not self_loops):
            continue
        rows[(a, b)] = (a, b, float(dist[a, b]), "E2", False)
    df = pd.DataFrame(sorted(rows.values()), columns=["src", "dst", "distance", "kind", "contiguous"])
    df.insert(2, "weight", df["distance"].astype(float))
    return df


def build_gmg(
    db: GestureDatabase,
    threshold: float = DEFAULT_THRESHOLD,
    weights: str | Mapping[str, float] | np.ndarray = "thesis",
    self_loops: bool = False,
) -> GestureMotionGraph:
    """Build the GMG of a database at a similarity threshold (radians).

    Args:
        db: the gesture database.
        threshold: E2 edges join GPs whose boundary postures are closer than this.
        weights: posture weights (see :func:`gmg_joint_weights`) or a ``(joints,)`` array.
        self_loops: allow an E2 edge from a GP to itself.

    Raises:
        InputError: the largest SCC is empty (no cycle: raise the threshold or add capture).
    """
    if not threshold > 0:
        raise InputError(f"similarity threshold must be > 0, got {threshold}")
    w = np.asarray(weights, dtype=float) if isinstance(weights, np.ndarray) else gmg_joint_weights(db.skeleton, weights)
    if w.shape != (db.skeleton.n_joints,):
        raise InputError(f"weights must have one value per joint ({db.skeleton.n_joints}), got {w.shape}")
    first, last = boundary_postures(db)
    dist = posture_distance(last, first, w)
    nodes = db.frame()
    graph = Graph(nodes, _edges(db, dist, threshold, self_loops))
    core, old = graph.largest_scc()
    if core.n_nodes == 0:
        raise InputError(f"the GMG at threshold {threshold:g} has no cycle (empty largest SCC); raise the threshold or add gesture capture")
    rest = db.recordings[db.rest[0]].rotations[db.rest[1]][None]
    rest_from = posture_distance(rest, first, w)[0]
    rest_to = posture_distance(last, rest, w)[:, 0]
    h_first, h_last = boundary_hands(db)
    h_rest = _hands(db, db.rest[0], db.rest[1])[None]
    return GestureMotionGraph(db, float(threshold), w, dist, graph, core, old, rest_from, rest_to,
                              hand_travel(h_last, h_first), hand_travel(h_rest, h_first)[0], hand_travel(h_last, h_rest)[:, 0])


def graph_statistics(graph: Graph, threshold: float) -> dict:
    """Thesis Table 4.2 row: ``threshold, nodes, edges, e1_edges, e2_edges, branching_factor,
    scc_nodes, scc_edges, scc_branching_factor, scc_fraction``."""
    kind = graph.edges["kind"].to_numpy() if graph.n_edges else np.array([], dtype=object)
    s = graph.stats()
    return {
        "threshold": float(threshold),
        "nodes": s["nodes"],
        "edges": s["edges"],
        "e1_edges": int(np.sum(kind == "E1")),
        "e2_edges": int(np.sum(kind == "E2")),
        "branching_factor": s["branching_factor"],
        "scc_nodes": s["scc_nodes"],
        "scc_edges": s["scc_edges"],
        "scc_branching_factor": s["scc_branching_factor"],
        "scc_fraction": s["scc_fraction"],
    }


def gmg_statistics(
    db: GestureDatabase,
    thresholds: Sequence[float] = TABLE_THRESHOLDS,
    weights: str | Mapping[str, float] | np.ndarray = "thesis",
    self_loops: bool = False,
) -> pd.DataFrame:
    """Graph statistics per similarity threshold, like the thesis' Table 4.2.

    Returns:
        one row per threshold with the columns of :func:`graph_statistics`.
    """
    w = np.asarray(weights, dtype=float) if isinstance(weights, np.ndarray) else gmg_joint_weights(db.skeleton, weights)
    first, last = boundary_postures(db)
    dist = posture_distance(last, first, w)
    nodes = db.frame()
    rows = []
    for t in thresholds:
        if not t > 0:
            raise InputError(f"thresholds must be > 0, got {t}")
        rows.append(graph_statistics(Graph(nodes, _edges(db, dist, float(t), self_loops)), float(t)))
    return pd.DataFrame(rows)


_LATEX_COLUMNS = {
    "threshold": "Threshold",
    "nodes": "Original size",
    "branching_factor": "Original BF",
    "scc_nodes": "SCC size",
    "scc_branching_factor": "SCC BF",
}


def statistics_latex(table: pd.DataFrame, caption: str | None = None, label: str = "tab:gmg-stats") -> str:
    """The statistics as a LaTeX ``table`` (columns of the thesis' Table 4.2)."""
    df = table[list(_LATEX_COLUMNS)].rename(columns=_LATEX_COLUMNS)
    cap = caption or ("Gesture motion graph statistics per similarity threshold (weighted RMS joint "
                      "angle, rad): size, branching factor (edges/nodes), size and branching factor "
                      "of the largest strongly connected component.")
    body = df.to_latex(index=False, float_format=lambda v: f"{v:.2f}", column_format="r" * df.shape[1])
    return "\\begin{table}[ht]\n\\centering\n" + body + f"\\caption{{{cap}}}\n\\label{{{label}}}\n\\end{{table}}\n"


def write_statistics(table: pd.DataFrame, folder: str | os.PathLike, stem: str = "gmg_stats", caption: str | None = None) -> dict[str, Path]:
    """Write ``<stem>.csv`` and ``<stem>.tex`` into ``folder`` (temporary files, then rename)."""
    from evalkit.synth.gmg.report import write_text

    d = Path(folder)
    csv = write_text(d / f"{stem}.csv", table.to_csv(index=False, float_format="%.4g"))
    tex = write_text(d / f"{stem}.tex", statistics_latex(table, caption))
    return {"csv": csv, "tex": tex}
