"""The participant blueprint: landing → consent → demographics → setup → instructions → trials → end.

Identity is the participant id in Flask's signed session cookie; every query is scoped to that
id, so a participant can only read and answer their own trials (URLs carry positions, never
database ids). Each stage redirects to the participant's current stage, which is how a reload or
a reopened tab resumes at the first unanswered trial.

Cost per answer (the hot path): the trial page reads one statement and writes nothing (the time
the trial was first shown goes into the signed cookie, and reaches the database with the answer);
stimuli are files under content-addressed, unguessable names, served without the database
(:func:`webtest.stimuli.stimulus_names`); the answer is one transaction with one commit
(:func:`webtest.answers.store_answer`). A crash can lose only what no answer carried yet: the
activity time of page views since the last answer (a participant who only looks at pages for
longer than ``assignment.timeout_minutes`` may lose their place) -- never an acknowledged answer.
"""

from __future__ import annotations

import json
import logging
import math
import time
import uuid
from typing import Any, Callable

from flask import (Blueprint, abort, jsonify, redirect, render_template, request, send_file, session,
                   url_for)
from flask_wtf.csrf import generate_csrf
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalkit.errors import InputError
from webtest import setup
from webtest.answers import AnswerOutcome, parse_submission, store_answer, strict_json
from webtest.assignment import claim_cell, has_free_cell, holds_cell, touch
from webtest.crowd import completion_url, mturk_submit_url, parse_params, screen_out_url
from webtest.fastpath import STIMULUS_MAX_AGE
from webtest.state import state
from webtest.study import SETUP_STAGES, DemographicField
from webtest.tables import Event, Participant
from webtest.trials import (at_trials, begin_trials, current_position, is_answered, participant_state, stim_left,
                            stim_right, stop_participant, trials_with_state)

bp = Blueprint("participant", __name__)
log = logging.getLogger("webtest")

STOPPED = ("declined", "screened_out", "expired", "full")
MAX_TEXT = 200
#: Largest trial position a URL may name: positions are INTEGER columns (32-bit on PostgreSQL).
MAX_POSITION = 2**31 - 1


def _key() -> str:
    return f"p:{state().study.id}"


def _served_key() -> str:
    return f"sv:{state().study.id}"


def _pid() -> str | None:
    pid = session.get(_key())
    return pid if isinstance(pid, str) else None


def _load(s: Session) -> Participant | None:
    pid = _pid()
    if pid is None:
        return None
    p = s.get(Participant, pid)
    if p is None or p.study_id != state().study.id:
        return None
    return p


def _where(s: Session, p: Participant) -> str:
    """URL of the participant's current stage."""
    if p.status == "completed":
        return url_for(".done")
    if p.status in STOPPED:
        return url_for(".stop")
    if (p.stage in ("demographics", "instructions", "trials") or p.stage in SETUP_STAGES) and not holds_cell(s, p):
        p.status, p.stage = "expired", "stopped"
        s.commit()
        return url_for(".stop")
    return _stage_url(p.stage)


def _stage_url(stage: str) -> str:
    """URL of the page of a participant stage (the landing page for one that has none)."""
    if stage in SETUP_STAGES:
        return url_for(".setup_stage", name=stage)
    return {"consent": url_for(".consent"), "demographics": url_for(".demographics"),
            "instructions": url_for(".instructions"), "trials": url_for(".trial_current")}.get(stage, url_for(".landing"))


def _current_stage_url() -> str:
    """URL of the current participant's stage (the landing page for nobody)."""
    with state().db.session() as s:
        p = _load(s)
        return url_for(".landing") if p is None else _where(s, p)


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


def _at_stage(s, stage: str) -> bool | None:
    """Whether the current participant is at ``stage`` (active, holding their cell after the
    consent), in one statement; ``None`` when there is no participant."""
    pid = _pid()
    row = participant_state(s, pid, state().study.id) if pid else None
    if row is None:
        return None
    return row.stage == stage and row.status == "active" and (stage == "consent" or row.holder == row.id)


