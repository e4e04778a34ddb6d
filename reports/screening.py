"""Screening: declared rules that exclude unreliable raters, and the participant flow.

Rules are declared before the data is seen (a :class:`ScreeningRules` value) and applied in a
fixed order; the report shows recruited → excluded by each rule → analysed, the per-rater
indicators (failed checks, straight-lining, agreement with the consensus, response times,
hidden-reference ratings) and the main results with and without the exclusions.
Trials flagged ``check`` (attention/catch trials) are never analysed as data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from evalkit.errors import InputError
from reports.absolute import find_reference, hidden_reference_screening
from reports.table import SCALES, canonical_pairs, has_flag


@dataclass(frozen=True)
class ScreeningRules:
    """Exclusion rules; ``None`` disables a rule (its indicator is still reported).

    - ``study_exclusions``: exclude raters the study's own rules excluded while it ran (every row
      flagged ``excluded``, as evalkit's web test writes them: a failed setup check such as the
      headphone screening, failed gold or attention trials under ``action: flag``). First in order.
    - ``max_failed_checks``: exclude raters with more failed checks (flag ``check_failed``).
    - ``straightline_share`` / ``straightline_min_answers``: exclude raters who gave the same raw
      answer (as shown on screen) in at least this share of at least this many answers.
    - ``min_consensus_r``: exclude raters whose Spearman correlation with the leave-one-out mean
      of the other raters (per item and comparison/system) is below this.
    - ``min_median_rt_s``: exclude raters whose median response time is below this (seconds).
    - ``hidden_reference``: name of the hidden reference system (absolute scales; ``"auto"``
      finds one called reference/ref); ``reference_threshold`` and ``reference_max_fraction``:
      BS.1534-3 post-screening (reference below 90 in more than 15 % of items).
    """

    study_exclusions: bool = True
    max_failed_checks: int | None = 0
    straightline_share: float | None = 1.0
    straightline_min_answers: int = 10
    min_consensus_r: float | None = None
    min_median_rt_s: float | None = None
    hidden_reference: str | None = "auto"
    reference_threshold: float = 90.0
    reference_max_fraction: float = 0.15

    def __post_init__(self):
        def bad(name: str, option: str, expected: str, value) -> InputError:
            return InputError(f"{name} ({option}) must be {expected}, got {value}")

        share = self.straightline_share
        if share is not None and not 0 < share <= 1:
            raise bad("straightline_share", "--straightline", "a share in [0, 1] (0 disables)", share)
        if not 0 <= self.reference_max_fraction <= 1:
            raise bad("reference_max_fraction", "--reference-max-fraction", "a share in [0, 1]",
                      self.reference_max_fraction)
        if self.straightline_min_answers < 1:
            raise bad("straightline_min_answers", "--straightline-min", "at least 1",
                      self.straightline_min_answers)
        if self.min_consensus_r is not None and not -1 <= self.min_consensus_r <= 1:
            raise bad("min_consensus_r", "--min-consensus-r", "a correlation in [-1, 1]", self.min_consensus_r)
        if self.min_median_rt_s is not None and not self.min_median_rt_s >= 0:
            raise bad("min_median_rt_s", "--min-median-rt", "seconds >= 0", self.min_median_rt_s)

    def describe(self) -> list[str]:
        """Human-readable list of the active rules, in the order they are applied."""
        out = []
        if self.study_exclusions:
            out.append("excluded by the study's own rules while it ran (rows flagged excluded)")
        if self.max_failed_checks is not None:
            out.append("any failed attention/catch check" if self.max_failed_checks == 0 else
                       f"more than {self.max_failed_checks} failed attention/catch checks")
        if self.straightline_share is not None:
            out.append(f"straight-lining: the same on-screen answer in >= {self.straightline_share:.0%} "
                       f"of >= {self.straightline_min_answers} answers")
        if self.min_consensus_r is not None:
            out.append(f"Spearman correlation with the other raters' consensus < {self.min_consensus_r:g}")
        if self.min_median_rt_s is not None:
            out.append(f"median response time < {self.min_median_rt_s:g} s")
        if self.hidden_reference is not None:
            out.append(f"hidden reference rated below {self.reference_threshold:g} in more than "
                       f"{self.reference_max_fraction:.0%} of items (ITU-R BS.1534-3 post-screening; MUSHRA 0-100 ratings with a hidden reference only)")
        return out


@dataclass
class ScreeningResult:
    """``kept``: analysed ratings (check trials removed, excluded raters removed);
    ``all``: check trials removed, nobody excluded; ``flow``: participant flow table;
    ``raters``: one row per participant with indicators and ``excluded_by``."""

    kept: pd.DataFrame
    all: pd.DataFrame
    flow: pd.DataFrame
    raters: pd.DataFrame
    rules: ScreeningRules
    notes: list[str] = field(default_factory=list)


def _units(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a ``unit`` column (item × comparison or item × system) and oriented scores."""
    kinds = df["scale"].map(lambda s: SCALES[s].kind)
    parts = []
    pw = df[kinds == "pairwise"]
    if len(pw):
        pw = canonical_pairs(pw)
        parts.append(pw.assign(unit=pw["scale"] + "|" + pw["item"] + "|" + pw["comparison"]))
    ab = df[kinds == "absolute"]
    if len(ab):
        parts.append(ab.assign(unit=ab["scale"] + "|" + ab["item"] + "|" + ab["system_a"]))
    return pd.concat(parts, ignore_index=True) if parts else df.assign(unit=[])


