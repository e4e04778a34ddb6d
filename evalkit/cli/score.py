"""``evalkit score PATHS... --out FILE``: every automatic metric, one row per clip."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from dataclasses import replace

from evalkit.cli.common import no_motion_files, add_command, add_load_options, load_options


def register(sub) -> None:
    p = add_command(sub, run,
        "score",
        help="compute every motion-quality metric for motion files (one row per clip)",
        description=(
            "Score BVH/AMC clips with every automatic metric: foot contacts and foot-skate "
            "(incl. the motion-diffusion 'foot skating ratio'), ground penetration and floating, "
            "centre of mass / zero-moment point / support polygon / ballistic flight, GENEA-style "
            "acceleration and jerk, bone-length drift, kinetic features; with --reference also "
            "Hellinger distances of velocity/acceleration/jerk histograms, joint-angle range "
            "outliers and FMDistance; with --audio beat alignment. Definitions, units and "
            "defaults: docs/metrics.md."
        ),
        epilog="Example: evalkit score evalkit/data/samples/cmu --out scores.csv --jobs 2",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="motion files or folders (searched recursively)")
    p.add_argument("--out", "-o", metavar="FILE",
                   help="output table: .csv, .parquet or .json (default: CSV on standard output)")
    p.add_argument("--system", metavar="NAME",
                   help="value of the 'system' column for every clip (default: each clip's folder name)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="local worker processes (joblib); -1 = all cores (default: 1)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask distributed cluster, e.g. tcp://127.0.0.1:8786 (overrides --jobs)")
    p.add_argument("--chunk-size", type=int, default=None, metavar="N",
                   help="clips per task (default: automatic, at most 64)")
    p.add_argument("--reference", action="append", metavar="DIR",
                   help="natural clips for the distribution metrics (repeatable)")
    p.add_argument("--frames", metavar="DIR",
                   help="also write per-frame traces to DIR/<system>/<clip>.csv (with --model also "
                        "naturalness_window and naturalness_local: the naturalness of the windows "
                        "covering each frame, 0-1, so the bad stretches of a long clip show)")
    p.add_argument("--audio", metavar="WAV|DIR",
                   help="audio for beat alignment: one WAV for all clips, or a folder of <clip>.wav")
    p.add_argument("--model", metavar="FILE",
                   help="also judge each clip with a naturalness discriminator from 'evalkit train' "
                        "('default': the shipped model): adds naturalness (calibrated probability "
                        "that the clip looks natural) and its least natural window")
    p.add_argument("--judge-joins", action="store_true",
                   help="with --model: judge a clip that is copies of one stretch (a loop) frame by frame, "
                        "every join included; default: the verdict of its first two copies (one copy and "
                        "its join, judged once; see the copies column)")
    g = p.add_argument_group("metric settings (physical units, for a 1.75 m body; scaled by body height)")
    g.add_argument("--ground-level", type=float, default=None, metavar="Y",
                   help="world height (m) of the lowest foot joint when planted; default: estimated per clip")
    g.add_argument("--contact-height", type=float, default=0.05, metavar="M",
                   help="foot point near the ground below this height, m (default: 0.05)")
    g.add_argument("--contact-speed", type=float, default=0.4, metavar="M_S",
                   help="...and still below this speed, m/s (default: 0.4)")
    g.add_argument("--skate-speed", type=float, default=0.1, metavar="M_S",
                   help="a planted foot slides above this speed, m/s (default: 0.1)")
    g.add_argument("--cutoff", type=float, default=6.0, metavar="HZ",
                   help="low-pass cut-off for the ground estimate, contacts and COM/ZMP "
                        "accelerations, Hz (default: 6)")
    g.add_argument("--measure-cutoff", type=float, default=4.0, metavar="HZ",
                   help="low-pass cut-off of the foot trajectories that slides, penetration and "
                        "floating are measured on, Hz (default: 4)")
    g.add_argument("--keep-pops", action="store_true",
                   help="keep end frames that pop (e.g. a T-pose at frame 0); default: drop them")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_load_options(p)


def config_from_args(args: argparse.Namespace):
    """The :class:`~evalkit.features.score.ScoreConfig` selected by the command-line options."""
    from evalkit.errors import InputError
    from evalkit.features.score import ScoreConfig
    from evalkit.motion.roles import load_role_map

    for name in ("contact_height", "contact_speed", "skate_speed", "cutoff", "measure_cutoff"):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"--{name.replace('_', '-')} must be a positive number, got {value:g}")
    if args.ground_level is not None and not math.isfinite(args.ground_level):
        raise InputError(f"--ground-level must be a height in metres, got {args.ground_level:g}")
    cfg = ScoreConfig(roles=load_role_map(args.roles) if args.roles else None)
    return replace(
        cfg,
        ground=replace(cfg.ground, level=args.ground_level, cutoff_hz=args.cutoff,
                       measure_cutoff_hz=args.measure_cutoff),
        contacts=replace(cfg.contacts, height=args.contact_height, speed=args.contact_speed),
        skate=replace(cfg.skate, skate_speed=args.skate_speed),
        physics=replace(cfg.physics, cutoff_hz=args.cutoff),
        pops=None if args.keep_pops else cfg.pops,
    )


def _check_run(args: argparse.Namespace, files: list[Path]) -> None:
    """Everything that can be wrong with the options, checked before any clip is scored."""
    from evalkit.atomic import check_writable
    from evalkit.errors import InputError
    from evalkit.features.batch import TABLE_EXTENSIONS, check_table_format, trace_path
    from evalkit.motion.formats import check_fps

    check_fps(args.amc_fps, "--amc-fps")
    if args.jobs == 0 or args.jobs < -1:
        raise InputError(f"--jobs must be a positive number or -1 (all cores), got {args.jobs}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise InputError(f"--chunk-size must be a positive number of clips, got {args.chunk_size}")
    if args.out:
        check_writable(args.out, TABLE_EXTENSIONS)
        check_table_format(args.out)
    if args.model and args.model != "default" and not Path(args.model).is_file():
        raise InputError(f"--model {args.model}: model file not found (train one with 'evalkit train')")
    if args.audio is not None and not Path(args.audio).exists():
        raise InputError(f"--audio {args.audio}: no such file or folder")
    if args.audio is not None and Path(args.audio).is_dir():
        missing = [f.stem for f in files if not (Path(args.audio) / f"{f.stem}.wav").is_file()]
        if len(missing) == len(files):
            raise InputError(f"--audio {args.audio}: no <clip>.wav for any clip (e.g. {missing[0]}.wav)")
        if missing:
            print(f"evalkit: warning: --audio {args.audio} has no <clip>.wav for {len(missing)} clip(s), whose "
                  f"beat metrics stay blank: {', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}",
                  file=sys.stderr)
    if args.frames:
        frames = Path(args.frames)
        blocker = next((p for p in (frames, *frames.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise InputError(f"--frames {frames}: {blocker} is a file, not a folder")
        seen: dict[Path, Path] = {}
        for f in files:
            trace = trace_path(f, args.frames, args.system)
            if trace in seen:
                raise InputError(
                    f"--frames: {seen[trace]} and {f} would both write {trace}; score them with "
                    "different --system names (or separately), or rename one"
                )
            seen[trace] = f
        try:
            frames.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--frames {frames}: cannot create the folder ({exc.strerror})") from None
        check_writable(frames / "probe.csv")


def run(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError
    from evalkit.features.batch import BatchOptions, score_paths, write_table
    from evalkit.features.reference import build_reference
    from evalkit.motion.formats import iter_motion_files

    cfg = config_from_args(args)
    files = list(iter_motion_files(args.paths))
    if not files:
        raise no_motion_files(args.paths)
    _check_run(args, files)
    from evalkit.features.batch import choose_workers

    jobs = args.jobs
    if args.scheduler is None and jobs != 1:
        jobs, why = choose_workers(files, args.jobs)  # more workers than the work pays for only add overhead
        if why:
            print(f"evalkit: note: --jobs {args.jobs}: {why}", file=sys.stderr)
    reference = build_reference(args.reference, cfg, load_options(args)) if args.reference else None
    analyses = ()
    if args.model:  # judged on the motion the metrics read: each file is read once
        from evalkit.models.naturalness import NaturalnessAnalysis
        from evalkit.models.training import load_model

        analyses = (NaturalnessAnalysis(load_model(args.model)[0], cfg.roles, drop_pops=not args.keep_pops,
                                        fold_repeats=not args.judge_joins),)
    opts = BatchOptions(config=cfg, reference=reference, load=load_options(args), system=args.system,
                        frames_dir=args.frames, audio=args.audio, analyses=analyses)
    table = score_paths(files, opts, jobs=jobs, scheduler=args.scheduler, chunk_size=args.chunk_size,
                        progress=not args.quiet)
    failed = int((table["error"] != "").sum())
    if failed == len(table):
        for msg in table["error"]:
            print(f"evalkit: error: {msg}", file=sys.stderr)
        print(f"evalkit: error: every clip failed ({failed} of {failed}); no table written", file=sys.stderr)
        return 1
    if args.out:
        write_table(table, args.out)
        print(f"scored {len(table) - failed} clip(s), {failed} failed -> {args.out}", file=sys.stderr)
    else:
        table.to_csv(sys.stdout, index=False)
    for msg in table.loc[table["error"] != "", "error"]:
        print(f"evalkit: error: {msg}", file=sys.stderr)
    cut = int((table["cuts"] > 0).sum()) if "cuts" in table else 0
    if cut:
        print(f"evalkit: note: {cut} clip(s) cut to a new take (the body jumps farther in one frame than a body "
              "can): each take was judged on its own; see the cuts column", file=sys.stderr)
    looped = int((table["copies"] > 1).sum()) if "copies" in table else 0
    if looped:
        print(f"evalkit: note: {looped} clip(s) are copies of one stretch played over (a loop): each was judged "
              "on its first two copies and the join between them (later copies add nothing new); see the copies column", file=sys.stderr)
    noted = int((table["notes"] != "").sum()) if "notes" in table else 0
    if noted:
        print(f"evalkit: note: {noted} clip(s) have notes (implausible input, or metrics left empty for "
              "the rig): see the notes column", file=sys.stderr)
    return 1 if failed else 0
