"""Canonical joints through roles, normalisations, geometric features and PFC on real capture."""

from dataclasses import replace

import numpy as np
import pytest

from evalkit.distribution.geometric import N_FEATURES, geometric_features
from evalkit.distribution.physical import l1_divergence, pfc
from evalkit.distribution.canonical import CANONICAL_ROLES, IDX, canonical_positions, frame_poses, windows
from evalkit.errors import RolesNotFoundError
from evalkit.motion import load_motion


def _moved(m, yaw_deg=70.0, shift=(3.0, 0.0, -2.0)):
    """The same motion turned about the vertical and walked elsewhere (root rotation and position)."""
    from scipy.spatial.transform import Rotation

    r = Rotation.from_euler("y", yaw_deg, degrees=True)
    rot = m.rotations.copy()
    rot[:, 0] = (r * Rotation.from_quat(m.rotations[:, 0])).as_quat()
    tr = m.translations.copy()
    tr[:, 0] = r.apply(tr[:, 0]) + np.asarray(shift)  # a writable copy: scipy refuses read-only input
    return replace(m, rotations=rot, translations=tr)


def test_canonical_joints_on_asf_amc_and_bvh(cmu_dir):
    for name in ("16_15.amc", "131_01.bvh"):
        pos, height, fell_back = canonical_positions(load_motion(cmu_dir / name), 30.0)
        assert pos.shape[1:] == (len(CANONICAL_ROLES), 3)
        assert 1.3 < height < 2.1
        assert fell_back == []
        # head above hips above ankles
        assert (pos[:, IDX["head"], 1] > pos[:, IDX["hips"], 1]).all()
        assert (pos[:, IDX["hips"], 1] > pos[:, IDX["left_ankle"], 1]).all()


def test_windows_and_frame_poses_ignore_where_the_body_is_and_faces(walk_motion):
    pos, h, _ = canonical_positions(walk_motion, 30.0)
    pos2, h2, _ = canonical_positions(_moved(walk_motion), 30.0)
    assert not np.allclose(pos, pos2)
    np.testing.assert_allclose(windows(pos, h, 30, 10), windows(pos2, h2, 30, 10), atol=1e-9)
    np.testing.assert_allclose(frame_poses(pos, h), frame_poses(pos2, h2), atol=1e-9)
    np.testing.assert_allclose(geometric_features(pos, 30.0), geometric_features(pos2, 30.0))
    assert windows(pos, h, 30, 10).shape == ((len(pos) - 30) // 10 + 1, 30, 18, 3)
    assert windows(pos[:20], h, 30, 10).shape[0] == 0


def test_missing_roles_name_the_fix(walk_motion):
    sk = walk_motion.skeleton
    names = ["j%d" % i for i in range(sk.n_joints)]
    m = replace(walk_motion, skeleton=replace(sk, names=names))
    with pytest.raises(RolesNotFoundError, match="--roles"):
        canonical_positions(m, 30.0)


def test_geometric_features_respond_to_speed(cmu_dir):
    m = load_motion(cmu_dir / "09_06-run.amc")
    pos, _, _ = canonical_positions(m, 30.0)
    g = geometric_features(pos, 30.0)
    assert g.shape == (N_FEATURES,) and ((g >= 0) & (g <= 1)).all()
    fast_root = 31  # "root fast" (faster than 2.3 humerus lengths per second)
    assert g[fast_root] > 0.9  # a run
    # the same poses played 4x slower: nothing is fast any more
    slow = np.repeat(pos, 4, axis=0)
    assert geometric_features(slow, 30.0)[fast_root] < g[fast_root]


def test_pfc_rises_when_feet_slide(walk_motion):
    from evalkit.models.corruptions import corrupt

    pos, _, _ = canonical_positions(walk_motion, 30.0)
    skated = corrupt(walk_motion, "foot_skate", 1.0, seed=0, mode="drift").motion
    pos_s, _, _ = canonical_positions(skated, 30.0)
    assert pfc(pos_s, 30.0) > pfc(pos, 30.0) >= 0
    poses = frame_poses(pos, 1.7).reshape(len(pos), -1)
    assert l1_divergence(poses) > 0
    assert l1_divergence(np.repeat(poses[:1], 10, 0)) == pytest.approx(0.0, abs=1e-12)
