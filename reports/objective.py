"""Objective tables: per-system summaries of ``evalkit score`` metrics, tests across systems, and
whether each metric agrees with people (Kendall tau with the subjective per-system score).

The scores table has one row per clip, a ``system`` column and metric columns; every numeric
column other than identifiers is treated as a metric (columns that are all empty are skipped).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.errors import InputError
from reports import stats as st

#: Values of a metric that all lie within this of each other (relative to their size when that
#: exceeds 1) are numerical noise, not variation: such a metric is not tested (e.g. a bone-length
#: drift of ~1e-14 on rigid skeletons).
NO_VARIANCE_TOL = 1e-9
NO_VARIANCE_NOTE = f"no variance (all values within {NO_VARIANCE_TOL:g} of each other); not tested"


def has_no_variance(values) -> bool:
    """Whether the finite ``values`` all lie within :data:`NO_VARIANCE_TOL` of each other
    (scaled by the largest magnitude when that exceeds 1); True when there are none."""
    x = np.asarray(values, float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return True
    return float(np.ptp(x)) <= NO_VARIANCE_TOL * max(1.0, float(np.max(np.abs(x))))


ID_COLUMNS = {"system", "clip", "file", "path", "item", "source", "participant", "trial", "name",
              "id", "take", "start_frame", "end_frame"}


#: Numeric columns of ``evalkit score`` tables that describe the clip or where something is, not
#: how good it is: described per system, never tested or correlated with people.
BOOKKEEPING_COLUMNS = {"frames", "fps", "duration_s", "height_m", "ground_y", "dropped_frames",
                       "worst_window", "worst_window_start_s", "worst_window_end_s", "worst_start_s",
                       "worst_end_s", "start_s", "end_s", "seed", "n_frames", "sample_rate",
                       "cuts", "copies",  # cuts / copies: how the file is put together (takes, loops)
                       "naturalness_reliability"}  # how far the verdict can be trusted, not motion quality


def is_bookkeeping(column: str) -> bool:
    """Whether a numeric score column is bookkeeping (:data:`BOOKKEEPING_COLUMNS`, or a time
    stamp ``*_start_s`` / ``*_end_s``) rather than a quality metric."""
    c = str(column).lower()
    return c in BOOKKEEPING_COLUMNS or c.endswith(("_start_s", "_end_s"))


def numeric_columns(scores: pd.DataFrame) -> list[str]:
    """Columns of ``scores`` holding numbers (after conversion), excluding identifier columns."""
    out = []
    for c in scores.columns:
        if str(c).lower() in ID_COLUMNS:
            continue
        v = pd.to_numeric(scores[c], errors="coerce")
        raw = scores[c]
        filled = raw.notna() & (raw.astype(str).str.strip() != "")
        if filled.any() and v[filled].notna().all():
            out.append(c)
    return out


def metric_columns(scores: pd.DataFrame) -> list[str]:
    """The quality metrics of ``scores``: numeric columns that are neither identifiers nor
    bookkeeping (:func:`is_bookkeeping`)."""
    return [c for c in numeric_columns(scores) if not is_bookkeeping(c)]


def prepare_scores(scores: pd.DataFrame, source: str | None = None) -> pd.DataFrame:
    """Copy of ``scores`` with the numeric columns converted to floats; checks the ``system``
    column and that there is at least one metric. ``attrs["metrics"]``: the quality metrics
    (tested); ``attrs["bookkeeping"]``: the bookkeeping columns (described only)."""
    if "system" not in scores.columns:
        raise InputError(f"{source or 'scores table'}: needs a 'system' column (one row per clip)")
    numeric = numeric_columns(scores)
    metrics = [c for c in numeric if not is_bookkeeping(c)]
    if not metrics:
        raise InputError(f"{source or 'scores table'}: no numeric metric columns found "
                         f"(columns: {', '.join(map(str, scores.columns))})")
    out = scores.copy()
    out["system"] = out["system"].astype(str)
    for c in numeric:
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    out.attrs["metrics"] = metrics
    out.attrs["bookkeeping"] = [c for c in numeric if is_bookkeeping(c)]
    return out


def metric_summary(scores: pd.DataFrame, metrics: list[str] | None = None) -> pd.DataFrame:
    """Long table: metric, system, n, mean, sd, median, q25, q75 (NaNs ignored)."""
    metrics = metrics or scores.attrs.get("metrics") or metric_columns(scores)
    rows = []
    for m in metrics:
        for system, g in scores.groupby("system", sort=False):
            x = g[m].dropna().to_numpy(float)
            rows.append({"metric": m, "system": system, "n": x.size,
                         "mean": float(x.mean()) if x.size else math.nan,
                         "sd": float(x.std(ddof=1)) if x.size > 1 else math.nan,
                         "median": float(np.median(x)) if x.size else math.nan,
                         "q25": float(np.quantile(x, 0.25)) if x.size else math.nan,
                         "q75": float(np.quantile(x, 0.75)) if x.size else math.nan})
    return pd.DataFrame(rows)


def metric_tests(scores: pd.DataFrame, metrics: list[str] | None = None) -> pd.DataFrame:
    """Per metric: Kruskal–Wallis H test across systems (scipy), epsilon-squared effect size
    H / (n - 1), and Holm-adjusted p across metrics. NaN with fewer than 2 systems with data, and
    for a metric without variance (:func:`has_no_variance`; ``note`` says so, and it is left out
    of the Holm family)."""
    from reports.stats import holm

    metrics = metrics or scores.attrs.get("metrics") or metric_columns(scores)
    rows = []
    for m in metrics:
        groups = [g[m].dropna().to_numpy(float) for _, g in scores.groupby("system", sort=False)]
        groups = [g for g in groups if g.size]
        n = sum(g.size for g in groups)
        h = p = math.nan
        flat = np.concatenate(groups) if groups else np.array([])
        note = NO_VARIANCE_NOTE if flat.size and has_no_variance(flat) else ""
        if len(groups) >= 2 and not note:
            res = stats.kruskal(*groups)
            h, p = float(res.statistic), float(res.pvalue)
        rows.append({"metric": m, "systems": len(groups), "n": n, "H": h, "p": p,
                     "epsilon2": h / (n - 1) if n > 1 and np.isfinite(h) else math.nan, "note": note})
    df = pd.DataFrame(rows, columns=["metric", "systems", "n", "H", "p", "epsilon2", "note"])
    df["p_holm"] = holm(df["p"].to_numpy()) if len(df) else []
    return df


def metric_agreement(scores: pd.DataFrame, subjective: pd.Series, *, confidence: float = 0.95,
                     metrics: list[str] | None = None) -> pd.DataFrame:
    """Kendall tau-b between each metric's per-system mean and ``subjective`` (indexed by system:
    Bradley–Terry log-strength or mean rating, higher = better), over systems present in both.

    A metric where lower is better (e.g. foot skating) agrees with people when tau is negative.
    CI: Fisher z with SE sqrt(0.437/(n-4)) (NaN for n <= 4 systems). A metric without variance
    (:func:`has_no_variance`) gets NaN and a ``note``: ranking its noise would be meaningless.
    """
    metrics = metrics or scores.attrs.get("metrics") or metric_columns(scores)
    means = scores.groupby("system")[metrics].mean()
    common = [s for s in subjective.index if s in means.index]
    rows = []
    for m in metrics:
        x = means.loc[common, m].to_numpy(float)
        r = st.kendall_tau_ci(x, subjective.loc[common].to_numpy(float), confidence)
        note = ""
        if has_no_variance(scores[m]):
            note = NO_VARIANCE_NOTE
            r.update(tau=math.nan, ci_low=math.nan, ci_high=math.nan, p=math.nan)
        rows.append({"metric": m, "systems": r["n"], "tau": r["tau"], "ci_low": r["ci_low"],
                     "ci_high": r["ci_high"], "p": r["p"], "note": note})
    return pd.DataFrame(rows, columns=["metric", "systems", "tau", "ci_low", "ci_high", "p", "note"])
