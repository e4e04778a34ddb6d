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
from tqdm import tqdm

from evalkit.errors import InputError
from reports import absolute as ab
from reports import figures as fg
from reports import objective as ob
from reports.agreement import krippendorff_alpha
from reports.io import atomic_write_text
from reports.models import NOT_CONVERGED, mixed_model, ordinal_model
from reports.pairwise import pairwise_table, position_bias, significance_matrix
from reports.ranking import (BattleWeights, bootstrap_warnings, bradley_terry, bt_difference_table,
                             ELO_PER_LOGIT)
from reports.render import (FigureItem, Section, TableItem, fmt_value, format_frame, p_text, render_html,
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

    def __post_init__(self):
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
            f"rater clustering ({n_answers} {unit}s from {n_raters} raters); the participant-clustered "
            "bootstrap CI and the linear mixed model (robustness) are the clustered analyses.")


def _ci(lo, hi) -> str:
    return f"[{fmt_value(lo)}, {fmt_value(hi)}]"


# ---------------------------------------------------------------- screening


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
                             "ratings below threshold, and the rule that excluded the rater.", raters)
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


def _pairwise_display(t: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "comparison (A vs B)": t["comparison"],
        "n": t["n"].map(str), "raters": t["n_participants"].map(str),
        "mean": t["mean"].map(fmt_value), "t CI": [_ci(a, b) for a, b in zip(t["t_low"], t["t_high"])],
        "bootstrap CI": [_ci(a, b) for a, b in zip(t["boot_low"], t["boot_high"])],
        "median": t["median"].map(fmt_value),
        "A / = / B": [f"{a:.0%} / {e:.0%} / {b:.0%}" for a, e, b in
                      zip(t["share_a"], t["share_equal"], t["share_b"])],
        "p Wilcoxon": t["p_wilcoxon"].map(lambda v: fmt_value(v, "p")),
        "p Holm": t["p_holm"].map(lambda v: fmt_value(v, "p")),
        "p sign": t["p_sign"].map(lambda v: fmt_value(v, "p")),
        "r_rb": t["rank_biserial"].map(fmt_value), "CLES": t["cles"].map(lambda v: fmt_value(v, "cles")),
    })


