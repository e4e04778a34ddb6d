"""Training in several processes or on a Dask cluster gives the model one process gives.

Real CMU capture (bundled): two takes of subject 131 (so limb transplants draw a donor from the
other take), a walk and a run; the training examples are made apart per clip, in chunks, and
joined in order.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from evalkit.cli import main
from evalkit.data import SAMPLES_DIR

CMU = SAMPLES_DIR / "cmu"
FILES = ("131_01.bvh", "131_03.bvh", "16_15.amc", "16.asf", "09_06-run.amc", "09-run.asf")
TYPES = "transplant,foot_skate,jitter,freeze"


@pytest.fixture(scope="module")
def natural(tmp_path_factory):
    d = tmp_path_factory.mktemp("natural")
    for f in FILES:
        shutil.copyfile(CMU / f, d / f)
    return d


def _train(natural, out, *extra):
    assert main(["train", "--natural", str(natural), "--types", TYPES, "--per-type", "1",
                 "--out", str(out), "-q", *extra]) == 0
    from evalkit.models.training import load_model

    return load_model(out)[0]


def _verdicts(model) -> np.ndarray:
    from evalkit.models.window_features import window_features
    from evalkit.motion import load_motion

    x = window_features(load_motion(CMU / "01_01.bvh"), model.window)  # a take it did not see
    return model.predict_proba(x)[:, 1]


@pytest.fixture(scope="module")
def one_process(natural, tmp_path_factory):
    out = tmp_path_factory.mktemp("one") / "m.joblib"
    return _train(natural, out), out


def _card(path):
    import json

    card = json.loads(path.with_suffix(".json").read_text())
    return {k: card[k] for k in ("training_data", "examples", "windows", "long_examples_natural", "example_seconds")}


def test_two_processes_train_the_same_model(natural, one_process, tmp_path):
    model, out = one_process
    other = _train(natural, tmp_path / "m2.joblib", "--jobs", "2")
    assert (tmp_path / "m2.joblib").read_bytes() == out.read_bytes()  # byte for byte
    assert np.array_equal(_verdicts(model), _verdicts(other))
    assert _card(out) == _card(tmp_path / "m2.joblib")
    assert _card(out)["examples"]["transplant"] > 0


def test_a_dask_cluster_trains_the_same_model(natural, one_process, tmp_path):
    import distributed  # in the 'test' extra

    model, out = one_process
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, host="127.0.0.1",
                                  protocol="tcp://", dashboard_address=None) as cluster:
        other = _train(natural, tmp_path / "m3.joblib", "--scheduler", cluster.scheduler_address)
    assert (tmp_path / "m3.joblib").read_bytes() == out.read_bytes()
    assert np.array_equal(_verdicts(model), _verdicts(other))
    assert _card(out) == _card(tmp_path / "m3.joblib")


def test_evaluation_on_a_cluster_is_refused_with_the_fix(natural, tmp_path, capsys):
    assert main(["train", "--natural", str(natural), "--evaluate", str(tmp_path / "r"),
                 "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "--jobs" in err and "Traceback" not in err
