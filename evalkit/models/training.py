"""Train, save and load a naturalness discriminator (what ``evalkit train`` runs).

A saved model is two files: ``MODEL.joblib`` (the fitted
:class:`~evalkit.models.discriminator.NaturalnessDiscriminator`) and ``MODEL.json`` next to it
(metadata: format, library versions, seed, window and corruption settings, feature names, every
training file with its SHA-256, example counts). Neither file holds a timestamp, so training
twice with the same data, seed and library versions gives the same model.
"""

from __future__ import annotations

import contextlib

import json
import os
import platform
import re
import sys
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import ConfigError, InputError
from evalkit.textfile import read_utf8_text
from evalkit.models.corruptions import CORRUPTION_TYPES
from evalkit.models.dataset import (
    LONG_LENGTHS, ExampleSpec, NaturalClip, clip_examples, donor_partners, example_windows, examples_from_files,
    load_natural, long_lengths_of,
)
from evalkit.models.discriminator import NaturalnessDiscriminator, fit_clone
from evalkit.models.window_features import WindowConfig
from evalkit.motion import LoadOptions

_LONG_NAME = re.compile(r"@(whole|[0-9.]+s)$")  # names of long examples (dataset.long_examples)
FORMAT = "evalkit-naturalness-discriminator"
FORMAT_VERSION = 1
DEFAULT_MODEL = Path(__file__).parent / "default_model" / "discriminator.joblib"


@dataclass(frozen=True)
class TrainOptions:
    """Everything that determines a trained model besides the data.

    Attributes:
        seed: seed of the corruptions and the model.
        types: corruption types to generate from the natural clips (empty: none, e.g. when
            ``--unnatural`` clips are given).
        per_type: corrupted versions per type and natural segment.
        severity_range: uniform range of corruption severities.
        mirror: add left/right mirrored copies of the natural segments.
        segment_s: natural clips are cut into segments of about this length, seconds.
        group_by: cross-validation groups of the natural files: ``subject`` (CMU names), ``file``
            or ``folder``.
        window: window configuration.
        model: estimator parameters (:class:`NaturalnessDiscriminator` keyword arguments).
        transplant_donor: ``"other_clip"`` (limb transplants between clips of a subject) or
            ``"same_clip"`` (from another time of the clip); see :class:`ExampleSpec`.
        long_lengths: length schedule of the long examples (seconds, 0 = the whole clip;
            :func:`~evalkit.models.dataset.long_examples`): beside its segments every natural
            clip gives natural and corrupted examples at these lengths, taken in turn, so the
            model learns from clips of all lengths. Empty: segments only (the older models' training).
    """

    seed: int = 0
    types: tuple[str, ...] = CORRUPTION_TYPES
    per_type: int = 3
    severity_range: tuple[float, float] = (0.3, 1.0)
    mirror: bool = True
    segment_s: float = 4.0
    group_by: str = "subject"
    window: WindowConfig = WindowConfig(working_band=True)
    model: dict[str, Any] = field(default_factory=dict)
    transplant_donor: str = "other_clip"
    long_lengths: tuple[float, ...] = LONG_LENGTHS

    def __post_init__(self) -> None:
        bad = [t for t in self.types if t not in CORRUPTION_TYPES]
        if bad:
            raise InputError(f"unknown corruption type(s) {', '.join(bad)}; expected {', '.join(CORRUPTION_TYPES)}")
        lo, hi = self.severity_range
        if not (0.0 <= lo <= hi <= 1.0):
            raise InputError(f"severity range must satisfy 0 <= low <= high <= 1, got {lo} {hi}")
        if self.per_type < 1:
            raise InputError("per_type must be at least 1")
        if self.transplant_donor not in ("other_clip", "same_clip"):
            raise InputError(f"transplant_donor must be 'other_clip' or 'same_clip', got {self.transplant_donor!r}")
        if any(not (np.isfinite(v) and 0 <= v <= 3600) for v in self.long_lengths):
            raise InputError(f"long lengths must be 0 (whole clip) to 3600 seconds, got {list(self.long_lengths)}")


def versions() -> dict[str, str]:
    """Versions of Python and the libraries a saved model depends on."""
    import joblib
    import pandas
    import scipy
    import sklearn

    from evalkit import __version__

    return {"evalkit": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, "pandas": pandas.__version__,
            "joblib": joblib.__version__}


def _display_path(p: str) -> str:
    try:
        return os.path.relpath(p)
    except ValueError:  # another drive on Windows
        return p


