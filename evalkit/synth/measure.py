"""The thesis' transition measurements (ch. 3, Tables 3.2-3.3, Figs. 3.14-3.15) for SMG and BPMG.

:func:`measure_transitions` builds an SMG and BPMGs over the same clips and reports:

* **requests** — for every ordered pair of different clips (A, B) and every request frame of A
  (every ``request_step_s``), the planned transition: response (frames from the request until
  the first body part starts transitioning) and duration (frames from that start until the last
  part's blend ends), **in frames at 60 fps** as in the thesis (converted if the graph runs at
  another rate), cost, hops, parts without a candidate of their own, speed-guard result;
* **pairs** — mean and median response and duration per ordered pair and method, and the share
  of request frames from which the target can be reached (the thesis' Table 3.3 layout is in
  :func:`pair_matrix`);
* **maneuverability** — per method: *local maneuverability*, here the mean time in seconds from
  a request to the end of the transition (response + duration) over all requests and targets,
  the share of (request, target) combinations that can be served, and *TBF* (time between
  transition frames: the mean gap in frames at 60 fps between consecutive frames of a clip
  where a transition can start);
* **sweep** — per method and split profile against the similarity threshold: connectivity
  (transition points: distinct frames where a transition can start; BPMG: where any part can —
  which alone says little: read it beside the share of requests served, the connected clip
  pairs and the time to arrival), candidates, mean candidate cost, connected clip pairs, the
  share of transition requests served, and mean response / duration / arrival / cost of plans made
  at a coarser request step **without** the speed guard (the guard renders every plan; see
  ``sweep_guard``);
* **skate** — foot-skate of rendered transitions vs the source clips
  (:func:`evalkit.synth.gait.skate`, which says which implementation measured it);
* **stats** — graph statistics (nodes, edges, branching factor, SCC size) at the main threshold.

:func:`write_measurements` writes every table as CSV and LaTeX and draws the figures.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.motion.model import Motion
from evalkit.synth.bodyparts import SPLIT_PROFILES
from evalkit.synth.clips import clip_label
from evalkit.synth.clipset import ClipSet
from evalkit.synth.smg import DEFAULT_THRESHOLD
from evalkit.synth.transition import realise_transition_plan

THESIS_FPS = 60.0
DEFAULT_THRESHOLDS_RMS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35)


@dataclass
class Measurements:
    """Tables produced by :func:`measure_transitions` (see the module docstring)."""

    requests: pd.DataFrame
    pairs: pd.DataFrame
    maneuverability: pd.DataFrame
    sweep: pd.DataFrame
    skate: pd.DataFrame
    stats: pd.DataFrame
    params: dict = field(default_factory=dict)
    sweep_pairs: pd.DataFrame | None = None

    def tables(self) -> dict[str, pd.DataFrame]:
        out = {
            "requests": self.requests,
            "pairs": self.pairs,
            "maneuverability": self.maneuverability,
            "sweep": self.sweep,
            "skate": self.skate,
            "stats": self.stats,
        }
        if self.sweep_pairs is not None:
            out["sweep_pairs"] = self.sweep_pairs
        return out


def _label(cs: ClipSet, c: int) -> str:
    name = cs.clips[c].name
    lab = clip_label(name)
    return lab if lab == name else f"{lab} ({name.split('-')[0]})"


def _graphs(cs: ClipSet, threshold: float, profiles: Sequence[str], graph_kwargs: Mapping, guard: bool):
    from evalkit.synth.bpmg import build_bpmg
    from evalkit.synth.smg import build_smg

    common = {k: v for k, v in graph_kwargs.items() if k in ("minima_radius_s", "prune", "norm", "guard_tolerance", "guard_tries")}
    out = [("smg", "-", build_smg(cs, threshold=threshold, speed_guard=guard, **common))]
    bp_only = {k: v for k, v in graph_kwargs.items() if k in ("gait_phase", "max_time_scale", "max_sync_s",
                                                              "max_phase_offset_s", "parts_lead", "lower_distance")}
    for prof in profiles:
        out.append(("bpmg", prof, build_bpmg(cs, profile=prof, threshold=threshold, speed_guard=guard, **common, **bp_only)))
    return out


def _request_rows(cs: ClipSet, method: str, profile: str, graph, step: int, progress=None) -> list[dict]:
    to60 = THESIS_FPS / cs.fps
    rows = []
    n = len(cs.clips)
    for a in range(n):
        for b in range(n):
            if a == b:
                continue
            for r in range(0, cs.clips[a].n_frames, step):
                plan = graph.plan(a, b, r)
                row = {
                    "method": method, "profile": profile, "from": cs.clips[a].name, "to": cs.clips[b].name,
                    "from_label": _label(cs, a), "to_label": _label(cs, b), "request_frame": r,
                    "reachable": plan is not None,
                }
                if plan is not None:
                    row.update(
                        response_frames_60fps=plan.response * to60,
                        duration_frames_60fps=plan.duration * to60,
                        arrival_frames_60fps=plan.arrival * to60,
                        cost_m=plan.cost,
                        hops=len(plan.hops),
                        lead_frames_60fps=(plan.hops[0].i_lower - min(m.i for m in plan.hops[0].moves)) * to60,
                        fallback_parts=plan.forced_parts,
                        guard_ok=plan.info.get("guard_ok", True),
                    )
                    if not row["guard_ok"]:
                        row["reachable"] = False
                rows.append(row)
                if progress is not None:
                    progress.update(1)
    return rows


def _summarise_pairs(req: pd.DataFrame) -> pd.DataFrame:
    ok = req[req["reachable"]]
    keys = ["method", "profile", "from", "to", "from_label", "to_label"]
    agg = ok.groupby(keys).agg(
        response_mean=("response_frames_60fps", "mean"),
        response_median=("response_frames_60fps", "median"),
        duration_mean=("duration_frames_60fps", "mean"),
        duration_median=("duration_frames_60fps", "median"),
        cost_mean_m=("cost_m", "mean"),
        fallback_parts_mean=("fallback_parts", "mean"),
    )
    cover = req.groupby(keys)["reachable"].agg(requests="size", reachable_share="mean")
    return cover.join(agg).reset_index()


def pair_matrix(pairs: pd.DataFrame, method: str, profile: str = "-") -> pd.DataFrame:
    """The thesis' Table 3.3 layout: origin motions in rows, targets in columns, each cell
    ``"duration / response"`` (mean frames at 60 fps; ``"-"`` where unreachable)."""
    sel = pairs[(pairs["method"] == method) & (pairs["profile"] == profile)]
    labels = list(dict.fromkeys(list(sel["from_label"]) + list(sel["to_label"])))
    m = pd.DataFrame("", index=labels, columns=labels)
    for _, r in sel.iterrows():
        if np.isfinite(r.get("duration_mean", np.nan)):
            m.loc[r["from_label"], r["to_label"]] = f"{r['duration_mean']:.1f} / {r['response_mean']:.1f}"
        else:
            m.loc[r["from_label"], r["to_label"]] = "-"
    m.index.name = "from \\ to"
    return m


def _tbf(cs: ClipSet, graph) -> float:
    """Mean gap (frames at 60 fps) between consecutive transition points within each clip."""
    to60 = THESIS_FPS / cs.fps
    c = graph.candidates
    if "part" in c.columns:  # BPMG: lower body kept in its graph, any upper part
        lower = graph.parts[0].name
        c = c[(c["part"] != lower) | c["in_graph"]]
    else:
        c = c[c["in_graph"]]
    gaps = []
    for clip, g in c.groupby("src"):
        f = np.unique(g["i"].to_numpy())
        if f.size > 1:
            gaps.extend(np.diff(f))
    return float(np.mean(gaps) * to60) if gaps else float("nan")


def _maneuverability(cs: ClipSet, main, requests: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per graph of the main tables: local maneuverability, means, served share, TBF; and graph
    statistics."""
    man_rows, stat_rows = [], []
    for method, prof, g in main:
        sel = requests[(requests["method"] == method) & (requests["profile"] == prof)]
        ok = sel[sel["reachable"]]
        man_rows.append({
            "method": method, "profile": prof,
            "local_maneuverability_s": float(((ok["response_frames_60fps"] + ok["duration_frames_60fps"]) / THESIS_FPS).mean()) if len(ok) else np.nan,
            "response_mean_frames_60fps": float(ok["response_frames_60fps"].mean()) if len(ok) else np.nan,
            "duration_mean_frames_60fps": float(ok["duration_frames_60fps"].mean()) if len(ok) else np.nan,
            "arrival_mean_frames_60fps": float(ok["arrival_frames_60fps"].mean()) if len(ok) else np.nan,
            "served_share": float(sel["reachable"].mean()) if len(sel) else np.nan,
            "tbf_frames_60fps": _tbf(cs, g),
            # what a transition's duration is made of: the window (one blend), the parts' lead
            # over the lower body (first part's departure to the legs'), extra hops
            "lead_mean_frames_60fps": float(ok["lead_frames_60fps"].mean()) if len(ok) else np.nan,
            "single_hop_share": float((ok["hops"] == 1).mean()) if len(ok) else np.nan,
            "duration_single_hop_frames_60fps": float(ok.loc[ok["hops"] == 1, "duration_frames_60fps"].mean()) if (ok["hops"] == 1).any() else np.nan,
        })
        st = g.stats()
        stat_rows.append({"method": method, "profile": prof, **{k: v for k, v in st.items() if not isinstance(v, (dict, list))}})
    return pd.DataFrame(man_rows), pd.DataFrame(stat_rows)



