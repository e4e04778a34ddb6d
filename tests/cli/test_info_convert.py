"""`evalkit info` and `evalkit convert` through the real console entry point."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from evalkit.cli import main
from evalkit.motion import load_motion


def run(*args):
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True)


def test_info_json_on_bundled_samples(cmu_dir, capsys):
    assert main(["info", str(cmu_dir), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    motion_files = sorted(p.name for p in cmu_dir.iterdir() if p.suffix in (".bvh", ".amc"))
    assert sorted(r["file"].split("/")[-1] for r in rows) == motion_files  # one row per motion file
    walk = next(r for r in rows if r["file"].endswith("16_15.amc"))
    assert walk["frames"] == 471 and walk["fps"] == 120 and walk["roles_missing"] == []
    assert 2.0 < walk["root_path_m"] < 8.0 and walk["units"] == "cmu" and walk["up_axis"] == "y"


def test_info_table_and_help():
    proc = run("info", "--help")
    assert proc.returncode == 0 and "--units" in proc.stdout
    proc = run("--help")
    assert proc.returncode == 0 and "info" in proc.stdout and "convert" in proc.stdout


def test_convert_bvh_with_resampling(tmp_path, cmu_dir):
    out = tmp_path / "walk30.bvh"
    assert main(["convert", str(cmu_dir / "16_15.amc"), str(out), "--fps", "30"]) == 0
    m = load_motion(out)
    src = load_motion(cmu_dir / "16_15.amc")
    assert m.fps == 30 and m.n_frames == 118
    np.testing.assert_allclose(m.positions, src.positions[::4], atol=1e-6)


def test_convert_npz(tmp_path, cmu_dir):
    out = tmp_path / "p.npz"
    assert main(["convert", str(cmu_dir / "131_01.bvh"), str(out)]) == 0
    data = np.load(out)
    assert data["positions"].shape == (994, 31, 3) and float(data["fps"]) == 120.0


def test_user_mistakes_exit_nonzero_without_traceback(tmp_path, cmu_dir):
    for args in (["info", str(tmp_path / "missing.bvh")],
                 ["convert", str(cmu_dir / "16_15.amc"), str(tmp_path / "x.txt")],
                 ["info", str(cmu_dir / "16_15.amc"), "--units", "parsecs"],
                 ["info", str(cmu_dir / "16_15.amc"), "--roles", str(tmp_path / "none.yaml")]):
        proc = run(*args)
        assert proc.returncode != 0, args
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "error" in proc.stderr
