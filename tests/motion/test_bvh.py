"""BVH reading, writing and errors, on real capture and on malformed files written here."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from evalkit.errors import FileFormatError
from evalkit.motion import load_motion, parse_bvh, read_bvh, write_bvh
from evalkit.motion.fk import forward_kinematics
from tests.conftest import shared_data, shared_glob, shared_param

# hand-made toy skeletons read with explicit units are not body-sized: the units warning is expected
pytestmark = pytest.mark.filterwarnings("ignore:.*check --units:UserWarning")


SHARED_BVH = shared_glob("mocap/*/*.bvh", "gesture/*/*.bvh")


def assert_rigid(motion) -> None:
    """FK bone lengths equal the local translation lengths on every frame, and are constant
    across frames wherever the local translation is (joints without moving position channels)."""
    pos = motion.positions
    par = motion.skeleton.parents
    child = np.arange(1, motion.n_joints)
    fk_len = np.linalg.norm(pos[:, child] - pos[:, par[child]], axis=-1)
    local_len = np.linalg.norm(motion.translations[:, child], axis=-1)
    np.testing.assert_allclose(fk_len, local_len, rtol=1e-6, atol=1e-9)
    const = np.ptp(motion.translations[:, child], axis=0).max(axis=1) < 1e-9
    rest = np.linalg.norm(motion.skeleton.offsets[child], axis=1)
    scale = max(rest.max(), 1e-9)
    rel = np.abs(fk_len[:, const] - fk_len[:1, const]).max() / scale
    assert rel < 1e-6
    no_pos = ~motion.skeleton.has_position_channels()[child]
    np.testing.assert_allclose(fk_len[:, no_pos], np.broadcast_to(rest[no_pos], fk_len[:, no_pos].shape), rtol=1e-6, atol=1e-9)


def test_bundled_clip_basics(bvh_motion):
    m = bvh_motion
    assert m.n_joints == 31 and m.fps == 120.0 and m.n_frames == 994
    assert m.meta["units"] == "cmu" and m.meta["up_axis"] == "y"
    assert_rigid(m)
    # feet end up near the ground and the head well above it (Y-up, metres)
    from evalkit.motion import find_roles

    r = find_roles(m.skeleton)
    head_h = np.median(m.positions[:, r["head"], 1] - m.positions[:, r["left_toe"], 1])
    assert 1.2 < head_h < 1.9


@pytest.mark.parametrize("path", SHARED_BVH, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_shared_bvh_loads_rigidly(path):
    path = shared_param(path)
    m = read_bvh(path)
    assert np.isfinite(m.positions).all()
    assert_rigid(m)


def test_shared_data_present_in_ci():
    shared_data("mocap")
    assert len(SHARED_BVH) > 50


def _equal_motion(a, b, tol=1e-6):
    assert a.skeleton.names == b.skeleton.names
    np.testing.assert_allclose(a.skeleton.offsets, b.skeleton.offsets, atol=tol)
    pa, ra = forward_kinematics(a)
    pb, rb = forward_kinematics(b)
    np.testing.assert_allclose(pa, pb, atol=tol)
    np.testing.assert_allclose(ra, rb, atol=tol)
    np.testing.assert_allclose(a.translations, b.translations, atol=tol)
    assert abs(a.fps - b.fps) < 1e-6


@pytest.mark.parametrize("name", ["131_01.bvh", "01_01.bvh", "16_15.amc"])
def test_round_trip(tmp_path, cmu_dir, name):
    a = load_motion(cmu_dir / name)
    out = write_bvh(a, tmp_path / "rt.bvh")
    b = read_bvh(out, units="m")
    _equal_motion(a, b)
    c = read_bvh(write_bvh(b, tmp_path / "rt2.bvh"), units="m")
    _equal_motion(b, c)


def test_round_trip_rigs_with_position_channels(tmp_path):
    path = shared_data("mocap", "bandai-namco-1", "dataset-1_walk_normal_001.bvh")
    a = read_bvh(path)
    b = read_bvh(write_bvh(a, tmp_path / "b.bvh", scale=0.01), units="cm")
    _equal_motion(a, b)


def _tiny_bvh(order_root="Zrotation Yrotation Xrotation", order_child="Xrotation Yrotation Zrotation",
              frames=("0 90 0 10 20 30 40 50 60", "0 91 0 11 21 31 41 51 61"), sep="\n",
              extra_child_channels=""):
    nchild = 3 + (3 if extra_child_channels else 0)
    lines = [
        "HIERARCHY", "ROOT Hips", "{", "  OFFSET 0 0 0",
        f"  CHANNELS 6 Xposition Yposition Zposition {order_root}",
        "  JOINT Chest", "  {", "    OFFSET 0 10 0",
        f"    CHANNELS {nchild} {extra_child_channels}{order_child}",
        "    End Site", "    {", "      OFFSET 0 5 0", "    }", "  }", "}",
        "MOTION", f"Frames: {len(frames)}", "Frame Time: 0.04",
        *frames,
    ]
    return sep.join(lines) + sep


def test_channel_orders_are_honoured():
    from scipy.spatial.transform import Rotation

    m = parse_bvh(_tiny_bvh(), units="cm", up="y")
    expected_root = Rotation.from_euler("ZYX", [10, 20, 30], degrees=True).as_matrix()
    expected_child = Rotation.from_euler("XYZ", [40, 50, 60], degrees=True).as_matrix()
    _, rot = forward_kinematics(m)
    np.testing.assert_allclose(rot[0, 0], expected_root, atol=1e-12)
    np.testing.assert_allclose(rot[0, 1], expected_root @ expected_child, atol=1e-12)
    np.testing.assert_allclose(m.positions[0, 1], [0, 0.9, 0] + expected_root @ [0, 0.1, 0], atol=1e-12)
    assert m.fps == 25.0


def test_crlf_tabs_and_odd_spacing_parse_identically():
    plain = parse_bvh(_tiny_bvh(), units="cm", up="y")
    messy_text = _tiny_bvh(sep="\r\n").replace("  ", "\t \t").replace("0 90 0", "0    90\t0 ")
    messy = parse_bvh(messy_text, units="cm", up="y")
    np.testing.assert_allclose(plain.positions, messy.positions)


def test_position_channels_on_a_child_joint_replace_its_offset():
    # values that repeat the offset (10) with a change: they replace it (Bandai Namco style)
    m = parse_bvh(
        _tiny_bvh(extra_child_channels="Xposition Yposition Zposition ",
                  frames=("0 0 0 0 0 0 1 11 0 0 0 0",)),
        units="cm", up="y",
    )
    np.testing.assert_allclose(m.positions[0, 1], [0.01, 0.11, 0.0], atol=1e-12)


def test_position_channels_near_zero_are_relative_to_a_nonzero_offset():
    # the rest height in OFFSET and near-zero channels (Reallusion style): offset + channel
    m = parse_bvh(
        _tiny_bvh(extra_child_channels="Xposition Yposition Zposition ",
                  frames=("0 0 0 0 0 0 1 0.5 0 0 0 0", "0 0 0 0 0 0 1 -0.5 0 0 0 0")),
        units="cm", up="y",
    )
    np.testing.assert_allclose(m.positions[:, 1], [[0.01, 0.105, 0.0], [0.01, 0.095, 0.0]], atol=1e-12)


def test_reallusion_root_offset_files_stand_on_the_floor():
    from tests.conftest import shared_data

    for name in ("002_01.bvh", "007_02.bvh", "007_12.bvh"):
        m = read_bvh(shared_data("mocap", "cmu-reallusion", name))
        assert -0.02 < m.positions[..., 1].min() < 0.1, name
        assert 1.6 < m.positions[..., 1].max() < 2.0, name


def test_z_up_file_is_converted_to_y_up(tmp_path):
    # A standing figure with the head along +Z in the file.
    text = "\n".join([
        "HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
        "JOINT LeftUpLeg", "{", "OFFSET 10 0 0", "CHANNELS 3 Zrotation Yrotation Xrotation",
        "JOINT LeftLeg", "{", "OFFSET 0 0 -45", "CHANNELS 3 Zrotation Yrotation Xrotation",
        "JOINT LeftFoot", "{", "OFFSET 0 0 -45", "CHANNELS 3 Zrotation Yrotation Xrotation",
        "End Site", "{", "OFFSET 0 10 0", "}", "}", "}", "}",
        "JOINT Spine", "{", "OFFSET 0 0 20", "CHANNELS 3 Zrotation Yrotation Xrotation",
        "JOINT Head", "{", "OFFSET 0 0 50", "CHANNELS 3 Zrotation Yrotation Xrotation",
        "End Site", "{", "OFFSET 0 0 10", "}", "}", "}", "}",
        "MOTION", "Frames: 2", "Frame Time: 0.0333333",
        "0 0 95 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", "0 5 95 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0",
    ]) + "\n"
    m = parse_bvh(text, units="cm")
    assert m.meta["up_axis"] == "z"
    head, foot = m.skeleton.index("Head"), m.skeleton.index("LeftFoot")
    assert m.positions[0, head, 1] > 1.5 and abs(m.positions[0, foot, 1] - 0.05) < 1e-9
    assert m.fps == 30.0


# ---- malformed files -------------------------------------------------------------------------
GOOD = _tiny_bvh()
MALFORMED = {
    "truncated_hierarchy": (GOOD.split("    End Site")[0], "file ends early", None),
    "missing_motion": (GOOD.split("MOTION")[0], "no MOTION section", None),
    "too_few_values": (GOOD.replace("0 91 0 11 21 31 41 51 61", "0 91 0 11 21 31 41 51"), "frame has 8 values", 20),
    "non_numeric": (GOOD.replace("0 91 0 11 21", "0 91 0 1x1 21"), "non-numeric value '1x1'", 20),
    "nan_value": (GOOD.replace("0 91 0 11 21", "0 91 0 nan 21"), "NaN/inf", 20),
    "inf_value": (GOOD.replace("0 90 0 10", "0 90 0 inf"), "NaN/inf", 19),
    "zero_frame_time": (GOOD.replace("Frame Time: 0.04", "Frame Time: 0"), "positive number of seconds", 18),
    "negative_frame_time": (GOOD.replace("Frame Time: 0.04", "Frame Time: -0.04"), "positive number of seconds", 18),
    "unknown_channel": (GOOD.replace("Xrotation Yrotation Zrotation", "Xrotation Yrotation Wrotation"), "unknown channel 'Wrotation'", 9),
    "duplicate_joint": (GOOD.replace("JOINT Chest", "JOINT Hips"), "duplicate joint name 'Hips'", 6),
    "zero_frames": (GOOD.replace("Frames: 2", "Frames: 0"), "0 frames", 17),
    "truncated_frames": (GOOD.replace("Frames: 2", "Frames: 3"), "truncated", None),
    "extra_frames": (GOOD + "0 0 0 0 0 0 0 0 0\n", "more frame lines", 21),
    "bad_offset": (GOOD.replace("OFFSET 0 10 0", "OFFSET 0 ten 0"), "expected a number", 8),
    "empty": ("", "empty", 1),
    "absurd_value": (GOOD.replace("0 91 0 11 21", "0 91 0 1e300 21"), "magnitude below 1e+08", 20),
    "absurd_offset": (GOOD.replace("OFFSET 0 10 0", "OFFSET 0 1e300 0"), "magnitude below 1e+08", 8),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_names_file_and_line(tmp_path, case):
    text, message, line = MALFORMED[case]
    path = tmp_path / f"{case}.bvh"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        read_bvh(path, units="cm", up="y")
    err = info.value
    assert message in str(err)
    assert str(path) in str(err)
    if line is not None:
        assert err.line == line, str(err)
        assert f"line {line}" in str(err)


@pytest.mark.parametrize("case", ["non_numeric", "missing_motion", "duplicate_joint"])
def test_cli_reports_malformed_file_without_traceback(tmp_path, case):
    text, message, _ = MALFORMED[case]
    path = tmp_path / f"{case}.bvh"
    path.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "evalkit", "info", str(path)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout
    assert message in proc.stdout + proc.stderr


def test_large_file_parses(tmp_path, cmu_dir):
    # ~10x a real clip: the vectorised parse handles long files.
    src = load_motion(cmu_dir / "131_01.bvh")
    from evalkit.motion.model import concatenate

    big = concatenate([src] * 10)
    path = write_bvh(big, tmp_path / "big.bvh")
    m = read_bvh(path, units="m")
    assert m.n_frames == 9940
    np.testing.assert_allclose(m.positions[-1], src.positions[-1], atol=1e-6)


def test_byte_order_mark_and_cr_only_line_endings_read_like_the_original(tmp_path, cmu_dir):
    lf = (cmu_dir / "131_01.bvh").read_bytes().replace(b"\r\n", b"\n")
    (tmp_path / "bom.bvh").write_bytes(b"\xef\xbb\xbf" + lf)
    (tmp_path / "cr.bvh").write_bytes(lf.replace(b"\n", b"\r"))
    ref = load_motion(cmu_dir / "131_01.bvh")
    for name in ("bom.bvh", "cr.bvh"):
        m = load_motion(tmp_path / name)
        assert m.n_frames == ref.n_frames == 994, name
        np.testing.assert_allclose(m.positions, ref.positions)


def test_units_that_make_an_absurd_body_are_an_error(cmu_dir):
    from evalkit.errors import InputError

    with pytest.raises(InputError, match=r"131_01.bvh: the body is .* m across with units of 1e\+09 m"):
        load_motion(cmu_dir / "131_01.bvh", units=1e9)
    assert load_motion(cmu_dir / "131_01.bvh", units="cmu").n_frames == 994
