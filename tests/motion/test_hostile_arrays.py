"""Hostile ``.npz``/``.npy`` files: one-line errors before any large allocation, LFS pointers named."""

from __future__ import annotations

import io
import pickle
import time
import warnings
import zipfile

import numpy as np
import pytest

from evalkit.errors import FileFormatError
from evalkit.motion import load_motion
from evalkit.motion.formats import clip_count
from evalkit.motion.formats.limits import MAX_ARRAY_BYTES
from evalkit.motion.topology import default_rest_joints

LFS = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 123456\n"


def _npy_bytes(header_shape, dtype="<f4", data=b"") -> bytes:
    """An ``.npy`` whose header declares ``header_shape`` over the bytes ``data``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": header_shape})
    return buf.getvalue() + data


def _positions(frames: int = 12) -> np.ndarray:
    return np.broadcast_to(default_rest_joints("smpl24") + [0.0, 0.9, 0.0], (frames, 24, 3)).copy()


@pytest.mark.parametrize("suffix", [".npz", ".npy", ".bvh"])
def test_a_git_lfs_pointer_is_named_as_such(tmp_path, suffix):
    p = tmp_path / f"clip{suffix}"
    p.write_bytes(LFS)
    with pytest.raises(FileFormatError, match="is a Git LFS pointer, not the data: fetch the file itself"):
        load_motion(p)


def test_a_declared_shape_beyond_the_data_is_refused_before_allocation(tmp_path):
    p = tmp_path / "bomb.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("poses.npy", _npy_bytes((10 ** 11, 22, 3), data=b"\0" * 64))
        z.writestr("trans.npy", _npy_bytes((10, 3), data=b"\0" * 120))
        z.writestr("mocap_framerate.npy", _npy_bytes((), "<f8", np.float64(30).tobytes()))
    with pytest.raises(FileFormatError, match=r"key 'poses': declares shape \(100000000000, 22, 3\)") as e:
        load_motion(p)
    assert f"{MAX_ARRAY_BYTES:,} bytes" in str(e.value)


def test_a_declared_shape_larger_than_its_member_is_refused(tmp_path):
    p = tmp_path / "short.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("positions.npy", _npy_bytes((1000, 24, 3), data=b"\0" * 64))
    with pytest.raises(FileFormatError, match=r"key 'positions': declares shape \(1000, 24, 3\) \(288,000 bytes\) "
                                              r"but holds"):
        load_motion(p, array_fps=30)


def test_a_member_no_reader_needs_is_not_loaded(tmp_path):
    """A huge (here: lying) member under a key no reader uses does not stop the clip."""
    p = tmp_path / "clip.npz"
    good = io.BytesIO()
    np.save(good, _positions())
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("positions.npy", good.getvalue())
        z.writestr("unused.npy", _npy_bytes((10 ** 10,), data=b"\0" * 8))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = load_motion(p, array_fps=30)
    assert m.n_frames == 12 and m.skeleton.n_joints == 24


def test_a_corrupted_compressed_member_is_one_line(tmp_path):
    p = tmp_path / "broken.npz"
    np.savez_compressed(p, positions=_positions(200))
    raw = bytearray(p.read_bytes())
    mid = len(raw) // 2
    raw[mid:mid + 40] = b"\xff" * 40
    p.write_bytes(bytes(raw))
    with pytest.raises(FileFormatError, match="broken.npz"):
        load_motion(p, array_fps=30)


def test_an_npy_with_a_negative_shape_is_one_line(tmp_path):
    p = tmp_path / "neg.npy"
    p.write_bytes(b"\x93NUMPY\x01\x00" + _header((-5, 22, 3)))
    with pytest.raises(FileFormatError, match="neg.npy"):
        load_motion(p)


def _header(shape) -> bytes:
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': %r, }" % (shape,)
    text += " " * ((64 - (len(text) + 11) % 64) % 64) + "\n"
    return len(text).to_bytes(2, "little") + text.encode("latin1")


def test_clip_count_of_an_unreadable_pickle_leaves_the_error_to_the_load(tmp_path):
    """Counting clips never ends a run: a hostile results file is one clip whose load fails."""
    p = tmp_path / "results.npy"
    p.write_bytes(b"\x93NUMPY\x01\x00" + _header_obj() + b"cos\nsystem\n(S'true'\ntR.")
    assert clip_count(p) == 1
    with pytest.raises(FileFormatError, match="os.system"):
        load_motion(p)


def _header_obj() -> bytes:
    text = "{'descr': '|O', 'fortran_order': False, 'shape': (), }"
    text += " " * ((64 - (len(text) + 11) % 64) % 64) + "\n"
    return len(text).to_bytes(2, "little") + text.encode("latin1")


# -- crafted pickles: the restricted unpickler builds arrays and dtypes itself -----------------
class _RawObjectArray:
    """Pickles as an object array whose data are raw bytes (pointers chosen by the author)."""

    def __reduce__(self):
        from numpy.core.multiarray import _reconstruct

        return _reconstruct, (np.ndarray, (0,), b"b"), (1, (1,), np.dtype("O"), False, b"A" * 8)


def test_an_object_array_over_raw_memory_is_refused():
    from evalkit.motion.formats.safepickle import safe_loads

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        data = pickle.dumps({"motion": _RawObjectArray()}, protocol=2)
    with pytest.raises(FileFormatError, match="an object array not made of its items"):
        safe_loads(data, "crafted.pkl")


def test_shared_levels_of_a_pickle_are_finished_once():
    """26 levels that each hold the level below twice: 2**26 paths, 26 objects."""
    from evalkit.motion.formats.safepickle import safe_loads

    a: list = [np.zeros(3)]
    for _ in range(26):
        a = [a, a]
    t0 = time.process_time()
    out = safe_loads(pickle.dumps(a, protocol=2), "memo.pkl")
    assert time.process_time() - t0 < 2.0 and out[0] is out[1]


def test_a_pickle_nested_too_deep_is_one_line():
    from evalkit.motion.formats.safepickle import safe_loads

    n = 100_000
    data = b"\x80\x02" + b"]" * n + b"a" * (n - 1) + b"."
    with pytest.raises(FileFormatError, match="deep.pkl: not a readable pickle"):
        safe_loads(data, "deep.pkl")


def test_a_sparse_matrix_with_indices_out_of_range_is_refused():
    from scipy import sparse

    from evalkit.motion.formats.safepickle import safe_loads

    m = sparse.csc_matrix(np.eye(4))
    m.indices[0] = 10 ** 6
    with pytest.raises(FileFormatError, match="a sparse matrix without valid arrays"):
        safe_loads(pickle.dumps({"J_regressor": m}, protocol=2), "model.pkl")