def _stage_page(stage: str, render: Callable[[], Any], submit: Callable[[Session, Participant], Any]):
    """One stage before the trials: only a participant at ``stage`` gets it (others are sent to
    theirs); GET renders it, POST runs ``submit`` (which changes the participant and may return a
    response of its own, e.g. a form with errors), records activity, commits and moves on."""
    st = state()
    if request.method == "GET":  # one read, outside a transaction
        with st.db.reader.connect() as conn:
            here = _at_stage(conn, stage)
        if here is None:
            return redirect(url_for(".landing"))
        return render() if here else redirect(_current_stage_url())
    with st.db.session() as s:
        # the participant is loaded to be changed: check the stage on it (one read fewer)
        p = _load(s)
        here = None if p is None else (p.stage == stage and p.status == "active"
                                       and (stage == "consent" or holds_cell(s, p)))
        if here is None:
            return redirect(url_for(".landing"))
        if not here:
            s.rollback()
            return redirect(_current_stage_url())
        response = submit(s, p)
        if response is not None:
            return response
        touch(s, p, time.time())
        s.commit()
        if p.status != "active":
            return redirect(_where(s, p))
        return redirect(url_for(".trial_page", n=1) if p.stage == "trials" else _stage_url(p.stage))


@bp.url_value_preprocessor
def _check_position(_endpoint, values) -> None:
    """A trial number no trial can have is a 404 (not an overflow in the database driver).

    Checked here rather than with ``int(max=...)`` in the rules: a converter that rejects a value
    makes werkzeug answer 405 for the other method of the same path instead of 404.
    """
    if values and isinstance(values.get("n"), int) and values["n"] > MAX_POSITION:
        abort(404)


@bp.get("/healthz")
def healthz():
    return jsonify(ok=True, study=state().study.id)


# -- landing and start -------------------------------------------------------------------------
@bp.get("/")
def landing():
    st = state()
    if _pid() is not None:  # someone who started: to their stage
        with st.db.session() as s:
            p = _load(s)
            if p is not None:
                return redirect(_where(s, p))
    with st.db.reader.connect() as conn:
        full = not has_free_cell(conn, st.study.id, time.time(), st.study.assignment_timeout_s)
    crowd = st.study.crowdsourcing
    ids, bad = parse_params(crowd.platform, request.args)
    status = 200
    error = None
    if ids is None:
        error = st.t("landing.need_platform_ids", platform=crowd.platform.capitalize(), keys=", ".join(bad))
        status = 400
    elif full:
        error = st.t("stop.full")
    if ids is not None and not ids.as_params():  # the same page for everybody (no platform ids)
        return _static_page("landing.html", error=error, ids=ids, full=full, preview=ids.preview), status
    return render_template("landing.html", error=error, ids=ids, full=full,
                           preview=bool(ids and ids.preview)), status


def _resumable(s: Session, ids) -> Participant | None:
    """The participant of the same platform submission, found from another browser.

    Only the full submission identifies it: the worker id (Prolific PID, MTurk workerId) together
    with that submission's session (Prolific SESSION_ID, MTurk assignmentId) and study/HIT ids,
    which the platform shows to that worker only. A worker id alone is never enough (worker ids
    are visible to others, e.g. in shared screenshots or other researchers' data).
    """
    if not (ids.pid and ids.session):
        return None
    return s.execute(select(Participant).where(
        Participant.study_id == state().study.id, Participant.platform == ids.platform,
        Participant.ext_pid == ids.pid, Participant.ext_session == ids.session,
        Participant.ext_study == ids.study, Participant.ext_hit == ids.hit)).scalars().first()


@bp.post("/start")
def start():
    st = state()
    crowd = st.study.crowdsourcing
    ids, bad = parse_params(crowd.platform, request.form)
    if ids is None or ids.preview:
        return redirect(url_for(".landing"))
    now = time.time()
    with st.db.session() as s:
        p = _load(s) or _resumable(s, ids)
        if p is None:
            p = Participant(
                id=uuid.uuid4().hex, study_id=st.study.id, created_at=now, last_seen_at=now, stage="consent",
                status="active", platform=ids.platform, ext_pid=ids.pid, ext_study=ids.study,
                ext_session=ids.session, ext_hit=ids.hit, ext_submit_to=ids.submit_to,
                user_agent=(request.user_agent.string or "")[:255], demographics_json="{}", exclusion_reason="")
            s.add(p)
            s.commit()
        session.permanent = True
        session[_key()] = p.id
        return redirect(_where(s, p))


