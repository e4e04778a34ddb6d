"""``evalkit synth ...``: reference motion graphs (SMG, BPMG), transitions, measurements.

* ``evalkit synth graph smg|bpmg [CLIPS...] --out DIR`` — build a graph, write its statistics,
  transition candidates and distance maps;
* ``evalkit synth transition smg|bpmg [CLIPS...] --from A --to B --at SECONDS --out DIR`` —
  synthesize transitions as BVH + manifest JSON (every ordered pair if ``--from/--to`` are
  omitted);
* ``evalkit synth measure [CLIPS...] --out DIR`` — the thesis' measurements (CSV, LaTeX, PNG).

Without CLIPS the bundled CMU walk, slow walk and run are used. Other modules add ``evalkit
synth`` subcommands: every module ``evalkit.cli.synth_<name>`` (e.g. ``synth_gmg``) is imported
and its ``register_synth(subparsers)`` — or ``register(subparsers)`` — is called with the
subparsers of ``evalkit synth``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
from pathlib import Path

from evalkit.cli.common import add_command, add_load_options, load_options
from evalkit.errors import InputError


def _add_graph_options(p: argparse.ArgumentParser, method_arg: bool = True) -> None:
    if method_arg:
        p.add_argument("method", choices=("smg", "bpmg"), help="standard motion graph or body part motion graphs")
    p.add_argument("clips", nargs="*", metavar="CLIP",
                   help="BVH/AMC files or folders (default: the bundled CMU walk, slow walk and run)")
    g = p.add_argument_group("graph")
    g.add_argument("--threshold", type=float, default=None, metavar="M",
                   help="similarity threshold in metres: RMS per joint over the window with --norm rms "
                        "(default 0.3, which connects walking and running in the bundled clips); with "
                        "--norm kovar the default is 0.3 x sqrt(whole-body point weight), the same poses")
    g.add_argument("--norm", choices=("rms", "kovar"), default="rms",
                   help="distance: rms = RMS metres per joint; kovar = square root of Kovar's weighted sum "
                        "(grows with the number of joints compared) (default: rms)")
    g.add_argument("--window", type=float, default=1.0 / 3.0, metavar="SECONDS",
                   help="comparison and blend window, seconds (default: 1/3)")
    g.add_argument("--fps", type=float, default=60.0, help="graph frame rate; clips are resampled (default: 60)")
    g.add_argument("--weights", default="paths", metavar="SCHEME",
                   help="joint weights: paths (semantic joints and the bones leading to them), roles, all "
                        "(default: paths)")
    g.add_argument("--no-prune", action="store_true", help="keep nodes outside the largest strongly connected component")
    g.add_argument("--no-guard", action="store_true",
                   help="do not reject transitions that move joints faster than the source clips")
    g.add_argument("--profile", default="sp4a",
                   help="BPMG split profile: sp2, sp3a, sp3b, sp4a, sp4b, sp5 (default: sp4a)")
    add_load_options(p)


def register(sub) -> None:
    p = add_command(sub, None,
        "synth",
        help="reference motion graphs (SMG, BPMG): build, synthesize transitions, measure",
        description="Standard motion graphs (Kovar et al. 2002) and body part motion graphs with "
                    "progressive transitions (Fernandez-Baena, thesis ch. 3) on real capture. "
                    "Details: docs/synth.md.",
    )
    ss = p.add_subparsers(dest="synth_command", metavar="SUBCOMMAND")

    g = add_command(ss, run_graph,
        "graph", help="build a graph and write its statistics, candidates and distance maps",
        description="Build an SMG or BPMG from clips and write DIR/graph.json (parameters, statistics: "
                    "nodes, edges, branching factor, SCC size, transition points), DIR/candidates.csv "
                    "(every transition candidate) and DIR/distance_maps.png.",
        epilog="Example: evalkit synth graph bpmg --profile sp4a --out out/bpmg",
    )
    _add_graph_options(g)
    g.add_argument("--out", "-o", required=True, metavar="DIR", help="output folder")

    t = add_command(ss, run_transition,
        "transition", help="synthesize transitions as BVH + manifest JSON (study stimuli)",
        description="Synthesize the transition requested at --at seconds of clip --from into clip --to. "
                    "Writes <method>_<from>_to_<to>.bvh and a .json manifest (method, source motions, "
                    "requested time, plan, parameters, quality checks, foot-skate). Without --from/--to, "
                    "every ordered pair of clips.",
        epilog="Example: evalkit synth transition bpmg --from 16_15 --to 09_06-run --at 1.0 --out stimuli/",
    )
    _add_graph_options(t)
    t.add_argument("--from", dest="from_clip", metavar="CLIP", help="origin clip (file stem)")
    t.add_argument("--to", dest="to_clip", metavar="CLIP", help="target clip (file stem)")
    t.add_argument("--at", type=float, default=None, metavar="SECONDS",
                   help="request time in the origin clip (default: 40%% of its duration)")
    t.add_argument("--lead", type=float, default=1.0, metavar="SECONDS", help="origin motion before the request (default: 1)")
    t.add_argument("--tail", type=float, default=2.0, metavar="SECONDS", help="target motion after arrival (default: 2)")
    t.add_argument("--out", "-o", required=True, metavar="DIR|FILE.bvh", help="output folder (or .bvh file for one transition)")

    m = add_command(ss, run_measure,
        "measure", help="thesis measurements: response/duration, connectivity, cost, maneuverability, skate",
        description="Measure SMG and BPMG transitions: response and duration (frames at 60 fps) for every "
                    "ordered pair of clips, local maneuverability, connectivity and cost per split profile "
                    "against the threshold, foot-skate of synthesized vs source clips. Writes CSV, LaTeX "
                    "(tables.tex) and PNG figures into DIR.",
        epilog="Example: evalkit synth measure ../shared/data/mocap/cmu-reallusion/00{7_01,2_03,7_04,7_12}.bvh --out out/measure",
    )
    _add_graph_options(m, method_arg=False)
    m.add_argument("--thresholds", type=float, nargs="+", default=None, metavar="M",
                   help="thresholds of the sweep (default: 0.05 ... 0.35 for rms)")
    m.add_argument("--request-step", type=float, default=0.05, metavar="SECONDS",
                   help="spacing of request times in the main tables (default: 0.05)")
    m.add_argument("--sweep-step", type=float, default=0.25, metavar="SECONDS",
                   help="spacing of request times in the sweep (default: 0.25)")
    m.add_argument("--out", "-o", required=True, metavar="DIR", help="output folder")
    m.add_argument("--profiles", nargs="+", default=None, metavar="PROFILE",
                   help="BPMG split profiles of the sweep (default: all six)")
    m.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    m.add_argument("--sweep-only", action="store_true",
                   help="only the threshold sweep (sweep.csv, sweep_pairs.csv): skips the main tables and the "
                        "foot-skate of rendered transitions, which render every plan (hours on dozens of clips)")

    # extension point: evalkit.cli.synth_<name>.register_synth(ss) (or .register(ss))
    import evalkit.cli as cli_pkg

    for info in sorted(pkgutil.iter_modules(cli_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("synth_"):
            mod = importlib.import_module(f"evalkit.cli.{info.name}")
            hook = getattr(mod, "register_synth", None) or getattr(mod, "register", None)
            if hook is not None:
                hook(ss)


def _clipset(args):
    from evalkit.synth.clips import bundled_locomotion
    from evalkit.synth.clipset import ClipSet

    clips = args.clips
    if not clips:
        clips = bundled_locomotion()
        print("using the bundled CMU clips: " + ", ".join(p.name for p in clips), file=sys.stderr)
    from evalkit.synth.clips import prepare_clips

    if args.window <= 0:
        raise InputError(f"--window must be positive, got {args.window}")
    motions = prepare_clips(clips, fps=args.fps, load=load_options(args))
    k = max(2, int(round(args.window * motions[0].fps)))
    # A set of real takes often holds a clip too short to enter or leave by a transition (a
    # 0.7-s dash); a set command leaves it out and says so rather than refusing the whole set.
    short = [m.name for m in motions if m.n_frames < 2 * k + 2]
    if short and len(short) < len(motions):
        print(f"leaving out {len(short)} clip(s) shorter than two windows ({2 * k + 2} frames at "
              f"{motions[0].fps:g} fps): {', '.join(short)}", file=sys.stderr)
        motions = [m for m in motions if m.n_frames >= 2 * k + 2]
    overrides = None
    if args.roles:
        from evalkit.motion.roles import load_role_map

        overrides = load_role_map(args.roles)
    return ClipSet(tuple(motions), k, args.weights, overrides)


def _threshold(args, cs) -> float:
    from evalkit.synth.smg import DEFAULT_THRESHOLD

    if args.threshold is not None:
        return args.threshold
    if args.norm == "rms":
        return DEFAULT_THRESHOLD
    t = DEFAULT_THRESHOLD * cs.weight_total("full") ** 0.5
    print(f"threshold (kovar): {t:.3f} m, the whole-body equivalent of {DEFAULT_THRESHOLD} m RMS", file=sys.stderr)
    return t


def _build(args, cs, method: str):
    from evalkit.synth import build_bpmg, build_smg

    threshold = _threshold(args, cs)
    common = dict(threshold=threshold, norm=args.norm, prune=not args.no_prune, speed_guard=not args.no_guard)
    if method == "smg":
        return build_smg(cs, **common)
    return build_bpmg(cs, profile=args.profile, **common)


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def run_graph(args: argparse.Namespace) -> int:
    from evalkit.synth.plots import plot_distance_maps

    cs = _clipset(args)
    g = _build(args, cs, args.method)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stats = g.stats()
    info = {
        "method": args.method,
        "clips": [{"name": c.name, "frames": c.n_frames, "source": c.meta.get("source")} for c in cs.clips],
        "fps": cs.fps,
        "window_frames": cs.window,
        "parameters": g.config.as_dict(),
        "stats": stats,
    }
    _atomic_text(out / "graph.json", json.dumps(info, indent=2, default=float) + "\n")
    cand = g.candidates.copy()
    cand.insert(1, "from", [cs.clips[i].name for i in cand["src"]])
    cand.insert(3, "to", [cs.clips[i].name for i in cand["dst"]])
    _atomic_text(out / "candidates.csv", cand.to_csv(index=False))
    plot_distance_maps(g, out / "distance_maps.png")
    print(f"{args.method}: {stats['scc_nodes']} nodes in the largest SCC ({stats['nodes']} before pruning), "
          f"{stats['transition_points']} transition points, {stats['connected_clip_pairs']} connected clip pairs; "
          f"wrote {out}/graph.json, candidates.csv, distance_maps.png")
    return 0


def run_transition(args: argparse.Namespace) -> int:
    from evalkit.synth import synthesize_transition, write_stimulus

    cs = _clipset(args)
    g = _build(args, cs, args.method)
    if (args.from_clip is None) != (args.to_clip is None):
        raise InputError("give both --from and --to, or neither (all ordered pairs)")
    if args.from_clip is not None:
        pairs = [(cs.index(args.from_clip), cs.index(args.to_clip))]
    else:
        pairs = [(a, b) for a in range(len(cs.clips)) for b in range(len(cs.clips)) if a != b]
    out = Path(args.out)
    single = out.suffix.lower() == ".bvh"
    if single and len(pairs) != 1:
        raise InputError(f"{out}: a .bvh output needs --from and --to; give a folder for all pairs")
    failed = 0
    for a, b in pairs:
        src = cs.clips[a]
        at = args.at if args.at is not None else 0.4 * src.n_frames / cs.fps
        try:
            motion, manifest = synthesize_transition(g, a, b, at, lead_s=args.lead, tail_s=args.tail)
        except InputError as exc:
            if len(pairs) == 1:
                raise
            print(f"evalkit: warning: {exc}", file=sys.stderr)
            failed += 1
            continue
        path = out if single else out / f"{motion.name}.bvh"
        bvh, js = write_stimulus(motion, manifest, path)
        t = manifest["transition"]
        print(f"{bvh}: {motion.n_frames} frames, request at {manifest['request']['time_in_output_s']:.2f} s, "
              f"response {t['response_frames']} / duration {t['duration_frames']:.0f} frames, "
              f"checks {'ok' if manifest['checks']['ok'] else 'FAILED'}")
    return 1 if failed == len(pairs) else 0


def run_measure(args: argparse.Namespace) -> int:
    from evalkit.synth.measure import measure_transitions, write_measurements

    cs = _clipset(args)
    threshold = _threshold(args, cs)
    m = measure_transitions(
        cs, threshold=threshold, profile=args.profile, thresholds=args.thresholds,
        **({"profiles": args.profiles} if args.profiles else {}),
        request_step_s=args.request_step, sweep_step_s=args.sweep_step, progress=not args.quiet,
        norm=args.norm, prune=not args.no_prune, sweep_only=args.sweep_only,
    )
    paths = write_measurements(m, args.out)
    man = m.maneuverability
    for _, r in (man.iterrows() if len(man) else ()):
        print(f"{r['method']:5s} {r['profile']:5s} response {r['response_mean_frames_60fps']:.1f} / duration "
              f"{r['duration_mean_frames_60fps']:.1f} frames at 60 fps, local maneuverability "
              f"{r['local_maneuverability_s']:.2f} s, served {100 * r['served_share']:.0f}%; parts lead the legs by "
              f"{r['lead_mean_frames_60fps']:.1f}, single-hop transitions ({100 * r['single_hop_share']:.0f}%) last "
              f"{r['duration_single_hop_frames_60fps']:.1f}")
    sw = m.sweep[(m.sweep["method"] == "smg") | (m.sweep["profile"] == args.profile)]
    print("threshold sweep (served: share of transition requests served; pairs: connected clip pairs; "
          "served pairs: ordered clip pairs with a request served, and the least served pair's share; "
          "arrival: request to arrival, frames at 60 fps; run: requests into or out of a run, a clip with "
          "flight phases, and the ordered pairs with a run that are served):")
    n_pairs = len(cs.clips) * (len(cs.clips) - 1)
    for _, r in sw.sort_values(["threshold", "method"], ascending=[True, False]).iterrows():
        print(f"  {r['threshold']:.3g} {r['method']:5s} points {r['transition_points']:5d}  served {100 * r['served_share']:3.0f}%  "
              f"pairs {r['connected_clip_pairs']:2d}  served pairs {r['clip_pairs_served']:2d}/{n_pairs} "
              f"(least {100 * r['min_pair_served_share']:3.0f}%)  arrival {r['arrival_mean_frames_60fps']:.1f}"
              + (f"  run {100 * r['served_share_run_pairs']:3.0f}% pairs {r['run_pairs_served']}/{r['run_pairs']}"
                 if r["run_clips"] else ""))
    print(f"wrote {len(paths)} files to {args.out}")
    return 0
