"""Every metric runs on real clips of several rigs and frame rates from ../shared/data/mocap."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import shared_data
from evalkit.features.reference import reference_from_motions
from evalkit.features.score import score_motion
from evalkit.motion import load_motion

CLIPS = [
    ("cmu-bvh", "131_02.bvh"),  # 120 fps cgspeed BVH, 31 joints
    ("cmu-asfamc", "11_01.amc"),  # ASF/AMC, 120 fps
    ("cmu-asfamc", "135_06-martialArts.amc"),
    ("cmu-reallusion", "007_12.bvh"),  # 60 fps, ~100 joints, T-pose at frame 0, 2 % floor slope
    ("cmu-reallusion", "002_02.bvh"),
    ("bandai-namco-1", "dataset-1_walk_normal_001.bvh"),  # 30 fps, cm, 6 channels per joint
    ("bandai-namco-1", "dataset-1_run_old_001.bvh"),
]
METRICS = ["ground_y", "penetration_mean", "floating_mean", "contact_frac", "skate_distance_mean",
           "skate_fraction", "skating_ratio", "skating_ratio_20fps", "zmp_outside_mean", "zmp_cart_outside_mean",
           "accel_mean", "jerk_mean", "bone_drift_max", "kinetic_h", "kinetic_v", "energy_expenditure",
           "hellinger_speed", "hellinger_jerk", "angle_outlier_frac", "fmd_ref_mean"]


@pytest.fixture(scope="module")
def reference(cmu_dir):
    return reference_from_motions([load_motion(cmu_dir / n) for n in ("16_15.amc", "07_05-walk.amc", "131_03.bvh")])


@pytest.mark.parametrize("folder,name", CLIPS)
def test_every_metric_runs(folder, name, reference):
    m = load_motion(shared_data("mocap", folder, name))
    row = score_motion(m, reference=reference)
    for k in METRICS:
        assert np.isfinite(row[k]), (name, k)
    assert 0.15 < row["contact_frac"] < 0.95
    assert row["penetration_mean"] < 0.02 and row["floating_mean"] < 0.1
    assert 1.3 < row["height_m"] < 2.0
    if folder == "cmu-reallusion" and name.startswith("007"):
        assert row["dropped_frames"] == 1 and row["ground_slope"] > 0.01
    if folder == "bandai-namco-1":
        assert row["fps"] == 30.0
