"""Honest evaluation of the discriminator against the baselines, on the same splits.

* Examples: natural segments of real capture (about 4 s) and, for training, their corrupted
  versions at severities drawn from a range (mirrored segments too); for testing, one
  corrupted version per type at the *moderate* severity 0.5 (and a severity sweep).
* Splits: :class:`~sklearn.model_selection.GroupKFold` over groups (capture subject, or the
  whole collection when the performer is unknown), never over frames or windows, so no
  subject's motion is on both sides.
* Seen types: train on every corruption type, test on natural segments and each type.
* Leave one corruption type out (LOCO): for each type, train without any example of it and
  test on natural segments plus that type only: generalisation to artifacts never seen.
* Metrics per method and type: ROC AUC (over natural/unnatural pairs within a fold: every
  fold's model has its own score scale), accuracy and MCC (Matthews correlation coefficient).
  The discriminator's threshold is 0.5 on its calibrated probability; each baseline's threshold
  is the one that maximises balanced accuracy on its training fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import matthews_corrcoef, roc_auc_score, roc_curve
from sklearn.model_selection import GroupKFold

from evalkit.errors import InputError
from evalkit.models.baselines import BaselineSpec, default_baselines
from evalkit.models.dataset import (
    Example, ExampleSpec, NaturalClip, example_windows, iter_examples,
)
from evalkit.models.discriminator import NaturalnessDiscriminator, fit_clone
from evalkit.models.window_features import WindowConfig

DISCRIMINATOR = "discriminator"
MODERATE = 0.5


@dataclass(frozen=True)
class EvalConfig:
    """Settings of an evaluation run.

    Attributes:
        n_splits: GroupKFold folds (at most the number of groups).
        seed: seed of every example and model.
        train: which training examples to make from each natural segment.
        test_severity: severity of the test corruptions ("moderate").
        sweep: further test severities for the severity curve (discriminator only).
        segment_s: length of natural segments, seconds.
        window: window configuration.
        model: the discriminator to evaluate (cloned per fold).
        loco: run the leave-one-corruption-type-out test too.
        lengths: clip lengths (seconds) of the evaluation by length (:func:`evaluate_by_length`);
            empty: skip it.
    """

    n_splits: int = 5
    seed: int = 0
    train: ExampleSpec = ExampleSpec(per_type=1, mirror=True, augment=True, severity_range=(0.3, 1.0))
    test_severity: float = MODERATE
    sweep: tuple[float, ...] = (0.25, 0.75, 1.0)
    segment_s: float = 4.0
    window: WindowConfig = WindowConfig()
    model: NaturalnessDiscriminator = field(default_factory=NaturalnessDiscriminator)
    loco: bool = True
    lengths: tuple[float, ...] = (5.0, 20.0, 60.0)


@dataclass(eq=False)
class EvalData:
    """Examples, their window tables and the baselines' per-clip preparations."""

    train: list[Example]
    test: list[Example]
    train_windows: pd.DataFrame
    test_windows: pd.DataFrame
    baseline_train: dict[str, list]
    baseline_test: dict[str, list]
    train_ok: np.ndarray  # examples that have windows (too-short clips are dropped)
    test_ok: np.ndarray


def _prepare_chunk(clips: Sequence[NaturalClip], subset: range, specs: Sequence[ExampleSpec], natural: bool,
                   segment_s: float, window: WindowConfig, baselines: Sequence[BaselineSpec]):
    """Examples of ``clips[subset]`` for each spec in turn (with ``natural=False`` the corrupted
    ones only): ``[(example without its motion, window table or None, baseline preparations)]``
    with the window tables' ``example`` numbered from 0 within the chunk."""
    out = []
    for spec in specs:
        for ex in iter_examples(clips, spec, segment_s, subset=subset):
            if not natural and ex.natural:
                continue
            f = example_windows(len(out), ex, window)
            prep = {b.name: (b.estimator.prepare(ex.motion) if f is not None else None) for b in baselines}
            out.append((replace(ex, motion=None), f, prep))
    return out


def prepare_data(clips: Sequence[NaturalClip], config: EvalConfig = EvalConfig(),
                 baselines: Sequence[BaselineSpec] | None = None, progress: bool = True,
                 jobs: int = 1) -> EvalData:
    """Make training and test examples, their window tables and the baselines' preparations.

    Examples are processed one at a time and their motions dropped afterwards (only provenance
    and groups are kept), so memory stays proportional to the feature tables. ``jobs``: clips
    are prepared in this many processes at once, in consecutive chunks joined in order, so the
    examples, their numbering and every table are those of ``jobs=1``.
    """
    from joblib import Parallel, delayed

    baselines = default_baselines(config.window, config.seed) if baselines is None else baselines
    train_spec = replace(config.train, seed=config.seed, tag="train")
    test_spec = ExampleSpec(types=config.train.types, per_type=1, severity=config.test_severity,
                            mirror=False, seed=config.seed, tag="test", transplant_donor=config.train.transplant_donor)
    sweeps = [replace(test_spec, severity=s, tag=f"sweep{s:g}") for s in config.sweep]
    n_chunks = 1 if jobs <= 1 else min(len(clips), 4 * jobs)
    bounds = np.linspace(0, len(clips), n_chunks + 1).round().astype(int)
    chunks = [range(int(bounds[k]), int(bounds[k + 1])) for k in range(n_chunks)]
    # (name, [(specs, natural examples kept)]) in the order of the serial version: the test set
    # is the moderate examples of every clip, then each sweep's corrupted examples of every clip
    stages = {"train": [((train_spec,), True)], "test": [((test_spec,), True)] + [((s,), False) for s in sweeps]}
    out = {}
    for name, parts in stages.items():
        examples, frames, ok, prep = [], [], [], {b.name: [] for b in baselines}
        tasks = [(specs, natural, sub) for specs, natural in parts for sub in chunks]
        results = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_prepare_chunk)(clips, sub, specs, natural, config.segment_s, config.window, baselines)
            for specs, natural, sub in tasks)
        if progress:
            from tqdm import tqdm

            results = tqdm(results, total=len(tasks), desc=f"{name} examples (chunks of clips)", unit="chunk")
        for chunk in results:
            for ex, f, p in chunk:
                i = len(examples)
                ok.append(f is not None)
                if f is not None:
                    f["example"] = i
                    frames.append(f)
                for b in baselines:
                    prep[b.name].append(p[b.name])
                examples.append(ex)
        if not frames:
            raise InputError("no clip could be turned into windows (all too short?)")
        out[name] = (examples, pd.concat(frames, ignore_index=True), prep, np.asarray(ok))
    (train, tw, bt, train_ok), (test, sw, bs, test_ok) = out["train"], out["test"]
    return EvalData(train, test, tw, sw, bt, bs, train_ok, test_ok)


