"""Linear mixed model with crossed random intercepts (e.g. participant and item), fitted by REML.

    y = X b + Z_1 u_1 + Z_2 u_2 + e,   u_k ~ N(0, s2 * g_k I),   e ~ N(0, s2 I)

Hand-written for speed: statsmodels ``MixedLM`` fits crossed effects only as one group with
variance components, whose cost grows with the number of answers cubed (about 36 s for 3,000
pairwise answers here, with frequent convergence retries). Here every likelihood evaluation
works on q x q matrices (q = number of random-effect levels) via the Woodbury identity
H^-1 = I - Z L (I + L Z'Z L)^-1 L Z' with L = diag(sqrt(g)), so the cost does not grow with n
after the cross-products are formed. The residual variance and the fixed effects are profiled
out; the variance ratios are optimised with L-BFGS-B (bounded at 0). Standard errors are the usual
s2 (X' H^-1 X)^-1 given the variance estimates, as in statsmodels. The tests check the results
against statsmodels ``MixedLM`` where it converges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import linalg, optimize, stats

from evalkit.errors import InputError


@dataclass
class LMMResult:
    """Fixed effects ``params`` (p,) with ``bse`` and covariance ``cov`` (p, p); ``variances``:
    random-intercept variances per factor; ``sigma2``: residual variance; ``reml``: the REML
    log-likelihood (up to a constant); ``converged``: optimiser status."""

    params: np.ndarray
    bse: np.ndarray
    cov: np.ndarray
    variances: dict[str, float]
    sigma2: float
    reml: float
    converged: bool

    def conf_int(self, confidence: float = 0.95) -> np.ndarray:
        """(p, 2) Wald intervals."""
        z = stats.norm.ppf(0.5 + confidence / 2)
        return np.column_stack([self.params - z * self.bse, self.params + z * self.bse])

    @property
    def pvalues(self) -> np.ndarray:
        """Two-sided Wald z-test p-values of the fixed effects."""
        return 2 * stats.norm.sf(np.abs(self.params / self.bse))


def fit_crossed_lmm(y, X, factors: dict[str, np.ndarray]) -> LMMResult:
    """REML fit of ``y`` (n,) on fixed-effect design ``X`` (n, p) with one random intercept per
    level of each factor in ``factors`` (name -> (n,) labels). Raises :class:`~evalkit.errors.InputError` when X is
    rank deficient."""
    y = np.asarray(y, float)
    X = np.asarray(X, float)
    n, p = X.shape
    if np.linalg.matrix_rank(X) < p:
        raise InputError("fixed-effect design is rank deficient (a system or term is confounded with "
                         "another, e.g. a system that only ever appears with one partner)")
    names = list(factors)
    blocks, sizes = [], []
    for name in names:
        _, codes = np.unique(np.asarray(factors[name]).astype(str), return_inverse=True)
        Zk = np.zeros((n, codes.max() + 1))
        Zk[np.arange(n), codes] = 1.0
        blocks.append(Zk)
        sizes.append(Zk.shape[1])
    Z = np.hstack(blocks)
    comp = np.repeat(np.arange(len(names)), sizes)
    ZtZ, ZtX, Zty = Z.T @ Z, Z.T @ X, Z.T @ y
    XtX, Xty, yty = X.T @ X, X.T @ y, float(y @ y)
    q = Z.shape[1]

    def parts(tau):
        lam = tau[comp]
        A = np.eye(q) + lam[:, None] * ZtZ * lam[None, :]
        cf = linalg.cho_factor(A)
        LZX, LZy = lam[:, None] * ZtX, lam * Zty
        XHX = XtX - LZX.T @ linalg.cho_solve(cf, LZX)
        XHy = Xty - LZX.T @ linalg.cho_solve(cf, LZy)
        yHy = yty - LZy @ linalg.cho_solve(cf, LZy)
        logdetA = 2.0 * np.log(np.diag(cf[0])).sum()
        return XHX, XHy, yHy, logdetA

    def neg2reml(tau):
        XHX, XHy, yHy, logdetA = parts(tau)
        beta = np.linalg.solve(XHX, XHy)
        rHr = max(yHy - beta @ XHy, 1e-300)
        s2 = rHr / (n - p)
        return (n - p) * math.log(s2) + logdetA + np.linalg.slogdet(XHX)[1]

    best = None
    for start in (0.1, 1.0):  # two starts guard against a flat start at the boundary
        res = optimize.minimize(neg2reml, np.full(len(names), start), method="L-BFGS-B",
                                bounds=[(0.0, None)] * len(names))
        if best is None or res.fun < best.fun:
            best = res
    tau = best.x
    XHX, XHy, yHy, _ = parts(tau)
    beta = np.linalg.solve(XHX, XHy)
    s2 = (yHy - beta @ XHy) / (n - p)
    cov = s2 * np.linalg.inv(XHX)
    return LMMResult(params=beta, bse=np.sqrt(np.diag(cov)), cov=cov,
                     variances={k: float(s2 * t ** 2) for k, t in zip(names, tau)},
                     sigma2=float(s2), reml=float(-0.5 * best.fun), converged=bool(best.success))
