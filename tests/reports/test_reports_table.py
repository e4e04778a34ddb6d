"""The long-format table: validation messages name line and column; orientation of pairs."""

from __future__ import annotations

import pandas as pd
import pytest

from evalkit.errors import FileFormatError
from reports.io import read_ratings_csv
from reports.table import RATINGS_COLUMNS, canonical_pairs, has_flag, system_order, validate_ratings
from tests.reports.helpers import long_table


def test_defaults_filled_and_columns_ordered():
    df = long_table([("p1", "i1", "A", "B", 2), ("p1", "i2", "B", "A", -1)])
    assert tuple(df.columns) == RATINGS_COLUMNS
    assert list(df["trial"]) == ["1", "2"]
    assert list(df["raw_answer"]) == ["2", "-1"]
    assert df["response_time_s"].isna().all()


@pytest.mark.parametrize("change, where", [
    ({"score": "abc"}, "line 3: column 'score': expected a number"),
    ({"score": 3}, "line 3: column 'score': 3 is not an integer in [-2, 2]"),
    ({"scale": "cmos9"}, "line 3: column 'scale': unknown scale 'cmos9'"),
    ({"system_b": ""}, "line 3: column 'system_b': is empty but scale cmos5 is pairwise"),
    ({"system_b": "A"}, "line 3: column 'system_b': equals system_a"),
    ({"side_shown": "top"}, "line 3: column 'side_shown': expected left, right or empty"),
    ({"response_time_s": "-1"}, "line 3: column 'response_time_s'"),
    ({"participant": " "}, "line 3: column 'participant': is empty"),
])
def test_errors_name_line_and_column(tmp_path, change, where):
    df = pd.DataFrame({"participant": ["p1", "p2"], "item": ["i", "i"], "system_a": ["A", "A"],
                       "system_b": ["B", "B"], "score": [1, 1], "scale": ["cmos5", "cmos5"],
                       "side_shown": ["left", "right"], "response_time_s": ["1.5", "2"]}).astype(object)
    for k, v in change.items():
        df.loc[1, k] = v
    path = tmp_path / "r.csv"
    df.to_csv(path, index=False)
    with pytest.raises(FileFormatError) as err:
        read_ratings_csv(path)
    assert str(err.value).startswith(str(path))
    assert where in str(err.value)


def test_missing_columns_named(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("participant,item,score\np,i,1\n")
    with pytest.raises(FileFormatError, match="line 1: missing column.*system_a, scale"):
        read_ratings_csv(path)


def test_absolute_scale_must_not_have_system_b():
    with pytest.raises(FileFormatError, match="must be empty for the absolute scale mushra"):
        validate_ratings(pd.DataFrame({"participant": ["p"], "item": ["i"], "system_a": ["A"],
                                       "system_b": ["B"], "score": [50], "scale": ["mushra"]}))


def test_canonical_pairs_flip_sign_and_side():
    df = long_table([("p1", "i1", "B", "A", 2), ("p1", "i1", "A", "B", -1)],
                    side_shown="left")
    out = canonical_pairs(df, ["A", "B"])
    assert list(out["system_a"]) == ["A", "A"]
    assert list(out["score"]) == [-2.0, -1.0]
    assert list(out["side_shown"]) == ["right", "left"]
    assert set(out["comparison"]) == {"A vs B"}
    assert list(df["score"]) == [2.0, -1.0]  # input untouched


def test_system_order_natural_and_flags():
    df = long_table([("p", "i", "S10", "S2", 1), ("p", "i", "S1", "S2", 1)])
    assert system_order(df) == ["S1", "S2", "S10"]
    assert list(has_flag(pd.Series(["check;x", "check_failed", ""]), "check")) == [True, False, False]


def test_webtest_ab3_scale_is_accepted_and_range_checked():
    df = long_table([("p1", "i1", "A", "B", 1), ("p1", "i2", "A", "B", -1), ("p2", "i1", "A", "B", 0)], scale="ab3")
    assert list(df["scale"].unique()) == ["ab3"]
    with pytest.raises(FileFormatError, match="score"):
        long_table([("p1", "i1", "A", "B", 2)], scale="ab3")


def test_latex_writes_less_and_greater_signs_as_math(tmp_path):
    """Without T1 fonts, a bare < in LaTeX text mode prints as an inverted exclamation mark."""
    from reports.document import TableItem, p_text, write_table

    data = pd.DataFrame({"comparison": ["A vs B", "A vs C"], "p_holm": [0.0001, 0.25], "n": [3, 4]})
    write_table(TableItem(name="t", caption="p < 0.05 when n > 4 & 50% agree", data=data), tmp_path)
    tex = (tmp_path / "tables" / "t.tex").read_text()
    assert "$<$0.001" in tex and "\\caption{p $<$ 0.05 when n $>$ 4 \\& 50\\% agree}" in tex
    assert "<" not in tex.replace("$<$", "") and ">" not in tex.replace("$>$", "")
    assert pd.read_csv(tmp_path / "tables" / "t.csv")["p_holm"].iloc[0] == 0.0001
    assert p_text(0.0001) == "p < 0.001" and p_text(0.0421) == "p = 0.042"
