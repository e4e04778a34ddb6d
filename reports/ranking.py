"""Bradley–Terry ranking of systems from pairwise answers, with a bootstrap over participants.

Model: P(i beats j) = 1 / (1 + exp(-(b_i - b_j))) with log-strengths ``b`` (centred, mean 0).
Graded answers carry weights (GENEA style: a strong win counts 4, a weak win 2, a tie 1 for each
side). Elo scale: ``elo = 1000 + 400 * b / ln(10)`` (a 400-point gap = 10:1 odds).

Speed: the bootstrap is over participants, so each participant's weighted win matrix is built
once; a bootstrap round is then a weighted sum of those matrices, and all rounds are fitted at
once by a batched Newton iteration on (rounds, k) log-strengths (k x k systems, Hessian solved
per round with ``numpy.linalg.solve``). This is hand-written because no maintained library fits
thousands of small BT models in one vectorised call; refitting a generic logistic regression per
round (the GENEA analysis) is ~100x slower, see ``bench/bench_reports_bt.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from reports.table import SCALES, system_order

ELO_BASE = 1000.0
ELO_PER_LOGIT = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class BattleWeights:
    """Weights of graded pairwise answers: the winner of a clear/strong win gets ``strong``, of a
    slight/weak win ``weak``; a tie gives ``tie`` to each side. An answer is "strong" when its
    |score| is the scale's maximum (e.g. +-2 on cmos5/genea, +-3 on cmos7), weak otherwise."""

    strong: float = 4.0
    weak: float = 2.0
    tie: float = 1.0

    def __post_init__(self):
        if min(self.strong, self.weak, self.tie) < 0 or max(self.strong, self.weak) <= 0:
            raise InputError("battle weights must be >= 0 with a positive win weight")


@dataclass
class BTResult:
    """Bradley–Terry fit: ``table`` (one row per system, best first), bootstrap draws
    ``boot`` (rounds, k) of centred log-strengths (NaN rows = rounds without a finite MLE),
    ``win_fraction`` (k x k weighted share of row wins over column), settings."""

    table: pd.DataFrame
    boot: np.ndarray
    n_participants: int
    systems: list[str]
    win_fraction: pd.DataFrame
    n_boot: int
    n_failed: int
    weights: BattleWeights
    confidence: float
    notes: list[str] = field(default_factory=list)
    #: (system_i, system_j) in system order -> (answers, raters) on that pair.
    pair_counts: dict = field(default_factory=dict)


def participant_win_matrices(ratings: pd.DataFrame, systems: list[str] | None = None,
                             weights: BattleWeights = BattleWeights()) -> tuple[list[str], list[str], np.ndarray]:
    """(systems, participants, W) with W[p, i, j] = weighted wins of system i over j by rater p.

    ``ratings``: validated pairwise rows. W has shape (participants, k, k), zero diagonal.
    """
    systems = systems or system_order(ratings)
    idx = {s: i for i, s in enumerate(systems)}
    k = len(systems)
    parts, pcode = np.unique(ratings["participant"].astype(str).to_numpy(), return_inverse=True)
    a = ratings["system_a"].map(idx).to_numpy()
    b = ratings["system_b"].map(idx).to_numpy()
    if np.isnan(a.astype(float)).any() or np.isnan(b.astype(float)).any():
        absent = sorted(set(ratings["system_a"]).union(ratings["system_b"]) - set(idx))
        raise InputError(f"ratings mention system(s) not in the given system list: {', '.join(absent)}")
    score = ratings["score"].to_numpy(float)
    top = ratings["scale"].map(lambda s: SCALES[s].high).to_numpy(float)
    mag = np.where(np.abs(score) >= top, weights.strong, weights.weak)
    W = np.zeros((len(parts), k, k))
    win_a, win_b, tie = score > 0, score < 0, score == 0
    np.add.at(W, (pcode[win_a], a[win_a], b[win_a]), mag[win_a])
    np.add.at(W, (pcode[win_b], b[win_b], a[win_b]), mag[win_b])
    np.add.at(W, (pcode[tie], a[tie], b[tie]), weights.tie)
    np.add.at(W, (pcode[tie], b[tie], a[tie]), weights.tie)
    return systems, list(parts), W


