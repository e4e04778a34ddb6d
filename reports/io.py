"""Reading ratings (CSV file or database URL) and writing outputs atomically.

The database contract: a table or view named ``ratings_long`` (configurable) with exactly the
columns of :data:`reports.table.RATINGS_COLUMNS`. ``reports`` never imports ``webtest``; webtest
provides that view and this module reads it with SQLAlchemy (SQLite, PostgreSQL, ...).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd

from evalkit.errors import FileFormatError, InputError
from evalkit.textfile import read_utf8_text
from reports.table import RATINGS_COLUMNS, validate_ratings

_URL = re.compile(r"^[a-z][a-z0-9+]*://", re.I)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class NoRatingsError(FileFormatError):
    """The ratings table exists and is readable but holds no rows: nobody has answered yet."""


def is_database_url(text: str) -> bool:
    """True for SQLAlchemy URLs such as ``sqlite:///x.db`` or ``postgresql+psycopg://...``."""
    return bool(_URL.match(str(text)))


#: Separators a ratings file may use, in the order a tie is resolved.
SEPARATORS = (",", ";", "\t", "|")
_SEP_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def separator_name(sep: str) -> str:
    """How a message names a separator (``"semicolons"``)."""
    return _SEP_NAMES.get(sep, repr(sep))


def sniff_separator(text: str, max_lines: int = 20) -> str:
    """The separator of a delimited text: the one of :data:`SEPARATORS` that splits the first
    ``max_lines`` non-empty lines (quotes respected) into the same number (> 1) of fields, the most
    fields winning and ``,`` winning ties; ``,`` when none does."""
    import csv

    lines = [ln for ln in text.splitlines() if ln.strip()][:max_lines]
    if not lines:
        return ","
    best, best_n = ",", 1
    for sep in SEPARATORS:
        if sep not in lines[0]:
            continue
        try:
            counts = {len(r) for r in csv.reader(lines, delimiter=sep)}
        except csv.Error:
            continue
        n = max(counts) if counts else 1
        if len(counts) == 1 and n > best_n:
            best, best_n = sep, n
    return best


