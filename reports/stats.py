"""Small statistical building blocks, one function per test (pingouin style).

Each function takes plain arrays and returns numbers or a dict; the analysis modules
(:mod:`reports.pairwise`, :mod:`reports.absolute`) assemble them into tidy DataFrames.
Bootstrap functions take a :class:`numpy.random.Generator` so results are reproducible.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from evalkit.errors import InputError
from evalkit.stats import cluster_t_ci, t_ci  # the shared interval estimates (also the web test's)

#: zero_method values understood by :func:`wilcoxon_test` (those of scipy.stats.wilcoxon).
ZERO_METHODS = ("wilcox", "pratt", "zsplit")


def cluster_bootstrap_means(values, clusters, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap distribution of the mean of ``values`` resampling whole ``clusters``.

    ``clusters`` labels each value (e.g. the participant). Each round draws as many clusters as
    there are, with replacement, and takes the mean of all their values. Returns ``(n_boot,)``;
    all-NaN when there are fewer than 2 clusters (a one-cluster bootstrap says nothing).
    """
    values = np.asarray(values, float)
    codes, uniq = _codes(clusters)
    c = len(uniq)
    if c < 2 or n_boot <= 0:
        return np.full(max(n_boot, 0), np.nan)
    sums = np.bincount(codes, weights=values, minlength=c)
    counts = np.bincount(codes, minlength=c).astype(float)
    draws = rng.multinomial(c, np.full(c, 1.0 / c), size=n_boot).astype(float)  # (n_boot, c)
    return (draws @ sums) / (draws @ counts)


