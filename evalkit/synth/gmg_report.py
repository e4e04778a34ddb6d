"""Objective report and clip checks of a GMG output, and writing outputs (BVH + manifest JSON).

**Objective report** (per output, for both the plan and the rendered clip):

* ``offset_*``: apex–PAPT offsets (``PAPT - apex``, seconds; > 0 = apex before the accent peak)
  of stroke apexes paired one-to-one with accents by :func:`evalkit.sync.match_apexes` (nearest
  in time, at most ``max_distance_s`` apart, as in the thesis): mean, SD, median, the mean
  absolute deviation from the synchrony rule's mean (``offset_mad_rule_s``) and the fraction
  within one rule SD of it (``offset_within_rule``).
* ``accents_covered``: fraction of accents that have a stroke apex at the rule's offset give or
  take one rule SD (``PAPT - apex`` in ``mean ± sd``).
* ``gsi_psi_mae``: mean ``|GSI - (a + b PSI)|`` over the pairs (distance from the intensity
  rule's line), ``gsi_psi_in_margin``: fraction of pairs the rule accepts, ``gsi_psi_r``: Pearson
  correlation of GSI and PSI.

"planned" uses the plan's apex times and predicted GSIs; "measured" re-analyses the rendered
clip with the gesture analysis (:func:`evalkit.gesture.analyze_gestures`: strokes, apexes, GSI)
exactly as the capture was analysed, so it includes every effect of blending and time scaling.

**Clip checks**: no NaN; bone-length drift of every joint whose translation is constant (must be
0 to rounding); the largest root-relative joint speed between consecutive frames and the largest
root-relative joint acceleration, at seams (frames within one of a seam) against the largest
values in the source recordings — a pop is a jump faster than anything captured.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from evalkit.sync import Rules, match_apexes


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text to ``path`` via a temporary file in the same folder, then rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=p.suffix, dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return p


def _num(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def timing_metrics(apex_times, gsi, papts, psi, rules: Rules, max_distance_s: float = 0.5) -> dict:
    """Offsets, coverage and GSI–PSI agreement of strokes against accents (see the module
    docstring). All inputs are 1-D arrays (seconds, [0, 1])."""
    apex = np.asarray(apex_times, dtype=float)
    g = np.asarray(gsi, dtype=float)
    papt = np.asarray(papts, dtype=float)
    s = np.asarray(psi, dtype=float)
    sync, inten = rules.synchrony, rules.intensity
    pairs = match_apexes(apex, papt, max_distance_s=max_distance_s, expected_offset_s=0.0)
    ia = np.array([a for a, _ in pairs], dtype=int)
    ib = np.array([b for _, b in pairs], dtype=int)
    off = papt[ib] - apex[ia] if len(pairs) else np.zeros(0)
    if len(apex) and len(papt):
        all_off = papt[:, None] - apex[None, :]
        covered = np.any(np.abs(all_off - sync.mean_s) <= sync.sd_s + 1e-12, axis=1)
    else:
        covered = np.zeros(len(papt), dtype=bool)
    gp, sp = (g[ia], s[ib]) if len(pairs) else (np.zeros(0), np.zeros(0))
    ok = np.isfinite(gp) & np.isfinite(sp)
    gp, sp = gp[ok], sp[ok]
    dev = np.abs(gp - inten.predict(sp))
    r = float(np.corrcoef(gp, sp)[0, 1]) if len(gp) >= 3 and np.ptp(gp) > 0 and np.ptp(sp) > 0 else float("nan")
    return {
        "n_strokes": int(len(apex)),
        "n_pairs": int(len(pairs)),
        "accents_covered": _num(covered.mean()) if len(papt) else None,
        "offset_mean_s": _num(off.mean()) if len(off) else None,
        "offset_sd_s": _num(off.std(ddof=1)) if len(off) > 1 else None,
        "offset_median_s": _num(np.median(off)) if len(off) else None,
        "offset_mad_rule_s": _num(np.mean(np.abs(off - sync.mean_s))) if len(off) else None,
        "offset_within_rule": _num(np.mean(np.abs(off - sync.mean_s) <= sync.sd_s + 1e-12)) if len(off) else None,
        "gsi_psi_mae": _num(dev.mean()) if len(dev) else None,
        "gsi_psi_in_margin": _num(np.mean(inten.accepts(sp, gp))) if len(dev) else None,
        "gsi_psi_r": _num(r),
        "offsets_s": [round(float(x), 4) for x in off],
    }


def objective_report(rendered, speech, plan, rules: Rules, phase_config=None, gsi_scale=None) -> dict:
    """Objective figures of one output: planned and measured (see the module docstring)."""
    from evalkit.gesture import PhaseConfig, analyze_gestures

    pl = plan.placements
    planned = timing_metrics([p.apex_time for p in pl], [p.gsi for p in pl], speech.papts, speech.psi, rules)
    g = analyze_gestures(rendered.motion, phase_config or PhaseConfig(), gsi_scale, clip=rendered.motion.name)
    measured = timing_metrics(g.apex_times, g.gsi, speech.papts, speech.psi, rules)
    return {
        "variant": plan.variant,
        "n_accents": int(len(speech.papts)),
        "n_gestures": int(len(pl)),
        "gestures_on_anchor": int(sum(p.anchor >= 0 for p in pl)),
        "speech_duration_s": float(speech.duration),
        "clip_duration_s": float(rendered.motion.n_frames / rendered.motion.fps),
        "planned": planned,
        "measured": measured,
        "rule": {"synchrony_mean_s": rules.synchrony.mean_s, "synchrony_sd_s": rules.synchrony.sd_s,
                 "intercept": rules.intensity.intercept, "slope": rules.intensity.slope,
                 "margin": rules.intensity.margin},
    }


def _rel_kinematics(positions: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """``(frames-1,)`` largest root-relative joint speed (m/s) between frames and ``(frames-2,)``
    largest root-relative joint acceleration (m/s^2)."""
    rel = positions - positions[:, :1]
    v = np.diff(rel, axis=0) * fps
    a = np.diff(v, axis=0) * fps
    return np.linalg.norm(v, axis=-1).max(axis=1), np.linalg.norm(a, axis=-1).max(axis=1) if len(a) else np.zeros(0)


def source_kinematics(db) -> dict:
    """Largest root-relative joint speed and acceleration over all frames of the database's
    recordings (resampled to nothing: each at its own frame rate)."""
    vmax, amax = 0.0, 0.0
    for m in db.recordings.values():
        v, a = _rel_kinematics(m.positions, m.fps)
        vmax = max(vmax, float(v.max()) if len(v) else 0.0)
        amax = max(amax, float(a.max()) if len(a) else 0.0)
    return {"speed_max": vmax, "accel_max": amax}


def clip_checks(rendered, db, source: dict | None = None) -> dict:
    """Clip checks (see the module docstring)."""
    m = rendered.motion
    finite = bool(np.isfinite(m.rotations).all() and np.isfinite(m.translations).all())
    pos = m.positions
    parents = m.skeleton.parents
    const = np.ones(m.n_joints, dtype=bool)
    const[0] = False
    const &= np.ptp(m.translations, axis=0).max(axis=1) < 1e-9
    child = np.flatnonzero(const & (parents >= 0))
    lengths = np.linalg.norm(pos[:, child] - pos[:, parents[child]], axis=-1)
    med = np.median(lengths, axis=0)
    keep = med > 1e-3
    drift = float(((lengths.max(0) - lengths.min(0))[keep] / med[keep]).max()) if keep.any() else 0.0
    v, a = _rel_kinematics(pos, m.fps)
    seams = rendered.seams
    near_v = np.unique(np.clip(np.concatenate([seams - 1, seams]), 0, len(v) - 1))
    near_a = np.unique(np.clip(np.concatenate([seams - 2, seams - 1, seams]), 0, max(len(a) - 1, 0)))
    src = source or source_kinematics(db)
    out = {
        "finite": finite,
        "bone_length_drift": drift,
        "seams": int(len(seams)),
        "seam_speed_max": float(v[near_v].max()) if len(v) else 0.0,
        "seam_accel_max": float(a[near_a].max()) if len(a) else 0.0,
        "clip_speed_max": float(v.max()) if len(v) else 0.0,
        "clip_accel_max": float(a.max()) if len(a) else 0.0,
        "source_speed_max": src["speed_max"],
        "source_accel_max": src["accel_max"],
    }
    out["pops"] = bool(out["seam_speed_max"] > src["speed_max"] or out["seam_accel_max"] > src["accel_max"])
    return out


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o) if np.isfinite(o) else None
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def dumps(obj) -> str:
    """JSON text (NaN written as null)."""
    def clean(x):
        if isinstance(x, float) and not np.isfinite(x):
            return None
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(obj), indent=2, default=_json_default, ensure_ascii=False) + "\n"
