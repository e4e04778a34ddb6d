"""``evalkit compare --reference REF NAME=PATH ... --out OUT``: the distribution metrics papers
report (FGD, FID_k/FID_g, diversity, L1 divergence, PFC, beat consistency), with intervals."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from evalkit.cli.common import add_load_options, load_options

EPILOG = """\
examples:
  # two systems against real capture (bundled data), shipped extractor
  evalkit compare --reference evalkit/data/samples/cmu smg=out/smg bpmg=out/bpmg --out report/

  # system names from folder names; 4 processes; beat consistency from <clip>.wav files
  evalkit compare --reference mocap/ runs/sysA runs/sysB --audio wavs/ --jobs 4 --out report/

  # reproduce an earlier comparison's protocol (refused if the extractor differs)
  evalkit compare --reference mocap/ new=runs/new --protocol report/protocol.json --out report2/

Writes OUT/distribution.csv (one row per system and a 'real vs real' row: the reference split in
halves), distribution.tex, distribution.png/.pdf, clips.csv (per clip) and protocol.json.
Definitions and how to read the numbers: docs/distribution.md.
"""


def register(sub) -> None:
    p = sub.add_parser(
        "compare",
        help="distribution metrics of systems against real motion (FGD, FID_k/FID_g, diversity, PFC)",
        description=(
            "Compare each system's set of clips with a reference set of real motion: FGD (autoencoder "
            "embedding of fixed-length windows on a canonical joint set reached through joint roles), FGD on raw "
            "data space as GENEA reports it (flattened windows of standardised poses: fgd_raw) and on single poses "
            "(fgd_pose), FID_k and FID_g (AIST++ kinetic and geometric features), Div_k and Div_g, L1 divergence "
            "(EMAGE), EDGE's PFC, beat consistency with --audio, and the means of 'evalkit score''s per-clip "
            "metrics; each with a bootstrap interval over clips. Every output carries the protocol."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("systems", nargs="+", metavar="NAME=PATH",
                   help="a system's clips (file or folder); NAME defaults to the folder name")
    p.add_argument("--reference", "-r", action="append", required=True, metavar="DIR",
                   help="real motion the systems are compared with (repeatable)")
    p.add_argument("--out", "-o", required=True, metavar="DIR", help="output folder")
    p.add_argument("--extractor", default="default", metavar="FOLDER",
                   help="FGD extractor from 'evalkit embed train' (default: the shipped one)")
    p.add_argument("--window", type=int, default=None, metavar="FRAMES",
                   help="expected window length; refused unless the extractor was trained with it")
    p.add_argument("--stride", type=int, default=None, metavar="FRAMES",
                   help="expected window stride; refused unless the extractor's")
    p.add_argument("--fps", type=float, default=None,
                   help="expected frame rate; refused unless the extractor's")
    p.add_argument("--protocol", metavar="JSON",
                   help="protocol.json of an earlier comparison (or a card.json) to reproduce; refused if the "
                        "extractor's protocol differs")
    p.add_argument("--bootstrap", type=int, default=500, metavar="N",
                   help="bootstrap replicates over clips for the 95%% intervals (default: 500; 0: none)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and the half split (default: 0)")
    p.add_argument("--audio", metavar="WAV|DIR",
                   help="audio for beat consistency: one WAV for all clips, or a folder of <clip>.wav")
    p.add_argument("--no-score", action="store_true",
                   help="leave out the means of 'evalkit score''s per-clip metrics (faster)")
    p.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                   help="local worker processes (joblib); -1 = all cores (default: 1)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run on a Dask distributed cluster, e.g. tcp://127.0.0.1:8786 (overrides --jobs)")
    p.add_argument("--chunk-size", type=int, default=None, metavar="N", help="clips per task (default: automatic)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_load_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError
    from evalkit.distribution.compare import check_outputs, compare, system_name, write_outputs
    from evalkit.motion.formats import check_fps
    from evalkit.motion.roles import load_role_map

    check_fps(args.amc_fps, "--amc-fps")
    if args.fps is not None:
        check_fps(args.fps, "--fps")
    if args.jobs == 0 or args.jobs < -1:
        raise InputError(f"--jobs must be a positive number or -1 (all cores), got {args.jobs}")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise InputError(f"--chunk-size must be a positive number of clips, got {args.chunk_size}")
    if args.audio is not None and not Path(args.audio).exists():
        raise InputError(f"--audio {args.audio}: no such file or folder")
    for ref in args.reference:
        if not Path(ref).exists():
            raise InputError(f"--reference {ref}: no such file or folder")
    systems: dict[str, list[str]] = {}
    for spec in args.systems:
        name, path = system_name(spec)
        if not Path(path).exists():
            raise InputError(f"{spec}: {path}: no such file or folder")
        if name in systems:
            raise InputError(f"system name {name!r} given twice; name them NAME=PATH")
        systems[name] = [path]
    recorded = None
    if args.protocol:
        try:
            recorded = json.loads(Path(args.protocol).read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"--protocol {args.protocol}: not a readable JSON file ({exc})") from None
        if not isinstance(recorded, dict):
            raise InputError(f"--protocol {args.protocol}: expected a JSON object (protocol.json or card.json)")
    check_outputs(args.out)
    roles = load_role_map(args.roles) if args.roles else None
    jobs = min(args.jobs, os.cpu_count() or 1) if args.jobs > 0 else args.jobs
    result = compare(args.reference, systems, extractor=args.extractor,
                     requested={"window": args.window, "stride": args.stride, "fps": args.fps},
                     recorded=recorded, jobs=jobs, scheduler=args.scheduler, n_boot=args.bootstrap, seed=args.seed,
                     audio=args.audio, load=load_options(args), roles=roles, score=not args.no_score,
                     progress=not args.quiet, chunk_size=args.chunk_size)
    write_outputs(result, args.out)
    t = result.table
    cols = [c for c in ("system", "n_clips", "fgd", "fgd_ci_low", "fgd_ci_high", "fid_k", "fid_g") if c in t]
    print(t[cols].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    out = Path(args.out)
    print(f"-> {out / 'distribution.csv'}, distribution.tex, distribution.png, clips.csv, protocol.json",
          file=sys.stderr)
    floor = t.loc[t["system"] == "real vs real", "floor_warning"] if "floor_warning" in t else []
    if len(floor) and floor.iloc[0]:
        print(f"   (the real-vs-real row's floor_warning column says which floors the reference halves cannot "
              f"support)", file=sys.stderr)
    return 0
