"""Distance-map figures (cf. thesis Fig. 3.2): distance matrices with transition candidates."""

from __future__ import annotations

import os
from pathlib import Path



def plot_distance_maps(graph, path: str | os.PathLike, max_pairs: int = 6) -> Path:
    """Draw each part's distance matrices for up to ``max_pairs`` ordered clip pairs (distinct
    clips first), with the candidates kept in the graph as dots; dark = similar.

    Args:
        graph: a ``MotionGraph`` (one row: whole body) or ``BodyPartMotionGraphs`` (one row
            per body part).
        path: output PNG (written to a temporary file, then renamed).
    """
    from matplotlib.figure import Figure

    cs = graph.clipset
    n = len(cs.clips)
    pairs = [(a, b) for a in range(n) for b in range(n) if a != b] + [(a, a) for a in range(n)]
    pairs = pairs[:max_pairs]
    if graph.method == "smg":
        rows = [("whole body", cs.distances("full", graph.config.norm), graph.candidates)]
    else:
        rows = [
            (p.name, d, g.candidates)
            for p, d, g in zip(graph.parts, graph.distances, graph.graphs)
        ]
    fig = Figure(figsize=(2.4 * len(pairs), 2.3 * len(rows)))
    axes = fig.subplots(len(rows), len(pairs), squeeze=False)
    for r, (name, dists, cand) in enumerate(rows):
        for c, (a, b) in enumerate(pairs):
            ax = axes[r, c]
            d = dists[(a, b)]
            ax.imshow(d, cmap="gray", origin="lower", aspect="auto", interpolation="nearest")
            sel = cand[(cand["src"] == a) & (cand["dst"] == b)]
            if "in_graph" in sel.columns:
                sel = sel[sel["in_graph"]]
            ax.plot(sel["j"], sel["i"], ".", color="tab:red", markersize=3)
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(f"{cs.clips[a].name} \u2192 {cs.clips[b].name}", fontsize=7)
            if c == 0:
                ax.set_ylabel(name, fontsize=8)
    fig.suptitle(f"{graph.method.upper()} distance maps (rows: origin frames, columns: target frames; "
                 f"dots: kept candidates; grey scale per panel)", fontsize=8)
    fig.tight_layout()
    p = Path(path)
    tmp = p.with_name(f".{p.stem}.tmp.png")
    fig.savefig(tmp, dpi=110, format="png")
    os.replace(tmp, p)
    return p
