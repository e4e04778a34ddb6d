"""Reading ``.npz`` archives without unpickling: their member names and the arrays a reader needs."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from evalkit.errors import FileFormatError


def npz_arrays(path: Path, keys=None) -> dict:
    """Arrays of an ``.npz`` without unpickling, by key (only ``keys`` when given; an object array
    is reported, not loaded), and ``"__keys__"``: the names of all its arrays."""
    try:
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            out = {}
            for k in names if keys is None else [k for k in keys if k in names]:
                try:
                    out[k] = z[k]
                except ValueError:
                    raise FileFormatError(path, None, f"key {k!r} is a pickled object, expected a numeric or text array") from None
            out.setdefault("__keys__", names)
            return out
    except FileFormatError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError, NotImplementedError) as exc:
        raise FileFormatError(path, None, f"not a readable .npz file ({type(exc).__name__}: {exc})") from None


def npz_keys(path: str | os.PathLike) -> list[str]:
    """Names of the arrays in an ``.npz`` (cheap: reads the zip directory only)."""
    try:
        with zipfile.ZipFile(path) as z:
            return [n[:-4] if n.endswith(".npy") else n for n in z.namelist()]
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise FileFormatError(path, None, f"not a readable .npz file ({exc})") from None
