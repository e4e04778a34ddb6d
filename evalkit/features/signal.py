"""Frame-rate-aware smoothing and derivatives of sampled trajectories.

Every metric that needs a velocity or an acceleration takes it from here, so that the same
motion sampled at 30, 60 or 120 fps gives the same physical numbers: positions are first
low-pass filtered with a cut-off in **Hz** (not in frames), then differentiated with central
differences scaled by the frame rate.

The filter is a zero-phase Butterworth low-pass (``scipy.signal.butter`` + ``sosfiltfilt``), the
usual choice for motion-capture marker data in biomechanics (Winter, *Biomechanics and Motor
Control of Human Movement*, 4th ed., 2009, ch. 3, which recommends cut-offs around 6 Hz for gait).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.signal import butter, sosfiltfilt

#: Default low-pass cut-off for positions before differentiation, Hz.
DEFAULT_CUTOFF_HZ = 6.0


def lowpass(x: np.ndarray, fps: float, cutoff_hz: float | None = DEFAULT_CUTOFF_HZ, order: int = 2) -> np.ndarray:
    """Zero-phase low-pass filter along axis 0 (frames).

    Args:
        x: ``(frames, ...)`` samples at ``fps`` frames per second.
        fps: frame rate, frames per second.
        cutoff_hz: cut-off frequency in Hz; ``None`` or ``0`` returns ``x`` unchanged. A cut-off at
            or above 0.9 × Nyquist (``fps / 2``) is clamped there.
        order: Butterworth order (applied forward and backward, so the effective order doubles).

    Returns:
        array of the same shape as ``x``. Clips shorter than 4 frames are returned unchanged.
    """
    x = np.asarray(x, dtype=np.float64)
    if not cutoff_hz or x.shape[0] < 4:
        return x
    sos = _butter_sos(order, min(cutoff_hz / (fps / 2.0), 0.9))
    padlen = min(x.shape[0] - 1, 3 * (2 * len(sos) + 1) * 2)
    return sosfiltfilt(sos.copy(), x, axis=0, padlen=padlen)


@lru_cache(maxsize=64)
def _butter_sos(order: int, wn: float) -> np.ndarray:
    """Butterworth low-pass design, cached: clips share a few frame rates (read-only result)."""
    sos = butter(order, wn, output="sos")
    sos.setflags(write=False)
    return sos


def derivative(x: np.ndarray, fps: float, order: int = 1) -> np.ndarray:
    """``order``-th time derivative along axis 0 by repeated central differences.

    Args:
        x: ``(frames, ...)`` samples (e.g. metres) at ``fps`` frames per second.
        order: 1 = velocity (units/s), 2 = acceleration (units/s²), 3 = jerk (units/s³).

    Returns:
        array of the same shape as ``x`` (one-sided differences at the ends; zeros if the clip
        has a single frame).
    """
    d = np.asarray(x, dtype=np.float64)
    if d.shape[0] < 2:
        return np.zeros_like(d)
    for _ in range(order):
        d = np.gradient(d, axis=0) * fps
    return d


def smooth_derivative(
    x: np.ndarray, fps: float, order: int = 1, cutoff_hz: float | None = DEFAULT_CUTOFF_HZ
) -> np.ndarray:
    """Low-pass filter (cut-off in Hz) then differentiate; see :func:`lowpass`, :func:`derivative`."""
    return derivative(lowpass(x, fps, cutoff_hz), fps, order)


def moving_average_seconds(x: np.ndarray, fps: float, window_s: float) -> np.ndarray:
    """Centred moving average over ``window_s`` seconds (rounded to an odd number of frames).

    Args:
        x: ``(frames, ...)``.
    """
    from scipy.ndimage import uniform_filter1d

    size = max(1, 2 * int(round(window_s * fps / 2.0)) + 1)
    return uniform_filter1d(np.asarray(x, dtype=np.float64), size=size, axis=0, mode="nearest")
