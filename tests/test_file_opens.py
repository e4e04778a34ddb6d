"""Each motion file is opened once per command, traced at the interpreter's ``open`` audit event
(every ``open()``, ``Path.read_bytes``, ``numpy.load`` ... raises it), not at a reader."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from evalkit.cli import main
from evalkit.data import SAMPLES_DIR

CMU = SAMPLES_DIR / "cmu"
_TRACE: list[Counter | None] = [None]


def _hook(event, args):
    counter = _TRACE[0]
    if counter is not None and event == "open" and isinstance(args[0], (str, bytes, Path)):
        counter[str(Path(str(args[0] if not isinstance(args[0], bytes) else args[0].decode())).resolve())] += 1


sys.addaudithook(_hook)  # audit hooks cannot be removed; it records only inside `opens()`


class opens:
    """Context manager: a Counter of files opened inside it, by resolved path."""

    def __enter__(self) -> Counter:
        _TRACE[0] = Counter()
        return _TRACE[0]

    def __exit__(self, *exc) -> None:
        _TRACE[0] = None


@pytest.fixture()
def clips(tmp_path):
    """Two systems' and a reference set's BVH files (real CMU capture), copied apart."""
    out = {}
    for name, files in (("a", ["01_01.bvh", "131_03.bvh"]), ("b", ["131_01.bvh", "131_03.bvh"]),
                        ("ref", ["01_01.bvh", "131_01.bvh", "131_03.bvh"])):
        d = tmp_path / name
        d.mkdir()
        for f in files:
            shutil.copyfile(CMU / f, d / f)
        out[name] = d
    return out


def _motion_opens(counter: Counter, folder: Path) -> dict[str, int]:
    root = str(folder.resolve())
    return {p: n for p, n in counter.items() if p.startswith(root) and p.endswith(".bvh")}


def test_score_with_model_and_reference_opens_each_file_once(clips, tmp_path, capsys):
    with opens() as counter:
        assert main(["score", str(clips["a"]), "--model", "default", "--reference", str(clips["ref"]),
                     "-o", str(tmp_path / "s.csv"), "-q"]) == 0
    files = sorted(p.resolve() for p in clips["a"].iterdir())
    assert _motion_opens(counter, clips["a"]) == {str(f): 1 for f in files}
    assert set(_motion_opens(counter, clips["ref"]).values()) == {1}
    assert len(_motion_opens(counter, clips["ref"])) == len(list(clips["ref"].iterdir()))


def test_compare_opens_each_file_once(clips, tmp_path, capsys):
    with opens() as counter:
        assert main(["compare", "--reference", str(clips["ref"]), f"a={clips['a']}", f"b={clips['b']}",
                     "--bootstrap", "20", "--out", str(tmp_path / "cmp"), "-q"]) == 0
    for name in ("a", "b", "ref"):
        got = _motion_opens(counter, clips[name])
        assert got and set(got.values()) == {1}, (name, got)
        assert len(got) == len(list(clips[name].iterdir()))


def test_builders_read_each_clip_once(clips, tmp_path):
    """The clip databases and reference sets built from folders read each file once."""
    from evalkit.features.reference import build_reference
    from evalkit.runner import load_clips

    with opens() as counter:
        ref = build_reference([clips["ref"]])
        motions = load_clips([clips["a"]])
    assert ref.n_clips == 3
    assert set(_motion_opens(counter, clips["ref"]).values()) == {1}
    assert set(_motion_opens(counter, clips["a"]).values()) == {1}
    assert [m.name for m in motions] == sorted(p.stem for p in clips["a"].iterdir())



def test_training_opens_each_file_once_and_keeps_its_hash(clips, tmp_path, capsys):
    """`evalkit train` reads each natural file once (the hash is taken from that read); a copy
    of a file (same bytes) is left out, and the model card lists each kept file's SHA-256."""
    import hashlib
    import json

    shutil.copyfile(CMU / "16_15.amc", clips["ref"] / "16_15.amc")
    shutil.copyfile(CMU / "16.asf", clips["ref"] / "16.asf")
    dup = clips["ref"] / "copy"
    dup.mkdir()
    shutil.copyfile(CMU / "131_01.bvh", dup / "131_01-again.bvh")
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copyfile(CMU / "131_03.bvh", bad / "mine.bvh")  # a user's "unnatural" clip
    out = tmp_path / "m.joblib"
    with opens() as counter:
        assert main(["train", "--natural", str(clips["ref"]), "--unnatural", str(bad), "--out", str(out), "-q"]) == 0
    assert _motion_opens(counter, bad) == {str((bad / "mine.bvh").resolve()): 1}
    motion_files = [p for p in clips["ref"].rglob("*") if p.suffix in (".bvh", ".amc")]
    got = {p: n for p, n in counter.items() if p.startswith(str(clips["ref"].resolve())) and p.endswith((".bvh", ".amc"))}
    assert got == {str(p.resolve()): 1 for p in motion_files}
    card = json.loads(out.with_suffix(".json").read_text())
    text = json.dumps(card)
    for p in motion_files:
        assert hashlib.sha256(p.read_bytes()).hexdigest() in text
    assert "131_01-again" not in text  # same bytes as 131_01.bvh: left out
    assert hashlib.sha256((bad / "mine.bvh").read_bytes()).hexdigest() in text


