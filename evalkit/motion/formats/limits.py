"""Limits on the size and rate of a motion file, checked by every reader before the work they
bound (documented in docs/metrics.md, "Limits on input files").

A file beyond them gets a one-line :class:`~evalkit.errors.FileFormatError` naming the file,
the line where known, the value and the limit, so that a hostile or broken file can neither
exhaust memory nor make a later stage run for hours. Within them, every per-clip work size is a
bounded multiple of the file's own size (frames × joints), never a value read from the file.

Softer checks (a frame rate, body height or up axis that is possible but implausible for a
human clip) give a warning naming the option that overrides them; see
:func:`evalkit.motion.normalize.normalize_motion`.
"""

from __future__ import annotations

import warnings

from evalkit.errors import FileFormatError

#: Most joints in one skeleton. Production rigs with fingers and faces have a few hundred.
MAX_JOINTS = 2_000
#: Most frames × joints in one clip: 10 million is 2.3 hours of a 100-joint rig at 120 fps,
#: about 1.5 GB of working arrays during scoring.
MAX_FRAME_JOINTS = 10_000_000
#: Most bytes of one array read from an ``.npy``/``.npz`` (512 MiB): four times the float64
#: positions of a clip at :data:`MAX_FRAME_JOINTS`' limit is not reached by any motion or body
#: model file (SMPL-X's largest array is about 100 MB); checked on the declared shape before
#: anything is allocated, so a zip bomb or a lying header is refused.
MAX_ARRAY_BYTES = 512 * 1024 * 1024
#: Most bytes of one array file (``.npy``, ``.npz``, ``.csv``) read into memory whole (1 GiB):
#: loading reads such a file once, as bytes, and parses them there; checked on the file's size
#: before reading.
MAX_FILE_BYTES = 1024 * 1024 * 1024
#: Frame rates a file may declare, frames per second (capture systems run at 1000 Hz at most;
#: below 1 fps a file is a slide show, and the metrics' time grids would be sized by its
#: duration rather than its frames).
MIN_FPS, MAX_FPS = 1.0, 2000.0
#: Frame rates of human motion clips: outside this range a reader warns (animation at 12 fps
#: and capture at 1000 Hz are the extremes seen in practice).
PLAUSIBLE_FPS = (10.0, 1000.0)


def check_joints(n_joints: int, path, line: int | None = None) -> None:
    """Refuse a skeleton with more than :data:`MAX_JOINTS` joints (checked while parsing)."""
    if n_joints > MAX_JOINTS:
        raise FileFormatError(path, line, f"more than {MAX_JOINTS:,} joints; evalkit reads skeletons of at "
                                          f"most {MAX_JOINTS:,} joints (evalkit.motion.formats.limits.MAX_JOINTS)")


def check_frames(n_frames: int, n_joints: int, path, line: int | None = None) -> None:
    """Refuse a clip with more than :data:`MAX_FRAME_JOINTS` frames × joints (checked before
    the frame data is parsed)."""
    if n_frames * max(n_joints, 1) > MAX_FRAME_JOINTS:
        raise FileFormatError(
            path, line,
            f"{n_frames:,} frames × {n_joints:,} joints is more than the {MAX_FRAME_JOINTS:,} that "
            "evalkit reads in one clip (evalkit.motion.formats.limits.MAX_FRAME_JOINTS); split the file",
        )


def check_file_fps(fps: float, path, line: int | None = None, what: str = "the frame rate",
                   override: str | None = None) -> float:
    """``fps`` if it is within ``[MIN_FPS, MAX_FPS]`` (else a one-line error); a warning when it
    is outside :data:`PLAUSIBLE_FPS` for a human clip, naming ``override`` (the option that
    sets the rate instead)."""
    if not MIN_FPS <= fps <= MAX_FPS:  # also refuses NaN
        hint = f"; set the rate with {override}" if override else ""
        raise FileFormatError(path, line, f"{what} is {fps:.4g} frames per second; evalkit reads "
                                          f"{MIN_FPS:g} to {MAX_FPS:g}{hint}")
    if not PLAUSIBLE_FPS[0] <= fps <= PLAUSIBLE_FPS[1]:
        hint = f"; if the file is wrong, set the rate with {override}" if override else ""
        warn_clip(path, f"{what} is {fps:.4g} frames per second, implausible for a motion clip "
                        f"(expected {PLAUSIBLE_FPS[0]:g} to {PLAUSIBLE_FPS[1]:g}){hint}")
    return fps


def warn_clip(path, message: str) -> None:
    """A :class:`UserWarning` about one clip, shown for every clip (not once per call site)."""
    where = str(path) if path is not None else "<motion>"
    warnings.warn_explicit(f"{where}: {message}", UserWarning, where, 0)
