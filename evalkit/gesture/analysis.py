"""One call from a motion clip to its strokes (apex, features, GSI) and gesture phrases, and a
gesture database built from many clips (the input of the gesture motion graph)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import FileFormatError
from evalkit.gesture.phases import PhaseConfig, Segmentation, segment_gestures
from evalkit.gesture.strokes import default_gsi_scale, stroke_features
from evalkit.gesture.trajectory import HandTrajectories, hand_trajectories
from evalkit.motion import LoadOptions, Motion
from evalkit.runner import load_clips


@dataclass(frozen=True)
class StrokeRecord:
    """A stroke with its features and GSI.

    Attributes:
        clip: source clip name (file path when loaded from a file).
        phrase: index of its gesture phrase in the clip.
        start_frame, end_frame: frames of the stroke unit (end exclusive).
        peak_frame: frame of peak speed.
        apex_frame: sub-frame apex; apex_time: seconds from the clip's start.
        hand: ``left``, ``right`` or ``both``; main: the phrase's main stroke.
        fm_distance, velocity_range, max_velocity: features (1.70 m body; m/s for speeds).
        gsi: gesture strength indicator in [0, 1].
    """

    clip: str
    phrase: int
    start_frame: int
    end_frame: int
    peak_frame: int
    apex_frame: float
    apex_time: float
    hand: str
    main: bool
    fm_distance: float
    velocity_range: float
    max_velocity: float
    gsi: float


@dataclass(frozen=True)
class GesturePhrase:
    """A gesture phrase (preparation + stroke(s) + hold/retraction) of a clip: one entry of a
    gesture database.

    Attributes:
        clip: source clip (file path when loaded from a file, else the motion's name).
        start_frame, end_frame: the phrase's frames in the clip (end exclusive).
        fps: the clip's frame rate.
        apex_frame: sub-frame apex of the main stroke; apex_time: its time from the clip's
            start, seconds.
        stroke_start, stroke_end: frames of the main stroke (end exclusive).
        gsi: GSI of the main stroke; fm_distance, velocity_range, max_velocity: its features.
        hand: hand(s) of the main stroke.
        n_strokes: strokes in the phrase.
        starts_at_rest, ends_at_rest: whether rest surrounds the phrase in the clip.
    """

    clip: str
    start_frame: int
    end_frame: int
    fps: float
    apex_frame: float
    apex_time: float
    stroke_start: int
    stroke_end: int
    gsi: float
    fm_distance: float
    velocity_range: float
    max_velocity: float
    hand: str
    n_strokes: int
    starts_at_rest: bool
    ends_at_rest: bool

    @property
    def duration(self) -> float:
        """Length of the phrase, seconds."""
        return (self.end_frame - self.start_frame) / self.fps

    @property
    def apex_offset(self) -> float:
        """Seconds from the phrase's first frame to its apex."""
        return (self.apex_frame - self.start_frame) / self.fps


@dataclass(frozen=True, eq=False)
class GestureAnalysis:
    """Strokes and phrases of one clip.

    Attributes:
        name: clip name or path; fps; n_frames.
        trajectories: the hand trajectories used; segmentation: phase labels and phrases.
        strokes: every stroke (time order); phrases: every phrase (time order).
    """

    name: str
    fps: float
    n_frames: int
    trajectories: HandTrajectories
    segmentation: Segmentation
    strokes: tuple[StrokeRecord, ...]
    phrases: tuple[GesturePhrase, ...]

    @property
    def apex_times(self) -> np.ndarray:
        """``(strokes,)`` apex times, seconds."""
        return np.array([s.apex_time for s in self.strokes], dtype=float)

    @property
    def gsi(self) -> np.ndarray:
        """``(strokes,)`` GSI of each stroke."""
        return np.array([s.gsi for s in self.strokes], dtype=float)

    def strokes_frame(self) -> pd.DataFrame:
        """One row per stroke."""
        return pd.DataFrame([asdict(s) for s in self.strokes], columns=list(StrokeRecord.__dataclass_fields__))

    def phrases_frame(self) -> pd.DataFrame:
        """One row per gesture phrase."""
        return phrases_frame(self.phrases)


def analyze_gestures(
    motion: Motion,
    config: PhaseConfig = PhaseConfig(),
    gsi_scale=None,
    roles: dict[str, int] | None = None,
    clip: str | None = None,
) -> GestureAnalysis:
    """Segment a clip into gesture phases, find strokes and apexes, measure features and GSI.

    Args:
        motion: the clip (any rig whose wrists, hips and hips/shoulders are found by role).
        config: segmentation thresholds.
        gsi_scale: GSI calibration or classifier (default: the built-in one).
        roles: joint roles override.
        clip: name recorded in the results (default: the motion's source path or name).
    """
    clip = clip or str(motion.meta.get("source") or motion.name or "clip")
    from evalkit.motion import find_roles

    roles = roles if roles is not None else find_roles(motion.skeleton, strict=False)
    traj = hand_trajectories(motion, roles)
    seg = segment_gestures(traj, config)
    scale = gsi_scale or default_gsi_scale()
    rows = []
    for k, ph in enumerate(seg.phrases):
        for s in ph.strokes:
            rows.append((k, s, stroke_features(traj, s, roles)))
    if rows:
        feats = pd.DataFrame([r[2] for r in rows])
        gsi = scale.strength(feats[list(scale.features)])
    else:
        gsi = np.array([])
    strokes = tuple(
        StrokeRecord(clip, k, s.start, s.end, s.peak_frame, s.apex_frame, s.apex_time, s.hand, s.main,
                     f["fm_distance"], f["velocity_range"], f["max_velocity"], float(g))
        for (k, s, f), g in zip(rows, gsi)
    )
    phrases = []
    for k, ph in enumerate(seg.phrases):
        mine = [r for r in strokes if r.phrase == k]
        m = next(r for r in mine if r.main)
        phrases.append(GesturePhrase(
            clip, ph.start, ph.end, float(motion.fps), m.apex_frame, m.apex_time, m.start_frame, m.end_frame,
            m.gsi, m.fm_distance, m.velocity_range, m.max_velocity, m.hand, len(mine), ph.starts_at_rest, ph.ends_at_rest,
        ))
    return GestureAnalysis(clip, float(motion.fps), motion.n_frames, traj, seg, strokes, tuple(phrases))


def phrases_frame(phrases: Sequence[GesturePhrase]) -> pd.DataFrame:
    """Gesture phrases as a DataFrame (one row each, columns = :class:`GesturePhrase` fields)."""
    return pd.DataFrame([asdict(p) for p in phrases], columns=list(GesturePhrase.__dataclass_fields__))


def gesture_database(
    sources: Iterable[Motion | str | os.PathLike],
    config: PhaseConfig = PhaseConfig(),
    gsi_scale=None,
    load: LoadOptions | None = None,
    progress: bool = False,
) -> list[GesturePhrase]:
    """Gesture phrases of many clips: the database a gesture motion graph is built from.

    Args:
        sources: motions, motion files, or folders of BVH/AMC files.
        config, gsi_scale: as in :func:`analyze_gestures`.
        load: how the files are read (:class:`~evalkit.motion.LoadOptions`).
        progress: show a progress bar.

    Returns:
        every phrase of every clip, in clip then time order. ``clip`` holds the file path, so
        ``load_motion(p.clip).slice(p.start_frame, p.end_frame)`` gives the phrase's motion.
    """
    out: list[GesturePhrase] = []
    for motion in load_clips(list(sources), load, progress=progress, desc="gesture clips"):
        out.extend(analyze_gestures(motion, config, gsi_scale).phrases)
    return out


def save_gesture_database(phrases: Sequence[GesturePhrase], path: str | os.PathLike) -> Path:
    """Write phrases as CSV (temporary file, then rename)."""
    from evalkit.atomic import atomic_path

    p = Path(path)
    with atomic_path(p, suffix=".csv") as tmp:
        phrases_frame(phrases).to_csv(tmp, index=False)
    return p


def load_gesture_database(path: str | os.PathLike) -> list[GesturePhrase]:
    """Read phrases written by :func:`save_gesture_database`.

    Raises:
        FileFormatError: a column is missing or a row has a bad value (names the row).
    """
    p = Path(path)
    try:
        df = pd.read_csv(p)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise FileFormatError(p, None, f"not a gesture database CSV: {exc}") from None
    fields = GesturePhrase.__dataclass_fields__
    missing = [c for c in fields if c not in df.columns]
    if missing:
        raise FileFormatError(p, 1, f"missing column(s) {', '.join(missing)}")
    out = []
    for i, row in enumerate(df.itertuples(index=False), start=2):
        try:
            kw = {}
            for name, f in fields.items():
                v = getattr(row, name)
                t = f.type
                if t == "int":
                    kw[name] = int(v)
                elif t == "float":
                    kw[name] = float(v)
                elif t == "bool":
                    kw[name] = v if isinstance(v, (bool, np.bool_)) else str(v).strip().lower() in ("true", "1")
                    kw[name] = bool(kw[name])
                else:
                    kw[name] = str(v)
            out.append(GesturePhrase(**kw))
        except (TypeError, ValueError) as exc:
            raise FileFormatError(p, i, f"bad value ({exc})") from None
    return out
