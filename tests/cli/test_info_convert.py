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


def test_convert_loop_repeats_a_clip_seamlessly_and_the_verdict_keeps(tmp_path, cmu_dir, capsys):
    """``--loop N``: the clip's loop played N times, the body carried on (no jump back), and the
    shipped discriminator scores ten repeats as one (judged on the first two copies and their
    seamless join; judged frame by frame, within 0.05); ``--loop 0`` is refused."""
    import pandas as pd

    one, ten = tmp_path / "x1.bvh", tmp_path / "x10.bvh"
    assert main(["convert", str(cmu_dir / "16_15.amc"), str(one), "--loop", "1", "--fps", "30"]) == 0
    assert main(["convert", str(cmu_dir / "16_15.amc"), str(ten), "--loop", "10", "--fps", "30"]) == 0
    err = capsys.readouterr().err
    assert "played once" in err and "played 10 times" in err and "warning" not in err
    a, b = load_motion(one), load_motion(ten)
    assert b.n_frames == 10 * a.n_frames
    hips = b.positions[:, 0]
    step = np.linalg.norm(np.diff(hips[:, [0, 2]], axis=0), axis=1)
    assert step.max() < 3 * np.median(step) + 0.01  # no jump back at a repeat: the walk goes on
    travel = np.linalg.norm(hips[-1, [0, 2]] - hips[0, [0, 2]])
    assert travel > 5 * np.linalg.norm(a.positions[-1, 0, [0, 2]] - a.positions[0, 0, [0, 2]])
    out = tmp_path / "scores.csv"
    assert main(["score", str(one), str(ten), "--model", "default", "--out", str(out), "-q"]) == 0
    t = pd.read_csv(out).set_index("clip")
    # read back from BVH text, the ten copies (each turned and moved on) are found to be copies of
    # the loop, and the loop is judged once
    assert t.loc["x10", "copies"] == 10 and t.loc["x1", "copies"] == 1
    assert t.loc["x1", "naturalness"] > 0.8 and abs(t.loc["x10", "naturalness"] - t.loc["x1", "naturalness"]) <= 0.02
    # the model itself on every frame of the ten copies, joins included
    assert main(["score", str(one), str(ten), "--model", "default", "--judge-joins", "--out", str(out), "-q"]) == 0
    s = pd.read_csv(out).set_index("clip")["naturalness"]
    assert s["x1"] > 0.8 and abs(s["x10"] - s["x1"]) <= 0.05
    assert main(["convert", str(cmu_dir / "16_15.amc"), str(tmp_path / "y.bvh"), "--loop", "0"]) != 0
    assert "--loop" in capsys.readouterr().err and not (tmp_path / "y.bvh").exists()
    short = tmp_path / "short.bvh"
    assert main(["convert", str(cmu_dir / "16_15.amc"), str(short), "--fps", "30"]) == 0
    text = short.read_text().split("MOTION")
    head, body = text[0], text[1].strip().splitlines()
    short.write_text(head + "MOTION\nFrames: 8\n" + body[1] + "\n" + "\n".join(body[2:10]) + "\n")
    capsys.readouterr()
    assert main(["convert", str(short), str(tmp_path / "z.bvh"), "--loop", "3"]) != 0
    err = capsys.readouterr().err
    assert "at least 12 frames, got 8" in err and "Traceback" not in err and not (tmp_path / "z.bvh").exists()


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
    err = capsys.readouterr().err
    assert "no motion files (.bvh, .amc, .npz, .npy, .csv; .csv only when named) under" in err


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


# -- SMPL-family, HumanML3D, MDM and position arrays (files built from CMU capture here) ----------
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

SKATE_PENETRATION = ("penetration_mean", "penetration_max", "penetration_frac", "skate_fraction",
                     "skate_speed_mean", "skate_distance_mean", "skate_distance_max", "skate_distance_per_s")


@pytest.fixture(scope="module")
def format_files(tmp_path_factory, cmu_dir):
    from evalkit.constructed.known_truth import write_samples

    out = tmp_path_factory.mktemp("mixed")
    truth = write_samples(out, [cmu_dir / "16_15.amc", cmu_dir / "07_05-walk.amc"])
    return out, truth


