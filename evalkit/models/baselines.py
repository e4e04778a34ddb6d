"""Classic naturalness measures, run side by side with the discriminator on the same splits.

Each baseline is a small scikit-learn-style estimator over *prepared clips*: ``prepare(motion)``
does the per-clip computation once (a pure function of the clip), ``fit(prepared, y)`` learns
from the training fold (``y``: 1 natural, 0 unnatural) and ``score_samples(prepared)`` returns
one score per clip, higher = more natural (scikit-learn's convention for density and outlier
models).

* :class:`RenGMMBaseline` — a generative-likelihood baseline after Ren et al. (2005, "A
  data-driven approach to quantifying natural human motion"): Gaussian mixtures over per-body-
  part pose + velocity features, fitted on natural training clips only; a clip scores the lowest
  likelihood of any body part in any 1 s window (Ren et al. likewise take the least likely part
  of an ensemble as the verdict).
* :class:`TransitionCostBaseline` — a transition-cost metric in the style of Lee et al. (2002)
  and Wang & Bodenheimer (2003): a weighted joint-angle distance plus a weighted velocity
  distance, evaluated at every frame as a potential seam (the clip's next frame against the
  frame that continuing at constant angular velocity would give); a clip scores minus its worst
  seam. Joint weights are Lee et al.'s (1 for shoulders, elbows, hips, knees, pelvis and spine,
  0 elsewhere); Wang & Bodenheimer's optimised weights are not reproduced.
* :class:`SingleMetricBaseline` — one physical metric alone: the foot-skate ratio (share of
  planted frames whose foot slides faster than :attr:`WindowConfig.skate_speed`) or the mean
  jerk of the joints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.spatial.transform import Rotation
from sklearn.base import BaseEstimator
from sklearn.mixture import GaussianMixture
from sklearn.preprocessing import StandardScaler

from evalkit.errors import InputError
from evalkit.features.body import PARTS, ROLE_INDEX, to_heading_frame
from evalkit.models.window_features import WindowConfig, frame_signals, prepare, window_starts
from evalkit.motion import Motion, find_roles, resample
from evalkit.motion import quat

#: Lee et al. (2002): weights of 1 on these roles, 0 elsewhere.
LEE_JOINTS: tuple[str, ...] = ("hips", "spine", "left_shoulder", "right_shoulder", "left_elbow", "right_elbow",
                               "left_hip", "right_hip", "left_knee", "right_knee")


def _check_y(prepared: Sequence, y) -> np.ndarray:
    if y is None:
        return np.ones(len(prepared), dtype=int)
    y = np.asarray(y).astype(int)
    if len(y) != len(prepared):
        raise InputError(f"{len(prepared)} clips but {len(y)} labels")
    return y


_GMM_PARTS = tuple(PARTS) + ("root",)


class RenGMMBaseline(BaseEstimator):
    """Per-body-part Gaussian-mixture likelihood of pose and velocity (Ren et al. 2005 style).

    Args:
        n_components: mixture components per body part.
        covariance_type: of :class:`~sklearn.mixture.GaussianMixture`.
        max_frames: natural training frames per part used to fit (a seeded subsample).
        aggregate: ``"window_min"`` (lowest per-part mean log-likelihood over 1 s windows) or
            ``"clip_min"`` (lowest per-part mean over the whole clip).
        window: windows over which per-frame log-likelihoods are averaged.
        random_state: seed.
    """

    def __init__(self, n_components: int = 8, covariance_type: str = "full", max_frames: int = 20000,
                 aggregate: str = "window_min", window: WindowConfig = WindowConfig(), random_state: int = 0):
        self.n_components = n_components
        self.aggregate = aggregate
        self.covariance_type = covariance_type
        self.max_frames = max_frames
        self.window = window
        self.random_state = random_state

    def prepare(self, motion: Motion) -> dict[str, np.ndarray]:
        """Per part, ``(frames, d)`` features: the part's role positions relative to the hips in
        the heading frame (body heights) and their velocities (body heights per 0.1 s); part
        ``root``: hips height above the lowest foot joint, hips velocity in the heading frame and
        yaw rate."""
        body = prepare(motion, self.window)
        p = body.positions / body.height
        n = len(p)
        yaw = np.unwrap(body.heading)
        rel = to_heading_frame(p - p[:, ROLE_INDEX["hips"]][:, None], yaw)
        vel = np.gradient(rel, axis=0) * body.fps * 0.1 if n > 1 else np.zeros_like(rel)
        out = {}
        for part, roles in PARTS.items():
            idx = [ROLE_INDEX[r] for r in roles if r != "hips"]
            out[part] = np.concatenate([rel[:, idx].reshape(n, -1), vel[:, idx].reshape(n, -1)], axis=1)
        hips = p[:, ROLE_INDEX["hips"]]
        feet = p[:, [ROLE_INDEX[r] for r in ("left_ankle", "left_toe", "right_ankle", "right_toe")], 1].min(1)
        hv = to_heading_frame((np.gradient(hips, axis=0) * body.fps * 0.1)[:, None], yaw)[:, 0] if n > 1 else np.zeros((n, 3))
        yr = np.gradient(yaw) * body.fps * 0.1 if n > 1 else np.zeros(n)
        out["root"] = np.column_stack([hips[:, 1] - feet, hv, yr])
        return out

    def fit(self, prepared: Sequence[dict], y=None):
        y = _check_y(prepared, y)
        nat = [x for x, lab in zip(prepared, y) if lab == 1]
        if not nat:
            raise InputError("RenGMMBaseline needs natural clips (y == 1) to fit")
        rng = np.random.default_rng(self.random_state)
        self.scalers_, self.models_ = {}, {}
        for part in _GMM_PARTS:
            X = np.concatenate([x[part] for x in nat])
            if len(X) > self.max_frames:
                X = X[np.sort(rng.choice(len(X), self.max_frames, replace=False))]
            sc = StandardScaler().fit(X)
            gm = GaussianMixture(self.n_components, covariance_type=self.covariance_type, reg_covar=1e-3,
                                 random_state=self.random_state).fit(sc.transform(X))
            self.scalers_[part], self.models_[part] = sc, gm
        return self

    def frame_loglik(self, prepared: dict) -> np.ndarray:
        """``(frames, parts)`` log-likelihood of each part's features."""
        return np.stack([self.models_[part].score_samples(self.scalers_[part].transform(prepared[part]))
                         for part in _GMM_PARTS], axis=1)

    def score_samples(self, prepared: Sequence[dict]) -> np.ndarray:
        if self.aggregate not in ("window_min", "clip_min"):
            raise InputError(f"aggregate must be 'window_min' or 'clip_min', got {self.aggregate!r}")
        out = np.empty(len(prepared))
        for i, x in enumerate(prepared):
            ll = self.frame_loglik(x)
            if self.aggregate == "clip_min":
                out[i] = float(ll.mean(0).min())
                continue
            starts, w = window_starts(len(ll), self.window)
            win = np.stack([ll[s:s + w].mean(0) for s in starts])  # (windows, parts)
            out[i] = float(win.min())
        return out


