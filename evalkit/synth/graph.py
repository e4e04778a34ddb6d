"""Generic directed-graph machinery for motion graphs (SMG, BPMG, gesture motion graphs).

Nothing here knows about motion: a :class:`Graph` is nodes and weighted directed edges, each
with a free table of attributes (pandas DataFrames), plus the operations motion graphs need:

* :func:`local_minima` — transition candidates: local minima of a distance matrix under a
  threshold (Kovar et al. 2002), optionally ignoring a band around the diagonal (self matches).
* :meth:`Graph.strongly_connected` / :meth:`Graph.largest_scc` — pruning to the largest strongly
  connected component (SCC), via :func:`scipy.sparse.csgraph.connected_components`.
* :meth:`Graph.stats` — size, branching factor (edges / nodes), SCC size and SCC branching
  factor (as in the thesis' Table 4.2).
* :meth:`Graph.shortest_path` / :meth:`Graph.distances_to` — Dijkstra path search on edge
  weights (frames, seconds, costs: whatever the caller stores), via
  :func:`scipy.sparse.csgraph.dijkstra`.

Example (a gesture graph whose nodes are phrases)::

    g = Graph.from_edges(n_nodes=4, src=[0, 1, 2, 3, 1], dst=[1, 2, 3, 0, 3],
                         weight=[1, 1, 1, 1, 2], kind=["E1", "E1", "E1", "E2", "E2"])
    g.stats()                 # {'nodes': 4, 'edges': 5, 'branching_factor': 1.25, ...}
    core, old_index = g.largest_scc()
    path = g.shortest_path(0, [3])   # Path(nodes=[0, 1, 3], edges=[0, 4], length=3.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import ndimage
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from evalkit.errors import InputError


def local_minima(
    distance: np.ndarray,
    threshold: float,
    radius: int = 1,
    exclude_band: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Transition candidates: entries of a distance matrix that are local minima under a threshold.

    Args:
        distance: ``(n, m)`` distances (any unit).
        threshold: keep minima strictly below this value (same unit).
        radius: neighbourhood half-width in entries; a minimum is the smallest value in its
            ``(2 r + 1) x (2 r + 1)`` neighbourhood (ties: the first in row-major order).
        exclude_band: ignore entries with ``|i - j| < exclude_band`` (use it for a clip against
            itself, where the diagonal is trivially 0).

    Returns:
        ``(rows, cols)`` index arrays of the candidates, in row-major order.
    """
    d = np.asarray(distance, dtype=np.float64)
    if d.ndim != 2:
        raise InputError(f"distance must be a 2-D matrix, got shape {d.shape}")
    if d.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    d = np.where(np.isfinite(d), d, np.inf)
    if exclude_band > 0:
        i, j = np.indices(d.shape)
        d = np.where(np.abs(i - j) < exclude_band, np.inf, d)
    size = 2 * int(radius) + 1
    low = ndimage.minimum_filter(d, size=size, mode="constant", cval=np.inf)
    mask = (d == low) & (d < threshold)
    # A plateau of equal values gives a connected patch of "minima": keep its first entry.
    labels, n = ndimage.label(mask, structure=np.ones((3, 3)))
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    flat = np.flatnonzero(mask)
    lab = labels.ravel()[flat]
    _, first = np.unique(lab, return_index=True)
    rows, cols = np.unravel_index(np.sort(flat[first]), d.shape)
    return rows.astype(np.int64), cols.astype(np.int64)


@dataclass(frozen=True)
class Path:
    """A path found by :meth:`Graph.shortest_path`.

    Attributes:
        nodes: node indices from source to target.
        edges: edge indices (rows of :attr:`Graph.edges`) along the path, ``len(nodes) - 1``.
        length: sum of edge weights.
    """

    nodes: list[int]
    edges: list[int]
    length: float


