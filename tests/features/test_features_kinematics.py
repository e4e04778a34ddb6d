"""Kinematics, distributions against a reference, kinetic features / FMDistance, pop removal."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from features_inject import jitter
from evalkit.features.body import body_index
from evalkit.features.kinematics import (
    bone_length_drift, genea_accel_jerk, hellinger, jerk_per_frame, joint_angles,
)
from evalkit.features.kinetic import fm_distance, fm_distances, fm_vector, kinetic_features
from evalkit.features.reference import reference_from_motions
from evalkit.features.score import score_motion
from evalkit.motion import load_motion, resample
from evalkit.motion import quat

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference(cmu_dir):
    """Natural reference: the bundled CMU clips except the walk under test (16_15)."""
    names = ("01_01.bvh", "07_05-walk.amc", "09_06-run.amc", "131_01.bvh", "131_03.bvh")
    clips = [load_motion(cmu_dir / n) for n in names]
    return reference_from_motions(clips)


def test_jitter_raises_jerk_monotonically_with_the_expected_magnitude(walk_motion):
    base_acc, base_jerk = genea_accel_jerk(walk_motion.positions, walk_motion.fps)
    assert 500 < base_jerk < 5000 and 5 < base_acc < 50
    jerks = [base_jerk]
    for sigma in (0.0005, 0.002, 0.008):
        m = jitter(walk_motion, sigma)
        _, j = genea_accel_jerk(m.positions, m.fps)
        jerks.append(j)
    assert all(a < b for a, b in zip(jerks[:-1], jerks[1:]))
    # i.i.d. noise σ per axis on every joint (the root carries it to all): the 3rd difference
    # has variance 20 σ² per axis, its 3-D norm has mean sqrt(20) σ × E|χ₃| = sqrt(20) σ × 1.596
    expected = np.sqrt(20) * 0.008 * 1.5958 * walk_motion.fps**3
    assert jerks[-1] == pytest.approx(np.hypot(expected, base_jerk), rel=0.05)
    tr = jerk_per_frame(jitter(walk_motion, 0.002).positions, walk_motion.fps)
    assert tr.shape == (walk_motion.n_frames,)


def test_hellinger_distance_grows_with_jitter(walk_motion, reference):
    row0 = score_motion(walk_motion, reference=reference)
    rows = [score_motion(jitter(walk_motion, s), reference=reference) for s in (0.001, 0.004, 0.016)]
    for key in ("hellinger_accel", "hellinger_jerk"):
        vals = [row0[key]] + [r[key] for r in rows]
        assert all(a < b for a, b in zip(vals[:-1], vals[1:])), (key, vals)
        assert vals[0] < 0.35 and vals[-1] > 0.8
    assert hellinger([1, 2, 3], [1, 2, 3]) == pytest.approx(0.0, abs=1e-12)
    assert hellinger([1, 0], [0, 1]) == pytest.approx(1.0)


def test_bent_knee_beyond_reference_range_is_an_angle_outlier(walk_motion, reference):
    body = body_index(walk_motion)
    base = score_motion(walk_motion, reference=reference)
    assert base["angle_outlier_frac"] < 0.05
    knee = body.roles["left_knee"]
    n = walk_motion.n_frames
    a, b = n // 4, n // 4 + n // 5  # 20 % of the frames
    rot = walk_motion.rotations.copy()
    fracs = [base["angle_outlier_frac"]]
    for deg in (90.0, 120.0, 150.0):  # extra knee flexion (about the knee's x axis in this rig)
        extra = quat.euler_to_quat(np.array([[deg, 0.0, 0.0]]), "xyz")[0]
        r2 = rot.copy()
        r2[a:b, knee] = quat.multiply(rot[a:b, knee], extra)
        m = walk_motion.with_(rotations=r2)
        row = score_motion(m, reference=reference)
        fracs.append(row["angle_outlier_frac"])
        ang = joint_angles(np.asarray(m.positions), body)["left_knee"]
        assert ang[a:b].max() < 130 - deg / 2  # the injected frames are deeply flexed
    assert all(x <= y for x, y in zip(fracs[:-1], fracs[1:]))
    # at 150° extra flexion every bent frame is beyond the reference's deepest knee flexion
    assert fracs[-1] - fracs[0] == pytest.approx((b - a) / n, abs=0.02)
    assert row["angle_outlier_max_deg"] > 10


def test_bone_length_drift_of_stretched_positions(walk_motion):
    pos = np.array(walk_motion.positions)
    parents = walk_motion.skeleton.parents
    assert bone_length_drift(pos, parents)[0] < 1e-6  # rotation data: rigid bones
    body = body_index(walk_motion)
    knee, ankle = body.roles["left_knee"], body.roles["left_ankle"]
    chain = [ankle] + walk_motion.skeleton.descendants(ankle)
    stretch = 1.0 + 0.1 * np.sin(np.linspace(0, 6 * np.pi, pos.shape[0]))  # shank ±10 %
    shank = pos[:, ankle] - pos[:, knee]
    pos[:, chain] += ((stretch[:, None] - 1.0) * shank)[:, None, :]
    drift_max, _ = bone_length_drift(pos, parents)
    assert drift_max == pytest.approx(0.2, rel=0.03)


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_kinetic", REPO / "bench" / "bench_kinetic.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_kinetic_features_equal_the_fixed_loop_and_differ_from_the_buggy_one(walk_motion):
    bench = _bench_module()
    pos = np.asarray(walk_motion.positions)[:120:2, :8]  # 60 frames, 8 joints keeps the loop fast
    fps = walk_motion.fps / 2
    ours = kinetic_features(pos, fps)
    fixed = bench.kinetic_features_loop(pos, fps, precedence_bug=False)
    buggy = bench.kinetic_features_loop(pos, fps, precedence_bug=True)
    assert ours == pytest.approx(fixed, rel=1e-10, abs=1e-12)
    assert np.allclose(buggy[:, :2], fixed[:, :2])
    assert not np.allclose(buggy[:, 2], fixed[:, 2], rtol=0.1)
    # units: energy expenditure is an acceleration; a uniform walk has ~1-20 m/s² at the joints
    assert (ours[:, 2] > 0.1).all() and (ours[:, 2] < 100).all()


def test_fm_distance(walk_motion, cmu_dir):
    body = body_index(walk_motion)
    v = fm_vector(np.asarray(walk_motion.positions), walk_motion.fps, body)
    assert np.isfinite(v).sum() >= 15
    assert fm_distance(v, v) == 0.0
    # frame rate does not change the vector (energy integrated over time)
    m30 = resample(walk_motion, 30.0)
    v30 = fm_vector(np.asarray(m30.positions), 30.0, body)
    assert fm_distance(v, v30) < 0.1
    run = load_motion(cmu_dir / "09_06-run.amc")
    slow = load_motion(cmu_dir / "07_05-walk.amc")
    vr = fm_vector(np.asarray(run.positions), run.fps, body_index(run))
    vs = fm_vector(np.asarray(slow.positions), slow.fps, body_index(slow))
    assert fm_distance(v, vr) == pytest.approx(fm_distance(vr, v))
    assert fm_distance(v, vs) > 0.5
    # to several references at once: each the pairwise distance over the entries both have,
    # NaN for a reference with none in common
    blind = np.full_like(v, np.nan)
    half = v.copy()
    half[: len(v) // 2] = np.nan
    d = fm_distances(v, np.stack([vr, vs, half, blind]))
    assert d[:2] == pytest.approx([fm_distance(v, vr), fm_distance(v, vs)], rel=1e-12)
    assert d[2] == 0.0 and np.isnan(d[3])
    assert np.linalg.norm(v[np.isfinite(v) & np.isfinite(vr)] - vr[np.isfinite(v) & np.isfinite(vr)]) == pytest.approx(d[0], rel=1e-12)


def test_noisy_fingers_leave_the_body_jerk_alone_and_show_in_the_hands_group(cmu_dir):
    """Real capture with its finger joints shaken (random rotations each frame, as noisy finger
    capture looks): the body's jerk is unchanged to the last digit, the hands' group rises."""
    from evalkit.features.body import hand_joints
    from evalkit.motion import find_roles

    for name in ("01_01.bvh", "16_15.amc"):
        m = load_motion(cmu_dir / name)
        hands = hand_joints(m.skeleton.parents, find_roles(m.skeleton))
        names = [m.skeleton.names[j].lower() for j in hands]
        assert hands.size >= 2 and all(("hand" in n or "finger" in n or "thumb" in n) for n in names), names
        rng = np.random.default_rng(0)
        rot = m.rotations.copy()
        from scipy.spatial.transform import Rotation

        noise = Rotation.from_rotvec(rng.normal(0, 0.3, (m.n_frames * hands.size, 3))).as_quat()
        noise = noise.reshape(m.n_frames, hands.size, 4)  # scalar-last, as evalkit stores them
        rot[:, hands] = quat.multiply(rot[:, hands], noise)
        clean, shaken = score_motion(m), score_motion(m.with_(rotations=rot))
        assert shaken["jerk_mean"] == pytest.approx(clean["jerk_mean"], rel=1e-9)
        assert shaken["accel_mean"] == pytest.approx(clean["accel_mean"], rel=1e-9)
        assert shaken["jerk_mean_hands"] > 2 * clean["jerk_mean_hands"]


def test_a_rig_without_joints_below_the_wrists_has_no_hands_group(cmu_dir):
    from evalkit.features.body import hand_joints

    parents = np.array([-1, 0, 1, 2])
    assert hand_joints(parents, {"left_wrist": 3}).size == 0
    assert hand_joints(parents, {"left_wrist": 1}).tolist() == [2, 3]
    assert hand_joints(parents, {}).size == 0
