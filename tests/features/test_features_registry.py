"""The metric registry: every column ``score`` writes has a unit and a name in words, and the
column index of docs/metrics.md is the registry's (fails on drift either way)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.features import registry
from evalkit.features.reference import build_reference
from evalkit.features.score import score_motion
from evalkit.motion import load_motion

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "evalkit" / "data" / "samples" / "cmu"
IDENTIFIERS = {"clip", "path", "system", "error", "notes", "item"}
TEXT_COLUMNS = {"naturalness_reasons", "naturalness_notes"}  # words beside the verdict, not metrics


def test_docs_index_is_the_registry():
    page = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert registry.INDEX_BEGIN in page and registry.INDEX_END in page
    assert registry.rewrite_index(page) == page, (
        "docs/metrics.md's column index differs from evalkit.features.registry; run "
        "python -m evalkit.features.registry --write docs/metrics.md")


def test_every_scored_column_is_registered():
    """A real clip scored with a reference set, audio onsets and the shipped model: every
    column it gets is in the registry (a new metric without a unit fails here)."""
    from evalkit.models.naturalness import add_model_columns

    clip = SAMPLES / "16_15.amc"
    ref = build_reference([SAMPLES / "07_05-walk.amc"])
    row = score_motion(load_motion(clip), reference=ref, audio_times=np.arange(0.2, 3.5, 0.45))
    for k in ("hellinger_jerk", "fmd_ref_min", "beat_align", "audio_beats"):
        assert k in row  # the optional families were computed
    table = pd.DataFrame([{"clip": clip.stem, "path": str(clip), "system": "capture", "error": "",
                           "notes": "", **row}])
    table = add_model_columns(table)
    unknown = [c for c in table.columns if c not in IDENTIFIERS | TEXT_COLUMNS and registry.metric_info(c) is None]
    assert unknown == [], f"score columns missing from the registry: {unknown}"


def test_shown_values_are_rounded_in_the_shown_unit():
    pen = registry.metric_info("penetration_mean")
    assert pen.heading == "Ground penetration depth, mean (mm)"
    assert pen.format(0.0012543564608258236) == "1.3"
    assert pen.format(1e-14) == "0.0" and pen.format(-1e-14) == "0.0"
    assert pen.format(float("nan")) == "–"
    share = registry.metric_info("skate_fraction")
    assert share.heading.endswith("(%)") and share.format(0.18248) == "18.2"
    assert share.resolution == 0.001
    nat = registry.metric_info("naturalness")
    assert nat.display_unit == "" and nat.format(0.78312) == "0.78"


def test_every_entry_is_complete():
    for m in registry.METRICS.values():
        assert m.family in registry.FAMILIES and m.label and m.better in ("lower", "higher", "")
        assert "_" not in m.label  # words, not identifiers