def _skate_table(cs: ClipSet, main, skate_step_s: float) -> pd.DataFrame:
    """Foot-skate of the source clips and of transitions rendered every ``skate_step_s``."""
    from evalkit.synth.gait import skate

    skate_rows = []
    for c in range(len(cs.clips)):
        skate_rows.append({"kind": "source", "method": "-", "clip": cs.clips[c].name, **skate(cs.clips[c])})
    sk_step = max(1, int(round(skate_step_s * cs.fps)))
    lead = tail = int(round(0.5 * cs.fps))
    for method, prof, g in main:
        for a in range(len(cs.clips)):
            for b in range(len(cs.clips)):
                if a == b:
                    continue
                for r in range(0, cs.clips[a].n_frames, sk_step):
                    plan = g.plan(a, b, r)
                    if plan is None or plan.info.get("guard_ok") is False:
                        continue
                    m, _ = realise_transition_plan(cs.clips, plan, lead, tail)
                    skate_rows.append({"kind": "synthesized", "method": method, "clip": f"{cs.clips[a].name}->{cs.clips[b].name}@{r}", **skate(m)})
    return pd.DataFrame(skate_rows)



RUN_FLIGHT_SHARE = 0.3


def running_clips(cs: ClipSet, min_flight_share: float = RUN_FLIGHT_SHARE) -> list[int]:
    """Clips that are runs: at least ``min_flight_share`` of their frames with neither foot on
    the ground (flight; contacts of :meth:`ClipSet.contacts`).

    Measured on the real sets here: runs and dashes 0.36-0.75, walks of every style 0-0.22
    (contact noise; the brisk walk 007_12 is the highest), so 0.3 separates them.
    """
    return [c for c in range(len(cs.clips)) if float(np.mean(~cs.contacts(c).any(axis=1))) >= min_flight_share]


