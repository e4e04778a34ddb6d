"""Coverage of the report's intervals, by simulation with a known truth (SIMULATED data).

Two scenarios, both SIMULATED (nothing here is collected from people):

1. GENEA's size: 500 graded battles among 8 systems from 20 raters whose strengths differ from
   the population's by N(0, 0.7^2) logits per system (``reports.simulate.coverage_simulation``).
   The truth is the population-averaged Bradley–Terry strength (the fit to the expected weighted
   win matrix, ``population_truth``). Checked: the default Bradley–Terry interval (estimate ±
   t(G−1) × bootstrap SE × sqrt(G/(G−1))), the plain percentile interval it replaced, the
   simultaneous intervals of all 28 differences (family-wise: a study counts as covered only if
   all 28 are), and the per-comparison mean-score intervals.
2. One CMOS comparison answered 10 times by each of 20 raters with a rater lean of SD 0.7
   (``cmos_coverage_simulation``): where answers of a rater are correlated, the Student-t
   interval over answers is far too narrow and the cluster-robust default is not.

Usage (the full run takes ~10 min on 2 free cores; the tests run a few repetitions only)::

    .venv/bin/python bench/bench_reports_coverage.py [--reps 400] [--cmos-reps 1000] [--boot 1000]
"""

from __future__ import annotations

import argparse
import sys
import time

import pandas as pd

from reports.simulate import cmos_coverage_simulation, coverage_simulation


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=400, help="simulated GENEA-sized studies (default 400)")
    ap.add_argument("--cmos-reps", type=int, default=1000, help="simulated CMOS comparisons (default 1000)")
    ap.add_argument("--boot", type=int, default=1000, help="bootstrap rounds per study (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    pd.set_option("display.width", 160)
    pd.set_option("display.max_colwidth", 70)
    t0 = time.perf_counter()

    def tick(i):
        if i % 25 == 0:
            print(f"  {i}/{args.reps} studies ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)

    genea = coverage_simulation(args.reps, n_boot=args.boot, seed=args.seed, progress=tick)
    cmos = cmos_coverage_simulation(args.cmos_reps, n_boot=args.boot, seed=args.seed)
    res = pd.concat([genea, cmos], ignore_index=True)
    print("SIMULATED data. Coverage of nominal 95 % intervals "
          f"({args.reps} GENEA-sized studies, {args.cmos_reps} CMOS comparisons, {args.boot} bootstrap rounds):")
    print(res.to_string(index=False, formatters={"coverage": "{:.1%}".format, "mean_width": "{:.3f}".format}))
    defaults = res[res["role"] == "default"]
    ok = bool((defaults["coverage"] >= 0.94).all())
    print(f"default intervals >= 94 %: {'yes' if ok else 'NO'} "
          f"(lowest {defaults['coverage'].min():.1%}); {time.perf_counter() - t0:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
