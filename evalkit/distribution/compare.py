"""``evalkit compare``: the distribution metrics papers report, for several systems against a
reference set, with bootstrap intervals and the protocol written next to every number.

:func:`compare` returns a :class:`Comparison` (one row per system plus a "real vs real" row from
the reference split in halves, a per-clip table and the protocol record); :func:`write_outputs`
writes ``distribution.csv``, ``distribution.tex``, ``distribution.png``/``.pdf``, ``clips.csv``
and ``protocol.json``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.errors import InputError
from evalkit.motion import LoadOptions
from evalkit.distribution.embedding import Extractor, check_protocol, load_extractor, versions
from evalkit.distribution.diversity import GEOMETRIC_MIN_SCALE
from evalkit.distribution.extract import ClipFeatures, ExtractOptions, extract_all
from evalkit.distribution.geometric import N_FEATURES
from evalkit.distribution.metrics import (FeatureSet, L1_BOOTSTRAP_FRAMES, RAW_BOOTSTRAP_DIMS, RAW_MIN_STD, half_split,
                                          raw_stride, set_metrics)

REFERENCE = "__reference__"
REAL_VS_REAL = "real vs real"
#: Headline metrics, in table order.
HEADLINE = ("fgd", "fgd_raw", "fgd_pose", "fid_k", "fid_g", "div_k", "div_g", "l1_div", "pfc")
OUTPUT_FILES = ("distribution.csv", "distribution.tex", "distribution.png", "distribution.pdf", "clips.csv",
                "protocol.json")


@dataclass(eq=False)
class Comparison:
    """Result of :func:`compare`.

    Attributes:
        table: one row per system, then the real-vs-real row (pandas DataFrame).
        clips: one row per clip (group, path, error, frames, windows, PFC, score metrics).
        protocol: every setting the numbers depend on (JSON-serialisable).
    """

    table: Any
    clips: Any
    protocol: dict[str, Any] = field(default_factory=dict)


def system_name(spec: str) -> tuple[str, str]:
    """``NAME=PATH`` -> ``(NAME, PATH)``; a bare ``PATH`` is named after its folder (or file stem)."""
    if "=" in spec and not Path(spec).exists():
        name, path = spec.split("=", 1)
        if not name or not path:
            raise InputError(f"{spec!r}: expected NAME=PATH or PATH")
        return name, path
    p = Path(spec)
    return (p.name if p.is_dir() else p.stem), spec


def compare(reference: Sequence[str | os.PathLike], systems: Mapping[str, Sequence[str | os.PathLike]],
            extractor: Extractor | str | os.PathLike | None = None, requested: Mapping[str, Any] | None = None,
            recorded: Mapping[str, Any] | None = None, jobs: int = 1, scheduler: Any = None,
            n_boot: int = 500, seed: int = 0, audio: str | None = None,
            load: LoadOptions | None = None, roles: Mapping[str, str] | None = None,
            score: bool = True, score_config: Any = None, progress: bool = True,
            chunk_size: int | None = None) -> Comparison:
    """Compare systems' clips with a reference set of real motion.

    Args:
        reference: files/folders of real motion.
        systems: ``{name: files/folders}``.
        extractor: an :class:`Extractor`, a folder, or ``None`` for the shipped one.
        requested: protocol settings asked for (``window``, ``stride``, ``fps``); must match the
            extractor's (else :class:`~.embedding.ProtocolMismatchError`).
        recorded: an earlier ``protocol.json`` to reproduce (its extractor must be this one).
        jobs, scheduler, chunk_size: local processes or Dask cluster (identical numbers).
        n_boot: bootstrap replicates (clips resampled with replacement); 0: no intervals.
        seed: seed of the bootstrap and of the reference's half split.
        audio: WAV or folder of ``<clip>.wav`` for the beat metrics (as ``evalkit score --audio``).
        load, roles: how files are read (:class:`~evalkit.motion.LoadOptions`); role overrides.
        score: add the means of ``evalkit score``'s per-clip metrics.
    """
    from evalkit.motion.formats import MOTION_EXTENSIONS, iter_motion_files

    ext = extractor if isinstance(extractor, Extractor) else load_extractor(extractor)
    check_protocol(ext, requested, recorded)
    if not systems:
        raise InputError("no system to compare: give NAME=PATH (or PATH) at least once")
    if n_boot < 0:
        raise InputError(f"--bootstrap must be 0 or more replicates, got {n_boot}")
    ref_files = list(iter_motion_files(reference))
    if len(ref_files) < 2:
        raise InputError(f"the reference needs at least 2 motion files, found {len(ref_files)} under "
                         f"{', '.join(map(str, reference))}")
    items = [(str(f), REFERENCE) for f in ref_files]
    for name, paths in systems.items():
        if name == REFERENCE or name == REAL_VS_REAL:
            raise InputError(f"system name {name!r} is reserved; choose another")
        files = list(iter_motion_files(paths))
        if not files:
            raise InputError(f"system {name}: no motion files ({', '.join(MOTION_EXTENSIONS)}) under {', '.join(map(str, paths))}")
        items += [(str(f), name) for f in files]
    opts = ExtractOptions(extractor=ext, load=load or LoadOptions(), roles=roles, score=score,
                          score_config=score_config, audio=audio)
    feats = extract_all(items, opts, jobs=jobs, scheduler=scheduler, progress=progress, chunk_size=chunk_size)
    return summarise(feats, list(systems), ext, n_boot=n_boot, seed=seed, audio=audio, score=score)


def _score_columns(feats: Sequence[ClipFeatures]) -> list[str]:
    cols: list[str] = []
    for c in feats:
        for k, v in c.scores.items():
            if k not in cols and isinstance(v, (int, float, np.floating)):
                cols.append(k)
    return cols


def summarise(feats: Sequence[ClipFeatures], system_names: Sequence[str], ext: Extractor, n_boot: int = 500,
              seed: int = 0, audio: str | None = None, score: bool = True) -> Comparison:
    """The comparison from already extracted clip features (see :func:`compare`).

    Runs on one BLAS thread: the many small eigendecompositions of the bootstrap are fastest so
    (multi-threaded LAPACK on 32-dimensional matrices only adds overhead, and on a busy machine a
    lot of it), and the numbers do not depend on the thread count.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _summarise(feats, system_names, ext, n_boot, seed, audio, score)


