"""The naturalness discriminator: a calibrated scikit-learn classifier of windows and clips.

Following Ikemoto, Arikan & Forsyth (2007), a discriminative classifier on physical and
data-driven window features (:mod:`evalkit.models.window_features`) tells natural from unnatural motion.
:class:`NaturalnessDiscriminator` is a scikit-learn estimator (parameters in ``__init__`` only,
``fit`` / ``predict_proba``):

1. :class:`PoseResidual` (fitted on natural windows only) turns each window's pose samples into
   PCA reconstruction errors against the natural poses of the training set;
2. a gradient-boosted tree ensemble (``HistGradientBoostingClassifier``) scores each window;
3. Platt scaling fitted on out-of-fold scores (folds grouped like the data) makes window
   probabilities calibrated, with both classes weighted equally (a prior of 1/2);
4. a logistic model on the distribution of a stretch's window log-odds (mean, 25th percentile,
   minimum, log window count), also fitted out of fold on the training examples, gives the
   calibrated probability that a stretch of up to ``stretch_s`` seconds looks natural;
5. :class:`ArtifactCheck` (``artifact_check=True``, the default) — fitted on natural windows
   only — lowers that probability for stretches that exceed natural capture on physical
   invariants (optionally only beyond the excess of most natural training clips), which
   carries over to artifact types absent from training;
6. a clip no longer than ``stretch_s`` gets its stretch's verdict; a longer clip the time
   average of the verdicts of its stretches (one starting at every window), so the verdict does
   not fall with the clip's length, and its least natural stretch is reported beside it.

:func:`score_naturalness` runs the whole chain on a :class:`~evalkit.motion.Motion` and reports the
clip's naturalness, its worst stretch and its worst window;
:func:`evalkit.models.naturalness.add_model_columns` does it for every clip of a score table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin, clone
from sklearn.decomposition import PCA
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from evalkit.errors import InputError
from evalkit.models.window_features import FEATURE_PREFIX, POSE_PREFIX, WindowConfig, window_features
from evalkit.motion import Motion


def _balanced_weights(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y)
    w = np.ones(len(y), dtype=float)
    for c in np.unique(y):
        w[y == c] = len(y) / (2.0 * np.sum(y == c))
    return w


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


class PoseResidual(TransformerMixin, BaseEstimator):
    """PCA reconstruction error of pose samples against natural poses.

    ``X``: ``(windows, samples * d)`` pose samples (``d`` values per sample, flattened). ``fit``
    uses only the rows with ``y == 1`` (natural) when ``y`` is given. ``transform`` returns
    ``(windows, 3)``: mean and maximum over a window's samples of the squared reconstruction
    error, and the mean squared distance inside the PCA subspace (whitened, a Mahalanobis term).

    Args:
        n_components: PCA components (int) or share of variance to keep (float in (0, 1)).
        samples: pose samples per window (``X`` must have a multiple of it columns).
        random_state: seed of the PCA solver.
    """

    def __init__(self, n_components: float | int = 0.95, samples: int = 6, random_state: int | None = 0):
        self.n_components = n_components
        self.samples = samples
        self.random_state = random_state

    def _split(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.shape[1] % self.samples:
            raise InputError(f"pose columns ({X.shape[1]}) are not a multiple of samples={self.samples}")
        return X.reshape(X.shape[0] * self.samples, -1)

    def fit(self, X, y=None):
        rows = np.asarray(X)
        if y is not None:
            rows = rows[np.asarray(y) == 1]
        if len(rows) == 0:
            raise InputError("PoseResidual needs natural (y == 1) rows to fit")
        flat = self._split(rows)
        self.pca_ = PCA(n_components=self.n_components, svd_solver="full", random_state=self.random_state)
        self.pca_.fit(flat)
        return self

    def transform(self, X):
        check_is_fitted(self, "pca_")
        n = np.asarray(X).shape[0]
        flat = self._split(X)
        z = self.pca_.transform(flat)
        rec = self.pca_.inverse_transform(z)
        err = np.sum((flat - rec) ** 2, axis=1).reshape(n, self.samples)
        maha = np.mean(z ** 2 / np.maximum(self.pca_.explained_variance_, 1e-12), axis=1).reshape(n, self.samples)
        return np.column_stack([err.mean(1), err.max(1), maha.mean(1)])

    def get_feature_names_out(self, input_features=None):
        return np.array(["pose_residual_mean", "pose_residual_max", "pose_mahalanobis"])


class NaturalRange(TransformerMixin, BaseEstimator):
    """How far each window lies outside the range of natural windows, feature by feature.

    Fitted on natural rows (``y == 1``): per feature the ``q`` and ``1 - q`` quantiles and the
    interquartile range. ``transform`` gives, per row, the excess beyond that range in IQR
    units for each feature (0 inside, NaN counted as 0), summarised as ``(windows, 3)``: the
    largest excess, the mean of the five largest, and the number of features beyond the range.
    A novelty signal: an artifact of a kind never seen in training still pushes some feature
    out of the natural range (a limb 20 % longer than its twin, say).

    Args:
        q: lower quantile of the natural range (the upper one is ``1 - q``).
    """

    def __init__(self, q: float = 0.01):
        self.q = q

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=np.float64)
        if y is not None:
            X = X[np.asarray(y) == 1]
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                self.low_ = np.nanquantile(X, self.q, axis=0)
                self.high_ = np.nanquantile(X, 1 - self.q, axis=0)
                iqr = np.nanquantile(X, 0.75, axis=0) - np.nanquantile(X, 0.25, axis=0)
        span = np.where(np.isfinite(iqr) & (iqr > 0), iqr, np.nan)
        fallback = np.abs(self.high_ - self.low_)
        span = np.where(np.isfinite(span), span, np.where(fallback > 0, fallback, 1.0))
        self.scale_ = np.where(np.isfinite(span), span, 1.0)
        return self

    def excess(self, X) -> np.ndarray:
        """``(windows, features)`` excess beyond the natural range, IQR units."""
        check_is_fitted(self, "scale_")
        X = np.asarray(X, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            e = np.maximum(X - self.high_, self.low_ - X) / self.scale_
        e = np.where(np.isfinite(e), np.maximum(e, 0.0), 0.0)
        e[:, ~(np.isfinite(self.low_) & np.isfinite(self.high_))] = 0.0
        return e

    def transform(self, X):
        e = self.excess(X)
        top = -np.sort(-e, axis=1)[:, :5]
        return np.column_stack([e.max(1), top.mean(1), (e > 0).sum(1)])

    def get_feature_names_out(self, input_features=None):
        return np.array(["range_excess_max", "range_excess_top5", "range_excess_count"])


#: Window features that natural motion keeps small whatever the capture, with the physical
#: invariant each one measures; ``(column, sign)``: ``sign * value`` grows with the artifact.
ARTIFACT_FEATURES: tuple[tuple[str, int], ...] = (
    ("f_asym_max_max", 1),        # left and right limbs of different lengths
    ("f_bone_len_var", 1),        # bones changing length over time
    ("f_skate_p25", 1),           # planted feet sliding
    ("f_skate_ratio", 1),
    ("f_stance_h_mean_rel", 1),   # planted feet above the clip's usual floor (floating) ...
    ("f_stance_h_mean_rel", -1),  # ... or below it (sinking)
    ("f_fx_zmp_outside_max", 1),  # zero-moment point outside the support polygon
    ("f_jerk_max_max", 1),        # jerk, acceleration spikes against the surrounding second
    ("f_acc_spike_max", 1),
    ("f_acc_spike_max_rel", 1),
    ("f_jerk_spike_max_rel", 1),
    ("f_root_jerk_mean", 1),      # root shaking
    ("f_vhf_ratio", 1),           # energy above the band of human movement (noise)
    ("f_rot_linearity_min", -1),  # joints turning at exactly constant velocity (linear keys)
)


#: Training windows' range that bounds what the model knows (quantile at each end) and how far
#: beyond it a feature may lie, in units of the range, before a window counts as unlike any the
#: model was trained on.
DOMAIN_QUANTILE = 0.999
DOMAIN_MARGIN = 0.5

#: Reason groups of the window features, in the order they are reported. A feature's group is
#: the first whose name patterns match (:func:`feature_group`).
FEATURE_GROUPS: tuple[str, ...] = ("feet", "ground", "balance", "smoothness", "timing", "pose")
_GROUP_PATTERNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ground", ("stance_h", "foot_h", "penetration", "floating", "flight", "ballistic")),
    ("feet", ("skate", "skating", "contact", "stance_vy")),
    ("balance", ("zmp", "ang_mom")),
    ("pose", ("pose_", "asym", "bone_len", "knee_flex", "elbow", "range_excess")),
    ("timing", ("speed", "yaw_rate", "ke_", "limb_activity", "rot_still", "corr_", "phase_", "swing_")),
    ("smoothness", ("",)),  # jerk, acceleration, spikes, linearity, high-frequency energy
)


def feature_group(name: str) -> str:
    """The reason group of a window feature (``f_skate_p25`` -> ``"feet"``; see
    :data:`FEATURE_GROUPS`): feet and contacts, ground (heights, flight), balance (ZMP,
    angular momentum), smoothness (jerk, spikes, jitter, interpolation), timing (speeds,
    activity, coordination of limbs in time), pose (poses, proportions, joint angles).

    >>> feature_group("f_skate_p25"), feature_group("f_jerk_spike_max"), feature_group("pose_residual_max")
    ('feet', 'smoothness', 'pose')
    """
    key = name[len(FEATURE_PREFIX):] if name.startswith(FEATURE_PREFIX) else name
    if name.startswith(POSE_PREFIX):
        key = name
    if "spike" in key or "jerk" in key or "acc" in key:
        return "smoothness"
    for group, patterns in _GROUP_PATTERNS:
        if any(p in key for p in patterns):
            return group
    return "smoothness"


#: Smallest natural range of the invariants whose features read 0 within what real bodies show
#: (:data:`~evalkit.models.window_features.ASYMMETRY_TOLERANCE`, ``BONE_LENGTH_TOLERANCE``): natural
#: windows are all 0 there, and the excess is counted in units of this span instead.
ARTIFACT_MIN_SPAN = {"f_asym_max_max": 0.02, "f_bone_len_var": 0.01}


#: Slowest deliberate human movement the rotation-linearity invariant accepts as natural (Hz). A
#: joint moving smoothly at ``f`` Hz, sampled at ``fps``, changes its angular velocity by about
#: ``2π f / fps`` of itself per frame (``log10``: -1.20 at 0.3 Hz and 30 frames/s); key
#: interpolation reads -2 and below even after a 2-decimal text file. Walks and runs never move
#: that slowly, so trained on them alone the invariant's natural range (about -0.9) took slow,
#: smooth bows and greetings (-1.0 to -1.25 in the Bandai Namco gesture takes) for keyframing.
#: 0.2 Hz (-1.38) scored those the same and caught keyed windows less well (3 folds: keyframe
#: seen 0.995 vs 0.997; docs/discriminator.md).
SLOWEST_MOVEMENT_HZ = 0.3


class ArtifactCheck(BaseEstimator):
    """Type-agnostic artifact score: how far a window exceeds natural capture on invariants.

    Fitted on natural windows only: per feature of :data:`ARTIFACT_FEATURES` (sign applied) the
    median and the ``q`` quantile. A window's score is ``log1p`` of the largest excess beyond
    that quantile, in units of (quantile − median), over the features; 0 when every feature is
    within the natural range. It knows nothing about corruption types, so it also flags
    artifacts of kinds never seen in training (that is its purpose; see docs/discriminator.md).
    The natural range of ``f_rot_linearity_min`` reaches at least the value of smooth movement
    at :data:`SLOWEST_MOVEMENT_HZ`, whatever the training data.

    Args:
        q: upper quantile of the natural windows that bounds the natural range.
        fps: frame rate the window features were computed at (frames/s).
    """

    def __init__(self, q: float = 0.99, fps: float = 30.0):
        self.q = q
        self.fps = fps

    def __setstate__(self, state):
        state.setdefault("fps", 30.0)  # checks saved before the parameter existed
        super().__setstate__(state)

    def _values(self, X: pd.DataFrame) -> np.ndarray:
        return np.column_stack([sign * X[c].to_numpy(dtype=np.float64) for c, sign in self.features_])

    def fit(self, X: pd.DataFrame, y=None):
        self.features_ = [(c, s) for c, s in ARTIFACT_FEATURES if c in X.columns]
        if not self.features_:
            raise InputError("none of the artifact features is in the window table")
        V = self._values(X if y is None else X[np.asarray(y) == 1])
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (no flight, etc.)
            self.median_ = np.nanmedian(V, axis=0)
            high = np.nanquantile(V, self.q, axis=0)
        slow = -np.log10(2 * np.pi * SLOWEST_MOVEMENT_HZ / self.fps)  # sign applied: -rot_linearity
        for i, f in enumerate(self.features_):
            if f == ("f_rot_linearity_min", -1) and np.isfinite(high[i]):
                high[i] = max(high[i], slow)
        span = np.maximum(high - self.median_, [ARTIFACT_MIN_SPAN.get(c, 0.0) for c, _ in self.features_])
        self.span_ = np.where(np.isfinite(span) & (span > 0), span, np.inf)
        return self

    def score_windows(self, X: pd.DataFrame) -> np.ndarray:
        """``(windows,)`` artifact score (0 = within the natural range on every invariant)."""
        check_is_fitted(self, "span_")
        with np.errstate(invalid="ignore"):
            e = (self._values(X) - self.median_) / self.span_ - 1.0
        e = np.where(np.isfinite(e), np.maximum(e, 0.0), 0.0)
        return np.log1p(e.max(axis=1))


class NaturalnessDiscriminator(ClassifierMixin, BaseEstimator):
    """Calibrated classifier of natural (1) vs unnatural (0) motion windows and clips.

    ``X`` is a window table from :func:`~evalkit.models.window_features.window_features` (columns
    ``f_*`` and ``pose_*``; other columns are ignored). Class 1 means natural, so
    ``predict_proba(X)[:, 1]`` is the calibrated probability that a window looks natural.

    Args:
        max_iter, learning_rate, max_leaf_nodes, min_samples_leaf, l2_regularization,
            max_features: of the gradient-boosted trees. The defaults are deliberately small
            trees and few rounds: larger models fit the training subjects better and new
            subjects worse (grouped CV: 250 rounds of 15-leaf trees 0.937 ROC AUC, 80 rounds of
            7-leaf trees with 60 windows per leaf 0.959; see docs/discriminator.md).
        pca_components: components or variance share of the pose PCA (:class:`PoseResidual`).
        range_quantile: add :class:`NaturalRange` novelty features with this quantile
            (``None``: leave them out).
        pose_samples: pose samples per window in the ``pose_*`` columns.
        cv: folds for the out-of-fold calibration (grouped when ``groups`` is given to ``fit``).
        artifact_check: multiply each stretch's naturalness by a logistic function of the
            stretch's largest :class:`ArtifactCheck` score (fitted out of fold), so that an
            artifact of a kind the training data never showed still lowers the score of the
            stretches that contain it. On by default;
            docs/discriminator.md compares the settings (it gains most on held-out corruption
            types).
        artifact_quantile: the factor is 1 up to this quantile of the out-of-fold artifact
            scores of the natural training clips (their "natural range" at clip level: the
            largest of a clip's window scores exceeds the windows' 99th percentile somewhere
            in many natural clips) and falls beyond it. 0 (the default): any excess lowers
            the score. 0.7 keeps natural capture's scores higher (5 folds: natural test
            segments mean 0.850 instead of 0.811) and catches limb transplants a little better
            but held-out foot skating and transitions worse (docs/discriminator.md).
        artifact_range: quantile of the natural training windows that bounds each invariant's
            natural range in the :class:`ArtifactCheck` (its ``q``). 0.98 (the default) ranks
            artifacts of unseen types better than 0.99 on new subjects (3 folds: held-out foot
            skating 0.949 vs 0.934) at a small cost in natural clips' scores (mean 0.802 vs
            0.817); docs/discriminator.md.
        stretch_s: the clip model is fitted on training examples up to this long (seconds); a
            longer clip is judged stretch by stretch at this length, and its naturalness is
            the time average of the stretch verdicts (the least natural stretch is reported
            beside it, see :meth:`predict_clip_proba`), so a minute of natural motion scores
            as its parts do and one bad stretch lowers it in proportion to its time.
        window: the :class:`~evalkit.models.window_features.WindowConfig` the tables were made with
            (kept with the model so :func:`score_naturalness` cuts clips the same way).
        n_threads: OpenMP threads for the trees (``None``: all cores). The default of 1 is
            deliberate: on a shared 2-core machine the trees fit 6x faster single-threaded
            than with threads competing for cores; results do not depend on it.
        random_state: seed of every random choice in fitting.
    """

    def __init__(self, max_iter: int = 80, learning_rate: float = 0.08, max_leaf_nodes: int = 7,
                 min_samples_leaf: int = 60, l2_regularization: float = 1.0, max_features: float = 1.0,
                 pca_components: float | int = 0.95, pose_samples: int = 6, range_quantile: float | None = None,
                 cv: int = 3, stretch_s: float = 6.0, artifact_check: bool = True, artifact_quantile: float = 0.0,
                 artifact_range: float = 0.98,
                 window: WindowConfig = WindowConfig(), n_threads: int | None = 1, random_state: int = 0):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.pca_components = pca_components
        self.range_quantile = range_quantile
        self.pose_samples = pose_samples
        self.cv = cv
        self.stretch_s = stretch_s
        self.artifact_check = artifact_check
        self.artifact_quantile = artifact_quantile
        self.artifact_range = artifact_range
        self.window = window
        self.n_threads = n_threads
        self.random_state = random_state

    def __setstate__(self, state):
        # models saved before a parameter existed load with the behaviour they had (no check;
        # factor 1 only for no excess)
        state.setdefault("artifact_check", False)
        state.setdefault("artifact_quantile", 0.0)
        state.setdefault("artifact_range", 0.99)
        if state.get("artifact_model_") is not None:
            state.setdefault("artifact_ref_", 0.0)
        super().__setstate__(state)

    # -- inner model -------------------------------------------------------------------------
    def _columns(self, X: pd.DataFrame) -> tuple[list[str], list[str]]:
        if not isinstance(X, pd.DataFrame):
            raise InputError("X must be a window table (pandas DataFrame with f_* and pose_* columns)")
        feats = [c for c in X.columns if c.startswith(FEATURE_PREFIX)]
        pose = [c for c in X.columns if c.startswith(POSE_PREFIX)]
        if not feats or not pose:
            raise InputError("X has no f_* feature or pose_* columns; make it with window_features()")
        return feats, pose

    def _fit_inner(self, X: pd.DataFrame, y: np.ndarray, w: np.ndarray):
        pr = PoseResidual(self.pca_components, self.pose_samples, self.random_state).fit(X[self.pose_columns_].to_numpy(), y)
        pr.range_ = NaturalRange(self.range_quantile).fit(X[self.feature_columns_].to_numpy(), y) \
            if self.range_quantile else None
        Z = self._design(X, pr)
        # a feature with no value at all in the training rows (e.g. flight features when no
        # training clip leaves the ground) carries no information; the trees cannot bin it
        pr.dead_ = np.isnan(Z).all(axis=0)
        Z[:, pr.dead_] = 0.0
        hgb = HistGradientBoostingClassifier(
            max_iter=self.max_iter, learning_rate=self.learning_rate, max_leaf_nodes=self.max_leaf_nodes,
            min_samples_leaf=self.min_samples_leaf, l2_regularization=self.l2_regularization,
            max_features=self.max_features, early_stopping=False, random_state=self.random_state,
        )
        with threadpool_limits(limits=self.n_threads):
            hgb.fit(Z, y, sample_weight=w)
        return pr, hgb

    def _design(self, X: pd.DataFrame, pr: PoseResidual) -> np.ndarray:
        F = X[self.feature_columns_].to_numpy(dtype=np.float64)
        parts = [F, pr.transform(X[self.pose_columns_].to_numpy())]
        if getattr(pr, "range_", None) is not None:
            parts.append(pr.range_.transform(F))
        Z = np.column_stack(parts)
        dead = getattr(pr, "dead_", None)
        if dead is not None:
            Z[:, dead] = 0.0
        return Z

    def _raw(self, inner, X, design) -> np.ndarray:
        pr, hgb = inner
        with threadpool_limits(limits=self.n_threads):
            return hgb.decision_function(design(X, pr))

    # -- scikit-learn API ----------------------------------------------------------------------
    def fit(self, X: pd.DataFrame, y, groups=None, clips=None):
        """Fit on windows.

        Args:
            X: window table (``f_*``, ``pose_*`` columns).
            y: ``(windows,)`` 1 natural, 0 unnatural, -1 unlabelled (scikit-learn's
                semi-supervised convention): windows of a corrupted clip that the corruption did
                not touch. They are not used to fit the window classifier, only as context when
                the clip-level model learns how a clip's windows add up.
            groups: ``(windows,)`` cross-validation groups for the calibration folds (subject or
                source clip; never frames). Default: stratified folds.
            clips: ``(windows,)`` clip id of each window, for the clip-level model. Default:
                every window is its own clip.
        """
        if not 0.0 <= self.artifact_quantile < 1.0:
            raise InputError(f"artifact_quantile must be in [0, 1), got {self.artifact_quantile}")
        if not 0.5 < self.artifact_range < 1.0:
            raise InputError(f"artifact_range must be in (0.5, 1), got {self.artifact_range}")
        self.feature_columns_, self.pose_columns_ = self._columns(X)
        y = np.asarray(y).astype(int)
        lab = y >= 0
        if set(np.unique(y[lab])) != {0, 1}:
            raise InputError("y must contain both classes: 1 (natural) and 0 (unnatural)")
        self.classes_ = np.array([0, 1])
        X = X.reset_index(drop=True)
        clips = np.arange(len(y)) if clips is None else self._stretch_ids(np.asarray(clips))

        # out-of-fold raw scores for calibration (folds grouped like the data)
        if groups is not None and len(np.unique(groups)) >= 2:
            groups = np.asarray(groups)
            # every fold's training part needs both classes: at most as many folds as groups
            # holding each class (e.g. two files of user-supplied unnatural clips: two folds)
            k = min(self.cv, len(np.unique(groups)), len(np.unique(groups[y == 1])), len(np.unique(groups[y == 0])))
            k = max(k, 2)
            # stratified, so that a few groups of user-supplied unnatural clips are spread over folds
            splits = list(StratifiedGroupKFold(n_splits=k, shuffle=True, random_state=self.random_state)
                          .split(X, (y == 1).astype(int), groups))
            if any(len(np.unique(y[tr][lab[tr]])) < 2 for tr, _ in splits):
                splits = _round_robin_group_folds(y, lab, groups, k, self.random_state)
        else:
            splits = list(StratifiedKFold(n_splits=self.cv, shuffle=True,
                                          random_state=self.random_state).split(X, y))
        oof = np.zeros(len(y))
        art = np.zeros(len(y))
        for tr, te in splits:
            tr = tr[lab[tr]]
            if len(np.unique(y[tr])) < 2:
                raise InputError("a calibration fold has only one class; give more groups or both classes per group")
            inner = self._fit_inner(X.iloc[tr], y[tr], _balanced_weights(y[tr]))
            oof[te] = self._raw(inner, X.iloc[te], self._design)
            if self.artifact_check:
                art[te] = ArtifactCheck(self.artifact_range, self.window.fps).fit(X.iloc[tr], y[tr]).score_windows(X.iloc[te])
        self.calibrator_ = LogisticRegression(C=1e4).fit(oof[lab, None], y[lab], sample_weight=_balanced_weights(y[lab]))
        p_oof = self.calibrator_.predict_proba(oof[:, None])[:, 1]

        # clip-level model on the out-of-fold log-odds of all of a clip's windows; a clip is
        # natural if it has natural windows only, unnatural if any window is unnatural
        clip_label = pd.Series(np.where(lab, y, 2)).groupby(clips, sort=False).min()
        agg, ids = self._clip_table(_logit(p_oof), clips)
        cy = clip_label.loc[ids].to_numpy()
        keep = cy <= 1
        if len(np.unique(cy[keep])) < 2:
            raise InputError("the clip-level model needs natural and unnatural clips")
        self.clip_model_ = LogisticRegression(C=1.0).fit(agg[keep], cy[keep], sample_weight=_balanced_weights(cy[keep]))
        if self.artifact_check:
            a = pd.Series(art).groupby(clips, sort=False).max().loc[ids].to_numpy()[:, None]
            self.artifact_model_ = LogisticRegression(C=1.0).fit(a[keep], cy[keep], sample_weight=_balanced_weights(cy[keep]))
            self.artifact_ref_ = float(np.quantile(a[cy == 1, 0], self.artifact_quantile)) if self.artifact_quantile > 0 else 0.0
            self.artifact_ = ArtifactCheck(self.artifact_range, self.window.fps).fit(X[lab], y[lab])

        self.inner_ = self._fit_inner(X[lab], y[lab], _balanced_weights(y[lab]))
        self.n_features_in_ = len(self.feature_columns_) + len(self.pose_columns_)
        self._fit_domain(X[lab], y[lab])
        return self

    def _fit_domain(self, X: pd.DataFrame, y: np.ndarray) -> None:
        """What the model knows: the range of every design column over the labelled training
        windows (natural and corrupted: values beyond it are motion the model has never seen the
        like of) and its median over the natural ones (what a reason is measured against)."""
        pr = self.inner_[0]
        Z = self._design(X, pr)
        names = list(self.feature_columns_) + list(pr.get_feature_names_out())
        if getattr(pr, "range_", None) is not None:
            names += list(pr.range_.get_feature_names_out())
        self.design_names_ = np.array(names)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
            lo, hi = np.nanquantile(Z, [1 - DOMAIN_QUANTILE, DOMAIN_QUANTILE], axis=0)
            self.natural_median_ = np.nanmedian(Z[np.asarray(y) == 1], axis=0)
        span = np.where(np.isfinite(hi - lo), hi - lo, 0.0)
        self.known_low_ = lo - DOMAIN_MARGIN * span
        self.known_high_ = hi + DOMAIN_MARGIN * span
        self.design_groups_ = np.array([feature_group(n) for n in names])

    def _has_domain(self) -> bool:
        return hasattr(self, "known_low_")

    def known_windows(self, X: pd.DataFrame) -> np.ndarray:
        """``(windows,)`` True where every feature of the window lies within what the model
        was trained on (:data:`DOMAIN_QUANTILE` range of its training windows, natural and
        corrupted, widened by :data:`DOMAIN_MARGIN` of itself on each side; NaN features do not
        count). All True for a model saved without that range."""
        check_is_fitted(self, "inner_")
        if not self._has_domain():
            return np.ones(len(X), dtype=bool)
        Z = self._design(X, self.inner_[0])
        with np.errstate(invalid="ignore"):
            out = (Z < self.known_low_) | (Z > self.known_high_)
        return ~out.any(axis=1)

    def window_reasons(self, X: pd.DataFrame) -> pd.DataFrame:
        """How much each feature group lowers each window's log-odds of looking natural.

        For every group of :data:`FEATURE_GROUPS` the window's features of that group are set to
        their median over natural training windows and the trees' raw score is taken again; the
        gain (log-odds, ≥ 0) is what that group costs the window. Returns a ``(windows, groups)``
        DataFrame (columns: the group names; empty for a model saved without the medians).
        """
        check_is_fitted(self, "inner_")
        if not self._has_domain():
            return pd.DataFrame(index=range(len(X)))
        pr, hgb = self.inner_
        Z = self._design(X, pr)
        with threadpool_limits(limits=self.n_threads):
            base = hgb.decision_function(Z)
            out = {}
            for g in FEATURE_GROUPS:
                cols = self.design_groups_ == g
                if not cols.any():
                    out[g] = np.zeros(len(Z))
                    continue
                Zg = Z.copy()
                Zg[:, cols] = np.where(np.isfinite(self.natural_median_[cols]), self.natural_median_[cols], 0.0)
                out[g] = np.maximum(hgb.decision_function(Zg) - base, 0.0)
        return pd.DataFrame(out)

    def _stretch_ids(self, clips: np.ndarray) -> np.ndarray:
        """Clip ids for the clip-level models: a clip of more than ``stretch_s`` worth of windows
        is cut into consecutive stretches of at most that many (as even as possible), because a
        long clip is judged stretch by stretch (:meth:`predict_clip_proba`); shorter clips keep
        their id. Windows of one clip must be in time order."""
        k = self._stretch_windows()
        codes, _ = pd.factorize(clips, sort=False)
        g = pd.Series(codes).groupby(codes, sort=False)
        pos = g.cumcount().to_numpy()
        n = g.transform("size").to_numpy()
        chunks = np.ceil(n / k).astype(np.int64)
        return codes.astype(np.int64) * 1_000_000 + (pos * chunks) // n

    @staticmethod
    def _clip_table(logits: np.ndarray, clips: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per clip (in order of first appearance): mean, 25th percentile and minimum of the
        window log-odds and the log window count; and the clip ids."""
        g = pd.Series(logits).groupby(np.asarray(clips), sort=False)
        agg = np.column_stack([
            g.mean().to_numpy(),
            g.quantile(0.25).to_numpy(),
            g.min().to_numpy(),
            np.log(g.size().to_numpy()),
        ])
        return agg, g.mean().index.to_numpy()

    def _stretch_windows(self) -> int:
        w = self.window
        return max(1, int(round((self.stretch_s - w.window_s) / w.hop_s)) + 1)

    def decision_function(self, X: pd.DataFrame) -> np.ndarray:
        """``(windows,)`` raw score of the tree ensemble (higher = more natural)."""
        check_is_fitted(self, "inner_")
        return self._raw(self.inner_, X, self._design)

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        """``(windows, 2)`` calibrated probabilities of [unnatural, natural]."""
        p = self.calibrator_.predict_proba(self.decision_function(X)[:, None])[:, 1]
        return np.column_stack([1 - p, p])

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return (self.predict_proba(X)[:, 1] >= 0.5).astype(int)

    def _artifact_factor(self, art: np.ndarray) -> np.ndarray:
        """Factor (0-1] by which artifact scores ``art`` lower a verdict: 1 within the natural
        range, falling with the excess (relative to the natural range, so clean windows keep
        the trees' probability)."""
        ref = self.artifact_model_.predict_proba(np.full((1, 1), self.artifact_ref_))[0, 1]
        return np.minimum(1.0, self.artifact_model_.predict_proba(np.asarray(art, float)[:, None])[:, 1] / ref)

    def window_verdicts(self, X: pd.DataFrame) -> np.ndarray:
        """``(windows,)`` each window's verdict: its calibrated probability of looking natural
        times the artifact factor of its own artifact score (:class:`ArtifactCheck`)."""
        p = self.predict_proba(X)[:, 1]
        if self.artifact_check:
            p = p * self._artifact_factor(self.artifact_.score_windows(X))
        return p

    def _stretch_verdicts(self, z: np.ndarray, art: np.ndarray | None, u: np.ndarray) -> np.ndarray:
        """Verdicts of every stretch of one clip: ``(stretches,)`` calibrated probabilities.

        ``z``: ``(windows,)`` window log-odds of one clip, in time order; ``art``: their
        artifact scores (``None`` without the check); ``u``: their window verdicts. A clip of at
        most ``stretch_s`` is one stretch; a longer one has a stretch starting at every window,
        ``stretch_s`` long. Each stretch gets the clip model's probability times the artifact
        factor of its own largest artifact score, kept between the least and the most natural
        of its window verdicts: a stretch is never judged worse than its worst window nor better
        than its best, so the clip's numbers agree by definition (worst window <= worst stretch
        <= clip).
        """
        n, k = len(z), self._stretch_windows()
        if n <= k:
            a, _ = self._clip_table(z, np.zeros(n, dtype=int))
            art_max = None if art is None else np.array([art.max()])
            lo, hi = np.array([u.min()]), np.array([u.max()])
        else:
            m = n - k + 1
            sub = np.concatenate([z[s:s + k] for s in range(m)])
            a, _ = self._clip_table(sub, np.repeat(np.arange(m), k))
            art_max = None if art is None else np.lib.stride_tricks.sliding_window_view(art, k).max(axis=1)
            view = np.lib.stride_tricks.sliding_window_view(u, k)
            lo, hi = view.min(axis=1), view.max(axis=1)
        p = self.clip_model_.predict_proba(a)[:, 1]
        if art_max is not None:
            p = p * self._artifact_factor(art_max)
        return np.clip(p, lo, hi)

    def predict_clip_proba(self, X: pd.DataFrame, clips) -> pd.DataFrame:
        """Per clip: calibrated ``naturalness``, the worst stretch and the worst window.

        A clip is judged stretch by stretch (``stretch_s`` long, one starting at every window;
        a clip no longer than ``stretch_s`` is one stretch): each stretch gets the clip model's
        calibrated probability of looking natural, times the artifact check's factor for the
        stretch's own windows. Each window's ``local`` naturalness is the mean verdict of the
        stretches that contain it, and the clip's ``naturalness`` is the mean of its windows'
        local naturalness (windows are evenly spaced, so this is a time average): the expected
        verdict on the clip's time, which does not fall with the clip's length. A clip no
        longer than ``stretch_s`` keeps its single verdict.

        ``X`` rows of a clip must be in time order. Returns a DataFrame indexed by clip id with
        ``naturalness``, ``worst_stretch_naturalness`` (the least natural stretch's verdict),
        ``worst_stretch_first`` / ``worst_stretch_last`` (row positions in ``X`` of its first
        and last window), ``worst_window`` (row position of the least natural window),
        ``worst_naturalness`` (that window's probability) and ``windows``.
        """
        return self._judge_clips(X, clips)[0]

    def predict_local_proba(self, X: pd.DataFrame, clips) -> np.ndarray:
        """``(windows,)`` each window's local naturalness: the mean verdict of the
        ``stretch_s`` stretches of its clip that contain it (see :meth:`predict_clip_proba`;
        the clip's naturalness is the mean of these over its windows)."""
        return self._judge_clips(X, clips)[1]

    def _judge_clips(self, X: pd.DataFrame, clips) -> tuple[pd.DataFrame, np.ndarray]:
        p = self.predict_proba(X)[:, 1]
        clips = np.asarray(clips)
        z = _logit(p)
        art = self.artifact_.score_windows(X) if self.artifact_check else None
        u = p * self._artifact_factor(art) if art is not None else p
        rows = pd.Series(np.arange(len(p))).groupby(clips, sort=False)
        k = self._stretch_windows()
        local = np.zeros(len(p))
        recs = {}
        for c, idx in rows:
            idx = idx.to_numpy()
            ps = self._stretch_verdicts(z[idx], None if art is None else art[idx], u[idx])
            n = len(idx)
            if len(ps) == 1:
                loc = np.full(n, ps[0])
                first, last = 0, n - 1
            else:
                # window i is in the stretches starting at max(0, i-k+1) .. min(i, m-1)
                cs = np.concatenate([[0.0], np.cumsum(ps)])
                i = np.arange(n)
                lo, hi = np.maximum(0, i - k + 1), np.minimum(i, len(ps) - 1) + 1
                loc = (cs[hi] - cs[lo]) / (hi - lo)
                first = int(np.argmin(ps))
                last = first + k - 1
            local[idx] = loc
            w = int(np.argmin(u[idx]))
            recs[c] = (float(loc.mean()), float(ps.min()), idx[first], idx[last], idx[w], u[idx[w]], n)
        out = pd.DataFrame.from_dict(recs, orient="index", columns=[
            "naturalness", "worst_stretch_naturalness", "worst_stretch_first", "worst_stretch_last",
            "worst_window", "worst_naturalness", "windows"])
        out.index = pd.Index(list(recs), name="clip")
        return out, local


