"""Server configuration (explicit dataclass; environment variables only in :meth:`from_env`)."""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path

from evalkit.errors import ConfigError

ENV_STUDY = "EVALKIT_STUDY"
ENV_DATABASE_URL = "EVALKIT_DATABASE_URL"
ENV_SECRET_KEY = "EVALKIT_SECRET_KEY"
ENV_ADMIN_HASH = "EVALKIT_ADMIN_PASSWORD_HASH"
ENV_SECURE_COOKIES = "EVALKIT_SECURE_COOKIES"
ENV_LOGIN_MAX_FAILURES = "EVALKIT_ADMIN_MAX_FAILURES"
ENV_LOGIN_WINDOW_MINUTES = "EVALKIT_ADMIN_LOCKOUT_MINUTES"
ENV_TRUSTED_PROXIES = "EVALKIT_TRUSTED_PROXIES"
ENV_ADMIN_SESSION_HOURS = "EVALKIT_ADMIN_SESSION_HOURS"
ENV_SQL_STATS_DIR = "EVALKIT_SQL_STATS_DIR"
CACHE_DIR = ".webtest"
HASH_FIX = "run 'evalkit serve --hash-password' and paste its output; never put the password itself here"


@dataclass(frozen=True)
class WebtestConfig:
    """How to serve one study.

    Attributes:
        study_dir: folder holding ``study.yaml``.
        database_url: SQLAlchemy URL; default ``sqlite:///<study_dir>/ratings.sqlite``.
        secret_key: signs the session cookie; default: read from (or created in)
            ``<study_dir>/.webtest/secret_key`` so that every worker and restart agrees.
        admin_password_hash: werkzeug password hash for ``/admin``; default from the study file.
            Admin pages are disabled when there is none.
        max_content_length: largest request body accepted, bytes.
        secure_cookies: send cookies over HTTPS only (set behind a TLS proxy).
        session_days: how long a participant can come back and resume, days.
        login_max_failures: wrong admin passwords one client (a browser that has logged in
            before, otherwise a client address) may send within ``login_window_s``; further
            attempts from it get HTTP 429 until the oldest of them is that old. Clients that have
            never logged in share a budget of ``10 x login_max_failures`` per window as well
            (against guessing from many addresses); a browser that has logged in before is
            limited by its own failures only, so nobody else can lock the owner out.
        login_window_s: the admin login rate-limit window, seconds.
        admin_session_hours: how long an admin login lasts, hours (sessions are also ended by
            logging out, and all of them by "log out everywhere").
        trusted_proxies: reverse proxies in front of the server (0: none). Behind ``n`` proxies
            the client address (for the login rate limit) and scheme are taken from the last
            ``n`` entries of ``X-Forwarded-For`` / ``X-Forwarded-Proto`` (werkzeug's ``ProxyFix``);
            without it every client has the proxy's address. Never set it higher than the real
            number of proxies: clients could then choose their own address.
        sql_stats_dir: for benchmarks: count SQL statements and commits per worker process
            into ``<dir>/<pid>.json`` (written at exit and every 200 commits). ``None``: off.
        testing: Flask testing mode (tests only).
    """

    study_dir: Path
    database_url: str | None = None
    secret_key: str | None = None
    admin_password_hash: str | None = None
    max_content_length: int = 64 * 1024
    secure_cookies: bool = False
    session_days: int = 30
    login_max_failures: int = 10
    login_window_s: float = 15 * 60.0
    trusted_proxies: int = 0
    admin_session_hours: float = 8.0
    sql_stats_dir: str | None = None
    testing: bool = False

    def __post_init__(self):
        if isinstance(self.login_max_failures, bool) or not isinstance(self.login_max_failures, int) \
                or self.login_max_failures < 1:
            raise ConfigError(f"login_max_failures must be a whole number of at least 1, got "
                              f"{self.login_max_failures!r}; fix: use e.g. 10 ({ENV_LOGIN_MAX_FAILURES})")
        if isinstance(self.trusted_proxies, bool) or not isinstance(self.trusted_proxies, int) \
                or not 0 <= self.trusted_proxies <= 10:
            raise ConfigError(f"trusted_proxies must be a whole number from 0 to 10, got {self.trusted_proxies!r}; "
                              f"fix: the number of reverse proxies in front of the server, usually 1 "
                              f"({ENV_TRUSTED_PROXIES})")
        if not isinstance(self.admin_session_hours, (int, float)) or not 0 < self.admin_session_hours <= 24 * 30:
            raise ConfigError(f"admin_session_hours must be a number of hours from 0 to 720, got "
                              f"{self.admin_session_hours!r}; fix: use e.g. 8 ({ENV_ADMIN_SESSION_HOURS})")
        if not isinstance(self.login_window_s, (int, float)) or not 0 < self.login_window_s < float("inf"):
            raise ConfigError(f"login_window_s must be a positive number of seconds, got {self.login_window_s!r}; "
                              f"fix: use e.g. 900 ({ENV_LOGIN_WINDOW_MINUTES} gives it in minutes)")

    @classmethod
    def from_env(cls, study_dir: str | os.PathLike | None = None, **overrides) -> "WebtestConfig":
        """Configuration from arguments, falling back to ``EVALKIT_*`` environment variables."""
        sd = study_dir or os.environ.get(ENV_STUDY)
        if not sd:
            raise ConfigError(f"no study folder given; fix: pass STUDY_DIR or set {ENV_STUDY}")
        env_hash = os.environ.get(ENV_ADMIN_HASH) or None
        if env_hash is not None and not is_password_hash(env_hash):
            raise ConfigError(f"{ENV_ADMIN_HASH} is not a password hash; fix: {HASH_FIX}")
        cfg = cls(
            study_dir=Path(sd),
            database_url=os.environ.get(ENV_DATABASE_URL) or None,
            secret_key=os.environ.get(ENV_SECRET_KEY) or None,
            admin_password_hash=env_hash,
            secure_cookies=os.environ.get(ENV_SECURE_COOKIES, "").lower() in ("1", "true", "yes"),
            login_max_failures=_env_number(ENV_LOGIN_MAX_FAILURES, int, 10, "a whole number of at least 1", "10"),
            login_window_s=60.0 * _env_number(ENV_LOGIN_WINDOW_MINUTES, float, 15.0, "a positive number of minutes",
                                              "15"),
            trusted_proxies=_env_proxies(),
            admin_session_hours=_env_number(ENV_ADMIN_SESSION_HOURS, float, 8.0, "a positive number of hours", "8"),
            sql_stats_dir=os.environ.get(ENV_SQL_STATS_DIR) or None,
        )
        overrides = {k: v for k, v in overrides.items() if v is not None}
        if "study_dir" in overrides:
            overrides["study_dir"] = Path(overrides["study_dir"])
        return replace(cfg, **overrides)


