"""Load + forward kinematics of a real CMU clip: evalkit vs two PyPI packages, timed alike.

Peers: ``bvhio`` (object hierarchy, per-frame pose loading) and ``pybvh`` (numpy arrays,
vectorised forward kinematics), each used as its documentation shows (read the file, ask for
world positions of every joint on every frame). Every side is timed the same two ways, in the
same run:

* **warm**: in this process after one untimed run (imports done, caches filled), best of
  ``--repeat`` runs;
* **cold**: a fresh Python process that imports the package, reads and solves the file once
  (``--cold`` runs each, best), i.e. what a command-line user waits for.

Times are CPU seconds (the machine is shared; wall time would mostly measure the other users).
Checks that all sides give the same positions (up to the unit scale evalkit applies).

    python bench/bench_motion_load.py [FILE.bvh] [--repeat 3] [--cold 2]

With ``--short N`` it times instead what a test set of short clips costs: N distinct 200-frame
windows of the file, written as BVH first (not timed), each read and solved by every side in
this process (warm), best of ``--repeat`` passes over all of them; milliseconds per file.

    python bench/bench_motion_load.py --short 300

Needs the ``bench`` extra (``pip install -e '.[bench]'``) for bvhio and pybvh.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def evalkit_positions(path: str) -> np.ndarray:
    from evalkit.motion import read_bvh

    with warnings.catch_warnings():  # raw file units on purpose, as the peers read them
        warnings.simplefilter("ignore", UserWarning)
        m = read_bvh(path, units="m", up="y")  # explicit: no detection, raw file units
    return m.positions


def bvhio_positions(path: str) -> np.ndarray:
    import bvhio

    root = bvhio.readAsHierarchy(str(path))
    joints = [j for j, _, _ in root.layout()]
    n_frames = len(root.Keyframes) if hasattr(root, "Keyframes") else 0
    out = np.empty((n_frames, len(joints), 3))
    for f in range(n_frames):
        root.loadPose(f)
        for k, j in enumerate(joints):
            p = j.PositionWorld
            out[f, k] = (p.x, p.y, p.z)
    return out


def pybvh_positions(path: str) -> np.ndarray:
    import pybvh

    return pybvh.read_bvh_file(str(path)).joint_positions()


SIDES = {"evalkit": evalkit_positions, "bvhio 1.5": bvhio_positions, "pybvh 0.9": pybvh_positions}


def warm(fn, path: str, repeat: int) -> tuple[float, np.ndarray]:
    out = fn(path)  # untimed: imports and first-call set-up
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        out = fn(path)
        best = min(best, time.process_time() - t)
    return best, out


def cold(name: str, path: str, runs: int) -> float:
    """Best CPU time of ``runs`` fresh processes that import, read and solve once."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_motion_load as b; "
            f"b.SIDES[{name!r}]({path!r})")
    best = np.inf
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True, cwd=str(ROOT),
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime))
    return best


def short_files(path: str, n: int, out: Path, length: int = 200) -> list[str]:
    """``n`` distinct ``length``-frame windows of ``path`` written as BVH files in ``out``."""
    from evalkit.motion import read_bvh, write_bvh

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = read_bvh(path, units="m", up="y")
    starts = np.linspace(0, m.n_frames - length, n).round().astype(int)
    files = []
    for k, a in enumerate(starts):
        f = out / f"w{k:04d}.bvh"
        write_bvh(m.slice(int(a), int(a) + length), f, precision=5)
        files.append(str(f))
    return files


def part_short(path: str, n: int, repeat: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        files = short_files(path, n, Path(tmp))
        sides = {}
        for name, fn in SIDES.items():
            try:
                fn(files[0])  # imports and first-call set-up, untimed
                sides[name] = fn
            except ImportError as exc:
                print(f"{name}: not installed ({exc}); pip install -e '.[bench]'")
        rows = dict.fromkeys(sides, np.inf)
        for _ in range(repeat):  # the sides alternate, so that each sees the same machine load
            for name, fn in sides.items():
                t = time.process_time()
                for f in files:
                    fn(f)
                rows[name] = min(rows[name], time.process_time() - t)
    print(f"{n} files of 200 frames (windows of {Path(path).name}): read + world positions, CPU, best of {repeat} passes")
    base = rows["evalkit"]
    for name, t in rows.items():
        print(f"  {name:12s} {t / n * 1000:7.2f} ms per file  ({t / base:.2f}x evalkit's)")


def main() -> None:
    from evalkit.data import sample_path

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(sample_path("cmu", "01_01.bvh")))
    ap.add_argument("--repeat", type=int, default=3, help="warm runs per side (best)")
    ap.add_argument("--cold", type=int, default=2, help="fresh-process runs per side (best)")
    ap.add_argument("--short", type=int, default=0, metavar="N",
                    help="time N 200-frame windows of the file instead (see the docstring)")
    args = ap.parse_args()
    path = str(Path(args.file).resolve())
    if args.short:
        part_short(path, args.short, args.repeat)
        return
    results = {}
    for name, fn in SIDES.items():
        try:
            t_warm, pos = warm(fn, path, args.repeat)
        except ImportError as exc:
            print(f"{name}: not installed ({exc}); pip install -e '.[bench]'")
            continue
        results[name] = (t_warm, cold(name, path, args.cold), pos)
    ours = results["evalkit"][2]
    print(f"file: {Path(path).name}: {ours.shape[0]} frames x {ours.shape[1]} joints; CPU seconds, "
          f"warm = best of {args.repeat} in-process runs after a warm-up, cold = best of {args.cold} fresh processes "
          "(import + read + FK)")
    print(f"{'':12s} {'warm':>10s} {'cold':>10s} {'warm ratio':>11s} {'cold ratio':>11s}  positions agree")
    tw0, tc0, _ = results["evalkit"]
    for name, (tw, tc, pos) in results.items():
        same = pos.shape == ours.shape and np.allclose(pos, ours, atol=1e-3 * np.abs(ours).max())
        print(f"{name:12s} {tw * 1000:8.1f}ms {tc * 1000:8.0f}ms {tw / tw0:10.1f}x {tc / tc0:10.1f}x  {same}")


if __name__ == "__main__":
    main()
