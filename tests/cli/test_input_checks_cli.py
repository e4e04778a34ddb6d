"""Command-line checks: outputs checked before work, implausible input named with
its override, no empty table header, no pool for tiny work, a --help that keeps the shipped model."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from evalkit.motion import load_motion, write_bvh


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True)


def test_score_refuses_an_unwritable_output_before_scoring(cmu_dir):
    proc = run("score", str(cmu_dir), "--out", "/proc/nope/s.csv", "-q")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "/proc/nope/s.csv: cannot create folders in /proc" in proc.stderr
    assert "scored" not in proc.stderr  # nothing was scored


def test_info_of_a_non_motion_file_prints_no_table_header(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    proc = run("info", str(notes))
    assert proc.returncode == 1
    assert "joints" not in proc.stdout and "unsupported motion format '.txt'" in proc.stderr


def test_jobs_on_tiny_work_scores_in_process_and_says_so(cmu_dir, tmp_path):
    out = tmp_path / "s.csv"
    proc = run("score", str(cmu_dir / "16_15.amc"), str(cmu_dir / "09_06-run.amc"), "--jobs", "2", "-q",
               "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "--jobs 2: the work (2 clip(s)" in proc.stderr and "scoring in this process" in proc.stderr
    import pandas as pd

    assert len(pd.read_csv(out)) == 2


def test_choose_workers_grows_with_the_work(tmp_path):
    from evalkit.features.batch import BYTES_PER_SECOND, MIN_SECONDS_PER_WORKER, choose_workers

    small = tmp_path / "a.bvh"
    small.write_bytes(b"x" * 1000)
    assert choose_workers([small] * 8, 2) == (1, choose_workers([small] * 8, 2)[1])
    assert "too small" in choose_workers([small] * 8, 2)[1]
    big = tmp_path / "b.bvh"
    with open(big, "wb") as f:  # sparse: the size is what counts
        f.truncate(int(BYTES_PER_SECOND * MIN_SECONDS_PER_WORKER * 3))
    import os

    n, why = choose_workers([big, big], 2)
    assert n == min(2, os.cpu_count() or 1)
    assert why == "" or "not 2" in why


def test_train_help_example_does_not_write_over_the_shipped_model():
    proc = run("train", "--help")
    assert proc.returncode == 0
    assert "--out evalkit/models/default_model" not in proc.stdout
    assert "--out my-default.joblib" in proc.stdout


def test_detected_unit_giving_a_giant_is_warned_about_with_the_override(tmp_path, cmu_dir):
    """A file in half-centimetres (hips ~200 units up, like a Mixamo export) is
    detected as centimetres: a giant, named with --units."""
    m = load_motion(cmu_dir / "131_01.bvh")
    p = write_bvh(m[:60], tmp_path / "giant.bvh", scale=0.005)
    with pytest.warns(UserWarning, match=r"giant\.bvh: the body is [23]\.\d+ m tall with units of cm \(detected\).*--units"):
        g = load_motion(p)
    assert g.meta["units"] == "cm"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isclose(load_motion(p, units=0.005).positions, m[:60].positions, atol=1e-5).all()


def test_a_body_not_upright_along_any_axis_is_warned_about(tmp_path, cmu_dir):
    """The whole clip tipped 45 degrees: the feet-to-head direction is split between two axes."""
    from scipy.spatial.transform import Rotation

    from evalkit.motion import quat

    m = load_motion(cmu_dir / "131_01.bvh")[:60]
    q = Rotation.from_euler("x", 45, degrees=True).as_quat()
    rot = m.rotations.copy()
    tr = m.translations.copy()
    rot[:, 0] = quat.multiply(q, rot[:, 0])
    tr[:, 0] = quat.rotate(q, tr[:, 0])
    p = write_bvh(m.with_(rotations=rot, translations=tr), tmp_path / "tipped.bvh")
    with pytest.warns(UserWarning, match=r"tipped\.bvh: up axis detected as .*not above the feet.*--up"):
        load_motion(p)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_motion(cmu_dir / "131_01.bvh")  # upright capture: no warning


def test_score_puts_warnings_in_the_notes_column(tmp_path, cmu_dir):
    import pandas as pd

    m = load_motion(cmu_dir / "131_01.bvh")
    write_bvh(m[:200], tmp_path / "clips" / "giant.bvh", scale=0.005)
    write_bvh(m[:200], tmp_path / "clips" / "normal.bvh")
    proc = run("score", str(tmp_path / "clips"), "-q", "--out", str(tmp_path / "s.csv"))
    assert proc.returncode == 0, proc.stderr
    df = pd.read_csv(tmp_path / "s.csv", keep_default_na=False).set_index("clip")
    assert " m tall" in df.loc["giant", "notes"] and "--units" in df.loc["giant", "notes"]
    assert df.loc["normal", "notes"] == ""
    assert "1 clip(s) have notes" in proc.stderr
