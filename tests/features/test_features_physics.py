"""Centre of mass, ZMP and support polygon, ballistic flight — on real clips with injected
artifacts whose effect is computed independently (Winter's table, scipy's convex hull)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from evalkit.data import sample_path
from evalkit.features import foot_contacts, foot_track
from evalkit.features.body import body_index
from evalkit.features.signal import runs
from evalkit.features.physics import (
    WINTER_SEGMENTS, center_of_mass, distance_outside_hull, physics_traces, segment_weights, support_points, zmp,
)
from evalkit.features.score import analyse
from evalkit.motion import load_motion


@pytest.fixture(scope="module")
def playground():
    """CMU 01_01 (cgspeed BVH): stands ~1.8 s, then jumps around (10 flights)."""
    return load_motion(sample_path("cmu", "01_01.bvh")).slice(1, None)


def test_winter_table_sums_to_one_and_com_height_is_human(playground):
    body = body_index(playground)
    names, w, m = segment_weights(body, playground.n_joints)
    assert m.sum() == pytest.approx(1.0)
    assert sum(v[2] for v in WINTER_SEGMENTS.values()) + 2 * 0.006 == pytest.approx(1.0)
    assert np.allclose(w.sum(axis=1), 1.0)  # each segment COM is an affine combination
    pos = playground.positions[:200]
    track = foot_track(playground)
    com = center_of_mass(pos, body)
    ratio = (com[:, 1] - track.ground).mean() / body.height
    assert 0.52 < ratio < 0.60  # standing COM at ~55-57 % of stature


def _leg_joints(motion, body):
    legs = set()
    for s in ("left", "right"):
        hip = body.roles[f"{s}_hip"]
        legs |= {hip, *motion.skeleton.descendants(hip)}
    return np.array(sorted(legs))


def test_pushing_the_upper_body_moves_zmp_outside_the_support(playground):
    m = playground.slice(0, 200)  # stands still until ~frame 145, both feet planted
    body = body_index(m)
    track = foot_track(m)
    contacts = foot_contacts(track)
    assert contacts.all(axis=1)[20:180].all()
    pos = np.array(m.positions)
    base = physics_traces(pos, track, contacts)
    assert np.nanmax(base.zmp_cart_outside[20:180]) == 0.0  # natural standing is balanced
    # facing direction: perpendicular to the hip line
    hip_line = pos[:, body.roles["left_hip"]] - pos[:, body.roles["right_hip"]]
    h = hip_line.mean(axis=0) * [1, 0, 1]
    fwd = np.array([-h[2], 0.0, h[0]]) / np.linalg.norm(h)
    upper = np.setdiff1d(np.arange(m.n_joints), _leg_joints(m, body))
    # Winter: head+neck 8.1 %, arms 2 x 5.0 %, and half the trunk (49.7 %) move with the upper body
    share = 0.081 + 2 * (0.028 + 0.016 + 0.006) + 0.5 * 0.497
    pts, valid = support_points(track, contacts)
    previous = 0.0
    for d in (0.15, 0.3, 0.5):
        moved = pos.copy()
        moved[:, upper] += d * fwd
        tr = physics_traces(moved, track, contacts)
        shift = (tr.com - base.com)[:, [0, 2]]
        assert np.linalg.norm(shift, axis=1).mean() == pytest.approx(share * d, rel=0.02)
        # independent expectation: a constant shift of the COM moves the cart-table ZMP
        # (x - h ẍ / (ÿ + g)) by exactly that shift, share × d forward (Winter's fractions);
        # its distance outside scipy's hull of the planted foot points, minus the 5 cm margin
        expected = []
        for f in range(20, 140, 10):
            sup = pts[f][valid[f]]
            assert len(sup) >= 3
            hull = ConvexHull(sup)
            eq = hull.equations  # a x + b z + c <= 0 inside
            p = base.zmp_cart[f] + share * d * fwd[[0, 2]]
            if (eq[:, :2] @ p + eq[:, 2] <= 0).all():
                dist = 0.0
            else:
                v = sup[hull.vertices]
                segs = [(v[i], v[(i + 1) % len(v)]) for i in range(len(v))]
                dist = min(np.linalg.norm(p - (a + np.clip((p - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1) * (b - a)))
                           for a, b in segs)
            expected.append(max(0.0, dist - 0.05 * body.scale))
        got = tr.zmp_cart_outside[20:140:10]
        assert got == pytest.approx(np.array(expected), abs=1e-6)
        assert np.median(tr.zmp_outside[20:140]) == pytest.approx(np.median(expected), abs=0.02)
        assert np.median(got) > previous
        previous = np.median(got)
    assert previous > 0.05


def test_distance_outside_hull_against_scipy():
    """Constructed random point sets (not capture) checked against scipy.spatial.ConvexHull."""
    rng = np.random.default_rng(1)
    n = 300
    pts = rng.normal(size=(n, 5, 2))
    valid = rng.random((n, 5)) < 0.8
    valid[:, :3] = True
    q = rng.normal(scale=2.0, size=(n, 2))
    got = distance_outside_hull(q, pts, valid)
    for i in range(n):
        p = pts[i][valid[i]]
        hull = ConvexHull(p)
        inside = (hull.equations[:, :2] @ q[i] + hull.equations[:, 2] <= 1e-12).all()
        if inside:
            assert got[i] == 0.0
        else:
            v = p[hull.vertices]
            d = min(np.linalg.norm(q[i] - (a + np.clip((q[i] - a) @ (b - a) / ((b - a) @ (b - a)), 0, 1) * (b - a)))
                    for a, b in zip(v, np.roll(v, -1, axis=0)))
            assert got[i] == pytest.approx(d, abs=1e-9)


def test_natural_jumps_are_ballistic_and_injected_lift_is_not(playground):
    an = analyse(playground)
    err = an.physics.ballistic_error
    assert np.isfinite(err).sum() > 100
    assert np.nanmean(err) < 2.0  # real flights follow free fall within ~2 m/s²
    # inject an extra downward acceleration a (m/s²) into one flight: offset ½ a t (T - t) lifts
    # the body mid-flight and returns it at landing; its second derivative is -a
    starts, stops = runs(an.physics.flight)
    k = int(np.argmax(stops - starts))
    a0, b0 = starts[k] - 6, stops[k] + 6  # the flight incl. the trimmed ends
    base_err = np.nanmean(err[starts[k]:stops[k]])
    previous = base_err
    for acc in (4.0, 8.0, 16.0):
        tr = np.array(an.motion.translations)
        t = np.arange(b0 - a0) / playground.fps
        tr[a0:b0, 0, 1] += 0.5 * acc * t * (t[-1] - t)
        an2 = analyse(an.motion.with_(translations=tr))
        e2 = an2.physics.ballistic_error[starts[k]:stops[k]]
        got = np.nanmean(e2)
        assert got == pytest.approx(acc, abs=base_err + 0.25 * acc)
        assert got > previous
        previous = got


def test_zmp_formula_on_constructed_accelerating_mass():
    """Constructed (not capture): a point mass 1 m above the ground accelerating forward at
    2 m/s² has its ZMP 1 m × 2 / 9.81 behind its projection; a falling mass has none."""
    fps = 100.0
    t = np.arange(200) / fps
    p = np.zeros((200, 1, 3))
    p[:, 0, 0] = 0.5 * 2.0 * t**2
    p[:, 0, 1] = 1.0
    z = zmp(p, np.ones(1), fps, ground=0.0, cutoff_hz=None)
    mid = slice(20, 180)
    assert np.allclose(p[mid, 0, 0] - z[mid, 0], 2.0 / 9.81, atol=1e-6)
    falling = p.copy()
    falling[:, 0, 1] = 10.0 - 0.5 * 9.81 * t**2
    assert np.isnan(zmp(falling, np.ones(1), fps, cutoff_hz=None)[mid]).all()


def test_several_query_points_per_frame_measure_like_one_at_a_time():
    """Both ZMPs are measured against the same support polygons in one call (a run: flight
    frames have no support)."""
    an = analyse(load_motion(sample_path("cmu", "09_06-run.amc")))
    pts, valid = support_points(an.track, an.contacts)
    queries = np.stack([an.physics.zmp, an.physics.zmp_cart, an.physics.zmp + 0.3], axis=1)
    both = distance_outside_hull(queries, pts, valid)
    assert both.shape == (an.motion.n_frames, 3)
    for q in range(3):
        assert np.array_equal(both[:, q], distance_outside_hull(queries[:, q], pts, valid), equal_nan=True)
    assert np.nanmax(both[:, 2]) > 0.0 and np.isnan(both).any()  # some frames outside, some without support
