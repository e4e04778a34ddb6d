"""Rigs missing a role lose only the metrics that need it: a rig with no neck or head
joint keeps every metric (the centre of mass estimates them), a rig with no ankles keeps the
metrics that need no feet. Rigs are the bundled CMU capture with joints renamed."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from evalkit.features.batch import BatchOptions, score_file
from evalkit.features.score import analyse, score_analysis, traces_table
from evalkit.motion import find_roles


def renamed(motion, mapping):
    sk = motion.skeleton
    names = tuple(mapping.get(n, n) for n in sk.names)
    return motion.with_(skeleton=replace(sk, names=names))


def test_rig_without_neck_or_head_keeps_every_metric(bvh_motion):
    full = score_analysis(analyse(bvh_motion))
    m = renamed(bvh_motion, {"lowerneck": "bone_a", "Neck": "bone_b", "Head": "bone_c"})
    roles = find_roles(m.skeleton, strict=False)
    assert "neck" not in roles and "head" not in roles
    an = analyse(m)
    row = score_analysis(an)
    assert set(row) == set(full)
    assert any("estimated from the trunk" in n for n in an.notes)
    # metrics that depend neither on roles nor on body height are the full rig's; the height
    # (from the poses instead of the head-to-toe chain) and what scales with it stay close
    for k in ("jerk_mean", "accel_mean", "bone_drift_max"):
        assert math.isclose(row[k], full[k], rel_tol=1e-12, abs_tol=1e-12), k
    assert abs(row["height_m"] - full["height_m"]) < 0.15 * full["height_m"]
    for k in ("skate_distance_per_s", "skating_ratio", "penetration_mean", "ground_y"):
        assert np.isfinite(row[k]), k
    # the centre of mass with an estimated head stays within a few cm of the real one
    com_full = traces_table(analyse(bvh_motion))[["com_x", "com_y", "com_z"]].to_numpy()
    com_est = traces_table(an)[["com_x", "com_y", "com_z"]].to_numpy()
    assert np.abs(com_full - com_est).max() < 0.05
    assert 0 <= row["zmp_outside_frac"] <= 1


def test_rig_without_ankles_keeps_the_metrics_that_need_no_feet(bvh_motion):
    m = renamed(bvh_motion, {"LeftAnkle": "bone_l", "RightAnkle": "bone_r", "LeftToe": "bone_lt",
                             "RightToe": "bone_rt"})
    an = analyse(m)
    assert an.track is None and an.physics is None
    row = score_analysis(an)
    assert "skate_distance_per_s" not in row and "zmp_outside_frac" not in row
    assert np.isfinite(row["jerk_mean"]) and np.isfinite(row["kinetic_h"])
    assert any("foot, ground and physics metrics not computed" in n and "ankle" in n for n in an.notes)
    tt = traces_table(an)
    assert tt["skate_left"].isna().all() and np.isfinite(tt["jerk"]).all()


def test_score_file_reports_notes_and_no_error(tmp_path, bvh_motion):
    from evalkit.motion import write_bvh

    m = renamed(bvh_motion, {"lowerneck": "bone_a", "Neck": "bone_b", "Head": "bone_c"})
    p = write_bvh(m[:300], tmp_path / "noneck.bvh")
    row = score_file(p, BatchOptions())
    assert row["error"] == ""
    assert "estimated from the trunk" in row["notes"]
    assert np.isfinite(row["zmp_outside_frac"]) and np.isfinite(row["skate_distance_per_s"])
