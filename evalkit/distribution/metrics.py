"""Distribution metrics of a set of clips against a reference set, with bootstrap intervals.

Every metric of a row is computed from per-clip pieces (:class:`~.extract.ClipFeatures`), so a
bootstrap replicate -- clips drawn with replacement, independently from the system and from the
reference -- only reweights per-clip sums: first and second moments for the Fréchet distances
(the covariance of a replicate is ``(Σ cᵢ Sᵢ − N μμᵀ)/(N − 1)``), a pairwise-distance matrix for
the diversities, per-clip values for the means. All replicates of a metric go through one
batched :func:`~.frechet.frechet_distance` call.

**Interval.** Fréchet distances computed on resampled sets are biased upwards (duplicated clips
shrink the covariances' rank), so the plain percentile interval of the replicates can lie
entirely above the estimate. We report the estimate plus the 2.5th and 97.5th percentiles of the
replicates' deviations from their own median (the replicates' spread, re-centred on the
estimate), clipped at 0 for non-negative metrics: ``low ≤ value ≤ high`` always holds. For a
mean this is the ordinary percentile interval up to the small difference between the
replicates' median and the estimate.

The L1 divergence's replicates use every k-th frame of each clip (at most
:data:`L1_BOOTSTRAP_FRAMES` frames in all) for the spread; its value uses every frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from evalkit.distribution.diversity import pairwise_distances, reference_scaler
from evalkit.distribution.extract import ClipFeatures
from evalkit.distribution.frechet import frechet_distance

L1_BOOTSTRAP_FRAMES = 6000
#: Metrics that are distances or non-negative scores (intervals clipped at 0).
NONNEGATIVE = {"fgd", "fgd_raw", "fid_k", "fid_g", "div_k", "div_g", "l1_div", "pfc"}


@dataclass(eq=False)
class Moments:
    """Per-clip first and second moments of a feature set: ``count (n,)``, ``sum (n, d)``,
    ``outer (n, d, d)``."""

    count: np.ndarray
    sum: np.ndarray
    outer: np.ndarray

    @classmethod
    def of(cls, parts: Sequence[np.ndarray], d: int) -> "Moments":
        count = np.array([len(p) for p in parts], float)
        s = np.stack([p.sum(0) if len(p) else np.zeros(d) for p in parts]) if parts else np.zeros((0, d))
        o = np.stack([p.T @ p if len(p) else np.zeros((d, d)) for p in parts]) if parts else np.zeros((0, d, d))
        return cls(count, s, o)

    def gaussian(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Means ``(B, d)`` and covariances ``(B, d, d)`` (ddof=1) for clip weights ``(B, n)``."""
        w = np.atleast_2d(weights)
        n = w @ self.count
        mu = (w @ self.sum) / np.maximum(n, 1)[:, None]
        m2 = np.tensordot(w, self.outer, axes=(1, 0))
        cov = (m2 - n[:, None, None] * mu[:, :, None] * mu[:, None, :]) / np.maximum(n - 1, 1)[:, None, None]
        return mu, cov


def _vector_moments(x: np.ndarray) -> Moments:
    return Moments(np.ones(len(x)), x, x[:, :, None] * x[:, None, :])


@dataclass(eq=False)
class ClipSet:
    """The pieces of a set of (successfully read) clips that the metrics need."""

    clips: list[ClipFeatures]
    emb: Moments = field(init=False)
    pose: Moments = field(init=False)
    kinetic: np.ndarray = field(init=False)
    geometric: np.ndarray = field(init=False)
    poses_all: np.ndarray = field(init=False)
    pose_clip: np.ndarray = field(init=False)
    sub_poses: np.ndarray = field(init=False)
    sub_clip: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        cl = self.clips
        dl = next((c.embeddings.shape[1] for c in cl if c.embeddings.ndim == 2 and c.embeddings.shape[1]), 1)
        self.emb = Moments.of([c.embeddings.reshape(-1, dl) if c.n_windows else np.zeros((0, dl)) for c in cl], dl)
        dp = next((c.poses.shape[1] for c in cl if c.poses.size), 1)
        poses = [np.asarray(c.poses, float).reshape(-1, dp) for c in cl]
        self.pose = Moments.of(poses, dp)
        self.poses_all = np.concatenate(poses) if poses else np.zeros((0, dp))
        self.pose_clip = np.repeat(np.arange(len(cl)), [len(p) for p in poses]).astype(int)
        total = max(1, len(self.poses_all))
        k = max(1, int(np.ceil(total / L1_BOOTSTRAP_FRAMES)))
        self.sub_poses = np.concatenate([p[::k] for p in poses]) if poses else np.zeros((0, dp))
        self.sub_clip = np.repeat(np.arange(len(cl)), [len(p[::k]) for p in poses]).astype(int)
        self.kinetic = np.stack([c.kinetic for c in cl]) if cl else np.zeros((0, 0))
        self.geometric = np.stack([c.geometric for c in cl]) if cl else np.zeros((0, 0))

    @property
    def n(self) -> int:
        return len(self.clips)

    @property
    def n_windows(self) -> int:
        return int(self.emb.count.sum())

    def subset(self, idx: Sequence[int]) -> "ClipSet":
        return ClipSet([self.clips[i] for i in idx])


