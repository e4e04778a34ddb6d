"""Diversity (Div_k, Div_g) and the feature normalisation of FID_k / FID_g (AIST++, Bailando).

Bailando's evaluation normalises each feature by the mean and standard deviation of the real
(reference) set -- the same transform for the real and the generated set -- then reports
``FID = Fréchet distance`` of the normalised sets and ``Div = mean Euclidean distance over all
pairs of the generated set's normalised vectors``. A feature constant over the reference (zero
standard deviation; the public code divides by ``std + 1e-10`` and explodes) is left unscaled
here (divided by 1).
"""

from __future__ import annotations

import numpy as np


def reference_scaler(ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale ``(d,)`` of the reference rows ``(n, d)`` (scale 1 where std is ~0)."""
    ref = np.asarray(ref, float)
    mean = ref.mean(axis=0)
    std = ref.std(axis=0)
    return mean, np.where(std > 1e-8, std, 1.0)


def pairwise_distances(x: np.ndarray) -> np.ndarray:
    """``(n, n)`` Euclidean distances between rows (scipy's cdist)."""
    from scipy.spatial.distance import cdist

    x = np.asarray(x, float)
    return cdist(x, x)


def diversity(x: np.ndarray) -> float:
    """Average Euclidean distance over all pairs ``i < j`` of the rows of ``x`` (Bailando's Div)."""
    x = np.asarray(x, float)
    n = x.shape[0]
    if n < 2:
        return float("nan")
    return float(pairwise_distances(x).sum() / (n * (n - 1)))
