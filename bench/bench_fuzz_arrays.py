"""Hostile array files at scale: thousands of seeded mutations of SMPL-family ``.npz``,
HumanML3D joints and features, MDM ``results.npy`` and generic position arrays, read in child
processes under a memory cap.

Uses the seeds and mutations of the test suite (``tests/motion/test_fuzz_arrays.py``: byte flips,
truncation, repeated runs, hostile header shapes and dtypes, zip members dropped, duplicated or
replaced by a bomb). Every case must end in a motion or an evalkit error; a case that kills its
child (segmentation fault), takes longer than ``--case-limit`` seconds (hang) or raises a memory
error under the cap (blow-up) is a failure. Prints the tally and every failure; exit 1 if any.

    python bench/bench_fuzz_arrays.py --cases 3000 [--seed 0] [--case-limit 10]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.motion.test_fuzz_arrays import CHILD, MEMORY_CAP, make_cases  # noqa: E402


def run(cases: list[dict], case_limit: float) -> tuple[dict, list[str]]:
    """Read every case in child processes; a child that dies or exceeds ``case_limit`` seconds on
    one case is replaced and the rest go on. Returns (tally by outcome, failures)."""
    todo, counts, failures = list(cases), {}, []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    while todo:
        # the cases go in through a file: a pipe in both directions would fill and block both ends
        with tempfile.TemporaryFile("w+") as queue:
            queue.write("".join(json.dumps(c) + "\n" for c in todo))
            queue.seek(0)
            proc = subprocess.Popen([sys.executable, "-c", CHILD.format(cap=MEMORY_CAP)], stdin=queue,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
        finished: dict[str, str] = {}
        current, since = None, time.monotonic()
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        hung = False
        while True:
            if not sel.select(timeout=1.0):
                if current and time.monotonic() - since > case_limit:
                    proc.kill()
                    hung = True
                    break
                continue
            line = proc.stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            if "start" in msg:
                current, since = msg["start"], time.monotonic()
            else:
                finished[msg["done"]] = msg["kind"]
                current = None
        rc = proc.wait()
        for path, kind in finished.items():
            key = kind.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
            if kind not in ("read", "refused"):
                failures.append(f"{path}: {kind}")
        paths = [c["path"] for c in todo]
        if current is not None:  # the case that started and never finished
            outcome = f"hang (> {case_limit:g} s)" if hung else f"child ended with {rc}"
            counts[outcome.split(" (")[0]] = counts.get(outcome.split(" (")[0], 0) + 1
            failures.append(f"{current}: {outcome}")
            todo = todo[paths.index(current) + 1:]
        else:
            todo = []
    return counts, failures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--case-limit", type=float, default=10.0, help="seconds one case may take (default 10)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="evalkit-fuzz-arrays-") as tmp:
        cases = make_cases(Path(tmp), a.cases, a.seed)
        t0 = time.perf_counter()
        counts, failures = run(cases, a.case_limit)
        took = time.perf_counter() - t0
    print(f"{a.cases} cases (seed {a.seed}) in {took:.1f} s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for f in failures:
        print("  FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
