"""Which automatic metric agrees with your raters: clip-pair agreement, rater ceiling, system τ.

A *rated pair* is one rater's preference between two clips of the same item: a pairwise answer
with a non-zero score (``score > 0``: ``system_a``'s clip preferred), or, on an absolute scale,
two clips of one item that the same rater rated differently. Answers of "about the same" (and
equal absolute ratings) state no preference and are left out (counted as ``ties``).

For each metric with a direction of "better" in the metric registry
(:mod:`evalkit.features.registry`; ``lower`` or ``higher``), the metric *prefers* the clip with
the better value (compared at the precision the registry shows it with: smaller differences are
numerical noise, a tie); **agreement** is the share of rated pairs where it prefers the clip the rater
preferred (a metric tie counts one half, so a metric that cannot tell the clips apart scores
0.5, as does chance). The interval is a percentile bootstrap over raters (raters resampled with
replacement, each with all of their rated pairs), so it reflects how much the answer depends on
who was asked.

The **raters' agreement** is the share of pairs of answers by two different raters on the same
clip pair that prefer the same clip. It is the level a metric reaches by judging like one more
rater, the reference a metric is read against ("ceiling" in the report); it is not a hard bound
(a metric that always picks the raters' majority can exceed it when raters are noisy).

The **system-level Kendall τ** (``scipy.stats.kendalltau``, tau-b) between each metric's
per-system mean, signed so that positive = the metric's better systems are the raters' better
ones, and the raters' per-system strength is given only with at least :data:`MIN_TAU_SYSTEMS`
systems: with fewer, even a perfect order has a two-sided p above 0.05 (τ = 1 over 4 systems:
p = 0.083), so a τ there means nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reports.table import SCALES, has_flag

#: System-level Kendall τ is computed only with at least this many systems.
MIN_TAU_SYSTEMS = 5
#: Metrics shown in the figure at most (those that agree most; every metric is in the table).
MAX_FIGURE_METRICS = 24

COLUMNS = ("metric", "better", "pairs", "raters", "agreement", "ci_low", "ci_high", "metric_ties",
           "tau", "tau_p", "systems", "note")


@dataclass
class MetricAgreement:
    """The result of :func:`metric_agreement`.

    ``table``: one row per metric (:data:`COLUMNS`; ``agreement`` and its interval are shares
    0–1, ``pairs`` = rated pairs with both clips scored, ``metric_ties`` = pairs the metric
    scores equal, ``tau``/``tau_p`` NaN below :data:`MIN_TAU_SYSTEMS` systems, ``note`` why a
    value is missing). ``raters``: the raters' own agreement: dict with ``agreement``,
    ``ci_low``, ``ci_high`` (shares) and ``pairs`` (pairs of answers by two raters on one clip
    pair). ``pairs``: the rated pairs (participant, item, preferred, other). ``ties``: answers
    without a preference, left out. ``systems``: systems rated and scored.
    """

    table: pd.DataFrame
    raters: dict
    pairs: pd.DataFrame
    ties: int
    systems: list[str]
    confidence: float
    n_boot: int


def rated_pairs(ratings: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """One row per rater preference between two clips of one item; and the number of ties.

    Args:
        ratings: long-format ratings (:mod:`reports.table`); check trials (flag ``check``) are
            left out. Pairwise rows give one pair each, absolute rows one pair per two systems
            the same rater rated on the same item.

    Returns:
        ``(pairs, ties)``: ``pairs`` has columns ``participant``, ``item``, ``preferred``,
        ``other`` (system names; the clip of that system for that item).
    """
    r = ratings[~has_flag(ratings["flags"], "check")] if "flags" in ratings else ratings
    kinds = r["scale"].map(lambda s: SCALES[s].kind if s in SCALES else "pairwise")
    rows, ties = [], 0
    pw = r[kinds == "pairwise"]
    if len(pw):
        s = pw["score"].to_numpy(float)
        ties += int((s == 0).sum())
        keep = s != 0
        a, b = pw["system_a"].to_numpy(object)[keep], pw["system_b"].to_numpy(object)[keep]
        win = s[keep] > 0
        rows.append(pd.DataFrame({"participant": pw["participant"].to_numpy(object)[keep],
                                  "item": pw["item"].to_numpy(object)[keep],
                                  "preferred": np.where(win, a, b), "other": np.where(win, b, a)}))
    ab = r[kinds == "absolute"]
    if len(ab):
        mean = ab.groupby(["participant", "item", "system_a"], sort=False)["score"].mean().reset_index()
        m = mean.merge(mean, on=["participant", "item"], suffixes=("_x", "_y"))
        m = m[m["system_a_x"] < m["system_a_y"]]
        d = (m["score_x"] - m["score_y"]).to_numpy(float)
        ties += int((d == 0).sum())
        m, d = m[d != 0], d[d != 0]
        rows.append(pd.DataFrame({"participant": m["participant"].to_numpy(object),
                                  "item": m["item"].to_numpy(object),
                                  "preferred": np.where(d > 0, m["system_a_x"], m["system_a_y"]),
                                  "other": np.where(d > 0, m["system_a_y"], m["system_a_x"])}))
    cols = ["participant", "item", "preferred", "other"]
    out = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)
    out = out.astype({c: str for c in cols})
    return out[cols], ties


def _boot_weights(n_raters: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, n_raters) multiplicities of raters drawn with replacement."""
    return rng.multinomial(n_raters, np.full(n_raters, 1.0 / n_raters), size=n_boot).astype(float)


