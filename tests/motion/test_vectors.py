"""The fast vector lengths give numpy.linalg.norm's numbers bit for bit (scores stay identical)."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.motion.vectors import norm, norm_xz


def test_lengths_of_real_joint_motion_equal_numpy_bit_for_bit(bvh_motion):
    pos = bvh_motion.positions
    for x in (pos, np.diff(pos, n=3, axis=0), pos[:, :, [0, 2]], pos.transpose(1, 0, 2)[:, ::3]):
        assert np.array_equal(norm(x), np.linalg.norm(x, axis=-1))
    step = np.diff(pos, axis=0)
    assert np.array_equal(norm_xz(step), np.linalg.norm(step[..., [0, 2]], axis=-1))


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 9])
def test_any_width_of_vector_matches_numpy(k):
    x = np.random.default_rng(k).normal(size=(50, 7, k)) * 10.0 ** np.arange(-3, 4)[:, None]
    assert np.array_equal(norm(x), np.linalg.norm(x, axis=-1))
    assert norm(x).shape == (50, 7)


def test_special_values_keep_their_meaning():
    x = np.array([[3.0, 4.0, 0.0], [np.nan, 0.0, 0.0], [np.inf, 1.0, 0.0], [0.0, 0.0, 0.0]])
    assert np.array_equal(norm(x), np.array([5.0, np.nan, np.inf, 0.0]), equal_nan=True)
    assert norm(np.zeros((0, 3))).shape == (0,)
