"""The Flask application factory: validate and prepare the study, then build the app."""

from __future__ import annotations

import functools
import sys
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import nh3
from flask import Flask, jsonify, render_template, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError, CSRFProtect
from markupsafe import Markup
from markdown_it import MarkdownIt

from evalkit.errors import ConfigError
from webtest.config import HASH_FIX, WebtestConfig, cache_dir, ensure_secret_key, is_password_hash
from webtest.db import Database, default_url, ensure_cells, ensure_stimulus_files, init_schema
from webtest.design import balance_report, build_cells, cells_to_json, design_hash
from webtest.fastpath import STIMULUS_MAX_AGE, WebtestWSGI
from webtest.state import EXTENSION, PreparedStudy, StudyState, state
from webtest.setup import write_sounds
from webtest.stimuli import prepare_stimuli, served_names, stimulus_digest, stimulus_names
from webtest.strings import merged
from webtest.study import load_study

__all__ = ["create_app", "prepare_study", "PreparedStudy", "StudyState", "render_markdown"]


def prepare_study(study_dir: str | Path, progress: bool = False) -> PreparedStudy:
    """Validate ``study.yaml``, precompute motion-stimulus JSON into ``<study>/.webtest/`` (and,
    with ``playback.video_fallback``, render each motion stimulus's fallback MP4 there), write
    the setup stages' sounds and build the design cells (nothing is written to a database).

    Args:
        progress: show a progress bar on stderr while stimuli are prepared.

    Raises:
        evalkit.errors.ConfigError: the study file is invalid (message names key path and fix).
        evalkit.errors.FileFormatError: a stimulus file cannot be read.
        webtest.render.RendererUnavailable: fallback videos must be rendered and chromium
            cannot be started.
    """
    study = load_study(study_dir)
    stimuli = prepare_stimuli(study, cache_dir(study.root) / "stimuli", progress=progress)
    if study.playback.video_fallback:  # renders with headless chromium: loaded only when asked for
        from webtest.fallback import prepare_fallback_videos

        stimuli = prepare_fallback_videos(study, stimuli, cache_dir(study.root) / "stimuli", progress=progress)
    cells = build_cells(study)
    sounds = write_sounds(study, cache_dir(study.root) / "setup")
    return PreparedStudy(study, stimuli, cells_to_json(cells), design_hash(cells), balance_report(study, cells),
                         setup_sounds=sounds)


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})


@functools.lru_cache(maxsize=256)
def render_markdown(source: str) -> Markup:
    """Markdown from the study file as safe HTML: raw HTML disabled, then sanitised by nh3
    (remembered: the same few texts are shown on every participant's pages)."""
    return Markup(nh3.clean(_markdown().render(source or "")))


def _resolve_config(study_dir, config: WebtestConfig | None, overrides: dict) -> WebtestConfig:
    if config is None:
        config = WebtestConfig.from_env(study_dir, **overrides)
    elif overrides:
        config = replace(config, **overrides)
    if config.admin_password_hash is not None and not is_password_hash(config.admin_password_hash):
        raise ConfigError(f"the admin password hash (EVALKIT_ADMIN_PASSWORD_HASH or admin_password_hash) "
                          f"is not a password hash; fix: {HASH_FIX}")
    return config


def _open_database(config: WebtestConfig, prepared: PreparedStudy, progress: bool) -> tuple[Database, dict[str, str]]:
    """Create the schema and the design cells if missing; record the stimulus fingerprints.

    Returns the database and stimulus id -> fingerprint.
    """
    study = prepared.study
    db = Database(config.database_url or default_url(study.root), stats_dir=config.sql_stats_dir,
                  stats_key=_endpoint)
    init_schema(db)
    ensure_cells(db, study.id, study.title, study.scale.name, prepared.cells_json, prepared.design_hash)
    if progress:
        print(f"fingerprinting {len(study.stimuli)} stimuli ...", file=sys.stderr, flush=True)
    digests = {st.id: stimulus_digest(st, study) for st in study.stimuli}
    ensure_stimulus_files(db, study.id, digests)
    return db, digests


def _endpoint() -> str:
    """The Flask endpoint being served ('' outside a request): the key of SQL statistics."""
    from flask import has_request_context

    return (request.endpoint or "") if has_request_context() else ""