def _pairwise_scale(ctx: _Ctx, scale: str, kept: pd.DataFrame, allr: pd.DataFrame) -> None:
    cfg = ctx.cfg
    sc = SCALES[scale]
    order = list(cfg.systems) if cfg.systems else None
    sec = Section(f"Pairwise comparisons ({scale})")
    sec.paragraphs.append(f"Scale {scale}: {sc.description}. Scores are signed: positive = the first "
                          "system of the comparison (A) preferred.")
    t = pairwise_table(kept, confidence=cfg.confidence, n_boot=cfg.n_boot,
                       seed=_sub_seed(ctx.seed, "pairwise", scale), zero_method=cfg.zero_method,
                       order=order, alpha=cfg.alpha)
    pct = f"{cfg.confidence:.0%}"
    ctx.table(sec, f"pairwise_{scale}", f"Per comparison: mean CMOS with {pct} Student-t and "
              f"participant-bootstrap CIs, median, shares preferring A / equal / B, Wilcoxon "
              f"signed-rank p (zero_method={cfg.zero_method}) with Holm correction, exact sign test, "
              "rank-biserial r and common-language effect size."
              + _independence("Student-t CIs, Wilcoxon and sign tests", len(kept),
                              kept["participant"].nunique()), t, _pairwise_display(t))
    pairs = canonical_pairs(kept, order)
    groups = {c: pairs.loc[pairs["comparison"] == c, "score"].to_numpy() for c in t["comparison"]}
    ctx.figure(sec, f"box_{scale}", f"{scale} scores per comparison: box = quartiles, line = "
               "median, diamond = mean; above 0 favours the first system.",
               fg.box_figure(groups, title=f"Scores per comparison ({scale})",
                             ylabel="score (positive = A better)", zero_line=True,
                             ylim=(sc.low - 0.3, sc.high + 0.3)))
    ctx.figure(sec, f"preferences_{scale}", "Share of answers preferring A, equal, B per comparison.",
               fg.preference_figure(t, title=f"Preferences ({scale})"))
    ctx.sections.append(sec)

    pb = position_bias(kept, confidence=cfg.confidence, zero_method=cfg.zero_method)
    if len(pb):
        s2 = Section(f"Position bias ({scale})", level=3)
        s2.paragraphs.append("Each answer re-expressed as a preference for the LEFT stimulus; with "
                             "randomised sides a mean different from 0 means raters favour a side.")
        ctx.table(s2, f"position_bias_{scale}", "Left-side preference per comparison and overall "
                  "(Wilcoxon and sign tests against 0)."
                  + _independence("tests", len(kept), kept["participant"].nunique()), pb)
        ctx.sections.append(s2)

    if len(allr) != len(kept):
        t_all = pairwise_table(allr, confidence=cfg.confidence, n_boot=0, zero_method=cfg.zero_method,
                               order=order, alpha=cfg.alpha)
        cmp = t[["comparison", "n", "mean", "p_holm"]].merge(
            t_all[["comparison", "n", "mean", "p_holm"]], on="comparison", how="outer",
            suffixes=("_screened", "_all"))
        s3 = Section(f"With and without exclusions ({scale})", level=3)
        ctx.table(s3, f"pairwise_{scale}_exclusions", "Mean CMOS and Holm-adjusted Wilcoxon p after "
                  "screening and with every rater kept.", cmp)
        ctx.sections.append(s3)

    # ranking
    systems = order or None
    bt = bradley_terry(kept, weights=cfg.weights, n_boot=cfg.bt_boot,
                       seed=_sub_seed(ctx.seed, "bt", scale), confidence=cfg.confidence,
                       systems=systems)
    s4 = Section(f"Ranking: Bradley–Terry ({scale})", level=3)
    s4.paragraphs += bt.notes
    cautions = bootstrap_warnings(bt, int(kept["participant"].nunique()))
    s4.paragraphs += cautions
    caution = "".join(" " + c for c in cautions)
    w = cfg.weights
    ctx.table(s4, f"bradley_terry_{scale}", f"Bradley–Terry log-strengths (mean 0) and Elo scale "
              f"with {pct} percentile CIs from {bt.n_boot} bootstrap rounds over participants; "
              f"weights strong {w.strong:g}, weak {w.weak:g}, tie {w.tie:g} each way." + caution,
              bt.table)
    ctx.figure(s4, f"bt_forest_{scale}", f"Bradley–Terry Elo with {pct} bootstrap CIs.",
               fg.forest_figure(bt.table, title=f"Bradley–Terry ranking ({scale})"))
    ranked = list(bt.table["system"])
    wf = bt.win_fraction.loc[ranked, ranked]
    ctx.table(s4, f"win_fraction_{scale}", "Weighted share of wins of the row system over the column "
              "system (– = never compared).", wf.reset_index(names="system"))
    n_pairs = len(ranked) * (len(ranked) - 1) // 2
    ctx.table(s4, f"bt_differences_{scale}", f"Differences of Bradley–Terry log-strengths with {pct} "
              f"bootstrap CIs; ci_excludes_0 = the CI excludes 0, uncorrected for the {n_pairs} pairs "
              "(not a significance test: the significance matrix uses Holm-corrected Wilcoxon tests)."
              + caution, bt_difference_table(bt))
    sig = significance_matrix(t, ranked, alpha=cfg.alpha)
    ctx.figure(s4, f"significance_{scale}", f"Significance matrix: Holm-corrected Wilcoxon tests "
               f"(alpha {cfg.alpha:g}); systems in Bradley–Terry order.",
               fg.significance_figure(sig, title=f"Significance ({scale})"))
    ctx.sections.append(s4)
    if ctx.subjective is None and bt.table["log_strength"].notna().all():
        ctx.subjective = bt.table.set_index("system")["log_strength"]
        ctx.subjective_label = f"Bradley–Terry log-strength ({scale})"

    n_cmp = len(t)
    ctx.methods.append(
        f"Pairwise ratings on the {scale} scale ({sc.description}; positive = first system better): "
        f"for each of the {n_cmp} comparison(s) we report n, the mean with a {pct} Student-t CI and a "
        f"{pct} percentile bootstrap CI from {cfg.n_boot} rounds resampling participants (all their "
        "answers together), the median, the shares of answers preferring A, equal and B with Wilson "
        f"score CIs, a two-sided Wilcoxon signed-rank test against 0 (scipy.stats.wilcoxon, "
        f"zero_method='{cfg.zero_method}', method='auto': exact for n <= 50 without ties or zeros, "
        "exhaustive permutation for n <= 13 with ties or zeros, otherwise the tie-corrected normal "
        "approximation), an exact two-sided sign test on the non-zero answers, Holm correction of the "
        f"Wilcoxon p-values across the comparisons (alpha {cfg.alpha:g}), the matched-pairs "
        "rank-biserial correlation (R+ - R-)/(R+ + R-) and the common-language effect size "
        "P(score > 0) + P(score = 0)/2. "
        f"The Student-t CIs, Wilcoxon and sign tests treat each answer as independent, not accounting "
        f"for rater clustering (here {len(kept)} answers from {kept['participant'].nunique()} raters, "
        "several answers per rater); the participant-clustered bootstrap CI and the linear mixed "
        "model with a random intercept per participant are the analyses that account for it. "
        + ("Position bias: answers re-expressed as preference for the left stimulus, tested against 0 "
           "with the same Wilcoxon and sign tests. " if len(pb) else "")
        + f"Bradley–Terry: maximum-likelihood log-strengths (Newton iterations, centred to mean 0) "
        f"with graded weights (strong answer {w.strong:g}, weak {w.weak:g}, tie {w.tie:g} to each "
        f"side; strong = the scale's extreme), Elo = 1000 + {ELO_PER_LOGIT:.1f} x log-strength, "
        f"{pct} percentile CIs from {bt.n_boot} bootstrap rounds over participants"
        + (f" ({bt.n_failed} rounds without a finite estimate left out)" if bt.n_failed else "")
        + "; the significance matrix uses the Holm-corrected Wilcoxon tests.")
    _robust_and_alpha(ctx, scale, kept, ranked_order=order or _order_by(bt.table, "log_strength"),
                      units=("item", "comparison"), data_for_alpha=pairs)


