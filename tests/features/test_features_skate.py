"""Foot-skate metrics: injected slides in real clips, the GMD skating ratio, frame-rate invariance."""

from __future__ import annotations

import numpy as np
import pytest

from features_inject import slide_root
from evalkit.features import foot_track
from evalkit.features.contacts import contact_intervals, grid_contacts
from evalkit.features.footskate import (
    contact_slides, grid_skate_speed, skate_metrics, skate_speed, skating_ratio, skating_ratio_metric,
)
from evalkit.motion import load_motion, resample
from evalkit.data import sample_path


@pytest.fixture(scope="module")
def standing():
    """CMU 01_01 (cgspeed BVH): the subject stands still for ~1.8 s after the T-pose frame."""
    return load_motion(sample_path("cmu", "01_01.bvh")).slice(1, 400)


def _slides_covering(motion, a, b):
    """Slide per contact covering frames a..b, and each foot's own slide within a..b."""
    t = foot_track(motion)
    c = grid_contacts(t)
    v = grid_skate_speed(t, c)
    g = t.frame_to_grid
    within = {f: v[g[a]:g[b], f].sum() / t.grid_fps for f in range(2)}
    return {(f, s, e): d for (f, s, e), d in zip(contact_intervals(c), contact_slides(v, c, t.grid_fps))
            if s <= g[a] and e >= g[b]}, within


def test_slow_slide_of_planted_feet_adds_its_distance(standing):
    a, b = 40, 160  # 1 s inside the standing contacts of both feet
    base, sway = _slides_covering(standing, a, b)
    assert sorted(f for f, _, _ in base) == [0, 1]
    assert max(base.values()) < 0.05  # natural standing sways a little (~2 cm/s over 1.8 s)
    previous = 0.0
    for d in (0.03, 0.06, 0.12, 0.24):  # 3-24 cm/s, below the contact speed: contacts persist
        got, _ = _slides_covering(slide_root(standing, a, b, d, direction=(1, 0, 1)), a, b)
        assert sorted(f for f, _, _ in got) == [0, 1]
        for key, dist in got.items():
            added = dist - base[key]
            # |v_sway + v_slide| lies within |v_slide| ± |v_sway| (triangle inequality), so the
            # added distance is between d - 2 * sway and d (5 % slack for the low-pass filter)
            assert d - 2 * sway[key[0]] - 0.05 * d <= added <= d * 1.05, (key, d, added, sway)
        assert min(got.values()) > previous
        previous = max(got.values())
    assert max(sway.values()) < 0.03


def test_skate_metrics_grow_with_injected_slide_in_a_walk(walk_motion):
    # CMU 16_15, left foot planted on frames ~140-214, alone on ~150-200; slide forward
    r = walk_motion.root_translation
    fwd = (r[-1] - r[0]) * np.array([1, 0, 1])
    values = []
    for d in (0.0, 0.04, 0.08, 0.12):
        m = slide_root(walk_motion, 150, 200, d, direction=fwd)
        values.append(skate_metrics(foot_track(m))["skate_distance_max"])
    assert all(x < y for x, y in zip(values[:-1], values[1:]))
    # the natural roll of that contact (~3 cm) partly cancels or adds (see the standing test)
    assert 0.6 * 0.12 <= values[-1] - values[0] <= 1.05 * 0.12


def test_skate_speed_trace_shape_and_zero_off_contact(walk_motion):
    t = foot_track(walk_motion)
    v = skate_speed(t)
    assert v.shape == (walk_motion.n_frames, 2)
    assert (v >= 0).all() and v.max() < 1.0
    from evalkit.features import foot_contacts

    c = foot_contacts(t)
    assert (v[~c] == 0).all()


def test_gmd_skating_ratio_hand_computed():
    """Constructed trajectory (not capture): 40 frames at 20 fps; the left toe sits 2 cm above the
    floor and slides at 1 m/s over frames 10-20; the right toe is 30 cm up."""
    fps = 20.0
    toes = np.zeros((40, 2, 3))
    toes[:, 0, 1] = 0.02
    toes[:, 1, 1] = 0.30
    x = np.zeros(40)
    x[11:] = np.arange(1, 30) * 0.05  # 5 cm per frame = 1 m/s from pair 10 on ...
    x[21:] = x[20]  # ... until pair 19: pairs 10..19 move
    toes[:, 0, 0] = x
    ratio, skating, skate_vel = skating_ratio(toes, fps, ground=0.0)
    # Hand computation: pair speeds v = 1 m/s on pairs 10..19, 0 elsewhere; the 5-frame moving
    # average (zero padded) exceeds 0.5 where >= 3 of the 5 pairs move: pairs 10..19 all qualify
    # (pair 10: pairs 8..12 -> 3/5; pair 19: 17..21 -> 3/5), pairs 9 and 20 have v = 0.
    assert skating.sum() == 10
    assert ratio == pytest.approx(10 / 39)
    assert skate_vel.shape == (39, 2)
    # a toe above 5 cm never skates; a slower slide (0.4 m/s) never skates
    toes_hi = toes.copy()
    toes_hi[:, 0, 1] = 0.06
    assert skating_ratio(toes_hi, fps)[0] == 0.0
    toes_slow = toes.copy()
    toes_slow[:, 0, 0] *= 0.4
    assert skating_ratio(toes_slow, fps)[0] == 0.0


