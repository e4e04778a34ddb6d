"""MUSHRA/ACR analysis on the real speech-codec ratings (excerpt shipped, full file shared)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from reports import absolute as ab
from reports.importers import load_input
from reports.screening import ScreeningRules, screen
from tests.conftest import shared_data
from tests.reports.helpers import EXCERPT


@pytest.fixture(scope="module")
def excerpt():
    return load_input(EXCERPT)[1]


def test_summary_reference_top_anchor_bottom(excerpt):
    s = ab.system_summary(excerpt, n_boot=300, seed=0)
    assert s["system"].iloc[0] == "Reference" and s["system"].iloc[-1] == "Anchor"
    for r in s.itertuples():
        x = excerpt.loc[excerpt.system_a == r.system, "score"].to_numpy()
        assert r.mean == pytest.approx(x.mean()) and r.median == pytest.approx(np.median(x))
        ci = stats.ttest_1samp(x, 0).confidence_interval()
        assert (r.t_low, r.t_high) == pytest.approx((ci.low, ci.high))
        assert r.boot_low <= r.mean <= r.boot_high
        assert r.median_low <= r.median <= r.median_high
    assert ab.find_reference(s["system"]) == "Reference" and ab.find_anchors(s["system"]) == ["Anchor"]


def test_weighted_median_bootstrap_hand_worked():
    # values of 3 participants; drawing p1 twice and p3 once -> data [1, 1, 5] -> median 1
    v = np.array([1.0, 3.0, 5.0])
    draws = np.array([[2.0, 0.0, 1.0], [0.0, 3.0, 0.0], [1.0, 1.0, 1.0]])
    assert ab._weighted_median_boot(v, np.array([0, 1, 2]), draws).tolist() == [1.0, 3.0, 3.0]


def test_friedman_and_pairwise_match_scipy(excerpt):
    wide = excerpt.pivot_table(index=["participant", "item"], columns="system_a", values="score").dropna()
    fr = ab.friedman(excerpt)
    ref = stats.friedmanchisquare(*[wide[c] for c in wide.columns])
    assert fr["blocks"] == len(wide) and fr["chi2"] == pytest.approx(ref.statistic)
    assert fr["p"] == pytest.approx(ref.pvalue)
    assert fr["kendall_w"] == pytest.approx(ref.statistic / (len(wide) * (wide.shape[1] - 1)))
    pw = ab.pairwise_wilcoxon(excerpt)
    assert len(pw) == 36
    row = pw[(pw.system_a.isin(["AudioDec", "Lyra 3"])) & (pw.system_b.isin(["AudioDec", "Lyra 3"]))].iloc[0]
    d = wide[row.system_a] - wide[row.system_b]
    # ties in the ratings: the normal approximation with tie and continuity correction
    assert row.p_wilcoxon == pytest.approx(stats.wilcoxon(d, zero_method="pratt", method="approx",
                                                          correction=True).pvalue)
    assert row.mean_diff == pytest.approx(d.mean())


def test_friedman_needs_three_systems(excerpt):
    two = excerpt[excerpt.system_a.isin(["Reference", "Anchor"])]
    assert math.isnan(ab.friedman(two)["p"])


def test_post_screening_reproduces_published_filter():
    full = load_input(shared_data("ratings", "mushra-speech-codec", "ratings_formated.csv"))[1]
    filt = load_input(shared_data("ratings", "mushra-speech-codec", "ratings_formated_filtered.csv"))[1]
    res = screen(full, ScreeningRules())  # BS.1534-3: reference < 90 in > 15 % of the 8 items
    assert set(res.kept["participant"]) == set(filt["participant"])
    assert set(res.raters.loc[res.raters.excluded_by != "", "participant"]) == {"6", "17"}
    assert res.flow["participants"].iloc[0] == 21 and res.flow["participants"].iloc[-1] == 19
    strict = screen(full, ScreeningRules(reference_max_fraction=0.0))
    assert strict.flow["participants"].iloc[-1] < 19
