"""Calibrated strength in [0, 1] from features, against a reference population.

:class:`StrengthScale` standardises each feature against a reference population (optionally
after a log), averages the z-scores, and maps the average through the normal CDF after dividing
by its own reference SD: 0.5 is the median stroke/accent of the reference population, 0.84 is one
SD stronger. The gesture strength (GSI, :mod:`evalkit.gesture.strokes`) and the pitch strength
(PSI, :mod:`evalkit.speech.accents`) are such scales; the supervised alternative and the
classifier comparison live in :mod:`evalkit.models.strength`. This module sits below gesture,
speech and models (see docs/ARCHITECTURE.md), so all three can use it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.base import BaseEstimator

from evalkit.errors import ConfigError, InputError


class StrengthScale(BaseEstimator):
    """Calibrated strength in [0, 1] from features, against a reference population.

    Parameters:
        features: column names, in the order of ``X``'s columns.
        log: names of features to take the natural log of first (must be positive).
        weights: per-feature weights of the z-score average (default: equal).
    """

    def __init__(self, features: Sequence[str] = (), log: Sequence[str] = (), weights: Sequence[float] | None = None):
        self.features = features
        self.log = log
        self.weights = weights

    def _prepare(self, X) -> np.ndarray:
        X = feature_matrix(X, self.features)
        X = X.copy()
        for j, name in enumerate(self.features):
            if name in self.log:
                X[:, j] = np.log(np.maximum(X[:, j], 1e-9))
        return X

    def fit(self, X, y=None) -> "StrengthScale":
        """Learn per-feature mean and SD and the SD of the averaged z-score from ``X``
        ``(samples, features)`` (an array or a DataFrame with the feature columns)."""
        Z = self._prepare(X)
        if Z.shape[0] < 3:
            raise InputError(f"need at least 3 reference examples to calibrate a strength scale, got {Z.shape[0]}")
        self.mean_ = np.nanmean(Z, axis=0)
        self.scale_ = np.nanstd(Z, axis=0, ddof=1)
        self.scale_[~(self.scale_ > 0)] = 1.0
        self.spread_ = 1.0
        self.spread_ = float(np.nanstd(self.score_samples(X), ddof=1)) or 1.0
        self.n_reference_ = int(Z.shape[0])
        return self

    def score_samples(self, X) -> np.ndarray:
        """``(samples,)`` weighted mean z-score, divided by its reference SD (uncalibrated)."""
        Z = (self._prepare(X) - self.mean_) / self.scale_
        w = np.ones(Z.shape[1]) if self.weights is None else np.asarray(self.weights, float)
        w = w / w.sum()
        Z = np.where(np.isfinite(Z), Z, 0.0)
        return (Z @ w) / self.spread_

    def strength(self, X) -> np.ndarray:
        """``(samples,)`` calibrated strength in (0, 1): Φ(score); 0.5 = median reference example."""
        return norm.cdf(self.score_samples(X))

    def to_dict(self) -> dict:
        """JSON-ready parameters (for rules files and the defaults below)."""
        return {
            "features": list(self.features),
            "log": list(self.log),
            "weights": None if self.weights is None else list(map(float, self.weights)),
            "mean": [float(v) for v in self.mean_],
            "scale": [float(v) for v in self.scale_],
            "spread": float(self.spread_),
            "n_reference": int(getattr(self, "n_reference_", 0)),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "StrengthScale":
        """Rebuild a fitted scale from :meth:`to_dict` output."""
        try:
            s = cls(features=tuple(d["features"]), log=tuple(d.get("log", ())), weights=d.get("weights"))
            s.mean_ = np.asarray(d["mean"], float)
            s.scale_ = np.asarray(d["scale"], float)
            s.spread_ = float(d["spread"])
            s.n_reference_ = int(d.get("n_reference", 0))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"strength scale: missing or invalid key ({exc}); expected features, mean, scale, spread") from None
        if len(s.mean_) != len(s.features) or len(s.scale_) != len(s.features):
            raise ConfigError("strength scale: 'mean' and 'scale' must have one value per feature")
        return s


def feature_matrix(X, features: Sequence[str]) -> np.ndarray:
    """``(samples, features)`` float matrix from a DataFrame (its ``features`` columns, in that
    order) or an array (one row per sample; a 1-D array is one sample)."""
    if isinstance(X, pd.DataFrame):
        missing = [f for f in features if f not in X.columns]
        if missing:
            raise InputError(f"missing feature column(s) {', '.join(missing)}; have {', '.join(map(str, X.columns))}")
        return X[list(features)].to_numpy(dtype=float)
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[None, :]
    if features and X.shape[1] != len(features):
        raise InputError(f"expected {len(features)} feature columns ({', '.join(features)}), got {X.shape[1]}")
    return X
