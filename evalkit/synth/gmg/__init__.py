"""Gesture motion graph (GMG; Fernández-Baena thesis ch. 4): speech-driven gesture synthesis with
the synchrony and intensity rules.

Pipeline (each step in its own module; this one ties them together)::

    from evalkit.synth.gmg import build_gesture_database, build_gmg, speech_input, synthesize
    db = build_gesture_database(["gestures/"])           # GPs with apex and GSI  (gmg.db)
    gmg = build_gmg(db, threshold=0.6)                   # E1/E2 edges, largest SCC (gmg.graph)
    speech = speech_input("utterance.wav")               # PAPT, PSI, pauses        (gmg.plan)
    result = synthesize(gmg, speech, variant="sync+intensity", seed=0)
    motion, manifest, objective = result                 # plan (gmg.plan), clip (gmg.realise),
    save_result(result, "out/")                          # report (gmg.report)

Variants (:data:`VARIANTS`): ``random`` (random walk, GPs at captured speed), ``sync`` (apexes on
the anchors ``PAPT - anticipation``) and ``sync+intensity`` (also GSI fitted to PSI by the
intensity rule). Outputs are deterministic for a given seed.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.motion import Motion, write_bvh
from evalkit.gesture_speech import DEFAULT_RULES, Rules
from evalkit.synth.gmg.db import (
    CMU_NOTE,
    DatabaseConfig,
    GestureDatabase,
    build_gesture_database,
    cmu_gesture_database,
    is_bundled_cmu,
)
from evalkit.synth.gmg.graph import (
    DEFAULT_THRESHOLD,
    TABLE_THRESHOLDS,
    GestureMotionGraph,
    build_gmg,
    gmg_joint_weights,
    gmg_statistics,
    posture_distance,
    statistics_latex,
    write_statistics,
)
from evalkit.synth.gmg.plan import VARIANTS, Placement, Plan, SpeechInput, SynthConfig, detect_pauses, make_plan, speech_input
from evalkit.synth.gmg.realise import Realised, realise_gesture_plan
from evalkit.synth.gmg.report import clip_checks, dumps, objective_report, source_kinematics, write_text

__all__ = [
    "CMU_NOTE", "DatabaseConfig", "GestureDatabase", "build_gesture_database", "cmu_gesture_database", "is_bundled_cmu",
    "DEFAULT_THRESHOLD", "TABLE_THRESHOLDS", "GestureMotionGraph", "build_gmg", "gmg_joint_weights",
    "gmg_statistics", "posture_distance", "statistics_latex", "write_statistics",
    "VARIANTS", "Placement", "Plan", "SpeechInput", "SynthConfig", "detect_pauses", "make_plan", "speech_input",
    "Realised", "realise_gesture_plan", "GMGResult", "synthesize", "save_result", "objective_table", "summarize_objective",
    "pooled_objective", "blind_order", "BLIND_FIGURES", "variant_slug", "clip_checks", "objective_report", "source_kinematics",
    "MANIFEST_FORMAT",
]

MANIFEST_FORMAT = "evalkit-gmg"
SEPARATE_NOTE = ("the gestures were captured without this speech: the GMG selected and timed captured "
                 "gesture phrases for it")


def variant_slug(variant: str) -> str:
    """File-name form of a variant: ``random``, ``sync``, ``sync-intensity``."""
    return variant.replace("+", "-")


@dataclass(frozen=True, eq=False)
class GMGResult:
    """One synthesised clip. Unpacks as ``motion, manifest, objective``.

    Attributes:
        motion: the clip (database skeleton, metres); plan: the plan it renders.
        speech: the speech input; manifest: JSON-ready description (see :func:`save_result`).
        objective: the objective report; quality: the clip checks.
        realised: the realised plan (seam frames).
    """

    motion: Motion
    plan: Plan
    speech: SpeechInput
    manifest: dict
    objective: dict
    quality: dict
    realised: Realised

    def __iter__(self):
        return iter((self.motion, self.manifest, self.objective))


def synthesize(
    gmg: GestureMotionGraph,
    speech: SpeechInput | str | os.PathLike,
    variant: str = "sync+intensity",
    rules: Rules | None = None,
    seed: int = 0,
    config: SynthConfig = SynthConfig(),
    fps: float | None = None,
    name: str | None = None,
    source: dict | None = None,
) -> GMGResult:
    """Synthesise gestures for a speech.

    Args:
        gmg: the graph (:func:`build_gmg`).
        speech: a :class:`SpeechInput` (:func:`speech_input`), an
            :class:`~evalkit.speech.SpeechAnalysis`, or an audio path (accents detected).
        variant: ``random``, ``sync`` or ``sync+intensity``.
        rules: synchrony and intensity rules (default: :data:`evalkit.gesture_speech.DEFAULT_RULES`).
        seed: random seed (same inputs and seed -> the same clip).
        config: planning parameters; fps: output frame rate (default: the database's).
        name: output name (default ``<speech name>_<variant slug>``).
        source: precomputed :func:`~evalkit.synth.gmg.report.source_kinematics` of the database.

    Returns:
        a :class:`GMGResult` (``motion, manifest, objective = result``).
    """
    rules = rules or DEFAULT_RULES
    if not isinstance(speech, SpeechInput):
        if hasattr(speech, "papts") and hasattr(speech, "intensity"):  # an evalkit.speech.SpeechAnalysis
            speech = SpeechInput.from_analysis(speech)
        else:
            speech = speech_input(speech)
    plan = make_plan(gmg, speech, rules, variant, config, seed)
    name = name or f"{speech.name}_{variant_slug(variant)}"
    realised = realise_gesture_plan(gmg, plan, fps, name=name)
    objective = objective_report(realised, speech, plan, rules, gmg.database, gmg.database.config.phase)
    quality = clip_checks(realised, gmg.database, source)
    db = gmg.database
    notes = [SEPARATE_NOTE]
    if db.note:
        notes.append(db.note)
    if rules.constructed:
        notes.append("the rules were fitted on constructed takes")
    if rules.synchrony.n == 0 or rules.intensity.n == 0:
        notes.append("rules: " + "; ".join(r.source for r in (rules.synchrony, rules.intensity)))
    variant_name = f"gmg-{variant_slug(variant)}"
    manifest = {
        "format": MANIFEST_FORMAT,
        "version": 1,
        "name": name,
        "variant": variant,
        "seed": int(seed),
        "motion": f"{name}.bvh",
        "audio": speech.audio,
        "fps": realised.motion.fps,
        "frames": realised.motion.n_frames,
        "notes": notes,
        "stimulus": {"id": f"{speech.name}.{variant_name}", "item": speech.name, "system": variant_name,
                     "file": f"{name}.bvh", "audio": speech.audio},
        "speech": speech.summary(),
        "gesture_database": db.summary(),
        "graph": gmg.summary(),
        "rules": rules.to_dict(),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(config).items()},
        "plan": {"cost": plan.cost, "placements": [
            {**asdict(p), "clip": db.phrases[p.gp].clip, "start_frame": db.phrases[p.gp].start_frame,
             "end_frame": db.phrases[p.gp].end_frame} for p in plan.placements]},
        "objective": objective,
        "quality": quality,
    }
    return GMGResult(realised.motion, plan, speech, manifest, objective, quality, realised)


def save_result(result: GMGResult, folder: str | os.PathLike, copy_audio: bool = False) -> dict[str, Path]:
    """Write ``<name>.bvh`` and ``<name>.json`` (the manifest) into ``folder``; with
    ``copy_audio`` also ``<name>.wav`` (the manifest then points at the copy). Files are written
    to temporary names and renamed."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    name = result.manifest["name"]
    manifest = dict(result.manifest)
    out = {"motion": write_bvh(result.motion, d / f"{name}.bvh")}
    if copy_audio and result.speech.audio:
        import shutil

        src = Path(result.speech.audio)
        dst = d / f"{name}{src.suffix or '.wav'}"
        tmp = dst.with_name(dst.name + ".tmp")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
        out["audio"] = dst
        manifest["audio"] = dst.name
        manifest["stimulus"] = {**manifest["stimulus"], "audio": dst.name}
    out["manifest"] = write_text(d / f"{name}.json", dumps(manifest))
    return out


_TABLE_KEYS = ("accents_covered", "offset_mean_s", "offset_sd_s", "offset_mad_rule_s", "offset_within_rule",
               "gsi_psi_mae", "gsi_psi_in_margin", "gsi_psi_r", "n_pairs")


def objective_table(results: Iterable[GMGResult]) -> pd.DataFrame:
    """One row per output: item, variant, counts, and the figures of the objective report
    (``planned_*``, ``realised_*``, ``analysed_*``)."""
    rows = []
    for r in results:
        o = r.objective
        row = {"item": r.speech.name, "variant": o["variant"], "seed": r.plan.seed, "n_accents": o["n_accents"],
               "n_gestures": o["n_gestures"]}
        for part in ("planned", "realised", "analysed"):
            for k in _TABLE_KEYS:
                v = o.get(part, {}).get(k)
                row[f"{part}_{k}"] = np.nan if v is None else v
        row["analysed_planned_found_share"] = _nan(o.get("analysed", {}).get("planned_found_share"))
        row["pops"] = r.quality["pops"]
        row["bone_length_drift"] = r.quality["bone_length_drift"]
        rows.append(row)
    return pd.DataFrame(rows)


def _nan(v) -> float:
    return np.nan if v is None else float(v)


#: The blind order's figures: column of :func:`objective_table` and whether lower or higher is better.
BLIND_FIGURES = (("analysed_offset_mad_rule_s", "lower"), ("analysed_gsi_psi_in_margin", "higher"),
                 ("analysed_planned_found_share", "higher"))


def blind_order(table: pd.DataFrame, figures: Sequence[tuple[str, str]] = BLIND_FIGURES) -> pd.DataFrame:
    """The variants' order as the blind analysis sees it, utterance by utterance.

    For every figure (default: |apex–PAPT offset − rule mean|, share of pairs inside the
    intensity margin, share of planned strokes found) and every pair of variants ``a``, ``b``:
    the utterances where both have a value (``n``), the two means, ``win_rate_a`` (share of those
    utterances where ``a`` is better; ties count half) and a two-sided Wilcoxon signed-rank test
    of the paired values (``wilcoxon_w``, ``p_value``; NaN with fewer than 2 pairs or no
    difference). One row per (figure, a, b) with ``a`` before ``b`` in :data:`VARIANTS`.
    """
    from scipy.stats import wilcoxon

    rows = []
    variants = [v for v in VARIANTS if v in set(table["variant"])]
    for col, better in figures:
        if col not in table.columns:
            continue
        wide = table.pivot_table(index="item", columns="variant", values=col, aggfunc="mean")
        for i, a in enumerate(variants):
            for b in variants[i + 1:]:
                if a not in wide or b not in wide:
                    continue
                d = wide[[a, b]].dropna()
                x, y = d[a].to_numpy(float), d[b].to_numpy(float)
                diff = (y - x) if better == "lower" else (x - y)  # > 0: a is better
                win = float(np.mean((diff > 0) + 0.5 * (diff == 0))) if len(d) else np.nan
                w = p = np.nan
                if len(d) >= 2 and np.any(diff != 0):
                    res = wilcoxon(x, y)
                    w, p = float(res.statistic), float(res.pvalue)
                rows.append({"figure": col, "better": better, "variant_a": a, "variant_b": b, "n": len(d),
                             "mean_a": float(x.mean()) if len(d) else np.nan, "mean_b": float(y.mean()) if len(d) else np.nan,
                             "win_rate_a": win, "wilcoxon_w": w, "p_value": p})
    return pd.DataFrame(rows, columns=["figure", "better", "variant_a", "variant_b", "n", "mean_a", "mean_b",
                                       "win_rate_a", "wilcoxon_w", "p_value"])


def summarize_objective(table: pd.DataFrame) -> pd.DataFrame:
    """Per variant: the mean of every figure of :func:`objective_table` over items, with the
    offsets pooled (mean of per-item means)."""
    num = table.drop(columns=["item", "seed"], errors="ignore")
    order = [v for v in VARIANTS if v in set(num["variant"])]
    out = num.groupby("variant").mean(numeric_only=True).reindex(order)
    out.insert(0, "outputs", table.groupby("variant").size().reindex(order))
    return out


def pooled_objective(results: Iterable[GMGResult], rules: Rules | None = None, reading: str = "realised") -> pd.DataFrame:
    """The objective table a paper would show: per variant, every apex–accent pair of every
    output pooled (``reading``: ``planned``, ``realised`` or ``analysed``).

    Columns: ``outputs, accents, gestures, pairs, accents_covered`` (pooled fraction),
    ``offset_mean_s, offset_sd_s, offset_mad_rule_s, offset_within_rule`` (PAPT − apex),
    ``gsi_psi_mae, gsi_psi_in_margin, gsi_psi_r``.
    """
    rules = rules or DEFAULT_RULES
    sync, inten = rules.synchrony, rules.intensity
    acc: dict[str, dict] = {}
    for r in results:
        o = r.objective
        part = o.get(reading)
        if part is None:
            raise InputError(f"no {reading!r} reading in the objective report of {r.manifest['name']}")
        a = acc.setdefault(o["variant"], {"outputs": 0, "accents": 0, "gestures": 0, "covered": 0.0, "pairs": []})
        a["outputs"] += 1
        a["accents"] += o["n_accents"]
        a["gestures"] += o["n_gestures"]
        a["covered"] += (part["accents_covered"] or 0.0) * o["n_accents"]
        a["pairs"].extend(part["pairs"])
    rows = []
    for v in [v for v in VARIANTS if v in acc]:
        a = acc[v]
        p = np.array([[np.nan if x is None else x for x in row] for row in a["pairs"]], dtype=float).reshape(-1, 4)
        off = p[:, 1] - p[:, 0]
        g, s = p[:, 2], p[:, 3]
        ok = np.isfinite(g) & np.isfinite(s)
        dev = np.abs(g[ok] - inten.predict(s[ok]))
        rows.append({
            "variant": v, "outputs": a["outputs"], "accents": a["accents"], "gestures": a["gestures"], "pairs": len(p),
            "accents_covered": a["covered"] / a["accents"] if a["accents"] else np.nan,
            "offset_mean_s": off.mean() if len(off) else np.nan,
            "offset_sd_s": off.std(ddof=1) if len(off) > 1 else np.nan,
            "offset_mad_rule_s": np.abs(off - sync.mean_s).mean() if len(off) else np.nan,
            "offset_within_rule": np.mean(sync.accepts(off)) if len(off) else np.nan,
            "gsi_psi_mae": dev.mean() if len(dev) else np.nan,
            "gsi_psi_in_margin": np.mean(inten.accepts(s[ok], g[ok])) if len(dev) else np.nan,
            "gsi_psi_r": np.corrcoef(g[ok], s[ok])[0, 1] if ok.sum() >= 3 else np.nan,
        })
    return pd.DataFrame(rows).set_index("variant")
