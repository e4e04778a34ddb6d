"""GENEA leaderboard protocol: reasons, counterbalancing and appropriateness (constructed data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reports import ReportConfig, build_report
from reports.genea import appropriateness, counterbalance, mismatched_pairs, reason_tally
from reports.importers import load_input
from tests.reports.helpers import DATA, long_table


def test_reasons_ticked_are_tallied_with_the_winner():
    _, df = load_input(DATA / "genea_battles_constructed.csv")
    tally = reason_tally(pd.DataFrame(df.attrs["genea_reasons"])).set_index("reason")
    assert tally.loc["motion", "ticks"] == 1 and tally.loc["motion", "top_winner"] == "NA (1)"
    assert tally.loc["other (free text)", "ticks"] == 1  # "too jerky", NA won that battle
    assert tally.loc["motion", "share"] == pytest.approx(0.5)  # 2 battles carry a reason


def test_counterbalancing_counts_votes_per_pair_segment_and_position():
    _, df = load_input(DATA / "genea_battles_constructed.csv")
    pairs, segs = counterbalance(df)
    pairs = pairs.set_index("pair")
    # NA vs SA: rows u1 (NA first), u2 (SA first), u3 (NA first)
    assert pairs.loc["NA vs SA", "votes"] == 3 and pairs.loc["NA vs SA", "first_a"] == 2
    assert pairs["votes"].sum() == len(df) and set(segs["item"]) == {"clip01", "clip02", "clip03"}
    assert segs.set_index("item").loc["clip01", "votes"] == 3


def test_appropriateness_win_rate_splits_ties_and_doubles_strong_votes():
    rows = [("p1", "i1", "X", "X mismatched", 2), ("p1", "i2", "X", "X mismatched", 1),
            ("p2", "i1", "X mismatched", "X", 2), ("p2", "i2", "X", "X mismatched", 0),
            ("p3", "i1", "X", "X mismatched", -1)]
    df = long_table(rows, scale="genea")
    assert mismatched_pairs(["X", "X mismatched", "Y"]) == {"X mismatched": "X"}
    t = appropriateness(df, n_boot=200).set_index("system")
    # matched votes: strong 2 + weak 1 + tie 0.5; total weight: 2 + 1 + 2 + 1 + 1 = 7
    assert t.loc["X", "matched_win_rate"] == pytest.approx(3.5 / 7)
    assert t.loc["X", "mas"] == pytest.approx(np.mean([2, 1, -2, 0, -1]))
    assert t.loc["X", "battles"] == 5 and t.loc["X", "raters"] == 3


def test_report_analyses_appropriateness_apart_from_the_ranking(tmp_path):
    rng = np.random.default_rng(1)
    rows = []
    for p in range(12):
        for i in range(6):
            rows.append((f"p{p}", f"i{i}", "A", "B", int(rng.choice([2, 1, 0, -1], p=[.4, .3, .2, .1]))))
            rows.append((f"p{p}", f"i{i}", "B", "C", int(rng.choice([2, 1, 0, -1], p=[.4, .3, .2, .1]))))
            rows.append((f"p{p}", f"i{i}", "A", "C", int(rng.choice([2, 1, 0, -1], p=[.4, .3, .2, .1]))))
            rows.append((f"p{p}", f"i{i}", "A", "A mismatched", int(rng.choice([2, 1, 0, -1]))))
    df = long_table(rows, scale="genea")
    html = build_report(df, None, tmp_path, config=ReportConfig(n_boot=50, bt_boot=50, robustness=False)).read_text()
    bt = pd.read_csv(tmp_path / "tables" / "bradley_terry_genea.csv")
    assert set(bt["system"]) == {"A", "B", "C"}  # the mismatched condition is not ranked
    appr = pd.read_csv(tmp_path / "tables" / "appropriateness_genea.csv")
    assert list(appr["system"]) == ["A"] and appr["battles"].iloc[0] == 72
    assert "Appropriateness against mismatched speech" in html
    assert (tmp_path / "tables" / "counterbalance_pairs_genea.csv").exists()


def test_empty_reason_object_written_on_ties_is_no_reason(tmp_path):
    # constructed battles in the export's layout: the export writes {} for a battle without reasons
    p = tmp_path / "battles.csv"
    p.write_text('user,input_code,model_a,model_b,winner,is_strong,juiceOptions,juiceOtherReason\n'
                 'u1,c1,NA,SA,tie,,{},\n'
                 'u1,c2,NA,SA,tie,,{},\n'
                 'u2,c1,NA,SA,model_a,True,"[""motion""]",\n'
                 'u2,c2,SA,NA,model_b,False,"{""motion"": true, ""speech"": false}",\n'
                 'u3,c1,SA,NA,tie,,[],\n')
    _, df = load_input(p)
    reasons = pd.DataFrame(df.attrs["genea_reasons"])
    assert [len(r) for r in reasons["reasons"]] == [0, 0, 1, 1, 0]
    tally = reason_tally(reasons).set_index("reason")
    assert list(tally.index) == ["motion"]  # no "{}" reason, no "tie" winner from empty ticks
    assert tally.loc["motion", "ticks"] == 2 and tally.loc["motion", "share"] == pytest.approx(1.0)
    assert tally.loc["motion", "top_winner"] == "NA (2)"


def test_appropriateness_of_two_raters_carries_the_few_raters_mark(tmp_path):
    rows = []
    for p in range(12):
        for i in range(4):
            rows.append((f"p{p}", f"i{i}", "A", "B", [2, 1, 0, -1][(p + i) % 4]))
            rows.append((f"p{p}", f"i{i}", "B", "C", [1, 2, -1, 0][(p + i) % 4]))
            rows.append((f"p{p}", f"i{i}", "A", "C", [2, 0, 1, 1][(p + i) % 4]))
    for p in range(2):  # only two raters saw the appropriateness battles
        rows += [(f"p{p}", f"i{i}", "A", "A mismatched", [2, -2, 1, 0][(p + i) % 4]) for i in range(4)]
    html = build_report(long_table(rows, scale="genea"), None, tmp_path,
                        config=ReportConfig(n_boot=50, bt_boot=50, robustness=False)).read_text()
    section = html[html.index("Appropriateness against mismatched speech"):]
    assert "A †" in section[:4000] and "fewer than" in section[:4000]
    appr = pd.read_csv(tmp_path / "tables" / "appropriateness_genea.csv")
    assert appr["raters"].iloc[0] == 2
