import pandas as pd

from evalkit.csvsafe import neutralise_cell, neutralise_frame


def test_formula_cells_become_text():
    assert neutralise_cell('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    for s in ("+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        assert neutralise_cell(s) == "'" + s
    assert neutralise_cell("SMG") == "SMG"
    assert neutralise_cell(-1.5) == -1.5


def test_frame_keeps_numbers_numeric():
    df = pd.DataFrame({"system": ["=cmd", "GMG"], "score": [-1.0, 2.0]})
    out = neutralise_frame(df)
    assert out["system"].tolist() == ["'=cmd", "GMG"]
    assert out["score"].dtype.kind == "f" and out["score"].tolist() == [-1.0, 2.0]
    assert df["system"].tolist() == ["=cmd", "GMG"]  # input unchanged
