"""Scoring speed: the full metric set, the support-polygon distance, and 10,000 clips.

Three parts, each on real CMU capture (the bundled samples; clips are 200-frame windows of them):

1. ``rate``   — frames per second of the full metric set (``analyse`` + ``score_analysis`` with a
   reference set) on 200-frame windows and on whole clips, and AMC loading, now and at the
   revision before the speed work (``--before``), alternating in subprocesses in one run.
2. ``hull``   — the ZMP-outside-support distance: evalkit's vectorised convex-hull distance against
   shapely 2's vectorised ``convex_hull`` + ``distance`` (the peer, ``bench`` extra), same inputs,
   same run, both timed alike.
3. ``batch``  — write N (default 10,000) distinct 200-frame BVH clips (sliding windows of the
   bundled clips, their mirror images and 60 fps resamplings), then score them all with
   ``score_paths`` (joblib, ``--jobs`` workers); optionally the same on a local Dask cluster
   (``--dask``), checking that both paths give identical tables.

    .venv/bin/python bench/bench_score.py rate
    .venv/bin/python bench/bench_score.py hull
    .venv/bin/python bench/bench_score.py batch --clips 10000 --jobs 2 [--dask] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np


def _clock() -> float:
    """CPU seconds of this process: the machine is shared, and wall time would measure the
    other users' load as much as ours (both sides of every comparison use this clock)."""
    return time.process_time()


def _bundled():
    from evalkit.data import cmu_clips
    from evalkit.motion import load_motion

    return [load_motion(p) for p in cmu_clips()]


#: The scoring code before its speed work (``rate --before`` measures it too).
BEFORE_REV = "e5fed01"


def _rate_windows(length: int | None):
    """The bundled clips (``length=None``) or their ``length``-frame windows, every 150 frames."""
    from evalkit.data import cmu_clips
    from evalkit.motion import load_motion

    clips = [load_motion(p) for p in cmu_clips()]
    if length is None:
        return clips
    return [m[s:s + length] for m in clips for s in range(1, m.n_frames - length, 150)]


def measure_rate(repeat: int = 3) -> dict:
    """Frames/s of the full metric set (``analyse`` + ``score_analysis`` with a reference set)
    on 200-frame windows and on the whole bundled clips, each clip as if freshly loaded
    (no cached positions); best of ``repeat`` passes. Also AMC load frames/s."""
    from evalkit.data import cmu_clips
    from evalkit.features.reference import reference_from_motions
    from evalkit.features.score import analyse, score_analysis
    from evalkit.motion import load_motion

    ref = reference_from_motions(_rate_windows(None))
    sets = {label: _rate_windows(length) for label, length in (("200-frame clips", 200), ("whole clips", None))}
    best = dict.fromkeys(sets, np.inf)
    for _ in range(repeat):  # the two sets alternate, so that their ratio sees one machine load
        for label, clips in sets.items():
            fresh = [m.with_(rotations=m.rotations, translations=m.translations) for m in clips]
            t0 = _clock()
            for m in fresh:
                score_analysis(analyse(m), ref)
            best[label] = min(best[label], _clock() - t0)
    out = {}
    for label, clips in sets.items():
        frames = sum(m.n_frames for m in clips)
        out[label] = (len(clips), frames, frames / best[label])
    amc = [p for p in cmu_clips() if p.suffix == ".amc"]
    best = np.inf
    for _ in range(repeat):
        t0 = _clock()
        n = sum(load_motion(p).n_frames for p in amc)
        best = min(best, _clock() - t0)
    out["AMC load"] = (len(amc), n, n / best)
    return out