def strongly_connected(W: np.ndarray) -> np.ndarray:
    """Whether the "i beat j at least once" graph of each (…, k, k) win matrix is strongly
    connected — the condition (Ford 1957) for a finite Bradley–Terry MLE. Returns (...) bools."""
    k = W.shape[-1]
    reach = (W > 0) | np.eye(k, dtype=bool)
    for _ in range(max(1, math.ceil(math.log2(max(k, 2))))):
        reach = (reach.astype(np.float64) @ reach.astype(np.float64)) > 0
    return reach.all(axis=(-1, -2))


def _loglik(beta: np.ndarray, W: np.ndarray) -> np.ndarray:
    d = beta[..., :, None] - beta[..., None, :]
    return -(W * np.logaddexp(0.0, -d)).sum(axis=(-1, -2))


def fit_bradley_terry(W: np.ndarray, *, tol: float = 1e-10, max_iter: int = 100) -> np.ndarray:
    """Maximum-likelihood log-strengths for one (k, k) or many (B, k, k) weighted win matrices.

    Newton's method with step halving, all matrices at once; ``b[0]`` is held at 0 during the
    fit (identifiability) and the result is centred to mean 0. Matrices whose win graph is not
    strongly connected have no finite MLE and give NaN rows. Returns (k,) or (B, k).
    """
    W = np.asarray(W, float)
    single = W.ndim == 2
    if single:
        W = W[None]
    B, k, _ = W.shape
    ok = strongly_connected(W)
    beta = np.zeros((B, k))
    N = W + np.swapaxes(W, -1, -2)
    wins = W.sum(axis=-1)
    active = ok.copy()
    ll = _loglik(beta, W)
    for _ in range(max_iter):
        if not active.any():
            break
        ia = np.flatnonzero(active)
        b, Wa, Na = beta[ia], W[ia], N[ia]
        P = 1.0 / (1.0 + np.exp(-(b[:, :, None] - b[:, None, :])))
        grad = wins[ia] - (Na * P).sum(axis=-1)
        V = Na * P * (1.0 - P)  # off-diagonal information
        info = -V
        diag = V.sum(axis=-1)
        info[:, np.arange(k), np.arange(k)] = diag
        step = np.zeros_like(b)
        step[:, 1:] = np.linalg.solve(info[:, 1:, 1:], grad[:, 1:, None])[..., 0]
        t = np.ones(len(ia))
        new = b + step
        new_ll = _loglik(new, Wa)
        for _h in range(30):  # step halving where the likelihood did not improve
            worse = new_ll < ll[ia] - 1e-12
            if not worse.any():
                break
            t[worse] /= 2
            new[worse] = b[worse] + t[worse, None] * step[worse]
            new_ll[worse] = _loglik(new[worse], Wa[worse])
        beta[ia], ll[ia] = new, new_ll
        done = np.abs(t[:, None] * step).max(axis=1) < tol
        active[ia[done]] = False
    beta -= beta.mean(axis=1, keepdims=True)
    beta[~ok] = np.nan
    return beta[0] if single else beta