class TransitionCostBaseline(BaseEstimator):
    """Worst seam cost of a clip: Lee et al. (2002) joint-angle + velocity distance.

    At every frame ``t`` the cost of the "transition" to frame ``t + 1`` is
    ``sum_k w_k |log(qhat_k^-1 q_k)|^2 + |root - roothat|^2 / H^2 + nu * sum_k w_k |w_k(t+1) - w_k(t)|^2``
    where ``qhat`` continues frame ``t`` at the angular velocity of ``t - 1 -> t``, ``w_k`` are
    per-frame angular velocities (radians per frame) and ``H`` the body height. The clip's score
    is minus the largest cost.

    Args:
        velocity_weight: ``nu``, weight of the velocity term.
        joints: roles with weight 1 (others 0).
        window: only its ``fps`` is used (clips are resampled to it).
    """

    def __init__(self, velocity_weight: float = 1.0, joints: tuple[str, ...] = LEE_JOINTS,
                 window: WindowConfig = WindowConfig()):
        self.velocity_weight = velocity_weight
        self.joints = joints
        self.window = window

    def prepare(self, motion: Motion) -> np.ndarray:
        """``(frames - 2,)`` seam costs of the clip."""
        m = motion if abs(motion.fps - self.window.fps) < 1e-6 else resample(motion, self.window.fps)
        roles = find_roles(m.skeleton, strict=True)
        idx = [roles[r] for r in self.joints]
        q = quat.make_continuous(m.rotations[:, idx], axis=0)
        if len(q) < 3:
            return np.zeros(1)
        body = prepare(m, self.window, roles)
        root = body.role("hips") / body.height
        step = quat.multiply(quat.inverse(q[:-1]), q[1:])  # local step t -> t+1
        qhat = quat.multiply(q[1:-1], step[:-1])  # continue t at the step of t-1 -> t
        err = quat.multiply(quat.inverse(qhat), q[2:])
        pose = np.sum(_rotvec(err) ** 2, axis=(1, 2))
        roothat = 2 * root[1:-1] - root[:-2]
        pose += np.sum((root[2:] - roothat) ** 2, axis=1)
        omega = _rotvec(step)
        vel = np.sum((omega[1:] - omega[:-1]) ** 2, axis=(1, 2))
        return pose + self.velocity_weight * vel

    def fit(self, prepared: Sequence[np.ndarray], y=None):
        _check_y(prepared, y)
        return self

    def score_samples(self, prepared: Sequence[np.ndarray]) -> np.ndarray:
        return -np.array([float(np.max(c)) for c in prepared])


