"""``evalkit train --natural DIR [--unnatural DIR] --out MODEL``: fit a naturalness discriminator."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

from evalkit.cli.common import add_command, add_load_options, load_options

#: numpy's seeds (``RandomState``) are 32-bit.
MAX_SEED = 2**32 - 1
#: Working frame rates that keep windows meaningful and memory bounded.
MIN_FPS, MAX_FPS = 5.0, 240.0
#: A window needs a few frames for jerk and the pose samples; longer than this is no "window".
MIN_WINDOW_FRAMES, MAX_WINDOW_S = 8, 30.0

EPILOG = """\
examples:
  # a model like the shipped default (bundled CMU clips only; about a minute on 2 cores),
  # written beside you: the shipped model in evalkit/models/default_model/ stays as it is
  evalkit train --natural evalkit/data/samples/cmu --out my-default.joblib

  # your capture plus clips your system got wrong
  evalkit train --natural mocap/ --unnatural failures/ --out mymodel.joblib

  # a large set (AMASS-size) on a Dask cluster: files read and examples made on its workers
  evalkit train --natural /data/amass --scheduler tcp://scheduler:8786 --out amass.joblib

  # grouped cross-validation against the baselines, with a report, no model written
  evalkit train --natural evalkit/data/samples/cmu ../shared/data/mocap --evaluate report/

