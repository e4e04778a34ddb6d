"""Every route through Flask's test client: participant flow, trials, answers, end pages, admin."""

from __future__ import annotations

import io
import json
import time

import pandas as pd
import pytest
from sqlalchemy import select, update

from tests.webtest.helpers import ADMIN_PASSWORD, Participant, csrf, stimulus_urls
from webtest.db import RATINGS_COLUMNS
from webtest.tables import Answer, Cell, Participant as PRow, Trial

PROLIFIC = "?PROLIFIC_PID=5f1a2b3c4d5e6f7a8b9c0d1e&STUDY_ID=60aabbccddeeff0011223344&SESSION_ID=61aabbccddeeff0011223344"
MTURK = "?workerId=A1B2C3D4E5F6G7&assignmentId=3ABCDEFGHIJKLMNOPQRST&hitId=3HITHITHITHITHIT&turkSubmitTo=https://workersandbox.mturk.com"


@pytest.fixture
def app(make_study, app_factory):
    return app_factory(make_study(demographics=[
        {"id": "age", "label": "Age", "type": "number", "min": 18, "max": 99, "required": True},
        {"id": "hand", "label": "Hand", "type": "choice", "options": ["left", "right"]},
        {"id": "note", "label": "Note"},
    ]))


def _st(app):
    return app.extensions["webtest"]


def _trials(app, pid):
    with _st(app).db.session() as s:
        return s.execute(select(Trial).where(Trial.participant_id == pid).order_by(Trial.position)).scalars().all()


def _pid(client, app):
    with client.session_transaction() as sess:
        return sess[f"p:{_st(app).study.id}"]


def test_healthz_and_static(app):
    c = app.test_client()
    assert c.get("/healthz").get_json() == {"ok": True, "study": "mini"}
    assert c.get("/static/player.js").status_code == 200
    assert c.get("/static/style.css").mimetype == "text/css"


def test_landing_renders_markdown_and_start_form(app):
    r = app.test_client().get("/")
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "<em>tiny</em>" in html and 'action="/start"' in html
    assert 'name="csrf-token"' in html and 'name="viewport"' in html


def test_start_creates_participant_and_resumes_stage(app):
    c = app.test_client()
    p = Participant(c)
    r = p.start()
    assert r.status_code == 302 and r.location == "/consent"
    pid = _pid(c, app)
    with _st(app).db.session() as s:
        row = s.get(PRow, pid)
        assert row.stage == "consent" and row.status == "active" and row.cell_id is None
    assert c.get("/").location == "/consent"  # landing again -> current stage
    assert c.get("/instructions").location == "/consent"  # no skipping ahead
    assert c.get("/trial").location == "/consent"


def test_consent_page_and_agree_claims_a_cell(app):
    c = app.test_client()
    p = Participant(c)
    p.start()
    r = c.get("/consent")
    assert r.status_code == 200 and "<strong>agree</strong>" in r.get_data(as_text=True)
    r = p.consent("agree")
    assert r.location == "/demographics"
    with _st(app).db.session() as s:
        row = s.get(PRow, _pid(c, app))
        assert row.cell_id is not None and row.consent_at is not None
        assert s.get(Cell, row.cell_id).participant_id == row.id


def test_decline_ends_the_study(app):
    c = app.test_client()
    p = Participant(c)
    p.start()
    r = p.consent("decline")
    assert r.location == "/stop"
    assert "chose not to take part" in c.get("/stop").get_data(as_text=True)
    assert c.get("/trial").location == "/stop" and c.get("/").location == "/stop"
    assert c.get("/done").location == "/stop"


def test_full_study(make_study, app_factory):
    app = app_factory(make_study(design={"participants": 1}))
    Participant(app.test_client()).to_trials()
    c2 = app.test_client()
    r = c2.get("/")
    assert "study is full" in r.get_data(as_text=True) and 'action="/start"' not in r.get_data(as_text=True)
    p2 = Participant(c2)
    p2.start()  # a form from before the study filled up
    assert p2.consent().location == "/stop"
    assert "study is full" in c2.get("/stop").get_data(as_text=True)


@pytest.mark.parametrize("form, field, message", [
    ({"hand": "left"}, "age", "This field is required."),
    ({"age": "12"}, "age", "Enter a number between 18 and 99."),
    ({"age": "abc"}, "age", "Enter a number between 18 and 99."),
    ({"age": "nan"}, "age", "Enter a number between 18 and 99."),
    ({"age": "30", "hand": "both"}, "hand", "Choose one of the options."),
    ({"age": "30", "note": "x" * 201}, "note", "under 200 characters"),
])
def test_demographics_validation_errors(app, form, field, message):
    c = app.test_client()
    p = Participant(c)
    p.start()
    p.consent()
    r = c.post("/demographics", data={"csrf_token": p.token, **form})
    html = r.get_data(as_text=True)
    assert r.status_code == 400 and message in html
    assert f'id="e-{field}"' in html and 'aria-invalid="true"' in html