def train(natural: Sequence[str | Path], unnatural: Sequence[str | Path] = (), options: TrainOptions = TrainOptions(),
          load: LoadOptions | None = None, progress: bool = True, jobs: int = 1,
          scheduler: Any = None) -> tuple[NaturalnessDiscriminator, dict]:
    """Fit a discriminator on natural capture (plus optional unnatural clips), files read with ``load``.

    Unnatural examples are the natural segments corrupted with ``options.types`` and every clip
    under ``unnatural`` (all of whose windows count as unnatural).

    Args:
        jobs: local worker processes that read the files and make the examples' window
            features (joblib); ignored with ``scheduler``.
        scheduler: a Dask scheduler address (``"tcp://host:8786"``) or ``distributed.Client``:
            the files are read and the examples made on its workers. Either way the examples,
            their numbering and the model are those of one process (only the fit itself runs
            here, on this machine's cores).

    Returns:
        the fitted model and its metadata (see the module docstring).
    """
    fps = options.window.fps
    clips = load_natural(natural, fps=fps, group_by=options.group_by, load=load, progress=progress,
                         jobs=jobs, scheduler=scheduler)
    spec = ExampleSpec(types=tuple(options.types), per_type=options.per_type, severity=None,
                       severity_range=tuple(options.severity_range), mirror=options.mirror, seed=options.seed,
                       tag="train", transplant_donor=options.transplant_donor,
                       long_lengths=tuple(options.long_lengths))
    user_bad = examples_from_files(unnatural, natural=False, fps=fps, load=load) if unnatural else []
    table, counts, long_made, seconds = _example_table(clips, spec, options, user_bad, progress, jobs, scheduler)
    n_groups = table.loc[table["label"] >= 0, "group"].nunique()
    if n_groups < 2:
        raise InputError(
            "training needs natural clips from at least 2 groups (subjects or files) so that "
            "calibration folds can be grouped; use --group-by file for one subject's clips"
        )
    params = {"random_state": options.seed, "window": options.window, **options.model}
    try:
        model = NaturalnessDiscriminator(**params)
    except TypeError as exc:
        raise ConfigError(f"model options: {exc}") from None
    if progress:
        print(f"fitting on {int((table['label'] >= 0).sum())} windows of {sum(counts.values())} clips "
              f"({n_groups} groups)...", file=sys.stderr)
    model = fit_clone(model, table)
    model.training_rigs_ = tuple(sorted({c.rig for c in clips}))  # what a verdict's notes compare against

    files = [{"path": _display_path(c.path), "sha256": c.sha256, "group": c.group, "rig": c.rig,
              "frames": c.motion.n_frames, "class": "natural"} for c in clips]
    files += [{"path": _display_path(e.motion.meta.get("source", e.segment)), "sha256": e.motion.meta.get("sha256") or _sha(e.motion.meta.get("source")),
               "group": e.group, "rig": e.rig, "frames": e.motion.n_frames, "class": "unnatural"} for e in user_bad]
    model_params = {k: (asdict(v) if isinstance(v, WindowConfig) else v) for k, v in model.get_params().items()}
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "versions": versions(),
        "seed": options.seed,
        "estimator": f"{type(model).__module__}.{type(model).__name__}",
        "estimator_params": model_params,
        "window": options.window.to_dict(),
        "features": list(model.feature_columns_) + ["pose_residual_mean", "pose_residual_max", "pose_mahalanobis"],
        "pose_columns": len(model.pose_columns_),
        "corruptions": {"types": list(options.types), "per_type": options.per_type,
                        "severity_range": list(options.severity_range), "mirror": options.mirror,
                        "segment_s": options.segment_s, "transplant_donor": options.transplant_donor,
                        "long_lengths": list(options.long_lengths), "long_piece_s": spec.long_piece_s,
                        "long_examples": "beside its segments, each natural clip gives one natural example "
                                         "(and one of its mirror image) at a length of long_lengths taken in "
                                         "turn over the clips (0 = whole clip; middle excerpt, seamless loop, "
                                         "or the whole clip where no loop is seamless), and one corrupted "
                                         "version per type with every long_piece_s piece corrupted"},
        "group_by": options.group_by,
        "training_data": files,
        "examples": counts,
        "long_examples_natural": long_made,
        "example_seconds": {k: round(v, 1) for k, v in seconds.items()},
        "windows": {"natural": int((table["label"] == 1).sum()), "unnatural": int((table["label"] == 0).sum()),
                    "context_only": int((table["label"] == -1).sum())},
        "labels": "1 = natural (real capture), 0 = unnatural (corrupted or user-supplied)",
        "probability": "calibrated on out-of-fold scores with both classes weighted equally (prior 1/2)",
    }
    return model, meta


