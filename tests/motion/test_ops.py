"""Slicing, resampling, low-pass filtering, mirroring, units and up-axis overrides on real clips."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.motion import find_roles, load_motion, low_pass, mirror, resample, skeleton_height


def test_slice(walk_motion):
    s = walk_motion[100:200]
    assert s.n_frames == 100 and s.fps == walk_motion.fps
    np.testing.assert_allclose(s.positions, walk_motion.positions[100:200])
    h = walk_motion.slice(0, None, 2)
    assert h.fps == 60.0 and h.n_frames == 236
    with pytest.raises(InputError):
        walk_motion[500:600]


def test_resample_halves_frames_and_keeps_poses(walk_motion):
    r = resample(walk_motion, 60.0)
    assert r.fps == 60.0 and r.n_frames == 236
    np.testing.assert_allclose(r.positions, walk_motion.positions[::2], atol=1e-9)
    up = resample(r, 120.0)
    # interpolated in-between frames stay close to the captured ones (smooth motion at 120 fps;
    # frames 1-2 of this take hold a capture glitch of the left fingers, skipped)
    err = np.abs(up.positions[4:] - walk_motion.positions[4 : up.n_frames]).max()
    assert err < 0.01
    assert abs(up.duration - walk_motion.duration) < 2 / 60


def test_low_pass_removes_what_is_above_its_cutoff_and_keeps_the_walk(walk_motion):
    walk = walk_motion[4:]  # frames 1-2 of this take hold a capture glitch of the left fingers
    lp = low_pass(walk, 12.0)
    assert lp.n_frames == walk.n_frames and lp.fps == walk.fps
    np.testing.assert_allclose(np.linalg.norm(lp.rotations, axis=-1), 1.0, atol=1e-12)
    # the walk itself (a few Hz) is kept within millimetres
    assert np.abs(lp.positions - walk.positions).max() < 0.01
    # a frame-to-frame wobble of the root (60 Hz at 120 fps, +-1 cm) is cut to under a tenth
    tr = walk.translations.copy()
    tr[::2, 0, 1] += 0.02
    wobbly = walk.with_(translations=tr)
    left = low_pass(wobbly, 12.0).translations[10:-10, 0, 1] - lp.translations[10:-10, 0, 1]  # ends: padding
    assert np.abs(left - 0.01).max() < 0.001
    # at or above the clip's Nyquist rate there is nothing to remove
    assert low_pass(walk, 60.0) is walk
    with pytest.raises(InputError):
        low_pass(walk, 0.0)
    # the clip says the band it has been through: the lowest cutoff, Hz
    assert "band_hz" not in walk.meta
    assert low_pass(walk, 12.0).meta["band_hz"] == 12.0
    assert low_pass(low_pass(walk, 8.0), 12.0).meta["band_hz"] == 8.0


def test_band_limited_resampling_records_the_band_it_keeps(walk_motion):
    down = resample(walk_motion, 30.0, band_limited=True)
    assert down.meta["band_hz"] == pytest.approx(12.0) and down.meta["resampled_from_fps"] == 120.0
    # rising, the clip keeps the band it had; without the filter, it claims none
    assert resample(down, 60.0, band_limited=True).meta["band_hz"] == pytest.approx(12.0)
    assert "band_hz" not in resample(walk_motion, 30.0).meta


def test_resample_uses_slerp_midpoint():
    from evalkit.motion.model import Motion, Skeleton
    from scipy.spatial.transform import Rotation

    sk = Skeleton(names=["a"], parents=np.array([-1]), offsets=np.zeros((1, 3)),
                  channels=[("Zrotation", "Xrotation", "Yrotation")])
    q = Rotation.from_euler("y", [[0], [170]], degrees=True).as_quat()[:, None]
    m = Motion(sk, 1.0, q, np.zeros((2, 1, 3)))
    r = resample(m, 2.0)
    mid = Rotation.from_quat(r.rotations[1, 0]).as_euler("xyz", degrees=True)
    np.testing.assert_allclose(mid, [0, 85, 0], atol=1e-9)


def test_mirror_swaps_sides_and_reflects(bvh_motion):
    m = mirror(bvh_motion)
    r = find_roles(m.skeleton)
    lw, rw = r["left_wrist"], r["right_wrist"]
    np.testing.assert_allclose(m.positions[:, lw], bvh_motion.positions[:, rw] * [-1, 1, 1], atol=1e-9)
    np.testing.assert_allclose(mirror(m).positions, bvh_motion.positions, atol=1e-9)


def test_units_override_and_height(cmu_dir):
    auto = load_motion(cmu_dir / "16_15.amc")
    with pytest.warns(UserWarning, match="check --units"):  # a 0.7 m body: the wrong unit, said so
        forced = load_motion(cmu_dir / "16_15.amc", units="inch")
    np.testing.assert_allclose(forced.positions, auto.positions * 0.45, atol=1e-9)
    assert 1.5 < skeleton_height(auto) < 1.9
    with pytest.raises(InputError, match="unknown unit"):
        load_motion(cmu_dir / "16_15.amc", units="furlongs")


def test_up_override(cmu_dir):
    m = load_motion(cmu_dir / "131_01.bvh", up="z")
    assert m.meta["up_axis"] == "z" and not m.meta["up_detected"]
    # forcing the wrong axis lays the figure down: the head is no longer far above the feet
    r = find_roles(m.skeleton)
    assert np.median(m.positions[:, r["head"], 1] - m.positions[:, r["left_toe"], 1]) < 0.5


def _opaque_rig(bvh_path, tmp_path):
    """The CMU take with every sided joint renamed ``J<n>`` (no name says its side), and the
    role map that names them; returns (file, role map file, original names -> new names)."""
    import re

    text = bvh_path.read_text()
    names = re.findall(r"(?:ROOT|JOINT)\s+(\S+)", text)
    sided = [n for n in names if n[:1] in "LRlr" and n not in ("lowerback", "lowerneck")]
    new = {n: f"J{i}" for i, n in enumerate(sided)}
    out = re.sub(r"((?:ROOT|JOINT)\s+)(\S+)", lambda m: m.group(1) + new.get(m.group(2), m.group(2)), text)
    f = tmp_path / "opaque.bvh"
    f.write_text(out)
    orig = load_motion(bvh_path)
    roles = {r: new.get(orig.skeleton.names[j], orig.skeleton.names[j]) for r, j in find_roles(orig.skeleton).items()}
    rf = tmp_path / "roles.yaml"
    rf.write_text("roles:\n" + "".join(f"  {r}: {j}\n" for r, j in roles.items()))
    return f, rf, new


def test_a_role_map_stays_with_the_clip_and_pairs_sides_for_mirroring(cmu_dir, tmp_path):
    """A rig whose names do not say left/right: the --roles map read with the clip is kept on
    its skeleton, so roles are found again without it, and mirroring pairs the sides through
    it (clavicles above the shoulders, hands and fingers below the wrists) as it does by name."""
    from evalkit.motion import ROLE_NAMES
    from evalkit.motion.ops import mirror_pairs
    from evalkit.motion.roles import load_role_map

    src = cmu_dir / "131_03.bvh"
    f, rf, new = _opaque_rig(src, tmp_path)
    orig = load_motion(src)
    with pytest.raises(Exception, match="could not find joint roles"):
        find_roles(load_motion(f, up="y").skeleton)
    m = load_motion(f, roles=load_role_map(rf))
    assert find_roles(m.skeleton) == find_roles(orig.skeleton)
    assert sorted(m.skeleton.roles) == sorted(ROLE_NAMES)
    assert np.array_equal(mirror_pairs(m.skeleton), mirror_pairs(orig.skeleton))
    assert (mirror_pairs(m.skeleton) != np.arange(m.n_joints)).sum() == len(new)  # every sided joint paired
    np.testing.assert_allclose(mirror(m).positions, mirror(orig).positions, atol=1e-9)
    # operations keep the map: slicing, resampling, mirroring
    for op in (lambda x: x.slice(10, 200), lambda x: resample(x, 30.0), mirror):
        assert find_roles(op(m).skeleton) == find_roles(orig.skeleton)
    # a map naming a joint the skeleton lacks is refused with the joint's name
    with pytest.raises(InputError, match="no joint named 'Nope'"):
        from dataclasses import replace

        replace(m.skeleton, roles={"head": "Nope"})


def test_rest_height_is_shared_by_rig_content_not_by_object(cmu_dir):
    """Clips of one rig read from separate files share the rest height; a rig whose bones are
    twice as long, or that lacks the roles the height needs, gets its own."""
    from evalkit.motion.model import Skeleton

    a, b = load_motion(cmu_dir / "16_15.amc"), load_motion(cmu_dir / "16_15.amc")
    assert a.skeleton is not b.skeleton and skeleton_height(a) == skeleton_height(b)
    sk = a.skeleton
    big = Skeleton(sk.names, sk.parents, sk.offsets * 2, sk.channels, sk.end_sites)
    assert skeleton_height(a.with_(skeleton=big)) == pytest.approx(2 * skeleton_height(a), rel=1e-12)
    anon = Skeleton([f"j{i}" for i in range(sk.n_joints)], sk.parents, sk.offsets, sk.channels, sk.end_sites)
    poses = a.with_(skeleton=anon)  # no roles: the median vertical extent of the poses
    want = float(np.median(np.ptp(a.positions[..., 1], axis=1)))
    assert skeleton_height(poses) == pytest.approx(want, rel=1e-12)
