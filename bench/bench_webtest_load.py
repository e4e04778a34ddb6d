"""Load bench of the webtest site on loopback: cost per answer beside a minimal app, and crashes.

For each backend (SQLite in the study folder, PostgreSQL) this script runs three loads with the
same load generator, one after another in the same run:

1. **evalkit** (``cost``): gunicorn serving a small study from bundled CMU clips (6 trials per
   participant: 4 main, 1 gold, 1 attention; the server's playing-time check stays on);
2. **minimal** (the peer): ``bench/minimal_answer_app.py``, Flask + SQLAlchemy doing one
   idempotent insert per answer, same gunicorn settings, same request pattern;
3. **evalkit with crashes** (``crash``): SIGKILL of one worker while requests are in flight (the
   requests cut are counted), later SIGKILL of the whole server and a restart.

Each simulated participant (one thread and cookie jar each) goes landing → start → consent →
instructions → per trial: GET the page and both stimuli it names, think (``--think-s``, uniform
±50 %, at least the clips' playing time), POST the answer (JSON + CSRF header), retry until
acknowledged, follow the acknowledgement.

Reported per load: server CPU seconds per answer (all gunicorn processes, from /proc, after the
workers have booted), SQL statements and commits per answer (counted inside the server by
``EVALKIT_SQL_STATS_DIR``; "cycle" = the trial page, stimuli and answer requests only, "all" =
including the enrolment pages), answer-POST latency p50/p99, and for evalkit a check straight
from the database: every acknowledged answer stored with the value sent, none stored twice, no
design cell handed out twice, every participant finished.

    python bench/bench_webtest_load.py [--participants 200] [--workers 4] [--think-s 3]
        [--backends sqlite,postgresql] [--pg-url URL] [--json OUT.json]

Without ``--pg-url`` a throwaway PostgreSQL server is started (bench/webtest_pg.py). Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
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
STIM = re.compile(r'id="stim-(?:left|right)"[^>]*data-src="([^"]*)"[^>]*data-audio="([^"]*)"')
CYCLE = {"participant.trial_page", "participant.stimulus", "participant.answer", "participant.trial_current",
         "trial_page", "stimulus", "answer"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- server ----------------------------------------------------------------------------------
def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class Server:
    """gunicorn (gthread) serving ``app`` on loopback in its own process group."""

    def __init__(self, app: str, env: dict, port: int, workers: int, log: Path):
        self.app, self.env, self.port, self.workers, self.log = app, env, port, workers, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> float:
        import requests

        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-w", str(self.workers), "-k", "gthread", "--threads", "8",
             "-b", f"127.0.0.1:{self.port}", "--timeout", "60", "--graceful-timeout", "5", self.app],
            cwd=REPO, env={**os.environ, "PYTHONPATH": f"{REPO}:{REPO / 'bench'}", **self.env},
            stdout=open(self.log, "a"), stderr=subprocess.STDOUT, start_new_session=True)
        while time.perf_counter() - t0 < 90:
            try:
                if requests.get(f"http://127.0.0.1:{self.port}/healthz", timeout=1).ok:
                    return time.perf_counter() - t0
            except requests.RequestException:
                time.sleep(0.05)
        raise RuntimeError(f"gunicorn did not come up; see {self.log}")

    def worker_pids(self) -> list[int]:
        return _children(self.proc.pid) if self.proc else []

    def settle(self) -> None:
        """Wait until every worker has booted (its CPU time stops growing)."""
        last = -1.0
        for _ in range(120):
            pids = self.worker_pids()
            cpu = self.cpu_s()
            if len(pids) == self.workers and abs(cpu - last) < 0.02:
                return
            last = cpu
            time.sleep(0.5)

    def cpu_s(self) -> float:
        if self.proc is None:
            return 0.0
        return _cpu_s(self.proc.pid) + sum(_cpu_s(p) for p in self.worker_pids())

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
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
    latencies: list[float] = field(default_factory=list)  # seconds of answer POSTs
    retries: int = 0
    finished: bool = False
    error: str = ""


class Shared:
    """Counters the clients share: acknowledged answers, requests in flight, connection errors."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = 0
        self.in_flight = 0
        self.errors: list[tuple[float, float]] = []  # (start, end) perf_counter of requests cut

    def ack(self):
        with self.lock:
            self.acked += 1

    def flight(self, d: int):
        with self.lock:
            self.in_flight += d

    def cut(self, start: float):
        with self.lock:
            self.errors.append((start, time.perf_counter()))

    def cut_at(self, t: float) -> int:
        """Requests that were under way at ``t`` and then failed with a connection error."""
        with self.lock:
            return sum(1 for a, b in self.errors if a < t < b)


