"""``evalkit convert IN OUT``: BVH/AMC -> BVH or NPZ of world positions, optional resampling."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from evalkit.cli.common import add_load_options, load_kwargs
from evalkit.errors import InputError


def register(sub) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a motion file to BVH (metres, Y-up) or NPZ of joint positions",
        description="Read a BVH/AMC file and write it as BVH (metres, Y-up, same skeleton) or as "
                    "an NPZ with world joint positions (frames x joints x 3, metres), joint names, "
                    "parents and fps. --fps resamples (slerp for rotations).",
    )
    p.add_argument("input", metavar="IN")
    p.add_argument("output", metavar="OUT", help="output .bvh or .npz")
    p.add_argument("--fps", type=float, default=None, help="resample to this frame rate")
    p.add_argument("--scale", type=float, default=1.0,
                   help="write BVH lengths as metres / SCALE (0.01 writes centimetres)")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.motion import load_motion, resample, write_bvh

    out = Path(args.output)
    ext = out.suffix.lower()
    if ext not in (".bvh", ".npz"):
        raise InputError(f"{out}: output must end in .bvh or .npz")
    motion = load_motion(args.input, **load_kwargs(args))
    if args.fps:
        motion = resample(motion, args.fps)
    if ext == ".bvh":
        write_bvh(motion, out, scale=args.scale)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.stem + ".tmp.npz")
        np.savez_compressed(
            tmp, positions=motion.positions.astype(np.float32), names=np.array(motion.skeleton.names),
            parents=motion.skeleton.parents, fps=motion.fps,
        )
        os.replace(tmp, out)
    print(f"wrote {out} ({motion.n_frames} frames at {motion.fps:g} fps)")
    return 0