def _sweep(cs: ClipSet, thresholds, profiles, graph_kwargs, sweep_guard: bool, sweep_step: int, norm: str,
           progress: bool) -> pd.DataFrame:
    """Per threshold, method and profile: connectivity, served share, connected pairs, plan means."""
    from tqdm import tqdm

    sweep_rows, pair_rows = [], []
    runs = {cs.clips[c].name for c in running_clips(cs)}
    bar = tqdm(total=len(thresholds) * (1 + len(profiles)), desc="threshold sweep", unit="graph", disable=not progress)
    for t in thresholds:
        for method, prof, g in _graphs(cs, t, list(profiles), graph_kwargs, guard=sweep_guard):
            st = g.stats()
            rows_t = pd.DataFrame(_request_rows(cs, method, prof, g, sweep_step))
            ok = rows_t[rows_t["reachable"]] if len(rows_t) else rows_t
            with_run = (rows_t["from"].isin(runs) | rows_t["to"].isin(runs)) if len(rows_t) else pd.Series(dtype=bool)
            run_rows = rows_t[with_run] if len(rows_t) else rows_t
            cand_cost = st["mean_cost_m"]
            sweep_rows.append({
                "method": method, "profile": prof, "threshold": t, "norm": norm,
                "transition_points": st["transition_points"], "candidates": st["candidates"],
                "connected_clip_pairs": st["connected_clip_pairs"], "scc_nodes": st["scc_nodes"],
                "mean_candidate_cost_m": cand_cost,
                "served_share": float(rows_t["reachable"].mean()) if len(rows_t) else np.nan,
                "mean_plan_cost_m": float(ok["cost_m"].mean()) if len(ok) else np.nan,
                "response_mean_frames_60fps": float(ok["response_frames_60fps"].mean()) if len(ok) else np.nan,
                "duration_mean_frames_60fps": float(ok["duration_frames_60fps"].mean()) if len(ok) else np.nan,
                "arrival_mean_frames_60fps": float(ok["arrival_frames_60fps"].mean()) if len(ok) else np.nan,
                "speed_guard": sweep_guard,
                "clip_pairs_served": int(rows_t.groupby(["from", "to"])["reachable"].any().sum()) if len(rows_t) else 0,
                "min_pair_served_share": float(rows_t.groupby(["from", "to"])["reachable"].mean().min()) if len(rows_t) else np.nan,
                # requests into or out of a run (running_clips: flight phases)
                "run_clips": len(runs),
                "served_share_run_pairs": float(run_rows["reachable"].mean()) if len(run_rows) else np.nan,
                "run_pairs_served": int(run_rows.groupby(["from", "to"])["reachable"].any().sum()) if len(run_rows) else 0,
                "run_pairs": int(run_rows.groupby(["from", "to"]).ngroups) if len(run_rows) else 0,
            })
            if len(rows_t):
                per = rows_t.groupby(["from", "to", "from_label", "to_label"])["reachable"].agg(requests="size", served_share="mean").reset_index()
                pair_rows.append(per.assign(method=method, profile=prof, threshold=t))
            bar.update(1)
    bar.close()
    pairs = pd.concat(pair_rows, ignore_index=True) if pair_rows else pd.DataFrame()
    if len(pairs):
        pairs = pairs[["method", "profile", "threshold", "from", "to", "from_label", "to_label", "requests", "served_share"]]
    return pd.DataFrame(sweep_rows), pairs