def _reference_ratio(toes, fps, floor, height=0.05, speed=0.5, window=5):
    """Independent loop restatement of the published definition (frame pairs, zero-padded
    centred moving average), for comparison on real trajectories."""
    n = toes.shape[0]
    skating = 0
    v = [[np.hypot(*(toes[i + 1, f, [0, 2]] - toes[i, f, [0, 2]])) * fps for f in range(2)] for i in range(n - 1)]
    half = window // 2
    for i in range(n - 1):
        hit = False
        for f in range(2):
            lo, hi = toes[i, f, 1] - floor, toes[i + 1, f, 1] - floor
            avg = sum(v[k][f] for k in range(i - half, i + half + 1) if 0 <= k < n - 1) / window
            if lo < height and hi < height and v[i][f] > speed and avg > speed:
                hit = True
        skating += hit
    return skating / (n - 1)


def test_gmd_skating_ratio_matches_loop_definition_on_real_toes(walk_motion):
    m = resample(walk_motion, 20.0)
    t = foot_track(m)
    toes = t.positions[:, :, -1]
    floor = float(m.positions[..., 1].min())
    ours = skating_ratio(toes, 20.0, floor)[0]
    assert ours == pytest.approx(_reference_ratio(toes, 20.0, floor))
    assert skating_ratio_metric(t)["skating_ratio"] == pytest.approx(ours)


def test_fast_slide_raises_the_skating_ratio_by_the_slid_frames(standing):
    fps = standing.fps
    a, b, d = 100, 220, 0.9  # 0.9 m in 1 s: 0.9 m/s, faster than 0.5 m/s
    base = skating_ratio_metric(foot_track(standing))["skating_ratio"]
    slid = skating_ratio_metric(foot_track(slide_root(standing, a, b, d, direction=(0, 0, 1))))["skating_ratio"]
    v = d / ((b - a - 1) / fps)
    size = 2 * int(round(0.25 * fps / 2)) + 1
    # pairs a..b-2 move at v; the centred window average exceeds 0.5 m/s only where more than
    # size * 0.5 / v of its pairs move: that loses `edge` pairs at each end of the slide
    need = int(np.floor(size * 0.5 / v)) + 1
    edge = need - (size // 2 + 1)
    expected = (b - 1 - a - 2 * edge) / (standing.n_frames - 1)
    # the real toe's own sway can tip a couple of pairs at the slide's ends either way
    assert slid - base == pytest.approx(expected, abs=4 / standing.n_frames)


@pytest.mark.parametrize("name", ["16_15.amc", "131_01.bvh", "07_05-walk.amc", "09_06-run.amc"])
def test_skate_and_ground_metrics_do_not_depend_on_frame_rate(name):
    """Issue acceptance: resampling 120 -> 60 -> 30 fps moves every skate and ground metric by
    less than 10 % (or 0.01 for shares near zero). The whole scoring path (pops dropped, etc.)."""
    from evalkit.features.score import score_motion

    m120 = load_motion(sample_path("cmu", name))
    keys_rel = ["skate_distance_per_s", "skate_distance_mean", "skate_speed_mean"]
    keys_m = ["penetration_mean", "floating_mean", "penetration_max", "floating_max"]
    # shares: 10 % of the value, or 0.01 for shares near zero (the acceptance)
    keys_share = ["contact_frac", "skate_fraction", "penetration_frac", "floating_frac", "skating_ratio_20fps"]

    metrics = score_motion
    ref = metrics(m120)
    for fps in (60.0, 30.0):
        got = metrics(resample(m120, fps))
        for k in keys_rel:
            assert got[k] == pytest.approx(ref[k], rel=0.10), (fps, k)
        for k in keys_m:
            assert got[k] == pytest.approx(ref[k], rel=0.10, abs=0.001), (fps, k)
        for k in keys_share:
            assert got[k] == pytest.approx(ref[k], rel=0.10, abs=0.01), (fps, k)