def _interval(boot: np.ndarray, confidence: float) -> tuple[float, float]:
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return math.nan, math.nan
    a = (1 - confidence) / 2
    return float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))


def rater_agreement(pairs: pd.DataFrame, *, n_boot: int = 2000, confidence: float = 0.95,
                    seed: int = 0) -> dict:
    """Share of pairs of answers by two different raters on the same clip pair that prefer the
    same clip, with a percentile bootstrap interval over raters.

    Args:
        pairs: :func:`rated_pairs` output.

    Returns:
        ``{"agreement", "ci_low", "ci_high"}`` (shares 0–1, NaN without two raters on a clip
        pair) and ``"pairs"`` (answer pairs compared).
    """
    raters = sorted(pairs["participant"].unique())
    idx = {r: i for i, r in enumerate(raters)}
    k = len(raters)
    agree = np.zeros((k, k))
    total = np.zeros((k, k))
    pref, other = pairs["preferred"].to_numpy(str), pairs["other"].to_numpy(str)
    first = pref < other  # preference towards the system first in sort order
    lo_sys, hi_sys = np.where(first, pref, other), np.where(first, other, pref)
    key = pd.DataFrame({"r": pairs["participant"].map(idx).to_numpy(int), "item": pairs["item"].to_numpy(str),
                        "a": lo_sys, "b": hi_sys, "first": first})
    for _, g in key.groupby(["item", "a", "b"], sort=False):
        if g["r"].nunique() < 2:
            continue
        per = g.groupby("r")["first"].agg(["sum", "count"])
        r_i = per.index.to_numpy(int)
        f = per["sum"].to_numpy(float)
        c = per["count"].to_numpy(float)
        same = np.outer(f, f) + np.outer(c - f, c - f)
        agree[np.ix_(r_i, r_i)] += same
        total[np.ix_(r_i, r_i)] += np.outer(c, c)
    np.fill_diagonal(agree, 0.0)
    np.fill_diagonal(total, 0.0)
    n = float(total.sum() / 2)
    if n == 0:
        return {"agreement": math.nan, "ci_low": math.nan, "ci_high": math.nan, "pairs": 0}
    est = float(agree.sum() / total.sum())
    w = _boot_weights(k, n_boot, np.random.default_rng(seed))
    num = np.einsum("bi,ij,bj->b", w, agree, w)
    den = np.einsum("bi,ij,bj->b", w, total, w)
    boot = np.divide(num, den, out=np.full(n_boot, np.nan), where=den > 0)
    lo, hi = _interval(boot, confidence)
    return {"agreement": est, "ci_low": lo, "ci_high": hi, "pairs": int(n)}


