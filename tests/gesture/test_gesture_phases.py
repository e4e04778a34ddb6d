"""Gesture phases, strokes, apexes, features and GSI on real capture."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared_data
from evalkit.errors import FileFormatError, RolesNotFoundError
from evalkit.gesture import (
    PHASES,
    STROKE_FEATURES,
    PhaseConfig,
    analyze_gestures,
    default_gsi_scale,
    fit_gsi_scale,
    gesture_database,
    hand_trajectories,
    joint_kinetic_energy,
    load_gesture_database,
    save_gesture_database,
)
from evalkit.motion import Skeleton, load_motion, mirror, resample


def bandai(name: str):
    return load_motion(shared_data("gesture", "bandai-namco", f"dataset-1_{name}_001.bvh"))


@pytest.fixture(scope="module")
def guide_angry():
    return bandai("guide_angry")


def test_single_stroke_phrase_of_a_real_gesture(guide_angry):
    g = analyze_gestures(guide_angry)
    assert len(g.phrases) == 1
    ph = g.phrases[0]
    s = g.strokes[0]
    assert s.main and ph.n_strokes == len(g.strokes)
    labels = g.segmentation.labels
    assert set(labels) <= set(PHASES)
    # rest at the end of the clip, stroke frames around the apex, a preparation before it
    assert labels[-1] == "rest"
    assert labels[int(s.apex_frame) - 1] == "stroke"
    assert "preparation" in set(labels[: s.start_frame])
    # the stroke is the fast downward beat of the right hand (peak > 3 m/s on a 1.70 m body)
    assert s.hand == "right" and s.max_velocity > 3.0
    # "stop" apex: after the speed peak, where speed has fallen to a quarter of it
    sp = g.trajectories.speed
    assert s.peak_frame < s.apex_frame < s.end_frame + 1
    assert np.interp(s.apex_frame, np.arange(len(sp)), sp) == pytest.approx(0.25 * sp[s.peak_frame], rel=0.05)
    assert ph.apex_time == pytest.approx(s.apex_time)


def test_apex_is_stable_under_resampling_and_time_scaling(guide_angry):
    g = analyze_gestures(guide_angry)
    at60 = analyze_gestures(resample(guide_angry, 60.0))
    assert len(at60.strokes) == len(g.strokes)
    np.testing.assert_allclose(at60.apex_times, g.apex_times, atol=1.0 / 30)
    # played 1.5x faster: the main apex comes 1.5x sooner, its stroke is 1.5x faster, GSI grows
    # (thresholds are absolute speeds, so the faster preparation may count as a stroke too)
    fast = replace(guide_angry, fps=45.0)
    f = analyze_gestures(fast)
    assert f.phrases[0].apex_time == pytest.approx(g.phrases[0].apex_time / 1.5, abs=0.02)
    assert f.phrases[0].max_velocity == pytest.approx(1.5 * g.phrases[0].max_velocity, rel=0.05)
    assert f.phrases[0].gsi > g.phrases[0].gsi


def test_mirroring_swaps_hands_not_timing(guide_angry):
    g = analyze_gestures(guide_angry)
    m = analyze_gestures(mirror(guide_angry))
    np.testing.assert_allclose(m.apex_times, g.apex_times, atol=1e-6)
    assert [s.hand for s in m.strokes] == [{"left": "right", "right": "left"}.get(s.hand, s.hand) for s in g.strokes]
    np.testing.assert_allclose(m.gsi, g.gsi, atol=1e-6)


def test_standing_still_has_no_gesture(guide_angry):
    still = guide_angry.slice(0, 1)
    still = replace(still, rotations=np.repeat(still.rotations, 60, 0), translations=np.repeat(still.translations, 60, 0))
    g = analyze_gestures(still)
    assert len(g.strokes) == 0 and len(g.phrases) == 0
    assert set(g.segmentation.labels) == {"rest"}
    e = joint_kinetic_energy(g.trajectories.body_positions, still.fps)
    assert np.allclose(e, 0.0)


def test_kinetic_energy_by_hand():
    """A point moving 1 m/s for 1 s has 0.5 J/kg of kinetic energy."""
    fps = 100.0
    t = np.arange(101) / fps
    pos = np.zeros((101, 2, 3))
    pos[:, 1, 0] = t  # joint 1 moves along x at 1 m/s; joint 0 is still
    e = joint_kinetic_energy(pos, fps)
    assert e[0] == 0.0
    assert e[1] == pytest.approx(0.5 * 101 / fps)


def test_gsi_orders_styles_of_the_same_gesture():
    """Angry and happy 'guide' strokes are stronger than the sad one (Bandai Namco styles)."""
    gsi = {s: analyze_gestures(bandai(f"guide_{s}")).phrases[0].gsi for s in ("angry", "happy", "sad")}
    assert gsi["angry"] > gsi["sad"] and gsi["happy"] > gsi["sad"]
    assert gsi["sad"] < 0.3 < 0.7 < gsi["angry"]


def test_default_gsi_scale_is_the_refit_on_bandai_strokes():
    folder = shared_data("gesture", "bandai-namco")
    frames = [analyze_gestures(load_motion(p)).strokes_frame() for p in sorted(folder.glob("*.bvh"))]
    strokes = pd.concat([f for f in frames if len(f)], ignore_index=True)
    refit = fit_gsi_scale(strokes.astype({c: float for c in STROKE_FEATURES})).to_dict()
    default = default_gsi_scale().to_dict()
    assert default["n_reference"] == refit["n_reference"] == len(strokes)
    np.testing.assert_allclose(default["mean"], refit["mean"], atol=1e-3)
    np.testing.assert_allclose(default["scale"], refit["scale"], atol=1e-3)


def test_gesture_database_round_trip(tmp_path):
    folder = shared_data("gesture", "bandai-namco")
    files = sorted(folder.glob("dataset-1_guide_*.bvh"))
    db = gesture_database(files)
    assert len(db) >= len(files) - 1
    for p in db:
        assert p.start_frame <= p.stroke_start < p.stroke_end <= p.end_frame
        assert p.start_frame <= p.apex_frame <= p.end_frame
        assert 0 <= p.gsi <= 1 and p.clip.endswith(".bvh")
        assert p.apex_offset == pytest.approx((p.apex_frame - p.start_frame) / p.fps)
    f = save_gesture_database(db, tmp_path / "db.csv")
    assert load_gesture_database(f) == db
    # the phrase's motion is one slice away
    m = load_motion(db[0].clip).slice(db[0].start_frame, db[0].end_frame)
    assert m.n_frames == db[0].end_frame - db[0].start_frame
    bad = tmp_path / "bad.csv"
    text = f.read_text().splitlines()
    cols = text[0].split(",")
    row = text[1].split(",")
    row[cols.index("start_frame")] = "abc"
    bad.write_text("\n".join([text[0], text[1], ",".join(row)]) + "\n")
    with pytest.raises(FileFormatError, match="line 3"):
        load_gesture_database(bad)


def test_bundled_cmu_clip_works_without_shared_data(bvh_motion):
    g = analyze_gestures(bvh_motion)
    assert len(g.phrases) >= 1
    assert np.all(np.diff(g.apex_times) > 0)
    assert np.all((g.gsi >= 0) & (g.gsi <= 1))


def test_missing_wrists_are_reported(bvh_motion):
    sk = bvh_motion.skeleton
    names = tuple(n.replace("Wrist", "Paw").replace("hand", "paw") for n in sk.names)
    odd = replace(bvh_motion, skeleton=Skeleton(names, sk.parents, sk.offsets, sk.channels, sk.end_sites))
    with pytest.raises(RolesNotFoundError, match="wrist"):
        hand_trajectories(odd)


def test_phase_config_validation():
    with pytest.raises(ValueError):
        PhaseConfig(apex="middle")
