"""Foot-skate: horizontal sliding of planted feet.

Two families of numbers:

* **Contact-based skate** (Kovar et al. 2002 style). During each contact interval of a foot
  (:func:`evalkit.features.contacts.foot_contacts`) the foot's *skate speed* is the horizontal
  speed of its slowest contact point (a foot rolling over heel and toe is not sliding as long as
  one point stays put). Per contact, the slide distance is the skate speed integrated over the
  interval (metres); ``skate_fraction`` is the share of contact frames whose skate speed exceeds
  ``skate_speed`` (m/s). Filtered velocities (cut-off in Hz) make these frame-rate independent.
  A slide faster than the contact speed threshold ends the contact; that case is caught by the
  second family.
* **Foot skating ratio** as used in the motion-diffusion literature (introduced with GMD,
  Karunratanakul et al. 2023, and reported by its successors): a frame pair is skating when the
  toe joint is below 5 cm in both frames, its horizontal speed exceeds 0.5 m/s and its moving
  average over 5 frames (at 20 fps, i.e. 0.25 s) does too; left or right; the ratio is taken over
  the ``T − 1`` frame pairs. We compute it at the clip's own frame rate: speeds are finite
  differences × fps and the window is 0.25 s rounded to an odd number of frames (5 at 20 fps).
  Heights are measured above the floor of HumanML3D's convention (the lowest joint of the whole
  clip is at y = 0; ``ratio_floor="lowest"``) or above our estimated ground
  (``ratio_floor="ground"``). Because the definition counts frame pairs, it depends on the frame
  rate (a pair spans 8 ms at 120 fps, 50 ms at 20 fps); ``skating_ratio_20fps`` therefore also
  reports it after resampling the toe trajectories to 20 fps, the rate of the published tables,
  which makes it comparable across sources.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import uniform_filter1d

from evalkit.features.contacts import ContactConfig, contact_intervals, grid_contacts
from evalkit.features.ground import FootTrack
from evalkit.features.signal import lowpass
from evalkit.motion.vectors import norm_xz


@dataclass(frozen=True)
class SkateConfig:
    """Foot-skate thresholds.

    Attributes:
        skate_speed: a planted foot slides when its skate speed exceeds this, m/s (1.75 m body,
            scaled by body height).
        edge_trim: seconds at each end of a contact left out of the skate measures (landing
            and roll-off are not sliding).
        ratio_height: foot height threshold of the skating ratio, metres (literature: 0.05).
        ratio_speed: horizontal speed threshold of the skating ratio, m/s (literature: 0.5).
        ratio_window: moving-average window of the skating ratio, seconds (literature: 5 frames
            at 20 fps = 0.25 s).
        ratio_floor: ``"lowest"`` (HumanML3D: the lowest joint of the clip is the floor) or
            ``"ground"`` (the estimated ground, see :mod:`evalkit.features.ground`).
    """

    skate_speed: float = 0.1
    edge_trim: float = 0.05
    ratio_height: float = 0.05
    ratio_speed: float = 0.5
    ratio_window: float = 0.25
    ratio_floor: str = "lowest"


def contact_cores(contacts: np.ndarray, fps: float, trim_s: float) -> np.ndarray:
    """``(T, feet)`` bool: planted samples at least ``trim_s`` seconds inside their contact
    interval (heel-strike and toe-off edges removed)."""
    e = int(round(trim_s * fps))
    if e <= 0:
        return contacts.astype(bool)
    out = np.zeros_like(contacts, dtype=bool)
    for f, a, b in contact_intervals(contacts):
        if b - a > 2 * e:
            out[a + e:b - e, f] = True
    return out


def grid_skate_speed(track: FootTrack, contacts: np.ndarray, config: ContactConfig | None = None,
                     skate: SkateConfig | None = None) -> np.ndarray:
    """``(G, 2)`` skate speed of each foot on the analysis grid, m/s; 0 where not planted.

    The horizontal speed of the slowest foot point that is near the ground (height below the
    contact height threshold) while the foot is planted; if no point is near the ground on a
    planted sample (a gap filled by cleaning), the slowest point overall. The first and last
    ``skate.edge_trim`` seconds of each contact (the foot still landing or already rolling off)
    count as 0.

    Args:
        track: foot points of the clip.
        contacts: ``(G, 2)`` bool planted feet on the grid (:func:`grid_contacts`).
    """
    return _skate_and_cores(track, contacts, config, skate)[0]


def _skate_and_cores(track: FootTrack, contacts: np.ndarray, config: ContactConfig | None,
                     skate: SkateConfig | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`grid_skate_speed` and the contact cores it keeps (:func:`contact_cores`), ``(G, 2)`` each."""
    cfg = config or ContactConfig()
    scfg = skate or SkateConfig()
    hs = track.slide_speed  # (G, 2, P), filtered at the measuring cut-off
    near = track.smooth_heights < cfg.height * track.body.scale
    masked = np.where(near, hs, np.inf).min(axis=2)
    v = np.where(np.isfinite(masked), masked, hs.min(axis=2))
    core = contact_cores(contacts, track.grid_fps, scfg.edge_trim)
    return np.where(core, v, 0.0), core


def skate_speed(track: FootTrack, config: ContactConfig | None = None, skate: SkateConfig | None = None) -> np.ndarray:
    """``(frames, 2)`` skate speed of the left/right foot at the clip's frames, m/s.

    Horizontal speed of the planted foot's slowest near-ground point; 0 where the foot is not
    planted (:func:`evalkit.features.contacts.foot_contacts`) and at the edges of each contact
    (see :func:`grid_skate_speed`).
    """
    g = grid_skate_speed(track, grid_contacts(track, config), config, skate)
    return g[track.frame_to_grid]


def contact_slides(skate: np.ndarray, contacts: np.ndarray, fps: float) -> np.ndarray:
    """``(contacts,)`` slide distance of each contact interval: skate speed integrated, metres.

    Args:
        skate: ``(T, 2)`` skate speed, m/s (:func:`grid_skate_speed`).
        contacts: ``(T, 2)`` bool planted feet on the same time base.
        fps: samples per second of that time base.
    """
    return np.array([skate[a:b, f].sum() / fps for f, a, b in contact_intervals(contacts)], dtype=float)


def skate_metrics(
    track: FootTrack, config: SkateConfig | None = None, contact_config: ContactConfig | None = None,
    contacts: np.ndarray | None = None,
) -> dict[str, float]:
    """Clip-level contact-based skate metrics (evaluated on the analysis grid).

    Returns:
        ``contact_frac`` (share of time×feet planted), ``contacts_per_s``,
        ``skate_fraction`` (share of planted time, edges trimmed, sliding faster than
        ``skate_speed``), ``skate_speed_mean`` (mean skate speed over that time, m/s),
        ``skate_distance_mean`` / ``skate_distance_max`` (slide per contact, m),
        ``skate_distance_per_s`` (total slide per second of clip, m/s).

    ``contacts``: ``(G, 2)`` planted feet on the grid when already computed
    (:func:`grid_contacts` of ``track`` with ``contact_config``).
    """
    cfg = config or SkateConfig()
    contacts = grid_contacts(track, contact_config) if contacts is None else contacts
    v, core = _skate_and_cores(track, contacts, contact_config, cfg)
    slides = contact_slides(v, contacts, track.grid_fps)
    n_planted = int(core.sum())
    duration = track.n_frames / track.fps
    on = v[core]
    return {
        "contact_frac": float(contacts.mean()) if contacts.size else 0.0,
        "contacts_per_s": float(len(slides) / duration),
        "skate_fraction": float((on > cfg.skate_speed * track.body.scale).mean()) if n_planted else 0.0,
        "skate_speed_mean": float(on.mean()) if n_planted else 0.0,
        "skate_distance_mean": float(slides.mean()) if slides.size else 0.0,
        "skate_distance_max": float(slides.max()) if slides.size else 0.0,
        "skate_distance_per_s": float(slides.sum() / duration),
    }


