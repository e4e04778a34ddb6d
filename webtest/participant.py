"""The participant blueprint: landing → consent → demographics → instructions → trials → end.

Identity is the participant id in Flask's signed session cookie; every query is scoped to that
id, so a participant can only read and answer their own trials (URLs carry positions, never
database ids). Each stage redirects to the participant's current stage, which is how a reload or
a reopened tab resumes at the first unanswered trial.
"""

from __future__ import annotations

import json
import math
import time
import uuid
from typing import Any

from flask import (Blueprint, abort, jsonify, redirect, render_template, request, send_file, session,
                   url_for)
from sqlalchemy import select
from sqlalchemy.orm import Session

from evalkit.errors import InputError
from webtest.answers import first_unanswered, is_answered, mark_served, parse_submission, store_answer, strict_json
from webtest.app import state
from webtest.assignment import claim_cell, has_free_cell, holds_cell, touch
from webtest.crowd import (completion_url, mturk_submit_url, parse_params, screen_out_url)
from webtest.models import Participant, Trial
from webtest.study import DemographicField

bp = Blueprint("participant", __name__)

STOPPED = ("declined", "screened_out", "expired", "full")
MAX_TEXT = 200
#: Largest trial position a URL may name: positions are INTEGER columns (32-bit on PostgreSQL).
MAX_POSITION = 2**31 - 1


def _key() -> str:
    return f"p:{state().study.id}"


def _load(s: Session) -> Participant | None:
    pid = session.get(_key())
    if not isinstance(pid, str):
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
    if p.stage in ("demographics", "instructions", "trials") and not holds_cell(s, p):
        p.status, p.stage = "expired", "stopped"
        s.commit()
        return url_for(".stop")
    return {"consent": url_for(".consent"), "demographics": url_for(".demographics"),
            "instructions": url_for(".instructions"), "trials": url_for(".trial_current")}.get(p.stage, url_for(".landing"))


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


def _stage_guard(s: Session, stage: str):
    """The participant if they are at ``stage``; otherwise a redirect response."""
    p = _load(s)
    if p is None:
        return None, redirect(url_for(".landing"))
    if p.stage != stage or p.status != "active" or (stage != "consent" and not holds_cell(s, p)):
        return None, redirect(_where(s, p))
    return p, None


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
    with st.db.session() as s:
        p = _load(s)
        if p is not None:
            return redirect(_where(s, p))
        full = not has_free_cell(s, st.study.id, time.time(), st.study.assignment_timeout_s)
    crowd = st.study.crowdsourcing
    ids, bad = parse_params(crowd.platform, request.args)
    status = 200
    error = None
    if ids is None:
        error = st.t("landing.need_platform_ids", platform=crowd.platform.capitalize(), keys=", ".join(bad))
        status = 400
    elif full:
        error = st.t("stop.full")
    return render_template("landing.html", error=error, ids=ids, full=full,
                           preview=bool(ids and ids.preview)), status


@bp.post("/start")
def start():
    st = state()
    crowd = st.study.crowdsourcing
    ids, bad = parse_params(crowd.platform, request.form)
    if ids is None or ids.preview:
        return redirect(url_for(".landing"))
    now = time.time()
    with st.db.session() as s:
        p = _load(s)
        if p is None and ids.pid and ids.session:  # same platform submission again: resume it
            p = s.execute(select(Participant).where(
                Participant.study_id == st.study.id, Participant.ext_pid == ids.pid,
                Participant.ext_session == ids.session)).scalars().first()
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
    st = state()
    with st.db.session() as s:
        p, response = _stage_guard(s, "consent")
        if response is not None:
            return response
        if request.method == "GET":
            return render_template("consent.html")
        now = time.time()
        if request.form.get("choice") != "agree":
            p.status, p.stage = "declined", "stopped"
            s.commit()
            return redirect(url_for(".stop"))
        claim = claim_cell(s, st.study, st.stimuli, p, now)
        if claim is None:
            p = s.get(Participant, p.id)
            p.status, p.stage = "full", "stopped"
            s.commit()
            return redirect(url_for(".stop"))
        p = s.get(Participant, p.id)
        p.consent_at = now
        p.stage = "demographics" if st.study.demographics else "instructions"
        s.commit()
        return redirect(_where(s, p))


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
    st = state()
    with st.db.session() as s:
        p, response = _stage_guard(s, "demographics")
        if response is not None:
            return response
        if request.method == "GET":
            return render_template("demographics.html", fields=st.study.demographics, values={}, errors={})
        values, errors = validate_demographics(st.study.demographics, request.form, st.t)
        if errors:
            return render_template("demographics.html", fields=st.study.demographics, values=request.form,
                                   errors=errors), 400
        p.demographics_json = json.dumps(values, ensure_ascii=False)
        p.stage = "instructions"
        touch(s, p, time.time())
        s.commit()
        return redirect(_where(s, p))


