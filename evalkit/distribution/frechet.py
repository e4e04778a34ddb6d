"""Fréchet distance between Gaussians, exact and fast, single and batched.

``d² = |μ₁ − μ₂|² + tr Σ₁ + tr Σ₂ − 2 tr (Σ₁ Σ₂)^{1/2}``, the formula of FID, FGD and FID_k/FID_g.
The field's scripts compute the last term with ``scipy.linalg.sqrtm(Σ₁ @ Σ₂)`` (a Schur
decomposition of a non-symmetric matrix, O(d³) with a large constant, complex arithmetic, and an
``eps`` retry when the product is near singular). Here it is computed from symmetric
eigendecompositions, which need no complex numbers and batch over bootstrap replicates:
``tr (Σ₁ Σ₂)^{1/2} = Σᵢ √λᵢ(A Σ₂ A)`` with ``A = Σ₁^{1/2}`` (``A Σ₂ A`` is symmetric positive
semi-definite and has the eigenvalues of ``Σ₁ Σ₂``). Written by hand because no library offers the
batched form; :func:`frechet_distance_sqrtm` is the scipy formula, kept for checks and the bench.
"""

from __future__ import annotations

import numpy as np


def _psd_sqrt(s: np.ndarray) -> np.ndarray:
    """Symmetric square root of (a stack of) PSD matrices; negative round-off eigenvalues -> 0."""
    w, v = np.linalg.eigh(s)
    w = np.sqrt(np.clip(w, 0.0, None))
    return (v * w[..., None, :]) @ np.swapaxes(v, -1, -2)


def trace_sqrt_product(s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """``tr (Σ₁ Σ₂)^{1/2}`` for PSD ``(..., d, d)`` matrices (broadcasts over leading axes)."""
    a = _psd_sqrt(s1)
    m = a @ s2 @ a
    m = 0.5 * (m + np.swapaxes(m, -1, -2))
    w = np.linalg.eigvalsh(m)
    return np.sqrt(np.clip(w, 0.0, None)).sum(axis=-1)


def frechet_distance(mu1: np.ndarray, s1: np.ndarray, mu2: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Fréchet distance (squared, as the field reports it) between ``N(μ₁, Σ₁)`` and ``N(μ₂, Σ₂)``.

    Args:
        mu1, mu2: ``(..., d)`` means.
        s1, s2: ``(..., d, d)`` covariances (leading axes broadcast: one call for all bootstrap
            replicates).

    Returns:
        ``(...)`` distances, clipped at 0 (round-off can make an exact 0 slightly negative).

    Two unit Gaussians in 2-D whose means are one unit apart along each axis: ``|Δμ|² = 2``.

    >>> import numpy as np
    >>> float(frechet_distance(np.zeros(2), np.eye(2), np.ones(2), np.eye(2)))
    2.0
    """
    mu1, mu2, s1, s2 = (np.asarray(x, float) for x in (mu1, mu2, s1, s2))
    diff = mu1 - mu2
    d = (diff * diff).sum(-1) + np.trace(s1, axis1=-2, axis2=-1) + np.trace(s2, axis1=-2, axis2=-1) \
        - 2.0 * trace_sqrt_product(s1, s2)
    return np.clip(d, 0.0, None)


def psd_sqrt(s: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD ``(d, d)`` matrix (to reuse with :func:`frechet_distance_root`)."""
    return _psd_sqrt(np.asarray(s, float))


def frechet_distance_root(mu1: np.ndarray, s1: np.ndarray, root1: np.ndarray, mu2: np.ndarray,
                          s2: np.ndarray) -> float:
    """:func:`frechet_distance` with ``root1 = Σ₁^{1/2}`` given (:func:`psd_sqrt`), so that comparing
    many sets with one reference decomposes the reference once (1,530-dimensional raw-space FGD)."""
    m = root1 @ s2 @ root1
    m = 0.5 * (m + m.T)
    w = np.linalg.eigvalsh(m)
    diff = np.asarray(mu1, float) - np.asarray(mu2, float)
    d = diff @ diff + np.trace(s1) + np.trace(s2) - 2.0 * np.sqrt(np.clip(w, 0.0, None)).sum()
    return float(max(d, 0.0))


def frechet_distance_sqrtm(mu1, s1, mu2, s2, eps: float = 1e-6) -> float:
    """The same distance with ``scipy.linalg.sqrtm`` as in the field's scripts (for checks).

    When the product is singular enough that ``sqrtm`` returns non-finite values, ``eps`` is added
    to both diagonals and the root recomputed, as those scripts do.
    """
    from scipy import linalg

    mu1, mu2 = np.atleast_1d(mu1).astype(float), np.atleast_1d(mu2).astype(float)
    s1, s2 = np.atleast_2d(s1).astype(float), np.atleast_2d(s2).astype(float)
    diff = mu1 - mu2
    covmean = linalg.sqrtm(s1.dot(s2))
    if not np.isfinite(covmean).all():
        off = np.eye(s1.shape[0]) * eps
        covmean = linalg.sqrtm((s1 + off).dot(s2 + off))
    covmean = np.real(covmean)
    return float(diff.dot(diff) + np.trace(s1) + np.trace(s2) - 2.0 * np.trace(covmean))


def gaussian(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance (``ddof=1``, as ``numpy.cov`` in the field's scripts) of ``(n, d)`` rows."""
    x = np.asarray(x, float)
    mu = x.mean(axis=0)
    if x.shape[0] < 2:
        return mu, np.zeros((x.shape[1], x.shape[1]))
    return mu, np.cov(x, rowvar=False).reshape(x.shape[1], x.shape[1])


def frechet_from_features(a: np.ndarray, b: np.ndarray) -> float:
    """Fréchet distance between the feature sets ``a`` ``(n, d)`` and ``b`` ``(m, d)``."""
    return float(frechet_distance(*gaussian(a), *gaussian(b)))
