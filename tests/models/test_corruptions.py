"""Corruptions on real CMU capture: seeded, severity-scaled, provenance recorded, and each one
actually produces the artifact it names (measured on the result, not assumed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.features.body import ROLE_INDEX, body_of, limb_joints
from evalkit.models.corruptions import CORRUPTION_TYPES, corrupt
from evalkit.models.dataset import trim_glitches
from evalkit.models.window_features import WindowConfig, frame_signals, prepare, window_features
from evalkit.motion import find_roles, resample


@pytest.fixture(scope="module")
def walk(walk_motion):
    """CMU 16_15 walk at 30 fps, leading glitch frames trimmed (real capture)."""
    return resample(trim_glitches(walk_motion), 30)


@pytest.fixture(scope="module")
def bvh_walk(bvh_motion):
    return resample(trim_glitches(bvh_motion), 30).slice(0, 150)


@pytest.mark.parametrize("kind", CORRUPTION_TYPES)
def test_seeded_and_provenance(walk, kind):
    a = corrupt(walk, kind, 0.6, seed=11)
    b = corrupt(walk, kind, 0.6, seed=11)
    c = corrupt(walk, kind, 0.6, seed=12)
    assert np.array_equal(a.motion.rotations, b.motion.rotations)
    assert np.array_equal(a.motion.translations, b.motion.translations)
    assert a.provenance == b.provenance
    differs = (a.motion.n_frames != c.motion.n_frames or not np.allclose(a.motion.rotations, c.motion.rotations)
               or not np.allclose(a.motion.translations, c.motion.translations))
    assert differs, "another seed should draw other parameters"
    p = a.provenance
    assert (p.source, p.corruption, p.severity, p.seed) == (walk.name, kind, 0.6, 11)
    assert p.intervals, "a corruption at severity 0.6 must report what it touched"
    for s, e in p.intervals:
        assert 0 <= s < e <= a.motion.duration + 1e-6
    json.dumps(p.to_dict())  # provenance is storable
    assert a.motion.meta["provenance"]["corruption"] == kind
    assert np.allclose(np.linalg.norm(a.motion.rotations, axis=-1), 1.0, atol=1e-6)
    assert a.motion.name == f"{walk.name}~{kind}"


@pytest.mark.parametrize("kind", ["foot_skate", "jitter", "time_warp", "freeze", "keyframe", "bone_length", "ground"])
def test_severity_zero_is_identity(walk, kind):
    out = corrupt(walk, kind, 0.0, seed=3).motion
    assert out.n_frames == walk.n_frames
    assert np.allclose(out.positions, walk.positions, atol=1e-9)


def test_bad_arguments(walk):
    with pytest.raises(InputError, match="severity"):
        corrupt(walk, "jitter", 1.5)
    with pytest.raises(InputError, match="unknown corruption"):
        corrupt(walk, "melt", 0.5)
    with pytest.raises(InputError, match="donor"):
        corrupt(walk, "jitter", 0.5, donor=walk)
    with pytest.raises(InputError, match="mode"):
        corrupt(walk, "ground", 0.5, mode="sideways")
    with pytest.raises(InputError, match="too short"):
        corrupt(walk.slice(0, 20), "transition", 0.5)


def _skate(m):
    sig = frame_signals(prepare(m))
    return float(np.nanmedian(sig["skate"]))


def test_foot_skate_makes_planted_feet_slide(walk):
    c = corrupt(walk, "foot_skate", 0.5, seed=1, mode="drift")
    assert c.provenance.params["speed_m_s"] > 0.2
    assert _skate(c.motion) > 2 * _skate(walk)


def test_jitter_adds_high_frequency_energy(walk):
    c = corrupt(walk, "jitter", 0.5, seed=2, mode="clip")
    assert c.provenance.params["rotation_std_deg"] == pytest.approx(2.0)
    hf = lambda m: window_features(m)["f_hf_ratio"].median()  # noqa: E731
    assert hf(c.motion) > 1.3 * hf(walk)


def test_time_warp_changes_timing(walk):
    c = corrupt(walk, "time_warp", 0.8, seed=4, mode="steps")
    assert c.provenance.params["frames_out"] == c.motion.n_frames != walk.n_frames
    # speed is no longer steady: the ratio of fastest to slowest 0.5 s of the root differs
    def spread(m):
        hips = body_of(m).role("hips")
        v = np.linalg.norm(np.diff(hips[:, [0, 2]], axis=0), axis=1) * m.fps
        k = int(m.fps / 2)
        seg = [v[i:i + k].mean() for i in range(0, len(v) - k, k)]
        return max(seg) / min(seg)
    assert spread(c.motion) > 1.3 * spread(walk)


def test_freeze_holds_the_limb(walk):
    c = corrupt(walk, "freeze", 0.6, seed=5, mode="limb", limbs=("left_arm",))
    p = c.provenance.params
    a, b = p["start_frame"], p["end_frame"]
    joints = limb_joints(walk, "left_arm")
    held = c.motion.rotations[a:b, joints]
    assert b - a == round(1.5 * 0.6 * walk.fps)
    assert np.allclose(held, held[0])
    assert not np.allclose(walk.rotations[a:b, joints], walk.rotations[a, joints])  # it was moving
    others = [j for j in range(walk.n_joints) if j not in joints]
    assert np.allclose(c.motion.rotations[:, others], walk.rotations[:, others])


def test_keyframe_is_piecewise_linear(walk):
    c = corrupt(walk, "keyframe", 0.5, seed=6, mode="body")
    p = c.provenance.params
    k = p["key_spacing_frames"]
    a = p["start_frame"]
    hips = body_of(c.motion).role("hips")
    # between two keys the root moves on a straight line at constant speed
    seg = hips[a:a + k + 1]
    d2 = np.diff(seg, 2, axis=0)
    assert np.abs(d2).max() < 1e-9
    orig = body_of(walk).role("hips")[a:a + k + 1]
    assert np.abs(np.diff(orig, 2, axis=0)).max() > 1e-4


def test_transplant_copies_donor_time(walk):
    c = corrupt(walk, "transplant", 0.5, seed=7, limbs=("left_leg",))
    p = c.provenance.params
    a, b, d = p["start_frame"], p["end_frame"], p["donor_start_frame"]
    joints = limb_joints(walk, "left_leg")
    r = p["blend_frames"]
    mid = slice(a + r + 1, b - r - 1)
    dmid = slice(d + r + 1, d + (b - a) - r - 1)
    assert np.allclose(np.abs(np.sum(c.motion.rotations[mid, joints] * walk.rotations[dmid, joints], -1)), 1, atol=1e-9)
    assert p["mean_limb_angle_change_deg"] > 5


def test_transplant_from_a_too_short_donor_blames_the_donor(walk):
    donor = walk.with_(rotations=walk.rotations[:5], translations=walk.translations[:5], name="short-donor")
    with pytest.raises(InputError, match=r"^short-donor: donor clip of .* too short") as e:
        corrupt(walk, "transplant", 0.5, seed=7, donor=donor)
    assert walk.name in str(e.value)  # and says which clip it was for


def test_transition_keeps_the_past_and_jumps(walk):
    c = corrupt(walk, "transition", 1.0, seed=8)
    p = c.provenance.params
    i = p["seam_frame"]
    assert p["blend_frames"] == 0  # severity 1: a hard cut
    assert np.allclose(c.motion.rotations[:i], walk.rotations[:i])
    pos = body_of(c.motion).positions
    step = np.linalg.norm(np.diff(pos, axis=0), axis=2).max(1)  # fastest joint, per frame
    assert step[i - 1] > 1.5 * np.percentile(np.delete(step, i - 1), 95)  # the cut is a visible jump
    # aligned like a motion graph aligns: the root does not teleport horizontally
    hips = pos[:, ROLE_INDEX["hips"]]
    assert np.linalg.norm(hips[i, [0, 2]] - hips[i - 1, [0, 2]]) < 0.1


def test_bone_length_limb_scaled(walk):
    c = corrupt(walk, "bone_length", 0.5, seed=9, mode="limb")
    limb = c.provenance.params["limbs"][0]
    roles = find_roles(walk.skeleton)
    side, part = limb.split("_")
    a, b = (f"{side}_hip", f"{side}_ankle") if part == "leg" else (f"{side}_shoulder", f"{side}_wrist")
    def length(m):  # noqa: E306
        pos = m.positions
        return np.linalg.norm(pos[:, roles[b]] - pos[:, roles[a]], axis=1)
    # the limb's straight-line span scales with its bones (joint angles are unchanged)
    assert np.allclose(length(c.motion) / length(walk), c.provenance.params["scale"], rtol=1e-6)
    assert abs(c.provenance.params["scale"] - 1) == pytest.approx(0.2)


def test_ground_offset_only_inside_interval(walk):
    c = corrupt(walk, "ground", 0.5, seed=10)
    p = c.provenance.params
    dy = c.motion.translations[:, 0, 1] - walk.translations[:, 0, 1]
    a, b = p["start_frame"], p["end_frame"]
    assert np.allclose(dy[a:b], p["offset_m"], atol=1e-4)
    assert abs(p["offset_m"]) > 0.05
    ramp = round(0.25 * walk.fps)
    assert np.allclose(dy[: max(a - ramp, 0)], 0) and np.allclose(dy[b + ramp:], 0)


@pytest.mark.parametrize("kind", CORRUPTION_TYPES)
def test_other_rig(bvh_walk, kind):
    """The cgspeed BVH rig (different joint names, Hips root) works too."""
    c = corrupt(bvh_walk, kind, 0.5, seed=1)
    assert c.motion.n_frames > 10
    assert len(window_features(c.motion, WindowConfig())) >= 1
