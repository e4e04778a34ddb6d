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

from evalkit.stats import cmos_interval
from reports import stats as st
from reports.table import canonical_pairs, system_order


#: A comparison with fewer answers is not tested on its own (its cell says "too few"): with 2-9
#: answers a Wilcoxon test cannot, or can barely, reach p < 0.05, and "n.s." would read as "no
#: difference".
MIN_TEST_ANSWERS = 10
#: Comparisons answered by fewer raters get a warning: their intervals rest on a handful of people.
MIN_RATERS = 5


def cmos_summary(scores, participants, *, confidence: float = 0.95, n_boot: int = 2000,
                 rng: np.random.Generator | None = None, zero_method: str = "pratt") -> dict:
    """All per-comparison statistics of one set of signed scores (see module doc).

    ``scores``: (n,) signed answers; ``participants``: (n,) rater ids. Intervals of the mean:
    ``cl_low/cl_high`` cluster-robust t over raters (the default, :func:`reports.stats.cluster_t_ci`),
    ``boot_low/boot_high`` participant-cluster bootstrap percentile, ``t_low/t_high`` Student t
    treating answers as independent (secondary, labelled). Tests (Wilcoxon, sign) only from
    :data:`MIN_TEST_ANSWERS` answers on (``tested``). Returns a flat dict (NaN where a statistic is
    undefined, e.g. CIs with n = 1).
    """
    rng = rng or np.random.default_rng(0)
    x = np.asarray(scores, float)
    n = x.size
    ci = cmos_interval(x, participants, confidence)
    mean, tlo, thi, clo, chi = ci["mean"], ci["t_low"], ci["t_high"], ci["cl_low"], ci["cl_high"]
    blo, bhi = st.percentile_ci(st.cluster_bootstrap_means(x, participants, n_boot, rng), confidence)
    na, ne, nb = int(np.sum(x > 0)), int(np.sum(x == 0)), int(np.sum(x < 0))
    out = {
        "n": n, "n_participants": int(pd.Series(participants).nunique()),
        "mean": mean, "cl_low": clo, "cl_high": chi, "t_low": tlo, "t_high": thi,
        "boot_low": blo, "boot_high": bhi,
        "median": float(np.median(x)) if n else math.nan,
        "sd": float(x.std(ddof=1)) if n > 1 else math.nan,
    }
    for name, k in (("a", na), ("equal", ne), ("b", nb)):
        lo, hi = st.wilson_ci(k, n, confidence)
        out[f"share_{name}"] = k / n if n else math.nan
        out[f"share_{name}_low"], out[f"share_{name}_high"] = lo, hi
    tested = n >= MIN_TEST_ANSWERS
    w = st.wilcoxon_test(x, zero_method) if tested else {"W": math.nan, "r_plus": math.nan,
                                                          "r_minus": math.nan, "p": math.nan, "method": ""}
    out.update({"tested": tested, "wilcoxon_W": w["W"], "r_plus": w["r_plus"], "r_minus": w["r_minus"],
                "p_wilcoxon": w["p"], "wilcoxon_method": w["method"]})
    out.update({"p_sign": st.sign_test(x)["p"] if tested else math.nan})
    out["rank_biserial"] = st.rank_biserial(x, zero_method)
    out["cles"] = st.cles(x)
    return out


def pairwise_table(ratings: pd.DataFrame, *, confidence: float = 0.95, n_boot: int = 2000,
                   seed: int = 0, zero_method: str = "pratt", order: list[str] | None = None,
                   alpha: float = 0.05) -> pd.DataFrame:
    """Per-comparison statistics of pairwise ratings (one scale), Holm-corrected across comparisons.

    ``ratings``: validated long-format rows of a pairwise scale. Returns one row per comparison
    with the columns of :func:`cmos_summary` plus ``comparison``, ``system_a``, ``system_b``,
    ``scale``, ``p_holm`` (Wilcoxon p adjusted over the tested comparisons), ``significant``
    (p_holm < alpha) and ``few_raters`` (fewer than :data:`MIN_RATERS` raters).
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
    df["few_raters"] = df["n_participants"] < MIN_RATERS
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


#: Cell of :func:`significance_matrix` for a comparison with too few answers to be tested.
TOO_FEW = 2.0


def significance_matrix(table: pd.DataFrame, systems: list[str], *, significant_col: str = "significant",
                        effect_col: str = "mean", tested_col: str = "tested") -> pd.DataFrame:
    """k x k matrix: +1 row system significantly better than column system, -1 worse, 0 not
    significant, :data:`TOO_FEW` not tested (too few answers), NaN never compared.

    ``table``: one row per pair with system_a, system_b, the effect (> 0 = system_a better), a
    boolean ``significant_col`` (already corrected for multiplicity) and optionally a boolean
    ``tested_col``. The matrix draws exactly what the table decided, so figure and table agree.
    """
    m = pd.DataFrame(np.nan, index=systems, columns=systems)
    for r in table.to_dict("records"):
        a, b = r["system_a"], r["system_b"]
        if a not in m.index or b not in m.index:
            continue
        if tested_col in r and not r[tested_col]:
            m.loc[a, b] = m.loc[b, a] = TOO_FEW
            continue
        eff = float(r[effect_col])
        v = float(np.sign(eff)) if bool(r[significant_col]) and np.isfinite(eff) else 0.0
        m.loc[a, b], m.loc[b, a] = v, -v
    return m
