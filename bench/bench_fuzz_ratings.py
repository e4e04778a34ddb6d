"""Hostile rating files at scale: thousands of seeded mutations of a file of every importable
format (``tests/reports/fuzz_ratings.py``) through ``reports.importers.load_input``, with the
format detected and forced. Every case must end in a table or a one-line evalkit error naming the
file, within ``--slow`` seconds (an alarm interrupts a hang).

    python bench/bench_fuzz_ratings.py --cases 5000 [--seed 0]

Prints the counts (read, refused, failures by kind) and the median and largest time per case.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reports.fuzz_ratings import fuzz  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--slow", type=float, default=10.0, help="seconds after which a case is a hang")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="evalkit-fuzz-ratings-"))
    report = fuzz(args.cases, args.seed, work, slow_s=args.slow)
    print(report.summary())
    print(f"time per case: median {statistics.median(report.times) * 1000:.1f} ms, "
          f"max {max(report.times) * 1000:.0f} ms")
    for f in report.failures[:20]:
        print(f"  case {f.case}: {f.kind}: {f.signature}: {f.message[:160]} (kept: {f.file})")
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
