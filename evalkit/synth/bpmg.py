"""Body part motion graphs (BPMG; Fernández-Baena, thesis ch. 3) with progressive transitions.

The skeleton is split into body parts by a split profile (:mod:`evalkit.synth.bodyparts`); each
part gets its own distance and its own graph (candidates = local minima under the threshold):

* the **lower body** (root + legs) uses Kovar's distance with the 2-D alignment on the legs'
  positions relative to the root's ground track (``lower_distance="track"``, see
  :class:`BPMGConfig`; ``"world"``: on world positions); its candidates must also respect the **gait phase**: the supporting leg (stance
  foot, or in flight the leg about to land) must be the same in both clips where the blend
  starts (contacts from :mod:`evalkit.synth.gait`, phase from :func:`stance_side`). Its graph is pruned to the largest SCC and routes the character
  (which clips, which frames) exactly like an SMG, without time-scaling. With
  ``whole_body_candidates`` (default) the SMG's own candidates — windows where the *whole* body
  matches under the threshold — are lower-body candidates too (column ``via``: ``"lower"`` or
  ``"body"``; the gait-phase rule applies to both): where the whole body matches, so does the
  lower body, and without them a BPMG
  served fewer requests than the SMG on the same clips (on the Bandai Namco walks and runs, 44 %
  against 70 % at 0.3 m and none at all below 0.3 m: legs alone differ more, in RMS metres per
  joint, than the whole body whose upper joints move less, and the gait-phase rule removes
  more). Where no progressive transition passes the speed guard, :meth:`plan` returns the SMG's
  own transition with every part moving with the lower body (``info["whole_body"]``), so a BPMG
  serves every request an SMG serves;
* every **upper part** (trunk, head, arms, ...) uses the distance of its joints in the frame of
  the joint it hangs from (no alignment needed), so its candidates do not depend on where the
  body is or how fast it moves.

A **progressive transition** (one hop of the lower-body route, from clip X into clip Y) lets each
upper part leave X at its own frame ``i_p`` (at or after the request, or after entering X) and
blend into Y at its own frame ``j_p``; the parts are re-synchronised at a Y frame ``sync`` that
all of them reach together: each part's path (blend, then Y up to ``sync``) is time-scaled to fit
the time it has (scale within ``[1 / max_time_scale, max_time_scale]``). The lower body is never
time-scaled, so its steps keep their timing. For each part the earliest feasible candidate is
taken (responsiveness); ``sync`` starts at the lower body's arrival and may move later by up to
``max_sync_s`` if that lets more parts use their own candidates. A part with no feasible
candidate follows the lower body (``forced`` in the plan; counted in the measurements).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.motion.model import Motion
from evalkit.synth.bodyparts import SPLIT_PROFILES, BodyPart, joint_part_index, split_profile
from evalkit.synth.clipset import ClipSet
from evalkit.synth.smg import DEFAULT_THRESHOLD, GraphConfig, TransitionGraph, find_candidates
from evalkit.synth.transition import Hop, PartMove, TransitionPlan, fast_joints, validate_request


#: Lower-body distances: ``"world"`` (Kovar's, the legs' world positions over the window after one
#: rigid 2-D alignment) and ``"track"`` (the legs relative to the root's ground position on every
#: frame, then aligned: the pose of the gait whatever speed the body travels at).
LOWER_DISTANCES = ("world", "track")


@dataclass(frozen=True)
class BPMGConfig(GraphConfig):
    """Parameters of body part motion graphs: those of the SMG
    (:class:`evalkit.synth.smg.GraphConfig`: ``threshold`` — the same for every part —
    ``window_s``, ``fps``, ``weights``, ``minima_radius_s``, ``prune``, ``norm``,
    ``speed_guard``, ``guard_tolerance``, ``guard_tries``) and:

    Attributes:
        profile: split profile name (:data:`evalkit.synth.bodyparts.SPLIT_PROFILES`).
        gait_phase: lower-body candidates must start on the same supporting leg.
        max_time_scale: largest speed-up or slow-down of an upper part's path (>= 1).
        max_sync_s: how much later than the lower body's arrival the parts may re-synchronise,
            seconds.
        max_phase_offset_s: largest difference between an upper part's and the lower body's
            frame offset ``j - i`` (how far out of step with the legs a part may play), seconds.
        parts_lead: upper parts leave the origin motion no later than the lower body.
        whole_body_candidates: the SMG's whole-body candidates are lower-body candidates too
            (see the module docstring).
        max_lead_s: an upper part leaves the origin at most this long before the lower body
            (``None``: as early as it can). Without a bound the parts left on average 74 frames
            (median 27, up to 336 at 60 fps) before the legs on the Bandai Namco walks and runs,
            and a transition (first part's departure to the parts' re-synchronisation) lasted
            95 frames against the SMG's 20: the length came from that schedule, not from the
            blends (one window each, as the SMG's).
        lower_distance: ``"track"`` (default): the lower body's candidates compare the legs
            relative to the root's ground position on every frame (then one rotation about the
            vertical), as every upper part compares its joints in the frame of the joint it
            hangs from: the pose of the gait, whatever speed the body travels at; the change of
            speed is the blend's (root velocities are blended). ``"world"``: Kovar's distance on
            the legs' world positions, where half of a walk-run distance is the roots drifting
            apart over the window at their different speeds (bundled walk/run: 0.25 m world,
            0.11-0.14 m track), so no walk-run pair was served below 0.3 m.

    With ``speed_guard``, an upper part whose joints move faster than ``guard_tolerance`` times
    their fastest speed in the clips involved follows the lower body instead (repeated until
    none does); ``guard_tries`` lower-body transitions are tried before giving up.
    """

    profile: str = "sp4a"
    gait_phase: bool = True
    max_time_scale: float = 1.5
    max_sync_s: float = 0.5
    max_phase_offset_s: float = 0.2
    parts_lead: bool = True
    whole_body_candidates: bool = True
    max_lead_s: float | None = 1.0 / 3.0
    lower_distance: str = "track"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.profile not in SPLIT_PROFILES:
            raise InputError(f"unknown split profile {self.profile!r}; profiles are {', '.join(SPLIT_PROFILES)}")
        if not (self.max_time_scale >= 1.0):
            raise InputError(f"max_time_scale must be at least 1, got {self.max_time_scale}")
        if self.max_sync_s < 0 or self.max_phase_offset_s < 0:
            raise InputError("max_sync_s and max_phase_offset_s must not be negative")
        if self.lower_distance not in LOWER_DISTANCES:
            raise InputError(f"lower_distance must be one of {', '.join(LOWER_DISTANCES)}, got {self.lower_distance!r}")
        if not (self.guard_tolerance >= 1.0):
            raise InputError(f"guard_tolerance must be at least 1, got {self.guard_tolerance}")


def stance_side(contacts: np.ndarray) -> np.ndarray:
    """``(frames,)`` gait phase: 0 if the left leg is the supporting leg, 1 if the right.

    With one foot on the ground, that foot; in double support, the foot that touched down last
    (the leading foot, taking over the weight); in flight (running), the foot that will touch
    down next (the leg reaching forward); after the last touch-down of a clip ending in
    flight, the other foot (gait alternates).

    Args:
        contacts: ``(frames, 2)`` bool stance of left / right foot.
    """
    c = np.asarray(contacts, dtype=bool)
    n = len(c)
    side = np.full(n, -1, dtype=np.int64)
    last_landed = -1
    for f in range(n):
        landed = [s for s in (0, 1) if c[f, s] and (f == 0 or not c[f - 1, s])]
        if len(landed) == 1:
            last_landed = landed[0]
        if c[f, 0] != c[f, 1]:
            side[f] = 0 if c[f, 0] else 1
        elif c[f, 0] and c[f, 1]:
            side[f] = last_landed if last_landed >= 0 else 0
    # flight (or no contact detected): the next foot to land, else the other of the last one
    nxt = -1
    for f in range(n - 1, -1, -1):
        if side[f] >= 0:
            nxt = side[f]
        elif nxt >= 0:
            side[f] = nxt
    known = np.flatnonzero(side >= 0)
    if known.size == 0:
        return np.zeros(n, dtype=np.int64)
    side[known[-1] + 1:] = 1 - side[known[-1]]
    return side


def gait_filter(candidates: pd.DataFrame, contacts: list[np.ndarray], window: int, both_ends: bool = False) -> np.ndarray:
    """``(candidates,)`` bool: the supporting leg (:func:`stance_side`) of origin and target
    agree at the first frame of the blend window (and, with ``both_ends``, at the last), so the
    blend starts on the same leg. Requiring both ends rejects every transition between gaits of
    different step rates (a walk and a run step at different frequencies), hence the default."""
    if len(candidates) == 0:
        return np.zeros(0, dtype=bool)
    sides = [stance_side(c) for c in contacts]
    a = candidates["src"].to_numpy()
    i = candidates["i"].to_numpy()
    b = candidates["dst"].to_numpy()
    j = candidates["j"].to_numpy()
    keep = np.ones(len(candidates), dtype=bool)
    for n in range(len(candidates)):
        sa, sb = sides[a[n]], sides[b[n]]
        keep[n] = sa[i[n]] == sb[j[n]] and (not both_ends or sa[i[n] + window - 1] == sb[j[n] + window - 1])
    return keep


@dataclass(eq=False)
class BodyPartMotionGraphs:
    """One motion graph per body part over a :class:`ClipSet` (see the module docstring).

    Attributes:
        clipset: clips and cached distances.
        config: parameters.
        parts: the body parts; ``parts[0]`` is the lower body.
        graphs: per part, its candidates and graph (the lower body's is pruned and routes).
        distances: per part, ``{(a, b): matrix}`` distances (for costs of forced parts).
        part_weights: per part, total point weight (for whole-body-equivalent costs).
    """

    clipset: ClipSet
    config: BPMGConfig
    parts: tuple[BodyPart, ...]
    graphs: tuple[TransitionGraph, ...]
    distances: tuple[dict, ...]
    part_weights: tuple[float, ...]
    method: str = "bpmg"
    _groups: dict = field(default_factory=dict, repr=False)

    @property
    def clips(self) -> tuple[Motion, ...]:
        return self.clipset.clips

    @property
    def candidates(self) -> pd.DataFrame:
        """All parts' candidates with a ``part`` column."""
        return pd.concat(
            [g.candidates.assign(part=p.name) for p, g in zip(self.parts, self.graphs)], ignore_index=True
        )

    def stats(self) -> dict:
        """Per-part graph statistics and the union of transition points.

        Graph figures (``nodes``, ``edges``, ``branching_factor``, ``scc_*``, ...) are those of
        the lower body's graph, which routes the character; ``per_part`` has every part's.
        ``transition_points`` counts distinct ``(clip, frame)`` where at least one part can start
        a transition (lower body: kept after pruning; upper parts: all candidates).
        ``connected_clip_pairs`` counts the pairs the BPMG can connect, its own lower-body graph's
        or, with ``whole_body_candidates``, the SMG's it falls back on
        (``connected_clip_pairs_progressive``: the lower-body graph's alone).
        """
        out: dict = {"profile": self.config.profile, "parts": [p.name for p in self.parts]}
        points = set()
        per_part = {}
        for p, g in zip(self.parts, self.graphs):
            s = g.stats()
            per_part[p.name] = s
            c = g.candidates
            if p.is_lower:
                c = c[c["in_graph"]]
            points.update(map(tuple, c[["src", "i"]].to_numpy().tolist()))
        out["per_part"] = per_part
        out["transition_points"] = len(points)
        out["candidates"] = int(sum(len(g.candidates) for g in self.graphs))
        low = per_part[self.parts[0].name]  # the lower body's graph routes the character
        for key, value in low.items():
            if key not in ("transition_points", "candidates", "mean_cost_m"):
                out[key] = value
        if self.config.whole_body_candidates:
            # the SMG's transitions are the BPMG's fallback (see plan): pairs it connects count
            out["connected_clip_pairs_progressive"] = out.get("connected_clip_pairs")
            out["connected_clip_pairs"] = len(_connected_pairs(self.graphs[0]) | _connected_pairs(self._smg().tg))
        costs = [g.candidates["cost"].to_numpy() for g in self.graphs]
        out["mean_cost_m"] = float(np.mean(np.concatenate(costs))) if sum(len(c) for c in costs) else float("nan")
        return out

    def _group(self, p: int, x: int, y: int):
        key = (p, x, y)
        if key not in self._groups:
            c = self.graphs[p].candidates
            sel = c[(c["src"] == x) & (c["dst"] == y)]
            order = np.lexsort((sel["cost"].to_numpy(), sel["i"].to_numpy()))
            self._groups[key] = (
                sel["i"].to_numpy()[order], sel["j"].to_numpy()[order], sel["cost"].to_numpy()[order],
            )
        return self._groups[key]

    def _forced(self, p: int, x: int, y: int, i_l: int, j_l: int, entry: int, sync: int) -> PartMove:
        """Fallback for a part without a feasible candidate of its own: it keeps the lower
        body's phase (offset ``j - i`` and time-scale 1) and leaves at the frame where its own
        distance along that diagonal is smallest (between entering X and the lower body's
        departure, or at the lower body's departure)."""
        d = self.distances[p][(x, y)]
        off = j_l - i_l
        k = self.clipset.window
        lo = max(entry, -off, 0, i_l - int(round(self.config.max_lead_s * self.clipset.fps)) if self.config.max_lead_s is not None else 0)
        hi = min(i_l if self.config.parts_lead else d.shape[0] - 1, sync - k - off, d.shape[0] - 1, d.shape[1] - 1 - off)
        if hi < lo:
            return PartMove(i_l, j_l, float(d[i_l, j_l]), forced=True)
        ii = np.arange(lo, hi + 1)
        costs = d[ii, ii + off]
        n = int(np.argmin(costs))
        return PartMove(int(ii[n]), int(ii[n] + off), float(costs[n]), forced=True)

    def _hop(self, x: int, y: int, entry: int, i_l: int, j_l: int, lower_cost: float, final: bool,
             forced: frozenset = frozenset()) -> Hop:
        """Plan one progressive transition (see the module docstring); parts in ``forced`` follow
        the lower body."""
        cs, cfg = self.clipset, self.config
        k = cs.window
        n_y = int(cs.lengths[y])
        extra = int(round(cfg.max_sync_s * cs.fps)) if final else 0
        syncs = range(j_l + k, max(j_l + k, min(n_y - 1, j_l + k + extra)) + 1)
        max_offset = cfg.max_phase_offset_s * cs.fps
        latest = i_l if cfg.parts_lead else np.inf
        earliest = -np.inf if cfg.max_lead_s is None else i_l - int(round(cfg.max_lead_s * cs.fps))
        lo, hi = 1.0 / cfg.max_time_scale, cfg.max_time_scale
        n_free = len(self.parts) - 1 - len(forced)
        S = np.asarray(syncs)
        T = i_l + S - j_l  # (syncs,) when the parts reach Y frame sync
        # per part, all syncs at once: is candidate n feasible for sync s, and the first feasible
        first = {}
        for p in range(1, len(self.parts)):
            if p in forced:
                continue
            ii, jj, cc = self._group(p, x, y)
            if ii.size == 0:
                continue
            static = ((ii >= entry) & (ii >= earliest) & (ii <= latest)
                      & (np.abs((jj - ii) - (j_l - i_l)) <= max_offset))
            gap = T[:, None] - ii[None, :]
            scale = (S[:, None] - jj[None, :]) / np.maximum(gap, 1)
            ok = static[None, :] & (gap >= 1) & (jj[None, :] + k <= S[:, None]) & (scale >= lo) & (scale <= hi)
            # earliest departure, then lowest cost (the group is sorted so)
            first[p] = (ok.any(axis=1), ok.argmax(axis=1), ii, jj, cc)
        best = None
        for n_s, sync in enumerate(S):
            moves: list[PartMove | None] = [PartMove(i_l, j_l, lower_cost)]
            found = 0
            for p in range(1, len(self.parts)):
                if p not in first or not first[p][0][n_s]:
                    moves.append(None)
                    continue
                _, arg, ii, jj, cc = first[p]
                n = int(arg[n_s])
                moves.append(PartMove(int(ii[n]), int(jj[n]), float(cc[n])))
                found += 1
            if best is None or found > best[0]:
                best = (found, int(sync), moves)
            if found == n_free:
                break
        _, sync, moves = best
        moves = [m if m is not None else self._forced(p, x, y, i_l, j_l, entry, sync) for p, m in enumerate(moves)]
        align = cs.alignment("lower", x, i_l, y, j_l)
        return Hop(x, y, entry, i_l, j_l, sync, align, tuple(moves))

    def _plan(self, a: int, b: int, request: int, route, forced: frozenset) -> TransitionPlan:
        hops, entry = [], request
        for n, (x, i, y, j, r) in enumerate(route):
            cost = float(self.graphs[0].candidates.at[r, "cost"])
            hop = self._hop(x, y, entry, i, j, cost, final=(n == len(route) - 1), forced=forced)
            hops.append(hop)
            entry = hop.sync
        cs = self.clipset
        return TransitionPlan(
            "bpmg", a, b, request, cs.window, cs.fps, self.parts, tuple(hops), self.part_weights, self.config.norm,
            info={"profile": self.config.profile, "guard_forced": sorted(self.parts[p].name for p in forced)},
        )

    def plan(self, src: int | str, dst: int | str, request: int) -> TransitionPlan | None:
        """Progressive transition from frame ``request`` of ``src`` into ``dst`` (``None`` if the
        lower body cannot reach ``dst`` from there).

        With ``speed_guard``, an upper part that would move faster than ``guard_tolerance``
        times its fastest speed in the clips involved is made to follow the lower body; if the
        transition still does, the next lower-body transition is tried (up to ``guard_tries``
        times; ``plan.info["guard_ok"]`` says whether the final plan passed).
        """
        cs, cfg = self.clipset, self.config
        a, b = cs.index(src), cs.index(dst)
        validate_request(cs.clips, a, b, request)
        owner = joint_part_index(cs.skeleton.n_joints, list(self.parts))
        search, plan = request, None
        for attempt in range(cfg.guard_tries if cfg.speed_guard else 1):
            route = self.graphs[0].route(a, search, b)
            if route is None:
                break
            forced: frozenset = frozenset()
            plan = self._plan(a, b, request, route, forced)
            if not cfg.speed_guard:
                return plan
            for _ in range(len(self.parts)):
                fast = fast_joints(cs, plan, cfg.guard_tolerance)
                if fast.size == 0:
                    plan.info.update(guard_ok=True, guard_attempts=attempt + 1)
                    return plan
                culprits = {int(owner[j]) for j in fast} - {0} - set(forced)
                if not culprits:
                    break
                forced = forced | frozenset(culprits)
                plan = self._plan(a, b, request, route, forced)
            search = route[0][1] + 1  # try the next departure of the lower body
        if plan is not None:
            plan.info.update(guard_ok=False, guard_attempts=cfg.guard_tries)
        if cfg.whole_body_candidates:
            whole = self._whole_body_plan(a, b, request)
            if whole is not None and (plan is None or whole.info.get("guard_ok", True)):
                return whole
        return plan

    def _smg(self):
        """The SMG on the same clips and parameters (built once)."""
        from evalkit.synth.smg import build_smg

        cfg = self.config
        if "smg" not in self._groups:
            self._groups["smg"] = build_smg(self.clipset, threshold=cfg.threshold, minima_radius_s=cfg.minima_radius_s,
                                            prune=cfg.prune, norm=cfg.norm, speed_guard=cfg.speed_guard,
                                            guard_tolerance=cfg.guard_tolerance, guard_tries=cfg.guard_tries)
        return self._groups["smg"]

    def _whole_body_plan(self, a: int, b: int, request: int) -> TransitionPlan | None:
        """The SMG's transition on the same clips with every part moving with the lower body
        (used when no progressive transition passes): what a BPMG can do whatever its parts'
        candidates, so it serves every request an SMG serves."""
        cfg = self.config
        smg = self._smg().plan(a, b, request)
        if smg is None:
            return None
        hops = tuple(Hop(h.src, h.dst, h.entry, h.i_lower, h.j_lower, h.sync, h.align,
                         tuple(PartMove(h.i_lower, h.j_lower, h.moves[0].cost, forced=p > 0) for p in range(len(self.parts))))
                     for h in smg.hops)
        return TransitionPlan("bpmg", a, b, request, smg.window, smg.fps, self.parts, hops, self.part_weights, cfg.norm,
                              info={**smg.info, "profile": cfg.profile, "whole_body": True})


def _connected_pairs(tg: TransitionGraph) -> set[tuple[int, int]]:
    """Ordered pairs of different clips joined by a transition kept in the graph."""
    c = tg.candidates
    kept = c[c["in_graph"]] if "in_graph" in c.columns else c
    return {(int(a), int(b)) for a, b in kept[["src", "dst"]].to_numpy() if a != b}


def _with_whole_body(lower: pd.DataFrame, body: pd.DataFrame) -> pd.DataFrame:
    """Lower-body candidates plus the whole-body (SMG) candidates at other frame pairs, with a
    ``via`` column saying which distance found each."""
    keys = ["src", "i", "dst", "j"]
    both = pd.concat([lower.assign(via="lower"), body.assign(via="body")], ignore_index=True)
    return both.drop_duplicates(keys, keep="first").reset_index(drop=True)


def build_bpmg(
    clips: Iterable[str | os.PathLike | Motion] | ClipSet,
    profile: str = "sp4a",
    threshold: float = DEFAULT_THRESHOLD,
    window_s: float = 1.0 / 3.0,
    fps: float = 60.0,
    weights: str | Mapping[str, float] = "paths",
    minima_radius_s: float = 0.1,
    prune: bool = True,
    norm: str = "rms",
    gait_phase: bool = True,
    max_time_scale: float = 1.5,
    max_sync_s: float = 0.5,
    max_phase_offset_s: float = 0.2,
    parts_lead: bool = True,
    speed_guard: bool = True,
    guard_tolerance: float = 1.1,
    guard_tries: int = 8,
    whole_body_candidates: bool = True,
    max_lead_s: float | None = 1.0 / 3.0,
    lower_distance: str = "track",
) -> BodyPartMotionGraphs:
    """Build body part motion graphs.

    Args:
        clips: motion files / folders / :class:`Motion` objects, or a ready :class:`ClipSet`.
        profile: split profile (``sp2``, ``sp3a``, ``sp3b``, ``sp4a``, ``sp4b``, ``sp5``).
        threshold: similarity threshold for every part (metres, in ``norm``).
        window_s, fps, weights, minima_radius_s, prune, norm: as for :func:`build_smg`.
        gait_phase: lower-body transitions must respect the feet's stance/swing state.
        max_time_scale: largest time-scale of an upper part's path.
        max_sync_s: latest re-synchronisation after the lower body's arrival, seconds.
        max_phase_offset_s, parts_lead, speed_guard, guard_tolerance, guard_tries,
            whole_body_candidates, max_lead_s, lower_distance: see :class:`BPMGConfig`.

    Returns:
        A :class:`BodyPartMotionGraphs`; ``.stats()`` and ``.plan(a, b, frame)`` as for the SMG.
    """
    cs = ClipSet.from_clips(clips, fps=fps, window_s=window_s, weights=weights)
    cfg = BPMGConfig(threshold=threshold, window_s=cs.window / cs.fps, fps=cs.fps, weights=cs.weights,
                     minima_radius_s=minima_radius_s, prune=prune, norm=norm, speed_guard=speed_guard,
                     guard_tolerance=guard_tolerance, guard_tries=guard_tries, profile=profile, gait_phase=gait_phase,
                     max_time_scale=max_time_scale, max_sync_s=max_sync_s, max_phase_offset_s=max_phase_offset_s,
                     parts_lead=parts_lead, whole_body_candidates=whole_body_candidates, max_lead_s=max_lead_s,
                     lower_distance=lower_distance)
    parts = tuple(split_profile(cs.skeleton, profile, cs.roles))
    radius = cfg.radius(cs.fps)
    graphs, dists, weights_ = [], [], []
    for p in parts:
        d = cs.distances("lower_track", norm) if p.is_lower and cfg.lower_distance == "track" else cs.part_distances(p, norm)
        cand = find_candidates(d, cs.lengths, cs.window, threshold, radius)
        if p.is_lower and whole_body_candidates:
            cand = _with_whole_body(cand, find_candidates(cs.distances("full", norm), cs.lengths, cs.window, threshold, radius))
        if p.is_lower and gait_phase:
            contacts = [cs.contacts(c) for c in range(len(cs.clips))]
            cand = cand[gait_filter(cand, contacts, cs.window)].reset_index(drop=True)
        graphs.append(TransitionGraph.build(cand, cs.lengths, cs.window, prune))
        dists.append(d)
        weights_.append(cs.part_weight(p))
    return BodyPartMotionGraphs(cs, cfg, parts, tuple(graphs), tuple(dists), tuple(weights_))
