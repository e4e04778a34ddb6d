"""ASF/AMC reader: real CMU files, agreement with the cgspeed BVH conversion, and errors."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import FileFormatError
from evalkit.motion import load_motion, read_asf, read_asf_amc
from tests.conftest import shared_data, shared_glob, shared_param
from tests.motion.test_bvh import assert_rigid

# hand-made toy skeletons read with explicit units are not body-sized: the units warning is expected
pytestmark = pytest.mark.filterwarnings("ignore:.*check --units:UserWarning")


SHARED_AMC = shared_glob("mocap/cmu-asfamc/*.amc")


@pytest.mark.parametrize("path", SHARED_AMC, ids=lambda p: p.name)
def test_every_shared_amc_loads_rigidly(path):
    path = shared_param(path)
    m = load_motion(path)
    assert np.isfinite(m.positions).all()
    assert_rigid(m)
    assert m.fps == 120.0 and m.meta["units"] == "cmu"


def test_bundled_walk(walk_motion):
    assert walk_motion.n_frames == 471 and walk_motion.n_joints == 31
    assert_rigid(walk_motion)
    # walks forward ~ a few metres in 3.9 s, feet at the floor
    root = walk_motion.root_translation
    assert 2.0 < np.linalg.norm(root[-1, [0, 2]] - root[0, [0, 2]]) < 8.0
    assert abs(walk_motion.positions[..., 1].min()) < 0.1


def test_amc_matches_cgspeed_bvh_of_the_same_take(cmu_dir):
    """The cgspeed BVH of 01_01 is a conversion of the AMC (plus an added T-pose frame 0):
    legs and spine must agree to micrometres, which checks the ASF axis/offset maths."""
    amc = load_motion(shared_data("mocap", "cmu-asfamc", "01_01.amc"))
    bvh = load_motion(cmu_dir / "01_01.bvh")
    pairs = [("root", "Hips"), ("lfemur", "LeftUpLeg"), ("ltibia", "LeftLeg"), ("lfoot", "LeftFoot"),
             ("rtoes", "RightToeBase"), ("lowerback", "LowerBack"), ("thorax", "Spine1")]
    for a, b in pairs:
        pa = amc.positions[:, amc.skeleton.index(a)]
        pb = bvh.positions[1:, bvh.skeleton.index(b)]
        assert np.abs(pa - pb).max() < 1e-4, (a, b)


ASF = """:version 1.10
:name test
:units
  mass 1.0
  length 1.0
  angle deg
:root
   order TX TY TZ RX RY RZ
   axis XYZ
   position 0 0 0
   orientation 0 0 0
:bonedata
  begin
     id 1
     name lfemur
     direction 0 -1 0
     length 10
     axis 0 0 0 XYZ
    dof rx ry rz
  end
  begin
     id 2
     name ltibia
     direction 0 -1 0
     length 10
     axis 0 0 0 XYZ
    dof rx
  end
:hierarchy
  begin
    root lfemur
    lfemur ltibia
  end