def _order_by(table: pd.DataFrame, col: str) -> list[str]:
    return list(table.sort_values(col, ascending=False, kind="stable")["system"])


def _robust_and_alpha(ctx: _Ctx, scale: str, kept: pd.DataFrame, *, ranked_order: list[str],
                      units: tuple[str, ...], data_for_alpha: pd.DataFrame) -> None:
    cfg = ctx.cfg
    pct = f"{cfg.confidence:.0%}"
    if cfg.robustness:
        ref_order = ranked_order[::-1] if not cfg.systems else list(cfg.systems)
        s5 = Section(f"Robustness models ({scale})", level=3)
        ord_t, ord_n = ordinal_model(kept, ref_order, confidence=cfg.confidence)
        mix_t, mix_n = mixed_model(kept, ref_order, confidence=cfg.confidence)
        s5.paragraphs += ord_n + mix_n
        both = pd.concat([x for x in (ord_t, mix_t) if len(x)], ignore_index=True) \
            if len(ord_t) or len(mix_t) else pd.DataFrame(columns=ord_t.columns)
        if len(both):
            disp = format_frame(both)
            bad = (both["status"] == NOT_CONVERGED).to_numpy()
            disp.loc[bad, "estimate"] = NOT_CONVERGED
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
    unit = data_for_alpha[[c for c in units if c in data_for_alpha]].astype(str).agg(" | ".join, axis=1)
    a = krippendorff_alpha(unit.to_numpy(), data_for_alpha["score"].to_numpy(float),
                           cfg.agreement_level, n_boot=cfg.n_boot,
                           seed=_sub_seed(ctx.seed, "alpha", scale), confidence=cfg.confidence)
    s6 = Section(f"Agreement ({scale})", level=3)
    few = a["units"] < MIN_ALPHA_UNITS
    a["status"] = f"too few units ({a['units']} < {MIN_ALPHA_UNITS})" if few else "ok"
    s6.paragraphs.append(
        f"Krippendorff's alpha ({cfg.agreement_level}) = {fmt_value(a['alpha'])}, {pct} bootstrap CI "
        f"{_ci(a['ci_low'], a['ci_high'])}, over {a['units']} units ({' x '.join(units)}) with "
        f"{a['pairable_values']} pairable values."
        + (f" Too few units: with fewer than {MIN_ALPHA_UNITS} units rated by at least two raters, "
           "alpha and its bootstrap CI say nothing about agreement." if few else ""))
    ctx.table(s6, f"agreement_{scale}", "Krippendorff's alpha."
              + (f" Too few units ({a['units']}) for a meaningful estimate." if few else ""),
              pd.DataFrame([a]))
    ctx.sections.append(s6)
    ctx.methods.append(
        f"Agreement ({scale}): Krippendorff's alpha at the {cfg.agreement_level} level (coincidence-"
        f"matrix formulation, Krippendorff 2011) over units {' x '.join(units)}, {pct} percentile CI "
        f"from {cfg.n_boot} bootstrap rounds over units with the expected disagreement held fixed.")


