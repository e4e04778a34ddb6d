"""The peer of the webtest load bench: a minimal Flask + SQLAlchemy app doing one idempotent
insert per answer (SQLite in WAL mode with synchronous=FULL, or PostgreSQL), written the way the
Flask and SQLAlchemy docs show, with the same request pattern as webtest (trial page, two
stimuli, answer POST) so that ``bench/bench_webtest_load.py`` can drive both with one load
generator. It has no consent, design, checks, exclusion rules or admin: it is the floor.

Configured by environment: ``MINIMAL_DB_URL``, ``MINIMAL_STIMULI`` (folder of files to serve),
``MINIMAL_TRIALS`` (trials per participant), ``MINIMAL_REQUIRED_S``, ``EVALKIT_SQL_STATS_DIR``
(count statements and commits as webtest does).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path

from flask import Flask, jsonify, redirect, request, send_from_directory, session
from sqlalchemy import create_engine, event, exc, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

STIMULI = Path(os.environ.get("MINIMAL_STIMULI", "."))
TRIALS = int(os.environ.get("MINIMAL_TRIALS", "6"))
REQUIRED_S = float(os.environ.get("MINIMAL_REQUIRED_S", "0"))
URL = os.environ.get("MINIMAL_DB_URL", "sqlite:///minimal.sqlite")
FILES = sorted(p.name for p in STIMULI.glob("*.json"))
PAGE = """<!doctype html><html><head><meta name="csrf-token" content="none"></head><body>
<section id="trial" data-required-s="{req}">
<figure id="stim-left" data-src="/stimulus/{left}" data-audio=""></figure>
<figure id="stim-right" data-src="/stimulus/{right}" data-audio=""></figure>
</section></body></html>"""


def _pragmas(conn, _record):
    cur = conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


engine = create_engine(URL) if URL.startswith("sqlite") else create_engine(URL, pool_size=5, max_overflow=10)
if URL.startswith("sqlite"):
    event.listen(engine, "connect", _pragmas)
try:
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE IF NOT EXISTS answers (participant VARCHAR(32) NOT NULL, trial INTEGER NOT NULL, "
                          "value INTEGER NOT NULL, received_at FLOAT NOT NULL, PRIMARY KEY (participant, trial))"))
except exc.IntegrityError:  # another worker created it at the same moment (PostgreSQL's IF NOT EXISTS races)
    pass

app = Flask(__name__)
app.secret_key = os.environ.get("MINIMAL_SECRET", "bench-only")
INSERT = text("INSERT INTO answers (participant, trial, value, received_at) VALUES (:p, :t, :v, :at) "
              "ON CONFLICT DO NOTHING")

if os.environ.get("EVALKIT_SQL_STATS_DIR"):
    from webtest.db import SqlStats  # the same counter webtest uses

    SqlStats(os.environ["EVALKIT_SQL_STATS_DIR"], engine, lambda: request.endpoint or "")


@app.get("/healthz")
def healthz():
    return jsonify(ok=True)


@app.get("/")
def landing():
    return PAGE.format(req=0, left="", right="")


@app.post("/start")
def start():
    session["p"] = uuid.uuid4().hex
    return redirect("/")


@app.post("/consent")
def consent():
    return redirect("/")


@app.post("/instructions")
def instructions():
    return redirect("/trial/1")


@app.get("/trial/<int:n>")
def trial_page(n: int):
    left, right = FILES[n % len(FILES)], FILES[(n + 1) % len(FILES)]
    return PAGE.format(req=REQUIRED_S, left=left, right=right)


@app.get("/stimulus/<name>")
def stimulus(name: str):
    return send_from_directory(STIMULI, name, max_age=3600)


@app.post("/trial/<int:n>")
def answer(n: int):
    data = request.get_json()
    with engine.begin() as conn:
        conn.execute(INSERT, {"p": session["p"], "t": n, "v": int(data["answer"]), "at": time.time()})
    nxt = f"/trial/{n + 1}" if n < TRIALS else "/done"
    return jsonify(ok=True, status="stored", next=nxt, completed=n >= TRIALS)


@app.get("/done")
def done():
    return "done"
