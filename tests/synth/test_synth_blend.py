"""Blending helpers on real clips: ease weights, fractional sampling, root transforms, blends."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.motion import load_motion, quat, resample
from evalkit.motion.ops import sample
from evalkit.motion.planar import apply_2d, compose_2d, transform_root
from evalkit.synth.blend import blend_clips, ease, window_weights


@pytest.fixture(scope="module")
def walk(cmu_dir):
    return resample(load_motion(cmu_dir / "16_15.amc"), 60.0)


def test_ease_is_c1_from_one_to_zero():
    t = np.linspace(0, 1, 101)
    w = ease(t)
    assert w[0] == 1.0 and w[-1] == 0.0 and np.all(np.diff(w) <= 0)
    slope = np.gradient(w, t)
    assert abs(slope[0]) < 0.05 and abs(slope[-1]) < 0.05
    k = window_weights(20)
    assert k.shape == (20,) and 0 < k.min() and k.max() < 1 and np.all(np.diff(k) < 0)
    with pytest.raises(InputError):
        window_weights(0)


def test_sample_at_integer_and_half_frames(walk):
    r, t = sample(walk, np.array([3.0, 10.0]))
    np.testing.assert_allclose(r, walk.rotations[[3, 10]])
    np.testing.assert_allclose(t, walk.translations[[3, 10]])
    r, t = sample(walk, np.array([3.5]), joints=np.array([0, 2]))
    mid = quat.slerp(walk.rotations[3, [0, 2]], walk.rotations[4, [0, 2]], 0.5)
    np.testing.assert_allclose(np.abs(np.sum(r[0] * mid, axis=-1)), 1.0, atol=1e-12)
    np.testing.assert_allclose(t[0, 0], walk.translations[3:5, 0].mean(axis=0))


def test_root_transform_moves_the_whole_body_rigidly(walk):
    th, tx, tz = 0.8, 1.5, -2.0
    r, t = transform_root(walk.rotations, walk.translations, th, tx, tz)
    moved = walk.with_(rotations=r, translations=t)
    np.testing.assert_allclose(moved.positions, apply_2d(walk.positions, th, tx, tz), atol=1e-9)
    a, b = (0.3, 1.0, 2.0), (-1.1, 0.5, -0.25)
    ab = compose_2d(a, b)
    np.testing.assert_allclose(apply_2d(walk.positions[0], *ab), apply_2d(apply_2d(walk.positions[0], *b), *a), atol=1e-12)


def test_blend_clips_goes_from_origin_to_target(walk):
    k = 12
    out = blend_clips(walk, walk, 10, 100, k)
    assert out.n_frames == k
    w = window_weights(k)
    # first frame close to the origin, last close to the target, in between on the slerp
    d0 = np.abs(np.sum(out.rotations[0] * walk.rotations[10], axis=-1))
    d1 = np.abs(np.sum(out.rotations[-1] * walk.rotations[100 + k - 1], axis=-1))
    assert d0.min() > 0.99 and d1.min() > 0.99
    expect = quat.slerp(walk.rotations[15], walk.rotations[105], 1 - w[5])
    np.testing.assert_allclose(np.abs(np.sum(out.rotations[5] * expect, axis=-1)), 1.0, atol=1e-9)
    with pytest.raises(InputError, match="outside"):
        blend_clips(walk, walk, 230, 0, k)
