"""Hostile input: ≥ 10,000 mutated files of real capture through the readers and scoring, and
load time against joints and frames.

Uses the seeded mutator shared with the tests (``tests/motion/fuzz.py``): every case must end
in a motion or an evalkit error, none may take over 5 s. Then times loading of generated
hierarchies of 1,000–2,000 joints (chains and fans) and of clips of 1,000–16,000 frames, to
show load time is linear in joints and in frames.

    python bench/bench_fuzz_readers.py --cases 10500 [--score] [--seed 0]

With ``--score`` every file that loads is also scored (the full metric set); without it only
loading is timed (the issue's 5 s limit is for loads).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "motion"))

from fuzz import fuzz, shortened_seeds  # noqa: E402


def run_fuzz(cases: int, seed: int, score: bool, frames: int) -> None:
    from evalkit.data import SAMPLES_DIR
    from evalkit.motion import load_motion

    cmu = SAMPLES_DIR / "cmu"
    work = Path(tempfile.mkdtemp(prefix="evalkit-fuzz-"))
    seeds = shortened_seeds(work / "seeds", bvh=[cmu / "131_01.bvh", cmu / "01_01.bvh", cmu / "131_03.bvh"],
                            amc=[(cmu / "16.asf", cmu / "16_15.amc"), (cmu / "09-run.asf", cmu / "09_06-run.amc"),
                                 (cmu / "07-walk.asf", cmu / "07_05-walk.amc")], frames=frames)

    def load(p: Path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            m = load_motion(p)
            if score:
                from evalkit.features.score import score_motion

                score_motion(m)

    from tqdm import tqdm

    bar = tqdm(total=cases, unit="file", desc="fuzzing", mininterval=5)
    t0 = time.perf_counter()
    report = fuzz(load, seeds, cases, seed, work / "run", slow_s=5.0, progress=lambda i: bar.update(1))
    bar.close()
    print(f"{'load + score' if score else 'load'} of mutated BVH and ASF/AMC ({len(seeds)} seeds of "
          f"{frames} frames, seed {seed}) in {time.perf_counter() - t0:.0f} s")
    print(report.summary())
    for f in report.failures[:20]:
        print(f"  case {f.case}: {f.signature}: {f.message} ({f.file})")
    print(f"failing files kept under {work / 'run' / 'failures'}" if report.failures else f"(scratch: {work})")


def run_linearity() -> None:
    from evalkit.motion.formats.bvh import parse_bvh
    from test_hostile_input import chain_bvh  # same generator as the tests

    def best(text: str) -> float:
        out = []
        for _ in range(3):
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    parse_bvh(text, units="m", up="y")
                except Exception:  # noqa: BLE001 - a stick of 2,000 joints may be refused as no body
                    pass
            out.append(time.process_time() - t0)
        return min(out)

    print("load time (CPU s, best of 3) against joints (2 frames) and frames (30 joints):")
    for deep in (False, True):
        row = []
        for n in (250, 500, 1000, 1999):
            row.append(f"{n}: {best(chain_bvh(n, deep, length=0.001)):.3f}")
        print(f"  {'chain' if deep else 'fan  '} of joints  " + "  ".join(row))
    row = []
    for f in (1000, 2000, 4000, 8000, 16000):
        row.append(f"{f}: {best(chain_bvh(29, False, frames=f)):.3f}")
    print("  frames             " + "  ".join(row))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=10500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--frames", type=int, default=40, help="frames of each seed clip")
    ap.add_argument("--score", action="store_true", help="also score every file that loads")
    ap.add_argument("--skip-linearity", action="store_true")
    args = ap.parse_args()
    if not args.skip_linearity:
        run_linearity()
    run_fuzz(args.cases, args.seed, args.score, args.frames)


if __name__ == "__main__":
    main()
