"""Score many files: one row per clip, locally with joblib or on a Dask cluster.

Files are scored in chunks (several clips per task) so that 10,000 short clips do not drown in
per-task overhead. Rows come back in input order whatever the completion order. A clip that
fails to load or to score gets its message in the ``error`` column and the run continues.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from evalkit.errors import EvalkitError, InputError
from evalkit.features.kinematics import Reference
from evalkit.features.score import ScoreConfig, analyse, score_analysis, traces_table
from evalkit.motion.formats import LoadOptions
from evalkit.runner import run_clips

#: Leading columns of the scores table, before the metrics. ``notes``: warnings about the
#: file (implausible frame rate, body size, up axis) and metrics left empty for the rig, with why.
ID_COLUMNS = ("clip", "path", "system", "error", "notes")
#: Output formats of :func:`write_table`, by extension.
TABLE_EXTENSIONS = (".csv", ".parquet", ".pq", ".json")


def clip_system(path: str | os.PathLike, system: str | None) -> str:
    """The ``system`` label of a clip: ``system``, or the name of the clip's folder."""
    return system if system is not None else Path(path).parent.name


def trace_path(path: str | os.PathLike, frames_dir: str | os.PathLike, system: str | None) -> Path:
    """Where the per-frame traces of the clip ``path`` go: ``<frames_dir>/<system>/<clip>.csv``."""
    return Path(frames_dir) / (clip_system(path, system) or "_") / f"{Path(path).stem}.csv"


@dataclass(frozen=True)
class BatchOptions:
    """What every task needs besides the file path.

    Attributes:
        config: metric settings.
        reference: natural reference set (distribution metrics) or ``None``.
        load: how the files are read (:class:`~evalkit.motion.formats.LoadOptions`).
        system: system label for every clip (``None``: the clip's parent folder name).
        frames_dir: write per-frame traces as ``<frames_dir>/<system>/<clip>.csv`` (``None``: no).
        audio: a WAV file (used for every clip) or a folder with ``<clip>.wav`` files, for the
            beat metrics (``None``: no beat metrics).
        analyses: further per-clip analyses run on the same loaded motion after the metrics
            (e.g. :class:`evalkit.models.naturalness.NaturalnessAnalysis`): callables
            ``analysis(motion) -> (row columns, trace(times_s) -> trace columns)`` with attributes
            ``columns``, ``trace_columns`` and ``error_prefix``; picklable for worker processes.
    """

    config: ScoreConfig = field(default_factory=ScoreConfig)
    reference: Reference | None = None
    load: LoadOptions = field(default_factory=LoadOptions)
    system: str | None = None
    frames_dir: str | None = None
    audio: str | None = None
    analyses: tuple = ()


@dataclass(frozen=True)
class TableColumns:
    """Runner analysis: the columns a file adds to its row (e.g. an MDM sample's text prompt)."""

    name: str = "table_columns"

    def __call__(self, motion, clip) -> dict:
        return dict(motion.meta.get("table_columns", {}))


@dataclass(frozen=True)
class Metrics:
    """Runner analysis: the metric columns of a clip, its notes and (with ``frames_dir``) its
    per-frame traces (a DataFrame, kept until :class:`WriteTraces` writes it)."""

    opts: BatchOptions
    name: str = "metrics"

    def __call__(self, motion, clip) -> tuple[dict, list[str]]:
        an = analyse(motion, self.opts.config)
        row = score_analysis(an, self.opts.reference, _audio_times(clip.path, self.opts, clip.cache))
        if self.opts.frames_dir:
            clip.results["traces"] = traces_table(an)
        return row, list(an.notes)


@dataclass(frozen=True)
class ExtraColumns:
    """Runner analysis: one of :attr:`BatchOptions.analyses` on the loaded clip. Gives ``(row
    columns, error)``: its ``columns`` (NaN when it cannot judge the clip, with the message
    prefixed by its ``error_prefix``), and adds its ``trace_columns`` to the clip's traces."""

    analysis: Any
    name: str

    def __call__(self, motion, clip) -> tuple[dict, str]:
        a, error, trace = self.analysis, "", None
        try:
            cols, trace = a(motion)
        except EvalkitError as exc:
            cols = {c: np.nan for c in a.columns}
            error = f"{a.error_prefix}{exc}"
        traces = clip.results.get("traces")
        if traces is not None:
            t = traces["time_s"].to_numpy()
            add = trace(t) if trace is not None else {c: np.full(len(t), np.nan) for c in a.trace_columns}
            for c in a.trace_columns:
                traces[c] = np.asarray(add[c], dtype=float)
        return cols, error


