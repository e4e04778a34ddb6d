"""CSV cells that a spreadsheet will not run as formulas (OWASP "CSV injection").

Every CSV the project writes for people to open (webtest exports, report tables, score tables)
passes its text cells through :func:`neutralise_frame` or :func:`neutralise_cell`: a text cell that
starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading apostrophe, which
spreadsheets show as text. Numbers are left alone (a negative number is not a formula), so the
numeric columns still read back as numbers.
"""

from __future__ import annotations

from typing import Any

#: Leading characters that make Excel, LibreOffice or Google Sheets treat a cell as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` if it is text a spreadsheet would run as a formula.

    Non-text values (numbers, None, NaN) are returned unchanged.
    """
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def neutralise_frame(frame):
    """A copy of a pandas DataFrame whose text cells and column names are neutralised.

    Only object/string columns are touched, so numeric columns keep their dtype.
    """
    import pandas as pd

    out = frame.copy()
    for col in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[col]) or pd.api.types.is_bool_dtype(out[col])):
            out[col] = out[col].map(neutralise_cell)
    out.columns = [neutralise_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out
