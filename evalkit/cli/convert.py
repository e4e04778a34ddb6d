"""``evalkit convert IN OUT``: any motion file -> BVH, NPZ of world positions, SMPL-family parameters
(AMASS / BEAT2 ``.npz``), HumanML3D joints or features (``.npy``) or a CSV of positions."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from evalkit.cli.common import add_command, add_load_options, load_options
from evalkit.errors import InputError

#: output extension -> (formats, default)
FORMATS = {
    ".bvh": (("bvh",), "bvh"),
    ".npz": (("positions", "amass", "beat2"), "positions"),
    ".npy": (("humanml3d", "humanml3d-263"), "humanml3d"),
    ".csv": (("positions",), "positions"),
}


def register(sub) -> None:
    p = add_command(sub, run,
        "convert",
        help="convert a motion file to BVH, joint positions, SMPL-family parameters or HumanML3D",
        description="Read any motion file evalkit reads (BVH, ASF/AMC, SMPL-family .npz, HumanML3D / MDM "
                    ".npy, joint-position arrays) and write it by OUT's extension and --format: "
                    ".bvh (metres, Y-up; a position-only clip gets its fitted rotations); "
                    ".npz positions (world joint positions frames x joints x 3, metres, joint names, "
                    "parents and fps; the default), amass (SMPL-family parameters, Z-up, mocap_framerate) or "
                    "beat2 (SMPL-X parameters, Y-up, mocap_frame_rate, expressions); .npy humanml3d (joints "
                    "(frames, 22, 3), 20 fps; the default) or humanml3d-263 (feature vectors); .csv "
                    "positions (one row per frame, x,y,z per joint). SMPL-family and HumanML3D outputs "
                    "retarget the clip onto evalkit's default SMPL skeleton by its joint roles "
                    "(docs/formats.md). --fps resamples (slerp for rotations).",
    )
    p.add_argument("input", metavar="IN", help="motion file to read (.bvh, .amc with its .asf, .npz, .npy, .csv)")
    p.add_argument("output", metavar="OUT", help="output .bvh, .npz, .npy or .csv (must differ from IN)")
    p.add_argument("--format", dest="out_format", default=None,
                   help="what to write for OUT's extension: .npz: positions|amass|beat2; "
                        ".npy: humanml3d|humanml3d-263 (default: the first)")
    p.add_argument("--topology", default=None,
                   help="SMPL-family skeleton of --format amass: smpl24, smplh52 (default) or smplx55 "
                        "(beat2 is always smplx55)")
    p.add_argument("--fps", type=float, default=None,
                   help="resample to this frame rate (HumanML3D outputs: default 20)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="write BVH lengths as metres / SCALE (0.01 writes centimetres)")
    p.add_argument("--loop", type=int, default=None, metavar="N",
                   help="write the clip played N times as a seamless loop: between two frames where "
                        "pose and speed repeat (at least 60%% of the clip apart), the body carried on "
                        "across every repeat. 'evalkit score --model' judges such a loop on its first "
                        "copy (the copies column); to see the model judge every frame of it, seams "
                        "included, score --loop 1 against --loop 10 with --judge-joins")
    add_load_options(p)


def _format(args: argparse.Namespace, out: Path) -> str:
    ext = out.suffix.lower()
    if ext not in FORMATS:
        raise InputError(f"{out}: output must end in {', '.join(FORMATS)}")
    allowed, default = FORMATS[ext]
    fmt = args.out_format or default
    if fmt not in allowed:
        raise InputError(f"--format {fmt}: not written as {ext}; for {ext} use one of {', '.join(allowed)}")
    if args.topology is not None:
        from evalkit.motion.topology import resolve

        try:
            topo = resolve(args.topology)
        except KeyError:
            topo = None
        if fmt != "amass" or topo not in ("smpl24", "smplh52", "smplx55"):
            raise InputError(f"--topology {args.topology}: only for --format amass, one of smpl24, smplh52, smplx55")
    return fmt


def _check(args: argparse.Namespace, out: Path) -> str:
    """Every argument, before any work: nothing is read or written if one is wrong."""
    from evalkit.motion.formats import check_fps

    fmt = _format(args, out)
    if args.fps is not None:
        check_fps(args.fps, "--fps")
    check_fps(args.amc_fps, "--amc-fps")
    if not (math.isfinite(args.scale) and 1e-6 <= args.scale <= 1e6):
        raise InputError(f"--scale must be a positive number of metres per written unit "
                         f"(e.g. 0.01 for centimetres), got {args.scale:g}")
    if args.loop is not None and not 1 <= args.loop <= 1000:
        raise InputError(f"--loop must be a number of repeats from 1 to 1000, got {args.loop}")
    src = Path(args.input)
    if out.exists() and src.exists() and out.samefile(src):
        raise InputError(f"{out}: is the input file; write the conversion to another path")
    if out.is_dir():
        raise InputError(f"{out}: is a folder; give the output file's name")
    blocker = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
    if blocker is not None:
        raise InputError(f"{out}: cannot be written, {blocker} is a file, not a folder")
    return fmt


def run(args: argparse.Namespace) -> int:
    from evalkit.atomic import atomic_path
    from evalkit.motion import resample, write_bvh
    from evalkit.motion.roles import load_role_map

    out = Path(args.output)
    fmt = _check(args, out)
    roles = load_role_map(args.roles) if args.roles else None
    motion = load_options(args, roles=roles).load(args.input)
    fps = args.fps if args.fps is not None else (20.0 if fmt.startswith("humanml3d") else None)
    if fps is not None:
        motion = resample(motion, fps)
    if args.loop is not None:
        motion = _loop(motion, args.loop)
    if fmt == "bvh":
        write_bvh(motion, out, scale=args.scale)
    elif fmt in ("amass", "beat2"):
        from evalkit.motion.formats.smpl import smpl_arrays, to_smpl

        topology = "smplx55" if fmt == "beat2" else (args.topology or "smplh52")
        arrays = smpl_arrays(to_smpl(motion, topology, roles=roles), style=fmt)
        with atomic_path(out) as tmp:
            np.savez_compressed(tmp, **arrays)
    elif fmt.startswith("humanml3d"):
        from evalkit.motion.formats import humanml3d as hml
        from evalkit.motion.formats.smpl import retarget_positions

        joints = retarget_positions(motion, "smpl22", roles=roles)
        data = hml.joints_to_features(joints, motion.fps) if fmt == "humanml3d-263" else joints
        with atomic_path(out) as tmp, open(tmp, "wb") as fh:
            np.save(fh, data.astype(np.float32))
    elif out.suffix.lower() == ".csv":
        import pandas as pd

        names = motion.skeleton.names
        cols = [f"{n}_{a}" for n in names for a in "xyz"]
        df = pd.DataFrame(motion.positions.reshape(motion.n_frames, -1), columns=cols)
        with atomic_path(out) as tmp:
            df.to_csv(tmp, index=False, float_format="%.6f")
    else:
        with atomic_path(out) as tmp:
            np.savez_compressed(
                tmp, positions=motion.positions.astype(np.float32), names=np.array(motion.skeleton.names),
                parents=motion.skeleton.parents, fps=motion.fps,
            )
    print(f"wrote {out} ({motion.n_frames} frames at {motion.fps:g} fps)")
    return 0


def _loop(motion, copies: int):
    """``motion`` played ``copies`` times as a seamless loop (``--loop``), with what it took said
    on stderr: the loop's frames, how visible its seams are, and a warning when they show."""
    import sys

    from evalkit.models.lengths import loop_correction, loop_points, repeat_loop, seam_ratio

    if motion.n_frames < 12:  # loop_points needs frames on both sides of a loop of 60 % of the clip
        raise InputError(f"{motion.name or 'clip'}: --loop needs a clip of at least 12 frames, "
                         f"got {motion.n_frames} ({motion.duration:.2f} s)")
    i, j = loop_points(motion, 0.6 * motion.duration)
    looped = repeat_loop(motion, i, j, copies)
    seams = list(range(j - i, looped.n_frames, j - i))
    ratio = seam_ratio(looped, seams, motion) if seams else 0.0
    turn = loop_correction(motion, i, j)
    print(f"{motion.name or 'clip'}: loop of frames {i}-{j} ({(j - i) / motion.fps:.2f} s of "
          f"{motion.duration:.2f} s) played {'once' if copies == 1 else f'{copies} times'} ({looped.duration:.2f} s); seams: largest joint "
          f"acceleration {ratio:.2f} x the clip's own 99th percentile, loop closed by turning joints up to "
          f"{turn:.1f} degrees", file=sys.stderr)
    if ratio > 1.0 or turn > 15.0:
        print("evalkit: warning: the seams show (this clip does not repeat smoothly, e.g. a one-off action): "
              "'evalkit score --model --judge-joins' judges them as the artifacts they are", file=sys.stderr)
    return looped.with_(name=motion.name)
