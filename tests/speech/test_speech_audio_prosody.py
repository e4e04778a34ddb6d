"""Audio loading and Praat pitch/intensity on real recordings."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.data import speech_files
from evalkit.errors import FileFormatError, InputError
from evalkit.speech import Audio, PitchConfig, intensity_track, load_audio, pitch_track, write_wav
from tests.conftest import shared_data


@pytest.fixture(scope="module")
def lj():
    return load_audio(speech_files()[0])


def test_load_bundled_wav(lj):
    assert lj.sample_rate == 22050
    assert lj.samples.ndim == 1
    assert 9.0 < lj.duration < 10.5  # LJ001-0001 is 9.66 s
    assert np.abs(lj.samples).max() <= 1.0


def test_stereo_file_is_averaged_to_mono():
    path = shared_data("speech", "vctk-tsp", "stim_01_ref.wav")
    import parselmouth

    snd = parselmouth.Sound(str(path))
    assert snd.n_channels == 2
    a = load_audio(path)
    assert a.meta["channels"] == 2
    np.testing.assert_allclose(a.samples, snd.values.mean(axis=0))


def test_flac_and_wav_round_trip(lj, tmp_path):
    snd = lj.to_sound()
    flac = tmp_path / "x.flac"
    snd.save(str(flac), "FLAC")  # Praat's own FLAC writer
    b = load_audio(flac)
    assert b.sample_rate == lj.sample_rate and len(b.samples) == len(lj.samples)
    assert np.max(np.abs(b.samples - lj.samples)) < 2.0 / 32768  # 16-bit quantisation
    wav = write_wav(lj, tmp_path / "y.wav")
    c = load_audio(wav)
    assert np.max(np.abs(c.samples - lj.samples)) < 2.0 / 32768


def test_not_audio_names_the_file(tmp_path):
    bad = tmp_path / "notes.wav"
    bad.write_text("this is not audio\n")
    with pytest.raises(FileFormatError) as e:
        load_audio(bad)
    assert "notes.wav" in str(e.value) and "WAV" in str(e.value)
    with pytest.raises(FileFormatError, match="not found"):
        load_audio(tmp_path / "missing.wav")


def test_audio_rejects_bad_arrays():
    with pytest.raises(InputError):
        Audio(np.zeros((2, 10)), 16000)
    with pytest.raises(InputError):
        Audio(np.zeros(10), 0)


def test_pitch_of_female_reader_is_in_range(lj):
    p = pitch_track(lj)
    f0 = p.f0_hz[p.voiced]
    assert 0.4 < p.voiced.mean() < 0.9
    assert 150 < np.median(f0) < 300  # LJ Speech: one female reader
    assert p.floor_hz > 75 and p.ceiling_hz < 600  # adaptive second pass narrowed the range
    assert np.allclose(np.diff(p.times), 0.01)


def test_pitch_recovers_a_known_monotone(lj):
    """Real speech resynthesised by Praat with F0 flattened to 140 Hz: the tracker reads 140 Hz."""
    from parselmouth.praat import call

    manip = call(lj.to_sound(), "To Manipulation", 0.01, 75, 600)
    tier = call(manip, "Extract pitch tier")
    call(tier, "Formula", "140")
    call([manip, tier], "Replace pitch tier")
    flat = call(manip, "Get resynthesis (overlap-add)")
    a = Audio(flat.values[0], flat.sampling_frequency, "flat")
    p = pitch_track(a)
    f0 = p.f0_hz[p.voiced]
    assert abs(np.median(f0) - 140) < 2
    assert np.mean(np.abs(f0 - 140) < 7) > 0.9


def test_intensity_track(lj):
    it = intensity_track(lj)
    assert np.isfinite(it.db).all()
    assert 30 < np.median(it.db) < 90
    assert it.times[0] >= 0 and it.times[-1] <= lj.duration


def test_bad_pitch_config():
    with pytest.raises(InputError):
        PitchConfig(floor_hz=500, ceiling_hz=100)
    with pytest.raises(InputError):
        PitchConfig(method="yin")


def test_too_short_audio():
    with pytest.raises(InputError, match="too short"):
        pitch_track(Audio(np.zeros(100), 16000, "tiny"))