"""
AMC = """:FULLY-SPECIFIED
:DEGREES
1
root 0 20 0 0 0 0
lfemur 0 0 0
ltibia 90
2
root 0 20 0 0 0 0
lfemur 0 0 0
ltibia 0
"""


def test_small_asf_amc_by_hand(tmp_path):
    (tmp_path / "t.asf").write_text(ASF)
    (tmp_path / "t.amc").write_text(AMC)
    m = read_asf_amc(tmp_path / "t.asf", tmp_path / "t.amc", units="m", up="y")
    # knee (at y=10) bent 90 degrees about x: the shin (0,-10,0) turns to (0,0,-10)
    end = m.skeleton.end_sites[m.skeleton.index("ltibia")]
    np.testing.assert_allclose(end, [0, -10, 0])
    from evalkit.motion.fk import end_site_positions

    tip = end_site_positions(m)[m.skeleton.index("ltibia")]
    np.testing.assert_allclose(tip[0], [0, 10, -10], atol=1e-9)
    np.testing.assert_allclose(tip[1], [0, 0, 0], atol=1e-9)
    np.testing.assert_allclose(m.positions[:, 2], [[0, 10, 0], [0, 10, 0]], atol=1e-9)


@pytest.mark.parametrize(
    "asf_text,amc_text,message",
    [
        (ASF.replace("    lfemur ltibia\n", "    lfemur ltibia\n    ltibia lfemur\n"), AMC, "two parents"),
        (ASF.replace("    root lfemur\n", "    ltibia lfemur\n"), AMC, "form a cycle"),
        (ASF.replace("    root lfemur\n", ""), AMC, "not attached to the root"),
        (ASF.split(":hierarchy")[0], AMC, "no ':hierarchy' section"),
        (ASF.replace("root lfemur", "root lfemur lknee"), AMC, "unknown bone 'lknee'"),
        (ASF, AMC.replace("ltibia 90", "ltibia 90 1"), "has 2 values"),
        (ASF, AMC.replace("ltibia 90", "ltibia nan"), "NaN"),
        (ASF, AMC.replace("lfemur 0 0 0\nltibia 90", "lfemur 0 0 0\nlhand 90"), "unknown bone 'lhand'"),
        (ASF, ":FULLY-SPECIFIED\n", "no frames"),
        (ASF, AMC.replace("2\nroot 0 20 0 0 0 0\nlfemur 0 0 0\n", "2\nroot 0 20 0 0 0 0\n"),
         "line 7: frame 2 has no 'lfemur' line"),
        (ASF, AMC.replace("ltibia 90\n", "ltibia 90\nltibia 45\n"), "line 7: second 'ltibia' line in frame 1"),
        (ASF, AMC.replace("\n2\n", "\n1\n"), "line 7: frame number 1 after frame 1; expected 2"),
        (ASF, AMC.replace("\n2\n", "\n3\n"), "line 7: frame number 3 after frame 1; expected 2"),
        (ASF.replace("dof rx\n", "dof rx qq rz\n"), AMC, "line 27: unknown dof 'qq'"),
        (ASF.replace("order TX TY TZ RX RY RZ", "order TX TY TZ RX RY QQ"), AMC, "line 8: unknown root order 'QQ'"),
        (ASF.replace("    dof rx ry rz\n  end\n", "    dof rx ry rz\n", 1), AMC,
         "line 20: 'begin' inside the block of bone 'lfemur' (line 15); expected 'end' first"),
        (ASF.replace("    dof rx\n  end\n", "    dof rx\n"), AMC,
         "line 28: section ':hierarchy' inside the block of bone 'ltibia' (line 23); expected 'end' first"),
    ],
)
def test_asf_amc_errors(tmp_path, asf_text, amc_text, message):
    (tmp_path / "t.asf").write_text(asf_text)
    (tmp_path / "t.amc").write_text(amc_text)
    with pytest.raises(FileFormatError) as info:
        read_asf_amc(tmp_path / "t.asf", tmp_path / "t.amc", units="m", up="y")
    assert message in str(info.value)
    assert "line" in str(info.value) or message == "no frames"


def test_asf_found_by_cmu_naming(cmu_dir):
    m = load_motion(cmu_dir / "07_05-walk.amc")
    assert m.meta["asf"].endswith("07-walk.asf")
    asf = read_asf(cmu_dir / "16.asf")
    assert asf.skeleton.names[0] == "root" and "lfemur" in asf.skeleton.names


def test_empty_asf_and_ambiguous_skeleton_messages(tmp_path, cmu_dir):
    (tmp_path / "t.asf").write_text("# nothing here\n")
    (tmp_path / "t.amc").write_text(AMC)
    with pytest.raises(FileFormatError) as info:
        read_asf_amc(tmp_path / "t.asf", tmp_path / "t.amc")
    assert str(info.value) == f"{tmp_path / 't.asf'}: file is empty, expected an ASF skeleton"
    clip = tmp_path / "clips" / "16.amc"
    clip.parent.mkdir()
    clip.write_bytes((cmu_dir / "16_15.amc").read_bytes())
    for name in ("a.asf", "b.asf"):
        (clip.parent / name).write_bytes((cmu_dir / "16.asf").read_bytes())
    with pytest.raises(FileFormatError) as info:
        load_motion(clip)
    msg = str(info.value)
    assert "(tried 16.asf; the folder has a.asf, b.asf)" in msg and "--asf" not in msg
    (clip.parent / "16.asf").write_bytes((cmu_dir / "16.asf").read_bytes())
    assert load_motion(clip).n_frames == 471
