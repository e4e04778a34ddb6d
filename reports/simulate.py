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
    top = {"genea": 2, "cmos5": 2, "cmos7": 3, "pref3": 1}[scale]
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