def participant(index: int, base: str, shared: Shared, barrier: threading.Barrier, deadline: float,
                think_s: float) -> ClientResult:
    import requests

    res = ClientResult(index)
    s = requests.Session()
    rng = random.Random(index)

    def call(method: str, path: str, **kw):
        while time.time() < deadline:
            shared.flight(1)
            t0 = time.perf_counter()
            try:
                r = s.request(method, base + path, timeout=60, **kw)
                if r.status_code < 500:
                    return r
            except requests.RequestException:
                shared.cut(t0)
            finally:
                shared.flight(-1)
            res.retries += 1
            time.sleep(0.2)
        raise TimeoutError(f"{method} {path}: no answer before the deadline")

    try:
        barrier.wait()
        time.sleep(rng.uniform(0, think_s))  # participants arrive over a few seconds, not at once
        token = CSRF.search(call("GET", "/").text).group(1)
        call("POST", "/start", data={"csrf_token": token})
        call("POST", "/consent", data={"csrf_token": token, "choice": "agree"})
        r = call("POST", "/instructions", data={"csrf_token": token})  # redirected to the first trial
        while True:
            m = re.search(r"/trial/(\d+)$", r.url)
            if not m:
                res.finished = r.url.endswith("/done")
                break
            r = _one_trial(int(m.group(1)), r, call, s, base, token, res, shared, rng, think_s, deadline)
        res.cookie = s.cookies.get("evalkit_session", "")
    except Exception as exc:  # noqa: BLE001 - reported in the summary
        res.error = f"{type(exc).__name__}: {exc}"
    return res


def _one_trial(n, r, call, s, base, token, res, shared, rng, think_s, deadline):
    """Fetch the stimuli the page names, think, answer until acknowledged; the next page."""
    import requests

    req = float(re.search(r'data-required-s="([0-9.]+)"', r.text).group(1))
    for src, audio in STIM.findall(r.text):  # what the page's player fetches
        for url in filter(None, (src, audio)):
            call("GET", url)
    time.sleep(max(req + 0.02, rng.uniform(0.5, 1.5) * think_s))
    value = (res.index + n) % 7 - 3
    while True:
        t0 = time.perf_counter()
        shared.flight(1)
        try:
            a = s.post(f"{base}/trial/{n}", json={"answer": value}, timeout=60,
                       headers={"X-CSRFToken": token, "Accept": "application/json"})
        except requests.RequestException:
            shared.cut(t0)
            res.retries += 1
            time.sleep(0.2)
            if time.time() > deadline:
                raise TimeoutError("answer never acknowledged") from None
            continue
        finally:
            shared.flight(-1)
        res.latencies.append(time.perf_counter() - t0)
        if a.status_code == 200 and a.json().get("ok"):
            res.acked[n] = value
            res.statuses.append(a.json()["status"])
            shared.ack()
            return call("GET", a.json()["next"])  # as the page does after the acknowledgement
        res.retries += 1
        if a.status_code in (409, 422):  # e.g. after a restart: show the current trial again
            return call("GET", "/trial")
        time.sleep(0.2)


# -- verification ----------------------------------------------------------------------------
def participant_id(cookie: str, secret: str, study_id: str) -> str | None:
    from flask import Flask
    from flask.sessions import SecureCookieSessionInterface

    app = Flask("bench")
    app.secret_key = secret
    data = SecureCookieSessionInterface().get_signing_serializer(app).loads(cookie)
    return data.get(f"p:{study_id}")


