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

**FGD in raw data space** (``fgd_raw``, GENEA's "FGD on raw data space", after Ahuja et al.
2020): the Fréchet distance between flattened windows of poses -- ``window`` frames every
``window // 2`` frames (the GENEA scripts' default chunking), each frame minus its hips,
heading-aligned, in body heights, the hips' own (always zero) coordinates dropped, and every
coordinate standardised by the reference's per-coordinate mean and standard deviation over frames
(GENEA standardises by its dataset's mean and std vectors; we divide by at least
:data:`RAW_MIN_STD` = 0.01 body heights, because a joint that never moves relative to the hips in
the reference -- a rig whose spine joint sits on its hips -- would otherwise turn a rig difference
of a few centimetres into millions): ``window × 51`` dimensions (1,530 for 30 frames). Its value
uses every window. A bootstrap replicate in that many dimensions costs an eigendecomposition
of a 1,530 × 1,530 matrix, so the replicates' spread is computed in the
:data:`RAW_BOOTSTRAP_DIMS` leading principal directions of the two sets' pooled covariance (the
share of variance they hold is returned as ``fgd_raw_boot_variance``), and added to the exact
value as for every other metric. ``fgd_pose`` is the per-frame version (single poses, 54 numbers,
no window; every replicate exact).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from evalkit.distribution.diversity import GEOMETRIC_MIN_SCALE, pairwise_distances, reference_scaler
from evalkit.distribution.extract import ClipFeatures
from evalkit.distribution.frechet import frechet_distance, frechet_distance_root, psd_sqrt

L1_BOOTSTRAP_FRAMES = 6000
#: Principal directions in which the raw-space FGD's bootstrap spread is computed.
RAW_BOOTSTRAP_DIMS = 64
#: Smallest standard deviation the raw-space FGD divides a coordinate by, body heights (see module doc).
RAW_MIN_STD = 0.01
#: Clips' frames per block when the raw-space windows are accumulated (bounds memory).
_RAW_BLOCK_FRAMES = 4000
#: Windows per block when the raw-space scatter is accumulated (about 25 MB of 1,530-dimensional
#: windows: large enough for BLAS to run at full speed).
_RAW_BLOCK_WINDOWS = 2048
#: Metrics that are distances or non-negative scores (intervals clipped at 0).
NONNEGATIVE = {"fgd", "fgd_raw", "fgd_pose", "fid_k", "fid_g", "div_k", "div_g", "l1_div", "pfc"}


