"""Speed of the distribution metrics.

1. ``frechet``: our Fréchet distance (symmetric eigendecompositions, batched) against the formula
   of the field's scripts (``scipy.linalg.sqrtm`` of ``Σ₁Σ₂``), both timed in this run on the same
   covariances, with the largest difference between them. The peer is our restatement of the
   public scripts' formula (scipy used as those scripts use it).
2. ``scale``: ``evalkit compare`` of N clips of 10 s at 30 fps (``--fps``, ``--seconds MIN MAX``) against a reference set, with
   ``--jobs``; clips are made from the bundled CMU capture (resampled to 30 fps, cut into 10-s
   pieces from different start frames, mirrored every other clip) and written as BVH first (not
   timed; ``--data DIR`` keeps them for the next run). Reports the wall time of the whole
   comparison and of its two phases (reading + per-clip features; set metrics + bootstrap).

    python bench/bench_distribution.py frechet
    python bench/bench_distribution.py scale --clips 1000 --ref-clips 1000 --jobs 2
    python bench/bench_distribution.py scale --clips 4400 --ref-clips 4400 --fps 20 --seconds 2 10
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def bench_frechet(reps: int = 20) -> None:
    """Both methods on one BLAS thread (the machine is shared; multi-threaded LAPACK on small
    matrices there is slower for both, and more so for the batched eigendecompositions)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        _bench_frechet(reps)