def _flask_config(config: WebtestConfig, study_root: Path) -> dict:
    return dict(
        SECRET_KEY=config.secret_key or ensure_secret_key(study_root),
        MAX_CONTENT_LENGTH=config.max_content_length,
        MAX_FORM_MEMORY_SIZE=config.max_content_length,
        SESSION_COOKIE_NAME="evalkit_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=config.secure_cookies,
        PERMANENT_SESSION_LIFETIME=timedelta(days=config.session_days),
        # the cookie is re-sent when it changes, not on every response (stimuli need no cookie)
        SESSION_REFRESH_EACH_REQUEST=False,
        WTF_CSRF_TIME_LIMIT=None,  # the token lives as long as the signed session
        WTF_CSRF_SSL_STRICT=config.secure_cookies,
        DEBUG=False,
        TESTING=config.testing,
        JSON_SORT_KEYS=False,
    )


def create_app(study_dir: str | Path | None = None, config: WebtestConfig | None = None, progress: bool = False,
               **overrides) -> Flask:
    """Build the Flask app serving one study.

    Args:
        study_dir: the study folder (or give ``config``; ``EVALKIT_STUDY`` is the fallback).
        config: a full :class:`WebtestConfig`; ``overrides`` replace some of its fields.
        progress: report the preparation of stimuli on stderr (slow on first run).

    On creation the study is validated and prepared, the database schema created if missing and
    the design cells stored on first load.
    """
    config = _resolve_config(study_dir, config, overrides)
    prepared = prepare_study(config.study_dir, progress=progress)
    study = prepared.study
    db, digests = _open_database(config, prepared, progress)

    app = Flask(__name__, instance_path=str(cache_dir(study.root).resolve()))
    if config.trusted_proxies:
        from werkzeug.middleware.proxy_fix import ProxyFix

        n = config.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=0, x_port=0, x_prefix=0)
    app.config.update(_flask_config(config, study.root))
    app.debug = False
    urls, files = stimulus_names(prepared.stimuli, digests, app.config["SECRET_KEY"])
    sound_urls, sound_files = served_names(prepared.setup_sounds, app.config["SECRET_KEY"])
    files.update(sound_files)
    app.extensions[EXTENSION] = StudyState(
        prepared=prepared, db=db, strings=merged(study.strings),
        admin_password_hash=config.admin_password_hash or study.admin_password_hash, config=config,
        stimulus_urls=urls, stimulus_files=files, setup_urls=sound_urls,
    )
    app.session_interface = _CachedSigningSessions()
    CSRFProtect(app)

    from webtest.admin import bp as admin_bp
    from webtest.participant import bp as participant_bp

    app.register_blueprint(participant_bp)
    app.register_blueprint(admin_bp, url_prefix="/admin")
    _install_handlers(app)
    # outermost: security headers on every response; stimuli answered without entering Flask
    app.wsgi_app = WebtestWSGI(app.wsgi_app, files, STIMULUS_MAX_AGE)  # type: ignore[method-assign]
    for name in _PARTICIPANT_TEMPLATES:  # compiled now, in each worker's start, not on its first requests
        app.jinja_env.get_template(name)
    if config.sql_stats_dir:
        _count_request_cpu(app, db)
    db.reset_stats()
    return app


_PARTICIPANT_TEMPLATES = ("base.html", "landing.html", "consent.html", "demographics.html", "instructions.html",
                          "trial.html", "done.html", "message.html", "setup_device.html", "setup_volume.html",
                          "setup_headphones.html")


class _CachedSigningSessions(SecureCookieSessionInterface):
    """Flask's signed-cookie sessions with the (immutable) signing serializer built once per set
    of keys instead of twice per request: building it was a visible share of a small request."""

    _cache: tuple | None = None

    def get_signing_serializer(self, app: Flask):
        keys = (app.secret_key, tuple(app.config.get("SECRET_KEY_FALLBACKS") or ()))
        cached = self._cache
        if cached is None or cached[0] != keys:
            cached = self._cache = (keys, super().get_signing_serializer(app))
        return cached[1]


def _count_request_cpu(app: Flask, db: Database) -> None:
    """Benchmarks only: add each request's thread CPU time to the SQL statistics, by endpoint."""
    import time

    from flask import g

    @app.before_request
    def _start_clock():
        g.evalkit_cpu0 = time.thread_time()

    @app.teardown_request
    def _stop_clock(_exc):
        _ = db.engine  # the statistics live with this process's engine
        if db.stats is not None and "evalkit_cpu0" in g:
            db.stats.cpu_s[_endpoint()] += time.thread_time() - g.evalkit_cpu0
            db.stats.requests[_endpoint()] += 1


def _install_handlers(app: Flask) -> None:
    """Template globals and error pages (JSON for JSON clients); the security headers are
    added by :class:`webtest.fastpath.WebtestWSGI`."""

    @app.context_processor
    def _inject():
        st = state()
        return {"t": st.t, "markdown": render_markdown, "study": st.study}

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
