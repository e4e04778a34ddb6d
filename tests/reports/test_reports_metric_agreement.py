"""Which metric agrees with the raters: rated clip pairs, agreement shares, the raters' own
agreement and system-level Kendall τ, on CONSTRUCTED data whose truth is known (each clip has
a known quality; raters prefer the better clip with a known probability)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from reports.metric_agreement import MIN_TAU_SYSTEMS, agreement_figure, metric_agreement, rated_pairs, rater_agreement
from reports.table import validate_ratings


def constructed_study(n_systems=3, n_items=6, n_raters=30, p_correct=0.8, tie_share=0.0, seed=0):
    """Clips of known quality q (item x system); each rater answers every pair of every item,
    preferring the better clip with probability ``p_correct`` (or saying "same" with
    ``tie_share``). Metrics: ``skate_fraction`` = -q (lower is better in the registry: agrees),
    ``naturalness`` = -q (higher is better: disagrees), ``jerk_mean`` (no direction)."""
    rng = np.random.default_rng(seed)
    systems = [f"sys{i}" for i in range(n_systems)]
    items = [f"item{i}" for i in range(n_items)]
    quality = {(it, s): float(n_systems - j + rng.uniform(-0.4, 0.4))
               for it in items for j, s in enumerate(systems)}
    rows = []
    for r in range(n_raters):
        t = 0
        for it in items:
            for i in range(n_systems):
                for j in range(i + 1, n_systems):
                    a, b = systems[i], systems[j]
                    a_better = quality[(it, a)] > quality[(it, b)]
                    right = rng.random() < p_correct
                    score = 0 if rng.random() < tie_share else (1 if a_better == right else -1)
                    t += 1
                    rows.append({"participant": f"r{r:02d}", "trial": t, "item": it, "system_a": a,
                                 "system_b": b, "score": float(score), "scale": "cmos5"})
    ratings = validate_ratings(pd.DataFrame(rows), "constructed")
    scores = pd.DataFrame([{"item": it, "system": s, "skate_fraction": -q, "naturalness": -q, "jerk_mean": q}
                           for (it, s), q in quality.items()])
    return ratings, scores, systems


def test_a_metric_ordering_clips_like_the_truth_agrees_as_often_as_a_rater_is_right():
    ratings, scores, _ = constructed_study(p_correct=0.8, n_raters=40)
    res = metric_agreement(ratings, scores, ["skate_fraction", "naturalness", "jerk_mean"], n_boot=500, seed=1)
    t = res.table.set_index("metric")
    # skate_fraction = -quality, lower better: it prefers the truly better clip, which the raters
    # preferred in 80 % of answers; naturalness = -quality, higher better: the opposite
    assert t.loc["skate_fraction", "agreement"] == pytest.approx(0.8, abs=0.03)
    assert t.loc["naturalness", "agreement"] == pytest.approx(0.2, abs=0.03)
    assert t.loc["skate_fraction", "agreement"] + t.loc["naturalness", "agreement"] == pytest.approx(1.0)
    assert t.loc["skate_fraction", "ci_low"] <= 0.8 <= t.loc["skate_fraction", "ci_high"]
    assert t.loc["skate_fraction", "pairs"] == len(ratings) and t.loc["skate_fraction", "raters"] == 40
    assert t.loc["skate_fraction", "better"] == "lower" and t.loc["naturalness", "better"] == "higher"
    # no direction in the registry: not judged, and the table says why
    assert np.isnan(t.loc["jerk_mean", "agreement"]) and "no direction" in t.loc["jerk_mean", "note"]
    # two independent raters, each right with p: they agree with p² + (1-p)² = 0.68
    assert res.raters["agreement"] == pytest.approx(0.68, abs=0.03)
    assert res.raters["ci_low"] <= 0.68 <= res.raters["ci_high"]


def test_a_metric_that_cannot_tell_clips_apart_scores_one_half():
    ratings, scores, _ = constructed_study(p_correct=0.9)
    scores["skate_fraction"] = 0.1
    t = metric_agreement(ratings, scores, ["skate_fraction"], n_boot=200).table.iloc[0]
    assert t["agreement"] == 0.5 and t["metric_ties"] == t["pairs"]


def test_ties_state_no_preference_and_unscored_clips_are_not_counted():
    ratings, scores, _ = constructed_study(tie_share=0.3, seed=2)
    pairs, ties = rated_pairs(ratings)
    assert ties == int((ratings["score"] == 0).sum()) and ties > 0
    assert len(pairs) == len(ratings) - ties
    # orientation: the preferred system is system_a exactly when the score is positive
    nz = ratings[ratings["score"] != 0]
    assert (pairs["preferred"].to_numpy() == np.where(nz["score"] > 0, nz["system_a"], nz["system_b"])).all()
    dropped = scores[scores["item"] != "item0"]
    t = metric_agreement(ratings, dropped, ["skate_fraction"], n_boot=100).table.iloc[0]
    assert t["pairs"] == int((pairs["item"] != "item0").sum())


def test_check_trials_are_left_out():
    ratings, scores, _ = constructed_study(n_raters=5)
    ratings = ratings.copy()
    ratings.loc[ratings.index[:7], "flags"] = "check;check:gold"
    pairs, _ = rated_pairs(ratings)
    assert len(pairs) == len(ratings) - 7


def test_absolute_ratings_give_a_pair_per_two_clips_a_rater_rated_differently():
    rows = [("r1", "i1", "A", 5), ("r1", "i1", "B", 3), ("r1", "i1", "C", 3),
            ("r2", "i1", "A", 1), ("r2", "i1", "B", 4)]
    ratings = validate_ratings(pd.DataFrame([{"participant": p, "trial": n, "item": it, "system_a": s, "score": float(v),
                                              "scale": "acr5"} for n, (p, it, s, v) in enumerate(rows)]), "constructed")
    pairs, ties = rated_pairs(ratings)
    got = {(p, a, b) for p, a, b in zip(pairs["participant"], pairs["preferred"], pairs["other"])}
    assert got == {("r1", "A", "B"), ("r1", "A", "C"), ("r2", "B", "A")} and ties == 1  # r1: B = C
    # r1 prefers A over B, r2 B over A: the two raters disagree on their one common pair
    assert rater_agreement(pairs, n_boot=50)["agreement"] == 0.0


def test_raters_who_always_agree_have_agreement_one_and_an_interval_of_one():
    ratings, _, _ = constructed_study(p_correct=1.0, n_raters=6)
    r = rater_agreement(rated_pairs(ratings)[0], n_boot=100)
    assert r["agreement"] == 1.0 and r["ci_low"] == r["ci_high"] == 1.0
    n_pairs = len(ratings) // 6
    assert r["pairs"] == n_pairs * 6 * 5 // 2  # every clip pair, every two of the six raters


def test_bootstrap_interval_narrows_with_more_raters():
    widths = []
    for n in (8, 60):
        ratings, scores, _ = constructed_study(p_correct=0.7, n_raters=n, seed=4)
        t = metric_agreement(ratings, scores, ["skate_fraction"], n_boot=400, seed=0).table.iloc[0]
        widths.append(t["ci_high"] - t["ci_low"])
    assert widths[1] < widths[0] / 2


def test_system_tau_only_with_enough_systems():
    ratings, scores, systems = constructed_study(n_systems=MIN_TAU_SYSTEMS, n_raters=4, n_items=3)
    strength = pd.Series(np.linspace(1, -1, len(systems)), index=systems)  # sys0 best
    t = metric_agreement(ratings, scores, ["skate_fraction", "naturalness"], strength=strength,
                         n_boot=50).table.set_index("metric")
    # per-system means follow the truth: the agreeing metric τ = +1, the reversed one -1
    assert t.loc["skate_fraction", "tau"] == pytest.approx(1.0) and t.loc["naturalness", "tau"] == pytest.approx(-1.0)
    assert t.loc["skate_fraction", "systems"] == MIN_TAU_SYSTEMS
    few = [s for s in systems[:3]]
    sub = ratings[ratings["system_a"].isin(few) & ratings["system_b"].isin(few)]
    t3 = metric_agreement(sub, scores[scores["system"].isin(few)], ["skate_fraction"],
                          strength=strength.loc[few], n_boot=50).table.iloc[0]
    assert np.isnan(t3["tau"]) and f"≥ {MIN_TAU_SYSTEMS} systems (3 here)" in t3["note"]
    assert np.isfinite(t3["agreement"])


def test_directions_override_the_registry_for_unknown_columns():
    ratings, scores, _ = constructed_study(n_raters=4)
    scores["my_score"] = scores["jerk_mean"]  # = quality, so higher is better
    t = metric_agreement(ratings, scores, ["my_score"], n_boot=50).table.iloc[0]
    assert np.isnan(t["agreement"]) and "not in the metric registry" in t["note"]
    t = metric_agreement(ratings, scores, ["my_score"], directions={"my_score": "higher"}, n_boot=50).table.iloc[0]
    assert t["agreement"] == pytest.approx(0.8, abs=0.1)


def test_figure_draws_each_judged_metric_and_the_two_references():
    from matplotlib.figure import Figure

    ratings, scores, _ = constructed_study(n_raters=10)
    res = metric_agreement(ratings, scores, ["skate_fraction", "naturalness", "jerk_mean"], n_boot=100)
    fig = agreement_figure(res, labels={"skate_fraction": "Foot skate (%)"})
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["naturalness", "Foot skate (%)"]  # best at the top; jerk (no direction) left out
    assert ax.get_xlabel() and ax.get_xlim() == (0.0, 1.0)
    lines = {round(line.get_xdata()[0], 6) for line in ax.get_lines() if len(set(line.get_xdata())) == 1}
    assert 0.5 in lines and round(res.raters["agreement"], 6) in lines


@pytest.fixture(scope="module")
def agreement_report(tmp_path_factory):
    """A report of the constructed study: ratings and per-clip scores with a known agreement."""
    from reports import ReportConfig, build_report

    ratings, scores, _ = constructed_study(n_systems=3, n_items=6, n_raters=12, p_correct=0.85, seed=7)
    scores["clip"] = scores["item"] + "." + scores["system"]
    out = tmp_path_factory.mktemp("agreement-report")
    return build_report(ratings, scores, out, seed=1, title="Constructed study", progress=False,
                        config=ReportConfig(n_boot=200, bt_boot=200, robustness=False))


def test_report_section_table_figure_and_methods(agreement_report):
    import re

    out = agreement_report.parent
    html = agreement_report.read_text()
    assert "Which metric agrees with the raters" in html
    t = pd.read_csv(out / "tables" / "metric_agreement.csv").set_index("metric")
    assert t.loc["skate_fraction", "agreement"] == pytest.approx(0.85, abs=0.07)
    assert t.loc["naturalness", "agreement"] == pytest.approx(0.15, abs=0.07)
    assert "Not judged — no direction of better (compare with natural motion): Joint jerk, mean" in html
    assert "No system-level Kendall τ: it needs at least 5 systems and there are 3" in html
    assert (out / "figures" / "metric_agreement.pdf").read_bytes()[:4] == b"%PDF"
    section = html.split("<h2>Which metric agrees with the raters</h2>", 1)[1]
    cells = re.findall(r"<td>(.*?)</td>", section.split("</table>", 1)[0])
    assert "Foot skate, share of planted time (%)" in cells
    assert not [c for c in cells if re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", c)], "raw identifiers in the table"
    assert "Metric agreement with the raters" in (out / "methods.md").read_text()


def test_report_section_fits_1400px_in_chromium(agreement_report):
    import shutil
    from pathlib import Path

    from tests.conftest import require_system

    chromium = Path("/usr/bin/chromium")
    require_system("chromium", chromium.exists() and shutil.which(str(chromium)) is not None,
                   "Debian chromium at /usr/bin/chromium is needed for the browser test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium),
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(agreement_report.as_uri())
            page.wait_for_load_state("load")
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            clipped = page.evaluate("Array.from(document.querySelectorAll('table.data'))"
                                    ".filter(t => t.scrollWidth > t.clientWidth + 1).length")
            assert clipped == 0
            shown = page.evaluate("""Array.from(document.images).filter(i => i.alt.includes('Agreement with the raters')
                                     || (i.closest('figure') && i.closest('figure').textContent.includes('Agreement with the raters')))
                                     .map(i => [i.naturalWidth, i.getBoundingClientRect().width])""")
            assert shown and all(natural > 0 and 0 < width <= 1400 for natural, width in shown)
        finally:
            browser.close()


def test_real_mushra_ratings_against_each_codec_bitrate(tmp_path, capsys):
    """REAL ratings (neural-codec MUSHRA, 16 signals) judged against a real, declared property of
    each condition: its bitrate in kbit/s (from the condition's name; none for the reference, the
    anchor and AudioDec, whose names give none). 6 conditions with a bitrate: τ is computed."""
    import re

    from evalkit.cli import main
    from tests.conftest import shared_data

    src = shared_data("ratings", "mushra-speech-codec", "ratings_formated.csv")
    from reports.importers import load_input

    ratings = load_input(src)[1]
    rows = []
    for (item, system), _ in ratings.groupby(["item", "system_a"]):
        m = re.fullmatch(r"(?:Proposed|Lyra) ([0-9.]+)(?: 16kHz)?", system)
        rows.append({"item": item, "system": system, "clip": f"{item}/{system}",
                     "bitrate_kbps": float(m.group(1)) if m else np.nan})
    scores = tmp_path / "bitrates.csv"
    pd.DataFrame(rows).to_csv(scores, index=False)
    out = tmp_path / "rep"
    assert main(["report", str(src), "--scores", str(scores), "--out", str(out), "--n-boot", "300",
                 "--bt-boot", "100", "--no-robustness", "--better", "bitrate_kbps=higher", "-q"]) == 0, \
        capsys.readouterr().err
    t = pd.read_csv(out / "tables" / "metric_agreement.csv").set_index("metric")
    row = t.loc["bitrate_kbps"]
    assert row["systems"] == 6 and np.isfinite(row["tau"]) and -1 <= row["tau"] <= 1
    assert 0 <= row["ci_low"] <= row["agreement"] <= row["ci_high"] <= 1 and row["pairs"] > 100
    html = (out / "report.html").read_text()
    assert "Which metric agrees with the raters" in html and "τ (systems)" in html and "SIMULATED" not in html
