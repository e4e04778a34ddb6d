"""Security: CSRF on every POST, signed identity, own trials only, admin login, escaping, limits."""

from __future__ import annotations

import pytest
from flask.sessions import SecureCookieSessionInterface
from sqlalchemy import select

from evalkit.errors import ConfigError
from tests.webtest.helpers import ADMIN_PASSWORD, BASE_STUDY, Participant, csrf
from webtest.tables import Answer, LoginFailure, Trial


@pytest.fixture
def app(make_study, app_factory):
    return app_factory(make_study(design={"participants": 6}))


def _pid(c, app):
    with c.session_transaction() as s:
        return s[f"p:{app.extensions['webtest'].study.id}"]


def _snapshot(app) -> dict:
    """Every row of the tables a POST could change."""
    from sqlalchemy import text

    with app.extensions["webtest"].db.engine.connect() as conn:
        return {t: sorted(map(tuple, conn.execute(text(f"SELECT * FROM {t}")).all()), key=repr)
                for t in ("wt_participants", "wt_cells", "wt_trials", "wt_answers", "wt_login_failures",
                          "wt_admin_sessions")}


def _admin_logged_in(c) -> bool:
    return c.get("/admin/").status_code == 200


@pytest.mark.parametrize("path, data, before", [
    ("/start", {}, None),
    ("/consent", {"choice": "agree"}, "start"),
    ("/consent", {"choice": "decline"}, "start"),
    ("/instructions", {}, "consent"),
    ("/trial/1", {"answer": "1"}, "trials"),
    ("/admin/login", {"password": ADMIN_PASSWORD}, None),
    ("/admin/logout", {}, "admin"),
    ("/admin/logout-everywhere", {}, "admin"),
])
def test_post_without_csrf_token_changes_nothing(app, path, data, before):
    c = app.test_client()
    p = Participant(c)  # a session exists, but the form carries no token
    if before == "start":
        p.start()
    elif before == "consent":
        p.start()
        p.consent()
    elif before == "trials":
        p.to_trials({})
        p.show(1)
    elif before == "admin":
        assert c.post("/admin/login", data={"csrf_token": p.token, "password": ADMIN_PASSWORD}).status_code == 302
    stage_before = c.get("/").location
    rows = _snapshot(app)
    r = c.post(path, data=data)
    assert r.status_code == 400 and "Reload the page" in r.get_data(as_text=True)
    assert _snapshot(app) == rows  # no participant, answer, cell, login count or admin session changed
    assert c.get("/").location == stage_before  # the participant is where they were
    assert _admin_logged_in(c) is (before == "admin")  # neither logged in nor out
    # the same request with the token does what it says (so the rejection above was the token's)
    token = csrf(c.get("/admin/login").get_data(as_text=True))  # the session's token (login renews it)
    r = c.post(path, data={**data, "csrf_token": token})
    assert r.status_code in (200, 302, 303) and _snapshot(app) != rows


def test_json_answer_needs_the_csrf_header(app):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    r = c.post("/trial/1", json={"answer": 1})
    assert r.status_code == 400 and r.get_json()["ok"] is False
    r = c.post("/trial/1", json={"answer": 1}, headers={"X-CSRFToken": "forged"})
    assert r.status_code == 400
    assert p.answer(1, 1).status_code == 200
    with app.extensions["webtest"].db.session() as s:
        assert len(s.execute(select(Answer)).scalars().all()) == 1


def test_token_of_another_session_is_rejected(app):
    a, b = app.test_client(), app.test_client()
    pa = Participant(a)
    Participant(b)
    r = b.post("/start", data={"csrf_token": pa.token})
    assert r.status_code == 400


