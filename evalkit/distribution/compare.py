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
from evalkit.distribution.embedding import Extractor, check_protocol, load_extractor, versions
from evalkit.distribution.diversity import GEOMETRIC_MIN_SCALE
from evalkit.distribution.extract import ClipFeatures, ExtractOptions, extract_all
from evalkit.distribution.geometric import N_FEATURES
from evalkit.distribution.metrics import (ClipSet, L1_BOOTSTRAP_FRAMES, RAW_BOOTSTRAP_DIMS, RAW_MIN_STD, half_split,
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
            load_kwargs: Mapping[str, Any] | None = None, roles: Mapping[str, str] | None = None,
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
        load_kwargs, roles: how files are read; role overrides.
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
    opts = ExtractOptions(extractor=ext, load_kwargs=dict(load_kwargs or {}), roles=roles, score=score,
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
    ref = ClipSet(ref_clips)
    rows = []
    wp = ext.window_protocol
    for i, name in enumerate(system_names):
        clips = groups.get(name, [])
        row: dict[str, Any] = {"system": name}
        if not clips:
            warnings.warn(f"system {name}: no clip could be read")
            row.update({"n_clips": 0.0})
        else:
            row.update(set_metrics(ClipSet(clips), ref, n_boot, seed + 1 + i, score_cols))
        row["n_failed"] = float(len(failed.get(name, [])))
        rows.append(row)
    a, b = half_split(len(ref_clips), seed)
    rvr = {"system": REAL_VS_REAL}
    rvr.update(set_metrics(ref.subset(a), ref.subset(b), n_boot, seed, score_cols))
    rvr["n_failed"] = float(len(failed.get(REFERENCE, [])))
    rows.append(rvr)
    table = pd.DataFrame(rows)
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
    table.loc[table["system"] == REAL_VS_REAL, "n_ref_windows"] = ref.subset(b).n_windows
    table["bootstrap"] = n_boot
    clips = _clip_table(feats, score_cols)
    protocol = _protocol(ext, ref, groups, failed, system_names, n_boot, seed, a, b, audio, score)
    return Comparison(table=table, clips=clips, protocol=protocol)


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


def _n_raw_total(cs: ClipSet) -> int:
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
              "PFC.}", "\\label{tab:distribution}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def figure(cmp: Comparison):
    """A matplotlib Figure: FGD, raw-pose FGD, FID_k and FID_g per system with intervals."""
    from matplotlib.figure import Figure

    t = cmp.table
    metrics = ["fgd", "fgd_raw", "fid_k", "fid_g"]
    titles = {"fgd": "FGD (autoencoder)", "fgd_raw": "FGD, raw windows (GENEA)", "fid_k": "FID$_k$ (kinetic)",
              "fid_g": "FID$_g$ (geometric)"}
    fig = Figure(figsize=(3.2 * len(metrics), 3.4 + 0.12 * len(t)), layout="constrained")
    axes = fig.subplots(1, len(metrics))
    names = list(t["system"])
    y = np.arange(len(names))
    for ax, m in zip(axes, metrics):
        v = t[m].to_numpy(float)
        lo = t[f"{m}_ci_low"].to_numpy(float)
        hi = t[f"{m}_ci_high"].to_numpy(float)
        err = np.vstack([np.nan_to_num(v - lo), np.nan_to_num(hi - v)])
        colors = ["0.6" if n == REAL_VS_REAL else "C0" for n in names]
        ax.barh(y, np.nan_to_num(v), xerr=err, color=colors, capsize=3)
        ax.set_yticks(y, names if ax is axes[0] else [""] * len(names))
        ax.invert_yaxis()
        ax.set_title(titles[m], fontsize=10)
        ax.set_xlim(left=0)
    p = cmp.protocol
    fig.suptitle(f"vs {p['reference']['n_clips']} reference clips · window {p['window_frames']} / stride "
                 f"{p['stride_frames']} frames at {p['fps']:g} fps · extractor {p['extractor']['extractor_hash']} · "
                 f"95 % bootstrap intervals", fontsize=8)
    return fig


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
    for ext in ("png", "pdf"):
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