@dataclass(frozen=True)
class MotionScore:
    """The discriminator's verdict on one clip.

    Attributes:
        naturalness: the clip's naturalness (0-1): the time average of its windows' local
            naturalness, i.e. of the calibrated verdicts on its ``stretch_s`` stretches (a clip
            no longer than ``stretch_s``: its calibrated probability of looking natural).
        worst_start_s, worst_end_s: the least natural window, seconds from the clip's start.
        worst_naturalness: that window's verdict (never above the worst stretch's, which is
            never above ``naturalness``).
        windows: per-window table (``start_s``, ``end_s``, ``naturalness``: the window's own
            verdict, its calibrated probability times its artifact factor;
            ``local_naturalness``: mean verdict of the stretches that contain it; ``known``:
            every feature within what the model was trained on; ``reason``: the feature group
            that costs the window most, empty where none costs it much).
        reliability: share of the judged windows that lie within what the model was trained on
            (:meth:`NaturalnessDiscriminator.known_windows`; NaN for a model saved without that
            range). Below 1 the verdict speaks of motion unlike the training data.
        reasons: the feature groups that cost the clip most (``"feet 0.62; smoothness 0.21"``:
            each group's share of the log-odds the windows lose, weighted by how unnatural each
            window is; groups of less than 10 % left out; empty for a model saved without
            natural medians).
        notes: what the user should know about the verdict (calibration frames left out,
            motion the model does not know, a rig unlike those it was trained on, joint speeds
            no person reaches at the declared frame rate).
        worst_stretch_start_s, worst_stretch_end_s: the least natural stretch (``stretch_s``
            long, or the whole clip if shorter), seconds from the clip's start.
        worst_stretch_naturalness: that stretch's verdict (what the clip scored before the
            clip verdict became a time average).
        cuts_s: where the clip cuts to a new take (:func:`evalkit.motion.trim.find_cuts`),
            seconds from the clip's start; each take was judged on its own.
        copies: how many copies of one stretch the clip is (:func:`evalkit.motion.trim.find_repeat`;
            the last may be cut short; 1: no repeat). A repeated clip was judged on its first
            copy and the join into the second; ``windows`` and ``cuts_s`` repeat those.
        period_s: the length of one copy, seconds (NaN: no repeat).
    """

    naturalness: float
    worst_start_s: float
    worst_end_s: float
    worst_naturalness: float
    windows: pd.DataFrame
    worst_stretch_start_s: float = float("nan")
    worst_stretch_end_s: float = float("nan")
    worst_stretch_naturalness: float = float("nan")
    cuts_s: tuple[float, ...] = ()
    copies: float = 1.0
    period_s: float = float("nan")
    reliability: float = float("nan")
    reasons: str = ""
    notes: tuple[str, ...] = ()


