"""Known artifacts injected into real clips (the clips stay real; the artifact is constructed)."""

from __future__ import annotations

import numpy as np

from evalkit.motion import Motion


def shift_root(motion: Motion, start: int, stop: int, offset) -> Motion:
    """Add a constant world offset (metres, (3,)) to the root on frames ``start:stop``."""
    tr = motion.translations.copy()
    tr[start:stop, 0] += np.asarray(offset, float)
    return motion.with_(translations=tr)


def slide_root(motion: Motion, start: int, stop: int, distance: float, direction=(1.0, 0.0, 0.0)) -> Motion:
    """Move the root horizontally by ``distance`` metres, linearly over frames ``start:stop``, and
    keep the offset afterwards: whatever foot is planted during ``start:stop`` slides by it."""
    tr = motion.translations.copy()
    n = motion.n_frames
    ramp = np.zeros(n)
    ramp[start:stop] = np.linspace(0.0, 1.0, stop - start)
    ramp[stop:] = 1.0
    d = np.asarray(direction, float)
    d = d / np.linalg.norm(d)
    tr[:, 0] += distance * ramp[:, None] * d
    return motion.with_(translations=tr)


def add_vertical_acceleration(motion: Motion, start: int, stop: int, accel: float) -> Motion:
    """Add ``½ a t²`` (a in m/s²) to the root height over frames ``start:stop`` (t from ``start``),
    continuing the reached offset and velocity linearly is not wanted: the offset is held."""
    tr = motion.translations.copy()
    t = np.arange(stop - start) / motion.fps
    tr[start:stop, 0, 1] += 0.5 * accel * t**2
    tr[stop:, 0, 1] += 0.5 * accel * t[-1] ** 2
    return motion.with_(translations=tr)


def jitter(motion: Motion, sigma: float, seed: int = 0) -> Motion:
    """Add i.i.d. Gaussian noise (σ metres per axis) to the root position on every frame."""
    rng = np.random.default_rng(seed)
    tr = motion.translations.copy()
    tr[:, 0] += rng.normal(0.0, sigma, size=(motion.n_frames, 3))
    return motion.with_(translations=tr)