@dataclass(frozen=True)
class WriteTraces:
    """Runner analysis: writes the clip's traces to :func:`trace_path` (and drops them from the
    results, which go back to the caller)."""

    frames_dir: str
    system: str | None
    name: str = "write_traces"

    def __call__(self, motion, clip) -> str:
        out = trace_path(clip.path, self.frames_dir, self.system)
        _write_atomic(clip.results.pop("traces"), out)
        return str(out)


def score_analyses(opts: BatchOptions) -> tuple:
    """The runner analyses of ``evalkit score`` (:func:`evalkit.runner.run_clips`), in order:
    the file's own columns, the metrics, :attr:`BatchOptions.analyses`, the trace writer."""
    extra = tuple(ExtraColumns(a, f"analysis_{i}") for i, a in enumerate(opts.analyses))
    writer = (WriteTraces(opts.frames_dir, opts.system),) if opts.frames_dir else ()
    return (TableColumns(), Metrics(opts), *extra, *writer)


def score_row(run, opts: BatchOptions) -> dict[str, Any]:
    """The table row ``{clip, path, system, error, notes, metric...}`` of one :class:`~evalkit.runner.ClipRun`."""
    p = Path(run.path)
    row: dict[str, Any] = {"clip": p.stem, "path": str(p), "system": clip_system(p, opts.system), "error": "",
                           "notes": ""}
    notes = [_strip_path(w, p) for w in run.warnings]
    row.update(run.results.get("table_columns", {}))
    if "metrics" in run.results:
        cols, more = run.results["metrics"]
        row.update(cols)
        notes += more
    error = ""
    for i in range(len(opts.analyses)):
        if f"analysis_{i}" in run.results:
            cols, err = run.results[f"analysis_{i}"]
            row.update(cols)
            error = error or err
    row["error"] = run.error or error
    row["notes"] = "; ".join(dict.fromkeys(notes))
    return row


def _audio_times(path: Path, opts: BatchOptions, cache: dict) -> np.ndarray | None:
    if opts.audio is None:
        return None
    from evalkit.features.beats import audio_onsets, read_wav

    a = Path(opts.audio)
    wav = a if a.is_file() else a / f"{path.stem}.wav"
    if not wav.exists():
        return np.zeros(0)
    key = str(wav)
    if key not in cache:
        x, rate = read_wav(wav)
        cache[key] = audio_onsets(x, rate, opts.config.beats)
    return cache[key]


def _write_atomic(df, out: Path) -> None:
    from evalkit.atomic import atomic_path

    with atomic_path(out, suffix=".tmp") as tmp:
        _write_by_ext(df, tmp, out.suffix.lower())


def _write_by_ext(df, path: Path, ext: str) -> None:
    if ext == ".csv":
        df.to_csv(path, index=False)
    elif ext in (".parquet", ".pq"):
        df.to_parquet(path, index=False)
    elif ext == ".json":
        df.to_json(path, orient="records", indent=1)
    else:
        raise InputError(f"{path}: unsupported output format {ext!r}; use .csv, .parquet or .json")


def score_file(path: str | os.PathLike, opts: BatchOptions) -> dict[str, Any]:
    """Score one file into a row ``{clip, path, system, error, metric...}``; never raises for a
    bad clip (the message goes to ``error``)."""
    return score_row(run_clips([path], score_analyses(opts), opts.load)[0], opts)


