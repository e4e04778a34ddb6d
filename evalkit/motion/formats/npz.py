"""Reading ``.npz`` archives without unpickling: their member names and the arrays a reader needs.

Each function takes the file's ``path`` (named in every error) and, optionally, its bytes
``data`` already read by the dispatcher, so that loading a file opens it once.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from evalkit.errors import FileFormatError


#: first bytes of a Git LFS pointer file (the text Git LFS leaves in place of the data)
LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def source(path: str | os.PathLike, data: bytes | None):
    """What numpy and zipfile read: the bytes in memory when given, else the file."""
    return io.BytesIO(data) if data is not None else path


def read_file_bytes(path: str | os.PathLike) -> bytes:
    """All bytes of a motion file, refusing one larger than :data:`~evalkit.motion.formats.limits.MAX_FILE_BYTES`
    before reading it (errors name the file)."""
    from evalkit.motion.formats.limits import MAX_FILE_BYTES

    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise FileFormatError(path, None, f"{size:,} bytes, more than the {MAX_FILE_BYTES:,} bytes evalkit "
                                                  "reads from one file (evalkit.motion.formats.limits.MAX_FILE_BYTES)")
            return fh.read()
    except FileNotFoundError:
        raise FileFormatError(path, None, "file not found") from None
    except OSError as exc:
        raise FileFormatError(path, None, f"cannot read ({exc.strerror or exc})") from None


def check_not_lfs_pointer(path: str | os.PathLike, data: bytes | None = None) -> None:
    """Refuse a Git LFS pointer file (a few lines of text standing in for the data) by name
    (``data``: the file's bytes, when already read)."""
    if data is not None:
        head = data[:len(LFS_POINTER)]
    else:
        try:
            with open(path, "rb") as fh:
                head = fh.read(len(LFS_POINTER))
        except OSError:
            return  # unreadable: the reader reports it
    if head == LFS_POINTER:
        raise FileFormatError(path, None, "is a Git LFS pointer, not the data: fetch the file itself "
                                          "(git lfs pull in its repository) and read that")


def _check_member(path, z: zipfile.ZipFile, key: str) -> None:
    """Refuse a member whose ``.npy`` header declares more data than the member holds or than
    :data:`~evalkit.motion.formats.limits.MAX_ARRAY_BYTES` (checked before anything is allocated)."""
    from evalkit.motion.formats.limits import MAX_ARRAY_BYTES

    name = key if key in z.namelist() else key + ".npy"
    info = z.getinfo(name)
    with z.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = reader(fh, max_header_size=1 << 16)
    if any(int(n) < 0 for n in shape):
        raise FileFormatError(path, None, f"key {key!r}: negative shape {shape} in its header")
    if dtype.hasobject:
        return  # reported as a pickled object when loaded
    nbytes = math.prod(int(n) for n in shape) * dtype.itemsize
    if nbytes > MAX_ARRAY_BYTES:
        raise FileFormatError(path, None, f"key {key!r}: declares shape {shape} ({nbytes:,} bytes), more than "
                                          f"the {MAX_ARRAY_BYTES:,} bytes evalkit reads in one array "
                                          "(evalkit.motion.formats.limits.MAX_ARRAY_BYTES)")
    if nbytes > info.file_size:
        raise FileFormatError(path, None, f"key {key!r}: declares shape {shape} ({nbytes:,} bytes) but holds "
                                          f"{info.file_size:,} bytes")


def npz_arrays(path: Path, keys=None, data: bytes | None = None) -> dict:
    """Arrays of an ``.npz`` without unpickling, by key (only ``keys`` when given; an object array
    is reported, not loaded), and ``"__keys__"``: the names of all its arrays (``data``: the
    file's bytes, when already read)."""
    check_not_lfs_pointer(path, data)
    try:
        with np.load(source(path, data), allow_pickle=False) as z:
            names = list(z.files)
            out = {}
            for k in names if keys is None else [k for k in keys if k in names]:
                _check_member(path, z.zip, k)
                try:
                    out[k] = z[k]
                except ValueError:
                    raise FileFormatError(path, None, f"key {k!r} is a pickled object, expected a numeric or text array") from None
            out.setdefault("__keys__", names)
            return out
    except FileFormatError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError, NotImplementedError, zlib.error,
            MemoryError, OverflowError) as exc:
        raise FileFormatError(path, None, f"not a readable .npz file ({type(exc).__name__}: {exc})") from None


def npz_keys(path: str | os.PathLike, data: bytes | None = None) -> list[str]:
    """Names of the arrays in an ``.npz`` (cheap: reads the zip directory only; ``data``: the
    file's bytes, when already read)."""
    try:
        with zipfile.ZipFile(source(path, data)) as z:
            return [n[:-4] if n.endswith(".npy") else n for n in z.namelist()]
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        check_not_lfs_pointer(path, data)  # only a file that is not a zip is looked at again
        raise FileFormatError(path, None, f"not a readable .npz file ({exc})") from None