@pytest.mark.parametrize("value", ["inf", "-Infinity", "1e400", "NaN"])
def test_demographics_number_without_bounds_must_be_finite(make_study, app_factory, value):
    app = app_factory(make_study(demographics=[{"id": "height", "label": "Height", "type": "number"}]))
    c = app.test_client()
    p = Participant(c)
    p.start()
    p.consent()
    r = c.post("/demographics", data={"csrf_token": p.token, "height": value})
    assert r.status_code == 400 and 'id="e-height"' in r.get_data(as_text=True)
    with _st(app).db.session() as s:
        assert s.get(PRow, _pid(c, app)).demographics_json == "{}"
    assert c.post("/demographics", data={"csrf_token": p.token, "height": "1.8e2"}).location == "/instructions"
    with _st(app).db.session() as s:
        assert json.loads(s.get(PRow, _pid(c, app)).demographics_json) == {"height": 180}


def test_demographics_stored_then_instructions_then_trials(app):
    c = app.test_client()
    p = Participant(c)
    p.start()
    p.consent()
    assert c.get("/demographics").status_code == 200
    r = c.post("/demographics", data={"csrf_token": p.token, "age": "31", "hand": "right", "note": " hi "})
    assert r.location == "/instructions"
    with _st(app).db.session() as s:
        assert json.loads(s.get(PRow, _pid(c, app)).demographics_json) == {"age": 31, "hand": "right", "note": "hi"}
    page = c.get("/instructions").get_data(as_text=True)
    assert "Watch both clips." in page and "Keyboard: A plays the left clip" in page
    assert c.post("/instructions", data={"csrf_token": p.token}).location == "/trial/1"  # straight to the first trial
    assert c.get("/trial").location == "/trial/1"


def test_trial_page_content_and_redirects(app):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    assert c.get("/trial/2").location == "/trial/1"  # not ahead
    r = p.show(1)
    html = r.get_data(as_text=True)
    assert r.status_code == 200
    assert "Compared with the left clip, the right clip is:" in html
    assert html.count('name="answer"') == 7 and "Much better" in html and "About the same" in html
    assert 'id="next"' in html and "disabled" in html.split('id="next"')[1].split(">")[0]
    assert 'aria-keyshortcuts="A"' in html and 'role="progressbar"' in html and "<progress" in html
    assert "Comparison 1 of 2" in html
    with c.session_transaction() as sess:  # shown at: in the signed cookie, not a database write
        assert sess["sv:mini"][0] == 1 and abs(sess["sv:mini"][1] - time.time()) < 60
    assert _trials(app, _pid(c, app))[0].served_at is None
    assert p.answer(1, 1).status_code == 200
    assert c.get("/trial/1").location == "/trial/2"  # answered trials are not shown again


@pytest.mark.parametrize("camera", [None, "follow", "fixed"])
def test_trial_page_has_one_counter_and_the_study_camera(make_study, app_factory, camera):
    """The heading counts practice and comparisons separately; the progress line beside the bar
    is a share of the whole study, not a second counter. The study's camera reaches the player."""
    import re

    playback = {"must_end": False, "min_time_s": 0} | ({"camera": camera} if camera else {})
    app = app_factory(make_study(training=[{"item": "walk", "systems": ["original", "jitter"]}], playback=playback))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    seen = []
    for n in (1, 2, 3):  # 1 practice page + 2 comparisons
        html = p.show(n).get_data(as_text=True)
        heading = re.search(r'<h1 id="trial-title">([^<]*)</h1>', html).group(1)
        progress = re.search(r'<span class="progress-text">([^<]*)</span>', html).group(1)
        seen.append((heading, progress))
        assert "Step" not in html
        assert f'data-camera="{camera or "follow"}"' in html
        assert p.answer(n, 0).status_code == 200
    assert seen == [("Practice 1 of 1", "0% done"), ("Comparison 1 of 2", "33% done"), ("Comparison 2 of 2", "67% done")]


def test_stimuli_are_served_by_content_addressed_immutable_urls(app):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    t1 = _trials(app, _pid(c, app))[0]
    stim = _st(app).stimuli
    urls = stimulus_urls(p.show(1).get_data(as_text=True))
    for side, sid in (("left", t1.stim_left), ("right", t1.stim_right)):
        src, audio = urls[side]
        assert src.startswith("/stimulus/") and src.endswith(".json") and audio == ""
        name = src.rsplit("/", 1)[1][:-5]
        assert len(name) == 32 and sid not in src and t1.system_a not in src  # nothing says which system
        r = c.get(src)
        assert r.status_code == 200 and r.mimetype == "application/json"
        assert r.get_json() == json.loads(stim[sid].path.read_text())
        assert r.headers["Cache-Control"] == "private, max-age=31536000, immutable"
        assert app.test_client().get(src).status_code == 200  # no database, no cookie needed
    # the name is an HMAC of the content under the app's secret: the same bytes, another
    # secret, another name (nobody can compute a name from a file without the key)
    from webtest.stimuli import stimulus_names

    st = _st(app)
    digests = {sid: "x" for sid in stim}
    assert stimulus_names(stim, digests, "k1")[0] != stimulus_names(stim, digests, "k2")[0]
    assert set(st.stimulus_files) == {n["file"] for n in st.stimulus_urls.values()}
    # not listable, not guessable
    for path in ("/stimulus/", "/stimulus", f"/stimulus/{'0' * 32}.json", "/stimulus/..%2Fstudy.yaml"):
        assert c.get(path).status_code == 404, path
    assert c.get("/trial/1/stimulus/left").status_code == 404  # the old per-trial routes are gone