# -- consent, demographics, instructions ------------------------------------------------------
@bp.route("/consent", methods=["GET", "POST"])
def consent():
    """GET: the consent page. POST: agreeing claims a design cell and creates the participant's
    trials in one transaction (Core statements, no ORM objects); declining ends the study."""
    st, pid = state(), _pid()
    if request.method == "POST" and pid is not None:
        with st.db.engine.connect() as conn:
            row = participant_state(conn, pid, st.study.id)
            if row is not None and row.stage == "consent" and row.status == "active":
                now = time.time()
                if request.form.get("choice") != "agree":
                    stop_participant(conn, pid, "declined", now)
                    return redirect(url_for(".stop"))
                stage = st.study.stage_after("consent")
                if claim_cell(conn, st.study, st.stimuli, pid, now, updates={"consent_at": now, "stage": stage}) is None:
                    stop_participant(conn, pid, "full", now)
                    return redirect(url_for(".stop"))
                return redirect(_stage_url(stage))  # committed with the claim, in one transaction
            conn.rollback()
    # GET, and anyone not at the consent (sent to their stage)
    return _stage_page("consent", lambda: _static_page("consent.html"), lambda s, p: None)


def validate_demographics(fields: tuple[DemographicField, ...], form, t) -> tuple[dict[str, Any], dict[str, str]]:
    """Values and per-field error messages of a submitted demographics form."""
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for f in fields:
        raw = (form.get(f.id) or "").strip()
        if not raw:
            if f.required:
                errors[f.id] = t("app.required")
            continue
        if len(raw) > MAX_TEXT:
            errors[f.id] = t("app.too_long", max=MAX_TEXT)
        elif f.type == "number":
            try:
                v = float(raw)
            except ValueError:
                v = None
            if v is not None and not math.isfinite(v):  # "inf", "nan", "1e400": not storable as JSON
                v = None
            lo = f.min if f.min is not None else float("-inf")
            hi = f.max if f.max is not None else float("inf")
            if v is None or not (lo <= v <= hi):
                errors[f.id] = t("app.number", min=f"{lo:g}", max=f"{hi:g}")
            else:
                values[f.id] = int(v) if v.is_integer() else v
        elif f.type == "choice":
            if raw not in f.options:
                errors[f.id] = t("app.choose")
            else:
                values[f.id] = raw
        else:
            values[f.id] = raw
    return values, errors


@bp.route("/demographics", methods=["GET", "POST"])
def demographics():
    fields = state().study.demographics

    def submit(s: Session, p: Participant):
        values, errors = validate_demographics(fields, request.form, state().t)
        if errors:
            return render_template("demographics.html", fields=fields, values=request.form, errors=errors), 400
        p.demographics_json = json.dumps(values, ensure_ascii=False)
        p.stage = state().study.stage_after("demographics")
        return None

    return _stage_page("demographics",
                       lambda: render_template("demographics.html", fields=fields, values={}, errors={}), submit)


@bp.route("/instructions", methods=["GET", "POST"])
def instructions():
    st = state()
    pid = _pid()
    if request.method == "POST" and pid is not None:  # the usual case in two statements, no ORM
        with st.db.engine.connect() as conn:
            if begin_trials(conn, pid, st.study.id, time.time()):
                return redirect(url_for(".trial_page", n=1))
    # (anyone not at the instructions is sent to their stage by _stage_page)

    def submit(_s: Session, p: Participant):
        p.stage = "trials"
        return None

    return _stage_page("instructions",
                       lambda: _static_page("instructions.html", n_keys=len(state().study.scale.points)), submit)


