"""Figures (matplotlib, object API with the Agg canvas: no pyplot global state).

Each ``*_figure`` function returns a :class:`matplotlib.figure.Figure`; :func:`save_figure`
writes it as PDF and PNG (atomically, without time stamps so outputs are reproducible) and
returns the PNG bytes for embedding in the HTML report.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from reports.io import atomic_write_bytes

A_COLOR, EQ_COLOR, B_COLOR = "#1b9e77", "#bdbdbd", "#d95f02"
MEAN_MARKER = dict(marker="D", markerfacecolor="white", markeredgecolor="black", markersize=6)


def _fig(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_figure(fig: Figure, out_dir: str | Path, name: str, *, dpi: int = 150,
                mark: str | None = None) -> bytes:
    """Write ``name.pdf`` and ``name.png`` under ``out_dir``; return the PNG bytes.

    ``mark``: a warning drawn as the figure's top title (bold, red) and stored as the document
    title of both files (e.g. that the data are simulated), so a figure copied out of the report
    still says so.
    """
    out_dir = Path(out_dir)
    pdf_meta = {"CreationDate": None, "ModDate": None}
    png_meta = {"Software": None}
    if mark:
        fig.suptitle(mark, color="#b00000", fontweight="bold", fontsize=10)
        pdf_meta["Title"] = png_meta["Title"] = mark.replace("—", "-")
    pdf = io.BytesIO()
    fig.savefig(pdf, format="pdf", metadata=pdf_meta)
    atomic_write_bytes(out_dir / f"{name}.pdf", pdf.getvalue())
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=dpi, metadata=png_meta)
    atomic_write_bytes(out_dir / f"{name}.png", png.getvalue())
    return png.getvalue()


def box_figure(groups: dict[str, np.ndarray], *, title: str, ylabel: str,
               zero_line: bool = False, ylim: tuple[float, float] | None = None) -> Figure:
    """Box plots (median, quartiles, 1.5 IQR whiskers) with the mean as a white diamond.

    ``groups``: label -> values, drawn left to right in the given order.
    """
    labels = list(groups)
    fig = _fig(max(4.0, 0.9 * len(labels) + 1.5), 3.8)
    ax = fig.add_subplot()
    data = [np.asarray(groups[k], float) for k in labels]
    ax.boxplot(data, showmeans=True, meanprops=MEAN_MARKER, widths=0.6,
               medianprops=dict(color="black"), flierprops=dict(marker=".", markersize=3, alpha=0.5),
               tick_labels=labels)
    if zero_line:
        ax.axhline(0, color="grey", lw=0.8, ls="--", zorder=0)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    for t in ax.get_xticklabels():
        t.set_rotation(30 if len(labels) > 3 or max(map(len, labels)) > 12 else 0)
        t.set_ha("right" if t.get_rotation() else "center")
    ax.grid(axis="y", alpha=0.3)
    return fig


def preference_figure(table: pd.DataFrame, *, title: str = "Preferences") -> Figure:
    """Diverging bars per comparison: share preferring B (left), equal (centred), A (right)."""
    n = len(table)
    fig = _fig(6.5, 0.55 * n + 1.4)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    a = table["share_a"].to_numpy(float)
    e = table["share_equal"].to_numpy(float)
    b = table["share_b"].to_numpy(float)
    ax.barh(y, -b, left=-e / 2, color=B_COLOR, label="prefer B")
    ax.barh(y, e, left=-e / 2, color=EQ_COLOR, label="equal")
    ax.barh(y, a, left=e / 2, color=A_COLOR, label="prefer A")
    for yi, av, ev, bv in zip(y, a, e, b):
        if bv >= 0.06:
            ax.text(-ev / 2 - bv / 2, yi, f"{bv:.0%}", ha="center", va="center", fontsize=8, color="white")
        if av >= 0.06:
            ax.text(ev / 2 + av / 2, yi, f"{av:.0%}", ha="center", va="center", fontsize=8, color="white")
    ax.set_yticks(y, [f"A={r.system_a}\nB={r.system_b}" for r in table.itertuples()], fontsize=8)
    ax.axvline(0, color="black", lw=0.8)
    lim = max(1.0, float(np.nanmax(np.r_[a + e / 2, b + e / 2]))) if n else 1.0
    ax.set_xlim(-lim, lim)
    ticks = np.linspace(-1, 1, 5)
    ax.set_xticks(ticks, [f"{abs(t):.0%}" for t in ticks])
    ax.set_xlabel("share of answers")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8, frameon=False)
    ax.set_title(title, fontsize=10, pad=22)
    return fig


def significance_figure(matrix: pd.DataFrame, *, title: str = "Significance matrix") -> Figure:
    """Row vs column: green = row significantly better, red = worse, grey = not significant,
    white = not compared."""
    k = len(matrix)
    fig = _fig(max(3.5, 0.5 * k + 2.2), max(3.0, 0.5 * k + 1.6))
    ax = fig.add_subplot()
    vals = matrix.to_numpy(float)
    code = np.where(np.isnan(vals), 0, vals + 2)  # 0 none, 1 worse, 2 n.s., 3 better
    np.fill_diagonal(code, 0)
    cmap = ListedColormap(["white", B_COLOR, "#e0e0e0", A_COLOR])
    ax.imshow(code, cmap=cmap, vmin=-0.5, vmax=3.5)
    ax.set_xticks(range(k), matrix.columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(k), matrix.index, fontsize=8)
    ax.set_xticks(np.arange(-0.5, k), minor=True)
    ax.set_yticks(np.arange(-0.5, k), minor=True)
    ax.grid(which="minor", color="white", lw=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_title(title + "\n(green: row better, red: row worse, grey: n.s.)", fontsize=9)
    return fig


def forest_figure(table: pd.DataFrame, *, title: str = "Bradley–Terry (Elo scale)",
                  value: str = "elo", low: str = "elo_low", high: str = "elo_high",
                  xlabel: str = "Elo (1000 = average system)") -> Figure:
    """Point estimate and CI per system, best at the top."""
    t = table.sort_values(value, ascending=True)
    fig = _fig(5.5, 0.4 * len(t) + 1.3)
    ax = fig.add_subplot()
    y = np.arange(len(t))
    est = t[value].to_numpy(float)
    lo, hi = t[low].to_numpy(float), t[high].to_numpy(float)
    err = np.vstack([np.where(np.isfinite(lo), est - lo, 0), np.where(np.isfinite(hi), hi - est, 0)])
    ax.errorbar(est, y, xerr=err, fmt="o", color="black", ecolor="#555555", capsize=3)
    ax.set_yticks(y, t["system"], fontsize=8)
    center = 1000.0 if value == "elo" else 0.0
    ax.axvline(center, color="grey", ls="--", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig
