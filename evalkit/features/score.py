"""All metrics of one clip: ``analyse`` → ``score_analysis`` (one row) / ``traces_table``
(per-frame table). ``score_motion`` does both steps for the common case.

``evalkit score --model FILE`` scores clips with this module, then hands the finished table to
:func:`evalkit.models.naturalness.add_model_columns`, which adds the naturalness
discriminator's verdict (docs/discriminator.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from evalkit.features.beats import BeatConfig, beat_metrics
from evalkit.features.body import BodyIndex, body_index, hand_joints
from evalkit.motion.trim import PopConfig, drop_end_pops
from evalkit.features.contacts import ContactConfig, grid_contacts
from evalkit.features.footskate import SkateConfig, grid_skate_speed, skate_metrics, skating_ratio_metric
from evalkit.features.ground import (
    FootTrack, GroundConfig, floating, foot_track, ground_metrics, lowest_foot_height, penetration,
)
from evalkit.features.kinematics import (
    Reference, angle_outliers, bone_length_drift, derivative_magnitudes, genea_accel_jerk, hellinger,
    histograms, jerk_per_frame, joint_angles, role_joints,
)
from evalkit.features.kinetic import fm_distances, fm_vector, kinetic_metrics
from evalkit.features.physics import PhysicsConfig, PhysicsTraces, physics_metrics, physics_traces
from evalkit.features.signal import lowpass
from evalkit.motion import Motion


@dataclass(frozen=True)
class ScoreConfig:
    """Every setting of the scoring pipeline (defaults are documented in ``docs/metrics.md``).

    Attributes:
        ground, contacts, skate, physics, beats: per-family settings.
        pops: end-frame pop detection (``None`` keeps every frame).
        roles: ``{role: joint name}`` overrides for unusual rigs.
        angle_tolerance_deg: joint-angle excess ignored by the range-outlier metric, degrees.
        kinetic_window: half-width of the kinetic features' sliding window, frames.
        hist_fps: common rate (Hz) of the finite differences behind the histogram metrics.
    """

    ground: GroundConfig = field(default_factory=GroundConfig)
    contacts: ContactConfig = field(default_factory=ContactConfig)
    skate: SkateConfig = field(default_factory=SkateConfig)
    physics: PhysicsConfig = field(default_factory=PhysicsConfig)
    beats: BeatConfig = field(default_factory=BeatConfig)
    pops: PopConfig | None = field(default_factory=PopConfig)
    roles: Mapping[str, str] | None = None
    angle_tolerance_deg: float = 10.0
    kinetic_window: int = 2
    hist_fps: float = 30.0


@dataclass(frozen=True, eq=False)
class Analysis:
    """Intermediate results for one clip, shared by the metrics and the per-frame traces.

    Attributes:
        motion: the clip after dropping popped end frames.
        positions: ``(frames, joints, 3)`` world positions, metres.
        body: resolved roles and body height.
        track: foot points and ground (``None``: the rig has no ankles; foot metrics are empty).
        grid_contacts: ``(G, 2)`` planted feet on the analysis grid (``None`` without ``track``).
        contacts: ``(frames, 2)`` planted feet at the clip's frames (``None`` without ``track``).
        physics: COM, ZMP, support distance, flight (``None`` when the roles are missing).
        dropped: ``(start, end)`` frames dropped as pops.
        notes: what could not be computed or was estimated, and why (one sentence each).
        smooth: ``(joints, (frames, len(joints), 3))`` the role joints (sorted) and their
            positions low-passed at ``config.physics.cutoff_hz``, metres, filtered once for the
            physics and the FMDistance metrics (``None`` without ``track``).
    """

    motion: Motion
    positions: np.ndarray
    body: BodyIndex
    track: FootTrack | None
    grid_contacts: np.ndarray | None
    contacts: np.ndarray | None
    physics: PhysicsTraces | None
    dropped: tuple[int, int]
    config: ScoreConfig
    notes: tuple[str, ...] = ()
    smooth: tuple[np.ndarray, np.ndarray] | None = None


def _body(motion: Motion, roles) -> tuple[BodyIndex, list[str]]:
    """Roles and height; a rig without ankles still gets the metrics that need none."""
    from evalkit.errors import RolesNotFoundError
    from evalkit.motion import find_roles, skeleton_height

    try:
        return body_index(motion, roles), []
    except RolesNotFoundError as exc:
        found = find_roles(motion.skeleton, overrides=roles, strict=False)
        body = BodyIndex(roles=dict(found), foot_points=np.zeros((2, 0), dtype=np.int64),
                         height=float(skeleton_height(motion)))
        reason = str(exc).split(" in a skeleton with joints")[0]
        return body, [f"foot, ground and physics metrics not computed: {reason}; map them with --roles FILE"]


def analyse(motion: Motion, config: ScoreConfig | None = None) -> Analysis:
    """Run the per-frame stages (pop removal, ground, contacts, physics) on one clip.

    A rig lacking the roles of one family of metrics still gets the others: without ankles
    there is no foot track (``track`` is ``None``), without shoulders, elbows, wrists, hips or
    knees no physics; a missing neck or head is estimated from the trunk. ``notes`` says which.

    Raises:
        InputError: the clip is too short (fewer than 4 frames).
    """
    from evalkit.errors import InputError, RolesNotFoundError
    from evalkit.features.physics import estimated_roles

    cfg = config or ScoreConfig()
    body, notes = _body(motion, cfg.roles)
    dropped = (0, 0)
    if cfg.pops is not None:
        motion, a, b = drop_end_pops(motion, body.scale, cfg.pops)
        dropped = (a, b)
    if motion.n_frames < 4:
        raise InputError(f"{motion.name or 'clip'}: {motion.n_frames} frames; metrics need at least 4")
    pos = np.asarray(motion.positions)
    track = gc = contacts = phys = smooth = None
    if body.foot_points.size:
        joints = role_joints(body)
        smooth = (joints, lowpass(pos[:, joints], motion.fps, cfg.physics.cutoff_hz))
        track = foot_track(motion, cfg.ground, body, pos)
        gc = grid_contacts(track, cfg.contacts)
        contacts = gc[track.frame_to_grid]
        try:
            phys = physics_traces(pos, track, contacts, cfg.physics, cfg.contacts, smooth)
            est = estimated_roles(body)
            if est:
                notes.append(f"centre of mass: {' and '.join(est)} estimated from the trunk (no "
                             f"{'/'.join(est)} joint found; map it with --roles FILE if the rig has one)")
        except RolesNotFoundError as exc:
            notes.append(f"physics metrics not computed: {exc}")
    return Analysis(motion=motion, positions=pos, body=body, track=track, grid_contacts=gc,
                    contacts=contacts, physics=phys, dropped=dropped, config=cfg, notes=tuple(notes),
                    smooth=smooth)


def score_analysis(an: Analysis, reference: Reference | None = None,
                   audio_times: np.ndarray | None = None) -> dict[str, float]:
    """Clip-level metrics from an :class:`Analysis`.

    Args:
        reference: natural reference set for the distribution metrics (``hellinger_*``,
            ``angle_outlier_*``, ``fmd_ref_*``); without it those columns are absent.
        audio_times: audio onset times in seconds for the beat metrics (absent without it).

    Returns:
        ``{metric: value}``; see ``docs/metrics.md`` for every key, unit and default. Metrics a
        rig's roles do not allow are absent (``an.notes`` says why).
    """
    cfg = an.config
    m, pos, body = an.motion, an.positions, an.body
    row: dict[str, float] = {
        "frames": float(m.n_frames),
        "fps": float(m.fps),
        "duration_s": float(m.duration),
        "height_m": float(body.height),
        "dropped_frames": float(sum(an.dropped)),
    }
    if an.track is not None:
        row.update(ground_metrics(an.track, cfg.ground))
        row.update(skate_metrics(an.track, cfg.skate, cfg.contacts, an.grid_contacts))
        row.update(skating_ratio_metric(an.track, cfg.skate, lowest_y=float(pos[..., 1].min())))
    if an.physics is not None:
        row.update(physics_metrics(an.physics, body.scale, cfg.physics))
    hands = hand_joints(m.skeleton.parents, body.roles)
    body_joints = np.ones(m.n_joints, dtype=bool)
    body_joints[hands] = False
    trunk_and_limbs = np.flatnonzero(body_joints)
    row["accel_mean"], row["jerk_mean"] = genea_accel_jerk(pos[:, trunk_and_limbs], m.fps)
    if hands.size:  # hands as their own group: finger capture is noisier than the body's
        row["accel_mean_hands"], row["jerk_mean_hands"] = genea_accel_jerk(pos[:, hands], m.fps)
    drift_max, drift_mean = bone_length_drift(pos, m.skeleton.parents)
    row["bone_drift_max"], row["bone_drift_mean"] = drift_max, drift_mean
    row.update(kinetic_metrics(pos, m.fps, body, cfg.kinetic_window))
    if reference is not None:
        joints = role_joints(body)
        hist = histograms(derivative_magnitudes(pos[:, joints], m.fps, cfg.hist_fps))
        for k in ("speed", "accel", "jerk"):
            row[f"hellinger_{k}"] = hellinger(hist[k], reference.hist[k]) if k in reference.hist else float("nan")
        frac, excess = angle_outliers(joint_angles(pos, body), reference, cfg.angle_tolerance_deg)
        row["angle_outlier_frac"], row["angle_outlier_max_deg"] = frac, excess
        if reference.fm.size:
            v = fm_vector(pos, m.fps, body, cfg.physics.cutoff_hz, an.smooth)
            d = fm_distances(v, reference.fm)
            row["fmd_ref_mean"] = float(np.nanmean(d)) if np.isfinite(d).any() else float("nan")
            row["fmd_ref_min"] = float(np.nanmin(d)) if np.isfinite(d).any() else float("nan")
    if audio_times is not None:
        row.update(beat_metrics(pos, m.fps, audio_times, cfg.beats))
    return row


def score_motion(motion: Motion, config: ScoreConfig | None = None, reference: Reference | None = None,
                 audio_times: np.ndarray | None = None) -> dict[str, float]:
    """Every metric of one clip as ``{name: value}`` (:func:`analyse` + :func:`score_analysis`).

    Units per metric are in docs/metrics.md (metres, seconds, shares in [0, 1]).

    >>> from evalkit.data import SAMPLES_DIR
    >>> from evalkit.motion import load_motion
    >>> row = score_motion(load_motion(SAMPLES_DIR / "cmu" / "16_15.amc"))
    >>> round(row["height_m"], 2), round(row["skate_fraction"], 2)  # metres; share of planted time
    (1.65, 0.11)
    """
    return score_analysis(analyse(motion, config), reference, audio_times)


def traces_table(an: Analysis) -> "pandas.DataFrame":  # noqa: F821 (pandas imported lazily)
    """Per-frame traces of one clip as a pandas DataFrame (one row per frame).

    Columns: ``frame``, ``time_s``, ``contact_left`` / ``contact_right`` (bool),
    ``skate_left`` / ``skate_right`` (m/s), ``foot_height`` (lowest foot point above ground, m),
    ``penetration`` / ``floating`` (m), ``support_left`` / ``support_right`` (height of the
    support under each foot above the fitted ground plane, m: steps and stairs; 0 on a level
    floor), ``com_x`` / ``com_y`` / ``com_z`` (m), ``zmp_x`` / ``zmp_z`` (m), ``zmp_outside`` /
    ``zmp_cart_outside`` (m, NaN off ground), ``flight`` (bool), ``ballistic_error`` (m/s², NaN
    off flight), ``jerk`` (mean over joints, m/s³).
    """
    import pandas as pd

    n = an.motion.n_frames
    first = an.dropped[0]
    nan = np.full(n, np.nan)
    t, ph = an.track, an.physics
    out = {"frame": np.arange(n) + first, "time_s": (np.arange(n) + first) / an.motion.fps}
    if t is not None:
        skate = grid_skate_speed(t, an.grid_contacts, an.config.contacts, an.config.skate)[t.frame_to_grid]
        out.update({
            "contact_left": an.contacts[:, 0], "contact_right": an.contacts[:, 1],
            "skate_left": skate[:, 0], "skate_right": skate[:, 1],
            "foot_height": lowest_foot_height(t),
            "penetration": penetration(t, an.config.ground.float_tolerance),
            "floating": floating(t, an.config.ground.float_tolerance),
            "support_left": t.frame_support[:, 0], "support_right": t.frame_support[:, 1],
        })
    else:
        out.update({k: nan for k in ("contact_left", "contact_right", "skate_left", "skate_right", "foot_height",
                                     "penetration", "floating", "support_left", "support_right")})
    if ph is not None:
        out.update({
            "com_x": ph.com[:, 0], "com_y": ph.com[:, 1], "com_z": ph.com[:, 2],
            "zmp_x": ph.zmp[:, 0], "zmp_z": ph.zmp[:, 1],
            "zmp_outside": ph.zmp_outside, "zmp_cart_outside": ph.zmp_cart_outside,
            "flight": ph.flight, "ballistic_error": ph.ballistic_error,
        })
    else:
        out.update({k: nan for k in ("com_x", "com_y", "com_z", "zmp_x", "zmp_z", "zmp_outside",
                                     "zmp_cart_outside", "flight", "ballistic_error")})
    out["jerk"] = jerk_per_frame(an.positions, an.motion.fps)
    return pd.DataFrame(out)