def verify(db_url: str, study: Path, results: list[ClientResult]) -> dict:
    """Acknowledged answers against the database: lost, wrong, duplicated; cells handed out twice."""
    from sqlalchemy import create_engine, text

    secret = (study / ".webtest" / "secret_key").read_text().strip()
    eng = create_engine(db_url)
    lost = wrong = 0
    with eng.connect() as c:
        stored: dict = {}
        for pid, pos, raw in c.execute(text(
                "SELECT t.participant_id, t.position, a.raw_answer FROM wt_answers a JOIN wt_trials t ON t.id = a.trial_id")):
            stored.setdefault(pid, {}).setdefault(pos, []).append(raw)
        dup = sum(len(v) - 1 for per in stored.values() for v in per.values())
        for r in results:
            have = stored.get(participant_id(r.cookie, secret, "bench") if r.cookie else None, {})
            for pos, value in r.acked.items():
                if pos not in have:
                    lost += 1
                elif have[pos][0] != str(value):
                    wrong += 1
        one = c.execute(text("SELECT COUNT(*) FROM (SELECT cell_id FROM wt_assignments GROUP BY cell_id "
                             "HAVING COUNT(*) > 1) x")).scalar_one()
        two = c.execute(text("SELECT COUNT(*) FROM (SELECT participant_id FROM wt_assignments GROUP BY participant_id "
                             "HAVING COUNT(*) > 1) x")).scalar_one()
        holders = c.execute(text("SELECT COUNT(DISTINCT participant_id) FROM wt_cells "
                                 "WHERE participant_id IS NOT NULL")).scalar_one()
        n_answers = c.execute(text("SELECT COUNT(*) FROM wt_answers")).scalar_one()
    eng.dispose()
    return {"acknowledged": sum(len(r.acked) for r in results), "stored_answers": int(n_answers),
            "lost_acknowledged": lost, "wrong_value": wrong, "duplicated": int(dup),
            "cells_assigned_twice": int(one), "participants_with_two_cells": int(two),
            "distinct_cell_holders": int(holders)}


def verify_minimal(db_url: str, results: list[ClientResult]) -> dict:
    from sqlalchemy import create_engine, text

    eng = create_engine(db_url)
    with eng.connect() as c:
        n = c.execute(text("SELECT COUNT(*) FROM answers")).scalar_one()
    eng.dispose()
    acked = sum(len(r.acked) for r in results)
    return {"acknowledged": acked, "stored_answers": int(n), "lost_acknowledged": max(0, acked - int(n))}


def sql_stats(folder: Path) -> dict:
    """Statements and commits summed over the workers' files: all, and the answer cycle only;
    with ``by_endpoint``: requests and CPU seconds inside the app (evalkit only)."""
    out: dict = {"statements": 0, "commits": 0, "cycle_statements": 0, "cycle_commits": 0, "by_endpoint": {}}
    for f in folder.glob("*.json"):
        data = json.loads(f.read_text())
        for kind in ("statements", "commits"):
            for key, n in data[kind].items():
                out[kind] += n
                if key in CYCLE:
                    out[f"cycle_{kind}"] += n
        for key, n in data.get("requests", {}).items():
            e = out["by_endpoint"].setdefault(key, {"requests": 0, "cpu_s": 0.0, "statements": 0})
            e["requests"] += n
            e["cpu_s"] += data["cpu_s"].get(key, 0.0)
            e["statements"] += data["statements"].get(key, 0)
    return out


# -- one load --------------------------------------------------------------------------------
def run_load(server: Server, args, kills: bool = False) -> tuple[list[ClientResult], dict]:
    """Start the server, run every participant, optionally SIGKILL one worker with requests in
    flight and later the whole server; stop it. Returns the clients and timing figures."""
    server.start()
    server.settle()
    base = f"http://127.0.0.1:{server.port}"
    shared = Shared()
    barrier = threading.Barrier(args.participants + 1, timeout=120)
    deadline = time.time() + args.timeout
    results: list[ClientResult | None] = [None] * args.participants

    def worker(i):
        results[i] = participant(i, base, shared, barrier, deadline, args.think_s)

    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(args.participants)]
    for t in threads:
        t.start()
    cpu0 = server.cpu_s()
    barrier.wait()
    t0 = time.perf_counter()
    extra = _crashes(server, shared, args, threads) if kills else {}
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu = server.cpu_s() - cpu0
    server.stop()
    res = [r for r in results if r is not None]
    lat = np.array([d for r in res for d in r.latencies]) * 1000
    return res, {"wall_s": round(wall, 1), "server_cpu_s": round(cpu, 2),
                 "answer_p50_ms": round(float(np.percentile(lat, 50)), 1) if lat.size else None,
                 "answer_p99_ms": round(float(np.percentile(lat, 99)), 1) if lat.size else None,
                 "client_retries": sum(r.retries for r in res), "errors": [r.error for r in res if r.error][:5],
                 "finished": sum(r.finished for r in res), **extra}


