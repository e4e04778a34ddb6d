"""Robustness models (statsmodels), reported next to the main tests.

Pairwise scales: each answer's latent preference is ``b[system_a] - b[system_b]`` (+ a left-side
term when the side is known); systems are coded +1/-1 with the first system as reference (b = 0).
- Ordinal: cumulative-logit model (``OrderedModel``) of the answer categories on that coding.
- Linear mixed model of the score with crossed random intercepts for participant and item
  (REML, :mod:`reports.lmm`), no fixed intercept.
Absolute scales: system dummies (first system = reference) with the same random effects; the
ordinal model only for integer scales with at most 11 levels (not for MUSHRA's 0-100 slider).
Each function returns a tidy table ``model, term, estimate, se, ci_low, ci_high, p, status`` and a
list of notes (convergence warnings, why a model was not fitted). ``status`` is ``ok`` or says what
went wrong; an ordinal fit that did not converge (optimiser flag, or standard errors above
:data:`MAX_ORDINAL_SE` logits, the sign of separation) has its numbers replaced by NaN.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from reports.table import SCALES, system_order

COLUMNS = ["model", "term", "estimate", "se", "ci_low", "ci_high", "p", "status"]
#: A standard error above this (logits) means the ordinal fit ran off to infinity (separation: a
#: system always preferred), whatever the optimiser reports.
MAX_ORDINAL_SE = 50.0
NOT_CONVERGED = "did not converge"
#: Status of a mixed model whose random-intercept variances are all estimated as 0.
SINGULAR = "singular (random-effect variances 0)"


def _design_pairwise(ratings: pd.DataFrame, systems: list[str]) -> pd.DataFrame:
    X = pd.DataFrame(0.0, index=ratings.index, columns=[f"b[{s}]" for s in systems[1:]])
    for s in systems[1:]:
        X[f"b[{s}]"] = (ratings["system_a"] == s).astype(float) - (ratings["system_b"] == s).astype(float)
    side = ratings["side_shown"]
    if side.isin(["left", "right"]).any():
        X["left side"] = np.select([side == "left", side == "right"], [1.0, -1.0], 0.0)
    return X


def _design_absolute(ratings: pd.DataFrame, systems: list[str]) -> pd.DataFrame:
    return pd.DataFrame({f"{s} - {systems[0]}": (ratings["system_a"] == s).astype(float)
                         for s in systems[1:]}, index=ratings.index)


def _tidy(name: str, res, terms, confidence: float, rename: dict | None = None) -> pd.DataFrame:
    params, bse, pv = pd.Series(res.params), pd.Series(res.bse), pd.Series(res.pvalues)
    ci = pd.DataFrame(res.conf_int(alpha=1 - confidence))
    rename = rename or {}
    back = {v: k for k, v in rename.items()}
    rows = []
    for t in terms:
        k = back.get(t, t)
        rows.append({"model": name, "term": t, "estimate": float(params[k]), "se": float(bse[k]),
                     "ci_low": float(ci.loc[k].iloc[0]), "ci_high": float(ci.loc[k].iloc[1]),
                     "p": float(pv[k]), "status": "ok"})
    return pd.DataFrame(rows, columns=COLUMNS)


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fn()
    msgs = list(dict.fromkeys(str(w.message).split("\n")[0] for w in caught
                              if issubclass(w.category, (UserWarning, RuntimeWarning))
                              or "converge" in str(w.message).lower()))
    return res, msgs


def ordinal_model(ratings: pd.DataFrame, systems: list[str] | None = None, *,
                  confidence: float = 0.95) -> tuple[pd.DataFrame, list[str]]:
    """Cumulative-logit (proportional odds) model of the answer categories; see module doc."""
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    systems = systems or system_order(ratings)
    scale = SCALES[ratings["scale"].iloc[0]]
    name = "ordinal (cumulative logit)"
    if not scale.integer or (scale.n_levels or 99) > 11:
        return pd.DataFrame(columns=COLUMNS), [f"{name}: not fitted, scale {scale.name} is not a "
                                               "small set of ordered categories"]
    if len(systems) < 2 or ratings["score"].nunique() < 2:
        return pd.DataFrame(columns=COLUMNS), [f"{name}: not fitted (needs 2 systems and 2 answer levels)"]
    X = _design_pairwise(ratings, systems) if scale.kind == "pairwise" else _design_absolute(ratings, systems)
    y = pd.Series(pd.Categorical(ratings["score"], categories=sorted(ratings["score"].unique()),
                                 ordered=True), index=ratings.index)
    try:
        res, msgs = _caught(lambda: OrderedModel(y, X, distr="logit").fit(method="bfgs", disp=False,
                                                                          maxiter=2000))
    except (np.linalg.LinAlgError, ValueError) as exc:
        return pd.DataFrame(columns=COLUMNS), [f"{name}: fit failed ({exc})"]
    table = _tidy(name, res, list(X.columns), confidence)
    notes = [f"{name}: {m}" for m in msgs]
    converged = bool(getattr(res, "mle_retvals", {}).get("converged", True))
    se = table["se"].to_numpy(float)
    if not converged or not np.all(np.isfinite(se)) or np.any(se > MAX_ORDINAL_SE):
        why = ("the optimiser did not converge" if not converged else
               f"standard errors up to {np.nanmax(se):.3g} logits (> {MAX_ORDINAL_SE:g}): the "
               "estimates run off to infinity, as when a system is always preferred (separation)")
        table[["estimate", "se", "ci_low", "ci_high", "p"]] = np.nan
        table["status"] = NOT_CONVERGED
        notes.append(f"{name}: {NOT_CONVERGED} ({why}); its estimates are not reported")
    return table, notes


def mixed_model(ratings: pd.DataFrame, systems: list[str] | None = None, *,
                confidence: float = 0.95) -> tuple[pd.DataFrame, list[str]]:
    """Linear mixed model with crossed random intercepts (participant, item), REML; see module
    doc. Fitted with :func:`reports.lmm.fit_crossed_lmm` (statsmodels' crossed-effects fit is too
    slow for thousands of answers; the tests compare the two)."""
    from reports.lmm import fit_crossed_lmm

    systems = systems or system_order(ratings)
    name = "linear mixed model"
    if len(systems) < 2:
        return pd.DataFrame(columns=COLUMNS), [f"{name}: not fitted (needs 2 systems)"]
    pairwise = SCALES[ratings["scale"].iloc[0]].kind == "pairwise"
    X = _design_pairwise(ratings, systems) if pairwise else _design_absolute(ratings, systems)
    terms = list(X.columns)
    if not pairwise:
        X.insert(0, "Intercept", 1.0)
    factors = {c: ratings[c].astype(str).to_numpy() for c in ("participant", "item")
               if ratings[c].nunique() >= 2}
    if not factors:
        return pd.DataFrame(columns=COLUMNS), [f"{name}: not fitted (one participant and one item)"]
    try:
        res = fit_crossed_lmm(ratings["score"].to_numpy(float), X.to_numpy(float), factors)
    except (np.linalg.LinAlgError, ValueError) as exc:
        return pd.DataFrame(columns=COLUMNS), [f"{name}: fit failed ({exc})"]
    ci = res.conf_int(confidence)
    pv = res.pvalues
    singular = all(v <= 1e-8 * max(res.sigma2, 1e-300) for v in res.variances.values())
    status = ("optimiser did not report convergence" if not res.converged else
              SINGULAR if singular else "ok")
    cols = list(X.columns)
    rows = [{"model": name, "term": t, "estimate": float(res.params[cols.index(t)]),
             "se": float(res.bse[cols.index(t)]), "ci_low": float(ci[cols.index(t), 0]),
             "ci_high": float(ci[cols.index(t), 1]), "p": float(pv[cols.index(t)]),
             "status": status} for t in terms]
    notes = [name + ": random-intercept variances " +
             ", ".join(f"{k} {v:.3g}" for k, v in res.variances.items()) + f"; residual {res.sigma2:.3g}"]
    if pairwise:
        notes.append(f"{name}: on signed pairwise scores a random intercept is a shift towards the "
                     "first-listed system (A) of every pair — per participant a rater's lean towards A "
                     "(e.g. a side preference when A is always shown on one side), per item content on "
                     "which A does better whatever the pair. Neither is a system effect; they let the "
                     "system contrasts' standard errors allow for answers of one rater or one item "
                     "being correlated.")
    if singular:
        notes.append(f"{name}: singular fit — every random-intercept variance is estimated as 0, so "
                     "the model reduces to ordinary least squares; its standard errors then ignore "
                     "rater clustering")
    if not res.converged:
        notes.append(f"{name}: the REML optimiser did not report convergence")
    return pd.DataFrame(rows, columns=COLUMNS), notes
