"""Motion beats, audio onsets and the beat-alignment scores."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.data import speech_files
from evalkit.features.beats import (
    BeatConfig, audio_onsets, beat_alignment, beat_metrics, motion_beats, read_wav,
)


def test_audio_onsets_of_a_constructed_click_track():
    """Constructed signal (not a recording): noise bursts at known times."""
    rate = 22050
    x = np.zeros(rate * 3)
    times = np.array([0.3, 0.8, 1.25, 2.0, 2.6])
    rng = np.random.default_rng(0)
    for t in times:
        i = int(t * rate)
        x[i:i + 200] = rng.normal(0, 0.5, 200)
    on = audio_onsets(x, rate)
    assert on.shape == times.shape
    assert np.abs(on - times).max() < 0.02


def test_audio_onsets_of_real_speech():
    f = speech_files()[0]
    x, rate = read_wav(f)
    on = audio_onsets(x, rate)
    dur = len(x) / rate
    assert (on >= 0).all() and (on <= dur).all()
    assert 2.0 < len(on) / dur < 8.0  # syllable-rate onsets in read speech
    assert np.all(np.diff(on) >= 0.095)  # min gap 0.1 s, on a ~10 ms hop grid


def test_beat_alignment_kernel():
    audio = np.array([0.5, 1.0, 1.7, 2.4])
    assert beat_alignment(audio, audio, 0.05) == pytest.approx(1.0)
    scores = []
    for d in (0.01, 0.03, 0.06, 0.12):
        s = beat_alignment(audio + d, audio, 0.05)
        assert s == pytest.approx(np.exp(-d**2 / (2 * 0.05**2)))
        scores.append(s)
    assert all(a > b for a, b in zip(scores[:-1], scores[1:]))
    # averaging over audio beats: an extra audio beat with no motion beat nearby costs
    more_audio = np.append(audio, 3.5)
    assert beat_alignment(audio, more_audio, 0.05, over="motion") == pytest.approx(1.0)
    assert beat_alignment(audio, more_audio, 0.05, over="audio") == pytest.approx(0.8)
    assert np.isnan(beat_alignment([], audio, 0.05))


def test_motion_beats_follow_the_motion_in_time(walk_motion):
    pos = np.asarray(walk_motion.positions)
    fps = walk_motion.fps
    beats = motion_beats(pos, fps)
    assert 4 <= len(beats) <= 14  # speed minima of a 3.9 s walk: about two per stride
    k = 60  # drop the first 0.5 s: interior beats move 0.5 s earlier
    later = motion_beats(pos[k:], fps)
    inner = beats[(beats > k / fps + 0.3) & (beats < beats.max() - 0.01)]
    for b in inner:
        assert np.min(np.abs(later - (b - k / fps))) < 1.5 / fps


def test_beat_metrics_on_a_real_clip_with_real_speech(walk_motion):
    """The pairing of a CMU walk with an LJ Speech recording is constructed (they were not
    captured together): this checks the plumbing and ranges, not a finding."""
    x, rate = read_wav(speech_files()[0])
    onsets = audio_onsets(x, rate)
    pos = np.asarray(walk_motion.positions)
    row = beat_metrics(pos, walk_motion.fps, onsets)
    assert 0.0 <= row["beat_align"] <= 1.0 and 0.0 <= row["beat_consistency"] <= 1.0
    assert row["beat_consistency"] >= row["beat_align"]  # wider kernel (0.1 s vs 0.05 s)
    # motion beats placed exactly on audio onsets score 1
    mb = motion_beats(pos, walk_motion.fps)
    assert beat_alignment(mb, mb, BeatConfig().bc_sigma_s) == 1.0
