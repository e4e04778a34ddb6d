"""Per-clip statistics beside the Fréchet distances: EDGE's PFC and EMAGE's L1 divergence.

* **PFC**, physical foot contact score (Tseng et al. 2023, EDGE): at every frame the hips'
  acceleration (its upward part clamped at 0, since only the ground pushes up) scaled by its
  maximum over the clip, times the smaller horizontal speed of the left ankle and toe, times the
  smaller one of the right ankle and toe. A body that accelerates while neither foot is planted
  scores high; lower is better. Speeds are metres per frame at the protocol's frame rate (30 fps
  by default, EDGE's rate), averaged over frames, and the clip score is multiplied by 10⁴ as
  EDGE reports it. A system's PFC is the mean over its clips.
* **L1 divergence** (Liu et al. 2024, EMAGE): the mean over all frames of a system of the summed
  absolute deviation of each pose coordinate from the system's mean pose -- a diversity score
  (higher: more varied poses). Computed on frame-normalised poses (root-relative, heading-aligned,
  in body heights; :func:`evalkit.distribution.canonical.frame_poses`), so it does not reward
  walking far away.
"""

from __future__ import annotations

import numpy as np

from evalkit.distribution.canonical import IDX

#: Scale of the reported PFC (EDGE's).
PFC_SCALE = 1e4


def pfc(pos: np.ndarray, fps: float) -> float:
    """EDGE's physical foot contact score of one clip (×10⁴, lower is better).

    Args:
        pos: ``(frames, 18, 3)`` canonical positions, metres, Y-up.
        fps: frame rate.

    Returns:
        the score, NaN for clips shorter than 3 frames.
    """
    pos = np.asarray(pos, float)
    if pos.shape[0] < 3:
        return float("nan")
    dt = 1.0 / fps
    root = pos[:, IDX["hips"]]
    v = np.diff(root, axis=0) / dt
    a = np.diff(v, axis=0) / dt
    a[:, 1] = np.maximum(a[:, 1], 0.0)
    a = np.linalg.norm(a, axis=-1)
    peak = a.max()
    if not peak > 0:
        return 0.0
    a = a / peak
    feet = pos[:, [IDX["left_ankle"], IDX["left_toe"], IDX["right_ankle"], IDX["right_toe"]]][..., [0, 2]]
    fv = np.linalg.norm(feet[2:] - feet[1:-1], axis=-1)  # metres per frame
    left = np.minimum(fv[:, 0], fv[:, 1])
    right = np.minimum(fv[:, 2], fv[:, 3])
    return float((left * right * a).mean() * PFC_SCALE)


def l1_divergence(poses: np.ndarray) -> float:
    """EMAGE's L1 divergence of ``(frames, dims)`` poses: mean over frames of ``Σ_d |x − x̄|``."""
    x = np.asarray(poses, float).reshape(len(poses), -1)
    if x.shape[0] == 0:
        return float("nan")
    return float(np.abs(x - x.mean(axis=0)).sum() / x.shape[0])
