"""GENEA leaderboard protocol: appropriateness against mismatched speech, reasons raters tick, and
counterbalancing (votes per pair, segment and side).

- Appropriateness: a battle between a system's motion for the matching speech and its motion for
  mismatched speech (system names ``X`` and ``X mismatched``, see :data:`MISMATCH`). Per system:
  the matched win rate with ties split and strong preferences counted twice (a strong vote 2,
  a weak vote 1, a tie 1 shared half/half), with a percentile interval from a bootstrap over
  raters, and the mean appropriateness score (MAS: +2 strong for matched … −2 strong for
  mismatched, ties 0) with a cluster-robust interval.
- Reasons: the battles export stores the reasons a rater ticked as a JSON list (``juiceOptions``)
  and free text (``juiceOtherReason``); :func:`reason_tally` counts them overall and for the
  winning system.
- Counterbalancing: :func:`counterbalance` counts votes per pair and how often each system of
  the pair was listed first (``model_a``; the side when ``side_shown`` is known), per segment
  (``item``), with a two-sided binomial test of the first-position balance per pair.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
from scipy import stats

from reports import stats as st

#: A system name ending in "mismatched" (any case, optional separator) is the mismatched-speech
#: condition of the system named by the rest.
MISMATCH = re.compile(r"^(?P<system>.+?)[\s_\-]*(?:mis-?matched|mismatch)$", re.I)
REASON_LIST_COLUMN = "juiceOptions"
REASON_TEXT_COLUMN = "juiceOtherReason"


def battle_reasons(raw: pd.DataFrame) -> pd.DataFrame | None:
    """One row per battle of a GENEA battles file with the reasons ticked: ``user, input_code,
    model_a, model_b, winner, reasons`` (a list; free text as ``other: …``); None when the
    file has no reason columns."""
    if REASON_LIST_COLUMN not in raw.columns and REASON_TEXT_COLUMN not in raw.columns:
        return None
    out = raw[["user", "input_code", "model_a", "model_b", "winner"]].copy()
    reasons = []
    for r in raw.to_dict("records"):
        got = []
        cell = str(r.get(REASON_LIST_COLUMN) or "").strip()
        if cell and cell.lower() != "nan":
            try:
                val = json.loads(cell)
            except json.JSONDecodeError:
                val = [v.strip() for v in cell.strip("[]").split(",")]
            if isinstance(val, dict):  # ``{}`` (written on ties) is no reason; keys ticked True are
                val = [k for k, ticked in val.items() if ticked]
            elif val is None:
                val = []
            got += [t for t in (str(v).strip().strip("'\"").strip() for v in
                                (val if isinstance(val, list) else [val])) if t and t not in ("{}", "[]")]
        text = str(r.get(REASON_TEXT_COLUMN) or "").strip()
        if text and text.lower() != "nan":
            got.append("other: " + text)
        reasons.append(got)
    out["reasons"] = reasons
    return out


def reason_tally(reasons: pd.DataFrame) -> pd.DataFrame:
    """Counts of each reason: ``reason, ticks, share`` (of battles with any reason) and the system
    it was given for most often (``top_winner``: the winner of those battles)."""
    rows = []
    exploded = reasons.explode("reasons").dropna(subset=["reasons"])
    exploded["reason"] = exploded["reasons"].map(lambda s: "other (free text)" if str(s).startswith("other: ") else s)
    n_with = int(reasons["reasons"].map(len).gt(0).sum())
    winner = np.where(exploded["winner"].str.lower() == "model_a", exploded["model_a"],
                      np.where(exploded["winner"].str.lower() == "model_b", exploded["model_b"], "tie"))
    exploded = exploded.assign(winner_system=winner)
    for reason, g in exploded.groupby("reason", sort=False):
        top = g["winner_system"].value_counts()
        rows.append({"reason": reason, "ticks": len(g), "share": len(g) / n_with if n_with else np.nan,
                     "top_winner": f"{top.index[0]} ({top.iloc[0]})" if len(top) else ""})
    out = pd.DataFrame(rows, columns=["reason", "ticks", "share", "top_winner"])
    return out.sort_values("ticks", ascending=False, kind="stable").reset_index(drop=True)


def counterbalance(ratings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per pair, per segment) balance tables of pairwise ratings.

    Per pair (systems in name order): ``votes``, ``first_a`` (votes where the first system was
    listed first / shown left), ``share_first`` and ``p_balance`` (two-sided binomial test of
    ``first_a`` against half). Per segment (``item``): ``votes``, ``pairs`` (distinct pairs),
    ``raters``. Position = the side shown when known, else the order in the file (``model_a``).
    """
    a, b = ratings["system_a"].astype(str), ratings["system_b"].astype(str)
    lo, hi = np.where(a <= b, a, b), np.where(a <= b, b, a)
    side = ratings["side_shown"].astype(str)
    first_is_lo = np.where(side == "right", a != lo, a == lo)  # lo shown left / listed first
    df = pd.DataFrame({"pair": [f"{x} vs {y}" for x, y in zip(lo, hi)], "first": first_is_lo,
                       "item": ratings["item"].astype(str), "participant": ratings["participant"]})
    rows = []
    for pair, g in df.groupby("pair", sort=True):
        n, k = len(g), int(g["first"].sum())
        rows.append({"pair": pair, "votes": n, "first_a": k, "share_first": k / n,
                     "p_balance": float(stats.binomtest(k, n, 0.5).pvalue)})
    per_pair = pd.DataFrame(rows)
    per_seg = df.groupby("item").agg(votes=("pair", "size"), pairs=("pair", "nunique"),
                                     raters=("participant", "nunique")).reset_index()
    return per_pair, per_seg


