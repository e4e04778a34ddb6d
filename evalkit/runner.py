"""The one clip runner: read each input once, run the per-clip analyses on it, in chunks.

Every batch command (``evalkit score`` with or without ``--model``, ``evalkit compare``,
``evalkit train``, ``evalkit study build``) reads its motion files here:

* one :class:`~evalkit.motion.formats.LoadOptions` says how every file is read;
* each file is read once, and the analyses given (the metrics, the naturalness columns, the
  distribution features, ...) run in order on the loaded :class:`~evalkit.motion.Motion`, each
  seeing what the ones before it returned;
* the inputs run in chunks (several clips per task) in this process, in joblib worker
  processes or on a Dask cluster (:func:`evalkit.parallel.run_chunks`), and come back in input
  order whichever way they ran;
* a file that cannot be read or analysed gets its one-line message in
  :attr:`ClipRun.error` and the others are still analysed (or, with ``errors="raise"``, the
  first failure is raised as it came).

An analysis is a picklable callable ``analysis(motion, clip) -> value`` with a ``name``
attribute; ``clip`` is the :class:`Clip` being analysed. The runner knows nothing of what the
analyses compute: they live in the packages above it and are composed by their callers.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from evalkit.errors import EvalkitError, InputError
from evalkit.motion.formats import LoadOptions
from evalkit.parallel import run_chunks

#: Errors of a damaged or hostile file that are reported as the clip's error, not raised.
CLIP_ERRORS = (OSError, ValueError, FloatingPointError, IndexError, OverflowError, RecursionError)


@dataclass(eq=False)
class Clip:
    """The clip an analysis is given beside its motion.

    Attributes:
        path: the motion file (for a clip of a multi-clip file: ``results#3.npy``).
        tag: the caller's label of the input (e.g. the system or reference group of ``compare``).
        results: what the analyses before this one returned, by analysis name.
        cache: per-task memory shared by the clips of one chunk (e.g. audio onsets of one WAV).
    """

    path: Path
    tag: str = ""
    results: dict[str, Any] = field(default_factory=dict)
    cache: dict = field(default_factory=dict)


@dataclass(eq=False)
class ClipRun:
    """What one input gave.

    Attributes:
        path: the input, as given.
        tag: its label (see :class:`Clip`).
        error: ``""``, or the one-line message of what failed (reading, or an analysis); the
            analyses after the failing one did not run.
        warnings: messages of the ``UserWarning``\\ s raised while the file was read (implausible
            frame rate, body size, ...), when the run records them.
        results: analysis name -> its value, for every analysis that finished.
    """

    path: str
    tag: str = ""
    error: str = ""
    warnings: tuple[str, ...] = ()
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class _Job:
    """What every task needs besides its inputs (scattered once to a Dask cluster)."""

    load: LoadOptions
    analyses: tuple
    record_warnings: bool
    raise_errors: bool
    blas_threads: int | None


def _error_text(path: Path, exc: BaseException) -> str:
    if isinstance(exc, EvalkitError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return f"{path}: MemoryError: the clip needs more memory than this machine has"
    return f"{path}: {type(exc).__name__}: {exc}"


def _read(path: Path, job: _Job, run: ClipRun):
    if not job.record_warnings:
        return job.load.load(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        motion = job.load.load(path)
    run.warnings = tuple(str(w.message) for w in caught if issubclass(w.category, UserWarning))
    return motion


def run_clip(path: str | os.PathLike, job: _Job, tag: str = "", cache: dict | None = None) -> ClipRun:
    """Read one input and run the job's analyses on it (see :func:`run_clips`)."""
    p = Path(path)
    run = ClipRun(path=str(p), tag=tag)
    try:
        motion = _read(p, job, run)
        clip = Clip(path=p, tag=tag, results=run.results, cache={} if cache is None else cache)
        for analysis in job.analyses:
            run.results[analysis.name] = analysis(motion, clip)
    except (EvalkitError, MemoryError, *CLIP_ERRORS) as exc:
        if job.raise_errors:
            raise
        run.error = _error_text(p, exc)
    return run


def run_chunk(items: Sequence[tuple[str, str]], job: _Job) -> list[ClipRun]:
    """Run several ``(path, tag)`` inputs in one task (one cache; with ``blas_threads``, that many
    BLAS threads)."""
    cache: dict = {}
    if job.blas_threads is None:
        return [run_clip(p, job, t, cache) for p, t in items]
    from threadpoolctl import threadpool_limits

    with threadpool_limits(job.blas_threads):
        return [run_clip(p, job, t, cache) for p, t in items]


def _items(inputs: Sequence) -> list[tuple[str, str]]:
    out = []
    for x in inputs:
        path, tag = x if isinstance(x, tuple) else (x, "")
        out.append((str(path), str(tag)))
    return out


def run_clips(inputs: Sequence[str | os.PathLike | tuple[str | os.PathLike, str]], analyses: Sequence[Callable] = (),
              load: LoadOptions | None = None, *, jobs: int = 1, scheduler: Any = None,
              chunk_size: int | None = None, max_chunk: int = 64, progress: bool = False, desc: str = "clips",
              record_warnings: bool = True, errors: str = "record",
              blas_threads: int | None = None) -> list[ClipRun]:
    """Read every input once and run ``analyses`` on it; one :class:`ClipRun` per input, in input order.

    Args:
        inputs: motion files (already expanded, see
            :func:`evalkit.motion.formats.iter_motion_files`), or ``(path, tag)`` pairs.
        analyses: per-clip analyses, run in order on each loaded motion (see module doc);
            picklable when the work runs in worker processes or on a cluster.
        load: how the files are read (``None``: the defaults).
        jobs: local worker processes (joblib; ``-1``: all cores); ignored with ``scheduler``.
        scheduler: a Dask scheduler address (``"tcp://127.0.0.1:8786"``) or ``distributed.Client``.
        chunk_size: inputs per task (default: about 4 tasks per worker, at most ``max_chunk``).
        progress: show a progress bar (clips done) labelled ``desc``.
        record_warnings: keep the ``UserWarning``\\ s of reading in :attr:`ClipRun.warnings`
            (``False``: they are shown as Python shows warnings).
        errors: ``"record"`` (a failing input gets its message in :attr:`ClipRun.error`) or
            ``"raise"`` (the first failure is raised as it came).
        blas_threads: run every task on this many BLAS threads (``None``: as the process is set).

    Returns:
        one :class:`ClipRun` per input, in input order whatever the completion order.
    """
    from tqdm.auto import tqdm

    if jobs == 0 or jobs < -1:
        raise InputError(f"jobs must be a positive number or -1 (all cores), got {jobs}")
    if chunk_size is not None and chunk_size < 1:
        raise InputError(f"chunk_size must be a positive number of files, got {chunk_size}")
    if errors not in ("record", "raise"):
        raise InputError(f"errors must be 'record' or 'raise', got {errors!r}")
    items = _items(inputs)
    if not items:
        return []
    names = [a.name for a in analyses]
    if len(set(names)) != len(names):
        raise InputError(f"analyses need distinct names, got {', '.join(names)}")
    job = _Job(load or LoadOptions(), tuple(analyses), record_warnings, errors == "raise", blas_threads)
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    size = chunk_size or max(1, min(max_chunk, len(items) // max(1, 4 * workers)))
    # a cluster's workers run in folders of their own: they are sent absolute paths (the files
    # must be where the workers can read them, e.g. a shared file system), and each result
    # names its input as it was given
    sent = [(str(Path(p).absolute()), t) for p, t in items] if scheduler is not None else items
    chunks = [sent[i:i + size] for i in range(0, len(sent), size)]
    bar = tqdm(total=len(items), unit="clip", disable=not progress, desc=desc)
    try:
        results = run_chunks(run_chunk, chunks, job, workers, scheduler, bar)
    finally:
        bar.close()
    runs = [r for part in results for r in part]
    for run, (given, _) in zip(runs, items):
        run.path = given
    return runs


@dataclass(frozen=True)
class KeepMotion:
    """An analysis that returns the loaded motion itself (for callers that need the clips)."""

    name: str = "motion"

    def __call__(self, motion, clip):
        return motion


def load_clips(sources: Sequence[Any], load: LoadOptions | None = None, *, jobs: int = 1, scheduler: Any = None,
               progress: bool = False, desc: str = "reading clips") -> list:
    """The motions of ``sources``, in order, each file read once through :func:`run_clips`.

    For the commands and builders that need the clips themselves (a reference set, a generator's
    clip database, gesture phrases, the extractor's training windows) rather than per-clip rows.

    Args:
        sources: motion files, folders (searched recursively, see
            :func:`evalkit.motion.formats.iter_motion_files`) and already-loaded
            :class:`~evalkit.motion.Motion` objects (taken as they are), in any mix.
        load: how the files are read (``None``: the defaults).
        jobs, scheduler, progress, desc: as for :func:`run_clips`.

    Returns:
        ``list[Motion]``: the given motions and the files' motions, in the order given (a
        folder's files in :func:`~evalkit.motion.formats.iter_motion_files` order).

    Raises:
        InputError: a folder holds no motion file; the first file that cannot be read raises
            its own error.

    >>> from evalkit.data import SAMPLES_DIR
    >>> [m.name for m in load_clips([SAMPLES_DIR / "cmu" / "01_01.bvh"])]
    ['01_01']
    """
    from evalkit.motion import Motion
    from evalkit.motion.formats import FOLDER_EXTENSIONS, iter_motion_files

    slots: list[Any] = []
    files: list[Path] = []
    for src in sources:
        if isinstance(src, Motion):
            slots.append(src)
            continue
        found = list(iter_motion_files([src]))
        if not found:
            raise InputError(f"{src}: no motion files ({', '.join(FOLDER_EXTENSIONS)}) found")
        slots.extend(len(files) + i for i in range(len(found)))
        files.extend(found)
    runs = run_clips(files, (KeepMotion(),), load, jobs=jobs, scheduler=scheduler, progress=progress, desc=desc,
                     record_warnings=False, errors="raise")
    return [s if isinstance(s, Motion) else runs[s].results["motion"] for s in slots]
