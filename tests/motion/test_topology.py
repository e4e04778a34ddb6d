"""The default SMPL-family skeleton: its bone lengths are those measured from the bundled CMU capture."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.motion import load_motion
from evalkit.motion import topology as topo

ASF_CLIPS = ("07_05-walk.amc", "09_06-run.amc", "131_04-dance.amc", "135_06-martialArts.amc", "16_15.amc")
# default-skeleton bone -> the CMU joint whose incoming bone it is (left and right averaged)
MEASURED = {"pelvis_hip": "femur", "thigh": "tibia", "shin": "foot", "foot": "toes", "spine1": "upperback",
            "spine2": "thorax", "spine3": "lowerneck", "lower_neck": "upperneck", "upper_neck": "head",
            "clavicle": "humerus", "upper_arm": "radius", "forearm": "wrist", "hand": "hand"}


def test_default_bone_lengths_are_the_cmu_means(cmu_dir):
    lengths: dict[str, list[float]] = {}
    for clip in ASF_CLIPS:
        sk = load_motion(cmu_dir / clip).skeleton
        bl = dict(zip(sk.names, sk.bone_lengths()))
        for bone, joint in MEASURED.items():
            vals = [bl[joint]] if joint in bl else [bl["l" + joint], bl["r" + joint]]
            lengths.setdefault(bone, []).append(float(np.mean(vals)))
    for bone, vals in lengths.items():
        assert topo._L[bone] == pytest.approx(np.mean(vals), abs=1e-3), bone


@pytest.mark.parametrize("key", list(topo.TOPOLOGIES))
def test_default_skeleton_is_an_adult_in_a_t_pose(key):
    rest = topo.default_rest_joints(key)
    names = topo.TOPOLOGIES[key][0]
    height = rest[names.index("head"), 1] - rest[names.index("left_foot"), 1]
    assert 1.4 < height < 1.7  # head joint to ball of foot; ~1.75 m standing
    assert rest[names.index("left_wrist"), 0] > 0.5 and rest[names.index("right_wrist"), 0] < -0.5
    assert rest[names.index("left_foot"), 2] > 0.05  # feet forward (+Z)
