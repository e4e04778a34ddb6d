"""Frame-rate-aware smoothing and derivatives of sampled trajectories.

Every metric that needs a velocity or an acceleration takes it from here, so that the same
motion sampled at 30, 60 or 120 fps gives the same physical numbers: positions are first
low-pass filtered with a cut-off in **Hz** (not in frames), then differentiated with central
differences scaled by the frame rate.

The filter is a zero-phase Butterworth low-pass (``scipy.signal.butter`` + ``sosfiltfilt``), the
usual choice for motion-capture marker data in biomechanics (Winter, *Biomechanics and Motor
Control of Human Movement*, 4th ed., 2009, ch. 3, which recommends cut-offs around 6 Hz for gait).

Runs of a true/false signal (contacts, rests, silences) are found by :func:`runs`, the one
place that does it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.signal import butter, sosfilt, sosfilt_zi, sosfiltfilt
from scipy.signal._arraytools import odd_ext

from evalkit.features.matrix_cache import bytes_lru_cache

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
    wn = min(cutoff_hz / (fps / 2.0), 0.9)
    sos = _butter_sos(order, wn)
    n = x.shape[0]
    padlen = min(n - 1, 3 * (2 * len(sos) + 1) * 2)
    flat = x.reshape(n, -1)
    if _matrix_is_faster(n, flat.shape[1]):
        # short clips: the filter as one cached (frames x frames) matrix (sosfiltfilt's per-call
        # setup dominated scoring of 200-frame clips), applied in single-threaded BLAS blocks
        return apply_matrix(_filter_matrix(order, wn, n, padlen), flat).reshape(x.shape)
    return _filtfilt(sos, wn, order, flat, padlen).reshape(x.shape)


def _matrix_is_faster(frames: int, columns: int) -> bool:
    """Whether filtering ``columns`` signals of ``frames`` samples is faster as a product with the
    ``(frames, frames)`` filter matrix (``frames² × columns`` multiply-adds, about 15 per ns in
    :func:`apply_matrix`'s blocks) than by ``sosfilt`` (about 75 µs per call plus 15 ns per
    sample). Measured on this project's machine for 6-200 columns of 120-256 frames: the matrix
    wins by 1.5-3x below ~100 columns; beyond, and on longer clips, its quadratic cost loses (the
    old rule, every clip up to 512 frames, made a 471-frame clip's filtering 40x slower)."""
    if frames > FILTER_MATRIX_MAX_FRAMES:
        return False
    return frames * frames * columns / 15000.0 <= 75.0 + 0.015 * frames * columns


def apply_matrix(m: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """``m @ flat`` for ``(rows, frames) @ (frames, columns)`` in blocks of at most
    ``MATRIX_MAX_WORK`` multiply-adds each, so that BLAS stays single-threaded: a larger product
    goes to multi-threaded BLAS, whose start-up costs far more than it saves at this size (and far
    more on a busy machine). Blocks are bands of whole rows across every column (as many rows as
    fit), each written in place: twice as fast as narrow column blocks, whose strided operands
    BLAS copies; a single column is a matrix-vector product, which goes multi-threaded sooner."""
    rows, k = m.shape
    c = flat.shape[1]
    limit = MATRIX_MAX_WORK if c > 1 else MATRIX_VECTOR_MAX_WORK
    if rows * k * c <= limit:
        return m @ flat
    w = min(c, max(1, limit // max(1, k)))  # every column unless one row of them is too much work
    h = max(1, min(rows, limit // max(1, k * w)))
    out = np.empty((rows, c))
    for i in range(0, c, w):
        cols = flat[:, i:i + w]
        for r in range(0, rows, h):
            np.matmul(m[r:r + h], cols, out=out[r:r + h, i:i + w])
    return out


def _filtfilt(sos: np.ndarray, wn: float, order: int, x: np.ndarray, padlen: int) -> np.ndarray:
    """``scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=padlen)`` for ``(frames, columns)``,
    step by step as scipy does it (odd extension, forward and backward ``sosfilt`` started in
    steady state) but with the steady-state ``zi`` cached per design."""
    sos = sos.copy()  # scipy's filter wants a writable array; the cached design is read-only
    zi = _sos_zi(order, wn)[:, :, None]  # (sections, 2, 1)
    ext = odd_ext(x, padlen, axis=0) if padlen > 0 else x
    y, _ = sosfilt(sos, ext, axis=0, zi=zi * ext[:1])
    y, _ = sosfilt(sos, y[::-1], axis=0, zi=zi * y[-1:])
    y = y[::-1]
    # contiguous frames-first, as the input was (sosfilt returns columns-first, here reversed):
    # the derivatives and norms downstream run at half the speed on the strided view
    return np.ascontiguousarray(y[padlen:-padlen] if padlen > 0 else y)


@lru_cache(maxsize=64)
def _sos_zi(order: int, wn: float) -> np.ndarray:
    zi = sosfilt_zi(_butter_sos(order, wn))
    zi.setflags(write=False)
    return zi


#: Clips up to this many frames may use cached matrices for linear operations on them (the
#: analysis-grid spline of :func:`evalkit.features.ground.to_grid`), applied by
#: :func:`apply_matrix` in products of at most ``MATRIX_MAX_WORK`` multiply-adds.
MATRIX_MAX_FRAMES = 512
#: Low-pass filtering uses its cached matrix (:func:`_filter_matrix`) only up to this many frames,
#: and only where :func:`_matrix_is_faster` says so.
FILTER_MATRIX_MAX_FRAMES = 256
MATRIX_MAX_WORK = 250_000
#: A matrix-vector product (one column) stays single-threaded up to this many multiply-adds.
MATRIX_VECTOR_MAX_WORK = 9_000


#: Bytes of filter matrices kept per process: every length up to FILTER_MATRIX_MAX_FRAMES at one
#: cut-off and rate (about 45 MB), so a test set of many clip lengths builds each matrix once.
FILTER_MATRIX_CACHE_BYTES = 64 * 2**20


@bytes_lru_cache(FILTER_MATRIX_CACHE_BYTES)
def _filter_matrix(order: int, wn: float, n: int, padlen: int) -> np.ndarray:
    """``(n, n)`` matrix ``M`` with ``M @ x == sosfiltfilt(sos, x, axis=0, padlen=padlen)``:
    zero-phase filtering with odd extension is linear in ``x``, so filtering the identity gives
    its matrix (read-only; clips of one length and rate share it)."""
    m = sosfiltfilt(_butter_sos(order, wn).copy(), np.eye(n), axis=0, padlen=padlen)
    m.setflags(write=False)
    return m


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
        d = _gradient(d) * fps
    return d


def _gradient(f: np.ndarray) -> np.ndarray:
    """``numpy.gradient(f, axis=0)`` (unit spacing, first-order ends) for ``(frames >= 2, ...)``,
    the same arithmetic without its argument handling (a third of its time on short clips)."""
    out = np.empty_like(f)
    out[1:-1] = (f[2:] - f[:-2]) / 2.0
    out[0] = f[1] - f[0]
    out[-1] = f[-1] - f[-2]
    return out


def smooth_derivative(
    x: np.ndarray, fps: float, order: int = 1, cutoff_hz: float | None = DEFAULT_CUTOFF_HZ
) -> np.ndarray:
    """Low-pass filter (cut-off in Hz) then differentiate; see :func:`lowpass`, :func:`derivative`."""
    return derivative(lowpass(x, fps, cutoff_hz), fps, order)


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Runs of ``True`` in a 1-D bool array: ``(starts, stops)``, frame indices, stops exclusive.

    >>> runs(np.array([0, 1, 1, 0, 1], dtype=bool))
    (array([1, 4]), array([3, 5]))
    """
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    d = np.diff(m.astype(np.int8))
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)