def measure_transitions(
    clips: Iterable[str | os.PathLike | Motion] | ClipSet,
    threshold: float = DEFAULT_THRESHOLD,
    profile: str = "sp4a",
    profiles: Sequence[str] = tuple(SPLIT_PROFILES),
    thresholds: Sequence[float] | None = None,
    request_step_s: float = 0.05,
    sweep_step_s: float = 0.25,
    sweep_guard: bool = False,
    skate_step_s: float = 0.5,
    fps: float = 60.0,
    window_s: float = 1.0 / 3.0,
    progress: bool = False,
    sweep_only: bool = False,
    **graph_kwargs,
) -> Measurements:
    """Measure SMG and BPMG transitions on a set of clips (see the module docstring).

    Args:
        clips: motion files / folders / :class:`Motion` objects, or a :class:`ClipSet`.
        threshold: similarity threshold of the main tables (metres, ``norm`` of the graphs).
        profile: split profile of the BPMG in the main tables.
        profiles: split profiles in the threshold sweep.
        thresholds: sweep thresholds (default: 0.05-0.35 m for ``norm="rms"``; for
            ``norm="kovar"`` the same values times the square root of the whole body's point
            weight, so both sweeps cover the same range of poses).
        request_step_s: spacing of request frames in the main tables, seconds.
        sweep_step_s: spacing of request frames in the sweep, seconds.
        sweep_guard: apply the speed guard in the sweep too (slower: renders every plan).
        skate_step_s: spacing of requests whose rendered transitions are scored for foot-skate.
        fps, window_s: graph frame rate and window when ``clips`` are files.
        progress: show tqdm progress bars.
        sweep_only: measure only the sweep (its tables ``sweep`` and ``sweep_pairs``; the main
            tables are empty): the main tables render every plan for the speed guard and the
            skate table, which on large sets (the 41 Bandai Namco locomotion clips: 1,640
            ordered pairs) takes hours where the sweep takes minutes.
        **graph_kwargs: passed to ``build_smg`` / ``build_bpmg`` (``norm``, ``minima_radius_s``,
            ``gait_phase``, ``max_time_scale``, ...).

    Returns:
        :class:`Measurements`.
    """
    from tqdm import tqdm

    cs = ClipSet.from_clips(clips, fps=fps, window_s=window_s)
    if len(cs.clips) < 2:
        raise InputError("measuring transitions needs at least two clips")
    if profile not in SPLIT_PROFILES:
        raise InputError(f"unknown split profile {profile!r}; profiles are {', '.join(SPLIT_PROFILES)}")
    norm = graph_kwargs.get("norm", "rms")
    thresholds = _sweep_thresholds(cs, threshold, thresholds, norm)
    step = max(1, int(round(request_step_s * cs.fps)))
    sweep_step = max(1, int(round(sweep_step_s * cs.fps)))
    n_req = sum(len(range(0, c.n_frames, step)) * (len(cs.clips) - 1) for c in cs.clips)

    # -- main tables at the main threshold ------------------------------------------------
    if sweep_only:
        sweep, sweep_pairs = _sweep(cs, thresholds, profiles, graph_kwargs, sweep_guard, sweep_step, norm, progress)
        empty = pd.DataFrame()
        return Measurements(empty, empty, empty, sweep, empty, empty,
                            _params(cs, threshold, profile, thresholds, profiles, step, sweep_step, norm, graph_kwargs, True),
                            sweep_pairs)
    main = _graphs(cs, threshold, [profile], graph_kwargs, guard=True)
    bar = tqdm(total=n_req * len(main), desc="transitions", unit="req", disable=not progress)
    rows = []
    for method, prof, g in main:
        rows.extend(_request_rows(cs, method, prof, g, step, bar))
    bar.close()
    requests = pd.DataFrame(rows)
    pairs = _summarise_pairs(requests)

    maneuverability, stats = _maneuverability(cs, main, requests)

    # -- skate of rendered transitions vs sources -----------------------------------------
    skate_df = _skate_table(cs, main, skate_step_s)

    # -- sweep over thresholds and profiles -------------------------------------------------
    sweep, sweep_pairs = _sweep(cs, thresholds, profiles, graph_kwargs, sweep_guard, sweep_step, norm, progress)
    params = _params(cs, threshold, profile, thresholds, profiles, step, sweep_step, norm, graph_kwargs, False)
    return Measurements(requests, pairs, maneuverability, sweep, skate_df, stats, params, sweep_pairs)


