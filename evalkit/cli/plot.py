"""``evalkit plot CLIP -o OUT.png``: a timeline of what went wrong where."""

from __future__ import annotations

import argparse
import sys

from evalkit.cli.common import add_command, add_load_options, load_options

#: Resolutions that give a readable figure without exhausting memory (the figure is 11 in wide:
#: 600 dpi is 6600 pixels, print quality).
MIN_DPI, MAX_DPI = 20, 600


def register(sub) -> None:
    p = add_command(sub, run,
        "plot",
        help="timeline of contacts, foot-skate, ZMP outside support and penetration (PNG/PDF)",
        description=(
            "Draw a clip's per-frame diagnostics on one time axis: which foot is planted, how fast "
            "planted feet slide, how far the zero-moment point leaves the support polygon, and the "
            "lowest foot's height (penetration below, floating above the ground). With --model, also "
            "how natural each 1-s window looks to a naturalness discriminator (and locally, over the "
            "stretches around it), every window judged unnatural shaded red on every panel (darker the "
            "less natural) and the least natural window outlined."
        ),
        epilog=("Examples:\n  evalkit plot evalkit/data/samples/cmu/16_15.amc -o 16_15.png\n"
                "  evalkit plot evalkit/data/samples/cmu/16_15.amc -o 16_15.png --model default"),
    )
    p.add_argument("clip", metavar="CLIP", help="a motion file (.bvh or .amc)")
    p.add_argument("-o", "--out", required=True, metavar="OUT", help="output image: .png or .pdf (or .svg)")
    p.add_argument("--keep-pops", action="store_true", help="keep end frames that pop")
    p.add_argument("--dpi", type=int, default=120,
                   help=f"resolution of PNG output, {MIN_DPI} to {MAX_DPI} (default: 120)")
    p.add_argument("--model", metavar="FILE",
                   help="add a panel of per-window naturalness from a model of 'evalkit train' "
                        "('default': the shipped model)")
    p.add_argument("--judge-joins", action="store_true",
                   help="with --model: judge a loop (copies of one stretch) frame by frame, joins included")
    add_load_options(p)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from evalkit.atomic import check_writable
    from evalkit.errors import InputError
    from evalkit.features.plot import FORMATS, plot_timeline
    from evalkit.features.score import ScoreConfig
    from evalkit.motion.formats import check_fps
    from evalkit.motion.roles import load_role_map

    if not MIN_DPI <= args.dpi <= MAX_DPI:
        raise InputError(f"--dpi must be {MIN_DPI} to {MAX_DPI}, got {args.dpi}")
    check_fps(args.amc_fps, "--amc-fps")
    check_writable(args.out, FORMATS)
    cfg = ScoreConfig(roles=load_role_map(args.roles) if args.roles else None)
    if args.keep_pops:
        cfg = replace(cfg, pops=None)
    motion = load_options(args, roles=cfg.roles).load(args.clip)
    verdict = None
    if args.model:
        from evalkit.models.discriminator import score_naturalness
        from evalkit.models.training import load_model
        from evalkit.motion.roles import find_roles

        model, _ = load_model(args.model)
        roles = find_roles(motion.skeleton, overrides=cfg.roles, strict=True) if cfg.roles else None
        verdict = score_naturalness(model, motion, roles, drop_pops=not args.keep_pops,
                                     fold_repeats=not args.judge_joins)
    out = plot_timeline(motion, args.out, cfg, dpi=args.dpi, verdict=verdict)
    print(f"wrote {out}", file=sys.stderr)
    return 0