def _best_threshold(scores: np.ndarray, y: np.ndarray) -> float:
    """Threshold maximising balanced accuracy (predict natural when score >= threshold)."""
    fpr, tpr, thr = roc_curve(y, scores)
    k = int(np.argmax(tpr - fpr))
    return float(thr[k]) if np.isfinite(thr[k]) else float(np.max(scores))


def _example_meta(examples: Sequence[Example]) -> pd.DataFrame:
    return pd.DataFrame({
        "example": np.arange(len(examples)),
        "group": [e.group for e in examples],
        "rig": [e.rig for e in examples],
        "segment": [e.segment for e in examples],
        "corruption": [e.provenance.corruption for e in examples],
        "severity": [e.provenance.severity for e in examples],
        "clip_natural": [int(e.natural) for e in examples],
    })


def _fit_and_score(model: NaturalnessDiscriminator, windows: pd.DataFrame, test_w: pd.DataFrame):
    """One cross-validation fit: the fitted clone and its clip verdicts on ``test_w``."""
    fitted = fit_clone(model, windows)
    return fitted, fitted.predict_clip_proba(test_w, test_w["example"].to_numpy())


def _fold_examples(data: EvalData, config: EvalConfig) -> list[tuple[pd.DataFrame, pd.DataFrame, list]]:
    """Per fold of the grouped cross-validation: ``(training examples, test examples, test
    groups)`` (metadata rows of :func:`_example_meta`, examples that made windows only)."""
    train_meta, test_meta = _example_meta(data.train), _example_meta(data.test)
    groups = np.array(sorted(set(train_meta["group"])))
    k = min(config.n_splits, len(groups))
    if k < 2:
        raise InputError(f"cross-validation needs at least 2 groups, got {len(groups)}")
    out = []
    for a, b in GroupKFold(n_splits=k).split(groups, groups=groups):
        train_groups, test_groups = set(groups[a]), set(groups[b])
        out.append((train_meta[train_meta["group"].isin(train_groups) & data.train_ok],
                    test_meta[test_meta["group"].isin(test_groups) & data.test_ok], sorted(test_groups)))
    return out


def fit_baselines(data: EvalData, config: EvalConfig = EvalConfig(),
                  baselines: Sequence[BaselineSpec] | None = None) -> list[dict[str, tuple[np.ndarray, np.ndarray]]]:
    """The baselines of every fold, fitted once: per fold ``{baseline: (scores of the fold's
    training examples, scores of its test examples)}``, in the row order of
    :func:`_fold_examples`. Only the baselines' thresholds depend on which corruption types are
    in training (the natural-only models never see them), so every setting of
    :func:`cross_validate` shares these fits (pass them as ``baseline_fits``)."""
    from sklearn.base import clone

    baselines = default_baselines(config.window, config.seed) if baselines is None else baselines
    fits = []
    for tr_ex, te_ex, _ in _fold_examples(data, config):
        fold = {}
        for bl in baselines:
            est = clone(bl.estimator)
            ptr = [data.baseline_train[bl.name][i] for i in tr_ex["example"]]
            est.fit(ptr, tr_ex["clip_natural"].to_numpy())
            fold[bl.name] = (est.score_samples(ptr),
                             est.score_samples([data.baseline_test[bl.name][i] for i in te_ex["example"]]))
        fits.append(fold)
    return fits


