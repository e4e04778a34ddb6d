"""Forward kinematics: the quaternion solve of positions agrees with the matrix solve."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.motion import load_motion
from evalkit.motion.fk import MATRIX_FK_MAX_FRAMES, depth_levels, forward_kinematics, global_positions


@pytest.mark.parametrize("name, frames", [("131_01.bvh", None), ("16_15.amc", None), ("01_01.bvh", 200),
                                          ("01_01.bvh", MATRIX_FK_MAX_FRAMES + 1)])
def test_positions_equal_the_matrix_solve_on_real_capture(cmu_dir, name, frames):
    """Both ways of solving (rotation matrices up to MATRIX_FK_MAX_FRAMES, quaternions beyond)."""
    m = load_motion(cmu_dir / name)[:frames]
    pos, rot = forward_kinematics(m)
    fast = global_positions(m)
    assert fast.shape == (m.n_frames, m.n_joints, 3) and fast.flags.c_contiguous
    assert np.abs(fast - pos).max() < 1e-12
    assert np.allclose(np.einsum("fjik,fjil->fjkl", rot, rot), np.eye(3), atol=1e-12)  # rotations stay rotations


@pytest.mark.parametrize("frames", [50, MATRIX_FK_MAX_FRAMES + 50])
def test_quaternions_of_any_length_give_the_same_pose(bvh_motion, frames):
    """Rotations are normalised first (as the matrix solve does): scaling a quaternion is no rotation."""
    m = bvh_motion[:frames]
    scale = np.random.default_rng(0).uniform(0.5, 3.0, size=m.rotations.shape[:2] + (1,))
    scaled = m.with_(rotations=m.rotations * scale)
    assert np.abs(global_positions(scaled) - global_positions(m)).max() < 1e-12


@pytest.mark.parametrize("frames", [20, MATRIX_FK_MAX_FRAMES + 20])
def test_a_moved_joint_moves_exactly_its_descendants(bvh_motion, frames):
    m = bvh_motion[:frames]
    parents = m.skeleton.parents
    j = next(int(k) for joints, _ in depth_levels(parents)[2:] for k in joints if (parents == k).any())
    rot = np.array(m.rotations)
    rot[:, j] = [0.0, np.sin(0.4), 0.0, np.cos(0.4)]  # a different local rotation of joint j
    moved = np.abs(global_positions(m.with_(rotations=rot)) - m.positions).max(axis=(0, 2)) > 1e-9
    below = np.zeros(len(parents), bool)
    for k in range(len(parents)):  # parents come before children
        below[k] = parents[k] >= 0 and (parents[k] == j or below[parents[k]])
    assert moved.any() and np.array_equal(moved, below)


def test_depth_levels_are_found_once_per_rig_and_read_only(bvh_motion):
    parents = bvh_motion.skeleton.parents
    levels = depth_levels(parents)
    assert depth_levels(parents.copy())[0][0] is levels[0][0]  # by content, not by array
    depth = {0: 0}
    for j in range(1, len(parents)):
        depth[j] = depth[int(parents[j])] + 1
    for d, (joints, par) in enumerate(levels, start=1):
        assert sorted(joints.tolist()) == [j for j in depth if depth[j] == d]
        assert (par == parents[joints]).all() and not joints.flags.writeable