def mismatched_pairs(systems) -> dict[str, str]:
    """{mismatched condition: matched system} for names that pair up (see :data:`MISMATCH`)."""
    names = set(map(str, systems))
    out = {}
    for s in names:
        m = MISMATCH.match(s)
        if m and m.group("system").strip() in names:
            out[s] = m.group("system").strip()
    return out


def appropriateness(ratings: pd.DataFrame, *, n_boot: int = 2000, seed: int = 0,
                    confidence: float = 0.95) -> pd.DataFrame:
    """Per system with a mismatched-speech condition: battles, raters, matched win rate (ties split,
    strong x2) with a rater-bootstrap percentile CI, and MAS with a cluster-robust CI. Empty when
    no system has a mismatched condition."""
    cols = ["system", "battles", "raters", "matched_win_rate", "ci_low", "ci_high", "mas", "mas_low",
            "mas_high"]
    pairs = mismatched_pairs(pd.concat([ratings["system_a"], ratings["system_b"]]).unique())
    rows = []
    rng = np.random.default_rng(seed)
    top = 2.0
    for mm, sysname in sorted(pairs.items(), key=lambda kv: kv[1]):
        sel = ((ratings["system_a"] == sysname) & (ratings["system_b"] == mm)) | \
              ((ratings["system_a"] == mm) & (ratings["system_b"] == sysname))
        g = ratings[sel]
        if g.empty:
            continue
        s = np.where(g["system_a"] == sysname, g["score"], -g["score"]).astype(float)  # + = matched
        w = np.where(np.abs(s) >= top, 2.0, 1.0)  # strong x2; weak and tie 1
        won = np.where(s > 0, 1.0, np.where(s == 0, 0.5, 0.0))
        parts, code = np.unique(g["participant"].astype(str).to_numpy(), return_inverse=True)
        num = np.bincount(code, weights=w * won, minlength=len(parts))
        den = np.bincount(code, weights=w, minlength=len(parts))
        rate = num.sum() / den.sum()
        lo = hi = np.nan
        if len(parts) >= 2 and n_boot > 0:
            draws = rng.multinomial(len(parts), np.full(len(parts), 1 / len(parts)), size=n_boot).astype(float)
            lo, hi = st.percentile_ci((draws @ num) / (draws @ den), confidence)
        mas, mlo, mhi = st.cluster_t_ci(s, code, confidence)
        rows.append({"system": sysname, "battles": len(g), "raters": len(parts), "matched_win_rate": rate,
                     "ci_low": lo, "ci_high": hi, "mas": mas, "mas_low": mlo, "mas_high": mhi})
    return pd.DataFrame(rows, columns=cols)
