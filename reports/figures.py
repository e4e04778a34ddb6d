"""Figures for papers (matplotlib, object API with the Agg canvas: no pyplot global state).

Each ``*_figure`` function returns a :class:`matplotlib.figure.Figure` sized for a journal column
(:data:`COLUMN_IN` = 3.4 in wide, 8 pt text) or, where it needs the room, the full page width
(:data:`PAGE_IN`); :func:`save_figure` writes it as vector PDF (TrueType fonts embedded, as
journals ask) and 200-dpi PNG (atomically,
without time stamps so outputs are reproducible) and returns the PNG bytes for the HTML report.

One system order and one colour per system across every figure of a report: the report builds a
:class:`SystemStyle` once (:func:`system_style`) and passes it to each figure. Every bar or
interval carries its n; comparisons resting on fewer than :data:`MIN_RATERS` raters are marked
with a dagger (†) and explained in the caption.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reports.io import atomic_write_bytes

#: Width of one journal column and of a full page (inches).
COLUMN_IN = 3.4
PAGE_IN = 7.0
FONT_PT = 8
#: Comparisons with fewer raters than this are marked in the figures.
MIN_RATERS = 5
FEW_MARK = "†"

A_COLOR, EQ_COLOR, B_COLOR = "#1b9e77", "#bdbdbd", "#d95f02"
NS_COLOR, FEW_COLOR = "#e6e6e6", "#ffffff"
#: Okabe–Ito colour-blind-safe palette, then tab10's remaining hues for long system lists.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#B8A000",
           "#8c564b", "#7f7f7f", "#bcbd22", "#17becf", "#9467bd", "#e377c2")
MEAN_MARKER = dict(marker="D", markerfacecolor="white", markeredgecolor="black", markersize=4)
_RC = {"font.size": FONT_PT, "axes.titlesize": FONT_PT + 1, "axes.labelsize": FONT_PT,
       "xtick.labelsize": FONT_PT - 1, "ytick.labelsize": FONT_PT - 1, "legend.fontsize": FONT_PT - 1,
       "pdf.fonttype": 42}


@dataclass(frozen=True)
class SystemStyle:
    """The report-wide system order (best first) and a colour per system."""

    order: tuple[str, ...]
    colors: dict

    def color(self, system: str) -> str:
        return self.colors.get(system, "#555555")

    def sort(self, systems) -> list[str]:
        rank = {s: i for i, s in enumerate(self.order)}
        return sorted(systems, key=lambda s: (rank.get(s, len(rank)), str(s)))


def system_style(order) -> SystemStyle:
    """Colours assigned in ``order`` (the report's primary ranking, best first)."""
    order = tuple(dict.fromkeys(str(s) for s in order))
    return SystemStyle(order, {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(order)})


def _paper(fn):
    """Run a figure function with paper font sizes (matplotlib reads them when each text is made;
    ``rc_context`` restores the previous settings afterwards, so no global state is left)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        import matplotlib as mpl

        with mpl.rc_context(_RC):
            return fn(*args, **kwargs)

    return wrapper


def _fig(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _style(ax) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.tick_params(labelsize=FONT_PT - 1)


def save_figure(fig: Figure, out_dir: str | Path, name: str, *, dpi: int = 200,
                mark: str | None = None) -> bytes:
    """Write ``name.pdf`` (vector) and ``name.png`` under ``out_dir``; return the PNG bytes.

    ``mark``: a warning drawn as the figure's top title (bold, red) and stored as the document
    title of both files (e.g. that the data are simulated), so a figure copied out of the report
    still says so.
    """
    import matplotlib as mpl

    out_dir = Path(out_dir)
    pdf_meta = {"CreationDate": None, "ModDate": None}
    png_meta = {"Software": None}
    if mark:
        fig.suptitle(mark, color="#b00000", fontweight="bold", fontsize=FONT_PT)
        pdf_meta["Title"] = png_meta["Title"] = mark.replace("—", "-")
    with mpl.rc_context(_RC):
        pdf = io.BytesIO()
        fig.savefig(pdf, format="pdf", metadata=pdf_meta)
        # the constrained layout was solved for the PDF; keep it for the PNG instead of solving
        # it again (a third of the drawing time of a text-heavy figure)
        fig.set_layout_engine("none")
        png = io.BytesIO()
        fig.savefig(png, format="png", dpi=dpi, metadata=png_meta)
    atomic_write_bytes(out_dir / f"{name}.pdf", pdf.getvalue())
    atomic_write_bytes(out_dir / f"{name}.png", png.getvalue())
    return png.getvalue()


@_paper
def box_figure(groups: dict[str, np.ndarray], *, title: str, ylabel: str,
               ylim: tuple[float, float] | None = None, style: SystemStyle | None = None) -> Figure:
    """Horizontal box plots per system (median, quartiles, 1.5 IQR whiskers), the mean as a white
    diamond, n at the right; systems top to bottom in the given order, coloured by ``style``.
    For at most a dozen systems (absolute ratings per system, one metric)."""
    labels = list(groups)
    k = len(labels)
    fig = _fig(COLUMN_IN, 0.28 * k + 0.9)
    ax = fig.add_subplot()
    data = [np.asarray(groups[s], float) for s in labels]
    data = [d[np.isfinite(d)] for d in data]
    pos = np.arange(k)[::-1]
    bp = ax.boxplot(data, positions=pos, orientation="horizontal", showmeans=True, meanprops=MEAN_MARKER,
                    widths=0.6, patch_artist=True, medianprops=dict(color="black", lw=1),
                    flierprops=dict(marker=".", markersize=2, alpha=0.5))
    for patch, s in zip(bp["boxes"], labels):
        patch.set_facecolor(style.color(s) if style else "#9ecae1")
        patch.set_alpha(0.55)
    ax.set_yticks(pos, labels)
    if ylim:
        ax.set_xlim(*ylim)
    trans = ax.get_yaxis_transform()
    for p, d in zip(pos, data):
        ax.text(1.01, p, f"n={d.size}", transform=trans, va="center", ha="left", fontsize=FONT_PT - 2)
    ax.set_xlabel(ylabel)
    ax.set_title(title, loc="left")
    ax.grid(axis="x", alpha=0.3)
    _style(ax)
    return fig


@_paper
def metric_facets(scores: pd.DataFrame, metrics: list[str], *, style: SystemStyle,
                  titles: dict[str, str] | None = None, ncols: int = 2,
                  confidence: float | None = None) -> Figure:
    """Small multiples: one panel per metric, a strip of clip values per system (jittered dots,
    mean with a bar and, with ``confidence``, its Student-t interval over clips), the same system
    colours and order in every panel; ``titles`` (name in words with unit) also label each
    panel's x axis; page width."""
    from scipy import stats as sps

    systems = style.sort(scores["system"].unique())
    n = len(metrics)
    ncols = min(ncols, n)
    nrows = int(np.ceil(n / ncols))
    k = len(systems)
    fig = _fig(PAGE_IN if ncols > 1 else COLUMN_IN, nrows * (0.22 * k + 0.8))
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    rng = np.random.default_rng(0)
    for ax, m in zip(axes, metrics):
        for i, s in enumerate(systems):
            y = k - 1 - i
            x = scores.loc[scores["system"] == s, m].to_numpy(float)
            x = x[np.isfinite(x)]
            ax.scatter(x, y + rng.uniform(-0.18, 0.18, x.size), s=6, color=style.color(s), alpha=0.6, lw=0)
            if x.size:
                ax.plot([x.mean()] * 2, [y - 0.3, y + 0.3], color="black", lw=1.5)
            if confidence and x.size > 1:
                half = sps.t.ppf(0.5 + confidence / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
                ax.errorbar(x.mean(), y, xerr=half, fmt="none", ecolor="black", elinewidth=1, capsize=2)
            ax.text(1.01, y, f"n={x.size}", transform=ax.get_yaxis_transform(), va="center",
                    fontsize=FONT_PT - 2)
        ax.set_yticks(np.arange(k)[::-1], systems)
        ax.set_title((titles or {}).get(m, m), loc="left", fontsize=FONT_PT)
        ax.set_xlabel((titles or {}).get(m, m), fontsize=FONT_PT - 1)
        ax.grid(axis="x", alpha=0.3)
        _style(ax)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig


@_paper
def comparison_figure(table: pd.DataFrame, *, title: str, xlabel: str, lim: tuple[float, float],
                      low: str = "cl_low", high: str = "cl_high", style: SystemStyle | None = None) -> Figure:
    """One row per comparison (sorted by mean): mean with its interval, n and raters at the right,
    † when fewer than :data:`MIN_RATERS` raters; replaces one box plot per comparison."""
    t = table.sort_values("mean", kind="stable").reset_index(drop=True)
    m = len(t)
    fig = _fig(COLUMN_IN, 0.17 * m + 0.9)
    ax = fig.add_subplot()
    y = np.arange(m)
    est = t["mean"].to_numpy(float)
    lo, hi = t[low].to_numpy(float), t[high].to_numpy(float)
    err = np.vstack([np.where(np.isfinite(lo), est - lo, 0), np.where(np.isfinite(hi), hi - est, 0)])
    few = t["n_participants"].to_numpy() < MIN_RATERS
    color = np.where(few, "#999999", "black")
    for yi, e, el, eh, c in zip(y, est, err[0], err[1], color):
        ax.errorbar(e, yi, xerr=[[el], [eh]], fmt="o", color=c, ms=3, ecolor=c, elinewidth=1, capsize=1.5)
    labels = [f"{a} vs {b}" + (f" {FEW_MARK}" if f else "") for a, b, f in zip(t["system_a"], t["system_b"], few)]
    ax.set_yticks(y, labels, fontsize=FONT_PT - 2 if m > 15 else FONT_PT - 1)
    trans = ax.get_yaxis_transform()
    for yi, n, r in zip(y, t["n"], t["n_participants"]):
        ax.text(1.01, yi, f"{n}/{r}", transform=trans, va="center", fontsize=FONT_PT - 2)
    ax.text(1.01, m - 0.2, "n/raters", transform=trans, va="bottom", fontsize=FONT_PT - 2)
    ax.axvline(0, color="grey", ls="--", lw=0.8)
    ax.set_xlim(*lim)
    ax.set_ylim(-0.7, m - 0.3)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left")
    ax.grid(axis="x", alpha=0.3)
    _style(ax)
    return fig


@_paper
def preference_figure(table: pd.DataFrame, *, title: str = "Preferences") -> Figure:
    """Diverging bars per comparison: share preferring B (left), equal (centred), A (right), with
    n (answers/raters) at the right of every bar and † for fewer than :data:`MIN_RATERS` raters."""
    n = len(table)
    fig = _fig(COLUMN_IN if n <= 30 else PAGE_IN, 0.2 * n + 1.0)
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    a = table["share_a"].to_numpy(float)
    e = table["share_equal"].to_numpy(float)
    b = table["share_b"].to_numpy(float)
    ax.barh(y, -b, left=-e / 2, color=B_COLOR, label="prefer B", height=0.75)
    ax.barh(y, e, left=-e / 2, color=EQ_COLOR, label="equal", height=0.75)
    ax.barh(y, a, left=e / 2, color=A_COLOR, label="prefer A", height=0.75)
    small = FONT_PT - 2
    for yi, av, ev, bv in zip(y, a, e, b):
        if bv >= 0.15:
            ax.text(-ev / 2 - bv / 2, yi, f"{bv:.0%}", ha="center", va="center", fontsize=small, color="white")
        if av >= 0.15:
            ax.text(ev / 2 + av / 2, yi, f"{av:.0%}", ha="center", va="center", fontsize=small, color="white")
    raters = table["n_participants"].to_numpy() if "n_participants" in table else np.full(n, MIN_RATERS)
    few = raters < MIN_RATERS
    ax.set_yticks(y, [f"{r.system_a} vs {r.system_b}" + (f" {FEW_MARK}" if f else "")
                      for r, f in zip(table.itertuples(), few)], fontsize=small if n > 15 else FONT_PT - 1)
    trans = ax.get_yaxis_transform()
    for yi, nn, rr in zip(y, table["n"], raters):
        ax.text(1.01, yi, f"{nn}/{rr}", transform=trans, va="center", fontsize=small)
    ax.text(1.01, y.max() + 0.6 if n else 0, "n/raters", transform=trans, va="bottom", fontsize=small)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlim(-1, 1)
    ticks = np.linspace(-1, 1, 5)
    ax.set_xticks(ticks, [f"{abs(t):.0%}" for t in ticks])
    ax.set_xlabel("share of answers (B ← → A)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, handlelength=1)
    ax.set_title(title, loc="left", pad=16)
    _style(ax)
    return fig


@_paper
def significance_figure(matrix: pd.DataFrame, *, title: str = "Significance matrix",
                        what: str = "") -> Figure:
    """Row vs column: green = row significantly better, orange = worse, grey = not significant,
    white with a dot = too few answers to test, blank = not compared. ``what`` names the analysis
    the cells come from (printed under the matrix)."""
    from reports.pairwise import TOO_FEW

    k = len(matrix)
    side = min(PAGE_IN, max(COLUMN_IN, 0.3 * k + 1.4))
    fig = _fig(side, side * 0.9 + 0.3)
    ax = fig.add_subplot()
    vals = matrix.to_numpy(float)
    code = np.full(vals.shape, 0.0)  # 0 blank, 1 worse, 2 n.s., 3 better, 4 too few
    code[vals == -1] = 1
    code[vals == 0] = 2
    code[vals == 1] = 3
    code[vals == TOO_FEW] = 4
    np.fill_diagonal(code, 0)
    cmap = ListedColormap(["white", B_COLOR, NS_COLOR, A_COLOR, FEW_COLOR])
    ax.imshow(code, cmap=cmap, vmin=-0.5, vmax=4.5)
    for i, j in zip(*np.nonzero(code == 4)):
        ax.text(j, i, "·", ha="center", va="center", fontsize=FONT_PT, color="#666666")
    ax.set_xticks(range(k), matrix.columns, rotation=45, ha="right")
    ax.set_yticks(range(k), matrix.index)
    ax.set_xticks(np.arange(-0.5, k), minor=True)
    ax.set_yticks(np.arange(-0.5, k), minor=True)
    ax.grid(which="minor", color="#cccccc", lw=0.6)
    ax.tick_params(which="minor", length=0)
    handles = [Patch(color=A_COLOR, label="row better"), Patch(color=B_COLOR, label="row worse"),
               Patch(color=NS_COLOR, label="n.s.")]
    if (code == 4).any():
        handles.append(Patch(facecolor="white", edgecolor="#999999", label="· too few to test"))
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), frameon=False,
               handlelength=1, columnspacing=0.8)
    ax.set_title(title + (f"\n{what}" if what else ""), loc="left", fontsize=FONT_PT)
    return fig


@_paper
def forest_figure(table: pd.DataFrame, *, title: str = "Bradley–Terry (Elo scale)",
                  value: str = "elo", low: str = "elo_low", high: str = "elo_high",
                  xlabel: str = "Elo (1000 = average system)", style: SystemStyle | None = None,
                  n_col: str | None = "answers") -> Figure:
    """Point estimate and interval per system, best at the top, in the system's colour, n at the
    right."""
    t = table.sort_values(value, ascending=True)
    fig = _fig(COLUMN_IN, 0.24 * len(t) + 0.8)
    ax = fig.add_subplot()
    y = np.arange(len(t))
    est = t[value].to_numpy(float)
    lo, hi = t[low].to_numpy(float), t[high].to_numpy(float)
    for yi, s, e, l, h in zip(y, t["system"], est, lo, hi):
        c = style.color(s) if style else "black"
        err = [[e - l if np.isfinite(l) else 0], [h - e if np.isfinite(h) else 0]]
        ax.errorbar(e, yi, xerr=err, fmt="o", color=c, ecolor=c, ms=4, capsize=2, elinewidth=1.2)
    ax.set_yticks(y, t["system"])
    if n_col and n_col in t:
        trans = ax.get_yaxis_transform()
        for yi, nn in zip(y, t[n_col]):
            ax.text(1.01, yi, f"n={nn}", transform=trans, va="center", fontsize=FONT_PT - 2)
    center = 1000.0 if value == "elo" else 0.0
    ax.axvline(center, color="grey", ls="--", lw=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left")
    ax.grid(axis="x", alpha=0.3)
    _style(ax)
    return fig
