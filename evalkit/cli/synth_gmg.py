"""``evalkit synth gmg`` and ``evalkit synth gmg-stats``: gesture motion graph synthesis from
speech and the graph's statistics per similarity threshold (thesis Table 4.2).

``register(synth_subparsers)`` adds both subcommands to the subparsers of ``evalkit synth``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evalkit.cli.common import add_command, add_load_options, load_options

_VARIANT_CHOICES = ("random", "sync", "sync+intensity", "all")


def _add_database_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gestures", nargs="+", metavar="PATH",
                   help="gesture capture: BVH/AMC files or folders, all on one skeleton (default: the bundled "
                        "CMU clips 131_01 and 131_03 - non-conversational arm motion, said so in every output)")
    p.add_argument("--split", choices=("strokes", "phrases"), default="strokes",
                   help="cut one GP per stroke (default) or one per gesture phrase (rest to rest)")
    p.add_argument("--weights", default="thesis",
                   help="posture-distance weights: 'thesis' (spine, neck, upper arms, forearms = 1; default), "
                        "'all', or a JSON object {joint name: weight}")


def register(sub) -> None:
    """Add ``gmg`` and ``gmg-stats`` to the subparsers ``sub`` of ``evalkit synth``."""
    p = add_command(sub, run,
        "gmg",
        help="speech-driven gestures with the gesture motion graph (random / sync / sync+intensity)",
        description=(
            "Build a gesture database from gesture capture (gesture phrases with apex and GSI), a gesture "
            "motion graph (E1 edges between consecutive phrases, E2 edges between similar boundary postures, "
            "largest strongly connected component), and synthesise gestures for each speech recording: "
            "'random' (random walk), 'sync' (stroke apexes 0.1 s before the pitch-accent peaks, by the "
            "synchrony rule) and 'sync+intensity' (also gesture strength fitted to accent strength by the "
            "intensity rule). Writes <speech>_<variant>.bvh and .json (manifest: audio path, plan, "
            "objective report, clip checks) per output, objective.csv (one row per output), "
            "objective_summary.csv (means per variant), objective_pooled.csv (all pairs pooled per "
            "variant and reading: planned, realised, analysed blind), objective_blind_order.csv (the "
            "variants judged blind utterance by utterance: win rates, Wilcoxon signed-rank tests) and "
            "gesture_database.csv."),
        epilog="Example: evalkit synth gmg --gestures ../shared/data/gesture/bandai-namco "
               "--speech utterance.wav --variant all --seed 0 --out stimuli/",
    )
    _add_database_options(p)
    p.add_argument("--speech", nargs="+", metavar="AUDIO",
                   help="speech recordings, WAV/FLAC (default: the bundled LJ Speech samples)")
    tg = p.add_mutually_exclusive_group()
    tg.add_argument("--textgrid", metavar="F", help="Praat TextGrid with the pitch accents of the (single) --speech file")
    tg.add_argument("--textgrid-dir", metavar="DIR", help="folder of <speech stem>.TextGrid annotations (others: accents detected)")
    p.add_argument("--tier", default="PAPT", help="accent tier of the TextGrids: point tier or labelled intervals (default: PAPT)")
    p.add_argument("--variant", action="append", choices=_VARIANT_CHOICES, metavar="VARIANT",
                   help="random, sync, sync+intensity or all (repeatable; default: all)")
    p.add_argument("--rules", metavar="JSON", help="synchrony/intensity rules (default: the thesis' numbers; see 'evalkit rules show')")
    p.add_argument("--threshold", type=float, default=None, help="similarity threshold, weighted RMS joint angle in radians (default: 0.6)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0); the same seed gives the same clips")
    p.add_argument("--fps", type=float, default=None, help="output frame rate (default: the capture's)")
    p.add_argument("--min-pause", type=float, default=0.5, help="silences at least this long (s) put the body at rest (default: 0.5)")
    p.add_argument("--copy-audio", action="store_true", help="copy each speech file next to its outputs")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--json", action="store_true", help="print the objective table as JSON")
    add_load_options(p)

    s = add_command(sub, run_stats,
        "gmg-stats",
        help="gesture motion graph statistics per similarity threshold (thesis Table 4.2)",
        description=("Size, branching factor (edges / nodes), size and branching factor of the largest strongly "
                     "connected component of the gesture motion graph for each similarity threshold; "
                     "written as CSV and LaTeX with --out."),
    )
    _add_database_options(s)
    s.add_argument("--thresholds", default="0.3:1.0:0.1",
                   help="START:STOP:STEP (inclusive) or a comma-separated list, radians (default: 0.3:1.0:0.1)")
    s.add_argument("--out", metavar="DIR", help="write gmg_stats.csv and gmg_stats.tex here")
    s.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_load_options(s)


# --------------------------------------------------------------------------------------------
def _weights(spec: str):
    from evalkit.errors import ConfigError

    if spec in ("thesis", "all"):
        return spec
    try:
        w = json.loads(spec)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--weights: expected 'thesis', 'all' or a JSON object of joint weights ({exc.msg})") from None
    if not isinstance(w, dict):
        raise ConfigError("--weights: expected a JSON object {joint name: weight}")
    return {str(k): float(v) for k, v in w.items()}


def _database(args):
    from evalkit.synth.gmg.db import CMU_NOTE, DatabaseConfig, build_gesture_database, cmu_gesture_database, is_bundled_cmu

    cfg = DatabaseConfig(split=args.split)
    if not args.gestures:
        print("gesture capture: bundled CMU clips 131_01, 131_03 - " + CMU_NOTE, file=sys.stderr)
        return cmu_gesture_database(cfg, progress=True)
    note = CMU_NOTE if is_bundled_cmu(args.gestures) else ""
    return build_gesture_database(args.gestures, cfg, load=load_options(args),
                                  source=", ".join(str(g) for g in args.gestures), note=note, progress=True)


def _thresholds(text: str) -> list[float]:
    import numpy as np

    from evalkit.errors import InputError

    try:
        if ":" in text:
            a, b, c = (float(x) for x in text.split(":"))
            if c <= 0:
                raise ValueError
            return [round(float(x), 6) for x in np.arange(a, b + c / 2, c)]
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--thresholds: expected START:STOP:STEP with STEP > 0 or a comma-separated list, got {text!r}") from None


def run_stats(args: argparse.Namespace) -> int:
    from evalkit.synth.gmg.graph import gmg_statistics, write_statistics

    thresholds, weights = _thresholds(args.thresholds), _weights(args.weights)
    db = _database(args)
    table = gmg_statistics(db, thresholds, weights)
    if args.json:
        json.dump(table.to_dict(orient="records"), sys.stdout, indent=2)
        print()
    else:
        cols = ["threshold", "nodes", "edges", "e1_edges", "e2_edges", "branching_factor", "scc_nodes", "scc_edges", "scc_branching_factor"]
        print(table[cols].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
        if db.note:
            print(f"note: {db.note}")
    if args.out:
        paths = write_statistics(table, args.out)
        print(f"wrote {paths['csv']} and {paths['tex']}", file=sys.stderr)
    return 0


def _speech_inputs(args):
    from evalkit.data import speech_files
    from evalkit.errors import InputError
    from evalkit.synth.gmg.plan import speech_input

    files = [Path(p) for p in args.speech] if args.speech else speech_files()
    if args.textgrid and len(files) != 1:
        raise InputError("--textgrid annotates one recording; give one --speech file or use --textgrid-dir")
    out = []
    for f in files:
        if not f.exists():
            raise InputError(f"{f}: speech file not found")
        tg = None
        if args.textgrid:
            tg = Path(args.textgrid)
        elif args.textgrid_dir:
            cand = Path(args.textgrid_dir) / f"{f.stem}.TextGrid"
            tg = cand if cand.exists() else None
        if tg is not None and not tg.exists():
            raise InputError(f"{tg}: TextGrid not found")
        out.append(speech_input(f, tg, args.tier, min_pause_s=args.min_pause))
    names = [s.name for s in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"speech files with the same name ({', '.join(dup)}) would write the same outputs; rename or run them separately")
    return out


def run(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm import tqdm

    from evalkit.gesture_speech import load_rules
    from evalkit.synth.gmg import (
        VARIANTS,
        blind_order,
        build_gmg,
        objective_table,
        pooled_objective,
        save_result,
        summarize_objective,
        synthesize,
    )
    from evalkit.synth.gmg.graph import DEFAULT_THRESHOLD
    from evalkit.synth.gmg.report import source_kinematics, write_text

    variants = list(VARIANTS) if not args.variant or "all" in args.variant else list(dict.fromkeys(args.variant))
    rules = load_rules(args.rules)
    weights = _weights(args.weights)
    speeches = _speech_inputs(args)
    db = _database(args)
    gmg = build_gmg(db, args.threshold or DEFAULT_THRESHOLD, weights)
    st = gmg.stats()
    print(f"gesture database: {len(db)} GPs from {len(db.recordings)} recording(s); graph at threshold "
          f"{gmg.threshold:g}: {st['nodes']} nodes, {st['edges']} edges, largest SCC {st['scc_nodes']} nodes "
          f"(branching factor {st['scc_branching_factor']:.2f})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "gesture_database.csv", db.frame().to_csv(index=False, float_format="%.5g"))
    src = source_kinematics(db)
    results = []
    for sp in tqdm(speeches, desc="gmg", unit="utterance"):
        for v in variants:
            r = synthesize(gmg, sp, v, rules, args.seed, fps=args.fps, source=src)
            save_result(r, out, copy_audio=args.copy_audio)
            results.append(r)
    table = objective_table(results)
    write_text(out / "objective.csv", table.to_csv(index=False, float_format="%.5g"))
    summary = summarize_objective(table)
    write_text(out / "objective_summary.csv", summary.to_csv(float_format="%.5g"))
    pooled = pd.concat({r: pooled_objective(results, rules, r) for r in ("planned", "realised", "analysed")}, names=["reading"])
    write_text(out / "objective_pooled.csv", pooled.to_csv(float_format="%.5g"))
    order = blind_order(table)
    write_text(out / "objective_blind_order.csv", order.to_csv(index=False, float_format="%.5g"))
    if args.json:
        json.dump(json.loads(table.to_json(orient="records")), sys.stdout, indent=2)
        print()
        return 0
    cols = {"n_gestures": "GPs", "n_accents": "accents", "realised_accents_covered": "covered",
            "realised_offset_mean_s": "offset", "realised_offset_mad_rule_s": "|off-rule|",
            "realised_gsi_psi_mae": "|GSI-line|", "realised_gsi_psi_in_margin": "in margin", "pops": "pops"}
    show = table[["item", "variant"] + list(cols)].rename(columns=cols)
    print(show.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"\nobjective, all apex-accent pairs of the {len(speeches)} utterance(s) pooled (realised: measured GP by GP "
          "on the rendered clips; offset = PAPT - apex, s; see docs/gmg.md):")
    keep = ["pairs", "accents_covered", "offset_mean_s", "offset_sd_s", "offset_mad_rule_s", "offset_within_rule",
            "gsi_psi_mae", "gsi_psi_in_margin", "gsi_psi_r"]
    print(pooled.loc["realised", keep].to_string(float_format=lambda v: f"{v:.3f}"))
    if len(order):
        print("\nblind analysis of the clips (evalkit's gesture analysis, as on capture), variant against variant "
              "per utterance (win rate of the first; Wilcoxon signed-rank p):")
        print(order.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for note in results[0].manifest["notes"] if results else []:
        print(f"note: {note}")
    print(f"wrote {len(results)} clip(s) with manifests, objective.csv, objective_summary.csv, objective_pooled.csv, "
          f"objective_blind_order.csv and gesture_database.csv to {out}")
    return 0