def cross_validate(data: EvalData, config: EvalConfig = EvalConfig(),
                   baselines: Sequence[BaselineSpec] | None = None, progress: bool = True,
                   models_out: dict | None = None, include_seen: bool = True, jobs: int = 1,
                   only: Sequence[str] | None = None,
                   baseline_fits: list[dict[str, tuple[np.ndarray, np.ndarray]]] | None = None) -> pd.DataFrame:
    """Grouped cross-validation, seen types and (``config.loco``) leave-one-type-out.

    Returns a tidy table, one row per (setting, fold, test example, method): ``setting``
    (``"seen"`` or ``"loco:<type>"``), ``fold``, example metadata, ``method``, ``score``
    (higher = more natural; the discriminator's is its calibrated clip probability) and
    ``threshold``. With ``models_out`` (a dict), each fold's discriminator of the seen-types
    setting is stored in it as ``{fold: (model, test_groups)}`` (for :func:`evaluate_by_length`).
    ``include_seen=False`` runs only the leave-one-type-out settings (when the seen-types rows
    were computed before); ``only`` runs only the named settings (e.g. ``["loco:freeze"]``).
    ``jobs``: discriminator fits run in this many processes at once (joblib); every fit is
    seeded and single-threaded, so the result does not depend on ``jobs``. ``baseline_fits``:
    the baselines' fits from :func:`fit_baselines` (same data and config), so that runs of
    single settings do not fit them again; the rows are the same either way.
    """
    from joblib import Parallel, delayed

    baselines = default_baselines(config.window, config.seed) if baselines is None else baselines
    tw, sw = data.train_windows, data.test_windows
    folds = _fold_examples(data, config)
    if baseline_fits is None:  # fitted once per fold: only the thresholds depend on the setting
        baseline_fits = fit_baselines(data, config, baselines)
    if len(baseline_fits) != len(folds) or any(set(f) != {bl.name for bl in baselines} for f in baseline_fits):
        raise InputError("baseline_fits do not match these folds and baselines: make them with fit_baselines() "
                         "on the same data and config")
    present = {e.provenance.corruption for e in data.train}
    types = [t for t in config.train.types if t in present]
    settings = ([("seen", None)] if include_seen else []) + ([(f"loco:{t}", t) for t in types] if config.loco else [])
    if only is not None:
        settings = [(s, h) for s, h in settings if s in set(only)]
    rows = []
    tasks = []  # (fold, setting, held, test selection, training labels/mask)
    for f_i, (tr_ex, te_ex, test_groups) in enumerate(folds):
        base_scores_train = {name: v[0] for name, v in baseline_fits[f_i].items()}
        base_scores_test = {name: v[1] for name, v in baseline_fits[f_i].items()}
        for setting, held in settings:
            tr_mask = tr_ex["corruption"] != held if held else np.ones(len(tr_ex), dtype=bool)
            te_mask = (te_ex["corruption"].isin(["none", held]) if held else np.ones(len(te_ex), dtype=bool))
            te_sel = te_ex[te_mask]
            tasks.append((f_i, setting, held, te_sel, tr_ex[tr_mask], test_groups))
            y_tr = tr_ex[tr_mask]["clip_natural"].to_numpy()
            for bl in baselines:
                s_tr = base_scores_train[bl.name][np.asarray(tr_mask)]
                thr = _best_threshold(s_tr, y_tr)
                e = te_sel.copy()
                e["method"] = bl.name
                e["score"] = base_scores_test[bl.name][np.asarray(te_mask)]
                e["threshold"] = thr
                e["setting"], e["fold"] = setting, f_i
                rows.append(e)

    def work():
        for f_i, setting, held, te_sel, tr_sel, _ in tasks:
            windows = tw[tw["example"].isin(tr_sel["example"])]
            test_w = sw[sw["example"].isin(te_sel["example"])].reset_index(drop=True)
            yield delayed(_fit_and_score)(config.model, windows, test_w)

    results = Parallel(n_jobs=jobs, return_as="generator")(work())
    if progress:
        from tqdm import tqdm

        results = tqdm(results, total=len(tasks), desc="cross-validation fits", unit="fit")
    for (f_i, setting, held, te_sel, _, test_groups), (model, cp) in zip(tasks, results):
        if models_out is not None and held is None:
            models_out[f_i] = (model, test_groups)
        rows.append(_discriminator_rows(te_sel, cp, sw, setting, f_i))
    return _in_serial_order(pd.concat(rows, ignore_index=True), [s for s, _ in settings])


def _discriminator_rows(te_sel: pd.DataFrame, cp: pd.DataFrame, sw: pd.DataFrame, setting: str, fold: int) -> pd.DataFrame:
    """The discriminator's rows of one fit: its clip verdicts ``cp`` on the test examples ``te_sel``."""
    d = te_sel.set_index("example").loc[cp.index].reset_index()
    d["method"] = DISCRIMINATOR
    d["score"] = cp["naturalness"].to_numpy()
    d["threshold"] = 0.5
    d["worst_start_s"] = _window_starts(sw, te_sel["example"], cp["worst_window"].to_numpy())
    d["setting"], d["fold"] = setting, fold
    return d


def _in_serial_order(out: pd.DataFrame, settings: list[str]) -> pd.DataFrame:
    """Rows in the order of the serial version: by fold, then setting, discriminator before baselines."""
    order = {s: i for i, s in enumerate(settings)}
    out["_m"] = (out["method"] != DISCRIMINATOR).astype(int)
    out["_s"] = out["setting"].map(order)
    return out.sort_values(["fold", "_s", "_m"], kind="stable").drop(columns=["_m", "_s"]).reset_index(drop=True)


def _window_starts(sw: pd.DataFrame, examples, rows: np.ndarray) -> np.ndarray:
    """``start_s`` of the rows ``rows`` of the test windows of ``examples`` (re-indexed from 0,
    as :func:`_fit_and_score` saw them)."""
    test_w = sw[sw["example"].isin(examples)].reset_index(drop=True)
    return test_w.loc[rows, "start_s"].to_numpy()