def raw_stride(window: int) -> int:
    """Stride of the raw-space FGD windows, frames: ``window // 2`` (GENEA's chunking), at least 1."""
    return max(1, int(window) // 2)


def _raw_clip_windows(poses: np.ndarray, window: int, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``(n_windows, window * 51)`` standardised raw-space windows of one clip's ``(frames, 54)``
    frame-normalised poses (the hips' coordinates, always 0, dropped)."""
    from evalkit.distribution.canonical import window_starts

    x = (np.asarray(poses, float)[:, 3:] - mean) / scale
    starts = window_starts(len(x), window, raw_stride(window))
    if starts.size == 0:
        return np.zeros((0, window * x.shape[1]))
    w = np.lib.stride_tricks.sliding_window_view(x, window, axis=0)[starts]  # (n, 51, window)
    return np.swapaxes(w, 1, 2).reshape(len(starts), -1)


@dataclass(eq=False)
class _RawStats:
    """Window count, sum and scatter of a set's standardised raw-space windows."""

    n: int
    sum: np.ndarray
    scatter: np.ndarray

    @property
    def gaussian(self) -> tuple[np.ndarray, np.ndarray]:
        mu = self.sum / max(self.n, 1)
        cov = (self.scatter - self.n * np.outer(mu, mu)) / max(self.n - 1, 1)
        return mu, cov


def _raw_blocks(clips, window: int, mean: np.ndarray, scale: np.ndarray, block_frames: int = _RAW_BLOCK_FRAMES):
    """Yield ``(clip indices, windows)`` blocks of about ``block_frames`` frames."""
    block, idx, frames = [], [], 0
    for i, c in enumerate(clips):
        w = _raw_clip_windows(c.poses, window, mean, scale)
        block.append(w)
        idx.append(np.full(len(w), i))
        frames += len(c.poses)
        if frames >= block_frames:
            yield np.concatenate(idx), np.concatenate(block)
            block, idx, frames = [], [], 0
    if block:
        yield np.concatenate(idx), np.concatenate(block)


def _raw_stats(clips, window: int, mean: np.ndarray, scale: np.ndarray) -> _RawStats:
    """Window count, sum and scatter ``Σ xᵀx`` of the clips' standardised raw-space windows.

    The scatter is accumulated with BLAS's symmetric rank-k update (``dsyrk``: half the
    multiply-adds of ``x.T @ x``, into a Fortran-ordered upper triangle) over blocks of about
    :data:`_RAW_BLOCK_WINDOWS` windows, then mirrored once."""
    from scipy.linalg.blas import dsyrk

    d = window * len(mean)
    n, s = 0, np.zeros(d)
    sc = np.zeros((d, d), order="F")
    for _, x in _raw_blocks(clips, window, mean, scale, _RAW_BLOCK_WINDOWS * raw_stride(window)):
        n += len(x)
        s += x.sum(0)
        # x.T is Fortran-ordered, so dsyrk reads it without a copy: sc += x.T @ x (upper triangle)
        sc = dsyrk(1.0, x.T, beta=1.0, c=sc, trans=0, lower=0, overwrite_c=1)
    sc = np.triu(sc) + np.triu(sc, 1).T
    return _RawStats(n, s, sc)


def _raw_projected_moments(clips, window: int, mean: np.ndarray, scale: np.ndarray, basis: np.ndarray) -> "Moments":
    """Per-clip moments of the raw-space windows projected on ``basis`` ``(d, k)``."""
    k = basis.shape[1]
    count = np.zeros(len(clips))
    s = np.zeros((len(clips), k))
    o = np.zeros((len(clips), k, k))
    for idx, x in _raw_blocks(clips, window, mean, scale):
        z = x @ basis
        np.add.at(count, idx, 1.0)
        np.add.at(s, idx, z)
        for i in np.unique(idx):
            zi = z[idx == i]
            o[i] += zi.T @ zi
    return Moments(count, s, o)


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
class FeatureSet:
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

    def raw_scaler(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-coordinate mean and std ``(51,)`` of this set's frame-normalised poses (hips dropped),
        the standardisation of the raw-space FGD when this set is the reference."""
        if getattr(self, "_raw_scaler", None) is None:
            x = self.poses_all[:, 3:]
            sd = x.std(axis=0)
            self._raw_scaler = (x.mean(axis=0), np.maximum(sd, RAW_MIN_STD))
        return self._raw_scaler

    def raw_stats(self, window: int) -> "_RawStats":
        """Raw-space window statistics of this set as a reference (cached)."""
        cache = self.__dict__.setdefault("_raw_cache", {})
        if window not in cache:
            cache[window] = _raw_stats(self.clips, window, *self.raw_scaler())
        return cache[window]

    def raw_root(self, window: int) -> np.ndarray:
        """Square root of :meth:`raw_stats`' covariance (cached)."""
        cache = self.__dict__.setdefault("_raw_root", {})
        if window not in cache:
            cache[window] = psd_sqrt(self.raw_stats(window).gaussian[1])
        return cache[window]

    @property
    def n_windows(self) -> int:
        return int(self.emb.count.sum())

    def subset(self, idx: Sequence[int]) -> "FeatureSet":
        return FeatureSet([self.clips[i] for i in idx])


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


def set_metrics(sys: FeatureSet, ref: FeatureSet, n_boot: int = 500, seed: int = 0,
                score_columns: Sequence[str] = ()) -> dict[str, float]:
    """Every distribution metric of ``sys`` against ``ref``, each with ``_ci_low``/``_ci_high``.

    Returns:
        ``{fgd, fgd_raw, fgd_pose, fid_k, fid_g, div_k, div_g, l1_div, pfc, mean_<score metric>...}``
        and their intervals, plus ``n_clips``, ``n_windows`` (FGD windows), ``n_raw_windows``
        (raw-space FGD windows) and ``fgd_raw_boot_variance`` (see the module doc).
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
    fd_metric("fgd_pose", sys.pose, ref.pose)
    extra: dict[str, float] = {}
    _raw_metric(sys, ref, ws, wr, values, reps, extra)
    for name, xs, xr in (("k", sys.kinetic, ref.kinetic), ("g", sys.geometric, ref.geometric)):
        oks, okr = _finite_rows(xs), _finite_rows(xr)
        if oks.sum() < 2 or okr.sum() < 2:
            for m in (f"fid_{name}", f"div_{name}"):
                values[m], reps[m] = float("nan"), np.full(b, np.nan)
            continue
        mean, scale = reference_scaler(xr[okr], GEOMETRIC_MIN_SCALE if name == "g" else 0.0)
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
    out: dict[str, float] = {"n_clips": float(ns), "n_windows": float(sys.n_windows),
                             "n_raw_windows": float(sum(_n_raw(c) for c in sys.clips))}
    for name, v in values.items():
        lo, hi = _interval(v, reps[name], name in NONNEGATIVE)
        out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = v, lo, hi
    out["fgd_raw_boot_variance"] = extra.get("fgd_raw_boot_variance", float("nan"))
    return out


def _n_raw(c: ClipFeatures) -> int:
    from evalkit.distribution.canonical import window_starts

    return int(window_starts(len(c.poses), c.window, raw_stride(c.window)).size) if c.window else 0


def _raw_metric(sys: FeatureSet, ref: FeatureSet, ws: np.ndarray, wr: np.ndarray, values: dict, reps: dict,
                extra: dict) -> None:
    """``fgd_raw`` (GENEA's FGD on raw data space, see the module doc) and its replicates."""
    b = len(ws)
    window = next((c.window for c in sys.clips + ref.clips if c.window), 0)
    if not window or not len(ref.poses_all) or not len(sys.poses_all):
        values["fgd_raw"], reps["fgd_raw"] = float("nan"), np.full(b, np.nan)
        return
    mean, scale = ref.raw_scaler()
    rs = _raw_stats(sys.clips, window, mean, scale)
    rr = ref.raw_stats(window)
    if rs.n < 2 or rr.n < 2:
        values["fgd_raw"], reps["fgd_raw"] = float("nan"), np.full(b, np.nan)
        return
    (mu_s, cov_s), (mu_r, cov_r) = rs.gaussian, rr.gaussian
    values["fgd_raw"] = frechet_distance_root(mu_r, cov_r, ref.raw_root(window), mu_s, cov_s)
    if not b:
        reps["fgd_raw"] = np.zeros(0)
        return
    from scipy.linalg import eigh

    pooled = 0.5 * (cov_s + cov_r)
    d = len(pooled)
    k = min(RAW_BOOTSTRAP_DIMS, d)
    # only the k leading eigenpairs (LAPACK's dsyevr on an index range: about half the time of
    # the full decomposition at 1,530 dimensions); their share of the variance is over the trace
    lam, vec = eigh(pooled, subset_by_index=[d - k, d - 1], driver="evr")
    basis = vec[:, ::-1]
    extra["fgd_raw_boot_variance"] = float(lam.sum() / max(np.trace(pooled), 1e-300))
    ms = _raw_projected_moments(sys.clips, window, mean, scale, basis)
    mr = _raw_projected_moments(ref.clips, window, mean, scale, basis)
    reps["fgd_raw"] = _fd(ms, mr, ws, wr)


def half_split(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of ``range(n)`` into halves (the first gets the smaller half)."""
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[: n // 2]), np.sort(perm[n // 2:])
