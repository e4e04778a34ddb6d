"""Accents to and from Praat TextGrids, and the one-call accent API used by synthesis.

Tiers written by :func:`analysis_to_textgrid`:

* ``PAPT`` (point tier): one point per pitch accent at its peak time, label ``psi=0.63``
  (plus the original label for annotated accents, e.g. ``H* psi=0.63``).
* ``syllables`` (interval tier): every voiced syllable nucleus's syllable, label ``*`` if it
  carries an accent, else ``.``.

Reading back the ``PAPT`` tier with :func:`speech_accents` (``textgrid=...``) gives the same
accents, so people can correct the detector in Praat and feed their corrections back.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Sequence

from evalkit.errors import InputError
from evalkit.speech.accents import AccentConfig, SpeechAnalysis, accents_at, analyze_speech
from evalkit.speech.audio import Audio, load_audio
from evalkit.speech.textgrid import Interval, IntervalTier, Point, PointTier, TextGrid, read_textgrid, tier_times

PAPT_TIER = "PAPT"
SYLLABLE_TIER = "syllables"
_PSI_LABEL = re.compile(r"\s*psi=\S*\s*")


def analysis_to_textgrid(analysis: SpeechAnalysis, extra_tiers: Sequence = ()) -> TextGrid:
    """A TextGrid with the ``PAPT`` and ``syllables`` tiers of ``analysis`` (plus ``extra_tiers``)."""
    points = []
    for a in analysis.accents:
        label = (a.label + " " if a.label else "") + (f"psi={a.psi:.3f}" if a.psi == a.psi else "psi=nan")
        points.append(Point(min(max(a.papt, 0.0), analysis.duration), label))
    accented = {round(a.nucleus, 6) for a in analysis.accents}
    sylls = []
    last_end = 0.0
    for c in sorted(analysis.candidates, key=lambda c: c.start):
        s, e = max(c.start, last_end), min(c.end, analysis.duration)
        if e - s < 1e-4:
            continue
        sylls.append(Interval(s, e, "*" if round(c.nucleus, 6) in accented else "."))
        last_end = e
    tiers = [PointTier(PAPT_TIER, tuple(points)), IntervalTier(SYLLABLE_TIER, tuple(sylls))]
    return TextGrid(0.0, float(analysis.duration), tuple(tiers) + tuple(extra_tiers))


def speech_accents(
    audio: Audio | str | os.PathLike,
    textgrid: TextGrid | str | os.PathLike | None = None,
    tier: str = PAPT_TIER,
    config: AccentConfig = AccentConfig(),
    psi_scale=None,
) -> SpeechAnalysis:
    """Pitch accents of a recording: PAPTs (s) and PSI, detected or from a TextGrid.

    Args:
        audio: an :class:`Audio` or a path to a WAV/FLAC file.
        textgrid: optional TextGrid (object or path) with manual accents on ``tier``: a point
            tier (points at the accents' peaks) or an interval tier (labelled intervals = the
            accented syllables). Features and PSI are then measured at those accents.
        tier: name of the accent tier (default ``PAPT``, the tier this module writes).
        config: detection parameters; psi_scale: PSI calibration (default: the built-in one).

    Returns:
        a :class:`SpeechAnalysis`; ``.papts`` and ``.psi`` are the arrays most callers need.
    """
    if not isinstance(audio, Audio):
        audio = load_audio(audio)
    if textgrid is None:
        return analyze_speech(audio, config, psi_scale)
    if not isinstance(textgrid, TextGrid):
        textgrid = read_textgrid(textgrid)
    times, labels, windows = tier_times(textgrid, tier)
    labels = [_PSI_LABEL.sub(" ", lab).strip() for lab in labels]
    for t in times:
        if not (0 <= t <= audio.duration + 1e-6):
            raise InputError(f"TextGrid tier {tier!r}: accent at {t:.3f} s lies outside the {audio.duration:.3f} s recording {audio.name}")
    starred: list[tuple[float, float]] = []
    if SYLLABLE_TIER in textgrid.tier_names and isinstance(textgrid.tier(SYLLABLE_TIER), IntervalTier):
        starred = [(i.start, i.end) for i in textgrid.tier(SYLLABLE_TIER).intervals if i.text.strip() == "*"]
    return accents_at(audio, times, labels, config, psi_scale, windows, starred)


def load_accents(audio_path: str | os.PathLike, textgrid_path: str | os.PathLike | None = None, tier: str = PAPT_TIER) -> SpeechAnalysis:
    """:func:`speech_accents` from file paths (convenience for scripts and the CLI)."""
    return speech_accents(Path(audio_path), Path(textgrid_path) if textgrid_path else None, tier)