def skating_ratio(
    toes: np.ndarray, fps: float, ground: float = 0.0, height: float = 0.05, speed: float = 0.5,
    window_s: float = 0.25,
) -> tuple[float, np.ndarray, np.ndarray]:
    """The motion-diffusion "foot skating ratio" (GMD definition) at the clip's frame rate.

    Args:
        toes: ``(frames, 2, 3)`` world positions of the left and right foot (toe) joints, metres.
        fps: frames per second.
        ground: world y of the floor, metres.
        height: contact height threshold, metres (0.05).
        speed: skating speed threshold, m/s (0.5).
        window_s: moving-average window, seconds; rounded to an odd frame count (5 at 20 fps).

    Returns:
        ``(ratio, skating, skate_vel)``: the share of the ``T − 1`` frame pairs in which either
        foot skates; ``(T − 1,)`` bool per pair; ``(T − 1, 2)`` windowed horizontal speed on
        contact pairs (0 elsewhere), m/s.
    """
    toes = np.asarray(toes, dtype=np.float64)
    if toes.shape[0] < 2:
        return 0.0, np.zeros(0, bool), np.zeros((0, 2))
    skating, contact, v_avg = _skating_pairs(toes, fps, ground, height, speed, window_s)
    return float(skating.mean()), skating, np.where(contact, v_avg, 0.0)


def _skating_pairs(toes: np.ndarray, fps: float, ground: float, height: float, speed: float, window_s: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`skating_ratio`'s frame pairs for ``(T, ..., 2, 3)`` toes (``...``: several clips of
    one length at once): ``(T − 1, ...)`` skating pairs, ``(T − 1, ..., 2)`` contact pairs and
    windowed speeds (m/s)."""
    v = norm_xz(np.diff(toes, axis=0)) * fps  # (T-1, ..., 2)
    size = max(1, 2 * int(round(window_s * fps / 2.0)) + 1)
    # Zero padding at the ends ("constant" mode), as in the published definition.
    v_avg = uniform_filter1d(v, size=size, axis=0, mode="constant", cval=0.0)
    h = toes[..., 1] - ground
    contact = (h[:-1] < height) & (h[1:] < height)
    skating = contact & (v > speed) & (v_avg > speed)
    return skating.any(axis=-1), contact, v_avg


def resample_points(x: np.ndarray, fps: float, new_fps: float, offset_s: float = 0.0) -> np.ndarray:
    """Linear interpolation of ``(frames, ...)`` samples at ``fps`` onto a grid at ``new_fps``
    starting ``offset_s`` seconds after the first frame and spanning the rest of the clip
    (``floor((duration − offset) × new_fps) + 1`` samples)."""
    return _interpolate(x, fps, _grid_times(x.shape[0], fps, new_fps, offset_s))


def _grid_times(n: int, fps: float, new_fps: float, offset_s: float) -> np.ndarray:
    """Times (s) of :func:`resample_points`' grid for a clip of ``n`` frames."""
    m = int(np.floor(((n - 1) / fps - offset_s) * new_fps + 1e-9)) + 1
    return offset_s + np.arange(max(m, 0)) / new_fps


def _interpolate(x: np.ndarray, fps: float, tn: np.ndarray) -> np.ndarray:
    """``(frames, ...)`` samples at ``fps`` linearly interpolated at times ``tn`` (s) -> ``(len(tn), ...)``."""
    n = x.shape[0]
    t = np.arange(n) / fps
    flat = np.asarray(x, dtype=np.float64).reshape(n, -1)
    if n < 2:
        out = np.repeat(flat[:1], len(tn), axis=0)
    else:
        # np.interp's formula, y_j + slope_j (t - t_j), for every column at once
        j = np.clip(np.searchsorted(t, tn, side="right") - 1, 0, n - 2)
        slope = (flat[j + 1] - flat[j]) / (t[j + 1] - t[j])[:, None]
        out = slope * (tn - t[j])[:, None] + flat[j]
        at_end = tn >= t[-1]
        out[at_end] = flat[-1]
        out[tn <= t[0]] = flat[0]
    return out.reshape((len(tn),) + x.shape[1:])