@pytest.fixture()
def array_files(tmp_path):
    """The field's array formats built from real CMU capture (``known_truth.write_samples``: an
    AMASS-style SMPL-H ``.npz``, HumanML3D joints ``.npy``, a CSV, an MDM ``results.npy`` of
    three samples), with a HumanML3D ``Mean.npy`` beside them (not motion)."""
    from evalkit.constructed.known_truth import DEFAULT_CLIPS, write_samples

    d = tmp_path / "arrays"
    write_samples(d, [CMU / c for c in DEFAULT_CLIPS])
    import numpy as np

    np.save(d / "mean.npy", np.zeros(263))
    return d


def _array_opens(counter: Counter, folder: Path) -> dict[str, int]:
    root = str(folder.resolve())
    return {Path(p).name: n for p, n in counter.items() if p.startswith(root)}


def test_array_files_are_opened_once_to_load_them_with_their_digest(array_files):
    """Loading an array file opens it once: the Git LFS check, the digest and the parse use
    that one read; the samples of a results file come from one read of it."""
    import hashlib
    import warnings

    from evalkit.motion import load_motion
    from evalkit.motion.formats import file_digest

    names = ["amass_smplh.npz", "hml_joints.npy", "positions.csv", "results#0.npy", "results#2.npy"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with opens() as counter:
            motions = [load_motion(array_files / n, digest=True, array_fps=30.0 if n.endswith(".csv") else None)
                       for n in names]
    assert _array_opens(counter, array_files) == {"amass_smplh.npz": 1, "hml_joints.npy": 1, "positions.csv": 1,
                                                  "results.npy": 1}
    for n, m in zip(names, motions):
        assert m.meta["sha256"] == file_digest(array_files / n), n
    whole = hashlib.sha256((array_files / "positions.csv").read_bytes()).hexdigest()
    assert motions[2].meta["sha256"] == whole
    assert motions[3].meta["sha256"] != motions[4].meta["sha256"]  # a sample's digest names its index


def test_a_folder_of_arrays_is_scored_with_one_read_of_each_file(array_files, tmp_path, capsys):
    """``evalkit score FOLDER``: discovery looks at each array file once (an ``.npy``'s header, an
    ``.npz``'s zip directory; a results file is then read whole and kept for its samples), the
    load reads it once; the arrays that are not motion are skipped."""
    import pandas as pd

    out = tmp_path / "s.csv"
    with opens() as counter:
        assert main(["score", str(array_files), "--array-fps", "30", "-o", str(out), "-q"]) == 0
    got = _array_opens(counter, array_files)
    want = {p.name: 2 for p in array_files.iterdir() if p.suffix in (".npz", ".npy")}
    want.update({"mean.npy": 1})  # not motion: skipped at its look
    assert got == want
    table = pd.read_csv(out)
    assert len(table) == len(want) - 2 + 3  # each clip file, and the results file's three samples
    assert not table["path"].astype(str).str.contains("mean").any()