def _env_proxies() -> int:
    raw = os.environ.get(ENV_TRUSTED_PROXIES, "").strip()
    if not raw:
        return 0
    if not raw.isdigit() or int(raw) > 10:
        raise ConfigError(f"{ENV_TRUSTED_PROXIES}={raw!r} is not a number of proxies from 0 to 10; fix: set it to "
                          "the number of reverse proxies in front of the server (usually 1), or unset it")
    return int(raw)


def _env_number(name: str, kind: type, default, what: str, example: str):
    """The positive number in environment variable ``name`` (``default`` when unset or empty)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not 0 < value < float("inf"):
        raise ConfigError(f"{name}={raw!r} is not {what}; fix: set it to e.g. {example}, or unset it for the default")
    return value


def is_password_hash(value: str) -> bool:
    """Whether ``value`` looks like a werkzeug password hash (``method$salt$hash``, as made by
    ``evalkit serve --hash-password``) that werkzeug can check, rather than a password."""
    parts = value.split("$", 2)
    if len(parts) != 3 or not all(parts):
        return False
    method, *args = parts[0].split(":")
    if method == "scrypt":
        if not args:
            return True
        if len(args) != 3 or not all(a.isdigit() and int(a) > 0 for a in args):
            return False
        n = int(args[0])
        return n > 1 and n & (n - 1) == 0  # scrypt's cost must be a power of two
    if method == "pbkdf2":
        if len(args) > 2 or (args and args[0] not in hashlib.algorithms_available):
            return False
        return len(args) < 2 or (args[1].isdigit() and int(args[1]) > 0)
    return False


def cache_dir(study_root: Path) -> Path:
    return Path(study_root) / CACHE_DIR


def ensure_secret_key(study_root: Path) -> str:
    """The study's cookie-signing key, created once (race-free) in ``.webtest/secret_key``."""
    d = cache_dir(study_root)
    d.mkdir(parents=True, exist_ok=True)
    path = d / "secret_key"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # another worker may be writing it right now
            key = path.read_text().strip()
            if key:
                return key
            import time

            time.sleep(0.05)
        raise ConfigError(f"{path} is empty; fix: delete it and start again")
    key = secrets.token_hex(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(key + "\n")
    return key