def within_fold_auc(y: np.ndarray, score: np.ndarray, fold: np.ndarray) -> float:
    """ROC AUC over (natural, unnatural) pairs from the same fold.

    Each fold's model scores on its own scale (an uncalibrated baseline's log-likelihood depends
    on the training subjects), so pairs across folds say nothing about the method; this is the
    per-fold AUC averaged with weights ``n_natural * n_unnatural`` (equal to the pooled AUC when
    scores are comparable across folds).
    """
    num = den = 0.0
    for f in np.unique(fold):
        m = fold == f
        n1, n0 = int(np.sum(y[m] == 1)), int(np.sum(y[m] == 0))
        if n1 and n0:
            num += roc_auc_score(y[m], score[m]) * n1 * n0
            den += n1 * n0
    return num / den if den else float("nan")


def _metrics(y: np.ndarray, score: np.ndarray, thr: np.ndarray, fold: np.ndarray) -> dict:
    pred = (score >= thr).astype(int)
    return {"n_natural": int(np.sum(y == 1)), "n_unnatural": int(np.sum(y == 0)),
            "roc_auc": within_fold_auc(y, score, fold),
            "accuracy": float(np.mean(pred == y)), "mcc": float(matthews_corrcoef(y, pred))}


def metrics_table(scores: pd.DataFrame, severity: float | None = MODERATE) -> pd.DataFrame:
    """ROC AUC (within folds, :func:`within_fold_auc`), accuracy and MCC (at each method's
    threshold, pooled over folds) per setting, method and corruption type.

    Each type is scored against all natural test segments of the same folds; ``"all"`` pools
    every type of a setting. Only corrupted examples at ``severity`` count (``None``: all).
    """
    rows = []
    for (setting, method), d in scores.groupby(["setting", "method"], sort=False):
        nat = d[d["clip_natural"] == 1]
        bad = d[d["clip_natural"] == 0]
        if severity is not None:
            bad = bad[np.isclose(bad["severity"], severity)]
        for t in sorted(set(bad["corruption"])) + ["all"]:
            b = bad if t == "all" else bad[bad["corruption"] == t]
            s = pd.concat([nat, b])
            m = _metrics(s["clip_natural"].to_numpy(), s["score"].to_numpy(), s["threshold"].to_numpy(),
                         s["fold"].to_numpy())
            rows.append({"setting": setting, "method": method, "corruption": t, **m})
    return pd.DataFrame(rows)


def summary_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """ROC AUC per corruption type (rows) and method (columns), seen types and LOCO side by side.

    LOCO rows take each type from the run that held that type out.
    """
    seen = metrics[metrics["setting"] == "seen"].pivot(index="corruption", columns="method", values="roc_auc")
    loco = metrics[metrics["setting"].str.startswith("loco:")]
    loco = loco[loco.apply(lambda r: r["setting"] == f"loco:{r['corruption']}", axis=1)]
    out = {"seen": seen}
    if len(loco):
        lp = loco.pivot(index="corruption", columns="method", values="roc_auc")
        lp.loc["mean"] = lp.mean()
        out["held-out type"] = lp
    return pd.concat(out, axis=1)


def severity_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Discriminator ROC AUC per type and test severity (seen-types setting)."""
    d = scores[(scores["setting"] == "seen") & (scores["method"] == DISCRIMINATOR)]
    nat = d[d["clip_natural"] == 1]
    rows = []
    for (t, sev), b in d[d["clip_natural"] == 0].groupby(["corruption", "severity"]):
        s = pd.concat([nat, b])
        rows.append({"corruption": t, "severity": sev,
                     "roc_auc": within_fold_auc(s["clip_natural"].to_numpy(), s["score"].to_numpy(), s["fold"].to_numpy())})
    return pd.DataFrame(rows).pivot(index="corruption", columns="severity", values="roc_auc")


def roc_figure(scores: pd.DataFrame, path: str | Path, severity: float = MODERATE) -> Path:
    """ROC curves of every method: seen types (left) and held-out types pooled (right).

    Written to a temporary file and renamed, so an interrupted run leaves no half-written figure.
    Drawn on a :class:`matplotlib.figure.Figure` of its own: matplotlib's global backend (and a
    notebook user's) is never touched.
    """
    from matplotlib.figure import Figure

    from evalkit.atomic import atomic_path

    path = Path(path)
    settings = [("seen", "corruption types seen in training")]
    if scores["setting"].str.startswith("loco:").any():
        settings.append(("loco", "held-out corruption type (LOCO)"))
    fig = Figure(figsize=(5.2 * len(settings), 4.8))
    axes = fig.subplots(1, len(settings), squeeze=False)
    for ax, (key, title) in zip(axes[0], settings):
        if key == "seen":
            d = scores[scores["setting"] == "seen"]
        else:
            d = scores[scores["setting"].str.startswith("loco:")]
            d = d[(d["clip_natural"] == 1) | (d["setting"] == "loco:" + d["corruption"])]
        d = d[(d["clip_natural"] == 1) | np.isclose(d["severity"], severity)]
        grid = np.linspace(0, 1, 201)
        for method, m in d.groupby("method", sort=False):
            # vertical averaging over folds (weights: pairs per fold), as AUCs are within folds
            tprs, weights = [], []
            for _, mf in m.groupby("fold"):
                y = mf["clip_natural"].to_numpy()
                if len(np.unique(y)) < 2:
                    continue
                fpr, tpr, _ = roc_curve(y, mf["score"])
                tprs.append(np.interp(grid, fpr, tpr))
                weights.append(np.sum(y == 1) * np.sum(y == 0))
            tpr = np.average(tprs, axis=0, weights=weights)
            tpr[0] = 0.0
            auc = within_fold_auc(m["clip_natural"].to_numpy(), m["score"].to_numpy(), m["fold"].to_numpy())
            ax.plot(grid, tpr, lw=2.2 if method == DISCRIMINATOR else 1.2, label=f"{method} (AUC {auc:.3f})")
        ax.plot([0, 1], [0, 1], ls=":", c="grey", lw=0.8)
        ax.set_xlabel("false natural rate (unnatural clips called natural)")
        ax.set_ylabel("true natural rate")
        ax.set_title(f"{title}\nseverity {severity:g}, grouped {scores['fold'].nunique()}-fold CV "
                     "(fold-averaged ROC)", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=(path.suffix.lstrip(".") or "png"))
    return path


def rig_transfer(model: NaturalnessDiscriminator, clips: Sequence[NaturalClip]) -> pd.DataFrame:
    """Naturalness of whole natural clips (e.g. from rigs a model never saw), one row per clip."""
    from evalkit.models.discriminator import score_naturalness

    rows = []
    for c in clips:
        try:
            s = score_naturalness(model, c.motion)
        except InputError:
            continue
        rows.append({"clip": Path(c.path).name, "group": c.group, "rig": c.rig, "duration_s": round(c.motion.duration, 2),
                     "naturalness": s.naturalness, "worst_start_s": s.worst_start_s,
                     "worst_naturalness": s.worst_naturalness})
    return pd.DataFrame(rows)


def distribution(values: Sequence[float]) -> dict:
    """Summary of a score distribution: n, mean, quantiles, share at or above 0.5."""
    v = np.asarray(values, dtype=float)
    return {"n": int(len(v)), "mean": float(v.mean()), "min": float(v.min()), "q10": float(np.quantile(v, 0.1)),
            "median": float(np.median(v)), "q90": float(np.quantile(v, 0.9)), "max": float(v.max()),
            "share_natural": float(np.mean(v >= 0.5))}


def rig_families(clips: Sequence[NaturalClip], min_jaccard: float = 0.8) -> list[str]:
    """A rig-family label per clip: clips whose joint-name sets overlap by at least
    ``min_jaccard`` (Jaccard index) share a family (e.g. two versions of one vendor rig), named
    after its first clip's rig signature."""
    names = [set(c.motion.skeleton.names) for c in clips]
    labels: list[str] = []
    reps: list[tuple[set, str]] = []
    for c, s in zip(clips, names):
        for rep, lab in reps:
            if len(s & rep) / len(s | rep) >= min_jaccard:
                labels.append(lab)
                break
        else:
            reps.append((s, c.rig))
            labels.append(c.rig)
    return labels


