"""Speech analysis: audio loading, F0 and intensity (Praat), syllable nuclei, pitch accents
(PAPT, accent features, PSI) and Praat TextGrid input/output.

Main entry points::

    from evalkit.speech import load_audio, speech_accents
    analysis = speech_accents("take.wav")            # or textgrid="take.TextGrid"
    analysis.papts, analysis.psi, analysis.accent_rate
"""

from evalkit.speech.audio import Audio, load_audio, write_wav
from evalkit.speech.prosody import IntensityTrack, PitchConfig, PitchTrack, intensity_track, pitch_track
from evalkit.speech.accents import (
    ACCENT_FEATURES,
    Accent,
    AccentConfig,
    SpeechAnalysis,
    accents_at,
    analyze_speech,
    candidate_accents,
    default_psi_scale,
    fit_psi_scale,
    score_psi,
    syllable_nuclei,
)
from evalkit.speech.textgrid import (
    Interval,
    IntervalTier,
    Point,
    PointTier,
    TextGrid,
    read_textgrid,
    write_textgrid,
)
from evalkit.speech.annotation import analysis_to_textgrid, load_accents, speech_accents

__all__ = [
    "Audio", "load_audio", "write_wav",
    "PitchConfig", "PitchTrack", "IntensityTrack", "pitch_track", "intensity_track",
    "ACCENT_FEATURES", "Accent", "AccentConfig", "SpeechAnalysis", "accents_at", "analyze_speech",
    "candidate_accents", "default_psi_scale", "fit_psi_scale", "score_psi", "syllable_nuclei",
    "Interval", "IntervalTier", "Point", "PointTier", "TextGrid", "read_textgrid", "write_textgrid",
    "analysis_to_textgrid", "load_accents", "speech_accents",
]
