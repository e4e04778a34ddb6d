"""Storage on SQLite and PostgreSQL: schema, cells, atomic assignment, durable idempotent answers.

Every test runs twice (``db_url`` is parametrised): on a SQLite file and on a fresh schema of the
PostgreSQL server named by EVALKIT_TEST_DATABASE_URL (CI starts one).
"""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import create_engine, func, inspect, select, text, update

from evalkit.errors import ConfigError
from webtest.answers import record_answer
from webtest.assignment import claim_cell, holds_cell
from webtest.db import RATINGS_COLUMNS, Database, init_schema
from webtest.export import ratings_long
from webtest.tables import Answer, Assignment, Cell, Participant, Trial


def _state(app):
    return app.extensions["webtest"]


def _new_participant(st) -> str:
    pid = uuid.uuid4().hex
    now = time.time()
    with st.db.session() as s:
        s.add(Participant(id=pid, study_id=st.study.id, created_at=now, last_seen_at=now, stage="consent",
                          status="active", demographics_json="{}", exclusion_reason="", user_agent=""))
        s.commit()
    return pid


def _claim(st, pid, now=None):
    with st.db.session() as s:
        return claim_cell(s, st.study, st.stimuli, pid, now or time.time())


def test_schema_and_view_are_created_once(make_study, app_factory, db_url):
    app = app_factory(make_study(), db_url)
    st = _state(app)
    init_schema(st.db)  # again: no error
    insp = inspect(st.db.engine)
    assert {"wt_studies", "wt_cells", "wt_assignments", "wt_participants", "wt_trials", "wt_answers"} <= set(insp.get_table_names())
    assert "ratings_long" in insp.get_view_names()
    with st.db.engine.connect() as conn:
        cols = list(conn.execute(text("SELECT * FROM ratings_long")).keys())
    assert tuple(cols) == RATINGS_COLUMNS


def test_cells_are_created_on_load_and_a_changed_design_is_refused(make_study, app_factory, db_url):
    d = make_study(design={"participants": 5})
    st = _state(app_factory(d, db_url))
    with st.db.session() as s:
        assert s.execute(select(func.count()).select_from(Cell)).scalar_one() == 5
    app_factory(d, db_url)  # loading again keeps the same cells
    with st.db.session() as s:
        assert s.execute(select(func.count()).select_from(Cell)).scalar_one() == 5
    changed = make_study(design={"participants": 6})
    with pytest.raises(ConfigError, match="design in study.yaml changed"):
        app_factory(changed, db_url)


def test_stimuli_changed_after_answers_are_refused(make_study, app_factory, db_url, participant):
    import shutil

    import yaml

    from evalkit.data import SAMPLES_DIR

    d = make_study()
    for f in ("16.asf", "16_15.amc"):  # a stimulus file of the study's own
        shutil.copy(SAMPLES_DIR / "cmu" / f, d / f)
    data = yaml.safe_load((d / "study.yaml").read_text())
    data["stimuli"][0]["file"] = "16_15.amc"
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    app_factory(d, db_url)
    # before any answer, a rebuilt stimulus is simply recorded (a study being piloted)
    data["stimuli"][0]["trim"] = [0.0, 0.25]
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    app = app_factory(d, db_url)
    p = participant(app.test_client())
    p.to_trials()
    assert p.complete(value=1)
    # after answers, another file under the same id would pool two experiments: refused, by name
    amc = (d / "16_15.amc").read_bytes()
    (d / "16_15.amc").write_bytes(amc.replace(b"\nroot ", b"\nroot 1", 1))  # frame 1: root x 1.2 -> 11.2
    with pytest.raises(ConfigError, match=r"stimulus walk\.orig changed after \d+ answer"):
        app_factory(d, db_url)
    data["stimuli"][0]["trim"] = [0.0, 0.3]  # a changed trim too
    (d / "16_15.amc").write_bytes(amc)
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError, match=r"walk\.orig changed"):
        app_factory(d, db_url)
    # restored: served again, the answers kept
    data["stimuli"][0]["trim"] = [0.0, 0.25]
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    st = _state(app_factory(d, db_url))
    with st.db.session() as s:
        assert s.execute(select(func.count()).select_from(Answer)).scalar_one() >= 1


