"""Interval estimates of a mean rating, shared by the reports and the web test's live summaries.

The reports (:mod:`reports.pairwise`, :mod:`reports.absolute`) and the admin page of the web
test (:mod:`webtest.export`) summarise the same answers; both take the mean and its intervals
from here, so the live monitor and the report agree. Undefined intervals are NaN, never zero
width: fewer than two answers (or raters), or answers that do not vary, say nothing about the
uncertainty of the mean.
"""

from __future__ import annotations

import math

import numpy as np


def t_ci(x, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of ``x`` (shape ``(n,)``, any unit): Student-t confidence interval of the
    mean treating the values as independent. NaN bounds for n < 2 or when every value is equal;
    all NaN for n = 0."""
    from scipy import stats

    x = np.asarray(x, float)
    n = x.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    if n < 2:
        return (m, math.nan, math.nan)
    se = float(x.std(ddof=1)) / math.sqrt(n)
    if se == 0:  # every answer the same: the data cannot say how uncertain the mean is
        return (m, math.nan, math.nan)
    h = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * se
    return (m, m - h, m + h)


def cluster_t_ci(x, clusters, confidence: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high): cluster-robust t interval of the mean of ``x`` (shape ``(n,)``),
    ``clusters`` (shape ``(n,)``) labelling each value's rater.

    Standard error from the cluster sums of deviations (CR1: sum_g (sum_{i in g} (x_i - m))^2 / n^2
    times G / (G - 1)) with a t quantile on G - 1 degrees of freedom (G = number of clusters), the
    usual small-sample cluster-robust interval. It allows any correlation of a rater's answers and
    any number of answers per rater. NaN bounds with fewer than 2 clusters or no spread.

    >>> m, lo, hi = cluster_t_ci([1, 2, 0, 1], ["a", "a", "b", "b"])
    >>> m
    1.0
    >>> cluster_t_ci([1, 2], ["a", "a"])[1]
    nan
    """
    from scipy import stats

    x = np.asarray(x, float)
    n = x.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    uniq, codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    g = len(uniq)
    if g < 2:
        return (m, math.nan, math.nan)
    s = np.bincount(codes, weights=x - m, minlength=g)
    se = math.sqrt(float(np.sum(s ** 2)) / n ** 2 * g / (g - 1))
    if se == 0:  # no spread: a zero-width interval would claim certainty the data cannot give
        return (m, math.nan, math.nan)
    h = float(stats.t.ppf(0.5 + confidence / 2, g - 1)) * se
    return (m, m - h, m + h)


def cmos_interval(scores, raters, confidence: float = 0.95) -> dict:
    """The CMOS summary of one comparison: signed scores ``scores`` (shape ``(n,)``, positive =
    system A better, scale points) answered by ``raters`` (shape ``(n,)``).

    Returns ``{"n", "n_participants", "mean", "cl_low", "cl_high", "t_low", "t_high"}``: the
    mean with the cluster-robust interval over raters (:func:`cluster_t_ci`, the reports'
    default) and the Student-t interval treating answers as independent (:func:`t_ci`); NaN
    bounds where undefined."""
    x = np.asarray(scores, float)
    mean, tlo, thi = t_ci(x, confidence)
    _, clo, chi = cluster_t_ci(x, raters, confidence)
    return {"n": int(x.size), "n_participants": int(len(set(np.asarray(raters).astype(str).tolist()))),
            "mean": mean, "cl_low": clo, "cl_high": chi, "t_low": tlo, "t_high": thi}