def _summarise(feats, system_names, ext, n_boot, seed, audio, score) -> Comparison:
    import pandas as pd

    groups: dict[str, list[ClipFeatures]] = {REFERENCE: []}
    failed: dict[str, list[ClipFeatures]] = {}
    for c in feats:
        (groups.setdefault(c.group, []) if c.ok else failed.setdefault(c.group, [])).append(c)
    for c in (x for v in failed.values() for x in v):
        warnings.warn(f"skipped (not read): {c.error}")
    ref_clips = groups[REFERENCE]
    if len(ref_clips) < 2:
        first = failed.get(REFERENCE, [None])[0]
        raise InputError("fewer than 2 reference clips could be read" + (f"; first error: {first.error}" if first else ""))
    score_cols = _score_columns(feats) if score else []
    ref = FeatureSet(ref_clips)
    rows = []
    wp = ext.window_protocol
    for i, name in enumerate(system_names):
        clips = groups.get(name, [])
        row: dict[str, Any] = {"system": name}
        if not clips:
            warnings.warn(f"system {name}: no clip could be read")
            row.update({"n_clips": 0.0})
        else:
            row.update(set_metrics(FeatureSet(clips), ref, n_boot, seed + 1 + i, score_cols))
        row["n_failed"] = float(len(failed.get(name, [])))
        rows.append(row)
    a, b = half_split(len(ref_clips), seed)
    half_a, half_b = ref.subset(a), ref.subset(b)
    rvr = {"system": REAL_VS_REAL}
    rvr.update(set_metrics(half_a, half_b, n_boot, seed, score_cols))
    rvr["n_failed"] = float(len(failed.get(REFERENCE, [])))
    rows.append(rvr)
    support = floor_support(half_a, half_b, wp.window)
    unsupported = floor_warnings(support)
    if unsupported:
        warnings.warn(f"real-vs-real floor not meaningful for {'; '.join(unsupported)}: {FLOOR_REASON}")
    table = pd.DataFrame(rows)
    table["floor_warning"] = ""
    table.loc[table["system"] == REAL_VS_REAL, "floor_warning"] = (
        f"floor not meaningful for {'; '.join(unsupported)} ({FLOOR_REASON})" if unsupported else "")
    if audio is not None and "mean_beat_consistency" in table:
        for suf in ("", "_ci_low", "_ci_high"):
            table[f"beat_consistency{suf}"] = table[f"mean_beat_consistency{suf}"]
    lead = ["system", "n_clips", "n_failed", "n_windows"]
    for m in HEADLINE + (("beat_consistency",) if "beat_consistency" in table else ()):
        lead += [m, f"{m}_ci_low", f"{m}_ci_high"]
    rest = [c for c in table.columns if c not in lead]
    table = table[[c for c in lead if c in table] + rest]
    # the protocol in every row
    table["window"] = wp.window
    table["stride"] = wp.stride
    table["raw_stride"] = raw_stride(wp.window)
    table["fps"] = wp.fps
    table["joint_set"] = " ".join(wp.joint_set)
    table["extractor_hash"] = ext.extractor_hash
    table["n_ref_clips"] = ref.n
    table.loc[table["system"] == REAL_VS_REAL, "n_ref_clips"] = len(b)
    table["n_ref_windows"] = ref.n_windows
    table.loc[table["system"] == REAL_VS_REAL, "n_ref_windows"] = half_b.n_windows
    table["bootstrap"] = n_boot
    clips = _clip_table(feats, score_cols)
    protocol = _protocol(ext, ref, groups, failed, system_names, n_boot, seed, a, b, audio, score)
    protocol["real_vs_real"]["support"] = {m: {"samples_per_half": n, "dims": d, "unit": unit}
                                           for m, (n, d, unit) in support.items()}
    protocol["real_vs_real"]["unsupported"] = unsupported
    return Comparison(table=table, clips=clips, protocol=protocol)