def test_a_stimulus_costs_no_database_statement(app):
    from sqlalchemy import event

    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    src, _ = stimulus_urls(p.show(1).get_data(as_text=True))["left"]
    seen = []
    engine = _st(app).db.engine
    listener = lambda *a: seen.append(a[2])  # noqa: E731
    event.listen(engine, "before_cursor_execute", listener)
    try:
        assert c.get(src).status_code == 200
        assert p.show(1).status_code == 200  # the trial page: one read, no write
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    assert len(seen) == 1 and seen[0].lstrip().upper().startswith("SELECT"), seen


@pytest.mark.parametrize("n", ["99999999999999999999999", str(2**63), str(2**31)])
def test_huge_trial_numbers_are_not_found(app, n):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    assert c.get(f"/trial/{n}").status_code == 404
    r = c.post(f"/trial/{n}", json={"answer": 1}, headers={"X-CSRFToken": p.token})
    assert r.status_code == 404 and r.get_json()["ok"] is False
    assert p.answer(1, 1).status_code == 200  # the participant is unaffected


def test_motion_audio_route(make_study, app_factory):
    from tests.webtest.helpers import BASE_STUDY

    stimuli = [dict(s, audio="sample:speech/LJ001-0001.wav") for s in BASE_STUDY["stimuli"]]
    app = app_factory(make_study(stimuli=stimuli))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    _, audio = stimulus_urls(p.show(1).get_data(as_text=True))["left"]
    assert audio.startswith("/stimulus/") and audio.endswith(".wav")
    r = c.get(audio)
    assert r.status_code == 200 and r.mimetype.startswith("audio/") and r.data[:4] == b"RIFF"
    r = c.get(audio, headers={"Range": "bytes=0-99"})
    assert r.status_code == 206 and len(r.data) == 100  # seekable media


def test_answer_outcomes(make_study, app_factory):
    # 0.2 s clips, one at a time: the server needs 0.9 * 0.4 s between showing and answering
    app = app_factory(make_study(playback={"must_end": True}))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    r = p.answer(1, 1)
    assert r.status_code == 409  # never shown
    p.show(1)
    r = p.answer(1, 1)
    assert r.status_code == 422 and r.get_json()["wait_s"] > 0 and "watch both clips" in r.get_json()["error"]
    time.sleep(0.4)
    assert p.answer(1, 9).status_code == 400  # not on the scale
    r = c.post("/trial/1", json={"client_time_s": 1}, headers={"X-CSRFToken": p.token})
    assert r.status_code == 400 and "missing 'answer'" in r.get_json()["error"]
    r = c.post("/trial/1", json={"answer": 1, "events": "nope"}, headers={"X-CSRFToken": p.token})
    assert r.status_code == 400 and "events" in r.get_json()["error"]
    assert p.answer(2, 1).status_code == 409  # out of order
    events = [{"side": "left", "type": "play", "t": 10, "pos": 0}, {"side": "left", "type": "ended", "t": 210, "pos": 0.2}]
    r = p.answer(1, -2, events=events, client_time_s=0.5)
    assert r.status_code == 200 and r.get_json() == {"ok": True, "status": "stored", "next": "/trial/2", "completed": False}
    r = p.answer(1, 3)  # again, different value: idempotent, first answer kept
    assert r.get_json()["status"] == "duplicate"
    with _st(app).db.session() as s:
        a = s.execute(select(Answer)).scalars().one()
        assert a.raw_answer == "-2" and json.loads(a.events_json) == events and a.client_time_s == 0.5
        assert a.response_time_s >= 0.36
    p.show(2)
    time.sleep(0.4)
    r = c.post("/trial/2", data={"csrf_token": p.token, "answer": "0"})  # plain form post
    assert r.status_code == 303 and r.location == "/done"
    assert p.answer(7, 1).status_code == 409  # completed: redirected to the end


def test_repeated_answer_after_completion_is_a_duplicate(app):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    assert p.complete(value=2) == [1, 2]
    # the response to the last answer was lost; the browser sends it again (or another value)
    for value in (2, -3):
        r = p.answer(2, value)
        assert r.status_code == 200
        assert r.get_json() == {"ok": True, "status": "duplicate", "next": "/done", "completed": True}
    r = c.post("/trial/2", data={"csrf_token": p.token, "answer": "2"})  # the same as a form post
    assert r.status_code == 303 and r.location == "/done"
    with _st(app).db.session() as s:
        assert sorted(s.execute(select(Answer.raw_answer)).scalars()) == ["2", "2"]  # first answers kept
    r = p.answer(3, 1)  # a trial that was never answered is not a duplicate
    assert r.status_code == 409 and r.get_json()["next"] == "/done"