def test_camera_changed_after_answers_is_refused(make_study, app_factory, db_url, participant):
    """The camera is part of what participants see: answers given with the fixed camera (the only
    one before playback.camera existed, so its fingerprint is the old one) are not pooled with
    answers given with the following camera."""
    import yaml

    d = make_study()
    data = yaml.safe_load((d / "study.yaml").read_text())
    data.setdefault("playback", {})["camera"] = "fixed"
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    app = app_factory(d, db_url)
    p = participant(app.test_client())
    p.to_trials()
    assert p.complete(value=1)
    del data["playback"]["camera"]  # the default, follow
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError, match=r"changed after \d+ answer.*playback\.camera.*'camera: fixed'"):
        app_factory(d, db_url)
    data["playback"]["camera"] = "fixed"  # restored: served again
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    app_factory(d, db_url)


def test_concurrent_claims_never_share_a_cell(make_study, app_factory, db_url):
    st = _state(app_factory(make_study(design={"participants": 12}), db_url))
    pids = [_new_participant(st) for _ in range(20)]
    barrier = threading.Barrier(10, timeout=30)

    def claim(pid):
        barrier.wait()  # a broken barrier raises here and fails the test: the claims must overlap
        return _claim(st, pid)

    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(claim, pids))
    got = [r for r in results if r is not None]
    assert len(got) == 12 and results.count(None) == 8  # 12 cells, 20 participants
    assert len({r.cell_id for r in got}) == 12
    with st.db.session() as s:
        rows = s.execute(select(Assignment.cell_id, func.count()).group_by(Assignment.cell_id)).all()
        assert len(rows) == 12 and all(n == 1 for _, n in rows)
        holders = s.execute(select(Cell.participant_id)).scalars().all()
        assert len(set(holders)) == 12
        # each holder got its own copy of the cell's trials
        assert s.execute(select(func.count(func.distinct(Trial.participant_id)))).scalar_one() == 12


def test_inactive_cell_expires_and_is_reissued(make_study, app_factory, db_url):
    st = _state(app_factory(make_study(design={"participants": 1}, assignment={"timeout_minutes": 1}), db_url))
    a, b = _new_participant(st), _new_participant(st)
    t0 = time.time()
    first = _claim(st, a, now=t0)
    assert first is not None
    assert _claim(st, b, now=t0 + 30) is None  # still held: the study is full
    second = _claim(st, b, now=t0 + 61)  # a was inactive for over a minute
    assert second is not None and second.cell_id == first.cell_id and second.generation == 2
    with st.db.session() as s:
        assert not holds_cell(s, s.get(Participant, a)) and holds_cell(s, s.get(Participant, b))
        assert s.execute(select(func.count()).select_from(Assignment)).scalar_one() == 2


def _to_trials(st, pid):
    assert _claim(st, pid) is not None
    with st.db.session() as s:
        s.execute(update(Trial).where(Trial.participant_id == pid).values(served_at=time.time() - 60))
        s.execute(update(Participant).where(Participant.id == pid).values(stage="trials"))
        s.commit()


def test_duplicate_answers_at_once_store_one_row(make_study, app_factory, db_url):
    st = _state(app_factory(make_study(), db_url))
    pid = _new_participant(st)
    _to_trials(st, pid)
    barrier = threading.Barrier(6, timeout=30)

    def send(value):
        with st.db.session() as s:
            p = s.get(Participant, pid)
            barrier.wait()  # a broken barrier raises here and fails the test: the answers must overlap
            return record_answer(s, p, 1, value, st.study.scale, st.study.exclusion, time.time())

    with ThreadPoolExecutor(6) as pool:
        outcomes = list(pool.map(send, [1, 2, 3, -1, -2, -3]))
    assert sorted(o.status for o in outcomes) == ["duplicate"] * 5 + ["stored"]
    winner = [v for v, o in zip([1, 2, 3, -1, -2, -3], outcomes) if o.status == "stored"][0]
    with st.db.session() as s:
        rows = s.execute(select(Answer.raw_answer).where(Answer.participant_id == pid)).scalars().all()
    assert rows == [str(winner)]  # first answer wins


def test_acknowledged_answer_is_visible_to_a_new_connection(make_study, app_factory, db_url):
    st = _state(app_factory(make_study(), db_url))
    pid = _new_participant(st)
    _to_trials(st, pid)
    with st.db.session() as s:
        out = record_answer(s, s.get(Participant, pid), 1, 2, st.study.scale, st.study.exclusion, time.time())
    assert out.status == "stored" and out.next_position == 2
    other = create_engine(db_url)
    try:
        with other.connect() as conn:
            n = conn.execute(text("SELECT COUNT(*) FROM wt_answers WHERE participant_id = :p"), {"p": pid}).scalar_one()
        assert n == 1
    finally:
        other.dispose()