#: What each Fréchet metric estimates a mean and covariance from (the sample unit).
FLOOR_UNITS = {"fgd": "windows", "fgd_raw": "raw windows", "fgd_pose": "poses", "fid_k": "clips", "fid_g": "clips"}
METRIC_NAMES = {"fgd": "FGD", "fgd_raw": "FGD raw", "fgd_pose": "FGD pose", "fid_k": "FID_k", "fid_g": "FID_g"}


def floor_support(half_a: FeatureSet, half_b: FeatureSet, window: int) -> dict[str, tuple[int, int, str]]:
    """Per Fréchet metric of the real-vs-real row: (samples in the smaller half, feature
    dimensions, sample unit).

    Each metric fits a Gaussian (mean and ``d x d`` covariance) to each half; from ``n <= d``
    samples the covariance is singular (rank at most ``n - 1``), so the distance between the
    halves reflects the estimate, not the data (:func:`floor_warnings`).
    """
    def rows(x: np.ndarray) -> int:
        return int(np.isfinite(x).all(axis=1).sum()) if x.ndim == 2 and x.shape[1] else 0

    def dims(x: np.ndarray) -> int:
        return int(x.shape[1]) if x.ndim == 2 else 0

    raw_dims = window * half_a.pose.sum.shape[1] if half_a.pose.sum.ndim == 2 else 0
    raw_dims = raw_dims - window * 3 if raw_dims else 0  # the hips are dropped
    return {
        "fgd": (int(min(half_a.emb.count.sum(), half_b.emb.count.sum())), dims(half_a.emb.sum), FLOOR_UNITS["fgd"]),
        "fgd_raw": (min(_n_raw_total(half_a), _n_raw_total(half_b)), raw_dims, FLOOR_UNITS["fgd_raw"]),
        "fgd_pose": (int(min(half_a.pose.count.sum(), half_b.pose.count.sum())), dims(half_a.pose.sum),
                     FLOOR_UNITS["fgd_pose"]),
        "fid_k": (min(rows(half_a.kinetic), rows(half_b.kinetic)), dims(half_a.kinetic), FLOOR_UNITS["fid_k"]),
        "fid_g": (min(rows(half_a.geometric), rows(half_b.geometric)), dims(half_a.geometric), FLOOR_UNITS["fid_g"]),
    }


