"""``evalkit render CLIP -o OUT.mp4`` (video), ``--at T -o pose.png`` (still), ``--strip A:B:S
-o strip.png`` (poses side by side): a motion clip drawn by the webtest trial page's renderer."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from evalkit.cli.common import add_command, add_load_options, load_options


def register(sub) -> None:
    p = add_command(sub, run,
        "render",
        help="render a motion clip to an MP4 video or PNG stills (for papers and supplementary material)",
        description=(
            "Draw CLIP (any format evalkit reads) as a shaded 3-D mannequin over a ground grid with "
            "contact shadows, with the renderer of the webtest trial page (three.js in headless "
            "chromium: what participants see is what the video shows). -o OUT.mp4 writes an H.264 "
            "video, frame-exact at --fps (ffmpeg bundled by imageio-ffmpeg); with --audio the sound "
            "is added as AAC and the last pose is held until it ends. --at SECONDS -o pose.png "
            "writes one still; --strip START:END:STEP -o strip.png the poses from START to END "
            "every STEP seconds side by side, each labelled with its time. Needs chromium "
            "(Debian: apt-get install chromium; or python -m playwright install chromium; or "
            "EVALKIT_CHROMIUM=/path/to/chrome)."
        ),
    )
    p.add_argument("clip", metavar="CLIP", help="motion file (.bvh, .amc, ...)")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file: .mp4 (video) or .png (with --at or --strip)")
    p.add_argument("--at", type=float, default=None, metavar="SECONDS", help="write the pose at this time as a PNG")
    p.add_argument("--strip", default=None, metavar="START:END:STEP",
                   help="write the poses from START to END (inclusive) every STEP seconds side by side as a PNG")
    p.add_argument("--audio", metavar="A", default=None, help="audio file to add to a video (WAV, MP3, ...)")
    p.add_argument("--fps", type=float, default=30.0, help="video frame rate (default: 30)")
    p.add_argument("--size", default="640x480", help="WIDTHxHEIGHT in pixels, multiples of 16 (default: 640x480)")
    p.add_argument("--start", type=float, default=None, metavar="S", help="video: start time in seconds")
    p.add_argument("--end", type=float, default=None, metavar="S", help="video: end time in seconds")
    p.add_argument("--camera", choices=("follow", "fixed"), default="follow",
                   help="follow: the view follows the clip's hips (smoothed over 1 s) and a standing body "
                        "fills about 65%% of the height, over a grid fixed to the world, so foot sliding "
                        "shows; fixed: one still view of the whole path (a long walk is drawn small) "
                        "(default: follow)")
    p.add_argument("--framing", choices=("full", "upper"), default="full",
                   help="full: the whole body; upper: from mid-thigh up, facing the body (GENEA's view "
                        "for gesture studies) (default: full)")
    p.add_argument("--color", default=None, metavar="#RRGGBB", help="the figure's colour (default: #5b7fb5)")
    p.add_argument("--background", default=None, metavar="#RRGGBB", help="the background colour (default: #eef2f6)")
    p.add_argument("--antialias", action="store_true",
                   help="smooth edges (multisampling): nicer stills and videos for papers, about 3 times "
                        "slower in software WebGL; without it the pixels are those of the trial page")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_load_options(p)


#: Largest video side in pixels (8K UHD); larger frames only exhaust memory.
MAX_SIDE = 7680
#: Highest video frame rate; players show no more.
MAX_VIDEO_FPS = 240.0
#: Most poses in one --strip.
MAX_STRIP = 40


def _seconds(v: float | None, name: str) -> None:
    from evalkit.errors import InputError

    if v is not None and not (math.isfinite(v) and v >= 0):
        raise InputError(f"{name} must be a time in seconds, 0 or more, got {v:g}")


def _strip_times(text: str) -> list[float]:
    """START:END:STEP -> the times START, START + STEP, ... up to END (inclusive), seconds."""
    from evalkit.errors import InputError

    try:
        a, b, s = (float(v) for v in text.split(":"))
    except ValueError:
        raise InputError(f"--strip {text!r} is not START:END:STEP in seconds, e.g. 0:2:0.5") from None
    if not all(math.isfinite(v) for v in (a, b, s)) or a < 0 or b < a or s <= 0:
        raise InputError(f"--strip {text}: needs 0 <= START <= END and STEP > 0 (seconds)")
    n = int(math.floor((b - a) / s + 1e-9)) + 1
    if n > MAX_STRIP:
        raise InputError(f"--strip {text}: {n} poses; at most {MAX_STRIP} fit a strip (use a larger STEP)")
    return [round(a + i * s, 9) for i in range(n)]


def _check(args: argparse.Namespace) -> tuple[int, int]:
    """Validate every option before any work; returns the image size."""
    from evalkit.errors import InputError
    from evalkit.motion.formats import check_fps
    from webtest.study import check_color

    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        raise InputError(f"--size {args.size!r} is not WIDTHxHEIGHT, e.g. 640x480") from None
    if not (64 <= w <= MAX_SIDE and 64 <= h <= MAX_SIDE):
        raise InputError(f"--size {args.size}: each side must be 64 to {MAX_SIDE} pixels")
    if not 1 <= args.fps <= MAX_VIDEO_FPS:  # also refuses NaN
        raise InputError(f"--fps must be 1 to {MAX_VIDEO_FPS:g} video frames per second, got {args.fps:g}")
    check_fps(args.amc_fps, "--amc-fps")
    for name in ("start", "end", "at"):
        _seconds(getattr(args, name), f"--{name}")
    if args.start is not None and args.end is not None and args.end <= args.start:
        raise InputError(f"--end {args.end:g} s must come after --start {args.start:g} s")
    for name in ("color", "background"):
        v = getattr(args, name)
        if v is not None and check_color(v) is None:
            raise InputError(f"--{name} {v!r} is not a colour; give #rrggbb (or #rgb), e.g. '#5b7fb5'")
    if args.audio is not None and not Path(args.audio).is_file():
        raise InputError(f"--audio {args.audio}: no such file")
    out = Path(args.output)
    if out.is_dir():
        raise InputError(f"{out}: is a folder; give the output file's name")
    still = args.at is not None or args.strip is not None
    if args.at is not None and args.strip is not None:
        raise InputError("give --at (one pose) or --strip (several), not both")
    if still:
        if args.strip is not None:
            args.strip_times = _strip_times(args.strip)
        if out.suffix.lower() != ".png":
            raise InputError(f"{out}: --at and --strip write a .png image; name the output .png")
        if args.start is not None or args.end is not None or args.audio is not None:
            raise InputError("--start, --end and --audio are for videos; --at and --strip take times of the whole clip")
    elif out.suffix.lower() == ".png":
        raise InputError(f"{out}: a .png output needs --at SECONDS (one pose) or --strip START:END:STEP")
    elif w % 16 or h % 16:
        raise InputError(f"--size {w}x{h}: each side of a video must be a multiple of 16 (e.g. 640x480)")
    return w, h


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from evalkit.atomic import check_writable
    from evalkit.errors import InputError
    from evalkit.motion.roles import load_role_map

    w, h = _check(args)
    out_path = check_writable(args.output, (".mp4", ".png"))  # before reading or drawing anything
    roles = load_role_map(args.roles) if args.roles else None
    motion = load_options(args, roles=roles).load(args.clip)
    look = dict(camera=args.camera, framing=args.framing, color=args.color, background=args.background,
                antialias=args.antialias)
    if args.at is not None or args.strip is not None:
        times = [args.at] if args.at is not None else args.strip_times
        late = [t for t in times if t > motion.duration + 1e-9]
        if late:
            raise InputError(f"{'--at' if args.at is not None else '--strip'}: {late[0]:g} s is past the end of "
                             f"the {motion.duration:.2f} s clip")
        from PIL import Image

        from evalkit.atomic import atomic_path
        from webtest.render import render_frames, strip_image

        frames = render_frames(motion, times, size=(w, h), fps=args.fps, **look)
        img = frames[0] if args.at is not None else strip_image(frames, times)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(out_path) as tmp:
            Image.fromarray(np.ascontiguousarray(img)).save(tmp, format="PNG")
        what = f"the pose at {times[0]:g} s" if args.at is not None else f"{len(times)} poses from {times[0]:g} to {times[-1]:g} s"
        print(f"wrote {out_path} ({what}, {img.shape[1]}x{img.shape[0]}, {args.camera} camera, {args.framing} framing)")
        return 0
    from webtest.render import render_video

    if args.start is not None or args.end is not None:
        a = int(round((args.start or 0.0) * motion.fps))
        b = int(round(args.end * motion.fps)) if args.end is not None else motion.n_frames
        if a >= motion.n_frames:
            raise InputError(f"--start {args.start:g} s is past the end of the {motion.duration:.2f} s clip")
        if not a < b:
            raise InputError(f"--start {args.start or 0:g} s / --end {args.end:g} s select no frames of the "
                             f"{motion.duration:.2f} s clip")
        motion = motion.slice(a, min(b, motion.n_frames))
    out_path.parent.mkdir(parents=True, exist_ok=True)  # as convert, score and plot do
    out = render_video(motion, out_path, audio=args.audio, fps=args.fps, size=(w, h), progress=not args.quiet, **look)
    print(f"wrote {out} ({motion.duration:.2f} s of motion at {args.fps:g} fps, {w}x{h}, {args.camera} camera, "
          f"{args.framing} framing{', with audio' if args.audio else ''})")
    return 0
