"""Planning GMG synthesis from speech: which GPs, on which accents, at what speed.

**Speech.** A :class:`SpeechInput` holds the pitch accents (PAPT, PSI) of a recording — detected
from the audio or read from a TextGrid with :mod:`evalkit.speech` — and its pauses (silences of
at least ``min_pause_s``, found on Praat's intensity contour). The body rests in every pause: each
pause, less ``pause_margin_s`` at either end, is a *rest interval* that the plan spends in the
rest pose (so is silence before and after the speech, and the clip's last ``end_rest_s``).

**Anchors** (thesis Fig. 4.11): ``anchor_i = PAPT_i - anticipation`` where the anticipation is
the synchrony rule's mean offset (0.1 s by default: the apex comes before the accent peak).

**Rule variants** (``sync``, ``sync+intensity``): a dynamic programme (Viterbi) over states
``(anchor i, GP g)`` = "GP ``g``'s apex lies on anchor ``i``". A GP's part before its apex is
played ``k1`` times faster and the part after it ``k2`` times faster, both within
``speed_range``; GPs follow each other along graph edges (E1/E2) with a blend (none for
contiguous E1 edges), or through the rest pose across a rest interval (or a gap longer than
``long_gap_s``). A blend lasts at least ``blend_s`` (``rest_in_s`` / ``rest_out_s`` into and out
of rest, after ``settle_s``), at least the posture distance it covers divided by
``transition_speed`` (radians of weighted RMS joint angle per second) and at least the distance a
wrist travels divided by ``hand_speed`` (m/s), so that far postures are joined by movements no
faster than captured preparations. The cost of a plan adds, per GP, ``scale_cost`` times
``(log k / log k_limit)^2`` for both speeds, the transition's posture distance over the
threshold (``transition_cost``), ``hold_cost`` per second of holding beyond ``hold_free_s``,
``rest_cost`` plus the posture distances to and from the rest pose per trip to rest,
``skip_cost`` per accent left without a gesture and, in ``sync+intensity``,
``intensity_weight * ((GSI(k1) - (a + b PSI)) / margin)^2``: how far the GP's stroke strength,
at the speed it is played, lies from the intensity rule's line, in units of the rule's margin. A
small seeded random cost (``jitter``) per (anchor, GP) breaks ties so that seeds give different,
equally valid plans. The programme finds the cheapest plan exactly — not a greedy choice accent
by accent (:func:`chain_cost` re-evaluates any plan step by step; tests compare).

**Random variant**: a seeded random walk on the graph; each GP at its captured speed, each
following the previous after the minimal blend, as many as fit between rest intervals.

Randomness comes from :func:`plan_rng`, seeded by the seed and the utterance's name.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import asdict, dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.features.signal import runs
from evalkit.gesture_speech import Rules

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

    @classmethod
    def from_analysis(cls, analysis, audio: str | None = None, textgrid: str | None = None, min_pause_s: float = 0.5,
                      name: str | None = None) -> "SpeechInput":
        """From a :class:`~evalkit.speech.SpeechAnalysis` (accents, PSI and the intensity contour
        the pauses are found on)."""
        order = np.argsort(analysis.papts, kind="stable")
        pauses = detect_pauses(analysis.intensity.times, analysis.intensity.db, analysis.duration, min_pause_s)
        return cls(
            name=name or (os.path.splitext(os.path.basename(audio))[0] if audio else analysis.name),
            duration=float(analysis.duration),
            papts=analysis.papts[order],
            psi=analysis.psi[order],
            pauses=tuple(pauses),
            audio=audio,
            textgrid=textgrid,
            source="textgrid" if any(a.source == "textgrid" for a in analysis.accents) or textgrid else "audio",
        )

    def rest_intervals(self, clip_end: float, margin_s: float = 0.2) -> list[tuple[float, float]]:
        """When the body must be in the rest pose, seconds: each pause without ``margin_s`` at
        either end (gestures may start and finish that close to speech; at most half the
        pause), extended to 0 / ``clip_end`` for silence at the start / end of the recording."""
        out = []
        for a, b in self.pauses:
            m = min(margin_s, (b - a) / 2)
            lo = 0.0 if a <= 1e-9 else a + m
            hi = float(clip_end) if b >= self.duration - 1e-9 else b - m
            out.append((lo, max(lo, hi)))
        return out

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
    starts, stops = runs(silent)
    ends = stops - 1
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
    src = a.meta.get("source") if hasattr(a, "meta") else None
    path = str(src) if src else (None if isinstance(audio, Audio) else str(audio))
    tg = None if textgrid is None or not isinstance(textgrid, (str, os.PathLike)) else str(textgrid)
    out = SpeechInput.from_analysis(analysis, path, tg, min_pause_s, name)
    if textgrid is not None and out.source != "textgrid":
        out = replace(out, source="textgrid")
    return out


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
        settle_s: after a GP, the hands slow down this long before the blend to rest starts (so
            the stroke ends where the capture's did instead of running into the retraction).
        transition_speed: blends last at least (posture distance / this), radians per second.
        hand_speed: blends last at least (wrist travel / this), metres per second; the default
            is about the median average speed of preparations in the Bandai Namco gesture
            capture (0.64 m/s).
        prep_ratio: a blend (the preparation into a GP, a movement between GPs, the retraction
            to rest) lasts long enough that the wrist's peak speed in it (``BLEND_PEAK`` times
            its travel over its duration) stays below this fraction of the peak stroke speed of
            the GPs it joins (the incoming one at the speed it is played), so that every stroke
            stays the fastest movement around it — the velocity profile of preparation, stroke,
            hold, retraction that a blind gesture analysis finds. ``None``: no such bound.
        min_stroke_speed: a GP is played only at speeds at which its stroke's peak wrist speed
            reaches this (m/s of a 1.70 m body): a stroke barely above the gesture analysis'
            ``min_peak_speed`` (0.5) is lost in any blend, so it would be planned but never seen.
        max_prep_s: the ``prep_ratio`` bound never asks for more than this many seconds (a
            very soft stroke far from the rest pose would otherwise need seconds).
        min_rate: fewest gestures per second of speech a rule plan places when the speech has
            usable accents (a plan below it is solved again with a doubled skip cost, up to
            ``min_rate_rounds`` times, then without the ``prep_ratio`` bound), so that no
            utterance with accents gets a still figure; the random variant, when it finds no
            room at all, likewise walks again without the bound.
        long_gap_s: a gap between two anchors at least this long may go through rest even
            without a pause.
        tail_s: the clip lasts this long after the speech ends (time to return to rest).
        end_rest_s: the clip ends with at least this long in the rest pose.
        pause_margin_s: gestures may reach this far into a pause (see
            :meth:`SpeechInput.rest_intervals`).
        max_skip: most accents skipped between two consecutive GPs joined by an edge.
        skip_cost, scale_cost, transition_cost, hold_cost, hold_free_s, rest_cost,
        intensity_weight, jitter: the plan's cost terms (see the module docstring).
        random_lead_s: the random variant starts each run after a random delay up to this.
        plant_feet: keep the feet planted where the rest pose puts them (two-bone leg IK when
            rendering), so that blends between GPs never slide the feet: ``True``, ``False`` or
            ``"auto"`` (when the capture is performed standing: not for walks and hops).
        smooth_hz: cutoff (Hz) of the zero-phase low-pass crossfaded in around every seam of
            the rendered clip (``None``: none), see
            :func:`evalkit.synth.gmg.realise.smooth_seams`.
        stroke_stops: render strokes whose capture does not come to a stop at the apex (cut
            from continuous movement) as strokes that do: slowing into the apex, then a hold
            (:func:`evalkit.synth.gmg.realise.stroke_stop`).
        stroke_contrast: consecutive GPs whose strokes peak within the gesture analysis'
            ``stroke_window_s`` of each other must have peak speeds within its ``stroke_ratio``
            of each other (else the weaker one is, by the analysis' rule, no stroke at all).
    """

    speed_range: tuple[float, float] = (0.67, 1.5)
    speed_steps: int = 9
    blend_s: float = 0.2
    max_blend_s: float = 0.5
    rest_in_s: float = 0.4
    rest_out_s: float = 0.4
    settle_s: float = 0.15
    transition_speed: float = 1.5
    hand_speed: float = 0.7
    prep_ratio: float | None = 0.5
    min_stroke_speed: float = 0.8
    max_prep_s: float = 1.0
    min_rate: float = 0.2
    min_rate_rounds: int = 6
    long_gap_s: float = 2.5
    tail_s: float = 0.5
    end_rest_s: float = 0.1
    pause_margin_s: float = 0.2
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
    plant_feet: bool | str = "auto"
    smooth_hz: float | None = 5.0
    stroke_stops: bool = True
    stroke_contrast: bool = True

    def __post_init__(self) -> None:
        lo, hi = self.speed_range
        if not (0 < lo <= 1 <= hi):
            raise InputError(f"speed_range must satisfy 0 < min <= 1 <= max, got {self.speed_range}")
        if self.blend_s <= 0 or self.max_blend_s < self.blend_s:
            raise InputError("need 0 < blend_s <= max_blend_s")
        if self.plant_feet not in (True, False, "auto"):
            raise InputError(f"plant_feet must be true, false or 'auto', got {self.plant_feet!r}")
        if not (self.transition_speed > 0 and self.hand_speed > 0):
            raise InputError("transition_speed and hand_speed must be > 0")
        if self.prep_ratio is not None and not self.prep_ratio > 0:
            raise InputError(f"prep_ratio must be > 0 or None, got {self.prep_ratio}")
        if self.min_rate < 0 or self.min_rate_rounds < 0:
            raise InputError("min_rate and min_rate_rounds must be >= 0")
        if min(self.rest_in_s, self.rest_out_s, self.settle_s, self.tail_s, self.end_rest_s, self.pause_margin_s) < 0 or self.max_skip < 0 or self.speed_steps < 1:
            raise InputError("rest_in_s, rest_out_s, tail_s, end_rest_s, pause_margin_s and max_skip must be >= 0, speed_steps >= 1")

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
        rest_out_s: settling plus blend from it to the rest pose when rest follows, seconds (0
            otherwise).
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
        rest_intervals: ``(start, end)`` times the body is at rest, seconds.
        anchors: ``(accents,)`` anchor times (PAPT minus anticipation), seconds.
        cost: total cost of the plan (NaN for the random variant).
        max_blend_s, settle_s, plant_feet, smooth_hz, stroke_stops: rendering settings (from the config).
    """

    variant: str
    seed: int
    placements: tuple[Placement, ...]
    duration: float
    rest_intervals: tuple[tuple[float, float], ...]
    anchors: np.ndarray
    cost: float = float("nan")
    max_blend_s: float = 0.5
    settle_s: float = 0.15
    plant_feet: bool | str = "auto"
    smooth_hz: float | None = 5.0
    stroke_stops: bool = True

    def frame(self) -> pd.DataFrame:
        """One row per placement."""
        return pd.DataFrame([asdict(p) for p in self.placements], columns=list(Placement.__dataclass_fields__))


# --------------------------------------------------------------------------------------------
def plan_rng(seed: int, speech: SpeechInput) -> np.random.Generator:
    """The random stream of a plan: seeded by the seed and the speech's name, so one seed gives
    different (but reproducible) walks and tie-breaks for different utterances."""
    return np.random.default_rng([int(seed), zlib.crc32(speech.name.encode("utf-8"))])


@dataclass(frozen=True, eq=False)
class _Context:
    """Everything the planners need, as arrays over the core (SCC) nodes ``M`` and speeds ``S``."""

    cfg: SynthConfig
    nodes: np.ndarray       # (M,) database index of each core node
    pre: np.ndarray         # (M,) seconds start -> apex
    post: np.ndarray        # (M,) seconds apex -> end
    K: np.ndarray           # (S,) speeds for the part before the apex
    sc_k: np.ndarray        # (S, M) cost of playing GP h's pre part at speed K[s] (inf: stroke too weak to see)
    gsi: np.ndarray         # (M, S)
    anchors: np.ndarray     # (A,)
    usable: np.ndarray      # (A,) anchor outside every rest interval
    icost: np.ndarray       # (A, S, M) intensity cost
    jit: np.ndarray         # (A, M)
    edge: np.ndarray        # (M, M) bool
    tmin: np.ndarray        # (S, M, M) shortest blend g -> h with h's pre part at speed K[s], s
    tcost: np.ndarray       # (M, M)
    kind: np.ndarray        # (M, M) "E1"/"E2"/""
    rin: np.ndarray         # (S, M) blend from rest into h at speed K[s], s
    rout: np.ndarray        # (M,) blend to rest, s
    rc_in: np.ndarray       # (M,)
    rc_out: np.ndarray      # (M,)
    rest: tuple[tuple[float, float], ...]
    dur: float
    vmax: np.ndarray = None      # (M,) captured stroke peak, m/s
    lead: np.ndarray = None      # (M,) captured seconds from stroke peak to apex
    contrast: float = 0.0        # strokes whose peaks lie within `window` s: slower >= contrast x faster
    window: float = 0.0

    # -- rest intervals ---------------------------------------------------------------------
    def rest_before(self, t: float) -> float:
        """End of the last rest interval ending by ``t`` (0: the clip starts at rest)."""
        return max([0.0] + [hi for lo, hi in self.rest if hi <= t + 1e-9])

    def rest_after(self, t: float) -> float:
        """Start of the first rest interval starting at or after ``t`` (else the final rest)."""
        return min([self.dur - self.cfg.end_rest_s] + [lo for lo, hi in self.rest if lo >= t - 1e-9])

    def rest_between(self, a: float, b: float) -> tuple[float, float] | None:
        """``(first start, last end)`` of the rest intervals lying between ``a`` and ``b``."""
        inside = [(lo, hi) for lo, hi in self.rest if lo >= a - 1e-9 and hi <= b + 1e-9]
        return (inside[0][0], inside[-1][1]) if inside else None

    # -- vectorised pieces of the cost -------------------------------------------------------
    def enter(self, j: int, lower: float) -> tuple[np.ndarray, np.ndarray]:
        """``(S, M)`` cost of entering GP h on anchor j at speed K[s] from rest held until ``lower``."""
        room = self.anchors[j] - lower - self.rin  # (S, M)
        ok = ((self.pre[None, :] / self.K[:, None]) <= room + 1e-9) & (room > 0)
        return np.where(ok, self.sc_k + self.icost[j] + self.rc_in[None, :], np.inf)

    def leave(self, i: int, upper: float) -> tuple[np.ndarray, np.ndarray]:
        """``(M,)`` cost and ``(M,)`` post-apex speed of finishing GP g on anchor i and resting by ``upper``."""
        kmax = self.cfg.speed_range[1]
        room = upper - self.rout - self.anchors[i]
        with np.errstate(divide="ignore", invalid="ignore"):
            k2 = np.where(room > 0, np.maximum(1.0, self.post / np.where(room > 0, room, 1.0)), np.inf)
        ok = (room > 0) & (k2 <= kmax + 1e-9)
        c = np.where(ok, self.cfg.speed_cost(np.where(ok, k2, 1.0)) + self.rc_out, np.inf)
        return c, np.where(ok, k2, 1.0)

    def direct(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
        """``(S, M_g, M_h)`` cost and post-apex speed of g of going from (i, g) to (j, h) along an edge."""
        cfg = self.cfg
        kmin, kmax = cfg.speed_range
        G = self.anchors[j] - self.anchors[i]
        P = self.pre[None, :] / self.K[:, None]  # (S, M_h)
        R = G - P[:, None, :] - self.tmin  # (S, M_g, M_h): time for g's post part + hold
        post = self.post[None, :, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            need = np.where(post > 0, post / np.where(R > 0, R, np.nan), 0.0)
        feas = self.edge[None] & (R > 0) & np.isfinite(need) & (need <= kmax + 1e-9) & self.distinct(i, j)
        k2 = np.clip(np.nan_to_num(need, nan=kmax), kmin, kmax)
        hold = np.maximum(R - post / k2, 0.0)
        cost = (self.sc_k[:, None, :] + cfg.speed_cost(k2) + cfg.hold_cost * np.maximum(hold - cfg.hold_free_s, 0.0)
                + self.tcost[None] + self.icost[j][:, None, :])
        return np.where(feas, cost, np.inf), k2


    def distinct(self, i: int, j: int) -> np.ndarray:
        """``(S, M_g, M_h)`` bool: GP h played on anchor j at speed K[s] after GP g on anchor i
        keeps both strokes strokes: where their speed peaks lie within ``window`` seconds, the
        slower peak is at least ``contrast`` times the faster (the gesture analysis' own rule
        for telling a stroke from a lesser movement beside it, ``PhaseConfig.stroke_ratio`` and
        ``stroke_window_s``). g's peak is taken at captured speed, h's at K[s]."""
        if self.contrast <= 0 or self.vmax is None:
            return np.ones((len(self.K), len(self.nodes), len(self.nodes)), dtype=bool)
        vg = self.vmax[None, :, None]
        vh = self.K[:, None, None] * self.vmax[None, None, :]
        tg = self.anchors[i] - self.lead[None, :, None]
        th = self.anchors[j] - self.lead[None, None, :] / self.K[:, None, None]
        near = np.abs(th - tg) <= self.window
        return ~near | (np.minimum(vg, vh) >= self.contrast * np.maximum(vg, vh))


#: Peak of the blend weight's slope (quintic smoothstep ``6u^5 - 15u^4 + 10u^3``: 15/8), so a
#: blend of duration ``T`` over a travel ``d`` moves at most about ``BLEND_PEAK d / T``.
BLEND_PEAK = 15.0 / 8.0


def _prep_time(cfg: SynthConfig, travel, v_from, v_to, shape=None, src=None, dst=None) -> np.ndarray:
    """Shortest blend (s) over a wrist ``travel`` (m) whose peak speed stays below
    ``prep_ratio`` times the slower of the strokes it joins (``v_from``, ``v_to``, m/s; ``inf``:
    a rest pose). With ``shape``/``src``/``dst`` the edge values are scattered into an array of
    ``shape`` (other entries 0)."""
    if cfg.prep_ratio is None:
        return np.zeros(shape if shape is not None else np.broadcast(travel, v_from, v_to).shape)
    v = np.minimum(v_from, v_to)
    t = np.minimum(BLEND_PEAK * np.asarray(travel, dtype=float) / (cfg.prep_ratio * np.maximum(v, 1e-6)), cfg.max_prep_s)
    if shape is None:
        return t
    out = np.zeros(shape)
    out[:, src, dst] = t
    return out


def _context(gmg, speech: SpeechInput, rules: Rules, variant: str, config: SynthConfig, seed: int) -> _Context:
    cfg = config
    rng = plan_rng(seed, speech)
    db = gmg.database
    nodes = np.asarray(gmg.core_nodes)
    M = len(nodes)
    K = cfg.speeds()
    S = len(K)
    gsi = db.gsi_at(K)[nodes] if variant == "sync+intensity" else np.zeros((M, S))
    anchors = np.asarray(rules.synchrony.anchor(speech.papts), dtype=float).reshape(-1)
    A = len(anchors)
    dur = float(speech.duration + cfg.tail_s)
    rest = tuple(sorted(speech.rest_intervals(dur, cfg.pause_margin_s)))
    usable = np.array([not any(lo < a < hi for lo, hi in rest) and 0 < a < dur for a in anchors], dtype=bool)
    if variant == "sync+intensity" and A:
        pred = rules.intensity.predict(speech.psi)
        margin = max(rules.intensity.margin, 1e-3)
        icost = cfg.intensity_weight * ((gsi.T[None, :, :] - pred[:, None, None]) / margin) ** 2
        icost[~np.isfinite(icost)] = 0.0
    else:
        icost = np.zeros((A, S, M))
    jit = rng.uniform(0.0, cfg.jitter, size=(A, M)) if cfg.jitter > 0 else np.zeros((A, M))
    # edges among the core nodes
    edge = np.zeros((M, M), dtype=bool)
    tmin = np.full((M, M), cfg.blend_s)
    tcost = np.zeros((M, M))
    kind = np.full((M, M), "", dtype=object)
    e = gmg.core.edges
    src, dst = e["src"].to_numpy(), e["dst"].to_numpy()
    dist = e["distance"].to_numpy(dtype=float)
    edge[src, dst] = True
    hand = np.asarray(gmg.hand_distance)[nodes[src], nodes[dst]]
    tmin[src, dst] = np.maximum.reduce([np.full(len(src), cfg.blend_s), dist / cfg.transition_speed, hand / cfg.hand_speed])
    cont = e["contiguous"].to_numpy(dtype=bool)
    vmax = np.array([db.phrases[g].max_velocity for g in nodes], dtype=float)  # stroke peak, m/s
    tmin = np.maximum(tmin[None], _prep_time(cfg, hand, vmax[src][None, :], K[:, None] * vmax[dst][None, :], (S, M, M), src, dst))
    tmin[:, src[cont], dst[cont]] = 0.0
    sc_k = np.where(K[:, None] * vmax[None] >= cfg.min_stroke_speed, cfg.speed_cost(K)[:, None], np.inf)
    tcost[src, dst] = cfg.transition_cost * dist / gmg.threshold
    kind[src, dst] = e["kind"].to_numpy()
    ph = db.config.phase
    # a margin for what rendering does to a peak (time warps, blends and the seam low-pass
    # change peak speeds by up to about 15 %)
    contrast = min(1.0, float(ph.stroke_ratio) / CONTRAST_MARGIN) if cfg.stroke_contrast else 0.0
    window = float(ph.stroke_window_s) if ph.stroke_window_s is not None else np.inf
    lead = np.array([(db.phrases[g].apex_frame - db.strokes[g].peak_frame) / db.phrases[g].fps for g in nodes], dtype=float)
    d_in = np.asarray(gmg.rest_from)[nodes]
    d_out = np.asarray(gmg.rest_to)[nodes]
    return _Context(
        cfg=cfg, nodes=nodes, pre=db.pre_s[nodes], post=db.post_s[nodes], K=K, sc_k=sc_k, gsi=gsi,
        anchors=anchors, usable=usable, icost=icost, jit=jit, edge=edge, tmin=tmin, tcost=tcost, kind=kind,
        rin=np.maximum(np.maximum.reduce([np.full(M, cfg.rest_in_s), d_in / cfg.transition_speed,
                                          np.asarray(gmg.rest_from_hand)[nodes] / cfg.hand_speed])[None],
                       _prep_time(cfg, np.asarray(gmg.rest_from_hand)[nodes][None], np.inf, K[:, None] * vmax[None])),
        rout=cfg.settle_s + np.maximum.reduce([np.full(M, cfg.rest_out_s), d_out / cfg.transition_speed,
                                               np.asarray(gmg.rest_to_hand)[nodes] / cfg.hand_speed,
                                               _prep_time(cfg, np.asarray(gmg.rest_to_hand)[nodes], vmax, np.inf)]),
        rc_in=cfg.transition_cost * d_in / gmg.threshold, rc_out=cfg.transition_cost * d_out / gmg.threshold,
        rest=rest, dur=dur, vmax=vmax, lead=lead, contrast=contrast, window=window,
    )


#: Realised stroke peaks differ from captured ones by up to this factor; consecutive strokes are
#: kept this much further apart in peak speed than the gesture analysis' ``stroke_ratio`` asks.
CONTRAST_MARGIN = 0.85


#: Kinds of step in a chain: entering from the clip's start, along an edge, through rest.
START, EDGE, REST = 0, 1, 2


# Longer than a screen by its docstring and the one Viterbi loop it documents:
# long: the recursion's steps share its tables; split apart they would pass seven arrays around
def _dp(ctx: _Context) -> tuple[float, list[tuple[int, int, int, int, float]]]:
    """Cheapest chain ``[(anchor, core node, step kind, speed index k1, post speed k2)]``.

    A Viterbi recursion written with numpy rather than a library shortest-path routine
    (scipy.sparse.csgraph): the transition costs are computed block-wise per anchor pair
    (``(speeds, GPs, GPs)`` arrays) and transitions through rest factor through the best
    predecessor, where a generic graph search would need every (anchor, GP) -> (anchor, GP)
    edge materialised (about anchors^2 x GPs^2 of them).
    """
    cfg = ctx.cfg
    A, M = ctx.icost.shape[0], len(ctx.nodes)
    inf = np.inf
    D = np.full((A, M), inf)
    b_i = np.full((A, M), -1)
    b_g = np.full((A, M), -1)
    b_kind = np.zeros((A, M), dtype=np.int8)
    b_k1 = np.zeros((A, M), dtype=np.int64)
    b_k2 = np.ones((A, M))
    cols = np.arange(M)
    for j in range(A):
        if not ctx.usable[j]:
            continue
        c = ctx.enter(j, ctx.rest_before(ctx.anchors[j]))
        k1 = np.argmin(c, axis=0)
        best = c[k1, cols] + cfg.skip_cost * j
        kind_j = np.full(M, START, dtype=np.int8)
        i_j = np.full(M, -1)
        g_j = np.full(M, -1)
        k2_j = np.ones(M)
        for i in range(j):
            if not np.isfinite(D[i]).any():
                continue
            skip = cfg.skip_cost * (j - i - 1)
            gap = ctx.anchors[j] - ctx.anchors[i]
            between = ctx.rest_between(ctx.anchors[i], ctx.anchors[j])
            if between is None and j - i - 1 <= cfg.max_skip:
                cost, k2 = ctx.direct(i, j)
                ks = np.argmin(cost, axis=0)  # (M_g, M_h)
                C = np.take_along_axis(cost, ks[None], axis=0)[0]
                tot = D[i][:, None] + C + skip
                g = np.argmin(tot, axis=0)
                val = tot[g, cols]
                h = np.flatnonzero(val < best)
                if len(h):
                    best[h] = val[h]
                    kind_j[h], i_j[h], g_j[h] = EDGE, i, g[h]
                    k1[h] = ks[g[h], h]
                    k2_j[h] = k2[ks[g[h], h], g[h], h]
            if between is not None or gap >= cfg.long_gap_s:
                upper, lower = between if between is not None else ((ctx.anchors[i] + ctx.anchors[j]) / 2,) * 2
                cg, k2g = ctx.leave(i, upper)
                tot_g = D[i] + cg
                g = int(np.argmin(tot_g))
                if not np.isfinite(tot_g[g]):
                    continue
                ch = ctx.enter(j, lower)
                kh = np.argmin(ch, axis=0)
                val = tot_g[g] + ch[kh, cols] + cfg.rest_cost + skip
                h = np.flatnonzero(val < best)
                if len(h):
                    best[h] = val[h]
                    kind_j[h], i_j[h], g_j[h] = REST, i, g
                    k1[h] = kh[h]
                    k2_j[h] = k2g[g]
        D[j] = best + ctx.jit[j]
        b_i[j], b_g[j], b_kind[j], b_k1[j], b_k2[j] = i_j, g_j, kind_j, k1, k2_j
    best_total, end = cfg.skip_cost * A, None
    for i in range(A):
        if not np.isfinite(D[i]).any():
            continue
        cg, k2g = ctx.leave(i, ctx.rest_after(ctx.anchors[i]))
        tot = D[i] + cg + cfg.skip_cost * (A - 1 - i)
        g = int(np.argmin(tot))
        if tot[g] < best_total:
            best_total, end = float(tot[g]), (i, g, float(k2g[g]))
    chain: list[tuple[int, int, int, int, float]] = []
    if end is not None:
        j, h, k2 = end
        while j >= 0:
            chain.append((j, h, int(b_kind[j, h]), int(b_k1[j, h]), k2))
            j, h, k2 = int(b_i[j, h]), int(b_g[j, h]), float(b_k2[j, h])
        chain.reverse()
    return best_total, chain


def chain_cost(ctx: _Context, chain: Sequence[tuple[int, int, int, int]]) -> float:
    """Cost of a chain ``[(anchor, core node, step kind, speed index k1)]``, one step at a time
    (``inf`` if infeasible). The dynamic programme's optimum equals this for its own chain and
    no chain costs less (tests check it)."""
    cfg = ctx.cfg
    A = ctx.icost.shape[0]
    if not chain:
        return cfg.skip_cost * A
    total = 0.0
    prev = None
    for j, h, kind, k1 in chain:
        if not (0 <= j < A) or not ctx.usable[j] or (prev is not None and j <= prev[0]):
            return np.inf
        if kind == START:
            if prev is not None:
                return np.inf
            total += ctx.enter(j, ctx.rest_before(ctx.anchors[j]))[k1, h] + cfg.skip_cost * j
        else:
            if prev is None:
                return np.inf
            i, g = prev
            skip = cfg.skip_cost * (j - i - 1)
            between = ctx.rest_between(ctx.anchors[i], ctx.anchors[j])
            if kind == EDGE:
                if between is not None or j - i - 1 > cfg.max_skip:
                    return np.inf
                total += ctx.direct(i, j)[0][k1, g, h] + skip
            else:
                if between is None and ctx.anchors[j] - ctx.anchors[i] < cfg.long_gap_s:
                    return np.inf
                upper, lower = between if between is not None else ((ctx.anchors[i] + ctx.anchors[j]) / 2,) * 2
                total += ctx.leave(i, upper)[0][g] + ctx.enter(j, lower)[k1, h] + cfg.rest_cost + skip
        total += ctx.jit[j, h]
        prev = (j, h)
    i, g = prev
    return float(total + ctx.leave(i, ctx.rest_after(ctx.anchors[i]))[0][g] + cfg.skip_cost * (A - 1 - i))


def plan_rules(gmg, speech: SpeechInput, rules: Rules, variant: str = "sync+intensity", config: SynthConfig = SynthConfig(), seed: int = 0) -> Plan:
    """Plan of a rule variant (``sync`` or ``sync+intensity``) by dynamic programming (see the
    module docstring)."""
    if variant not in ("sync", "sync+intensity"):
        raise InputError(f"plan_rules handles 'sync' and 'sync+intensity', got {variant!r}")
    ctx = _context(gmg, speech, rules, variant, config, seed)
    cost, chain = _dp(ctx)
    # a documented minimum rate: a plan that leaves the speech (nearly) without gestures is
    # solved again with a larger price on every accent left without one
    least = min(int(np.ceil(config.min_rate * speech.duration)), int(ctx.usable.sum()))
    for _ in range(config.min_rate_rounds):
        if len(chain) >= least:
            break
        ctx = replace(ctx, cfg=replace(ctx.cfg, skip_cost=2.0 * ctx.cfg.skip_cost))
        cost, chain = _dp(ctx)
    if len(chain) < least and config.prep_ratio is not None:
        # too little time between the accents for blends slower than the strokes: plan with
        # blends as fast as captured preparations rather than leave the speech without gestures
        return plan_rules(gmg, speech, rules, variant, replace(config, prep_ratio=None), seed)
    db = gmg.database
    placements = []
    for n, (j, h, kd, k1i, k2) in enumerate(chain):
        gp = int(ctx.nodes[h])
        k1 = float(ctx.K[k1i])
        g = chain[n - 1][1] if n else -1
        rest_next = n + 1 == len(chain) or chain[n + 1][2] != EDGE
        a = float(ctx.anchors[j])
        placements.append(Placement(
            gp=gp, anchor=int(j), apex_time=a, speed_pre=k1, speed_post=float(k2),
            start_time=float(a - ctx.pre[h] / k1), end_time=float(a + ctx.post[h] / k2),
            entry=str(ctx.kind[g, h]) if kd == EDGE else "rest", gsi=float(db.gsi_at(k1)[gp]),
            blend_in_s=float(ctx.tmin[k1i, g, h] if kd == EDGE else ctx.rin[k1i, h]),
            rest_out_s=float(ctx.rout[h] if rest_next else 0.0),
        ))
    return Plan(variant, int(seed), tuple(placements), ctx.dur, ctx.rest, ctx.anchors, cost, config.max_blend_s, config.settle_s, config.plant_feet,
                config.smooth_hz, config.stroke_stops)


def plan_random(gmg, speech: SpeechInput, rules: Rules | None = None, config: SynthConfig = SynthConfig(), seed: int = 0) -> Plan:
    """Plan of the ``random`` variant: a seeded random walk, GPs at captured speed (see the
    module docstring). ``rules`` only sets the anchors recorded in the plan."""
    from evalkit.gesture_speech import DEFAULT_RULES

    rules = rules or DEFAULT_RULES
    ctx = _context(gmg, speech, rules, "random", replace(config, jitter=0.0), seed)
    cfg = config
    rng = plan_rng(seed, speech)
    db = gmg.database
    M = len(ctx.nodes)
    gsi1 = db.gsi_at(1.0)
    k_one = int(np.argmin(np.abs(ctx.K - 1.0)))
    # runs of free time between the rest intervals
    runs, t0 = [], 0.0
    for lo, hi in ctx.rest:
        if lo > t0:
            runs.append((t0, lo))
        t0 = max(t0, hi)
    if t0 < ctx.dur - cfg.end_rest_s:
        runs.append((t0, ctx.dur - cfg.end_rest_s))
    placements: list[Placement] = []
    prev: int | None = None
    for r0, r1 in runs:
        t = r0 + (rng.uniform(0.0, cfg.random_lead_s) if cfg.random_lead_s > 0 else 0.0)
        first = True
        while True:
            visible = np.isfinite(ctx.sc_k[k_one])
            cands = np.flatnonzero(ctx.edge[prev] & visible) if prev is not None else np.flatnonzero(visible)
            if len(cands) == 0:
                cands = np.flatnonzero(visible) if visible.any() else np.arange(M)
            chosen = None
            for h in rng.permutation(cands):
                blend = ctx.rin[k_one, h] if first else ctx.tmin[k_one, prev, h]
                start = t + blend
                if not first and ctx.contrast > 0:
                    gap = abs((start + ctx.pre[h] - ctx.lead[h]) - (placements[-1].apex_time - ctx.lead[prev]))
                    lo, hi = sorted((ctx.vmax[prev], ctx.vmax[h]))
                    if gap <= ctx.window and lo < ctx.contrast * hi:
                        continue
                if start + ctx.pre[h] + ctx.post[h] + ctx.rout[h] <= r1 + 1e-9:
                    chosen = (int(h), float(blend), float(start))
                    break
            if chosen is None:
                break
            h, blend, start = chosen
            if placements and not first:
                placements[-1] = replace(placements[-1], rest_out_s=0.0)
            gp = int(ctx.nodes[h])
            end = start + ctx.pre[h] + ctx.post[h]
            placements.append(Placement(gp, -1, float(start + ctx.pre[h]), 1.0, 1.0, start, float(end),
                                        "rest" if first else str(ctx.kind[prev, h]), float(gsi1[gp]), blend, float(ctx.rout[h])))
            t, prev, first = end, h, False
    if not placements and ctx.usable.any() and config.min_rate > 0 and config.prep_ratio is not None:
        return plan_random(gmg, speech, rules, replace(config, prep_ratio=None, random_lead_s=0.0), seed)  # as plan_rules
    return Plan("random", int(seed), tuple(placements), ctx.dur, ctx.rest, ctx.anchors, float("nan"), cfg.max_blend_s, cfg.settle_s, cfg.plant_feet,
                cfg.smooth_hz, cfg.stroke_stops)


def make_plan(gmg, speech: SpeechInput, rules: Rules, variant: str, config: SynthConfig = SynthConfig(), seed: int = 0) -> Plan:
    """Plan of any variant in :data:`VARIANTS`."""
    if variant not in VARIANTS:
        raise InputError(f"unknown variant {variant!r}; use one of {', '.join(VARIANTS)}")
    if variant == "random":
        return plan_random(gmg, speech, rules, config, seed)
    return plan_rules(gmg, speech, rules, variant, config, seed)
