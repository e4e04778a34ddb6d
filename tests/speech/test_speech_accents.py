"""Accent detection on real read speech, PSI, TextGrid round trips."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared_data
from evalkit.data import speech_files
from evalkit.errors import FileFormatError, InputError
from evalkit.speech import (
    analysis_to_textgrid,
    analyze_speech,
    default_psi_scale,
    fit_psi_scale,
    load_audio,
    read_textgrid,
    speech_accents,
    write_textgrid,
)
from evalkit.speech.accents import PSI_FEATURES
from evalkit.speech.emphasis import emphasize


def _real_speech() -> list[Path]:
    lj = sorted(shared_data("speech", "ljspeech").glob("*.wav"))
    vctk = sorted(shared_data("speech", "vctk-tsp").glob("*.wav"))
    assert len(lj) == 20 and len(vctk) == 10
    return lj + vctk


@pytest.fixture(scope="module")
def real_analyses():
    return [(p, analyze_speech(load_audio(p))) for p in _real_speech()]


def test_accent_rates_on_real_read_speech_are_plausible(real_analyses):
    rates = np.array([a.accent_rate for _, a in real_analyses])
    syll = np.array([len(a.candidates) / a.duration for _, a in real_analyses])
    total = sum(len(a.accents) for _, a in real_analyses) / sum(a.duration for _, a in real_analyses)
    # read English: ~3-5.5 syllables/s, roughly one pitch accent every 2-3 syllables
    assert np.all((syll > 2.5) & (syll < 6.0)), syll
    assert np.all((rates > 0.8) & (rates < 3.0)), rates
    assert 1.2 < total < 2.5
    for _, a in real_analyses:
        p = a.papts
        assert np.all(np.diff(p) >= 0.18 - 1e-9)  # min separation
        assert np.all((p >= 0) & (p <= a.duration))
        acc = a.accents_frame()
        assert (acc["excursion_st"] >= 0.5).all() and (acc["rise_st"] >= 1.0).all()
        assert acc["psi"].between(0, 1).all()


def test_default_psi_scale_is_the_refit_on_real_speech(real_analyses):
    refit = fit_psi_scale([x for _, a in real_analyses for x in a.accents]).to_dict()
    default = default_psi_scale().to_dict()
    assert default["n_reference"] == refit["n_reference"]
    np.testing.assert_allclose(default["mean"], refit["mean"], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(default["scale"], refit["scale"], rtol=1e-3, atol=1e-3)
    assert abs(default["spread"] - refit["spread"]) < 1e-3


def test_psi_is_calibrated_and_monotone(real_analyses):
    psi = np.concatenate([a.psi for _, a in real_analyses])
    # calibrated on this very population: median ~0.5, spread over the unit interval
    assert 0.4 < np.median(psi) < 0.6
    assert np.quantile(psi, 0.1) < 0.25 and np.quantile(psi, 0.9) > 0.75
    scale = default_psi_scale()
    base = pd.DataFrame([asdict(x) for x in real_analyses[0][1].accents])[list(PSI_FEATURES)]
    stronger = base.assign(excursion_st=base["excursion_st"] + 2.0)
    assert np.all(scale.strength(stronger) > scale.strength(base))


def test_emphasised_syllables_get_higher_psi():
    """Constructed emphasis on real speech (+4 st F0 on chosen accents) raises their PSI."""
    audio = load_audio(speech_files()[1])
    before = analyze_speech(audio)
    chosen = before.accents[1::3]
    emph = analyze_speech(emphasize(audio, [a.papt for a in chosen], semitones=4.0))
    gains = []
    for a in chosen:
        after = [b for b in emph.candidates if abs(b.nucleus - a.nucleus) < 0.03]
        if after:
            gains.append(after[0].excursion_st - a.excursion_st)
    assert len(gains) >= 3
    assert np.median(gains) > 1.5


def test_textgrid_round_trip_on_real_speech(tmp_path, real_analyses):
    for path, a in real_analyses[::3] + [(p, analyze_speech(load_audio(p))) for p in speech_files()[:1]]:
        tg = analysis_to_textgrid(a)
        f = write_textgrid(tg, tmp_path / f"{path.stem}.TextGrid")
        back = read_textgrid(f)  # read by Praat itself
        assert back.tier_names == ["PAPT", "syllables"]
        assert len(back.tier("PAPT").points) == len(a.accents)
        again = speech_accents(load_audio(path), f)
        np.testing.assert_allclose(again.papts, a.papts, atol=1e-6)
        np.testing.assert_allclose(again.psi, a.psi, atol=1e-6)
        assert all(x.source == "textgrid" for x in again.accents)


def test_textgrid_accents_can_be_edited_and_use_intervals(tmp_path):
    from evalkit.speech import Interval, IntervalTier, Point, PointTier, TextGrid

    audio = load_audio(speech_files()[2])
    a = analyze_speech(audio)
    keep = a.accents[::2]
    tg = TextGrid(0.0, audio.duration, (
        PointTier("tones", tuple(Point(x.papt, "H*") for x in keep)),
        IntervalTier("accented", tuple(Interval(x.start, x.end, "acc") for x in keep)),
    ))
    f = write_textgrid(tg, tmp_path / "manual.TextGrid")
    pts = speech_accents(audio, f, tier="tones")
    assert len(pts.accents) == len(keep)
    assert [x.label for x in pts.accents] == ["H*"] * len(keep)
    np.testing.assert_allclose(pts.papts, [x.papt for x in keep], atol=0.011)
    ivs = speech_accents(audio, f, tier="accented")
    assert len(ivs.accents) == len(keep)
    assert all(x.start - 1e-6 <= p <= x.end + 0.07 for x, p in zip(keep, ivs.papts))


def test_textgrid_errors(tmp_path):
    audio = load_audio(speech_files()[0])
    bad = tmp_path / "bad.TextGrid"
    bad.write_text(
        'File type = "ooTextFile"\nObject class = "TextGrid"\n\nxmin = 0\nxmax = 2.3\ntiers? <exists>\nsize = 1\n'
        'item []:\n    item [1]:\n        class = "TextTier"\n        name = "PAPT"\n        xmin = 0\n'
        '        xmax = 2.3\n        points: size = 1\n        points [1]:\n            number = abc\n'
        '            mark = "H*"\n'
    )
    with pytest.raises(FileFormatError) as e:
        read_textgrid(bad)
    assert e.value.line == 16 and "bad.TextGrid" in str(e.value) and "expected a number" in str(e.value)
    from evalkit.speech import Point, PointTier, TextGrid

    good = write_textgrid(TextGrid(0, 20.0, (PointTier("PAPT", (Point(15.0, "x"),)),)), tmp_path / "late.TextGrid")
    with pytest.raises(InputError, match="outside"):
        speech_accents(audio, good)
    with pytest.raises(InputError, match="no tier named 'tones'; tiers are: PAPT"):
        speech_accents(audio, good, tier="tones")
    wav = speech_files()[0]
    with pytest.raises(FileFormatError, match="expected a Praat TextGrid"):
        read_textgrid(wav)