def test_invalid_answer_is_rejected_even_for_an_answered_trial(make_study, app_factory):
    app = app_factory(make_study(scale="acr5"))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    assert p.answer(1, "2|5").get_json()["status"] == "stored"
    for body in ({"answer": "|"}, {"answer": "2|9"}, {"answer": "2|5", "client_time_s": "soon"},
                 {"answer": "2|5", "events": "nope"}):
        r = c.post("/trial/1", json=body, headers={"X-CSRFToken": p.token})
        assert r.status_code == 400 and r.get_json()["ok"] is False, body
    assert p.answer(1, "4|4").get_json()["status"] == "duplicate"
    p.show(2)
    assert p.answer(2, "3|3").get_json()["completed"] is True
    r = c.post("/trial/2", json={"answer": "|"}, headers={"X-CSRFToken": p.token})  # after the end, too
    assert r.status_code == 400 and "not a number on the acr5 scale" in r.get_json()["error"]


@pytest.mark.parametrize("body, fragment", [
    ('{"answer": 1, "client_time_s": NaN}', "NaN"),
    ('{"answer": 1, "client_time_s": 1e400}', "1e400"),
    ('{"answer": 1, "client_time_s": -Infinity}', "-Infinity"),
    ('{"answer": 1, "events": [{"side": "left", "type": "play", "t": Infinity}]}', "Infinity"),
    ('{"answer": 1, "events": "[{\\"t\\": NaN}]"}', "NaN"),
])
def test_non_finite_numbers_are_rejected(app, body, fragment):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    r = c.post("/trial/1", data=body, content_type="application/json", headers={"X-CSRFToken": p.token})
    assert r.status_code == 400 and fragment in r.get_json()["error"], r.get_json()
    with _st(app).db.session() as s:
        assert s.execute(select(Answer)).first() is None


@pytest.mark.parametrize("form, fragment", [
    ({"client_time_s": "nan"}, "client_time_s must be a finite number"),
    ({"client_time_s": "inf"}, "client_time_s must be a finite number"),
    ({"client_time_s": "1e400"}, "client_time_s must be a finite number"),
    ({"events": '[{"t": NaN}]'}, "events must be a JSON list"),
])
def test_non_finite_numbers_in_a_form_post_are_rejected(app, form, fragment):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    r = c.post("/trial/1", data={"csrf_token": p.token, "answer": "1", **form})
    assert r.status_code == 400 and fragment in r.get_data(as_text=True)
    r = c.post("/trial/1", data={"csrf_token": p.token, "answer": "1", "client_time_s": "2.5",
                                 "events": '[{"side": "left", "type": "play", "t": 1.5}]'})
    assert r.status_code == 303
    with _st(app).db.session() as s:
        a = s.execute(select(Answer)).scalar_one()
    assert a.client_time_s == 2.5 and json.loads(a.events_json) == [{"side": "left", "type": "play", "t": 1.5}]


@pytest.mark.parametrize("body, fragment", [
    ("{bad json", "invalid JSON"),
    ("", "invalid JSON"),
    ('[{"answer": 1}]', "must be a JSON object"),
    ('"1"', "must be a JSON object"),
])
def test_malformed_json_body_is_named(app, body, fragment):
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    p.show(1)
    r = c.post("/trial/1", data=body, content_type="application/json", headers={"X-CSRFToken": p.token})
    assert r.status_code == 400 and fragment in r.get_json()["error"] and "missing" not in r.get_json()["error"]


def test_completion_page_and_code(make_study, app_factory):
    app = app_factory(make_study(crowdsourcing={"completion_code": "DONE42"}))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    assert p.complete() == [1, 2]
    html = c.get("/done").get_data(as_text=True)
    assert "DONE42" in html and "Thank you" in html
    assert c.get("/trial").location == "/done" and c.get("/").location == "/done"
    with _st(app).db.session() as s:
        row = s.get(PRow, _pid(c, app))
        assert row.status == "completed" and s.get(Cell, row.cell_id).status == "done"


def test_quality_checks_flags_and_screen_out(make_study, app_factory):
    app = app_factory(make_study(quality={"attention": {"count": 1}}, exclusion={"max_attention_failures": 0,
                                                                                  "action": "screen_out"}))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    trials = _trials(app, _pid(c, app))
    att = next(t for t in trials if t.kind == "attention")
    for t in trials:
        p.show(t.position)
        if t.kind == "attention":
            html = c.get(f"/trial/{t.position}").get_data(as_text=True)
            label = "Much better" if att.expected == 3 else "Much worse"
            assert f"please answer “{label}”" in html
            wrong = 0
            r = p.answer(t.position, wrong)
            assert r.get_json()["next"] == "/stop"
            break
        assert p.answer(t.position, 1).status_code == 200
    assert "cannot continue" in c.get("/stop").get_data(as_text=True)
    with _st(app).db.session() as s:
        row = s.get(PRow, _pid(c, app))
        assert row.status == "screened_out" and row.exclusion_reason.startswith("attention_fail:1>0")
        assert s.get(Cell, row.cell_id).status == "free"  # the place goes to someone else
        flags = s.execute(select(Answer.flags).join(Trial, Trial.id == Answer.trial_id)
                          .where(Trial.kind == "attention")).scalar_one()
        assert flags == "check;check:attention;check_failed;attention_fail"


