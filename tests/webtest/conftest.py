"""Fixtures for webtest: small real studies (bundled CMU clips), databases, a logged-in client.

Storage-touching tests run on SQLite always and on PostgreSQL whenever
``EVALKIT_TEST_DATABASE_URL`` is set (CI sets it); every PostgreSQL test gets its own schema.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
import yaml

from tests.webtest.helpers import ADMIN_PASSWORD, BASE_STUDY, EXAMPLE, PG_URL, Participant, deep_update


@pytest.fixture(scope="session")
def stimulus_cache(tmp_path_factory) -> Path:
    """Motion JSON of the base study and the example study, computed once per session."""
    from webtest import prepare_study

    d = tmp_path_factory.mktemp("cache-study")
    (d / "study.yaml").write_text(yaml.safe_dump(BASE_STUDY, sort_keys=False))
    prepare_study(d)
    ex = tmp_path_factory.mktemp("cache-example")
    shutil.copy(EXAMPLE / "study.yaml", ex / "study.yaml")
    prepare_study(ex)
    target = tmp_path_factory.mktemp("stimulus-cache")
    for src in (d, ex):
        for f in (src / ".webtest" / "stimuli").glob("*.json"):
            shutil.copy(f, target / f.name)
    return target


@pytest.fixture
def make_study(tmp_path, stimulus_cache):
    """``make_study(**changes) -> Path``: a study folder from BASE_STUDY with changes applied
    (``None`` removes a key); the stimulus cache is pre-filled."""
    counter = {"n": 0}

    def make(data: dict | None = None, **changes) -> Path:
        counter["n"] += 1
        d = tmp_path / f"study{counter['n']}"
        (d / ".webtest").mkdir(parents=True)
        shutil.copytree(stimulus_cache, d / ".webtest" / "stimuli")
        content = data if data is not None else deep_update(BASE_STUDY, changes)
        (d / "study.yaml").write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True))
        return d

    return make


@pytest.fixture
def example_study(tmp_path, stimulus_cache) -> Path:
    """A copy of studies/example-cmu with its stimulus cache."""
    d = tmp_path / "example-cmu"
    (d / ".webtest").mkdir(parents=True)
    shutil.copytree(stimulus_cache, d / ".webtest" / "stimuli")
    shutil.copy(EXAMPLE / "study.yaml", d / "study.yaml")
    return d


def _pg_schema_url(base: str, schema: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh database URL: SQLite file, or a new schema on the configured PostgreSQL server."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.sqlite'}"
        return
    from tests.conftest import require_system

    require_system("PostgreSQL", bool(PG_URL),
                   "set EVALKIT_TEST_DATABASE_URL=postgresql+psycopg://user@host:port/db to run storage tests on it")
    from sqlalchemy import create_engine, text

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield _pg_schema_url(PG_URL, schema)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture(scope="session")
def admin_hash() -> str:
    from werkzeug.security import generate_password_hash

    return generate_password_hash(ADMIN_PASSWORD)


@pytest.fixture
def app_factory(admin_hash):
    """``app_factory(study_dir, db_url=None, **config) -> Flask`` in testing mode."""
    apps = []

    def make(study_dir: Path, db_url: str | None = None, **config):
        from webtest import create_app

        config.setdefault("admin_password_hash", admin_hash)
        app = create_app(study_dir, testing=True, database_url=db_url, **config)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["webtest"].db.dispose()


@pytest.fixture
def participant():
    return Participant