def test_participant_reads_and_answers_only_their_own_trials(app):
    a, b = app.test_client(), app.test_client()
    pa, pb = Participant(a), Participant(b)
    pa.to_trials({})
    pb.to_trials({})
    ida, idb = _pid(a, app), _pid(b, app)
    assert ida != idb
    db = app.extensions["webtest"].db
    with db.session() as s:
        ta = s.execute(select(Trial).where(Trial.participant_id == ida, Trial.position == 1)).scalar_one()
        tb = s.execute(select(Trial).where(Trial.participant_id == idb, Trial.position == 1)).scalar_one()
    st = app.extensions["webtest"]
    # each participant's page names their own stimuli (cells differ in sides)
    from tests.webtest.helpers import stimulus_urls

    assert a.get(stimulus_urls(pa.show(1).get_data(as_text=True))["left"][0]).get_json() == pa_json(st, ta.stim_left)
    assert b.get(stimulus_urls(pb.show(1).get_data(as_text=True))["left"][0]).get_json() == pa_json(st, tb.stim_left)
    # A answers: only A's trial gets an answer, B's stays open
    pa.show(1)
    assert pa.answer(1, 3).status_code == 200
    with db.session() as s:
        rows = s.execute(select(Answer.participant_id, Answer.trial_id)).all()
    assert rows == [(ida, ta.id)]
    # database ids in a request are never used: a field naming B's trial changes nothing
    r = a.post("/trial/2", json={"answer": 1, "trial_id": tb.id, "participant": idb}, headers={"X-CSRFToken": pa.token})
    assert r.status_code in (200, 409)
    with db.session() as s:
        assert s.execute(select(Answer).where(Answer.participant_id == idb)).first() is None


def pa_json(st, stim_id):
    import json

    return json.loads(st.stimuli[stim_id].path.read_text())


def test_forged_identity_cookie_is_ignored(app):
    b = app.test_client()
    Participant(b).to_trials({})
    idb = _pid(b, app)
    key = f"p:{app.extensions['webtest'].study.id}"
    # sign a session naming B with the wrong key: the server must not accept it
    iface = SecureCookieSessionInterface()

    class Fake:
        secret_key = "not-the-secret"
        config = app.config

    forged = iface.get_signing_serializer(Fake).dumps({key: idb})
    m = app.test_client()
    m.set_cookie("evalkit_session", forged)
    assert m.get("/trial").location == "/"
    assert m.get("/trial/1").location == "/"
    # and a tampered valid cookie is rejected too
    good = b.get_cookie("evalkit_session").value
    m2 = app.test_client()
    m2.set_cookie("evalkit_session", good[:-2] + ("AA" if not good.endswith("AA") else "BB"))
    assert m2.get("/trial").location == "/"


def test_session_cookie_flags(app):
    c = app.test_client()
    Participant(c).start()
    cookie = c.get_cookie("evalkit_session")
    assert cookie.http_only and cookie.same_site == "Lax" and cookie.expires is not None


@pytest.mark.parametrize("path", ["/admin/", "/admin/export/ratings.csv", "/admin/export/ratings.json",
                                  "/admin/export/participants.csv"])
def test_admin_routes_refuse_anonymous_users(app, path):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})  # a participant is not an admin either
    p.complete()
    r = c.get(path)
    body = r.get_data(as_text=True)
    assert r.status_code == 302 and r.location.startswith("/admin/login")
    assert "system_a" not in body and _pid(c, app) not in body and "original" not in body


def _admin(app, address="10.0.0.1"):
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = address
    token = csrf(c.get("/admin/login").get_data(as_text=True))

    def login(password):
        return c.post("/admin/login", data={"csrf_token": token, "password": password})

    return login


def test_admin_login_is_rate_limited_per_address(make_study, app_factory):
    app = app_factory(make_study(), login_max_failures=3, login_window_s=600)
    login = _admin(app)
    assert [login("wrong").status_code for _ in range(3)] == [401, 401, 401]
    r = login(ADMIN_PASSWORD)  # locked: not even the right password is checked
    assert r.status_code == 429 and "Too many wrong passwords" in r.get_data(as_text=True)
    assert 590 <= int(r.headers["Retry-After"]) <= 600
    assert login("wrong").status_code == 429
    assert _admin(app, "10.0.0.2")(ADMIN_PASSWORD).status_code == 302  # another address is not locked
    db = app.extensions["webtest"].db
    with db.session() as s:  # let the window pass: the failures are now older than 600 s
        for f in s.execute(select(LoginFailure)).scalars():
            f.at -= 601
        s.commit()
    r = login(ADMIN_PASSWORD)
    assert r.status_code == 302 and r.location == "/admin/"
    with db.session() as s:
        assert s.execute(select(LoginFailure)).first() is None  # old rows purged, this address cleared


