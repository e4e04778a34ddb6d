"""Lengths of many short vectors (``(..., 2)`` or ``(..., 3)`` arrays), fast.

``numpy.linalg.norm(x, axis=-1)`` reduces over a last axis of two or three entries element by
element and conjugates a copy first; on the ``(frames, joints, 3)`` arrays of the metrics that
costs several times more than squaring, adding the two or three columns and taking the root. The
sum here runs over the columns in the same order as numpy's reduction, so the lengths are the
same numbers bit for bit (checked in ``tests/motion/test_vectors.py``).
"""

from __future__ import annotations

import numpy as np

#: Longest last axis summed column by column; longer vectors go to :func:`numpy.linalg.norm`
#: (whose pairwise summation would otherwise round differently).
_MAX_COLUMNS = 4


def norm(x: np.ndarray) -> np.ndarray:
    """Euclidean length along the last axis: ``(..., k)`` -> ``(...)`` (same units as ``x``).

    Equal bit for bit to ``numpy.linalg.norm(x, axis=-1)`` for real input."""
    x = np.asarray(x, dtype=np.float64)
    k = x.shape[-1]
    if k > _MAX_COLUMNS or k == 0:
        return np.linalg.norm(x, axis=-1)
    s = x * x
    acc = s[..., 0].copy()
    for i in range(1, k):
        acc += s[..., i]
    return np.sqrt(acc, out=acc)


def norm_xz(x: np.ndarray) -> np.ndarray:
    """Horizontal length ``(..., 3)`` -> ``(...)`` of Y-up vectors (x and z components); equal
    bit for bit to ``numpy.linalg.norm(x[..., [0, 2]], axis=-1)`` without the gathered copy."""
    x = np.asarray(x, dtype=np.float64)
    a, b = x[..., 0], x[..., 2]
    acc = a * a
    acc += b * b
    return np.sqrt(acc, out=acc)
