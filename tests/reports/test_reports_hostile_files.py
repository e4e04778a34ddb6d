"""Hostile rating files: seeded mutations of a file of every importable format give a table or a
one-line error naming the file — never a traceback, a hang or a message without its file."""

from __future__ import annotations

import pytest

from evalkit.errors import FileFormatError
from reports.importers import load_input
from tests.reports.fuzz_ratings import SEEDS, fuzz


@pytest.mark.parametrize("seed", [0, 1])
def test_mutated_rating_files_of_every_format_read_or_refuse_cleanly(tmp_path, seed):
    report = fuzz(200, seed, tmp_path, slow_s=20.0)
    assert report.cases == 200 and report.refused > 0 and report.accepted > 0
    assert not report.failures, report.summary() + "\n" + "\n".join(
        f"case {f.case}: {f.signature}: {f.message} ({f.file})" for f in report.failures[:10])


def test_every_seed_reads_as_its_format():
    for name, (fmt, opts) in SEEDS.items():
        from tests.reports.fuzz_ratings import DATA

        kind, df = load_input(DATA / name, **opts)
        assert kind == "ratings" and df.attrs["format"] == fmt and len(df) > 0


def test_ragged_row_names_its_line_and_the_column_counts(tmp_path):
    p = tmp_path / "ragged.csv"
    p.write_text("user,input_code,model_a,model_b,winner\nu,c,A,B,tie\nu,c2,A,B,tie,extra\n")
    with pytest.raises(FileFormatError) as err:
        load_input(p)
    msg = str(err.value)
    assert "ragged.csv, line 3: 6 values but the header has 5 columns" in msg and "\n" not in msg


def test_header_without_rows_is_refused_naming_the_file(tmp_path):
    p = tmp_path / "lss.csv"
    p.write_text("session_test_id,age,trial_id,stimuli_rating,stimuli,rating_time\n")
    with pytest.raises(FileFormatError, match=r"lss\.csv, line 2: a header \(6 columns\) but no rows"):
        load_input(p)


def test_header_cell_with_a_newline_is_quoted_on_one_line(tmp_path):
    p = tmp_path / "odd.csv"
    p.write_text('user,input_code,"model_a\nmodel_b",winner\nu,c,A,tie\n')
    with pytest.raises(FileFormatError) as err:
        load_input(p)
    assert "odd.csv, line 1: cannot tell the format" in str(err.value) and "\n" not in str(err.value)
