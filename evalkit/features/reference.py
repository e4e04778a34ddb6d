"""Build a :class:`~evalkit.features.kinematics.Reference` from natural clips (``--reference``)."""

from __future__ import annotations

import os
from typing import Iterable

import numpy as np

from evalkit.errors import InputError
from evalkit.features.kinematics import Reference, derivative_magnitudes, histograms, joint_angles, role_joints
from evalkit.features.kinetic import fm_vector
from evalkit.features.score import ScoreConfig, analyse
from evalkit.motion import LoadOptions, Motion
from evalkit.runner import KeepMotion, run_clips


def reference_from_motions(motions: Iterable[Motion], config: ScoreConfig | None = None,
                           sources: list[str] | None = None) -> Reference:
    """Pool histograms, joint-angle ranges (0.5–99.5 %) and FMDistance vectors of natural clips."""
    cfg = config or ScoreConfig()
    ref = Reference()
    angles: dict[str, list[np.ndarray]] = {}
    fms = []
    for m in motions:
        an = analyse(m, cfg)
        pos = an.positions
        hist = histograms(derivative_magnitudes(pos[:, role_joints(an.body)], an.motion.fps, cfg.hist_fps))
        for k, h in hist.items():
            ref.hist[k] = ref.hist.get(k, 0) + h
        for k, a in joint_angles(pos, an.body).items():
            angles.setdefault(k, []).append(a)
        fms.append(fm_vector(pos, an.motion.fps, an.body, cfg.physics.cutoff_hz, an.smooth))
        ref.n_clips += 1
    if ref.n_clips == 0:
        raise InputError("the reference set has no usable clips")
    for k, parts in angles.items():
        a = np.concatenate(parts)
        ref.angle_lo[k] = float(np.percentile(a, 0.5))
        ref.angle_hi[k] = float(np.percentile(a, 99.5))
    ref.fm = np.stack(fms)
    ref.sources = list(sources or [])
    return ref


def build_reference(paths: Iterable[str | os.PathLike], config: ScoreConfig | None = None,
                    load: LoadOptions | None = None) -> Reference:
    """A reference from motion files and folders (recursively), read with ``load``. Clips that
    fail to load are skipped; if none loads, :class:`InputError` names the first failure."""
    from evalkit.motion.formats import MOTION_EXTENSIONS, iter_motion_files

    files = list(iter_motion_files(paths))
    if not files:
        raise InputError(f"no motion files ({', '.join(MOTION_EXTENSIONS)}) under {', '.join(map(str, paths))}")
    motions, used, errors = [], [], []
    for run in run_clips(files, (KeepMotion(),), load, record_warnings=False):
        if run.ok:
            motions.append(run.results["motion"])
            used.append(run.path)
        else:
            errors.append(run.error)
    if not motions:
        raise InputError(f"no reference clip could be read; first error: {errors[0]}")
    return reference_from_motions(motions, config, used)