def _crashes(server: Server, shared: Shared, args, threads) -> dict:
    """SIGKILL one worker while requests are in flight (until at least one request was cut), then
    the whole server once a further share of the answers is in; restart it."""
    total = args.participants * TRIALS_PER_PARTICIPANT
    cut = kills = 0
    while shared.acked < 0.25 * total and any(t.is_alive() for t in threads):
        time.sleep(0.01)
    while cut == 0 and kills < 10 and any(t.is_alive() for t in threads):
        while shared.in_flight < 4 and any(t.is_alive() for t in threads):
            time.sleep(0.002)
        pids = server.worker_pids()
        if not pids:
            break
        t_kill = time.perf_counter()
        os.kill(random.choice(pids), signal.SIGKILL)
        kills += 1
        time.sleep(3)  # gunicorn's master starts a new worker; the cut requests are retried
        cut += shared.cut_at(t_kill)
    while shared.acked < 0.6 * total and any(t.is_alive() for t in threads):
        time.sleep(0.01)
    server.kill()
    t_kill = time.perf_counter()
    server.start()
    return {"worker_kills": kills, "requests_cut_by_worker_kill": cut,
            "server_killed_after_acks": shared.acked, "restart_s": round(time.perf_counter() - t_kill, 2),
            "requests_cut_by_server_kill": shared.cut_at(t_kill)}