def test_ratings_long_has_sign_corrected_scores_flags_and_exclusions(make_study, app_factory, db_url):
    st = _state(app_factory(make_study(quality={"gold": {"count": 1, "tolerance": 0}},
                                       exclusion={"max_gold_failures": 0},
                                       training=[{"item": "run", "systems": ["original", "jitter"]}]), db_url))
    pid = _new_participant(st)
    _to_trials(st, pid)
    with st.db.session() as s:
        trials = s.execute(select(Trial).where(Trial.participant_id == pid).order_by(Trial.position)).scalars().all()
        for t in trials:
            value = 2 if t.kind != "gold" else 3  # fails the gold check (expects 0)
            assert record_answer(s, s.get(Participant, pid), t.position, value, st.study.scale,
                                 st.study.exclusion, time.time()).status == "stored"
    df = ratings_long(st.db)
    assert tuple(df.columns) == RATINGS_COLUMNS
    assert len(df) == len(trials) - 1  # the training trial is not exported
    by_pos = {t.position: t for t in trials}
    for row in df.itertuples():
        t = by_pos[row.trial]
        raw = int(row.raw_answer)
        assert row.score == (raw if t.side_shown == "right" else -raw)
        assert row.side_shown == t.side_shown and row.system_a == t.system_a
        assert "excluded" in row.flags.split(";")  # the failed gold check excludes every row
        if t.kind == "gold":
            assert {"check:gold", "gold_fail"} <= set(row.flags.split(";"))
    assert (df["response_time_s"] > 50).all()  # served a minute before (set above)
    assert ratings_long(st.db, st.study.id).equals(df)


def test_bad_database_url_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot open the database"):
        init_schema(Database(f"sqlite:///{tmp_path}/no/such/dir/x.sqlite"))
    with pytest.raises(ConfigError, match="cannot be used"):
        Database("nosuchdb://x").engine


@pytest.mark.parametrize("scale", ["ccr7", "cmos5", "acr5"])
def test_reports_package_reads_the_view(make_study, app_factory, db_url, scale):
    """The contract with reports: its database reader accepts ratings_long as webtest writes it."""
    from reports.io import read_ratings_db  # the project's own package: never skipped
    from reports.table import has_flag

    from tests.webtest.helpers import Participant

    app = app_factory(make_study(scale=scale, quality={"gold": {"count": 1, "tolerance": 0}, "attention": {"count": 1},
                                                       "repeat": {"count": 1}}), db_url)
    values = {"ccr7": [2, 0], "cmos5": [1, 0], "acr5": ["4|2", "3|3"]}[scale]
    for v in values:
        p = Participant(app.test_client())
        p.to_trials({})
        p.complete(value=v)
    ours = ratings_long(_state(app).db)
    theirs = read_ratings_db(db_url)
    assert len(theirs) == len(ours) == (2 * 5 * (2 if scale == "acr5" else 1))
    assert has_flag(theirs["flags"], "check").sum() == 2 * 3 * (2 if scale == "acr5" else 1)
    # the first rater (non-zero answers) fails the gold check, the second does not
    failed = theirs[has_flag(theirs["flags"], "check_failed") & theirs["flags"].str.contains("gold_fail")]
    assert failed["participant"].nunique() == 1



@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)  # a SQLite file has no server
def test_connections_closed_by_the_server_are_replaced_without_an_error(make_study, app_factory, db_url):
    """A database restart (here: the server ends every pooled connection) fails no request,
    without a ping round trip per checkout (see webtest.db._drop_if_closed_by_server)."""
    st = _state(app_factory(make_study(), db_url))
    engine = st.db.engine
    conns = [engine.connect() for _ in range(3)]  # three pooled connections, then back to the pool
    old = {c.execute(text("SELECT pg_backend_pid()")).scalar_one() for c in conns}
    for c in conns:
        c.close()
    admin = create_engine(db_url)
    try:
        with admin.connect() as conn:
            for backend in old:
                assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": backend}).scalar_one()
    finally:
        admin.dispose()
    time.sleep(0.3)  # the server's goodbye reaches the sockets
    for _ in range(3):
        with engine.connect() as conn:
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() not in old
    pid = _new_participant(st)  # a whole request's work on the same pool
    _to_trials(st, pid)
    with st.db.session() as s:
        out = record_answer(s, s.get(Participant, pid), 1, 2, st.study.scale, st.study.exclusion, time.time())
    assert out.status == "stored"
