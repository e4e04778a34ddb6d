"""``evalkit render CLIP [--audio A] -o OUT.mp4``: a stick-figure video of a motion clip."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalkit.cli.common import add_command, add_load_options, load_kwargs


def register(sub) -> None:
    p = add_command(sub, run,
        "render",
        help="render a motion clip to an MP4 video (for papers and supplementary material)",
        description=(
            "Draw CLIP (BVH or ASF/AMC) as a stick figure over a ground grid, with the cameras of the "
            "webtest player, and write an H.264 MP4 with ffmpeg (bundled by imageio-ffmpeg). With "
            "--audio the sound is added as AAC and the last pose is held until it ends."
        ),
    )
    p.add_argument("clip", metavar="CLIP", help="motion file (.bvh or .amc)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.mp4", help="output video file")
    p.add_argument("--audio", metavar="A", default=None, help="audio file to add (WAV, MP3, ...)")
    p.add_argument("--fps", type=float, default=30.0, help="video frame rate (default: 30)")
    p.add_argument("--size", default="640x480", help="WIDTHxHEIGHT in pixels, multiples of 16 (default: 640x480)")
    p.add_argument("--start", type=float, default=None, metavar="S", help="start time in seconds")
    p.add_argument("--end", type=float, default=None, metavar="S", help="end time in seconds")
    p.add_argument("--camera", choices=("follow", "fixed"), default="follow",
                   help="follow: the view follows the clip's hips (smoothed over 1 s) and a standing body "
                        "fills about 65%% of the height, over a grid fixed to the world, so foot sliding "
                        "shows; fixed: one still view of the whole path (a long walk is drawn small) "
                        "(default: follow)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_load_options(p)


#: Largest video side in pixels (8K UHD); larger frames only exhaust memory.
MAX_SIDE = 7680
#: Highest video frame rate; players show no more.
MAX_VIDEO_FPS = 240.0


def _check(args: argparse.Namespace) -> tuple[int, int]:
    """Validate every option before any work; returns the video size."""
    import math

    from evalkit.errors import InputError
    from evalkit.motion.io import check_fps

    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        raise InputError(f"--size {args.size!r} is not WIDTHxHEIGHT, e.g. 640x480") from None
    if not (64 <= w <= MAX_SIDE and 64 <= h <= MAX_SIDE):
        raise InputError(f"--size {args.size}: each side must be 64 to {MAX_SIDE} pixels")
    if not 1 <= args.fps <= MAX_VIDEO_FPS:  # also refuses NaN
        raise InputError(f"--fps must be 1 to {MAX_VIDEO_FPS:g} video frames per second, got {args.fps:g}")
    check_fps(args.amc_fps, "--amc-fps")
    for name in ("start", "end"):
        v = getattr(args, name)
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise InputError(f"--{name} must be a time in seconds, 0 or more, got {v:g}")
    if args.audio is not None and not Path(args.audio).is_file():
        raise InputError(f"--audio {args.audio}: no such file")
    out = Path(args.output)
    if out.is_dir():
        raise InputError(f"{out}: is a folder; give the video file's name")
    return w, h


def run(args: argparse.Namespace) -> int:
    from evalkit.errors import InputError
    from evalkit.motion import load_motion
    from evalkit.motion.roles import load_role_map
    from webtest.video import render_video

    from evalkit.atomic import check_writable

    w, h = _check(args)
    out_path = check_writable(args.output, (".mp4",))  # before reading or drawing anything
    roles = load_role_map(args.roles) if args.roles else None
    motion = load_motion(args.clip, **load_kwargs(args), roles=roles)
    if args.start is not None or args.end is not None:
        a = int(round((args.start or 0.0) * motion.fps))
        b = int(round(args.end * motion.fps)) if args.end is not None else motion.n_frames
        if not 0 <= a < b:
            raise InputError(f"--start {args.start} / --end {args.end} select no frames of a {motion.duration:.2f} s clip")
        motion = motion.slice(a, b)
    out_path.parent.mkdir(parents=True, exist_ok=True)  # as convert, score and plot do
    out = render_video(motion, out_path, audio=args.audio, fps=args.fps, size=(w, h), progress=not args.quiet,
                       camera=args.camera)
    print(f"wrote {out} ({motion.duration:.2f} s of motion at {args.fps:g} fps, {w}x{h}, {args.camera} camera"
          f"{', with audio' if args.audio else ''})")
    return 0
