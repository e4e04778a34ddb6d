"""Kovar distance matrix of two 10-second 120 fps clips: evalkit's closed form (row blocks of
matrix products) against a straightforward per-pair loop (align each window pair with the
closed-form 2-D alignment, transform, sum squared distances), on the same real capture.

Input: the bundled CMU 01_01.bvh (playground, 120 fps), frames 1-1200 and 1201-2400 (frame 0
is cgspeed's added T-pose), 25 weighted joints ("paths" weights), a 1/3 s window (40 frames).

The loop (our restatement of the textbook per-pair computation, not a package) is timed on a
random sample of pairs (``--pairs``, default 4000) and extrapolated linearly to all pairs (each
pair costs the same); ``--full`` times it on every pair instead (minutes). Both sides are timed
alike: CPU seconds, best of ``--repeat`` runs after one untimed run. Both results are checked to
agree on the sampled pairs.

Run:  .venv/bin/python bench/bench_synth_distance.py [--pairs N] [--full] [--repeat R]
"""

from __future__ import annotations

import argparse

import numpy as np

from evalkit.data import sample_path
from evalkit.motion import load_motion
from evalkit.synth.distance import joint_weights, pair_distance, point_cloud_distance


def per_pair_loop(pos_a: np.ndarray, pos_b: np.ndarray, weights: np.ndarray, window: int, pairs) -> np.ndarray:
    """The straightforward version: one alignment and one distance per window pair."""
    sel = weights > 0
    w = np.tile(weights[sel], window)
    out = np.empty(len(pairs))
    for n, (i, j) in enumerate(pairs):
        p = pos_a[i:i + window][:, sel].reshape(-1, 3)
        q = pos_b[j:j + window][:, sel].reshape(-1, 3)
        out[n] = pair_distance(p, q, w)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=4000, help="pairs timed for the loop (default: 4000)")
    ap.add_argument("--full", action="store_true", help="time the loop on every pair (slow)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each side (best is reported)")
    ap.add_argument("--seconds", type=float, default=10.0, help="clip length, seconds (default: 10)")
    args = ap.parse_args()

    m = load_motion(sample_path("cmu", "01_01.bvh"))
    n = int(round(args.seconds * m.fps))
    a = m.positions[1:1 + n]
    b = m.positions[1 + n:1 + 2 * n]
    w = joint_weights(m.skeleton)
    k = int(round(m.fps / 3.0))
    n_pairs = (len(a) - k + 1) * (len(b) - k + 1)
    print(f"clips: 2 x {len(a)} frames at {m.fps:g} fps ({args.seconds:g} s), {int((w > 0).sum())} weighted joints, "
          f"window {k} frames, {n_pairs:,} window pairs")

    from timing import best_cpu  # bench/timing.py (this script's folder is on sys.path)

    def timed(fn):
        return best_cpu(fn, args.repeat)

    best, D = timed(lambda: point_cloud_distance(a, b, w, k))
    print(f"both sides: CPU seconds, best of {args.repeat} runs after a warm-up run")
    print(f"evalkit point_cloud_distance (closed form, row blocks): {best:.3f} s")

    rng = np.random.default_rng(0)
    if args.full:
        pairs = [(i, j) for i in range(D.shape[0]) for j in range(D.shape[1])]
    else:
        flat = rng.choice(n_pairs, size=min(args.pairs, n_pairs), replace=False)
        pairs = list(zip(*np.unravel_index(flat, D.shape)))
    t_loop, loop = timed(lambda: per_pair_loop(a, b, w, k, pairs))
    ref = np.array([D[i, j] for i, j in pairs])
    err = float(np.abs(loop - ref).max())
    per_pair = t_loop / len(pairs)
    total = per_pair * n_pairs
    how = "timed on every pair" if args.full else f"timed on {len(pairs):,} random pairs, extrapolated x{n_pairs / len(pairs):.0f}"
    print(f"per-pair loop: {per_pair * 1e6:.1f} us/pair -> {total:.1f} s for all pairs ({how})")
    print(f"max |difference| on the timed pairs: {err:.2e} m")
    print(f"ratio loop / evalkit: {total / best:.0f}x")


if __name__ == "__main__":
    main()
