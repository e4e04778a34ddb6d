"""Kovar point-cloud distance on real CMU capture: closed form vs the per-pair definition."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.motion import load_motion, resample
from evalkit.motion.planar import align_2d, apply_2d
from evalkit.synth.distance import (
    joint_weights,
    pair_distance,
    point_cloud_distance,
)


@pytest.fixture(scope="module")
def clips(cmu_dir):
    walk = resample(load_motion(cmu_dir / "16_15.amc"), 60.0)
    run = resample(load_motion(cmu_dir / "09_06-run.amc"), 60.0)
    return walk, run


def _cloud(m, i, k, w):
    return m.positions[i:i + k][:, w > 0].reshape(-1, 3)


def test_matrix_matches_per_pair_definition(clips):
    walk, run = clips
    w = joint_weights(walk.skeleton)
    k = 12
    D, al = point_cloud_distance(walk.positions, run.positions, w, k, return_alignment=True, block=37)
    assert D.shape == (walk.n_frames - k + 1, run.n_frames - k + 1)
    rng = np.random.default_rng(1)
    for i, j in zip(rng.integers(0, D.shape[0], 15), rng.integers(0, D.shape[1], 15)):
        p, q = _cloud(walk, i, k, w), _cloud(run, j, k, w)
        assert D[i, j] == pytest.approx(pair_distance(p, q), rel=1e-9, abs=1e-9)
        th, tx, tz = align_2d(p, q)
        assert al.theta[i, j] == pytest.approx(th, abs=1e-9)
        assert (al.tx[i, j], al.tz[i, j]) == pytest.approx((tx, tz), abs=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 7, 20, 33])
def test_every_window_length_matches_the_definition(clips, k):
    # window sums are built from sums over 1, 2, 4, ... frames: every binary pattern of k
    walk, run = clips
    w = joint_weights(walk.skeleton)
    for align in (True, False):
        D = point_cloud_distance(walk.positions[:90], run.positions[:70], w, k, align=align, block=16)
        assert D.shape == (91 - k, 71 - k)
        for i, j in ((0, 0), (5, 11), (90 - k, 70 - k), (40 - k // 2, 3)):
            assert D[i, j] == pytest.approx(pair_distance(_cloud(walk, i, k, w), _cloud(run, j, k, w), align=align), abs=1e-9)


def test_alignment_recovers_a_known_rigid_motion(clips):
    walk, _ = clips
    w = joint_weights(walk.skeleton)
    moved = apply_2d(walk.positions, 0.7, 3.0, -2.0)
    # B = A moved; aligning B onto A must undo the move and give distance ~0 on the diagonal.
    D, al = point_cloud_distance(walk.positions[:60], moved[:60], w, 10, return_alignment=True)
    assert np.diag(D).max() < 1e-6
    back = apply_2d(moved[5], al.theta[5, 5], al.tx[5, 5], al.tz[5, 5])
    np.testing.assert_allclose(back, walk.positions[5], atol=1e-6)
    # without alignment the same pair is far apart
    D0 = point_cloud_distance(walk.positions[:60], moved[:60], w, 10, align=False)
    assert np.diag(D0).min() > 0.5


def test_distance_is_invariant_to_heading_and_position_but_not_height(clips):
    walk, run = clips
    w = joint_weights(walk.skeleton)
    D = point_cloud_distance(walk.positions, run.positions, w, 8)
    D2 = point_cloud_distance(walk.positions, apply_2d(run.positions, -1.3, 10.0, 4.0), w, 8)
    np.testing.assert_allclose(D, D2, atol=1e-7)
    lifted = run.positions + np.array([0.0, 0.2, 0.0])
    D3 = point_cloud_distance(walk.positions, lifted, w, 8)
    assert (D3 > D).mean() > 0.5


def test_weights_select_joints(clips):
    walk, run = clips
    sk = walk.skeleton
    w = joint_weights(sk, {"lfemur": 1.0, "ltibia": 1.0, "lfoot": 2.0})
    assert w.sum() == 4.0 and w[sk.index("lfoot")] == 2.0
    assert joint_weights(sk, "roles").sum() == 18  # the 18 semantic roles of a CMU skeleton
    paths = joint_weights(sk)  # ... plus the joints on the way to them, not hands/fingers
    assert paths.sum() == 25 and paths[sk.index("lclavicle")] == 1 and paths[sk.index("lfingers")] == 0
    D = point_cloud_distance(walk.positions, run.positions, w, 5)
    sub = walk.positions[:, [sk.index("lfemur"), sk.index("ltibia"), sk.index("lfoot")]]
    sub_b = run.positions[:, [sk.index("lfemur"), sk.index("ltibia"), sk.index("lfoot")]]
    D2 = point_cloud_distance(sub, sub_b, np.array([1.0, 1.0, 2.0]), 5)
    np.testing.assert_allclose(D, D2)


def test_bad_input_is_reported(clips):
    walk, run = clips
    with pytest.raises(InputError, match="shorter than"):
        point_cloud_distance(walk.positions[:5], run.positions, np.ones(31), 10)
    with pytest.raises(InputError, match="non-negative"):
        point_cloud_distance(walk.positions, run.positions, -np.ones(31), 10)
    with pytest.raises(InputError, match="no joint named"):
        joint_weights(walk.skeleton, {"nose": 1.0})
    with pytest.raises(InputError, match="scheme"):
        joint_weights(walk.skeleton, "heavy")
