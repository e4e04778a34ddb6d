"""Engines and schema: SQLite (WAL) in the study folder by default, PostgreSQL by URL.

The URL comes from (in order) the explicit argument, ``EVALKIT_DATABASE_URL``, or
``sqlite:///<study>/ratings.sqlite``. The schema, the ``ratings_long`` view and the design cells
are created on first run under a lock (PostgreSQL advisory lock, SQLite ``BEGIN IMMEDIATE``), so
several gunicorn workers starting together do not race.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import create_engine, event, func, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import ArgumentError, DisconnectionError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from evalkit.errors import ConfigError
from webtest.tables import Answer, Base, Cell, Participant, StimulusFile, StudyRecord

SQLITE_FILE = "ratings.sqlite"
ENV_URL = "EVALKIT_DATABASE_URL"

#: Columns of the long-format ratings table, in order (the contract with ``reports``).
RATINGS_COLUMNS = ("participant", "trial", "item", "system_a", "system_b", "side_shown",
                   "raw_answer", "score", "scale", "response_time_s", "flags")

_FLAGS = """CASE WHEN p.exclusion_reason IS NULL OR p.exclusion_reason = '' THEN a.flags
            WHEN a.flags = '' THEN 'excluded'
            ELSE a.flags || ';excluded' END AS flags"""
_FROM = """FROM wt_answers a
JOIN wt_trials t ON t.id = a.trial_id
JOIN wt_participants p ON p.id = t.participant_id
WHERE t.kind <> 'training'"""
# Pairwise scales: one row per trial. Gold trials compare a system with itself; their system_b
# is written "<system> (identical)" because the reports contract forbids system_a == system_b.
# Absolute scales (acr5): one row per rated stimulus, system_b empty, score = the rating.
_VIEW_SELECT = """
SELECT t.participant_id AS participant, t.position AS trial, t.item AS item,
       t.system_a AS system_a,
       CASE WHEN t.kind = 'gold' THEN t.system_b || ' (identical)' ELSE t.system_b END AS system_b,
       t.side_shown AS side_shown, a.raw_answer AS raw_answer, a.score AS score, a.scale AS scale,
       a.response_time_s AS response_time_s, {flags}{extra}
{from_} AND a.rating_a IS NULL
UNION ALL
SELECT t.participant_id, t.position, t.item, t.system_a, '', t.side_shown,
       CAST(CAST(a.rating_a AS INTEGER) AS VARCHAR(8)), a.rating_a, a.scale, a.response_time_s, {flags}{extra}
{from_} AND a.rating_a IS NOT NULL
UNION ALL
SELECT t.participant_id, t.position, t.item, t.system_b, '',
       CASE WHEN t.side_shown = 'left' THEN 'right' ELSE 'left' END,
       CAST(CAST(a.rating_b AS INTEGER) AS VARCHAR(8)), a.rating_b, a.scale, a.response_time_s, {flags}{extra}
{from_} AND a.rating_b IS NOT NULL
"""


def default_url(study_root: Path) -> str:
    """The database URL to use when none is given: env ``EVALKIT_DATABASE_URL`` or SQLite."""
    return os.environ.get(ENV_URL) or f"sqlite:///{(Path(study_root) / SQLITE_FILE).resolve()}"


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")  # an acknowledged answer survives a crash
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _drop_if_closed_by_server(dbapi_conn, _record, _proxy) -> None:
    """Pool checkout check for PostgreSQL that costs no round trip (``pool_pre_ping`` costs one
    per request): an idle pooled connection has nothing to read, so if its socket is readable
    the server has closed it or is closing it (restart, ``pg_terminate_backend``: the server
    sends a FATAL message, the kernel an end of file). Raising ``DisconnectionError`` here makes
    the pool discard the connection and check out another (SQLAlchemy's documented checkout
    hook, "Dealing with Disconnects"), so a database restart fails no request."""
    import select as _select

    try:
        if dbapi_conn.closed or dbapi_conn.broken:
            raise DisconnectionError("connection closed")
        readable, _, _ = _select.select([dbapi_conn.fileno()], [], [], 0)
    except (OSError, ValueError) as exc:  # fileno of a closed connection
        raise DisconnectionError(str(exc)) from None
    if readable:
        raise DisconnectionError("the server closed the connection")


def make_engine(url: str) -> Engine:
    """An engine for ``url`` (SQLite gets WAL, full sync and a 30 s busy timeout)."""
    try:
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"timeout": 30})
            event.listen(engine, "connect", _sqlite_pragmas)
            return engine
        engine = create_engine(url, pool_size=5, max_overflow=10)
        event.listen(engine, "checkout", _drop_if_closed_by_server)
        return engine
    except (ArgumentError, ModuleNotFoundError, ImportError) as exc:
        raise ConfigError(
            f"database URL {redact(url)!r} cannot be used ({exc}); fix: use sqlite:///path or "
            "postgresql+psycopg://user@host:port/dbname (pip install 'evalkit[postgres]')"
        ) from None


def redact(url: str) -> str:
    """The URL with any password replaced by ``***``."""
    try:
        from sqlalchemy.engine import make_url

        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a malformed URL is reported as given, minus nothing secret
        return url.split("@")[-1]


class SqlStats:
    """Counts SQL statements and commits of one process's engine into ``<folder>/<pid>.json``
    (benchmarks only: ``EVALKIT_SQL_STATS_DIR``). The file is rewritten every 200 commits and at
    exit, so a SIGKILLed worker loses at most its last 199 commits' counts."""

    def __init__(self, folder: str, engine: Engine, key=None):
        import atexit
        from collections import Counter

        self.path = Path(folder) / f"{os.getpid()}.json"
        self.key = key or (lambda: "")
        self.statements: Counter = Counter()
        self.commits: Counter = Counter()
        self.cpu_s: Counter = Counter()  # thread CPU seconds per key (see webtest.app)
        self.requests: Counter = Counter()
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)
        atexit.register(self.write)

    def _statement(self, *_args) -> None:
        self.statements[self.key()] += 1

    def _commit(self, *_args) -> None:
        self.commits[self.key()] += 1
        if sum(self.commits.values()) % 200 == 0:
            self.write()

    def reset(self) -> None:
        for c in (self.statements, self.commits, self.cpu_s, self.requests):
            c.clear()

    def write(self) -> None:
        """Write ``{"pid", "statements": {key: n}, "commits": {key: n}}`` (keys: e.g. endpoints)."""
        import json

        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"pid": os.getpid(), "statements": dict(self.statements),
                                   "commits": dict(self.commits), "cpu_s": dict(self.cpu_s),
                                   "requests": dict(self.requests)}))
        os.replace(tmp, self.path)


