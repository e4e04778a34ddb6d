"""The generic importer (format ``columns``): named columns, wide matrices, any separator, no
header, a YAML spec; counts checked against an independent count of each file with the csv module.
The files in tests/reports/data are constructed (made-up answers in the usual layouts)."""

from __future__ import annotations

import csv

import pytest

from evalkit.cli import main
from evalkit.errors import ConfigError, EvalkitError, FileFormatError, InputError
from reports.importers import load_input
from reports.importers_generic import infer_scale, make_spec, parse_columns, spec_from_yaml
from tests.reports.helpers import DATA

MATRIX = DATA / "generic_matrix_stimulus_by_rater_constructed.csv"
WIDE = DATA / "generic_matrix_rater_by_stimulus_constructed.csv"
LOG = DATA / "generic_log_noheader_constructed.tsv"
PATTERN = r"(?P<item>[^_]+)_(?P<system>.+)"


def _spec(**kw):
    return make_spec(kw, "test")


def test_stimulus_by_rater_matrix_with_a_missing_code_counts_every_cell():
    with open(MATRIX, newline="") as fh:
        rows = list(csv.DictReader(fh))
    raters = [c for c in rows[0] if c.startswith("s")]
    want = {(c, r["video"], r["distortion"]): float(r[c]) for r in rows for c in raters if r[c] != "-1"}
    spec = _spec(layout="stimulus-by-rater", columns={"item": "video", "system": "distortion"},
                 missing=[-1], ignore=["MOS"])
    kind, df = load_input(MATRIX, spec=spec)
    assert kind == "ratings" and df.attrs["format"] == "columns"
    got = {(p, i, s): v for p, i, s, v in df[["participant", "item", "system_a", "score"]].itertuples(index=False)}
    assert got == want and set(df["scale"]) == {"acr5"}
    n_missing = sum(r[c] == "-1" for r in rows for c in raters)
    assert n_missing > 0 and any(f"{n_missing} empty or missing-code" in n for n in df.attrs["notes"])
    assert any("scale acr5 read off the values" in n for n in df.attrs["notes"])


def test_matrix_without_the_missing_code_is_refused_at_the_cell_with_a_hint():
    spec = _spec(layout="stimulus-by-rater", columns={"item": "video", "system": "distortion"}, ignore=["MOS"],
                 scale="acr5")
    with open(MATRIX, newline="") as fh:
        rows = list(csv.reader(fh))
    line, col = next((k + 1, rows[0][j]) for k, r in enumerate(rows) if k for j, v in enumerate(r) if v == "-1")
    with pytest.raises(FileFormatError, match=rf"line {line}: column '{col}': -1 is not an integer in \[1, 5\]"):
        load_input(MATRIX, spec=spec)
    with pytest.raises(ConfigError, match=r"layout stimulus-by-rater needs system"):
        _spec(layout="stimulus-by-rater", columns={"item": "video"})
    # a text column left among the raters is named with its line
    spec = _spec(layout="stimulus-by-rater", columns={"item": "video", "system": "s01"}, missing=["-1"], scale="acr5")
    with pytest.raises(FileFormatError, match=r"line 2: column 'distortion': expected a number, got 'ref' "
                                              r"\(list codes for no rating under missing"):
        load_input(MATRIX, spec=spec)


