"""Stimulus preparation on real CMU capture: corruptions, positions JSON, media durations."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from evalkit.data import sample_path
from evalkit.errors import FileFormatError, InputError
from evalkit.motion import load_motion
from tests.webtest.helpers import BASE_STUDY, deep_update
from webtest.stimuli import jitter, media_duration, motion_payload, prepare_stimuli, timewarp
from webtest.study import load_study


@pytest.fixture(scope="module")
def walk():
    return load_motion(sample_path("cmu", "16_15.amc")).slice(0, 240)


def _angle_deg(q1, q2):
    d = np.abs(np.sum(q1 * q2, axis=-1)).clip(0, 1)
    return np.rad2deg(2 * np.arccos(d))


def test_jitter_adds_rotation_noise_of_the_requested_size(walk):
    noisy = jitter(walk, deg=3.0, seed=1)
    ang = _angle_deg(walk.rotations, noisy.rotations)
    # a 3-D Gaussian rotation vector with 3 deg per axis: mean angle = 3 * sqrt(8/pi) = 4.79 deg
    assert ang.mean() == pytest.approx(3.0 * np.sqrt(8 / np.pi), rel=0.05)
    np.testing.assert_allclose(np.linalg.norm(noisy.rotations, axis=-1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(noisy.root_translation, walk.root_translation)
    assert np.array_equal(jitter(walk, 3.0, seed=1).rotations, noisy.rotations)
    assert not np.array_equal(jitter(walk, 3.0, seed=2).rotations, noisy.rotations)
    # frame-to-frame noise shows as extra joint speed (the tremor participants should see)
    speed = lambda m: np.linalg.norm(np.diff(m.positions, axis=0), axis=-1).mean()
    assert speed(noisy) > 2 * speed(walk)


def test_timewarp_keeps_duration_and_ends_but_changes_timing(walk):
    warped = timewarp(walk, amount=0.6, period_s=1.0)
    assert warped.n_frames == walk.n_frames and warped.fps == walk.fps
    np.testing.assert_allclose(warped.positions[0], walk.positions[0], atol=1e-9)
    # at t = period/4 the warp is ahead by amount*period/(2 pi) seconds
    f = int(0.25 * walk.fps)
    ahead = 0.6 * 1.0 / (2 * np.pi)
    src = (0.25 + ahead) * walk.fps
    expected_root = np.interp(src, np.arange(walk.n_frames), walk.root_translation[:, 0])
    assert warped.root_translation[f, 0] == pytest.approx(expected_root, abs=1e-6)
    assert not np.allclose(warped.positions, walk.positions)
    with pytest.raises(InputError):
        timewarp(walk, amount=1.2)


def test_payload_is_positions_in_metres_with_bounds(walk):
    p = motion_payload(walk)
    assert p["format"] == "evalkit-positions/1" and p["frames"] == walk.n_frames and p["joints"] == walk.n_joints
    pos = np.array(p["positions"]).reshape(p["frames"], p["joints"], 3)
    np.testing.assert_allclose(pos, walk.positions, atol=5e-4)  # rounded to 1 mm
    assert p["parents"][0] == -1 and len(p["parents"]) == walk.n_joints
    lo, hi = np.array(p["bounds"])
    assert 1.3 < hi[1] - lo[1] < 2.0  # a person, in metres
    text = json.dumps(p)
    assert "16_15" not in text and "amc" not in text  # nothing that reveals the source


def test_prepare_trims_transforms_resamples_and_caches(tmp_path):
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, {"motion": {"fps": 25}})))
    study = load_study(tmp_path)
    out = prepare_stimuli(study, tmp_path / "cache")
    assert set(out) == {"walk.orig", "walk.jit", "run.orig", "run.jit"}
    w = out["walk.orig"]
    assert w.kind == "motion" and w.mimetype == "application/json"
    data = json.loads(w.path.read_text())
    assert data["fps"] == 25 and data["frames"] == 5 and w.duration_s == pytest.approx(0.2)
    assert json.loads(out["walk.jit"].path.read_text())["positions"] != data["positions"]
    mtime = w.path.stat().st_mtime_ns
    again = prepare_stimuli(study, tmp_path / "cache")
    assert again["walk.orig"].path == w.path and w.path.stat().st_mtime_ns == mtime  # reused


def test_media_duration_of_real_wav_and_ffmpeg_path(tmp_path):
    wav = sample_path("speech", "LJ001-0001.wav")
    d = media_duration(wav)
    assert 5 < d < 15
    bad = tmp_path / "broken.mp4"
    bad.write_bytes(b"not a video")
    with pytest.raises(FileFormatError, match="broken.mp4"):
        media_duration(bad)


def test_motion_with_audio_lasts_as_long_as_the_longer(tmp_path):
    stimuli = [dict(s) for s in BASE_STUDY["stimuli"]]
    stimuli[0]["audio"] = "sample:speech/LJ001-0001.wav"
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, {"stimuli": stimuli})))
    out = prepare_stimuli(load_study(tmp_path), tmp_path / "cache")
    assert out["walk.orig"].audio is not None
    assert out["walk.orig"].duration_s == pytest.approx(media_duration(sample_path("speech", "LJ001-0001.wav")))


def test_trim_past_the_end_of_the_clip_is_an_input_error(tmp_path):
    stimuli = [dict(s) for s in BASE_STUDY["stimuli"]]
    stimuli[2]["trim"] = [5.0, 6.0]  # the run lasts 1.2 s
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(deep_update(BASE_STUDY, {"stimuli": stimuli})))
    with pytest.raises(InputError, match=r"09_06-run.amc: trim starts at 5.0 s but the clip lasts 1.18 s"):
        prepare_stimuli(load_study(tmp_path), tmp_path / "cache")


def test_prepare_study_library_entry_point(example_study):
    import webtest

    prepared = webtest.prepare_study(example_study)
    assert prepared.study.id == "example-cmu" and len(prepared.stimuli) == 15
    assert len(prepared.cells_json) == 12 and prepared.balance["balanced"]
    assert all(p.path.exists() and p.duration_s > 1.0 for p in prepared.stimuli.values())
    assert not (example_study / "ratings.sqlite").exists()  # no database is touched