def test_admin_lockout_is_shared_by_workers(make_study, app_factory, tmp_path):
    # two apps on one database stand for two gunicorn worker processes
    d, url = make_study(), f"sqlite:///{tmp_path / 'shared.sqlite'}"
    one = app_factory(d, url, login_max_failures=2)
    two = app_factory(d, url, login_max_failures=2)
    assert _admin(one)("wrong").status_code == 401
    assert _admin(two)("wrong").status_code == 401
    r = _admin(one)(ADMIN_PASSWORD)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


def _admin_via_proxy(app, forwarded_for: str):
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = "127.0.0.1"  # the reverse proxy on the same machine
    headers = {"X-Forwarded-For": forwarded_for}
    token = csrf(c.get("/admin/login", headers=headers).get_data(as_text=True))
    return lambda password: c.post("/admin/login", data={"csrf_token": token, "password": password},
                                   headers=headers)


def test_behind_a_trusted_proxy_the_limit_is_per_client(make_study, app_factory):
    d = make_study()
    # without trusted proxies every client has the proxy's address: one client locks out all
    # (and X-Forwarded-For, which any client can send, is ignored)
    plain = app_factory(d, login_max_failures=2)
    for _ in range(2):
        assert _admin_via_proxy(plain, "203.0.113.7")("wrong").status_code == 401
    assert _admin_via_proxy(plain, "198.51.100.9")(ADMIN_PASSWORD).status_code == 429
    # behind one trusted proxy the address is the one the proxy appended
    proxied = app_factory(make_study(), login_max_failures=2, trusted_proxies=1)
    for _ in range(2):
        assert _admin_via_proxy(proxied, "203.0.113.7")("wrong").status_code == 401
    assert _admin_via_proxy(proxied, "203.0.113.7")(ADMIN_PASSWORD).status_code == 429
    assert _admin_via_proxy(proxied, "198.51.100.9")(ADMIN_PASSWORD).status_code == 302
    # a client cannot escape by prepending its own X-Forwarded-For: only the proxy's entry counts
    assert _admin_via_proxy(proxied, "10.9.9.9, 203.0.113.7")(ADMIN_PASSWORD).status_code == 429


@pytest.mark.parametrize("value", ["-1", "x", "11", "1.5"])
def test_trusted_proxies_from_the_environment_is_checked(monkeypatch, example_study, value):
    from webtest.config import WebtestConfig

    monkeypatch.setenv("EVALKIT_TRUSTED_PROXIES", value)
    with pytest.raises(ConfigError, match="EVALKIT_TRUSTED_PROXIES"):
        WebtestConfig.from_env(example_study)
    monkeypatch.setenv("EVALKIT_TRUSTED_PROXIES", "1")
    assert WebtestConfig.from_env(example_study).trusted_proxies == 1


def test_admin_login_default_limit(app):
    login = _admin(app)
    codes = [login("wrong").status_code for _ in range(30)]
    assert codes == [401] * 10 + [429] * 20


def test_script_in_names_is_shown_as_text(make_study, app_factory):
    evil = "<script>alert(1)</script>"
    stimuli = [dict(s) for s in BASE_STUDY["stimuli"]]
    for s in stimuli:
        if s["system"] == "jitter":
            s["system"] = evil
        if s["item"] == "walk":
            s["item"] = evil + "walk"
    app = app_factory(make_study(stimuli=stimuli, pairs=[["original", evil]], title=f"Study {evil}",
                                 question=f"Which? {evil}",
                                 description=f"Hi {evil} <img src=x onerror=alert(2)> [link](javascript:alert(3))"))
    c = app.test_client()
    landing = c.get("/").get_data(as_text=True)
    assert "<script>alert" not in landing and "&lt;script&gt;alert(1)&lt;/script&gt;" in landing
    assert "onerror" not in landing.replace("&lt;img src=x onerror=alert(2)&gt;", "")
    assert "href=\"javascript:" not in landing and "[link](javascript:alert(3))" in landing  # kept as text
    p = Participant(c)
    p.to_trials({})
    trial = p.show(1).get_data(as_text=True)
    assert "<script>alert" not in trial and "Which? &lt;script&gt;" in trial
    from tests.webtest.helpers import ADMIN_PASSWORD

    admin = app.test_client()
    token = csrf(admin.get("/admin/login").get_data(as_text=True))
    admin.post("/admin/login", data={"csrf_token": token, "password": ADMIN_PASSWORD})
    p.complete()
    dash = admin.get("/admin/").get_data(as_text=True)
    assert "<script>alert" not in dash and "&lt;script&gt;alert(1)&lt;/script&gt;" in dash


