"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse


def add_load_options(p: argparse.ArgumentParser) -> None:
    """``--units``, ``--up``, ``--fps-amc``, ``--roles``: how motion files are read."""
    g = p.add_argument_group("reading motion files")
    g.add_argument("--units", default="auto",
                   help="length unit of the files: auto (detect from body size), m, cm, mm, inch, "
                        "cmu (CMU's inches/0.45) or metres per unit (default: auto)")
    g.add_argument("--up", default="auto",
                   help="up axis of the files: auto, y, z, -z, ... (default: auto)")
    g.add_argument("--amc-fps", type=float, default=120.0,
                   help="frame rate of AMC files, which carry none (default: 120, CMU's)")
    g.add_argument("--bvh-fps", type=float, default=None,
                   help="frame rate of BVH files instead of their 'Frame Time', for exports that "
                        "state a wrong one (default: the file's)")
    g.add_argument("--roles", metavar="YAML", default=None,
                   help="YAML file mapping roles to joint names, for unusual rigs")


def load_kwargs(args: argparse.Namespace) -> dict:
    units = args.units
    try:
        units = float(units)
    except (TypeError, ValueError):
        pass
    kw = {"units": units, "up": args.up, "fps": args.amc_fps}
    if getattr(args, "bvh_fps", None) is not None:  # only when given: not every caller reads BVH
        from evalkit.motion.io import check_fps

        kw["bvh_fps"] = check_fps(args.bvh_fps, "--bvh-fps")
    return kw
