"""The Flask application factory and the per-app study state."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import nh3
from flask import Flask, current_app, jsonify, render_template, request
from flask_wtf.csrf import CSRFError, CSRFProtect
from markupsafe import Markup
from markdown_it import MarkdownIt

from evalkit.errors import ConfigError
from webtest.config import HASH_FIX, WebtestConfig, cache_dir, ensure_secret_key, is_password_hash
from webtest.db import Database, default_url, ensure_cells, ensure_stimulus_files, init_schema
from webtest.design import balance_report, build_cells, cells_to_json, design_hash
from webtest.stimuli import PreparedStimulus, prepare_stimuli, stimulus_digest
from webtest.strings import merged, translate
from webtest.study import Study, load_study


@dataclass(frozen=True)
class PreparedStudy:
    """A validated study with its stimuli precomputed and its design built.

    Attributes:
        study: the validated study file.
        stimuli: stimulus id -> prepared stimulus (positions JSON or media, duration in seconds).
        cells_json: one JSON trial list per design cell.
        design_hash: fingerprint of the design (changes when the design changes).
        balance: counts of condition-sides over cells (see :func:`webtest.design.balance_report`).
    """

    study: Study
    stimuli: dict[str, PreparedStimulus]
    cells_json: list[str]
    design_hash: str
    balance: dict


def prepare_study(study_dir: str | Path, progress: bool = False) -> PreparedStudy:
    """Validate ``study.yaml``, precompute motion-stimulus JSON into ``<study>/.webtest/`` and
    build the design cells (nothing is written to a database).

    Raises:
        evalkit.errors.ConfigError: the study file is invalid (message names key path and fix).
        evalkit.errors.FileFormatError: a stimulus file cannot be read.
    """
    study = load_study(study_dir)
    stimuli = prepare_stimuli(study, cache_dir(study.root) / "stimuli", progress=progress)
    cells = build_cells(study)
    return PreparedStudy(study, stimuli, cells_to_json(cells), design_hash(cells), balance_report(study, cells))


@dataclass(frozen=True)
class StudyState:
    """What the blueprints need, stored in ``app.extensions["webtest"]`` (no module globals)."""

    prepared: PreparedStudy
    db: Database
    strings: dict[str, str]
    admin_password_hash: str | None
    config: WebtestConfig

    @property
    def study(self) -> Study:
        return self.prepared.study

    @property
    def stimuli(self) -> dict[str, PreparedStimulus]:
        return self.prepared.stimuli

    def t(self, key: str, **values) -> str:
        return translate(self.strings, key, **values)


def state() -> StudyState:
    """The current app's :class:`StudyState`."""
    return current_app.extensions["webtest"]


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


def render_markdown(source: str) -> Markup:
    """Markdown from the study file as safe HTML: raw HTML disabled, then sanitised by nh3."""
    return Markup(nh3.clean(_markdown().render(source or "")))


def create_app(study_dir: str | Path | None = None, config: WebtestConfig | None = None, **overrides) -> Flask:
    """Build the Flask app serving one study.

    Args:
        study_dir: the study folder (or give ``config``; ``EVALKIT_STUDY`` is the fallback).
        config: a full :class:`WebtestConfig`; ``overrides`` replace some of its fields.

    On creation the study is validated and prepared, the database schema created if missing and
    the design cells stored on first load.
    """
    if config is None:
        config = WebtestConfig.from_env(study_dir, **overrides)
    elif overrides:
        from dataclasses import replace

        config = replace(config, **overrides)
    if config.admin_password_hash is not None and not is_password_hash(config.admin_password_hash):
        raise ConfigError(f"the admin password hash (EVALKIT_ADMIN_PASSWORD_HASH or admin_password_hash) "
                          f"is not a password hash; fix: {HASH_FIX}")
    prepared = prepare_study(config.study_dir)
    study = prepared.study
    db = Database(config.database_url or default_url(study.root))
    init_schema(db)
    ensure_cells(db, study.id, study.title, study.scale.name, prepared.cells_json, prepared.design_hash)
    ensure_stimulus_files(db, study.id, {st.id: stimulus_digest(st, study) for st in study.stimuli})

    app = Flask(__name__, instance_path=str(cache_dir(study.root).resolve()))
    if config.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        n = config.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=0, x_port=0, x_prefix=0)
    app.config.update(
        SECRET_KEY=config.secret_key or ensure_secret_key(study.root),
        MAX_CONTENT_LENGTH=config.max_content_length,
        MAX_FORM_MEMORY_SIZE=config.max_content_length,
        SESSION_COOKIE_NAME="evalkit_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=config.secure_cookies,
        PERMANENT_SESSION_LIFETIME=timedelta(days=config.session_days),
        WTF_CSRF_TIME_LIMIT=None,  # the token lives as long as the signed session
        WTF_CSRF_SSL_STRICT=config.secure_cookies,
        DEBUG=False,
        TESTING=config.testing,
        JSON_SORT_KEYS=False,
    )
    app.debug = False
    strings = merged(study.strings)
    app.extensions["webtest"] = StudyState(
        prepared=prepared, db=db, strings=strings,
        admin_password_hash=config.admin_password_hash or study.admin_password_hash, config=config,
    )
    CSRFProtect(app)

    from webtest.admin import bp as admin_bp
    from webtest.participant import bp as participant_bp

    app.register_blueprint(participant_bp)
    app.register_blueprint(admin_bp, url_prefix="/admin")

    @app.context_processor
    def _inject():
        st = state()
        return {"t": st.t, "markdown": render_markdown, "study": st.study}

    @app.after_request
    def _headers(resp):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; media-src 'self'; style-src 'self'; "
            "script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
            "form-action 'self' https:")
        return resp

    def _error(code: int, key: str):
        msg = state().t(key)
        if request.is_json or request.accept_mimetypes.best == "application/json":
            return jsonify(ok=False, error=msg), code
        return render_template("message.html", title=state().t("app.error_title"), message=msg), code

    app.register_error_handler(CSRFError, lambda e: _error(400, "app.csrf"))
    app.register_error_handler(404, lambda e: _error(404, "app.not_found"))
    app.register_error_handler(405, lambda e: _error(405, "app.not_found"))
    app.register_error_handler(413, lambda e: _error(413, "app.too_large"))
    app.register_error_handler(500, lambda e: _error(500, "app.server_error"))

    return app
