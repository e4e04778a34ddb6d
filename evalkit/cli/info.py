"""``evalkit info FILE...``: what is in motion files."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from evalkit.cli.common import no_motion_files, add_command, add_load_options, load_options


def register(sub) -> None:
    p = add_command(sub, run,
        "info",
        help="summarise motion files (skeleton, roles, fps, duration, units)",
        description="Summarise BVH/AMC files: joints, roles found, frame rate, frames, duration, "
                    "units and up axis detected, and the horizontal length of the hips' path "
                    "(root_path_m, measured on the hips role: the joint that carries the body).",
    )
    p.add_argument("paths", nargs="+", metavar="FILE", help="motion files or folders")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_load_options(p)


def _summary(motion, role_map) -> dict:
    from evalkit.motion import ROLE_NAMES, find_roles, skeleton_height

    roles = find_roles(motion.skeleton, overrides=role_map, strict=False)
    # The path of the hips (pelvis), as the metrics see the body move: on some rigs (Bandai
    # Namco's joint_Root) the root joint stays put and a child carries the translation.
    hips = roles.get("hips", 0)
    track = motion.positions[:, hips][:, [0, 2]]
    path_len = float(np.linalg.norm(np.diff(track, axis=0), axis=1).sum()) if motion.n_frames > 1 else 0.0
    return {
        "file": motion.meta.get("source"),
        "format": motion.meta.get("format"),
        "joints": motion.n_joints,
        "root": motion.skeleton.names[0],
        "path_joint": motion.skeleton.names[hips],
        "roles_found": len(roles),
        "roles_missing": [r for r in ROLE_NAMES if r not in roles],
        "fps": round(motion.fps, 4),
        "frames": motion.n_frames,
        "duration_s": round(motion.duration, 3),
        "units": motion.meta.get("units"),
        "up_axis": motion.meta.get("up_axis"),
        "height_m": round(skeleton_height(motion), 3),
        "root_path_m": round(path_len, 3),
    }


def run(args: argparse.Namespace) -> int:
    from evalkit.errors import EvalkitError
    from evalkit.motion.formats import iter_motion_files
    from evalkit.motion.roles import load_role_map

    from evalkit.errors import InputError
    from evalkit.motion.formats import check_fps

    check_fps(args.amc_fps, "--amc-fps")
    role_map = load_role_map(args.roles) if args.roles else None
    files = list(iter_motion_files(args.paths))
    if not files:
        raise no_motion_files(args.paths)
    rows, failed = [], 0
    for path in files:
        try:
            rows.append(_summary(load_options(args, roles=role_map).load(path), role_map))
        except EvalkitError as exc:
            failed += 1
            rows.append({"file": str(path), "error": str(exc)})
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
    else:
        cols = ["file", "joints", "roles", "fps", "frames", "duration_s", "units", "up", "height_m", "root_path_m"]
        table = []
        for r in rows:
            if "error" in r:
                table.append([r["file"], "error: " + r["error"]])
                continue
            table.append([
                r["file"], str(r["joints"]), f"{r['roles_found']}/{r['roles_found'] + len(r['roles_missing'])}",
                f"{r['fps']:g}", str(r["frames"]), f"{r['duration_s']:.2f}", r["units"], r["up_axis"],
                f"{r['height_m']:.2f}", f"{r['root_path_m']:.2f}",
            ])
        widths = [max([len(c)] + [len(t[i]) for t in table if len(t) > i and len(t) > 2]) for i, c in enumerate(cols)]
        if failed < len(rows):  # no header over an empty table
            print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
        for t in table:
            if len(t) == 2:
                print(t[1].replace("error: ", "evalkit: error: ", 1), file=sys.stderr)
            else:
                print("  ".join(v.ljust(w) for v, w in zip(t, widths)))
        print(f"{len(rows) - failed} clip(s) read, {failed} failed")
    return 1 if failed else 0