def test_expired_participant_sees_expired_page(make_study, app_factory):
    app = app_factory(make_study(design={"participants": 1}))
    c = app.test_client()
    Participant(c).to_trials({})
    pid = _pid(c, app)
    with _st(app).db.session() as s:  # someone else took the cell after it expired
        s.execute(update(Cell).values(participant_id="someone-else", generation=2))
        s.commit()
    assert c.get("/trial").location == "/stop"
    assert "session expired" in c.get("/stop").get_data(as_text=True)
    with _st(app).db.session() as s:
        assert s.get(PRow, pid).status == "expired"


def test_prolific_parameters_validated_and_carried(make_study, app_factory):
    app = app_factory(make_study(crowdsourcing={"platform": "prolific", "completion_code": "C0DE1",
                                                "screen_out_code": "SCR1"}))
    r = app.test_client().get("/?PROLIFIC_PID=bad")
    assert r.status_code == 400
    assert "PROLIFIC_PID, STUDY_ID, SESSION_ID" in r.get_data(as_text=True)
    c = app.test_client()
    p = Participant(c, PROLIFIC)
    assert 'value="5f1a2b3c4d5e6f7a8b9c0d1e"' in p.landing.get_data(as_text=True)
    assert c.post("/start", data={"csrf_token": p.token, "PROLIFIC_PID": "x"}).location == "/"  # tampered
    p.to_trials({"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "60aabbccddeeff0011223344",
                 "SESSION_ID": "61aabbccddeeff0011223344"})
    pid = _pid(c, app)
    with _st(app).db.session() as s:
        row = s.get(PRow, pid)
        assert (row.platform, row.ext_pid, row.ext_study) == ("prolific", "5f1a2b3c4d5e6f7a8b9c0d1e", "60aabbccddeeff0011223344")
    # the same Prolific submission from another browser resumes the same participant
    c2 = app.test_client()
    p2 = Participant(c2, PROLIFIC)
    p2.start({"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "60aabbccddeeff0011223344",
              "SESSION_ID": "61aabbccddeeff0011223344"})
    assert _pid(c2, app) == pid
    p.complete()
    html = c.get("/done").get_data(as_text=True)
    assert 'href="https://app.prolific.com/submissions/complete?cc=C0DE1"' in html
    # the participant is told before being taken back, with time to note the code
    assert 'http-equiv="refresh" content="15;url=https://app.prolific.com/submissions/complete?cc=C0DE1"' in html
    assert "You will be taken back to Prolific in 15 seconds" in html


def test_mturk_preview_and_submit_form(make_study, app_factory):
    app = app_factory(make_study(crowdsourcing={"platform": "mturk", "completion_code": "MT1"}))
    r = app.test_client().get("/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=3HIT")
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "Accept the HIT" in html and 'action="/start"' not in html
    assert app.test_client().get("/?workerId=w&assignmentId=a").status_code == 400
    c = app.test_client()
    p = Participant(c, MTURK)
    p.to_trials({"workerId": "A1B2C3D4E5F6G7", "assignmentId": "3ABCDEFGHIJKLMNOPQRST", "hitId": "3HITHITHITHITHIT",
                 "turkSubmitTo": "https://workersandbox.mturk.com"})
    p.complete()
    html = c.get("/done").get_data(as_text=True)
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="3ABCDEFGHIJKLMNOPQRST"' in html


def test_acr5_rates_each_side(make_study, app_factory):
    app = app_factory(make_study(scale="acr5"))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    html = p.show(1).get_data(as_text=True)
    assert 'name="answer_left"' in html and 'name="answer_right"' in html and "Excellent" in html
    assert p.answer(1, "2|5").status_code == 200
    t1 = _trials(app, _pid(c, app))[0]
    with _st(app).db.session() as s:
        a = s.execute(select(Answer)).scalars().one()
    assert a.raw_answer == "2|5" and a.score == (3.0 if t1.side_shown == "right" else -3.0)
    # exported as absolute ratings: one row per rated stimulus, system_b empty, score = rating
    from webtest.export import mos_summary, ratings_long

    df = ratings_long(_st(app).db)
    assert len(df) == 2 and set(df["system_b"]) == {""} and set(df["scale"]) == {"acr5"}
    left_system = t1.system_a if t1.side_shown == "left" else t1.system_b
    by_system = df.set_index("system_a")
    assert by_system.loc[left_system, "score"] == 2.0 and by_system.loc[left_system, "side_shown"] == "left"
    assert set(by_system["raw_answer"]) == {"2", "5"}
    assert set(mos_summary(df)["mos"]) == {2.0, 5.0}


def test_strings_override(make_study, app_factory):
    app = app_factory(make_study(strings={"trial.next": "Weiter", "app.lang": "de"}))
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    html = p.show(1).get_data(as_text=True)
    assert ">Weiter<" in html and '<html lang="de">' in html


