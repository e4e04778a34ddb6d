"""Bradley–Terry: the batched Newton fit against statsmodels' logistic GLM, bootstrap, edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from reports.importers import load_input
from reports.ranking import (BattleWeights, bradley_terry, bt_difference_table, fit_bradley_terry,
                             participant_win_matrices, strongly_connected)
from reports.simulate import simulate_pairwise
from tests.reports.helpers import EXCERPT, long_table, pairs_from_mushra


def glm_bt(W: np.ndarray) -> np.ndarray:
    """Independent fit: weighted logistic GLM on (winner - loser) indicator rows, centred."""
    k = W.shape[0]
    X, y, w = [], [], []
    for i in range(k):
        for j in range(k):
            if i != j and W[i, j] > 0:
                x = np.zeros(k)
                x[i], x[j] = 1, -1
                X += [x[1:], -x[1:]]
                y += [1, 0]
                w += [W[i, j], W[i, j]]
    res = sm.GLM(np.array(y), np.array(X), family=sm.families.Binomial(),
                 freq_weights=np.array(w)).fit()
    b = np.r_[0.0, res.params]
    return b - b.mean()


def test_fit_matches_glm():
    df, _ = simulate_pairwise(500, 8, 20, seed=4)
    _, _, Wp = participant_win_matrices(df)
    W = Wp.sum(axis=0)
    assert fit_bradley_terry(W) == pytest.approx(glm_bt(W), abs=1e-6)


def test_batched_equals_single_fits():
    df, _ = simulate_pairwise(300, 5, 10, seed=2)
    _, _, Wp = participant_win_matrices(df)
    rng = np.random.default_rng(0)
    Ws = np.stack([np.einsum("p,pij->ij", rng.multinomial(10, np.full(10, .1)), Wp) for _ in range(5)])
    batch = fit_bradley_terry(Ws)
    for i in range(5):
        single = fit_bradley_terry(Ws[i])
        assert np.allclose(batch[i], single, equal_nan=True, atol=1e-8)


def test_graded_weights_hand_worked():
    # A beats B strongly once, B beats A weakly once, one tie: W[A,B] = 4 + 1, W[B,A] = 2 + 1
    df = long_table([("p", "i1", "A", "B", 2), ("p", "i2", "A", "B", -1), ("p", "i3", "B", "A", 0)],
                    scale="genea")
    systems, parts, Wp = participant_win_matrices(df, ["A", "B"])
    assert Wp[0].tolist() == [[0, 5], [3, 0]]
    b = fit_bradley_terry(Wp[0])
    assert b[0] - b[1] == pytest.approx(np.log(5 / 3))  # two systems: MLE is the log odds
    Wc = participant_win_matrices(df, ["A", "B"], BattleWeights(1, 1, 0))[2][0]
    assert Wc.tolist() == [[0, 1], [1, 0]]


def test_bootstrap_recovers_strengths():
    df, beta = simulate_pairwise(2000, 5, 40, seed=9, tie_share=0.1)
    res = bradley_terry(df, n_boot=400, seed=0)
    t = res.table.set_index("system").loc[[f"S{i + 1}" for i in range(5)]]
    assert list(res.table["system"]) == ["S1", "S2", "S3", "S4", "S5"]  # true order
    assert stats.spearmanr(t["log_strength"], beta).statistic == pytest.approx(1.0)
    # the true (simulated) strengths lie inside the 95 % intervals
    assert ((t["ci_low"] < beta) & (beta < t["ci_high"])).all()
    assert ((t["ci_low"] < t["log_strength"]) & (t["log_strength"] < t["ci_high"])).all()
    assert t["elo"].to_numpy() == pytest.approx(1000 + 400 / np.log(10) * t["log_strength"].to_numpy())
    assert res.n_failed == 0
    diffs = bt_difference_table(res)
    assert len(diffs) == 10 and diffs.loc[(diffs.system_a == "S1") & (diffs.system_b == "S5"), "significant"].all()
    # simultaneous intervals: significant exactly when the interval excludes 0, and then the
    # adjusted p is below 0.05 (the max-|z| bootstrap's decisions and p-values agree)
    excl = (diffs["ci_low"] > 0) | (diffs["ci_high"] < 0)
    assert (diffs["significant"] == excl).all()
    assert (diffs.loc[diffs["significant"], "p_adjusted"] < 0.05 + 1e-9).all()
    assert (diffs.loc[~diffs["significant"], "p_adjusted"] > 0.05 - 2 / 401).all()


def test_bootstrap_is_seeded():
    df, _ = simulate_pairwise(200, 4, 10, seed=1)
    a = bradley_terry(df, n_boot=100, seed=3).boot
    b = bradley_terry(df, n_boot=100, seed=3).boot
    c = bradley_terry(df, n_boot=100, seed=4).boot
    assert np.array_equal(a, b, equal_nan=True) and not np.array_equal(a, c, equal_nan=True)


def test_no_finite_mle_is_reported():
    # C never wins: no finite estimate
    df = long_table([("p1", "i", "A", "B", 1), ("p1", "i", "B", "A", 1), ("p2", "i", "A", "C", 2),
                     ("p2", "i", "B", "C", 1)])
    assert not strongly_connected(participant_win_matrices(df)[2].sum(axis=0))
    res = bradley_terry(df, n_boot=50, seed=0)
    assert res.table["log_strength"].isna().all()
    assert res.n_failed == 50 and any("strongly connected" in n for n in res.notes)


def test_single_rater_has_no_bootstrap_ci():
    df, _ = simulate_pairwise(200, 3, 1, seed=0)
    res = bradley_terry(df, n_boot=100)
    assert res.table["log_strength"].notna().all() and res.table["ci_low"].isna().all()
    assert any("at least 2 participants" in n for n in res.notes)


def test_pairs_derived_from_real_mushra_rank_reference_first():
    _, mushra = load_input(EXCERPT)
    pairs = pairs_from_mushra(mushra)
    res = bradley_terry(pairs, n_boot=200, seed=0)
    order = list(res.table["system"])
    assert order[0] == "Reference" and order[-1] == "Anchor"
    means = mushra.groupby("system_a")["score"].mean()
    t = res.table.set_index("system")
    assert stats.kendalltau(t.loc[means.index, "log_strength"], means).statistic > 0.8
    assert isinstance(res.win_fraction, pd.DataFrame)
    wf = res.win_fraction
    assert wf.loc["Reference", "Anchor"] > 0.9
    assert np.allclose((wf + wf.T).to_numpy()[~np.eye(len(wf), dtype=bool)], 1.0)
