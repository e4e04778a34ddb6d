"""Standard motion graph (SMG; Kovar, Gleicher & Pighin 2002).

Construction: the whole-body distance (:mod:`evalkit.synth.distance`) between every window of
every clip and every window of every clip (a clip with itself too, ignoring a band of one window
around the diagonal); transition candidates are its local minima under the similarity threshold
(:func:`evalkit.synth.graph.local_minima`). A candidate ``(a, i) -> (b, j)`` means: leave clip
``a`` at frame ``i``, blend ``a[i:i+k]`` into ``b[j:j+k]`` (``b`` aligned by the optimal 2-D
transform), continue in ``b`` at frame ``j + k``.

Graph: nodes are the frames where a transition leaves or arrives, ``(clip, frame)``; edges are
clip segments between consecutive nodes of a clip (weight = frames played) and transitions
(weight = ``k``). The graph is pruned to its largest strongly connected component, so that the
character can never run into a dead end (the end of a clip). Path search gives the earliest
arrival in a requested clip, through the pruned graph (the request's own origin and target
clips need not be in it, see :class:`TransitionGraph`).
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.motion.model import Motion
from evalkit.synth.bodyparts import BodyPart
from evalkit.synth.clipset import ClipSet
from evalkit.synth.graph import Graph, local_minima
from evalkit.synth.transition import Hop, PartMove, TransitionPlan, fast_joints, validate_request

#: Default similarity threshold, RMS metres per joint over the window: the lowest of the sweep
#: (0.05 m steps) at which the SMG connects walking and running in the bundled CMU clips (walk
#: and run windows differ by at least 0.26 m; see docs/synth.md).
DEFAULT_THRESHOLD = 0.3


@dataclass(frozen=True)
class GraphConfig:
    """Parameters shared by the SMG and BPMG.

    Attributes:
        threshold: similarity threshold, RMS metres per joint over the window.
        window_s: comparison and blend window, seconds (Kovar: about 1/3 s).
        fps: frame rate of the graph, frames per second (the thesis measures at 60).
        weights: joint weight scheme or ``{joint: weight}`` (see ``joint_weights``).
        minima_radius_s: half-width of the neighbourhood in which a candidate must be the
            smallest distance, seconds.
        prune: keep only the largest strongly connected component.
        speed_guard: render each planned transition and, if a joint moves faster than
            ``guard_tolerance`` times its fastest speed in the clips involved, take the next
            transition instead (up to ``guard_tries`` times).
        norm: ``"rms"`` (RMS metres per joint) or ``"kovar"`` (square root of Kovar's weighted
            sum of squares, metres); see :meth:`ClipSet.distances`.
    """

    threshold: float = DEFAULT_THRESHOLD
    window_s: float = 1.0 / 3.0
    fps: float = 60.0
    weights: str | Mapping[str, float] = "paths"
    minima_radius_s: float = 0.1
    prune: bool = True
    norm: str = "rms"
    speed_guard: bool = True
    guard_tolerance: float = 1.1
    guard_tries: int = 8

    def __post_init__(self) -> None:
        from evalkit.synth.clipset import check_norm

        check_norm(self.norm)
        if not (self.threshold > 0):
            raise InputError(f"threshold must be positive (metres), got {self.threshold}")
        if not (self.window_s > 0):
            raise InputError(f"window must be positive (seconds), got {self.window_s}")
        if not (self.fps > 0):
            raise InputError(f"fps must be positive, got {self.fps}")

    def radius(self, fps: float) -> int:
        return max(1, int(round(self.minima_radius_s * fps)))

    def as_dict(self) -> dict:
        d = asdict(self)
        if not isinstance(d["weights"], str):
            d["weights"] = dict(d["weights"])
        return d


def find_candidates(
    distances: dict[tuple[int, int], np.ndarray],
    lengths: np.ndarray,
    window: int,
    threshold: float,
    radius: int,
) -> pd.DataFrame:
    """Transition candidates of every ordered clip pair.

    Args:
        distances: ``{(a, b): (windows_a, windows_b)}`` RMS distances, metres.
        lengths: ``(clips,)`` frames per clip.
        window: blend window ``k``, frames.
        threshold: keep local minima below this, metres.
        radius: local-minimum neighbourhood half-width, frames.

    Returns:
        DataFrame with columns ``src, i, dst, j, cost`` (one row per candidate; the arrival
        frame ``j + k`` always exists in ``dst``).
    """
    rows = []
    for (a, b), d in sorted(distances.items()):
        r, c = local_minima(d, threshold, radius=radius, exclude_band=window if a == b else 0)
        ok = c + window <= lengths[b] - 1
        r, c = r[ok], c[ok]
        if r.size:
            rows.append(pd.DataFrame({"src": a, "i": r, "dst": b, "j": c, "cost": d[r, c]}))
    if not rows:
        return pd.DataFrame({"src": pd.Series(dtype=int), "i": pd.Series(dtype=int), "dst": pd.Series(dtype=int),
                             "j": pd.Series(dtype=int), "cost": pd.Series(dtype=float)})
    return pd.concat(rows, ignore_index=True)


def transition_graph(candidates: pd.DataFrame, lengths: np.ndarray, window: int) -> Graph:
    """Graph of clip frames joined by clip segments and transitions (see the module docstring).

    Node table columns ``clip, frame``; edge columns ``src, dst, weight`` (frames), ``kind``
    (``"clip"`` / ``"transition"``), ``candidate`` (row of ``candidates``, -1 for clip edges)
    and ``cost`` (metres, 0 for clip edges).
    """
    dep = candidates[["src", "i"]].to_numpy()
    arr = np.stack([candidates["dst"].to_numpy(), candidates["j"].to_numpy() + window], axis=1) if len(candidates) else np.zeros((0, 2), int)
    allnodes = np.unique(np.concatenate([dep, arr]).astype(np.int64), axis=0) if len(candidates) else np.zeros((0, 2), np.int64)
    nodes = pd.DataFrame({"clip": allnodes[:, 0], "frame": allnodes[:, 1]})
    key = {(int(c), int(f)): n for n, (c, f) in enumerate(allnodes)}
    src, dst, w, kind, cand, cost = [], [], [], [], [], []
    for n in range(len(allnodes) - 1):
        if allnodes[n, 0] == allnodes[n + 1, 0]:
            src.append(n)
            dst.append(n + 1)
            w.append(float(allnodes[n + 1, 1] - allnodes[n, 1]))
            kind.append("clip")
            cand.append(-1)
            cost.append(0.0)
    for r, (a, i, b, j, c) in enumerate(candidates[["src", "i", "dst", "j", "cost"]].itertuples(index=False)):
        src.append(key[(int(a), int(i))])
        dst.append(key[(int(b), int(j) + window)])
        w.append(float(window))
        kind.append("transition")
        cand.append(r)
        cost.append(float(c))
    return Graph.from_edges(nodes, src, dst, w, kind=np.array(kind, dtype=object), candidate=cand, cost=cost)


@dataclass(eq=False)
class TransitionGraph:
    """Candidates of one distance (whole body, or one body part) and their motion graph.

    Attributes:
        candidates: all candidates (``src, i, dst, j, cost``) plus ``in_graph`` (kept after
            pruning).
        graph: the (pruned) graph: statistics, and every clip a route passes *through*.
        full_stats: statistics before pruning.
        full: the graph before pruning.

    Routes (:meth:`route`) run in the pruned graph plus the frames of the request's own origin
    and target clips: the largest SCC guarantees that the character never runs into a dead end,
    which matters for the clips it passes through; where it already is (the origin) and where it
    is asked to go (the target) need not be in it. A clip too short to both enter and leave
    through its transitions (the Bandai Namco run: 47 frames at 60 fps, entered and left only at
    frame 10) is never in the SCC, and pruned routing served no request into or out of it.
    """

    candidates: pd.DataFrame
    graph: Graph
    full_stats: dict
    lengths: np.ndarray
    window: int
    full: Graph | None = None
    scc_mask: np.ndarray | None = None
    _dist_cache: dict = field(default_factory=dict, repr=False)
    _route_cache: OrderedDict = field(default_factory=OrderedDict, repr=False)

    #: routings kept (least recently used dropped); they were subgraph copies with their own
    #: lookups, and keeping every ordered pair made the sweep of the 41 Bandai Namco clips
    #: (1,640 pairs) grow past 15 GB
    ROUTE_CACHE = 32

    @classmethod
    def build(cls, candidates: pd.DataFrame, lengths: np.ndarray, window: int, prune: bool = True) -> "TransitionGraph":
        full = transition_graph(candidates, lengths, window)
        full_stats = full.stats(edge_filter=(full.edges["kind"] == "transition").to_numpy())
        cand = candidates.copy()
        if prune:
            mask = full.largest_scc_mask()
            g, _ = full.subgraph(mask)
        else:
            mask = np.ones(full.n_nodes, dtype=bool)
            g = full
        kept = g.edges.loc[g.edges["kind"] == "transition", "candidate"].to_numpy()
        cand["in_graph"] = False
        cand.loc[kept, "in_graph"] = True
        return cls(cand, g, full_stats, np.asarray(lengths), window, full, mask)

    def stats(self) -> dict:
        """Statistics of the graph before pruning and of the kept graph (``scc_*``)."""
        out = dict(self.full_stats)
        out["candidates"] = int(len(self.candidates))
        out["kept_transitions"] = int(self.candidates["in_graph"].sum())
        kept = self.candidates[self.candidates["in_graph"]]
        out["transition_points"] = int(len(kept[["src", "i"]].drop_duplicates()))
        out["mean_cost_m"] = float(kept["cost"].mean()) if len(kept) else float("nan")
        out["connected_clip_pairs"] = int(len(kept.loc[kept["src"] != kept["dst"], ["src", "dst"]].drop_duplicates()))
        return out

    def _routing(self, src: int, dst: int):
        """``(graph, node clips, node frames, edge is-transition, edge candidate, dist, next)``
        of the routing graph for requests from clip ``src`` into clip ``dst`` (cached)."""
        key = (src, dst)
        cache = self._route_cache
        if key in cache:
            cache.move_to_end(key)
        else:
            # Dijkstra on the full graph's lightest-edge matrix with the edges of nodes outside
            # the routing set removed (no subgraph copy: one pair's routing is its two arrays)
            from scipy.sparse import csr_matrix
            from scipy.sparse.csgraph import dijkstra

            full = self.full if self.full is not None else self.graph
            if "full_arrays" not in self._dist_cache:
                a = full.adjacency().tocoo()
                e = full.edges
                self._dist_cache["full_arrays"] = (
                    full.nodes["clip"].to_numpy(), full.nodes["frame"].to_numpy(), a.row, a.col, a.data,
                    (e["kind"] == "transition").to_numpy(), e["candidate"].to_numpy(),
                )
            clip, frames, row, col, w, kinds, cands = self._dist_cache["full_arrays"]
            n = len(clip)
            mask = (self.scc_mask if self.scc_mask is not None else np.ones(n, bool)) | (clip == src) | (clip == dst)
            keep = mask[row] & mask[col]
            rev = csr_matrix((w[keep], (col[keep], row[keep])), shape=(n, n))
            targets = np.flatnonzero(clip == dst)
            if targets.size == 0 or n == 0:
                dist, nxt = np.full(n, np.inf), np.full(n, -1, dtype=np.int64)
            else:
                dist, pred, _ = dijkstra(rev, directed=True, indices=targets, min_only=True, return_predecessors=True)
                nxt = np.where(pred < 0, -1, pred).astype(np.int64)
            cache[key] = (full, clip, frames, kinds, cands, dist, nxt)
            while len(cache) > self.ROUTE_CACHE:
                cache.popitem(last=False)
        return cache[key]

    def route(self, src: int, request: int, dst: int) -> list[tuple[int, int, int, int, int]] | None:
        """Earliest-arrival route from frame ``request`` of clip ``src`` into clip ``dst``
        (through the pruned graph, see the class docstring).

        Returns:
            The transitions taken, ``[(src, i, dst, j, candidate_row), ...]``, or ``None`` if the
            target cannot be reached from there (e.g. past the last node of the clip).
        """
        g, clip, frames, kinds, cands, dist, nxt = self._routing(src, dst)
        sel = np.flatnonzero((clip == src) & (frames >= request))
        if sel.size == 0:
            return None
        n0 = int(sel[np.argmin(frames[sel])])
        path = g.path_from(n0, dist, nxt)
        if path is None:
            return None
        c = self._cand_arrays()
        out = []
        for ei in path.edges:
            if kinds[ei]:
                r = int(cands[ei])
                out.append((int(c[0][r]), int(c[1][r]), int(c[2][r]), int(c[3][r]), r))
        return out or None

    def _cand_arrays(self):
        if "cand" not in self._dist_cache:
            c = self.candidates
            self._dist_cache["cand"] = tuple(c[k].to_numpy() for k in ("src", "i", "dst", "j"))
        return self._dist_cache["cand"]


def whole_body(skeleton) -> BodyPart:
    """The single "part" of an SMG: every joint."""
    return BodyPart("body", ("root", "lower_left", "lower_right", "trunk", "head", "upper_left", "upper_right"),
                    np.arange(skeleton.n_joints), True)


@dataclass(eq=False)
class MotionGraph:
    """A standard motion graph over a :class:`ClipSet`.

    Attributes:
        clipset: the clips and cached distances.
        config: parameters.
        tg: candidates and the pruned graph.
    """

    clipset: ClipSet
    config: GraphConfig
    tg: TransitionGraph
    method: str = "smg"

    @property
    def clips(self) -> tuple[Motion, ...]:
        return self.clipset.clips

    @property
    def parts(self) -> tuple[BodyPart, ...]:
        return (whole_body(self.clipset.skeleton),)

    @property
    def candidates(self) -> pd.DataFrame:
        return self.tg.candidates

    def stats(self) -> dict:
        """Graph statistics (nodes, edges, branching factor, SCC size, transition points, ...)."""
        return self.tg.stats()

    def _plan(self, a: int, b: int, request: int, route) -> TransitionPlan:
        cs = self.clipset
        k = cs.window
        hops, entry = [], request
        for (x, i, y, j, r) in route:
            cost = float(self.tg.candidates.at[r, "cost"])
            al = cs.alignment("full", x, i, y, j)
            hops.append(Hop(x, y, entry, i, j, j + k, al, (PartMove(i, j, cost),)))
            entry = j + k
        return TransitionPlan("smg", a, b, request, k, cs.fps, self.parts, tuple(hops), (1.0,), self.config.norm)

    def plan(self, src: int | str, dst: int | str, request: int) -> TransitionPlan | None:
        """Earliest transition from frame ``request`` of ``src`` into ``dst`` (``None`` if none).

        With ``speed_guard`` (see :class:`GraphConfig`), transitions whose rendering moves a
        joint faster than the clips involved are skipped; ``plan.info["guard_ok"]`` says whether
        the returned plan passed.
        """
        cs, cfg = self.clipset, self.config
        a, b = cs.index(src), cs.index(dst)
        validate_request(cs.clips, a, b, request)
        search, plan = request, None
        for attempt in range(cfg.guard_tries if cfg.speed_guard else 1):
            route = self.tg.route(a, search, b)
            if route is None:
                break
            plan = self._plan(a, b, request, route)
            if not cfg.speed_guard:
                return plan
            if fast_joints(cs, plan, cfg.guard_tolerance).size == 0:
                plan.info.update(guard_ok=True, guard_attempts=attempt + 1)
                return plan
            search = route[0][1] + 1
        if plan is not None:
            plan.info.update(guard_ok=False, guard_attempts=cfg.guard_tries)
        return plan


def build_smg(
    clips: Iterable[str | os.PathLike | Motion] | ClipSet,
    threshold: float = DEFAULT_THRESHOLD,
    window_s: float = 1.0 / 3.0,
    fps: float = 60.0,
    weights: str | Mapping[str, float] = "paths",
    minima_radius_s: float = 0.1,
    prune: bool = True,
    norm: str = "rms",
    speed_guard: bool = True,
    guard_tolerance: float = 1.1,
    guard_tries: int = 8,
) -> MotionGraph:
    """Build a standard motion graph.

    Args:
        clips: motion files / folders / :class:`Motion` objects (prepared with
            :func:`evalkit.synth.prepare_clips`: resampled to ``fps``, retargeted to one
            skeleton, grounded) or a ready :class:`ClipSet` (its fps and window are used).
        threshold: similarity threshold, RMS metres per joint.
        window_s: comparison and blend window, seconds.
        fps: graph frame rate, frames per second.
        weights: joint weights (``"paths"``, ``"roles"``, ``"all"`` or ``{joint: weight}``).
        minima_radius_s: local-minimum neighbourhood half-width, seconds.
        prune: prune to the largest strongly connected component.
        norm: distance normalisation, ``"rms"`` or ``"kovar"`` (see :class:`GraphConfig`).
        speed_guard, guard_tolerance, guard_tries: see :class:`GraphConfig`.

    Returns:
        A :class:`MotionGraph`; ``graph.stats()`` gives its size and connectivity and
        ``graph.plan(a, b, frame)`` a transition.
    """
    cs = ClipSet.from_clips(clips, fps=fps, window_s=window_s, weights=weights)
    config = GraphConfig(threshold, cs.window / cs.fps, cs.fps, cs.weights, minima_radius_s, prune, norm,
                         speed_guard, guard_tolerance, guard_tries)
    cand = find_candidates(cs.distances("full", norm), cs.lengths, cs.window, threshold, config.radius(cs.fps))
    tg = TransitionGraph.build(cand, cs.lengths, cs.window, prune)
    return MotionGraph(cs, config, tg)
