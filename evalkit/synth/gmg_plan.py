"""Planning GMG synthesis from speech: which GPs, on which accents, at what speed.

**Speech.** A :class:`SpeechInput` holds the pitch accents (PAPT, PSI) of a recording — detected
from the audio or read from a TextGrid with :mod:`evalkit.speech` — and its pauses (silences of
at least ``min_pause_s``, found on Praat's intensity contour). The body rests in every pause: the
middle of each pause is a *rest point* that the plan must spend in the rest pose.

**Anchors** (thesis Fig. 4.11): ``anchor_i = PAPT_i - anticipation`` where the anticipation is
the synchrony rule's mean offset (0.1 s by default: the apex comes before the accent peak).

**Rule variants** (``sync``, ``sync+intensity``): a dynamic programme (Viterbi) over states
``(anchor i, GP g)`` = "GP ``g``'s apex lies on anchor ``i``". A GP's part before its apex is
played ``k1`` times faster and the part after it ``k2`` times faster, both within
``speed_range``; GPs follow each other along graph edges (E1/E2) with a blend (none for contiguous
E1 edges), or through the rest pose across a rest point (or a gap longer than ``long_gap_s``).
A blend lasts at least ``blend_s`` (``rest_in_s`` / ``rest_out_s`` into and out of rest) and at
least the posture distance it covers divided by ``transition_speed`` (radians of weighted RMS
joint angle per second), so that far postures are joined by slow, not sudden, movements. The cost of a plan adds, per GP, ``scale_cost`` times
``(log k / log k_limit)^2`` for both speeds, the transition's posture distance over the
threshold (``transition_cost``), ``hold_cost`` per second of holding beyond ``hold_free_s``,
``rest_cost`` plus the posture distances to and from the rest pose per trip to rest,
``skip_cost`` per accent left without a gesture and, in
``sync+intensity``, ``intensity_weight * ((GSI(k1) - (a + b PSI)) / margin)^2``: how far the GP's
stroke strength, at the speed it is played, lies from the intensity rule's line, in units of
the rule's margin. A small seeded random cost (``jitter``) per (anchor, GP) breaks ties so that
seeds give different, equally valid plans. The programme finds the cheapest plan exactly — not a
greedy choice accent by accent.

**Random variant**: a seeded random walk on the graph; each GP at its captured speed, each
following the previous after the minimal blend, as many as fit between rest points.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.sync import Rules

VARIANTS = ("random", "sync", "sync+intensity")


# --------------------------------------------------------------------------------------------
# Speech input
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SpeechInput:
    """What GMG synthesis needs from a recording.

    Attributes:
        name: recording name (used for output names).
        duration: seconds.
        papts: ``(accents,)`` pitch-accent peak times, seconds, increasing.
        psi: ``(accents,)`` PSI in [0, 1] (NaN = unknown: no intensity cost for that accent).
        pauses: ``(start, end)`` silences in seconds, at least ``min_pause_s`` long.
        audio: path of the audio file, if any; textgrid: path of the annotation, if any.
        source: ``"audio"`` (accents detected), ``"textgrid"`` (annotated) or ``"given"``.
    """

    name: str
    duration: float
    papts: np.ndarray
    psi: np.ndarray
    pauses: tuple[tuple[float, float], ...] = ()
    audio: str | None = None
    textgrid: str | None = None
    source: str = "given"

    def __post_init__(self) -> None:
        p = np.asarray(self.papts, dtype=float)
        s = np.asarray(self.psi, dtype=float)
        if p.ndim != 1 or s.shape != p.shape:
            raise InputError(f"{self.name}: papts and psi must be 1-D arrays of the same length")
        if not (self.duration > 0):
            raise InputError(f"{self.name}: duration must be > 0 s, got {self.duration}")
        if len(p) and (np.any(~np.isfinite(p)) or np.any(np.diff(p) < 0)):
            raise InputError(f"{self.name}: PAPTs must be finite and in increasing order")
        object.__setattr__(self, "papts", p)
        object.__setattr__(self, "psi", s)
        object.__setattr__(self, "pauses", tuple((float(a), float(b)) for a, b in self.pauses))

    @property
    def rest_points(self) -> np.ndarray:
        """``(pauses,)`` middle of each pause, seconds: times the body must be at rest."""
        return np.array([(a + b) / 2 for a, b in self.pauses], dtype=float)

    def summary(self) -> dict:
        return {
            "name": self.name, "source": self.source, "audio": self.audio, "textgrid": self.textgrid,
            "duration_s": self.duration, "n_accents": int(len(self.papts)),
            "accent_rate_per_s": float(len(self.papts) / self.duration),
            "pauses": [list(p) for p in self.pauses],
        }


def detect_pauses(times: np.ndarray, db: np.ndarray, duration: float, min_pause_s: float = 0.5, silence_db: float = 25.0) -> list[tuple[float, float]]:
    """Silences of at least ``min_pause_s`` seconds.

    Args:
        times, db: ``(frames,)`` an intensity contour (seconds, dB), e.g. Praat's.
        duration: the recording's length, seconds (silence at the ends reaches 0 and the end).
        silence_db: frames more than this far below the 99th percentile intensity are silent
            (the threshold the syllable-nucleus detector uses).
    """
    t = np.asarray(times, dtype=float)
    d = np.asarray(db, dtype=float)
    if len(t) == 0:
        return [(0.0, float(duration))] if duration >= min_pause_s else []
    silent = d < np.percentile(d, 99) - silence_db
    m = np.concatenate([[0], silent.astype(np.int8), [0]])
    starts = np.flatnonzero(np.diff(m) == 1)
    ends = np.flatnonzero(np.diff(m) == -1) - 1
    step = float(np.median(np.diff(t))) if len(t) > 1 else 0.01
    out = []
    for a, b in zip(starts, ends):
        lo = 0.0 if a == 0 else float(t[a] - step / 2)
        hi = float(duration) if b == len(t) - 1 else float(t[b] + step / 2)
        if hi - lo >= min_pause_s:
            out.append((max(lo, 0.0), min(hi, float(duration))))
    return out


def speech_input(
    audio,
    textgrid=None,
    tier: str = "PAPT",
    min_pause_s: float = 0.5,
    accent_config=None,
    psi_scale=None,
    name: str | None = None,
) -> SpeechInput:
    """Accents (detected, or annotated in a TextGrid) and pauses of a recording.

    Args:
        audio: WAV/FLAC path or :class:`~evalkit.speech.Audio`.
        textgrid: optional Praat TextGrid (path or object) with the accents on ``tier``.
        min_pause_s: shorter silences are not pauses.
        accent_config, psi_scale: passed to :func:`evalkit.speech.speech_accents`.
    """
    from evalkit.speech import AccentConfig, Audio, load_audio, speech_accents

    a = audio if isinstance(audio, Audio) else load_audio(audio)
    analysis = speech_accents(a, textgrid, tier, accent_config or AccentConfig(), psi_scale)
    pauses = detect_pauses(analysis.intensity.times, analysis.intensity.db, a.duration, min_pause_s)
    src = a.meta.get("source") if hasattr(a, "meta") else None
    path = str(src) if src else (None if isinstance(audio, Audio) else str(audio))
    tg = None if textgrid is None or not isinstance(textgrid, (str, os.PathLike)) else str(textgrid)
    order = np.argsort(analysis.papts, kind="stable")
    return SpeechInput(
        name=name or (os.path.splitext(os.path.basename(path))[0] if path else a.name),
        duration=float(a.duration),
        papts=analysis.papts[order],
        psi=analysis.psi[order],
        pauses=tuple(pauses),
        audio=path,
        textgrid=tg,
        source="textgrid" if textgrid is not None else "audio",
    )


# --------------------------------------------------------------------------------------------
# Configuration and plans
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SynthConfig:
    """Parameters of GMG synthesis (times in seconds).

    Attributes:
        speed_range: allowed playback speed factors of a GP's parts (> 1 = faster).
        speed_steps: speeds tried for the part before the apex (a geometric grid, 1 included).
        blend_s: shortest blend between two GPs that are not contiguous in their recording.
        max_blend_s: longest blend unless the posture distance needs more; a longer gap holds the
            poses on either side around the blend.
        rest_in_s, rest_out_s: shortest blend from the rest pose into a GP / from a GP to rest.
        transition_speed: blends last at least (posture distance / this), radians per second.
        long_gap_s: a gap between two anchors at least this long may go through rest even
            without a pause.
        tail_s: the clip lasts this long after the speech ends (time to return to rest).
        max_skip: most accents skipped between two consecutive GPs joined by an edge.
        skip_cost, scale_cost, transition_cost, hold_cost, hold_free_s, rest_cost,
        intensity_weight, jitter: the plan's cost terms (see the module docstring).
        random_lead_s: the random variant starts each run after a random delay up to this.
    """

    speed_range: tuple[float, float] = (0.67, 1.5)
    speed_steps: int = 9
    blend_s: float = 0.2
    max_blend_s: float = 0.5
    rest_in_s: float = 0.4
    rest_out_s: float = 0.4
    transition_speed: float = 1.5
    long_gap_s: float = 2.5
    tail_s: float = 0.5
    max_skip: int = 4
    skip_cost: float = 1.5
    scale_cost: float = 0.5
    transition_cost: float = 0.5
    hold_cost: float = 0.5
    hold_free_s: float = 0.3
    rest_cost: float = 0.3
    intensity_weight: float = 1.0
    jitter: float = 0.2
    random_lead_s: float = 0.5

    def __post_init__(self) -> None:
        lo, hi = self.speed_range
        if not (0 < lo <= 1 <= hi):
            raise InputError(f"speed_range must satisfy 0 < min <= 1 <= max, got {self.speed_range}")
        if self.blend_s <= 0 or self.max_blend_s < self.blend_s:
            raise InputError("need 0 < blend_s <= max_blend_s")
        if not self.transition_speed > 0:
            raise InputError("transition_speed must be > 0")
        if min(self.rest_in_s, self.rest_out_s, self.tail_s) < 0 or self.max_skip < 0 or self.speed_steps < 1:
            raise InputError("rest_in_s, rest_out_s, tail_s and max_skip must be >= 0, speed_steps >= 1")

    def speeds(self) -> np.ndarray:
        """``(steps,)`` the speed grid for the part before the apex."""
        lo, hi = self.speed_range
        k = np.exp(np.linspace(np.log(lo), np.log(hi), self.speed_steps)) if self.speed_steps > 1 else np.array([1.0])
        return np.unique(np.concatenate([k, [1.0]]))

    def speed_cost(self, k: np.ndarray) -> np.ndarray:
        """Cost of playing at speed ``k``: ``scale_cost * (log k / log limit)^2`` (1 at the limit)."""
        k = np.asarray(k, dtype=float)
        lo, hi = self.speed_range
        with np.errstate(divide="ignore", invalid="ignore"):
            up = np.where(hi > 1, np.log(np.maximum(k, 1e-12)) / np.log(hi) if hi > 1 else 0.0, 0.0)
            down = np.where(lo < 1, np.log(np.maximum(k, 1e-12)) / np.log(lo) if lo < 1 else 0.0, 0.0)
        return self.scale_cost * np.where(k >= 1, up, down) ** 2


@dataclass(frozen=True)
class Placement:
    """One GP in a plan.

    Attributes:
        gp: index of the GP in the database.
        anchor: index of the accent whose anchor its apex lies on (-1: none, random variant).
        apex_time: output time of its apex, seconds.
        speed_pre, speed_post: playback speed of the part before / after the apex.
        start_time, end_time: output times of its first and last frame, seconds.
        entry: how the motion gets into it: ``"rest"`` (from the rest pose), ``"E1"`` or ``"E2"``
            (a graph edge from the previous GP).
        gsi: its stroke's GSI at ``speed_pre``.
        blend_in_s: shortest blend into it (from the previous GP or from rest), seconds.
        rest_out_s: blend from it to the rest pose when rest follows, seconds (0 otherwise).
    """

    gp: int
    anchor: int
    apex_time: float
    speed_pre: float
    speed_post: float
    start_time: float
    end_time: float
    entry: str
    gsi: float
    blend_in_s: float = 0.0
    rest_out_s: float = 0.0


@dataclass(frozen=True, eq=False)
class Plan:
    """A synthesis plan.

    Attributes:
        variant: one of :data:`VARIANTS`; seed: the random seed.
        placements: the GPs in time order.
        duration: length of the clip to render, seconds.
        rest_points: times the body is at rest (pause middles), seconds.
        anchors: ``(accents,)`` anchor times (PAPT minus anticipation), seconds.
        cost: total cost of the plan (NaN for the random variant).
        max_blend_s: blend length for rendering (from the config).
    """

    variant: str
    seed: int
    placements: tuple[Placement, ...]
    duration: float
    rest_points: tuple[float, ...]
    anchors: np.ndarray
    cost: float = float("nan")
    max_blend_s: float = 0.5

    def frame(self) -> pd.DataFrame:
        """One row per placement."""
        return pd.DataFrame([asdict(p) for p in self.placements], columns=list(Placement.__dataclass_fields__))


# --------------------------------------------------------------------------------------------
def _core_arrays(gmg, config: SynthConfig):
    """Edge matrices among the core (SCC) nodes."""
    core = gmg.core
    m = core.n_nodes
    edge = np.zeros((m, m), dtype=bool)
    tmin = np.full((m, m), config.blend_s)
    tcost = np.zeros((m, m))
    kind = np.full((m, m), "", dtype=object)
    e = core.edges
    s, d = e["src"].to_numpy(), e["dst"].to_numpy()
    edge[s, d] = True
    dist = e["distance"].to_numpy(dtype=float)
    tmin[s, d] = np.maximum(config.blend_s, dist / config.transition_speed)
    cont = e["contiguous"].to_numpy(dtype=bool)
    tmin[s[cont], d[cont]] = 0.0
    tcost[s, d] = config.transition_cost * dist / gmg.threshold
    kind[s, d] = e["kind"].to_numpy()
    return edge, tmin, tcost, kind


def _rest_arrays(gmg, config: SynthConfig):
    """``(rin, rout, rcost_in, rcost_out)`` per core node: blend durations from / to the rest
    pose (s) and their transition costs."""
    nodes = np.asarray(gmg.core_nodes)
    d_in = np.asarray(gmg.rest_from)[nodes]
    d_out = np.asarray(gmg.rest_to)[nodes]
    rin = np.maximum(config.rest_in_s, d_in / config.transition_speed)
    rout = np.maximum(config.rest_out_s, d_out / config.transition_speed)
    return rin, rout, config.transition_cost * d_in / gmg.threshold, config.transition_cost * d_out / gmg.threshold


def _between(points: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return points[(points > lo) & (points < hi)]


def plan_rules(gmg, speech: SpeechInput, rules: Rules, variant: str = "sync+intensity", config: SynthConfig = SynthConfig(), seed: int = 0) -> Plan:
    """Plan of a rule variant (``sync`` or ``sync+intensity``) by dynamic programming (see the
    module docstring)."""
    if variant not in ("sync", "sync+intensity"):
        raise InputError(f"plan_rules handles 'sync' and 'sync+intensity', got {variant!r}")
    cfg = config
    rng = np.random.default_rng(seed)
    db = gmg.database
    nodes = np.asarray(gmg.core_nodes)
    M = len(nodes)
    pre = db.pre_s[nodes]
    post = db.post_s[nodes]
    K = cfg.speeds()
    S = len(K)
    kmin, kmax = cfg.speed_range
    sc_k = cfg.speed_cost(K)
    gsi = db.gsi_at(K)[nodes]  # (M, S)
    anchors = np.asarray(rules.synchrony.anchor(speech.papts), dtype=float)
    A = len(anchors)
    dur = speech.duration + cfg.tail_s
    rho = np.sort(speech.rest_points)
    edge, tmin, tcost, kind = _core_arrays(gmg, cfg)
    rin, rout, rc_in, rc_out = _rest_arrays(gmg, cfg)
    w_int = cfg.intensity_weight if variant == "sync+intensity" else 0.0
    if A:
        pred = rules.intensity.predict(speech.psi)
        margin = max(rules.intensity.margin, 1e-3)
        icost = w_int * ((gsi.T[None, :, :] - pred[:, None, None]) / margin) ** 2  # (A, S, M)
        icost[~np.isfinite(icost)] = 0.0
    else:
        icost = np.zeros((0, S, M))
    jit = rng.uniform(0.0, cfg.jitter, size=(A, M)) if cfg.jitter > 0 else np.zeros((A, M))
    inf = np.inf

    def enter_from_rest(j: int, lower: float) -> tuple[np.ndarray, np.ndarray]:
        """Cost (M,) and speed index (M,) of entering GP h on anchor j from rest held until ``lower``."""
        room = anchors[j] - lower - rin  # (M,)
        ok = (pre[None, :] / K[:, None]) <= room[None, :] + 1e-9
        ok &= room[None, :] > 0
        c = np.where(ok, sc_k[:, None] + icost[j] + rc_in[None, :], inf)
        idx = np.argmin(c, axis=0)
        return c[idx, np.arange(M)], idx

    def leave_to_rest(i: int, upper: float) -> tuple[np.ndarray, np.ndarray]:
        """Cost (M,) and speed k2 (M,) of finishing GP g on anchor i and resting by ``upper``."""
        room = upper - rout - anchors[i]  # (M,)
        with np.errstate(divide="ignore", invalid="ignore"):
            k2 = np.where(room > 0, np.maximum(1.0, post / np.where(room > 0, room, 1.0)), np.inf)
        c = np.where((room > 0) & (k2 <= kmax + 1e-9), cfg.speed_cost(np.minimum(k2, kmax)) + rc_out, inf)
        return c, np.where(np.isfinite(k2), k2, 1.0)

    D = np.full((A, M), inf)
    # back pointers: previous anchor, previous GP (core index), kind (0 start, 1 edge, 2 rest),
    # speed index of k1, and the previous GP's k2
    b_i = np.full((A, M), -1)
    b_g = np.full((A, M), -1)
    b_kind = np.zeros((A, M), dtype=np.int8)
    b_k1 = np.zeros((A, M), dtype=np.int64)
    b_k2 = np.ones((A, M))
    for j in range(A):
        before = rho[rho < anchors[j]]
        c0, k0 = enter_from_rest(j, max(0.0, before[-1]) if len(before) else 0.0)
        best = c0 + cfg.skip_cost * j
        D_kind = np.zeros(M, dtype=np.int8)
        D_i = np.full(M, -1)
        D_g = np.full(M, -1)
        D_k1 = k0.copy()
        D_k2 = np.ones(M)
        for i in range(j):
            if not np.isfinite(D[i]).any():
                continue
            G = anchors[j] - anchors[i]
            between = _between(rho, anchors[i], anchors[j])
            skip = cfg.skip_cost * (j - i - 1)
            # -- direct transition along an edge
            if len(between) == 0 and j - i - 1 <= cfg.max_skip:
                P = pre[None, :] / K[:, None]  # (S, M_h)
                R = G - P[:, None, :] - tmin[None, :, :]  # (S, M_g, M_h)
                with np.errstate(divide="ignore", invalid="ignore"):
                    need = np.where(post[None, :, None] > 0, post[None, :, None] / np.where(R > 0, R, np.nan), 0.0)
                feas = edge[None] & (R > 0) & np.isfinite(need) & (need <= kmax + 1e-9)
                k2 = np.clip(np.nan_to_num(need, nan=kmax), kmin, kmax)
                hold = np.maximum(R - post[None, :, None] / k2, 0.0)
                cost = (sc_k[:, None, None] + cfg.speed_cost(k2) + cfg.hold_cost * np.maximum(hold - cfg.hold_free_s, 0.0)
                        + tcost[None] + icost[j][:, None, :])
                cost = np.where(feas, cost, inf)
                ks = np.argmin(cost, axis=0)  # (M_g, M_h)
                C = np.take_along_axis(cost, ks[None], axis=0)[0]
                tot = D[i][:, None] + C + skip
                g = np.argmin(tot, axis=0)
                val = tot[g, np.arange(M)]
                better = val < best
                if better.any():
                    h = np.flatnonzero(better)
                    best[h] = val[h]
                    D_kind[h] = 1
                    D_i[h] = i
                    D_g[h] = g[h]
                    D_k1[h] = ks[g[h], h]
                    D_k2[h] = k2[ks[g[h], h], g[h], h]
            # -- through the rest pose
            if len(between) or G >= cfg.long_gap_s:
                upper = between[0] if len(between) else (anchors[i] + anchors[j]) / 2
                lower = between[-1] if len(between) else upper
                cg, k2g = leave_to_rest(i, upper)
                tot_g = D[i] + cg
                g = int(np.argmin(tot_g))
                if np.isfinite(tot_g[g]):
                    ch, kh = enter_from_rest(j, lower)
                    val = tot_g[g] + ch + cfg.rest_cost + skip
                    better = val < best
                    if better.any():
                        h = np.flatnonzero(better)
                        best[h] = val[h]
                        D_kind[h] = 2
                        D_i[h] = i
                        D_g[h] = g
                        D_k1[h] = kh[h]
                        D_k2[h] = k2g[g]
        D[j] = best + jit[j]
        b_i[j], b_g[j], b_kind[j], b_k1[j], b_k2[j] = D_i, D_g, D_kind, D_k1, D_k2
    # -- the end: the last GP returns to rest before the next rest point or the clip's end
    best_total, end = cfg.skip_cost * A, None
    for i in range(A):
        after = rho[rho > anchors[i]]
        cg, k2g = leave_to_rest(i, min(dur, after[0]) if len(after) else dur)
        tot = D[i] + cg + cfg.skip_cost * (A - 1 - i)
        g = int(np.argmin(tot))
        if tot[g] < best_total:
            best_total, end = float(tot[g]), (i, g, float(k2g[g]))
    chain: list[tuple[int, int, int, int, float]] = []  # (anchor, core gp, kind, k1 index, own k2)
    if end is not None:
        j, h, k2 = end
        while j >= 0:
            chain.append((j, h, int(b_kind[j, h]), int(b_k1[j, h]), k2))
            j, h, k2 = int(b_i[j, h]), int(b_g[j, h]), float(b_k2[j, h])
        chain.reverse()
    placements = []
    for n, (j, h, kd, k1i, k2) in enumerate(chain):
        gp = int(nodes[h])
        k1 = float(K[k1i])
        g = chain[n - 1][1] if n else -1
        entry = str(kind[g, h]) if kd == 1 else "rest"
        rest_next = n + 1 == len(chain) or chain[n + 1][2] != 1
        placements.append(Placement(
            gp=gp, anchor=int(j), apex_time=float(anchors[j]), speed_pre=k1, speed_post=float(k2),
            start_time=float(anchors[j] - pre[h] / k1), end_time=float(anchors[j] + post[h] / k2),
            entry=entry, gsi=float(db.gsi_at(k1)[gp]),
            blend_in_s=float(tmin[g, h] if kd == 1 else rin[h]), rest_out_s=float(rout[h] if rest_next else 0.0),
        ))
    return Plan(variant, int(seed), tuple(placements), float(dur), tuple(float(r) for r in rho), anchors, best_total, cfg.max_blend_s)


def plan_random(gmg, speech: SpeechInput, rules: Rules | None = None, config: SynthConfig = SynthConfig(), seed: int = 0) -> Plan:
    """Plan of the ``random`` variant: a seeded random walk, GPs at captured speed (see the
    module docstring). ``rules`` only sets the anchors recorded in the plan."""
    from evalkit.sync import DEFAULT_RULES

    cfg = config
    rng = np.random.default_rng(seed)
    db = gmg.database
    nodes = np.asarray(gmg.core_nodes)
    M = len(nodes)
    pre = db.pre_s[nodes]
    post = db.post_s[nodes]
    edge, tmin, _, kind = _core_arrays(gmg, cfg)
    rin, rout, _, _ = _rest_arrays(gmg, cfg)
    gsi1 = db.gsi_at(1.0)
    dur = speech.duration + cfg.tail_s
    rho = np.sort(speech.rest_points)
    bounds = np.concatenate([[0.0], rho, [dur]])
    placements: list[Placement] = []
    prev: int | None = None
    for r0, r1 in zip(bounds[:-1], bounds[1:]):
        t = r0 + (rng.uniform(0.0, cfg.random_lead_s) if cfg.random_lead_s > 0 else 0.0)
        first = True
        while True:
            cands = np.flatnonzero(edge[prev]) if prev is not None else np.arange(M)
            if len(cands) == 0:
                cands = np.arange(M)
            chosen = None
            for h in rng.permutation(cands):
                blend = rin[h] if first else tmin[prev, h]
                s = t + blend
                if s + pre[h] + post[h] + rout[h] <= r1 + 1e-9:
                    chosen, start = int(h), s
                    break
            if chosen is None:
                break
            h = chosen
            entry = "rest" if first else str(kind[prev, h])
            gp = int(nodes[h])
            if placements and not first:
                placements[-1] = replace(placements[-1], rest_out_s=0.0)
            placements.append(Placement(gp, -1, float(start + pre[h]), 1.0, 1.0, float(start), float(start + pre[h] + post[h]),
                                        entry, float(gsi1[gp]), float(blend), float(rout[h])))
            t = start + pre[h] + post[h]
            prev = h
            first = False
    rules = rules or DEFAULT_RULES
    anchors = np.asarray(rules.synchrony.anchor(speech.papts), dtype=float)
    return Plan("random", int(seed), tuple(placements), float(dur), tuple(float(r) for r in rho), anchors, float("nan"), cfg.max_blend_s)


def make_plan(gmg, speech: SpeechInput, rules: Rules, variant: str, config: SynthConfig = SynthConfig(), seed: int = 0) -> Plan:
    """Plan of any variant in :data:`VARIANTS`."""
    if variant not in VARIANTS:
        raise InputError(f"unknown variant {variant!r}; use one of {', '.join(VARIANTS)}")
    if variant == "random":
        return plan_random(gmg, speech, rules, config, seed)
    return plan_rules(gmg, speech, rules, variant, config, seed)
