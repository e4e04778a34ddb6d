"""The admin blueprint: login, dashboard (participants, cells, live CMOS), exports.

Login checks a werkzeug password hash from the server configuration
(``EVALKIT_ADMIN_PASSWORD_HASH``) or the study file (``admin.password_hash``); without one the
admin pages are disabled.

Sessions are server-side: the signed cookie holds a random token, ``wt_admin_sessions`` its
SHA-256 and expiry (``admin_session_hours``, default 8). Logging out deletes the row, so a
copy of the cookie taken before is worthless; "log out everywhere" deletes every admin session of
the study.

Guessing is limited without letting anyone lock the owner out (OWASP's "device cookie" scheme):

- a browser that has logged in before carries a signed device cookie; its wrong passwords count
  against that device only, so failures from anybody else never refuse it;
- any other client counts against its address (``login_max_failures`` per ``login_window_s``),
  and all of them together against a shared budget of ten times that (guessing from many
  addresses);
- an attempt is counted *before* its password is checked, in a transaction that first takes the
  study row's write lock (SQLite's single writer, PostgreSQL's row lock), so concurrent attempts
  cannot all pass the check at once; a correct password removes its own count.

A refused attempt gets HTTP 429 with ``Retry-After`` and its password is not checked. Limits end
by themselves (the window slides); nothing refuses a correct password from a known browser.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import secrets
import time

from flask import Blueprint, Response, current_app, redirect, render_template, request, session, url_for
from itsdangerous import BadSignature, URLSafeSerializer
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash

from webtest.design import balance_report
from webtest.export import cells_table, cmos_summary, csv_text, mos_summary, participants_table, ratings_long
from webtest.state import StudyState, state
from webtest.tables import AdminSession, LoginFailure, StudyRecord

bp = Blueprint("admin", __name__)

DEVICE_COOKIE = "evalkit_admin_device"
DEVICE_PREFIX = "device:"
#: Clients without a device cookie share this many times ``login_max_failures`` per window.
SHARED_BUDGET = 10
#: ``next=`` targets after login: local admin paths of plain characters only.
_SAFE_NEXT = re.compile(r"/admin/[A-Za-z0-9._~/-]*")


def _key() -> str:
    return f"admin:{state().study.id}"


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _logged_in(st: StudyState) -> bool:
    token = session.get(_key())
    if not isinstance(token, str):
        return False
    with st.db.session() as s:
        expires = s.execute(select(AdminSession.expires_at).where(
            AdminSession.token_hash == _token_hash(token), AdminSession.study_id == st.study.id)).scalar_one_or_none()
    if expires is None or expires <= time.time():
        session.pop(_key(), None)
        return False
    return True


def login_required(view):
    @functools.wraps(view)
    def wrapped(*args, **kwargs):
        st = state()
        if st.admin_password_hash is None:
            return render_template("message.html", title=st.t("admin.title"), message=st.t("admin.disabled")), 403
        if not _logged_in(st):
            return redirect(url_for(".login", next=request.path))
        return view(*args, **kwargs)
    return wrapped


def _client_address() -> str:
    return (request.remote_addr or "unknown")[:64]


def _devices() -> URLSafeSerializer:
    return URLSafeSerializer(current_app.config["SECRET_KEY"], salt="evalkit-admin-device")


def _device_id(study_id: str) -> str | None:
    """The id in a valid device cookie of this study (a browser that logged in before)."""
    raw = request.cookies.get(DEVICE_COOKIE)
    if not raw:
        return None
    try:
        data = _devices().loads(raw)
    except BadSignature:
        return None
    if not isinstance(data, dict) or data.get("s") != study_id or not isinstance(data.get("d"), str):
        return None
    return data["d"][:32]


def _wait(times: list[float], limit: int, window: float, now: float) -> float:
    """Seconds until fewer than ``limit`` of ``times`` (newest first) are inside the window."""
    if len(times) < limit:
        return 0.0
    return max(0.0, times[limit - 1] + window - now)


def lockout_seconds(s: Session, st: StudyState, key: str, now: float) -> float:
    """Seconds until the client counted as ``key`` (``device:<id>`` or an address) may try a
    password again (0 when it may now)."""
    cfg = st.config
    since = now - cfg.login_window_s
    mine = s.execute(select(LoginFailure.at).where(
        LoginFailure.study_id == st.study.id, LoginFailure.address == key, LoginFailure.at > since)
        .order_by(LoginFailure.at.desc()).limit(cfg.login_max_failures)).scalars().all()
    wait = _wait(list(mine), cfg.login_max_failures, cfg.login_window_s, now)
    if not key.startswith(DEVICE_PREFIX):
        shared = cfg.login_max_failures * SHARED_BUDGET
        everyone = s.execute(select(LoginFailure.at).where(
            LoginFailure.study_id == st.study.id, ~LoginFailure.address.startswith(DEVICE_PREFIX),
            LoginFailure.at > since).order_by(LoginFailure.at.desc()).limit(shared)).scalars().all()
        wait = max(wait, _wait(list(everyone), shared, cfg.login_window_s, now))
    return wait


def reserve_attempt(s: Session, st: StudyState, key: str, now: float) -> tuple[float, int | None]:
    """Count a login attempt before its password is checked, atomically.

    Takes the study row's write lock first, so concurrent attempts are counted one after
    another. Returns ``(wait, None)`` when the client must wait (nothing recorded), else
    ``(0, id)`` of the failure row recorded for this attempt (delete it if the password is right).
    """
    s.execute(update(StudyRecord).where(StudyRecord.id == st.study.id).values(title=StudyRecord.title))
    s.execute(delete(LoginFailure).where(LoginFailure.study_id == st.study.id,
                                         LoginFailure.at <= now - st.config.login_window_s))
    wait = lockout_seconds(s, st, key, now)
    if wait > 0:
        s.commit()
        return wait, None
    row = LoginFailure(study_id=st.study.id, address=key, at=now)
    s.add(row)
    s.commit()
    return 0.0, row.id


def _wait_text(seconds: float) -> str:
    return f"{math.ceil(seconds)} s" if seconds < 120 else f"{math.ceil(seconds / 60)} min"


def safe_next(target: str) -> str:
    """Where to go after login: ``target`` if it is a local admin path of plain characters (no
    scheme, host, ``//``, backslash, CR/LF or other control characters), else the dashboard."""
    if _SAFE_NEXT.fullmatch(target or "") and "//" not in target:
        return target
    return url_for(".dashboard")


def _start_session(s: Session, st: StudyState, now: float) -> str:
    token = secrets.token_urlsafe(32)
    s.execute(delete(AdminSession).where(AdminSession.study_id == st.study.id, AdminSession.expires_at <= now))
    s.add(AdminSession(token_hash=_token_hash(token), study_id=st.study.id, created_at=now,
                       expires_at=now + st.config.admin_session_hours * 3600.0))
    return token


def _logged_in_response(st: StudyState, token: str, device: str | None) -> Response:
    keep = {k: v for k, v in session.items() if k.startswith(("p:", "sv:"))}
    session.clear()  # a fresh session on login (no fixation)
    session.update(keep)
    session.permanent = True
    session[_key()] = token
    resp = redirect(safe_next(request.args.get("next", "")))
    if device is None:  # this browser knows the password: from now on it has a budget of its own
        value = _devices().dumps({"s": st.study.id, "d": secrets.token_hex(16)})
        resp.set_cookie(DEVICE_COOKIE, value, max_age=365 * 24 * 3600, path=url_for(".login"), httponly=True,
                        samesite="Strict", secure=st.config.secure_cookies)
    return resp


@bp.route("/login", methods=["GET", "POST"])
def login():
    st = state()
    if st.admin_password_hash is None:
        return render_template("message.html", title=st.t("admin.title"), message=st.t("admin.disabled")), 403
    if request.method == "GET":
        return render_template("admin/login.html", error=None)
    now = time.time()
    device = _device_id(st.study.id)
    key = f"{DEVICE_PREFIX}{device}" if device else _client_address()
    with st.db.session() as s:
        wait, attempt = reserve_attempt(s, st, key, now)
    if attempt is None:
        resp = Response(render_template("admin/login.html", error=st.t("admin.locked", wait=_wait_text(wait))),
                        status=429)
        resp.headers["Retry-After"] = str(math.ceil(wait))
        return resp
    password = request.form.get("password", "")
    if not (password and check_password_hash(st.admin_password_hash, password)):
        return render_template("admin/login.html", error=st.t("admin.bad_password")), 401
    with st.db.session() as s:  # right: this attempt was no failure
        s.execute(delete(LoginFailure).where(LoginFailure.id == attempt))
        token = _start_session(s, st, now)
        s.commit()
    return _logged_in_response(st, token, device)


@bp.post("/logout")
def logout():
    st = state()
    token = session.pop(_key(), None)
    if isinstance(token, str):
        with st.db.session() as s:
            s.execute(delete(AdminSession).where(AdminSession.token_hash == _token_hash(token)))
            s.commit()
    return redirect(url_for(".login"))


@bp.post("/logout-everywhere")
@login_required
def logout_everywhere():
    """End every admin session of this study (all browsers, including this one)."""
    st = state()
    with st.db.session() as s:
        s.execute(delete(AdminSession).where(AdminSession.study_id == st.study.id))
        s.commit()
    session.pop(_key(), None)
    return redirect(url_for(".login"))


def active_sessions(s: Session, study_id: str, now: float) -> int:
    """Admin sessions of the study that have not ended."""
    return int(s.execute(select(func.count()).select_from(AdminSession).where(
        AdminSession.study_id == study_id, AdminSession.expires_at > now)).scalar_one())


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
    with st.db.session() as s:
        sessions = active_sessions(s, st.study.id, time.time())
    records = parts.astype(object).where(parts.notna(), None).to_dict("records")  # no cell: None, not <NA>
    return render_template(
        "admin/dashboard.html", ratings=ratings, parts=records, cells=cells.to_dict("records"), sessions=sessions,
        cmos=cmos.to_dict("records"), mos=mos.to_dict("records"), by_status=by_status, balance=balance_report(st.study),
        excluded=int((parts["excluded"] != "").sum()) if not parts.empty else 0,
        no_data=_why_nothing_analysed(ratings, st.t), interval=lambda lo, hi: format_interval(lo, hi, st.t),
    )


def format_interval(low: float, high: float, t) -> str:
    """``[low, high]`` to two decimals, or the study's "n/a (too few answers)" when the interval
    is undefined (NaN bounds): no ``nan`` reaches the page."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return t("admin.no_interval")
    return f"[{low:.2f}, {high:.2f}]"


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
    return _download(csv_text(ratings_long(st.db, st.study.id)), f"{st.study.id}-ratings.csv", "text/csv")


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
    return _download(csv_text(participants_table(st.db, st.study.id)), f"{st.study.id}-participants.csv", "text/csv")