def score_naturalness(model: NaturalnessDiscriminator, motion: Motion, roles: dict[str, int] | None = None,
                      drop_pops: bool = True, split_cuts: bool = True, fold_repeats: bool = True) -> MotionScore:
    """Score a clip with a fitted discriminator (windows cut with the model's own config).

    Args:
        model: a fitted :class:`NaturalnessDiscriminator`.
        motion: the clip.
        roles: role -> joint index overrides for unusual rigs.
        drop_pops: first drop popped end frames exactly as ``evalkit score`` does for every
            other metric (:func:`evalkit.motion.trim.drop_end_pops`: a reference pose that
            an exporter put at frame 0 is not motion); window times stay in seconds of the
            clip as given. ``False`` judges every frame.
        split_cuts: judge the takes between cuts separately (:func:`evalkit.motion.trim.find_cuts`:
            the body moves farther in one frame than a body can, e.g. a file of several takes
            or frames repeated without carrying the body on). No window spans a cut; the clip's
            naturalness is the time average of the takes' verdicts, weighted by their frames;
            a take shorter than the model's ``min_clip_s`` is not judged; with ``drop_pops``
            each take's own popped end frames are dropped too (and a take shorter than
            ``min_clip_s`` after that is not judged either). The cuts are in
            :attr:`MotionScore.cuts_s`. ``False`` judges the clip as one take.
        fold_repeats: a clip that is copies of one stretch (:func:`evalkit.motion.trim.find_repeat`:
            a clip looped frame for frame, or with the body carried on) gets the verdict of its
            first two copies, judged once (as above): one copy and its join into the next, so a
            bad join lowers the verdict as it would in the whole clip, without judging the same
            frames again and again. :attr:`MotionScore.copies` says so. ``False`` judges every
            frame as it comes.

    Example (the shipped model on a bundled walk; the verdict is a probability in [0, 1]):

    >>> from evalkit.data import SAMPLES_DIR
    >>> from evalkit.models.training import load_model
    >>> from evalkit.motion import load_motion
    >>> model, _ = load_model("default")
    >>> s = score_naturalness(model, load_motion(SAMPLES_DIR / "cmu" / "16_15.amc"))
    >>> s.naturalness > 0.9, s.worst_naturalness <= s.naturalness, s.reliability
    (True, True, 1.0)
    """
    from evalkit.features.body import REFERENCE_HEIGHT_M
    from evalkit.motion import skeleton_height
    from evalkit.motion.trim import drop_end_pops

    check_is_fitted(model, "inner_")
    scale = skeleton_height(motion) / REFERENCE_HEIGHT_M
    if fold_repeats:
        folded = _score_repeated(model, motion, roles, drop_pops, split_cuts, scale)
        if folded is not None:
            return folded
    head = 0
    if drop_pops:
        motion, head, _ = drop_end_pops(motion, scale)
    motion, calib_head, calib_tail = _drop_calibration(motion, roles)
    return _judge_takes(model, motion, roles, split_cuts, drop_pops, scale, head + calib_head, (calib_head, calib_tail))


