"""``evalkit report INPUT... --out DIR``: statistics, figures and tables from ratings and scores."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.common import add_command

FORMAT_HELP = (
    "input format: auto (detect from the header), long (evalkit's long-format ratings), genea "
    "(GENEA leaderboard battles), webmushra (mushra.csv or paired_comparison.csv), webmushra-lss "
    "(webMUSHRA single-stimulus lss.csv), pymushra (a pymushra server's CSV or JSON export), hemvip "
    "(HEMVIP's exported results, JSON), mturk-p808 (raw MTurk Batch_*_batch_results.csv of a P.808 "
    "ACR HIT; needs --condition-pattern), p808 (P.808 per-vote CSV), mushra-lists (JSON lists of "
    "ratings per stimulus), columns (any other file: name its columns with --columns or "
    "--column-spec), scores (an 'evalkit score' table) (default: auto; columns when --columns or "
    "--column-spec is given). Any separator (comma, semicolon, tab, |) is recognised")


# long: one declaration per option, in the order --help shows them; nothing to compute
def register(sub) -> None:
    p = add_command(sub, run,
        "report",
        help="write a statistical report (HTML, figures, CSV/LaTeX tables) from ratings and scores",
        description=(
            "Analyse listening/viewing-test ratings and objective scores of ONE study and write a "
            "report folder: report.html (self-contained, figures embedded), figures/*.pdf|png "
            "(column width), tables/*.csv|tex (booktabs, paper-sized) and methods.md (every test, "
            "interval, exclusion, seed and package version). Each design gets one primary analysis, "
            "named first, and the significance figure shows its decisions: dense pairwise designs "
            "get Bradley–Terry with rater-bootstrap intervals and simultaneous intervals for all "
            "differences; sparse ones per-comparison Wilcoxon tests (Holm) on comparisons with "
            "enough answers; MUSHRA/ACR rater-level Wilcoxon tests (Holm). Default intervals respect "
            "rater clustering; per-answer t intervals, block-level tests (BS.1534 practice), ordinal "
            "and mixed models and Krippendorff's alpha follow as labelled secondary results. Score "
            "tables get per-system summaries and Kruskal–Wallis tests of the quality metrics "
            "(bookkeeping columns such as frames or fps are described, not tested)."),
        epilog=(
            "INPUT is a study folder (its collected ratings, scores and objective tables), a CSV "
            "file or a database URL (e.g. sqlite:///study.db, "
            "postgresql+psycopg://user@host/db) holding a 'ratings_long' table or view. "
            "Examples: evalkit report ratings.csv --out report/ ; "
            "evalkit report battles.csv --scores scores.csv --out report/ --seed 1"),
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="ratings files (any supported format), score tables or database URLs")
    p.add_argument("--out", "-o", default=None, metavar="DIR",
                   help="output folder (created; default for a study folder: STUDY/results/report, "
                        "which git ignores; with several study folders, one report per study in "
                        "DIR/<study id>)")
    p.add_argument("--format", default="auto", help=FORMAT_HELP)
    p.add_argument("--scores", action="append", default=[], metavar="CSV",
                   help="objective scores table (one row per clip, a 'system' column, metric "
                        "columns); may be repeated")
    p.add_argument("--table", default="ratings_long",
                   help="table or view read from database URLs (default: ratings_long)")
    p.add_argument("--title", default=None,
                   help="report title (default: the study's title from study.yaml, else 'evalkit report')")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
    p.add_argument("--banner", default=None, help="text shown first in the report (e.g. a caveat)")
    p.add_argument("--seed", type=int, default=0, help="random seed of all bootstraps (default: 0)")
    _statistics_options(p)
    _screening_options(p)
    _input_options(p)


def _statistics_options(p) -> None:
    g = p.add_argument_group("statistics")
    g.add_argument("--confidence", type=float, default=0.95, help="CI level (default: 0.95)")
    g.add_argument("--n-boot", type=int, default=2000,
                   help="bootstrap rounds for CIs of means, medians and alpha (default: 2000)")
    g.add_argument("--bt-boot", type=int, default=2000,
                   help="participant-bootstrap rounds for Bradley–Terry (default: 2000)")
    g.add_argument("--zero-method", default="pratt", choices=("pratt", "wilcox", "zsplit"),
                   help="Wilcoxon handling of zero scores (default: pratt)")
    g.add_argument("--alpha", type=float, default=0.05,
                   help="family-wise significance level after Holm correction (default: 0.05)")
    g.add_argument("--weights", default="4,2,1", metavar="STRONG,WEAK,TIE",
                   help="Bradley–Terry weights of a strong win, a weak win and a tie (each side) "
                        "(default: 4,2,1 as in GENEA)")
    g.add_argument("--systems", default=None, metavar="A,B,...",
                   help="system order (first = reference of the regression models)")
    g.add_argument("--no-robustness", action="store_true",
                   help="skip the ordinal and mixed-model robustness fits")
    g.add_argument("--better", action="append", default=[], metavar="COLUMN=lower|higher",
                   help="which way a score column is better, for columns the metric registry does not "
                        "know (repeatable); used when judging which metric agrees with the raters")


def _screening_options(p) -> None:
    s = p.add_argument_group("screening (declared exclusion rules)")
    s.add_argument("--rules-declared", action="store_true",
                   help="the screening rules below were declared before data collection (e.g. "
                        "pre-registered); methods.md then says so (default: it says they are the "
                        "report's settings)")
    s.add_argument("--max-failed-checks", type=int, default=0,
                   help="exclude raters with more failed checks (default: 0; -1 disables)")
    s.add_argument("--straightline", type=float, default=1.0, metavar="SHARE",
                   help="exclude raters giving the same on-screen answer in at least this share "
                        "of their answers (default: 1.0; 0 disables)")
    s.add_argument("--straightline-min", type=int, default=10,
                   help="straight-lining needs at least this many answers (default: 10)")
    s.add_argument("--min-consensus-r", type=float, default=None,
                   help="exclude raters whose Spearman r with the consensus is below this "
                        "(default: report only)")
    s.add_argument("--min-median-rt", type=float, default=None, metavar="SECONDS",
                   help="exclude raters with a median response time below this (default: off)")
    s.add_argument("--hidden-reference", default="auto",
                   help="hidden reference system for MUSHRA post-screening: auto (a system "
                        "called reference/ref), a name, or none (default: auto)")
    s.add_argument("--reference-threshold", type=float, default=90.0,
                   help="hidden reference rated below this counts as a miss (default: 90)")
    s.add_argument("--reference-max-fraction", type=float, default=0.15,
                   help="exclude raters missing in more than this share of items (default: 0.15, "
                        "ITU-R BS.1534-3)")
    s.add_argument("--no-screening", action="store_true", help="exclude nobody")


def _input_options(p) -> None:
    w = p.add_argument_group("webMUSHRA and pymushra input")
    w.add_argument("--drop-trials", default=None, metavar="ID,...",
                   help="webMUSHRA pages (trial_id; pymushra: wm_id) left out of the analysis, e.g. "
                        "training pages (default: none; pages whose id reads as training are named "
                        "in a note)")
    q = p.add_argument_group("P.808 input")
    q.add_argument("--condition-column", default=None,
                   help="column holding the condition in P.808 per-vote files "
                        "(default: condition_name or condition)")
    q.add_argument("--condition-pattern", default=None, metavar="REGEX",
                   help="MTurk batch results (mturk-p808): regular expression whose first group is "
                        "the condition in a clip's file name, as condition_pattern in the P.808 "
                        "result-parser config")
    q.add_argument("--p808-scale", default="ccr7", choices=("ccr7", "acr5"),
                   help="P.808 votes are CCR (-3..3, vs reference) or ACR (1..5) (default: ccr7)")
    _generic_options(p)


def _generic_options(p) -> None:
    g = p.add_argument_group("any other ratings file (format columns)")
    g.add_argument("--columns", default=None, metavar="ROLE=COLUMN,...",
                   help="the columns to read, e.g. participant=rater,item=clip,system=cond,score=rating "
                        "(roles: participant, item, system, system_b, score, trial, time, stimulus; "
                        "columns by name, or by position 1, 2, ... with --no-header)")
    g.add_argument("--column-spec", default=None, metavar="YAML",
                   help="a YAML file with the keys layout, columns, scale, missing, header, separator, "
                        "stimulus_pattern, ignore, skip_rows (the options of this group)")
    g.add_argument("--layout", default=None, choices=("long", "stimulus-by-rater", "rater-by-stimulus"),
                   help="long: one rating per row (default); stimulus-by-rater: one row per stimulus, "
                        "one column per rater; rater-by-stimulus: one row per rater, one column per stimulus")
    g.add_argument("--scale", default=None,
                   help="scale of the scores, e.g. acr5, likert7, mushra, cmos7 (default: read off the "
                        "values, with a note)")
    g.add_argument("--missing", default=None, metavar="CODE,...",
                   help="cell values meaning no rating, e.g. -1 (empty cells always are)")
    g.add_argument("--no-header", action="store_true",
                   help="the file has no header line: name columns by position in --columns")
    g.add_argument("--separator", default=None,
                   help="field separator (default: sniffed from the file; 'tab' for tabs)")
    g.add_argument("--stimulus-pattern", default=None, metavar="REGEX",
                   help="splits a stimulus name into item and system: a regular expression with the "
                        "named groups item and system, e.g. '(?P<item>.+)_(?P<system>[^_]+)$'")
    g.add_argument("--ignore-columns", default=None, metavar="COL,...",
                   help="matrix columns that are neither raters nor stimuli (e.g. MOS,SD)")
    g.add_argument("--skip-rows", type=int, default=None, metavar="N",
                   help="lines below the header that hold no data, e.g. 2 for a survey tool's "
                        "question-text and import-id rows (default: 0)")


def _weights(text: str):
    from evalkit.errors import InputError
    from reports.ranking import BattleWeights

    try:
        strong, weak, tie = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(f"--weights: expected three numbers STRONG,WEAK,TIE, got {text!r}") from None
    return BattleWeights(strong, weak, tie)


def _better(items: list[str]) -> tuple[tuple[str, str], ...]:
    """``--better COLUMN=lower|higher`` options as (column, direction) pairs."""
    from evalkit.errors import InputError

    out = []
    for item in items:
        col, sep, way = item.partition("=")
        if not sep or not col.strip() or way.strip() not in ("lower", "higher"):
            raise InputError(f"--better {item}: expected COLUMN=lower or COLUMN=higher")
        out.append((col.strip(), way.strip()))
    return tuple(out)


def config_from_args(args: argparse.Namespace):
    """The :class:`reports.ReportConfig` described by the command-line options."""
    from reports.report import ReportConfig
    from reports.screening import ScreeningRules

    if args.no_screening:
        rules = ScreeningRules(study_exclusions=False, max_failed_checks=None, straightline_share=None,
                               hidden_reference=None)
    else:
        ref = None if str(args.hidden_reference).lower() == "none" else args.hidden_reference
        rules = ScreeningRules(
            max_failed_checks=None if args.max_failed_checks < 0 else args.max_failed_checks,
            straightline_share=args.straightline or None,
            straightline_min_answers=args.straightline_min,
            min_consensus_r=args.min_consensus_r, min_median_rt_s=args.min_median_rt,
            hidden_reference=ref, reference_threshold=args.reference_threshold,
            reference_max_fraction=args.reference_max_fraction)
    systems = tuple(s.strip() for s in args.systems.split(",")) if args.systems else None
    return ReportConfig(confidence=args.confidence, n_boot=args.n_boot, bt_boot=args.bt_boot,
                        zero_method=args.zero_method, alpha=args.alpha, weights=_weights(args.weights),
                        screening=rules, robustness=not args.no_robustness, systems=systems,
                        rules_declared=args.rules_declared, better=_better(args.better))


def study_title(study) -> tuple[str, str]:
    """(id, title) from a study folder's study.yaml (folder name when absent)."""
    from pathlib import Path

    import yaml

    from evalkit.errors import ConfigError
    from evalkit.textfile import read_utf8_text

    f = Path(study) / "study.yaml"
    try:
        data = yaml.safe_load(read_utf8_text(f)) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{f}: not valid YAML ({exc})") from None
    if not isinstance(data, dict):
        data = {}
    sid = str(data.get("id") or Path(study).resolve().name)
    return sid, str(data.get("title") or sid)


