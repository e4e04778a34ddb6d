"""Test-set scale: a HumanML3D-size test set, timed as a user runs it.

4,400 system clips and 4,400 reference clips of 2-10 s (lengths drawn uniformly) at 20 fps,
cut from the bundled real CMU capture (resampled to 20 fps, every other clip mirrored) and
written as BVH first (not timed; ``--data DIR`` keeps them for the next run). Then, each as one
command in its own process, start-up and output writing included:

1. ``evalkit compare --reference REF sys=SYS --jobs 2`` (FGD on the bundled extractor, raw-space
   FGD, FID_k/FID_g, diversity, the score metrics' means, 500 bootstrap replicates);
2. ``evalkit score SYS --model default --jobs 2`` (every per-clip metric and the naturalness
   columns);
3. both again with ``--scheduler`` on an external Dask cluster (``dask scheduler`` and ``dask
   worker --nworkers 2 --nthreads 1`` started as their own commands on this machine).

There is no peer: no other tool computes this set of metrics or a naturalness verdict per clip.
Printed: wall time, CPU time of the command and its children (on Dask: without the workers', which
run outside the command), the load average before and after.

    python bench/bench_test_set_scale.py --data /tmp/testset      # about 10 minutes on 2 cores
    python bench/bench_test_set_scale.py --clips 1000 --no-dask    # a quicker look
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (the command and its children) of one command; fails loudly."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=4400, help="clips in each set (default 4400)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data", help="keep the generated clips in this folder and reuse them next time")
    ap.add_argument("--no-dask", action="store_true", help="leave out the runs on an external Dask cluster")
    a = ap.parse_args()
    from bench_distribution import external_dask, make_clips

    evalkit = [sys.executable, "-m", "evalkit"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.data) if a.data else Path(tmp)
        sets = {}
        t = time.perf_counter()
        for name, seed in (("sys", 1), ("ref", 2)):
            folder = root / f"{name}{a.clips}"
            if len(list(folder.glob("*.bvh"))) != a.clips:
                make_clips(folder, a.clips, 2.0, 20.0, seed=seed, max_seconds=10.0)
            sets[name] = folder
        print(f"{a.clips} + {a.clips} clips of 2-10 s at 20 fps from real bundled CMU capture, ready in "
              f"{time.perf_counter() - t:.1f} s (not timed)")
        out = Path(tmp)
        runs = [("compare", evalkit + ["compare", "--reference", str(sets["ref"]), f"sys={sets['sys']}", "--jobs",
                                       str(a.jobs), "--out", str(out / "cmp"), "-q"]),
                ("score --model", evalkit + ["score", str(sets["sys"]), "--model", "default", "--jobs", str(a.jobs),
                                             "-o", str(out / "scores.csv"), "-q"])]
        for where in ("local",) + (() if a.no_dask else ("dask",)):
            with external_dask(a.jobs if where == "dask" else 0) as scheduler:
                for label, cmd in runs:
                    cmd = cmd + (["--scheduler", scheduler] if scheduler else [])
                    load0 = os.getloadavg()[0]
                    wall, cpu = _timed(cmd)
                    how = f"external Dask scheduler, {a.jobs} workers" if scheduler else f"--jobs {a.jobs}"
                    print(f"{label:14s} {how:34s} {wall:7.1f} s wall  {cpu:7.1f} s CPU  "
                          f"(load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after)", flush=True)


if __name__ == "__main__":
    main()