# -- setup stages (device check, volume calibration, headphone screening) -----------------------
@bp.route("/setup/<name>", methods=["GET", "POST"])
def setup_stage(name: str):
    """A setup stage of the study (:mod:`webtest.setup`): GET shows it, POST records its outcome
    in ``wt_setup_results`` and moves on, asks again (a window too small) or applies the
    exclusion rules (a failed check)."""
    st = state()
    stage = st.study.setup_stage(name)
    if stage is None:
        abort(404)
    pages = {"device": (_device_page, _device_submit), "volume": (_volume_page, _volume_submit),
             "headphones": (_headphones_page, _headphones_submit)}
    render, submit = pages[name]
    return _stage_page(name, lambda: render(stage), lambda s, p: submit(s, p, stage))


def _device_page(stage, problem: str | None = None, status: int = 200):
    if problem is None:
        return _static_page("setup_device.html", stage=stage, problem=None)
    return render_template("setup_device.html", stage=stage, problem=problem), status


def _device_submit(s: Session, p: Participant, stage):
    st, now = state(), time.time()
    measured = setup.parse_measures(request.form)
    verdict = setup.device_verdict(stage, measured)
    setup.record_result(s, st.study.id, p.id, "device", verdict == "pass", now, detail={**measured, "verdict": verdict})
    if verdict == "pass":
        p.stage = st.study.stage_after("device")
    elif verdict == "touch_only":
        setup.fail_stage(s, st.study, p, "device", "touch_only")
    else:  # the window can be enlarged (or JavaScript turned on): say so and ask again
        touch(s, p, now)
        s.commit()
        key = "setup.device.no_js" if verdict == "unmeasured" else "setup.device.too_small"
        return _device_page(stage, st.t(key, width=measured.get("width", 0), height=measured.get("height", 0),
                                        min_width=stage.min_width, min_height=stage.min_height))
    return None


def _volume_page(stage):
    return _static_page("setup_volume.html", stage=stage,
                        sound=url_for(".stimulus", name=state().setup_urls["calibration"]))


def _volume_submit(s: Session, p: Participant, stage):
    st = state()
    heard = request.form.get("choice") == "comfortable"
    setup.record_result(s, st.study.id, p.id, "volume", heard, time.time(),
                        detail={"choice": "comfortable" if heard else "cannot_hear"})
    if heard:
        p.stage = st.study.stage_after("volume")
    else:
        setup.fail_stage(s, st.study, p, "volume", "cannot_hear")
    return None


def _headphones_page(stage):
    """The screening page: per participant (the trials' order is theirs), rendered per request."""
    st = state()
    trials = setup.headphone_trials(st.study.id, _pid() or "", stage)
    sounds = [url_for(".stimulus", name=st.setup_urls[f"order-{k}"]) for k in trials]
    return render_template("setup_headphones.html", stage=stage, sounds=sounds)


def _headphones_submit(s: Session, p: Participant, stage):
    st = state()
    trials = setup.headphone_trials(st.study.id, p.id, stage)
    answers = []
    for i in range(len(trials)):
        raw = request.form.get(f"t{i + 1}", "")
        answers.append(int(raw) if raw in ("1", "2", "3") else None)
    correct = setup.score_headphones(trials, answers)
    passed = correct >= stage.pass_min
    setup.record_result(s, st.study.id, p.id, "headphones", passed, time.time(), score=correct,
                        detail={"answers": answers, "quiet": [setup.quiet_position(k) for k in trials],
                                "pass": stage.pass_min})
    if passed:
        p.stage = st.study.stage_after("headphones")
    else:
        setup.fail_stage(s, st.study, p, "headphones", f"{correct}/{len(trials)}<{stage.pass_min}")
    return None


# -- trials ------------------------------------------------------------------------------------
def _trials_or_redirect(conn):
    """The current participant's trials when they are at the trials; otherwise a redirect."""
    pid = _pid()
    if pid is None:
        return None, redirect(url_for(".landing"))
    person, trials = trials_with_state(conn, pid, state().study.id)
    if not at_trials(person):
        conn.rollback()
        return None, redirect(_current_stage_url())
    return trials, None


@bp.get("/trial")
def trial_current():
    with state().db.reader.connect() as conn:
        trials, response = _trials_or_redirect(conn)
    if response is not None:
        return response
    pos = current_position(trials)
    return redirect(url_for(".done") if pos is None else url_for(".trial_page", n=pos))


