"""Absolute scales (MUSHRA 0-100, ACR 1-5, Likert): per-system summaries and tests.

Per system: n, mean with Student-t and participant-bootstrap CIs, median with a participant-
bootstrap CI. Across systems: Friedman test on complete blocks (one block = one participant's
ratings of one item, i.e. one MUSHRA screen), then pairwise Wilcoxon signed-rank tests on the
paired block ratings with Holm correction. Post-screening by hidden reference (ITU-R BS.1534-3:
exclude assessors who rate the hidden reference below 90 for more than 15 % of the items).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pandas as pd
from scipy import stats

from reports import stats as st

REFERENCE_PATTERN = re.compile(r"^(hidden[ _-]?)?ref(erence)?$", re.I)
ANCHOR_PATTERN = re.compile(r"anchor", re.I)


def find_reference(systems, name: str | None = None) -> str | None:
    """The hidden-reference system: ``name`` if given (must exist), else one called
    reference/ref/hidden_reference (any case), else None."""
    systems = list(systems)
    if name:
        return name if name in systems else None
    return next((s for s in systems if REFERENCE_PATTERN.match(str(s).strip())), None)


def find_anchors(systems) -> list[str]:
    """Systems whose name contains 'anchor' (any case)."""
    return [s for s in systems if ANCHOR_PATTERN.search(str(s))]


def _weighted_median_boot(values: np.ndarray, pcode: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Median of the resampled data for each bootstrap round (rows of ``draws`` (B, P) count how
    often each participant was drawn). Lower weighted median; (B,)."""
    order = np.argsort(values, kind="stable")
    v, pc = values[order], pcode[order]
    w = draws[:, pc]  # (B, n)
    cum = np.cumsum(w, axis=1)
    half = cum[:, -1:] / 2.0
    idx = (cum < half).sum(axis=1)
    return v[np.minimum(idx, v.size - 1)]


