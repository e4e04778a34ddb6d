"""The FGD extractor: deterministic, its protocol hashed, other protocols refused."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from evalkit.errors import InputError
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
    from evalkit.motion.formats import iter_motion_files

    ext = load_extractor()
    data = {d["name"]: d["sha256"] for d in ext.card["protocol"]["data"]}
    bundled = {f.name: _file_hash(f) for f in iter_motion_files([cmu_dir])}
    assert data == bundled
    assert ext.window_protocol.window == 30 and ext.window_protocol.fps == 30.0
    assert len(hashlib.sha256((DEFAULT_EXTRACTOR / "extractor.npz").read_bytes()).hexdigest()) == 64
    # it reconstructs real windows better than noise
    from evalkit.distribution.canonical import canonical_positions, windows
    from evalkit.motion import load_motion

    pos, h, _ = canonical_positions(load_motion(cmu_dir / "16_15.amc"), 30.0)
    real = windows(pos, h, 30, 10)
    noise = real + np.random.default_rng(0).normal(0, 0.05, real.shape)
    assert ext.reconstruction_error(real) < ext.reconstruction_error(noise)


FORMAT1 = Path(__file__).with_name("data") / "extractor_format1_tanh"


def test_a_card_from_before_the_activation_setting_loads_as_tanh_and_encodes_as_trained(cmu_dir):
    """``data/extractor_format1_tanh`` was trained (window 8, stride 4, 3 epochs, 8 hidden, 4 latent,
    01_01.bvh and 131_01.bvh) by the code before the activation became a protocol setting; its card
    names no activation. It still loads, runs tanh, and gives the embeddings that code gave."""
    from evalkit.distribution.canonical import canonical_positions, windows
    from evalkit.motion import load_motion

    old = load_extractor(FORMAT1)
    assert "activation" not in old.card["protocol"]["training"] and old.activation == "tanh"
    pos, h, _ = canonical_positions(load_motion(cmu_dir / "01_01.bvh"), 30.0)
    win = windows(pos, h, 8, 4)
    want = np.load(FORMAT1.with_name("extractor_format1_tanh_01_01.npz"))
    np.testing.assert_allclose(old.encode(win)[:20], want["embeddings"], rtol=0, atol=1e-12)
    assert old.reconstruction_error(win) == pytest.approx(float(want["reconstruction_error"]), rel=1e-12)


def test_the_activation_is_part_of_the_protocol(cmu_dir):
    """Today's code with ``activation="tanh"`` trains the format-1 extractor's very weights, under
    another protocol hash (the card now names the activation); the default activation gives other
    weights; a comparison recorded with the old extractor is refused by the new one, naming the
    activation."""
    old = load_extractor(FORMAT1)
    files = [cmu_dir / "01_01.bvh", cmu_dir / "131_01.bvh"]
    proto = WindowProtocol(window=8, stride=4)
    settings = dict(epochs=3, hidden=8, latent=4)
    tanh = train_extractor(files, proto, TrainingSettings(**settings, activation="tanh"))
    leaky = train_extractor(files, proto, TrainingSettings(**settings))
    assert leaky.card["protocol"]["training"]["activation"] == "leaky_relu"
    # the same weights; compared as numbers, not as bytes: the input mean's last bit depends on the
    # CPU's summation kernels (seen: 5e-19 apart on another machine, every weight bit-identical)
    assert set(tanh.weights) == set(old.weights)
    for k, v in old.weights.items():
        np.testing.assert_allclose(tanh.weights[k], v, rtol=0, atol=1e-12, err_msg=k)
    assert len({old.card["protocol_hash"], tanh.card["protocol_hash"], leaky.card["protocol_hash"]}) == 3
    assert leaky.card["weights_sha256"] != old.card["weights_sha256"]
    check_protocol(old, recorded={"extractor": old.card})
    with pytest.raises(ProtocolMismatchError, match='training.activation: null vs "leaky_relu"'):
        check_protocol(leaky, recorded={"extractor": old.card})
    with pytest.raises(InputError, match="unknown extractor activation 'relu6'"):
        train_extractor(files, proto, TrainingSettings(**settings, activation="relu6"))


def test_shipped_embedding_does_not_saturate(cmu_dir):
    """FGD of real windows with ever grosser noise against the clean ones keeps rising with the
    shipped extractor (leaky ReLU); a tanh extractor's embedding is bounded by its weights."""
    from evalkit.distribution.frechet import frechet_from_features
    from evalkit.distribution.canonical import canonical_positions, windows
    from evalkit.motion import load_motion

    pos, h, _ = canonical_positions(load_motion(cmu_dir / "16_15.amc"), 30.0)
    real = windows(pos, h, 30, 10)
    ext = load_extractor()
    assert ext.activation == "leaky_relu"
    clean = ext.encode(real)
    rng = np.random.default_rng(0)
    sigmas = [0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0]  # body heights
    fgd = [frechet_from_features(ext.encode(real + rng.normal(0, s, real.shape)), clean) for s in sigmas]
    assert all(b > 1.5 * a for a, b in zip(fgd, fgd[1:])), fgd
    old = load_extractor(FORMAT1)
    bound = np.abs(old.weights["W2"].astype(float)).sum(0) + np.abs(old.weights["b2"])
    w8 = windows(pos, h, 8, 4)
    assert (np.abs(old.encode(w8 + rng.normal(0, 100.0, w8.shape))) <= bound + 1e-9).all()


def test_embed_info_names_the_activation(capsys):
    from evalkit.cli import main

    assert main(["embed", "info", str(FORMAT1)]) == 0
    assert "activation tanh (card format before the setting)" in capsys.readouterr().out
    assert main(["embed", "info"]) == 0
    assert "activation leaky_relu\n" in capsys.readouterr().out
