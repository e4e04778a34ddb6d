"""Diversity (Div_k, Div_g) and the feature normalisation of FID_k / FID_g (AIST++, Bailando).

Bailando's evaluation normalises each feature by the mean and standard deviation of the real
(reference) set -- the same transform for the real and the generated set -- then reports
``FID = Fréchet distance`` of the normalised sets and ``Div = mean Euclidean distance over all
pairs of the generated set's normalised vectors``. A feature constant over the reference (zero
standard deviation; the public code divides by ``std + 1e-10`` and explodes) is left unscaled
here (divided by 1).

The geometric features are fractions of frames (0-1); their scale is floored at
:data:`GEOMETRIC_MIN_SCALE` (5 % of frames). A relation that holds in a few frames of one or two
reference clips has a standard deviation of a few thousandths; divided by it, a few frames'
difference in one test clip becomes tens of standard deviations, and FID_g is then decided by where
a rare relation flickers rather than by the motion (measured on held-out capture with 10-14
reference clips: FID_g of unedited clips 115-608 through one relation with std 0.0024, and no
monotonic growth with noise; docs/distribution.md, "Acceptance rehearsal").
"""

from __future__ import annotations

import numpy as np


#: Smallest scale of a geometric feature (a fraction of frames) in FID_g / Div_g's normalisation.
GEOMETRIC_MIN_SCALE = 0.05


def reference_scaler(ref: np.ndarray, min_scale: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scale ``(d,)`` of the reference rows ``(n, d)``: the standard deviation, at least
    ``min_scale`` (in the features' own unit), and 1 where the standard deviation is ~0."""
    ref = np.asarray(ref, float)
    mean = ref.mean(axis=0)
    std = ref.std(axis=0)
    return mean, np.where(std > 1e-8, np.maximum(std, min_scale), 1.0)


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
