"""Syllable nuclei, pitch-accent candidates, PAPT, accent features and PSI.

Pipeline (all times in seconds):

1. **Syllable nuclei** (after de Jong & Wempe 2009): peaks of the intensity contour that stand
   out from the valleys around them by at least ``min_dip_db`` (2 dB), lie above a silence
   threshold (``silence_db`` below the 99th percentile of intensity) and above the utterance's
   median intensity, and are voiced. A nucleus's syllable spans the intensity valleys on either
   side.
2. **Accent features** per nucleus, from the F0 contour in semitones (re 100 Hz):
   ``f0_peak_hz`` and **PAPT** (pitch-accent peak time: time of the F0 maximum in the syllable
   or just after it, ``peak_delay_s``, since accent peaks are often late), ``excursion_st``
   (peak above the utterance's declination line, a Theil–Sen fit of F0 against time),
   ``rise_st`` and ``slope_st_per_s`` (rise from the F0 minimum in the ``rise_window_s`` before
   the peak, and its rate), ``intensity_db`` (nucleus intensity re the utterance median) and
   ``duration_s`` (syllable length).
3. **Accents**: candidates whose F0 peak stands out, i.e. ``excursion_st >= min_excursion_st``
   and ``rise_st >= min_rise_st``; when two accents are closer than ``min_separation_s``, the
   one with the larger excursion is kept.
4. **PSI** (Pitch Strength Indicator) in [0, 1]: a :class:`~evalkit.strength_scale.StrengthScale`
   calibrated on real read speech (:data:`DEFAULT_PSI_SCALE`), or any fitted scale/classifier.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd
from scipy.signal import find_peaks
from scipy.stats import theilslopes

from evalkit.errors import InputError
from evalkit.speech.audio import Audio
from evalkit.speech.prosody import IntensityTrack, PitchConfig, PitchTrack, intensity_track, pitch_track

#: Features of an accent used for PSI and the pitch-accent classifiers.
ACCENT_FEATURES = ("excursion_st", "rise_st", "slope_st_per_s", "intensity_db", "duration_s")
#: Features averaged by the default PSI scale (duration enters as its log).
PSI_FEATURES = ("excursion_st", "rise_st", "intensity_db", "duration_s")


@dataclass(frozen=True)
class AccentConfig:
    """Parameters of nucleus and accent detection (defaults suit read and conversational speech).

    Attributes:
        pitch: F0 tracking (see :class:`~evalkit.speech.prosody.PitchConfig`).
        intensity_min_pitch_hz: analysis window of the intensity contour (3.2 / this, s).
        silence_db: nuclei must lie within this many dB of the 99th percentile intensity.
        min_dip_db: a nucleus must rise this many dB above the valleys around it.
        peak_delay_s: the F0 peak may come this long after the syllable's end.
        rise_window_s: window before the peak in which the F0 minimum for the rise is sought.
        min_excursion_st, min_rise_st: thresholds that make a candidate an accent.
        min_separation_s: closer accents are merged (the larger excursion wins).
    """

    pitch: PitchConfig = field(default_factory=PitchConfig)
    intensity_min_pitch_hz: float = 100.0
    silence_db: float = 25.0
    min_dip_db: float = 2.0
    peak_delay_s: float = 0.06
    rise_window_s: float = 0.25
    min_excursion_st: float = 0.5
    min_rise_st: float = 1.0
    min_separation_s: float = 0.18


@dataclass(frozen=True)
class Accent:
    """A pitch-accent candidate or accent.

    Attributes:
        papt: pitch-accent peak time (F0 maximum), seconds.
        nucleus: time of the syllable nucleus (intensity peak), seconds.
        start, end: syllable boundaries, seconds.
        f0_peak_hz: F0 at the PAPT, Hz.
        excursion_st: F0 peak above the declination line, semitones.
        rise_st: F0 rise into the peak, semitones; slope_st_per_s its rate.
        intensity_db: nucleus intensity relative to the utterance median, dB.
        duration_s: syllable duration, seconds.
        accented: passes the accent thresholds.
        psi: pitch strength indicator in [0, 1] (NaN until scored).
        label: free text (e.g. a TextGrid label such as ``H*``).
        source: ``"auto"`` (detected) or ``"textgrid"`` (annotated).
    """

    papt: float
    nucleus: float
    start: float
    end: float
    f0_peak_hz: float
    excursion_st: float
    rise_st: float
    slope_st_per_s: float
    intensity_db: float
    duration_s: float
    accented: bool = True
    psi: float = float("nan")
    label: str = ""
    source: str = "auto"


@dataclass(frozen=True, eq=False)
class SpeechAnalysis:
    """Everything measured on one recording.

    Attributes:
        name: recording name; duration: seconds.
        pitch, intensity: the contours.
        candidates: all voiced syllable nuclei with their features (accented or not).
        accents: the pitch accents, with PSI.
    """

    name: str
    duration: float
    pitch: PitchTrack
    intensity: IntensityTrack
    candidates: tuple[Accent, ...]
    accents: tuple[Accent, ...]

    @property
    def accent_rate(self) -> float:
        """Pitch accents per second of recording."""
        return len(self.accents) / self.duration if self.duration > 0 else float("nan")

    @property
    def papts(self) -> np.ndarray:
        """``(accents,)`` pitch-accent peak times, seconds."""
        return np.array([a.papt for a in self.accents], dtype=float)

    @property
    def psi(self) -> np.ndarray:
        """``(accents,)`` PSI values."""
        return np.array([a.psi for a in self.accents], dtype=float)

    def accents_frame(self, candidates: bool = False) -> pd.DataFrame:
        """The accents (or all candidates) as a tidy DataFrame, one row each."""
        rows = [asdict(a) for a in (self.candidates if candidates else self.accents)]
        cols = [f.name for f in Accent.__dataclass_fields__.values()]
        return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------------------------
def syllable_nuclei(intensity: IntensityTrack, pitch: PitchTrack, config: AccentConfig = AccentConfig()) -> list[tuple[float, float, float]]:
    """Voiced syllable nuclei as ``(nucleus_time, start, end)`` in seconds.

    See the module docstring (de Jong & Wempe 2009 style intensity-peak picking).
    """
    db = intensity.db
    t = intensity.times
    if len(db) < 3:
        return []
    threshold = max(np.percentile(db, 99) - config.silence_db, np.median(db))
    peaks, _ = find_peaks(db, prominence=config.min_dip_db)
    out = []
    for k, p in enumerate(peaks):
        if db[p] < threshold:
            continue
        f0 = pitch.at(t[p])
        if not np.isfinite(f0):
            # voiced nearby (within 20 ms)? nuclei of short vowels can sit at a voicing edge
            near = pitch.at(np.array([t[p] - 0.02, t[p] + 0.02]))
            if not np.isfinite(near).any():
                continue
        # syllable edges: the deepest intensity valley towards each neighbouring nucleus, or
        # where intensity first falls below the silence threshold, whichever is nearer
        a = peaks[k - 1] if k > 0 else 0
        b = peaks[k + 1] if k + 1 < len(peaks) else len(db) - 1
        i0 = a + int(np.argmin(db[a:p + 1]))
        i1 = p + int(np.argmin(db[p:b + 1]))
        below = np.flatnonzero(db[i0:p] < threshold)
        if len(below):
            i0 = i0 + below[-1]
        below = np.flatnonzero(db[p:i1 + 1] < threshold)
        if len(below):
            i1 = p + below[0]
        out.append((float(t[p]), float(t[i0]), float(t[i1])))
    return out


def _declination(pitch: PitchTrack) -> tuple[float, float]:
    """Intercept and slope (st, st/s) of a robust line through the voiced F0 (semitones re 100 Hz)."""
    st = pitch.semitones()
    v = np.isfinite(st)
    if v.sum() < 5:
        return (float(np.nanmedian(st)) if v.any() else 0.0), 0.0
    slope, intercept, _, _ = theilslopes(st[v][::2], pitch.times[v][::2])
    return float(intercept), float(slope)


def _parabolic_peak(times: np.ndarray, values: np.ndarray, i: int) -> tuple[float, float]:
    """Sub-frame peak time and value by a parabola through frames i-1, i, i+1 (if all finite)."""
    if 0 < i < len(values) - 1 and np.all(np.isfinite(values[i - 1:i + 2])):
        y0, y1, y2 = values[i - 1:i + 2]
        den = y0 - 2 * y1 + y2
        if den < 0:
            d = 0.5 * (y0 - y2) / den
            if abs(d) <= 1:
                step = times[i + 1] - times[i]
                return float(times[i] + d * step), float(y1 - 0.25 * (y0 - y2) * d)
    return float(times[i]), float(values[i])


def accent_features(
    pitch: PitchTrack,
    intensity: IntensityTrack,
    nucleus: float,
    start: float,
    end: float,
    config: AccentConfig = AccentConfig(),
    declination: tuple[float, float] | None = None,
    median_db: float | None = None,
    papt: float | None = None,
) -> Accent | None:
    """Features of the syllable ``start..end`` (s) with nucleus at ``nucleus`` (s).

    If ``papt`` is given (an annotated peak time), the F0 peak is sought within 50 ms of it;
    otherwise within the syllable (plus ``config.peak_delay_s``). Returns ``None`` when the
    window has no voiced frame.
    """
    st = pitch.semitones()
    t = pitch.times
    if declination is None:
        declination = _declination(pitch)
    if median_db is None:
        median_db = float(np.median(intensity.db))
    if papt is not None:
        lo, hi = papt - 0.05, papt + 0.05
    else:
        lo, hi = start, end + config.peak_delay_s
    win = np.flatnonzero((t >= lo) & (t <= hi) & np.isfinite(st))
    if len(win) == 0:
        return None
    i = int(win[np.argmax(st[win])])
    t_peak, st_peak = _parabolic_peak(t, st, i)
    if not (lo - 0.01 <= t_peak <= hi + 0.01):
        t_peak, st_peak = float(t[i]), float(st[i])
    before = np.flatnonzero((t >= t_peak - config.rise_window_s) & (t <= t_peak) & np.isfinite(st))
    if len(before):
        j = int(before[np.argmin(st[before])])
        rise = st_peak - float(st[j])
        dt = t_peak - float(t[j])
        slope = rise / dt if dt >= 0.04 else rise / 0.04
    else:
        rise, slope = 0.0, 0.0
    a0, a1 = declination
    return Accent(
        papt=t_peak,
        nucleus=float(nucleus),
        start=float(start),
        end=float(end),
        f0_peak_hz=float(100.0 * 2 ** (st_peak / 12.0)),
        excursion_st=float(st_peak - (a0 + a1 * t_peak)),
        rise_st=float(rise),
        slope_st_per_s=float(slope),
        intensity_db=float(intensity.at(nucleus) - median_db),
        duration_s=float(max(end - start, 0.0)),
    )


def candidate_accents(pitch: PitchTrack, intensity: IntensityTrack, config: AccentConfig = AccentConfig()) -> list[Accent]:
    """Every voiced syllable nucleus with its accent features, ``accented`` set by the thresholds."""
    decl = _declination(pitch)
    med = float(np.median(intensity.db))
    out = []
    for nucleus, start, end in syllable_nuclei(intensity, pitch, config):
        a = accent_features(pitch, intensity, nucleus, start, end, config, decl, med)
        if a is None:
            continue
        ok = a.excursion_st >= config.min_excursion_st and a.rise_st >= config.min_rise_st
        out.append(replace(a, accented=bool(ok)))
    return out


def _thin(accents: list[Accent], min_separation: float) -> list[Accent]:
    """Drop the weaker (smaller excursion) of two accents closer than ``min_separation`` s."""
    kept: list[Accent] = []
    for a in sorted(accents, key=lambda a: -a.excursion_st):
        if all(abs(a.papt - k.papt) >= min_separation for k in kept):
            kept.append(a)
    return sorted(kept, key=lambda a: a.papt)


def score_psi(accents: Sequence[Accent], scale=None) -> list[Accent]:
    """The accents with ``psi`` set by ``scale`` (default :data:`DEFAULT_PSI_SCALE`).

    ``scale`` is anything with ``features`` and ``strength(DataFrame) -> (n,)``: a fitted
    :class:`~evalkit.strength_scale.StrengthScale` or
    :class:`~evalkit.models.strength.StrengthClassifier`.
    """
    if not accents:
        return []
    scale = scale or default_psi_scale()
    frame = pd.DataFrame([asdict(a) for a in accents])
    psi = scale.strength(frame[list(scale.features)])
    return [replace(a, psi=float(p)) for a, p in zip(accents, psi)]


def analyze_speech(audio: Audio, config: AccentConfig = AccentConfig(), psi_scale=None) -> SpeechAnalysis:
    """Detect pitch accents in a recording: contours, candidates, accents with PAPT and PSI."""
    pitch = pitch_track(audio, config.pitch)
    intensity = intensity_track(audio, config.intensity_min_pitch_hz, config.pitch.time_step)
    cands = candidate_accents(pitch, intensity, config)
    accents = _thin([c for c in cands if c.accented], config.min_separation_s)
    return SpeechAnalysis(
        name=audio.name,
        duration=audio.duration,
        pitch=pitch,
        intensity=intensity,
        candidates=tuple(score_psi(cands, psi_scale)),
        accents=tuple(score_psi(accents, psi_scale)),
    )


def accents_at(
    audio: Audio,
    times: Sequence[float],
    labels: Sequence[str] | None = None,
    config: AccentConfig = AccentConfig(),
    psi_scale=None,
    windows: Sequence[tuple[float, float] | None] | None = None,
    accented_syllables: Sequence[tuple[float, float]] = (),
) -> SpeechAnalysis:
    """Accents at annotated times (e.g. a TextGrid point tier): features and PSI measured there.

    Each annotated time is taken as the PAPT's neighbourhood: the F0 peak within 50 ms is the
    PAPT (or within ``windows[i] = (start, end)`` s when given, e.g. an annotated syllable
    interval), the syllable is the detected nucleus whose syllable (plus ``peak_delay_s``) contains
    it, the nearest if several do (or ±80 ms around it if none does). ``accented_syllables``
    (``(start, end)`` s, e.g. the ``*`` intervals of a TextGrid written by evalkit) settle which
    syllable a peak belongs to when it falls in two.
    Annotations without any voiced frame nearby are kept with NaN features (PSI NaN) so the
    user sees them. Returns a :class:`SpeechAnalysis` whose ``accents`` follow the annotation.
    """
    pitch = pitch_track(audio, config.pitch)
    intensity = intensity_track(audio, config.intensity_min_pitch_hz, config.pitch.time_step)
    nuclei = syllable_nuclei(intensity, pitch, config)
    decl = _declination(pitch)
    med = float(np.median(intensity.db))
    labels = list(labels) if labels is not None else [""] * len(times)
    windows = list(windows) if windows is not None else [None] * len(times)
    if not (len(labels) == len(times) == len(windows)):
        raise InputError("accents_at: times, labels and windows must have the same length")
    out = []
    for t0, lab, win in zip(times, labels, windows):
        if not (0 <= t0 <= audio.duration):
            raise InputError(f"annotated accent at {t0:.3f} s lies outside the {audio.duration:.3f} s recording {audio.name}")
        slack = config.pitch.time_step  # a sub-frame peak may sit just past the search window
        holding = [(abs(n - t0), (n, s, e)) for n, s, e in nuclei if s - slack <= t0 <= e + config.peak_delay_s + slack]
        marked = [h for h in holding if any(a - 2e-3 <= h[1][0] <= b + 2e-3 and abs(h[1][2] - b) < 2e-3 for a, b in accented_syllables)]
        syl = min(marked or holding)[1] if (marked or holding) else None
        if syl is None:
            syl = (float(t0), float(t0) - 0.08, float(t0) + 0.08)
        if win is not None:
            a = accent_features(pitch, intensity, syl[0], win[0], win[1], config, decl, med)
        elif marked:  # the annotation names its syllable: search the peak as detection does
            a = accent_features(pitch, intensity, syl[0], syl[1], syl[2], config, decl, med)
        else:
            a = accent_features(pitch, intensity, syl[0], syl[1], syl[2], config, decl, med, papt=float(t0))
        if a is None:
            nan = float("nan")
            a = Accent(float(t0), syl[0], syl[1], syl[2], nan, nan, nan, nan, nan, syl[2] - syl[1])
        out.append(replace(a, label=str(lab), source="textgrid"))
    scorable = [a for a in out if np.isfinite(a.excursion_st)]
    scored = {id(a): s for a, s in zip(scorable, score_psi(scorable, psi_scale))}
    accents = tuple(scored.get(id(a), a) for a in out)
    cands = tuple(score_psi(candidate_accents(pitch, intensity, config), psi_scale))
    return SpeechAnalysis(audio.name, audio.duration, pitch, intensity, cands, accents)


# --------------------------------------------------------------------------------------------
# Default PSI calibration: reference population = accents detected with the default
# configuration in 30 real read-speech recordings (../shared/data/speech: 20 LJ Speech, 10
# VCTK/TSP). Reproduce with ``fit_psi_scale`` (tests/speech/test_accents.py checks the numbers
# against a refit when the shared data is present).
_DEFAULT_PSI = {
    "features": ["excursion_st", "rise_st", "intensity_db", "duration_s"],
    "log": ["duration_s"],
    "weights": None,
    "mean": [5.1432, 6.6828, 9.0673, -2.0244],
    "scale": [2.9603, 3.8061, 3.5669, 0.4915],
    "spread": 0.6193,
    "n_reference": 304,
}


def default_psi_scale():
    """The default PSI calibration (a fitted :class:`~evalkit.strength_scale.StrengthScale`)."""
    from evalkit.strength_scale import StrengthScale

    return StrengthScale.from_dict(_DEFAULT_PSI)


def fit_psi_scale(accents: Sequence[Accent]):
    """A :class:`~evalkit.strength_scale.StrengthScale` calibrated on ``accents`` (a reference
    population of detected accents), over :data:`PSI_FEATURES` with log duration."""
    from evalkit.strength_scale import StrengthScale

    frame = pd.DataFrame([asdict(a) for a in accents])
    return StrengthScale(features=PSI_FEATURES, log=("duration_s",)).fit(frame[list(PSI_FEATURES)])