@bp.route("/instructions", methods=["GET", "POST"])
def instructions():
    st = state()
    with st.db.session() as s:
        p, response = _stage_guard(s, "instructions")
        if response is not None:
            return response
        if request.method == "GET":
            return render_template("instructions.html", n_keys=len(st.study.scale.points))
        p.stage = "trials"
        touch(s, p, time.time())
        s.commit()
        return redirect(_where(s, p))


# -- trials ------------------------------------------------------------------------------------
@bp.get("/trial")
def trial_current():
    st = state()
    with st.db.session() as s:
        p, response = _stage_guard(s, "trials")
        if response is not None:
            return response
        pos = first_unanswered(s, p.id)
        if pos is None:
            return redirect(url_for(".done"))
        return redirect(url_for(".trial_page", n=pos))


def _own_trial(s: Session, p: Participant, n: int) -> Trial:
    t = s.execute(select(Trial).where(Trial.participant_id == p.id, Trial.position == n)).scalar_one_or_none()
    if t is None:
        abort(404)
    return t


def scale_points(scale, t) -> list[tuple[int, str]]:
    """``(value, label)`` of the study's scale, labels from the strings table when present."""
    return [(v, t(f"scale.{scale.name}.{v}") if f"scale.{scale.name}.{v}" in state().strings else lab)
            for v, lab in scale.points]


@bp.get("/trial/<int:n>")
def trial_page(n: int):
    st = state()
    with st.db.session() as s:
        p, response = _stage_guard(s, "trials")
        if response is not None:
            return response
        current = first_unanswered(s, p.id)
        if current is None:
            return redirect(url_for(".done"))
        if n != current:
            return redirect(url_for(".trial_page", n=current))
        trial = _own_trial(s, p, n)
        now = time.time()
        mark_served(s, trial, now)
        touch(s, p, now)
        s.commit()
        trials = s.execute(select(Trial.position, Trial.kind).where(Trial.participant_id == p.id)
                           .order_by(Trial.position)).all()
        total = len(trials)
        training = [pos for pos, kind in trials if kind == "training"]
        is_training = trial.kind == "training"
        number = training.index(n) + 1 if is_training else n - len(training)
        n_shown = len(training) if is_training else total - len(training)
        points = scale_points(st.study.scale, st.t)
        attention = None
        if trial.kind == "attention":
            label = dict(points)[int(trial.expected)]
            attention = st.t("trial.attention", label=label)
        sides = {}
        for side in ("left", "right"):
            stim = st.stimuli[trial.stim_left if side == "left" else trial.stim_right]
            sides[side] = {
                "kind": stim.kind,
                "src": url_for(".stimulus", n=n, side=side),
                "audio": url_for(".stimulus_audio", n=n, side=side) if stim.audio else "",
                "duration": stim.duration_s,
            }
        return render_template(
            "trial.html", trial=trial, n=n, number=number, n_shown=n_shown, total=total, is_training=is_training,
            done_before=n - 1, points=points, attention=attention, sides=sides,
            question=st.study.question or st.t(f"scale.question.{st.study.scale.name}"),
            playback=st.study.playback, required_s=trial.required_s,
        )


