"""Joint roles for the common naming schemes, overrides, and the missing-roles error."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import ConfigError, FileFormatError, RolesNotFoundError
from evalkit.motion import ROLE_NAMES, find_roles, load_motion, load_role_map
from evalkit.motion.model import Skeleton
from tests.conftest import shared_data


def chain_skeleton(spec: list[tuple[str, str | None]]) -> Skeleton:
    """Skeleton from (name, parent name) pairs, offsets of 0.1 m."""
    names = [n for n, _ in spec]
    parents = [-1 if p is None else names.index(p) for _, p in spec]
    return Skeleton(names=names, parents=np.array(parents), offsets=np.full((len(names), 3), 0.1),
                    channels=[("Zrotation", "Xrotation", "Yrotation")] * len(names))


def humanoid(root, pelvis_chain, spine, neck, head, arm, leg, side_fmt):
    """Build a humanoid with names produced by ``side_fmt(side, part_name)``."""
    spec = [(root, None)]
    prev = root
    for n in pelvis_chain:
        spec.append((n, prev))
        prev = n
    hips = prev
    for n in spine:
        spec.append((n, prev))
        prev = n
    chest = prev
    for n in neck:
        spec.append((n, prev))
        prev = n
    spec.append((head, prev))
    for side in ("L", "R"):
        prev = chest
        for part in arm:
            name = side_fmt(side, part)
            spec.append((name, prev))
            prev = name
        prev = hips
        for part in leg:
            name = side_fmt(side, part)
            spec.append((name, prev))
            prev = name
    return chain_skeleton(spec)


SCHEMES = {
    "mixamo": (
        humanoid("mixamorig:Hips", [], ["mixamorig:Spine", "mixamorig:Spine1", "mixamorig:Spine2"], ["mixamorig:Neck"],
                 "mixamorig:Head", ["Shoulder", "Arm", "ForeArm", "Hand"], ["UpLeg", "Leg", "Foot", "ToeBase"],
                 lambda s, p: f"mixamorig:{'Left' if s == 'L' else 'Right'}{p}"),
        {"left_shoulder": "mixamorig:LeftArm", "left_elbow": "mixamorig:LeftForeArm", "right_wrist": "mixamorig:RightHand",
         "left_knee": "mixamorig:LeftLeg", "right_toe": "mixamorig:RightToeBase", "spine": "mixamorig:Spine"},
    ),
    "smpl": (
        humanoid("pelvis", [], ["spine1", "spine2", "spine3"], ["neck"], "head",
                 ["collar", "shoulder", "elbow", "wrist"], ["hip", "knee", "ankle", "foot"],
                 lambda s, p: f"{'left' if s == 'L' else 'right'}_{p}"),
        {"hips": "pelvis", "left_shoulder": "left_shoulder", "left_elbow": "left_elbow", "left_wrist": "left_wrist",
         "right_hip": "right_hip", "right_ankle": "right_ankle", "right_toe": "right_foot", "spine": "spine1"},
    ),
    "genea": (
        humanoid("b_root", [], ["b_spine0", "b_spine1", "b_spine2", "b_spine3"], ["b_neck0"], "b_head",
                 ["shoulder", "arm", "forearm", "wrist"], ["upleg", "leg", "foot", "toes"],
                 lambda s, p: f"b_{s.lower()}_{p}"),
        {"hips": "b_root", "left_shoulder": "b_l_arm", "left_elbow": "b_l_forearm", "left_wrist": "b_l_wrist",
         "right_knee": "b_r_leg", "right_toe": "b_r_toes", "neck": "b_neck0"},
    ),
    "bandai": (
        humanoid("joint_Root", ["Hips"], ["Spine", "Chest"], ["Neck"], "Head",
                 ["Shoulder", "UpperArm", "LowerArm", "Hand"], ["UpperLeg", "LowerLeg", "Foot", "Toes"],
                 lambda s, p: f"{p}_{s}"),
        {"hips": "Hips", "left_shoulder": "UpperArm_L", "left_elbow": "LowerArm_L", "right_hip": "UpperLeg_R",
         "right_toe": "Toes_R", "spine": "Spine"},
    ),
    "reallusion": (
        humanoid("RL_BoneRoot", ["CC_Base_Hip", "CC_Base_Pelvis"], ["CC_Base_Waist", "CC_Base_Spine01", "CC_Base_Spine02"],
                 ["CC_Base_NeckTwist01", "CC_Base_NeckTwist02"], "CC_Base_Head",
                 ["Clavicle", "Upperarm", "Forearm", "Hand"], ["Thigh", "Calf", "Foot", "ToeBase"],
                 lambda s, p: f"CC_Base_{s}_{p}"),
        {"hips": "CC_Base_Hip", "left_shoulder": "CC_Base_L_Upperarm", "left_knee": "CC_Base_L_Calf",
         "neck": "CC_Base_NeckTwist01", "right_toe": "CC_Base_R_ToeBase"},
    ),
}


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_naming_schemes(scheme):
    sk, expected = SCHEMES[scheme]
    roles = find_roles(sk)
    assert set(roles) == set(ROLE_NAMES)
    for role, joint in expected.items():
        assert sk.names[roles[role]] == joint, role


def test_cmu_bvh_and_asf_roles(cmu_dir):
    bvh = load_motion(cmu_dir / "01_01.bvh").skeleton  # cgspeed naming
    r = find_roles(bvh)
    assert bvh.names[r["left_shoulder"]] == "LeftArm" and bvh.names[r["left_hip"]] == "LeftUpLeg"
    assert bvh.names[r["right_toe"]] == "RightToeBase" and bvh.names[r["hips"]] == "Hips"
    b131 = load_motion(cmu_dir / "131_01.bvh").skeleton  # anatomical naming
    r = find_roles(b131)
    assert b131.names[r["left_elbow"]] == "LeftElbow" and b131.names[r["right_ankle"]] == "RightAnkle"
    asf = load_motion(cmu_dir / "16_15.amc").skeleton
    r = find_roles(asf)
    assert asf.names[r["left_elbow"]] == "lradius" and asf.names[r["left_wrist"]] == "lwrist"
    assert asf.names[r["right_knee"]] == "rtibia" and asf.names[r["hips"]] == "root"


def test_real_reallusion_and_bandai_roles():
    cc = load_motion(shared_data("mocap", "cmu-reallusion", "002_01.bvh")).skeleton
    r = find_roles(cc)
    assert cc.names[r["left_toe"]] == "CC_Base_L_ToeBase" and cc.names[r["left_knee"]] == "CC_Base_L_Calf"
    bn = load_motion(shared_data("mocap", "bandai-namco-1", "dataset-1_run_normal_001.bvh")).skeleton
    r = find_roles(bn)
    assert bn.names[r["hips"]] == "Hips" and bn.names[r["right_wrist"]] == "Hand_R"


def test_missing_roles_error_lists_them_and_the_fix():
    sk = chain_skeleton([("Base", None), ("Mid", "Base"), ("Tip", "Mid")])
    with pytest.raises(RolesNotFoundError) as info:
        find_roles(sk)
    msg = str(info.value)
    assert "left_ankle" in msg and "head" in msg and "--roles" in msg and "roles:" in msg


def test_yaml_override(tmp_path):
    sk = chain_skeleton([("Base", None), ("Mid", "Base"), ("Tip", "Mid")])
    f = tmp_path / "roles.yaml"
    f.write_text("roles:\n  head: Tip\n  hips: Base\n")
    roles = find_roles(sk, overrides=load_role_map(f), required=["head", "hips"])
    assert roles["head"] == 2 and roles["hips"] == 0
    f.write_text("roles:\n  head: Nope\n")
    with pytest.raises(ConfigError, match="no joint named 'Nope'"):
        find_roles(sk, overrides=load_role_map(f))
    f.write_text("roles:\n  noggin: Tip\n")
    with pytest.raises(ConfigError, match="unknown role"):
        load_role_map(f)
    f.write_text("roles: [unclosed\n")
    with pytest.raises(ConfigError, match="line"):
        load_role_map(f)


def test_role_map_errors_name_the_file_line_and_key(tmp_path, cmu_dir):
    from evalkit.cli import main

    f = tmp_path / "roles.yaml"
    f.write_bytes(b"roles:\n  left_ankle: Le\xfftFoot\n")
    with pytest.raises(FileFormatError, match=r"roles.yaml, line 2: byte 0xff is not UTF-8; expected UTF-8 text"):
        load_role_map(f)
    assert main(["info", str(cmu_dir / "131_01.bvh"), "--roles", str(f)]) == 2
    f.write_text("roles:\n  left_ankle: 5\n")
    with pytest.raises(ConfigError, match=r"roles.yaml: roles.left_ankle: expected a joint name, found 5"):
        load_role_map(f)
    f.write_text("roles:\n  head: Nope\n")
    sk = chain_skeleton([("Base", None), ("Mid", "Base"), ("Tip", "Mid")])
    with pytest.raises(ConfigError, match=r"roles.yaml: roles.head: no joint named 'Nope'"):
        find_roles(sk, overrides=load_role_map(f))


def test_human36m_style_pose_estimation_rig_gets_every_role():
    """A Human3.6M-style skeleton from pose estimation (video2bvh-like names): no ``Head``
    joint, the head is the last of the neck chain (``Neck1``), limbs end in ``Site`` joints."""
    spec = [("Hip", None), ("RightHip", "Hip"), ("RightKnee", "RightHip"), ("RightAnkle", "RightKnee"),
            ("RightAnkleEndSite", "RightAnkle"), ("LeftHip", "Hip"), ("LeftKnee", "LeftHip"),
            ("LeftAnkle", "LeftKnee"), ("LeftAnkleEndSite", "LeftAnkle"), ("Spine", "Hip"),
            ("Thorax", "Spine"), ("Neck", "Thorax"), ("Neck1", "Neck"), ("Site", "Neck1"),
            ("LeftShoulder", "Thorax"), ("LeftElbow", "LeftShoulder"), ("LeftWrist", "LeftElbow"),
            ("LeftWristEndSite", "LeftWrist"), ("RightShoulder", "Thorax"), ("RightElbow", "RightShoulder"),
            ("RightWrist", "RightElbow"), ("RightWristEndSite", "RightWrist")]
    sk = chain_skeleton(spec)
    roles = find_roles(sk, strict=False)
    named = {r: sk.names[j] for r, j in roles.items()}
    assert named["neck"] == "Neck" and named["head"] == "Neck1"
    assert named["left_ankle"] == "LeftAnkle" and named["right_wrist"] == "RightWrist"
    assert "Site" not in named.values() and not any("EndSite" in v for v in named.values())
    assert named["hips"] == "Hip"


def test_head_end_site_joint_is_the_head_when_no_head_joint():
    spec = [("Hips", None), ("Spine", "Hips"), ("Neck", "Spine"), ("HeadEndSite", "Neck")]
    sk = chain_skeleton(spec)
    assert sk.names[find_roles(sk, strict=False)["head"]] == "HeadEndSite"


def test_role_matching_is_cached_but_follows_overrides(bvh_motion):
    sk = bvh_motion.skeleton
    a = find_roles(sk, strict=False)
    b = find_roles(sk, overrides={"head": "Neck"}, strict=False)
    assert sk.names[a["head"]] == "Head" and sk.names[b["head"]] == "Neck"
    a["head"] = -5  # the caller's copy; the cache is unaffected
    assert find_roles(sk, strict=False)["head"] == sk.index("Head")
