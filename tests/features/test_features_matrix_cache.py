"""The byte-bounded matrix cache, and the spline-matrix rule it serves (real CMU foot paths)."""

import numpy as np
from scipy.interpolate import CubicSpline

from evalkit.data import cmu_clips
from evalkit.features.ground import _spline_matrices, _spline_matrix_is_faster, to_grid
from evalkit.features.matrix_cache import bytes_lru_cache
from evalkit.motion import load_motion


def test_cache_bounds_bytes_and_evicts_least_recently_used():
    built = []

    @bytes_lru_cache(2500)
    def zeros(n):
        built.append(n)
        return np.zeros(n)

    for n in (100, 100, 101, 102):          # 800 + 808 + 816 bytes: all fit, 100 built once
        zeros(n)
    assert built == [100, 101, 102] and zeros.cache_bytes() == 2424
    zeros(100)                               # used again: now the most recent
    zeros(103)                               # 824 more is over the bound: 101, the least recent, goes
    assert built == [100, 101, 102, 103] and zeros.cache_bytes() == 2424 + 824 - 808
    zeros(100), zeros(101)                   # 100 still cached; 101 rebuilt (and 102 evicted)
    assert built == [100, 101, 102, 103, 101] and zeros.cache_bytes() == 2440 + 808 - 816
    zeros(10_000)                            # larger than the bound: returned, never kept
    assert built[-1] == 10_000 and zeros.cache_bytes() == 2432
    zeros.cache_clear()
    assert zeros.cache_bytes() == 0


def test_spline_rule_takes_matrices_only_where_they_are_cheap():
    assert _spline_matrix_is_faster(200, 200, 12)          # 120 fps clip on a 120 Hz grid
    assert _spline_matrix_is_faster(40, 235, 12)           # short 20 fps clip
    assert not _spline_matrix_is_faster(400, 2395, 48)     # long 20 fps clip upsampled 6x


def test_both_spline_paths_agree_on_real_foot_paths():
    m = load_motion(cmu_clips()[0])
    feet = m.positions[:, [i for i, n in enumerate(m.skeleton.names) if "Foot" in n or "Toe" in n]]
    for fps, step in ((120.0, 1), (20.0, 6)):
        x = feet[::step][:180]
        xg, vg, rate, f2g = to_grid(x, fps, 120.0)
        t = np.arange(len(x)) / fps
        tg = np.arange(len(xg)) / rate
        s = CubicSpline(t, x, axis=0)
        np.testing.assert_allclose(xg, s(tg), atol=1e-9)
        np.testing.assert_allclose(vg, s(tg, 1), atol=1e-7)
        assert np.array_equal(f2g, np.minimum(np.rint(t * rate).astype(int), len(xg) - 1))
    assert _spline_matrices.cache_bytes() > 0