def _bench_frechet(reps: int) -> None:
    from evalkit.distribution.frechet import frechet_distance, frechet_distance_sqrtm, gaussian

    rng = np.random.default_rng(0)
    print("dims  ours (ms)  scipy sqrtm (ms)  ratio  max |difference|")
    for d, n in ((32, 3000), (54, 1000), (128, 3000), (512, 5000)):
        a = rng.normal(size=(n, d)) @ rng.normal(size=(d, d)) / np.sqrt(d)
        b = rng.normal(0.2, 1.1, size=(n, d)) @ rng.normal(size=(d, d)) / np.sqrt(d)
        g1, g2 = gaussian(a), gaussian(b)
        r = max(2, reps // (1 + d // 128))
        t = time.perf_counter()
        for _ in range(r):
            ours = float(frechet_distance(*g1, *g2))
        t_ours = (time.perf_counter() - t) / r
        t = time.perf_counter()
        for _ in range(r):
            ref = frechet_distance_sqrtm(*g1, *g2)
        t_ref = (time.perf_counter() - t) / r
        print(f"{d:4d}  {t_ours * 1e3:9.2f}  {t_ref * 1e3:16.2f}  {t_ref / t_ours:5.1f}x  {abs(ours - ref):.2e} "
              f"(value {ours:.4g})")
    # 500 bootstrap replicates of a 32-dim embedding: one batched call vs a loop of sqrtm
    d, b = 32, 500
    mus = rng.normal(size=(b, d))
    covs = np.stack([np.cov(rng.normal(size=(200, d)), rowvar=False) for _ in range(b)])
    t = time.perf_counter()
    batched = frechet_distance(mus, covs, mus[0], covs[0])
    t_b = time.perf_counter() - t
    t = time.perf_counter()
    loop = [frechet_distance_sqrtm(mus[i], covs[i], mus[0], covs[0]) for i in range(b)]
    t_l = time.perf_counter() - t
    print(f"500 bootstrap replicates, 32 dims: batched {t_b * 1e3:.1f} ms, sqrtm loop {t_l * 1e3:.1f} ms "
          f"({t_l / t_b:.1f}x), max |difference| {np.max(np.abs(batched - np.array(loop))):.2e}")


def make_clips(folder: Path, n: int, seconds: float = 10.0, fps: float = 30.0, seed: int = 0,
               max_seconds: float | None = None) -> list[Path]:
    """``n`` BVH clips of ``seconds`` at ``fps`` cut from the bundled capture (see module doc);
    with ``max_seconds``, each clip's length is drawn uniformly from ``seconds``..``max_seconds``."""
    from evalkit.data import SAMPLES_DIR
    from evalkit.motion import load_motion, mirror, resample, write_bvh
    from evalkit.motion.formats import iter_motion_files
    from evalkit.motion.model import concatenate

    folder.mkdir(parents=True, exist_ok=True)
    sources = []
    for f in iter_motion_files([SAMPLES_DIR / "cmu"]):
        m = resample(load_motion(f), fps)
        sources.append(m)
    top = seconds if max_seconds is None else max_seconds
    long = [m for m in sources if m.n_frames >= top * fps] or sources
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        need = int(seconds * fps) if max_seconds is None else int(rng.uniform(seconds, max_seconds) * fps)
        m = long[i % len(long)]
        while m.n_frames < need:
            m = concatenate([m, m])
        s = int(rng.integers(0, m.n_frames - need + 1))
        clip = m[s:s + need]
        if i % 2:
            clip = mirror(clip)
        p = folder / f"clip{i:05d}.bvh"
        write_bvh(clip.with_(name=p.stem), p)
        out.append(p)
    return out


@contextlib.contextmanager
def external_dask(workers: int):
    """A local Dask scheduler and ``workers`` single-threaded worker processes started as their
    own commands (``dask scheduler``, ``dask worker``), as a user's cluster would be; yields its
    address (``None`` with no workers), and stops both on exit."""
    if not workers:
        yield None
        return
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [subprocess.Popen(dask + ["--host", "127.0.0.1", "--port", str(port), "--dashboard-address", ":0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address,
                                       "--nworkers", str(workers), "--nthreads", "1", "--no-dashboard"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=30)


def bench_scale(clips: int, ref_clips: int, jobs: int, score: bool, boot: int, data: str | None = None,
                fps: float = 30.0, seconds: tuple[float, float] = (10.0, 10.0), dask_workers: int = 0) -> None:
    """Wall time of the whole comparison, and of its two phases: per-clip features (in ``jobs``
    worker processes) and the set metrics with their bootstrap (in this process; its CPU time)."""
    from evalkit.distribution.compare import REFERENCE, summarise
    from evalkit.distribution.embedding import load_extractor
    from evalkit.distribution.extract import ExtractOptions, extract_all
    from evalkit.motion.formats import iter_motion_files

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(data) if data else Path(tmp)
        t = time.perf_counter()
        for name, n, seed in (("sys", clips, 1), ("ref", ref_clips, 2)):
            folder = root / f"{name}{n}"
            if len(list(folder.glob("*.bvh"))) != n:
                make_clips(folder, n, seconds[0], fps, seed=seed,
                           max_seconds=None if seconds[0] == seconds[1] else seconds[1])
        print(f"clips of {seconds[0]:g}-{seconds[1]:g} s at {fps:g} fps, cut and resampled from real bundled "
              f"CMU capture, ready in {time.perf_counter() - t:.1f} s (not timed below)")
        ext = load_extractor()
        items = [(str(f), REFERENCE) for f in iter_motion_files([root / f"ref{ref_clips}"])]
        items += [(str(f), "sys") for f in iter_motion_files([root / f"sys{clips}"])]
        load0 = os.getloadavg()[0]
        with external_dask(dask_workers) as scheduler:
            t = time.perf_counter()
            feats = extract_all(items, ExtractOptions(extractor=ext, score=score), jobs=jobs, scheduler=scheduler,
                                progress=False)
            t_feat = time.perf_counter() - t
        t = time.perf_counter()
        cpu = time.process_time()
        res = summarise(feats, ["sys"], ext, n_boot=boot, score=score)
        t_sum = time.perf_counter() - t
        cpu_sum = time.process_time() - cpu
    row = res.table.iloc[0]
    where = f"external Dask scheduler, {dask_workers} worker processes" if dask_workers else f"jobs={jobs}"
    print(f"compare: {clips} system clips vs {ref_clips} reference clips, {where}, score metrics={score}, "
          f"bootstrap={boot}: {t_feat + t_sum:.1f} s wall = features {t_feat:.1f} s + set metrics {t_sum:.1f} s "
          f"({cpu_sum:.1f} s CPU) ({os.cpu_count()} cores, load average {load0:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after); fgd {row['fgd']:.3g} [{row['fgd_ci_low']:.3g}, {row['fgd_ci_high']:.3g}], "
          f"{int(row['n_windows'])} windows, {int(row['n_raw_windows'])} raw-space windows")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("frechet", "scale", "all"), nargs="?", default="all")
    ap.add_argument("--clips", type=int, default=1000)
    ap.add_argument("--ref-clips", type=int, default=1000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=500)
    ap.add_argument("--no-score", action="store_true", help="leave out the per-clip score metrics")
    ap.add_argument("--fps", type=float, default=30.0, help="frame rate the clips are resampled to")
    ap.add_argument("--seconds", type=float, nargs=2, default=(10.0, 10.0), metavar=("MIN", "MAX"),
                    help="clip lengths, drawn uniformly in this range (default 10 10)")
    ap.add_argument("--dask-workers", type=int, default=0,
                    help="run the per-clip features on an external local Dask scheduler with this many workers")
    ap.add_argument("--data", help="keep the generated clips in this folder and reuse them next time")
    a = ap.parse_args()
    if a.what in ("frechet", "all"):
        bench_frechet()
    if a.what in ("scale", "all"):
        bench_scale(a.clips, a.ref_clips, a.jobs, not a.no_score, a.bootstrap, a.data, a.fps, tuple(a.seconds), a.dask_workers)


if __name__ == "__main__":
    main()
