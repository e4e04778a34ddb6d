"""Pairwise / CMOS analysis: one row per comparison (pair of systems), tidy DataFrames out.

Scores are signed, positive = the first system of the comparison better (see
:func:`reports.table.canonical_pairs`). Every comparison gets: n, mean CMOS with a Student-t CI
and a participant-clustered bootstrap CI, median, shares preferring A / equal / B with Wilson
CIs, a Wilcoxon signed-rank test against 0 (stated ``zero_method``), an exact sign test, Holm
correction across comparisons, the rank-biserial correlation and the common-language effect size.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from reports import stats as st
from reports.table import canonical_pairs, system_order


def cmos_summary(scores, participants, *, confidence: float = 0.95, n_boot: int = 2000,
                 rng: np.random.Generator | None = None, zero_method: str = "pratt") -> dict:
    """All per-comparison statistics of one set of signed scores (see module doc).

    ``scores``: (n,) signed answers; ``participants``: (n,) rater ids for the clustered
    bootstrap. Returns a flat dict (NaN where a statistic is undefined, e.g. CIs with n = 1).
    """
    rng = rng or np.random.default_rng(0)
    x = np.asarray(scores, float)
    n = x.size
    mean, tlo, thi = st.t_ci(x, confidence)
    blo, bhi = st.percentile_ci(st.cluster_bootstrap_means(x, participants, n_boot, rng), confidence)
    na, ne, nb = int(np.sum(x > 0)), int(np.sum(x == 0)), int(np.sum(x < 0))
    out = {
        "n": n, "n_participants": int(pd.Series(participants).nunique()),
        "mean": mean, "t_low": tlo, "t_high": thi, "boot_low": blo, "boot_high": bhi,
        "median": float(np.median(x)) if n else math.nan,
        "sd": float(x.std(ddof=1)) if n > 1 else math.nan,
    }
    for name, k in (("a", na), ("equal", ne), ("b", nb)):
        lo, hi = st.wilson_ci(k, n, confidence)
        out[f"share_{name}"] = k / n if n else math.nan
        out[f"share_{name}_low"], out[f"share_{name}_high"] = lo, hi
    w = st.wilcoxon_test(x, zero_method)
    out.update({"wilcoxon_W": w["W"], "r_plus": w["r_plus"], "r_minus": w["r_minus"],
                "p_wilcoxon": w["p"]})
    s = st.sign_test(x)
    out.update({"p_sign": s["p"]})
    out["rank_biserial"] = st.rank_biserial(x, zero_method)
    out["cles"] = st.cles(x)
    return out


def pairwise_table(ratings: pd.DataFrame, *, confidence: float = 0.95, n_boot: int = 2000,
                   seed: int = 0, zero_method: str = "pratt", order: list[str] | None = None,
                   alpha: float = 0.05) -> pd.DataFrame:
    """Per-comparison statistics of pairwise ratings (one scale), Holm-corrected across comparisons.

    ``ratings``: validated long-format rows of a pairwise scale. Returns one row per comparison
    with the columns of :func:`cmos_summary` plus ``comparison``, ``system_a``, ``system_b``,
    ``scale``, ``p_holm`` (Wilcoxon p adjusted) and ``significant`` (p_holm < alpha).
    """
    systems = order or system_order(ratings)
    pairs = canonical_pairs(ratings, systems)
    rank = {s: i for i, s in enumerate(systems)}
    pairs = pairs.assign(_ra=pairs["system_a"].map(rank), _rb=pairs["system_b"].map(rank))
    pairs = pairs.sort_values(["_ra", "_rb"], kind="stable")
    rng = np.random.default_rng(seed)
    rows = []
    for comp, g in pairs.groupby("comparison", sort=False):
        row = {"comparison": comp, "system_a": g["system_a"].iloc[0],
               "system_b": g["system_b"].iloc[0], "scale": g["scale"].iloc[0]}
        row.update(cmos_summary(g["score"].to_numpy(), g["participant"].to_numpy(),
                                confidence=confidence, n_boot=n_boot, rng=rng,
                                zero_method=zero_method))
        rows.append(row)
    df = pd.DataFrame(rows)
    df["p_holm"] = st.holm(df["p_wilcoxon"].to_numpy())
    df["significant"] = df["p_holm"] < alpha
    return df


def position_bias(ratings: pd.DataFrame, *, confidence: float = 0.95,
                  zero_method: str = "pratt") -> pd.DataFrame:
    """Left/right bias: does the side a system is shown on change the answer?

    Each pairwise answer is re-expressed as a preference for the LEFT video/sound
    (score if system_a was on the left, -score if on the right); with randomised sides this is 0
    in expectation. Tests: Wilcoxon against 0 and exact sign test, per comparison and overall
    ("all"). Rows with unknown side are skipped; an empty table when no side is known.
    """
    pairs = canonical_pairs(ratings)
    pairs = pairs[pairs["side_shown"].isin(["left", "right"])]
    cols = ["comparison", "n", "mean_left", "t_low", "t_high", "share_left", "p_wilcoxon", "p_sign"]
    if pairs.empty:
        return pd.DataFrame(columns=cols)
    left = np.where(pairs["side_shown"] == "left", pairs["score"], -pairs["score"])
    pairs = pairs.assign(left_score=left)
    rows = []
    groups = list(pairs.groupby("comparison", sort=False)) + [("all", pairs)]
    for comp, g in groups:
        x = g["left_score"].to_numpy(float)
        m, lo, hi = st.t_ci(x, confidence)
        nz = x[x != 0]
        rows.append({"comparison": comp, "n": x.size, "mean_left": m, "t_low": lo, "t_high": hi,
                     "share_left": float(np.mean(nz > 0)) if nz.size else math.nan,
                     "p_wilcoxon": st.wilcoxon_test(x, zero_method)["p"],
                     "p_sign": st.sign_test(x)["p"]})
    return pd.DataFrame(rows, columns=cols)


def significance_matrix(table: pd.DataFrame, systems: list[str], *, p_col: str = "p_holm",
                        alpha: float = 0.05, effect_col: str = "mean") -> pd.DataFrame:
    """k x k matrix: +1 row system significantly preferred over column system, -1 the reverse,
    0 not significant, NaN never compared. ``table`` has system_a, system_b, effect and p columns
    (effect > 0 = system_a better)."""
    m = pd.DataFrame(np.nan, index=systems, columns=systems)
    for r in table.itertuples(index=False):
        a, b = r.system_a, r.system_b
        p, eff = getattr(r, p_col), getattr(r, effect_col)
        if a not in m.index or b not in m.index:
            continue
        v = 0.0 if not (np.isfinite(p) and p < alpha) else float(np.sign(eff))
        m.loc[a, b], m.loc[b, a] = v, -v
    return m