def test_not_found_and_too_large(app):
    c = app.test_client()
    r = c.get("/nope")
    assert r.status_code == 404 and "does not exist" in r.get_data(as_text=True)
    p = Participant(c)
    r = c.post("/start", data={"csrf_token": p.token, "x": "y" * 100_000})
    assert r.status_code == 413


# -- admin -----------------------------------------------------------------------------------
def _login(c, password=ADMIN_PASSWORD):
    token = csrf(c.get("/admin/login").get_data(as_text=True))
    return c.post("/admin/login", data={"csrf_token": token, "password": password})


def test_admin_login_dashboard_exports_logout(make_study, app_factory):
    app = app_factory(make_study(quality={"gold": {"count": 1}}))
    for _ in range(2):
        p = Participant(app.test_client())
        p.to_trials({})
        p.complete(value=2)
    c = app.test_client()
    r = _login(c, "wrong")
    assert r.status_code == 401 and "Wrong password" in r.get_data(as_text=True)
    assert _login(c).location == "/admin/"
    html = c.get("/admin/").get_data(as_text=True)
    assert "Live CMOS per comparison" in html and "original" in html and "jitter" in html
    assert "completed: 2" in html
    csv = c.get("/admin/export/ratings.csv")
    assert csv.mimetype == "text/csv" and "attachment" in csv.headers["Content-Disposition"]
    df = pd.read_csv(io.StringIO(csv.get_data(as_text=True)), keep_default_na=False)
    assert tuple(df.columns) == RATINGS_COLUMNS and len(df) == 2 * 3
    assert set(df["raw_answer"].astype(str)) == {"2"} and set(df["scale"]) == {"ccr7"}
    main = df[~df["flags"].str.contains("check:")]
    assert set(main["score"]) <= {2.0, -2.0} and len(main) == 4
    js = c.get("/admin/export/ratings.json").get_json()
    assert len(js) == 6 and list(js[0]) == list(RATINGS_COLUMNS)
    parts = pd.read_csv(io.StringIO(c.get("/admin/export/participants.csv").get_data(as_text=True)))
    assert list(parts["status"]) == ["completed", "completed"]
    token = csrf(html)
    assert c.post("/admin/logout", data={"csrf_token": token}).location == "/admin/login"
    assert c.get("/admin/").status_code == 302


def test_dashboard_says_when_every_answer_is_from_an_excluded_participant(make_study, app_factory):
    app = app_factory(make_study(quality={"attention": {"count": 1}}, exclusion={"max_attention_failures": 0}))
    admin = app.test_client()
    _login(admin)
    assert "No answers yet." in admin.get("/admin/").get_data(as_text=True)
    p = Participant(app.test_client())
    p.to_trials({})
    assert p.complete(value=1) == [1, 2, 3]  # 1 is never the attention check's answer (+3 or -3)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "No answers yet." not in html
    assert "3 answers are stored, but all come from participants excluded by the declared rules (1 excluded)" in html
    assert "completed: 1" in html and "excluded by declared rules: 1" in html


def test_live_cmos_numbers(make_study, app_factory):
    from webtest.export import cmos_summary, ratings_long

    app = app_factory(make_study())
    for first, second in [(3, 1), (1, 2), (-1, 0), (2, 3)]:  # answers that do not cancel per participant
        p = Participant(app.test_client())
        p.to_trials({})
        for n, v in ((1, first), (2, second)):
            assert p.show(n).status_code == 200
            assert p.answer(n, v).status_code == 200
    df = ratings_long(_st(app).db)
    table = cmos_summary(df)
    row = table.iloc[0]
    scores = df["score"].to_numpy()
    assert row["n"] == 8 and row["participants"] == 4
    assert row["cmos"] == pytest.approx(scores.mean())
    from reports.pairwise import cmos_summary as report_cmos

    # the report's default interval for the same answers (cluster-robust over participants)
    report = report_cmos(scores, df["participant"].to_numpy(), n_boot=10)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((report["cl_low"], report["cl_high"]))
    assert row["ci_low"] < row["cmos"] < row["ci_high"]
    assert row["prefer_a"] + row["same"] + row["prefer_b"] == pytest.approx(1.0)


def test_dashboard_shows_an_undefined_interval_as_too_few_answers(make_study, app_factory):
    from webtest.export import cmos_summary, ratings_long

    app = app_factory(make_study())
    p = Participant(app.test_client())
    p.to_trials({})
    p.complete(value=2)  # one participant: no interval over participants can be given
    table = cmos_summary(ratings_long(_st(app).db))
    assert table["ci_low"].isna().all() and table["ci_high"].isna().all()  # NaN, not zero width
    admin = app.test_client()
    _login(admin)
    html = admin.get("/admin/").get_data(as_text=True)
    assert "n/a (too few answers)" in html
    assert "nan" not in html.lower()


def test_admin_disabled_without_hash(make_study, app_factory):
    app = app_factory(make_study(), admin_password_hash=None)
    c = app.test_client()
    assert c.get("/admin/login").status_code == 403
    assert c.get("/admin/").status_code == 403
    assert "disabled" in c.get("/admin/export/ratings.csv").get_data(as_text=True)


