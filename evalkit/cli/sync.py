"""``evalkit sync`` (one take: apexes, accents, offsets, GSI/PSI pairs, figures) and
``evalkit rules ...`` (fit synchrony/intensity rules from many takes, show them, build
constructed takes, export stroke/accent features, MCC tables of strength classifiers)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from evalkit.cli.common import add_command, add_load_options, load_options

CONSTRUCTED_LINE = ("CONSTRUCTED: this take was built from separately recorded speech and gesture "
                    "capture with known timing; its results validate the method, they are not "
                    "observations of real co-speech gesture.")


# --------------------------------------------------------------------------------------------
# long: one declaration per option, in the order --help shows them; nothing to compute
def register(sub) -> None:
    p = add_command(sub, run_sync,
        "sync",
        help="gesture-speech synchrony of one take: apexes, pitch accents, offsets, GSI/PSI",
        description=(
            "Analyse one take: stroke apexes and GSI from the motion, pitch accents (PAPT) and PSI "
            "from the audio (or from a Praat TextGrid), pair apexes with accents, and report the "
            "apex-PAPT offsets (PAPT minus apex, s; > 0 = apex first) and the PSI-GSI regression. "
            "Writes CSV tables, a JSON summary, a TextGrid with accents and gesture phases, and "
            "figures like the thesis' Figs. 4.7 and 4.8 into --out."
        ),
        epilog="Example: evalkit sync take.bvh take.wav --out take-sync/",
    )
    p.add_argument("motion", metavar="MOTION", help="BVH or AMC file of the take")
    p.add_argument("audio", metavar="AUDIO", help="WAV or FLAC file of the take's speech")
    p.add_argument("--textgrid", metavar="F", help="Praat TextGrid with manual pitch accents (instead of detection)")
    p.add_argument("--tier", default="PAPT", help="accent tier of --textgrid: point tier or labelled intervals (default: PAPT)")
    p.add_argument("--out", metavar="DIR", help="output folder (default: <motion stem>-sync next to the motion)")
    p.add_argument("--rules", metavar="JSON", help="rules to check the take against (default: the thesis' numbers)")
    p.add_argument("--max-distance", type=float, default=0.5, help="largest |PAPT - apex| paired, seconds (default: 0.5)")
    p.add_argument("--offset", type=float, default=0.0, help="expected PAPT - apex when pairing, seconds (default: 0 = nearest)")
    p.add_argument("--constructed", action="store_true", help="mark the take as constructed (automatic when <stem>.take.json says so)")
    p.add_argument("--json", action="store_true", help="print the JSON summary instead of tables")
    add_load_options(p)

    r = add_command(sub, None,
        "rules",
        help="fit/show synchrony and intensity rules; constructed takes; MCC tables",
        description="Synchrony (apex-PAPT offset) and intensity (PSI-GSI line with margin) rules, "
                    "and the data work around them.",
    )
    rs = r.add_subparsers(dest="rules_command", metavar="ACTION")

    f = add_command(rs, run_fit, "fit", help="learn rules from many takes",
                      description="Learn the rules from every take under DIR: folders written by 'evalkit sync' "
                                  "(their pairs.csv), and motion files with an audio file of the same stem "
                                  "(analysed now). Writes rules JSON and the two figures.",
                      epilog="Example: evalkit rules fit takes/ --out rules.json")
    f.add_argument("dir", metavar="DIR", help="folder of takes and/or sync outputs (searched recursively)")
    f.add_argument("--out", metavar="JSON", help="rules file to write (default: DIR/rules.json)")
    f.add_argument("--coverage", type=float, default=0.9, help="fraction of pairs inside the intensity margin (default: 0.9)")
    f.add_argument("--max-distance", type=float, default=0.5, help="largest |PAPT - apex| paired, seconds (default: 0.5)")
    f.add_argument("--json", action="store_true", help="print the rules JSON")
    add_load_options(f)

    s = add_command(rs, run_show, "show", help="print rules (default: the thesis' published numbers)")
    s.add_argument("rules", nargs="?", metavar="JSON", help="rules file (default: built-in thesis rules)")

    c = add_command(rs, run_construct, "construct", help="build constructed takes (real speech + real gesture phrases, known truth)",
                      description="Build takes from real speech and real gesture capture recorded separately: "
                                  "gesture phrases are time-scaled so their GSI follows an imposed line of PSI and "
                                  "placed with apexes at known offsets before pitch accents. Each take gets "
                                  "<name>.bvh, <name>.wav and <name>.take.json (the truth, 'constructed': true).",
                      epilog="Example: evalkit rules construct --speech a.wav b.wav --gestures clips/ --out takes/\n"
                             "Without --gestures, the bundled CMU clip 131_01/131_03 arm motion is used as "
                             "gesture-like material (locomotion, not conversational gesture: rough results).")
    c.add_argument("--speech", nargs="+", metavar="WAV", help="speech recordings (default: the bundled LJ Speech samples)")
    c.add_argument("--gestures", nargs="+", metavar="PATH", help="gesture clips or folders (default: bundled CMU 131_01, 131_03)")
    c.add_argument("--out", required=True, metavar="DIR", help="folder for the takes")
    c.add_argument("--offset-mean", type=float, default=0.1, help="mean PAPT - apex, seconds (default: 0.1)")
    c.add_argument("--offset-sd", type=float, default=0.05, help="SD of the offsets, seconds (default: 0.05)")
    c.add_argument("--intercept", type=float, default=0.15, help="imposed GSI = intercept + slope * PSI (default: 0.15)")
    c.add_argument("--slope", type=float, default=0.7, help="imposed slope (default: 0.7)")
    c.add_argument("--cut-strokes", action="store_true", help="use every stroke with 0.35 s of context (clips without rests between strokes); automatic for the bundled CMU clips")
    c.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    add_load_options(c)

    st = add_command(rs, run_strokes, "strokes", help="export stroke features (FMDistance, velocity range, max velocity, GSI) to CSV",
                       epilog="Example (Bandai Namco names carry gesture and style):\n"
                              "  evalkit rules strokes clips/ --out strokes.csv "
                              "--name-fields 'dataset-\\d_(?P<gesture>[a-z-]+)_(?P<style>[a-z]+)_\\d+'")
    st.add_argument("paths", nargs="+", metavar="PATH", help="motion files or folders")
    st.add_argument("--out", required=True, metavar="CSV",
                    help="CSV file to write (required): one row per stroke with its clip, stem, features "
                         "and any --name-fields columns; its folder is created")
    st.add_argument("--name-fields", metavar="REGEX", help="regex with named groups applied to each file stem; groups become columns")
    add_load_options(st)

    ac = add_command(rs, run_accent_features, "accents", help="export accent-candidate features (syllable nuclei) to CSV",
                       description="Prints syllable and pitch-accent rates per recording and writes one row per voiced "
                                   "syllable nucleus with its accent features; with "
                                   "--textgrid-dir, a 'labelled' column is 1 when an annotation of --tier "
                                   "(points or labelled intervals) falls in the syllable.")
    ac.add_argument("paths", nargs="+", metavar="AUDIO", help="audio files")
    ac.add_argument("--out", required=True, metavar="CSV",
                    help="CSV file to write (required): one row per syllable nucleus with its recording and "
                         "accent features (plus 'labelled' or 'emphasized'); its folder is created")
    ac.add_argument("--textgrid-dir", metavar="DIR", help="folder with <stem>.TextGrid annotations")
    ac.add_argument("--tier", default="PAPT", help="annotation tier (default: PAPT)")
    ac.add_argument("--emphasize", type=float, metavar="FRACTION",
                    help="CONSTRUCTED labels: raise F0 by --semitones on this fraction of random syllables "
                         "(Praat resynthesis) and label them in an 'emphasized' column")
    ac.add_argument("--semitones", type=float, default=4.0, help="F0 rise of --emphasize, semitones (default: 4)")
    ac.add_argument("--seed", type=int, default=0, help="random seed of --emphasize (default: 0)")

    t = add_command(rs, run_table, "table", help="MCC of strength classifiers per feature set, grouped cross-validation",
                      description="Train classifiers (SVM as in the thesis: Pegasos-style linear and SMO/RBF; "
                                  "logistic regression; random forest) on every subset of the features and "
                                  "report the Matthews correlation coefficient under cross-validation grouped "
                                  "by --group, like the thesis' Table 4.1.",
                      epilog="Example: evalkit rules table strokes.csv --label style --positive angry,happy --group gesture")
    t.add_argument("data", metavar="CSV")
    t.add_argument("--label", required=True, help="label column")
    t.add_argument("--positive", help="comma-separated label values that count as the positive class (default: labels are already 0/1 or two values)")
    t.add_argument("--group", required=True, help="group column (recording, speaker, clip); no group is split across folds")
    t.add_argument("--features", help="comma-separated feature columns (default: the three stroke features, or the accent features if present)")
    t.add_argument("--classifiers", default="svm-pegasos,svm-smo,logistic,forest", help="comma-separated (default: all)")
    t.add_argument("--folds", type=int, default=5, help="folds (default: 5, at most the number of groups)")
    t.add_argument("--out", metavar="CSV", help="also write the tidy table")


# --------------------------------------------------------------------------------------------
def _is_constructed(motion_path: Path, flag: bool) -> tuple[bool, dict | None]:
    from evalkit.constructed.takes import take_manifest

    manifest = take_manifest(motion_path)
    return bool(flag or (manifest or {}).get("constructed", False)), manifest


def _analyse_take(motion_path: Path, audio_path: Path, args, textgrid=None, tier="PAPT"):
    from evalkit.gesture import analyze_gestures
    from evalkit.speech import speech_accents

    motion = load_options(args).load(motion_path)
    gestures = analyze_gestures(motion)
    speech = speech_accents(audio_path, textgrid, tier)
    return motion, gestures, speech


def _gesture_tiers(gestures, duration: float):
    from evalkit.speech.textgrid import Interval, IntervalTier, Point, PointTier

    fps = gestures.fps
    phases = tuple(Interval(a / fps, min(b / fps, duration), lab) for lab, a, b in gestures.segmentation.intervals()
                   if a / fps < duration and lab != "rest")
    apexes = tuple(Point(s.apex_time, f"gsi={s.gsi:.3f}") for s in gestures.strokes if 0 <= s.apex_time <= duration)
    return [IntervalTier("gesture phases", phases), PointTier("apex", apexes)]


def _check_pairing_options(args: argparse.Namespace) -> None:
    """``--max-distance`` (and ``--coverage`` of 'rules fit') are in range, before any work."""
    import math

    from evalkit.errors import InputError

    if not (math.isfinite(args.max_distance) and args.max_distance > 0):
        raise InputError(f"--max-distance must be a positive number of seconds, got {args.max_distance:g}")
    coverage = getattr(args, "coverage", None)
    if coverage is not None and not 0 < coverage <= 1:
        raise InputError(f"--coverage must be a fraction in (0, 1], got {coverage:g}")


def run_sync(args: argparse.Namespace) -> int:
    from evalkit.speech import analysis_to_textgrid, write_textgrid
    from evalkit.gesture_speech import SYNC_MARGIN_SD, fit_intensity, load_rules, pair_take, plot_offsets, plot_psi_gsi
    from evalkit.atomic import write_text

    _check_pairing_options(args)
    motion_path, audio_path = Path(args.motion), Path(args.audio)
    constructed, manifest = _is_constructed(motion_path, args.constructed)
    rules = load_rules(args.rules)
    motion, gestures, speech = _analyse_take(motion_path, audio_path, args, args.textgrid, args.tier)
    pairs = pair_take(gestures, speech, args.max_distance, args.offset, take=motion_path.stem, constructed=constructed)
    out = Path(args.out) if args.out else motion_path.with_name(motion_path.stem + "-sync")
    out.mkdir(parents=True, exist_ok=True)

    def write_csv(df, name):
        tmp = out / f".{name}.tmp"
        df.to_csv(tmp, index=False)
        tmp.replace(out / name)

    strokes = gestures.strokes_frame()
    accents = speech.accents_frame()
    for df in (strokes, accents, pairs):
        df["constructed"] = constructed
    write_csv(strokes, "apexes.csv")
    write_csv(gestures.phrases_frame().assign(constructed=constructed), "phrases.csv")
    write_csv(accents, "accents.csv")
    write_csv(pairs, "pairs.csv")
    tg = analysis_to_textgrid(speech, _gesture_tiers(gestures, speech.duration))
    write_textgrid(tg, out / f"{motion_path.stem}.TextGrid")

    summary = _take_summary(args, motion_path, audio_path, constructed, manifest, rules, gestures, speech, pairs)
    figures = []
    if summary["pairs"]:
        figures.append(str(plot_offsets(pairs, out / "offsets.png", constructed=constructed)))
        figures.append(str(plot_psi_gsi(pairs, out / "psi_gsi.png", constructed=constructed)))
    summary["figures"] = figures
    write_text(out / "sync.json", json.dumps(summary, indent=2) + "\n")

    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        print()
        return 0
    _print_take(summary, motion_path, audio_path, gestures, speech, pairs, rules, out)
    return 0


def _take_summary(args: argparse.Namespace, motion_path: Path, audio_path: Path, constructed: bool, manifest,
                  rules, gestures, speech, pairs) -> dict:
    """The ``sync.json`` summary of one take: counts, apex-PAPT offsets (s), share within the
    rules, the PSI-GSI fit and, for a constructed take, its known truth."""
    import numpy as np

    from evalkit.gesture_speech import SYNC_MARGIN_SD, fit_intensity

    o = pairs["offset_s"].to_numpy(float)
    summary = {
        "constructed": constructed,
        "motion": str(motion_path),
        "audio": str(audio_path),
        "accents_from": f"TextGrid {args.textgrid} tier {args.tier}" if args.textgrid else "detected",
        "duration_s": round(speech.duration, 3),
        "strokes": len(gestures.strokes),
        "phrases": len(gestures.phrases),
        "accents": len(speech.accents),
        "accents_per_s": round(speech.accent_rate, 3),
        "pairs": len(pairs),
        "offset_mean_s": float(o.mean()) if len(o) else None,
        "offset_sd_s": float(o.std(ddof=1)) if len(o) > 1 else None,
        "within_synchrony_rule": float(np.mean(rules.synchrony.accepts(o))) if len(o) else None,
        "synchrony_rule_margin_sd": SYNC_MARGIN_SD,
        "within_intensity_rule": float(np.mean(rules.intensity.accepts(pairs["psi"], pairs["gsi"]))) if len(o) else None,
        "rules": args.rules or "thesis defaults",
    }
    if len(o) >= 3 and np.ptp(pairs["psi"]) > 0:
        fit = fit_intensity(pairs["psi"], pairs["gsi"])
        summary.update(psi_gsi_intercept=fit.intercept, psi_gsi_slope=fit.slope, psi_gsi_r=fit.r)
    if constructed and manifest and "truth" in manifest:
        tr = manifest["truth"]
        summary["truth"] = {k: tr.get(k) for k in ("offset_mean_s", "offset_sd_s", "imposed_intercept", "imposed_slope")}
    return summary


def _print_take(summary: dict, motion_path: Path, audio_path: Path, gestures, speech, pairs, rules, out: Path) -> None:
    """The take's result as a few lines and a table of the apex-PAPT pairs (standard output)."""
    from evalkit.gesture_speech import SYNC_MARGIN_SD

    if summary["constructed"]:
        print(CONSTRUCTED_LINE)
    print(f"{motion_path.name}: {len(gestures.strokes)} stroke(s) in {len(gestures.phrases)} phrase(s); "
          f"{audio_path.name}: {len(speech.accents)} accent(s), {speech.accent_rate:.2f}/s ({summary['accents_from']})")
    if len(pairs):
        print(f"{'apex_s':>8} {'papt_s':>8} {'offset_s':>9} {'GSI':>6} {'PSI':>6}")
        for r in pairs.itertuples():
            print(f"{r.apex_time:8.3f} {r.papt:8.3f} {r.offset_s:+9.3f} {r.gsi:6.2f} {r.psi:6.2f}")
        sd = f", SD {summary['offset_sd_s']:.3f} s" if summary["offset_sd_s"] is not None else ""
        print(f"offset PAPT - apex: mean {summary['offset_mean_s']:+.3f} s{sd} over {len(pairs)} pair(s) "
              f"(rule: {rules.synchrony.mean_s:+.2f} s, SD {rules.synchrony.sd_s:.2f} s)")
        if "psi_gsi_slope" in summary:
            print(f"PSI-GSI: GSI = {summary['psi_gsi_intercept']:.3f} + {summary['psi_gsi_slope']:.3f} * PSI (r = {summary['psi_gsi_r']:.2f})")
        print(f"within the synchrony rule (±{SYNC_MARGIN_SD:g} SD): {summary['within_synchrony_rule']:.0%}; "
              f"within the intensity margin: {summary['within_intensity_rule']:.0%}")
    else:
        print("no apex-PAPT pairs within --max-distance")
    if "truth" in summary:
        t = summary["truth"]
        print(f"constructed truth: mean offset {t['offset_mean_s']:+.3f} s, imposed GSI = {t['imposed_intercept']} + {t['imposed_slope']} * PSI")
    print(f"wrote {out}/ (apexes.csv, phrases.csv, accents.csv, pairs.csv, sync.json, {motion_path.stem}.TextGrid"
          + (", offsets.png, psi_gsi.png)" if summary["figures"] else ")"))