def _export(rev: str) -> Path:
    """``evalkit/`` of git revision ``rev`` in a temporary folder (for ``rate --before``)."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    dest = Path(tempfile.mkdtemp(prefix=f"evalkit-{rev}-"))
    archive = subprocess.run(["git", "-C", str(root), "archive", rev, "evalkit"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def _rate_in(pythonpath: Path, repeat: int) -> dict:
    import json
    import subprocess
    import sys

    code = ("import json, sys; sys.path.insert(0, %r); import bench_score; "
            "print(json.dumps(bench_score.measure_rate(%d)))" % (str(Path(__file__).parent), repeat))
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    res = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(pythonpath), check=True,
                         capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def part_rate(repeat: int = 3, before: str | None = BEFORE_REV, rounds: int = 3) -> None:
    """Frames/s now and (``before``) at an earlier revision, alternating the two in
    subprocesses ``rounds`` times so that both see the same machine load; best of all."""
    root = Path(__file__).resolve().parents[1]
    sides = {"now": root}
    if before:
        sides[f"before ({before})"] = _export(before)
    best: dict[str, dict] = {}
    try:
        for _ in range(rounds):
            for name, path in sides.items():
                r = _rate_in(path, repeat)
                for k, v in r.items():
                    if k not in best.setdefault(name, {}) or v[2] > best[name][k][2]:
                        best[name][k] = v
    finally:
        for name, path in sides.items():
            if path != root:
                shutil.rmtree(path, ignore_errors=True)
    print(f"full metric set (analyse + score_analysis with a reference set), bundled CMU capture, "
          f"best of {rounds} alternating rounds x {repeat} passes")
    for k in best["now"]:
        n, frames, now = best["now"][k]
        line = f"  {k:16s} ({n} clips, {frames:,} frames): now {now:9,.0f} frames/s"
        if len(best) > 1:
            name = next(s for s in best if s != "now")
            old = best[name][k][2]
            line += f" | {name} {old:9,.0f} frames/s | x{now / old:.2f}"
        print(line)
    for name, r in best.items():  # a short clip's cost per frame against a whole clip's
        if "200-frame clips" in r and "whole clips" in r:
            print(f"  per-frame cost, 200-frame / whole clips, {name}: "
                  f"{r['whole clips'][2] / r['200-frame clips'][2]:.2f}x")


def shapely_hull_distance(zmp: np.ndarray, pts: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The peer: shapely 2's vectorised ``convex_hull`` and ``distance`` (GEOS), one geometry
    per frame, as its documentation shows for arrays of geometries."""
    import shapely

    f_idx, k_idx = np.nonzero(valid)
    frames, inverse = np.unique(f_idx, return_inverse=True)
    hulls = shapely.convex_hull(shapely.multipoints(pts[f_idx, k_idx], indices=inverse))
    out = np.full(len(zmp), np.nan)
    ok = ~np.isnan(zmp[frames]).any(axis=1)
    out[frames[ok]] = shapely.distance(hulls[ok], shapely.points(zmp[frames[ok]]))
    return out


def part_hull(frames: int = 20000, repeat: int = 3) -> None:
    from evalkit.data import sample_path
    from evalkit.features.physics import distance_outside_hull, support_points
    from evalkit.features.score import analyse
    from evalkit.motion import load_motion

    an = analyse(load_motion(sample_path("cmu", "01_01.bvh")))
    pts, valid = support_points(an.track, an.contacts)
    zmp = an.physics.zmp
    reps = int(np.ceil(frames / len(pts)))
    pts, valid, zmp = np.tile(pts, (reps, 1, 1))[:frames], np.tile(valid, (reps, 1))[:frames], np.tile(zmp, (reps, 1))[:frames]

    def timed(fn):
        out = fn()  # warm-up, the same for both sides
        best = np.inf
        for _ in range(repeat):
            t0 = _clock()
            out = fn()
            best = min(best, _clock() - t0)
        return best, out

    t_ours, ours = timed(lambda: distance_outside_hull(zmp, pts, valid))
    try:
        import shapely
    except ImportError:
        print("shapely not installed (pip install -e '.[bench]'): no peer")
        return
    t_peer, peer = timed(lambda: shapely_hull_distance(zmp, pts, valid))
    ok = np.isfinite(ours) & np.isfinite(peer)
    print(f"ZMP distance outside the support polygon, {frames} frames of CMU 01_01 (tiled); CPU seconds, "
          f"best of {repeat} after a warm-up")
    print(f"  evalkit vectorised (numpy)            : {t_ours:8.4f} s")
    print(f"  shapely {shapely.__version__} convex_hull + distance: {t_peer:8.4f} s   ratio x{t_peer / t_ours:,.1f}")
    print(f"  max |difference| = {np.abs(ours[ok] - peer[ok]).max():.2e} m on {ok.sum()} frames with a ZMP; "
          f"NaN where the other is not: {int((np.isfinite(ours) != np.isfinite(peer)).sum())}")


