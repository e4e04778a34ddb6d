"""Naturalness columns of a score table: a saved discriminator applied to every clip.

What ``evalkit score --model`` and the study pipeline do after the per-clip metrics. It sits
above both the estimator (:mod:`evalkit.models.discriminator`) and the model files
(:mod:`evalkit.models.training`), so neither of those needs the other's caller.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.models.discriminator import MotionScore, score_naturalness
from evalkit.models.training import load_model
from evalkit.motion import LoadOptions
from evalkit.motion.roles import find_roles
from evalkit.runner import run_clips


#: Columns that ``evalkit score --model --frames`` adds to every per-frame trace.
TRACE_COLUMNS = ("naturalness_window", "naturalness_local")
#: Columns that ``evalkit score --model`` adds to every row, in order.
ROW_COLUMNS = ("naturalness", "worst_window_start_s", "worst_window_end_s", "worst_window_naturalness",
               "worst_stretch_start_s", "worst_stretch_end_s", "worst_stretch_naturalness", "cuts", "copies",
               "naturalness_reliability", "naturalness_reasons", "naturalness_notes")


def naturalness_row(score: MotionScore) -> dict[str, object]:
    """The :data:`ROW_COLUMNS` of one scored clip (see :func:`add_model_columns` for their meaning)."""
    s = score
    return dict(zip(ROW_COLUMNS, (s.naturalness, s.worst_start_s, s.worst_end_s, s.worst_naturalness,
                                  s.worst_stretch_start_s, s.worst_stretch_end_s, s.worst_stretch_naturalness,
                                  len(s.cuts_s), round(s.copies, 3),
                                  s.reliability, s.reasons, " | ".join(s.notes))))


@dataclass(frozen=True)
class NaturalnessAnalysis:
    """A saved discriminator as a per-clip analysis of an already loaded :class:`~evalkit.motion.Motion`
    (what ``evalkit score --model`` runs beside the metrics, so each file is read once).

    Calling it with a motion gives ``(row, trace)``: ``row`` the :data:`ROW_COLUMNS` of the clip,
    ``trace(times_s)`` the :data:`TRACE_COLUMNS` at the given frame times (seconds, ``(frames,)``).
    A clip the model cannot score raises :class:`~evalkit.errors.EvalkitError`.

    Attributes:
        model: the discriminator (:func:`evalkit.models.training.load_model`'s first value).
        roles: ``{role: joint name}`` overrides for unusual rigs.
        drop_pops, fold_repeats: as :func:`add_model_columns`.
    """

    model: object
    roles: dict | None = None
    drop_pops: bool = True
    fold_repeats: bool = True
    columns: tuple = ROW_COLUMNS
    trace_columns: tuple = TRACE_COLUMNS
    error_prefix: str = "naturalness: "

    def __call__(self, motion):
        found = find_roles(motion.skeleton, overrides=self.roles, strict=True) if self.roles else None
        s = score_naturalness(self.model, motion, found, drop_pops=self.drop_pops, fold_repeats=self.fold_repeats)
        return naturalness_row(s), functools.partial(trace_naturalness, s)


@dataclass(frozen=True)
class _Judge:
    """Runner analysis: the discriminator's verdict (a :class:`MotionScore`) on the loaded clip."""

    analysis: NaturalnessAnalysis
    name: str = "naturalness"

    def __call__(self, motion, clip) -> MotionScore:
        a = self.analysis
        found = find_roles(motion.skeleton, overrides=a.roles, strict=True) if a.roles else None
        return score_naturalness(a.model, motion, found, drop_pops=a.drop_pops, fold_repeats=a.fold_repeats)


def add_model_columns(table: pd.DataFrame, model_path: str | None = None, load: LoadOptions | None = None,
                      roles: dict[str, str] | None = None, drop_pops: bool = True, fold_repeats: bool = True,
                      progress: bool = False, frames_dir: str | None = None,
                      system: str | None = None) -> pd.DataFrame:
    """Add the discriminator's verdict to a score table (what ``evalkit score --model`` does).

    For every row of a score table (columns ``clip``, ``path``, ``error``, ...) the clip is read
    again from ``path`` and scored; the returned copy has ``naturalness`` (the clip's
    naturalness: the time average of its calibrated stretch verdicts, which does not fall with
    the clip's length; for a clip no longer than the model's ``stretch_s`` its calibrated
    probability of looking natural), ``worst_window_start_s`` / ``worst_window_end_s`` (the
    least natural window, seconds from the clip's first frame), ``worst_window_naturalness``,
    and ``worst_stretch_start_s`` / ``worst_stretch_end_s`` / ``worst_stretch_naturalness``
    (the least natural stretch of ``stretch_s`` seconds and its verdict; the whole clip if it
    is shorter), and ``cuts`` (how many times the clip cuts to a new take: the body jumps
    farther in one frame than a body can, e.g. a file of several takes or a clip repeated
    without carrying the body on; each take is judged on its own, see
    :func:`~evalkit.models.discriminator.score_naturalness`), and ``copies`` (how many copies
    of one stretch the clip is, 1 for none: a looped clip is judged on its first two copies,
    once: one copy and its join), ``naturalness_reliability`` (share of the judged windows
    within what the model was trained on; below 1 read the verdict as unknown there),
    ``naturalness_reasons`` (the feature groups that cost the clip most, with their shares:
    feet, ground, balance, smoothness, timing, pose) and ``naturalness_notes`` (what to know
    about the verdict: motion the model does not know, a rig unlike any it was trained on,
    joint speeds no person reaches at the declared frame rate, with a suggested rate). Rows that already carry an error, or whose clip the model cannot score (e.g.
    shorter than 0.5 s), get NaN and, in the latter case, a message in ``error``.

    Args:
        table: the finished score table.
        model_path: a model file from ``evalkit train``, or ``None`` / ``"default"`` for the
            shipped default model.
        load: how the files are read (:class:`~evalkit.motion.LoadOptions`: units, up axis, ...).
        roles: ``{role: joint name}`` overrides for unusual rigs (as ``evalkit score --roles``).
        drop_pops: judge the frames the other metrics judge (see :func:`~evalkit.models.discriminator.score_naturalness`).
        fold_repeats: judge a clip of copies on its first two copies and the join between them
            (``False``: every frame of every copy; ``evalkit score --judge-joins``).
        progress: show a progress bar.
        frames_dir, system: the ``--frames`` folder and ``--system`` of the run that wrote
            per-frame traces (:func:`evalkit.features.batch.trace_path`): each clip's trace
            gets the columns of :func:`trace_naturalness` (NaN for a clip the model could not
            score), rewritten in place.
    """
    model, _ = load_model(model_path)
    judge = _Judge(NaturalnessAnalysis(model, roles, drop_pops=drop_pops, fold_repeats=fold_repeats))
    out = table.copy()
    errors = list(out["error"]) if "error" in out.columns else [""] * len(out)
    todo = [i for i, e in enumerate(errors) if not e]
    runs = iter(run_clips([out["path"].iloc[i] for i in todo], (judge,), load, progress=progress,
                          desc="naturalness"))
    cols: dict[str, list] = {c: [] for c in ROW_COLUMNS}
    for i, path in enumerate(out["path"] if "path" in out.columns else [None] * len(out)):
        vals = [np.nan] * (len(cols) - 2) + ["", ""]
        if not errors[i]:
            run = next(runs)
            s = run.results.get("naturalness")
            if s is None:
                errors[i] = f"naturalness: {run.error}"
            else:
                vals = list(naturalness_row(s).values())
            if frames_dir:
                _add_to_trace(path, frames_dir, system, s)
        for k, v in zip(cols, vals):
            cols[k].append(v)
    for k, v in cols.items():
        out[k] = v
    if "error" in out.columns:
        out["error"] = errors
    return out


def _add_to_trace(path: str, frames_dir: str, system: str | None, score: MotionScore | None) -> None:
    """Add :data:`TRACE_COLUMNS` to the clip's per-frame trace CSV (if the run wrote one)."""
    from evalkit.atomic import atomic_path
    from evalkit.features.batch import trace_path

    trace = trace_path(path, frames_dir, system)
    if not trace.is_file():
        return
    frame = pd.read_csv(trace)
    if score is None:
        add = pd.DataFrame({c: np.full(len(frame), np.nan) for c in TRACE_COLUMNS})
    else:
        add = trace_naturalness(score, frame["time_s"].to_numpy())
    frame = frame.drop(columns=[c for c in TRACE_COLUMNS if c in frame.columns])
    frame = pd.concat([frame, add.set_index(frame.index)], axis=1)
    with atomic_path(trace, suffix=".tmp") as tmp:
        frame.to_csv(tmp, index=False)


def trace_naturalness(score: MotionScore, times_s) -> pd.DataFrame:
    """Naturalness of the windows covering given times of a scored clip (``score --frames`` columns).

    Args:
        score: :func:`~evalkit.models.discriminator.score_naturalness` of the clip.
        times_s: ``(frames,)`` times of the frames, seconds from the file's first frame (the
            ``time_s`` column of a trace; window times are in the same seconds, whatever end
            pops were dropped).

    Returns:
        ``(frames, 2)`` DataFrame, values are probabilities in [0, 1]:
        ``naturalness_window`` -- mean calibrated probability that the 1-s windows containing
        the frame look natural (windows overlap by half, so most frames are in two; the first
        and last half-second in one); ``naturalness_local`` -- mean local naturalness of those
        windows (each the mean verdict of the 6-s stretches that contain it; its time average
        over the clip is the clip's ``naturalness``). NaN for a frame no window covers (a frame
        the model's pop removal dropped but the metrics kept).
    """
    t = np.asarray(times_s, dtype=float)
    w = score.windows
    inside = (t[:, None] >= w["start_s"].to_numpy()[None, :] - 1e-9) & (t[:, None] < w["end_s"].to_numpy()[None, :] - 1e-9)
    count = inside.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {
            "naturalness_window": inside @ w["naturalness"].to_numpy() / count,
            "naturalness_local": inside @ w["local_naturalness"].to_numpy() / count,
        }
    return pd.DataFrame({k: np.where(count > 0, v, np.nan) for k, v in out.items()})


def frame_naturalness(score: MotionScore, n_frames: int, fps: float) -> pd.DataFrame:
    """Per-frame naturalness traces of a scored clip (what ``score --frames`` traces can carry).

    Every frame gets the verdicts of the windows that contain it (windows overlap, so the mean
    over them), so a minute-long clip shows where it stops looking natural, window by window.

    Args:
        score: :func:`~evalkit.models.discriminator.score_naturalness` of the clip.
        n_frames: frames of the clip as given (the file's frames; window times are in its
            seconds, whatever end pops were dropped).
        fps: its frame rate (frames/s).

    Returns:
        ``(n_frames, 2)`` DataFrame: ``naturalness_window`` (mean calibrated probability of the
        windows containing the frame) and ``naturalness_local`` (mean local naturalness of
        those windows: the verdicts of the ``stretch_s`` stretches around it, whose time average
        is the clip's ``naturalness``). NaN for frames no window covers (dropped end pops).
    """
    return trace_naturalness(score, np.arange(int(n_frames)) / float(fps))