# --------------------------------------------------------------------------------------------
def _find_takes(root: Path) -> tuple[list[Path], list[tuple[Path, Path]]]:
    """``pairs.csv`` files of sync outputs and (motion, audio) takes with the same stem."""
    from evalkit.motion.formats import MOTION_EXTENSIONS
    from evalkit.speech.audio import AUDIO_EXTENSIONS

    pair_files = sorted(root.rglob("pairs.csv"))
    sync_dirs = {p.parent for p in pair_files}
    takes = []
    for m in sorted(q for q in root.rglob("*") if q.suffix.lower() in MOTION_EXTENSIONS):
        if any(d == m.parent or d in m.parents for d in sync_dirs):
            continue
        if m.with_name(m.stem + "-sync").joinpath("pairs.csv").exists():
            continue  # already analysed; its pairs.csv is used
        audio = next((m.with_suffix(e) for e in AUDIO_EXTENSIONS if m.with_suffix(e).exists()), None)
        if audio is not None:
            takes.append((m, audio))
    return pair_files, takes


#: Numeric columns of a sync output's pairs.csv (the first three are required).
PAIR_NUMBERS = ("offset_s", "psi", "gsi", "apex_time", "papt")


def _read_pairs(pf: Path):
    """A take's ``pairs.csv`` with numbers and a boolean ``constructed`` column, checked cell by
    cell; errors name the file, line, column and value."""
    import io

    import pandas as pd

    from evalkit.errors import FileFormatError
    from evalkit.textfile import read_utf8_text

    try:
        df = pd.read_csv(io.StringIO(read_utf8_text(pf)), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise FileFormatError(pf, None, f"not a pairs table: {exc}") from None
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in PAIR_NUMBERS[:3] if c not in df.columns]
    if missing:
        raise FileFormatError(pf, 1, f"missing column(s) {', '.join(missing)}")
    for col in (c for c in PAIR_NUMBERS if c in df.columns):
        text = df[col].str.strip()
        values = pd.to_numeric(text, errors="coerce")
        bad = values.isna().to_numpy()
        if bad.any():
            i = int(bad.nonzero()[0][0])
            got = "an empty cell" if text.iloc[i] == "" else repr(df[col].iloc[i])
            raise FileFormatError(pf, i + 2, f"column {col!r}: expected a number, got {got}")
        df[col] = values.astype(float)
    if "constructed" in df.columns:
        flag = df["constructed"].str.strip().str.lower()
        ok = flag.isin(("true", "false", "1", "0", ""))
        if not ok.all():
            i = int((~ok).to_numpy().nonzero()[0][0])
            raise FileFormatError(pf, i + 2, f"column 'constructed': expected True or False, "
                                             f"got {df['constructed'].iloc[i]!r}")
        df["constructed"] = flag.isin(("true", "1"))
    if "take" not in df.columns:
        df["take"] = pf.parent.name
    return df


