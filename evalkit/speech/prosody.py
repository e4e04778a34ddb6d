"""F0 (pitch) and intensity contours with Praat's algorithms (praat-parselmouth).

Pitch uses Praat's autocorrelation method (Boersma 1993, ``To Pitch (ac)``); by default in two
passes (De Looze & Hirst 2008): a coarse first pass (3x the time step) with a wide range
(75–600 Hz) gives the speaker's quartiles, the second uses floor = 0.75 x Q1 and
ceiling = 1.5 x Q3, which removes most octave jumps. Intensity is Praat's ``To Intensity`` (dB, energy smoothed over ~3.2 / min pitch s).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from evalkit.errors import InputError
from evalkit.speech.audio import Audio


@dataclass(frozen=True)
class PitchConfig:
    """How F0 is tracked.

    Attributes:
        time_step: seconds between frames.
        floor_hz, ceiling_hz: search range of the first (or only) pass, Hz.
        adaptive: two-pass range from the speaker's quartiles (De Looze & Hirst 2008).
        method: ``"ac"`` (Praat's default autocorrelation) or ``"cc"`` (cross-correlation).
        voicing_threshold, silence_threshold, octave_jump_cost: Praat's parameters (defaults).
    """

    time_step: float = 0.01
    floor_hz: float = 75.0
    ceiling_hz: float = 600.0
    adaptive: bool = True
    method: str = "ac"
    voicing_threshold: float = 0.45
    silence_threshold: float = 0.03
    octave_jump_cost: float = 0.35

    def __post_init__(self) -> None:
        if not (0 < self.floor_hz < self.ceiling_hz):
            raise InputError(f"pitch floor ({self.floor_hz} Hz) must be positive and below the ceiling ({self.ceiling_hz} Hz)")
        if self.time_step <= 0:
            raise InputError(f"pitch time step must be positive, got {self.time_step}")
        if self.method not in ("ac", "cc"):
            raise InputError(f"pitch method must be 'ac' or 'cc', got {self.method!r}")


@dataclass(frozen=True, eq=False)
class PitchTrack:
    """An F0 contour.

    Attributes:
        times: ``(frames,)`` frame centres, seconds.
        f0_hz: ``(frames,)`` F0 in Hz, NaN where unvoiced.
        floor_hz, ceiling_hz: the range used (after the adaptive pass).
    """

    times: np.ndarray
    f0_hz: np.ndarray
    floor_hz: float
    ceiling_hz: float

    @property
    def voiced(self) -> np.ndarray:
        """``(frames,)`` bool, frames with an F0."""
        return np.isfinite(self.f0_hz)

    def semitones(self, reference_hz: float = 100.0) -> np.ndarray:
        """``(frames,)`` F0 in semitones re ``reference_hz`` (NaN where unvoiced)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return 12.0 * np.log2(self.f0_hz / reference_hz)

    def at(self, t: np.ndarray | float) -> np.ndarray:
        """F0 (Hz) at times ``t`` (s) by linear interpolation between voiced neighbours; NaN if
        either neighbour is unvoiced or ``t`` is outside the track."""
        t = np.asarray(t, dtype=float)
        out = np.interp(t, self.times, self.f0_hz, left=np.nan, right=np.nan)
        return out


@dataclass(frozen=True, eq=False)
class IntensityTrack:
    """An intensity contour: ``times`` ``(frames,)`` seconds, ``db`` ``(frames,)`` dB SPL (Praat)."""

    times: np.ndarray
    db: np.ndarray

    def at(self, t: np.ndarray | float) -> np.ndarray:
        """Intensity (dB) at times ``t`` (s), linear interpolation, edge values outside."""
        return np.interp(np.asarray(t, dtype=float), self.times, self.db)


def _praat_pitch(sound, cfg: PitchConfig, floor: float, ceiling: float):
    kw = dict(
        time_step=cfg.time_step,
        pitch_floor=floor,
        pitch_ceiling=ceiling,
        voicing_threshold=cfg.voicing_threshold,
        silence_threshold=cfg.silence_threshold,
        octave_jump_cost=cfg.octave_jump_cost,
    )
    return sound.to_pitch_ac(**kw) if cfg.method == "ac" else sound.to_pitch_cc(**kw)


def pitch_track(audio: Audio, config: PitchConfig = PitchConfig()) -> PitchTrack:
    """F0 contour of ``audio`` by Praat's pitch tracker (see the module docstring).

    Returns a :class:`PitchTrack` with one frame every ``config.time_step`` seconds.
    """
    if audio.duration < 3.0 / config.floor_hz + config.time_step:
        raise InputError(f"{audio.name or 'audio'}: {audio.duration:.3f} s is too short to track pitch")
    sound = audio.to_sound()
    floor, ceiling = config.floor_hz, config.ceiling_hz
    pitch = None
    if config.adaptive:
        # the first pass only needs the speaker's quartiles: a coarser time step (3x) suffices
        coarse = _praat_pitch(sound, replace(config, time_step=3 * config.time_step), floor, ceiling)
        f0 = coarse.selected_array["frequency"]
        f0 = f0[f0 > 0]
        if len(f0) >= 10:
            q1, q3 = np.percentile(f0, [25, 75])
            floor = max(40.0, 0.75 * q1)
            ceiling = max(floor * 2.0, 1.5 * q3)
    pitch = _praat_pitch(sound, config, floor, ceiling)
    f0 = np.array(pitch.selected_array["frequency"], dtype=np.float64)
    f0[f0 <= 0] = np.nan
    return PitchTrack(times=np.array(pitch.xs(), dtype=np.float64), f0_hz=f0, floor_hz=float(floor), ceiling_hz=float(ceiling))


def intensity_track(audio: Audio, min_pitch_hz: float = 100.0, time_step: float = 0.01) -> IntensityTrack:
    """Intensity contour (dB) of ``audio`` by Praat's ``To Intensity`` (mean subtracted: no).

    Args:
        min_pitch_hz: lowest pitch expected; sets the analysis window (3.2 / min_pitch s).
        time_step: seconds between frames.
    """
    sound = audio.to_sound()
    if audio.duration < 6.4 / min_pitch_hz:
        raise InputError(f"{audio.name or 'audio'}: {audio.duration:.3f} s is too short for an intensity contour")
    intensity = sound.to_intensity(minimum_pitch=min_pitch_hz, time_step=time_step, subtract_mean=False)
    db = np.array(intensity.values[0], dtype=np.float64)
    # Praat marks digital silence with very low values; keep them finite for peak picking.
    db[~np.isfinite(db)] = np.nanmin(db[np.isfinite(db)]) if np.isfinite(db).any() else 0.0
    return IntensityTrack(times=np.array(intensity.xs(), dtype=np.float64), db=db)
