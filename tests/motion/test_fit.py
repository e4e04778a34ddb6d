"""Rotations fitted from joint positions (evalkit.motion.fit) on real capture."""

from __future__ import annotations

import numpy as np

from evalkit.motion import quat, write_bvh, load_motion
from evalkit.motion.fit import fit_rotations, motion_from_positions
from evalkit.motion.fk import forward_kinematics


def test_fit_gives_back_every_joint_of_real_capture(walk_motion):
    m = walk_motion
    f = motion_from_positions(m.positions, m.skeleton.names, m.skeleton.parents, m.fps,
                              rest_directions=m.skeleton.offsets)
    assert np.abs(f.positions - m.positions).max() < 1e-6


def test_single_child_joints_have_no_twist(walk_motion):
    """Twist convention: a joint with one child turns by the shortest arc, so the rotation axis
    (in the joint's frame) is normal to the child's rest bone."""
    m = walk_motion
    sk = m.skeleton
    rot, _ = fit_rotations(m.positions, sk.parents, sk.offsets)
    for j in range(sk.n_joints):
        kids = [c for c in sk.children(j) if np.linalg.norm(sk.offsets[c]) > 1e-9]
        if len(kids) != 1:
            continue
        d = sk.offsets[kids[0]] / np.linalg.norm(sk.offsets[kids[0]])
        assert np.abs(rot[:, j, :3] @ d).max() < 1e-9, sk.names[j]


def test_multi_child_joints_recover_the_capture_orientation(walk_motion):
    """With the lower back held still, the CMU root has three rigidly attached bones (two hips, the
    back): the least-squares fit finds the root's true world orientation in every frame."""
    m = walk_motion
    rot = m.rotations.copy()
    rot[:, m.skeleton.index("lowerback")] = [0.0, 0.0, 0.0, 1.0]
    m = m.with_(rotations=rot)
    rot, _ = fit_rotations(m.positions, m.skeleton.parents, m.skeleton.offsets)
    _, world = forward_kinematics(m)
    fitted = quat.to_matrix(rot[:, 0])
    assert np.abs(fitted - world[:, 0]).max() < 1e-6


def test_varying_bone_lengths_are_kept_and_written_to_bvh(tmp_path, walk_motion):
    """Generated motion stretches bones: positions stay exact and the BVH keeps them via position
    channels on the stretched joints."""
    m = walk_motion
    rng = np.random.default_rng(0)
    pos = m.positions.copy()
    pos[:, 1:] += rng.normal(0, 0.01, pos[:, 1:].shape)
    f = motion_from_positions(pos, m.skeleton.names, m.skeleton.parents, m.fps, rest_directions=m.skeleton.offsets)
    assert np.abs(f.positions - pos).max() < 1e-9
    write_bvh(f, tmp_path / "s.bvh")
    back = load_motion(tmp_path / "s.bvh", units="m", up="y")
    assert np.abs(back.positions - pos).max() < 1e-5


def test_without_rest_directions_the_first_frame_is_rest(walk_motion):
    m = walk_motion
    f = motion_from_positions(m.positions, m.skeleton.names, m.skeleton.parents, m.fps)
    assert np.allclose(f.rotations[0, 1:, 3] ** 2, 1.0, atol=1e-9)  # identity below the root
    assert np.abs(f.positions - m.positions).max() < 1e-6


def test_quaternion_positions_equal_matrix_forward_kinematics(bvh_motion):
    from evalkit.motion.fit import quaternion_positions
    from evalkit.motion.fk import forward_kinematics

    assert np.abs(quaternion_positions(bvh_motion) - forward_kinematics(bvh_motion)[0]).max() < 1e-9