def _sweep_thresholds(cs: ClipSet, threshold: float, thresholds: Sequence[float] | None, norm: str) -> list[float]:
    """The sweep's thresholds, sorted, with the main ``threshold`` among them (metres, ``norm``)."""
    if thresholds is None:
        scale = 1.0 if norm == "rms" else float(np.sqrt(cs.weight_total("full")))
        thresholds = [t * scale for t in DEFAULT_THRESHOLDS_RMS]
    return sorted(set(float(t) for t in thresholds) | {float(threshold)})


def _params(cs, threshold, profile, thresholds, profiles, step, sweep_step, norm, graph_kwargs, sweep_only) -> dict:
    return {
        "clips": [{"name": c.name, "label": clip_label(c.name), "frames": c.n_frames, "source": c.meta.get("source")} for c in cs.clips],
        "fps": cs.fps, "window_frames": cs.window, "threshold": threshold, "profile": profile,
        "thresholds": thresholds, "profiles": list(profiles), "request_step_frames": step,
        "sweep_step_frames": sweep_step, "norm": norm, "graph_kwargs": {k: v for k, v in graph_kwargs.items()},
        "contact_source": cs.contact_source, "sweep_only": sweep_only,
        "units": "frames at 60 fps (thesis convention); costs in metres",
    }


