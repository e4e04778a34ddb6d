"""evalkit.stats: the interval estimates the reports and the web test's admin page share."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

import evalkit.stats


def test_t_ci_matches_scipy_and_is_nan_where_undefined():
    from scipy import stats

    x = np.array([2.0, -1.0, 0.0, 1.0, 3.0, 1.0])
    m, lo, hi = evalkit.stats.t_ci(x)
    assert (lo, hi) == pytest.approx(stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x)))
    assert m == pytest.approx(x.mean())
    assert math.isnan(evalkit.stats.t_ci([1.0])[1])
    assert all(math.isnan(v) for v in evalkit.stats.t_ci([1.0, 1.0, 1.0])[1:])  # no zero-width interval
    assert all(math.isnan(v) for v in evalkit.stats.t_ci([]))


def test_cluster_interval_widens_when_raters_repeat_themselves():
    rng = np.random.default_rng(4)
    raters = np.repeat(np.arange(8), 10)
    x = rng.normal(0, 1, 8)[raters] + rng.normal(0, 0.3, raters.size)
    ci = evalkit.stats.cmos_interval(x, raters)
    assert ci["n"] == 80 and ci["n_participants"] == 8
    assert ci["cl_high"] - ci["cl_low"] > 2 * (ci["t_high"] - ci["t_low"])
    one = evalkit.stats.cmos_interval([1.0, 2.0, 0.0], ["a", "a", "a"])  # one rater: undefined
    assert math.isnan(one["cl_low"]) and math.isnan(one["cl_high"]) and not math.isnan(one["t_low"])


def test_reports_use_the_shared_intervals():
    from reports import stats as st
    from reports.pairwise import cmos_summary

    assert st.t_ci is evalkit.stats.t_ci and st.cluster_t_ci is evalkit.stats.cluster_t_ci
    x, g = [2.0, 1.0, -1.0, 0.0, 1.0, 2.0], ["a", "a", "b", "b", "c", "c"]
    row = cmos_summary(x, g, n_boot=10)
    shared = evalkit.stats.cmos_interval(x, g)
    assert (row["cl_low"], row["cl_high"], row["t_low"]) == pytest.approx(
        (shared["cl_low"], shared["cl_high"], shared["t_low"]))


def test_doctests():
    assert doctest.testmod(evalkit.stats).failed == 0
