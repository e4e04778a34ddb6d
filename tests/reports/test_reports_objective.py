"""Objective score tables: summaries, Kruskal–Wallis, Kendall tau against subjective scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.errors import InputError
from reports.objective import metric_agreement, metric_columns, metric_summary, metric_tests, prepare_scores


@pytest.fixture()
def scores():
    rng = np.random.default_rng(0)
    systems = np.repeat(["A", "B", "C", "D", "E", "F"], 8)
    level = {"A": 0.1, "B": 0.2, "C": 0.3, "D": 0.4, "E": 0.5, "F": 0.6}
    return pd.DataFrame({
        "clip": [f"c{i}" for i in range(48)], "system": systems,
        "skate": [level[s] + rng.normal(0, 0.05) for s in systems],
        "jerk": rng.normal(3, 1, 48).astype(str),  # numbers stored as text still count
        "note": ["x"] * 48,
    })


def test_metric_columns_and_errors(scores):
    assert metric_columns(scores) == ["skate", "jerk"]
    # how a file is put together (evalkit score --model: takes and loop copies) is not a metric
    layout = scores.assign(cuts=np.arange(48) % 2, copies=1 + np.arange(48) % 3)
    assert metric_columns(layout) == ["skate", "jerk"]
    assert prepare_scores(layout).attrs["bookkeeping"] == ["cuts", "copies"]
    with pytest.raises(InputError, match="'system' column"):
        prepare_scores(scores.drop(columns="system"))
    with pytest.raises(InputError, match="no numeric metric"):
        prepare_scores(scores[["system", "note"]])


def test_summary_and_tests_match_scipy(scores):
    sc = prepare_scores(scores)
    s = metric_summary(sc)
    a = s[(s.metric == "skate") & (s.system == "A")].iloc[0]
    x = sc.loc[sc.system == "A", "skate"]
    assert a["mean"] == pytest.approx(x.mean()) and a["sd"] == pytest.approx(x.std())
    t = metric_tests(sc).set_index("metric")
    ref = stats.kruskal(*[g["skate"] for _, g in sc.groupby("system")])
    assert t.loc["skate", "H"] == pytest.approx(ref.statistic) and t.loc["skate", "p"] == pytest.approx(ref.pvalue)
    assert t.loc["skate", "epsilon2"] == pytest.approx(ref.statistic / 47)


def test_agreement_with_subjective(scores):
    sc = prepare_scores(scores)
    subjective = pd.Series({"A": 1.0, "B": 0.7, "C": -0.2, "D": 0.1, "E": -0.5, "F": -1.1, "Z": 3.0})
    t = metric_agreement(sc, subjective).set_index("metric")
    means = sc.groupby("system")["skate"].mean()
    ref = stats.kendalltau(means.loc[list("ABCDEF")], subjective.loc[list("ABCDEF")])
    assert t.loc["skate", "systems"] == 6  # 'Z' has no scores
    assert t.loc["skate", "tau"] == pytest.approx(ref.statistic) and t.loc["skate", "tau"] < -0.8
    assert t.loc["skate", "ci_low"] < t.loc["skate", "tau"] < t.loc["skate", "ci_high"]


def test_metric_without_variance_is_not_tested(scores):
    """A metric that is numerical noise (~1e-14, like a bone-length drift on rigid skeletons) is
    marked, not given a Kruskal–Wallis p or a Kendall tau; it leaves the Holm family."""
    rng = np.random.default_rng(1)
    level = {"A": 1, "B": 2, "C": 3, "D": 4, "E": 5, "F": 6}
    scores = scores.assign(drift=[level[s] * 1e-14 + rng.normal(0, 1e-16) for s in scores["system"]],
                           zero=0.0, big=[1e6 + level[s] * 1e-12 for s in scores["system"]])
    metrics = ["skate", "drift", "zero", "big"]
    tests = metric_tests(prepare_scores(scores), metrics).set_index("metric")
    for m in ("drift", "zero", "big"):
        assert np.isnan(tests.loc[m, "H"]) and np.isnan(tests.loc[m, "p_holm"]), m
        assert tests.loc[m, "note"].startswith("no variance"), m
    assert tests.loc["skate", "note"] == "" and tests.loc["skate", "p_holm"] == tests.loc["skate", "p"]
    subj = pd.Series([6.0, 5, 4, 3, 2, 1], index=list("ABCDEF"))
    agree = metric_agreement(prepare_scores(scores), subj, metrics=metrics).set_index("metric")
    assert np.isnan(agree.loc["drift", "tau"]) and agree.loc["drift", "note"].startswith("no variance")
    assert agree.loc["skate", "tau"] == pytest.approx(-1.0)
