"""Objective report and clip checks of a GMG output, and writing outputs (BVH + manifest JSON).

**Objective report** (per output, for both the plan and the realised clip):

* ``offset_*``: apex–PAPT offsets (``PAPT - apex``, seconds; > 0 = apex before the accent peak)
  of stroke apexes paired one-to-one with accents by :func:`evalkit.gesture_speech.match_apexes` (nearest
  in time, at most ``max_distance_s`` apart, as in the thesis): mean, SD, median, the mean
  absolute deviation from the synchrony rule's mean (``offset_mad_rule_s``) and the fraction
  within the rule (``offset_within_rule``: :meth:`evalkit.gesture_speech.SynchronyRule.accepts`, the one
  definition shared with ``evalkit sync``: within ``SYNC_MARGIN_SD`` = 1 rule SD of its mean).
* ``accents_covered``: fraction of accents that have a stroke apex within the rule (same
  definition).
* ``gsi_psi_mae``: mean ``|GSI - (a + b PSI)|`` over the pairs (distance from the intensity
  rule's line), ``gsi_psi_in_margin``: fraction of pairs the rule accepts, ``gsi_psi_r``: Pearson
  correlation of GSI and PSI.

Three readings:

* ``planned``: the plan's apex times and predicted GSIs (exact by construction for the rule
  variants: it checks the planner).
* ``realised``: measured on the realised clip, GP by GP: the hand trajectories of the output
  (:func:`evalkit.gesture.hand_trajectories`), the peak speed inside each placed GP's stroke
  (its source frames mapped to output time), the apex by the gesture analysis' rule (``"stop"``:
  where the speed falls below ``apex_fraction`` of the peak before the stroke's end, else the
  slowest frame there; ``"peak"``: the peak) and the GSI
  from the gesture package's stroke features of that window. It includes every effect of time
  scaling and blending on timing and strength.
* ``analysed``: the realised clip re-analysed blind, exactly as capture is
  (:func:`evalkit.gesture.analyze_gestures`). The analysis keeps only strokes at least
  ``stroke_ratio`` (0.6) as fast as the fastest movement of their gesture phrase, and chained
  GPs without rest form one long phrase, so it finds only the strongest few strokes of a clip
  (and can take a fast captured preparation for the main stroke): informative, but a noisy
  reading of timing and strength. It also says how many planned strokes it finds
  (``planned_found_share``: an analysed apex within :data:`FOUND_WITHIN_S` of the planned one).

**Clip checks**: no NaN; bone-length drift of every joint whose translation is constant (must be
0 to rounding); the largest root-relative joint speed between consecutive frames and the largest
root-relative joint acceleration, at seams (frames within one of a seam) against the largest
values in the source recordings — a pop is a jump faster than anything captured.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from evalkit.gesture_speech import Rules, match_apexes


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write text to ``path`` via a temporary file in the same folder, then rename."""
    from evalkit.atomic import write_text as _atomic_write_text

    return _atomic_write_text(path, text)


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
        covered = np.any(sync.accepts(all_off), axis=1)
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
        "offset_within_rule": _num(np.mean(sync.accepts(off))) if len(off) else None,
        "gsi_psi_mae": _num(dev.mean()) if len(dev) else None,
        "gsi_psi_in_margin": _num(np.mean(inten.accepts(sp, gp))) if len(dev) else None,
        "gsi_psi_r": _num(r),
        "offsets_s": [round(float(x), 4) for x in off],
        "pairs": [[_num(apex[i]), _num(papt[j]), _num(g[i]), _num(s[j])] for i, j in pairs],
    }


def realised_strokes(realised, plan, db, phase_config=None) -> tuple[np.ndarray, np.ndarray]:
    """Apex times (s) and GSIs of the placed GPs' strokes as realised (see the module docstring).

    Returns:
        ``(apex_times, gsi)``, one entry per placement (NaN where a stroke could not be measured).
    """
    from evalkit.gesture import PhaseConfig, hand_trajectories
    from evalkit.gesture.phases import Stroke
    from evalkit.gesture.strokes import stroke_features
    from evalkit.synth.gmg.realise import gp_time_warp

    cfg = phase_config or PhaseConfig()
    m = realised.motion
    n = m.n_frames
    traj = hand_trajectories(m, dict(db.roles))
    speed = traj.speed
    fps = m.fps
    pl = plan.placements
    apex = np.full(len(pl), np.nan)
    gsi = np.full(len(pl), np.nan)
    feats = []
    for k, p in enumerate(pl):
        ph = db.phrases[p.gp]
        tt = np.linspace(p.start_time, p.end_time, 400)
        src = gp_time_warp(p, ph)(tt)
        t_a = float(np.interp(max(ph.stroke_start, ph.start_frame), src, tt))
        t_b = float(np.interp(min(ph.stroke_end, ph.end_frame), src, tt))
        a = int(np.clip(np.floor(t_a * fps), 0, n - 2))
        b = int(np.clip(np.ceil(t_b * fps) + 1, a + 2, n))
        peak = a + int(np.argmax(speed[a:b]))
        if cfg.apex == "peak":
            apex_f = float(peak)
        else:  # as the gesture analysis: search to the stroke's end (+1 frame), else its slowest frame
            stop = int(min(n, max(int(np.ceil(t_b * fps)), peak + 1) + 1))
            level = cfg.apex_fraction * speed[peak]
            below = np.flatnonzero(speed[peak:stop] < level)
            if len(below) == 0:
                apex_f = float(peak + int(np.argmin(speed[peak:stop])))
            else:
                j = peak + int(below[0])
                s0, s1 = speed[j - 1], speed[j]
                apex_f = float(j - 1 + (s0 - level) / (s0 - s1)) if s0 != s1 else float(j)
        apex[k] = apex_f / fps
        st = Stroke(a, b, peak, float(speed[peak]), apex_f, apex_f / fps, "both")
        feats.append(stroke_features(traj, st, dict(db.roles)))
    if feats:
        import pandas as pd

        frame = pd.DataFrame(feats)
        gsi[:] = np.asarray(db.gsi_scale.strength(frame[list(db.gsi_scale.features)]), dtype=float)
    return apex, gsi