# ---------------------------------------------------------------- absolute


def _absolute_scale(ctx: _Ctx, scale: str, kept: pd.DataFrame, allr: pd.DataFrame) -> None:
    cfg = ctx.cfg
    sc = SCALES[scale]
    pct = f"{cfg.confidence:.0%}"
    sec = Section(f"Ratings per system ({scale})")
    sec.paragraphs.append(f"Scale {scale}: {sc.description}.")
    summ = ab.system_summary(kept, confidence=cfg.confidence, n_boot=cfg.n_boot,
                             seed=_sub_seed(ctx.seed, "absolute", scale))
    order = list(summ["system"])
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
    disp = pd.DataFrame({
        "system": summ["system"], "n": summ["n"].map(str), "raters": summ["n_participants"].map(str),
        "mean": summ["mean"].map(fmt_value), "t CI": [_ci(a, b) for a, b in zip(summ["t_low"], summ["t_high"])],
        "bootstrap CI": [_ci(a, b) for a, b in zip(summ["boot_low"], summ["boot_high"])],
        "median": summ["median"].map(fmt_value),
        "median CI": [_ci(a, b) for a, b in zip(summ["median_low"], summ["median_high"])],
        "sd": summ["sd"].map(fmt_value),
    })
    ctx.table(sec, f"systems_{scale}", f"Per system (best mean first): mean with {pct} Student-t and "
              "participant-bootstrap CIs, median with participant-bootstrap CI."
              + _independence("Student-t CIs", len(kept), kept["participant"].nunique()), summ, disp)
    groups = {s: kept.loc[kept["system_a"] == s, "score"].to_numpy() for s in order}
    ctx.figure(sec, f"box_{scale}", f"{scale} ratings per system (best mean first): box = quartiles, "
               "line = median, diamond = mean.",
               fg.box_figure(groups, title=f"Ratings per system ({scale})", ylabel=scale,
                             ylim=(sc.low - 0.03 * (sc.high - sc.low), sc.high + 0.03 * (sc.high - sc.low))))
    fr = ab.friedman(kept, order)
    sec.paragraphs.append(
        f"Friedman test over {fr['blocks']} complete blocks (participant x item, from "
        f"{kept['participant'].nunique()} raters; blocks of the same rater treated as independent, "
        f"not accounting for rater clustering) and {fr['systems']} "
        f"systems: chi2 = {fmt_value(fr['chi2'])}, {p_text(fr['p'])}, Kendall's W = "
        f"{fmt_value(fr['kendall_w'])}.")
    pw = ab.pairwise_wilcoxon(kept, order, zero_method=cfg.zero_method, alpha=cfg.alpha)
    block_keys = kept[["participant", "item"]].drop_duplicates()
    ctx.table(sec, f"pairwise_{scale}", f"Pairwise Wilcoxon signed-rank tests on paired block ratings "
              f"(zero_method={cfg.zero_method}), Holm-corrected."
              + _independence("tests", len(block_keys), kept["participant"].nunique(), "block"), pw)
    sig = significance_matrix(pw.rename(columns={"mean_diff": "mean"}), order, alpha=cfg.alpha)
    ctx.figure(sec, f"significance_{scale}", "Significance matrix: Holm-corrected pairwise Wilcoxon "
               f"tests (alpha {cfg.alpha:g}); systems by mean.", fg.significance_figure(sig, title=f"Significance ({scale})"))
    ctx.sections.append(sec)
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
    ctx.methods.append(
        f"Absolute ratings on the {scale} scale ({sc.description}): per system the mean with a {pct} "
        f"Student-t CI and a {pct} percentile bootstrap CI ({cfg.n_boot} rounds resampling "
        "participants), and the median with a participant-bootstrap CI; a Friedman test across "
        "systems on complete blocks (one block = one participant's ratings of one item), Kendall's "
        "W = chi2/(n(k-1)); pairwise two-sided Wilcoxon signed-rank tests on the paired block "
        f"ratings (zero_method='{cfg.zero_method}') with Holm correction (alpha {cfg.alpha:g}). "
        "As in common practice (e.g. ITU-R BS.1534 for MUSHRA), the Student-t CIs, the Friedman "
        "test and the pairwise Wilcoxon tests treat each rating (or block) as independent, not accounting for rater "
        f"clustering (here {len(kept)} ratings in {len(block_keys)} blocks from "
        f"{kept['participant'].nunique()} raters); the participant-clustered bootstrap CIs and the "
        "linear mixed model with a random intercept per participant are the analyses that account "
        "for it.")
    _robust_and_alpha(ctx, scale, kept, ranked_order=order, units=("item", "system_a"),
                      data_for_alpha=kept)


