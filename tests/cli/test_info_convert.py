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


def test_convert_refuses_bad_numbers_before_reading(tmp_path, cmu_dir, capsys):
    out = tmp_path / "o.bvh"
    for args, message in ((["--fps", "1e9"], "--fps must be a frame rate above 0 and at most 2000"),
                          (["--fps", "0"], "--fps must be a frame rate above 0"),
                          (["--amc-fps", "0"], "--amc-fps must be a frame rate above 0"),
                          (["--scale", "0"], "--scale must be a positive number"),
                          (["--scale", "nan"], "--scale must be a positive number"),
                          (["--scale", "inf"], "--scale must be a positive number"),
                          (["--scale", "-1"], "--scale must be a positive number"),
                          (["--roles", str(tmp_path / "none.yaml")], "role map file not found")):
        assert main(["convert", str(cmu_dir / "16_15.amc"), str(out), *args]) == 2, args
        assert message in capsys.readouterr().err, args
        assert not out.exists()


def test_convert_never_overwrites_its_input_nor_a_users_tmp_file(tmp_path, cmu_dir, capsys):
    src = tmp_path / "good.bvh"
    original = (cmu_dir / "131_01.bvh").read_bytes()
    src.write_bytes(original)
    assert main(["convert", str(src), str(src)]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert src.read_bytes() == original
    mine = tmp_path / "precious.bvh.tmp"
    mine.write_text("mine\n")
    assert main(["convert", str(src), str(tmp_path / "precious.bvh")]) == 0
    assert mine.read_text() == "mine\n" and load_motion(tmp_path / "precious.bvh").n_frames == 994
    folder = tmp_path / "dir.bvh"
    folder.mkdir()
    assert main(["convert", str(src), str(folder)]) == 2
    assert "dir.bvh: is a folder" in capsys.readouterr().err
    assert list(folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.bvh", "good.bvh", "precious.bvh", "precious.bvh.tmp"]


def test_convert_output_follows_the_umask(tmp_path, cmu_dir):
    import os
    import stat

    old = os.umask(0o022)
    try:
        for name in ("o.bvh", "o.npz"):
            assert main(["convert", str(cmu_dir / "131_01.bvh"), str(tmp_path / name)]) == 0
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    finally:
        os.umask(old)


def test_convert_applies_and_checks_roles(tmp_path, cmu_dir, capsys):
    roles = tmp_path / "roles.yaml"
    roles.write_text("roles:\n  head: NoSuchJoint\n")
    assert main(["convert", str(cmu_dir / "131_01.bvh"), str(tmp_path / "o.bvh"), "--roles", str(roles)]) == 2
    assert "roles.yaml: roles.head: no joint named 'NoSuchJoint'" in capsys.readouterr().err
    roles.write_text("roles:\n  head: Head\n  left_ankle: LeftAnkle\n")
    assert main(["convert", str(cmu_dir / "131_01.bvh"), str(tmp_path / "o.bvh"), "--roles", str(roles)]) == 0


def test_info_measures_the_path_on_the_hips(capsys):
    from tests.conftest import shared_data

    clip = shared_data("mocap", "bandai-namco-1") / "dataset-1_walk_normal_001.bvh"
    assert main(["info", str(clip), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert row["root"] == "joint_Root" and row["path_joint"] == "Hips"
    assert 5.0 < row["root_path_m"] < 12.0  # a 6.5 s walk, not 0 (the root joint never moves)


def test_info_on_a_folder_without_motion_files_is_an_error(tmp_path, capsys):
    assert main(["info", str(tmp_path)]) == 2
    assert "no motion files (.bvh, .amc) under" in capsys.readouterr().err


def test_convert_help_describes_in_and_data_list_has_a_description():
    assert "motion file to read" in run("convert", "--help").stdout
    assert "List the datasets" in run("data", "list", "--help").stdout


def test_a_unit_that_makes_the_body_implausible_is_warned_about(cmu_dir):
    import warnings

    import pytest

    amc = str(cmu_dir / "16_15.amc")
    with pytest.warns(UserWarning, match=r"16_15\.amc: the body is 0\.\d+ m across with units of cm; .* check --units"):
        load_motion(amc, units="cm")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the detected unit and the right scale: no warning
        load_motion(amc)
        load_motion(amc, units=0.056444)
    # through the console entry point: one line in the command's voice, every clip, exit 0
    proc = run("info", amc, str(cmu_dir / "07_05-walk.amc"), "--units", "cm")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("evalkit: warning: ")]
    assert len(lines) == 2 and "07_05-walk.amc: the body is" in lines[1]
