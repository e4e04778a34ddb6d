"""``evalkit score`` at the edges: an empty folder, a bad file beside good ones, every file bad."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pandas as pd

from evalkit.data import SAMPLES_DIR


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True)


def test_an_empty_folder_names_every_format_score_reads(tmp_path):
    proc = run("score", str(tmp_path), "-q")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    for ext in (".bvh", ".amc", ".npz", ".npy", ".csv"):
        assert ext in proc.stderr


def test_an_unreadable_npy_is_an_error_row_and_the_bvh_beside_it_is_scored(tmp_path):
    shutil.copy(SAMPLES_DIR / "cmu" / "01_01.bvh", tmp_path / "walk.bvh")
    # a .npy header declaring a negative shape: the file cannot be read or counted
    (tmp_path / "broken.npy").write_bytes(
        b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (-5, 22, 3), }"
        + b" " * 51 + b"\n" + b"\x00" * 64)
    out = tmp_path / "s.csv"
    proc = run("score", str(tmp_path / "walk.bvh"), str(tmp_path / "broken.npy"), "--out", str(out), "-q")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1  # one clip failed
    table = pd.read_csv(out, keep_default_na=False)
    assert list(table["clip"]) == ["walk", "broken"]  # input order
    assert table.loc[0, "error"] == "" and float(table.loc[0, "duration_s"]) > 0
    assert "broken.npy" in table.loc[1, "error"]


def test_when_every_clip_fails_no_table_is_written_and_the_exit_is_non_zero(tmp_path):
    bad = tmp_path / "bad.bvh"
    bad.write_text("HIERARCHY\nROOT Hips\n{\n")
    out = tmp_path / "s.csv"
    proc = run("score", str(bad), "--out", str(out), "-q")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert not out.exists()
    assert "every clip failed (1 of 1); no table written" in proc.stderr
    assert "bad.bvh" in proc.stderr