def test_security_headers_and_no_debug(app):
    r = app.test_client().get("/")
    h = r.headers
    assert "script-src 'self'" in h["Content-Security-Policy"] and "frame-ancestors 'none'" in h["Content-Security-Policy"]
    assert h["X-Content-Type-Options"] == "nosniff" and h["X-Frame-Options"] == "DENY"
    assert app.debug is False and app.config["MAX_CONTENT_LENGTH"] == 64 * 1024


def test_server_error_shows_no_traceback(make_study, app_factory):
    app = app_factory(make_study())
    app.testing = False  # behave like production for this request

    @app.get("/boom")
    def boom():
        raise RuntimeError("secret internals")

    r = app.test_client().get("/boom")
    text = r.get_data(as_text=True)
    assert r.status_code == 500 and "secret internals" not in text and "Traceback" not in text


# -- found by probing a running server ---------------------------------------------
def _client_login(app, address="10.0.0.1"):
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = address

    def login(password, **kw):  # the token of the session as it is now (a login renews it)
        token = csrf(c.get("/admin/login").get_data(as_text=True))
        return c.post("/admin/login", data={"csrf_token": token, "password": password}, **kw)

    return c, login


def test_concurrent_wrong_passwords_are_counted_atomically(make_study, app_factory, tmp_path):
    import threading

    app = app_factory(make_study(), f"sqlite:///{tmp_path / 'race.sqlite'}")
    n = 24
    logins = [_client_login(app)[1] for _ in range(n)]
    barrier = threading.Barrier(n, timeout=30)
    codes: list[int] = []
    errors: list[BaseException] = []

    def attempt(login):
        try:
            barrier.wait()  # a BrokenBarrierError fails the test: the attempts must overlap
            codes.append(login("wrong").status_code)
        except BaseException as exc:  # noqa: BLE001 - re-raised below in the test thread
            errors.append(exc)

    threads = [threading.Thread(target=attempt, args=(lg,)) for lg in logins]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    # the limit is 10: exactly 10 passwords were checked, every other attempt was refused unchecked
    assert sorted(codes) == [401] * 10 + [429] * (n - 10)
    with app.extensions["webtest"].db.session() as s:
        assert len(s.execute(select(LoginFailure)).all()) == 10


def test_an_attacker_cannot_lock_the_owner_out(make_study, app_factory):
    app = app_factory(make_study(), login_max_failures=3, login_window_s=600)
    owner, owner_login = _client_login(app)
    assert owner_login(ADMIN_PASSWORD).status_code == 302  # the owner's browser has logged in before
    owner.post("/admin/logout", data={"csrf_token": csrf(owner.get("/admin/login").get_data(as_text=True))})
    # an attacker at the same address (e.g. everyone behind one proxy) guesses until refused
    _, attack = _client_login(app)
    assert [attack("guess").status_code for _ in range(5)] == [401, 401, 401, 429, 429]
    assert attack(ADMIN_PASSWORD).status_code == 429  # the attacker's client stays refused
    # the owner's browser is not refused: its own failures only count against it
    r = owner_login(ADMIN_PASSWORD)
    assert r.status_code == 302 and r.location == "/admin/"
    assert owner.get("/admin/").status_code == 200
    # guessing from many addresses hits the shared budget of clients that never logged in
    # (10 x 3 per window; the attacker above used 3 of it)
    for i in range(9):
        _, other = _client_login(app, f"10.1.0.{i}")
        assert [other("guess").status_code for _ in range(3)] == [401, 401, 401]
    assert _client_login(app, "10.2.0.1")[1](ADMIN_PASSWORD).status_code == 429
    owner.post("/admin/logout", data={"csrf_token": csrf(owner.get("/admin/").get_data(as_text=True))})
    assert owner_login(ADMIN_PASSWORD).status_code == 302  # still not the owner's browser