def leave_one_rig_out(clips: Sequence[NaturalClip], config: EvalConfig = EvalConfig(),
                      progress: bool = True) -> pd.DataFrame:
    """Train without each rig family in turn and score that family's whole natural clips.

    Returns one row per scored clip (see :func:`rig_transfer`) with ``held_out_rig``.
    """
    fam = rig_families(clips)
    rows = []
    for f in sorted(set(fam)):
        train_clips = [c for c, g in zip(clips, fam) if g != f]
        test_clips = [c for c, g in zip(clips, fam) if g == f]
        if len({c.group for c in train_clips}) < 2:
            continue
        spec = replace(config.train, seed=config.seed, tag="train")
        frames = (example_windows(i, ex, config.window)
                  for i, ex in enumerate(iter_examples(train_clips, spec, config.segment_s)))
        table = pd.concat([f for f in frames if f is not None], ignore_index=True)
        model = fit_clone(config.model, table)
        r = rig_transfer(model, test_clips)
        r["held_out_rig"] = f
        r["trained_on_rigs"] = ", ".join(sorted(set(fam) - {f}))
        rows.append(r)
        if progress:
            print(f"rig {f}: {len(r)} clips, mean naturalness {r['naturalness'].mean():.3f}", flush=True)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def length_windows(clips: Sequence[NaturalClip], config: EvalConfig,
                   progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Window table of the clips of the evaluation by length (see :func:`evaluate_by_length`).

    Returns ``(windows, meta, info)``: the window features of every example (column
    ``example``), one row of metadata per example (index ``example``: ``group``, ``rig``,
    ``segment``, ``corruption``, ``severity``, ``clip_natural``, ``length_s``) and the
    construction of every clip at every length (:func:`~evalkit.models.lengths.length_examples`).
    """
    from evalkit.models.lengths import length_examples

    examples, info = length_examples(clips, config.lengths, config.train.types, config.test_severity,
                                     config.seed, progress=progress)
    frames, meta = [], []
    for i, (L, ex) in enumerate(examples):
        f = example_windows(i, ex, config.window)
        if f is None:
            continue
        frames.append(f)
        meta.append({"example": i, "group": ex.group, "rig": ex.rig, "segment": ex.segment,
                     "corruption": ex.provenance.corruption, "severity": ex.provenance.severity,
                     "clip_natural": int(ex.natural), "length_s": L})
    if not frames:
        return pd.DataFrame(), pd.DataFrame(), info
    return pd.concat(frames, ignore_index=True), pd.DataFrame(meta).set_index("example"), info


def score_by_length(windows: pd.DataFrame, meta: pd.DataFrame, fold_models: dict) -> pd.DataFrame:
    """Each fold's model on the by-length clips of its own test groups (:func:`length_windows`);
    rows like :func:`cross_validate`'s, ``setting`` ``"length:<L>s"``, plus ``length_s`` and
    ``worst_stretch_naturalness``."""
    rows = []
    for f_i, (model, test_groups) in sorted(fold_models.items()):
        w = windows[windows["group"].isin(test_groups)].reset_index(drop=True) if len(windows) else windows
        if not len(w):
            continue
        cp = model.predict_clip_proba(w, w["example"].to_numpy())
        d = meta.loc[cp.index].reset_index()
        d["method"] = DISCRIMINATOR
        d["score"] = cp["naturalness"].to_numpy()
        d["worst_stretch_naturalness"] = cp["worst_stretch_naturalness"].to_numpy()
        d["threshold"] = 0.5
        d["setting"] = [f"length:{L:g}s" for L in d["length_s"]]
        d["fold"] = f_i
        rows.append(d)
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def evaluate_by_length(clips: Sequence[NaturalClip], config: EvalConfig, fold_models: dict,
                       progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cross-validated discriminators on natural and corrupted clips of 5, 20 and 60 s.

    Every natural clip is brought to each length of ``config.lengths`` from its own frames
    (:func:`evalkit.models.lengths.natural_at_length`: an excerpt, or a seamless loop); the
    unnatural clips of a length have every 5-s piece corrupted at ``config.test_severity``
    (:func:`~evalkit.models.lengths.corrupt_at_length`), so the corrupted share of time is the
    same at every length. Each fold's model (``fold_models``: ``{fold: (model, test_groups)}``
    from :func:`cross_validate`) scores the clips of its own test groups only, whole, as
    ``evalkit score --model`` does.

    Returns:
        ``(scores, info)``: rows like :func:`cross_validate`'s (``setting`` is
        ``"length:<L>s"``, ``method`` the discriminator; plus ``length_s``) and the
        construction of every clip at every length (:func:`~evalkit.models.lengths.length_examples`).
    """
    windows, meta, info = length_windows(clips, config, progress)
    return score_by_length(windows, meta, fold_models), info


def length_summary(scores: pd.DataFrame, clips: Sequence[NaturalClip] | None = None) -> pd.DataFrame:
    """Per clip length: ROC AUC of the discriminator (pooled types, within folds) and the
    natural clips' naturalness (mean, median, share >= 0.5), and with ``clips`` the natural
    mean per rig family (:func:`rig_families`)."""
    fam = {}
    if clips is not None:
        fam = {c.rig: f for c, f in zip(clips, rig_families(clips))}
    rows = []
    for L, d in scores.groupby("length_s"):
        nat = d[d["clip_natural"] == 1]
        r = {"length_s": L, "roc_auc": within_fold_auc(d["clip_natural"].to_numpy(), d["score"].to_numpy(),
                                                       d["fold"].to_numpy()),
             "n_natural": len(nat), "n_unnatural": int((d["clip_natural"] == 0).sum()),
             "natural_mean": nat["score"].mean(), "natural_median": nat["score"].median(),
             "natural_share_0.5": float((nat["score"] >= 0.5).mean())}
        if fam:
            for f, g in nat.groupby(nat["rig"].map(fam)):
                r[f"natural_mean {f}"] = g["score"].mean()
        rows.append(r)
    return pd.DataFrame(rows).set_index("length_s")


def length_report(scores: pd.DataFrame, info: pd.DataFrame, clips: Sequence[NaturalClip] | None = None,
                  severity: float = MODERATE) -> list[str]:
    """Markdown lines of the report's section on clip length."""
    used = info[info["used"]]
    n_used, n_all = used["clip"].nunique(), info["clip"].nunique()
    loops = used.groupby("length_s")["construction"].apply(lambda c: int((c == "loop").sum()))
    parts = ["", "## By clip length: the same clips at 5, 20 and 60 s", "",
             f"{n_used} of {n_all} natural clips, each brought to every length from its own frames: its middle "
             "excerpt when the capture is long enough, otherwise looped between two loop points where pose and "
             "speed repeat, kept only when every loop is seamless without asking any model (no seam accelerates "
             "a body joint more than 99 % of the clip's own frames, and the correction that closes the loop turns "
             "no joint more than 15 degrees); loops per length: "
             + ", ".join(f"{L:g} s: {int(n)}" for L, n in loops.items())
             + f". Unnatural clips: every 5-s piece corrupted (severity {severity:g}, one clip per type), "
             "pieces joined with a continuous root, so the corrupted share of time is the same at every length. "
             "Each fold's model scores the clips of its own test subjects, whole.", ""]
    if not len(scores):
        return parts + ["(no clip could be brought to every length)"]
    parts += [markdown_table(length_summary(scores, clips)), ""]
    m = metrics_table(scores, severity)
    m = m[m["setting"].str.startswith("length:")]
    piv = m.pivot(index="corruption", columns="setting", values="roc_auc")
    piv = piv[sorted(piv.columns, key=lambda c: float(c.split(":")[1].rstrip("s")))]
    parts += ["ROC AUC per corruption type and length:", "", markdown_table(piv)]
    return parts


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _atomic_csv(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    df.to_csv(tmp, index=False)
    tmp.replace(path)


def markdown_table(df: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """A DataFrame as a GitHub-flavoured Markdown table (index included)."""
    d = df.copy()
    if isinstance(d.columns, pd.MultiIndex):
        d.columns = [" / ".join(str(x) for x in c if str(x)) for c in d.columns]
    d = d.reset_index()
    head = "| " + " | ".join(str(c) for c in d.columns) + " |"
    sep = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(d.columns))) + "|"
    lines = [head, sep]
    for _, r in d.iterrows():
        cells = [format(v, floatfmt) if isinstance(v, (float, np.floating)) and np.isfinite(v) else
                 ("" if isinstance(v, float) and not np.isfinite(v) else str(v)) for v in r]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(clips: Sequence[NaturalClip], out_dir: Path, config: EvalConfig = EvalConfig(),
                 progress: bool = True, rig_transfer_test: bool = True, models_out: dict | None = None,
                 data: EvalData | None = None, scores: pd.DataFrame | None = None,
                 by_length: tuple[pd.DataFrame, pd.DataFrame] | None = None,
                 rig_table: pd.DataFrame | None = None, note: str | None = None) -> list[Path]:
    """Run the whole evaluation and write ``scores.csv``, ``metrics.csv``, ``rig_transfer.csv``,
    ``roc.png``, ``lengths.csv`` / ``length_clips.csv`` (:func:`evaluate_by_length`) and
    ``report.md`` (Markdown tables) into ``out_dir``.

    ``data``, ``scores`` (with the seen-types fold models in ``models_out``) and ``by_length``
    may be given when computed before (a long run done in parts); otherwise they are computed.
    So may ``rig_table`` (:func:`leave_one_rig_out`'s output). ``note``: a paragraph put at the
    top of the report (e.g. which parts of a staged run are still to come).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    models_out = {} if models_out is None else models_out
    if scores is None:
        data = prepare_data(clips, config, progress=progress) if data is None else data
        scores = cross_validate(data, config, progress=progress, models_out=models_out)
    metrics = metrics_table(scores, config.test_severity)
    written = []
    _atomic_csv(scores, out_dir / "scores.csv")
    _atomic_csv(metrics, out_dir / "metrics.csv")
    written += [out_dir / "scores.csv", out_dir / "metrics.csv"]
    written.append(roc_figure(scores, out_dir / "roc.png", config.test_severity))
    summary = summary_table(metrics)
    overall = metrics[metrics["corruption"] == "all"].set_index(["setting", "method"])[["roc_auc", "accuracy", "mcc"]]
    overall = overall[overall.index.get_level_values(0) == "seen"].droplevel(0)
    sev = severity_table(scores) if len(config.sweep) else None
    nat = scores[(scores["setting"] == "seen") & (scores["method"] == DISCRIMINATOR) & (scores["clip_natural"] == 1)]
    parts = [
        "# Naturalness discriminator: grouped cross-validation",
        "",
        f"{len(clips)} natural clips, {nat['group'].nunique()} groups, {scores['fold'].nunique()} folds "
        f"(GroupKFold by subject/collection); training severities {config.train.severity_range}, "
        f"test severity {config.test_severity:g}; seed {config.seed}. Unnatural clips are constructed by "
        "corrupting real capture (see docs/discriminator.md).",
        "",
        "## ROC AUC per corruption type (seen in training / held out of training)",
        "",
        markdown_table(summary),
        "",
        "## All seen types pooled",
        "",
        markdown_table(overall),
    ]
    if sev is not None:
        parts += ["", "## Discriminator ROC AUC by severity (seen types)", "", markdown_table(sev)]
    parts += ["", "## Natural test segments: calibrated naturalness (discriminator, seen types)", "",
              markdown_table(pd.DataFrame([distribution(nat["score"])]).set_index("n"))]
    if note:
        parts[1:1] = ["", note]
    if rig_transfer_test or rig_table is not None:
        rt = rig_table if rig_table is not None else leave_one_rig_out(clips, config, progress=progress)
        if len(rt):
            _atomic_csv(rt, out_dir / "rig_transfer.csv")
            written.append(out_dir / "rig_transfer.csv")
            dist = pd.DataFrame([{"held-out rig": r, **distribution(d["naturalness"])}
                                 for r, d in rt.groupby("held_out_rig")]).set_index("held-out rig")
            parts += ["", "## Real capture from a rig family left out of training: whole-clip naturalness", "",
                      markdown_table(dist)]
    if config.lengths:
        if by_length is None and not models_out:
            raise InputError("the evaluation by length needs the seen-types fold models (models_out)")
        ls, info = by_length if by_length is not None else evaluate_by_length(clips, config, models_out, progress=progress)
        _atomic_csv(ls, out_dir / "lengths.csv")
        _atomic_csv(info, out_dir / "length_clips.csv")
        written += [out_dir / "lengths.csv", out_dir / "length_clips.csv"]
        parts += length_report(ls, info, clips, config.test_severity)
    _atomic_write_text(out_dir / "report.md", "\n".join(parts) + "\n")
    written.append(out_dir / "report.md")
    return written


#: Packages whose code decides an evaluation's results (a change to any file in them starts a
#: resumed run afresh).
_RESULT_CODE = ("models", "features", "motion")


def stage_key(clips: Sequence[NaturalClip], config: EvalConfig) -> str:
    """16 hex digits naming a run's inputs: the settings (``repr(config)``, with the model's
    parameters), every clip (file name, SHA-256 of its bytes, group, frames, frame rate) and the source of the
    packages that compute the results (:data:`_RESULT_CODE`). Finished stages are kept under
    ``stages/<key>/`` of the output folder; only a run with the same key resumes from them."""
    import hashlib

    import evalkit

    h = hashlib.sha256(repr(config).encode())
    h.update(repr(sorted(config.model.get_params().items())).encode())  # repr() may abbreviate
    for c in clips:
        h.update(f"{Path(c.path).name}|{c.sha256}|{c.group}|{c.motion.n_frames}|{c.motion.fps:g}\n".encode())
    root = Path(evalkit.__file__).parent
    for pkg in _RESULT_CODE:
        for f in sorted((root / pkg).rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


class _Stages:
    """Results of finished stages on disk (joblib files), so a stopped run resumes where it stopped."""

    def __init__(self, folder: Path | None):
        self.dir = folder

    def get(self, name: str, compute):
        """``(value, resumed)``: the stored value of stage ``name``, else ``compute()`` stored."""
        import joblib

        from evalkit.atomic import atomic_path

        path = None if self.dir is None else self.dir / f"{name}.joblib"
        if path is not None and path.exists():
            try:
                return joblib.load(path), True
            except Exception as e:  # a damaged file (disk full, copied half): compute the stage again
                import warnings

                warnings.warn(f"{path}: stored stage could not be read ({type(e).__name__}: {e}); "
                              "computing it again", stacklevel=2)
        value = compute()
        if path is not None:
            with atomic_path(path) as tmp:
                joblib.dump(value, tmp)
        return value, False


# long: one stage after another, each stamped, stored and reported; splitting it would scatter the order
def run_evaluation(clips: Sequence[NaturalClip], out_dir: Path, config: EvalConfig = EvalConfig(),
                   jobs: int = 1, progress: bool = True, rig_transfer_test: bool = True,
                   resume: bool = True) -> list[Path]:
    """The whole evaluation (:func:`write_report`) in stages, the report rewritten after each,
    so a long run that is stopped keeps what finished.

    1. examples and window tables, prepared once (:func:`prepare_data`) and shared by every fit,
       and the baselines of every fold, fitted once (:func:`fit_baselines`) for every setting;
    2. seen-types cross-validation and the evaluation by length -> a first complete report;
    3. leave-one-type-out, one type at a time -> the report after each type;
    4. the rig transfer (:func:`leave_one_rig_out`) -> the final report.

    The report says at its top which stages are still to come. ``jobs``: cross-validation fits
    in parallel (results do not depend on it). With ``resume`` every finished stage is kept in
    ``out_dir/stages/<key>/`` (:func:`stage_key`: settings, clips and code) and a run with the
    same key starts after the last finished stage, with the same results as one run through.
    """
    import time

    out_dir = Path(out_dir)
    stages = _Stages(out_dir / "stages" / stage_key(clips, config) if resume else None)
    if progress and resume:
        print(f"[evaluation] finished stages are kept in {stages.dir} (a stopped run resumes from them)", flush=True)
    t0 = time.perf_counter()
    log = []
    data_cache: list[EvalData] = []

    def stamp(what: str, resumed: bool = False) -> None:
        log.append(f"{what}: resumed" if resumed else f"{what}: {time.perf_counter() - t0:.0f} s")
        if progress:
            print(f"[evaluation] {log[-1]}", flush=True)

    def data() -> EvalData:  # prepared only when a stage that needs it is not stored yet
        if not data_cache:
            d, resumed = stages.get("examples", lambda: prepare_data(clips, config, progress=progress, jobs=jobs))
            stamp("examples prepared", resumed)
            data_cache.append(d)
        return data_cache[0]

    base_cache: list = []

    def base():  # the baselines of every fold, fitted once for all settings
        if not base_cache:
            b, resumed = stages.get("baselines", lambda: fit_baselines(data(), config))
            stamp("baselines fitted", resumed)
            base_cache.append(b)
        return base_cache[0]

    def seen():
        models: dict = {}
        sc = cross_validate(data(), replace(config, loco=False), progress=progress, models_out=models, jobs=jobs,
                            baseline_fits=base())
        present = {e.provenance.corruption for e in data().train}
        return sc, models, [t for t in config.train.types if t in present]

    (scores, models, types), resumed = stages.get("seen", seen)
    stamp("seen-types fits", resumed)
    by_length = None
    if config.lengths:
        by_length, resumed = stages.get("lengths", lambda: evaluate_by_length(clips, config, models, progress=progress))
        stamp("evaluation by length", resumed)
    pending = ([f"leave-one-type-out ({len(types)} types)"] if config.loco else []) + \
        (["rig transfer"] if rig_transfer_test else [])

    def write(note_pending: list[str], rig_table=None) -> list[Path]:
        note = ("**Partial report: still to come: " + "; ".join(note_pending) + ".**") if note_pending else None
        timing = "Run time (cumulative): " + "; ".join(log) + "."
        note = timing if note is None else note + " " + timing
        return write_report(clips, out_dir, config, progress=progress, rig_transfer_test=False,
                            models_out=models, scores=scores, by_length=by_length, rig_table=rig_table,
                            note=note)

    written = write(pending)
    if config.loco:
        for i, t in enumerate(types):
            part, resumed = stages.get(f"loco-{t}", lambda t=t: cross_validate(
                data(), config, progress=progress, include_seen=False, jobs=jobs, only=[f"loco:{t}"],
                baseline_fits=base()))
            scores = pd.concat([scores, part], ignore_index=True)
            stamp(f"leave-one-type-out {t}", resumed)
            rest = types[i + 1:]
            written = write(([f"leave-one-type-out of {', '.join(rest)}"] if rest else [])
                            + (["rig transfer"] if rig_transfer_test else []))
    if rig_transfer_test:
        rt, resumed = stages.get("rig-transfer", lambda: leave_one_rig_out(clips, config, progress=progress))
        stamp("rig transfer", resumed)
        written = write([], rt if len(rt) else None)
    return written