def _strip_path(message: str, path: Path) -> str:
    """A warning without the leading ``<path>: `` (the row already names the clip)."""
    for prefix in (f"{path}: ", f"{path.name}: "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def to_table(rows: Iterable[Mapping[str, Any]]):
    """Rows → DataFrame with :data:`ID_COLUMNS` first, then metrics in first-seen order."""
    import pandas as pd

    rows = list(rows)
    cols = list(ID_COLUMNS)
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    return pd.DataFrame(rows, columns=cols)


#: Rough scoring speed of one worker, bytes of motion file per second (load + full metric set;
#: a 31-joint BVH frame is about 1 kB, scored at ~20,000 frames/s), and the least work worth a
#: worker process: starting one (a fresh Python importing numpy, scipy, pandas and evalkit)
#: costs 1-2 s, so a pool pays only when each worker gets several seconds of work.
BYTES_PER_SECOND = 15e6
MIN_SECONDS_PER_WORKER = 4.0


def choose_workers(paths: Sequence[str | os.PathLike], jobs: int) -> tuple[int, str]:
    """Worker processes worth starting for ``paths`` given ``--jobs``: at most ``jobs`` (``-1``:
    all cores), one per :data:`MIN_SECONDS_PER_WORKER` of estimated work (from file sizes), at
    most one per file. Returns ``(workers, reason)``; ``reason`` is empty unless fewer workers
    than asked are used, and then says why (for the user)."""
    asked = jobs if jobs > 0 else (os.cpu_count() or 1)
    asked = min(asked, os.cpu_count() or 1)
    size = 0
    for p in paths:
        try:
            size += Path(p).stat().st_size
        except OSError:
            pass
    est = size / BYTES_PER_SECOND
    workers = max(1, min(asked, len(paths), int(est // MIN_SECONDS_PER_WORKER) or 1))
    if workers >= asked:
        return workers, ""
    if workers == 1:
        why = (f"the work ({len(paths)} clip(s), about {est:.1f} s in one process) is too small for worker "
               f"processes to pay their start-up (1-2 s each): scoring in this process")
    else:
        why = f"the work (about {est:.0f} s in one process) keeps {workers} workers busy, not {asked}"
    return workers, why


def score_paths(
    paths: Sequence[str | os.PathLike],
    opts: BatchOptions | None = None,
    jobs: int = 1,
    scheduler: Any = None,
    chunk_size: int | None = None,
    progress: bool = True,
    on_progress: Callable[[int], None] | None = None,
    auto_workers: bool = True,
):
    """Score motion files into a table (one row per clip, input order).

    Args:
        paths: motion files (already expanded; see :func:`evalkit.motion.formats.iter_motion_files`).
        opts: per-task options.
        jobs: local worker processes (joblib, ``-1`` = all cores); ignored with ``scheduler``.
            With ``auto_workers`` (default) fewer are started when the work is too small to
            pay for them (:func:`choose_workers`).
        scheduler: a Dask scheduler address (``"tcp://127.0.0.1:8786"``) or a
            ``distributed.Client``; runs the same tasks on that cluster.
        chunk_size: files per task (default: enough for ~4 tasks per worker, at most 64).
        progress: show a tqdm progress bar (clips done).

    Returns:
        pandas DataFrame with columns :data:`ID_COLUMNS` then every metric.
    """
    opts = opts or BatchOptions()
    files = [str(p) for p in paths]
    if not files:
        raise InputError("no motion files to score")
    if jobs == 0 or jobs < -1:
        raise InputError(f"jobs must be a positive number or -1 (all cores), got {jobs}")
    if chunk_size is not None and chunk_size < 1:
        raise InputError(f"chunk_size must be a positive number of files, got {chunk_size}")
    workers = choose_workers(files, jobs)[0] if auto_workers else (jobs if jobs > 0 else (os.cpu_count() or 1))
    runs = run_clips(files, score_analyses(opts), opts.load, jobs=workers, scheduler=scheduler,
                     chunk_size=chunk_size, max_chunk=64, progress=progress, desc="scoring")
    table = to_table(score_row(r, opts) for r in runs)
    last = [c for a in opts.analyses for c in a.columns]  # the analyses' columns after the metrics
    for c in last:
        if c not in table.columns:
            table[c] = np.nan
    return table[[c for c in table.columns if c not in last] + last]


def check_table_format(out: str | os.PathLike) -> None:
    """Raise :class:`InputError` before any work if the table ``out`` cannot be written in its
    format: Parquet needs pyarrow, an optional extra (``pip install 'evalkit[parquet]'``)."""
    if Path(out).suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError(f"{out}: writing Parquet needs pyarrow, which is not installed; fix: "
                             "pip install 'evalkit[parquet]' (or write .csv or .json)") from None


def write_table(df, out: str | os.PathLike) -> Path:
    """Write the table by extension (``.csv``, ``.parquet``, ``.json``) via a temp file + rename."""
    out = Path(out)
    if out.suffix.lower() not in TABLE_EXTENSIONS:
        raise InputError(f"{out}: unsupported output format {out.suffix!r}; use .csv, .parquet or .json")
    check_table_format(out)
    _write_atomic(df, out)
    return out
