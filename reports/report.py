"""``build_report``: ratings and/or objective scores in, a report folder out.

Output folder layout::

    report.html          self-contained page (figures embedded as base64 PNG)
    methods.md           the methods paragraph (tests, settings, seed, package versions)
    figures/*.pdf|png    every figure
    tables/*.csv|tex     every table (CSV full precision, LaTeX booktabs)
    ratings_analysed.csv the screened long-format ratings that were analysed

Deterministic for a given seed: bootstrap streams are derived from it per analysis, figures are
written without time stamps.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from evalkit.csvsafe import neutralise_frame
from evalkit.errors import InputError
from reports import absolute as ab
from reports import genea
from reports import figures as fg
from reports import objective as ob
from reports.agreement import krippendorff_alpha
from reports.io import atomic_write_text
from reports.regression import NOT_CONVERGED, mixed_model, ordinal_model
from reports.pairwise import (MIN_RATERS, MIN_TEST_ANSWERS, pairwise_table, position_bias,
                              significance_matrix)
from reports.ranking import (BattleWeights, bootstrap_warnings, bradley_terry, bt_difference_table,
                             ELO_PER_LOGIT)
from reports.document import (FigureItem, Section, TableItem, fmt_value, format_frame, p_text, render_html,
                            write_table)
from reports.screening import ScreeningRules, screen
from reports.simulate import SIMULATED_NOTE
from reports.stats import ZERO_METHODS
from reports.table import SCALES, canonical_pairs, has_flag, system_order, validate_ratings

PACKAGES = ("numpy", "scipy", "pandas", "statsmodels", "matplotlib", "evalkit")
#: Start of every caption of a table or figure made from simulated ratings.
SIMULATED_PREFIX = "SIMULATED ratings — "
#: Drawn on top of (and stored as the title of) every figure made from simulated ratings.
SIMULATED_FIGURE_MARK = "SIMULATED ratings — not collected from people"
#: Default banner of a report on simulated ratings when the caller gives none.
SIMULATED_BANNER = ("SIMULATED RATINGS: the subjective results in this report come from simulated "
                    "ratings, not collected from people.")


def ratings_are_simulated(ratings: pd.DataFrame | None) -> bool:
    """Whether a ratings table says it is simulated: ``attrs["simulated"]`` (set by
    :func:`reports.simulate.simulate_pairwise`), its ``SIMULATED_NOTE``, or a ``data`` column
    saying ``simulated`` (as in a ``ratings_analysed.csv`` of a simulated report)."""
    if ratings is None:
        return False
    if ratings.attrs.get("simulated") or SIMULATED_NOTE in ratings.attrs.get("notes", []):
        return True
    return "data" in ratings.columns and ratings["data"].astype(str).str.lower().eq("simulated").any()


@dataclass(frozen=True)
class ReportConfig:
    """Analysis settings (all written into the methods paragraph).

    ``n_boot``: bootstrap rounds for CIs of means, medians and alpha; ``bt_boot``: rounds of the
    Bradley–Terry participant bootstrap; ``zero_method``: Wilcoxon handling of zero scores
    (``pratt``, ``wilcox`` or ``zsplit``); ``alpha``: family-wise level after Holm correction;
    ``systems``: optional system order (first = reference of the regression models);
    ``rules_declared``: the screening rules were declared before the data were collected (e.g. in
    a study file); otherwise methods.md says they are this report's settings, applied afterwards.
    ``better``: ``(column, "lower" | "higher")`` pairs saying which way a score column is better,
    for columns the metric registry does not know (used by the metric-agreement section).
    """

    confidence: float = 0.95
    n_boot: int = 2000
    bt_boot: int = 2000
    zero_method: str = "pratt"
    alpha: float = 0.05
    weights: BattleWeights = BattleWeights()
    screening: ScreeningRules = ScreeningRules()
    agreement_level: str = "ordinal"
    robustness: bool = True
    systems: tuple[str, ...] | None = None
    rules_declared: bool = False
    better: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        for item in self.better:
            if len(item) != 2 or item[1] not in ("lower", "higher"):
                raise InputError(f"better: expected (column, 'lower' or 'higher') pairs, got {item!r}")
        if not 0.5 <= self.confidence < 1:
            raise InputError(f"confidence must be in [0.5, 1), got {self.confidence}")
        if self.zero_method not in ZERO_METHODS:
            raise InputError(f"zero_method must be one of {', '.join(ZERO_METHODS)}")
        for name, option, value in (("n_boot", "--n-boot", self.n_boot), ("bt_boot", "--bt-boot", self.bt_boot)):
            if value < 1:
                raise InputError(f"bootstrap rounds {name} ({option}) must be at least 1 (the report's "
                                 f"bootstrap CIs need resamples), got {value}")
        if not 0 < self.alpha < 1:
            raise InputError(f"alpha must be in (0, 1), got {self.alpha}")


#: Cell text of a comparison with too few answers to be tested on its own.
TOO_FEW_TEXT = "too few"
#: Krippendorff's alpha from fewer pairable units than this is marked "too few units".
MIN_ALPHA_UNITS = 5


def _sub_seed(seed: int, *key) -> int:
    """A reproducible seed for one analysis, derived from the report seed and a key."""
    words = [int(seed)] + [sum(ord(c) * 31 ** i for i, c in enumerate(str(k))) % (2 ** 31) for k in key]
    return int(np.random.SeedSequence(words).generate_state(1)[0])


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_") or "x"


def package_versions() -> dict[str, str]:
    """Versions of Python and the analysis packages (for the methods paragraph)."""
    out = {"python": platform.python_version()}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


@dataclass
class _Ctx:
    out: Path
    cfg: ReportConfig
    seed: int
    sections: list = field(default_factory=list)
    methods: list = field(default_factory=list)
    subjective: pd.Series | None = None
    subjective_label: str = ""
    simulated: bool = False
    log: object = None
    style: fg.SystemStyle | None = None
    primary: list = field(default_factory=list)
    genea_reasons: pd.DataFrame | None = None
    kept: pd.DataFrame | None = None

    def step(self, message: str) -> None:
        """Progress of a long step (printed when the report was asked for progress)."""
        if self.log:
            self.log(message)

    def style_for(self, ranked: list[str]) -> fg.SystemStyle:
        """The report's one system order and colours: fixed by the first ranking, extended by
        systems seen later."""
        if self.style is None:
            self.style = fg.system_style(ranked)
        elif not set(ranked) <= set(self.style.order):
            self.style = fg.system_style(list(self.style.order) + [s for s in ranked if s not in self.style.order])
        return self.style

    def table(self, section: Section, name: str, caption: str, data: pd.DataFrame,
              display: pd.DataFrame | None = None, *, subjective: bool = True) -> None:
        """A table; ``subjective`` = computed from the ratings (marked when they are simulated:
        caption prefix, and a first CSV column ``data`` = ``simulated``)."""
        if subjective and self.simulated:
            caption = SIMULATED_PREFIX + caption
            data = data.copy()
            data.insert(0, "data", "simulated")
        item = TableItem(name=name, caption=caption, data=data, display=display)
        write_table(item, self.out)
        section.items.append(item)

    def figure(self, section: Section, name: str, caption: str, fig, *, subjective: bool = True) -> None:
        mark = SIMULATED_FIGURE_MARK if subjective and self.simulated else None
        if mark:
            caption = SIMULATED_PREFIX + caption
        png = fg.save_figure(fig, self.out / "figures", name, mark=mark)
        section.items.append(FigureItem(name=name, caption=caption, png=png))


def _independence(tests: str, n_answers: int, n_raters: int, unit: str = "answer") -> str:
    """Caption sentence: these tests count answers (or blocks), not raters."""
    return (f" The {tests} treat each of the {n_answers} {unit}s as independent, not accounting for "
            f"rater clustering ({n_answers} {unit}s from {n_raters} raters); the cluster-robust CI "
            "(the default), the participant-clustered bootstrap CI and the linear mixed model "
            "(robustness) are the clustered analyses.")


def _ci(lo, hi) -> str:
    return f"[{fmt_value(lo)}, {fmt_value(hi)}]"


# ---------------------------------------------------------------- screening


#: Short headings of the per-rater table.
_RATER_HEADERS = {"participant": "Rater", "answers": "Answers", "checks": "Checks", "failed_checks": "Failed",
                  "straightline_share": "Same answer", "consensus_r": "Consensus r",
                  "median_rt_s": "Median time (s)", "reference_items": "Ref. items",
                  "reference_below": "Ref. below", "excluded_by": "Excluded by"}


def _raters_display(raters: pd.DataFrame) -> pd.DataFrame:
    """The per-rater table as shown: short headings, columns with no value left out, long rater
    ids (e.g. a web test's 32-character ids) shortened to 8 characters."""
    keep = [c for c in raters.columns if c == "participant" or raters[c].notna().any()
            and not raters[c].astype(str).isin(["", "nan"]).all()]
    disp = format_frame(raters[keep])
    ids = raters["participant"].astype(str)
    if ids.str.len().max() > 12 and ids.str[:8].nunique() == ids.nunique():
        disp["participant"] = [i[:8] + "…" if len(i) > 12 else i for i in ids]
    return disp.rename(columns={c: _RATER_HEADERS.get(c, c) for c in disp.columns})


def _screening_section(ctx: _Ctx, res) -> None:
    sec = Section("Participants and screening")
    rules = res.rules.describe()
    sec.paragraphs.append("Exclusion rules, applied in this order (each participant counted under "
                          "the first rule that excludes them): " + ("; ".join(rules) if rules else "none") + ".")
    sec.paragraphs += res.notes
    ctx.table(sec, "participant_flow", "Participant flow: recruited, excluded by each rule, analysed.",
              res.flow)
    raters = res.raters.copy()
    ctx.table(sec, "raters", "Per-rater indicators: answers, attention/catch checks, share of the most "
                             "frequent on-screen answer (straight-lining), Spearman r with the "
                             "leave-one-out consensus, median response time, hidden-reference "
                             "ratings below threshold, and the rule that excluded the rater"
                             + (" (long rater ids shortened to their first 8 characters; in full in the CSV)"
                                if raters["participant"].astype(str).str.len().max() > 12 else "") + ".",
              raters, _raters_display(raters))
    ctx.sections.append(sec)
    n_ex = int(res.flow["participants"].iloc[1:-1].sum()) if len(res.flow) > 2 else 0
    how = ("were declared in advance (before data collection) and applied in order" if ctx.cfg.rules_declared
           else "are this report's settings (not stated to have been declared before data collection) "
                "and were applied in order")
    ctx.methods.append(
        f"Ratings came from {int(res.flow['participants'].iloc[0])} participants. Screening rules {how}: "
        f"{'; '.join(rules) if rules else 'none'}; "
        f"{n_ex} participant(s) were excluded and {int(res.flow['participants'].iloc[-1])} analysed. "
        "Attention/catch trials (flag 'check') were never analysed as data. "
        + ("Main results are reported after exclusions; results without exclusions are shown alongside."
           if n_ex else "As no participant was excluded, every result includes all participants."))


# ---------------------------------------------------------------- pairwise


def _pairwise_display(t: pd.DataFrame, pct: str) -> pd.DataFrame:
    """The per-comparison table for HTML/LaTeX: 7 columns (a two-column table*)."""
    few = t["n_participants"] < MIN_RATERS
    return pd.DataFrame({
        "Comparison (A vs B)": [c + (" †" if f else "") for c, f in zip(t["comparison"], few)],
        "n (raters)": [f"{n} ({r})" for n, r in zip(t["n"], t["n_participants"])],
        f"Mean [{pct} CI, raters]": [f"{fmt_value(m)} {_ci(a, b)}" for m, a, b in
                                     zip(t["mean"], t["cl_low"], t["cl_high"])],
        f"{pct} t CI (answers indep.)": [_ci(a, b) for a, b in zip(t["t_low"], t["t_high"])],
        "A / = / B (%)": [f"{a:.0%} / {e:.0%} / {b:.0%}".replace("%", "") for a, e, b in
                          zip(t["share_a"], t["share_equal"], t["share_b"])],
        "p Wilcoxon (Holm)": [fmt_value(p, "p") if tested else TOO_FEW_TEXT
                              for p, tested in zip(t["p_holm"], t["tested"])],
        "Rank-biserial r": [fmt_value(v) if tested else "–" for v, tested in zip(t["rank_biserial"], t["tested"])],
    })


def _bt_display(table: pd.DataFrame, pct: str) -> pd.DataFrame:
    return pd.DataFrame({
        "Rank": table["rank"].map(str), "System": table["system"],
        f"Elo [{pct} CI]": [f"{e:.0f} [{lo:.0f}, {hi:.0f}]" if np.isfinite(lo) else f"{e:.0f}"
                            for e, lo, hi in zip(table["elo"], table["elo_low"], table["elo_high"])],
        "Log-strength (SE)": [f"{fmt_value(b)} ({fmt_value(s)})" for b, s in zip(table["log_strength"], table["se"])],
        "Answers": table["answers"].map(str), "Win share": table["win_share"].map(lambda v: fmt_value(v, "win_share")),
    })


def _bt_diff_display(d: pd.DataFrame, pct: str) -> pd.DataFrame:
    few = d["raters"] < MIN_RATERS
    return pd.DataFrame({
        "Comparison (A vs B)": [f"{a} vs {b}" + (" †" if f else "") for a, b, f in
                                zip(d["system_a"], d["system_b"], few)],
        "Δ log-strength": d["difference"].map(fmt_value),
        f"Simultaneous {pct} CI": [_ci(a, b) for a, b in zip(d["ci_low"], d["ci_high"])],
        "p (adjusted)": d["p_adjusted"].map(lambda v: fmt_value(v, "p")),
        "Direct answers (raters)": [f"{n} ({r})" for n, r in zip(d["comparisons"], d["raters"])],
    })


def comparison_groups(ratings: pd.DataFrame) -> list[list[str]]:
    """Systems grouped by the connected components of the "compared at least once" graph."""
    parent: dict[str, str] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(ratings["system_a"], ratings["system_b"]):
        parent[find(a)] = find(b)
    groups: dict[str, list[str]] = {}
    for s in system_order(ratings):
        groups.setdefault(find(s), []).append(s)
    return list(groups.values())


def is_dense(kept: pd.DataFrame) -> bool:
    """A design where Bradley–Terry is the primary analysis: at least 3 systems and at least half
    of all pairs compared directly (not a star of conditions against one reference)."""
    systems = system_order(kept)
    k = len(systems)
    if k < 3:
        return False
    pairs = {tuple(sorted(p)) for p in zip(kept["system_a"], kept["system_b"])}
    return len(pairs) >= 0.5 * k * (k - 1) / 2


@dataclass
class _Pairwise:
    """Everything the parts of one pairwise scale's report share (computed once)."""

    cfg: ReportConfig
    sc: object
    scale: str
    kept: pd.DataFrame
    allr: pd.DataFrame
    order: list | None
    t: pd.DataFrame
    bt: object
    diff: pd.DataFrame
    dense: bool
    ranked: list
    style: fg.SystemStyle
    pct: str
    n_raters: int
    n_pairs: int
    cautions: list
    caution: str
    primary: str


def _pairwise_fit(ctx: _Ctx, scale: str, kept: pd.DataFrame, allr: pd.DataFrame) -> _Pairwise:
    """Per-comparison statistics and the Bradley–Terry fit of one pairwise scale."""
    cfg = ctx.cfg
    order = list(cfg.systems) if cfg.systems else None
    n_raters = int(kept["participant"].nunique())
    ctx.step(f"{scale}: per-comparison statistics")
    t = pairwise_table(kept, confidence=cfg.confidence, n_boot=cfg.n_boot,
                       seed=_sub_seed(ctx.seed, "pairwise", scale), zero_method=cfg.zero_method,
                       order=order, alpha=cfg.alpha)
    ctx.step(f"{scale}: Bradley–Terry with {cfg.bt_boot} bootstrap rounds")
    bt = bradley_terry(kept, weights=cfg.weights, n_boot=cfg.bt_boot,
                       seed=_sub_seed(ctx.seed, "bt", scale), confidence=cfg.confidence, systems=order)
    finite = bool(bt.table["log_strength"].notna().all())
    dense = is_dense(kept) and finite
    ranked = list(bt.table["system"]) if finite else (order or system_order(kept))
    diff = bt_difference_table(bt)
    cautions = bootstrap_warnings(bt, n_raters)
    return _Pairwise(cfg=cfg, sc=SCALES[scale], scale=scale, kept=kept, allr=allr, order=order, t=t,
                     bt=bt, diff=diff, dense=dense, ranked=ranked, style=ctx.style_for(ranked),
                     pct=f"{cfg.confidence:.0%}", n_raters=n_raters, n_pairs=len(diff), cautions=cautions,
                     caution="".join(" " + c for c in cautions),
                     primary="Bradley–Terry" if dense else "per-comparison tests")


def _pairwise_scale(ctx: _Ctx, scale: str, kept: pd.DataFrame, allr: pd.DataFrame) -> None:
    mm = genea.mismatched_pairs(pd.concat([kept["system_a"], kept["system_b"]]).unique())
    if mm:  # appropriateness battles (matched vs mismatched speech) are their own analysis
        inv = kept["system_a"].isin(list(mm)) | kept["system_b"].isin(list(mm))
        _appropriateness(ctx, scale, kept[inv])
        kept = kept[~inv]
        allr = allr[~(allr["system_a"].isin(list(mm)) | allr["system_b"].isin(list(mm)))]
        if kept.empty:
            return
    r = _pairwise_fit(ctx, scale, kept, allr)
    _genea_protocol(ctx, scale, kept)
    _pairwise_primary(ctx, r)
    _pairwise_secondary(ctx, r)
    pb = _pairwise_extras(ctx, r)
    ctx.primary.append(f"{scale}: {r.primary}")
    ctx.methods.append(_pairwise_methods(r, bool(len(pb))))
    ctx.step(f"{scale}: robustness models and agreement")
    _robust_and_alpha(ctx, scale, kept, ranked_order=r.order or _order_by(r.bt.table, "log_strength"),
                      units=("item", "comparison"), data_for_alpha=canonical_pairs(kept, r.order))


def _appropriateness(ctx: _Ctx, scale: str, rows: pd.DataFrame) -> None:
    """GENEA appropriateness: each system's motion for matched vs mismatched speech."""
    cfg = ctx.cfg
    pct = f"{cfg.confidence:.0%}"
    t = genea.appropriateness(rows, n_boot=cfg.n_boot, seed=_sub_seed(ctx.seed, "appropriateness", scale),
                              confidence=cfg.confidence)
    sec = Section(f"Appropriateness against mismatched speech ({scale})")
    sec.paragraphs.append(
        f"{len(rows)} battles between a system's motion for the matching speech and its motion for "
        "mismatched speech (conditions named '<system> mismatched'); analysed on their own, not in "
        "the ranking of systems. Matched win rate: a strong preference counts twice, a weak one "
        "once, a tie is shared half/half; 0.5 = raters cannot tell matched from mismatched.")
    few = t["raters"] < MIN_RATERS
    disp = pd.DataFrame({
        "System": [f"{name} †" if f else name for name, f in zip(t["system"], few)],
        "Battles (raters)": [f"{b} ({r})" for b, r in zip(t["battles"], t["raters"])],
        f"Matched win rate [{pct} CI]": [f"{fmt_value(v, 'share')} {_ci(a, b)}" for v, a, b in
                                         zip(t["matched_win_rate"], t["ci_low"], t["ci_high"])],
        f"MAS [{pct} CI]": [f"{fmt_value(v)} {_ci(a, b)}" for v, a, b in zip(t["mas"], t["mas_low"], t["mas_high"])],
    })
    ctx.table(sec, f"appropriateness_{scale}", "Appropriateness per system: matched win rate (ties "
              f"split, strong ×2) with a {pct} percentile interval from {cfg.n_boot} bootstrap rounds "
              "over raters, and the mean appropriateness score (MAS, +2 … −2, + = matched preferred) "
              f"with a {pct} cluster-robust interval. † fewer than {MIN_RATERS} raters: the "
              "intervals rest on a handful of people.", t, disp)
    if few.any():
        sec.paragraphs.append(f"Warning: {int(few.sum())} of {len(t)} systems' appropriateness rests on "
                              f"fewer than {MIN_RATERS} raters (marked †); their intervals are unreliable.")
    ctx.sections.append(sec)
    ctx.methods.append(
        f"Appropriateness ({scale}): battles of matched against mismatched speech were analysed "
        "separately from the ranking (GENEA protocol): per system the matched win rate with ties split "
        f"and strong preferences counted twice ({pct} percentile interval, {cfg.n_boot} bootstrap "
        "rounds over raters) and the mean appropriateness score with a cluster-robust t interval.")


def _genea_protocol(ctx: _Ctx, scale: str, kept: pd.DataFrame) -> None:
    """Counterbalancing (votes per pair, segment and side) and the reasons raters ticked."""
    per_pair, per_seg = genea.counterbalance(kept)
    sec = Section(f"Counterbalancing and reasons ({scale})", level=3)
    where = ("the side shown" if kept["side_shown"].isin(["left", "right"]).any()
             else "the order in the file (model_a first; the file records no screen side)")
    unbalanced = per_pair[per_pair["p_balance"] < 0.05]
    sec.paragraphs.append(
        f"Votes per pair range from {per_pair['votes'].min()} to {per_pair['votes'].max()} over "
        f"{len(per_pair)} pairs and {len(per_seg)} segments ({per_seg['votes'].min()}–"
        f"{per_seg['votes'].max()} votes per segment). Position = {where}; "
        + (f"{len(unbalanced)} pair(s) deviate from an even split (binomial p < 0.05, uncorrected)."
           if len(unbalanced) else "no pair deviates from an even split (binomial p < 0.05)."))
    ctx.table(sec, f"counterbalance_pairs_{scale}", "Votes per pair and how often the first-named "
              f"system was in the first position ({where}); two-sided binomial test of an even split.",
              per_pair)
    ctx.table(sec, f"counterbalance_segments_{scale}", "Votes, distinct pairs and raters per segment.",
              per_seg)
    reasons = ctx.genea_reasons
    if reasons is not None and len(reasons):
        tally = genea.reason_tally(reasons)
        ctx.table(sec, f"reasons_{scale}", "Reasons raters ticked (GENEA battles juiceOptions; free "
                  "text counted as 'other'): ticks, share of battles with a reason, and the system that "
                  "won those battles most often.", tally)
    ctx.sections.append(sec)


def _bt_items(ctx: _Ctx, r: _Pairwise, target: Section) -> None:
    """Bradley–Terry table, forest plot and simultaneous differences."""
    cfg, sc, scale, kept, t, bt, diff = r.cfg, r.sc, r.scale, r.kept, r.t, r.bt, r.diff
    dense, ranked, style, pct, n_raters, n_pairs = r.dense, r.ranked, r.style, r.pct, r.n_raters, r.n_pairs
    cautions, caution, w = r.cautions, r.caution, cfg.weights
    ctx.table(target, f"bradley_terry_{scale}", f"Bradley–Terry ranking (best first): Elo = 1000 + "
              f"{ELO_PER_LOGIT:.1f} × log-strength (mean 0), {pct} CI = estimate ± t(G−1) × "
              f"bootstrap SE (G = {n_raters} raters resampled, {bt.n_boot} rounds); graded weights "
              f"strong {w.strong:g}, weak {w.weak:g}, tie {w.tie:g} each way." + caution,
              bt.table, _bt_display(bt.table, pct))
    ctx.figure(target, f"bt_forest_{scale}", f"Bradley–Terry Elo with {pct} intervals (bootstrap "
               "over raters), best at the top; n = answers involving the system.",
               fg.forest_figure(bt.table, title=f"Bradley–Terry ranking ({scale})", style=style))
    ctx.table(target, f"bt_differences_{scale}", f"Differences of Bradley–Terry log-strengths "
              f"(A − B) with simultaneous {pct} intervals over all {n_pairs} pairs (max-|z| "
              "bootstrap over raters, t(G−1)) and adjusted p-values; a difference is significant "
              "when its interval excludes 0. Direct answers: answers on that pair (the estimate "
              f"also uses indirect comparisons). † fewer than {MIN_RATERS} raters on the pair."
              + caution, diff, _bt_diff_display(diff, pct))



def _pairwise_primary(ctx: _Ctx, r: _Pairwise) -> None:
    """The primary-analysis section: what it is, its tables and the significance matrix."""
    cfg, sc, scale, kept, t, bt, diff = r.cfg, r.sc, r.scale, r.kept, r.t, r.bt, r.diff
    dense, ranked, style, pct, n_raters, n_pairs = r.dense, r.ranked, r.style, r.pct, r.n_raters, r.n_pairs
    cautions, caution, w = r.cautions, r.caution, cfg.weights
    primary = r.primary
    few_t = int((t["n_participants"] < MIN_RATERS).sum())
    sec = Section(f"Pairwise comparisons ({scale}): primary analysis, {primary}")
    sec.paragraphs.append(f"Scale {scale}: {sc.description}. Scores are signed: positive = the first "
                          "system of the comparison (A) preferred. "
                          f"{len(kept)} answers from {n_raters} raters on {len(t)} compared pair(s) of "
                          f"{len(system_order(kept))} systems.")
    if dense:
        sec.paragraphs.append(
            "Primary analysis: Bradley–Terry strengths fitted to all answers at once (every answer "
            "informs every system through the shared strengths), with intervals from a bootstrap over "
            f"raters; differences between systems are judged with simultaneous {pct} intervals over "
            f"all {n_pairs} pairs (family-wise), and the significance matrix shows exactly those "
            "decisions. Per-comparison statistics follow as secondary results; a comparison with fewer "
            f"than {MIN_TEST_ANSWERS} answers is not tested on its own (\"{TOO_FEW_TEXT}\").")
    else:
        sec.paragraphs.append(
            "Primary analysis: per-comparison mean scores with rater-clustered intervals and "
            f"Wilcoxon signed-rank tests, Holm-corrected across the {int(t['tested'].sum())} tested "
            "comparisons (the design is not dense enough — fewer than 3 systems or fewer than half of "
            "the pairs compared directly — for Bradley–Terry to be the primary analysis; its ranking "
            f"is shown as secondary). Comparisons with fewer than {MIN_TEST_ANSWERS} answers are not "
            f"tested (\"{TOO_FEW_TEXT}\").")
    groups = comparison_groups(kept)
    if len(groups) > 1:
        sec.paragraphs.append(
            f"Warning: the compared pairs form {len(groups)} unconnected groups of systems ("
            + "; ".join(", ".join(g) for g in groups) + "): no answer relates one group to another, so "
            "they look like separate studies. Analyse each in its own report (one study, one analysis); "
            "no ranking across groups is meaningful.")
    if few_t:
        sec.paragraphs.append(f"Warning: {few_t} of {len(t)} comparisons rest on fewer than {MIN_RATERS} "
                              "raters (marked †); their intervals describe a handful of people.")
    sec.paragraphs += bt.notes + cautions

    if dense:
        _bt_items(ctx, r, sec)
        sig = significance_matrix(diff.rename(columns={"difference": "mean"}), ranked, tested_col="")
        ctx.figure(sec, f"significance_{scale}", "Significance matrix of the primary analysis: "
                   f"Bradley–Terry differences whose simultaneous {pct} interval excludes 0; systems "
                   "in Bradley–Terry order.",
                   fg.significance_figure(sig, title=f"Significance ({scale})",
                                          what=f"Bradley–Terry, simultaneous {pct} intervals"))
    else:
        sig = significance_matrix(t, ranked)
        ctx.figure(sec, f"significance_{scale}", "Significance matrix of the primary analysis: "
                   f"Holm-corrected Wilcoxon tests (alpha {cfg.alpha:g}); white with a dot = fewer than "
                   f"{MIN_TEST_ANSWERS} answers, not tested.",
                   fg.significance_figure(sig, title=f"Significance ({scale})",
                                          what=f"Wilcoxon, Holm, alpha {cfg.alpha:g}"))
    ctx.sections.append(sec)


def _pairwise_secondary(ctx: _Ctx, r: _Pairwise) -> None:
    """Per-comparison statistics and figures (secondary in dense designs)."""
    cfg, sc, scale, kept, t, bt, diff = r.cfg, r.sc, r.scale, r.kept, r.t, r.bt, r.diff
    dense, ranked, style, pct, n_raters, n_pairs = r.dense, r.ranked, r.style, r.pct, r.n_raters, r.n_pairs
    cautions, caution, w = r.cautions, r.caution, cfg.weights
    s2 = Section(f"Per comparison ({scale})" + (": secondary" if dense else ""), level=3)
    ctx.table(s2, f"pairwise_{scale}", f"Per comparison: mean score with {pct} cluster-robust CI "
              f"(raters as clusters, t with G−1 df; the default), the {pct} Student-t CI that treats "
              "answers as independent (secondary, narrower than it should be when raters give several "
              "answers), shares preferring A / equal / B, Wilcoxon signed-rank p "
              f"(zero_method={cfg.zero_method}; exact without ties and zeros for n ≤ 50, otherwise "
              "normal approximation with tie and continuity correction), Holm-corrected across the "
              f"tested comparisons, and the rank-biserial r. \"{TOO_FEW_TEXT}\": fewer than "
              f"{MIN_TEST_ANSWERS} answers, not tested. † fewer than {MIN_RATERS} raters. CSV: also "
              "the participant-bootstrap CI, median, sign test and common-language effect size."
              + _independence("Student-t CIs, Wilcoxon and sign tests", len(kept), n_raters),
              t, _pairwise_display(t, pct))
    m = max(abs(sc.low), abs(sc.high))
    ctx.figure(s2, f"comparisons_{scale}", f"Mean {scale} score per comparison with {pct} "
               "cluster-robust intervals (raters), sorted; right: answers/raters; † fewer than "
               f"{MIN_RATERS} raters (grey); no bar = every answer the same, so no interval.",
               fg.comparison_figure(t, title=f"Mean score per comparison ({scale})",
                                    xlabel="score (positive = A better)", lim=(-m, m), style=style))
    ctx.figure(s2, f"preferences_{scale}", "Share of answers preferring A, equal, B per comparison; "
               f"right: answers/raters; † fewer than {MIN_RATERS} raters.",
               fg.preference_figure(t, title=f"Preferences ({scale})"))
    if not dense:
        _bt_items(ctx, r, s2)
    ctx.sections.append(s2)



def _pairwise_extras(ctx: _Ctx, r: _Pairwise) -> pd.DataFrame:
    """Position bias, results without exclusions and win fractions; returns the position-bias table."""
    cfg, sc, scale, kept, t, bt, diff = r.cfg, r.sc, r.scale, r.kept, r.t, r.bt, r.diff
    dense, ranked, style, pct, n_raters, n_pairs = r.dense, r.ranked, r.style, r.pct, r.n_raters, r.n_pairs
    cautions, caution, w = r.cautions, r.caution, cfg.weights
    allr, order = r.allr, r.order
    pb = position_bias(kept, confidence=cfg.confidence, zero_method=cfg.zero_method)
    if len(pb):
        s3 = Section(f"Position bias ({scale})", level=3)
        s3.paragraphs.append("Each answer re-expressed as a preference for the LEFT stimulus; with "
                             "randomised sides a mean different from 0 means raters favour a side.")
        ctx.table(s3, f"position_bias_{scale}", "Left-side preference per comparison and overall "
                  "(Wilcoxon and sign tests against 0)."
                  + _independence("tests", len(kept), n_raters), pb)
        ctx.sections.append(s3)

    if len(allr) != len(kept):
        t_all = pairwise_table(allr, confidence=cfg.confidence, n_boot=0, zero_method=cfg.zero_method,
                               order=order, alpha=cfg.alpha)
        cmp = t[["comparison", "n", "mean", "p_holm"]].merge(
            t_all[["comparison", "n", "mean", "p_holm"]], on="comparison", how="outer",
            suffixes=("_screened", "_all"))
        s4 = Section(f"With and without exclusions ({scale})", level=3)
        ctx.table(s4, f"pairwise_{scale}_exclusions", "Mean score and Holm-adjusted Wilcoxon p after "
                  "screening and with every rater kept.", cmp)
        ctx.sections.append(s4)

    wf = bt.win_fraction.loc[ranked, ranked] if set(ranked) <= set(bt.win_fraction.index) else bt.win_fraction
    s5 = Section(f"Win fractions ({scale})", level=3)
    ctx.table(s5, f"win_fraction_{scale}", "Weighted share of wins of the row system over the column "
              "system (– = never compared).", wf.reset_index(names="system"))
    ctx.sections.append(s5)
    if ctx.subjective is None and bt.table["log_strength"].notna().all():
        ctx.subjective = bt.table.set_index("system")["log_strength"]
        ctx.subjective_label = f"Bradley–Terry log-strength ({scale})"

    return pb


def _pairwise_methods(r: _Pairwise, position: bool) -> str:
    """The methods paragraph of one pairwise scale."""
    cfg, sc, scale, kept, t, bt, diff = r.cfg, r.sc, r.scale, r.kept, r.t, r.bt, r.diff
    dense, ranked, style, pct, n_raters, n_pairs = r.dense, r.ranked, r.style, r.pct, r.n_raters, r.n_pairs
    cautions, caution, w = r.cautions, r.caution, cfg.weights
    untested = int((~t["tested"]).sum())
    bt_method = (
        f"Bradley–Terry: maximum-likelihood log-strengths (Newton iterations, centred to mean 0) with "
        f"graded weights (strong answer {w.strong:g}, weak {w.weak:g}, tie {w.tie:g} to each side; "
        f"strong = the scale's extreme), Elo = 1000 + {ELO_PER_LOGIT:.1f} x log-strength; {pct} intervals "
        f"estimate ± t(G−1) × SE with SE the SD of {bt.n_boot} bootstrap fits resampling the G = "
        f"{n_raters} raters (all their answers together) times sqrt(G/(G−1))"
        + (f" ({bt.n_failed} rounds without a finite estimate left out)" if bt.n_failed else "")
        + f"; differences between systems with simultaneous {pct} intervals over all {n_pairs} pairs "
        "(single-step max-|z| over the same bootstrap rounds, carried to t(G−1)) and the matching "
        "adjusted p-values. ")
    per_cmp = (
        f"For each of the {len(t)} compared pair(s): n, the mean score with a {pct} cluster-robust CI "
        "(CR1 standard error with raters as clusters, t with G−1 degrees of freedom), as secondary "
        f"results a {pct} Student-t CI treating answers as independent and a {pct} percentile "
        f"participant-bootstrap CI ({cfg.n_boot} rounds), the median, the shares of answers preferring "
        "A, equal and B with Wilson score CIs, and — for comparisons with at least "
        f"{MIN_TEST_ANSWERS} answers ({len(t) - untested} of {len(t)}) — a two-sided Wilcoxon "
        f"signed-rank test against 0 (scipy.stats.wilcoxon, zero_method='{cfg.zero_method}'; exact "
        "null distribution when there are no zeros or ties and n <= 50, otherwise the normal "
        "approximation with tie correction and continuity correction), Holm correction across the "
        f"tested comparisons (alpha {cfg.alpha:g}), an exact two-sided sign test, the matched-pairs "
        "rank-biserial correlation and the common-language effect size P(score > 0) + P(score = 0)/2. "
        "The Student-t CIs, Wilcoxon and sign tests treat each answer as independent, not accounting "
        f"for rater clustering (here {len(kept)} "
        f"answers from {n_raters} raters). ")
    return (
        f"Pairwise ratings on the {scale} scale ({sc.description}; positive = first system better). "
        + (f"Primary analysis: {bt_method}The significance matrix shows these Bradley–Terry decisions. "
           f"Secondary, per comparison: {per_cmp}" if dense else
           f"Primary analysis, per comparison: {per_cmp}The significance matrix shows the Holm-corrected "
           f"Wilcoxon decisions. Secondary: {bt_method}")
        + ("Position bias: answers re-expressed as preference for the left stimulus, tested against 0 "
           "with the same Wilcoxon and sign tests. " if position else ""))


def _order_by(table: pd.DataFrame, col: str) -> list[str]:
    return list(table.sort_values(col, ascending=False, kind="stable")["system"])


def _robust_and_alpha(ctx: _Ctx, scale: str, kept: pd.DataFrame, *, ranked_order: list[str],
                      units: tuple[str, ...], data_for_alpha: pd.DataFrame) -> None:
    if ctx.cfg.robustness:
        _robustness(ctx, scale, kept, ranked_order)
    _agreement(ctx, scale, units, data_for_alpha)


def _robustness(ctx: _Ctx, scale: str, kept: pd.DataFrame, ranked_order: list[str]) -> None:
    """Ordinal and linear mixed models as robustness checks of the primary analysis."""
    cfg = ctx.cfg
    pct = f"{cfg.confidence:.0%}"
    ref_order = ranked_order[::-1] if not cfg.systems else list(cfg.systems)
    s5 = Section(f"Robustness models ({scale})", level=3)
    ord_t, ord_n = ordinal_model(kept, ref_order, confidence=cfg.confidence)
    mix_t, mix_n = mixed_model(kept, ref_order, confidence=cfg.confidence)
    s5.paragraphs += ord_n + mix_n
    both = pd.concat([x for x in (ord_t, mix_t) if len(x)], ignore_index=True) \
        if len(ord_t) or len(mix_t) else pd.DataFrame(columns=ord_t.columns)
    if len(both):
        bad = (both["status"] == NOT_CONVERGED).to_numpy()
        disp = pd.DataFrame({
            "Model": both["model"], "Term": both["term"],
            f"Estimate [{pct} CI]": [NOT_CONVERGED if b else f"{fmt_value(e)} {_ci(lo, hi)}"
                                     for b, e, lo, hi in zip(bad, both["estimate"], both["ci_low"],
                                                             both["ci_high"])],
            "SE": both["se"].map(fmt_value), "p": both["p"].map(lambda v: fmt_value(v, "p")),
            "Status": both["status"]})
        ctx.table(s5, f"robustness_{scale}", f"Model estimates relative to {ref_order[0]} "
                  f"(b = 0) with {pct} Wald CIs: cumulative-logit ordinal model (statsmodels "
                  "OrderedModel) and linear mixed model with crossed random intercepts for "
                  "participant and item (REML)."
                  + (" A model that did not converge is shown without numbers." if bad.any() else ""),
                  both, disp)
    ctx.sections.append(s5)
    ctx.methods.append(
        f"Robustness ({scale}): " + ("a cumulative-logit ordinal regression (statsmodels "
        "OrderedModel, BFGS) and " if len(ord_t) else "")
        + "a linear mixed model with crossed random intercepts for participant and item "
        "(REML via the Woodbury identity, reports.lmm; matches statsmodels MixedLM where that "
        "converges) on "
        + ("+1/-1 system contrasts (latent preference b[A] - b[B], plus a left-side term when "
           "sides are known)" if SCALES[scale].kind == "pairwise" else "system indicators")
        + f", reference system {ref_order[0]}.")


def _agreement(ctx: _Ctx, scale: str, units: tuple[str, ...], data_for_alpha: pd.DataFrame) -> None:
    """Krippendorff's alpha (with and without hidden reference and anchors on absolute scales)."""
    cfg = ctx.cfg
    pct = f"{cfg.confidence:.0%}"
    variants = [("all systems", data_for_alpha)]
    if SCALES[scale].kind == "absolute":
        systems = list(dict.fromkeys(data_for_alpha["system_a"]))
        ref = ab.find_reference(systems, None if cfg.screening.hidden_reference in (None, "auto")
                                else cfg.screening.hidden_reference)
        special = ([ref] if ref else []) + ab.find_anchors(systems)
        if special:
            variants = [(f"systems under test (without {', '.join(special)})",
                         data_for_alpha[~data_for_alpha["system_a"].isin(special)]), variants[0]]
    rows = []
    for label, data in variants:
        unit = data[[c for c in units if c in data]].astype(str).agg(" | ".join, axis=1)
        a = krippendorff_alpha(unit.to_numpy(), data["score"].to_numpy(float), cfg.agreement_level,
                               n_boot=cfg.n_boot, seed=_sub_seed(ctx.seed, "alpha", scale, label),
                               confidence=cfg.confidence)
        few = a["units"] < MIN_ALPHA_UNITS
        a["status"] = f"too few units ({a['units']} < {MIN_ALPHA_UNITS})" if few else "ok"
        rows.append({"systems": label, "default": not rows, **a})
    tab = pd.DataFrame(rows)
    s6 = Section(f"Agreement ({scale})", level=3)
    first = rows[0]
    text = (f"Krippendorff's alpha ({cfg.agreement_level}) over {first['systems']} = "
            f"{fmt_value(first['alpha'])}, {pct} bootstrap CI {_ci(first['ci_low'], first['ci_high'])}, "
            f"over {first['units']} units ({' x '.join(units)}) with {first['pairable_values']} "
            "pairable values.")
    if len(rows) > 1:
        text += (f" This is the default: the hidden reference and anchors are rated near the ends "
                 "of the scale by design, so including them inflates agreement; with them alpha = "
                 f"{fmt_value(rows[1]['alpha'])} {_ci(rows[1]['ci_low'], rows[1]['ci_high'])}.")
    if first["units"] < MIN_ALPHA_UNITS:
        text += (f" Too few units: with fewer than {MIN_ALPHA_UNITS} units rated by at least two raters, "
                 "alpha and its bootstrap CI say nothing about agreement.")
    s6.paragraphs.append(text)
    disp = pd.DataFrame({
        "Systems": tab["systems"], "Alpha": tab["alpha"].map(fmt_value),
        f"{pct} CI": [_ci(x, y) for x, y in zip(tab["ci_low"], tab["ci_high"])],
        "Units": tab["units"].map(str), "Pairable values": tab["pairable_values"].map(str),
        "Status": tab["status"]})
    ctx.table(s6, f"agreement_{scale}", f"Krippendorff's alpha ({cfg.agreement_level}); the first "
              "row is the report's default." + (" Too few units for a meaningful estimate."
                                                if first["units"] < MIN_ALPHA_UNITS else ""), tab, disp)
    ctx.sections.append(s6)
    ctx.methods.append(
        f"Agreement ({scale}): Krippendorff's alpha at the {cfg.agreement_level} level (the "
        f"krippendorff package; Krippendorff 2011) over units {' x '.join(units)}"
        + (f", by default over the systems under test without the hidden reference and anchors "
           f"(also given with them)" if len(rows) > 1 else "")
        + f"; {pct} percentile CI from {cfg.n_boot} bootstrap rounds over units with the expected "
        "disagreement held fixed (Hayes & Krippendorff 2007).")


# ---------------------------------------------------------------- absolute


def _wilcoxon_display(pw: pd.DataFrame, unit: str) -> pd.DataFrame:
    return pd.DataFrame({
        "Comparison (A vs B)": [f"{a} vs {b}" for a, b in zip(pw["system_a"], pw["system_b"])],
        f"n ({unit}s)": pw["n"].map(str),
        "Mean diff. (A − B)": pw["mean_diff"].map(fmt_value),
        "p Wilcoxon (Holm)": [fmt_value(p, "p") if t else TOO_FEW_TEXT for p, t in zip(pw["p_holm"], pw["tested"])],
        "Rank-biserial r": pw["rank_biserial"].map(fmt_value),
    })


def _systems_display(summ: pd.DataFrame, pct: str) -> pd.DataFrame:
    """The per-system table of an absolute scale for HTML/LaTeX (6 columns)."""
    return pd.DataFrame({
        "System": summ["system"], "n (raters)": [f"{n} ({r})" for n, r in zip(summ["n"], summ["n_participants"])],
        f"Mean [{pct} CI, raters]": [f"{fmt_value(m)} {_ci(a, b)}" for m, a, b in
                                     zip(summ["mean"], summ["cl_low"], summ["cl_high"])],
        f"{pct} t CI (ratings indep.)": [_ci(a, b) for a, b in zip(summ["t_low"], summ["t_high"])],
        f"Median [{pct} CI]": [f"{fmt_value(m)} {_ci(a, b)}" for m, a, b in
                               zip(summ["median"], summ["median_low"], summ["median_high"])],
        "SD": summ["sd"].map(fmt_value),
    })


def _absolute_scale(ctx: _Ctx, scale: str, kept: pd.DataFrame, allr: pd.DataFrame) -> None:
    cfg = ctx.cfg
    sc = SCALES[scale]
    pct = f"{cfg.confidence:.0%}"
    n_raters = kept["participant"].nunique()
    ctx.step(f"{scale}: per-system summaries and tests")
    summ = ab.system_summary(kept, confidence=cfg.confidence, n_boot=cfg.n_boot,
                             seed=_sub_seed(ctx.seed, "absolute", scale))
    order = list(summ["system"])
    style = ctx.style_for(order)
    pw = ab.pairwise_wilcoxon(kept, order, zero_method=cfg.zero_method, alpha=cfg.alpha, unit="rater")
    sec = Section(f"Ratings per system ({scale}): primary analysis, rater-level tests")
    sec.paragraphs.append(f"Scale {scale}: {sc.description}. {len(kept)} ratings from {n_raters} raters.")
    lo, hi = float(kept["score"].min()), float(kept["score"].max())
    if scale == "mushra" and hi <= 5 and (kept["score"] == kept["score"].round()).all():
        sec.paragraphs.append(
            f"Warning: every rating lies between {lo:g} and {hi:g} — this does not look like a 0–100 "
            "MUSHRA slider but like a 1–5 category scale (e.g. ACR). Check the test's scale; the "
            "analysis below treats the numbers as given.")
    sec.paragraphs.append(
        "Primary analysis: per-system means with cluster-robust intervals (raters as clusters), and "
        "pairwise two-sided Wilcoxon signed-rank tests on each rater's mean rating of the two "
        f"systems (one pair of values per rater, so raters — not ratings — are the unit), "
        f"Holm-corrected across the {int(pw['tested'].sum())} tested pairs; the significance "
        "matrix shows these decisions.")
    ref = ab.find_reference(order, None if cfg.screening.hidden_reference in (None, "auto")
                            else cfg.screening.hidden_reference)
    anchors = ab.find_anchors(order)
    if ref or anchors:
        parts = []
        if ref:
            parts.append(f"the hidden reference ({ref}) ranks {order.index(ref) + 1} of {len(order)} by mean")
        for a in anchors:
            parts.append(f"the anchor {a} ranks {order.index(a) + 1} of {len(order)}")
        sec.paragraphs.append("Sanity check: " + "; ".join(parts) + ".")
    disp = _systems_display(summ, pct)
    ctx.table(sec, f"systems_{scale}", f"Per system (best mean first): mean with {pct} cluster-robust "
              "CI (raters as clusters, t with G−1 df; the default) and, secondary, the Student-t CI "
              "that treats ratings as independent; median with participant-bootstrap CI. CSV: also "
              "the participant-bootstrap CI of the mean."
              + _independence("Student-t CIs", len(kept), n_raters), summ, disp)
    groups = {s: kept.loc[kept["system_a"] == s, "score"].to_numpy() for s in order}
    pad = 0.03 * (sc.high - sc.low)
    ctx.figure(sec, f"box_{scale}", f"{scale} ratings per system (best mean first): box = quartiles, "
               "line = median, diamond = mean; n = ratings.",
               fg.box_figure(groups, title=f"Ratings per system ({scale})", ylabel=f"rating ({scale})",
                             ylim=(sc.low - pad, sc.high + pad), style=style))
    ctx.table(sec, f"pairwise_{scale}", "Primary pairwise tests: Wilcoxon signed-rank on per-rater "
              f"mean ratings (zero_method={cfg.zero_method}), Holm-corrected; \"{TOO_FEW_TEXT}\" = fewer "
              f"than {ab.MIN_TEST_RATERS} raters rated both.", pw, _wilcoxon_display(pw, "rater"))
    sig = significance_matrix(pw.rename(columns={"mean_diff": "mean"}), order)
    ctx.figure(sec, f"significance_{scale}", "Significance matrix of the primary analysis: "
               f"Holm-corrected rater-level Wilcoxon tests (alpha {cfg.alpha:g}); systems by mean.",
               fg.significance_figure(sig, title=f"Significance ({scale})",
                                      what=f"rater-level Wilcoxon, Holm, alpha {cfg.alpha:g}"))
    ctx.sections.append(sec)
    ctx.primary.append(f"{scale}: per-system means with rater-clustered CIs and rater-level Wilcoxon "
                       "tests (Holm)")

    block_keys = _absolute_secondary(ctx, scale, kept, allr, order, summ)
    ctx.methods.append(
        f"Absolute ratings on the {scale} scale ({sc.description}). Primary analysis: per system the "
        f"mean with a {pct} cluster-robust CI (CR1 standard error with raters as clusters, t with G−1 "
        "degrees of freedom), and pairwise two-sided Wilcoxon signed-rank tests on each rater's mean "
        f"rating of the two systems (zero_method='{cfg.zero_method}'; exact without zeros and ties "
        "for n <= 50, otherwise the normal approximation with tie and continuity correction; pairs "
        f"rated by fewer than {ab.MIN_TEST_RATERS} raters not tested) with Holm correction (alpha "
        f"{cfg.alpha:g}). Secondary: a {pct} Student-t CI and a {pct} percentile bootstrap CI "
        f"({cfg.n_boot} rounds resampling participants) of each mean, the median with a "
        "participant-bootstrap CI; as in ITU-R BS.1534 practice a Friedman test on complete blocks "
        "(one block = one participant's ratings of one item), Kendall's W = chi2/(n(k-1)), and "
        "pairwise Wilcoxon tests on paired block ratings with Holm correction — these treat each "
        f"rating or block as independent, not accounting for rater clustering (here {len(kept)} ratings in {len(block_keys)} blocks from "
        f"{n_raters} raters).")
    ctx.step(f"{scale}: robustness models and agreement")
    _robust_and_alpha(ctx, scale, kept, ranked_order=order, units=("item", "system_a"),
                      data_for_alpha=kept)




def _absolute_secondary(ctx: _Ctx, scale: str, kept: pd.DataFrame, allr: pd.DataFrame, order: list[str],
                        summ: pd.DataFrame) -> pd.DataFrame:
    """BS.1534-style block-level tests and the with/without-exclusions comparison; returns the
    blocks (participant x item)."""
    cfg = ctx.cfg
    n_raters = kept["participant"].nunique()
    s2 = Section(f"Block-level tests ({scale}): secondary", level=3)
    fr = ab.friedman(kept, order)
    s2.paragraphs.append(
        f"As in ITU-R BS.1534 practice: Friedman test over {fr['blocks']} complete blocks (participant "
        f"x item, from {n_raters} raters; blocks of the same rater treated as independent, not "
        f"accounting for rater clustering) and {fr['systems']} systems: chi2 = {fmt_value(fr['chi2'])}, "
        f"{p_text(fr['p'])}, Kendall's W = {fmt_value(fr['kendall_w'])}.")
    pwb = ab.pairwise_wilcoxon(kept, order, zero_method=cfg.zero_method, alpha=cfg.alpha)
    block_keys = kept[["participant", "item"]].drop_duplicates()
    ctx.table(s2, f"pairwise_blocks_{scale}", f"Pairwise Wilcoxon signed-rank tests on paired block "
              f"ratings (zero_method={cfg.zero_method}), Holm-corrected (secondary)."
              + _independence("tests", len(block_keys), n_raters, "block"), pwb, _wilcoxon_display(pwb, "block"))
    ctx.sections.append(s2)
    if len(allr) != len(kept):
        s_all = ab.system_summary(allr, confidence=cfg.confidence, n_boot=0)
        cmp = summ[["system", "n", "mean", "median"]].merge(
            s_all[["system", "n", "mean", "median"]], on="system", how="outer", suffixes=("_screened", "_all"))
        s3 = Section(f"With and without exclusions ({scale})", level=3)
        fr_all = ab.friedman(allr, order)
        s3.paragraphs.append(f"Friedman without exclusions: chi2 = {fmt_value(fr_all['chi2'])}, "
                             f"{p_text(fr_all['p'])} ({fr_all['blocks']} blocks).")
        ctx.table(s3, f"systems_{scale}_exclusions", "Per-system mean and median after screening and "
                  "with every rater kept.", cmp)
        ctx.sections.append(s3)
    if ctx.subjective is None:
        ctx.subjective = summ.set_index("system")["mean"]
        ctx.subjective_label = f"mean rating ({scale})"
    return block_keys


# ---------------------------------------------------------------- objective


#: At most this many metrics get a figure panel (those that differ most); the rest are in tables.
MAX_METRIC_PANELS = 8


def _metric_heading(column: str) -> str:
    """A score column's name in words with its shown unit (registry), else its words."""
    from evalkit.features.registry import metric_info
    from reports.document import human_header

    info = metric_info(column)
    return info.heading if info else human_header(column)


def _metric_text(column: str, value) -> str:
    """A value in the column's shown unit and precision (registry), else :func:`fmt_value`."""
    from evalkit.features.registry import metric_info

    info = metric_info(column)
    return info.format(value) if info else fmt_value(value)


def _constant_at_precision(values: pd.Series, column: str) -> bool:
    """Whether every value reads the same at the shown precision (or the column is empty)."""
    from evalkit.features.registry import metric_info

    x = values.dropna().to_numpy(float)
    if x.size == 0:
        return True
    info = metric_info(column)
    if info is None:
        return ob.has_no_variance(x)
    return len({info.shown(v) for v in x}) == 1


def _by_family(metrics: list[str]):
    """``[(family, metrics)]`` in registry order; one unnamed group when the registry knows none."""
    from evalkit.features.registry import FAMILIES, metric_info

    fams = {m: (metric_info(m).family if metric_info(m) else "Other metrics") for m in metrics}
    if all(f == "Other metrics" for f in fams.values()):
        return [(None, metrics)] if metrics else []
    return [(f, [m for m in metrics if fams[m] == f]) for f in (*FAMILIES, "Other metrics")
            if any(fams[m] == f for m in metrics)]


def _named_metrics(disp: pd.DataFrame, column: str) -> pd.DataFrame:
    """A formatted table with its metric column in words and human headers."""
    from reports.document import human_header

    out = disp.copy()
    out[column] = [_metric_heading(m) for m in out[column]]
    out.columns = [human_header(c) for c in out.columns]
    return out


def _shown_units(scores: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """``scores`` with each registered metric in its shown unit (e.g. mm, %), for figures."""
    from evalkit.features.registry import metric_info

    out = scores.copy()
    for m in metrics:
        info = metric_info(m)
        if info:
            out[m] = out[m] * info.factor
    return out


def _family_tables(ctx: _Ctx, sec: Section, summ: pd.DataFrame, tests: pd.DataFrame,
                   systems: list[str], shown_m: list[str]) -> None:
    """One table per metric family: mean ± SD per system in shown units, p (Holm) and ε²."""
    mean = summ.pivot(index="metric", columns="system", values="mean")
    sd = summ.pivot(index="metric", columns="system", values="sd")
    t_idx = tests.set_index("metric")
    for family, fam_metrics in _by_family(shown_m):
        disp = pd.DataFrame({"Metric": [_metric_heading(m) for m in fam_metrics]})
        for s in systems:
            disp[s] = [f"{_metric_text(m, mean.loc[m, s])} ± {_metric_text(m, sd.loc[m, s])}"
                       for m in fam_metrics]
        disp["p (Holm)"] = [fmt_value(t_idx.loc[m, "p_holm"], "p") for m in fam_metrics]
        disp["ε²"] = [fmt_value(t_idx.loc[m, "epsilon2"]) for m in fam_metrics]
        name = "metrics_by_system" if family is None else f"metrics_{_slug(family)}"
        ctx.table(sec, name, (f"{family}: " if family else "") + "per-system mean ± SD (metrics "
                  "that differ first), Kruskal–Wallis p across systems (Holm-corrected across "
                  "metrics) and ε² = H/(n−1). CSV: n, mean, sd, median, quartiles in stored units.",
                  summ[summ["metric"].isin(fam_metrics)].reset_index(drop=True), disp, subjective=False)


def _metric_figure(ctx: _Ctx, sec: Section, scores: pd.DataFrame, differ: pd.DataFrame,
                   shown_m: list[str], style) -> None:
    """Small multiples of the metrics that differ most, else of the varying metrics."""
    cfg = ctx.cfg
    if len(differ):
        shown = list(differ["metric"])[:MAX_METRIC_PANELS]
        what = (f"The {len(shown)} metric(s) that differ most between systems (largest ε² among "
                f"those with Holm p < {cfg.alpha:g})")
    else:
        shown = shown_m[:MAX_METRIC_PANELS]
        what = (f"No metric differs between systems (Holm p ≥ {cfg.alpha:g}); the first "
                f"{len(shown)} of {len(shown_m)} varying metric(s)")
    if shown:
        ctx.step(f"figures of {len(shown)} metric(s)")
        ctx.figure(sec, "metrics", f"{what}: each dot a clip, bar = mean with its {cfg.confidence:.0%} "
                   "t interval, n = clips per system; units on each panel's axis; every value is in "
                   "the tables.", fg.metric_facets(_shown_units(scores, shown), shown, style=style,
                                                   titles={m: _metric_heading(m) for m in shown},
                                                   confidence=cfg.confidence), subjective=False)


def _objective(ctx: _Ctx, scores: pd.DataFrame) -> None:
    cfg = ctx.cfg
    scores = ob.prepare_scores(scores, scores.attrs.get("source"))
    metrics = scores.attrs["metrics"]
    bookkeeping = scores.attrs.get("bookkeeping", [])
    sec = Section("Objective metrics")
    systems = list(dict.fromkeys(scores["system"]))
    style = ctx.style_for(systems)
    systems = style.sort(systems)
    tests = ob.metric_tests(scores, metrics)
    differ = tests[tests["p_holm"] < cfg.alpha].sort_values("epsilon2", ascending=False)
    sec.paragraphs.append(
        f"{len(scores)} clip(s) from {len(systems)} system(s), {len(metrics)} metric(s); "
        f"{len(differ)} differ between systems (Kruskal–Wallis, Holm-corrected, alpha {cfg.alpha:g})"
        + (": " + ", ".join(_metric_heading(m) for m in differ["metric"]) if len(differ) else "") + "."
        + (f" Bookkeeping columns ({', '.join(_metric_heading(b) for b in bookkeeping)}) describe the clips and are summarised, "
           "not tested." if bookkeeping else ""))
    summ = ob.metric_summary(scores, metrics)
    order_m = list(differ["metric"]) + [m for m in metrics if m not in set(differ["metric"])]
    constant = [m for m in order_m if _constant_at_precision(scores[m], m)]
    if constant:
        sec.paragraphs.append("The same value in every clip that has one, at the precision shown (not tabulated): "
                              + "; ".join(f"{_metric_heading(m)} = {_metric_text(m, scores[m].dropna().iloc[0])}"
                                          if scores[m].notna().any() else f"{_metric_heading(m)}: no values"
                                          for m in constant) + ".")
    shown_m = [m for m in order_m if m not in constant]
    _family_tables(ctx, sec, summ, tests, systems, shown_m)
    _metric_figure(ctx, sec, scores, differ, shown_m, style)
    ctx.table(sec, "metric_tests", "Kruskal–Wallis test across systems per metric, epsilon² = H/(n-1), "
              "Holm-adjusted across metrics; a metric without variance (all values within "
              f"{ob.NO_VARIANCE_TOL:g} of each other) is not tested (note).", tests,
              _named_metrics(format_frame(tests).replace(ob.NO_VARIANCE_NOTE, "no variance, not tested"),
                             "metric"), subjective=False)
    if bookkeeping:
        bk = ob.metric_summary(scores, bookkeeping)
        ctx.table(sec, "clip_description", "Bookkeeping columns per system (clip length, frame rate, "
                  "body height, …): described, not tested.",
                  bk, pd.DataFrame({
                      "Column": [_metric_heading(m) for m in bk["metric"]], "System": bk["system"],
                      "n": bk["n"].map(str),
                      "Mean": [_metric_text(m, v) for m, v in zip(bk["metric"], bk["mean"])],
                      "SD": [_metric_text(m, v) for m, v in zip(bk["metric"], bk["sd"])],
                      "Median": [_metric_text(m, v) for m, v in zip(bk["metric"], bk["median"])]}),
                  subjective=False)
    ctx.sections.append(sec)
    ctx.methods.append(
        "Objective metrics: per system n, mean, SD, median and quartiles; a Kruskal–Wallis test across "
        "systems per metric (scipy.stats.kruskal) with epsilon² = H/(n-1) and Holm correction across "
        f"metrics, leaving out metrics without variance (all values within {ob.NO_VARIANCE_TOL:g} "
        "of each other, numerical noise)"
        + (f" and bookkeeping columns ({', '.join(bookkeeping)}), which are only described"
           if bookkeeping else "")
        + ".")
    if ctx.kept is not None:
        _rater_agreement_section(ctx, scores, metrics)


def _agreement_display(judged: pd.DataFrame, pct: str, with_tau: bool) -> pd.DataFrame:
    """The metric-agreement table as shown: metric in words, direction, pairs, share [CI], τ."""
    disp = pd.DataFrame({
        "Metric": [_metric_heading(m) for m in judged["metric"]],
        "Better": judged["better"].to_numpy(),
        "Pairs": judged["pairs"].map(lambda v: f"{int(v)}").to_numpy(),
        f"Agreement [{pct}]": [f"{a:.2f} [{lo:.2f}, {hi:.2f}]" for a, lo, hi in
                               zip(judged["agreement"], judged["ci_low"], judged["ci_high"])]})
    if with_tau:
        disp["τ (systems)"] = [f"{v:+.2f} (p {fmt_value(p, 'p')})" if np.isfinite(v) else "–"
                               for v, p in zip(judged["tau"], judged["tau_p"])]
    notes = [n if n and "τ needs" not in n else "" for n in judged["note"]]
    if any(notes):
        disp["Note"] = notes
    return disp.reset_index(drop=True)


def _rater_agreement_section(ctx: _Ctx, scores: pd.DataFrame, metrics: list[str]) -> None:
    """Which metric agrees with the raters: one table, one figure (see reports.metric_agreement)."""
    from reports.metric_agreement import MAX_FIGURE_METRICS, MIN_TAU_SYSTEMS, agreement_figure, metric_agreement

    cfg = ctx.cfg
    sec = Section("Which metric agrees with the raters")
    if "item" not in scores.columns:
        sec.paragraphs.append("The scores have no item column, so no clip can be matched to a rated "
                              "pair; add the item each clip shows to compare metrics with the raters.")
        ctx.sections.append(sec)
        return
    ctx.step("metric agreement with the raters")
    constant = [m for m in metrics if _constant_at_precision(scores[m], m)]
    res = metric_agreement(ctx.kept, scores, [m for m in metrics if m not in constant], strength=ctx.subjective, directions=dict(cfg.better),
                           n_boot=cfg.n_boot,
                           confidence=cfg.confidence, seed=_sub_seed(ctx.seed, "metric_agreement"))
    t = res.table
    judged = t[np.isfinite(t["agreement"].to_numpy(float))].sort_values("agreement", ascending=False)
    skipped = t[~np.isfinite(t["agreement"].to_numpy(float))]
    rat = res.raters
    pct = f"{cfg.confidence:.0%}"
    n_sys = len(res.systems)
    tau_text = (f"System-level Kendall τ (per-system metric mean vs the {ctx.subjective_label}, signed "
                "so that τ > 0 = agrees) is given beside it."
                if n_sys >= MIN_TAU_SYSTEMS else
                f"No system-level Kendall τ: it needs at least {MIN_TAU_SYSTEMS} systems and there are "
                f"{n_sys} (with 4, even a perfect order has p = 0.083).")
    sec.paragraphs.append(
        f"{len(res.pairs)} rated clip pairs (an answer preferring one clip of an item; {res.ties} "
        f"answers of no preference left out) from {res.pairs['participant'].nunique()} raters. "
        "Agreement = share of those pairs where the metric prefers the clip the rater preferred "
        "(better = lower or higher as the metric registry says, or --better for other columns; a metric tie counts one half, "
        f"chance = 0.5), with a {pct} percentile bootstrap over raters. The raters' own agreement "
        "(two raters, one clip pair: the same clip preferred) is "
        + (f"{rat['agreement']:.2f} [{rat['ci_low']:.2f}, {rat['ci_high']:.2f}] over {rat['pairs']} "
           "pairs of answers: the level of a metric that judges like one more rater (not a hard "
           "bound: a metric that always picks the majority can exceed it). "
           if np.isfinite(rat["agreement"]) else "not available (no clip pair rated by two raters). ")
        + tau_text)
    why = [(m, note.split("; τ needs")[0]) for m, note in zip(skipped["metric"], skipped["note"])]
    why += [(m, "the same value in every clip") for m in constant]
    if why:
        groups: dict[str, list[str]] = {}
        for m, note in why:
            groups.setdefault(note, []).append(_metric_heading(m))
        sec.paragraphs.append("Not judged — " + "; ".join(f"{note}: {', '.join(ms)}" for note, ms in groups.items()) + ".")
    if len(judged):
        disp = _agreement_display(judged, pct, n_sys >= MIN_TAU_SYSTEMS)
        ctx.table(sec, "metric_agreement", "Agreement of each metric with the raters on rated clip "
                  f"pairs, {pct} bootstrap interval over raters"
                  + (", and system-level Kendall τ" if n_sys >= MIN_TAU_SYSTEMS else "")
                  + f"; raters' own agreement {rat['agreement']:.2f}."
                  + (" The metrics are real; the ratings are SIMULATED, so this says nothing about "
                     "people." if ctx.simulated else ""), t, disp)
        shown_n = min(len(judged), MAX_FIGURE_METRICS)
        ctx.figure(sec, "metric_agreement", "Agreement with the raters per metric (dot: share of "
                   f"the {len(res.pairs)} rated clip pairs of {res.pairs['participant'].nunique()} raters "
                   f"where the metric prefers the raters' clip; bar: {pct} bootstrap over raters; n = pairs "
                   "with both clips scored), chance (dotted) and the raters' own agreement (dashed, grey "
                   "band = its interval)"
                   + (f"; the {shown_n} metrics that agree most of {len(judged)}, all in the table."
                      if shown_n < len(judged) else "."),
                   agreement_figure(res, {m: _metric_heading(m) for m in judged["metric"]}))
    ctx.sections.append(sec)
    ctx.methods.append(
        "Metric agreement with the raters: every answer preferring one clip of an item is a rated "
        "pair (absolute ratings: two clips of an item one rater rated differently); a metric agrees "
        "when its better value (direction from the metric registry) is on the preferred clip, a tie "
        f"counts one half; {pct} percentile intervals from {cfg.n_boot} bootstrap resamples of raters; "
        "the raters' own agreement is the share of pairs of answers by two raters on one clip pair "
        f"that agree; system-level Kendall tau-b (scipy.stats.kendalltau) only with at least "
        f"{MIN_TAU_SYSTEMS} systems.")


# ---------------------------------------------------------------- entry point


def _check_system_list(ratings: pd.DataFrame, systems: tuple[str, ...] | None) -> None:
    """The given system order must name every rated system, and only those (typos show here)."""
    if systems is None:
        return
    data = ratings[~has_flag(ratings["flags"], "check")]
    rated = system_order(data)
    absent = [s for s in rated if s not in systems]
    extra = [s for s in systems if s not in rated]
    if absent or extra:
        parts = ([f"the ratings mention system(s) not in it: {', '.join(absent)}"] if absent else []) + \
                ([f"it names system(s) with no ratings: {', '.join(extra)}"] if extra else [])
        raise InputError(f"system list {', '.join(systems)}: {'; '.join(parts)} "
                         f"(rated systems: {', '.join(rated)})")


def _ratings_part(ctx: _Ctx, ratings: pd.DataFrame, simulated: bool) -> None:
    """Screening, then one primary analysis per scale; the screening details come after them."""
    cfg, out = ctx.cfg, ctx.out
    ctx.step("screening")
    res = screen(ratings, cfg.screening)
    _screening_section(ctx, res)
    analysed = res.kept.copy()
    ctx.kept = res.kept
    if simulated:
        analysed.insert(0, "data", "simulated")
    atomic_write_text(out / "ratings_analysed.csv", neutralise_frame(analysed).to_csv(index=False))
    screening_sections = ctx.sections
    ctx.sections = []
    for scale in dict.fromkeys(res.all["scale"]):
        kept = res.kept[res.kept["scale"] == scale]
        allr = res.all[res.all["scale"] == scale]
        if kept.empty:
            ctx.sections.append(Section(f"Scale {scale}", [f"No ratings on scale {scale} remain "
                                                           "after screening."]))
            continue
        if SCALES[scale].kind == "pairwise":
            _pairwise_scale(ctx, scale, kept, allr)
        else:
            _absolute_scale(ctx, scale, kept, allr)
    # what matters first: the primary analyses, then screening details
    ctx.sections += screening_sections


def _progress_printer(progress):
    """A callable for step messages: ``progress`` itself when callable, stderr lines when True,
    None (silent) when False; None = stderr only when it is a terminal."""
    import sys

    if callable(progress):
        return progress
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    return lambda msg: print(f"report: {msg}", file=sys.stderr, flush=True)


def build_report(ratings: pd.DataFrame | None, scores: pd.DataFrame | None, out_dir: str | Path, *,
                 seed: int = 0, title: str = "evalkit report", banner: str | None = None,
                 extra_tables: dict[str, pd.DataFrame] | None = None,
                 config: ReportConfig | None = None, progress=None,
                 simulated: bool | None = None, description: str | None = None) -> Path:
    """Write a report folder (see module doc) and return the path of ``report.html``.

    ``ratings``: long-format table of ONE study (validated here; ``None`` for objective-only
    reports); ``scores``: ``evalkit score`` table (one row per clip, ``system`` + metric columns)
    or None; ``title``: the study's title; ``description``: one paragraph under the title;
    ``banner``: text shown first (e.g. that ratings are simulated); ``extra_tables``: further
    objective tables rendered as sections in the given order. ``progress``: True = step messages
    on stderr, a callable receives them, None = only on a terminal. ``simulated``: whether the
    ratings are simulated (None = as the table says, see :func:`ratings_are_simulated`); then
    every table, figure and CSV made from them is marked SIMULATED, and a banner is added when
    none is given.
    """
    cfg = config or ReportConfig()
    if simulated is None:
        simulated = ratings_are_simulated(ratings)
    simulated = bool(simulated) and ratings is not None
    if simulated and not banner:
        banner = SIMULATED_BANNER
    if ratings is None and scores is None and not extra_tables:
        raise InputError("nothing to report: give ratings, scores or extra tables")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: the output path exists and is not a folder; give a folder for the report")
    out.mkdir(parents=True, exist_ok=True)
    ctx = _Ctx(out=out, cfg=cfg, seed=int(seed), simulated=simulated, log=_progress_printer(progress))
    summary = [description] if description else []
    if ratings is not None:
        if ratings.attrs.get("genea_reasons"):
            ctx.genea_reasons = pd.DataFrame(ratings.attrs["genea_reasons"])
        notes = list(ratings.attrs.get("notes", []))
        sources = list(ratings.attrs.get("sources", [])) or [ratings.attrs.get("source", "")]
        ratings = validate_ratings(ratings, "ratings table")
        _check_system_list(ratings, cfg.systems)
        summary.append(f"Ratings: {len(ratings)} answers from {ratings['participant'].nunique()} "
                       f"participants on scale(s) {', '.join(dict.fromkeys(ratings['scale']))}"
                       + (f" (from {', '.join(s for s in sources if s)})" if any(sources) else "") + ".")
        summary += notes
        _ratings_part(ctx, ratings, simulated)
    if scores is not None:
        summary.append(f"Objective scores: {len(scores)} clips"
                       + (f" (from {scores.attrs['source']})" if scores.attrs.get("source") else "") + ".")
        ctx.step("objective metrics")
        _objective(ctx, scores)
    for name, df in (extra_tables or {}).items():
        sec = Section(name)
        ctx.table(sec, f"extra_{_slug(name)}", name, df.reset_index(drop=True), subjective=False)
        ctx.sections.append(sec)
    if ctx.primary:
        summary.insert(1 if description else 0, "Primary analysis — " + "; ".join(ctx.primary) + ".")
    versions = package_versions()
    if ratings is not None:
        ctx.methods.append(f"All bootstrap resampling used the random seed {seed} (per-analysis streams "
                           "derived with numpy SeedSequence), so the report is reproducible. ")
    ctx.methods.append("Software: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".")
    if banner:
        ctx.methods.insert(0, banner)
    methods = "\n\n".join(ctx.methods)
    ctx.step("writing report.html")
    atomic_write_text(out / "methods.md", f"# Methods\n\n{methods}\n")
    html = render_html(title=title, banner=banner, sections=ctx.sections, methods=methods, summary=summary)
    return atomic_write_text(out / "report.html", html)
