"""Robustness models: mixed model = mean differences in a balanced design; ordinal model order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reports.importers import load_input
from reports.regression import mixed_model, ordinal_model
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


def test_lmm_single_factor_matches_statsmodels():
    from statsmodels.regression.mixed_linear_model import MixedLM

    from reports.lmm import fit_crossed_lmm

    df = load_input(EXCERPT)[1]
    systems = sorted(df.system_a.unique())
    X = np.column_stack([np.ones(len(df))] + [(df.system_a == s).to_numpy(float) for s in systems[1:]])
    ours = fit_crossed_lmm(df.score, X, {"participant": df.participant.to_numpy()})
    ref = MixedLM(df.score.to_numpy(), X, groups=df.participant.to_numpy()).fit(reml=True)
    assert ours.params == pytest.approx(np.asarray(ref.fe_params), abs=1e-4)
    assert ours.bse == pytest.approx(np.asarray(ref.bse_fe), rel=1e-3)
    assert ours.variances["participant"] == pytest.approx(float(np.ravel(ref.cov_re)[0]), rel=1e-3)
    assert ours.sigma2 == pytest.approx(ref.scale, rel=1e-4)


def test_lmm_crossed_balanced_equals_anova_estimates():
    # Balanced, fully crossed CONSTRUCTED data: REML equals the ANOVA (expected mean squares)
    # estimates when those are positive.
    from reports.lmm import fit_crossed_lmm

    rng = np.random.default_rng(3)
    P, I, S = 10, 8, 3
    p, i, s = (a.ravel() for a in np.meshgrid(np.arange(P), np.arange(I), np.arange(S), indexing="ij"))
    y = (np.array([0.0, 1.0, 2.5])[s] + rng.normal(0, 2.0, P)[p] + rng.normal(0, 1.0, I)[i]
         + rng.normal(0, 0.7, p.size))
    X = np.column_stack([np.ones(p.size), s == 1, s == 2]).astype(float)
    res = fit_crossed_lmm(y, X, {"participant": p, "item": i})
    grand = y.mean()
    ms_p = S * I * ((np.bincount(p, y) / (I * S) - grand) ** 2).sum() / (P - 1)
    ms_i = S * P * ((np.bincount(i, y) / (P * S) - grand) ** 2).sum() / (I - 1)
    fitted = (np.bincount(p, y) / (I * S))[p] + (np.bincount(i, y) / (P * S))[i] \
        + (np.bincount(s, y) / (P * I))[s] - 2 * grand
    ms_e = ((y - fitted) ** 2).sum() / (p.size - 1 - (P - 1) - (I - 1) - (S - 1))
    assert res.sigma2 == pytest.approx(ms_e, rel=1e-4)
    assert res.variances["participant"] == pytest.approx((ms_p - ms_e) / (S * I), rel=1e-3)
    assert res.variances["item"] == pytest.approx((ms_i - ms_e) / (S * P), rel=1e-3)
    means = np.bincount(s, y) / (P * I)
    assert res.params[1:] == pytest.approx(means[1:] - means[0], abs=1e-6)


def test_ordinal_model_that_runs_off_is_reported_as_not_converged(tmp_path):
    """Separation (A always strongly beats B, B always C): the ordinal estimates run off to
    infinity (SE in the thousands); the report says 'did not converge' instead of numbers."""
    from reports import ReportConfig, build_report
    from reports.regression import ordinal_model
    from tests.reports.helpers import long_table

    rows = []
    for p in range(6):
        for i in range(4):
            rows += [(f"p{p}", f"i{i}", "A", "B", 2), (f"p{p}", f"i{i}", "B", "C", 2),
                     (f"p{p}", f"i{i}", "A", "C", i % 2)]
    ratings = long_table(rows, scale="genea")
    table, notes = ordinal_model(ratings, ["C", "B", "A"])
    assert (table["status"] == "did not converge").all() and table["estimate"].isna().all()
    assert any("did not converge" in n for n in notes)
    build_report(ratings, None, tmp_path, config=ReportConfig(n_boot=20, bt_boot=20))
    rob = pd.read_csv(tmp_path / "tables" / "robustness_genea.csv")
    ordinal = rob[rob["model"].str.startswith("ordinal")]
    assert ordinal["estimate"].isna().all() and (ordinal["status"] == "did not converge").all()
    assert (rob.loc[rob["model"] == "linear mixed model", "status"] == "ok").all()
    tex = (tmp_path / "tables" / "robustness_genea.tex").read_text()
    assert tex.count("did not converge") >= 2
    html = (tmp_path / "report.html").read_text()
    assert "did not converge" in html


def test_alpha_from_too_few_units_is_marked(tmp_path):
    from reports import ReportConfig, build_report
    from tests.reports.helpers import long_table

    rows = [("p1", "i1", "A", "B", 2), ("p2", "i1", "A", "B", 1), ("p1", "i2", "A", "B", -1),
            ("p2", "i2", "A", "B", 0), ("p3", "i3", "A", "B", 1)]
    build_report(long_table(rows), None, tmp_path, config=ReportConfig(n_boot=20, bt_boot=20,
                                                                         robustness=False))
    ag = pd.read_csv(tmp_path / "tables" / "agreement_cmos5.csv")
    assert ag["units"].iloc[0] == 2 and ag["status"].iloc[0].startswith("too few units")
    assert "Too few units" in (tmp_path / "report.html").read_text()
