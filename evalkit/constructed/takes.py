"""Constructed takes: real speech plus real gesture phrases placed at known offsets and strengths.

No openly licensed recording of conversational gesture capture *with its speech* exists, so the
synchrony and intensity analyses are validated on takes built from real parts with known truth:

1. The speech's pitch accents (PAPT, PSI) are detected.
2. For some accents, a real gesture phrase (from a gesture database) is chosen and uniformly
   time-scaled by a factor ``k`` (faster = stronger stroke) so that its GSI, measured on the
   scaled phrase in isolation, equals an imposed line ``GSI = intercept + slope * PSI`` (plus
   optional noise); it is placed so that its apex falls ``offset`` seconds before the PAPT, with
   offsets drawn from a normal distribution.
3. Between phrases the body holds the last pose and blends slowly (smoothstep slerp) into the
   next phrase's first pose; each phrase is moved and turned to stand where the first one does.

The truth (offsets, imposed and measured GSI, PSI, sources) travels with the take in
``<name>.take.json``, whose ``"constructed": true`` every downstream output repeats.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from evalkit.errors import FileFormatError, InputError
from evalkit.features.body import yaw_of_lateral
from evalkit.gesture.analysis import GesturePhrase, analyze_gestures
from evalkit.gesture.phases import PhaseConfig
from evalkit.motion import LoadOptions, Motion, find_roles, quat
from evalkit.runner import load_clips
from evalkit.speech.accents import AccentConfig, analyze_speech
from evalkit.speech.audio import Audio

CONSTRUCTED_NOTE = ("CONSTRUCTED take: real speech and real gesture capture recorded separately, "
                    "combined with known apex–PAPT offsets and an imposed PSI–GSI relation")


@dataclass(frozen=True)
class ConstructionConfig:
    """How a take is constructed (times in seconds).

    Attributes:
        offset_mean_s, offset_sd_s: apex–PAPT offsets drawn from N(mean, sd) (PAPT − apex).
        intercept, slope: imposed ``GSI = intercept + slope * PSI``; gsi_noise: SD of added noise.
        scale_range: allowed time-scale factors of a phrase (> 1 = faster).
        gsi_tolerance: a (phrase, factor) is used only if its GSI is this close to the target.
        min_gap_s: held pose and blend between consecutive phrases.
        context_s: frames of the source clip kept before and after each phrase (its rest).
        guard_s: other accents must be this much farther from the apex than the target accent.
        pad_s: rest held before and after a phrase when measuring it in isolation.
        fps: frame rate of the constructed motion.
        seed: random seed.
    """

    offset_mean_s: float = 0.1
    offset_sd_s: float = 0.05
    intercept: float = 0.15
    slope: float = 0.7
    gsi_noise: float = 0.0
    scale_range: tuple[float, float] = (0.6, 1.8)
    gsi_tolerance: float = 0.03
    min_gap_s: float = 0.5
    context_s: float = 0.25
    guard_s: float = 0.12
    pad_s: float = 0.4
    fps: float = 60.0
    seed: int = 0


@dataclass(frozen=True, eq=False)
class ConstructedTake:
    """A constructed take.

    Attributes:
        motion: the gesture motion (starts at the audio's time 0).
        audio: the speech.
        truth: one row per placed phrase: accent index, papt, psi, apex_time, offset_s,
            gsi_target, gsi (measured on the scaled phrase alone), scale, clip, start/end frame.
        manifest: JSON-ready description (``constructed: true``, sources, config, note).
    """

    motion: Motion
    audio: Audio
    truth: pd.DataFrame
    manifest: dict


@dataclass(frozen=True, eq=False)
class _Piece:
    motion: Motion          # normalised phrase, at its source fps
    phrase: GesturePhrase
    apex_s: float           # apex time from the piece's first frame (unscaled)
    scales: np.ndarray      # factors measured
    gsi: np.ndarray         # GSI of the scaled piece alone, per factor (NaN = not one stroke)
    apex_err: np.ndarray    # measured minus expected apex of the scaled piece, s


def _lateral_angle(motion: Motion, frame: int, roles: dict[str, int]) -> float:
    """Angle (radians about +Y) that turns the body's left->right axis of ``frame`` onto +x:
    ``pi`` minus its heading (:func:`evalkit.features.body.yaw_of_lateral`; hips, else shoulders)."""
    pos = motion.positions[frame]
    for a, b in (("left_hip", "right_hip"), ("left_shoulder", "right_shoulder")):
        if a in roles and b in roles:
            angle = float(np.pi - yaw_of_lateral(pos[roles[b]] - pos[roles[a]]))
            return angle - 2 * np.pi if angle > np.pi else angle
    return 0.0


def _normalise(motion: Motion, roles: dict[str, int]) -> Motion:
    """The clip moved so its hips start above the origin and turned so its first frame's
    left->right axis is +x (a rotation about the vertical through the hips)."""
    hips = motion.positions[0, roles["hips"]]
    angle = _lateral_angle(motion, 0, roles)
    q = quat.about_y(angle)  # rotating by +angle about y maps the lateral axis onto +x
    rot = motion.rotations.copy()
    tr = motion.translations.copy()
    rot[:, 0] = quat.multiply(np.broadcast_to(q, rot[:, 0].shape), rot[:, 0])
    centre = np.array([hips[0], 0.0, hips[2]])
    tr[:, 0] = quat.rotate(q[None, :], tr[:, 0] - centre)
    return replace(motion, rotations=rot, translations=tr)


def _sample(motion: Motion, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotations and translations of ``motion`` at times ``t`` (s), slerp/linear between frames."""
    f = np.clip(np.asarray(t, float) * motion.fps, 0, motion.n_frames - 1)
    i0 = np.floor(f).astype(int)
    i1 = np.minimum(i0 + 1, motion.n_frames - 1)
    w = f - i0
    rot = quat.make_continuous(motion.rotations, axis=0)
    r = quat.slerp(rot[i0], rot[i1], np.broadcast_to(w[:, None], (len(t), motion.n_joints)))
    tr = motion.translations[i0] * (1 - w)[:, None, None] + motion.translations[i1] * w[:, None, None]
    return r, tr


def _scaled(piece_motion: Motion, k: float, fps: float, pad_s: float = 0.0) -> Motion:
    """The piece played ``k`` times faster at ``fps``, with ``pad_s`` of held pose on each side."""
    dur = (piece_motion.n_frames - 1) / piece_motion.fps / k
    n = int(np.floor(dur * fps)) + 1
    t_out = np.arange(n) / fps * k
    r, tr = _sample(piece_motion, t_out)
    if pad_s > 0:
        p = int(round(pad_s * fps))
        r = np.concatenate([np.repeat(r[:1], p, 0), r, np.repeat(r[-1:], p, 0)])
        tr = np.concatenate([np.repeat(tr[:1], p, 0), tr, np.repeat(tr[-1:], p, 0)])
    return replace(piece_motion, fps=float(fps), rotations=r, translations=tr)


@dataclass(frozen=True, eq=False)
class PhrasePool:
    """Gesture phrases ready for construction: each normalised and measured (GSI of the phrase
    alone) at a range of time-scale factors. Build once with :func:`prepare_pool`, reuse for
    many takes (the frame rate, scale range and pad of ``config`` must not change)."""

    pieces: tuple[_Piece, ...]
    config: ConstructionConfig
    phase_config: PhaseConfig

    def __len__(self) -> int:
        return len(self.pieces)


def prepare_pool(sources: Sequence[tuple[Motion, GesturePhrase]], config: ConstructionConfig = ConstructionConfig(), phase_config: PhaseConfig = PhaseConfig(), progress: bool = False) -> PhrasePool:
    """Measure each ``(clip, phrase)`` at several time-scale factors (see :class:`PhrasePool`)."""
    if not sources:
        raise InputError("no gesture phrases to construct takes from")
    if len({m.skeleton.names for m, _ in sources}) != 1:
        raise InputError("all gesture phrases of constructed takes must share one skeleton")
    it = sources
    if progress:
        from tqdm import tqdm

        it = tqdm(sources, desc="measuring phrases", unit="phrase")
    pieces = _pieces(it, config, phase_config)
    if not pieces:
        raise InputError("none of the gesture phrases keeps a single stroke when time-scaled; use single-stroke phrases")
    return PhrasePool(tuple(pieces), config, phase_config)


def _pieces(sources: Sequence[tuple[Motion, GesturePhrase]], cfg: ConstructionConfig, phase_config: PhaseConfig) -> list[_Piece]:
    scales = np.round(np.geomspace(cfg.scale_range[0], cfg.scale_range[1], 13), 4)
    out = []
    for motion, ph in sources:
        roles = find_roles(motion.skeleton, strict=False)
        ctx = int(round(cfg.context_s * motion.fps))  # keep some of the clip's own rest around it
        a, b = max(0, ph.start_frame - ctx), min(motion.n_frames, ph.end_frame + ctx)
        seg = _normalise(motion.slice(a, b), roles)
        apex_s = (ph.apex_frame - a) / motion.fps
        gsi = np.full(len(scales), np.nan)
        err = np.full(len(scales), np.nan)
        for i, k in enumerate(scales):
            g = analyze_gestures(_scaled(seg, k, cfg.fps, cfg.pad_s), phase_config, clip="piece")
            if len(g.strokes) == 1:
                gsi[i] = g.strokes[0].gsi
                err[i] = g.strokes[0].apex_time - (cfg.pad_s + apex_s / k)
        if np.isfinite(gsi).any():
            out.append(_Piece(seg, ph, apex_s, scales, gsi, err))
    return out


def _best(pieces: list[_Piece], target: float, tol: float, rng: np.random.Generator) -> tuple[_Piece, float] | None:
    """A piece and scale whose isolated GSI is within ``tol`` of ``target`` (random among ties),
    the scale refined by linear interpolation of GSI between measured factors."""
    cands = []
    for p in pieces:
        g, s = p.gsi, p.scales
        for i in range(len(s) - 1):
            if not (np.isfinite(g[i]) and np.isfinite(g[i + 1])):
                continue
            lo, hi = sorted((g[i], g[i + 1]))
            if lo - tol <= target <= hi + tol and hi > lo:
                w = np.clip((target - g[i]) / (g[i + 1] - g[i]), 0, 1)
                cands.append((p, float(s[i] * (s[i + 1] / s[i]) ** w)))
    if not cands:
        return None
    return cands[int(rng.integers(len(cands)))]


def construct_take(
    audio: Audio,
    sources: PhrasePool | Sequence[tuple[Motion, GesturePhrase]],
    config: ConstructionConfig = ConstructionConfig(),
    phase_config: PhaseConfig = PhaseConfig(),
    accent_config: AccentConfig = AccentConfig(),
    name: str | None = None,
) -> ConstructedTake:
    """Build a constructed take from speech and gesture phrases (see the module docstring).

    Args:
        audio: real speech.
        sources: a :class:`PhrasePool`, or ``(clip motion, phrase)`` pairs to draw from (all on
            one skeleton), e.g. :func:`single_stroke_sources`.
        config: offsets, imposed PSI–GSI line, frame rate, seed (a pool keeps its own frame
            rate, scale range and pad).

    Raises:
        InputError: no phrase can be placed (too short speech, no usable phrase).
    """
    pool = sources if isinstance(sources, PhrasePool) else prepare_pool(sources, config, phase_config)
    cfg = replace(config, fps=pool.config.fps, scale_range=pool.config.scale_range, pad_s=pool.config.pad_s, context_s=pool.config.context_s)
    phase_config = pool.phase_config
    pieces = list(pool.pieces)
    rng = np.random.default_rng(cfg.seed)
    speech = analyze_speech(audio, accent_config)
    papts = speech.papts
    placed = []
    busy_until = 0.0
    for j, acc in enumerate(speech.accents):
        offset = float(rng.normal(cfg.offset_mean_s, cfg.offset_sd_s))
        apex_t = acc.papt - offset
        others = np.delete(papts, j)
        if len(others) and np.min(np.abs(others - apex_t)) <= abs(offset) + cfg.guard_s:
            continue
        target = float(np.clip(cfg.intercept + cfg.slope * acc.psi + rng.normal(0, cfg.gsi_noise) if cfg.gsi_noise > 0 else cfg.intercept + cfg.slope * acc.psi, 0.02, 0.98))
        choice = _best(pieces, target, cfg.gsi_tolerance, rng)
        if choice is None:
            continue
        piece, k = choice
        start = apex_t - piece.apex_s / k
        dur = (piece.motion.n_frames - 1) / piece.motion.fps / k
        if start < busy_until + (cfg.min_gap_s if placed else 0.0) or start < 0:
            continue
        g = analyze_gestures(_scaled(piece.motion, k, cfg.fps, cfg.pad_s), phase_config, clip="piece")
        if len(g.strokes) != 1:
            continue
        placed.append({
            "accent": j, "papt": acc.papt, "psi": acc.psi, "apex_time": apex_t, "offset_s": offset,
            "gsi_target": target, "gsi": float(g.strokes[0].gsi), "scale": k, "start_time": start,
            "end_time": start + dur, "clip": piece.phrase.clip, "start_frame": piece.phrase.start_frame,
            "end_frame": piece.phrase.end_frame, "_piece": piece,
        })
        busy_until = start + dur
    if not placed:
        raise InputError(f"{audio.name}: no gesture phrase could be placed (accents too dense or too few, or no phrase matches the imposed strengths)")
    motion = _assemble(placed, cfg, max(audio.duration, placed[-1]["end_time"] + cfg.min_gap_s))
    label = name or f"constructed-{audio.name}"
    motion = replace(motion, name=label, meta={**dict(motion.meta), "constructed": True, "source": label})
    truth = pd.DataFrame([{k: v for k, v in p.items() if not k.startswith("_")} for p in placed])
    manifest = {
        "constructed": True,
        "note": CONSTRUCTED_NOTE,
        "name": label,
        "audio": str(audio.meta.get("source", audio.name)),
        "gesture_sources": sorted({p["clip"] for p in placed}),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
        "truth": {
            "offset_mean_s": float(truth["offset_s"].mean()),
            "offset_sd_s": float(truth["offset_s"].std(ddof=1)) if len(truth) > 1 else 0.0,
            "imposed_intercept": cfg.intercept,
            "imposed_slope": cfg.slope,
            "pairs": truth.to_dict(orient="records"),
        },
    }
    return ConstructedTake(motion, audio, truth, manifest)


def _assemble(placed: list[dict], cfg: ConstructionConfig, duration: float) -> Motion:
    """The take's motion: scaled pieces at their times, holds and smoothstep blends between."""
    fps = cfg.fps
    n = int(np.ceil(duration * fps)) + 1
    t = np.arange(n) / fps
    first = placed[0]["_piece"].motion
    J = first.n_joints
    rot = np.empty((n, J, 4))
    tr = np.empty((n, J, 3))
    filled = np.zeros(n, dtype=bool)
    ends = []
    for p in placed:
        m = p["_piece"].motion
        k = p["scale"]
        idx = np.flatnonzero((t >= p["start_time"] - 1e-9) & (t <= p["end_time"] + 1e-9))
        r, x = _sample(m, (t[idx] - p["start_time"]) * k)
        rot[idx], tr[idx] = r, x
        filled[idx] = True
        r0, x0 = _sample(m, np.array([0.0]))
        r1, x1 = _sample(m, np.array([(m.n_frames - 1) / m.fps]))
        ends.append((idx[0], idx[-1], r0[0], x0[0], r1[0], x1[0]))
    # before the first piece: hold its first pose; after the last: hold its last pose
    a0 = ends[0][0]
    rot[:a0], tr[:a0] = ends[0][2], ends[0][3]
    b_last = ends[-1][1]
    rot[b_last + 1:], tr[b_last + 1:] = ends[-1][4], ends[-1][5]
    for (_, b, _, _, r_end, x_end), (a, _, r_start, x_start, _, _) in zip(ends[:-1], ends[1:]):
        gap = np.arange(b + 1, a)
        if len(gap) == 0:
            continue
        # hold for the first third, blend over the rest (smoothstep), so the hand moves slowly
        u = (gap - b) / (a - b)
        w = np.clip((u - 1 / 3) * 1.5, 0, 1)
        w = w * w * (3 - 2 * w)
        q0 = np.broadcast_to(r_end, (len(gap), J, 4))
        q1 = np.broadcast_to(r_start, (len(gap), J, 4))
        rot[gap] = quat.slerp(q0, q1, np.broadcast_to(w[:, None], (len(gap), J)))
        tr[gap] = x_end * (1 - w)[:, None, None] + x_start * w[:, None, None]
    return replace(first, fps=float(fps), rotations=quat.normalize(rot), translations=tr, meta={})


def single_stroke_sources(
    paths_or_motions,
    phase_config: PhaseConfig = PhaseConfig(),
    load: LoadOptions | None = None,
    cut_strokes: bool = False,
    context_s: float = 0.35,
) -> list[tuple[Motion, GesturePhrase]]:
    """The material of constructed takes from clips (files, folders or motions).

    By default: every single-stroke phrase that starts and ends at rest. With ``cut_strokes``,
    every stroke of every phrase, cut out with ``context_s`` seconds of motion on each side
    (within its phrase) — for clips that never rest between strokes, such as the bundled CMU
    clips; the pieces then start and end away from rest and the blends between them are less
    clean.
    """
    motions = load_clips(list(paths_or_motions), load)
    out = []
    for m in motions:
        g = analyze_gestures(m, phase_config)
        if not cut_strokes:
            out.extend((m, ph) for ph in g.phrases if ph.n_strokes == 1 and ph.starts_at_rest and ph.ends_at_rest)
            continue
        pad = int(round(context_s * m.fps))
        for st in g.strokes:
            ph = g.phrases[st.phrase]
            a = max(ph.start_frame, st.start_frame - pad)
            b = min(ph.end_frame, st.end_frame + pad)
            if b - a < 4:
                continue
            out.append((m, replace(ph, start_frame=a, end_frame=b, apex_frame=st.apex_frame, apex_time=st.apex_time,
                                   stroke_start=st.start_frame, stroke_end=st.end_frame, gsi=st.gsi,
                                   fm_distance=st.fm_distance, velocity_range=st.velocity_range,
                                   max_velocity=st.max_velocity, hand=st.hand, n_strokes=1,
                                   starts_at_rest=False, ends_at_rest=False)))
    return out


def save_take(take: ConstructedTake, folder: str | os.PathLike, name: str | None = None) -> dict[str, Path]:
    """Write ``<name>.bvh``, ``<name>.wav`` and ``<name>.take.json`` (truth) into ``folder``."""
    from evalkit.motion import write_bvh
    from evalkit.speech.audio import write_wav
    from evalkit.atomic import write_text

    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    name = name or take.motion.name
    bvh = write_bvh(take.motion, d / f"{name}.bvh")  # written atomically by write_bvh
    wav = write_wav(take.audio, d / f"{name}.wav")
    js = write_text(d / f"{name}.take.json", json.dumps(take.manifest, indent=2, default=_json_default) + "\n")
    return {"motion": bvh, "audio": wav, "manifest": js}


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def take_manifest(motion_path: str | os.PathLike) -> dict | None:
    """The ``<stem>.take.json`` next to a motion file, or ``None`` if there is none.

    Raises:
        FileFormatError: the manifest exists but is not valid JSON.
    """
    p = Path(motion_path)
    m = p.with_name(p.stem + ".take.json")
    if not m.exists():
        return None
    try:
        return json.loads(m.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FileFormatError(m, exc.lineno, f"not valid JSON: {exc.msg}") from None
