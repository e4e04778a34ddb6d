"""Statistical building blocks against scipy/statsmodels directly or hand-worked examples."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reports import stats as st

# A CMOS-like sample with ties and zeros.
X = np.array([2, 1, 1, 0, 0, -1, 2, 1, 0, 1, 2, -2, 1, 0, 1], float)


def test_t_ci_matches_scipy():
    m, lo, hi = st.t_ci(X, 0.95)
    ci = stats.ttest_1samp(X, 0).confidence_interval(0.95)
    assert m == pytest.approx(X.mean())
    assert (lo, hi) == pytest.approx((ci.low, ci.high))
    assert math.isnan(st.t_ci([1.0])[1])  # single answer: no CI
    m, lo, hi = st.t_ci([1.0, 1.0])  # no spread: no zero-width interval
    assert m == 1.0 and math.isnan(lo) and math.isnan(hi)
    assert math.isnan(st.cluster_t_ci([2.0, 2.0, 2.0], ["a", "b", "c"])[1])


def test_wilson_hand_formula():
    k, n, z = 7, 20, stats.norm.ppf(0.975)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert st.wilson_ci(k, n) == pytest.approx((centre - half, centre + half))
    lo, hi = st.wilson_ci(0, 5)
    assert lo == pytest.approx(0, abs=1e-12) and 0 < hi < 1


@pytest.mark.parametrize("zm", ["wilcox", "pratt", "zsplit"])
def test_signed_rank_sums_match_scipy(zm):
    rp, rm = st.signed_rank_sums(X, zm)
    # scipy reports R+ as the statistic of the one-sided test
    assert rp == pytest.approx(stats.wilcoxon(X, zero_method=zm, alternative="greater").statistic)
    w = st.wilcoxon_test(X, zm)
    method = st.wilcoxon_method(X, zm)
    ref = stats.wilcoxon(X, zero_method=zm, method=method, correction=method == "approx")
    assert w["W"] == pytest.approx(ref.statistic) and w["p"] == pytest.approx(ref.pvalue)


def test_wilcoxon_method_is_chosen_deliberately():
    # no ties, no zeros, small n: the exact null distribution
    x = np.array([1.5, -0.2, 3.1, 2.2, 0.7, 4.0, -1.1, 2.9])
    assert st.wilcoxon_method(x) == "exact"
    assert st.wilcoxon_test(x)["p"] == pytest.approx(stats.wilcoxon(x, method="exact").pvalue)
    # ties (a rating scale) at small n: the tie-corrected normal approximation with continuity
    # correction — not scipy's exhaustive permutation ('auto'), which takes seconds per test
    y = np.array([1, 1, 2, -1, 2, 1, 0, 2, 1, -2, 1, 2], float)
    assert st.wilcoxon_method(y) == "approx"
    assert st.wilcoxon_test(y)["p"] == pytest.approx(
        stats.wilcoxon(y, zero_method="pratt", method="approx", correction=True).pvalue)


def test_cluster_t_ci_is_wider_than_t_when_raters_repeat_themselves():
    # three raters, each always giving the same answer: 3 independent values, not 30
    x = np.repeat([2.0, 1.0, -1.0], 10)
    g = np.repeat(["a", "b", "c"], 10)
    m, lo, hi = st.cluster_t_ci(x, g)
    _, tlo, thi = st.t_ci(x)
    assert m == pytest.approx(2 / 3) and (hi - lo) > 2.5 * (thi - tlo)
    # with one answer per rater CR1 equals the Student-t interval
    m1, lo1, hi1 = st.cluster_t_ci(x[::10], ["a", "b", "c"])
    assert (lo1, hi1) == pytest.approx(st.t_ci(x[::10])[1:])


def test_rank_sums_hand_worked():
    # x = [2, -1, 0, 1]: |x| ranks over all = [4, 2.5, 1, 2.5]
    x = [2, -1, 0, 1]
    assert st.signed_rank_sums(x, "pratt") == (6.5, 2.5)
    assert st.signed_rank_sums(x, "zsplit") == (7.0, 3.0)
    # wilcox drops the zero first: ranks of [2, 1, 1] = [3, 1.5, 1.5]
    assert st.signed_rank_sums(x, "wilcox") == (4.5, 1.5)
    assert st.rank_biserial(x, "wilcox") == pytest.approx((4.5 - 1.5) / 6)


def test_all_zero_and_empty_are_nan():
    assert math.isnan(st.wilcoxon_test([0, 0, 0])["p"])
    assert math.isnan(st.sign_test([0, 0])["p"])
    assert math.isnan(st.rank_biserial([0, 0], "wilcox"))
    assert math.isnan(st.cles([]))


def test_cles_and_sign_test():
    assert st.cles([2, 1, 0, -1]) == pytest.approx((2 + 0.5) / 4)
    s = st.sign_test(X)
    npos, nneg = int((X > 0).sum()), int((X < 0).sum())
    assert s["p"] == pytest.approx(stats.binomtest(npos, npos + nneg).pvalue)


def test_holm_hand_worked():
    # sorted p: 0.01*3=0.03, 0.03*2=0.06, max(0.06, 0.04*1)=0.06
    assert st.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    out = st.holm([0.01, np.nan, 0.04])
    assert math.isnan(out[1]) and out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.04)


def test_cluster_bootstrap_enumeration():
    # participants: p1 answered [0, 0], p2 answered [2]. Resamples of 2 participants:
    # {p1,p1} -> 0 (1/4), {p2,p2} -> 2 (1/4), {p1,p2} -> 2/3 (1/2).
    rng = np.random.default_rng(5)
    b = st.cluster_bootstrap_means([0, 0, 2], ["p1", "p1", "p2"], 8000, rng)
    freq = {v: np.mean(np.isclose(b, v)) for v in (0.0, 2.0, 2 / 3)}
    assert freq[0.0] == pytest.approx(0.25, abs=0.02)
    assert freq[2.0] == pytest.approx(0.25, abs=0.02)
    assert freq[2 / 3] == pytest.approx(0.5, abs=0.02)
    # one participant: nothing to resample
    assert np.isnan(st.cluster_bootstrap_means([1, 2], ["p", "p"], 10, rng)).all()


def test_kendall_tau_ci():
    x = [1, 2, 3, 4, 5, 6, 7, 8]
    y = [2, 1, 4, 3, 6, 5, 8, 7]
    r = st.kendall_tau_ci(x, y)
    ref = stats.kendalltau(x, y)
    assert r["tau"] == pytest.approx(ref.statistic) and r["p"] == pytest.approx(ref.pvalue)
    h = stats.norm.ppf(0.975) * math.sqrt(0.437 / (8 - 4))
    assert r["ci_low"] == pytest.approx(math.tanh(math.atanh(r["tau"]) - h))
    assert math.isnan(st.kendall_tau_ci([1, 2, 3], [1, 3, 2])["ci_low"])  # n <= 4


def test_kendall_perfect_order_has_no_fisher_ci():
    r = st.kendall_tau_ci([1, 2, 3, 4, 5, 6], [2, 4, 6, 8, 10, 12])
    assert r["tau"] == pytest.approx(1.0) and math.isnan(r["ci_low"]) and math.isnan(r["ci_high"])
