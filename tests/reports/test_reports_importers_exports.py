"""pymushra exports (any column order, any separator, CSV or JSON) and HEMVIP's exported results.

The files are constructed here in the layouts the two tools document (no real export was
available); counts are checked against an independent count of the file with the csv/json module.
"""

from __future__ import annotations

import csv
import json
import random

import pandas as pd
import pytest

from evalkit.errors import FileFormatError
from reports.importers import load_input
from tests.reports.helpers import DATA

PYMUSHRA = DATA / "pymushra_export_constructed.csv"
HEMVIP = DATA / "hemvip_export_constructed.json"


def _pymushra_rows():
    with open(PYMUSHRA, newline="") as fh:
        return list(csv.DictReader(fh, delimiter=";"))


def test_pymushra_export_counts_match_an_independent_count():
    rows = _pymushra_rows()
    kind, df = load_input(PYMUSHRA)
    assert kind == "ratings" and df.attrs["format"] == "pymushra"
    mushra = [r for r in rows if r["wm_type"] == "mushra"]
    pc = [r for r in rows if r["wm_type"] == "paired_comparison" and r["responses_answer"] != "unknown"]
    got = df[df["scale"] == "mushra"]
    assert len(got) == len(mushra) and len(df[df["scale"] == "pref3"]) == len(pc)
    assert got["participant"].nunique() == len({r["questionaire_uuid"] for r in rows})
    # each rating lands on its participant, page and stimulus
    want = {(r["questionaire_uuid"], r["wm_id"], r["responses_stimulus"]): float(r["responses_score"]) for r in mushra}
    have = {(p, i, s): v for p, i, s, v in got[["participant", "item", "system_a", "score"]].itertuples(index=False)}
    assert have == want
    assert got["response_time_s"].iloc[0] == pytest.approx(float(mushra[0]["responses_time"]) / 1000)
    assert any("unknown" in n for n in df.attrs["notes"]) and any("semicolons" in n for n in df.attrs["notes"])
    assert any("training1" in n and "--drop-trials" in n for n in df.attrs["notes"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pymushra_export_reads_the_same_in_any_column_order_and_separator(tmp_path, seed):
    raw = pd.read_csv(PYMUSHRA, sep=";", dtype=str, keep_default_na=False)
    cols = list(raw.columns)
    random.Random(seed).shuffle(cols)
    p = tmp_path / "resaved.csv"
    raw[cols].to_csv(p, sep=[",", ";", "\t"][seed], index=False)
    ref = load_input(PYMUSHRA)[1].sort_values(["participant", "item", "system_a"]).reset_index(drop=True)
    got = load_input(p)[1].sort_values(["participant", "item", "system_a"]).reset_index(drop=True)
    assert got.attrs["format"] == "pymushra"
    pd.testing.assert_frame_equal(got, ref)


def test_pymushra_json_export_and_dropped_training_page(tmp_path):
    raw = pd.read_csv(PYMUSHRA, sep=";", dtype=str, keep_default_na=False)
    p = tmp_path / "mushra_demo.json"
    raw.to_json(p, orient="records")
    kind, df = load_input(p)
    assert df.attrs["format"] == "pymushra" and len(df) == len(load_input(PYMUSHRA)[1])
    _, kept = load_input(PYMUSHRA, drop_trials=("training1",))
    n_training = sum(r["wm_id"] == "training1" for r in _pymushra_rows())
    assert len(kept) == len(load_input(PYMUSHRA)[1]) - n_training and "training1" not in set(kept["item"])
    assert any("left out (--drop-trials)" in n for n in kept.attrs["notes"])


def test_pymushra_other_page_types_are_left_out_with_a_note(tmp_path):
    raw = pd.read_csv(PYMUSHRA, sep=";", dtype=str, keep_default_na=False)
    raw.loc[raw["wm_id"] == "pc1", "wm_type"] = "bs1116"
    p = tmp_path / "x.csv"
    raw.to_csv(p, sep=";", index=False)
    df = load_input(p)[1]
    assert "pc1" not in set(df["item"]) and any("bs1116 left out" in n for n in df.attrs["notes"])
    raw["wm_type"] = "likert_multi_stimulus"
    raw.to_csv(p, sep=";", index=False)
    with pytest.raises(FileFormatError, match=r"no rows evalkit reads: its wm_type values are likert_multi_stimulus"):
        load_input(p)


def test_pymushra_bad_score_names_the_line_and_the_column(tmp_path):
    rows = _pymushra_rows()
    i = next(k for k, r in enumerate(rows) if r["wm_type"] == "mushra" and k > 3)
    rows[i]["responses_score"] = "abc"
    p = tmp_path / "bad.csv"
    with open(p, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter=";")
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(FileFormatError, match=rf"bad\.csv, line {i + 2}: column 'responses_score': expected a number"):
        load_input(p)


def test_hemvip_export_counts_checks_and_pairs_match_an_independent_count():
    sessions = json.loads(HEMVIP.read_text())
    kind, df = load_input(HEMVIP)
    assert kind == "ratings" and df.attrs["format"] == "hemvip"
    video = [(s["userId"], t["id"], r["stimulus"], r["score"]) for s in sessions for t in s["trials"]
             if t["type"] == "video" for r in t["responses"]]
    pages_pc = [(s["userId"], t) for s in sessions for t in s["trials"] if t["type"] == "videopc"]
    rated = df[(df["scale"] == "mushra") & (df["flags"] == "")]
    assert len(rated) == sum(v[2] != "at" for v in video)
    assert sorted(map(tuple, rated[["participant", "item", "system_a", "score"]].values.tolist())) == \
        sorted((u, i, s, float(v)) for u, i, s, v in video if s != "at")
    pairs = df[df["scale"] == "genea"]
    assert len(pairs) == len(pages_pc) and (pairs["side_shown"] == "left").all()
    first = pages_pc[0][1]["responses"]
    row = pairs.iloc[0]
    assert (row["system_a"], row["system_b"], row["score"]) == (first[0]["stimulus"], first[1]["stimulus"],
                                                                first[0]["score"])
    checks = df[df["flags"].str.contains("check")]
    n_at = sum(v[2] == "at" for v in video)
    n_att = sum(any("_att_" in r["stimulus"] for r in t["responses"]) for _, t in pages_pc)
    assert len(checks) == n_at + n_att and n_at > 0 and n_att > 0
    # the pairwise check asking "left is clearly better" answered otherwise is a failed check
    failed = df[df["flags"].str.contains("check_failed")]
    assert len(failed) == 1 and "Left_is_clearly_better" in failed["system_a"].iloc[0] + failed["system_b"].iloc[0]
    assert any("attention check" in n for n in df.attrs["notes"])


def test_hemvip_broken_json_and_other_json_are_refused_naming_what_was_found(tmp_path):
    p = tmp_path / "out.json"
    p.write_text('[{"userId": "u1", "trials": [\n{"id": "p", "type": "video", "responses": [}\n]}]')
    with pytest.raises(FileFormatError, match=r"out\.json, line 2: not valid JSON"):
        load_input(p)
    p.write_text('{"results": [1, 2]}')
    with pytest.raises(FileFormatError, match=r"an object with keys results: expected a HEMVIP export"):
        load_input(p)
    p.write_text('[{"userId": "u1", "trials": [{"id": "p1", "type": "generic", "responses": []}]}]')
    with pytest.raises(FileFormatError, match=r"HEMVIP export with no rating pages"):
        load_input(p)


def test_reading_every_seed_file_warns_nothing():
    import warnings

    from tests.reports.fuzz_ratings import SEEDS

    for name, (_, opts) in SEEDS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            load_input(DATA / name, **opts)
