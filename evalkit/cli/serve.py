"""``evalkit serve STUDY_DIR``: run the pairwise viewing/listening test site of a study."""

from __future__ import annotations

import argparse
import getpass
import secrets
import socket
import sys

from evalkit.cli.common import add_command

PRODUCTION_HINT = (
    "production: EVALKIT_STUDY={study} EVALKIT_ADMIN_PASSWORD_HASH='<hash>' EVALKIT_SECURE_COOKIES=1 "
    "EVALKIT_TRUSTED_PROXIES=1 gunicorn -w 4 -b 127.0.0.1:8000 'webtest.wsgi:app'  (behind an HTTPS proxy)"
)


def register(sub) -> None:
    p = add_command(sub, run,
        "serve",
        help="serve a study's online pairwise test (participant and admin pages)",
        description=(
            "Validate STUDY_DIR/study.yaml, precompute the motion stimuli, create the database and "
            "the design cells if needed, then serve the participant pages at / and the admin pages "
            "at /admin/. Answers go to STUDY_DIR/ratings.sqlite unless --db (or "
            "EVALKIT_DATABASE_URL) names another database, e.g. PostgreSQL. With one worker a "
            "threaded server runs (pilots, local tests); --workers N runs gunicorn with N processes."
        ),
        epilog=("Admin password: set EVALKIT_ADMIN_PASSWORD_HASH (make one with --hash-password) or "
                "admin.password_hash in study.yaml; without one a random password is made and printed "
                "for this run only. Wrong admin passwords are rate-limited per client "
                "(EVALKIT_ADMIN_MAX_FAILURES, default 10, within EVALKIT_ADMIN_LOCKOUT_MINUTES, "
                "default 15); a browser that has logged in before is never refused because of "
                "other people's attempts. Admin logins last EVALKIT_ADMIN_SESSION_HOURS (default 8) "
                "or until logout. Behind a reverse proxy set EVALKIT_TRUSTED_PROXIES=1 (the number of "
                "proxies) so that clients are told apart, and EVALKIT_SECURE_COOKIES=1 behind HTTPS. "
                "Threat model: docs/webtest.md."),
    )
    p.add_argument("study", nargs="?", metavar="STUDY_DIR", help="folder with study.yaml")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=5000, help="port (default: 5000)")
    p.add_argument("--db", metavar="URL", default=None,
                   help="SQLAlchemy database URL, e.g. postgresql+psycopg://user@host/db "
                        "(default: EVALKIT_DATABASE_URL or sqlite in the study folder)")
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes; more than 1 runs gunicorn (default: 1, threaded server)")
    p.add_argument("--check", action="store_true",
                   help="only validate and prepare the study (stimuli, design, database) and print a summary")
    p.add_argument("--hash-password", action="store_true",
                   help="read a password (prompt or stdin) and print its hash for EVALKIT_ADMIN_PASSWORD_HASH")


def page_count(b: dict) -> str:
    """The pages of one participant in words, as the participant and the admin page count them."""
    parts = [f"{b['main_per_cell']} main trials"]
    if b["checks_per_cell"]:
        parts.append(f"{b['checks_per_cell']} quality check{'s' if b['checks_per_cell'] != 1 else ''}")
    text = f"{b['rated_per_cell']} rated pages ({' + '.join(parts)}; shown as comparisons 1 to {b['rated_per_cell']})"
    if b["practice_per_cell"]:
        text = f"{b['practice_per_cell']} practice page{'s' if b['practice_per_cell'] != 1 else ''} + " + text
    return f"{b['pages_per_cell']} pages: {text}" if b["practice_per_cell"] else text


def _stage_words(stage) -> str:
    """A setup stage in words for the summary, e.g. ``headphones (5 of 6 to pass)``."""
    if stage.name == "headphones":
        return f"headphones ({stage.pass_min} of {stage.trials} to pass)"
    if stage.name == "device":
        touch = "" if stage.allow_touch_only else ", no touch-only devices"
        return f"device (window at least {stage.min_width}x{stage.min_height} px{touch})"
    return stage.name