#: A planned stroke counts as found blind when the analysis has an apex this close to it, seconds.
FOUND_WITHIN_S = 0.05


def planned_found(planned_apex_s, found_apex_s, within_s: float = FOUND_WITHIN_S) -> dict:
    """How many planned strokes the blind analysis finds: ``planned_found`` (count) and
    ``planned_found_share`` (of the planned; ``None`` without plan) of planned apex times (s)
    with an analysed apex within ``within_s`` seconds."""
    planned = np.asarray(planned_apex_s, dtype=float).reshape(-1)
    found = np.asarray(found_apex_s, dtype=float).reshape(-1)
    if not len(planned):
        return {"planned_found": 0, "planned_found_share": None}
    hit = np.min(np.abs(planned[:, None] - found[None, :]), axis=1) <= within_s + 1e-9 if len(found) else np.zeros(len(planned), bool)
    return {"planned_found": int(hit.sum()), "planned_found_share": float(hit.mean())}


def objective_report(realised, speech, plan, rules: Rules, db=None, phase_config=None) -> dict:
    """Objective figures of one output: planned, realised and analysed (see the module
    docstring). ``db`` (the gesture database) is needed for the realised reading."""
    from evalkit.gesture import PhaseConfig, analyze_gestures

    pl = plan.placements
    planned = timing_metrics([p.apex_time for p in pl], [p.gsi for p in pl], speech.papts, speech.psi, rules)
    out = {
        "variant": plan.variant,
        "n_accents": int(len(speech.papts)),
        "n_gestures": int(len(pl)),
        "gestures_on_anchor": int(sum(p.anchor >= 0 for p in pl)),
        "speech_duration_s": float(speech.duration),
        "clip_duration_s": float(realised.motion.n_frames / realised.motion.fps),
        "planned": planned,
    }
    if db is not None:
        apex, gsi = realised_strokes(realised, plan, db, phase_config)
        ok = np.isfinite(apex)
        out["realised"] = timing_metrics(apex[ok], gsi[ok], speech.papts, speech.psi, rules)
        out["realised"]["apex_shift_s"] = _num(np.mean(np.abs(apex[ok] - np.array([p.apex_time for p in pl])[ok]))) if ok.any() else None
        out["realised"]["gsi_shift"] = _num(np.mean(np.abs(gsi[ok] - np.array([p.gsi for p in pl])[ok]))) if ok.any() else None
    g = analyze_gestures(realised.motion, phase_config or PhaseConfig(), getattr(db, "gsi_scale", None),
                         roles=dict(db.roles) if db is not None else None, clip=realised.motion.name)
    out["analysed"] = timing_metrics(g.apex_times, g.gsi, speech.papts, speech.psi, rules)
    out["analysed"].update(planned_found(np.array([p.apex_time for p in pl]), g.apex_times))
    out["rule"] = {"synchrony_mean_s": rules.synchrony.mean_s, "synchrony_sd_s": rules.synchrony.sd_s,
                   "intercept": rules.intensity.intercept, "slope": rules.intensity.slope,
                   "margin": rules.intensity.margin}
    return out


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


def clip_checks(realised, db, source: dict | None = None) -> dict:
    """Clip checks (see the module docstring)."""
    m = realised.motion
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
    seams = np.asarray(realised.seams, dtype=int)
    near_v = np.unique(np.clip(np.concatenate([seams - 1, seams]), 0, max(len(v) - 1, 0))) if len(v) else seams[:0]
    near_a = np.unique(np.clip(np.concatenate([seams - 2, seams - 1, seams]), 0, max(len(a) - 1, 0))) if len(a) else seams[:0]
    src = source or source_kinematics(db)
    out = {
        "finite": finite,
        "bone_length_drift": drift,
        "seams": int(len(seams)),
        "seam_speed_max": float(v[near_v].max()) if len(near_v) else 0.0,
        "seam_accel_max": float(a[near_a].max()) if len(near_a) else 0.0,
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
