"""Screening: declared rules, participant flow, indicators."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reports.screening import ScreeningRules, consensus_correlation, screen
from reports.simulate import simulate_pairwise
from reports.table import validate_ratings


@pytest.fixture(scope="module")
def ratings():
    df, _ = simulate_pairwise(600, 4, 12, scale="cmos5", seed=7, rater_sd=0.2)
    df = df.copy()
    # r01 fails one catch trial; r02 always answers "left +2" (straight-liner); r03 is fast
    extra = pd.DataFrame({"participant": ["r01", "r01"], "item": ["catch", "catch"],
                          "system_a": ["S1", "S1"], "system_b": ["S4", "S4"], "score": [2, -2],
                          "scale": "cmos5", "flags": ["check", "check_failed"],
                          "side_shown": "left", "raw_answer": ["left +2", "left -2"]})
    df.loc[df.participant == "r02", "raw_answer"] = "left +2"
    df.loc[df.participant == "r02", "score"] = np.where(df.loc[df.participant == "r02", "side_shown"] == "left", 2.0, -2.0)
    df.loc[df.participant == "r03", "response_time_s"] = 0.4
    return validate_ratings(pd.concat([df, extra], ignore_index=True))


def test_flow_and_reasons(ratings):
    res = screen(ratings, ScreeningRules(min_median_rt_s=1.0))
    flow = dict(zip(res.flow.step, res.flow.participants))
    assert flow["recruited"] == 12 and flow["analysed"] == 9
    assert flow["excluded: failed checks"] == 1 and flow["excluded: straight-lining"] == 1
    assert flow["excluded: too fast"] == 1
    by = res.raters.set_index("participant")["excluded_by"]
    assert by["r01"] == "failed checks" and by["r02"] == "straight-lining" and by["r03"] == "too fast"
    assert not res.kept["participant"].isin(["r01", "r02", "r03"]).any()
    assert not res.all["item"].eq("catch").any()  # check trials never analysed
    assert len(res.all) == len(ratings) - 2
    r = res.raters.set_index("participant")
    assert r.loc["r01", "checks"] == 2 and r.loc["r01", "failed_checks"] == 1
    assert r.loc["r02", "straightline_share"] == 1.0


def test_rules_can_be_disabled(ratings):
    res = screen(ratings, ScreeningRules(study_exclusions=False, max_failed_checks=None, straightline_share=None,
                                         hidden_reference=None))
    assert res.flow.participants.iloc[-1] == 12 and res.rules.describe() == []


def test_consensus_correlation_hand_worked():
    # three raters on three units; r3 reverses the others
    rows = [(p, f"i{u}", "A", "", s) for p, vals in (("r1", [10, 50, 90]), ("r2", [20, 60, 80]),
                                                      ("r3", [90, 50, 10])) for u, s in enumerate(vals)]
    df = validate_ratings(pd.DataFrame(rows, columns=["participant", "item", "system_a", "system_b", "score"])
                          .assign(scale="mushra"))
    r = consensus_correlation(df)
    # r1 vs mean(r2, r3) = [55, 55, 45] -> Spearman r = -0.866; r3 vs [15, 55, 85] -> -1
    assert r["r3"] == pytest.approx(-1.0)
    assert r["r1"] == pytest.approx(-math.sqrt(3) / 2)


def test_hidden_reference_rule_applies_to_mushra_only():
    from reports.importers import load_input
    from reports.screening import screen
    from tests.reports.helpers import DATA

    _, lss = load_input(DATA / "webmushra_lss_constructed.csv")  # acr5, a stimulus called "ref" rated 5
    res = screen(lss)
    assert res.kept["participant"].nunique() == 2  # 5 < 90 must not exclude anyone on a 1-5 scale


def test_raters_the_study_excluded_while_it_ran_are_left_out_first(ratings):
    """The web test flags every row of a participant its rules excluded (e.g. a failed headphone
    check under ``action: flag``): the report leaves them out and says why."""
    marked = ratings.copy()
    rows = marked["participant"].isin(["r04", "r01"])
    marked.loc[rows, "flags"] = [";".join(t for t in (f, "excluded") if t) for f in marked.loc[rows, "flags"].fillna("")]
    res = screen(marked)
    by = res.raters.set_index("participant")["excluded_by"]
    assert by["r04"] == "study's exclusion rules" and by["r01"] == "study's exclusion rules"  # first rule wins
    assert by["r02"] == "straight-lining"
    assert not res.kept["participant"].isin(["r04"]).any()
    flow = dict(zip(res.flow.step, res.flow.participants))
    assert flow["excluded: study's exclusion rules"] == 2
    kept_all = screen(marked, ScreeningRules(study_exclusions=False))
    assert kept_all.kept["participant"].isin(["r04"]).any()