def _direction(metric: str, directions: dict[str, str] | None) -> tuple[str, str]:
    """(``lower``/``higher``/``""``, note) for a metric: ``directions`` first, then the registry."""
    from evalkit.features.registry import metric_info

    if directions and metric in directions:
        return directions[metric], ""
    info = metric_info(metric)
    if info is None:
        return "", "direction of better unknown (not in the metric registry)"
    if info.bookkeeping:
        return "", "describes the clip, not its quality"
    if info.better not in ("lower", "higher"):
        return "", "no direction of better (compare with natural motion)"
    return info.better, ""


def _at_precision(metric: str, values: np.ndarray) -> np.ndarray:
    """Values rounded to the precision the registry shows them with (differences below it are
    numerical noise and count as ties); unregistered columns unchanged."""
    from evalkit.features.registry import metric_info

    info = metric_info(metric)
    return values if info is None else np.round(values * info.factor, info.decimals)


def metric_agreement(ratings: pd.DataFrame, scores: pd.DataFrame, metrics: list[str], *,
                     strength: pd.Series | None = None, directions: dict[str, str] | None = None,
                     n_boot: int = 2000, confidence: float = 0.95, seed: int = 0) -> MetricAgreement:
    """Per metric, the share of rated pairs where it prefers the clip the raters preferred.

    Args:
        ratings: long-format ratings of ONE study (validated; screened as the report analyses
            them).
        scores: one row per clip with ``system``, ``item`` and the metric columns (values in
            their stored units; a clip scored twice is averaged).
        metrics: the metric columns to judge.
        strength: the raters' per-system strength (higher = preferred, e.g. Bradley–Terry
            log-strengths), indexed by system; used for the system-level Kendall τ.
        directions: metric -> ``lower``/``higher``, overriding the registry (for columns it
            does not know).
        n_boot: bootstrap rounds over raters; ``seed``: their random seed.

    Returns:
        :class:`MetricAgreement`.
    """
    from scipy import stats

    pairs, ties = rated_pairs(ratings)
    clip = scores.groupby(["item", "system"])[metrics].mean() if len(scores) else None
    systems = sorted(set(pairs["preferred"]) | set(pairs["other"]))
    scored_systems = set(scores["system"].astype(str)) if "system" in scores else set()
    systems = [s for s in systems if s in scored_systems]
    raters = sorted(pairs["participant"].unique())
    ridx = pairs["participant"].map({r: i for i, r in enumerate(raters)}).to_numpy(int)
    w = _boot_weights(len(raters), n_boot, np.random.default_rng(seed)) if raters else np.zeros((n_boot, 0))
    rows = []
    for m in metrics:
        better, note = _direction(m, directions)
        row = dict.fromkeys(COLUMNS, math.nan)
        row.update(metric=m, better=better or "–", pairs=0, raters=0, metric_ties=0, systems=len(systems), note=note)
        if better and clip is not None:
            va = clip[m].reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["preferred"]])).to_numpy(float)
            vb = clip[m].reindex(pd.MultiIndex.from_arrays([pairs["item"], pairs["other"]])).to_numpy(float)
            ok = np.isfinite(va) & np.isfinite(vb)
            va, vb = _at_precision(m, va), _at_precision(m, vb)
            if better == "lower":
                va, vb = -va, -vb
            hit = np.where(va > vb, 1.0, np.where(va == vb, 0.5, 0.0))[ok]
            r_ok = ridx[ok]
            row.update(pairs=int(ok.sum()), raters=int(np.unique(r_ok).size),
                       metric_ties=int((va[ok] == vb[ok]).sum()))
            if ok.any():
                row["agreement"] = float(hit.mean())
                per_hit = np.bincount(r_ok, weights=hit, minlength=len(raters))
                per_n = np.bincount(r_ok, minlength=len(raters)).astype(float)
                num, den = w @ per_hit, w @ per_n
                boot = np.divide(num, den, out=np.full(n_boot, np.nan), where=den > 0)
                row["ci_low"], row["ci_high"] = _interval(boot, confidence)
            elif not note:
                row["note"] = "no rated pair has both clips scored"
            if strength is not None:
                common = [s for s in strength.index if s in set(scores["system"])]
                means = scores.groupby("system")[m].mean().reindex(common).to_numpy(float)
                good = np.isfinite(means)
                row["systems"] = int(good.sum())
                if good.sum() < MIN_TAU_SYSTEMS:
                    row["note"] = (row["note"] + "; " if row["note"] else "") + \
                        f"τ needs ≥ {MIN_TAU_SYSTEMS} systems ({int(good.sum())} here)"
                elif np.ptp(means[good]) == 0:
                    row["note"] = (row["note"] + "; " if row["note"] else "") + "same mean in every system"
                else:
                    sign = -1.0 if better == "lower" else 1.0
                    t = stats.kendalltau(sign * means[good], strength.loc[common].to_numpy(float)[good])
                    row["tau"], row["tau_p"] = float(t.statistic), float(t.pvalue)
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    return MetricAgreement(table=table, raters=rater_agreement(pairs, n_boot=n_boot, confidence=confidence,
                                                               seed=seed + 1),
                           pairs=pairs, ties=ties, systems=systems, confidence=confidence, n_boot=n_boot)


