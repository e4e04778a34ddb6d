"""Per-clip features for the distribution metrics, locally (joblib) or on a Dask cluster.

One task reads a chunk of clips once each and returns, per clip, everything the comparison
needs: FGD embeddings of its windows, its frame-normalised poses (raw-space and per-pose FGD, L1
divergence; the raw-space windows are cut from them when the sets are compared),
its kinetic and geometric feature vectors, its PFC and the per-clip metrics of ``evalkit score``.
The same tasks run in-process, in joblib worker processes (``jobs``) or on a Dask cluster
(``scheduler``), each on one BLAS thread, and results come back in input order -- so the numbers
are identical whichever way they ran.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from evalkit.errors import EvalkitError, InputError
from evalkit.parallel import run_chunks


@dataclass(frozen=True)
class ExtractOptions:
    """What every task needs besides the file paths.

    Attributes:
        extractor: the FGD extractor (its window protocol decides window, stride and frame rate).
        load_kwargs: keyword arguments of :func:`evalkit.motion.load_motion`.
        roles: ``{role: joint name}`` overrides.
        kinetic_window: half-width of the kinetic features' sliding window, frames (AIST++: 2).
        score: also compute ``evalkit score``'s per-clip metrics.
        score_config: their settings (``None``: defaults).
        audio: a WAV file or a folder of ``<clip>.wav`` for beat metrics (``None``: none).
    """

    extractor: Any
    load_kwargs: Mapping[str, Any] = field(default_factory=dict)
    roles: Mapping[str, str] | None = None
    kinetic_window: int = 2
    score: bool = True
    score_config: Any = None
    audio: str | None = None


@dataclass(eq=False)
class ClipFeatures:
    """Everything one clip contributes (see module doc). Arrays are empty for a failed clip."""

    path: str
    group: str
    error: str = ""
    n_frames: int = 0
    embeddings: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    poses: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    kinetic: np.ndarray = field(default_factory=lambda: np.zeros(0))
    geometric: np.ndarray = field(default_factory=lambda: np.zeros(0))
    pfc: float = float("nan")
    scores: dict[str, float] = field(default_factory=dict)
    score_error: str = ""
    fell_back: tuple[str, ...] = ()
    window: int = 0

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def n_windows(self) -> int:
        return int(self.embeddings.shape[0])


def _audio_onsets(path: Path, audio: str | None, cache: dict) -> np.ndarray | None:
    if audio is None:
        return None
    from evalkit.features.beats import audio_onsets, read_wav

    a = Path(audio)
    wav = a if a.is_file() else a / f"{path.stem}.wav"
    if not wav.exists():
        return None
    if str(wav) not in cache:
        x, rate = read_wav(wav)
        cache[str(wav)] = audio_onsets(x, rate)
    return cache[str(wav)]


def features_of_motion(motion, opts: ExtractOptions, path: str = "", group: str = "",
                       audio_times: np.ndarray | None = None) -> ClipFeatures:
    """:class:`ClipFeatures` of a loaded clip (raises the evalkit errors of a bad rig)."""
    from evalkit.distribution.geometric import geometric_features
    from evalkit.distribution.physical import pfc
    from evalkit.distribution.windows import canonical_positions, frame_poses, windows
    from evalkit.features.kinetic import kinetic_features

    wp = opts.extractor.window_protocol
    pos, height, fell_back = canonical_positions(motion, wp.fps, opts.roles)
    cf = ClipFeatures(path=path, group=group, n_frames=int(pos.shape[0]), fell_back=tuple(fell_back),
                      window=int(wp.window))
    win = windows(pos, height, wp.window, wp.stride)
    cf.embeddings = opts.extractor.encode(win) if len(win) else np.zeros((0, opts.extractor.latent))
    cf.poses = frame_poses(pos, height).reshape(pos.shape[0], -1).astype(np.float32)
    cf.kinetic = kinetic_features(pos, wp.fps, opts.kinetic_window).reshape(-1)
    cf.geometric = geometric_features(pos, wp.fps)
    cf.pfc = pfc(pos, wp.fps)
    if opts.score:
        from evalkit.features.score import ScoreConfig, score_motion

        cfg = opts.score_config or ScoreConfig(roles=opts.roles)
        try:
            cf.scores = score_motion(motion, cfg, None, audio_times)
        except EvalkitError as exc:  # e.g. a clip too short for the foot metrics: keep the rest
            cf.score_error = str(exc)
    return cf


def extract_file(path: str, group: str, opts: ExtractOptions, cache: dict | None = None) -> ClipFeatures:
    """:class:`ClipFeatures` of one file; never raises for a bad clip (message in ``error``)."""
    from evalkit.motion import load_motion

    p = Path(path)
    try:
        motion = load_motion(p, **dict(opts.load_kwargs))
        return features_of_motion(motion, opts, str(p), group, _audio_onsets(p, opts.audio, {} if cache is None else cache))
    except EvalkitError as exc:
        return ClipFeatures(path=str(p), group=group, error=str(exc))
    except (OSError, ValueError, FloatingPointError, IndexError) as exc:
        return ClipFeatures(path=str(p), group=group, error=f"{p}: {type(exc).__name__}: {exc}")


def extract_chunk(items: Sequence[tuple[str, str]], opts: ExtractOptions) -> list[ClipFeatures]:
    """Features of several ``(path, group)`` items in one task, on one BLAS thread."""
    from threadpoolctl import threadpool_limits

    cache: dict = {}
    with threadpool_limits(1):
        return [extract_file(p, g, opts, cache) for p, g in items]


def extract_all(items: Sequence[tuple[str, str]], opts: ExtractOptions, jobs: int = 1, scheduler: Any = None,
                chunk_size: int | None = None, progress: bool = True,
                on_progress: Callable[[int], None] | None = None) -> list[ClipFeatures]:
    """Features of every ``(path, group)`` item, in input order.

    Args:
        jobs: local worker processes (joblib; ``-1``: all cores); ignored with ``scheduler``.
        scheduler: a Dask scheduler address or ``distributed.Client``.
        chunk_size: clips per task (default: about 4 tasks per worker, at most 32).
    """
    from tqdm.auto import tqdm

    items = [(str(p), str(g)) for p, g in items]
    if not items:
        raise InputError("no motion files to compare")
    if jobs == 0 or jobs < -1:
        raise InputError(f"jobs must be a positive number or -1 (all cores), got {jobs}")
    workers = jobs if jobs > 0 else (os.cpu_count() or 1)
    size = chunk_size or max(1, min(32, len(items) // max(1, 4 * workers)))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    bar = tqdm(total=len(items), unit="clip", disable=not progress, desc="features")
    try:
        results = run_chunks(extract_chunk, chunks, opts, workers, scheduler, bar)
    finally:
        bar.close()
    return [r for part in results for r in part]


def features_of_motions(motions, group: str, opts: ExtractOptions) -> list[ClipFeatures]:
    """:class:`ClipFeatures` of loaded clips (in this process, one BLAS thread); a clip whose rig
    lacks the roles gets its message in ``error``."""
    from threadpoolctl import threadpool_limits

    out = []
    with threadpool_limits(1):
        for m in motions:
            try:
                out.append(features_of_motion(m, opts, m.name, group))
            except EvalkitError as exc:
                out.append(ClipFeatures(path=m.name, group=group, error=str(exc)))
    return out