@dataclass(frozen=True, eq=False)
class Graph:
    """A directed graph with weighted edges and attribute tables.

    Attributes:
        nodes: one row per node (index 0..n-1); any columns (e.g. ``clip``, ``frame``).
        edges: one row per edge with at least ``src``, ``dst`` (node indices) and ``weight``
            (non-negative; the length used by path search), plus any columns (``kind``,
            ``cost``, ...). Parallel edges are allowed; path search uses the lightest.
    """

    nodes: pd.DataFrame
    edges: pd.DataFrame
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for col in ("src", "dst", "weight"):
            if col not in self.edges.columns:
                raise InputError(f"graph edges need a {col!r} column")
        n = len(self.nodes)
        if len(self.edges):
            s = self.edges["src"].to_numpy()
            d = self.edges["dst"].to_numpy()
            if s.min() < 0 or d.min() < 0 or s.max() >= n or d.max() >= n:
                raise InputError(f"edge endpoints must be node indices in 0..{n - 1}")
            if (self.edges["weight"].to_numpy() < 0).any():
                raise InputError("edge weights must be non-negative")

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_edges(
        cls,
        n_nodes: int | pd.DataFrame,
        src: Sequence[int],
        dst: Sequence[int],
        weight: Sequence[float] | None = None,
        **attrs: Sequence,
    ) -> "Graph":
        """Build from parallel arrays; ``n_nodes`` may be a node table instead of a count."""
        nodes = n_nodes if isinstance(n_nodes, pd.DataFrame) else pd.DataFrame(index=range(int(n_nodes)))
        nodes = nodes.reset_index(drop=True)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        w = np.ones(len(src)) if weight is None else np.asarray(weight, dtype=np.float64)
        edges = pd.DataFrame({"src": src, "dst": dst, "weight": w, **{k: np.asarray(v) for k, v in attrs.items()}})
        return cls(nodes, edges)

    @property
    def n_nodes(self) -> int:
        return len(self.nodes)

    @property
    def n_edges(self) -> int:
        return len(self.edges)

    def adjacency(self) -> csr_matrix:
        """``(n, n)`` sparse matrix of the lightest edge weight between each ordered pair.

        Zero-weight edges are stored as a tiny positive number (scipy treats explicit zeros as
        missing edges).
        """
        if "adjacency" in self._cache:
            return self._cache["adjacency"]
        n = self.n_nodes
        if self.n_edges == 0:
            m = csr_matrix((n, n))
        else:
            e = self.edges.sort_values("weight", kind="stable").drop_duplicates(["src", "dst"], keep="first")
            w = np.maximum(e["weight"].to_numpy(dtype=np.float64), 1e-12)
            m = coo_matrix((w, (e["src"].to_numpy(), e["dst"].to_numpy())), shape=(n, n)).tocsr()
        self._cache["adjacency"] = m
        return m

    # -- components ------------------------------------------------------------------------
    def strongly_connected(self) -> np.ndarray:
        """``(nodes,)`` label of each node's strongly connected component."""
        if self.n_nodes == 0:
            return np.zeros(0, dtype=np.int64)
        _, labels = connected_components(self.adjacency(), directed=True, connection="strong")
        return labels

    def largest_scc_mask(self) -> np.ndarray:
        """``(nodes,)`` bool: nodes of the largest strongly connected component.

        A single node without a self-loop is not a cycle; a graph without any cycle has an empty
        largest SCC.
        """
        labels = self.strongly_connected()
        if labels.size == 0:
            return np.zeros(0, dtype=bool)
        counts = np.bincount(labels)
        best = int(np.argmax(counts))
        mask = labels == best
        if counts[best] == 1:
            node = int(np.flatnonzero(mask)[0])
            loops = (self.edges["src"] == node) & (self.edges["dst"] == node)
            if not loops.any():
                return np.zeros_like(mask)
        return mask

    def subgraph(self, node_mask: np.ndarray) -> tuple["Graph", np.ndarray]:
        """The graph induced by the nodes in ``node_mask``.

        Returns:
            ``(graph, old_index)``: the subgraph, and ``(new_nodes,)`` the original index of
            each of its nodes. Edge attribute columns are kept; an ``edge_id`` column records
            each edge's row in the original graph.
        """
        mask = np.asarray(node_mask, dtype=bool)
        if mask.shape != (self.n_nodes,):
            raise InputError(f"node mask must have shape ({self.n_nodes},), got {mask.shape}")
        old = np.flatnonzero(mask)
        new_of = np.full(self.n_nodes, -1, dtype=np.int64)
        new_of[old] = np.arange(len(old))
        e = self.edges
        keep = mask[e["src"].to_numpy()] & mask[e["dst"].to_numpy()] if len(e) else np.zeros(0, dtype=bool)
        sub = e.loc[keep].copy()
        if "edge_id" not in sub.columns:
            sub.insert(0, "edge_id", np.flatnonzero(keep))
        sub["src"] = new_of[sub["src"].to_numpy()]
        sub["dst"] = new_of[sub["dst"].to_numpy()]
        nodes = self.nodes.iloc[old].reset_index(drop=True)
        return Graph(nodes, sub.reset_index(drop=True)), old

    def largest_scc(self) -> tuple["Graph", np.ndarray]:
        """The subgraph of the largest strongly connected component (see :meth:`subgraph`)."""
        return self.subgraph(self.largest_scc_mask())

    # -- statistics ------------------------------------------------------------------------
    def stats(self, edge_filter: np.ndarray | None = None) -> dict:
        """Size and connectivity figures.

        Args:
            edge_filter: optional ``(edges,)`` bool selecting the edges that count as
                transitions for ``transitions`` (e.g. ``edges.kind == "transition"``).

        Returns:
            ``nodes``, ``edges``, ``branching_factor`` (edges / nodes), ``scc_nodes``,
            ``scc_edges``, ``scc_branching_factor``, ``scc_fraction`` (SCC nodes / nodes) and,
            with ``edge_filter``, ``transitions`` and ``scc_transitions``.
        """
        n, m = self.n_nodes, self.n_edges
        mask = self.largest_scc_mask()
        if len(self.edges):
            s = self.edges["src"].to_numpy()
            d = self.edges["dst"].to_numpy()
            in_scc = mask[s] & mask[d]
        else:
            in_scc = np.zeros(0, dtype=bool)
        sn, se = int(mask.sum()), int(in_scc.sum())
        out = {
            "nodes": n,
            "edges": m,
            "branching_factor": m / n if n else 0.0,
            "scc_nodes": sn,
            "scc_edges": se,
            "scc_branching_factor": se / sn if sn else 0.0,
            "scc_fraction": sn / n if n else 0.0,
        }
        if edge_filter is not None:
            f = np.asarray(edge_filter, dtype=bool)
            out["transitions"] = int(f.sum())
            out["scc_transitions"] = int((f & in_scc).sum())
        return out

    # -- path search -----------------------------------------------------------------------
    def distances_to(self, targets: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """Shortest distance from every node to the nearest of ``targets``.

        Returns:
            ``(dist, next_node)``: ``(nodes,)`` path length (``inf`` if unreachable) and the
            next node on a shortest path (``-1`` at targets and unreachable nodes).
        """
        targets = np.unique(np.asarray(list(targets), dtype=np.int64))
        n = self.n_nodes
        if targets.size == 0 or n == 0:
            return np.full(n, np.inf), np.full(n, -1, dtype=np.int64)
        rev = self.adjacency().T.tocsr()
        dist, pred, _ = dijkstra(rev, directed=True, indices=targets, min_only=True, return_predecessors=True)
        pred = np.where(pred < 0, -1, pred).astype(np.int64)
        return dist, pred

    def edge_between(self, a: int, b: int) -> int:
        """Row index of the lightest edge ``a -> b`` (raises if there is none)."""
        if "edge_lookup" not in self._cache:
            e = self.edges
            order = np.lexsort((e["weight"].to_numpy(), e["dst"].to_numpy(), e["src"].to_numpy()))
            lookup: dict[tuple[int, int], int] = {}
            for r, s, d in zip(order, e["src"].to_numpy()[order], e["dst"].to_numpy()[order]):
                lookup.setdefault((int(s), int(d)), int(r))
            self._cache["edge_lookup"] = lookup
        try:
            return self._cache["edge_lookup"][(int(a), int(b))]
        except KeyError:
            raise InputError(f"no edge {a} -> {b}") from None

    def shortest_path(self, source: int, targets: Iterable[int]) -> Path | None:
        """Lightest path from ``source`` to the nearest of ``targets`` (``None`` if unreachable)."""
        targets = list(targets)
        dist, nxt = self.distances_to(targets)
        return self.path_from(source, dist, nxt)

    def path_from(self, source: int, dist: np.ndarray, nxt: np.ndarray) -> Path | None:
        """Follow a :meth:`distances_to` result from ``source`` (``None`` if unreachable)."""
        if not np.isfinite(dist[source]):
            return None
        nodes = [int(source)]
        edges: list[int] = []
        while nxt[nodes[-1]] >= 0:
            b = int(nxt[nodes[-1]])
            edges.append(self.edge_between(nodes[-1], b))
            nodes.append(b)
            if len(nodes) > self.n_nodes + 1:  # pragma: no cover - defensive
                raise RuntimeError("path reconstruction did not terminate")
        return Path(nodes, edges, float(dist[source]))