def bradley_terry(ratings: pd.DataFrame, *, weights: BattleWeights = BattleWeights(),
                  n_boot: int = 2000, seed: int = 0, confidence: float = 0.95,
                  systems: list[str] | None = None) -> BTResult:
    """Fit Bradley–Terry to pairwise ``ratings`` with CIs from a participant bootstrap.

    Each bootstrap round draws as many participants as there are (G), with replacement, and
    refits on all their answers. Rounds whose win graph is not strongly connected (a system never
    wins or never loses) have no finite estimate; they are counted in ``n_failed`` and left out.
    Interval (:func:`bootstrap_se`): estimate +- t(G - 1) x SE, SE = bootstrap SD x sqrt(G/(G-1))
    — the participant bootstrap's SD is biased low by sqrt((G-1)/G) and a normal quantile ignores
    that SE itself is estimated from G raters; plain percentile intervals covered 92 % at GENEA's
    size in ``bench/bench_reports_coverage.py``, this interval >= 94 %. Table columns: system,
    rank, log_strength, se, ci_low, ci_high, elo, elo_low, elo_high, answers (rows involving the
    system), win_share (weighted share of wins).
    """
    systems, parts, Wp = participant_win_matrices(ratings, systems, weights)
    W = Wp.sum(axis=0)
    beta = fit_bradley_terry(W)
    notes = []
    if not np.all(np.isfinite(beta)):
        notes.append("the full data have no finite Bradley–Terry estimate: some system never "
                     "wins or never loses against the rest (win graph not strongly connected)")
    rng = np.random.default_rng(seed)
    P = len(parts)
    if P >= 2 and n_boot > 0:
        draws = rng.multinomial(P, np.full(P, 1.0 / P), size=n_boot).astype(float)  # (B, P)
        Wb = np.einsum("bp,pij->bij", draws, Wp, optimize=True)
        boot = fit_bradley_terry(Wb)
    else:
        boot = np.full((max(n_boot, 0), len(systems)), np.nan)
        if P < 2:
            notes.append("bootstrap CIs need at least 2 participants")
    failed = int(np.sum(~np.isfinite(boot).all(axis=1))) if boot.size else 0
    if failed and P >= 2:
        notes.append(f"{failed} of {n_boot} bootstrap rounds had no finite estimate and were left out")
    se = bootstrap_se(boot, P)
    h = t_quantile(confidence, P) * se
    lo, hi = beta - h, beta + h
    n_ans = [int(((ratings["system_a"] == s) | (ratings["system_b"] == s)).sum()) for s in systems]
    tot = W.sum(axis=1) + W.sum(axis=0)
    share = np.divide(W.sum(axis=1), tot, out=np.full(len(systems), np.nan), where=tot > 0)
    table = pd.DataFrame({
        "system": systems, "log_strength": beta, "se": se, "ci_low": lo, "ci_high": hi,
        "elo": ELO_BASE + ELO_PER_LOGIT * beta, "elo_low": ELO_BASE + ELO_PER_LOGIT * lo,
        "elo_high": ELO_BASE + ELO_PER_LOGIT * hi, "answers": n_ans, "win_share": share,
    })
    table = table.sort_values("log_strength", ascending=False, kind="stable").reset_index(drop=True)
    table.insert(1, "rank", np.arange(1, len(table) + 1))
    denom = W + W.T
    frac = np.divide(W, denom, out=np.full_like(W, np.nan), where=denom > 0)
    return BTResult(table=table, boot=boot, n_participants=P, systems=systems,
                    win_fraction=pd.DataFrame(frac, index=systems, columns=systems),
                    n_boot=n_boot, n_failed=failed, weights=weights, confidence=confidence,
                    notes=notes, pair_counts=_pair_counts(ratings, systems))


def _pair_counts(ratings: pd.DataFrame, systems: list[str]) -> dict:
    rank = {s: i for i, s in enumerate(systems)}
    a, b = ratings["system_a"].map(rank), ratings["system_b"].map(rank)
    lo = np.where(a <= b, ratings["system_a"], ratings["system_b"])
    hi = np.where(a <= b, ratings["system_b"], ratings["system_a"])
    df = pd.DataFrame({"a": lo, "b": hi, "p": ratings["participant"].to_numpy()})
    g = df.groupby(["a", "b"], sort=False)["p"].agg(["size", "nunique"])
    return {k: (int(v["size"]), int(v["nunique"])) for k, v in g.iterrows()}


def bootstrap_se(boot: np.ndarray, n_clusters: int) -> np.ndarray:
    """Cluster-bootstrap standard errors of the columns of ``boot`` (rounds, m), rounds with a NaN
    left out, scaled by sqrt(G / (G - 1)) for ``n_clusters`` = G resampled clusters (the
    bootstrap variance of a mean of G clusters is (G - 1)/G of the usual unbiased estimate).
    NaN with fewer than 2 clusters or 2 finite rounds."""
    boot = np.asarray(boot, float)
    m = boot.shape[1] if boot.ndim == 2 else 0
    ok = np.isfinite(boot).all(axis=1) if boot.size else np.zeros(0, bool)
    if n_clusters < 2 or ok.sum() < 2:
        return np.full(m, np.nan)
    return boot[ok].std(axis=0, ddof=1) * math.sqrt(n_clusters / (n_clusters - 1))


