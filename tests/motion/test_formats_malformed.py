"""Malformed SMPL-family / HumanML3D / MDM / array files: one line naming the file, the key or shape
expected and what was found; a seeded mutation test over every reader."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

from evalkit.errors import EvalkitError
from evalkit.motion import load_motion
from evalkit.motion.formats import iter_motion_files
from evalkit.constructed.known_truth import write_samples


@pytest.fixture(scope="module")
def samples(tmp_path_factory, cmu_dir):
    return write_samples(tmp_path_factory.mktemp("formats"), [cmu_dir / "16_15.amc", cmu_dir / "07_05-walk.amc"])


def _error(path, **kw) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(EvalkitError) as info:
            load_motion(path, **kw)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg, msg
    return msg


def _npz(tmp_path, samples, name="bad.npz", drop=(), **changes):
    data = dict(np.load(samples["amass_smplh.npz"]["path"]))
    for k in drop:
        data.pop(k)
    data.update(changes)
    np.savez(tmp_path / name, **data)
    return tmp_path / name


def test_parameter_file_errors_name_key_expected_and_found(tmp_path, samples):
    poses = np.load(samples["amass_smplh.npz"]["path"])["poses"]
    assert "missing key 'poses'" in _error(_npz(tmp_path, samples, drop=("poses",)))
    msg = _error(_npz(tmp_path, samples, poses=poses[:, :155]))
    assert "poses: expected (frames, columns)" in msg and "found shape (" in msg and ", 155)" in msg
    bad = poses.copy()
    bad[5, 7] = np.nan
    assert "poses: NaN or infinite value at frame 5, column 7" in _error(_npz(tmp_path, samples, poses=bad))
    assert "mocap_framerate: expected a frame rate above 0" in _error(_npz(tmp_path, samples, mocap_framerate=np.array(0.0)))
    assert "no frame rate" in _error(_npz(tmp_path, samples, drop=("mocap_framerate",)))
    assert load_motion(_npz(tmp_path, samples, drop=("mocap_framerate",)), array_fps=60).fps == 60
    assert "trans: expected shape" in _error(_npz(tmp_path, samples, trans=np.zeros((3, 3))))
    np.savez(tmp_path / "shape.npz", betas=np.zeros(16), gender=np.array("male"))
    assert "body shape only" in _error(tmp_path / "shape.npz")
    (tmp_path / "junk.npz").write_bytes(b"PK\x03\x04 not a zip at all")
    assert "not a readable .npz" in _error(tmp_path / "junk.npz")


def test_array_errors_name_shape_expected_and_found(tmp_path, samples):
    np.save(tmp_path / "f262.npy", np.zeros((40, 262), dtype=np.float32))
    msg = _error(tmp_path / "f262.npy")
    assert "expected shape (frames, 22, 3)" in msg and "(frames, 263)" in msg and "found (40, 262)" in msg
    j = np.load(samples["hml_joints.npy"]["path"]).copy()
    j[3, 4, 1] = np.nan
    np.save(tmp_path / "nan.npy", j)
    assert "NaN or infinite value at frame 3, joint 4" in _error(tmp_path / "nan.npy")
    np.save(tmp_path / "j17.npy", np.zeros((10, 17, 3)))
    assert "17 joints per frame and no skeleton: pass --skeleton" in _error(tmp_path / "j17.npy")
    assert "--array-fps" in _error(samples["positions.csv"]["path"])
    assert "frame rate above 0" in _error(_positions_npz(tmp_path, fps=0.0))
    (tmp_path / "text.csv").write_text("a,b,c\n1,2,x\n")
    assert "column 'c': expected numbers" in _error(tmp_path / "text.csv", array_fps=30)


def _positions_npz(tmp_path, fps):
    np.savez(tmp_path / "pos.npz", positions=np.random.default_rng(0).normal(size=(10, 22, 3)), fps=fps)
    return tmp_path / "pos.npz"


def test_results_file_errors(tmp_path, samples):
    def results(**d):
        p = tmp_path / "r.npy"
        np.save(p, d, allow_pickle=True)
        return p

    motion = np.zeros((2, 22, 3, 30), dtype=np.float32)
    assert "missing key 'motion'" in _error(results(text=["a", "b"]))
    assert "motion: expected a numeric array (samples, 22, 3, frames), found (2, 21, 3, 30)" in _error(
        results(motion=np.zeros((2, 21, 3, 30)), text=["a", "b"], lengths=np.array([3, 4])))
    assert "lengths: expected whole frame counts from 1 to 30" in _error(
        results(motion=motion, text=["a", "b"], lengths=np.array([3, 40])))
    assert "text: expected 2 prompts" in _error(results(motion=motion, text=["a"], lengths=np.array([3, 4])))
    # a pickle that is not a plain dict: refused without running it
    np.save(tmp_path / "list.npy", np.array([1, 2], dtype=object), allow_pickle=True)
    assert "expected a dict" in _error(tmp_path / "list.npy")

    class Payload:
        def __reduce__(self):
            return (exec, ("raise SystemExit('ran')",))

    with open(tmp_path / "evil.npy", "wb") as fh:
        arr = np.empty((), dtype=object)
        arr[()] = {"motion": Payload()}
        np.save(fh, arr, allow_pickle=True)
    msg = _error(tmp_path / "evil.npy")
    assert "builtins.exec" in msg and "not plain data" in msg and "--allow-pickle" in msg


def _mutations(rng, data: bytes, n: int):
    for _ in range(n):
        b = bytearray(data)
        kind = rng.integers(4)
        if kind == 0:  # flip bytes
            for i in rng.integers(0, len(b), size=rng.integers(1, 8)):
                b[i] = rng.integers(256)
        elif kind == 1:  # truncate
            b = b[: rng.integers(0, len(b))]
        elif kind == 2:  # duplicate a slice
            i = rng.integers(0, len(b))
            b = b[:i] + b[i: i + 64] + b[i:]
        else:  # zero a run
            i = rng.integers(0, len(b))
            b[i: i + 32] = bytes(len(b[i: i + 32]))
        yield bytes(b)


@pytest.mark.parametrize("name", ["amass_smplh.npz", "beat2_smplx.npz", "hml_joints.npy", "hml_vecs.npy",
                                  "results.npy", "positions.csv"])
def test_mutated_files_fail_only_with_evalkit_errors(tmp_path, samples, name):
    """Seeded byte mutations of each format: a reader either loads a clip or raises an error of
    the EvalkitError family (never IndexError, KeyError, a numpy or pickle exception)."""
    src = samples[name]["path"]
    data = src.read_bytes()
    if len(data) > 200_000:  # keep the test quick: a short clip of the same format
        pytest.skip("sample too large for the mutation test")
    rng = np.random.default_rng(sum(map(ord, name)))
    target = tmp_path / src.name
    for i, blob in enumerate(_mutations(rng, data, 40)):
        target.write_bytes(blob)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for f in iter_motion_files([target]):
                    load_motion(f, array_fps=30)
        except EvalkitError:
            pass
        except Exception as exc:  # pragma: no cover - the failure message is the point
            pytest.fail(f"mutation {i} of {name}: {type(exc).__name__}: {exc}")


def test_mutated_arrays_inside_valid_files(tmp_path, samples):
    """Well-formed containers with wrong content: shapes, dtypes, values."""
    rng = np.random.default_rng(7)
    base = dict(np.load(samples["amass_smplh.npz"]["path"]))
    candidates = [np.array(1.0), np.zeros((0, 156)), np.zeros((5,)), np.array(["x"]), np.full((4, 156), np.inf),
                  np.zeros((4, 3, 3)), np.array(-5.0), np.array(1e300), np.zeros((4, 52, 3))]
    for trial in range(40):
        data = dict(base)
        key = ["poses", "trans", "betas", "mocap_framerate", "gender"][trial % 5]
        data[key] = candidates[rng.integers(len(candidates))]
        np.savez(tmp_path / "m.npz", **data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                load_motion(tmp_path / "m.npz")
        except EvalkitError:
            pass
        except Exception as exc:  # pragma: no cover
            pytest.fail(f"{key}={data[key]!r:.60}: {type(exc).__name__}: {exc}")
