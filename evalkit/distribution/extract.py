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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from evalkit.errors import EvalkitError, InputError
from evalkit.motion import LoadOptions
from evalkit.runner import run_clips


@dataclass(frozen=True)
class ExtractOptions:
    """What every task needs besides the file paths.

    Attributes:
        extractor: the FGD extractor (its window protocol decides window, stride and frame rate).
        load: how the files are read (:class:`~evalkit.motion.LoadOptions`).
        roles: ``{role: joint name}`` overrides.
        kinetic_window: half-width of the kinetic features' sliding window, frames (AIST++: 2).
        score: also compute ``evalkit score``'s per-clip metrics.
        score_config: their settings (``None``: defaults).
        audio: a WAV file or a folder of ``<clip>.wav`` for beat metrics (``None``: none).
    """

    extractor: Any
    load: LoadOptions = field(default_factory=LoadOptions)
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
    from evalkit.distribution.canonical import canonical_positions, frame_poses, windows
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


@dataclass(frozen=True)
class DistributionFeatures:
    """Runner analysis (:func:`evalkit.runner.run_clips`): the :class:`ClipFeatures` of a loaded
    clip, its group the input's tag."""

    opts: ExtractOptions
    name: str = "features"

    def __call__(self, motion, clip) -> ClipFeatures:
        audio = _audio_onsets(clip.path, self.opts.audio, clip.cache)
        return features_of_motion(motion, self.opts, str(clip.path), clip.tag, audio)


def _clip_features(run) -> ClipFeatures:
    return run.results["features"] if run.ok else ClipFeatures(path=run.path, group=run.tag, error=run.error)


def extract_file(path: str, group: str, opts: ExtractOptions) -> ClipFeatures:
    """:class:`ClipFeatures` of one file; never raises for a bad clip (message in ``error``)."""
    return extract_all([(path, group)], opts, progress=False)[0]


def extract_all(items: Sequence[tuple[str, str]], opts: ExtractOptions, jobs: int = 1, scheduler: Any = None,
                chunk_size: int | None = None, progress: bool = True,
                on_progress: Callable[[int], None] | None = None) -> list[ClipFeatures]:
    """Features of every ``(path, group)`` item, in input order; each file read once, every task on
    one BLAS thread.

    Args:
        jobs: local worker processes (joblib; ``-1``: all cores); ignored with ``scheduler``.
        scheduler: a Dask scheduler address or ``distributed.Client``.
        chunk_size: clips per task (default: about 4 tasks per worker, at most 32).
    """
    items = [(str(p), str(g)) for p, g in items]
    if not items:
        raise InputError("no motion files to compare")
    runs = run_clips(items, (DistributionFeatures(opts),), opts.load, jobs=jobs, scheduler=scheduler,
                     chunk_size=chunk_size, max_chunk=32, progress=progress, desc="features",
                     record_warnings=False, blas_threads=1)
    return [_clip_features(r) for r in runs]


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