def scale_points(scale, t) -> list[tuple[int, str]]:
    """``(value, label)`` of the study's scale, labels from the strings table when present."""
    return [(v, t(f"scale.{scale.name}.{v}") if f"scale.{scale.name}.{v}" in state().strings else lab)
            for v, lab in scale.points]


def _mark_shown(n: int) -> None:
    """Remember in the signed cookie when trial ``n`` was first shown (the start of its playing
    time): no database write per page view; the answer carries it to the database."""
    key = _served_key()
    served = session.get(key)
    if not (isinstance(served, list) and len(served) == 2 and served[0] == n):
        session[key] = [n, round(time.time(), 3)]


def _served_at(n: int) -> float | None:
    served = session.get(_served_key())
    if isinstance(served, list) and len(served) == 2 and served[0] == n and isinstance(served[1], (int, float)):
        return float(served[1])
    return None


def _side(st, stimulus_id: str, side: str) -> dict:
    """What the trial page needs of the stimulus shown on ``side``: kind, URLs, duration and,
    for motion with ``playback.video_fallback``, the URL of its video in that side's colour."""
    stim, names = st.stimuli[stimulus_id], st.stimulus_urls[stimulus_id]
    audio, video = names.get("audio"), names.get(f"video_{side}")
    return {"kind": stim.kind, "src": url_for(".stimulus", name=names["file"]),
            "audio": url_for(".stimulus", name=audio) if audio else "", "duration": stim.duration_s,
            "video": url_for(".stimulus", name=video) if video else ""}


@bp.get("/trial/<int:n>")
def trial_page(n: int):
    st = state()
    with st.db.reader.connect() as conn:
        trials, response = _trials_or_redirect(conn)
    if response is not None:
        return response
    current = current_position(trials)
    if current is None:
        return redirect(url_for(".done"))
    if n != current:
        return redirect(url_for(".trial_page", n=current))
    trial = trials[n - 1]
    _mark_shown(n)
    training = tuple(t.position for t in trials if t.kind == "training")
    left, right = stim_left(trial), stim_right(trial)
    key = ("trial", n, len(trials), training, trial.kind, left, right, trial.expected, trial.required_s)
    return _cached(key, lambda: _render_trial(st, trial, n, len(trials), training, left, right))


#: Stands for the participant's CSRF token in a cached page (see :func:`_cached`).
CSRF_SLOT = "evalkit-csrf-slot-7c1e0f4b"
#: Pages kept rendered per worker process (each a few kB).
MAX_CACHED_PAGES = 4096


def _cached(key: tuple, render: Callable[[], str]) -> str:
    """The page ``render()`` makes, rendered once per ``key`` and process, with the current
    participant's CSRF token in place of :data:`CSRF_SLOT`.

    Only for pages that depend on nothing but ``key`` and the study (fixed while the app runs),
    never on who asks; ``render`` must output the token as :data:`CSRF_SLOT` (pass
    ``csrf_token=_slot`` to the template). Rendering templates was most of these pages' cost.
    """
    pages = state().pages
    page = pages.get(key)
    if page is None:
        page = render()
        if len(pages) >= MAX_CACHED_PAGES:
            pages.clear()
        pages[key] = page
    return page.replace(CSRF_SLOT, generate_csrf())


def _slot() -> str:
    return CSRF_SLOT


def _static_page(template: str, **context) -> str:
    """A template that is the same for every participant (see :func:`_cached`)."""
    return _cached((template, *sorted(context.items())),
                   lambda: render_template(template, csrf_token=_slot, **context))


