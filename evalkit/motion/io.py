"""Load any supported motion file by its extension."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Iterator

from evalkit.errors import FileFormatError, InputError
from evalkit.motion.model import Motion

MOTION_EXTENSIONS = (".bvh", ".amc")


def load_motion(
    path: str | os.PathLike,
    units: str | float = "auto",
    up: str = "auto",
    fps: float | None = None,
    asf: str | os.PathLike | None = None,
) -> Motion:
    """Read a ``.bvh`` or ``.amc`` (with its ``.asf``) file into a :class:`Motion`.

    Args:
        path: the motion file.
        units, up: see :func:`evalkit.motion.read_bvh`.
        fps: frame rate for AMC files (which carry none; default 120, CMU's rate). For BVH it
            is ignored (the file's ``Frame Time`` is used); resample explicitly instead.
        asf: the ASF skeleton for an AMC file (found next to it by CMU naming otherwise).
    """
    from evalkit.motion.amc import find_asf, read_asf_amc
    from evalkit.motion.bvh import read_bvh

    p = Path(path)
    ext = p.suffix.lower()
    if not p.exists():
        raise FileFormatError(p, None, "file not found")
    if ext == ".bvh":
        return read_bvh(p, units=units, up=up)
    if ext == ".amc":
        asf_path = Path(asf) if asf else find_asf(p)
        return read_asf_amc(asf_path, p, fps=fps or 120.0, units=units, up=up)
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
