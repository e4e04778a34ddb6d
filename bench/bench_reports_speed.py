"""Speed of a whole report on a GENEA-sized study and on the real MUSHRA data, and the cost of the
Wilcoxon method choice.

Data: a SIMULATED GENEA-sized battles file (500 graded battles, 8 systems, 20 raters, written in
the GENEA leaderboard's column layout) and the REAL speech-codec MUSHRA ratings from ../shared
(skipped when absent). Each report runs as ``evalkit report FILE --out DIR`` would (same defaults:
2,000 bootstrap rounds, robustness models, agreement), timed in-process after imports.

Peer for the Wilcoxon tests: scipy.stats.wilcoxon with its default ``method='auto'`` (what the
report used before: an exhaustive permutation for n <= 13 with ties), against the report's choice
(exact without ties/zeros for n <= 50, else the normal approximation with tie and continuity
correction), on the per-comparison answers of the same battles.

Usage::

    .venv/bin/python bench/bench_reports_speed.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from reports import build_report, load_input
from reports.simulate import simulate_pairwise
from reports.stats import wilcoxon_test
from reports.table import canonical_pairs

SHARED_MUSHRA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "ratings" / \
    "mushra-speech-codec" / "ratings_formated.csv"


def genea_sized_battles(path: Path) -> Path:
    df, _ = simulate_pairwise(n_answers=500, n_systems=8, n_raters=20, n_items=40, seed=1, rater_sd=0.7)
    winner = np.where(df.score > 0, "model_a", np.where(df.score < 0, "model_b", "tie"))
    strong = np.where(df.score.abs() == 2, "True", np.where(df.score == 0, "", "False"))
    pd.DataFrame({"user": df.participant, "input_code": df["item"], "model_a": df.system_a,
                  "model_b": df.system_b, "winner": winner, "is_strong": strong}).drop_duplicates().to_csv(
        path, index=False)  # an exact repeat of a battle row would be refused as a duplicate
    return path


def timed_report(src: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of reading the file and writing the report."""
    t0, c0 = time.perf_counter(), time.process_time()
    _, ratings = load_input(src)
    build_report(ratings, None, out, progress=False)
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        battles = genea_sized_battles(tmp / "battles.csv")
        build_report(load_input(battles)[1], None, tmp / "warm", progress=False)  # imports, font cache
        rows = [("GENEA-sized battles (SIMULATED, 500 answers, 8 systems)", timed_report(battles, tmp / "g"))]
        if SHARED_MUSHRA.exists():
            rows.append(("speech-codec MUSHRA (real, 1,512 ratings)", timed_report(SHARED_MUSHRA, tmp / "m")))
        else:
            print("(../shared not found: MUSHRA report skipped)")
        for name, (wall, cpu) in rows:
            print(f"report  {name}: {wall:.1f} s wall, {cpu:.1f} s CPU")
        pairs = canonical_pairs(load_input(battles)[1])
        groups = [g["score"].to_numpy() for _, g in pairs.groupby("comparison")]
        t0 = time.perf_counter()
        ours = [wilcoxon_test(x)["p"] for x in groups]
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        auto = [stats.wilcoxon(x, zero_method="pratt", method="auto").pvalue for x in groups]
        t_auto = time.perf_counter() - t0
        diff = np.nanmax(np.abs(np.array(ours) - np.array(auto)))
        print(f"wilcoxon  {len(groups)} comparisons: evalkit {t_ours:.3f} s, scipy method='auto' "
              f"{t_auto:.2f} s ({t_auto / t_ours:.0f}x); largest p difference {diff:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