def percentile_ci(boot, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile interval of a bootstrap distribution (NaNs ignored; NaN if none are finite)."""
    boot = np.asarray(boot, float)
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return (math.nan, math.nan)
    a = (1 - confidence) / 2
    lo, hi = np.quantile(boot, [a, 1 - a])
    return (float(lo), float(hi))


def wilson_ci(count: int, nobs: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``count / nobs`` (statsmodels ``proportion_confint``)."""
    from statsmodels.stats.proportion import proportion_confint

    if nobs == 0:
        return (math.nan, math.nan)
    lo, hi = proportion_confint(count, nobs, alpha=1 - confidence, method="wilson")
    return (float(lo), float(hi))


def signed_rank_sums(x, zero_method: str = "pratt") -> tuple[float, float]:
    """(R+, R-): sums of the ranks of |x| for positive and negative values.

    Ranks are average ranks over ties. ``wilcox`` ranks only the non-zero values; ``pratt`` ranks
    all values and drops the zeros' ranks; ``zsplit`` ranks all and splits the zeros' ranks half
    to each side — the conventions of :func:`scipy.stats.wilcoxon`.
    """
    if zero_method not in ZERO_METHODS:
        raise InputError(f"zero_method must be one of {', '.join(ZERO_METHODS)}, got {zero_method!r}")
    x = np.asarray(x, float)
    if zero_method == "wilcox":
        x = x[x != 0]
    if x.size == 0:
        return (0.0, 0.0)
    r = stats.rankdata(np.abs(x))
    rp = float(r[x > 0].sum())
    rm = float(r[x < 0].sum())
    if zero_method == "zsplit":
        z = float(r[x == 0].sum()) / 2
        rp += z
        rm += z
    return (rp, rm)


#: Largest n for which :func:`wilcoxon_test` uses the exact null distribution (no ties, no zeros).
WILCOXON_EXACT_MAX_N = 50


def wilcoxon_method(x, zero_method: str = "pratt") -> str:
    """The p-value method :func:`wilcoxon_test` uses for ``x``: ``exact`` when there are no zeros,
    no tied |x| and n <= :data:`WILCOXON_EXACT_MAX_N`; otherwise ``approx`` (normal
    approximation with tie and continuity correction).

    Chosen deliberately instead of scipy's ``method='auto'``, which for n <= 13 with ties runs an
    exhaustive permutation (2^n statistics, seconds per test); rating scales are full of ties, and
    the tie-corrected normal approximation is the standard treatment there.
    """
    x = np.asarray(x, float)
    nz = x[x != 0]
    if nz.size == x.size and 0 < x.size <= WILCOXON_EXACT_MAX_N and np.unique(np.abs(nz)).size == nz.size:
        return "exact"
    return "approx"


def wilcoxon_test(x, zero_method: str = "pratt") -> dict:
    """Wilcoxon signed-rank test of ``x`` against 0 (two-sided).

    Method (:func:`wilcoxon_method`): exact without zeros and ties for n <= 50, else the normal
    approximation with tie correction and continuity correction (scipy ``method='approx'``,
    ``correction=True``). Returns ``{"W": min(R+, R-), "r_plus", "r_minus", "p", "method"}``;
    ``p`` is NaN when no value differs from 0 (the test is undefined).
    """
    x = np.asarray(x, float)
    rp, rm = signed_rank_sums(x, zero_method)
    if x.size == 0 or not np.any(x != 0):
        return {"W": math.nan, "r_plus": rp, "r_minus": rm, "p": math.nan, "method": ""}
    method = wilcoxon_method(x, zero_method)
    res = stats.wilcoxon(x, zero_method=zero_method, alternative="two-sided", method=method,
                         correction=method == "approx")
    return {"W": float(res.statistic), "r_plus": rp, "r_minus": rm, "p": float(res.pvalue),
            "method": method}


def rank_biserial(x, zero_method: str = "pratt") -> float:
    """Matched-pairs rank-biserial correlation (R+ - R-) / (R+ + R-), in [-1, 1] (NaN if no ranks)."""
    rp, rm = signed_rank_sums(x, zero_method)
    tot = rp + rm
    return (rp - rm) / tot if tot > 0 else math.nan


def cles(x) -> float:
    """Common-language effect size of signed scores: P(score > 0) + P(score = 0) / 2.

    The probability that a randomly drawn answer favours A, ties split evenly (0.5 = no effect).
    """
    x = np.asarray(x, float)
    if x.size == 0:
        return math.nan
    return float((np.sum(x > 0) + 0.5 * np.sum(x == 0)) / x.size)


def sign_test(x) -> dict:
    """Two-sided exact sign test (binomial, p = 0.5) on the non-zero values of ``x``."""
    x = np.asarray(x, float)
    npos, nneg = int(np.sum(x > 0)), int(np.sum(x < 0))
    if npos + nneg == 0:
        return {"n_pos": 0, "n_neg": 0, "p": math.nan}
    p = stats.binomtest(npos, npos + nneg, 0.5, alternative="two-sided").pvalue
    return {"n_pos": npos, "n_neg": nneg, "p": float(p)}


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values (statsmodels ``multipletests``); NaNs pass through."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method="holm")[1]
    return out


def kendall_tau_ci(x, y, confidence: float = 0.95) -> dict:
    """Kendall's tau-b of ``x`` and ``y`` with p (scipy) and a Fisher-z CI.

    CI: z = atanh(tau) with standard error sqrt(0.437 / (n - 4)) (Fieller, Hartley & Pearson
    1957); NaN for n <= 4, where that approximation does not hold.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    n = x.size
    if n < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return {"n": n, "tau": math.nan, "p": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    res = stats.kendalltau(x, y)
    tau = float(res.statistic)
    lo = hi = math.nan
    if n > 4 and abs(tau) < 1 - 1e-9:  # Fisher z is undefined at |tau| = 1
        z = math.atanh(tau)
        h = float(stats.norm.ppf(0.5 + confidence / 2)) * math.sqrt(0.437 / (n - 4))
        lo, hi = math.tanh(z - h), math.tanh(z + h)
    return {"n": n, "tau": tau, "p": float(res.pvalue), "ci_low": lo, "ci_high": hi}


def _codes(labels) -> tuple[np.ndarray, np.ndarray]:
    uniq, codes = np.unique(np.asarray(labels).astype(str), return_inverse=True)
    return codes, uniq