def test_rater_by_stimulus_matrix_split_by_a_pattern():
    with open(WIDE, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    stim = [c for c in rows[0] if "_" in c]
    want = {(r["ResponseId"], *c.split("_", 1)): float(r[c]) for r in rows for c in stim if r[c] != ""}
    spec = _spec(layout="rater-by-stimulus", columns={"participant": "ResponseId"}, ignore=["Duration"],
                 stimulus_pattern=PATTERN, scale="mushra")
    df = load_input(WIDE, spec=spec)[1]
    got = {(p, i, s): v for p, i, s, v in df[["participant", "item", "system_a", "score"]].itertuples(index=False)}
    assert got == want and set(df["scale"]) == {"mushra"}
    assert "read as values separated by semicolons" in df.attrs["notes"]
    with pytest.raises(FileFormatError, match=r"line 1: column 'Duration': stimulus 'Duration' does not match"):
        load_input(WIDE, spec=_spec(layout="rater-by-stimulus", columns={"participant": "ResponseId"},
                                    stimulus_pattern=PATTERN))


def test_headerless_log_named_by_position_and_the_cli(tmp_path, capsys):
    with open(LOG, newline="") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    spec = _spec(columns=parse_columns("participant=1,trial=2,item=3,system=4,score=5,time=6"), header=False)
    df = load_input(LOG, spec=spec)[1]
    assert len(df) == len(rows) and list(df["score"]) == [float(r[4]) for r in rows]
    assert set(df["scale"]) == {"likert7"} and df["response_time_s"].iloc[0] == pytest.approx(float(rows[0][5]))
    with pytest.raises(FileFormatError, match=r"line 1: no column '\d' for \w+ .*columns are P1, 1, c01.*pass --no-header"):
        load_input(LOG, spec=_spec(columns=parse_columns("participant=1,item=3,system=4,score=5")))
    out = tmp_path / "rep"
    code = main(["report", str(LOG), "--columns", "participant=1,trial=2,item=3,system=4,score=5", "--no-header",
                 "--scale", "likert7", "--out", str(out), "-q", "--n-boot", "50", "--bt-boot", "50",
                 "--no-robustness"])
    assert code == 0 and (out / "report.html").exists()


def test_long_file_with_a_stimulus_column_and_pairwise_scale(tmp_path):
    p = tmp_path / "ab.csv"
    p.write_text("who|stim|other|answer\nu1|c1_A|B|2\nu1|c2_A|B|-1\nu2|c1_A|B|0\n")
    spec = _spec(columns={"participant": "who", "stimulus": "stim", "system_b": "other", "score": "answer"},
                 stimulus_pattern=PATTERN)
    df = load_input(p, spec=spec)[1]
    assert list(df["item"]) == ["c1", "c2", "c1"] and set(df["system_a"]) == {"A"} and set(df["scale"]) == {"cmos5"}
    p.write_text("who|stim|other|answer\nu1|c1_A|B|2\nu1|c2_A|B|9\n")
    with pytest.raises(EvalkitError, match="cannot tell the scale from the scores"):
        load_input(p, spec=spec)


def test_yaml_spec_and_its_errors(tmp_path):
    y = tmp_path / "spec.yaml"
    y.write_text("layout: stimulus-by-rater\ncolumns: {item: video, system: distortion}\nmissing: [-1]\n"
                 "ignore: [MOS]\nscale: acr5\n")
    spec = spec_from_yaml(y)
    df = load_input(MATRIX, spec=spec)[1]
    assert len(df) == len(load_input(MATRIX, spec=_spec(layout="stimulus-by-rater", missing=[-1], ignore=["MOS"],
                                                        columns={"item": "video", "system": "distortion"}))[1])
    y.write_text("layout: diagonal\ncolumns: {item: video}\n")
    with pytest.raises(ConfigError, match=r"spec\.yaml: key 'layout': 'diagonal'; expected one of long"):
        spec_from_yaml(y)
    y.write_text("columns: {rater: r}\n")
    with pytest.raises(ConfigError, match=r"key 'columns': unknown role\(s\) rater"):
        spec_from_yaml(y)
    y.write_text("columns: [a\n")
    with pytest.raises(ConfigError, match=r"spec\.yaml, line \d+: not valid YAML"):
        spec_from_yaml(y)
    with pytest.raises(InputError, match=r"'participant' is not ROLE=COLUMN"):
        parse_columns("participant,item=clip")


def test_cli_generic_options_without_columns_are_refused(capsys, tmp_path):
    assert main(["report", str(MATRIX), "--missing", "-1", "--out", str(tmp_path / "o")]) == 2
    assert "--missing: options of format columns" in capsys.readouterr().err
    assert main(["report", str(MATRIX), "--columns", "item=video", "--format", "genea", "--out", str(tmp_path / "o")]) == 2
    assert "not --format genea" in capsys.readouterr().err


def test_infer_scale():
    import numpy as np

    assert infer_scale(np.array([1.0, 5.0]), False) == "acr5"
    assert infer_scale(np.array([1.0, 6.0]), False) == "likert7"
    assert infer_scale(np.array([0.0, 37.5, 100.0]), False) == "mushra"
    assert infer_scale(np.array([-3.0, 3.0]), True) == "cmos7"
    assert infer_scale(np.array([-1.0, 0.0]), True) == "pref3"
    assert infer_scale(np.array([1.5, 200.0]), False) is None


def test_a_rater_column_given_twice_is_refused(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("video,distortion,s01,s02,s01\nv,ref,4,5,3\n")
    with pytest.raises(FileFormatError, match=r"m\.csv, line 1: column 's01' appears twice in the header"):
        load_input(p, spec=_spec(layout="stimulus-by-rater", columns={"item": "video", "system": "distortion"}))


def test_survey_export_with_question_text_rows_below_the_header(tmp_path):
    # a survey tool's export: the header, then a question-text row and an import-id row, then data
    src = WIDE.read_text().splitlines()
    head = src[0].split(";")
    text_row = ";".join(f"How good was {h}?" for h in head)
    ids = ";".join('{""ImportId"":""%s""}' % h for h in head)
    p = tmp_path / "survey.csv"
    p.write_text("\n".join([src[0], text_row, ids] + src[1:]) + "\n")
    spec = dict(layout="rater-by-stimulus", columns={"participant": "ResponseId"}, ignore=["Duration"],
                stimulus_pattern=PATTERN, scale="mushra")
    with pytest.raises(FileFormatError, match=r"survey\.csv, line 2: column 'q1_ref': expected a number"):
        load_input(p, spec=_spec(**spec))
    df = load_input(p, spec=_spec(**spec, skip_rows=2))[1]
    ref = load_input(WIDE, spec=_spec(**spec))[1]
    assert len(df) == len(ref) and list(df["score"]) == list(ref["score"])
    with pytest.raises(ConfigError, match=r"key 'skip_rows': expected a whole number"):
        _spec(**spec, skip_rows=-1)
