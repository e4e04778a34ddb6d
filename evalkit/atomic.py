"""Write files so an interrupted run never leaves a half-written output: write to a temporary
file in the same folder, then rename it into place (``os.replace`` is atomic on one file system)."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on error it is
    removed. ``suffix`` (default: ``path``'s) matters to writers that choose a format by it."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix if suffix is None else suffix, dir=p.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_text(path: str | os.PathLike, text: str, newline: str | None = None) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline=newline) as fh:
            fh.write(text)
    return Path(path)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path."""
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)
    return Path(path)
