"""``evalkit convert IN OUT``: BVH/AMC -> BVH or NPZ of world positions, optional resampling."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from evalkit.cli.common import add_command, add_load_options, load_kwargs
from evalkit.errors import InputError


def register(sub) -> None:
    p = add_command(sub, run,
        "convert",
        help="convert a motion file to BVH (metres, Y-up) or NPZ of joint positions",
        description="Read a BVH/AMC file and write it as BVH (metres, Y-up, same skeleton) or as "
                    "an NPZ with world joint positions (frames x joints x 3, metres), joint names, "
                    "parents and fps. --fps resamples (slerp for rotations).",
    )
    p.add_argument("input", metavar="IN", help="motion file to read (.bvh, or .amc with its .asf beside it)")
    p.add_argument("output", metavar="OUT", help="output .bvh or .npz (must differ from IN)")
    p.add_argument("--fps", type=float, default=None, help="resample to this frame rate")
    p.add_argument("--scale", type=float, default=1.0,
                   help="write BVH lengths as metres / SCALE (0.01 writes centimetres)")
    add_load_options(p)


def _check(args: argparse.Namespace, out: Path) -> None:
    """Every argument, before any work: nothing is read or written if one is wrong."""
    from evalkit.motion.io import check_fps

    if out.suffix.lower() not in (".bvh", ".npz"):
        raise InputError(f"{out}: output must end in .bvh or .npz")
    if args.fps is not None:
        check_fps(args.fps, "--fps")
    check_fps(args.amc_fps, "--amc-fps")
    if not (math.isfinite(args.scale) and 1e-6 <= args.scale <= 1e6):
        raise InputError(f"--scale must be a positive number of metres per written unit "
                         f"(e.g. 0.01 for centimetres), got {args.scale:g}")
    src = Path(args.input)
    if out.exists() and src.exists() and out.samefile(src):
        raise InputError(f"{out}: is the input file; write the conversion to another path")
    if out.is_dir():
        raise InputError(f"{out}: is a folder; give the output file's name")
    blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise InputError(f"{out}: cannot be written, {blocker} is a file, not a folder")


def run(args: argparse.Namespace) -> int:
    from evalkit.atomic import atomic_path
    from evalkit.motion import load_motion, resample, write_bvh
    from evalkit.motion.roles import load_role_map

    out = Path(args.output)
    _check(args, out)
    roles = load_role_map(args.roles) if args.roles else None
    motion = load_motion(args.input, **load_kwargs(args), roles=roles)
    if args.fps is not None:
        motion = resample(motion, args.fps)
    if out.suffix.lower() == ".bvh":
        write_bvh(motion, out, scale=args.scale)
    else:
        with atomic_path(out) as tmp:
            np.savez_compressed(
                tmp, positions=motion.positions.astype(np.float32), names=np.array(motion.skeleton.names),
                parents=motion.skeleton.parents, fps=motion.fps,
            )
    print(f"wrote {out} ({motion.n_frames} frames at {motion.fps:g} fps)")
    return 0