# -- output --------------------------------------------------------------------------------

def _latex(df: pd.DataFrame, caption: str, label: str, index: bool = False) -> str:
    sty = df.style
    if not index:
        sty = sty.hide(axis="index")
    sty = sty.format(precision=2, na_rep="--")
    body = sty.to_latex(hrules=True, caption=caption, label=label, position="htbp")
    return body.replace("_", r"\_").replace(r"\\_", r"\_")


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def skate_summary(skate: pd.DataFrame) -> pd.DataFrame:
    """Mean skate figures of source clips and of each method's synthesized transitions."""
    num = skate.select_dtypes("number").columns
    out = skate.groupby(["kind", "method"])[list(num)].mean()
    out.insert(0, "clips", skate.groupby(["kind", "method"]).size())
    src = skate["skate_source"].iloc[0] if "skate_source" in skate.columns and len(skate) else ""
    out = out.reset_index()
    out["skate_source"] = src
    return out


def write_measurements(m: Measurements, out_dir: str | os.PathLike, figures: bool = True) -> list[Path]:
    """Write every table (CSV + LaTeX), ``params.json`` and the figures into ``out_dir``.

    Returns the paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in m.tables().items():
        if df.columns.empty:  # not measured (sweep_only)
            continue
        p = out / f"{name}.csv"
        _atomic(p, df.to_csv(index=False))
        written.append(p)
    sk = skate_summary(m.skate) if len(m.skate) else pd.DataFrame()
    if len(sk):
        _atomic(out / "skate_summary.csv", sk.to_csv(index=False))
        written.append(out / "skate_summary.csv")
    tex = []
    main = m.maneuverability[["method", "profile"]] if len(m.maneuverability) else pd.DataFrame(columns=["method", "profile"])
    for method, prof in main.itertuples(index=False):
        mat = pair_matrix(m.pairs, method, prof)
        name = method.upper() + ("" if prof == "-" else f" ({prof})")
        tex.append(_latex(mat, f"{name}: transition duration / response (mean frames at 60 fps); rows: origin, columns: target.",
                          f"tab:synth-{method}-{prof}", index=True))
    if len(m.maneuverability):
        tex.append(_latex(m.maneuverability, "Local maneuverability (s), mean response and duration (frames at 60 fps), share of requests served, time between transition frames.", "tab:synth-maneuverability"))
    cols = ["method", "profile", "threshold", "transition_points", "connected_clip_pairs", "mean_candidate_cost_m", "response_mean_frames_60fps"]
    tex.append(_latex(m.sweep[cols], "Connectivity and cost against the similarity threshold per split profile.", "tab:synth-sweep"))
    if len(sk):
        keep = [c for c in ("kind", "method", "clips", "skate_fraction", "skate_speed_mean", "skate_distance_per_s", "skating_ratio") if c in sk.columns]
        tex.append(_latex(sk[keep], f"Foot-skate of source clips and synthesized transitions ({sk['skate_source'].iloc[0]}).", "tab:synth-skate"))
    _atomic(out / "tables.tex", "\n\n".join(tex) + "\n")
    written.append(out / "tables.tex")
    _atomic(out / "params.json", json.dumps(m.params, indent=2, default=str) + "\n")
    written.append(out / "params.json")
    if figures:
        written.extend(plot_measurements(m, out))
    return written


def plot_measurements(m: Measurements, out: Path) -> list[Path]:
    """Figures: connectivity vs threshold per profile (bars, cf. thesis Fig. 3.14), mean cost vs
    threshold (lines, cf. Fig. 3.15), response and duration per ordered pair (bars)."""
    from matplotlib.figure import Figure

    paths = []
    sw = m.sweep.copy()
    sw["graph"] = np.where(sw["method"] == "smg", "SMG", "BPMG " + sw["profile"])
    graphs = list(dict.fromkeys(sw["graph"]))
    th = sorted(sw["threshold"].unique())
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    width = 0.8 / max(1, len(graphs))
    for n, g in enumerate(graphs):
        s = sw[sw["graph"] == g].set_index("threshold").reindex(th)
        ax.bar(np.arange(len(th)) + n * width, s["transition_points"], width, label=g)
    ax.set_xticks(np.arange(len(th)) + 0.4 - width / 2, [f"{t:.2f}" for t in th])
    ax.set_xlabel(f"similarity threshold (m, {sw['norm'].iloc[0]})")
    ax.set_ylabel("transition points")
    ax.set_title("Connectivity per split profile")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    for name, f in (("connectivity.png", fig),):
        p = out / name
        f.savefig(p.with_name("." + name), dpi=120, format="png")
        os.replace(p.with_name("." + name), p)
        paths.append(p)

    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    for g in graphs:
        s = sw[sw["graph"] == g].sort_values("threshold")
        ax.plot(s["threshold"], s["mean_plan_cost_m"], marker="o", label=g)
    ax.set_xlabel(f"similarity threshold (m, {sw['norm'].iloc[0]})")
    ax.set_ylabel("mean transition cost (m)")
    ax.set_title("Transition cost per split profile")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    p = out / "cost.png"
    fig.savefig(p.with_name(".cost.png"), dpi=120, format="png")
    os.replace(p.with_name(".cost.png"), p)
    paths.append(p)

    if not len(m.pairs):
        return paths
    pr = m.pairs.copy()
    pr["pair"] = pr["from_label"] + " -> " + pr["to_label"]
    pr["graph"] = np.where(pr["method"] == "smg", "SMG", "BPMG " + pr["profile"])
    fig = Figure(figsize=(10, 4))
    axes = fig.subplots(1, 2, sharey=True)
    pairs_ = list(dict.fromkeys(pr["pair"]))
    gs = list(dict.fromkeys(pr["graph"]))
    width = 0.8 / max(1, len(gs))
    for ax, col, title in ((axes[0], "response_mean", "response"), (axes[1], "duration_mean", "duration")):
        for n, g in enumerate(gs):
            s = pr[pr["graph"] == g].set_index("pair").reindex(pairs_)
            ax.barh(np.arange(len(pairs_)) + n * width, s[col], width, label=g)
        ax.set_yticks(np.arange(len(pairs_)) + 0.4 - width / 2, pairs_, fontsize=7)
        ax.set_xlabel(f"mean {title} (frames at 60 fps)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    p = out / "response_duration.png"
    fig.savefig(p.with_name(".response_duration.png"), dpi=120, format="png")
    os.replace(p.with_name(".response_duration.png"), p)
    paths.append(p)
    return paths
