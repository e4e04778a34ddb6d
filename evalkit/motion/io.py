"""Load any supported motion file by its extension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from evalkit.errors import FileFormatError, InputError
from evalkit.motion.limits import MAX_FPS  # highest frame rate evalkit accepts anywhere
from evalkit.motion.model import Motion

MOTION_EXTENSIONS = (".bvh", ".amc")


def check_fps(fps: float, option: str) -> float:
    """``fps`` if it is a plausible frame rate (0 < fps <= :data:`MAX_FPS`), else an
    :class:`InputError` naming ``option``."""
    if not 0 < fps <= MAX_FPS:  # also refuses NaN
        raise InputError(f"{option} must be a frame rate above 0 and at most {MAX_FPS:g} frames per second, got {fps:g}")
    return fps


def load_motion(
    path: str | os.PathLike,
    units: str | float = "auto",
    up: str = "auto",
    fps: float | None = None,
    asf: str | os.PathLike | None = None,
    roles: Mapping[str, str] | None = None,
    bvh_fps: float | None = None,
) -> Motion:
    """Read a ``.bvh`` or ``.amc`` (with its ``.asf``) file into a :class:`Motion`.

    Args:
        path: the motion file.
        units, up: see :func:`evalkit.motion.read_bvh`.
        fps: frame rate for AMC files (which carry none; default 120, CMU's rate). For BVH it
            is ignored (the file's ``Frame Time`` is used); resample explicitly instead.
        asf: the ASF skeleton for an AMC file (found next to it by CMU naming otherwise).
        roles: role map (``--roles``) for rigs with unusual joint names: used to detect the up
            axis, and checked against the skeleton (a joint it names must exist).
        bvh_fps: frame rate of BVH files instead of their ``Frame Time`` (``--bvh-fps``), for
            exports that state a wrong one.
    """
    from evalkit.motion.amc import find_asf, read_asf_amc
    from evalkit.motion.bvh import read_bvh

    p = Path(path)
    ext = p.suffix.lower()
    if fps is not None:
        check_fps(fps, "the AMC frame rate (--amc-fps)")
    if not p.exists():
        raise FileFormatError(p, None, "file not found")
    if ext == ".bvh":
        return read_bvh(p, units=units, up=up, roles=roles, fps=bvh_fps)
    if ext == ".amc":
        asf_path = Path(asf) if asf else find_asf(p)
        return read_asf_amc(asf_path, p, fps=120.0 if fps is None else fps, units=units, up=up,
                            roles=roles)
    raise InputError(f"{p}: unsupported motion format {ext!r}; expected one of {', '.join(MOTION_EXTENSIONS)}")


def iter_motion_files(paths: Iterable[str | os.PathLike]) -> Iterator[Path]:
    """Expand files and folders (recursively) into motion files, sorted, without duplicates."""
    seen: set[Path] = set()
    for item in paths:
        p = Path(item)
        if p.is_dir():
            found = sorted(q for q in p.rglob("*") if q.suffix.lower() in MOTION_EXTENSIONS)
        elif p.exists():
            found = [p]
        else:
            raise InputError(f"{p}: no such file or folder")
        for q in found:
            if q not in seen:
                seen.add(q)
                yield q
