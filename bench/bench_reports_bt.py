"""Benchmark: Bradley–Terry participant bootstrap, batched Newton vs a logistic regression per round.

Data: SIMULATED GENEA-sized pairwise study (500 graded battles, 8 systems, 20 raters; strong win 4,
weak 2, tie 1 each way). Both methods fit the SAME bootstrap rounds (the same participant draws):

- evalkit: ``reports.ranking.fit_bradley_terry`` on all rounds at once (batched Newton);
- peer: what the GENEA analysis does — per round, build the battle rows of the drawn participants
  (+1 winner / -1 loser indicators, ties as a half win each way, graded sample weights) and refit
  scikit-learn's ``LogisticRegression(fit_intercept=False, C=inf, tol=1e-6)`` (unpenalised, the
  settings of the Chatbot Arena / GENEA leaderboard code).

The peer runs ``--peer-rounds`` rounds (default 1000; ``--peer-rounds 10000`` for the full run)
and its time is also extrapolated to 10,000 rounds; the ratio is per round. The estimates of the
two are compared round by round. Usage::

    .venv/bin/python bench/bench_reports_bt.py [--rounds 10000] [--peer-rounds 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from tqdm import tqdm

from reports.ranking import BattleWeights, bradley_terry, fit_bradley_terry, participant_win_matrices
from reports.simulate import simulate_pairwise
from reports.table import SCALES


def battle_rows(ratings, systems, weights: BattleWeights):
    """Per answer: indicator row (+1 system_a, -1 system_b), outcome, weight; ties give two rows."""
    idx = {s: i for i, s in enumerate(systems)}
    k = len(systems)
    X, y, w, part = [], [], [], []
    top = ratings["scale"].map(lambda s: SCALES[s].high).to_numpy(float)
    for r, t in zip(ratings.itertuples(index=False), top):
        x = np.zeros(k)
        x[idx[r.system_a]], x[idx[r.system_b]] = 1.0, -1.0
        if r.score == 0:
            X += [x, x]
            y += [1, 0]
            w += [weights.tie, weights.tie]
            part += [r.participant, r.participant]
        else:
            X.append(x)
            y.append(1 if r.score > 0 else 0)
            w.append(weights.strong if abs(r.score) >= t else weights.weak)
            part.append(r.participant)
    return np.array(X), np.array(y), np.array(w, float), np.array(part)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10000)
    ap.add_argument("--peer-rounds", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from sklearn.linear_model import LogisticRegression

    ratings, _ = simulate_pairwise(500, 8, 20, seed=args.seed)
    weights = BattleWeights()
    print("data: SIMULATED 500 graded battles, 8 systems, 20 raters (reports.simulate)")

    systems, parts, Wp = participant_win_matrices(ratings, weights=weights)
    P = len(parts)
    rng = np.random.default_rng(args.seed)
    draws = rng.multinomial(P, np.full(P, 1.0 / P), size=args.rounds).astype(float)

    t0 = time.perf_counter()
    res = bradley_terry(ratings, weights=weights, n_boot=args.rounds, seed=args.seed)
    t_full = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = fit_bradley_terry(np.einsum("bp,pij->bij", draws, Wp, optimize=True))
    t_fast = time.perf_counter() - t0
    print(f"evalkit bradley_terry(n_boot={args.rounds}) end to end: {t_full:.2f} s "
          f"({res.n_failed} rounds without finite MLE)")
    print(f"evalkit batched Newton, {args.rounds} rounds: {t_fast:.2f} s "
          f"({1e3 * t_fast / args.rounds:.3f} ms/round)")

    X, y, w, part = battle_rows(ratings, systems, weights)
    rows_of = {p: np.flatnonzero(part == p) for p in parts}
    n_peer = min(args.peer_rounds, args.rounds)
    peer = np.full((n_peer, len(systems)), np.nan)
    t0 = time.perf_counter()
    for b in tqdm(range(n_peer), desc="peer (sklearn per round)", unit="round"):
        sel = np.concatenate([np.repeat(rows_of[p], int(c)) for p, c in zip(parts, draws[b]) if c])
        lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-6, max_iter=1000)
        lr.fit(X[sel], y[sel], sample_weight=w[sel])
        coef = lr.coef_[0]
        peer[b] = coef - coef.mean()
    t_peer = time.perf_counter() - t0
    per_round_peer = t_peer / n_peer
    print(f"peer sklearn LogisticRegression per round, {n_peer} rounds: {t_peer:.2f} s "
          f"({1e3 * per_round_peer:.3f} ms/round; {per_round_peer * args.rounds:.1f} s for "
          f"{args.rounds} rounds{' (extrapolated)' if n_peer < args.rounds else ''})")
    ok = np.isfinite(fast[:n_peer]).all(axis=1)
    diff = np.abs(fast[:n_peer][ok] - peer[ok]).max() if ok.any() else float("nan")
    print(f"agreement on the {int(ok.sum())} common rounds: max |difference| of log-strengths = {diff:.2e}")
    print(f"speed-up (per round, same rounds, same data): {per_round_peer / (t_fast / args.rounds):.0f}x")


if __name__ == "__main__":
    main()
