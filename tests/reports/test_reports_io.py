"""Reading the ratings_long table from a database URL (SQLite always, PostgreSQL when given)."""

from __future__ import annotations

import os
import uuid

import pandas as pd
import pytest

from evalkit.errors import FileFormatError, InputError
from reports.importers import load_input
from reports.io import atomic_write_text, is_database_url, read_ratings_db, write_ratings_db
from reports.table import RATINGS_COLUMNS
from tests.conftest import require_system
from tests.reports.helpers import DATA


@pytest.fixture(scope="module")
def genea():
    return load_input(DATA / "genea_battles_constructed.csv")[1]


def test_sqlite_roundtrip(tmp_path, genea):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    write_ratings_db(genea, url)
    kind, back = load_input(url)
    assert kind == "ratings" and back.attrs["format"] == "database"
    pd.testing.assert_frame_equal(back.reset_index(drop=True), genea.reset_index(drop=True),
                                  check_dtype=False)


def test_view_and_extra_columns(tmp_path, genea):
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'v.db'}"
    eng = sa.create_engine(url)
    genea.assign(extra_col=1).to_sql("answers", eng, index=False)
    with eng.begin() as c:
        c.execute(sa.text("CREATE VIEW ratings_long AS SELECT * FROM answers"))
    eng.dispose()
    assert len(read_ratings_db(url)) == len(genea)


def test_errors_name_table_and_columns(tmp_path, genea):
    url = f"sqlite:///{tmp_path / 'e.db'}"
    write_ratings_db(genea, url, table="other")
    with pytest.raises(FileFormatError, match="no table or view 'ratings_long'"):
        read_ratings_db(url)
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    genea.drop(columns=["flags", "scale"]).to_sql("ratings_long", eng, index=False)
    eng.dispose()
    with pytest.raises(FileFormatError, match="lacks column.*scale, .*flags"):
        read_ratings_db(url)
    with pytest.raises(InputError, match="invalid table name"):
        read_ratings_db(url, table="x; drop table y")
    with pytest.raises(InputError, match="cannot use database URL"):
        read_ratings_db("nosuchdb://x")


def test_bad_value_in_db_names_row(tmp_path, genea):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    bad = genea.copy()
    bad.loc[2, "score"] = 7
    import sqlalchemy as sa

    eng = sa.create_engine(url)
    bad[list(RATINGS_COLUMNS)].to_sql("ratings_long", eng, index=False)
    eng.dispose()
    with pytest.raises(FileFormatError, match="line 3: column 'score': 7 is not an integer"):
        read_ratings_db(url)


def test_postgresql(genea):
    url = os.environ.get("EVALKIT_TEST_DATABASE_URL", "")
    require_system("PostgreSQL", bool(url), "EVALKIT_TEST_DATABASE_URL is not set (.ci/run sets it)")
    import sqlalchemy as sa

    table = f"reports_test_{uuid.uuid4().hex[:8]}"
    write_ratings_db(genea, url, table=table)
    try:
        back = read_ratings_db(url, table=table)
        assert len(back) == len(genea) and list(back["score"]) == list(genea["score"])
    finally:
        eng = sa.create_engine(url)
        with eng.begin() as c:
            c.execute(sa.text(f'DROP TABLE IF EXISTS "{table}"'))
        eng.dispose()


def test_url_detection_and_atomic_write(tmp_path):
    assert is_database_url("sqlite:///x.db") and is_database_url("postgresql+psycopg://u@h/db")
    assert not is_database_url("ratings.csv") and not is_database_url("C:/data/r.csv")
    p = atomic_write_text(tmp_path / "a" / "x.txt", "hi")
    assert p.read_text() == "hi" and list(p.parent.iterdir()) == [p]
    # a second write replaces the content in one step and leaves no temporary file behind
    atomic_write_text(p, "again")
    assert p.read_text() == "again" and list(p.parent.iterdir()) == [p]


def test_missing_sqlite_file_is_not_created(tmp_path, capsys):
    from evalkit.cli import main

    db = tmp_path / "x" / "nonexist.sqlite"
    db.parent.mkdir()
    with pytest.raises(InputError, match=f"database file not found: {db}"):
        read_ratings_db(f"sqlite:///{db}")
    assert main(["report", f"sqlite:///{db}", "--out", str(tmp_path / "r")]) == 2
    assert f"database file not found: {db}" in capsys.readouterr().err
    assert not db.exists() and list(db.parent.iterdir()) == []
