"""Objective tables and figures a paper can take as they are, checked in real chromium: metric
names in words with units (no raw identifiers), no floating-point noise, no horizontal overflow
at 1400 px, a figure even when no metric differs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit.features.score import score_motion
from evalkit.motion import load_motion
from reports.report import build_report
from tests.conftest import require_system

SAMPLES = Path(__file__).resolve().parents[2] / "evalkit" / "data" / "samples" / "cmu"
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def objective_report(tmp_path_factory):
    """Real bundled clips scored, as two 'systems' (the bundled walks and the other takes)."""
    rows = []
    for f, system in (("16_15.amc", "walks"), ("07_05-walk.amc", "walks"), ("09_06-run.amc", "other"),
                      ("131_04-dance.amc", "other")):
        rows.append({"clip": f, "system": system, **score_motion(load_motion(SAMPLES / f))})
    out = tmp_path_factory.mktemp("paper")
    return build_report(None, pd.DataFrame(rows), out, progress=False)


def test_tables_use_words_units_and_precision(objective_report):
    html = objective_report.read_text()
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert cells
    assert not [c for c in cells if re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", c)], "raw identifiers in tables"
    assert not [c for c in cells if re.search(r"\de-\d", c)], "floating-point noise in tables"
    assert "Ground penetration depth, mean (mm)" in html
    assert "figures/metrics.pdf" in html  # a figure whether or not a metric differs


def _pages_as_shown(report: Path):
    """The report opened in chromium on a 1400-px screen and at A4 print width (794 CSS px less
    10-mm margins): yields ``(media, width, page)``, after checking that nothing overflows the page
    and that no data table is wider than its box."""
    require_system("chromium", CHROMIUM.exists() and shutil.which(str(CHROMIUM)) is not None,
                   "Debian chromium at /usr/bin/chromium is needed for the browser test")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            for media, width in (("screen", 1400), ("print", 718)):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.emulate_media(media=media)
                page.goto(report.as_uri())
                page.wait_for_load_state("load")
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), media
                clipped = page.evaluate("Array.from(document.querySelectorAll('table.data'))"
                                        ".filter(t => t.scrollWidth > t.clientWidth + 1).length")
                assert clipped == 0, media
                yield media, width, page
                page.close()
        finally:
            browser.close()


def test_no_overflow_in_chromium_at_1400px_and_a4(objective_report):
    for media, width, page in _pages_as_shown(objective_report):
        images = page.evaluate("Array.from(document.images).map(i => [i.naturalWidth, "
                               "i.getBoundingClientRect().right])")
        assert images and all(w > 100 and right <= width for w, right in images), media


def test_extra_tables_show_identifiers_in_words_and_noise_as_zero(tmp_path):
    """A study's own table (as a pipeline writes it) naming columns in its cells and carrying a
    difference of equal numbers (2.2e-16): the page shows words and 0, the CSV the raw values."""
    scores = pd.DataFrame({"system": ["a", "a", "b", "b"], "clip": list("wxyz"), "skate_fraction": [.1, .2, .3, .4]})
    extra = pd.DataFrame({"figure": ["skate_fraction", "offset_mad_rule_s"], "difference": [2.2e-16, 0.25],
                          "big": [1e5, 2.0e5]})
    out = build_report(None, scores, tmp_path, extra_tables={"Per variant": extra}, progress=False)
    html = out.read_text()
    table = html.split("Per variant", 2)[-1].split("</table>", 1)[0]
    cells = re.findall(r"<td>(.*?)</td>", table)
    assert "Foot skate, share of planted time (%)" in cells and "Offset mad rule s" in cells
    assert not [c for c in cells if re.search(r"\de-\d", c)] and cells[1] in ("0", "0.000")
    csv = pd.read_csv(tmp_path / "tables" / "extra_per_variant.csv")
    assert csv["difference"].iloc[0] == pytest.approx(2.2e-16) and csv["figure"].iloc[1] == "offset_mad_rule_s"


def test_numbers_large_and_small_as_a_paper_prints_them():
    from reports.document import _latex_escape, fmt_value

    assert fmt_value(123456.7) == "123,457" and fmt_value(-2.0e5) == "-200,000"
    assert fmt_value(1.234e-5) == "1.23×10⁻⁵" and fmt_value(3.0e13) == "3.00×10¹³"
    assert fmt_value(0.5) == "0.500" and fmt_value(0.0) == "0.000"
    assert _latex_escape("1.23×10⁻⁵ ± 2") == "1.23$\\times 10^{-5}$ $\\pm$ 2"


def _wide_table(n_metrics: int = 16) -> pd.DataFrame:
    """A per-variant table as the studies' pipelines write them: two naming columns, many metrics."""
    rng = np.random.default_rng(0)
    cols = {"method": ["graph", "graph", "blend"], "profile": ["walk to run", "run to walk", "walk to run"]}
    cols.update({f"response_duration_metric_{i}_frames_60fps": rng.normal(50, 10, 3) for i in range(n_metrics)})
    return pd.DataFrame(cols)


def test_wide_tables_split_into_parts_repeating_row_names(tmp_path):
    from reports.document import TableItem, display_frame, split_columns, to_latex

    item = TableItem(name="wide", caption="Wide", data=_wide_table())
    shown = display_frame(item)
    parts = split_columns(shown)
    assert len(parts) > 1
    assert all(list(p.columns[:2]) == ["Method", "Profile"] for p in parts)
    assert sum(p.shape[1] - 2 for p in parts) == shown.shape[1] - 2  # every metric column once
    narrow = display_frame(TableItem(name="n", caption="n", data=_wide_table(3)))
    assert len(split_columns(narrow)) == 1
    tex = to_latex(shown, "Wide", "wide")
    assert "(part 2 of" in tex and tex.count("Method & Profile") == tex.count("\\begin{tabular}")


def test_wide_table_fits_1400px_and_a4_print_in_chromium(tmp_path):
    scores = pd.DataFrame({"system": ["a", "a", "b", "b"], "clip": list("wxyz"), "skate_fraction": [.1, .2, .3, .4]})
    out = build_report(None, scores, tmp_path, extra_tables={"Per method": _wide_table(24)}, progress=False)
    for media, _, page in _pages_as_shown(out):
        assert page.evaluate("document.querySelectorAll('div.part').length") >= 3, media