# -- one backend: evalkit, minimal, evalkit with crashes ---------------------------------------
def make_study(root: Path, participants: int) -> Path:
    d = root / "study"
    d.mkdir(parents=True)
    data = json.loads(json.dumps(STUDY))
    data["design"]["participants"] = participants + 20  # a few spare cells: nobody is turned away
    (d / "study.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return d


def _per_answer(stats: dict, cpu_s: float, answers: int) -> dict:
    n = max(answers, 1)
    endpoints = {k: {"requests": v["requests"], "app_cpu_ms_per_answer": round(1000 * v["cpu_s"] / n, 2),
                     "statements_per_request": round(v["statements"] / max(v["requests"], 1), 2)}
                 for k, v in sorted(stats["by_endpoint"].items())}
    return {**({"by_endpoint": endpoints} if endpoints else {}),"server_cpu_ms_per_answer": round(1000 * cpu_s / n, 2),
            "statements_per_answer_cycle": round(stats["cycle_statements"] / n, 2),
            "commits_per_answer_cycle": round(stats["cycle_commits"] / n, 3),
            "statements_per_answer_all": round(stats["statements"] / n, 2),
            "commits_per_answer_all": round(stats["commits"] / n, 3)}


def _fresh_db(backend: str, pg_url: str | None, tmp: Path, name: str) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp / f'{name}.sqlite'}"
    from sqlalchemy import create_engine, text

    eng = create_engine(pg_url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        c.execute(text(f"CREATE DATABASE {name}"))
    eng.dispose()
    return pg_url.rsplit("/", 1)[0] + f"/{name}"


def run_backend(backend: str, pg_url: str | None, args) -> dict:
    from werkzeug.security import generate_password_hash

    from webtest import create_app

    tmp = Path(tempfile.mkdtemp(prefix=f"evalkit-bench-{backend}-"))
    out: dict = {"backend": backend, "participants": args.participants, "workers": args.workers,
                 "think_s": args.think_s}
    try:
        study = make_study(tmp, args.participants)
        total = args.participants * TRIALS_PER_PARTICIPANT
        for name, kills in (("evalkit", False), ("crash", True))[:1 if args.no_crash else 2]:
            url = _fresh_db(backend, pg_url, tmp, f"bench_{name}")
            app = create_app(study, database_url=url)  # stimuli, schema and cells once, up front
            app.extensions["webtest"].db.dispose()
            stats_dir = tmp / f"stats-{name}"
            stats_dir.mkdir()
            env = {"EVALKIT_STUDY": str(study), "EVALKIT_DATABASE_URL": url, "EVALKIT_SQL_STATS_DIR": str(stats_dir),
                   "EVALKIT_ADMIN_PASSWORD_HASH": generate_password_hash("bench-admin")}
            server = Server("webtest.wsgi:app", env, free_port(), args.workers, tmp / f"{name}.log")
            res, timing = run_load(server, args, kills=kills)
            check = verify(url, study, res)
            out[name] = {**timing, **check, **(_per_answer(sql_stats(stats_dir), timing["server_cpu_s"],
                                                           check["stored_answers"]) if not kills else {})}
            out[name]["ok"] = (timing["finished"] == args.participants and check["stored_answers"] == total
                               and check["lost_acknowledged"] == check["wrong_value"] == check["duplicated"] == 0
                               and check["cells_assigned_twice"] == check["participants_with_two_cells"] == 0
                               and check["distinct_cell_holders"] == args.participants)
            if name == "evalkit":  # the peer right after, on the same machine and load
                out["minimal"] = _run_minimal(backend, pg_url, tmp, study, args)
        ours, peer = out["evalkit"], out["minimal"]
        out["cpu_ratio_evalkit_vs_minimal"] = round(ours["server_cpu_ms_per_answer"]
                                                    / max(peer["server_cpu_ms_per_answer"], 1e-9), 2)
        if args.keep:
            out["folder"] = str(tmp)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _run_minimal(backend: str, pg_url: str | None, tmp: Path, study: Path, args) -> dict:
    url = _fresh_db(backend, pg_url, tmp, "bench_minimal")
    stats_dir = tmp / "stats-minimal"
    stats_dir.mkdir()
    required = max(0.9 * 2 * CLIP_S, 0.0)  # what webtest's default playback slack asks for two clips
    env = {"MINIMAL_DB_URL": url, "MINIMAL_STIMULI": str(study / ".webtest" / "stimuli"),
           "MINIMAL_TRIALS": str(TRIALS_PER_PARTICIPANT), "MINIMAL_REQUIRED_S": f"{required:.3f}",
           "EVALKIT_SQL_STATS_DIR": str(stats_dir)}
    server = Server("minimal_answer_app:app", env, free_port(), args.workers, tmp / "minimal.log")
    res, timing = run_load(server, args)
    check = verify_minimal(url, res)
    out = {**timing, **check, **_per_answer(sql_stats(stats_dir), timing["server_cpu_s"], check["stored_answers"])}
    out["ok"] = timing["finished"] == args.participants and check["lost_acknowledged"] == 0
    return out


COLUMNS = ["backend", "app", "server_cpu_ms_per_answer", "statements_per_answer_cycle", "commits_per_answer_cycle",
           "statements_per_answer_all", "commits_per_answer_all", "answer_p50_ms", "answer_p99_ms", "ok"]
CRASH_COLUMNS = ["backend", "worker_kills", "requests_cut_by_worker_kill", "requests_cut_by_server_kill", "restart_s",
                 "acknowledged", "lost_acknowledged", "duplicated", "cells_assigned_twice", "ok"]


def print_tables(results: list[dict]) -> None:
    print("\n| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    for r in results:
        for app in ("evalkit", "minimal"):
            row = {"backend": r["backend"], "app": app, **r[app]}
            print("| " + " | ".join(str(row.get(c, "")) for c in COLUMNS) + " |")
        print(f"(server CPU per answer, evalkit / minimal on {r['backend']}: {r['cpu_ratio_evalkit_vs_minimal']})")
    print("\n| " + " | ".join(CRASH_COLUMNS) + " |\n|" + "---|" * len(CRASH_COLUMNS))
    for r in (r for r in results if "crash" in r):
        row = {"backend": r["backend"], **r["crash"]}
        print("| " + " | ".join(str(row.get(c, "")) for c in CRASH_COLUMNS) + " |")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Loopback only; bounded by --participants x 6 answers per load.")
    p.add_argument("--participants", type=int, default=200, help="simulated concurrent participants (default 200)")
    p.add_argument("--workers", type=int, default=4, help="gunicorn worker processes, 8 threads each (default 4)")
    p.add_argument("--think-s", type=float, default=3.0,
                   help="mean seconds a participant spends on a trial before answering (default 3)")
    p.add_argument("--backends", default="sqlite,postgresql", help="comma list of sqlite, postgresql")
    p.add_argument("--pg-url", default=None, help="PostgreSQL URL whose server may create databases "
                                                  "(default: start a throwaway server)")
    p.add_argument("--timeout", type=float, default=600, help="give up a load after this many seconds")
    p.add_argument("--json", default=None, help="also write the results to this JSON file")
    p.add_argument("--keep", action="store_true", help="keep the temporary study folders and logs")
    p.add_argument("--no-crash", action="store_true", help="skip the load with SIGKILLs (cost figures only)")
    args = p.parse_args(argv)
    results = []
    for b in [b.strip() for b in args.backends.split(",") if b.strip()]:
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
    print_tables(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if all(r[k]["ok"] for r in results for k in ("evalkit", "minimal", "crash") if k in r) else 1


if __name__ == "__main__":
    sys.exit(main())
