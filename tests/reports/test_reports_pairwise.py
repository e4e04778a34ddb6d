"""Per-comparison CMOS analysis: each column checked against a direct computation."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from reports.pairwise import (MIN_TEST_ANSWERS, TOO_FEW, cmos_summary, pairwise_table, position_bias,
                              significance_matrix)
from reports.simulate import simulate_pairwise
from tests.reports.helpers import long_table


@pytest.fixture(scope="module")
def sim():
    df, beta = simulate_pairwise(900, 4, 24, scale="cmos5", seed=11)
    return df, beta


def test_table_matches_direct_computation(sim):
    df, _ = sim
    t = pairwise_table(df, n_boot=300, seed=1)
    assert len(t) == 6  # 4 systems, all pairs
    for r in t.itertuples():
        rows = df[((df.system_a == r.system_a) & (df.system_b == r.system_b))]
        flipped = df[((df.system_a == r.system_b) & (df.system_b == r.system_a))]
        x = np.r_[rows.score.to_numpy(), -flipped.score.to_numpy()]
        assert r.n == x.size
        assert r.mean == pytest.approx(x.mean()) and r.median == pytest.approx(np.median(x))
        ci = stats.ttest_1samp(x, 0).confidence_interval()
        assert (r.t_low, r.t_high) == pytest.approx((ci.low, ci.high))
        # ties and zeros: the normal approximation with tie and continuity correction
        assert r.wilcoxon_method == "approx"
        assert r.p_wilcoxon == pytest.approx(stats.wilcoxon(x, zero_method="pratt", method="approx",
                                                            correction=True).pvalue)
        # default interval: cluster-robust (CR1) with raters as clusters, t on G - 1 df
        g = pd.concat([rows.participant, flipped.participant]).to_numpy()
        ols = sm.OLS(x, np.ones(x.size)).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(g)[0]})
        G = len(set(g))
        h = stats.t.ppf(0.975, G - 1) * float(ols.bse[0])
        assert (r.cl_low, r.cl_high) == pytest.approx((x.mean() - h, x.mean() + h))
        assert r.share_a == pytest.approx(np.mean(x > 0))
        lo, hi = proportion_confint((x == 0).sum(), x.size, method="wilson")
        assert (r.share_equal_low, r.share_equal_high) == pytest.approx((lo, hi))
        assert r.boot_low < r.mean < r.boot_high
    assert t["p_holm"].to_numpy() == pytest.approx(multipletests(t["p_wilcoxon"], method="holm")[1])


def test_sign_orientation_follows_order(sim):
    df, beta = sim
    t = pairwise_table(df, n_boot=0, order=["S4", "S3", "S2", "S1"])
    # S1 is the strongest system of the simulation, so every "Sx vs S1" mean is negative
    assert (t[t.system_b == "S1"]["mean"] < 0).all()
    assert set(t["system_a"]) <= {"S4", "S3", "S2"}


def test_single_rater_edge_case():
    df = long_table([("p1", f"i{i}", "A", "B", s) for i, s in enumerate([2, 1, 1, 0, -1, 2])])
    r = cmos_summary(df["score"], df["participant"], n_boot=200)
    assert r["n_participants"] == 1
    assert math.isnan(r["boot_low"]) and math.isnan(r["boot_high"])  # cannot resample one rater
    assert math.isfinite(r["t_low"])  # the t interval still exists (answers as units)
    one = cmos_summary([1.0], ["p"], n_boot=50)
    assert one["n"] == 1 and math.isnan(one["t_low"]) and one["share_a"] == 1.0


def test_all_ties_edge_case():
    r = cmos_summary([0.0] * 6, list("aabbcc"), n_boot=100)
    assert r["mean"] == 0 and math.isnan(r["p_wilcoxon"]) and math.isnan(r["p_sign"])
    assert r["share_equal"] == 1 and r["cles"] == 0.5 and math.isnan(r["rank_biserial"])


def test_position_bias_detected_only_when_present():
    biased, _ = simulate_pairwise(1500, 3, 30, scale="cmos5", seed=3, left_bias=0.8,
                                  strengths=[0, 0, 0])
    fair, _ = simulate_pairwise(1500, 3, 30, scale="cmos5", seed=3, left_bias=0.0,
                                strengths=[0, 0, 0])
    pb, pf = position_bias(biased), position_bias(fair)
    allb, allf = pb[pb.comparison == "all"].iloc[0], pf[pf.comparison == "all"].iloc[0]
    assert allb["p_wilcoxon"] < 1e-6 and allb["mean_left"] > 0.3 and allb["share_left"] > 0.6
    assert allf["p_wilcoxon"] > 0.001 and abs(allf["mean_left"]) < 0.15
    # direct check of the re-expression on the fair data
    x = np.where(fair.side_shown == "left", fair.score, -fair.score)
    assert allf["mean_left"] == pytest.approx(x.mean())
    assert position_bias(long_table([("p", "i", "A", "B", 1)])).empty  # no sides known


def test_significance_matrix_signs():
    t = pd.DataFrame({"system_a": ["A", "A", "B"], "system_b": ["B", "C", "D"], "mean": [0.5, -0.4, 1.0],
                      "significant": [True, False, False], "tested": [True, True, False]})
    m = significance_matrix(t, ["A", "B", "C", "D"])
    assert m.loc["A", "B"] == 1 and m.loc["B", "A"] == -1 and m.loc["A", "C"] == 0
    assert m.loc["B", "D"] == TOO_FEW and m.loc["D", "B"] == TOO_FEW  # "too few", not "n.s."
    assert np.isnan(m.loc["B", "C"])


def test_too_few_answers_are_not_tested():
    df = long_table([(f"p{i}", "i", "A", "B", 1) for i in range(MIN_TEST_ANSWERS - 1)]
                    + [(f"p{i}", "i", "A", "C", 1) for i in range(MIN_TEST_ANSWERS)])
    t = pairwise_table(df, n_boot=0).set_index("comparison")
    assert not t.loc["A vs B", "tested"] and math.isnan(t.loc["A vs B", "p_holm"])
    assert t.loc["A vs C", "tested"] and t.loc["A vs C", "p_holm"] < 0.05
    # only the tested comparison is in the Holm family
    assert t.loc["A vs C", "p_holm"] == pytest.approx(t.loc["A vs C", "p_wilcoxon"])