#: Why a real-vs-real floor from too few samples means nothing (stated with every warning).
FLOOR_REASON = ("each half's mean and d x d covariance are estimated from its n samples, and from n <= d "
                "samples the covariance is singular (rank at most n - 1), so the distance reflects the "
                "estimate, not the motion; a floor needs a reference of more than 2d samples (both halves > d)")


def floor_warnings(support: dict[str, tuple[int, int, str]]) -> list[str]:
    """One short text per metric whose real-vs-real floor the reference halves cannot support:
    no more samples in the smaller half than the features have dimensions (see :data:`FLOOR_REASON`)."""
    return [f"{METRIC_NAMES[m]}: {n} {unit} per half <= {d} dimensions"
            for m, (n, d, unit) in support.items() if d and n <= d]


def _clip_table(feats: Sequence[ClipFeatures], score_cols: Sequence[str]):
    import pandas as pd

    rows = []
    for c in feats:
        r = {"system": "reference" if c.group == REFERENCE else c.group,
             "clip": Path(c.path).stem, "path": c.path, "error": c.error or c.score_error,
             "frames": c.n_frames, "windows": c.n_windows, "pfc": c.pfc}
        for k in score_cols:
            r[k] = c.scores.get(k, np.nan)
        rows.append(r)
    return pd.DataFrame(rows)


def _n_raw_total(cs: FeatureSet) -> int:
    from evalkit.distribution.metrics import _n_raw

    return int(sum(_n_raw(c) for c in cs.clips))


