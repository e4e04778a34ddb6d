"""Write files so an interrupted run never leaves a half-written output: write to a temporary
file in the same folder, then rename it into place (``os.replace`` is atomic on one file system).

The temporary name is unique (``tempfile.mkstemp``), so a user's own ``OUT.tmp`` is never touched;
the result gets the mode an ordinary ``open()`` would give it (the umask, or the mode of the file
it replaces); errors name the user's path, not the hidden temporary one."""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def _mode_for(p: Path) -> int:
    try:
        return stat.S_IMODE(p.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it where the system allows (setting it, the
    only portable way, briefly affects files other threads create)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _as_user_error(exc: OSError, tmp: str | None, p: Path) -> OSError:
    """``exc`` with ``p`` in place of the temporary file's name."""
    if tmp is None or exc.filename in (tmp, Path(tmp)) or exc.filename is None:
        return type(exc)(exc.errno, exc.strerror, str(p))
    return exc


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path``, on error it is
    removed. ``suffix`` (default: ``path``'s) matters to writers that choose a format by it.
    ``path`` being a folder is an :class:`IsADirectoryError` raised before anything is written."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(21, "is a folder, expected a file name", str(p))
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.stem}.", suffix=p.suffix if suffix is None else suffix, dir=p.parent)
    except (FileExistsError, NotADirectoryError):
        from evalkit.errors import InputError

        blocker = next((q for q in p.parents if q.exists() and not q.is_dir()), p.parent)
        raise InputError(f"{p}: cannot be written, {blocker} is a file, not a folder") from None
    except OSError as exc:
        if exc.errno is None:
            raise
        raise _as_user_error(exc, None, p) from None
    os.close(fd)
    try:
        try:
            yield Path(tmp)
            os.chmod(tmp, _mode_for(p))
            os.replace(tmp, p)
        except OSError as exc:
            if exc.errno is None:
                raise
            raise _as_user_error(exc, tmp, p) from None
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


def check_writable(path: str | os.PathLike, extensions: tuple[str, ...] | None = None) -> Path:
    """Refuse, before any work, an output that cannot be written: an extension not in
    ``extensions``, a folder, a parent that is a file, or a folder we may not create files in
    (tried with a real temporary file, which is removed). Raises :class:`InputError`."""
    from evalkit.errors import InputError

    p = Path(path)
    if extensions is not None and p.suffix.lower() not in extensions:
        raise InputError(f"{p}: unsupported output format {p.suffix!r}; use {', '.join(extensions)}")
    if p.is_dir():
        raise InputError(f"{p}: is a folder, expected a file name")
    existing = next(q for q in (p.parent, *p.parent.parents) if q.exists() or q == Path(q.anchor or "."))
    if not existing.is_dir():
        raise InputError(f"{p}: cannot be written, {existing} is a file, not a folder")
    if existing == p.parent:
        try:
            fd, probe = tempfile.mkstemp(prefix=f".{p.stem}.", dir=existing)
        except OSError as exc:
            raise InputError(f"{p}: cannot write in {existing} ({exc.strerror})") from None
        os.close(fd)
        os.unlink(probe)
    else:  # try it: permission bits do not tell (root passes os.access; /proc refuses anyway)
        try:
            os.rmdir(tempfile.mkdtemp(prefix=f".{p.stem}.", dir=existing))
        except OSError as exc:
            raise InputError(f"{p}: cannot create folders in {existing} ({exc.strerror})") from None
    return p
