"""Pitch extraction speed: Praat (praat-parselmouth, as used by evalkit.speech) vs librosa's
``pyin`` and ``yin`` (the trackers Python users pick), on the same 10 s of real speech, in the
same run, all with the same 75-600 Hz range and a 10 ms hop.

Run:  .venv/bin/python bench/bench_pitch.py [--repeat 5] [--seconds 10]

Every tracker is timed alike: CPU seconds, best of ``--repeat`` runs after one untimed run
(imports, Praat start-up and numba compilation excluded for all). The script also prints how
often each librosa tracker agrees with Praat within 5 % on frames both call voiced. librosa is
in the ``bench`` extra (``pip install -e '.[bench]'``); the numpy autocorrelation tracker of
earlier versions stays as a third, dependency-free row.
"""

from __future__ import annotations

import argparse
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
    out = fn()  # untimed warm-up, the same for every tracker
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out


def librosa_trackers(x: np.ndarray, sr: float):
    """``{name: fn() -> (times_s, f0_hz with NaN unvoiced)}`` for librosa's pyin and yin with
    Praat's range and hop (frame of 3 periods of the floor, as Praat's default window)."""
    import librosa

    hop = int(round(0.01 * sr))
    frame = 1 << int(np.ceil(np.log2(3.0 / 75.0 * sr)))

    def pyin():
        f0, voiced, _ = librosa.pyin(x, fmin=75.0, fmax=600.0, sr=sr, frame_length=frame, hop_length=hop)
        return librosa.times_like(f0, sr=sr, hop_length=hop), np.where(voiced, f0, np.nan)

    def yin():
        f0 = librosa.yin(x, fmin=75.0, fmax=600.0, sr=sr, frame_length=frame, hop_length=hop)
        return librosa.times_like(f0, sr=sr, hop_length=hop), f0  # yin has no voicing decision

    return {"librosa.pyin (probabilistic YIN + HMM)": pyin, "librosa.yin": yin}


def agreement(ref, times: np.ndarray, f0: np.ndarray) -> str:
    f_praat = np.interp(times, ref.times, ref.f0_hz, left=np.nan, right=np.nan)
    both = np.isfinite(f_praat) & np.isfinite(f0)
    agree = np.mean(np.abs(f0[both] - f_praat[both]) / f_praat[both] < 0.05) if both.any() else float("nan")
    return f"{both.mean():4.0%} of frames voiced in both, {agree:4.0%} of those within 5 % of Praat"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=10.0)
    args = ap.parse_args()
    audio = ten_seconds(args.seconds)
    x = audio.samples.astype(np.float32)
    one_pass = PitchConfig(adaptive=False)
    rows = [("Praat ac, two-pass range (evalkit default)", lambda: pitch_track(audio), None),
            ("Praat ac, one pass 75-600 Hz", lambda: pitch_track(audio, one_pass), None)]
    try:
        rows += [(name, fn, "librosa") for name, fn in librosa_trackers(x, audio.sample_rate).items()]
    except ImportError:
        print("librosa not installed (pip install -e '.[bench]'): library peers skipped")
    rows.append(("numpy autocorrelation (written for this bench)",
                 lambda: numpy_autocorr_pitch(audio.samples, audio.sample_rate), "numpy"))
    results = [(name, *timed(fn, args.repeat), kind) for name, fn, kind in rows]
    t_ours = results[0][1]
    ref = results[1][2]
    print(f"input: {audio.name}, {audio.duration:.2f} s at {audio.sample_rate:g} Hz; CPU seconds, best of "
          f"{args.repeat} runs after a warm-up")
    print(f"{'tracker':<48} {'seconds':>8} {'x realtime':>11} {'time / evalkit':>15}")
    for name, t, out, kind in results:
        extra = f"   {agreement(ref, *out)}" if kind else ""
        print(f"{name:<48} {t:8.4f} {audio.duration / t:11.0f} {t / t_ours:15.2f}{extra}")


if __name__ == "__main__":
    main()
