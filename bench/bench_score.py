"""Scoring speed: the full metric set, the support-polygon distance, and 10,000 clips.

Three parts, each on real CMU capture (the bundled samples; clips are 200-frame windows of them):

1. ``rate``   — frames per second of the full metric set (``analyse`` + ``score_analysis`` with a
   reference set), per clip, loading excluded and included.
2. ``hull``   — the ZMP-outside-support distance: evalkit's vectorised convex-hull distance against
   a per-frame loop over ``scipy.spatial.ConvexHull`` (the peer), same inputs, same run.
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


def _bundled():
    from evalkit.data import cmu_clips
    from evalkit.motion import load_motion

    return [load_motion(p) for p in cmu_clips()]


def part_rate(repeat: int = 3) -> None:
    from evalkit.data import cmu_clips
    from evalkit.features.reference import reference_from_motions
    from evalkit.features.score import analyse, score_analysis
    from evalkit.motion import load_motion

    motions = _bundled()
    ref = reference_from_motions(motions)
    frames = sum(m.n_frames for m in motions)
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for m in motions:
            score_analysis(analyse(m), ref)
        best = min(best, time.perf_counter() - t0)
    t0 = time.perf_counter()
    for p in cmu_clips():
        score_analysis(analyse(load_motion(p)), ref)
    with_load = time.perf_counter() - t0
    print(f"full metric set on {len(motions)} bundled CMU clips, {frames} frames @ 120 fps (31 joints)")
    print(f"  metrics only : {best:6.3f} s  -> {frames / best:9,.0f} frames/s")
    print(f"  load + metrics: {with_load:6.3f} s  -> {frames / with_load:9,.0f} frames/s")


def part_hull(frames: int = 20000) -> None:
    from scipy.spatial import ConvexHull, QhullError

    from evalkit.data import sample_path
    from evalkit.features.physics import distance_outside_hull, support_points
    from evalkit.features.score import analyse
    from evalkit.motion import load_motion

    an = analyse(load_motion(sample_path("cmu", "01_01.bvh")))
    pts, valid = support_points(an.track, an.contacts)
    zmp = an.physics.zmp
    reps = int(np.ceil(frames / len(pts)))
    pts, valid, zmp = np.tile(pts, (reps, 1, 1))[:frames], np.tile(valid, (reps, 1))[:frames], np.tile(zmp, (reps, 1))[:frames]

    t0 = time.perf_counter()
    ours = distance_outside_hull(zmp, pts, valid)
    t_ours = time.perf_counter() - t0

    def peer_one(p, q):
        if len(p) == 0 or np.isnan(q).any():
            return np.nan
        try:
            hull = ConvexHull(p)
            v = p[hull.vertices]
            if (hull.equations[:, :2] @ q + hull.equations[:, 2] <= 1e-12).all():
                return 0.0
        except (QhullError, ValueError):  # fewer than 3 points or collinear: segments only
            v = p
        segs = [(v[i], v[j]) for i in range(len(v)) for j in range(i, len(v))]
        return min(np.linalg.norm(q - (a + (np.clip((q - a) @ (b - a) / max((b - a) @ (b - a), 1e-24), 0, 1)) * (b - a)))
                   for a, b in segs)

    t0 = time.perf_counter()
    peer = np.array([peer_one(pts[i][valid[i]], zmp[i]) for i in range(frames)])
    t_peer = time.perf_counter() - t0
    ok = np.isfinite(ours) & np.isfinite(peer)
    print(f"ZMP distance outside the support polygon, {frames} frames of CMU 01_01 (tiled)")
    print(f"  evalkit vectorised : {t_ours:8.4f} s")
    print(f"  scipy ConvexHull loop: {t_peer:8.3f} s   ratio x{t_peer / t_ours:,.0f}")
    print(f"  max |difference| = {np.abs(ours[ok] - peer[ok]).max():.2e} m on {ok.sum()} frames with a ZMP")


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
    args = ap.parse_args()
    if args.part in ("rate", "all"):
        part_rate()
    if args.part in ("hull", "all"):
        part_hull()
    if args.part in ("batch", "all"):
        part_batch(args.clips, args.jobs, args.dask, args.dir)


if __name__ == "__main__":
    main()
