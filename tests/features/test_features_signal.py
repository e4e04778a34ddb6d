"""The fast paths of evalkit.features.signal give scipy's numbers (filters on real capture)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfiltfilt

from evalkit.features.signal import _filter_matrix, _filtfilt, _matrix_is_faster, apply_matrix, lowpass


@pytest.fixture(scope="module")
def joints(bvh_motion):
    """``(frames, 54)`` 18 joints of a real clip (x, y, z), metres."""
    return np.asarray(bvh_motion.positions[:, :18]).reshape(bvh_motion.n_frames, -1)


@pytest.mark.parametrize("frames", [5, 60, 141, 200, 256, 300, 471, 900])
@pytest.mark.parametrize("columns", [1, 6, 54])
def test_lowpass_equals_scipy_sosfiltfilt_at_every_size(joints, frames, columns):
    x = joints[:frames, :columns]
    sos = butter(2, 6.0 / 60.0, output="sos")
    want = sosfiltfilt(sos, x, axis=0, padlen=min(frames - 1, 18))
    got = lowpass(x, 120.0, 6.0)
    assert got.shape == x.shape and got.flags.c_contiguous
    assert np.abs(got - want).max() <= 1e-12 * max(1.0, np.abs(want).max())


def test_both_filter_paths_agree_and_long_clips_avoid_the_quadratic_matrix(joints):
    x = joints[:200]
    m = _filter_matrix(2, 0.1, 200, 18)
    sos = butter(2, 0.1, output="sos")
    assert np.abs(apply_matrix(m, x) - _filtfilt(sos, 0.1, 2, x, 18)).max() < 1e-12
    assert _matrix_is_faster(200, 6) and _matrix_is_faster(141, 54)
    assert not _matrix_is_faster(471, 54) and not _matrix_is_faster(300, 24) and not _matrix_is_faster(2000, 1)


@pytest.mark.parametrize("shape", [(471, 471, 24), (471, 471, 1), (1884, 471, 3), (200, 200, 54), (10, 10, 2)])
def test_blocked_matrix_product_equals_the_plain_product(shape):
    rows, k, c = shape
    rng = np.random.default_rng(rows + c)
    m, x = rng.normal(size=(rows, k)), rng.normal(size=(k, c))
    got = apply_matrix(m, x)
    assert got.shape == (rows, c)
    assert np.abs(got - m @ x).max() < 1e-12 * np.abs(m @ x).max()


def test_gradient_is_numpys_bit_for_bit(joints):
    from evalkit.features.signal import _gradient

    for x in (joints, joints[:2], joints[:3, :1], np.diff(joints, axis=0)):
        assert np.array_equal(_gradient(x), np.gradient(x, axis=0))


def test_bin_counts_equal_numpy_histogram_with_edge_values(joints):
    from evalkit.features.kinematics import HIST_EDGES, bin_counts

    speed = np.abs(np.diff(joints, axis=0)).ravel() * 120.0
    for edges in HIST_EDGES.values():
        extra = np.concatenate([speed, edges, [-1.0, -0.0, np.inf, np.nan, edges[-2] * 1.5]])
        assert np.array_equal(bin_counts(extra, edges), np.histogram(extra, bins=edges)[0])
    finite = np.array([0.0, 0.5, 1.0, 1.0, 2.0, 3.0])
    assert np.array_equal(bin_counts(finite, np.array([0.0, 1.0, 2.0])), [2, 3])  # last bin closed, 3 left out