def test_admin_login_next_is_local_only(make_study, app_factory):
    app = app_factory(make_study())
    c = app.test_client()
    token = csrf(c.get("/admin/login").get_data(as_text=True))
    r = c.post("/admin/login?next=https://evil.example/", data={"csrf_token": token, "password": ADMIN_PASSWORD})
    assert r.location == "/admin/"
    c2 = app.test_client()
    assert c2.get("/admin/export/ratings.csv").location == "/admin/login?next=/admin/export/ratings.csv"
    token = csrf(c2.get("/admin/login").get_data(as_text=True))
    r = c2.post("/admin/login?next=/admin/export/ratings.csv", data={"csrf_token": token, "password": ADMIN_PASSWORD})
    assert r.location == "/admin/export/ratings.csv"


def test_whole_flow_on_each_database(make_study, app_factory, db_url):
    app = app_factory(make_study(quality={"repeat": {"count": 1, "tolerance": 0}}), db_url)
    p = Participant(app.test_client())
    p.to_trials({})
    assert p.complete(value=1) == [1, 2, 3]
    from webtest.export import ratings_long

    df = ratings_long(_st(app).db)
    assert len(df) == 3
    rep = df[df["flags"].str.contains("check:repeat")]
    assert len(rep) == 1
    # raw 1 on both sides-swapped showings gives opposite scores: inconsistent beyond tolerance 0
    assert "repeat_inconsistent" in rep["flags"].iloc[0]


def test_an_answer_costs_at_most_eight_statements_and_one_commit(make_study, app_factory, db_url):
    """Per answer (trial page, both stimuli, the answer) on SQLite and PostgreSQL, for every
    trial of a longer study: the cost does not grow with the trials answered (exclusion rules
    are updated incrementally)."""
    from sqlalchemy import event

    app = app_factory(make_study(training=[{"item": "walk", "systems": ["original", "jitter"]}],
                                 quality={"gold": {"count": 2}, "attention": {"count": 3}, "repeat": {"count": 2}},
                                 exclusion={"max_gold_failures": 5, "max_attention_failures": 5,
                                            "max_repeat_inconsistencies": 5, "min_median_response_s": 0}), db_url)
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    engine = _st(app).db.engine
    counts = {"statements": 0, "commits": 0}

    def statement(*_a):
        counts["statements"] += 1

    def commit(*_a):
        counts["commits"] += 1

    event.listen(engine, "before_cursor_execute", statement)
    event.listen(engine, "commit", commit)
    per_answer = []
    try:
        r = c.get("/trial")
        while "/trial/" in (r.location or ""):
            n = int(r.location.rsplit("/", 1)[1])
            before = dict(counts)
            page = p.show(n)
            for src, audio in stimulus_urls(page.get_data(as_text=True)).values():
                assert c.get(src).status_code == 200
            assert p.answer(n, 0).status_code == 200
            per_answer.append((counts["statements"] - before["statements"], counts["commits"] - before["commits"]))
            r = c.get("/trial")
    finally:
        event.remove(engine, "before_cursor_execute", statement)
        event.remove(engine, "commit", commit)
    assert len(per_answer) >= 8
    assert all(commits == 1 for _, commits in per_answer), per_answer
    assert max(st for st, _ in per_answer) <= 8, per_answer
    # no growth with the trials answered: a failed check re-reads the failures (+1); the last
    # answer also marks the participant completed and reads the response times once (+2); on
    # PostgreSQL an answer that needs no such read inserts and updates its cell in one
    # statement, the others in two (+1 more)
    merged = 0 if db_url.startswith("sqlite") else 1
    assert max(st for st, _ in per_answer[:-1]) <= per_answer[0][0] + 1 + merged, per_answer
    assert per_answer[-1][0] <= per_answer[0][0] + 2 + merged, per_answer


def test_participants_table_reads_as_people_expect(make_study, app_factory):
    app = app_factory(make_study(quality={"attention": {"count": 1}}, exclusion={"max_attention_failures": 0}))
    Participant(app.test_client()).start()  # stopped at the consent page: no cell
    p = Participant(app.test_client())
    p.to_trials({})
    for t in _trials(app, _pid(p.c, app)):  # the attention check gets another answer than it asks for
        p.show(t.position)
        assert p.answer(t.position, 0 if t.kind != "attention" else (1 if t.expected != 1 else 2)).status_code == 200
    c = app.test_client()
    assert _login(c).status_code == 302
    text = c.get("/admin/export/participants.csv").get_data(as_text=True)
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    assert len(df) == 2
    waiting, done = df.iloc[0], df.iloc[1]
    assert waiting["cell"] == "" and done["cell"].isdigit()  # whole numbers, empty when none
    assert waiting["completed_at"] == "" and waiting["excluded"] == ""
    for value in (waiting["created_at"], done["created_at"], done["completed_at"]):
        assert pd.Timestamp(value).tzname() == "UTC" and value.endswith("Z") and len(value) == 20
    assert done["excluded"] == "1 attention check failed (0 allowed)"
    html = c.get("/admin/").get_data(as_text=True)
    assert "1 attention check failed (0 allowed)" in html
    assert "nan" not in html and "&lt;NA&gt;" not in html and "attention_fail:" not in html