def _hash_password() -> int:
    from werkzeug.security import generate_password_hash

    if sys.stdin.isatty():
        pw = getpass.getpass("admin password: ")
        if pw != getpass.getpass("again: "):
            print("evalkit: error: the passwords differ", file=sys.stderr)
            return 2
    else:
        pw = sys.stdin.readline().rstrip("\n")
    if len(pw) < 8:
        print("evalkit: error: use at least 8 characters", file=sys.stderr)
        return 2
    print(generate_password_hash(pw))
    return 0


def run(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError

    if args.hash_password:
        return _hash_password()
    if not args.study:
        raise InputError("serve needs STUDY_DIR (the folder with study.yaml); see 'evalkit serve --help'")
    if args.workers < 1:
        raise InputError(f"--workers must be at least 1, got {args.workers}")
    if not 0 < args.port < 65536:
        raise InputError(f"--port must be between 1 and 65535, got {args.port}")

    if not args.check:  # before anything is printed or prepared: no URLs or password for a dead server
        _check_port(args.host, args.port)

    from werkzeug.security import generate_password_hash

    from webtest import WebtestConfig, create_app
    from webtest.db import redact

    cfg = WebtestConfig.from_env(args.study, database_url=args.db)
    generated = None
    if cfg.admin_password_hash is None:
        from webtest.study import load_study

        if load_study(cfg.study_dir).admin_password_hash is None:
            generated = secrets.token_urlsafe(12)
            cfg = WebtestConfig.from_env(args.study, database_url=args.db,
                                         admin_password_hash=generate_password_hash(generated))
    print(f"preparing study {args.study} (the first run computes the stimuli; later runs reuse them) ...",
          file=sys.stderr, flush=True)
    app = create_app(config=cfg, progress=True)  # validates, prepares stimuli, creates schema and cells
    st = app.extensions["webtest"]
    study = st.study
    b = st.prepared.balance
    print(f"study {study.id!r}: {len(study.stimuli)} stimuli, {b['cells']} design cells "
          f"(sides {'balanced' if b['balanced'] else 'NOT balanced'}), scale {study.scale.name}")
    print(f"each participant: {page_count(b)}")
    if study.setup:
        print("setup stages before the instructions: " + ", ".join(_stage_words(x) for x in study.setup))
    if study.playback.video_fallback:
        n = sum(1 for p in st.stimuli.values() if p.fallback[0] is not None)
        print(f"fallback videos for browsers without WebGL: {n} motion stimuli")
    print(f"database: {redact(st.db.url)}")
    if args.check:
        return 0
    host_shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    base = f"http://{host_shown}:{args.port}"
    print(f"participant URL: {base}/")
    print(f"admin URL:       {base}/admin/")
    if generated:
        print(f"admin password (this run only): {generated}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"warning: listening on {args.host}: anyone who can reach this machine can open the study; "
              "use HTTPS in front of it for real participants", file=sys.stderr)
    print(PRODUCTION_HINT.format(study=args.study), file=sys.stderr)
    sys.stdout.flush()
    if args.workers > 1:
        return _gunicorn(cfg, args)
    from werkzeug.serving import make_server

    server = make_server(args.host, args.port, app, threaded=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _check_port(host: str, port: int) -> None:
    """Raise :class:`InputError` if ``host:port`` cannot be listened on (e.g. already in use)."""
    from evalkit.errors import InputError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server itself does
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); fix: stop the program "
                             f"using that port or choose another with --port") from None


def _gunicorn(cfg, args) -> int:
    """Run gunicorn in this process with ``args.workers`` workers (POSIX only)."""
    try:
        from gunicorn.app.base import BaseApplication
    except ImportError:  # pragma: no cover - gunicorn is a dependency on POSIX
        from evalkit.errors import ConfigError

        raise ConfigError("--workers needs gunicorn (pip install gunicorn; not available on Windows)") from None
    from webtest import create_app

    class _App(BaseApplication):
        def load_config(self):
            self.cfg.set("bind", f"{args.host}:{args.port}")
            self.cfg.set("workers", args.workers)
            self.cfg.set("worker_class", "gthread")
            self.cfg.set("threads", 4)
            self.cfg.set("timeout", 60)
            self.cfg.set("accesslog", None)

        def load(self):
            return create_app(config=cfg)

    _App().run()
    return 0
