"""SIMULATED pairwise ratings from a known Bradley–Terry model, for tests, benchmarks and demos.

Nothing here is real data: every table made here carries ``attrs["notes"]`` saying so, and
anything built from it must say so too (e.g. ``build_report(..., banner=...)``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from reports.table import validate_ratings

SIMULATED_NOTE = "SIMULATED ratings (constructed from a known model, not collected from people)"


def simulate_pairwise(n_answers: int = 500, n_systems: int = 8, n_raters: int = 20, *,
                      n_items: int = 30, seed: int = 0, strengths=None, scale: str = "genea",
                      tie_share: float = 0.15, strong_share: float = 0.5, left_bias: float = 0.0,
                      rater_sd: float = 0.0) -> tuple[pd.DataFrame, np.ndarray]:
    """Graded pairwise answers drawn from a Bradley–Terry model; returns (ratings, strengths).

    Each answer: a random rater, item and pair of systems, a random screen side; the left
    stimulus gains ``left_bias`` logits; with probability ``tie_share`` the answer is a tie,
    otherwise A wins with the BT probability and the win is strong with ``strong_share``.
    ``rater_sd``: SD of per-rater noise added to the strengths. Scores use the scale's extremes
    for strong wins (cmos5/genea: +-2 strong, +-1 weak; pref3: +-1).
    """
    rng = np.random.default_rng(seed)
    beta = np.asarray(strengths, float) if strengths is not None else np.linspace(1.0, -1.0, n_systems)
    k = beta.size
    names = [f"S{i + 1}" for i in range(k)]
    rater_noise = rng.normal(0.0, rater_sd, size=(n_raters, k)) if rater_sd > 0 else np.zeros((n_raters, k))
    pairs = np.array([rng.choice(k, 2, replace=False) for _ in range(n_answers)])
    raters = rng.integers(0, n_raters, n_answers)
    items = rng.integers(0, n_items, n_answers)
    a_left = rng.random(n_answers) < 0.5
    b = beta[None, :] + rater_noise[raters]
    d = b[np.arange(n_answers), pairs[:, 0]] - b[np.arange(n_answers), pairs[:, 1]]
    d = d + np.where(a_left, left_bias, -left_bias)
    p_a = 1.0 / (1.0 + np.exp(-d))
    tie = rng.random(n_answers) < tie_share
    a_wins = rng.random(n_answers) < p_a
    strong = rng.random(n_answers) < strong_share
    top = {"genea": 2, "cmos5": 2, "cmos7": 3, "ccr7": 3, "pref3": 1, "ab3": 1}[scale]
    weak = 1 if top > 1 else 1
    mag = np.where(strong, top, weak)
    score = np.where(tie, 0, np.where(a_wins, mag, -mag)).astype(float)
    shown = np.where(a_left, score, -score)  # on-screen answer: positive = left preferred
    df = pd.DataFrame({
        "participant": [f"r{r + 1:02d}" for r in raters],
        "item": [f"item{i + 1:02d}" for i in items],
        "system_a": [names[i] for i in pairs[:, 0]], "system_b": [names[j] for j in pairs[:, 1]],
        "side_shown": np.where(a_left, "left", "right"),
        "raw_answer": [f"left {v:+g}" if v else "equal" for v in shown],
        "score": score, "scale": scale, "response_time_s": np.round(rng.gamma(4.0, 1.5, n_answers), 2),
        "flags": "",
    })
    df["trial"] = df.groupby("participant").cumcount() + 1
    out = validate_ratings(df, "simulated")
    out.attrs["notes"] = [SIMULATED_NOTE]
    out.attrs["source"] = "simulated"
    out.attrs["simulated"] = True
    return out, beta - beta.mean()


def _mean_logistic(delta: np.ndarray, noise_sd: float) -> np.ndarray:
    """E[logistic(delta + e)] for e ~ N(0, noise_sd^2) (Gauss–Hermite, 60 nodes)."""
    if noise_sd <= 0:
        return 1.0 / (1.0 + np.exp(-delta))
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    return (w * (1.0 / (1.0 + np.exp(-(delta[..., None] + noise_sd * x))))).sum(axis=-1)


def population_truth(strengths, *, rater_sd: float, tie_share: float = 0.15,
                     strong_share: float = 0.5, weights=None, top: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """What the analyses of :func:`simulate_pairwise` data estimate, in the population of raters.

    Returns (Bradley–Terry log-strengths (k,), centred; expected signed score of each ordered pair
    (k, k), positive = row system better). With rater noise the pooled Bradley–Terry fit estimates
    the population-averaged strengths (the fit to the expected weighted win matrix), which are
    smaller in size than ``strengths``; this is the truth its intervals must cover.
    """
    from reports.ranking import BattleWeights, fit_bradley_terry

    weights = weights or BattleWeights()
    beta = np.asarray(strengths, float)
    delta = beta[:, None] - beta[None, :]
    q = _mean_logistic(delta, rater_sd * np.sqrt(2.0))  # each system gets its own rater noise
    win_w = strong_share * weights.strong + (1 - strong_share) * weights.weak
    W = (1 - tie_share) * q * win_w + tie_share * weights.tie
    np.fill_diagonal(W, 0.0)
    mag = strong_share * top + (1 - strong_share) * 1
    score = (1 - tie_share) * (2 * q - 1) * mag
    np.fill_diagonal(score, 0.0)
    return fit_bradley_terry(W * 1000.0), score


def coverage_simulation(n_reps: int = 200, *, n_answers: int = 500, n_systems: int = 8,
                        n_raters: int = 20, n_items: int = 30, rater_sd: float = 0.7,
                        n_boot: int = 1000, confidence: float = 0.95, seed: int = 0,
                        progress=None) -> pd.DataFrame:
    """Coverage of the report's intervals on SIMULATED studies with a known truth.

    Each of ``n_reps`` studies draws ``n_answers`` graded answers (:func:`simulate_pairwise`,
    rater noise ``rater_sd`` logits per system) and computes every interval the report gives;
    the truth is :func:`population_truth`. Returns one row per interval: ``interval``, ``role``
    (default / secondary / old), ``coverage`` (share of intervals covering the truth; for the
    simultaneous intervals the share of studies where ALL pairs are covered), ``intervals``
    (how many were checked) and ``mean_width``.
    """
    from reports.pairwise import pairwise_table
    from reports.ranking import bradley_terry, bt_difference_table
    from reports import stats as st

    strengths = np.linspace(1.0, -1.0, n_systems)
    b_true, s_true = population_truth(strengths, rater_sd=rater_sd)
    names = [f"S{i + 1}" for i in range(n_systems)]
    hits: dict[str, list] = {}

    def add(name, lo, hi, truth):
        lo, hi, truth = (np.asarray(v, float) for v in (lo, hi, truth))
        ok = np.isfinite(lo) & np.isfinite(hi)
        hits.setdefault(name, []).append(((lo[ok] <= truth[ok]) & (truth[ok] <= hi[ok]), hi[ok] - lo[ok]))

    rng = np.random.default_rng(seed)
    for r in range(n_reps):
        s = int(rng.integers(2 ** 31))
        df, _ = simulate_pairwise(n_answers, n_systems, n_raters, n_items=n_items, seed=s,
                                  rater_sd=rater_sd, strengths=strengths)
        bt = bradley_terry(df, n_boot=n_boot, seed=s, confidence=confidence, systems=names)
        idx = [names.index(x) for x in bt.table["system"]]
        add("Bradley–Terry strength: t(G-1) x bootstrap SE", bt.table["ci_low"], bt.table["ci_high"],
            b_true[idx])
        pct = np.array([st.percentile_ci(bt.boot[:, i], confidence) for i in range(n_systems)])
        add("Bradley–Terry strength: bootstrap percentile", pct[:, 0], pct[:, 1], b_true)
        dt = bt_difference_table(bt)
        ii, jj = np.triu_indices(n_systems, 1)
        truth_d = b_true[ii] - b_true[jj]
        cov = (dt["ci_low"].to_numpy() <= truth_d) & (truth_d <= dt["ci_high"].to_numpy())
        hits.setdefault("Bradley–Terry differences: simultaneous (all pairs)", []).append(
            (np.array([cov.all()]), (dt["ci_high"] - dt["ci_low"]).to_numpy()))
        t = pairwise_table(df, confidence=confidence, n_boot=n_boot, seed=s, order=names)
        ti = t["system_a"].map(names.index).to_numpy()
        tj = t["system_b"].map(names.index).to_numpy()
        truth = s_true[ti, tj]
        add("mean score per pair: cluster-robust t (raters)", t["cl_low"], t["cl_high"], truth)
        add("mean score per pair: cluster bootstrap percentile", t["boot_low"], t["boot_high"], truth)
        add("mean score per pair: Student t (answers independent)", t["t_low"], t["t_high"], truth)
        if progress:
            progress(r + 1)
    role = {"Bradley–Terry strength: t(G-1) x bootstrap SE": "default",
            "Bradley–Terry differences: simultaneous (all pairs)": "default",
            "mean score per pair: cluster-robust t (raters)": "secondary (dense design)",
            "Bradley–Terry strength: bootstrap percentile": "replaced",
            "mean score per pair: cluster bootstrap percentile": "secondary",
            "mean score per pair: Student t (answers independent)": "secondary (labelled)"}
    rows = []
    for name, parts in hits.items():
        c = np.concatenate([p[0] for p in parts])
        w = np.concatenate([p[1] for p in parts])
        rows.append({"interval": name, "role": role[name], "coverage": float(c.mean()) if c.size else np.nan,
                     "intervals": int(c.size), "mean_width": float(np.mean(w)) if w.size else np.nan})
    return pd.DataFrame(rows)


def simulate_cmos_clustered(n_raters: int = 20, answers_per_rater: int = 10, *, mean: float = 0.3,
                            rater_sd: float = 0.7, noise_sd: float = 1.0, seed: int = 0,
                            scale: str = "cmos5") -> pd.DataFrame:
    """SIMULATED answers of ONE comparison where raters differ: rater r has a lean b_r ~
    N(0, rater_sd^2); each answer is round(mean + b_r + e), e ~ N(0, noise_sd^2), clipped to the
    scale. Answers of one rater are correlated — the case where an interval that treats answers
    as independent is too narrow."""
    from reports.table import SCALES

    rng = np.random.default_rng(seed)
    sc = SCALES[scale]
    lean = rng.normal(0.0, rater_sd, n_raters)
    raters = np.repeat(np.arange(n_raters), answers_per_rater)
    x = mean + lean[raters] + rng.normal(0.0, noise_sd, raters.size)
    score = np.clip(np.round(x), sc.low, sc.high)
    df = pd.DataFrame({"participant": [f"r{r + 1:02d}" for r in raters],
                       "item": [f"item{i % 12 + 1:02d}" for i in range(raters.size)],
                       "system_a": "A", "system_b": "B", "score": score, "scale": scale})
    df["trial"] = df.groupby("participant").cumcount() + 1
    out = validate_ratings(df, "simulated")
    out.attrs.update(notes=[SIMULATED_NOTE], source="simulated", simulated=True)
    return out


def cmos_truth(*, mean: float = 0.3, rater_sd: float = 0.7, noise_sd: float = 1.0,
               scale: str = "cmos5") -> float:
    """Population mean score of :func:`simulate_cmos_clustered` (exact: a rounded, clipped normal
    with SD sqrt(rater_sd^2 + noise_sd^2))."""
    from scipy import stats

    from reports.table import SCALES

    sc = SCALES[scale]
    sd = float(np.hypot(rater_sd, noise_sd))
    levels = np.arange(sc.low, sc.high + 1)
    upper = np.append(levels[:-1] + 0.5, np.inf)
    lower = np.insert(levels[1:] - 0.5, 0, -np.inf)
    p = stats.norm.cdf(upper, mean, sd) - stats.norm.cdf(lower, mean, sd)
    return float(np.sum(levels * p))


def cmos_coverage_simulation(n_reps: int = 1000, *, n_raters: int = 20, answers_per_rater: int = 10,
                             rater_sd: float = 0.7, n_boot: int = 1000, confidence: float = 0.95,
                             seed: int = 0) -> pd.DataFrame:
    """Coverage of the per-comparison intervals on SIMULATED clustered CMOS answers
    (:func:`simulate_cmos_clustered`); one row per interval as in :func:`coverage_simulation`."""
    from reports.pairwise import cmos_summary

    truth = cmos_truth(rater_sd=rater_sd)
    rng = np.random.default_rng(seed)
    hits = {"cluster-robust t (raters)": [], "cluster bootstrap percentile": [],
            "Student t (answers independent)": []}
    widths = {k: [] for k in hits}
    for _ in range(n_reps):
        s = int(rng.integers(2 ** 31))
        df = simulate_cmos_clustered(n_raters, answers_per_rater, rater_sd=rater_sd, seed=s)
        r = cmos_summary(df["score"].to_numpy(), df["participant"].to_numpy(), confidence=confidence,
                         n_boot=n_boot, rng=np.random.default_rng(s))
        for name, lo, hi in (("cluster-robust t (raters)", r["cl_low"], r["cl_high"]),
                             ("cluster bootstrap percentile", r["boot_low"], r["boot_high"]),
                             ("Student t (answers independent)", r["t_low"], r["t_high"])):
            hits[name].append(lo <= truth <= hi)
            widths[name].append(hi - lo)
    role = {"cluster-robust t (raters)": "default", "cluster bootstrap percentile": "secondary",
            "Student t (answers independent)": "secondary (labelled)"}
    return pd.DataFrame([{"interval": f"one comparison, {n_raters} raters x {answers_per_rater}: {k}",
                          "role": role[k], "coverage": float(np.mean(v)), "intervals": len(v),
                          "mean_width": float(np.mean(widths[k]))} for k, v in hits.items()])
