"""Pitch extraction speed: Praat (praat-parselmouth, as used by evalkit.speech) vs a pure-numpy
autocorrelation pitch tracker, on the same 10 s of real speech, in the same run.

Run:  .venv/bin/python bench/bench_pitch.py [--repeat 7] [--seconds 10]

The peer below is written for this benchmark only: a vectorised short-time autocorrelation
tracker in numpy (FFT autocorrelation of Hann-windowed frames, normalised by the window's own
autocorrelation as in Boersma 1993, best peak in the lag range with parabolic interpolation,
voicing and silence thresholds). It is a fair peer (vectorised over frames, no Python loop per
frame) but has no Viterbi path search, so it makes more octave errors than Praat; the script
also prints how often the two agree.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evalkit.data import speech_files  # noqa: E402
from evalkit.speech import Audio, PitchConfig, load_audio, pitch_track  # noqa: E402


def numpy_autocorr_pitch(x: np.ndarray, sr: float, time_step: float = 0.01, floor_hz: float = 75.0,
                         ceiling_hz: float = 600.0, voicing: float = 0.45, silence: float = 0.03) -> tuple[np.ndarray, np.ndarray]:
    """``(times_s, f0_hz)`` with NaN where unvoiced; pure numpy (see the module docstring)."""
    win_len = int(round(3.0 / floor_hz * sr))  # three periods of the lowest pitch
    hop = int(round(time_step * sr))
    n_frames = 1 + (len(x) - win_len) // hop
    idx = np.arange(win_len)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = x[idx]
    frames = frames - frames.mean(axis=1, keepdims=True)
    window = np.hanning(win_len)
    nfft = 1 << int(np.ceil(np.log2(2 * win_len)))
    spec = np.fft.rfft(frames * window, nfft, axis=1)
    ac = np.fft.irfft(spec * np.conj(spec), nfft, axis=1)[:, :win_len]
    wspec = np.fft.rfft(window, nfft)
    wac = np.fft.irfft(wspec * np.conj(wspec), nfft)[:win_len]
    r = ac / np.maximum(ac[:, :1], 1e-20) / np.maximum(wac / wac[0], 1e-6)
    lo, hi = int(np.floor(sr / ceiling_hz)), min(int(np.ceil(sr / floor_hz)), win_len - 2)
    seg = r[:, lo:hi + 1]
    k = np.argmax(seg, axis=1) + lo
    rows = np.arange(n_frames)
    y0, y1, y2 = r[rows, k - 1], r[rows, k], r[rows, np.minimum(k + 1, win_len - 1)]
    den = y0 - 2 * y1 + y2
    shift = np.where(den < 0, 0.5 * (y0 - y2) / np.where(den < 0, den, -1), 0.0)
    lag = k + np.clip(shift, -1, 1)
    peak = y1 - 0.25 * (y0 - y2) * shift
    amp = np.abs(frames).max(axis=1)
    voiced = (peak > voicing) & (amp > silence * np.abs(x).max())
    f0 = np.where(voiced, sr / lag, np.nan)
    times = (idx[:, 0] + win_len / 2) / sr
    return times, f0


def ten_seconds(seconds: float) -> Audio:
    """``seconds`` of real speech: the bundled LJ Speech samples, concatenated and cut."""
    parts = [load_audio(p) for p in speech_files()]
    sr = parts[0].sample_rate
    x = np.concatenate([p.samples for p in parts])
    n = int(seconds * sr)
    if len(x) < n:
        raise SystemExit(f"bundled speech is only {len(x) / sr:.1f} s")
    return Audio(x[:n], sr, f"LJ Speech bundled samples, first {seconds:g} s")


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    audio = ten_seconds(args.seconds)
    one_pass = PitchConfig(adaptive=False)
    pitch_track(audio)  # warm-up (imports, Praat start-up)
    numpy_autocorr_pitch(audio.samples, audio.sample_rate)

    t_praat2, p2 = timed(lambda: pitch_track(audio), args.repeat)
    t_praat1, p1 = timed(lambda: pitch_track(audio, one_pass), args.repeat)
    t_numpy, (tn, fn) = timed(lambda: numpy_autocorr_pitch(audio.samples, audio.sample_rate), args.repeat)

    f_praat = np.interp(tn, p1.times, p1.f0_hz, left=np.nan, right=np.nan)
    both = np.isfinite(f_praat) & np.isfinite(fn)
    agree = np.mean(np.abs(fn[both] - f_praat[both]) / f_praat[both] < 0.05) if both.any() else float("nan")

    print(f"input: {audio.name}, {audio.duration:.2f} s at {audio.sample_rate:g} Hz; median of {args.repeat} runs")
    print(f"{'tracker':<44} {'seconds':>8} {'x realtime':>11} {'ratio vs numpy':>15}")
    for name, t in (("Praat ac, two-pass range (evalkit default)", t_praat2),
                    ("Praat ac, one pass 75-600 Hz", t_praat1),
                    ("numpy autocorrelation peer, 75-600 Hz", t_numpy)):
        print(f"{name:<44} {t:8.4f} {audio.duration / t:11.0f} {t_numpy / t:15.2f}")
    print(f"speed-up of evalkit's default over the numpy peer: {t_numpy / t_praat2:.2f}x "
          f"(one-pass Praat: {t_numpy / t_praat1:.2f}x)")
    print(f"agreement: {both.mean():.0%} of frames voiced in both; {agree:.0%} of those within 5 % "
          f"(voiced: Praat {np.isfinite(f_praat).mean():.0%}, numpy {np.isfinite(fn).mean():.0%})")


if __name__ == "__main__":
    main()