def t_quantile(confidence: float, n_clusters: int) -> float:
    """Two-sided t quantile on G - 1 degrees of freedom (NaN for G < 2)."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + confidence / 2, n_clusters - 1)) if n_clusters >= 2 else math.nan


def bt_difference_table(res: BTResult, alpha: float | None = None) -> pd.DataFrame:
    """Every pair of systems: difference of log-strengths with SIMULTANEOUS intervals and
    multiplicity-adjusted p-values over all k (k - 1) / 2 pairs — the primary pairwise analysis
    of a dense pairwise design, and the source of the significance matrix.

    Max-|z| bootstrap (as in Westfall & Young's single-step max-T): for each bootstrap round the
    largest |d* - d| / sd over all pairs; its ``confidence`` quantile c covers all pairs at once.
    c is then carried to a t distribution on G - 1 degrees of freedom (same tail area) and applied
    to SE = sd x sqrt(G/(G-1)), as for the per-system intervals. ``p_adjusted``: share of rounds
    whose max-|z| reaches the pair's observed |d|/SE (carried the same way), so
    ``p_adjusted < 1 - confidence`` exactly when the interval excludes 0 (up to the bootstrap's
    resolution). ``significant``: the interval excludes 0. Columns: system_a, system_b,
    difference, se, ci_low, ci_high, p_adjusted, significant, comparisons (answers on the pair),
    raters (participants who rated the pair).
    """
    from scipy import stats

    k = len(res.systems)
    full = dict(zip(res.table["system"], res.table["log_strength"]))
    ii, jj = np.triu_indices(k, 1)
    G = res.n_participants
    cols = ["system_a", "system_b", "difference", "se", "ci_low", "ci_high", "p_adjusted", "significant",
            "comparisons", "raters"]
    if len(ii) == 0:
        return pd.DataFrame(columns=cols)
    d = np.array([full[res.systems[i]] - full[res.systems[j]] for i, j in zip(ii, jj)])
    boot = res.boot[:, ii] - res.boot[:, jj] if res.boot.size else np.zeros((0, len(ii)))
    ok = np.isfinite(boot).all(axis=1) if boot.size else np.zeros(0, bool)
    se = bootstrap_se(boot, G)
    lo = hi = p_adj = np.full(len(ii), np.nan)
    if np.isfinite(se).all() and ok.sum() >= 2:
        sd = se / math.sqrt(G / (G - 1))
        safe = np.where(sd > 0, sd, np.inf)
        M = np.max(np.abs(boot[ok] - d) / safe, axis=1)  # (rounds,)
        c_z = float(np.quantile(M, res.confidence))
        c_t = float(stats.t.ppf(1 - stats.norm.sf(c_z), G - 1))
        lo, hi = d - c_t * se, d + c_t * se
        with np.errstate(divide="ignore", invalid="ignore"):
            z_obs = np.where(se > 0, np.abs(d) / se, np.where(d != 0, np.inf, 0.0))
        z_eq = stats.norm.isf(stats.t.sf(z_obs, G - 1))
        p_adj = (1.0 + (M[None, :] >= z_eq[:, None]).sum(axis=1)) / (M.size + 1.0)
    sig = np.isfinite(lo) & ((lo > 0) | (hi < 0))
    pairs = res.pair_counts
    rows = {"system_a": [res.systems[i] for i in ii], "system_b": [res.systems[j] for j in jj],
            "difference": d, "se": se, "ci_low": lo, "ci_high": hi, "p_adjusted": p_adj,
            "significant": sig,
            "comparisons": [pairs.get((res.systems[i], res.systems[j]), (0, 0))[0] for i, j in zip(ii, jj)],
            "raters": [pairs.get((res.systems[i], res.systems[j]), (0, 0))[1] for i, j in zip(ii, jj)]}
    return pd.DataFrame(rows, columns=cols)


#: Fewer participants than this make a participant bootstrap unreliable (few distinct resamples).
MIN_BOOT_PARTICIPANTS = 5


def bootstrap_warnings(res: BTResult, n_participants: int) -> list[str]:
    """Cautions about the Bradley–Terry bootstrap CIs: most rounds without a finite estimate
    (the CIs then describe only the rounds where every system both won and lost) and very few
    participants."""
    out = []
    if res.n_boot and res.n_failed > 0.5 * res.n_boot:
        out.append(f"Caution: {res.n_failed} of {res.n_boot} bootstrap rounds "
                   f"({res.n_failed / res.n_boot:.0%}) had no finite estimate and were left out; the "
                   "CIs come from the remaining rounds only and are not trustworthy.")
    if n_participants < MIN_BOOT_PARTICIPANTS:
        out.append(f"Caution: only {n_participants} participant(s); a bootstrap over so few "
                   "participants gives unreliable CIs.")
    return out