class Database:
    """Per-process engine and session factory (re-created after a fork, e.g. gunicorn workers).

    ``stats_dir``: count SQL statements and commits into that folder (see :class:`SqlStats`),
    by ``stats_key()`` (e.g. the Flask endpoint of the request).
    """

    def __init__(self, url: str, stats_dir: str | None = None, stats_key=None):
        self.url = url
        self.stats_dir = stats_dir
        self.stats_key = stats_key
        self._pid: int | None = None
        self._engine: Engine | None = None
        self._sessions: sessionmaker | None = None
        self.stats: SqlStats | None = None
        self._reader: tuple[Engine, Engine] | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None or self._pid != os.getpid():
            self._engine = make_engine(self.url)
            self._sessions = sessionmaker(self._engine, expire_on_commit=False)
            self._pid = os.getpid()
            if self.stats_dir:
                self.stats = SqlStats(self.stats_dir, self._engine, self.stats_key)
        return self._engine

    @property
    def reader(self) -> Engine:
        """The engine for requests that only read: on PostgreSQL in autocommit mode, so a read
        is one round trip instead of three (no BEGIN before it, no ROLLBACK when the
        connection goes back to the pool); on SQLite the engine itself (a read there costs no
        round trip, and switching its isolation level would cost a PRAGMA per request)."""
        engine = self.engine
        if self.is_sqlite:
            return engine
        if self._reader is None or self._reader[0] is not engine:
            self._reader = (engine, engine.execution_options(isolation_level="AUTOCOMMIT"))
        return self._reader[1]

    def reset_stats(self) -> None:
        """Start counting statements and commits from zero (after the start-up work)."""
        if self.stats is not None:
            self.stats.reset()

    @property
    def is_sqlite(self) -> bool:
        return self.url.startswith("sqlite")

    def session(self) -> Session:
        _ = self.engine
        assert self._sessions is not None
        return self._sessions()

    @contextmanager
    def locked(self) -> Iterator[Connection]:
        """A connection in a transaction that excludes every other writer (schema set-up)."""
        with self.engine.connect() as conn:
            if self.is_sqlite:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                conn.begin()
                conn.execute(text("SELECT pg_advisory_xact_lock(7240131)"))
            try:
                yield conn
                conn.commit()
            except BaseException:
                conn.rollback()
                raise

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def init_schema(db: Database) -> None:
    """Create the tables and the ``ratings_long`` / ``wt_ratings_long_all`` views if missing."""
    try:
        with db.locked() as conn:
            Base.metadata.create_all(conn)
            for name, extra in (("ratings_long", ""), ("wt_ratings_long_all", ", p.study_id AS study")):
                body = _VIEW_SELECT.format(flags=_FLAGS, extra=extra, from_=_FROM)
                if db.is_sqlite:
                    conn.exec_driver_sql(f"CREATE VIEW IF NOT EXISTS {name} AS {body}")
                else:
                    conn.exec_driver_sql(f"CREATE OR REPLACE VIEW {name} AS {body}")
    except OperationalError as exc:
        raise ConfigError(f"cannot open the database {redact(db.url)!r}: {exc.orig}; "
                          "fix: check the URL, that the server runs and that the folder is writable") from None


