"""Preparing clips for a graph: retargeting by joint name, grounding, body-part chains, gait phase."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.motion import load_motion, resample
from evalkit.synth.bodyparts import SPLIT_PROFILES, kinematic_chains, split_profile
from evalkit.synth.bpmg import stance_side
from evalkit.synth.clips import bundled_locomotion, clip_label, ground, joint_correspondence, prepare_clips, retarget
from evalkit.synth.gait import foot_contacts
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def bundled():
    return prepare_clips(bundled_locomotion())


def _bone_lengths(m):
    pos = m.positions
    par = m.skeleton.parents
    child = np.arange(1, m.n_joints)
    return np.linalg.norm(pos[:, child] - pos[:, par[child]], axis=-1)


def test_bundled_clips_share_one_skeleton_fps_and_floor(bundled):
    walk, slow, run = bundled
    assert [m.name for m in bundled] == ["16_15", "07_05-walk", "09_06-run"]
    assert all(m.fps == 60.0 and m.skeleton is walk.skeleton for m in bundled)
    # subjects 7 and 9 were retargeted onto subject 16's bones: lengths are 16's on every frame
    rest = np.linalg.norm(walk.skeleton.offsets[1:], axis=1)
    for m in (slow, run):
        assert m.meta["retargeted_from"]["matched"] == 31
        np.testing.assert_allclose(_bone_lengths(m), np.broadcast_to(rest, (m.n_frames, 30)), atol=1e-9)
    # grounded: the feet touch y = 0 (low percentile), the hips are about a leg length up
    for m in bundled:
        feet = m.positions[:, [4, 5, 9, 10], 1]
        assert abs(np.percentile(feet, 2)) < 1e-6
        assert 0.8 < np.median(m.positions[:, 0, 1]) < 1.1
    # the run moves about three times faster than the walks (m/s)
    speed = [np.linalg.norm(np.diff(m.positions[:, 0, [0, 2]], axis=0), axis=1).mean() * m.fps for m in bundled]
    assert speed[2] > 2.5 * speed[0] and speed[2] > 2.5 * speed[1]
    assert [clip_label(m.name) for m in bundled] == ["walk", "slow walk", "run"]


def test_retarget_preserves_the_pose_shape(cmu_dir, bundled):
    src = resample(load_motion(cmu_dir / "07_05-walk.amc"), 60.0)
    out = retarget(src, bundled[0].skeleton)
    # joint directions (unit bone vectors) are the source's: rotations were copied in world space
    def dirs(m):
        pos = m.positions
        par = m.skeleton.parents
        v = pos[:, 1:] - pos[:, par[1:]]
        return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)

    d_src, d_out = dirs(src), dirs(out)
    moving = np.linalg.norm(bundled[0].skeleton.offsets[1:], axis=1) > 1e-6
    angle = np.degrees(np.arccos(np.clip(np.sum(d_src * d_out, axis=-1)[:, moving], -1, 1)))
    # the bones point the same way up to the differences of the two subjects' rest directions
    # (constant over the clip, a few degrees for most bones)
    assert np.median(angle) < 3.0 and angle.max() < 20.0
    np.testing.assert_allclose(np.ptp(angle, axis=0), 0.0, atol=1e-3)
    assert retarget(out, out.skeleton) is out


def test_retarget_rejects_unrelated_rigs(bundled, bvh_motion):
    from dataclasses import replace

    renamed = replace(bvh_motion.skeleton, names=tuple(f"x{i}" for i in range(bvh_motion.n_joints)),
                      parents=bvh_motion.skeleton.parents.copy())
    renamed = replace(renamed, parents=np.r_[-1, np.zeros(bvh_motion.n_joints - 1, dtype=int)])
    with pytest.raises(InputError, match="root"):
        retarget(bundled[0], renamed)
    # cgspeed BVH and ASF share the hierarchy, so joints correspond by index
    corr = joint_correspondence(bvh_motion.skeleton, bundled[0].skeleton)
    assert corr.tolist() == list(range(31))


def test_prepare_clips_errors(cmu_dir, tmp_path):
    with pytest.raises(InputError, match="unique"):
        prepare_clips([cmu_dir / "16_15.amc", cmu_dir / "16_15.amc"])
    with pytest.raises(InputError, match="no such file"):
        prepare_clips([tmp_path / "missing.bvh"])


def test_reallusion_rigs_with_and_without_root_bone():
    d = shared_data("mocap", "cmu-reallusion")
    clips = prepare_clips([d / "007_01.bvh", d / "007_04.bvh"])
    a, b = clips
    assert a.skeleton is b.skeleton and a.skeleton.names[0] == "CC_Base_Hip"  # 007_04's rig (no RL_BoneRoot)
    assert a.meta["retargeted_from"]["root"] == "RL_BoneRoot"
    # same character: retargeting 007_01 changes nothing but the dropped root bone
    orig = load_motion(d / "007_01.bvh")
    orig = resample(orig, 60.0)
    idx = [orig.skeleton.names.index(n) for n in a.skeleton.names]
    shift = np.array([0.0, a.meta["grounded_shift_m"], 0.0])
    np.testing.assert_allclose(a.positions, orig.positions[:, idx] + shift, atol=1e-6)
    # 007_04 stores its root relative to the root OFFSET; grounding puts both on one floor
    for m in clips:
        assert 0.8 < np.median(m.positions[:, 0, 1]) < 1.2


def test_chains_partition_the_skeleton(bundled):
    sk = bundled[0].skeleton
    chains = kinematic_chains(sk)
    all_j = np.sort(np.concatenate(list(chains.values())))
    assert all_j.tolist() == list(range(sk.n_joints))
    names = {c: [sk.names[j] for j in js] for c, js in chains.items()}
    assert names["root"] == ["root"]
    assert names["lower_left"][:2] == ["lhipjoint", "lfemur"] and "ltoes" in names["lower_left"]
    assert names["upper_right"][0] == "rclavicle" and "rwrist" in names["upper_right"]
    assert names["head"] == ["lowerneck", "upperneck", "head"]
    assert names["trunk"] == ["lowerback", "upperback", "thorax"]
    for prof, groups in SPLIT_PROFILES.items():
        parts = split_profile(sk, prof)
        assert len(parts) == len(groups) and 2 <= len(parts) <= 5
        assert parts[0].is_lower and parts[0].joints[0] == 0
        assert np.sort(np.concatenate([p.joints for p in parts])).tolist() == list(range(sk.n_joints))
    with pytest.raises(InputError, match="profile"):
        split_profile(sk, "sp9")


def test_stance_side_rules():
    L, R, B, N = (1, 0), (0, 1), (1, 1), (0, 0)
    # walk: L stance, double support, R stance ... -> the supporting leg switches at touch-down
    walk = np.array([L, L, B, B, R, R, B, L, L])
    assert stance_side(walk).tolist() == [0, 0, 1, 1, 1, 1, 0, 0, 0]
    # run starting in flight: flight frames belong to the leg that lands next
    run = np.array([N, N, R, R, N, N, L, L, N])
    assert stance_side(run).tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 1]


def test_real_walk_alternates_supporting_legs(bundled):
    contacts, source = foot_contacts(bundled[0])
    side = stance_side(contacts)
    switches = np.flatnonzero(np.diff(side) != 0)
    # 3.9 s of walking at about two steps per second: 5-9 alternations, never a lone frame
    assert 5 <= len(switches) <= 9
    assert np.diff(switches).min() > 10
    assert source in ("evalkit.features", "synth height+speed rule")


def test_ground_shifts_only_vertically(bundled):
    m = bundled[0]
    tr = m.translations.copy()
    tr[:, 0, 1] += 0.3
    lifted = m.with_(translations=tr)
    g = ground(lifted)
    np.testing.assert_allclose(g.positions, m.positions, atol=1e-9)


def test_trajectory_below_the_root_survives_retargeting():
    """Bandai Namco rigs carry the trajectory on the hips (position channels) under a static
    root joint: retargeting must keep it, and only real bones count as rigid."""
    from evalkit.synth import ClipSet, build_smg, synthesize_transition

    d = shared_data("mocap", "bandai-namco-1")
    paths = [d / "dataset-1_walk_normal_001.bvh", d / "dataset-1_run_normal_001.bvh"]
    cs = ClipSet.from_clips(paths)
    walk, run = cs.clips
    assert run.meta["retargeted_from"]["root"] == "joint_Root"
    orig = resample(load_motion(paths[1]), 60.0)
    hips = orig.skeleton.names.index("Hips")

    def path_len(m, j):
        return np.linalg.norm(np.diff(m.positions[:, j, [0, 2]], axis=0), axis=1).sum()

    assert path_len(run, hips) == pytest.approx(path_len(orig, hips), rel=0.02)
    rigid = cs.rigid_bones()
    assert not rigid[0] and not rigid[hips] and rigid.sum() == cs.skeleton.n_joints - 2
    smg = build_smg(cs, threshold=0.3)
    motion, man = synthesize_transition(smg, 0, 1, 2.0, skate=False)
    assert man["checks"]["ok"], man["checks"]
    assert path_len(motion, hips) > 1.0  # the body travels
