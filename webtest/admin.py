"""The admin blueprint: login, dashboard (participants, cells, live CMOS), exports.

Login checks a werkzeug password hash from the server configuration
(``EVALKIT_ADMIN_PASSWORD_HASH``) or the study file (``admin.password_hash``); without one the
admin pages are disabled. The logged-in state lives in the signed session cookie.

Wrong passwords are rate-limited per client address: after ``login_max_failures`` of them within
``login_window_s`` seconds (:class:`webtest.config.WebtestConfig`), every login attempt from that
address gets HTTP 429 with ``Retry-After`` until the window has passed, without the password being
checked. The failures are rows in ``wt_login_failures``, so every gunicorn worker sees them.
"""

from __future__ import annotations

import functools
import io
import math
import time

from flask import Blueprint, Response, redirect, render_template, request, session, url_for
from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash

from webtest.state import StudyState, state
from webtest.design import balance_report
from webtest.export import cells_table, cmos_summary, mos_summary, participants_table, ratings_long
from webtest.tables import LoginFailure

bp = Blueprint("admin", __name__)


def _key() -> str:
    return f"admin:{state().study.id}"


def login_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        if state().admin_password_hash is None:
            return render_template("message.html", title=state().t("admin.title"),
                                   message=state().t("admin.disabled")), 403
        if session.get(_key()) is not True:
            return redirect(url_for(".login", next=request.path))
        return view(*args, **kwargs)
    return wrapped


def _client_address() -> str:
    return (request.remote_addr or "unknown")[:64]


def lockout_seconds(s: Session, st: StudyState, address: str, now: float) -> float:
    """Seconds until ``address`` may try a password again (0 when it may now)."""
    cfg = st.config
    recent = s.execute(
        select(LoginFailure.at).where(LoginFailure.study_id == st.study.id, LoginFailure.address == address,
                                      LoginFailure.at > now - cfg.login_window_s)
        .order_by(LoginFailure.at.desc()).limit(cfg.login_max_failures)).scalars().all()
    if len(recent) < cfg.login_max_failures:
        return 0.0
    return max(0.0, recent[-1] + cfg.login_window_s - now)


def _record_failure(s: Session, st: StudyState, address: str, now: float) -> None:
    s.execute(delete(LoginFailure).where(LoginFailure.study_id == st.study.id,
                                         LoginFailure.at <= now - st.config.login_window_s))
    s.add(LoginFailure(study_id=st.study.id, address=address, at=now))
    s.commit()


def _wait_text(seconds: float) -> str:
    return f"{math.ceil(seconds)} s" if seconds < 120 else f"{math.ceil(seconds / 60)} min"


@bp.route("/login", methods=["GET", "POST"])
def login():
    st = state()
    if st.admin_password_hash is None:
        return render_template("message.html", title=st.t("admin.title"), message=st.t("admin.disabled")), 403
    if request.method == "POST":
        address, now = _client_address(), time.time()
        with st.db.session() as s:
            wait = lockout_seconds(s, st, address, now)
        if wait > 0:
            resp = Response(render_template("admin/login.html", error=st.t("admin.locked", wait=_wait_text(wait))),
                            status=429)
            resp.headers["Retry-After"] = str(math.ceil(wait))
            return resp
        password = request.form.get("password", "")
        ok = bool(password) and check_password_hash(st.admin_password_hash, password)
        with st.db.session() as s:  # a new transaction: the hash check above takes a while
            if not ok:
                _record_failure(s, st, address, now)
                return render_template("admin/login.html", error=st.t("admin.bad_password")), 401
            s.execute(delete(LoginFailure).where(LoginFailure.study_id == st.study.id,
                                                 LoginFailure.address == address))
            s.commit()
        keep = {k: v for k, v in session.items() if k.startswith("p:")}
        session.clear()  # a fresh session on login (no fixation)
        session.update(keep)
        session.permanent = True
        session[_key()] = True
        nxt = request.args.get("next", "")
        # only local admin paths, never an absolute or scheme-relative URL
        if not (nxt.startswith(url_for(".dashboard")) and not nxt.startswith("//")):
            nxt = url_for(".dashboard")
        return redirect(nxt)
    return render_template("admin/login.html", error=None)


@bp.post("/logout")
def logout():
    session.pop(_key(), None)
    return redirect(url_for(".login"))


@bp.get("/")
@login_required
def dashboard():
    st = state()
    ratings = ratings_long(st.db, st.study.id)
    parts = participants_table(st.db, st.study.id)
    cells = cells_table(st.db, st.study.id)
    cmos = cmos_summary(ratings)
    mos = mos_summary(ratings)
    by_status = parts["status"].value_counts().to_dict() if not parts.empty else {}
    return render_template(
        "admin/dashboard.html", ratings=ratings, parts=parts.to_dict("records"), cells=cells.to_dict("records"),
        cmos=cmos.to_dict("records"), mos=mos.to_dict("records"), by_status=by_status, balance=balance_report(st.study),
        excluded=int((parts["excluded"] != "").sum()) if not parts.empty else 0,
        no_data=_why_nothing_analysed(ratings, st.t),
    )


def _why_nothing_analysed(ratings, t) -> str:
    """What the live summaries show when they are empty: no answers at all, or answers that
    cannot be analysed (every participant who gave them excluded, or check trials only)."""
    if ratings.empty:
        return t("admin.no_data")
    answers = len(ratings[["participant", "trial"]].drop_duplicates())
    excluded = ratings["flags"].map(lambda f: "excluded" in str(f).split(";"))
    participants = set(ratings["participant"])
    excluded_participants = set(ratings.loc[excluded, "participant"])
    if excluded_participants == participants:
        return t("admin.all_excluded", answers=answers, participants=len(participants))
    return t("admin.none_analysed", answers=answers)


def _download(text: str, name: str, mimetype: str) -> Response:
    resp = Response(text, mimetype=mimetype)
    resp.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/export/ratings.csv")
@login_required
def export_csv():
    st = state()
    buf = io.StringIO()
    ratings_long(st.db, st.study.id).to_csv(buf, index=False)
    return _download(buf.getvalue(), f"{st.study.id}-ratings.csv", "text/csv")


@bp.get("/export/ratings.json")
@login_required
def export_json():
    st = state()
    text = ratings_long(st.db, st.study.id).to_json(orient="records", indent=1)
    return _download(text, f"{st.study.id}-ratings.json", "application/json")


@bp.get("/export/participants.csv")
@login_required
def export_participants():
    st = state()
    buf = io.StringIO()
    participants_table(st.db, st.study.id).to_csv(buf, index=False)
    return _download(buf.getvalue(), f"{st.study.id}-participants.csv", "text/csv")