# ---------------------------------------------------------------- objective


def _objective(ctx: _Ctx, scores: pd.DataFrame) -> None:
    cfg = ctx.cfg
    scores = ob.prepare_scores(scores, scores.attrs.get("source"))
    metrics = scores.attrs["metrics"]
    sec = Section("Objective metrics")
    n_sys = scores["system"].nunique()
    sec.paragraphs.append(f"{len(scores)} clip(s) from {n_sys} system(s), {len(metrics)} metric(s): "
                          + ", ".join(metrics) + ".")
    summ = ob.metric_summary(scores, metrics)
    wide = summ.pivot(index="system", columns="metric", values="mean").reindex(
        index=list(dict.fromkeys(scores["system"])), columns=metrics)
    sd = summ.pivot(index="system", columns="metric", values="sd").reindex(index=wide.index, columns=metrics)
    disp = pd.DataFrame({"system": wide.index})
    for m in metrics:
        disp[m] = [f"{fmt_value(a)} ± {fmt_value(b)}" for a, b in zip(wide[m], sd[m])]
    ctx.table(sec, "metrics_by_system", "Per-system mean ± SD of each metric (CSV: n, mean, sd, median, "
              "quartiles).", summ, disp.reset_index(drop=True), subjective=False)
    tests = ob.metric_tests(scores, metrics)
    ctx.table(sec, "metric_tests", "Kruskal–Wallis test across systems per metric, epsilon² = H/(n-1), "
              "Holm-adjusted across metrics; a metric without variance (all values within "
              f"{ob.NO_VARIANCE_TOL:g} of each other) is not tested (note).", tests, subjective=False)
    if ctx.subjective is not None:
        agree = ob.metric_agreement(scores, ctx.subjective, confidence=cfg.confidence, metrics=metrics)
        ctx.table(sec, "metric_agreement", f"Does the metric agree with people? Kendall tau-b between "
                  f"each metric's per-system mean and the {ctx.subjective_label}; {cfg.confidence:.0%} "
                  "Fisher-z CI (SE = sqrt(0.437/(n-4)); needs > 4 systems). A lower-is-better metric "
                  "agrees when tau < 0."
                  + (" The metrics are real; the subjective side is SIMULATED, so this agreement says "
                     "nothing about people." if ctx.simulated else ""), agree)
    for m in metrics:
        groups = {s: g[m].dropna().to_numpy() for s, g in scores.groupby("system", sort=False)}
        ctx.figure(sec, f"metric_{_slug(m)}", f"{m} per system: box = quartiles, diamond = mean.",
                   fg.box_figure(groups, title=m, ylabel=m), subjective=False)
    ctx.sections.append(sec)
    ctx.methods.append(
        "Objective metrics: per system n, mean, SD, median and quartiles; a Kruskal–Wallis test across "
        "systems per metric (scipy.stats.kruskal) with epsilon² = H/(n-1) and Holm correction across "
        f"metrics, leaving out metrics without variance (all values within {ob.NO_VARIANCE_TOL:g} "
        "of each other, numerical noise)" + ("; agreement with the subjective results as Kendall's tau-b between per-system "
                     f"metric means and the {ctx.subjective_label} (scipy.stats.kendalltau), with a "
                     "Fisher-z CI using SE = sqrt(0.437/(n-4))" if ctx.subjective is not None else "")
        + ".")


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


