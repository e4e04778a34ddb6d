"""build_report end to end: files, sensible MUSHRA report, determinism, objective-only reports,
and report.html in a real browser (headless Debian chromium via Playwright)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.errors import InputError
from reports import ReportConfig, build_report
from reports.importers import load_input
from reports.simulate import SIMULATED_NOTE, simulate_pairwise
from tests.conftest import require_system, shared_data
from tests.reports.helpers import EXCERPT

FAST = ReportConfig(n_boot=200, bt_boot=200)
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def mushra_report(tmp_path_factory):
    ratings = load_input(shared_data("ratings", "mushra-speech-codec", "ratings_formated.csv"))[1]
    out = tmp_path_factory.mktemp("mushra")
    return build_report(ratings, None, out, seed=0, title="Speech codec MUSHRA", config=FAST)


@pytest.fixture(scope="module")
def pairwise_report(tmp_path_factory):
    ratings, _ = simulate_pairwise(400, 4, 16, scale="cmos5", seed=2)
    rng = np.random.default_rng(0)
    items = sorted(set(ratings["item"]))
    systems = np.tile(["S1", "S2", "S3", "S4"], len(items))
    scores = pd.DataFrame({"system": systems, "item": np.repeat(items, 4), "clip": range(len(systems)),
                           "foot_skate_ratio": [{"S1": .05, "S2": .1, "S3": .2, "S4": .3}[s]
                                                + rng.normal(0, .01) for s in systems]})
    out = tmp_path_factory.mktemp("pairwise")
    return build_report(ratings, scores, out, seed=3, banner="Ratings in this report are SIMULATED",
                        config=ReportConfig(n_boot=200, bt_boot=200, better=(("foot_skate_ratio", "lower"),)))


def test_mushra_report_is_sensible(mushra_report):
    out = mushra_report.parent
    html = mushra_report.read_text()
    assert "the hidden reference (Reference) ranks 1 of 9" in html
    assert "the anchor Anchor ranks 9 of 9" in html
    systems = pd.read_csv(out / "tables" / "systems_mushra.csv")
    assert systems["system"].iloc[0] == "Reference" and systems["system"].iloc[-1] == "Anchor"
    flow = pd.read_csv(out / "tables" / "participant_flow.csv")
    assert flow["participants"].iloc[-1] == 19  # BS.1534-3 post-screening removes 2 of 21
    for name in ("box_mushra", "significance_mushra"):
        assert (out / "figures" / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
        assert (out / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    tex = (out / "tables" / "systems_mushra.tex").read_text()
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    methods = (out / "methods.md").read_text()
    for needle in ("Friedman", "Holm", "zero_method='pratt'", "seed 0", "scipy ", "statsmodels ",
                   "Krippendorff", "BS.1534-3"):
        assert needle in methods
    assert 'src="data:image/png;base64,' in html


def test_pairwise_report_contents(pairwise_report):
    out = pairwise_report.parent
    html = pairwise_report.read_text()
    assert html.index("Ratings in this report are SIMULATED") < html.index("<h1>")
    assert SIMULATED_NOTE in html
    for name in ("pairwise_cmos5", "bradley_terry_cmos5", "position_bias_cmos5", "robustness_cmos5",
                 "agreement_cmos5", "win_fraction_cmos5", "metric_agreement", "metrics_by_system"):
        assert (out / "tables" / f"{name}.csv").exists(), name
        assert (out / "tables" / f"{name}.tex").exists(), name
    for name in ("comparisons_cmos5", "preferences_cmos5", "bt_forest_cmos5", "significance_cmos5",
                 "metrics"):
        assert (out / "figures" / f"{name}.png").exists(), name
    # the report names its primary analysis first, and the significance figure is drawn from it
    assert html.index("Primary analysis — cmos5: Bradley–Terry") < html.index("Participants and screening")
    assert "Significance matrix of the primary analysis: Bradley–Terry differences" in html
    bt = pd.read_csv(out / "tables" / "bradley_terry_cmos5.csv")
    assert list(bt["system"]) == ["S1", "S2", "S3", "S4"]
    agree = pd.read_csv(out / "tables" / "metric_agreement.csv").set_index("metric")
    # S1 skates least and is preferred most (simulated strengths 1 > ... > -1): the metric
    # (lower = better, as configured) agrees with the raters on well over half the rated pairs
    assert agree.loc["foot_skate_ratio", "agreement"] > 0.6
    assert agree.loc["foot_skate_ratio", "ci_low"] > 0.5
    assert np.isnan(agree.loc["foot_skate_ratio", "tau"])  # 4 systems: no τ, and the page says why
    assert "No system-level Kendall τ: it needs at least 5 systems and there are 4" in html
    assert (out / "figures" / "metric_agreement.png").exists()


def test_deterministic_with_seed(tmp_path):
    ratings = load_input(EXCERPT)[1]
    a = build_report(ratings, None, tmp_path / "a", seed=5, config=FAST).parent
    b = build_report(ratings, None, tmp_path / "b", seed=5, config=FAST).parent
    c = build_report(ratings, None, tmp_path / "c", seed=6, config=FAST).parent
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert (a / "tables" / "systems_mushra.csv").read_bytes() != (c / "tables" / "systems_mushra.csv").read_bytes()


def test_objective_only_with_extra_tables(tmp_path):
    scores = pd.DataFrame({"system": ["smg", "smg", "bpmg", "bpmg"], "clip": list("abcd"),
                           "transition_cost": [0.2, 0.3, 0.5, 0.4]})
    extra = {"SMG transitions": pd.DataFrame({"threshold": [0.3, 0.5], "edges": [10, 40]}),
             "GMG graph": pd.DataFrame({"nodes": [12], "scc": [9]})}
    html = build_report(None, scores, tmp_path, title="Demo", banner="Objective tables only",
                        extra_tables=extra).read_text()
    assert html.index("SMG transitions") < html.index("GMG graph")
    assert (tmp_path / "tables" / "extra_smg_transitions.csv").exists()
    assert "Participants and screening" not in html
    with pytest.raises(InputError, match="nothing to report"):
        build_report(None, None, tmp_path / "x")


def test_html_escapes_names(tmp_path):
    ratings, _ = simulate_pairwise(120, 3, 6, scale="pref3", seed=1)
    ratings = ratings.replace({"S1": "<b>S1</b>"})
    html = build_report(ratings, None, tmp_path, config=ReportConfig(n_boot=50, bt_boot=50,
                                                                    robustness=False)).read_text()
    assert "<b>S1</b>" not in html and "&lt;b&gt;S1&lt;/b&gt;" in html


@pytest.mark.browser
def test_report_renders_in_chromium(pairwise_report, tmp_path):
    require_system("chromium", CHROMIUM.exists() and shutil.which(str(CHROMIUM)) is not None,
                   "Debian chromium at /usr/bin/chromium is needed for the browser test")
    from PIL import Image
    from playwright.sync_api import sync_playwright

    errors = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1600})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(pairwise_report.as_uri())
            page.wait_for_load_state("load")
            images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
            assert len(images) >= 5 and all(ok and w > 100 for ok, w in images)
            assert page.locator("h1").inner_text() == "evalkit report"
            shot = page.screenshot(full_page=True)
            (tmp_path / "report.png").write_bytes(shot)
        finally:
            browser.close()
    assert errors == []
    img = np.asarray(Image.open(io.BytesIO(shot)).convert("L"), float)
    assert img.shape[0] > 2000  # a long page
    assert (img < 200).mean() > 0.02  # not blank: text, tables and figures drawn


def _png_text(path: Path) -> dict:
    from PIL import Image

    with Image.open(path) as im:
        return dict(im.text)


def test_simulated_ratings_marked_in_every_subjective_output(pairwise_report):
    """Simulated ratings: every subjective figure, table caption (HTML and LaTeX), subjective CSV
    and ratings_analysed.csv say so; the objective metric tables (real scores) do not."""
    out = pairwise_report.parent
    html = pairwise_report.read_text()
    subjective = ["participant_flow", "raters", "pairwise_cmos5", "position_bias_cmos5",
                  "bradley_terry_cmos5", "win_fraction_cmos5", "bt_differences_cmos5",
                  "robustness_cmos5", "agreement_cmos5", "metric_agreement",
                  "counterbalance_pairs_cmos5", "counterbalance_segments_cmos5"]
    for name in subjective:
        csv = pd.read_csv(out / "tables" / f"{name}.csv")
        assert csv.columns[0] == "data" and set(csv["data"]) == {"simulated"}, name
        tex = (out / "tables" / f"{name}.tex").read_text()
        assert "\\caption{SIMULATED ratings" in tex, name
    for name in ("metrics_by_system", "metric_tests"):
        assert "data" not in pd.read_csv(out / "tables" / f"{name}.csv").columns, name
        assert "SIMULATED" not in (out / "tables" / f"{name}.tex").read_text(), name
    assert html.count('<div class="caption">SIMULATED ratings') == len(subjective)
    analysed = pd.read_csv(out / "ratings_analysed.csv")
    assert set(analysed["data"]) == {"simulated"}
    for name in ("comparisons_cmos5", "preferences_cmos5", "bt_forest_cmos5", "significance_cmos5"):
        assert _png_text(out / "figures" / f"{name}.png").get("Title", "").startswith("SIMULATED ratings"), name
        pdf = (out / "figures" / f"{name}.pdf").read_bytes()
        assert b"/Title (SIMULATED ratings" in pdf, name
    assert "SIMULATED" not in _png_text(out / "figures" / "metrics.png").get("Title", "")
    assert b"SIMULATED" not in (out / "figures" / "metrics.pdf").read_bytes()


def test_real_ratings_are_not_marked_simulated(mushra_report):
    out = mushra_report.parent
    assert "SIMULATED" not in mushra_report.read_text()
    assert "data" not in pd.read_csv(out / "ratings_analysed.csv").columns
    assert "data" not in pd.read_csv(out / "tables" / "systems_mushra.csv").columns
    assert "SIMULATED" not in _png_text(out / "figures" / "box_mushra.png").get("Title", "")


def test_simulated_ratings_get_a_banner_without_being_asked(tmp_path):
    ratings, _ = simulate_pairwise(120, 3, 6, scale="pref3", seed=1)
    html = build_report(ratings, None, tmp_path, config=ReportConfig(n_boot=50, bt_boot=50,
                                                                    robustness=False)).read_text()
    assert html.index('class="banner"') < html.index("<h1>")
    assert (tmp_path / "methods.md").read_text().split("\n\n")[1].startswith("SIMULATED")


def test_reread_simulated_ratings_stay_simulated(pairwise_report, tmp_path):
    kind, again = load_input(pairwise_report.parent / "ratings_analysed.csv")
    assert kind == "ratings"
    build_report(again, None, tmp_path, config=ReportConfig(n_boot=20, bt_boot=20, robustness=False))
    assert set(pd.read_csv(tmp_path / "tables" / "pairwise_cmos5.csv")["data"]) == {"simulated"}
    assert "SIMULATED" in (tmp_path / "report.html").read_text()


def test_bt_differences_are_simultaneous_and_warn_when_fragile(tmp_path, pairwise_report):
    from tests.reports.helpers import long_table

    # three raters; every bootstrap round needs both r1 (A>B, B>C) and r2 (C>A) to have a
    # finite estimate, so most rounds (1 - 12/27 = 56 %) fail
    rows = [("r1", "i1", "A", "B", 2), ("r1", "i2", "B", "C", 2), ("r2", "i1", "C", "A", 1),
            ("r3", "i1", "A", "B", 1), ("r3", "i2", "A", "B", 2)]
    build_report(long_table(rows), None, tmp_path, config=ReportConfig(n_boot=50, bt_boot=400,
                                                                         robustness=False))
    diffs = pd.read_csv(tmp_path / "tables" / "bt_differences_cmos5.csv")
    assert {"significant", "p_adjusted", "ci_low", "ci_high"} <= set(diffs.columns)
    tex = (tmp_path / "tables" / "bt_differences_cmos5.tex").read_text()
    assert "simultaneous 95\\% intervals over all 3 pairs" in tex
    assert "bootstrap rounds" in tex and "left out" in tex and "only 3 participant(s)" in tex
    assert "only 3 participant(s)" in (tmp_path / "tables" / "bradley_terry_cmos5.tex").read_text()
    # every pair rests on fewer than 5 raters: marked with a dagger
    assert tex.count("\\dag{}") >= 3
    # a study with 16 raters and no failed rounds gets no caution
    good = (pairwise_report.parent / "tables" / "bt_differences_cmos5.tex").read_text()
    assert "over all 6 pairs" in good and "Caution" not in good


def test_significance_figure_agrees_with_primary_analysis(pairwise_report, mushra_report):
    """The significance matrix is drawn from the primary analysis' own decisions: the
    Bradley–Terry simultaneous intervals (pairwise) and the rater-level Holm tests (MUSHRA)."""
    from reports.pairwise import significance_matrix

    out = pairwise_report.parent
    diffs = pd.read_csv(out / "tables" / "bt_differences_cmos5.csv")
    assert ((diffs["ci_low"] > 0) | (diffs["ci_high"] < 0)).eq(diffs["significant"]).all()
    assert diffs["significant"].sum() >= 3  # four systems 0.67 logits apart, 400 answers
    m = significance_matrix(diffs.rename(columns={"difference": "mean"}), ["S1", "S2", "S3", "S4"],
                            tested_col="")
    assert m.loc["S1", "S4"] == 1 and m.loc["S4", "S1"] == -1
    pw = pd.read_csv(mushra_report.parent / "tables" / "pairwise_mushra.csv")
    assert pw["significant"].sum() > 0 and (pw["significant"] == (pw["p_holm"] < 0.05)).all()
    assert pw["n"].max() <= 21  # one pair of values per rater, not per rating


def test_answer_level_tests_are_labelled_as_ignoring_rater_clustering(mushra_report, pairwise_report):
    for out, tables in ((mushra_report.parent, ("systems_mushra", "pairwise_blocks_mushra")),
                        (pairwise_report.parent, ("pairwise_cmos5", "position_bias_cmos5"))):
        n_raters = len(pd.read_csv(out / "ratings_analysed.csv")["participant"].unique())
        for name in tables:
            tex = (out / "tables" / f"{name}.tex").read_text()
            assert "as independent, not accounting for rater clustering" in tex, name
            assert f"from {n_raters} raters" in tex, name
            assert "the cluster-robust CI (the default)" in tex, name
        methods = (out / "methods.md").read_text()
        assert "not accounting for rater clustering" in methods
        assert f"from {n_raters} raters" in methods
    html = mushra_report.read_text()
    assert "blocks of the same rater treated as independent" in html


def test_html_p_values_read_as_text(mushra_report):
    html = mushra_report.read_text()
    assert "p = &lt;" not in html and "p = <" not in html
    assert "p &lt; 0.001, Kendall" in html  # the Friedman test of the codec data


def test_methods_say_what_screening_actually_did(mushra_report, pairwise_report, tmp_path):
    excluded = (mushra_report.parent / "methods.md").read_text()  # BS.1534-3 excludes 2 raters
    assert "results without exclusions are shown alongside" in excluded
    assert "declared in advance" not in excluded and "not stated to have been declared" in excluded
    none = (pairwise_report.parent / "methods.md").read_text()  # simulated: nobody excluded
    assert "shown alongside" not in none and "no participant was excluded" in none
    ratings, _ = simulate_pairwise(120, 3, 6, scale="pref3", seed=1)
    build_report(ratings, None, tmp_path, config=ReportConfig(n_boot=20, bt_boot=20, robustness=False,
                                                              rules_declared=True))
    declared = (tmp_path / "methods.md").read_text()
    assert "declared in advance" in declared and "not declared" not in declared


def _tex_tables(folder: Path):
    import re

    for f in sorted((folder / "tables").glob("*.tex")):
        text = f.read_text()
        for env, spec, head in re.findall(r"\\begin\{(table\*?)\}.*?\\begin\{tabular\}\{([lr]+)\}\n\\toprule\n(.*?)\n",
                                          text, re.S):
            yield f.name, env, len(spec), head


def test_latex_tables_are_paper_sized_with_human_headers(mushra_report, pairwise_report):
    for report in (mushra_report, pairwise_report):
        found = 0
        for name, env, ncol, head in _tex_tables(report.parent):
            found += 1
            assert ncol <= 8, (name, ncol)
            assert env == ("table" if ncol <= 6 else "table*"), (name, env, ncol)
            # no raw snake_case header (an escaped underscore inside a header cell)
            assert "\\_" not in head, (name, head)
            assert "\\toprule" not in head
        assert found >= 8
    tex = (pairwise_report.parent / "tables" / "bradley_terry_cmos5.tex").read_text()
    assert "Log-strength (SE)" in tex and "log\\_strength" not in tex


def test_wide_table_is_split_for_latex(tmp_path):
    from reports.document import TableItem, write_table

    df = pd.DataFrame({f"metric_{i}": [1.0, 2.0] for i in range(12)}, index=["a", "b"]).reset_index(names="system")
    write_table(TableItem("wide", "A wide table", df), tmp_path)
    tex = (tmp_path / "tables" / "wide.tex").read_text()
    assert tex.count("\\begin{tabular}") == 2 and "(part 1 of 2)" in tex
    assert all(ncol <= 8 for _, _, ncol, _ in _tex_tables(tmp_path))
    assert "Metric 0" in tex  # snake_case turned into words


def test_csv_tables_neutralise_spreadsheet_formulas(tmp_path):
    ratings, _ = simulate_pairwise(150, 3, 8, scale="pref3", seed=4)
    ratings = ratings.replace({"S1": "=HYPERLINK(\"http://x\")", "S2": "@SUM(A1)"})
    build_report(ratings, None, tmp_path, config=ReportConfig(n_boot=20, bt_boot=20, robustness=False))
    bt = pd.read_csv(tmp_path / "tables" / "bradley_terry_pref3.csv")
    assert set(bt["system"]) == {"'=HYPERLINK(\"http://x\")", "'@SUM(A1)", "S3"}
    assert bt["log_strength"].dtype.kind == "f"  # numbers (negative ones too) stay numbers
    analysed = pd.read_csv(tmp_path / "ratings_analysed.csv")
    assert not analysed["system_a"].astype(str).str.startswith(("=", "@")).any()


def test_unconnected_groups_of_systems_are_called_separate_studies(tmp_path):
    from tests.reports.helpers import long_table

    rows = [(f"p{i}", "i", "A", "B", 1) for i in range(6)] + [(f"q{i}", "i", "C", "D", -1) for i in range(6)]
    html = build_report(long_table(rows), None, tmp_path,
                        config=ReportConfig(n_boot=20, bt_boot=20, robustness=False)).read_text()
    assert "form 2 unconnected groups of systems (A, B; C, D)" in html


def test_per_rater_table_shortens_long_ids_and_leaves_out_empty_columns(tmp_path):
    """A web test's 32-character rater ids would widen the per-rater table past the page: the
    page shows their first 8 characters (the CSV keeps them whole); columns without a value (no
    hidden reference here) are not shown."""
    import hashlib
    import re

    ratings, _ = simulate_pairwise(120, 3, 6, scale="cmos5", seed=5)
    long = {p: hashlib.sha256(p.encode()).hexdigest()[:32] for p in ratings["participant"].unique()}
    ratings["participant"] = ratings["participant"].map(long)
    out = build_report(ratings, None, tmp_path, config=ReportConfig(n_boot=50, bt_boot=50, robustness=False),
                       progress=False)
    html = out.read_text()
    table = html.split("Per-rater indicators", 1)[1].split("</table>", 1)[0]
    headers = re.findall(r"<th>(.*?)</th>", table)
    assert headers[0] == "Rater" and "Ref. items" not in headers and "reference_items" not in headers
    for full in long.values():
        assert f"<td>{full[:8]}…</td>" in table and full not in table
    assert set(pd.read_csv(tmp_path / "tables" / "raters.csv")["participant"]) == set(long.values())
