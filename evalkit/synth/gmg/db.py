"""Gesture database of the gesture motion graph (GMG): gesture phrases (GPs) cut from capture.

The GPs come from the gesture analysis (:mod:`evalkit.gesture`): phase segmentation, strokes,
apexes and GSI. Two ways to cut them (``DatabaseConfig.split``):

* ``"phrases"``: every gesture phrase as the gesture package finds it (rest to rest), with its
  main stroke's apex and GSI — the thesis' unit when each phrase holds one stroke.
* ``"strokes"`` (default): a phrase with several strokes (waving, beats in a row) is cut into
  one GP per stroke, at the frame where the next stroke starts (the speed minimum between two
  strokes), so that every GP has exactly one apex and one GSI. The pieces of one phrase follow
  each other without a gap, so the graph's E1 edge between them plays the original motion.

In both cases a GP whose preparation (before the apex) or retraction/hold (after it) is longer
than ``max_pre_s`` / ``max_post_s`` is trimmed at the slowest frame within the allowed span, so
that long holds and rests do not make GPs too long to fit between pitch accents. A GP also
starts after any movement faster than its own stroke (``max_other_speed`` times its peak): a
captured preparation out of rest that is faster than the beat it leads to is cut off at the
slowest frame before the stroke, so that played after any blend the GP's stroke, not that
preparation, is its fastest movement.

Each GP keeps what synthesis needs to predict its GSI when played faster or slower: its stroke
and the hand trajectories of its recording. Playing a stroke ``k`` times faster is playing the
same frames at ``k`` times the frame rate, so :meth:`GestureDatabase.gsi_at` runs the gesture
package's own stroke features on the trajectories with the frame rate and the hand speeds
multiplied by ``k``: the GSI the gesture analysis would measure on the time-scaled stroke.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from evalkit.errors import InputError
from evalkit.gesture.analysis import GestureAnalysis, GesturePhrase, analyze_gestures, phrases_frame
from evalkit.gesture.phases import PhaseConfig, Stroke
from evalkit.gesture.strokes import default_gsi_scale, stroke_features
from evalkit.gesture.trajectory import HandTrajectories
from evalkit.motion import LoadOptions, Motion, Skeleton, find_roles, quat
from evalkit.motion.fk import forward_kinematics
from evalkit.runner import load_clips

#: Note written into manifests and reports when the database is built from the bundled CMU clips.
CMU_NOTE = ("gesture database built from CMU non-conversational capture (stylised walk-stop and start-hop-stop, "
            "CMU subject 131; bundled samples): its arm movements are not conversational gestures, so the output only "
            "demonstrates the method")
#: The bundled CMU clips used for the fallback database (one skeleton: the cgspeed BVH rig).
CMU_CLIPS = ("131_01.bvh", "131_03.bvh")

SPLITS = ("strokes", "phrases")
#: Relative difference of whole-limb lengths (upper + lower bone) left to right above which
#: :func:`symmetric_limbs` evens the bones out.
LIMB_TOLERANCE = 0.005
#: Bones evened out by :func:`symmetric_limbs`: (parent role, child role) without the side.
LIMB_BONES = (("shoulder", "elbow"), ("elbow", "wrist"), ("hip", "knee"), ("knee", "ankle"))


@dataclass(frozen=True)
class DatabaseConfig:
    """How GPs are cut from the capture.

    Attributes:
        split: ``"strokes"`` (one GP per stroke) or ``"phrases"`` (one GP per gesture phrase).
        max_pre_s: longest span from a GP's start to its apex, seconds (longer ones are trimmed).
        max_post_s: longest span from its apex to its end, seconds.
        min_post_s: shortest span kept after the apex when trimming, seconds.
        max_other_speed: a GP keeps no movement before its stroke faster than this times its
            stroke's peak speed (``None``: keep them).
        phase: the gesture segmentation's thresholds.
        drop_pops: drop a reference pose glued to a clip's ends (cgspeed CMU files start with a
            T-pose) before analysing it (:func:`evalkit.motion.trim.drop_end_pops`).
        stand: give every recording the legs and root of the rest pose, so the GPs are the upper
            body's movement on a standing speaker (:func:`stand_recordings`): ``True``, ``False``
            or ``"auto"`` (when the capture is not performed standing, :func:`standing_capture`:
            walks and hops, whose steps would otherwise be played, slid and frozen mid-stride
            in every blend and hold). The GPs are then cut and measured on those recordings,
            exactly as they will be played.
        max_lean_deg: on a standing speaker made from such capture, the trunk keeps the
            orientation it had in the world (relative to the captured hips' heading, not to the
            captured pelvis, whose tilt in a stride or lunge the spine compensated) and its lean
            from the vertical is softly limited to this angle, degrees (:func:`upright_trunk`;
            ``None``: the captured spine rotations on the rest pose's pelvis).
        symmetric_limbs: give the left and right arm and leg bones the same length (the mean of
            the two sides) when the rig's whole limbs differ by more than
            :data:`LIMB_TOLERANCE` (:func:`symmetric_limbs`).
        self_touch_m: leave out GPs in which a hand touches the head — a wrist within this
            distance of the head joint (metres, on a 1.70 m body) at the apex or in more than
            half of the GP's frames (:func:`touches_head`): a hand brought to the face and held
            there is a self-adaptor, not a co-speech gesture (``None``: keep them).
    """

    split: str = "strokes"
    max_pre_s: float = 1.0
    max_post_s: float = 1.0
    min_post_s: float = 0.1
    max_other_speed: float | None = 1.0
    phase: PhaseConfig = field(default_factory=PhaseConfig)
    drop_pops: bool = True
    stand: bool | str = "auto"
    max_lean_deg: float | None = 10.0
    symmetric_limbs: bool = True
    self_touch_m: float | None = 0.25

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise InputError(f"split must be one of {', '.join(SPLITS)}, got {self.split!r}")
        if self.stand not in (True, False, "auto"):
            raise InputError(f"stand must be true, false or 'auto', got {self.stand!r}")
        if not (self.max_pre_s > 0 and self.max_post_s > 0 and 0 <= self.min_post_s <= self.max_post_s):
            raise InputError("max_pre_s and max_post_s must be > 0 and 0 <= min_post_s <= max_post_s")
        if self.self_touch_m is not None and not self.self_touch_m >= 0:
            raise InputError(f"self_touch_m must be >= 0 metres or None, got {self.self_touch_m}")
        if self.max_lean_deg is not None and not 0 < self.max_lean_deg < 90:
            raise InputError(f"max_lean_deg must be in (0, 90) degrees or None, got {self.max_lean_deg}")


@dataclass(frozen=True, eq=False)
class GestureDatabase:
    """GPs of a set of recordings (the nodes of a GMG), with the recordings themselves.

    Attributes:
        phrases: the GPs, in recording then time order (a :class:`GesturePhrase` each, frames of
            its recording; ``n_strokes`` is 1 for GPs cut per stroke).
        recordings: recording name -> the :class:`Motion` the GP frames refer to (after end pops
            were dropped; ``meta["dropped_head"]`` frames were removed from the file's start).
        recording_index: ``(gps,)`` index of each GP's recording in :attr:`recording_names`.
        strokes: the stroke of each GP (frames of its recording).
        trajectories: recording name -> its hand trajectories (1.70 m body).
        roles: the skeleton's joint roles.
        rest: ``(recording name, frame)`` of the rest posture used where speech pauses.
        skeleton: the skeleton shared by all recordings (the first recording's).
        fps: frame rate of the first recording, frames per second.
        source: one line saying what capture the database was built from.
        note: caveats that every output built from it must repeat (e.g. :data:`CMU_NOTE`).
        gsi_scale: the GSI calibration the GSIs were computed with.
        config: how the GPs were cut.
    """

    phrases: tuple[GesturePhrase, ...]
    recordings: Mapping[str, Motion]
    recording_index: np.ndarray
    strokes: tuple[Stroke, ...]
    trajectories: Mapping[str, HandTrajectories]
    roles: Mapping[str, int]
    rest: tuple[str, int]
    skeleton: Skeleton
    fps: float
    source: str
    note: str
    gsi_scale: object
    config: DatabaseConfig
    _gsi_cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.phrases)

    @property
    def recording_names(self) -> list[str]:
        return list(self.recordings)

    @property
    def pre_s(self) -> np.ndarray:
        """``(gps,)`` seconds from each GP's first frame to its apex."""
        return np.array([(p.apex_frame - p.start_frame) / p.fps for p in self.phrases])

    @property
    def post_s(self) -> np.ndarray:
        """``(gps,)`` seconds from each GP's apex to its last frame (its end, exclusive)."""
        return np.array([(p.end_frame - p.apex_frame) / p.fps for p in self.phrases])

    @property
    def gsi(self) -> np.ndarray:
        """``(gps,)`` GSI of each GP's stroke at its captured speed."""
        return np.array([p.gsi for p in self.phrases])

    def frame(self) -> pd.DataFrame:
        """One row per GP: the :class:`GesturePhrase` fields plus ``gp``, ``recording``,
        ``pre_s``, ``post_s``, ``duration_s``."""
        df = phrases_frame(self.phrases)
        df.insert(0, "gp", np.arange(len(df)))
        df.insert(1, "recording", [self.recording_names[i] for i in self.recording_index])
        df["pre_s"] = self.pre_s
        df["post_s"] = self.post_s
        df["duration_s"] = df["pre_s"] + df["post_s"]
        return df

    def gsi_at(self, speed: float | Sequence[float]) -> np.ndarray:
        """GSI of every GP's stroke played ``speed`` times faster.

        Args:
            speed: scalar or ``(k,)`` playback speed factors (> 0; 1 = as captured).

        Returns:
            ``(gps, k)`` GSI values (``(gps,)`` for a scalar ``speed``).
        """
        k = np.atleast_1d(np.asarray(speed, dtype=float))
        if np.any(~(k > 0)):
            raise InputError("playback speed factors must be positive")
        missing = [float(x) for x in k if float(x) not in self._gsi_cache]
        if missing:
            rows = []
            for x in missing:
                for ph, st in zip(self.phrases, self.strokes):
                    tr = self.trajectories[ph.clip]
                    fast = replace(tr, fps=tr.fps * x, left_speed=tr.left_speed * x, right_speed=tr.right_speed * x)
                    rows.append(stroke_features(fast, st, dict(self.roles)))
            feats = pd.DataFrame(rows)
            g = np.asarray(self.gsi_scale.strength(feats[list(self.gsi_scale.features)]), dtype=float)
            for i, x in enumerate(missing):
                self._gsi_cache[x] = g[i * len(self.phrases):(i + 1) * len(self.phrases)]
        g = np.stack([self._gsi_cache[float(x)] for x in k], axis=1)
        return g[:, 0] if np.ndim(speed) == 0 else g

    def summary(self) -> dict:
        """JSON-ready description (source, note, counts, recordings, cut)."""
        return {
            "source": self.source,
            "note": self.note,
            "recordings": self.recording_names,
            "n_recordings": len(self.recordings),
            "n_gps": len(self.phrases),
            "fps": self.fps,
            "skeleton_joints": self.skeleton.n_joints,
            "rest_pose": {"recording": self.rest[0], "frame": int(self.rest[1])},
            "config": {k: v for k, v in asdict(self.config).items() if k != "phase"},
            "gsi_mean": float(np.mean(self.gsi)) if len(self.phrases) else float("nan"),
        }


# --------------------------------------------------------------------------------------------
def _slowest(speed: np.ndarray, lo: int, hi: int) -> int:
    """Frame of the lowest speed in ``lo..hi`` (inclusive; ``lo`` if the span is empty)."""
    lo, hi = int(lo), int(hi)
    if hi <= lo:
        return lo
    return lo + int(np.argmin(speed[lo:hi + 1]))


def _without_faster_movement(traj: HandTrajectories, start: int, end: int, s, cfg: DatabaseConfig) -> tuple[int, int]:
    """``(start, end)`` with the start moved past any movement before the stroke faster than
    ``max_other_speed`` times the stroke's peak: to the slowest frame between the last such
    frame and the stroke's start; and the end moved before any such movement of the *other*
    hand after the apex (at least ``min_post_s`` after it), to the slowest frame between the
    apex and it: a one-handed GP whose "retraction" holds the other hand's next, faster stroke
    would be found as that stroke wherever it is played. (Cutting at any faster movement after
    the apex, the same hand's included, left GPs ending in mid-gesture postures that no other GP
    starts from, a graph of 39 instead of 91 connected GPs on the Bandai Namco capture.)"""
    if cfg.max_other_speed is None:
        return start, end
    speed = traj.speed
    limit = cfg.max_other_speed * speed[s.peak_frame]
    a0 = min(int(s.start_frame), int(np.floor(s.apex_frame)))
    fast = np.flatnonzero(speed[start:a0] > limit)
    if len(fast):
        start = _slowest(speed, start + int(fast[-1]), a0)
    if s.hand in ("left", "right"):
        other = traj.right_speed if s.hand == "left" else traj.left_speed
        a1 = int(np.ceil(s.apex_frame + cfg.min_post_s * traj.fps))
        fast = np.flatnonzero(other[a1:end] > limit)
        if len(fast):
            end = min(end, _slowest(speed, int(np.ceil(s.apex_frame)), a1 + int(fast[0])) + 1)
    return start, end


def _cut_units(g: GestureAnalysis, cfg: DatabaseConfig) -> list[tuple[GesturePhrase, int]]:
    """GPs of one analysed clip and the index of the stroke each is built around."""
    fps = g.fps
    speed = g.trajectories.speed
    n = g.n_frames
    out: list[tuple[GesturePhrase, int]] = []
    for k, ph in enumerate(g.phrases):
        ids = [i for i, s in enumerate(g.strokes) if s.phrase == k]
        if cfg.split == "phrases":
            ids_main = [i for i in ids if g.strokes[i].main]
            pieces = [(ph.start_frame, ph.end_frame, ids_main[0], ph.starts_at_rest, ph.ends_at_rest)]
        else:
            bounds = [ph.start_frame]
            for a, b in zip(ids[:-1], ids[1:]):
                lo = int(np.floor(g.strokes[a].apex_frame)) + 1
                hi = int(np.ceil(g.strokes[b].apex_frame)) - 1
                bounds.append(int(np.clip(g.strokes[b].start_frame, lo, max(lo, hi))))
            bounds.append(ph.end_frame)
            pieces = []
            for m, i in enumerate(ids):
                pieces.append((bounds[m], bounds[m + 1], i, ph.starts_at_rest and m == 0, ph.ends_at_rest and m == len(ids) - 1))
        for start, end, i, at_rest0, at_rest1 in pieces:
            s = g.strokes[i]
            apex = s.apex_frame
            end = min(max(end, int(np.floor(apex)) + 1), n)
            start = min(start, int(np.floor(apex)))
            max_pre = cfg.max_pre_s * fps
            if apex - start > max_pre:
                lo = int(np.ceil(apex - max_pre))
                start = _slowest(speed, lo, max(lo, min(s.start_frame, int(np.floor(apex)))))
                at_rest0 = False
            max_post = cfg.max_post_s * fps
            if end - apex > max_post:
                lo = int(np.ceil(apex + cfg.min_post_s * fps))
                hi = int(np.floor(apex + max_post))
                end = min(n, _slowest(speed, lo, max(lo, hi)) + 1)
                at_rest1 = False
            start, end = _without_faster_movement(g.trajectories, start, end, s, cfg)
            if end - start < 2 or s.peak_frame <= start:
                continue  # too short, or it begins at its stroke's peak (the clip starts mid-stroke): no stroke to see
            out.append((GesturePhrase(
                g.name, int(start), int(end), float(fps), float(apex), float(apex / fps), int(s.start_frame),
                int(s.end_frame), float(s.gsi), float(s.fm_distance), float(s.velocity_range), float(s.max_velocity),
                s.hand, 1 if cfg.split == "strokes" else len(ids), bool(at_rest0), bool(at_rest1),
            ), i))
    return out


def _rest_frame(analyses: Sequence[GestureAnalysis]) -> tuple[str, int]:
    """Middle frame of the longest run of "rest" labels; failing that, the frame where the
    wrists are lowest (body frame)."""
    best = None
    for g in analyses:
        for phase, a, b in g.segmentation.intervals():
            if phase == "rest" and (best is None or b - a > best[0]):
                best = (b - a, g.name, (a + b - 1) // 2)
    if best is not None:
        return best[1], int(best[2])
    low = None
    for g in analyses:
        h = g.trajectories.left[:, 1] + g.trajectories.right[:, 1]
        i = int(np.argmin(h))
        if low is None or h[i] < low[0]:
            low = (h[i], g.name, i)
    return low[1], int(low[2])


def _load(sources: Iterable[Motion | str | os.PathLike], load: LoadOptions | None) -> list[Motion]:
    out: list[Motion] = load_clips(list(sources), load)
    if not out:
        raise InputError("no gesture clips given")
    return out


def build_gesture_database(
    clips: Iterable[Motion | str | os.PathLike],
    config: DatabaseConfig = DatabaseConfig(),
    gsi_scale=None,
    load: LoadOptions | None = None,
    source: str | None = None,
    note: str = "",
    progress: bool = False,
) -> GestureDatabase:
    """Analyse gesture capture and cut it into GPs (see the module docstring).

    Args:
        clips: motions, motion files or folders; all on one skeleton (same joint names).
        config: how GPs are cut; gsi_scale: GSI calibration (default: the built-in one).
        load: how the files are read (:class:`~evalkit.motion.LoadOptions`).
        source: one-line description of the capture (default: the number of clips).
        note: caveat repeated by every output (e.g. :data:`CMU_NOTE`).
        progress: show a progress bar.

    Raises:
        InputError: clips on different skeletons, or no GP found in any clip.
    """
    from evalkit.motion.trim import drop_end_pops

    motions = _load(clips, load)
    first = motions[0]
    for m in motions[1:]:
        if m.skeleton.names != first.skeleton.names:
            raise InputError(
                f"{m.meta.get('source') or m.name}: its skeleton ({m.n_joints} joints, root {m.skeleton.names[0]!r}) "
                f"differs from {first.meta.get('source') or first.name}'s ({first.n_joints} joints, root "
                f"{first.skeleton.names[0]!r}); a gesture database needs clips on one skeleton")
    scale = gsi_scale or default_gsi_scale()
    it = motions
    if progress:
        from tqdm import tqdm

        it = tqdm(motions, desc="gesture database", unit="clip")
    roles = find_roles(first.skeleton, strict=False)
    recordings: dict[str, Motion] = {}
    for m in it:
        name = str(m.meta.get("source") or m.name or f"clip{len(recordings)}")
        while name in recordings:
            name += "'"
        head = 0
        if config.drop_pops:
            m, head, _ = drop_end_pops(m)
        recordings[name] = replace(m, meta={**dict(m.meta), "dropped_head": int(head)})
    if config.symmetric_limbs:
        recordings = symmetric_limbs(recordings, roles)
    db = _analysed(recordings, config, scale, roles, source or f"{len(recordings)} gesture clip(s)", note)
    if config.stand is True or (config.stand == "auto" and not standing_capture(db)):
        stood = stand_recordings(recordings, roles, db.rest)
        if config.max_lean_deg is not None:
            stood = {k: upright_trunk(m, recordings[k], roles, config.max_lean_deg) for k, m in stood.items()}
        db = _analysed(stood, config, scale, roles,
                       db.source + " (upper body on the rest pose's legs)", note)
    return db


def _analysed(recordings: Mapping[str, Motion], config: DatabaseConfig, scale, roles, source: str, note: str) -> GestureDatabase:
    """The database of already loaded recordings (name -> motion): gesture analysis, GPs."""
    analyses: list[GestureAnalysis] = []
    phrases: list[GesturePhrase] = []
    rec_index: list[int] = []
    strokes: list[Stroke] = []
    trajectories: dict[str, HandTrajectories] = {}
    for r, (name, m) in enumerate(recordings.items()):
        g = analyze_gestures(m, config.phase, scale, roles=roles, clip=name)
        analyses.append(g)
        trajectories[name] = g.trajectories
        seg_strokes = g.segmentation.strokes
        for ph, i in _cut_units(g, config):
            if config.self_touch_m is not None and touches_head(m, roles, ph, config.self_touch_m):
                continue
            phrases.append(ph)
            rec_index.append(r)
            strokes.append(seg_strokes[i])
    if not phrases:
        raise InputError("no gesture phrase found in the clips; are they gesture capture with hands moving from rest?")
    first = next(iter(recordings.values()))
    return GestureDatabase(
        phrases=tuple(phrases),
        recordings=dict(recordings),
        recording_index=np.asarray(rec_index, dtype=np.int64),
        strokes=tuple(strokes),
        trajectories=trajectories,
        roles=roles,
        rest=_rest_frame(analyses),
        skeleton=first.skeleton,
        fps=float(first.fps),
        source=source,
        note=note,
        gsi_scale=scale,
        config=config,
    )


def lower_body(skeleton: Skeleton, roles: Mapping[str, int]) -> np.ndarray:
    """``(joints,)`` bool: the joints that carry the body rather than gesture — every joint from
    the root down to the hips, and both legs (each leg's subtree from the hips' child it hangs
    from). All false when the rig has no hips or hip roles."""
    parents = skeleton.parents
    out = np.zeros(skeleton.n_joints, dtype=bool)
    h = roles.get("hips")
    if h is None or "left_hip" not in roles or "right_hip" not in roles:
        return out
    j = h
    while j >= 0:
        out[j] = True
        j = parents[j]
    leg = np.zeros_like(out)
    for side in ("left_hip", "right_hip"):
        j = roles[side]
        while parents[j] >= 0 and parents[j] != h:
            j = parents[j]
        leg[j] = parents[j] == h
    for j in range(skeleton.n_joints):  # parents come before children: a leg joint's children are leg joints
        leg[j] |= parents[j] >= 0 and leg[parents[j]]
    return out | leg


def stand_recordings(recordings: Mapping[str, Motion], roles: Mapping[str, int], rest: tuple[str, int]) -> dict[str, Motion]:
    """Every recording with the root, hips and legs (:func:`lower_body`) of the rest frame
    ``rest = (recording, frame)`` on all its frames: the upper body's captured movement on a
    speaker standing still."""
    ref = recordings[rest[0]]
    f = int(rest[1])
    out = {}
    for name, m in recordings.items():
        legs = lower_body(m.skeleton, roles)
        rot = m.rotations.copy()
        tr = m.translations.copy()
        rot[:, legs] = ref.rotations[f, legs]
        tr[:, legs] = ref.translations[f, legs]
        out[name] = replace(m, rotations=rot, translations=tr, meta={**dict(m.meta), "stand": True})
    return out


def touches_head(motion: Motion, roles: Mapping[str, int], gp: GesturePhrase, within_m: float = 0.25) -> bool:
    """Whether a hand touches the head in GP ``gp`` of ``motion``: either wrist within
    ``within_m`` metres (on a body rescaled to 1.70 m) of the head joint at the apex frame or
    in more than half of the GP's frames. False when the rig has no head or wrist roles.

    A hand brought to the face, or held there while the other hand moves, is a self-adaptor
    (Ekman & Friesen's self-touching movements), not a gesture that illustrates speech; the
    bundled CMU 131 capture has such a movement (hand to the face at 4.7-5.5 s of 131_03), the
    Bandai Namco gesture takes none (their closest wrist comes to 0.28 m at an apex)."""
    from evalkit.features.body import NORMALISED_HEIGHT_M
    from evalkit.motion import skeleton_height

    if not all(r in roles for r in ("head", "left_wrist", "right_wrist")):
        return False
    pos = motion.positions[gp.start_frame:gp.end_frame]
    if not len(pos):
        return False
    scale = NORMALISED_HEIGHT_M / skeleton_height(motion)
    d = np.linalg.norm(pos[:, [roles["left_wrist"], roles["right_wrist"]]] - pos[:, [roles["head"]]], axis=2).min(axis=1) * scale
    apex = int(np.clip(round(gp.apex_frame) - gp.start_frame, 0, len(d) - 1))
    return bool(d[apex] < within_m or np.mean(d < within_m) > 0.5)


def symmetric_limbs(recordings: Mapping[str, Motion], roles: Mapping[str, int],
                    tolerance: float = LIMB_TOLERANCE) -> dict[str, Motion]:
    """The recordings with each bone of :data:`LIMB_BONES` as long on the left as on the right
    (the mean of the two sides; the bone keeps its direction, only the child joint's offset is
    scaled), when the whole arms or legs differ by more than ``tolerance`` (relative). Joint
    rotations are unchanged. A speaker whose arms differ by 5 % (the bundled CMU 131 rig: 0.425
    against 0.446 m) is what the naturalness model takes for a limb-length artifact. Returned as
    given when the rig has no such roles or is already symmetric."""
    first = next(iter(recordings.values()))
    sk = first.skeleton
    need = [f"{side}_{r}" for a, b in LIMB_BONES for r in (a, b) for side in ("left", "right")]
    if not all(r in roles for r in need):
        return dict(recordings)
    pos = first.positions[0]

    def length(side: str, a: str, b: str) -> float:
        return float(np.linalg.norm(pos[roles[f"{side}_{b}"]] - pos[roles[f"{side}_{a}"]]))

    uneven = False
    for bones in (LIMB_BONES[:2], LIMB_BONES[2:]):
        ll = sum(length("left", a, b) for a, b in bones)
        rl = sum(length("right", a, b) for a, b in bones)
        uneven |= abs(ll - rl) > tolerance * 0.5 * (ll + rl)
    if not uneven:
        return dict(recordings)
    scale = np.ones(sk.n_joints)
    for a, b in LIMB_BONES:
        mean = 0.5 * (length("left", a, b) + length("right", a, b))
        for side in ("left", "right"):
            j = roles[f"{side}_{b}"]
            if sk.parents[j] == roles[f"{side}_{a}"] and length(side, a, b) > 1e-9:  # a direct child only
                scale[j] = mean / length(side, a, b)
    out = {}
    for name, m in recordings.items():
        skel = replace(m.skeleton, offsets=m.skeleton.offsets * scale[:, None])
        out[name] = replace(m, skeleton=skel, translations=m.translations * scale[None, :, None],
                            meta={**dict(m.meta), "symmetric_limbs": True})
    return out


def spine_base(skeleton: Skeleton, roles: Mapping[str, int]) -> int | None:
    """The joint whose parent is the hips on the way from the neck down (the first spine joint),
    or ``None`` when the rig has no hips or neck roles."""
    h, j = roles.get("hips"), roles.get("neck")
    if h is None or j is None:
        return None
    parents = skeleton.parents
    while j >= 0 and parents[j] != h:
        j = int(parents[j])
    return j if j >= 0 else None


def _heading(rot: np.ndarray) -> np.ndarray:
    """``(frames, 4)`` rotations about the vertical (Y) of ``(frames, 3, 3)`` world rotations:
    their forward axis (local Z) projected on the ground."""
    f = rot[:, :, 2]
    return quat.about_y(np.arctan2(f[:, 0], f[:, 2]))


def upright_trunk(stood: Motion, captured: Motion, roles: Mapping[str, int], max_lean_deg: float = 10.0,
                  iterations: int = 2) -> Motion:
    """The trunk of a standing speaker made from capture not performed standing.

    ``stood`` is ``captured`` on the rest pose's pelvis and legs (:func:`stand_recordings`).
    Its first spine joint (:func:`spine_base`) gets the world orientation the captured one had,
    turned from the captured hips' heading to the stood hips' heading: in a stride, a hop or a
    lunge the captured spine bent against the pelvis' tilt to keep the trunk up, and on the
    rest pose's pelvis the same local rotation leaned the trunk (CMU 131: 10° median, up to
    52°). Then the trunk's lean (hips -> neck against the vertical) is limited softly to
    ``max_lean_deg`` (``L tanh(lean / L)``, rotating about the first spine joint; near-upright
    frames change little): a speaker standing in place does not crouch or bend far (the Bandai
    Namco gesture takes: median 1-7°). The head and arms keep their rotations relative to the
    chest. Degrees; ``iterations`` refine the limit (the rotation is about the spine joint,
    the lean is measured from the hips)."""
    j = spine_base(stood.skeleton, roles)
    if j is None:
        return stood
    h, n, p = roles["hips"], roles["neck"], int(stood.skeleton.parents[j])
    _, world_c = forward_kinematics(captured)
    _, world_s = forward_kinematics(stood)
    target = quat.multiply(_heading(world_s[:, h]), quat.multiply(quat.inverse(_heading(world_c[:, h])),
                                                                    quat.from_matrix(world_c[:, j])))
    parent = quat.from_matrix(world_s[:, p])
    rot = stood.rotations.copy()
    rot[:, j] = quat.normalize(quat.multiply(quat.inverse(parent), target))
    limit = np.radians(max_lean_deg)
    up = np.array([0.0, 1.0, 0.0])
    for _ in range(iterations):
        pos = replace(stood, rotations=rot).positions
        t = pos[:, n] - pos[:, h]
        t /= np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-12)
        lean = np.arccos(np.clip(t @ up, -1.0, 1.0))
        turn = lean - limit * np.tanh(lean / limit)
        axis = np.cross(t, up)
        norm = np.linalg.norm(axis, axis=1, keepdims=True)
        axis = np.where(norm > 1e-9, axis / np.maximum(norm, 1e-12), 0.0)
        q = np.concatenate([axis * np.sin(turn / 2)[:, None], np.cos(turn / 2)[:, None]], axis=1)
        rot[:, j] = quat.normalize(quat.multiply(quat.inverse(parent), quat.multiply(q, quat.multiply(parent, rot[:, j]))))
    return replace(stood, rotations=rot, meta={**dict(stood.meta), "max_lean_deg": float(max_lean_deg)})


def standing_capture(db: GestureDatabase, max_travel_m: float = 0.15, share: float = 0.9) -> bool:
    """Whether the database's GPs are performed standing: in at least ``share`` of them neither
    ankle travels more than ``max_travel_m`` metres horizontally (false for walks and hops)."""
    roles = db.roles
    if not all(r in roles for r in ("left_ankle", "right_ankle")):
        return False
    ankles = [roles["left_ankle"], roles["right_ankle"]]
    still = []
    for p in db.phrases:
        pos = db.recordings[p.clip].positions[p.start_frame:p.end_frame][:, ankles][..., [0, 2]]
        still.append(float(np.ptp(pos, axis=0).max()) <= max_travel_m)
    return bool(np.mean(still) >= share) if still else False


def cmu_gesture_database(config: DatabaseConfig = DatabaseConfig(), progress: bool = False) -> GestureDatabase:
    """A small database from the bundled CMU BVH clips (:data:`CMU_CLIPS`), marked with
    :data:`CMU_NOTE`: the only capture that ships with evalkit, and not conversational."""
    from evalkit.data import sample_path

    paths = [sample_path("cmu", c) for c in CMU_CLIPS]
    return build_gesture_database(paths, config, source="bundled CMU clips " + ", ".join(CMU_CLIPS),
                                  note=CMU_NOTE, progress=progress)


def is_bundled_cmu(paths: Sequence[str | os.PathLike]) -> bool:
    """Whether every path lies in the bundled CMU sample folder."""
    from evalkit.data import SAMPLES_DIR

    root = (SAMPLES_DIR / "cmu").resolve()
    try:
        return bool(paths) and all(Path(p).resolve() == root or root in Path(p).resolve().parents for p in paths)
    except OSError:
        return False
