"""Window features of the discriminator on real capture: joint-rotation invariants (linear keys,
frozen limbs) and the phase locking of arm and leg swing."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.models.corruptions import corrupt
from evalkit.models.window_features import WindowConfig, swing_locking, window_features, window_starts
from dataclasses import replace

from evalkit.motion import load_motion, resample, write_bvh


@pytest.fixture(scope="module")
def walk30(walk_motion):
    return resample(walk_motion, 30.0)


@pytest.fixture(scope="module")
def long30(bvh_motion):
    return resample(bvh_motion, 30.0)  # 8.3 s: room for a corrupted interval and untouched capture


@pytest.fixture(scope="module")
def natural_table(walk30):
    return window_features(walk30)


def _inside(table, start_s: float, end_s: float):
    return table[(table["start_s"] >= start_s) & (table["end_s"] <= end_s)]


def test_natural_capture_never_turns_at_constant_velocity(natural_table, long30):
    assert natural_table["f_rot_linearity_min"].min() > -1.5
    assert natural_table["f_rot_still_max"].max() < 0.1
    other = window_features(long30)
    assert other["f_rot_linearity_min"].min() > -1.5


def test_keyframed_limbs_are_exactly_linear_even_after_a_file_round_trip(long30, tmp_path):
    bad = corrupt(long30, "keyframe", 0.5, seed=3, mode="limbs", limbs=("left_arm",))
    (a, b), = bad.provenance.intervals
    table = window_features(bad.motion)
    inside = _inside(table, a, b)
    assert len(inside) >= 1
    # windows where the keyed arm rests (the take ends standing) show no velocity to judge;
    # exactly linear keys sit at the floor below which rounding noise is not read
    from evalkit.models.window_features import LINEARITY_FLOOR

    floor = np.log10(LINEARITY_FLOOR)
    assert (inside["f_rot_linearity_min"] <= floor + 1e-9).mean() > 0.8
    # written with 4 decimals of a degree and read back: still far below natural capture
    path = write_bvh(bad.motion, tmp_path / "keyed.bvh", precision=4)
    again = window_features(load_motion(path))
    assert (_inside(again, a, b)["f_rot_linearity_min"] < -2.5).mean() > 0.8


def test_low_frame_rate_capture_is_not_taken_for_keys(walk_motion):
    # 15 frames/s capture is upsampled to the 30 frames/s windows by slerp, which by itself
    # makes constant-velocity pairs of frames; the signal is computed at the clip's own rate
    slow = resample(walk_motion, 15.0)
    table = window_features(slow)
    assert table["f_rot_linearity_min"].min() > -1.5


def test_a_frozen_limb_is_exactly_still(long30):
    bad = corrupt(long30, "freeze", 1.0, seed=1, mode="limb", limbs=("right_arm",))
    (a, b), = bad.provenance.intervals
    table = window_features(bad.motion)
    assert _inside(table, a, b - 0.1)["f_rot_still_max"].max() > 0.9


def test_swing_locking_of_constructed_rhythms():
    fps = 30.0
    t = np.arange(int(6 * fps)) / fps
    stride = 2 * np.pi * 1.0 * t  # 1 Hz gait
    legs = np.column_stack([np.sin(stride), -np.sin(stride)])  # thighs in anti-phase
    arms_ok = np.column_stack([-np.sin(stride), np.sin(stride)])  # each arm with the opposite thigh
    starts, w = window_starts(len(t), WindowConfig())
    ok = swing_locking(np.column_stack([arms_ok, legs]), starts, w, fps)
    assert ok["swing_lock_contra"].min() > 0.95
    assert ok["swing_phase_contra"].min() > 0.95
    assert ok["swing_lock_ipsi"].min() > 0.95
    # the right arm at another tempo (1.6 Hz, a run's) keeps no phase with the left thigh
    other = np.column_stack([arms_ok[:, 0], np.sin(2 * np.pi * 1.6 * t)])
    bad = swing_locking(np.column_stack([other, legs]), starts, w, fps)
    assert np.median(bad["swing_lock_contra"]) < 0.5
    # the same rhythm a quarter cycle late: locked, but not in the natural phase
    late = np.column_stack([-np.sin(stride - np.pi / 2), np.sin(stride - np.pi / 2)])
    shifted = swing_locking(np.column_stack([late, legs]), starts, w, fps)
    assert shifted["swing_lock_contra"].min() > 0.95
    assert np.abs(shifted["swing_phase_contra"]).max() < 0.2


def test_swing_locking_on_real_walking(natural_table):
    assert natural_table["f_swing_lock_contra"].median() > 0.8
    assert natural_table["f_swing_phase_contra"].median() > 0.6


def test_capture_noise_in_a_still_pose_is_not_read_as_jitter(long30):
    # a real pose held for 8 s with sub-millimetre noise (what a marker system records of a
    # person standing still): almost all of its tiny velocity energy is above 10 Hz, but that is
    # a share of almost nothing; the share is taken against the energy of a body moving at
    # ``still_speed`` at least, so it stays as low as in natural walking ...
    held = replace(long30, rotations=np.repeat(long30.rotations[:1], long30.n_frames, axis=0),
                   translations=np.repeat(long30.translations[:1], long30.n_frames, axis=0))
    still = corrupt(held, "jitter", 0.002, seed=2, mode="clip").motion  # 0.008 degrees per joint
    walk_vhf = window_features(long30)["f_vhf_ratio"]
    assert window_features(still)["f_vhf_ratio"].max() < walk_vhf.max()
    # ... which it is not without the floor (the ratio of noise to itself)
    raw = window_features(still, WindowConfig(still_speed=1e-9))["f_vhf_ratio"]
    assert raw.min() > 0.2
    # real jitter on the same still pose and on the walk is still far above natural
    for clip in (held, long30):
        bad = corrupt(clip, "jitter", 0.5, seed=2, mode="clip").motion
        assert window_features(bad)["f_vhf_ratio"].min() > 3 * walk_vhf.max()


def test_window_table_has_the_columns_the_shipped_model_was_trained_on(cmu_dir):
    """The window table of a bundled clip, cut as the shipped model's metadata says, has exactly
    the feature columns that model was trained on, in the same order (the per-frame signal
    families are computed by separate functions; their order is the table's)."""
    import json

    from evalkit.models.training import DEFAULT_MODEL, metadata_path
    from evalkit.models.window_features import WindowConfig, feature_columns, pose_columns, window_features
    from evalkit.motion import load_motion

    meta = json.loads(metadata_path(DEFAULT_MODEL).read_text())
    table = window_features(load_motion(cmu_dir / "16_15.amc"), WindowConfig(**meta["window"]))
    pose_derived = ["pose_residual_mean", "pose_residual_max", "pose_mahalanobis"]
    assert feature_columns(table) + pose_derived == meta["features"]
    assert len(pose_columns(table)) == meta["pose_columns"]
    assert len(table) >= 5


def _decimated_apart(take, config) -> float:
    """Median relative difference of the window features of ``take`` at 30 fps by decimation
    (every fourth frame, as datasets make their rates) and of the 120-fps take itself."""
    from evalkit.models.window_features import feature_columns

    a, b = window_features(take.slice(0, None, 4), config), window_features(take, config)
    n = min(len(a), len(b))
    cols = [c for c in feature_columns(a) if c.startswith("f_")]
    x, y = a[cols][:n].to_numpy(), b[cols][:n].to_numpy()
    with np.errstate(invalid="ignore"):
        return np.nanmean(np.nanmedian(np.abs(x - y) / (np.abs(x) + np.abs(y) + 1e-9), axis=0))


def test_the_working_rate_low_pass_brings_a_decimated_take_to_its_resampled_twin(cmu_dir):
    """The same real take given at 30 fps (every fourth frame) and at 120 fps (resampled
    band-limited): low-passed at 12 Hz at the working rate, their window features differ about
    half as much as without (the decimated take keeps its 12-15 Hz)."""
    take = load_motion(cmu_dir / "01_01.bvh")[1:]  # frame 0 is cgspeed's added T-pose
    plain, banded = _decimated_apart(take, WindowConfig()), _decimated_apart(take, WindowConfig(band_hz=12.0))
    assert banded < 0.65 * plain, (banded, plain)
    with pytest.raises(InputError):
        WindowConfig(band_hz=0.0)


def test_the_working_band_judges_a_decimated_take_on_the_band_of_its_resampled_twin(cmu_dir):
    """With the working band (the shipped model's), a real take given at 30 fps by decimation is
    low-passed at the band its 120-fps twin keeps through band-limited resampling (12 Hz): their
    window features differ about half as much as without. A clip already band-limited that
    narrowly is left as it is, and the training examples keep their own band."""
    import pandas as pd

    from evalkit.models.corruptions import Provenance
    from evalkit.models.dataset import example_windows
    from evalkit.models.examples import Example

    take = load_motion(cmu_dir / "01_01.bvh")[1:]  # frame 0 is cgspeed's added T-pose
    plain = _decimated_apart(take, WindowConfig())
    working = _decimated_apart(take, WindowConfig(working_band=True))
    assert working < 0.65 * plain, (working, plain)
    banded = resample(take[:600], 30.0, band_limited=True)
    assert banded.meta["band_hz"] == pytest.approx(12.0)
    pd.testing.assert_frame_equal(window_features(banded, WindowConfig()),
                                  window_features(banded, WindowConfig(working_band=True)))
    plain30 = take[:600].slice(0, None, 4)
    assert "band_hz" not in plain30.meta
    ex = Example(plain30, Provenance(source="01_01"), "01", "01_01", "cmu")
    pd.testing.assert_frame_equal(example_windows(0, ex, WindowConfig()),
                                  example_windows(0, ex, WindowConfig(working_band=True)))
    assert not window_features(plain30, WindowConfig()).equals(window_features(plain30, WindowConfig(working_band=True)))
