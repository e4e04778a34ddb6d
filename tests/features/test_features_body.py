"""The body of a clip is derived once and shared: roles, role positions and heading are kept on
the clip, a new clip (any operation) starts without them, and no analysis can change them."""

from __future__ import annotations

import numpy as np
import pytest

import evalkit.features.body as body_module
from evalkit.distribution.canonical import canonical_positions, frame_poses
from evalkit.features.body import body_index, body_of, heading, roles_of, yaw_of_lateral
from evalkit.features.score import score_motion
from evalkit.motion import load_motion, mirror


@pytest.fixture()
def walk(cmu_dir):
    return load_motion(cmu_dir / "01_01.bvh")  # a fresh clip per test: nothing derived yet


def test_roles_are_found_once_per_clip(walk, monkeypatch):
    calls = []
    real = body_module.find_roles
    monkeypatch.setattr(body_module, "find_roles", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = body_index(walk)
    score_motion(walk)  # every metric family asks for the roles
    body_index(walk)
    roles_of(walk)
    assert len(calls) == 1
    assert body_index(walk).roles == first.roles
    other = walk[10:]  # a new clip: its facts are its own
    roles_of(other)
    assert len(calls) == 2
    # other overrides are another fact
    roles_of(walk, {"left_ankle": "LeftToeBase"})
    assert len(calls) == 3


def test_the_body_is_built_once_and_cannot_be_changed(walk):
    b = body_of(walk)
    assert body_of(walk) is b
    assert b.heading is b.heading
    with pytest.raises(ValueError):
        b.positions[0, 0, 0] = 1.0
    with pytest.raises(ValueError):
        b.heading[0] = 1.0
    m = mirror(walk)
    assert body_of(m) is not b
    np.testing.assert_allclose(body_of(m).positions[:, 0], b.positions[:, 0] * [-1, 1, 1], atol=1e-9)


def test_one_heading(walk):
    """The discriminator's heading, the distribution metrics' hip line and the yaw of a lateral
    axis are one definition: a clip turned by 90 degrees about +Y turns all of them by 90."""
    b = body_of(walk)
    pos = b.positions
    lateral = pos[:, body_module.ROLE_INDEX["right_hip"]] - pos[:, body_module.ROLE_INDEX["left_hip"]]
    assert np.array_equal(heading(pos, shoulders=False), yaw_of_lateral(lateral))
    # facing +Z: the left->right axis points to -X
    assert yaw_of_lateral(np.array([-1.0, 0.0, 0.0])) == pytest.approx(0.0)
    assert yaw_of_lateral(np.array([0.0, 0.0, 1.0])) == pytest.approx(np.pi / 2)
    # the frame normalisation of the distribution metrics turns the hip line onto +X
    canon, height, _ = canonical_positions(walk, walk.fps)
    poses = frame_poses(canon, height)
    hip_line = poses[:, body_module.ROLE_INDEX["left_hip"]] - poses[:, body_module.ROLE_INDEX["right_hip"]]
    np.testing.assert_allclose(hip_line[:, 2], 0.0, atol=1e-12)
    assert (hip_line[:, 0] > 0).all()