def _render_trial(st, trial, n: int, total: int, training: tuple[int, ...], left: str, right: str) -> str:
    """The trial page for ``n`` with :data:`CSRF_SLOT` where the participant's CSRF token goes.

    The page depends only on the arguments and the study (whose strings, scale and playback are
    fixed while the app runs), never on who asks, so :func:`trial_page` renders each distinct
    page once per process and fills in the token: the template is most of a trial page's cost.
    """
    is_training = trial.kind == "training"
    points = scale_points(st.study.scale, st.t)
    attention = st.t("trial.attention", label=dict(points)[int(trial.expected)]) if trial.kind == "attention" else None
    return render_template(
        "trial.html", trial=trial, n=n, total=total, is_training=is_training, done_before=n - 1,
        number=training.index(n) + 1 if is_training else n - len(training),
        n_shown=len(training) if is_training else total - len(training),
        points=points, attention=attention,
        sides={"left": _side(st, left, "left"), "right": _side(st, right, "right")},
        question=st.study.question or st.t(f"scale.question.{st.study.scale.name}"),
        playback=st.study.playback, required_s=trial.required_s, csrf_token=_slot,
    )


@bp.get("/stimulus/<name>")
def stimulus(name: str):
    """A stimulus file by its content-addressed name: no database, cacheable for good."""
    found = state().stimulus_files.get(name)
    if found is None:
        abort(404)
    path, mimetype = found
    resp = send_file(path, mimetype=mimetype, conditional=True, max_age=STIMULUS_MAX_AGE)
    resp.headers["Cache-Control"] = f"private, max-age={STIMULUS_MAX_AGE}, immutable"
    return resp


def _answer_body() -> tuple[Any, str | None]:
    """The submitted fields (JSON object or form) and an error message when the body is unusable."""
    if not request.is_json:
        return request.form, None
    try:
        data = strict_json(request.get_data(cache=True))
    except ValueError as exc:
        return None, f"invalid JSON ({exc}); send an object like {{\"answer\": 1}}"
    if not isinstance(data, dict):
        return None, f"the body must be a JSON object like {{\"answer\": 1}}, got {type(data).__name__}"
    return data, None


def _submission(data):
    """The validated answer of a request body, or an error message."""
    raw = data.get("answer")
    if raw is None and "answer_left" in data:
        raw = f"{data.get('answer_left')}|{data.get('answer_right')}"
    if raw is None:
        return None, "missing 'answer'"
    try:  # validated first: an invalid body is a 400 whatever the state of the trial
        return parse_submission(raw, state().study.scale, client_time_s=data.get("client_time_s"),
                                events=data.get("events")), None
    except InputError as exc:
        return None, str(exc)


def _not_at_trials(answered: bool, as_json: bool):
    """Answer to a POST from a participant who is no longer at the trials."""
    url = _current_stage_url()
    if answered:  # a retry of an acknowledged answer (e.g. of the last trial) after the end
        if as_json:
            with state().db.session() as s:
                p = _load(s)
                completed = p is not None and p.status == "completed"
            return jsonify(ok=True, status="duplicate", next=url, completed=completed)
        return redirect(url, code=303)
    if as_json:
        return jsonify(ok=False, error=state().t("stop.title"), next=url), 409
    return redirect(url)


@bp.post("/trial/<int:n>")
def answer(n: int):
    st = state()
    as_json = _wants_json()

    def fail(code: int, message: str, **extra):
        if as_json:
            return jsonify(ok=False, error=message, **extra), code
        return render_template("message.html", title=st.t("app.error_title"), message=message), code

    data, problem = _answer_body()
    if problem is not None:
        return fail(400, problem)
    pid = _pid()
    with st.db.engine.connect() as conn:
        person, rows = trials_with_state(conn, pid, st.study.id, n) if pid else (None, [])
        if person is None:  # no trial around n: who is asking, and are they at the trials?
            person = participant_state(conn, pid, st.study.id) if pid else None
        if person is None:
            return fail(403, st.t("app.csrf"))
        sub, problem = _submission(data)
        if problem is not None:
            return fail(400, problem)
        if not at_trials(person):
            answered = is_answered(conn, pid, n)
            conn.rollback()
            return _not_at_trials(answered, as_json)
        outcome = store_answer(conn, person, n, sub, st.study.scale, st.study.exclusion, time.time(),
                               served_at=_served_at(n), trials={r.position: r for r in rows})
    return _acknowledge(outcome, fail, as_json)


#: Problems a trial page reports (see static/player.js) and the sides they may name.
EVENT_TYPES = ("load_failed", "no_webgl")
EVENT_SIDES = ("left", "right", "")