def _rotvec(q: np.ndarray) -> np.ndarray:
    flat = q.reshape(-1, 4)
    return Rotation.from_quat(flat).as_rotvec().reshape(q.shape[:-1] + (3,))


class SingleMetricBaseline(BaseEstimator):
    """One metric alone, higher = less natural, so the score is its negative.

    Args:
        metric: ``"skate_ratio"`` (share of planted frames whose foot slides faster than
            ``window.skate_speed``) or ``"jerk"`` (mean joint jerk, body heights/s^3).
        window: frame rate and contact thresholds.
    """

    METRICS = ("skate_ratio", "jerk")

    def __init__(self, metric: str = "skate_ratio", window: WindowConfig = WindowConfig()):
        self.metric = metric
        self.window = window

    def prepare(self, motion: Motion) -> float:
        if self.metric not in self.METRICS:
            raise InputError(f"metric must be one of {', '.join(self.METRICS)}, got {self.metric!r}")
        sig = frame_signals(prepare(motion, self.window), self.window)
        if self.metric == "skate_ratio":
            x = sig["skating"]
            return float(np.nanmean(x)) if np.isfinite(x).any() else 0.0
        return float(np.mean(sig["jerk"]))

    def fit(self, prepared: Sequence[float], y=None):
        _check_y(prepared, y)
        return self

    def score_samples(self, prepared: Sequence[float]) -> np.ndarray:
        return -np.asarray(prepared, dtype=float)


@dataclass(frozen=True)
class BaselineSpec:
    """A named baseline for the evaluation harness."""

    name: str
    estimator: BaseEstimator


def default_baselines(window: WindowConfig = WindowConfig(), seed: int = 0) -> list[BaselineSpec]:
    """The baselines of the issue: Ren-style GMM, transition cost, skate ratio, jerk."""
    return [
        BaselineSpec("Ren-style GMM likelihood", RenGMMBaseline(window=window, random_state=seed)),
        BaselineSpec("Ren-style GMM likelihood (clip mean)",
                     RenGMMBaseline(aggregate="clip_min", window=window, random_state=seed)),
        BaselineSpec("transition cost (Lee/Wang-Bodenheimer)", TransitionCostBaseline(window=window)),
        BaselineSpec("skate ratio alone", SingleMetricBaseline("skate_ratio", window)),
        BaselineSpec("jerk alone", SingleMetricBaseline("jerk", window)),
    ]