def _protocol(ext, ref, groups, failed, names, n_boot, seed, a, b, audio, score) -> dict[str, Any]:
    wp = ext.window_protocol
    return {
        "evalkit_compare": 1,
        "window_frames": wp.window,
        "stride_frames": wp.stride,
        "fps": wp.fps,
        "window_seconds": wp.window / wp.fps,
        "joint_set": list(wp.joint_set),
        "normalisation": {"fgd": wp.normalisation,
                          "fgd_raw_fgd_pose_and_l1_div": "frame: minus that frame's hips, heading-aligned, in body "
                                                          "heights"},
        "fgd_raw": {"definition": "GENEA 'FGD on raw data space': Fréchet distance of flattened windows of "
                                  "frame-normalised poses (hips dropped), each coordinate standardised by the "
                                  "reference's mean and std over frames",
                    "window_frames": wp.window, "stride_frames": raw_stride(wp.window),
                    "dims": wp.window * 3 * (len(wp.joint_set) - 1), "min_std_body_heights": RAW_MIN_STD,
                    "bootstrap_spread_dims": RAW_BOOTSTRAP_DIMS,
                    "n_ref_windows": _n_raw_total(ref),
                    "bootstrap_spread": "replicates in the leading principal directions of the pooled covariance; "
                                        "value from every dimension"},
        "fgd_pose": "Fréchet distance of single frame-normalised poses (54 numbers), no window",
        "extractor": {"source": ext.source, "extractor_hash": ext.extractor_hash,
                      "protocol_hash": ext.card["protocol_hash"], "protocol": ext.card["protocol"]},
        "kinetic_features": {"definition": "AIST++ kinetic features, precedence bug of the public code fixed "
                                           "(evalkit.features.kinetic)", "sliding_window": 2,
                             "dims": 3 * len(wp.joint_set), "fps": wp.fps, "unit": "metres"},
        "geometric_features": {"definition": "32 Müller et al. 2005 relational features, AIST++ set "
                                             "(evalkit.distribution.geometric)", "dims": N_FEATURES, "fps": wp.fps},
        "fid_normalisation": "each feature minus the reference mean, divided by the reference std (1 where ~0; "
                             f"geometric features' std at least {GEOMETRIC_MIN_SCALE}, a fraction of frames)",
        "pfc": "EDGE, x1e4, foot speeds in metres per frame at the protocol fps",
        "bootstrap": {"replicates": n_boot, "seed": seed, "resampled": "clips, with replacement, system and "
                      "reference independently", "interval": "95 %, estimate + percentile deviations of the "
                      "replicates from their median", "l1_div_frames_at_most": L1_BOOTSTRAP_FRAMES},
        "reference": {"n_clips": ref.n, "n_windows": ref.n_windows, "n_failed": len(failed.get(REFERENCE, [])),
                      "files": [c.path for c in groups[REFERENCE]]},
        "real_vs_real": {"split_seed": seed, "half_a_clips": int(len(a)), "half_b_clips": int(len(b)),
                         "half_a": [groups[REFERENCE][i].path for i in a],
                         "half_b": [groups[REFERENCE][i].path for i in b]},
        "systems": {n: {"n_clips": len(groups.get(n, [])), "n_windows": int(sum(c.n_windows for c in groups.get(n, []))),
                        "n_failed": len(failed.get(n, []))} for n in names},
        "audio": audio,
        "score_metrics": bool(score),
        "versions": versions(),
        "platform": platform.platform(),
        "command": " ".join(sys.argv) if sys.argv and sys.argv[0].endswith("evalkit") else None,
    }


# ---------------------------------------------------------------------------------------------
# outputs


def _latex_escape(s: str) -> str:
    rep = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
           "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": "$<$", ">": "$>$"}
    return "".join(rep.get(ch, ch) for ch in str(s))


def _fmt(v: float) -> str:
    if not np.isfinite(v):
        return "--"
    a = abs(v)
    return f"{v:.3g}" if a < 1000 else f"{v:,.0f}"