def to_20fps(x: np.ndarray, fps: float, offset_s: float = 0.0) -> np.ndarray:
    """``(frames, ...)`` samples at ``fps`` resampled to 20 fps (first sample ``offset_s`` after
    the first frame), the rate of the published skating ratio tables: low-passed at 10 Hz (the
    Nyquist frequency of 20 fps) first, so that capture noise above it does not fold into the
    resampled trajectory (without the anti-aliasing filter the 20 fps ratio of CMU 09_06 doubled
    between its 120 and 30 fps versions). Clips at 20 fps or slower are returned unchanged."""
    if fps <= 20.0 + 1e-9:
        return np.asarray(x, dtype=np.float64)
    return resample_points(lowpass(x, fps, 10.0), fps, 20.0, offset_s)


def _to_20fps_phases(x: np.ndarray, fps: float, offsets: np.ndarray) -> list[np.ndarray]:
    """:func:`to_20fps` at several offsets, low-passing once and interpolating once."""
    times = [_grid_times(x.shape[0], fps, 20.0, o) for o in offsets]
    both = _interpolate(lowpass(x, fps, 10.0), fps, np.concatenate(times))
    return np.split(both, np.cumsum([len(t) for t in times])[:-1])


#: Sampling phases of the 20 fps grid averaged in ``skating_ratio_20fps``.
RATIO_PHASES = 5


def skating_ratio_metric(
    track: FootTrack, config: SkateConfig | None = None, lowest_y: float | None = None
) -> dict[str, float]:
    """``skating_ratio`` (clip frame rate) and ``skating_ratio_20fps`` of the clip's toes.

    Args:
        track: foot points (toes, or ankles if the rig has no toes, are used).
        lowest_y: world y of the lowest joint of the clip (for ``ratio_floor="lowest"``);
            defaults to the lowest foot point.
    """
    cfg = config or SkateConfig()
    toes = track.positions[:, :, -1]  # (F, 2, 3)
    if cfg.ratio_floor == "ground":
        floor = track.ground
    elif cfg.ratio_floor == "lowest":
        floor = float(track.positions[..., 1].min()) if lowest_y is None else float(lowest_y)
    else:
        from evalkit.errors import ConfigError

        raise ConfigError(f"ratio_floor: expected 'lowest' or 'ground', got {cfg.ratio_floor!r}")
    args = (floor, cfg.ratio_height, cfg.ratio_speed, cfg.ratio_window)
    ratio, _, _ = skating_ratio(toes, track.fps, *args)
    if track.fps <= 20.0 + 1e-9:
        ratio20 = ratio
    else:
        # Mean over RATIO_PHASES start offsets of the 20 fps grid: the published number uses one
        # arbitrary phase; the mean has the same expectation and does not change by a frame pair
        # or two when a clip starts a frame earlier or later (a 4 s clip has only ~80 pairs).
        phases = np.arange(RATIO_PHASES) / (20.0 * RATIO_PHASES)
        ratio20 = float(np.mean(_phase_ratios(_to_20fps_phases(toes, track.fps, phases), args)))
    return {"skating_ratio": ratio, "skating_ratio_20fps": ratio20}


def _phase_ratios(clips: list[np.ndarray], args: tuple) -> np.ndarray:
    """:func:`skating_ratio` of each ``(T_k, 2, 3)`` 20 fps toe trajectory, those of one length in one pass."""
    out = np.zeros(len(clips))
    lengths = np.array([len(c) for c in clips])
    for n in np.unique(lengths[lengths >= 2]):
        pick = np.flatnonzero(lengths == n)
        skating, _, _ = _skating_pairs(np.stack([clips[k] for k in pick], axis=1), 20.0, *args)
        out[pick] = skating.mean(axis=0)
    return out