def _judge_takes(model: NaturalnessDiscriminator, motion: Motion, roles, split_cuts: bool, drop_pops: bool,
                 scale: float, head: int, calibration: tuple[int, int]) -> MotionScore:
    """The verdict of a clip whose popped end frames and calibration pose are already left out:
    its takes between cuts judged window by window, combined by their frames. ``head``: frames
    left out before it (window times are shifted back to the clip as given); ``calibration``:
    the calibration frames left out at the start and the end (for the notes)."""
    from evalkit.motion.trim import find_cuts

    calib_head, calib_tail = calibration
    cuts = find_cuts(motion.positions, motion.fps, scale) if split_cuts else np.zeros(0, dtype=np.int64)
    bounds = [0, *cuts.tolist(), motion.n_frames]
    tables, takes = _take_windows(model, motion, list(zip(bounds[:-1], bounds[1:])), roles, len(cuts) > 0,
                                  drop_pops, scale)
    if not tables:
        raise InputError(f"{motion.name or 'clip'}: {len(cuts)} cut(s) leave no take of at least "
                         f"{model.window.min_clip_s:g} s to judge, popped end frames dropped "
                         f"(cuts at frames {cuts.tolist()[:5]})")
    table = pd.concat(tables, ignore_index=True)
    ids = np.repeat(np.arange(len(tables)), [len(t) for t in tables])
    p = model.window_verdicts(table)
    verdicts, local = model._judge_clips(table, ids)
    known = model.known_windows(table)
    reasons, window_reason = _reasons(model, table, p)
    frames = np.array([b - a for a, b in takes], dtype=float)
    naturalness = float(np.sum(verdicts["naturalness"].to_numpy() * frames) / frames.sum())
    worst = verdicts.iloc[int(np.argmin(verdicts["worst_stretch_naturalness"].to_numpy()))]
    w = int(np.argmin(p))
    shift = head / motion.fps
    windows = pd.DataFrame({"start_s": table["start_s"] + shift, "end_s": table["end_s"] + shift, "naturalness": p,
                            "local_naturalness": local, "known": known, "reason": window_reason})
    reliability = float(known.mean()) if model._has_domain() else float("nan")
    notes = _verdict_notes(motion, reliability, calib_head, calib_tail, getattr(model, "training_rigs_", ()))
    return MotionScore(
        naturalness=naturalness,
        worst_start_s=float(windows["start_s"].iloc[w]),
        worst_end_s=float(windows["end_s"].iloc[w]),
        worst_naturalness=float(p[w]),
        windows=windows,
        worst_stretch_start_s=float(windows["start_s"].iloc[int(worst["worst_stretch_first"])]),
        worst_stretch_end_s=float(windows["end_s"].iloc[int(worst["worst_stretch_last"])]),
        worst_stretch_naturalness=float(worst["worst_stretch_naturalness"]),
        cuts_s=tuple(float(c / motion.fps + shift) for c in cuts),
        reliability=reliability,
        reasons=reasons,
        notes=tuple(notes),
    )