def test_every_command_reads_every_format_and_a_mixed_folder(format_files, tmp_path, capsys):
    folder, truth = format_files
    assert main(["info", str(folder), "--json", "--array-fps", "30"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # csv files are read only when named; results.npy gives one row per sample
    assert len(rows) == 8 and all(r["roles_missing"] == [] for r in rows)
    assert {r["up_axis"] for r in rows if "amass" in r["file"]} == {"z"}
    out = tmp_path / "scores.csv"
    assert main(["score", str(folder), str(truth["positions.csv"]["path"]), "--array-fps", "30", "-q",
                 "-o", str(out)]) == 0
    table = pd.read_csv(out, keep_default_na=False)
    assert len(table) == 9 and (table["error"] == "").all()
    mdm = table[table["clip"].str.startswith("results#")]
    assert list(mdm["text"]) == truth["results.npy"]["text"]
    for f in ("amass_smplx.npz", "beat2_smplx.npz", "hml_vecs.npy", "results#1.npy"):
        png = tmp_path / f"{f}.png"
        assert main(["plot", str(folder / f), "-o", str(png)]) == 0 and png.stat().st_size > 10_000
    assert main(["plot", str(truth["positions_smpl24.npy"]["path"]), "--skeleton", "smpl24", "--array-fps", "30",
                 "-o", str(tmp_path / "g.png")]) == 0


def test_render_a_humanml3d_clip(format_files, tmp_path):
    folder, _ = format_files
    out = tmp_path / "hml.mp4"
    assert main(["render", str(folder / "hml_joints.npy"), "-o", str(out), "-q"]) == 0
    assert out.stat().st_size > 1000


def test_convert_npy_to_npz_writes_positions_names_parents_fps(format_files, tmp_path):
    folder, truth = format_files
    out = tmp_path / "p.npz"
    assert main(["convert", str(folder / "hml_joints.npy"), str(out)]) == 0
    from evalkit.motion.formats.smpl import joint_positions
    from evalkit.motion.topology import BODY22

    data = np.load(out)
    names = list(data["names"])
    assert sorted(names) == sorted(BODY22) and data["parents"][0] == -1 and float(data["fps"]) == 20
    pos = data["positions"][:, [names.index(n) for n in BODY22]]  # joints are kept depth-first
    assert np.abs(pos - truth["hml_joints.npy"]["positions"]).max() < 1e-6
    # and that file reads back as the same clip
    assert np.abs(joint_positions(load_motion(out)) - truth["hml_joints.npy"]["positions"]).max() < 1e-6


def test_cmu_clip_as_humanml3d_round_trip_within_a_millimetre(cmu_dir, tmp_path):
    from evalkit.motion import find_roles, resample

    out = tmp_path / "walk.npy"
    assert main(["convert", str(cmu_dir / "16_15.amc"), str(out)]) == 0
    joints = np.load(out)
    assert joints.shape[1:] == (22, 3) and joints.dtype == np.float32
    from evalkit.motion.formats.smpl import joint_positions

    m = load_motion(out)
    assert m.fps == 20 and np.abs(joint_positions(m) - joints).max() < 1e-3
    src = resample(load_motion(cmu_dir / "16_15.amc"), 20)
    r = find_roles(src.skeleton)
    for j, role in ((4, "left_knee"), (8, "right_ankle"), (11, "right_toe"), (15, "head"), (21, "right_wrist")):
        assert np.abs(joint_positions(m)[:, j] - src.positions[:, r[role]]).max() < 1e-3, role


@pytest.mark.parametrize("clip", ["16_15.amc", "07_05-walk.amc", "01_01.bvh"])
def test_skate_and_penetration_of_the_npy_agree_with_the_capture(cmu_dir, tmp_path, clip):
    """Same clip as BVH and as HumanML3D joints: every skate and penetration metric within 10 %
    (or 0.01 absolute near zero) at the capture's frame rate; at HumanML3D's 20 fps too, except
    the frame-counting skating ratios (docs/formats.md)."""
    stem = clip.split(".")[0]
    for d in ("bvh", "n120", "n20"):
        (tmp_path / d).mkdir()
    assert main(["convert", str(cmu_dir / clip), str(tmp_path / "bvh" / f"{stem}.bvh")]) == 0
    assert main(["convert", str(cmu_dir / clip), str(tmp_path / "n120" / f"{stem}.npy"), "--fps", "120"]) == 0
    assert main(["convert", str(cmu_dir / clip), str(tmp_path / "n20" / f"{stem}.npy")]) == 0
    tables = {}
    for d, extra in (("bvh", []), ("n120", ["--array-fps", "120"]), ("n20", [])):
        assert main(["score", str(tmp_path / d), "-q", "-o", str(tmp_path / f"{d}.csv"), *extra]) == 0
        tables[d] = pd.read_csv(tmp_path / f"{d}.csv").iloc[0]
    ref = tables["bvh"]
    for d, cols in (("n120", SKATE_PENETRATION + ("skating_ratio", "skating_ratio_20fps")), ("n20", SKATE_PENETRATION)):
        for c in cols:
            a, b = ref[c], tables[d][c]
            assert abs(a - b) <= 0.01 or abs(a - b) <= 0.1 * abs(a), (d, c, a, b)


def test_convert_bvh_to_amass_and_beat2_and_back_to_bvh(cmu_dir, tmp_path):
    import warnings

    from evalkit.motion import find_roles

    src = load_motion(cmu_dir / "131_03.bvh")
    assert main(["convert", str(cmu_dir / "131_03.bvh"), str(tmp_path / "a.npz"), "--format", "amass",
                 "--topology", "smplx55"]) == 0
    assert main(["convert", str(cmu_dir / "131_03.bvh"), str(tmp_path / "b.npz"), "--format", "beat2"]) == 0
    data = np.load(tmp_path / "a.npz")
    assert data["poses"].shape == (src.n_frames, 165) and float(data["mocap_framerate"]) == src.fps
    assert np.load(tmp_path / "b.npz")["expressions"].shape == (src.n_frames, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = load_motion(tmp_path / "a.npz"), load_motion(tmp_path / "b.npz")
    assert a.meta["up_axis"] == "z" and b.meta["up_axis"] == "y"
    assert np.abs(a.positions - b.positions).max() < 1e-5
    # bone directions follow the capture
    rs, ra = find_roles(src.skeleton), find_roles(a.skeleton)
    u = src.positions[:, rs["left_ankle"]] - src.positions[:, rs["left_knee"]]
    v = a.positions[:, ra["left_ankle"]] - a.positions[:, ra["left_knee"]]
    cos = np.sum(u * v, -1) / np.linalg.norm(u, axis=-1) / np.linalg.norm(v, axis=-1)
    assert cos.min() > np.cos(np.radians(1.0))
    # positions -> BVH: the fitted rotations write a BVH that reads back as the joints
    assert main(["convert", str(tmp_path / "a.npz"), str(tmp_path / "a.bvh")]) == 0
    assert np.abs(load_motion(tmp_path / "a.bvh").positions - a.positions).max() < 1e-5
    hml = tmp_path / "h.npy"
    assert main(["convert", str(cmu_dir / "131_03.bvh"), str(hml)]) == 0
    assert main(["convert", str(hml), str(tmp_path / "h.bvh")]) == 0
    # within the fit's tolerance: bones that stretch by less than 0.5 mm are written rigid
    assert np.abs(load_motion(tmp_path / "h.bvh").positions - load_motion(hml).positions).max() < 2e-3


def test_convert_refuses_a_format_that_does_not_fit_the_extension(tmp_path, cmu_dir, capsys):
    for args, message in ((["x.npy", "--format", "amass"], "--format amass: not written as .npy"),
                          (["x.npz", "--format", "beat2", "--topology", "smpl24"], "--topology smpl24: only for --format amass"),
                          (["x.npz", "--format", "amass", "--topology", "h36m"], "--topology h36m")):
        assert main(["convert", str(cmu_dir / "16_15.amc"), str(tmp_path / args[0]), *args[1:]]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
        assert not (tmp_path / args[0]).exists()


def test_malformed_array_files_are_one_line_errors_from_the_cli(tmp_path):
    np.save(tmp_path / "bad.npy", np.zeros((30, 262), dtype=np.float32))
    proc = run("info", str(tmp_path / "bad.npy"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "bad.npy: expected shape (frames, 22, 3)" in proc.stderr and "found (30, 262)" in proc.stderr
    np.save(tmp_path / "evil.npy", np.array([{"motion": print}], dtype=object), allow_pickle=True)
    proc = run("score", str(tmp_path / "evil.npy"))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "builtins.print" in proc.stderr
