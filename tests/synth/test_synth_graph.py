"""Generic graph machinery: local minima, SCC pruning, statistics, path search."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.synth.graph import Graph, local_minima


def test_local_minima_finds_isolated_valleys_under_threshold():
    d = np.ones((30, 40))
    d[5, 7] = 0.1
    d[5, 8] = 0.2  # neighbour of the first valley: not a separate minimum
    d[20, 30] = 0.3
    d[25, 2] = 0.9  # a valley above the threshold
    rows, cols = local_minima(d, threshold=0.5, radius=2)
    assert list(zip(rows, cols)) == [(5, 7), (20, 30)]


def test_local_minima_plateau_and_diagonal_band():
    d = np.ones((10, 10))
    d[3, 3:6] = 0.0  # a plateau: one candidate, not three
    d[7, 1] = 0.2
    rows, cols = local_minima(d, 0.5, radius=1)
    assert list(zip(rows, cols)) == [(3, 3), (7, 1)]
    rows, cols = local_minima(d, 0.5, radius=1, exclude_band=3)
    assert list(zip(rows, cols)) == [(7, 1)]
    with pytest.raises(InputError):
        local_minima(np.ones(5), 1.0)


def _example():
    # 0 -> 1 -> 2 -> 0 is a cycle; 3 only leads in; 4 is a dead end.
    return Graph.from_edges(
        n_nodes=5,
        src=[0, 1, 2, 3, 2, 1],
        dst=[1, 2, 0, 0, 4, 0],
        weight=[1.0, 2.0, 1.0, 1.0, 1.0, 5.0],
        kind=["clip", "clip", "transition", "clip", "transition", "transition"],
    )


def test_scc_pruning_and_stats():
    g = _example()
    mask = g.largest_scc_mask()
    assert mask.tolist() == [True, True, True, False, False]
    core, old = g.largest_scc()
    assert old.tolist() == [0, 1, 2] and core.n_edges == 4
    assert set(core.edges["edge_id"]) == {0, 1, 2, 5}
    s = g.stats(edge_filter=(g.edges["kind"] == "transition").to_numpy())
    assert s["nodes"] == 5 and s["edges"] == 6 and s["branching_factor"] == pytest.approx(1.2)
    assert s["scc_nodes"] == 3 and s["scc_edges"] == 4 and s["scc_branching_factor"] == pytest.approx(4 / 3)
    assert s["transitions"] == 3 and s["scc_transitions"] == 2


def test_acyclic_graph_has_empty_scc():
    g = Graph.from_edges(3, [0, 1], [1, 2])
    assert not g.largest_scc_mask().any()
    assert g.stats()["scc_nodes"] == 0


def test_shortest_path_prefers_light_edges_and_reports_unreachable():
    g = _example()
    p = g.shortest_path(1, [0])
    assert p.nodes == [1, 2, 0] and p.length == 3.0  # not the direct 5.0 edge
    assert p.edges == [1, 2]
    assert g.shortest_path(4, [0]) is None
    dist, nxt = g.distances_to([4])
    assert dist.tolist() == [4.0, 3.0, 1.0, 5.0, 0.0]
    assert nxt[4] == -1 and nxt[2] == 4


def test_parallel_and_zero_weight_edges():
    g = Graph.from_edges(2, [0, 0, 1], [1, 1, 0], [3.0, 0.0, 1.0])
    p = g.shortest_path(0, [1])
    assert p.edges == [1] and p.length == pytest.approx(0.0, abs=1e-9)


def test_invalid_graphs_are_rejected():
    with pytest.raises(InputError, match="node indices"):
        Graph.from_edges(2, [0], [2])
    with pytest.raises(InputError, match="non-negative"):
        Graph.from_edges(2, [0], [1], [-1.0])
