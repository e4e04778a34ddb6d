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
#: dtype kinds a pickle may hold: booleans, integers, floats, complex, bytes, text and (only in an
#: array rebuilt from a list of unpickled objects, never from raw memory) objects
_KINDS = "biufcSUO"
#: most elements of one unpickled array (:data:`~evalkit.motion.formats.limits.MAX_ARRAY_BYTES` of bytes)
_ALLOWED = {
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


class _DTypeStub:
    """A dtype named in a pickle: only its type string and byte order are kept; the real dtype is
    built here from them (:func:`_real_dtype`), never from the pickle's own state."""

    def __init__(self, spec=None, align=False, copy=True) -> None:
        if not isinstance(spec, str):
            raise pickle.UnpicklingError(f"a numpy dtype of {type(spec).__name__}")
        self.spec, self.order = spec, "="

    def __setstate__(self, state) -> None:
        if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "|", "="):
            self.order = state[1]


def _real_dtype(stub) -> np.dtype:
    if not isinstance(stub, _DTypeStub):
        raise pickle.UnpicklingError(f"an array or scalar of dtype {type(stub).__name__}")
    try:
        dt = np.dtype(stub.spec)
    except TypeError:
        raise pickle.UnpicklingError(f"the numpy dtype {stub.spec!r}") from None
    if dt.kind not in _KINDS or dt.fields is not None or dt.subdtype is not None:
        raise pickle.UnpicklingError(f"the numpy dtype {stub.spec!r}")
    return dt.newbyteorder(stub.order) if stub.order in "<>" and dt.itemsize > 1 else dt


def _scalar(dtype, data=None):
    """``numpy.core.multiarray.scalar`` for plain (non-object) dtypes only."""
    dt = _real_dtype(dtype)
    if dt.hasobject:
        raise pickle.UnpicklingError("a numpy scalar of object type")
    if not isinstance(data, bytes) or len(data) != dt.itemsize:
        raise pickle.UnpicklingError("a numpy scalar without its bytes")
    return np.frombuffer(data, dtype=dt, count=1)[0]


class _ArrayStub:
    """An array named in a pickle: its state (shape, dtype, data) is kept and the array built
    from it by :func:`_real_array` after checks (never by numpy's own ``__setstate__``)."""

    def __init__(self) -> None:
        self.state = None

    def __setstate__(self, state) -> None:
        self.state = state


def _reconstruct(cls, shape, dtype):
    if cls is not _ArrayStub:
        raise pickle.UnpicklingError(f"an array of class {getattr(cls, '__name__', cls)}")
    return _ArrayStub()


def _real_array(stub: _ArrayStub, finish) -> np.ndarray:
    """The checked array of a pickled ``ndarray`` state ``(version, shape, dtype, fortran, data)``:
    plain dtypes from bytes of exactly the declared size, object arrays from a list of
    (finished) unpickled objects."""
    from evalkit.motion.formats.limits import MAX_ARRAY_BYTES

    st = stub.state
    if not (isinstance(st, tuple) and len(st) == 5):
        raise pickle.UnpicklingError("a numpy array without its state")
    _, shape, dtype, fortran, data = st
    if not (isinstance(shape, tuple) and all(type(n) is int and 0 <= n for n in shape)):
        raise pickle.UnpicklingError(f"a numpy array of shape {shape!r}")
    dt = _real_dtype(dtype)
    n = 1
    for k in shape:
        n *= k
    if n * max(dt.itemsize, 8) > MAX_ARRAY_BYTES:
        raise pickle.UnpicklingError(f"an array of shape {shape} (more than the {MAX_ARRAY_BYTES:,} bytes "
                                     "evalkit reads in one array)")
    order = "F" if fortran else "C"
    if dt.hasobject:
        if not isinstance(data, list) or len(data) != n:
            raise pickle.UnpicklingError("an object array not made of its items")
        out = np.empty(n, dtype=object)
        for i, v in enumerate(data):
            out[i] = finish(v)
        return out.reshape(shape, order=order)
    if not isinstance(data, bytes) or len(data) != n * dt.itemsize:
        raise pickle.UnpicklingError(f"an array of shape {shape} {dt} whose data is not {n * dt.itemsize} bytes")
    return np.frombuffer(data, dtype=dt).reshape(shape, order=order).copy()


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
        if module == "numpy" and name == "dtype":
            return _DTypeStub
        if module == "numpy" and name == "ndarray":
            return _ArrayStub
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
    """Replace array stand-ins by checked numpy arrays and sparse ones by dense arrays, each object
    once (a pickle's memo may share one object many times: the work stays linear in its size)."""
    done: dict[int, Any] = {}
    keep: list = []  # holds the originals so their ids stay theirs while finishing

    def fin(o: Any) -> Any:
        if isinstance(o, (str, bytes, int, float, complex, bool, type(None), np.generic)):
            return o
        key = id(o)
        if key in done:
            return done[key]
        keep.append(o)
        if isinstance(o, _ArrayStub):
            out = _real_array(o, fin)
        elif isinstance(o, _SparseState):
            out = _dense(o)
        elif isinstance(o, dict):
            out = {(k.decode("latin-1") if isinstance(k, bytes) else k): fin(v) for k, v in o.items()}
        elif isinstance(o, (list, tuple)):
            out = type(o)(fin(v) for v in o)
        elif isinstance(o, (set, frozenset)):
            out = o
        elif isinstance(o, _DTypeStub):
            out = _real_dtype(o)
        else:
            raise pickle.UnpicklingError(f"an object of class {type(o).__name__}")
        done[key] = out
        return out

    return fin(obj)


def _dense(obj: "_SparseState") -> np.ndarray:
    """A pickled scipy sparse matrix as a dense array, its indices checked first."""
    from scipy import sparse

    st = getattr(obj, "state", None) or {}
    if isinstance(st, tuple):  # (None, dict) form
        st = next((s for s in st if isinstance(s, dict)), {})
    try:
        shape = tuple(int(n) for n in (st.get("_shape") or st.get("shape")))
        parts = [_finish(st[k]) for k in ("data", "indices", "indptr")]
        if not all(isinstance(a, np.ndarray) and a.dtype.kind in "biuf" for a in parts):
            raise ValueError("its arrays are not numeric")
        m = sparse.csc_matrix(tuple(parts), shape=shape)
        m.check_format(full_check=True)  # indices within the shape: toarray() trusts them
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise pickle.UnpicklingError(f"a sparse matrix without valid arrays ({exc})") from None
    return m.toarray()


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
            OverflowError, ImportError, UnicodeDecodeError, RecursionError) as exc:
        raise FileFormatError(path, None, f"not a readable pickle ({type(exc).__name__}: {exc})") from None


def _header3(fh):
    """``.npy`` version 3 header (UTF-8 field names): read as version 2 (same layout)."""
    return np.lib.format.read_array_header_2_0(fh, max_header_size=1 << 20)


def read_object_npy(path: str | Path, allow_pickle: bool = False, data: bytes | None = None) -> Any:
    """The object stored in an ``.npy`` file of object dtype (``np.save`` of a dict), read with
    :func:`safe_loads`. A 0-d object array yields its item (``data``: the file's bytes, when
    already read)."""
    path = Path(path)
    try:
        with (io.BytesIO(data) if data is not None else open(path, "rb")) as fh:
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