def build_report(ratings: pd.DataFrame | None, scores: pd.DataFrame | None, out_dir: str | Path, *,
                 seed: int = 0, title: str = "evalkit report", banner: str | None = None,
                 extra_tables: dict[str, pd.DataFrame] | None = None,
                 config: ReportConfig | None = None, progress: bool | None = None,
                 simulated: bool | None = None) -> Path:
    """Write a report folder (see module doc) and return the path of ``report.html``.

    ``ratings``: long-format table (validated here; ``None`` for objective-only reports);
    ``scores``: ``evalkit score`` table (one row per clip, ``system`` + metric columns) or None;
    ``banner``: text shown first (e.g. that ratings are simulated); ``extra_tables``: further
    objective tables rendered as sections in the given order. ``progress``: tqdm bar (None =
    only on a terminal). ``simulated``: whether the ratings are simulated (None = as the table
    says, see :func:`ratings_are_simulated`); then every table, figure and CSV made from them is
    marked SIMULATED, and a banner is added when none is given.
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
    out.mkdir(parents=True, exist_ok=True)
    ctx = _Ctx(out=out, cfg=cfg, seed=int(seed), simulated=simulated)
    summary = []
    steps = []
    if ratings is not None:
        notes = list(ratings.attrs.get("notes", []))
        sources = list(ratings.attrs.get("sources", [])) or [ratings.attrs.get("source", "")]
        ratings = validate_ratings(ratings, "ratings table")
        _check_system_list(ratings, cfg.systems)
        summary.append(f"Ratings: {len(ratings)} answers from {ratings['participant'].nunique()} "
                       f"participants on scale(s) {', '.join(dict.fromkeys(ratings['scale']))}"
                       + (f" (from {', '.join(s for s in sources if s)})" if any(sources) else "") + ".")
        summary += notes
        steps.append("ratings")
    if scores is not None:
        summary.append(f"Objective scores: {len(scores)} clips"
                       + (f" (from {scores.attrs['source']})" if scores.attrs.get("source") else "") + ".")
        steps.append("scores")
    steps += [f"extra:{k}" for k in (extra_tables or {})]
    bar = tqdm(steps, desc="report", unit="part", disable=(not progress) if progress is not None else None)
    for step in bar:
        if step == "ratings":
            res = screen(ratings, cfg.screening)
            _screening_section(ctx, res)
            analysed = res.kept.copy()
            if simulated:
                analysed.insert(0, "data", "simulated")
            atomic_write_text(out / "ratings_analysed.csv", analysed.to_csv(index=False))
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
        elif step == "scores":
            _objective(ctx, scores)
        else:
            name = step.split(":", 1)[1]
            df = extra_tables[name]
            sec = Section(name)
            ctx.table(sec, f"extra_{_slug(name)}", name, df.reset_index(drop=True), subjective=False)
            ctx.sections.append(sec)
    versions = package_versions()
    ctx.methods.append(f"All bootstrap resampling used the random seed {seed} (per-analysis streams "
                       "derived with numpy SeedSequence), so the report is reproducible. Software: "
                       + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".")
    if banner:
        ctx.methods.insert(0, banner)
    methods = "\n\n".join(ctx.methods)
    atomic_write_text(out / "methods.md", f"# Methods\n\n{methods}\n")
    html = render_html(title=title, banner=banner, sections=ctx.sections, methods=methods, summary=summary)
    return atomic_write_text(out / "report.html", html)