@dataclass(frozen=True)
class _TableJob:
    """What every example-making task needs besides its clips (scattered once to a Dask cluster)."""

    spec: ExampleSpec
    segment_s: float
    window: WindowConfig


def _clip_tables(items: list[tuple[NaturalClip, list, tuple | None]], job: _TableJob) -> list[tuple]:
    """Per ``(clip, its transplant donors, its long lengths)``: ``(examples made, counts per
    corruption, long natural examples per construction, seconds, window table or None)``, the
    table's ``example`` numbered from 0 within the clip (a task of :func:`_example_table`)."""
    return [_tables_of(clip_examples(clip, job.spec, job.segment_s, donors, length), job.window)
            for clip, donors, length in items]


def _tables_of(examples, window: WindowConfig) -> tuple:
    """``(examples made, their tally, window table or None)`` of examples taken one at a time
    (memory stays with the table), numbered from 0."""
    tally = _Tally()
    frames, k = [], 0
    for ex in examples:
        tally.add(ex)
        f = example_windows(k, ex, window)
        k += 1
        if f is not None:
            frames.append(f)
    return k, tally, pd.concat(frames, ignore_index=True) if frames else None


@dataclass
class _Tally:
    """Examples made, by corruption and by long-example construction, and their seconds."""

    counts: dict = field(default_factory=dict)
    long_made: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=lambda: {"segments": 0.0, "long": 0.0})

    def add(self, ex) -> None:
        self.counts[ex.provenance.corruption] = self.counts.get(ex.provenance.corruption, 0) + 1
        if "long_example" in ex.motion.meta and ex.natural:
            how = ex.motion.meta["long_example"]
            self.long_made[how] = self.long_made.get(how, 0) + 1
        self.seconds["long" if _LONG_NAME.search(ex.segment) else "segments"] += ex.motion.duration

    def merge(self, other: "_Tally") -> None:
        for mine, theirs in ((self.counts, other.counts), (self.long_made, other.long_made),
                             (self.seconds, other.seconds)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v


def _example_table(clips, spec: ExampleSpec, options: TrainOptions, user_bad: list, progress: bool,
                   jobs: int = 1, scheduler: Any = None):
    """Window features of every training example. Returns ``(table, counts per corruption, long
    natural examples per construction, seconds of segments / long examples)``.

    The natural clips are made into examples apart (:func:`~evalkit.models.dataset.clip_examples`,
    each given its transplant donors and long lengths), in chunks run here, in ``jobs`` processes
    or on a Dask cluster (:func:`evalkit.parallel.run_chunks`); chunks come back in order and are
    numbered as one pass would number them, so the table is the same however it was made. A
    task holds its clips (and their donors) and the tables they give, never the whole set."""
    from tqdm.auto import tqdm

    from evalkit.parallel import run_chunks

    partners = donor_partners(clips) if spec.transplant_donor == "other_clip" else {}
    lengths = long_lengths_of(len(clips), spec.long_lengths, spec.seed) if spec.long_lengths else None
    items = [(c, partners.get(id(c), []), lengths[i] if lengths is not None else None) for i, c in enumerate(clips)]
    workers = 1 if scheduler is None and jobs <= 1 else max(1, jobs)
    size = max(1, min(8, len(items) // max(1, 4 * workers)))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    bar = tqdm(total=len(items), desc="examples", unit="clip", disable=not progress)
    try:
        parts = run_chunks(_clip_tables, chunks, _TableJob(spec, options.segment_s, options.window), workers,
                           scheduler, bar)
    finally:
        bar.close()
    rows = [r for part in parts for r in part]
    if user_bad:  # the user's own unnatural clips, after the natural ones, as one pass takes them
        rows.append(_tables_of(user_bad, options.window))
    total, frames, offset = _Tally(), [], 0
    for k, tally, f in rows:
        total.merge(tally)
        if f is not None:
            f["example"] += offset
            frames.append(f)
        offset += k
    if not any(c != "none" for c in total.counts):
        raise InputError("no unnatural examples: give corruption types or --unnatural clips")
    if not frames:
        raise InputError("no clip could be turned into windows (all too short?)")
    table = pd.concat(frames, ignore_index=True)
    return table, total.counts, total.long_made, total.seconds


def _sha(path: str | None) -> str | None:
    if not path or not Path(path).exists():
        return None
    from evalkit.models.dataset import file_sha256

    return file_sha256(path)


def metadata_path(model_path: str | Path) -> Path:
    """The JSON metadata file that goes with a model file (``MODEL.joblib`` -> ``MODEL.json``)."""
    return Path(model_path).with_suffix(".json")


def save_model(model: NaturalnessDiscriminator, metadata: dict, path: str | Path) -> tuple[Path, Path]:
    """Write ``path`` (joblib) and its JSON metadata, each to a temporary file then renamed."""
    import joblib

    path = Path(path)
    if path.suffix.lower() != ".joblib":
        raise InputError(f"{path}: the model file must end in .joblib")
    path.parent.mkdir(parents=True, exist_ok=True)
    meta_path = metadata_path(path)
    tmp = path.with_name(path.name + ".tmp")
    joblib.dump(model, tmp, compress=3)
    tmp_meta = meta_path.with_name(meta_path.name + ".tmp")
    tmp_meta.write_text(json.dumps(metadata, indent=1, sort_keys=True, default=_json_default) + "\n")
    tmp.replace(path)
    tmp_meta.replace(meta_path)
    return path, meta_path


def _json_default(o: Any) -> Any:
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, (tuple, set)):
        return list(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


#: Modules of model files written by earlier versions -> where their classes live now.
RENAMED_MODULES = {"evalkit.models.windows": "evalkit.models.window_features"}


@contextlib.contextmanager
def _renamed_modules():
    """While a model file is unpickled, its classes' former module names resolve to the modules
    that hold them now (the aliases are removed again afterwards)."""
    import importlib

    added = [old for old in RENAMED_MODULES if old not in sys.modules]
    for old in added:
        sys.modules[old] = importlib.import_module(RENAMED_MODULES[old])
    try:
        yield
    finally:
        for old in added:
            sys.modules.pop(old, None)


def load_model(path: str | Path | None = None) -> tuple[NaturalnessDiscriminator, dict]:
    """Load a model and its metadata (``None`` or ``"default"``: the shipped default model).

    Raises :class:`ConfigError` when the file is missing or is not a discriminator; warns when
    it was saved with other library versions (scores may then differ slightly).

    >>> model, meta = load_model("default")
    >>> type(model).__name__, "windows" in meta
    ('NaturalnessDiscriminator', True)
    """
    import joblib

    if path is None or str(path) == "default":
        path = DEFAULT_MODEL
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: model file not found (train one with 'evalkit train')")
    meta_path = metadata_path(path)
    meta: dict = {}
    if meta_path.exists():
        try:
            meta = json.loads(read_utf8_text(meta_path))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{meta_path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(meta, dict):
            raise ConfigError(f"{meta_path}: not a naturalness-discriminator metadata file (a JSON object is expected)")
        if meta.get("format") != FORMAT:
            raise ConfigError(f"{meta_path}: not a naturalness-discriminator metadata file (format {meta.get('format')!r})")
        saved = meta.get("versions", {})
        now = versions()
        differ = [f"{k} {saved[k]} (now {now[k]})" for k in ("scikit-learn", "numpy") if k in saved and saved[k] != now[k]]
        if differ:
            warnings.warn(f"{path} was saved with {', '.join(differ)}; scores may differ slightly", stacklevel=2)
    try:
        with _renamed_modules():
            model = joblib.load(path)
    except Exception as exc:  # unpickling errors have many types
        raise ConfigError(f"{path}: cannot load the model: not an evalkit model file, or a damaged one "
                          f"(joblib: {type(exc).__name__}: {exc}); fix: give the .joblib that "
                          "'evalkit train --out' wrote, or train one") from None
    if not isinstance(model, NaturalnessDiscriminator):
        raise ConfigError(f"{path}: holds a {type(model).__name__}, not a NaturalnessDiscriminator")
    if not hasattr(model, "training_rigs_") and isinstance(meta.get("training_data"), list):
        # a model saved before it kept its rigs: they are on its card
        rigs = {d.get("rig") for d in meta["training_data"] if isinstance(d, dict) and d.get("class") == "natural"}
        model.training_rigs_ = tuple(sorted(r for r in rigs if isinstance(r, str)))
    return model, meta
