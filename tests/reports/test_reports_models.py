"""Robustness models: mixed model = mean differences in a balanced design; ordinal model order."""

from __future__ import annotations

import numpy as np
import pytest

from reports.importers import load_input
from reports.models import mixed_model, ordinal_model
from reports.simulate import simulate_pairwise
from tests.reports.helpers import EXCERPT


def test_mixed_model_balanced_blocks_equal_mean_differences():
    # In the real MUSHRA excerpt every (participant, item) block rates all 9 systems once, so the
    # system contrasts are orthogonal to both random intercepts: GLS estimates = mean differences.
    df = load_input(EXCERPT)[1]
    systems = ["Anchor"] + sorted(set(df.system_a) - {"Anchor"})
    t, notes = mixed_model(df, systems)
    means = df.groupby("system_a")["score"].mean()
    for r in t.itertuples():
        s = r.term.split(" - ")[0]
        assert r.estimate == pytest.approx(means[s] - means["Anchor"], abs=1e-4)
        assert r.ci_low < r.estimate < r.ci_high
    assert any("random-intercept variances" in n for n in notes)
    t2, n2 = ordinal_model(df, systems)
    assert t2.empty and "not fitted" in n2[0]


def test_ordinal_and_mixed_pairwise_follow_true_order_and_side():
    df, beta = simulate_pairwise(1200, 4, 30, scale="cmos5", seed=5, left_bias=0.6)
    systems = ["S4", "S3", "S2", "S1"]  # weakest first = reference
    for fit in (ordinal_model, mixed_model):
        t, _ = fit(df, systems)
        est = t.set_index("term")["estimate"]
        b = est[["b[S3]", "b[S2]", "b[S1]"]].to_numpy()
        assert (b > 0).all() and (np.diff(b) > 0).all(), fit.__name__
        assert est["left side"] > 0 and t.set_index("term").loc["left side", "p"] < 0.01