def latex_table(cmp: Comparison) -> str:
    """A LaTeX ``table`` (booktabs) of the headline metrics, each ``value [low, high]``."""
    t = cmp.table
    cols = [m for m in HEADLINE + ("beat_consistency",) if m in t]
    heads = {"fgd": "FGD", "fgd_raw": "FGD$_\\text{raw}$", "fgd_pose": "FGD$_\\text{pose}$", "fid_k": "FID$_k$",
             "fid_g": "FID$_g$",
             "div_k": "Div$_k$", "div_g": "Div$_g$", "l1_div": "L1div", "pfc": "PFC", "beat_consistency": "BC"}
    lines = ["\\begin{table}[t]", "\\centering", "\\small",
             "\\begin{tabular}{l r " + " ".join("c" for _ in cols) + "}", "\\toprule",
             "System & clips & " + " & ".join(heads[c] for c in cols) + " \\\\", "\\midrule"]
    for _, r in t.iterrows():
        if r["system"] == REAL_VS_REAL:
            lines.append("\\midrule")
        cells = [f"{_fmt(r[c])} [{_fmt(r[c + '_ci_low'])}, {_fmt(r[c + '_ci_high'])}]" for c in cols]
        lines.append(f"{_latex_escape(r['system'])} & {int(r['n_clips']) if np.isfinite(r['n_clips']) else 0} & "
                     + " & ".join(cells) + " \\\\")
    p = cmp.protocol
    lines += ["\\bottomrule", "\\end{tabular}",
              "\\caption{Distribution metrics against " + str(p["reference"]["n_clips"]) + " reference clips ("
              + str(p["reference"]["n_windows"]) + " windows), 95\\,\\% bootstrap intervals over clips ("
              + str(p["bootstrap"]["replicates"]) + " replicates). FGD: windows of " + str(p["window_frames"])
              + " frames, stride " + str(p["stride_frames"]) + ", at " + f"{p['fps']:g}" + " fps, "
              + str(len(p["joint_set"])) + " joints reached through joint roles, extractor "
              + _latex_escape(p["extractor"]["extractor_hash"]) + ". FGD$_\\text{raw}$: flattened windows of "
              + str(p["fgd_raw"]["window_frames"]) + " frames, stride " + str(p["fgd_raw"]["stride_frames"])
              + ", standardised poses (GENEA); FGD$_\\text{pose}$: single poses. FID$_k$/FID$_g$/Div: AIST++ kinetic and "
              "geometric features. Real vs real: the reference split in halves. Lower is better for FGD, FID and "
              "PFC."
              + (" Real-vs-real floor not meaningful for "
                 + _latex_escape(", ".join(w.split(":")[0] for w in p["real_vs_real"].get("unsupported", [])))
                 + ": the reference halves have no more samples than the features have dimensions "
                 "(a singular covariance)."
                 if p.get("real_vs_real", {}).get("unsupported") else "")
              + "}", "\\label{tab:distribution}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def figure(cmp: Comparison):
    """A matplotlib Figure: FGD, raw-pose FGD, FID_k and FID_g, each metric on its own axis.

    Dots with 95 % intervals, one row per system and the real-vs-real floor (grey). Each axis is
    scaled to the systems' values and intervals, so every system shows whatever the floor; a
    floor beyond the axis is drawn at its edge with an arrow and its value, and one the
    reference halves cannot support (:func:`floor_warnings`) is labelled so. Axes whose values
    span more than :data:`LOG_SPAN` are logarithmic.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    t = cmp.table
    metrics = ["fgd", "fgd_raw", "fid_k", "fid_g"]
    titles = {"fgd": "FGD (autoencoder)", "fgd_raw": "FGD, raw windows (GENEA)", "fid_k": "FID$_k$ (kinetic)",
              "fid_g": "FID$_g$ (geometric)"}
    unsupported = {m for m in metrics
                   if f"{METRIC_NAMES[m]}:" in _floor_text(t)}
    fig = Figure(figsize=(3.2 * len(metrics), 3.4 + 0.22 * len(t)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(metrics))
    names = list(t["system"])
    y = np.arange(len(names))
    is_floor = np.array([n == REAL_VS_REAL for n in names])
    for ax, m in zip(axes, metrics):
        _metric_axis(ax, t, m, y, is_floor, m in unsupported)
        ax.set_yticks(y, names if ax is axes[0] else [""] * len(names))
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_title(titles[m], fontsize=10)
        ax.set_xlabel("distance to the reference (lower is better)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    p = cmp.protocol
    fig.suptitle(f"vs {p['reference']['n_clips']} reference clips · window {p['window_frames']} / stride "
                 f"{p['stride_frames']} frames at {p['fps']:g} fps · extractor {p['extractor']['extractor_hash']} · "
                 f"95 % bootstrap intervals · grey: real vs real (reference halves)", fontsize=8)
    return fig


def _floor_text(t) -> str:
    """The real-vs-real row's floor warning ('' when none)."""
    if "floor_warning" not in t or not (t["system"] == REAL_VS_REAL).any():
        return ""
    v = t.loc[t["system"] == REAL_VS_REAL, "floor_warning"].iloc[0]
    return v if isinstance(v, str) else ""


#: An axis whose positive values span more than this factor is drawn logarithmic.
LOG_SPAN = 30.0


def _metric_axis(ax, t, m: str, y: np.ndarray, is_floor: np.ndarray, unsupported: bool) -> None:
    """One metric's panel of :func:`figure`: the systems set the scale, the floor is marked."""
    v = t[m].to_numpy(float)
    lo = t[f"{m}_ci_low"].to_numpy(float)
    hi = t[f"{m}_ci_high"].to_numpy(float)
    lo, hi = np.where(np.isfinite(lo), lo, v), np.where(np.isfinite(hi), hi, v)
    sys_hi = hi[~is_floor & np.isfinite(hi)]
    top = float(sys_hi.max()) if sys_hi.size else float(np.nanmax(np.append(hi, 1.0)))
    top = top if top > 0 else 1.0
    positive = v[np.isfinite(v) & (v > 0) & ~is_floor]
    log = positive.size >= 2 and positive.max() / positive.min() > LOG_SPAN
    if log:
        bottom = float(np.nanmin(np.where(lo > 0, lo, np.nan)[~is_floor])) if np.any((lo > 0) & ~is_floor) else positive.min()
        ax.set_xscale("log")
        ax.set_xlim(bottom / 1.5, top * 1.5)
        right = top * 1.5
    else:
        ax.set_xlim(0, top * 1.15)
        right = top * 1.15
    for yi, val, l, h, floor in zip(y, v, lo, hi, is_floor):
        if not np.isfinite(val):
            ax.text(0.02, yi, "–", transform=ax.get_yaxis_transform(), va="center", fontsize=8)
            continue
        color = "0.55" if floor else "C0"
        shown = min(val, right) if not (log and val <= 0) else ax.get_xlim()[0]
        if floor and val > right:  # off the systems' scale: at the edge, with its value
            ax.annotate(f"{_fmt(val)} →", (right, yi), xytext=(-4, 0), textcoords="offset points", ha="right",
                        va="center", fontsize=7, color="0.35")
        else:
            ax.errorbar(shown, yi, xerr=[[max(shown - max(l, ax.get_xlim()[0]), 0)], [max(min(h, right) - shown, 0)]],
                        fmt="o", color=color, ecolor=color, ms=4, capsize=2)
            ax.annotate(_fmt(val) if abs(val) >= 1e-9 else "0", (shown, yi), xytext=(0, 5), textcoords="offset points", ha="center",
                        fontsize=6, color="0.3")
        if floor and unsupported:
            ax.annotate("halves too small: floor not meaningful", (0.98, yi), xycoords=ax.get_yaxis_transform(),
                        xytext=(0, -9), textcoords="offset points", ha="right", va="center", fontsize=6,
                        color="#b00000")


def check_outputs(out: str | os.PathLike) -> Path:
    """Refuse, before any work, an output folder that cannot be written."""
    from evalkit.atomic import check_writable

    o = Path(out)
    if o.exists() and not o.is_dir():
        raise InputError(f"--out {o}: is a file, expected a folder")
    try:
        o.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {o}: cannot create the folder ({exc.strerror})") from None
    check_writable(o / "distribution.csv")
    return o


def write_outputs(cmp: Comparison, out: str | os.PathLike) -> list[Path]:
    """Write the table (CSV, LaTeX), the figure (PNG, PDF), the per-clip table and the protocol."""
    from evalkit.atomic import atomic_path, write_text
    from evalkit.csvsafe import neutralise_frame

    o = check_outputs(out)
    written = []
    write_text(o / "distribution.csv", neutralise_frame(cmp.table).to_csv(index=False))
    write_text(o / "clips.csv", neutralise_frame(cmp.clips).to_csv(index=False))
    write_text(o / "distribution.tex", latex_table(cmp))
    fig = figure(cmp)
    for ext in ("png", "pdf"):  # the figure's own canvas (Agg): no pyplot state
        with atomic_path(o / f"distribution.{ext}", suffix=f".{ext}") as tmp:
            fig.savefig(tmp, dpi=150, format=ext)
    write_text(o / "protocol.json", json.dumps(cmp.protocol, indent=1, default=_json_default) + "\n")
    written += [o / f for f in OUTPUT_FILES]
    return written


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)
