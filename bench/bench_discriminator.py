"""Scoring speed of the naturalness discriminator against its peers on the same clips.

Peers, run in the same process on the same clips (the bundled CMU captures, resampled by each
method as it needs):

* ``evalkit.features.score.score_motion`` -- the ``evalkit score`` metric pipeline (what
  ``--model`` adds the discriminator to);
* the Ren-style GMM likelihood baseline (per-frame features + five Gaussian mixtures);
* the transition-cost baseline.

Printed: seconds per clip-second of motion for each, and the discriminator's time as a ratio to
each peer. Timing only; correctness is in tests/models.

Run:  .venv/bin/python bench/bench_discriminator.py [--repeat R]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _time(fn, clips, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for c in clips:
            fn(c)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="repetitions; the fastest counts (default 3)")
    args = ap.parse_args()

    from evalkit.data import cmu_clips
    from evalkit.features.score import score_motion as metric_pipeline
    from evalkit.models.baselines import RenGMMBaseline, TransitionCostBaseline
    from evalkit.models.dataset import segments, load_natural
    from evalkit.models.discriminator import score_naturalness
    from evalkit.models.training import load_model
    from evalkit.motion import load_motion

    model, _ = load_model("default")
    clips = [load_motion(p) for p in cmu_clips()]
    seconds = sum(c.duration for c in clips)
    natural = [s for c in load_natural([p for p in cmu_clips()]) for s in segments(c)]
    gmm = RenGMMBaseline(n_components=8)
    gmm.fit([gmm.prepare(s) for s in natural])  # fitted on the same clips: timing only
    tc = TransitionCostBaseline()

    runs = {
        "discriminator (window features + model)": lambda m: score_naturalness(model, m),
        "evalkit score metrics (features.score_motion)": lambda m: metric_pipeline(m),
        "Ren-style GMM baseline": lambda m: gmm.score_samples([gmm.prepare(m)]),
        "transition-cost baseline": lambda m: tc.score_samples([tc.prepare(m)]),
    }
    times = {name: _time(fn, clips, args.repeat) for name, fn in runs.items()}
    print(f"{len(clips)} bundled CMU clips, {seconds:.1f} s of motion at 120 fps, best of {args.repeat}")
    print(f"{'method':48s} {'total s':>8s} {'ms per clip-second':>19s}")
    for name, t in times.items():
        print(f"{name:48s} {t:8.3f} {1000 * t / seconds:19.2f}")
    d = times["discriminator (window features + model)"]
    for name, t in times.items():
        if not name.startswith("discriminator"):
            print(f"discriminator / {name}: {d / t:.2f}x the time")


if __name__ == "__main__":
    main()
