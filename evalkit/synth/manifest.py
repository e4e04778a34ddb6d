"""Synthesized clips as study stimuli: BVH plus a JSON manifest of how they were made.

:func:`synthesize_transition` turns a transition request (from clip A at time t into clip B)
into a clip and a manifest; :func:`write_stimulus` writes both atomically (temporary file, then
rename). The manifest records the method (``smg`` / ``bpmg``), the source motions (file, label,
role, retargeting), the requested time, the plan (which frames each body part left and entered,
time-scales), the graph parameters, the measured response and duration, and quality checks
(finite values, bone lengths, seam speeds, foot-skate of the clip and of its sources).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from evalkit.errors import InputError
from evalkit.motion.model import Motion
from evalkit.synth.transition import TransitionPlan, check_clip, plan_clips, realise_transition_plan

SCHEMA = "evalkit.synth.stimulus/1"
CMU_ACK = (
    "The data used in this project was obtained from mocap.cs.cmu.edu. The database was created "
    "with funding from NSF EIA-0196217."
)


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, Path):
        return str(x)
    return x


def plan_record(plan: TransitionPlan, clips) -> list[dict]:
    """The hops of a plan as plain records (frames at the graph's frame rate)."""
    out = []
    for h_index, h in enumerate(plan.hops):
        out.append({
            "from": clips[h.src].name,
            "to": clips[h.dst].name,
            "entry_frame": h.entry,
            "lower_leave_frame": h.i_lower,
            "lower_enter_frame": h.j_lower,
            "sync_frame": h.sync,
            "alignment": {"theta_rad": h.align[0], "tx_m": h.align[1], "tz_m": h.align[2]},
            "parts": [
                {
                    "part": p.name,
                    "leave_frame": m.i,
                    "enter_frame": m.j,
                    "cost_m": m.cost,
                    "own_candidate": not m.forced,
                    "time_scale": h.scale(n),
                }
                for n, (p, m) in enumerate(zip(plan.parts, h.moves))
            ],
        })
    return out


def _clip_source(m: Motion) -> dict:
    from evalkit.synth.clips import clip_label

    meta = dict(m.meta)
    return {
        "name": m.name,
        "label": clip_label(m.name),
        "file": meta.get("source"),
        "original_fps": meta.get("resampled_from_fps", m.fps),
        "retargeted_from": meta.get("retargeted_from"),
        "grounded_shift_m": meta.get("grounded_shift_m"),
    }


def _servable_plan(graph, a: int, b: int, r: int, request_time_s: float):
    """The graph's plan for the request, or an :class:`InputError` saying why there is none."""
    cs = graph.clipset
    fps = cs.fps
    plan = graph.plan(a, b, r)
    src, dst = cs.clips[a], cs.clips[b]
    if plan is None:
        raise InputError(
            f"{graph.method}: no transition from {src.name} at {request_time_s:.2f} s into {dst.name}: the "
            f"graph has no path from there (the clip is {src.n_frames / fps:.2f} s long; request earlier, "
            "or raise the threshold)"
        )
    if plan.info.get("guard_ok") is False:
        raise InputError(
            f"{graph.method}: every transition reachable from {src.name} at {request_time_s:.2f} s into "
            f"{dst.name} moves some joint faster than the source clips (speed guard); request earlier"
        )
    return plan


def _manifest(graph, plan, motion: Motion, timing: dict, a: int, b: int, r: int, involved, checks) -> dict[str, Any]:
    """The manifest of a synthesized transition (see the module docstring), before skate."""
    cs = graph.clipset
    fps = cs.fps
    src = cs.clips[a]
    summary = plan.summary()
    return {
        "schema": SCHEMA,
        "method": graph.method,
        "name": motion.name,
        "fps": fps,
        "frames": motion.n_frames,
        "duration_s": motion.n_frames / fps,
        "source_motions": [
            dict(_clip_source(cs.clips[c]), role="origin" if c == a else "target" if c == b else "intermediate")
            for c in [a] + [c for c in involved if c not in (a, b)] + [b]
        ],
        "request": {
            "clip": src.name,
            "time_in_clip_s": r / fps,
            "frame_in_clip": r,
            "time_in_output_s": timing["request_frame"] / fps,
            "frame_in_output": timing["request_frame"],
        },
        "output_starts_at_clip_frame": timing["start_frame"],
        "transition": {
            "response_frames": summary["response_frames"],
            "response_s": summary["response_frames"] / fps,
            "duration_frames": summary["duration_frames"],
            "duration_s": summary["duration_frames"] / fps,
            "arrival_frames": summary["arrival_frames"],
            "cost_m": summary["cost_m"],
            "hops": plan_record(plan, cs.clips),
            "seams_output_frames": timing["seams"],
            "guard_attempts": plan.info.get("guard_attempts"),
        },
        "parameters": dict(graph.config.as_dict(), window_frames=cs.window),
        "skeleton": {"root": cs.skeleton.names[0], "joints": cs.skeleton.n_joints},
        "checks": checks,
        "data": (
            "Real motion capture, re-timed and blended by the graph; every frame comes from the "
            "source clips listed (retargeted to one skeleton where the sources differ)."
        ),
        "acknowledgement": CMU_ACK,
    }


def synthesize_transition(
    graph,
    from_clip: str | int,
    to_clip: str | int,
    request_time_s: float,
    lead_s: float = 1.0,
    tail_s: float = 2.0,
    name: str | None = None,
    skate: bool = True,
) -> tuple[Motion, dict]:
    """Synthesize the transition requested at ``request_time_s`` of ``from_clip`` into ``to_clip``.

    Args:
        graph: a :class:`~evalkit.synth.smg.MotionGraph` (``build_smg``) or
            :class:`~evalkit.synth.bpmg.BodyPartMotionGraphs` (``build_bpmg``).
        from_clip, to_clip: clip names (file stems, e.g. ``"16_15"``) or indices.
        request_time_s: when the transition is requested, seconds from the start of
            ``from_clip``.
        lead_s: seconds of ``from_clip`` shown before the request (fewer if the clip is short).
        tail_s: seconds of ``to_clip`` shown after all parts are in sync (fewer if it ends).
        name: name of the output clip (default ``<method>_<from>_to_<to>``).
        skate: compute foot-skate figures of the clip and its sources for the manifest.

    Returns:
        ``(motion, manifest)``: the clip on the graph's skeleton at the graph's frame rate, and
        a JSON-ready manifest (see the module docstring).

    Raises:
        InputError: unknown clips, a request outside the clip, or no transition reachable from
            there (past the last transition point of the clip, or every reachable transition
            failed the speed guard).
    """
    cs = graph.clipset
    a, b = cs.index(from_clip), cs.index(to_clip)
    fps = cs.fps
    r = int(round(request_time_s * fps))
    plan = _servable_plan(graph, a, b, r, request_time_s)
    lead = int(round(lead_s * fps))
    tail = int(round(tail_s * fps))
    motion, timing = realise_transition_plan(cs.clips, plan, lead, tail, name=name)
    involved = plan_clips(plan)
    source_max = np.max([cs.max_joint_speed(c) for c in involved], axis=0)
    checks = check_clip(motion, source_max, timing["seams"], rigid=cs.rigid_bones())
    manifest = _manifest(graph, plan, motion, timing, a, b, r, involved, checks)
    if skate:
        from evalkit.synth.gait import skate as skate_fn

        manifest["skate"] = {
            "synthesized": skate_fn(motion),
            "sources": {cs.clips[c].name: skate_fn(cs.clips[c]) for c in involved},
        }
    from evalkit import __version__

    manifest["evalkit_version"] = __version__
    return motion, _jsonable(manifest)


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_stimulus(motion: Motion, manifest: dict, path: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``motion`` as BVH at ``path`` and the manifest next to it (``.json``), atomically.

    Returns:
        ``(bvh_path, json_path)``.
    """
    from evalkit.motion import write_bvh

    p = Path(path)
    if p.suffix.lower() != ".bvh":
        raise InputError(f"{p}: stimulus file must end in .bvh")
    p.parent.mkdir(parents=True, exist_ok=True)
    write_bvh(motion, p)  # atomic (temporary file, then rename)
    j = p.with_suffix(".json")
    _atomic_write_text(j, json.dumps(manifest, indent=2) + "\n")
    return p, j