def system_summary(ratings: pd.DataFrame, *, confidence: float = 0.95, n_boot: int = 2000,
                   seed: int = 0) -> pd.DataFrame:
    """One row per system (best mean first): n, participants, mean, sd, cluster-robust t CI over
    raters (``cl_low/cl_high``, the default), Student-t CI treating ratings as independent
    (``t_low/t_high``), participant-bootstrap CI of the mean, median and its bootstrap CI."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, g in ratings.groupby("system_a", sort=False):
        x = g["score"].to_numpy(float)
        parts, pcode = np.unique(g["participant"].astype(str).to_numpy(), return_inverse=True)
        m, lo, hi = st.t_ci(x, confidence)
        _, clo, chi = st.cluster_t_ci(x, pcode, confidence)
        P = len(parts)
        if P >= 2 and n_boot > 0:
            draws = rng.multinomial(P, np.full(P, 1.0 / P), size=n_boot).astype(float)
            sums = np.bincount(pcode, weights=x, minlength=P)
            cnt = np.bincount(pcode, minlength=P).astype(float)
            bmean = (draws @ sums) / (draws @ cnt)
            bmed = _weighted_median_boot(x, pcode, draws)
        else:
            bmean = bmed = np.array([np.nan])
        blo, bhi = st.percentile_ci(bmean, confidence)
        mlo, mhi = st.percentile_ci(bmed, confidence)
        rows.append({"system": system, "n": x.size, "n_participants": P, "mean": m,
                     "sd": float(x.std(ddof=1)) if x.size > 1 else math.nan,
                     "cl_low": clo, "cl_high": chi, "t_low": lo, "t_high": hi,
                     "boot_low": blo, "boot_high": bhi,
                     "median": float(np.median(x)), "median_low": mlo, "median_high": mhi})
    df = pd.DataFrame(rows)
    return df.sort_values("mean", ascending=False, kind="stable").reset_index(drop=True)


def block_matrix(ratings: pd.DataFrame, systems: list[str] | None = None) -> pd.DataFrame:
    """Ratings as blocks x systems (block = participant | item; mean of repeats); all blocks,
    NaN where a system was not rated in that block."""
    df = ratings.assign(block=ratings["participant"].astype(str) + " | " + ratings["item"].astype(str))
    wide = df.pivot_table(index="block", columns="system_a", values="score", aggfunc="mean")
    if systems is not None:
        wide = wide.reindex(columns=systems)
    return wide


def friedman(ratings: pd.DataFrame, systems: list[str] | None = None) -> dict:
    """Friedman test across systems on complete blocks (scipy ``friedmanchisquare``).

    Returns ``{"blocks", "systems", "chi2", "p", "kendall_w"}`` (Kendall's W = chi2 / (n (k-1))).
    NaN when fewer than 3 systems or 2 complete blocks.
    """
    wide = block_matrix(ratings, systems).dropna()
    n, k = wide.shape
    out = {"blocks": int(n), "systems": int(k), "chi2": math.nan, "p": math.nan, "kendall_w": math.nan}
    if k < 3 or n < 2:
        return out
    res = stats.friedmanchisquare(*[wide[c].to_numpy() for c in wide.columns])
    out.update(chi2=float(res.statistic), p=float(res.pvalue),
               kendall_w=float(res.statistic) / (n * (k - 1)))
    return out


#: Rater-level tests need at least this many raters (exact two-sided Wilcoxon minimum p = 2/2^n).
MIN_TEST_RATERS = 6


def rater_means(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per rater and system: the rater's mean rating of that system over items (item
    ``"mean"``), so tests on it count raters, not ratings."""
    g = ratings.groupby(["participant", "system_a"], sort=False)["score"].mean().reset_index()
    g["item"] = "mean"
    return g


def pairwise_wilcoxon(ratings: pd.DataFrame, systems: list[str] | None = None, *,
                      zero_method: str = "pratt", alpha: float = 0.05,
                      unit: str = "block", min_n: int | None = None) -> pd.DataFrame:
    """Every pair of systems: Wilcoxon signed-rank test on paired ratings, Holm-corrected across
    the tested pairs. ``unit='block'``: paired block ratings (one participant's ratings of one
    item; blocks of one rater treated as independent, BS.1534 practice); ``unit='rater'``: each
    rater's mean rating per system (one pair of values per rater — respects rater clustering).
    Pairs with fewer than ``min_n`` pairs of values are not tested (``tested`` False; default 10
    blocks, or 6 raters — the smallest n at which an exact two-sided test can reach p < 0.05). Columns: system_a, system_b, n, mean_diff (a - b), median_diff, wilcoxon_W,
    p_wilcoxon, p_holm, rank_biserial, significant, tested."""
    from reports.pairwise import MIN_TEST_ANSWERS

    min_n = min_n if min_n is not None else (MIN_TEST_RATERS if unit == "rater" else MIN_TEST_ANSWERS)
    wide = block_matrix(rater_means(ratings) if unit == "rater" else ratings, systems)
    systems = list(wide.columns)
    rows = []
    for a, b in itertools.combinations(systems, 2):
        d = (wide[a] - wide[b]).dropna().to_numpy()
        w = st.wilcoxon_test(d, zero_method) if d.size >= min_n else {"W": math.nan, "p": math.nan}
        rows.append({"system_a": a, "system_b": b, "n": d.size,
                     "mean_diff": float(d.mean()) if d.size else math.nan,
                     "median_diff": float(np.median(d)) if d.size else math.nan,
                     "wilcoxon_W": w["W"], "p_wilcoxon": w["p"],
                     "rank_biserial": st.rank_biserial(d, zero_method)})
    df = pd.DataFrame(rows, columns=["system_a", "system_b", "n", "mean_diff", "median_diff",
                                     "wilcoxon_W", "p_wilcoxon", "rank_biserial"])
    df["p_holm"] = st.holm(df["p_wilcoxon"].to_numpy())
    df["significant"] = df["p_holm"] < alpha
    df["tested"] = df["n"] >= min_n
    return df


def hidden_reference_screening(ratings: pd.DataFrame, reference: str, *, threshold: float = 90.0,
                               max_fraction: float = 0.15) -> pd.DataFrame:
    """Per participant: items where the hidden ``reference`` was rated, how many below
    ``threshold``, the fraction, and ``excluded`` (fraction > ``max_fraction``).

    ITU-R BS.1534-3 post-screening: an assessor is excluded who rates the hidden reference
    below 90 for more than 15 % of the test items.
    """
    ref = ratings[ratings["system_a"] == reference]
    per = ref.groupby(["participant", "item"])["score"].min().reset_index()
    g = per.groupby("participant")["score"]
    out = pd.DataFrame({"items": g.size(), "below": g.apply(lambda s: int((s < threshold).sum()))})
    out["fraction_below"] = out["below"] / out["items"]
    out["excluded"] = out["fraction_below"] > max_fraction
    return out.reset_index()