def _study_reports(args, studies, config) -> int:
    """One report per study folder: a report never pools the systems of different studies."""
    from pathlib import Path

    from evalkit.pipeline import study_outputs
    from reports.report import build_report

    for study in studies:
        sid, title = study_title(study)
        out = (Path(args.out) / sid) if args.out and len(studies) > 1 else \
            Path(args.out) if args.out else Path(study) / "results" / "report"
        ratings, scores, tables = study_outputs(study)
        path = build_report(ratings, scores, out, seed=args.seed, title=args.title or title,
                            banner=args.banner, extra_tables=tables or None, config=config,
                            progress=not args.quiet, description=f"Study {sid} ({study}).")
        print(f"report written: {path}")
    return 0


def table_spec_from_args(args: argparse.Namespace):
    """The generic importer's :class:`~reports.importers_generic.TableSpec` from ``--columns`` and
    its sibling options, or from ``--column-spec``; None when none of them is given."""
    from evalkit.errors import InputError
    from reports.importers_generic import make_spec, parse_columns, spec_from_yaml

    given = {"layout": args.layout, "scale": args.scale, "separator": args.separator,
             "stimulus_pattern": args.stimulus_pattern,
             "missing": [m for m in (args.missing or "").split(",") if m.strip()] or None,
             "ignore": [c for c in (args.ignore_columns or "").split(",") if c.strip()] or None,
             "header": False if args.no_header else None, "skip_rows": args.skip_rows}
    given = {k: v for k, v in given.items() if v is not None}
    if (args.column_spec or args.columns) and args.format not in ("auto", "columns"):
        raise InputError(f"--columns/--column-spec describe format columns, not --format {args.format}")
    if args.column_spec:
        if args.columns or given:
            raise InputError("--column-spec holds the column options: give either it or --columns and "
                             "its options (--layout, --scale, --missing, ...), not both")
        return spec_from_yaml(args.column_spec)
    if args.columns is None:
        if given:
            shown = ", ".join("--" + k.replace("_", "-").replace("header", "no-header").replace("ignore", "ignore-columns")
                              for k in given)
            raise InputError(f"{shown}: options of format columns; name the file's columns with "
                             "--columns ROLE=COLUMN,... (or use --column-spec FILE.yaml)")
        return None
    return make_spec({"columns": parse_columns(args.columns), **given}, "--columns")


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from evalkit.errors import InputError
    from reports.importers import combine_ratings, load_input
    from reports.io import is_database_url
    from reports.report import build_report

    from pathlib import Path

    config = config_from_args(args)
    opts = {"condition_column": args.condition_column, "scale": args.p808_scale,
            "condition_pattern": args.condition_pattern,
            "drop_trials": tuple(t for t in (args.drop_trials or "").split(",") if t.strip()),
            "spec": table_spec_from_args(args)}
    study_dirs = [s for s in args.inputs if Path(s).is_dir() and (Path(s) / "study.yaml").exists()]
    others = [s for s in args.inputs if s not in study_dirs]
    for src in others + list(args.scores):
        if is_database_url(src):
            continue
        if Path(src).is_dir():
            raise InputError(f"{src}: a folder without study.yaml; give a study folder, a CSV file or "
                             "a database URL")
        if not Path(src).exists():
            raise InputError(f"{src}: file not found")
    if study_dirs:
        if others or args.scores:
            raise InputError("give either study folders or ratings/score files, not both: a report "
                             "analyses one study (its own ratings, scores and tables)")
        return _study_reports(args, study_dirs, config)
    if args.out is None:
        raise InputError("--out DIR is required (it defaults to STUDY/results/report only for study folders)")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise InputError(f"--out {args.out}: exists and is not a folder")
    ratings, scores = [], []
    for src in others:
        fmt = args.format
        kind, df = load_input(src, fmt, table=args.table,
                              **(opts if fmt in ("p808", "mturk-p808", "webmushra", "webmushra-lss", "pymushra",
                                                 "columns", "auto") else {}))
        (ratings if kind == "ratings" else scores).append(df)
    for src in args.scores:
        kind, df = load_input(src, "scores")
        scores.append(df)
    if not ratings and not scores:
        raise InputError("no ratings or scores among the inputs")
    rat = combine_ratings(ratings) if ratings else None
    sc = None
    if scores:
        sc = pd.concat(scores, ignore_index=True)
        sc.attrs["source"] = ", ".join(s.attrs.get("source", "") for s in scores)
    path = build_report(rat, sc, args.out, seed=args.seed, title=args.title or "evalkit report",
                        banner=args.banner, config=config, progress=not args.quiet)
    print(f"report written: {path}")
    return 0