@bp.post("/trial/<int:n>/event")
def trial_event(n: int):
    """A problem the trial page of position ``n`` cannot get past: a stimulus that did not load
    after a retry (``load_failed``, with its side and the browser's reason) or no WebGL without
    fallback videos (``no_webgl``). Logged on the ``webtest`` logger and kept once per
    participant, position, type and side in ``wt_events`` (shown on the admin page)."""
    st = state()
    data = request.get_json(silent=True) if request.is_json else None
    if not isinstance(data, dict) or data.get("type") not in EVENT_TYPES or data.get("side", "") not in EVENT_SIDES:
        return jsonify(ok=False, error=f"send {{\"type\": one of {', '.join(EVENT_TYPES)}, \"side\": left|right}}"), 400
    pid = _pid()
    with st.db.engine.connect() as conn:
        person, rows = trials_with_state(conn, pid, st.study.id, n) if pid else (None, [])
        if person is None or not any(r.position == n for r in rows):  # only the participant's own trials
            conn.rollback()
            return jsonify(ok=False, error=st.t("app.not_found")), 404
        detail = str(data.get("detail") or "")[:MAX_TEXT]
        log.warning("study %s participant %s trial %d: %s %s %s", st.study.id, pid, n, data["type"],
                    data.get("side", ""), detail)
        try:
            conn.execute(Event.__table__.insert().values(
                study_id=st.study.id, participant_id=pid, position=n, type=data["type"], side=data.get("side", ""),
                detail=detail, at=time.time()))
            conn.commit()
        except IntegrityError:  # already reported from an earlier load of the page
            conn.rollback()
    return jsonify(ok=True)


def _acknowledge(outcome: AnswerOutcome, fail, as_json: bool):
    st = state()
    if outcome.status == "not_found":
        return fail(404, st.t("app.not_found"))
    if outcome.status == "too_fast":
        return fail(422, st.t("trial.too_fast"), wait_s=round(outcome.wait_s, 3))
    if outcome.status in ("not_shown", "out_of_order"):
        return fail(409, st.t("app.not_found"), next=url_for(".trial_page", n=outcome.next_position))
    if outcome.status == "expired":
        return _not_at_trials(False, as_json)
    if outcome.screened_out:
        nxt = url_for(".stop")
    elif outcome.next_position is None:
        nxt = url_for(".done")
    else:
        nxt = url_for(".trial_page", n=outcome.next_position)
    if as_json:
        return jsonify(ok=True, status=outcome.status, next=nxt, completed=outcome.completed)
    return redirect(nxt, code=303)


# -- end -----------------------------------------------------------------------------------------
def _end_page(status_ok: Callable[[str], bool], render: Callable[[Participant], Any]):
    """A final page: shown to a participant whose status fits, others go to their stage."""
    with state().db.session() as s:
        p = _load(s)
        if p is None:
            return redirect(url_for(".landing"))
        if not status_ok(p.status):
            return redirect(_where(s, p))
        return render(p)


@bp.get("/done")
def done():
    crowd = state().study.crowdsourcing
    return _end_page(lambda status: status == "completed", lambda p: render_template(
        "done.html", code=crowd.completion_code, redirect_url=completion_url(crowd),
        mturk_url=mturk_submit_url(p.ext_submit_to) if p.platform == "mturk" else None,
        assignment_id=p.ext_session))


@bp.get("/stop")
def stop():
    st = state()
    keys = {"declined": "consent.declined", "screened_out": "stop.screened_out", "expired": "stop.expired",
            "full": "stop.full"}

    def message(p: Participant) -> str:
        if p.status == "screened_out":  # a failed setup check says which
            for code in setup.SETUP_CODES:
                if code in (p.exclusion_reason or ""):
                    return st.t(f"setup.{code.split('_')[0]}.stop")
        return st.t(keys[p.status])

    return _end_page(lambda status: status in STOPPED, lambda p: render_template(
        "message.html", title=st.t("stop.title"), message=message(p),
        link=screen_out_url(st.study.crowdsourcing), link_text=st.t("done.redirect", platform="Prolific")))
