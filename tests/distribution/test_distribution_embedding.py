"""The FGD extractor: deterministic, its protocol hashed, other protocols refused."""

import json
import shutil

import numpy as np
import pytest

from evalkit.distribution.embedding import (
    DEFAULT_EXTRACTOR, ProtocolMismatchError, TrainingSettings, WindowProtocol, check_protocol, load_extractor,
    train_extractor,
)

TINY = TrainingSettings(epochs=3, hidden=16, latent=8, train_stride=6)


@pytest.fixture(scope="module")
def files(cmu_dir):
    return [cmu_dir / "16_15.amc", cmu_dir / "07_05-walk.amc", cmu_dir / "131_03.bvh"]


@pytest.fixture(scope="module")
def tiny(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("ext") / "a"
    train_extractor(files, WindowProtocol(window=20, stride=5), TINY).save(out)
    return out


def test_training_is_deterministic_byte_for_byte(files, tiny, tmp_path):
    train_extractor(files, WindowProtocol(window=20, stride=5), TINY).save(tmp_path / "b")
    for name in ("extractor.npz", "card.json"):
        assert (tiny / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    ext = load_extractor(tiny)
    win = np.random.default_rng(0).normal(size=(5, 20, 18, 3))
    np.testing.assert_array_equal(ext.encode(win), load_extractor(tmp_path / "b").encode(win))


def test_a_changed_protocol_changes_the_hash(files, tiny):
    base = load_extractor(tiny).card
    other_window = train_extractor(files, WindowProtocol(window=24, stride=5), TINY).card
    other_seed = train_extractor(files, WindowProtocol(window=20, stride=5),
                                 TrainingSettings(**{**TINY.__dict__, "seed": 1})).card
    other_data = train_extractor(files[:2], WindowProtocol(window=20, stride=5), TINY).card
    hashes = {c["protocol_hash"] for c in (base, other_window, other_seed, other_data)}
    assert len(hashes) == 4
    assert base["protocol"]["comparison"]["window"] == 20
    assert [d["name"] for d in base["protocol"]["data"]] == sorted(f.name for f in files)
    assert all(len(d["sha256"]) == 64 for d in base["protocol"]["data"])
    assert set(base["protocol"]["versions"]) >= {"evalkit", "numpy", "python"}


def test_comparison_under_another_protocol_is_refused(tiny):
    ext = load_extractor(tiny)
    check_protocol(ext, {"window": 20, "stride": None})  # same: fine
    with pytest.raises(ProtocolMismatchError, match=r"window=64 \(the extractor was trained with window=20\)"):
        check_protocol(ext, {"window": 64})
    with pytest.raises(ProtocolMismatchError, match="fps"):
        check_protocol(ext, {"fps": 60})
    # a recorded protocol made with another extractor
    default = load_extractor("default")
    record = {"extractor": {"protocol_hash": default.card["protocol_hash"], "protocol": default.card["protocol"]}}
    with pytest.raises(ProtocolMismatchError, match="comparison.window: 30 vs 20"):
        check_protocol(ext, recorded=record)


def test_edited_card_or_swapped_weights_are_refused(tiny, tmp_path):
    edited = tmp_path / "edited"
    shutil.copytree(tiny, edited)
    card = json.loads((edited / "card.json").read_text())
    card["protocol"]["comparison"]["window"] = 64
    (edited / "card.json").write_text(json.dumps(card))
    with pytest.raises(ProtocolMismatchError, match="edited"):
        load_extractor(edited)
    swapped = tmp_path / "swapped"
    shutil.copytree(tiny, swapped)
    shutil.copy(DEFAULT_EXTRACTOR / "extractor.npz", swapped / "extractor.npz")
    with pytest.raises(ProtocolMismatchError, match="not the ones"):
        load_extractor(swapped)


def test_shipped_extractor_was_trained_on_the_bundled_capture(cmu_dir):
    import hashlib

    from evalkit.distribution.embedding import _file_hash
    from evalkit.motion.io import iter_motion_files

    ext = load_extractor()
    data = {d["name"]: d["sha256"] for d in ext.card["protocol"]["data"]}
    bundled = {f.name: _file_hash(f) for f in iter_motion_files([cmu_dir])}
    assert data == bundled
    assert ext.window_protocol.window == 30 and ext.window_protocol.fps == 30.0
    assert len(hashlib.sha256((DEFAULT_EXTRACTOR / "extractor.npz").read_bytes()).hexdigest()) == 64
    # it reconstructs real windows better than noise
    from evalkit.distribution.windows import canonical_positions, windows
    from evalkit.motion import load_motion

    pos, h, _ = canonical_positions(load_motion(cmu_dir / "16_15.amc"), 30.0)
    real = windows(pos, h, 30, 10)
    noise = real + np.random.default_rng(0).normal(0, 0.05, real.shape)
    assert ext.reconstruction_error(real) < ext.reconstruction_error(noise)