def _round_robin_group_folds(y: np.ndarray, labelled: np.ndarray, groups: np.ndarray, k: int,
                             seed) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` group folds with the groups holding unnatural windows dealt round-robin over the
    folds (and the others after them), so that every fold's training part holds both classes
    when at least two groups hold each (StratifiedGroupKFold balances window counts and can put
    the only two groups of one class in one fold)."""
    rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else 0)
    names = np.unique(groups)
    has_bad = np.array([bool(((y == 0) & labelled & (groups == g)).any()) for g in names])
    order = np.concatenate([rng.permutation(names[has_bad]), rng.permutation(names[~has_bad])])
    fold_of = {g: i % k for i, g in enumerate(order)}
    fold = np.array([fold_of[g] for g in groups])
    idx = np.arange(len(y))
    return [(idx[fold != f], idx[fold == f]) for f in range(k)]


def _drop_calibration(motion: Motion, roles) -> tuple[Motion, int, int]:
    """``motion`` without the calibration pose it starts or ends in (:func:`calibration_frames`),
    and the frames dropped at its start and at its end."""
    calib_head, calib_tail = calibration_frames(motion, roles)
    if calib_head or calib_tail:
        motion = motion.slice(calib_head, motion.n_frames - calib_tail)
    return motion, calib_head, calib_tail


def _verdict_notes(motion: Motion, reliability: float, calib_head: int, calib_tail: int,
                   training_rigs: tuple[str, ...] = ()) -> list[str]:
    """The notes of a verdict: calibration frames left out (``calib_head`` / ``calib_tail``
    frames), windows the model does not know (``reliability`` below 1), a rig unlike those it
    was trained on (:func:`rig_notes`) and implausible speeds."""
    notes = []
    if calib_head or calib_tail:
        where = " and ".join(w for w, n in (("starts", calib_head), ("ends", calib_tail)) if n)
        notes.append(f"the take {where} in a calibration pose (arms raised and held still): "
                     f"{(calib_head + calib_tail) / motion.fps:.2f} s left out of the verdict")
    if reliability < 1.0:
        notes.append(f"{1 - reliability:.0%} of the windows lie outside what the model was trained on: "
                     "read the verdict there as unknown, not as unnatural")
    notes.extend(rig_notes(motion, training_rigs))
    notes.extend(speed_notes(motion))
    return notes


def rig_notes(motion: Motion, training_rigs: tuple[str, ...]) -> list[str]:
    """A note when the clip's rig (:func:`~evalkit.models.examples.rig_signature`: joint count
    and root joint) is none of the rigs a model was trained on (``training_rigs``; no note when
    they are not known).

    Unedited capture of rig families left out of training reads lower and more spread (whole
    clips 0.69-0.90 on average per family in the evaluation of record, docs/discriminator.md),
    so the note says so.

    >>> from evalkit.data import cmu_clips
    >>> from evalkit.motion import load_motion
    >>> rig_notes(load_motion(cmu_clips()[0]), ("31j:Hips",))
    []
    >>> rig_notes(load_motion(cmu_clips()[0]), ("22j:pelvis",))[0][:46]
    'the rig (31 joints, root Hips) is not one the '
    """
    from evalkit.models.examples import rig_signature

    rig = rig_signature(motion)
    if not training_rigs or rig in training_rigs:
        return []

    def spoken(sig: str) -> str:
        joints, _, root = sig.partition("j:")
        return f"{joints} joints, root {root}"

    known = "; ".join(spoken(r) for r in training_rigs)
    return [f"the rig ({spoken(rig)}) is not one the model was trained on ({known}): on unseen rigs "
            "natural capture reads lower and more spread, so read a low verdict with care; train on "
            "capture of this rig (evalkit train) for a firmer one"]


#: A calibration pose (T- or A-pose): both upper arms raised at least this far from the trunk
#: (degrees; arms hanging read 5-20) ...
CALIBRATION_ARM_DEG = 40.0
#: ... held nearly still (mean role-joint speed below this, body heights/s) ...
CALIBRATION_STILL_H_S = 0.15
#: ... for at least this long at the take's start or end (seconds).
CALIBRATION_HOLD_S = 0.25


def calibration_frames(motion: Motion, roles: dict[str, int] | None = None) -> tuple[int, int]:
    """``(frames at the start, frames at the end)`` of a take spent in its calibration pose.

    A take that begins (ends) with both upper arms raised at least :data:`CALIBRATION_ARM_DEG`
    from the trunk, held nearly still for :data:`CALIBRATION_HOLD_S`, is in its calibration
    pose until the arms come down (the move out of the pose is part of the calibration too).
    ``(0, 0)`` for a take that does not; a take that never leaves the pose is not cut (it would
    leave nothing to judge).
    """
    from evalkit.errors import RolesNotFoundError
    from evalkit.features.body import ROLE_INDEX, body_of

    if motion.n_frames < 3:
        return 0, 0
    try:
        b = body_of(motion, roles)
    except RolesNotFoundError:
        return 0, 0
    p = b.positions / b.height
    down = p[:, ROLE_INDEX["hips"]] - p[:, ROLE_INDEX["neck"]]
    down /= np.maximum(np.linalg.norm(down, axis=-1, keepdims=True), 1e-9)
    raised = np.ones(len(p), dtype=bool)
    for side in ("left", "right"):
        arm = p[:, ROLE_INDEX[f"{side}_elbow"]] - p[:, ROLE_INDEX[f"{side}_shoulder"]]
        arm /= np.maximum(np.linalg.norm(arm, axis=-1, keepdims=True), 1e-9)
        raised &= np.degrees(np.arccos(np.clip(np.sum(arm * down, -1), -1, 1))) >= CALIBRATION_ARM_DEG
    speed = np.linalg.norm(np.diff(p, axis=0), axis=-1).mean(1) * motion.fps
    speed = np.concatenate([speed[:1], speed])
    hold = max(2, int(round(CALIBRATION_HOLD_S * motion.fps)))

    def run(mask_raised: np.ndarray, still: np.ndarray) -> int:
        if len(still) < hold or not (mask_raised[:hold].all() and still[:hold].all()):
            return 0
        off = np.flatnonzero(~mask_raised)
        return int(off[0]) if len(off) else 0

    still = speed < CALIBRATION_STILL_H_S
    head = run(raised, still)
    tail = run(raised[::-1], still[::-1])
    if head + tail >= motion.n_frames - max(2, int(np.ceil(0.5 * motion.fps))):
        return 0, 0
    return head, tail


#: Fastest a body joint of a person moves, m/s (a baseball pitcher's wrist reaches about 20;
#: sprinting feet about 15): faster joints at the declared frame rate mean a wrong frame rate
#: or broken capture.
HUMAN_JOINT_SPEED_M_S = 25.0
#: Common capture and export frame rates a suggested rate is chosen from (frames/s).
COMMON_RATES = (120.0, 100.0, 60.0, 50.0, 30.0, 25.0, 24.0, 20.0)


def speed_notes(motion: Motion) -> list[str]:
    """Notes on joint speeds no person reaches at the clip's declared frame rate.

    The 99th percentile of each joint's speed (m/s, so a single popped frame does not count) is
    compared with :data:`HUMAN_JOINT_SPEED_M_S`; when the fastest joint exceeds it, the note
    names the joint and suggests the highest common frame rate at which it would not (speeds
    scale with the frame rate)."""
    if motion.n_frames < 3:
        return []
    v = np.linalg.norm(np.diff(motion.positions, axis=0), axis=-1) * motion.fps  # (F-1, J) m/s
    fast = np.percentile(v, 99, axis=0)
    j = int(np.argmax(fast))
    if not fast[j] > HUMAN_JOINT_SPEED_M_S:
        return []
    limit = motion.fps * HUMAN_JOINT_SPEED_M_S / fast[j]
    rates = [r for r in COMMON_RATES if r <= limit]
    hint = f"; if the file's true rate is {rates[0]:g} fps, give it explicitly" if rates else ""
    return [f"joint {motion.skeleton.names[j]} moves at {fast[j]:.0f} m/s at the declared {motion.fps:g} fps, "
            f"faster than any person{hint}"]


def _reasons(model: NaturalnessDiscriminator, table: pd.DataFrame, u: np.ndarray) -> tuple[str, list[str]]:
    """The clip's main reason groups (see :attr:`MotionScore.reasons`) and each window's."""
    cost = model.window_reasons(table)
    if cost.empty:
        return "", [""] * len(table)
    C = cost.to_numpy()
    weight = 1.0 - np.asarray(u)
    total = (C * weight[:, None]).sum(axis=0)
    window = [cost.columns[int(np.argmax(row))] if row.max() > 0.5 else "" for row in C]
    if total.sum() <= 0:
        return "", window
    share = total / total.sum()
    order = np.argsort(-share)
    return "; ".join(f"{cost.columns[i]} {share[i]:.2f}" for i in order if share[i] >= 0.1), window


def _take_windows(model: NaturalnessDiscriminator, motion: Motion, takes: list[tuple[int, int]], roles,
                  split: bool, drop_pops: bool, scale: float) -> tuple[list[pd.DataFrame], list[tuple[int, int]]]:
    """Window tables of the takes ``[(first frame, end frame), ...]`` of ``motion`` (times in
    seconds of ``motion``), and the frames each judged take covers. With ``split`` (the clip has
    cuts) each take is a clip of its own: with ``drop_pops`` its popped end frames are dropped,
    and a take shorter than the model's ``min_clip_s`` is left out (a single take that short
    raises :class:`InputError` from :func:`window_features`)."""
    from evalkit.motion.trim import drop_end_pops

    tables, judged = [], []
    for a, b in takes:
        take = motion if (a, b) == (0, motion.n_frames) else motion[a:b]
        if split:
            if drop_pops:  # a reference pose at a take's start is not motion
                take, h, _ = drop_end_pops(take, scale)
                a += h
            if take.duration < model.window.min_clip_s:
                continue
        t = window_features(take, model.window, roles)
        t["start_s"] += a / motion.fps
        t["end_s"] += a / motion.fps
        tables.append(t)
        judged.append((a, a + take.n_frames))
    return tables, judged


def _score_repeated(model: NaturalnessDiscriminator, motion: Motion, roles, drop_pops: bool, split_cuts: bool,
                    scale: float) -> MotionScore | None:
    """The verdict on a clip that is copies of one stretch: that of its first two copies (one
    copy and the join into the next, judged once), with the second copy's windows and cuts
    (those that end in it, so also the windows over the join) repeated at every later copy (the
    last copy's only where they fit); ``None`` when the clip
    is not a repeat (:func:`evalkit.motion.trim.find_repeat`)."""
    from evalkit.motion.trim import find_repeat

    period = find_repeat(motion, int(np.ceil(model.window.min_clip_s * motion.fps)), scale)
    if not period:
        return None
    # the first two copies as a clip of their own (positions solved afresh, not sliced from the
    # whole clip's: exactly the frames a user would score alone)
    n = min(motion.n_frames, 2 * period)
    two = motion.with_(rotations=motion.rotations[:n], translations=motion.translations[:n])
    one = score_naturalness(model, two, roles, drop_pops, split_cuts, fold_repeats=False)
    T, end = period / motion.fps, motion.n_frames / motion.fps
    k = int(np.ceil(motion.n_frames / period))
    # the windows of the second copy, the join into it included: repeated at every later join
    # (more than a frame of the model's rate past the join: not the first copy's last window)
    second = one.windows[one.windows["end_s"] > T + 1.0 / model.window.fps + 1e-9]
    parts = [one.windows] + [second.assign(start_s=second["start_s"] + d, end_s=second["end_s"] + d)
                             for d in np.arange(1, k - 1) * T]
    w = pd.concat(parts, ignore_index=True)
    overhang = max(0.0, float(one.windows["end_s"].max()) - n / motion.fps)  # a window may end a frame past the end
    w = w[w["end_s"] <= end + overhang + 1e-9].reset_index(drop=True)
    later = [c for c in one.cuts_s if c >= T - 1e-9]
    cuts = tuple(one.cuts_s) + tuple(float(c + d) for d in np.arange(1, k - 1) * T for c in later if c + d < end)
    return replace(one, windows=w, cuts_s=cuts, copies=motion.n_frames / period, period_s=T)


def fit_clone(model: NaturalnessDiscriminator, table: pd.DataFrame) -> NaturalnessDiscriminator:
    """Fit a fresh copy of ``model`` on a window table from
    :func:`evalkit.models.dataset.window_table` (its ``label``, ``group`` and ``example``
    columns give ``y``, ``groups`` and ``clips``)."""
    m = clone(model)
    return m.fit(table, table["label"].to_numpy(), groups=table["group"].to_numpy(),
                 clips=table["example"].to_numpy())
