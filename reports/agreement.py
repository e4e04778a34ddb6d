"""Inter-rater agreement: Krippendorff's alpha with a bootstrap CI.

The point estimate comes from the maintained ``krippendorff`` package (Castro; value-counts
input). The bootstrap CI needs each unit's observed disagreement, which the package does not
expose, and calling it once per bootstrap round is ~50 ms each (minutes for 2,000 rounds); so the
per-unit coincidences of Krippendorff (2011, "Computing Krippendorff's alpha-reliability") are
computed here, vectorised over rounds. The tests check that both give the same alpha and the
worked example of that paper. Missing values are allowed; units with fewer than two values are
not pairable and are ignored.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from reports import stats as st

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _delta2(values: np.ndarray, marg: np.ndarray, level: str) -> np.ndarray:
    """(V, V) squared difference function for sorted distinct ``values`` with marginals ``marg``."""
    v = values.astype(float)
    if level == "nominal":
        return 1.0 - np.eye(v.size)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    if level == "ratio":
        s = v[:, None] + v[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.where(s != 0, (v[:, None] - v[None, :]) / s, 0.0)
        return d ** 2
    if level == "ordinal":
        cum = np.cumsum(marg)  # cum[k] = sum_{g<=k} n_g
        c = np.arange(v.size)
        lo, hi = np.minimum(c[:, None], c[None, :]), np.maximum(c[:, None], c[None, :])
        between = cum[hi] - cum[lo] + marg[lo]  # sum_{g=lo}^{hi} n_g
        return (between - (marg[:, None] + marg[None, :]) / 2.0) ** 2
    raise InputError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")


def _unit_counts(units, values) -> tuple[np.ndarray, np.ndarray]:
    """(counts (U, V) of each value per pairable unit, sorted distinct values (V,))."""
    df = pd.DataFrame({"u": np.asarray(units).astype(str), "v": np.asarray(values, float)})
    df = df[np.isfinite(df["v"])]
    vals = np.unique(df["v"].to_numpy())
    counts = pd.crosstab(df["u"], df["v"]).reindex(columns=vals, fill_value=0).to_numpy(float)
    m = counts.sum(axis=1)
    return counts[m >= 2], vals


def coincidence_alpha(units, values, level: str = "ordinal") -> float:
    """Alpha from this module's own coincidence computation (the one the bootstrap resamples);
    equals :func:`krippendorff_alpha`'s package value (checked in the tests)."""
    counts, vals = _unit_counts(units, values)
    if len(counts) == 0 or vals.size < 2:
        return math.nan
    do_units, de, _, _ = _disagreements(counts, vals, level)
    return float(1.0 - do_units.sum() / de) if de > 0 else math.nan


def _disagreements(counts: np.ndarray, vals: np.ndarray, level: str):
    """(observed disagreement per unit (U,), expected disagreement, pairable values per unit, n)."""
    m = counts.sum(axis=1)
    o_units = (counts[:, :, None] * counts[:, None, :]
               - np.einsum("uc,ck->uck", counts, np.eye(vals.size))) / (m - 1)[:, None, None]
    o = o_units.sum(axis=0)
    marg = o.sum(axis=1)
    n = marg.sum()
    d2 = _delta2(vals, marg, level)
    do_units = np.einsum("uck,ck->u", o_units, d2)
    de = (marg[:, None] * marg[None, :] * d2).sum() / (n - 1)
    return do_units, de, m, n


def krippendorff_alpha(units, values, level: str = "ordinal", *, n_boot: int = 0,
                       seed: int = 0, confidence: float = 0.95) -> dict:
    """Krippendorff's alpha of ``values`` grouped by ``units`` (one value per coder and unit).

    ``units``: (n,) unit ids (e.g. item x comparison); ``values``: (n,) numbers (NaN = missing).
    ``level``: nominal, ordinal, interval or ratio. With ``n_boot`` > 0, a percentile CI from
    resampling units with replacement while holding the expected disagreement at its full-data
    value (the approach of Hayes & Krippendorff 2007). Returns ``{"alpha", "ci_low", "ci_high",
    "units", "pairable_values", "level"}``; alpha is NaN when there is no variation at all.
    """
    if level not in LEVELS:
        raise InputError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    counts, vals = _unit_counts(units, values)
    out = {"alpha": math.nan, "ci_low": math.nan, "ci_high": math.nan, "units": int(len(counts)),
           "pairable_values": int(counts.sum()), "level": level}
    if len(counts) == 0 or vals.size < 2:
        return out
    # coincidences per unit: o_u[c,k] = (n_uc n_uk - [c==k] n_uc) / (m_u - 1)
    do_units, de, m, n = _disagreements(counts, vals, level)
    if de <= 0:
        return out
    import krippendorff

    out["alpha"] = float(krippendorff.alpha(value_counts=counts, value_domain=vals,
                                            level_of_measurement=level))
    if n_boot > 0 and len(counts) >= 2:
        rng = np.random.default_rng(seed)
        U = len(counts)
        w = rng.multinomial(U, np.full(U, 1.0 / U), size=n_boot).astype(float)
        # observed disagreement per pairable value, scaled to the full data's n
        do_b = (w @ do_units) / (w @ m) * n
        out["ci_low"], out["ci_high"] = st.percentile_ci(1.0 - do_b / de, confidence)
    return out


def alpha_table(ratings: pd.DataFrame, *, level: str = "ordinal", n_boot: int = 2000,
                seed: int = 0, confidence: float = 0.95, unit_cols=("item", "comparison")) -> pd.DataFrame:
    """Krippendorff's alpha of a ratings table per scale: units = ``unit_cols`` joined, coders =
    participants, values = scores (pairwise scores oriented per :func:`canonical_pairs`)."""
    rows = []
    for scale, g in ratings.groupby("scale", sort=False):
        cols = [c for c in unit_cols if c in g.columns]
        unit = g[cols].astype(str).agg(" | ".join, axis=1)
        r = krippendorff_alpha(unit.to_numpy(), g["score"].to_numpy(float), level,
                               n_boot=n_boot, seed=seed, confidence=confidence)
        rows.append({"scale": scale, "unit": " x ".join(cols), **r})
    return pd.DataFrame(rows)