Score clips with the model: evalkit score clips/ --model mymodel.joblib
"""


def register(sub) -> None:
    p = add_command(sub, run,
        "train",
        help="train a natural-vs-unnatural motion discriminator (or evaluate one)",
        description=(
            "Train a calibrated classifier of natural vs unnatural motion (Ikemoto, Arikan & "
            "Forsyth 2007 style). Natural examples are segments of the --natural capture; "
            "unnatural ones are the same segments after seeded corruptions (bad transitions, "
            "foot-skate, jitter, time warps, frozen or keyframe-interpolated joints, limb "
            "transplants, bone-length and ground-height errors) plus any --unnatural clips. "
            "Writes MODEL (joblib) and MODEL with a .json suffix (features, versions, "
            "training-data hashes, seed). With --evaluate, runs grouped cross-validation "
            "(seen and held-out corruption types) against the baselines instead. "
            "Details: docs/discriminator.md."
        ),
        epilog=EPILOG,
    )
    p.add_argument("--natural", nargs="+", required=True, metavar="PATH",
                   help="real, unedited capture (files or folders, searched recursively)")
    p.add_argument("--unnatural", nargs="+", default=[], metavar="PATH",
                   help="clips known to look unnatural (every window counts as unnatural)")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--out", "-o", metavar="MODEL.joblib", help="where to write the model")
    out.add_argument("--evaluate", metavar="DIR",
                     help="run grouped cross-validation with baselines and write a report to DIR; a stopped run "
                          "resumes from the stages it finished (kept in DIR/stages/)")
    p.add_argument("--seed", type=int, default=0, help="seed of corruptions and model (default: 0)")
    p.add_argument("--types", default=None, metavar="T1,T2",
                   help="corruption types to generate (default: all; 'none' for no corruptions)")
    p.add_argument("--per-type", type=int, default=3, metavar="N",
                   help="corrupted versions per type and natural segment (default: 3)")
    p.add_argument("--severity", nargs=2, type=float, default=(0.3, 1.0), metavar=("LOW", "HIGH"),
                   help="range of corruption severities in [0, 1] (default: 0.3 1.0)")
    p.add_argument("--no-mirror", action="store_true", help="do not add left/right mirrored copies")
    p.add_argument("--segment", type=float, default=4.0, metavar="S",
                   help="natural clips are cut into segments of about S seconds (default: 4)")
    p.add_argument("--long-lengths", default=None, metavar="S1,S2",
                   help="lengths (seconds; 0 = the whole clip) of the long examples each natural clip "
                        "gives beside its segments, taken in turn over the clips, so the model learns "
                        "from clips of all lengths (default: 0,8,15,30,60; 'none': segments only)")
    p.add_argument("--group-by", choices=("subject", "file", "folder"), default="subject",
                   help="cross-validation groups: CMU subject from names like 07_05 (else folder), "
                        "each file, or each folder (default: subject)")
    p.add_argument("--fps", type=float, default=30.0, help="working frame rate (default: 30)")
    p.add_argument("--window", type=float, default=1.0, metavar="S", help="window length, s (default: 1)")
    p.add_argument("--hop", type=float, default=0.5, metavar="S", help="window step, s (default: 0.5)")
    p.add_argument("--band-hz", type=float, default=None, metavar="HZ",
                   help="low-pass every clip at HZ at the working rate, in training too (more detection "
                        "lost than the working band; docs/discriminator.md, 'The working band')")
    p.add_argument("--no-working-band", dest="working_band", action="store_false",
                   help="do not low-pass clips at or below the working rate at the band decimation keeps "
                        "(on by default: the same take at 20-120 fps then reads within about 0.01)")
    check = p.add_mutually_exclusive_group()
    check.add_argument("--no-artifact-check", dest="artifact_check", action="store_false",
                       help="leave out the artifact check, which lowers a clip's naturalness when it "
                            "exceeds natural capture on physical invariants (limb symmetry, bone lengths, "
                            "foot slides, floor, balance, jerk spikes, noise) and so catches artifact "
                            "types absent from training (on by default; docs/discriminator.md)")
    check.add_argument("--artifact-check", dest="artifact_check", action="store_true",
                       help="keep the artifact check on (the default)")
    p.set_defaults(artifact_check=True)
    p.add_argument("--artifact-quantile", type=float, default=0.0, metavar="Q",
                   help="the artifact check lowers a clip's naturalness only beyond this quantile of "
                        "natural training clips' artifact scores (default 0: any excess)")
    p.add_argument("--transplant-donor", choices=("other_clip", "same_clip"), default="other_clip",
                   help="limb transplants take the limb from another clip of the same subject on the "
                        "same skeleton (other_clip, the default) or from another time of the same clip "
                        "(same_clip: subtler, harder to detect)")
    p.add_argument("--folds", type=int, default=5, help="--evaluate: cross-validation folds (default: 5)")
    p.add_argument("--no-loco", action="store_true",
                   help="--evaluate: skip the leave-one-corruption-type-out runs (much faster)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="N local processes read the files and make the training examples (with --evaluate: "
                        "the cross-validation fits); same model, same results (default: 1)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="read the files and make the training examples on a Dask distributed cluster, e.g. "
                        "tcp://127.0.0.1:8786 (overrides --jobs; the fit runs here; same model as one process)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    add_load_options(p)


def _options(args: argparse.Namespace):
    from evalkit.errors import InputError
    from evalkit.models.corruptions import CORRUPTION_TYPES
    from evalkit.models.training import TrainOptions
    from evalkit.models.window_features import WindowConfig

    if args.types is None:
        types = CORRUPTION_TYPES
    elif args.types.strip().lower() == "none":
        types = ()
    else:
        types = tuple(t.strip() for t in args.types.split(",") if t.strip())
    if not 0.0 <= args.artifact_quantile < 1.0:
        raise InputError(f"--artifact-quantile must be in [0, 1), got {args.artifact_quantile}")
    if not (math.isfinite(args.segment) and args.segment > 0):
        raise InputError(f"--segment must be positive, got {args.segment:g}")
    if not 0 <= args.seed <= MAX_SEED:
        raise InputError(f"--seed must be 0 to {MAX_SEED} (2**32 - 1), got {args.seed}")
    if not MIN_FPS <= args.fps <= MAX_FPS:  # also refuses NaN
        raise InputError(f"--fps must be {MIN_FPS:g} to {MAX_FPS:g} frames per second, got {args.fps:g}")
    if not (math.isfinite(args.window) and MIN_WINDOW_FRAMES <= round(args.window * args.fps)
            and args.window <= MAX_WINDOW_S):
        raise InputError(f"--window must span {MIN_WINDOW_FRAMES} frames at --fps {args.fps:g} "
                         f"({MIN_WINDOW_FRAMES / args.fps:.2g} s) up to {MAX_WINDOW_S:g} s, got {args.window:g}")
    if not (math.isfinite(args.hop) and 0 < args.hop <= MAX_WINDOW_S):
        raise InputError(f"--hop must be a positive number of seconds up to {MAX_WINDOW_S:g}, got {args.hop:g}")
    if args.band_hz is not None and not (math.isfinite(args.band_hz) and 0 < args.band_hz < args.fps / 2):
        raise InputError(f"--band-hz must be above 0 and below half of --fps ({args.fps / 2:g} Hz), "
                         f"got {args.band_hz:g}")
    low, high = args.severity
    if not 0.0 <= low <= high <= 1.0:
        raise InputError(f"--severity must be LOW HIGH with 0 <= LOW <= HIGH <= 1, got {low:g} {high:g}")
    if args.per_type < 0:
        raise InputError(f"--per-type must be 0 or more, got {args.per_type}")
    if args.jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {args.jobs}")
    if args.evaluate and args.scheduler:
        raise InputError("--evaluate runs on this machine (use --jobs N); --scheduler is for training a model")
    if args.evaluate and args.folds < 2:
        raise InputError(f"--folds must be at least 2 (cross-validation trains on some folds and tests on "
                         f"another), got {args.folds}")
    from evalkit.models.dataset import LONG_LENGTHS

    if args.long_lengths is None:
        long_lengths = LONG_LENGTHS
    elif args.long_lengths.strip().lower() == "none":
        long_lengths = ()
    else:
        try:
            long_lengths = tuple(float(v) for v in args.long_lengths.split(",") if v.strip())
        except ValueError:
            raise InputError(f"--long-lengths must be seconds separated by commas (e.g. 0,8,15,30,60) or "
                             f"'none', got {args.long_lengths!r}") from None
    return TrainOptions(
        long_lengths=long_lengths,
        seed=args.seed, types=types, per_type=args.per_type, severity_range=tuple(args.severity),
        mirror=not args.no_mirror, segment_s=args.segment, group_by=args.group_by,
        window=WindowConfig(fps=args.fps, window_s=args.window, hop_s=args.hop, band_hz=args.band_hz,
                            working_band=args.working_band),
        model={"artifact_check": bool(args.artifact_check), "artifact_quantile": args.artifact_quantile},
        transplant_donor=args.transplant_donor,
    )


def _check_outputs(args: argparse.Namespace) -> None:
    from evalkit.atomic import check_writable
    from evalkit.errors import InputError

    if args.out:
        check_writable(args.out, (".joblib",))
        return
    report = Path(args.evaluate)
    blocker = next((p for p in (report, *report.parents) if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise InputError(f"--evaluate {report}: {blocker} is a file; the report goes into a folder")


def _load_options(args: argparse.Namespace):
    """How clips are read, with the --roles map (checked now; kept on each clip's skeleton, so
    corruptions, features and mirroring use the same roles)."""
    from evalkit.motion.formats import check_fps
    from evalkit.motion.roles import load_role_map

    check_fps(args.amc_fps, "--amc-fps")
    return load_options(args, roles=load_role_map(args.roles) if args.roles else None)


def run(args: argparse.Namespace) -> int:
    options = _options(args)
    _check_outputs(args)
    load = _load_options(args)
    if args.evaluate:
        return _evaluate(args, options, load)
    from evalkit.models.training import save_model, train

    t0 = time.perf_counter()
    model, meta = train(args.natural, args.unnatural, options, load, progress=not args.quiet, jobs=args.jobs,
                        scheduler=args.scheduler)
    meta["command"] = "evalkit train " + " ".join(_quote(a) for a in sys.argv[2:]) if sys.argv[1:2] == ["train"] else None
    path, meta_path = save_model(model, meta, args.out)
    ex = meta["examples"]
    print(f"trained on {sum(ex.values())} clips ({ex.get('none', 0)} natural), {meta['windows']['natural']} natural "
          f"and {meta['windows']['unnatural']} unnatural windows in {time.perf_counter() - t0:.0f} s "
          f"-> {path} (+ {meta_path.name})", file=sys.stderr)
    return 0


def _quote(a: str) -> str:
    import shlex

    return shlex.quote(a)


def _evaluate(args: argparse.Namespace, options, load) -> int:
    from evalkit.models.dataset import ExampleSpec, load_natural
    from evalkit.models.discriminator import NaturalnessDiscriminator
    from evalkit.models.evaluate import EvalConfig, run_evaluation

    if args.unnatural:
        from evalkit.errors import InputError

        raise InputError("--evaluate uses generated corruptions only; drop --unnatural")
    clips = load_natural(args.natural, fps=options.window.fps, group_by=options.group_by,
                         load=load, progress=not args.quiet)
    cfg = EvalConfig(
        n_splits=args.folds, seed=options.seed,
        train=ExampleSpec(types=tuple(options.types), per_type=options.per_type, severity_range=options.severity_range,
                          mirror=options.mirror, seed=options.seed, transplant_donor=options.transplant_donor,
                          long_lengths=tuple(options.long_lengths)),
        segment_s=options.segment_s, window=options.window,
        model=NaturalnessDiscriminator(window=options.window, random_state=options.seed, **options.model),
        loco=not args.no_loco,
    )
    files = run_evaluation(clips, Path(args.evaluate), cfg, jobs=args.jobs, progress=not args.quiet)
    for f in files:
        print(f"wrote {f}", file=sys.stderr)
    return 0