def run_fit(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm import tqdm

    from evalkit.errors import FileFormatError, InputError
    from evalkit.gesture_speech import PAIR_COLUMNS, fit_rules, pair_take, plot_offsets, plot_psi_gsi, save_rules
    from evalkit.textfile import read_utf8_text

    _check_pairing_options(args)
    root = Path(args.dir)
    if not root.is_dir():
        raise InputError(f"{root}: not a folder")
    pair_files, takes = _find_takes(root)
    if not pair_files and not takes:
        raise InputError(f"{root}: no takes found (need folders with pairs.csv from 'evalkit sync', or motion files with a same-stem WAV/FLAC)")
    frames = []
    truth: list[dict] = []  # known truth of constructed takes, from their manifests
    for pf in pair_files:
        sj = pf.parent / "sync.json"
        if sj.exists():
            try:
                man = _is_constructed(Path(json.loads(read_utf8_text(sj)).get("motion", "")), False)[1]
            except (json.JSONDecodeError, AttributeError, TypeError, FileFormatError):
                man = None
            truth.extend((man or {}).get("truth", {}).get("pairs", []))
        frames.append(_read_pairs(pf))
    for m, a in tqdm(takes, desc="analysing takes", unit="take", disable=len(takes) < 2):
        constructed, man = _is_constructed(m, False)
        truth.extend((man or {}).get("truth", {}).get("pairs", []))
        _, gestures, speech = _analyse_take(m, a, args)
        frames.append(pair_take(gestures, speech, args.max_distance, take=m.stem, constructed=constructed))
    pairs = pd.concat([f for f in frames if len(f)], ignore_index=True) if any(len(f) for f in frames) else pd.DataFrame(columns=list(PAIR_COLUMNS))
    if len(pairs) < 3:
        raise InputError(f"{root}: only {len(pairs)} apex-PAPT pair(s) found; need at least 3 to fit rules")
    if "constructed" not in pairs.columns:
        pairs["constructed"] = False
    pairs["constructed"] = pairs["constructed"].fillna(False).astype(bool)
    rules = fit_rules(pairs, coverage=args.coverage,
                      note=("fitted on CONSTRUCTED takes (real speech + separately recorded gesture, known truth)"
                            if pairs["constructed"].any() else "fitted on recorded takes"))
    out = Path(args.out) if args.out else root / "rules.json"
    save_rules(rules, out)
    plot_offsets(pairs, out.with_name(out.stem + "_offsets.png"), rules.synchrony)
    plot_psi_gsi(pairs, out.with_name(out.stem + "_psi_gsi.png"), rules.intensity, group="take" if pairs["take"].nunique() <= 7 else None)
    if args.json:
        json.dump(rules.to_dict(), sys.stdout, indent=2)
        print()
        return 0
    if rules.constructed:
        print(CONSTRUCTED_LINE)
    _print_rules(rules)
    if len(truth) >= 3:
        from scipy.stats import linregress

        t = pd.DataFrame(truth)
        print(f"constructed truth ({len(t)} placed phrases): mean offset {t['offset_s'].mean():+.3f} s, "
              f"SD {t['offset_s'].std(ddof=1):.3f} s; slope of the imposed PSI-GSI pairs {linregress(t['psi'], t['gsi']).slope:.3f}; "
              f"recovered - true: offset {rules.synchrony.mean_s - t['offset_s'].mean():+.3f} s, "
              f"slope {100 * (rules.intensity.slope / linregress(t['psi'], t['gsi']).slope - 1):+.1f} %")
    print(f"from {len(pairs)} pairs in {pairs['take'].nunique()} take(s); wrote {out} and figures "
          f"{out.stem}_offsets.png, {out.stem}_psi_gsi.png")
    return 0


def _print_rules(rules) -> None:
    s, i = rules.synchrony, rules.intensity
    print(f"synchrony: PAPT - apex mean {s.mean_s:+.3f} s, SD {s.sd_s:.3f} s (n = {s.n}; {s.source})")
    print(f"intensity: GSI = {i.intercept:.3f} + {i.slope:.3f} * PSI, margin ±{i.margin:.3f}"
          + (f", r = {i.r:.2f}, slope SE {i.slope_se:.3f}" if i.n else "") + f" (n = {i.n}; {i.source})")


def run_show(args: argparse.Namespace) -> int:
    from evalkit.gesture_speech import load_rules

    rules = load_rules(args.rules)
    if rules.constructed:
        print(CONSTRUCTED_LINE)
    _print_rules(rules)
    return 0


# --------------------------------------------------------------------------------------------
def run_construct(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from evalkit.constructed.takes import ConstructionConfig, construct_take, prepare_pool, save_take, single_stroke_sources
    from evalkit.data import sample_path, speech_files
    from evalkit.errors import InputError
    from evalkit.speech import load_audio

    speech = [Path(p) for p in args.speech] if args.speech else speech_files()
    cut = args.cut_strokes
    if args.gestures:
        gestures = args.gestures
    else:
        gestures = [sample_path("cmu", "131_01.bvh"), sample_path("cmu", "131_03.bvh")]
        cut = True
        print("gesture material: bundled CMU 131_01/131_03 (stylised walks; arm swings used as gesture-like strokes)")
    cfg = ConstructionConfig(offset_mean_s=args.offset_mean, offset_sd_s=args.offset_sd, intercept=args.intercept,
                             slope=args.slope, seed=args.seed)
    sources = single_stroke_sources(gestures, load=load_options(args), cut_strokes=cut)
    if not sources:
        raise InputError("no single-stroke gesture phrases between rests in the gesture clips; try --cut-strokes")
    pool = prepare_pool(sources, cfg, progress=True)
    out = Path(args.out)
    made = 0
    for k, path in enumerate(tqdm(speech, desc="constructing takes", unit="take")):
        audio = load_audio(path)
        try:
            take = construct_take(audio, pool, ConstructionConfig(**{**cfg.__dict__, "seed": args.seed + k}))
        except InputError as exc:
            print(f"skipped {path}: {exc}", file=sys.stderr)
            continue
        files = save_take(take, out, f"{audio.name}-constructed")
        made += 1
        tr = take.truth
        print(f"{files['motion'].name}: {len(tr)} phrase(s) placed, mean offset {tr['offset_s'].mean():+.3f} s")
    print(CONSTRUCTED_LINE)
    print(f"{made} constructed take(s) in {out}/ (truth in *.take.json); analyse with 'evalkit rules fit {out}'")
    return 0 if made else 1


def run_strokes(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm import tqdm

    from evalkit.errors import InputError
    from evalkit.gesture import analyze_gestures
    from evalkit.motion.formats import iter_motion_files

    rx = None
    if args.name_fields:
        try:
            rx = re.compile(args.name_fields)
        except re.error as exc:
            raise InputError(f"--name-fields is not a valid regular expression: {exc}") from None
    frames = []
    files = list(iter_motion_files(args.paths))
    for p in tqdm(files, desc="strokes", unit="clip", disable=len(files) < 3):
        df = analyze_gestures(load_options(args).load(p), clip=str(p)).strokes_frame()
        df.insert(1, "stem", p.stem)
        if rx is not None:
            m = rx.search(p.stem)
            for name in rx.groupindex:
                df[name] = m.group(name) if m else None
        frames.append(df)
    table = pd.concat([f for f in frames if len(f)], ignore_index=True) if frames else pd.DataFrame()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    table.to_csv(tmp, index=False)
    tmp.replace(out)
    print(f"{len(table)} stroke(s) from {len(files)} clip(s) -> {out}")
    return 0


def run_accent_features(args: argparse.Namespace) -> int:
    import pandas as pd

    from evalkit.speech import load_audio, read_textgrid
    from evalkit.speech.accents import analyze_speech
    from evalkit.speech.textgrid import tier_times

    if args.emphasize is not None:
        from evalkit.speech.emphasis import emphasis_dataset

        table = emphasis_dataset([load_audio(p) for p in args.paths], fraction=args.emphasize,
                                 semitones=args.semitones, seed=args.seed)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        table.to_csv(tmp, index=False)
        tmp.replace(out)
        print("CONSTRUCTED: F0 raised by Praat resynthesis on randomly chosen syllables of real speech; "
              "'emphasized' labels are known by construction.")
        print(f"{len(table)} accent candidate(s), {int(table['emphasized'].sum())} emphasized, from "
              f"{table['recording'].nunique()} recording(s) -> {out}")
        return 0
    frames, rates = [], []
    for p in map(Path, args.paths):
        audio = load_audio(p)
        analysis = analyze_speech(audio)
        rates.append((p.stem, audio.duration, len(analysis.candidates), len(analysis.accents)))
        df = analysis.accents_frame(candidates=True)
        df.insert(0, "recording", p.stem)
        if args.textgrid_dir:
            tg = read_textgrid(Path(args.textgrid_dir) / f"{p.stem}.TextGrid")
            times, _, windows = tier_times(tg, args.tier)
            lab = []
            for r in df.itertuples():
                hit = any((w is None and r.start <= t <= r.end + 0.06) or (w is not None and w[0] <= r.nucleus <= w[1]) for t, w in zip(times, windows))
                lab.append(int(hit))
            df["labelled"] = lab
        frames.append(df)
    table = pd.concat(frames, ignore_index=True)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    table.to_csv(tmp, index=False)
    tmp.replace(out)
    print(f"{'recording':<24} {'seconds':>8} {'syllables/s':>12} {'accents':>8} {'accents/s':>10}")
    for name, secs, n_syl, n_acc in rates:
        print(f"{name:<24} {secs:8.2f} {n_syl / secs:12.2f} {n_acc:8d} {n_acc / secs:10.2f}")
    total = sum(r[1] for r in rates)
    print(f"{'all':<24} {total:8.2f} {sum(r[2] for r in rates) / total:12.2f} {sum(r[3] for r in rates):8d} "
          f"{sum(r[3] for r in rates) / total:10.2f}")
    print(f"{len(table)} accent candidate(s) from {len(frames)} recording(s) -> {out}")
    return 0


def run_table(args: argparse.Namespace) -> int:
    import pandas as pd

    from evalkit.errors import FileFormatError, InputError
    from evalkit.gesture import STROKE_FEATURES
    from evalkit.models.strength import CLASSIFIERS, format_mcc_table, mcc_table
    from evalkit.speech import ACCENT_FEATURES

    p = Path(args.data)
    try:
        data = pd.read_csv(p)
    except FileNotFoundError:
        raise
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise FileFormatError(p, None, f"not a CSV table: {exc}") from None
    if args.features:
        features = [f.strip() for f in args.features.split(",") if f.strip()]
    elif all(f in data.columns for f in STROKE_FEATURES):
        features = list(STROKE_FEATURES)
    elif all(f in data.columns for f in ACCENT_FEATURES):
        features = list(ACCENT_FEATURES)
    else:
        raise InputError(f"{p}: give --features (columns are {', '.join(map(str, data.columns))})")
    for col in features + [args.label, args.group]:
        if col not in data.columns:
            raise FileFormatError(p, 1, f"no column {col!r}; columns are {', '.join(map(str, data.columns))}")
    for col in features:
        bad = pd.to_numeric(data[col], errors="coerce").isna() & data[col].notna()
        if bad.any():
            row = int(bad.to_numpy().nonzero()[0][0]) + 2
            raise FileFormatError(p, row, f"column {col!r} must be numeric, got {data[col][bad].iloc[0]!r}")
    classifiers = [c.strip() for c in args.classifiers.split(",") if c.strip()]
    for c in classifiers:
        if c not in CLASSIFIERS:
            raise InputError(f"unknown classifier {c!r}; choose from {', '.join(CLASSIFIERS)}")
    y = data[args.label]
    if args.positive:
        pos = {v.strip() for v in args.positive.split(",")}
        unknown = pos - set(map(str, y.dropna().unique()))
        if unknown:
            raise InputError(f"--positive value(s) {', '.join(sorted(unknown))} not in column {args.label!r} (values: {', '.join(sorted(map(str, y.dropna().unique())))})")
        data = data.assign(**{args.label: y.astype(str).isin(pos).astype(int)})
    elif y.nunique() != 2:
        raise InputError(f"column {args.label!r} has {y.nunique()} values; give --positive to make two classes")
    table = mcc_table(data, features, args.label, args.group, classifiers, n_splits=args.folds, progress=True)
    n, npos = int(table["n"].iloc[0]), int(table["n_positive"].iloc[0])
    print(f"MCC, {min(args.folds, int(table['n_groups'].iloc[0]))}-fold cross-validation grouped by {args.group!r} "
          f"({table['n_groups'].iloc[0]} groups), {n} examples, {npos} positive ({npos / n:.0%})")
    print(format_mcc_table(table))
    if args.out:
        out = Path(args.out)
        tmp = out.with_name(f".{out.name}.tmp")
        table.to_csv(tmp, index=False)
        tmp.replace(out)
        print(f"wrote {out}")
    return 0