def make_clips(n: int, out: Path, length: int = 200) -> list[Path]:
    """Write ``n`` distinct ``length``-frame BVH windows of the bundled clips (and their mirror
    images and 60 fps versions) to ``out``; returns the paths."""
    from evalkit.motion import mirror, resample, write_bvh

    base = _bundled()
    sources = [(m.name, m) for m in base] + [(m.name + "_mir", mirror(m)) for m in base] + \
              [(m.name + "_60", resample(m, 60.0)) for m in base] + [(m.name + "_mir60", resample(mirror(m), 60.0)) for m in base]
    windows = [(name, m, s) for name, m in sources for s in range(1, m.n_frames - length + 1)]
    rng = np.random.default_rng(0)
    pick = rng.choice(len(windows), size=min(n, len(windows)), replace=False)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    from tqdm import tqdm

    for k in tqdm(sorted(pick), desc="writing clips", unit="clip"):
        name, m, s = windows[k]
        p = out / f"{name}_{s:05d}.bvh"
        if not p.exists():
            write_bvh(m.slice(s, s + length), p, precision=5)
        paths.append(p)
    return paths


def part_batch(n: int, jobs: int, dask: bool, keep: str | None) -> None:
    from evalkit.features.batch import BatchOptions, score_paths

    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="evalkit-bench-"))
    try:
        t0 = time.perf_counter()
        paths = make_clips(n, root / "clips")
        print(f"wrote/found {len(paths)} clips of 200 frames in {time.perf_counter() - t0:.1f} s ({root / 'clips'})")
        t0 = time.perf_counter()
        table = score_paths(paths, BatchOptions(), jobs=jobs)
        wall = time.perf_counter() - t0
        failed = int((table["error"] != "").sum())
        print(f"scored {len(table)} clips ({failed} failed) with --jobs {jobs} on {os.cpu_count()} cores: "
              f"{wall:.1f} s = {len(table) / wall:.1f} clips/s = {len(table) * 200 / wall:,.0f} frames/s")
        if dask:
            from distributed import LocalCluster

            with LocalCluster(n_workers=jobs, threads_per_worker=1, host="127.0.0.1", dashboard_address=None) as cl:
                t0 = time.perf_counter()
                remote = score_paths(paths, BatchOptions(), scheduler=cl.scheduler_address)
                wall_d = time.perf_counter() - t0
            import pandas as pd

            pd.testing.assert_frame_equal(table, remote)
            print(f"Dask LocalCluster ({jobs} worker processes): {wall_d:.1f} s, identical table: yes")
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description="evalkit scoring benchmarks (see module docstring)")
    ap.add_argument("part", choices=["rate", "hull", "batch", "all"])
    ap.add_argument("--clips", type=int, default=10000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--dask", action="store_true", help="also run the batch on a local Dask cluster")
    ap.add_argument("--dir", default=None, help="keep generated clips here (reused on the next run)")
    ap.add_argument("--before", default=BEFORE_REV,
                    help=f"rate: also measure this git revision, alternating (default {BEFORE_REV}, "
                         "before the speed work; '' to skip)")
    ap.add_argument("--rounds", type=int, default=3, help="rate: alternating rounds of each side (best of all)")
    args = ap.parse_args()
    if args.part in ("rate", "all"):
        part_rate(before=args.before or None, rounds=args.rounds)
    if args.part in ("hull", "all"):
        part_hull()
    if args.part in ("batch", "all"):
        part_batch(args.clips, args.jobs, args.dask, args.dir)


if __name__ == "__main__":
    main()