def _interval(value: float, reps: np.ndarray, nonneg: bool, level: float = 0.95) -> tuple[float, float]:
    reps = reps[np.isfinite(reps)]
    if not np.isfinite(value) or reps.size < 2:
        return float("nan"), float("nan")
    a = (1 - level) / 2
    med = np.median(reps)
    lo = value + (np.quantile(reps, a) - med)
    hi = value + (np.quantile(reps, 1 - a) - med)
    lo, hi = min(lo, value), max(hi, value)
    if nonneg:
        lo = max(lo, 0.0)
    return float(lo), float(hi)


def _counts(rng: np.random.Generator, n: int, b: int) -> np.ndarray:
    if n == 0:
        return np.zeros((b, 0))
    return rng.multinomial(n, np.full(n, 1.0 / n), size=b).astype(float)


def _fd(ms: Moments, mr: Moments, ws: np.ndarray, wr: np.ndarray) -> np.ndarray:
    return frechet_distance(*ms.gaussian(ws), *mr.gaussian(wr))


def _finite_rows(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x).all(axis=1) if x.ndim == 2 and x.shape[1] else np.zeros(len(x), bool)


def _l1(x: np.ndarray, clip: np.ndarray, w: np.ndarray) -> np.ndarray:
    """L1 divergence of frames ``x`` for clip weights ``w`` ``(B, n)``."""
    out = np.empty(len(w))
    for b in range(len(w)):
        fw = w[b][clip]
        tot = fw.sum()
        if tot <= 0:
            out[b] = np.nan
            continue
        mu = fw @ x / tot
        out[b] = fw @ np.abs(x - mu).sum(1) / tot
    return out


def _mean_reps(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    ok = np.isfinite(v)
    num = w @ np.where(ok, v, 0.0)
    den = w @ ok.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def set_metrics(sys: ClipSet, ref: ClipSet, n_boot: int = 500, seed: int = 0,
                score_columns: Sequence[str] = ()) -> dict[str, float]:
    """Every distribution metric of ``sys`` against ``ref``, each with ``_ci_low``/``_ci_high``.

    Returns:
        ``{fgd, fgd_raw, fid_k, fid_g, div_k, div_g, l1_div, pfc, mean_<score metric>...}`` and
        their intervals, plus ``n_clips`` and ``n_windows``.
    """
    rng = np.random.default_rng(seed)
    b = int(n_boot)
    ns, nr = sys.n, ref.n
    one_s, one_r = np.ones((1, ns)), np.ones((1, nr))
    ws, wr = _counts(rng, ns, b), _counts(rng, nr, b)
    values: dict[str, float] = {}
    reps: dict[str, np.ndarray] = {}

    def fd_metric(name, ms, mr):
        if ms.count.sum() < 2 or mr.count.sum() < 2:
            values[name], reps[name] = float("nan"), np.full(b, np.nan)
            return
        values[name] = float(_fd(ms, mr, one_s, one_r)[0])
        reps[name] = _fd(ms, mr, ws, wr) if b else np.zeros(0)

    fd_metric("fgd", sys.emb, ref.emb)
    fd_metric("fgd_raw", sys.pose, ref.pose)
    for name, xs, xr in (("k", sys.kinetic, ref.kinetic), ("g", sys.geometric, ref.geometric)):
        oks, okr = _finite_rows(xs), _finite_rows(xr)
        if oks.sum() < 2 or okr.sum() < 2:
            for m in (f"fid_{name}", f"div_{name}"):
                values[m], reps[m] = float("nan"), np.full(b, np.nan)
            continue
        mean, scale = reference_scaler(xr[okr])
        zs = np.where(oks[:, None], (np.nan_to_num(xs) - mean) / scale, 0.0)
        zr = np.where(okr[:, None], (np.nan_to_num(xr) - mean) / scale, 0.0)
        ms, mr = _vector_moments(zs), _vector_moments(zr)
        ms.count, mr.count = oks.astype(float), okr.astype(float)
        fd_metric(f"fid_{name}", ms, mr)
        dmat = pairwise_distances(zs) * (oks[:, None] & oks[None, :])
        wsk = ws * oks
        def div(w):
            nn = w.sum(1)
            with np.errstate(invalid="ignore", divide="ignore"):
                return ((w @ dmat) * w).sum(1) / (nn * (nn - 1))
        values[f"div_{name}"] = float(div(one_s * oks)[0])
        reps[f"div_{name}"] = div(wsk)
    values["l1_div"] = float(_l1(sys.poses_all, sys.pose_clip, one_s)[0]) if len(sys.poses_all) else float("nan")
    reps["l1_div"] = _l1(sys.sub_poses, sys.sub_clip, ws) if len(sys.sub_poses) else np.full(b, np.nan)
    per_clip = {"pfc": np.array([c.pfc for c in sys.clips], float)}
    for col in score_columns:
        per_clip[f"mean_{col}"] = np.array([c.scores.get(col, np.nan) for c in sys.clips], float)
    for name, v in per_clip.items():
        values[name] = float(_mean_reps(v, one_s)[0]) if ns else float("nan")
        reps[name] = _mean_reps(v, ws) if ns else np.full(b, np.nan)
    out: dict[str, float] = {"n_clips": float(ns), "n_windows": float(sys.n_windows)}
    for name, v in values.items():
        lo, hi = _interval(v, reps[name], name in NONNEGATIVE)
        out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = v, lo, hi
    return out


def half_split(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of ``range(n)`` into halves (the first gets the smaller half)."""
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[: n // 2]), np.sort(perm[n // 2:])
