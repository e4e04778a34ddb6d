"""Bounded load test of the webtest site on loopback, with a SIGKILL of the server mid-run.

For each backend (SQLite in the study folder, PostgreSQL) this script:

1. builds a small study from bundled CMU clips (0.1 s clips, 6 trials per participant: 4 main,
   1 gold, 1 attention; the server's playing-time check stays on, so each answer waits 0.2 s);
2. starts gunicorn (``--workers`` processes, gthread) on 127.0.0.1 in its own process group;
3. runs ``--participants`` simulated participants at once (one thread and one cookie jar each):
   landing → start → consent → instructions → for every trial: GET the page and both stimuli,
   wait until the clips could have played, POST the answer (JSON + CSRF header), retry until
   acknowledged, then follow the acknowledgement to the next page;
4. when ``--kill-at`` of all answers are acknowledged, SIGKILLs gunicorn (master and workers)
   and restarts it; participants keep retrying through the outage and resume by cookie;
5. checks, straight from the database: every acknowledged answer is stored with the value sent,
   no (participant, trial) is stored twice, every participant finished, no design cell was handed
   out twice, and every participant holds a different cell.

It prints answers/s and answer-POST latency (p50/p99) per backend and the SQLite/PostgreSQL
ratio, measured in the same run on the same study and client load. Loopback only; bounded by
``--participants`` x 6 answers.

    .venv/bin/python bench/bench_webtest_load.py [--participants 200] [--workers 4]
        [--backends sqlite,postgresql] [--pg-url URL] [--kill-at 0.4] [--json OUT.json]

Without ``--pg-url`` a throwaway PostgreSQL server is started (bench/webtest_pg.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

CLIP_S = 0.1
STUDY = {
    "id": "bench",
    "title": "Load test",
    "consent": "Bench.",
    "instructions": "Bench.",
    "stimuli": [
        {"id": f"{item}.{sysname}", "item": item, "system": sysname, "file": f"sample:cmu/{f}",
         "trim": [0.0, CLIP_S], **({"transform": [{"jitter": {"deg": 3, "seed": i}}]} if sysname == "jitter" else {})}
        for i, (item, f) in enumerate([("walk", "16_15.amc"), ("run", "09_06-run.amc"),
                                       ("slow", "07_05-walk.amc"), ("hop", "131_03.bvh")])
        for sysname in ("original", "jitter")
    ],
    "pairs": [["original", "jitter"]],
    "design": {"method": "full", "seed": 1},
    "quality": {"gold": {"count": 1}, "attention": {"count": 1}},
    "playback": {"must_end": True, "exclusive": True},
    "assignment": {"timeout_minutes": 120},
}
TRIALS_PER_PARTICIPANT = 6
CSRF = re.compile(r'name="csrf-token" content="([^"]+)"')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- server ----------------------------------------------------------------------------------
class Server:
    """gunicorn serving the study; ``kill()`` sends SIGKILL to its whole process group."""

    def __init__(self, study: Path, db_url: str, port: int, workers: int, log: Path):
        self.study, self.db_url, self.port, self.workers, self.log = study, db_url, port, workers, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> float:
        from werkzeug.security import generate_password_hash

        env = {**os.environ, "EVALKIT_STUDY": str(self.study), "EVALKIT_DATABASE_URL": self.db_url,
               "EVALKIT_ADMIN_PASSWORD_HASH": generate_password_hash("bench-admin")}
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", str(self.workers), "-k", "gthread", "--threads", "8",
             "-b", f"127.0.0.1:{self.port}", "--timeout", "60", "--graceful-timeout", "5", "webtest.wsgi:app"],
            cwd=REPO, env=env, stdout=open(self.log, "a"), stderr=subprocess.STDOUT, start_new_session=True)
        import requests

        while time.perf_counter() - t0 < 60:
            try:
                if requests.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).ok:
                    return time.perf_counter() - t0
            except requests.RequestException:
                time.sleep(0.05)
        raise RuntimeError(f"gunicorn did not come up; see {self.log}")

    def kill(self) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


# -- clients ---------------------------------------------------------------------------------
@dataclass
class ClientResult:
    index: int
    cookie: str = ""
    acked: dict[int, int] = field(default_factory=dict)  # position -> value acknowledged
    statuses: list[str] = field(default_factory=list)
    latencies: list[tuple[float, float]] = field(default_factory=list)  # (start, seconds) of answered POSTs
    retries: int = 0
    finished: bool = False
    error: str = ""


class Shared:
    def __init__(self, total: int):
        self.total = total
        self.acked = 0
        self.lock = threading.Lock()
        self.first_ack = None
        self.last_ack = None

    def ack(self):
        with self.lock:
            self.acked += 1
            now = time.perf_counter()
            self.first_ack = self.first_ack or now
            self.last_ack = now


def participant(index: int, base: str, shared: Shared, barrier: threading.Barrier, deadline: float) -> ClientResult:
    import requests

    res = ClientResult(index)
    s = requests.Session()

    def call(method: str, path: str, **kw):
        while time.time() < deadline:
            try:
                r = s.request(method, base + path, timeout=30, **kw)
                if r.status_code < 500:
                    return r
            except requests.RequestException:
                pass
            res.retries += 1
            time.sleep(0.2)
        raise TimeoutError(f"{method} {path}: no answer before the deadline")

    try:
        barrier.wait()
        token = CSRF.search(call("GET", "/").text).group(1)
        call("POST", "/start", data={"csrf_token": token})
        call("POST", "/consent", data={"csrf_token": token, "choice": "agree"})
        r = call("POST", "/instructions", data={"csrf_token": token})  # redirected to the first trial
        while True:
            m = re.search(r"/trial/(\d+)$", r.url)
            if not m:
                res.finished = r.url.endswith("/done")
                break
            n = int(m.group(1))
            req = float(re.search(r'data-required-s="([0-9.]+)"', r.text).group(1))
            for side in ("left", "right"):  # what the page's player fetches
                call("GET", f"/trial/{n}/stimulus/{side}")
            time.sleep(req + 0.02)
            value = (index + n) % 7 - 3
            while True:
                t0 = time.perf_counter()
                try:
                    a = s.post(f"{base}/trial/{n}", json={"answer": value}, timeout=30,
                               headers={"X-CSRFToken": token, "Accept": "application/json"})
                except requests.RequestException:
                    res.retries += 1
                    time.sleep(0.2)
                    if time.time() > deadline:
                        raise TimeoutError("answer never acknowledged") from None
                    continue
                res.latencies.append((t0, time.perf_counter() - t0))
                if a.status_code == 200 and a.json().get("ok"):
                    res.acked[n] = value
                    res.statuses.append(a.json()["status"])
                    shared.ack()
                    r = call("GET", a.json()["next"])  # as the page does after the acknowledgement
                    break
                res.retries += 1
                if a.status_code in (409, 422):  # e.g. after a restart: show the current trial again
                    r = call("GET", "/trial")
                    break
                time.sleep(0.2)
        res.cookie = s.cookies.get("evalkit_session", "")
    except Exception as exc:  # noqa: BLE001 - reported in the summary
        res.error = f"{type(exc).__name__}: {exc}"
    return res


# -- verification ----------------------------------------------------------------------------
def participant_id(cookie: str, secret: str, study_id: str) -> str | None:
    from flask import Flask
    from flask.sessions import SecureCookieSessionInterface

    app = Flask("bench")
    app.secret_key = secret
    data = SecureCookieSessionInterface().get_signing_serializer(app).loads(cookie)
    return data.get(f"p:{study_id}")


def verify(db_url: str, study: Path, results: list[ClientResult]) -> dict:
    from sqlalchemy import create_engine, text

    secret = (study / ".webtest" / "secret_key").read_text().strip()
    eng = create_engine(db_url)
    lost, wrong, dup = 0, 0, 0
    with eng.connect() as c:
        stored = {}
        for pid, pos, raw in c.execute(text(
                "SELECT t.participant_id, t.position, a.raw_answer FROM wt_answers a JOIN wt_trials t ON t.id = a.trial_id")):
            stored.setdefault(pid, {}).setdefault(pos, []).append(raw)
        dup = sum(len(v) - 1 for per in stored.values() for v in per.values())
        pids = []
        for r in results:
            pid = participant_id(r.cookie, secret, "bench") if r.cookie else None
            pids.append(pid)
            have = stored.get(pid, {})
            for pos, value in r.acked.items():
                if pos not in have:
                    lost += 1
                elif have[pos][0] != str(value):
                    wrong += 1
        double_cells = c.execute(text(
            "SELECT COUNT(*) FROM (SELECT cell_id FROM wt_assignments GROUP BY cell_id HAVING COUNT(*) > 1) x")).scalar_one()
        holders = c.execute(text("SELECT participant_id FROM wt_cells WHERE participant_id IS NOT NULL")).scalars().all()
        per_participant = c.execute(text(
            "SELECT COUNT(*) FROM (SELECT participant_id FROM wt_assignments GROUP BY participant_id HAVING COUNT(*) > 1) x")).scalar_one()
        n_answers = c.execute(text("SELECT COUNT(*) FROM wt_answers")).scalar_one()
        view_rows = c.execute(text("SELECT COUNT(*) FROM ratings_long")).scalar_one()
    eng.dispose()
    known = [p for p in pids if p]
    return {
        "acknowledged": sum(len(r.acked) for r in results),
        "stored_answers": int(n_answers),
        "ratings_long_rows": int(view_rows),
        "lost_acknowledged": lost,
        "wrong_value": wrong,
        "duplicated": int(dup),
        "cells_assigned_twice": int(double_cells),
        "participants_with_two_cells": int(per_participant),
        "distinct_cell_holders": len(set(holders)),
        "participants_identified": len(set(known)),
    }


def make_study(root: Path, participants: int) -> Path:
    d = root / "study"
    d.mkdir()
    data = json.loads(json.dumps(STUDY))
    data["design"]["participants"] = participants + 20  # a few spare cells: nobody is turned away
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return d


def run_backend(name: str, db_url: str | None, args) -> dict:
    from webtest import create_app

    tmp = Path(tempfile.mkdtemp(prefix=f"evalkit-bench-{name}-"))
    study = make_study(tmp, args.participants)
    url = db_url or f"sqlite:///{study / 'ratings.sqlite'}"
    app = create_app(study, database_url=url)  # prepare stimuli, schema and cells once, up front
    app.extensions["webtest"].db.dispose()
    port = free_port()
    server = Server(study, url, port, args.workers, tmp / "gunicorn.log")
    boot_s = server.start()
    base = f"http://127.0.0.1:{port}"
    total = args.participants * TRIALS_PER_PARTICIPANT
    shared = Shared(total)
    barrier = threading.Barrier(args.participants)
    deadline = time.time() + args.timeout
    results: list[ClientResult | None] = [None] * args.participants

    def worker(i):
        results[i] = participant(i, base, shared, barrier, deadline)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.participants)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    killed_at = restart_s = None
    outage = (float("inf"), float("inf"))
    if args.kill_at > 0:
        while shared.acked < args.kill_at * total and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        killed_at = shared.acked
        server.kill()
        t_kill = time.perf_counter()
        server.start()
        restart_s = time.perf_counter() - t_kill
        outage = (t_kill, t_kill + restart_s)
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    server.stop()
    res = [r for r in results if r is not None]
    lat = np.array([d for r in res for _, d in r.latencies]) * 1000
    steady = np.array([d for r in res for t, d in r.latencies if not (outage[0] <= t <= outage[1])]) * 1000
    check = verify(url, study, res)
    statuses = [s for r in res for s in r.statuses]
    span = (shared.last_ack - shared.first_ack) if shared.first_ack else float("nan")
    out = {
        "backend": name,
        "participants": args.participants,
        "workers": args.workers,
        "answers_expected": total,
        "finished": sum(r.finished for r in res),
        "errors": [r.error for r in res if r.error][:5],
        "wall_s": round(wall, 2),
        "answers_per_s": round(shared.acked / span, 1) if span == span and span > 0 else None,
        "answers_per_s_excl_outage": (round(shared.acked / (span - (restart_s or 0)), 1)
                                      if span == span and span > (restart_s or 0) else None),
        "answer_p50_ms": round(float(np.percentile(lat, 50)), 1) if lat.size else None,
        "answer_p99_ms": round(float(np.percentile(lat, 99)), 1) if lat.size else None,
        # without the requests sent while the server was down or booting after the SIGKILL
        "answer_p99_ms_steady": round(float(np.percentile(steady, 99)), 1) if steady.size else None,
        "killed_after_acks": killed_at,
        "restart_s": round(restart_s, 2) if restart_s else None,
        "boot_s": round(boot_s, 2),
        "client_retries": sum(r.retries for r in res),
        "acks_duplicate_status": statuses.count("duplicate"),
        **check,
    }
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        out["folder"] = str(tmp)
    out["ok"] = (out["finished"] == args.participants and check["lost_acknowledged"] == 0 and check["wrong_value"] == 0
                 and check["duplicated"] == 0 and check["cells_assigned_twice"] == 0
                 and check["participants_with_two_cells"] == 0 and check["stored_answers"] == total
                 and check["distinct_cell_holders"] == args.participants)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--participants", type=int, default=200, help="simulated concurrent participants (default 200)")
    p.add_argument("--workers", type=int, default=4, help="gunicorn worker processes (default 4)")
    p.add_argument("--backends", default="sqlite,postgresql", help="comma list of sqlite, postgresql")
    p.add_argument("--pg-url", default=None, help="PostgreSQL URL (default: start a throwaway server)")
    p.add_argument("--kill-at", type=float, default=0.4, help="SIGKILL the server when this share of answers is acknowledged (0 = never)")
    p.add_argument("--timeout", type=float, default=600, help="give up after this many seconds")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    p.add_argument("--keep", action="store_true", help="keep the temporary study folders and logs")
    args = p.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    results = []
    for b in backends:
        if b == "sqlite":
            results.append(run_backend("sqlite", None, args))
        elif b == "postgresql":
            if args.pg_url:
                results.append(run_backend("postgresql", args.pg_url, args))
            else:
                from webtest_pg import throwaway_postgres

                with throwaway_postgres() as url:
                    results.append(run_backend("postgresql", url, args))
        else:
            p.error(f"unknown backend {b!r}")
        print(json.dumps(results[-1], indent=1), flush=True)

    cols = ["backend", "participants", "workers", "answers_per_s", "answers_per_s_excl_outage", "answer_p50_ms", "answer_p99_ms",
            "answer_p99_ms_steady", "restart_s",
            "acknowledged", "lost_acknowledged", "duplicated", "cells_assigned_twice", "ok"]
    print("\n| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        print("| " + " | ".join(str(r.get(c)) for c in cols) + " |")
    if len(results) == 2 and all(r["answers_per_s"] for r in results):
        print(f"\nthroughput ratio sqlite / postgresql = {results[0]['answers_per_s'] / results[1]['answers_per_s']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