def test_csv_exports_cannot_run_as_spreadsheet_formulas(make_study, app_factory):
    from tests.webtest.helpers import BASE_STUDY

    evil = '=HYPERLINK("http://x")'
    stimuli = [dict(s, system=evil) if s["system"] == "jitter" else s for s in BASE_STUDY["stimuli"]]
    app = app_factory(make_study(stimuli=stimuli, pairs=[["original", evil]],
                                 demographics=[{"id": "note", "label": "Note"}]))
    p = Participant(app.test_client())
    p.to_trials({}, demographics={"note": "@SUM(1+1)"})
    p.complete(value=-2)
    c = app.test_client()
    assert _login(c).status_code == 302
    ratings = c.get("/admin/export/ratings.csv").get_data(as_text=True)
    df = pd.read_csv(io.StringIO(ratings))
    assert set(df["system_b"]) == {"'" + evil} and set(df["system_a"]) == {"original"}
    assert df["score"].abs().eq(2).all() and set(df["raw_answer"]) == {-2}  # numbers stay numbers
    assert "\n=" not in ratings and ",=" not in ratings and ',"=' not in ratings
    parts = pd.read_csv(io.StringIO(c.get("/admin/export/participants.csv").get_data(as_text=True)), dtype=str)
    assert parts["demographics"].iloc[0].startswith("{")  # JSON starts with "{": untouched
    # every cell that would start with = + - @ starts with ' instead
    for cell in pd.read_csv(io.StringIO(ratings), dtype=str).to_numpy().ravel():
        assert not str(cell).startswith(("=", "+", "@")), cell
    # the JSON export keeps the names as they are (JSON is not opened as a spreadsheet)
    assert {r["system_b"] for r in c.get("/admin/export/ratings.json").get_json()} == {evil}


def test_stimuli_answered_before_flask_keep_headers_and_revalidate(app):
    """The WSGI layer that answers stimuli (webtest.fastpath) sends the same bytes and security
    headers as the rest of the site, answers a matching If-None-Match with 304, HEAD without a
    body, and leaves anything else to Flask."""
    c = app.test_client()
    p = Participant(c)
    p.to_trials({})
    src, _ = stimulus_urls(p.show(1).get_data(as_text=True))["left"]
    r = c.get(src)
    assert r.status_code == 200 and r.headers["X-Content-Type-Options"] == "nosniff"
    assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
    assert int(r.headers["Content-Length"]) == len(r.data) and "Set-Cookie" not in r.headers
    etag = r.headers["ETag"]
    assert c.get(src, headers={"If-None-Match": etag}).status_code == 304
    assert c.get(src, headers={"If-None-Match": '"other"'}).status_code == 200
    h = c.head(src)
    assert h.status_code == 200 and h.data == b"" and h.headers["Content-Length"] == r.headers["Content-Length"]
    part = c.get(src, headers={"Range": "bytes=0-9"})  # to Flask's send_file
    assert part.status_code == 206 and part.data == r.data[:10]
    assert c.post(src).status_code in (400, 405)  # not a stimulus request: Flask answers
    # a page from Flask gets the security headers too, once each
    page = c.get("/trial/1")
    assert page.headers.getlist("X-Frame-Options") == ["DENY"]


def test_trial_event_is_kept_once_for_the_participants_own_trials(make_study, app_factory, participant):
    from sqlalchemy import select

    from webtest.tables import Event

    app = app_factory(make_study())
    p = participant(app.test_client())
    p.to_trials()
    post = lambda n, body: p.c.post(f"/trial/{n}/event", json=body, headers={"X-CSRFToken": p.token})  # noqa: E731
    assert post(1, {"type": "load_failed", "side": "left", "detail": "HTTP 404"}).status_code == 200
    assert post(1, {"type": "load_failed", "side": "left", "detail": "HTTP 404"}).status_code == 200  # kept once
    assert post(1, {"type": "boom", "side": "left"}).status_code == 400
    assert post(1, {"type": "load_failed", "side": "middle"}).status_code == 400
    assert post(99, {"type": "load_failed", "side": "left"}).status_code == 404  # no such trial of theirs
    other = participant(app.test_client())  # before the consent: has no trials
    assert other.c.post("/trial/1/event", json={"type": "no_webgl"}, headers={"X-CSRFToken": other.token}).status_code == 404
    with app.extensions["webtest"].db.session() as s:
        rows = [(e.position, e.type, e.side, e.detail) for e in s.execute(select(Event)).scalars()]
    assert rows == [(1, "load_failed", "left", "HTTP 404")]
    from webtest.export import participants_table

    problems = participants_table(app.extensions["webtest"].db, "mini").set_index("participant")["load_problems"]
    assert problems.to_dict() == {_participant_id(p.c): 1}


def _participant_id(client, study_id: str = "mini") -> str:
    with client.session_transaction() as sess:
        return sess[f"p:{study_id}"]