def test_logout_revokes_a_copied_session_cookie(app):
    c, login = _client_login(app)
    assert login(ADMIN_PASSWORD).status_code == 302
    saved = c.get_cookie("evalkit_session").value
    assert c.get("/admin/export/participants.csv").status_code == 200
    c.post("/admin/logout", data={"csrf_token": csrf(c.get("/admin/").get_data(as_text=True))})
    thief = app.test_client()
    thief.set_cookie("evalkit_session", saved)  # the cookie as it was before the logout
    r = thief.get("/admin/export/participants.csv")
    assert r.status_code == 302 and r.location.startswith("/admin/login")


def test_log_out_everywhere_and_the_admin_session_lifetime(make_study, app_factory):
    from webtest.tables import AdminSession

    app = app_factory(make_study(), admin_session_hours=2)
    one, login_one = _client_login(app)
    two, login_two = _client_login(app, "10.0.0.2")
    assert login_one(ADMIN_PASSWORD).status_code == 302 and login_two(ADMIN_PASSWORD).status_code == 302
    db = app.extensions["webtest"].db
    with db.session() as s:
        rows = s.execute(select(AdminSession)).scalars().all()
        assert len(rows) == 2 and all(abs(r.expires_at - r.created_at - 7200) < 1 for r in rows)
    assert "Log out everywhere (2 admin sessions)" in one.get("/admin/").get_data(as_text=True)
    r = one.post("/admin/logout-everywhere", data={"csrf_token": csrf(one.get("/admin/").get_data(as_text=True))})
    assert r.status_code == 302
    assert one.get("/admin/").status_code == 302 and two.get("/admin/").status_code == 302
    assert login_two(ADMIN_PASSWORD).status_code == 302
    with db.session() as s:  # a session past its lifetime ends server-side
        for row in s.execute(select(AdminSession)).scalars():
            row.expires_at = row.created_at - 1
        s.commit()
    assert two.get("/admin/").status_code == 302


def test_deeply_nested_json_is_a_clear_400(app):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    for body in ("[" * 30000, '{"answer": 1, "events": ' + "[" * 30000 + "]" * 30000 + "}"):
        r = c.post("/trial/1", data=body, content_type="application/json", headers={"X-CSRFToken": p.token})
        assert r.status_code == 400 and "nested too deeply" in r.get_json()["error"]
    assert p.answer(1, 1).status_code == 200  # the participant can go on


@pytest.mark.parametrize("target", ["/admin/%0d%0aSet-Cookie:x=1", "/admin/\r\nX-Injected: 1",
                                    "/admin/\nLocation: https://evil.example", "/admin/\x00", "/admin/\\evil"])
def test_next_with_control_characters_is_refused(app, target):
    c = app.test_client()
    token = csrf(c.get("/admin/login").get_data(as_text=True))
    r = c.post("/admin/login", query_string={"next": target},
               data={"csrf_token": token, "password": ADMIN_PASSWORD})
    assert r.status_code == 302 and r.location == "/admin/"
    assert "X-Injected" not in r.headers and "evil" not in r.headers["Location"]


def test_resuming_needs_the_whole_submission_never_the_pid_alone(make_study, app_factory):
    app = app_factory(make_study(crowdsourcing={"platform": "prolific", "completion_code": "C1A2B3"}))
    ids = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "60aabbccddeeff0011223344",
           "SESSION_ID": "61aabbccddeeff0011223344"}

    def begin(params):
        c = app.test_client()
        token = csrf(c.get("/", query_string=params).get_data(as_text=True))
        c.post("/start", data={"csrf_token": token, **params})
        return _pid(c, app)

    first = begin(ids)
    assert begin(ids) == first  # the same submission from another browser resumes
    assert begin({**ids, "SESSION_ID": "62aabbccddeeff0011223344"}) != first
    assert begin({**ids, "STUDY_ID": "63aabbccddeeff0011223344"}) != first  # another study's session id