@bp.get("/trial/<int:n>/stimulus/<side>")
def stimulus(n: int, side: str):
    return _send_stimulus(n, side, audio=False)


@bp.get("/trial/<int:n>/audio/<side>")
def stimulus_audio(n: int, side: str):
    return _send_stimulus(n, side, audio=True)


def _send_stimulus(n: int, side: str, audio: bool):
    if side not in ("left", "right"):
        abort(404)
    st = state()
    with st.db.session() as s:
        p = _load(s)
        if p is None or p.status not in ("active", "completed"):
            abort(404)
        trial = _own_trial(s, p, n)
        current = first_unanswered(s, p.id)
        if current is not None and n > current:
            abort(404)  # no peeking ahead
        stim = st.stimuli[trial.stim_left if side == "left" else trial.stim_right]
    if audio:
        if stim.audio is None:
            abort(404)
        resp = send_file(stim.audio, conditional=True, max_age=3600)
    else:
        resp = send_file(stim.path, mimetype=stim.mimetype, conditional=True, max_age=3600)
    resp.headers["Cache-Control"] = "private, max-age=3600"
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
    with st.db.session() as s:
        p = _load(s)
        if p is None:
            return fail(403, st.t("app.csrf"))
        raw = data.get("answer")
        if raw is None and "answer_left" in data:
            raw = f"{data.get('answer_left')}|{data.get('answer_right')}"
        if raw is None:
            return fail(400, "missing 'answer'")
        try:  # validated first: an invalid body is a 400 whatever the state of the trial
            sub = parse_submission(raw, st.study.scale, client_time_s=data.get("client_time_s"),
                                   events=data.get("events"))
        except InputError as exc:
            return fail(400, str(exc))
        if p.status != "active" or p.stage != "trials" or not holds_cell(s, p):
            answered = is_answered(s, p.id, n)
            url = _where(s, p)
            if answered:  # a retry of an acknowledged answer (e.g. of the last trial) after the end
                if as_json:
                    return jsonify(ok=True, status="duplicate", next=url, completed=p.status == "completed")
                return redirect(url, code=303)
            if as_json:
                return jsonify(ok=False, error=st.t("stop.title"), next=url), 409
            return redirect(url)
        outcome = store_answer(s, p, n, sub, st.study.scale, st.study.exclusion, time.time())
        if outcome.status == "not_found":
            return fail(404, st.t("app.not_found"))
        if outcome.status == "too_fast":
            return fail(422, st.t("trial.too_fast"), wait_s=round(outcome.wait_s, 3))
        if outcome.status in ("not_shown", "out_of_order"):
            return fail(409, st.t("app.not_found"), next=url_for(".trial_page", n=outcome.next_position))
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
@bp.get("/done")
def done():
    st = state()
    with st.db.session() as s:
        p = _load(s)
        if p is None:
            return redirect(url_for(".landing"))
        if p.status != "completed":
            return redirect(_where(s, p))
        crowd = st.study.crowdsourcing
        return render_template("done.html", code=crowd.completion_code, redirect_url=completion_url(crowd),
                               mturk_url=mturk_submit_url(p.ext_submit_to) if p.platform == "mturk" else None,
                               assignment_id=p.ext_session)


@bp.get("/stop")
def stop():
    st = state()
    with st.db.session() as s:
        p = _load(s)
        if p is None:
            return redirect(url_for(".landing"))
        if p.status not in STOPPED:
            return redirect(_where(s, p))
        key = {"declined": "consent.declined", "screened_out": "stop.screened_out", "expired": "stop.expired",
               "full": "stop.full"}[p.status]
        return render_template("message.html", title=st.t("stop.title"), message=st.t(key),
                               link=screen_out_url(st.study.crowdsourcing),
                               link_text=st.t("done.redirect", platform="Prolific"))