def read_csv_table(path: str | Path, *, sep: str | None = None, header: bool = True) -> pd.DataFrame:
    """A delimited text file as strings (no type guessing), with a clear error for unreadable files.

    ``sep`` None sniffs the separator (:func:`sniff_separator`); the one used is in
    ``attrs["separator"]``. ``header=False`` reads every line as data and names the columns by
    position (``"1"``, ``"2"``, …); ``attrs["first_line"]`` is the line of the first data row.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    text = read_utf8_text(path)
    sep = sep or sniff_separator(text)
    try:
        df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""],
                         skipinitialspace=True, sep=sep, header=0 if header else None)
    except pd.errors.EmptyDataError:
        raise FileFormatError(path, 1, "the file is empty (expected a header line)" if header
                              else "the file is empty (expected rows of values)") from None
    except pd.errors.ParserError as exc:
        detail = " ".join(str(exc).split())
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", detail)
        if m:
            what = "the header has" if header else "the first line has"
            raise FileFormatError(path, int(m.group(2)), f"{m.group(3)} values but {what} "
                                  f"{m.group(1)} columns; expected one value per column (a stray "
                                  "separator or an unbalanced quote?)") from None
        m = re.search(r"line (\d+)", detail)
        raise FileFormatError(path, int(m.group(1)) if m else None,
                              f"not a valid delimited text file ({detail[:200]})") from None
    if df.shape[1] == 1:
        _ragged_separator(text, path)
    if not header:
        df.columns = [str(i + 1) for i in range(df.shape[1])]
    df.attrs.update(separator=sep, first_line=2 if header else 1)
    return df


def _ragged_separator(text: str, path) -> None:
    """A file read as one column whose first line splits at another separator: raise naming the
    first line that splits into a different number of values (the reason sniffing failed)."""
    import csv

    lines = text.splitlines()
    for sep in SEPARATORS[1:]:
        if not lines or sep not in lines[0]:
            continue
        try:  # line by line, so a count belongs to its line
            counts = [len(next(csv.reader([ln], delimiter=sep), [])) for ln in lines]
        except csv.Error:
            continue
        n = counts[0]
        bad = next((k for k, (c, ln) in enumerate(zip(counts, lines)) if k and ln.strip() and c != n), None)
        if n > 1 and bad is not None:
            raise FileFormatError(path, bad + 1, f"{counts[bad]} values separated by {separator_name(sep)} but the "
                                                 f"first line has {n}; expected one value per column on every "
                                                 "line (a stray separator or an unbalanced quote?)")


def read_ratings_csv(path: str | Path) -> pd.DataFrame:
    """Read and validate a long-format ratings CSV (see :mod:`reports.table`)."""
    return validate_ratings(read_csv_table(path), str(path))


def read_ratings_db(url: str, table: str = "ratings_long") -> pd.DataFrame:
    """Read the ratings view/table ``table`` from the database at SQLAlchemy ``url``.

    ``table`` may be schema-qualified (``schema.table``). The table must have exactly the
    columns of :data:`~reports.table.RATINGS_COLUMNS` (extra columns are ignored). Errors name
    the URL (without password) and the missing table or columns.
    """
    import sqlalchemy as sa

    parts = table.split(".")
    if not 1 <= len(parts) <= 2 or not all(_IDENT.match(p) for p in parts):
        raise InputError(f"invalid table name {table!r}: expected name or schema.name "
                         "(letters, digits, underscore)")
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise InputError(f"cannot use database URL {url!r}: {exc}") from None
    db = parsed.database or ""
    if parsed.get_backend_name() == "sqlite" and db not in ("", ":memory:") and not db.startswith("file:") \
            and not Path(db).is_file():
        # SQLite would create an empty database file here; reading never should.
        raise InputError(f"database file not found: {db} (from {url})")
    try:
        engine = sa.create_engine(parsed)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as exc:
        raise InputError(f"cannot use database URL {url!r}: {exc}") from None
    shown = engine.url.render_as_string(hide_password=True)
    schema, name = (parts if len(parts) == 2 else (None, parts[0]))
    try:
        with engine.connect() as conn:
            insp = sa.inspect(conn)
            names = set(insp.get_table_names(schema=schema)) | set(insp.get_view_names(schema=schema))
            if name not in names:
                raise FileFormatError(shown, None, f"no table or view {table!r}; webtest's export "
                                                   f"provides 'ratings_long' (see docs/reports.md)")
            cols = {c["name"] for c in insp.get_columns(name, schema=schema)}
            missing = [c for c in RATINGS_COLUMNS if c not in cols]
            if missing:
                raise FileFormatError(shown, None, f"table {table!r} lacks column(s) "
                                                   f"{', '.join(missing)}")
            tbl = sa.Table(name, sa.MetaData(), *(sa.Column(c) for c in RATINGS_COLUMNS), schema=schema)
            query = sa.select(*(tbl.c[c] for c in RATINGS_COLUMNS))
            df = pd.read_sql(query, conn)
    except sa.exc.DBAPIError as exc:  # unreachable server, wrong credentials, not a database file
        raise InputError(f"cannot read database {shown}: {exc.orig}") from None
    finally:
        engine.dispose()
    if df.empty:
        raise NoRatingsError(shown, None, f"table {table!r} has no rows")
    # Row i of a table has no line number; report it as "row i+1".
    df = df.astype(object).where(df.notna(), None)
    return validate_ratings(df, f"{shown} table {table} (row = line)", line_offset=1)


def write_ratings_db(ratings: pd.DataFrame, url: str, table: str = "ratings_long") -> None:
    """Write a validated ratings table to ``table`` at ``url`` (replacing it); for tests/exports."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    schema, name = (table.split(".") if "." in table else (None, table))
    try:
        validate_ratings(ratings)[list(RATINGS_COLUMNS)].to_sql(
            name, engine, schema=schema, if_exists="replace", index=False)
    finally:
        engine.dispose()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` via a temporary file in the same folder, then rename."""
    from evalkit.atomic import write_bytes

    return write_bytes(path, data)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` via a temporary file in the same folder, then rename."""
    from evalkit.atomic import write_text

    return write_text(path, text)