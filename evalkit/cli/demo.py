"""``evalkit demo``: the whole pipeline on the bundled data (the README's first command)."""

from __future__ import annotations

import argparse

from evalkit.cli.common import add_command


def register(sub) -> None:
    p = add_command(sub, run,
        "demo", help="build both studies of record from the bundled data and write one report per study",
        description="Build the locomotion-transitions study (original vs SMG vs BPMG) and the "
                    "gesture-speech study (original vs GMG random/sync/sync+intensity) from the "
                    "bundled CMU capture and LJ Speech recordings, score every stimulus, and write one "
                    "report per study (OUT/<study>/results/report/) plus OUT/index.html linking them. "
                    "Each study's ratings come from SIMULATED raters who take its web test (its pages "
                    "and answer path, on a temporary database); their answers are written to "
                    "OUT/<study>/results/ratings.simulated.csv and every report says they are "
                    "simulated. Takes under a minute on 2 cores.")
    p.add_argument("--out", default="evalkit-demo", help="working folder (default: ./evalkit-demo)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes for scoring (default: 1)")
    p.add_argument("--no-ratings", dest="ratings", action="store_false",
                   help="no simulated raters: objective reports only")
    # the default since simulated raters take part in every demo; still accepted
    p.add_argument("--simulate-ratings", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")


def run(args: argparse.Namespace) -> int:
    import time

    from evalkit.demo import run_demo

    t0 = time.perf_counter()
    path = run_demo(args.out, jobs=args.jobs, ratings_on=args.ratings, seed=args.seed)
    print(f"\nreports (one per study): {path}  ({time.perf_counter() - t0:.0f} s)")
    print(f"web test: evalkit serve {args.out}/locomotion-transitions   (or {args.out}/gesture-speech)")
    return 0