def agreement_figure(result: MetricAgreement, labels: dict[str, str] | None = None):
    """Agreement share per metric (dot, bootstrap interval over raters, n pairs), best at the top,
    with chance (0.5, dotted) and the raters' own agreement (dashed line, grey band = its
    interval). Metrics without an agreement (no direction, no scored pairs) are left out.

    Returns a :class:`matplotlib.figure.Figure` (object API, no pyplot state).
    """
    import matplotlib as mpl

    from reports import figures as fg

    t = result.table[np.isfinite(result.table["agreement"].to_numpy(float))]
    t = t.sort_values(["agreement", "pairs"], ascending=[True, True]).tail(MAX_FIGURE_METRICS)
    labels = labels or {}
    with mpl.rc_context(fg._RC):
        fig = fg._fig(fg.PAGE_IN * 0.75, 0.22 * max(len(t), 1) + 1.1)
        ax = fig.add_subplot()
        y = np.arange(len(t))
        rat = result.raters
        if np.isfinite(rat["agreement"]):
            if np.isfinite(rat["ci_low"]):
                ax.axvspan(rat["ci_low"], rat["ci_high"], color="#d9d9d9", alpha=0.6, lw=0)
            ax.axvline(rat["agreement"], color="#444444", ls="--", lw=1.0,
                       label=f"raters' own agreement ({rat['agreement']:.2f}, {rat['pairs']} answer pairs)")
        ax.axvline(0.5, color="grey", ls=":", lw=0.9, label="chance (0.5)")
        est = t["agreement"].to_numpy(float)
        lo, hi = t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float)
        err = np.vstack([np.where(np.isfinite(lo), est - lo, 0), np.where(np.isfinite(hi), hi - est, 0)])
        ax.errorbar(est, y, xerr=err, fmt="o", color="#0072B2", ms=4, capsize=2, elinewidth=1.2)
        ax.set_yticks(y, [labels.get(m, m) for m in t["metric"]])
        trans = ax.get_yaxis_transform()
        for yi, n in zip(y, t["pairs"]):
            ax.text(1.01, yi, f"n={int(n)}", transform=trans, va="center", fontsize=fg.FONT_PT - 2)
        ax.set_xlim(0, 1)
        ax.set_xlabel("agreement (share of rated clip pairs)")
        ax.set_title("Agreement with the raters", loc="left")
        ax.grid(axis="x", alpha=0.3)
        fig.legend(loc="outside lower center", ncols=2, fontsize=fg.FONT_PT - 2, frameon=False)
        fg._style(ax)
    return fig
