"""Reading pickles without running code: a restricted unpickler for plain data.

Loading a pickle can run any code its author chose. evalkit reads the pickles the field writes
(MDM's ``results.npy``, SMPL ``.pkl`` model files) with an unpickler that constructs only plain
data: ``dict``, ``list``, ``tuple``, ``str``, ``bytes``, numbers, ``None``, numpy arrays, dtypes
and scalars, and scipy sparse matrices (rebuilt from their arrays, never through scipy's own
unpickling). Any other class in the pickle stops the read with an error that names it; the user
may then opt in to a full, trusting load (``--allow-pickle``) for a file they trust.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.errors import FileFormatError

_NUMPY_CORE = ("numpy.core.multiarray", "numpy._core.multiarray")
_ALLOWED = {
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("builtins", "set"): set, ("builtins", "frozenset"): frozenset,
    ("__builtin__", "set"): set, ("__builtin__", "frozenset"): frozenset,
    ("collections", "OrderedDict"): dict,
}
_SPARSE = ("csc_matrix", "csr_matrix", "coo_matrix")


class _SparseState:
    """Stand-in for a scipy sparse matrix inside a pickle: only its state (arrays) is kept."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __setstate__(self, state) -> None:
        self.state = state


def _scalar(dtype, data=None):
    """``numpy.core.multiarray.scalar`` for plain (non-object) dtypes only."""
    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise pickle.UnpicklingError("a numpy scalar of object type")
    return np.frombuffer(data if data is not None else b"\0" * dtype.itemsize, dtype=dtype, count=1)[0]


def _reconstruct(cls, shape, dtype):
    if cls is not np.ndarray:
        raise pickle.UnpicklingError(f"an array of class {getattr(cls, '__name__', cls)}")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module in _NUMPY_CORE and name == "_reconstruct":
            return _reconstruct
        if module in _NUMPY_CORE and name == "scalar":
            return _scalar
        if module.startswith("scipy.sparse") and name in _SPARSE:
            return _SparseState
        if module == "_codecs" and name == "encode":  # bytes in protocol-2 pickles
            return _encode
        if module in ("copy_reg", "copyreg") and name == "_reconstructor":
            return _safe_reconstructor
        if module in ("numpy", "numpy.dtypes") and (name == "dtype" or name.endswith("DType")):
            return np.dtype
        found = _ALLOWED.get((module, name))
        if found is not None:
            return found
        raise pickle.UnpicklingError(f"{module}.{name}")


def _encode(text, encoding="utf-8"):
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1", "utf-8", "ascii"):
        raise pickle.UnpicklingError("a call of _codecs.encode on non-text")
    return text.encode(encoding)


def _safe_reconstructor(cls, base, state):
    if cls is not _SparseState:
        raise pickle.UnpicklingError(f"an object of class {getattr(cls, '__name__', cls)}")
    return _SparseState()


def _finish(obj: Any) -> Any:
    """Replace sparse stand-ins by dense numpy arrays; object arrays by lists."""
    if isinstance(obj, _SparseState):
        from scipy import sparse

        st = getattr(obj, "state", None) or {}
        if isinstance(st, tuple):  # (None, dict) form
            st = next((s for s in st if isinstance(s, dict)), {})
        try:
            shape = tuple(st.get("_shape") or st.get("shape"))
            m = sparse.csc_matrix((st["data"], st["indices"], st["indptr"]), shape=shape)
        except (KeyError, TypeError, ValueError) as exc:
            raise pickle.UnpicklingError(f"a sparse matrix without its arrays ({exc})") from None
        return m.toarray()
    if isinstance(obj, dict):
        return {(k.decode("latin-1") if isinstance(k, bytes) else k): _finish(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_finish(v) for v in obj)
    if isinstance(obj, np.ndarray) and obj.dtype.hasobject:
        return np.array([_finish(v) for v in obj.ravel()], dtype=object).reshape(obj.shape) if obj.size else obj
    return obj


def safe_loads(data: bytes, path: str | Path, allow_pickle: bool = False) -> Any:
    """Unpickle ``data`` (read from ``path``): plain data only, unless ``allow_pickle``
    (then a full, trusting load). Errors name the file and the refused class."""
    try:
        if allow_pickle:
            return pickle.loads(data, encoding="latin1")  # noqa: S301 - the user trusts this file
        return _finish(_Restricted(io.BytesIO(data), encoding="latin1").load())
    except pickle.UnpicklingError as exc:
        raise FileFormatError(
            path, None, f"the pickle holds {exc}, not plain data (dict/list/str/numbers/numpy arrays); "
                        "evalkit does not run code from a pickle. If you trust the file, pass "
                        "--allow-pickle (allow_pickle=True) to load it anyway") from None
    except (EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError, MemoryError,
            OverflowError, ImportError, UnicodeDecodeError) as exc:
        raise FileFormatError(path, None, f"not a readable pickle ({type(exc).__name__}: {exc})") from None


def _header3(fh):
    """``.npy`` version 3 header (UTF-8 field names): read as version 2 (same layout)."""
    return np.lib.format.read_array_header_2_0(fh, max_header_size=1 << 20)


def read_object_npy(path: str | Path, allow_pickle: bool = False) -> Any:
    """The object stored in an ``.npy`` file of object dtype (``np.save`` of a dict), read with
    :func:`safe_loads`. A 0-d object array yields its item."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, _, dtype = reader(fh, max_header_size=1 << 20) if version != (3, 0) else _header3(fh)
            payload = fh.read()
    except (OSError, ValueError) as exc:
        raise FileFormatError(path, None, f"not a readable .npy file ({exc})") from None
    if not dtype.hasobject:
        raise FileFormatError(path, None, f"expected a pickled object array, found {dtype} data")
    obj = safe_loads(payload, path, allow_pickle)
    if isinstance(obj, np.ndarray) and obj.shape == ():
        obj = obj.item()
    return obj
