"""The coverage simulation behind bench/bench_reports_coverage.py, run short (SIMULATED data)."""

from __future__ import annotations

import numpy as np
import pytest

from reports.ranking import bradley_terry
from reports.simulate import (cmos_coverage_simulation, cmos_truth, coverage_simulation, population_truth,
                              simulate_cmos_clustered, simulate_pairwise)
from reports.table import canonical_pairs


def test_population_truth_is_what_large_samples_estimate():
    strengths = np.linspace(1.0, -1.0, 4)
    b, s = population_truth(strengths, rater_sd=0.7)
    names = ["S1", "S2", "S3", "S4"]
    df, _ = simulate_pairwise(40000, 4, 4000, seed=5, rater_sd=0.7, strengths=strengths)
    fit = bradley_terry(df, n_boot=0, systems=names).table.set_index("system").loc[names, "log_strength"]
    assert fit.to_numpy() == pytest.approx(b, abs=0.04)
    assert np.abs(b).max() < 0.95 * np.abs(strengths - strengths.mean()).max()  # attenuated by rater noise
    means = canonical_pairs(df, names).groupby(["system_a", "system_b"])["score"].mean()
    assert means[("S1", "S4")] == pytest.approx(s[0, 3], abs=0.05)
    big = simulate_cmos_clustered(2000, 20, rater_sd=0.7, seed=1)
    assert big["score"].mean() == pytest.approx(cmos_truth(rater_sd=0.7), abs=0.03)


def test_clustered_answers_break_the_t_interval_not_the_default():
    res = cmos_coverage_simulation(60, n_boot=100, seed=2).set_index("role")
    assert res.loc["default", "coverage"] >= 0.85
    assert res.loc["secondary (labelled)", "coverage"] <= 0.85  # answers treated as independent


def test_genea_sized_simulation_runs_and_reports_every_interval():
    res = coverage_simulation(3, n_boot=100, seed=3)
    assert set(res["role"]) >= {"default", "replaced"}
    assert res["coverage"].between(0, 1).all() and (res["mean_width"] > 0).all()
    bt = res[res["interval"].str.startswith("Bradley–Terry strength")].set_index("role")
    assert bt.loc["default", "intervals"] == 3 * 8