def ensure_cells(db: Database, study_id: str, title: str, scale: str, cells_json: list[str], design_hash: str) -> int:
    """Create the study's design cells on first load; check the design did not change since.

    Returns the number of cells. Raises :class:`ConfigError` if cells exist with another design.
    """
    with db.locked() as conn:
        rec = conn.execute(select(StudyRecord).where(StudyRecord.id == study_id)).first()
        if rec is None:
            conn.execute(StudyRecord.__table__.insert().values(
                id=study_id, title=title[:255], design_hash=design_hash, n_cells=len(cells_json),
                scale=scale, created_at=time.time()))
            conn.execute(Cell.__table__.insert(), [
                {"study_id": study_id, "idx": i, "trials_json": tj, "status": "free", "generation": 0}
                for i, tj in enumerate(cells_json)])
            return len(cells_json)
        if rec.design_hash != design_hash:
            raise ConfigError(
                f"study {study_id!r}: the design in study.yaml changed after data collection started "
                f"(cells in the database have design {rec.design_hash}, the file gives {design_hash}); "
                "fix: restore the file, or give the study a new 'id:' (or a new database) for the new design")
        n = conn.execute(select(func.count()).select_from(Cell).where(Cell.study_id == study_id)).scalar_one()
        return int(n)


def count_answers(conn: Connection, study_id: str) -> int:
    """Answers stored for a study."""
    return int(conn.execute(select(func.count()).select_from(Answer).join(
        Participant, Answer.participant_id == Participant.id).where(Participant.study_id == study_id)).scalar_one())


def ensure_stimulus_files(db: Database, study_id: str, digests: dict[str, str]) -> None:
    """Record each stimulus's content fingerprint; refuse changed stimuli once answers exist.

    ``digests`` maps stimulus id to :func:`webtest.stimuli.stimulus_digest`. Before the first
    answer a changed file is simply recorded (stimuli may be rebuilt while a study is piloted);
    after it, the stored answers rate the old files, so serving new ones under the same ids
    would pool two experiments. Raises :class:`ConfigError` naming the changed stimuli.
    """
    with db.locked() as conn:
        stored = {r.stimulus_id: r.digest for r in conn.execute(
            select(StimulusFile).where(StimulusFile.study_id == study_id))}
        changed = sorted(k for k, v in digests.items() if k in stored and stored[k] != v)
        if changed:
            n = count_answers(conn, study_id)
            if n:
                shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
                raise ConfigError(
                    f"study {study_id!r}: stimulus {shown} changed after {n} answer(s) were stored "
                    "(its file, trim, transforms, the study's motion settings, playback.camera, framing, "
                    "colors or background, or the renderer: the answers rate what was shown before); fix: "
                    "restore the previous files and settings (answers collected before playback.camera "
                    "existed were shown with 'camera: fixed'; answers to stick figures need the evalkit "
                    "version that drew them), or give the study a new 'id:' (or a new database) for the new stimuli")
            for k in changed:
                conn.execute(StimulusFile.__table__.update().where(
                    (StimulusFile.study_id == study_id) & (StimulusFile.stimulus_id == k)).values(digest=digests[k]))
        new = [{"study_id": study_id, "stimulus_id": k, "digest": v} for k, v in digests.items() if k not in stored]
        if new:
            conn.execute(StimulusFile.__table__.insert(), new)


def stored_answers(study_root: Path, study_id: str, url: str | None = None) -> int:
    """Answers stored for ``study_id`` in the study's database (``url``, default
    :func:`default_url`), without creating a database: 0 when there is none yet.

    Raises :class:`ConfigError` if a database is named but cannot be read.
    """
    url = url or default_url(study_root)
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return 0
    db = Database(url)
    try:
        from sqlalchemy import inspect

        if "wt_answers" not in inspect(db.engine).get_table_names():
            return 0
        with db.engine.connect() as conn:
            return count_answers(conn, study_id)
    except OperationalError as exc:
        raise ConfigError(f"cannot open the database {redact(url)!r}: {exc.orig}; "
                          "fix: check the URL and that the server runs") from None
    finally:
        db.dispose()