def consensus_correlation(df: pd.DataFrame) -> pd.Series:
    """Per participant: Spearman r between their (mean) score per unit and the mean of all
    other raters on that unit; NaN with fewer than 3 shared units or no variation."""
    u = _units(df)
    per = u.groupby(["participant", "unit"])["score"].mean().reset_index()
    tot = per.groupby("unit")["score"].agg(["sum", "count"])
    per = per.join(tot, on="unit")
    per = per[per["count"] >= 2]
    per["others"] = (per["sum"] - per["score"]) / (per["count"] - 1)
    out = {}
    for p, g in per.groupby("participant"):
        if len(g) < 3 or g["score"].nunique() < 2 or g["others"].nunique() < 2:
            out[p] = math.nan
        else:
            out[p] = float(stats.spearmanr(g["score"], g["others"]).statistic)
    return pd.Series(out, dtype=float)


def screen(ratings: pd.DataFrame, rules: ScreeningRules = ScreeningRules()) -> ScreeningResult:
    """Apply ``rules`` in order (checks, straight-lining, consensus, response time, hidden
    reference); each rater is counted under the first rule that excludes them."""
    is_check = has_flag(ratings["flags"], "check") | has_flag(ratings["flags"], "check_failed")
    failed = has_flag(ratings["flags"], "check_failed")
    data = ratings[~is_check.to_numpy()].copy()
    participants = list(dict.fromkeys(ratings["participant"]))
    raters = pd.DataFrame(index=pd.Index(participants, name="participant"))
    raters["answers"] = data.groupby("participant").size().reindex(participants).fillna(0).astype(int)
    raters["checks"] = is_check.groupby(ratings["participant"]).sum().reindex(participants).fillna(0).astype(int)
    raters["failed_checks"] = failed.groupby(ratings["participant"]).sum().reindex(participants).fillna(0).astype(int)
    mode_share = data.groupby("participant")["raw_answer"].agg(
        lambda s: s.value_counts().iloc[0] / len(s) if len(s) else math.nan)
    raters["straightline_share"] = mode_share.reindex(participants)
    raters["consensus_r"] = consensus_correlation(data).reindex(participants) if len(data) else math.nan
    raters["median_rt_s"] = data.groupby("participant")["response_time_s"].median().reindex(participants)

    notes = []
    ref_name = None
    ref_table = None
    if rules.hidden_reference is not None:
        # BS.1534-3's rule is about the 0-100 MUSHRA slider (reference < 90); on a 1-5 or 1-7
        # category scale the threshold would exclude everyone
        absolute = data[data["scale"] == "mushra"]
        if len(absolute):
            ref_name = find_reference(absolute["system_a"].unique(),
                                      None if rules.hidden_reference == "auto" else rules.hidden_reference)
            if ref_name is None and rules.hidden_reference != "auto":
                notes.append(f"hidden reference {rules.hidden_reference!r} not found; "
                             "post-screening skipped")
            if ref_name is not None:
                ref_table = hidden_reference_screening(
                    absolute, ref_name, threshold=rules.reference_threshold,
                    max_fraction=rules.reference_max_fraction).set_index("participant")
    raters["reference_items"] = ref_table["items"].reindex(participants) if ref_table is not None else np.nan
    raters["reference_below"] = ref_table["below"].reindex(participants) if ref_table is not None else np.nan

    checks = []
    if rules.study_exclusions:
        marked = has_flag(ratings["flags"], "excluded").groupby(ratings["participant"]).any()
        checks.append(("study's exclusion rules", marked.reindex(participants).fillna(False)))
    if rules.max_failed_checks is not None:
        checks.append(("failed checks", raters["failed_checks"] > rules.max_failed_checks))
    if rules.straightline_share is not None:
        checks.append(("straight-lining", (raters["answers"] >= rules.straightline_min_answers)
                       & (raters["straightline_share"] >= rules.straightline_share)))
    if rules.min_consensus_r is not None:
        checks.append(("low agreement with consensus", raters["consensus_r"] < rules.min_consensus_r))
    if rules.min_median_rt_s is not None:
        checks.append(("too fast", raters["median_rt_s"] < rules.min_median_rt_s))
    if ref_table is not None:
        checks.append((f"hidden reference < {rules.reference_threshold:g}",
                       ref_table["excluded"].reindex(participants).fillna(False).astype(bool)))

    raters["excluded_by"] = ""
    flow = [{"step": "recruited", "participants": len(participants)}]
    remaining = pd.Series(True, index=raters.index)
    for name, mask in checks:
        hit = remaining & mask.fillna(False).astype(bool)
        raters.loc[hit, "excluded_by"] = name
        remaining &= ~hit
        flow.append({"step": f"excluded: {name}", "participants": int(hit.sum())})
    no_data = remaining & (raters["answers"] == 0)
    if no_data.any():
        raters.loc[no_data, "excluded_by"] = "no analysable answers"
        remaining &= ~no_data
        flow.append({"step": "excluded: no analysable answers", "participants": int(no_data.sum())})
    flow.append({"step": "analysed", "participants": int(remaining.sum())})
    keep_ids = set(remaining[remaining].index)
    kept = data[data["participant"].isin(keep_ids)].copy()
    if ref_name:
        notes.append(f"hidden reference: {ref_name!r}")
    return ScreeningResult(kept=kept, all=data, flow=pd.DataFrame(flow),
                           raters=raters.reset_index(), rules=rules, notes=notes)
