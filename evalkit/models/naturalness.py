"""Naturalness columns of a score table: a saved discriminator applied to every clip.

What ``evalkit score --model`` and the study pipeline do after the per-clip metrics. It sits
above both the estimator (:mod:`evalkit.models.discriminator`) and the model files
(:mod:`evalkit.models.training`), so neither of those needs the other's caller.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalkit.errors import EvalkitError
from evalkit.models.discriminator import score_naturalness
from evalkit.models.training import load_model
from evalkit.motion import load_motion
from evalkit.motion.roles import find_roles


def add_model_columns(table: pd.DataFrame, model_path: str | None = None, load_kwargs: dict | None = None,
                      roles: dict[str, str] | None = None, drop_pops: bool = True,
                      progress: bool = False) -> pd.DataFrame:
    """Add the discriminator's verdict to a score table (what ``evalkit score --model`` does).

    For every row of a score table (columns ``clip``, ``path``, ``error``, ...) the clip is read
    again from ``path`` and scored; the returned copy has ``naturalness`` (calibrated
    probability that the clip looks natural), ``worst_window_start_s`` / ``worst_window_end_s``
    (the least natural window, seconds from the clip's first frame) and
    ``worst_window_naturalness``. Rows that already carry an error, or whose clip the model
    cannot score (e.g. shorter than 0.5 s), get NaN and, in the latter case, a message in
    ``error``.

    Args:
        table: the finished score table.
        model_path: a model file from ``evalkit train``, or ``None`` / ``"default"`` for the
            shipped default model.
        load_kwargs: keyword arguments of :func:`evalkit.motion.load_motion` (units, up axis).
        roles: ``{role: joint name}`` overrides for unusual rigs (as ``evalkit score --roles``).
        drop_pops: judge the frames the other metrics judge (see :func:`~evalkit.models.discriminator.score_naturalness`).
        progress: show a progress bar.
    """
    model, _ = load_model(model_path)
    out = table.copy()
    cols = {"naturalness": [], "worst_window_start_s": [], "worst_window_end_s": [], "worst_window_naturalness": []}
    errors = list(out["error"]) if "error" in out.columns else [""] * len(out)
    rows = enumerate(out.iterrows())
    if progress:
        from tqdm import tqdm

        rows = tqdm(rows, total=len(out), desc="naturalness", unit="clip")
    for i, (_, row) in rows:
        vals = [np.nan] * 4
        if not errors[i]:
            try:
                motion = load_motion(row["path"], **(load_kwargs or {}))
                found = find_roles(motion.skeleton, overrides=roles, strict=True) if roles else None
                s = score_naturalness(model, motion, found, drop_pops=drop_pops)
                vals = [s.naturalness, s.worst_start_s, s.worst_end_s, s.worst_naturalness]
            except EvalkitError as exc:
                errors[i] = f"naturalness: {exc}"
        for k, v in zip(cols, vals):
            cols[k].append(v)
    for k, v in cols.items():
        out[k] = v
    if "error" in out.columns:
        out["error"] = errors
    return out
