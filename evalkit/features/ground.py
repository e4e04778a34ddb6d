"""The ground under a clip, foot heights above it, penetration and floating.

Joint positions are not the skin: a planted ankle joint sits ~8 cm above the floor, a toe joint
2–6 cm, depending on the rig. So the ground is estimated **per foot point**: each foot point's
*planted level* is the most common height of that point over frames where it is still (speed
below ``still_speed``; see :func:`planted_levels`); the height of a point above the ground is
its height minus its planted level. This makes every foot metric independent of where the file
puts the floor (some Reallusion exports have it near y = −1 m) and of the rig's foot geometry.

Because the planted levels come from the clip itself, a *global* vertical offset of the whole
clip is invisible unless ``GroundConfig.level`` fixes the absolute height of the lowest planted
foot point; an offset over part of the clip (less than half of its planted frames) is measured.

Penetration and floating follow PhysDiff (Yuan et al. 2023): penetration is the depth of the
lowest foot point below the ground, floating its height above the ground beyond a 5 mm
tolerance, both per frame, averaged over frames.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evalkit.features.body import REFERENCE_HEIGHT_M, BodyIndex, body_index
from evalkit.features.matrix_cache import bytes_lru_cache
from evalkit.features.signal import DEFAULT_CUTOFF_HZ, MATRIX_MAX_FRAMES, apply_matrix, derivative, lowpass
from evalkit.features.signal import runs as true_runs
from evalkit.motion import Motion
from evalkit.motion.vectors import norm, norm_xz


#: Most grid samples per clip frame (:func:`to_grid`): bounds the analysis grid by the input's size.
MAX_UPSAMPLE = 16

#: Low-pass cut-off of the foot trajectories that slides and penetration are measured on, Hz
#: (see :class:`GroundConfig`).
MEASURE_CUTOFF_HZ = 4.0


@dataclass(frozen=True)
class GroundConfig:
    """How the ground is found and measured.

    Attributes:
        level: absolute height (metres, world y) of the lowest foot joint when planted; ``None``
            estimates it per clip (see the module docstring).
        tilt: fit a tilted ground plane when the planted feet show a consistent slope (a ramp or
            a drifting capture volume); otherwise the ground is horizontal.
        max_slope: steepest accepted slope (rise over run; 0.05 ≈ 3°); steeper fits are ignored.
        still_speed: speed below which a low foot point counts as still when estimating its
            planted level, m/s for a 1.75 m body (scaled by body height).
        min_still: a foot point still for less than this many seconds in total gets its
            5th-percentile height as planted level (too few still samples for a mode).
        side_tolerance: a foot point's planted level may exceed the other foot's by at most
            this much (m, scaled); see :func:`planted_levels`.
        float_tolerance: floating (and penetration) within this distance of the ground is
            ignored, metres (PhysDiff's floating tolerance: 5 mm).
        cutoff_hz: low-pass cut-off of the foot trajectories from which the ground and the
            contacts are estimated, Hz (Winter 2009 recommends ~6 Hz for gait marker data).
        measure_cutoff_hz: low-pass cut-off of the foot trajectories from which slides (skate
            speed) and penetration/floating are measured, Hz. A planted foot moves slowly; 4 Hz
            keeps a slide or a sinking foot and removes the capture noise that a lower frame rate
            folds into the band below the cut-off. Measured on real CMU clips
            (``bench/bench_score_framerate.py``): with 6 Hz, ``skate_fraction`` of 16_15 moved
            17 % and ``penetration_frac`` of 07_05 33 % between the 120 and 30 fps versions; with
            4 Hz every skate and ground metric moves less than 10 % (or 0.01). (The ground and
            contacts stay at 6 Hz: at 4 Hz, feet lifting off stay "still" longer and blur the
            ground-slope fit.)
        analysis_fps: rate of the time grid on which contacts and slides are evaluated, Hz.
            The filtered foot trajectories are interpolated (cubic spline) onto this grid, so a
            contact's start and end are not quantised to the clip's frames and results agree
            between 30, 60 and 120 fps versions of a clip. Clips sampled faster use their own rate.
        local_support: estimate the support height **per contact** (steps, stairs, slopes the
            plane cannot follow; see :func:`local_support`); ``False``: one plane for the clip.
        step_min: a contact departs from the fitted plane only when its touchdown level differs
            from it by more than this, in body heights (0.03 H = 5.25 cm for a 1.75 m body);
            smaller departures stay on the plane, so a level floor gives exactly the plane.
        support_min_s: a foot must be still for at least this long (s) for its contact to set
            a support height of its own.
        support_alone_s: ... and be the only still foot for at least this long (s): it carries
            the body alone, so it stands on something (a foot held still in the air while the
            other foot stands never sets a support).
        support_travel: ... and have moved at least this far (body heights) horizontally
            since its previous contact: it stepped there (a planted foot jumping up or down in
            place is a ground error).
    """

    level: float | None = None
    tilt: bool = True
    max_slope: float = 0.3
    still_speed: float = 0.3
    min_still: float = 0.15
    side_tolerance: float = 0.05
    float_tolerance: float = 0.005
    cutoff_hz: float | None = DEFAULT_CUTOFF_HZ
    measure_cutoff_hz: float | None = MEASURE_CUTOFF_HZ
    analysis_fps: float = 120.0
    local_support: bool = True
    step_min: float = 0.03
    support_min_s: float = 0.1
    support_alone_s: float = 0.05
    support_travel: float = 0.1


@dataclass(frozen=True, eq=False)
class FootTrack:
    """Foot points of one clip, with the ground estimated under them.

    Two time bases: the clip's frames (``frames`` at ``fps``) and the analysis grid (``G``
    samples at ``grid_fps`` spanning the same time), on which the filtered trajectories live.

    Attributes:
        fps: frames per second of the clip.
        positions: ``(frames, 2, P, 3)`` world positions of the foot points (left, right), metres.
        heights: ``(frames, 2, P)`` height of each point above its planted level (unfiltered), m.
        grid_fps: samples per second of the analysis grid.
        smooth: ``(G, 2, P, 3)`` low-pass filtered positions on the grid, metres.
        velocity: ``(G, 2, P, 3)`` their velocity, m/s.
        levels: ``(2, P)`` planted level (world y, metres) of each foot point at ``origin``.
        frame_to_grid: ``(frames,)`` grid index of each clip frame.
        body: the resolved roles and body height.
        slope: ``(2,)`` ground slope along x and z (rise over run; zeros for a flat ground).
        origin: ``(2,)`` x, z (metres) where the ground's height is ``levels.min()``.
        measured: ``(G, 2, P, 3)`` positions filtered at ``GroundConfig.measure_cutoff_hz`` on
            the grid (``None``: same as ``smooth``), metres.
        measured_velocity: their velocity, m/s (``None``: same as ``velocity``).
        support: ``(G, 2)`` height of the support under each foot (left, right) above the
            plane (levels + slope), metres, on the grid: the touchdown level of a contact that
            departs from the plane (a step), interpolated in time between a foot's contacts;
            ``None`` (or all zeros): the plane is the support everywhere.
        contacts: the support contacts (:class:`SupportContact`, grid indices), in time order.
    """

    fps: float
    positions: np.ndarray
    heights: np.ndarray
    grid_fps: float
    smooth: np.ndarray
    velocity: np.ndarray
    levels: np.ndarray
    frame_to_grid: np.ndarray
    body: BodyIndex = field(repr=False)
    slope: np.ndarray = field(default_factory=lambda: np.zeros(2))
    origin: np.ndarray = field(default_factory=lambda: np.zeros(2))
    measured: np.ndarray | None = None
    measured_velocity: np.ndarray | None = None
    support: np.ndarray | None = None
    contacts: tuple = ()

    @property
    def frame_support(self) -> np.ndarray:
        """``(frames, 2)`` support height above the plane under each foot at the clip's frames, m."""
        if self.support is None:
            return np.zeros((self.n_frames, 2))
        return self.support[self.frame_to_grid]

    def ground_rise(self, xz: np.ndarray) -> np.ndarray:
        """Height of the ground at horizontal positions ``(..., 2)`` relative to ``origin``, m."""
        return (np.asarray(xz) - self.origin) @ self.slope

    @property
    def n_frames(self) -> int:
        return int(self.positions.shape[0])

    @property
    def ground(self) -> float:
        """World y of the ground plane: the planted level of the lowest foot point, metres."""
        return float(self.levels.min())

    @property
    def speed(self) -> np.ndarray:
        """``(G, 2, P)`` speed of each filtered foot point on the grid, m/s."""
        return norm(self.velocity)

    @property
    def slide_speed(self) -> np.ndarray:
        """``(G, 2, P)`` horizontal speed of each foot point on the grid from the trajectories
        filtered at the measuring cut-off, m/s."""
        v = self.velocity if self.measured_velocity is None else self.measured_velocity
        return norm_xz(v)

    @property
    def measured_heights(self) -> np.ndarray:
        """``(G, 2, P)`` heights above the ground on the grid from the trajectories filtered at the
        measuring cut-off, metres."""
        p = self.smooth if self.measured is None else self.measured
        h = p[..., 1] - self.levels
        if self.slope.any():  # a flat ground rises by 0 everywhere
            h = h - self.ground_rise(p[..., [0, 2]])
        return h if self.support is None else h - self.support[..., None]

    @property
    def smooth_heights(self) -> np.ndarray:
        """``(G, 2, P)`` filtered heights above the planted levels on the grid, metres."""
        h = self.smooth[..., 1] - self.levels
        if self.slope.any():  # a flat ground rises by 0 everywhere
            h = h - self.ground_rise(self.smooth[..., [0, 2]])
        return h if self.support is None else h - self.support[..., None]


def planted_levels(
    y: np.ndarray, speed: np.ndarray, scale: float = 1.0, still_speed: float = 0.3, side_tolerance: float = 0.05,
    min_samples: int = 3,
) -> np.ndarray:
    """Planted level of each foot point: the most common height over its still frames.

    The mode of the heights (5 mm histogram bins, lightly smoothed) over frames where the point
    moves slower than ``still_speed``, refined as the median of those heights within 1 cm of it,
    so that a part of the clip that is raised or sunk (a minority of the planted frames) does not
    drag the estimate. A point whose level is more than ``side_tolerance`` above the same point of
    the other foot (a foot held still in the air) takes the other foot's level.

    Args:
        y: ``(frames, 2, P)`` heights (world y) of the points, metres (filtered).
        speed: ``(frames, 2, P)`` their speeds, m/s.
        scale: body height / 1.75 m; multiplies ``still_speed`` and ``side_tolerance``.

        min_samples: a point still on fewer samples than this (e.g. the brief contacts of a
            short run) falls back to its 5th-percentile height.

    Returns:
        ``(2, P)`` levels in metres.
    """
    out = np.empty(y.shape[1:])
    for f in range(y.shape[1]):  # 2 feet x a few points; the work inside is vectorised
        for k in range(y.shape[2]):
            yk, sk = y[:, f, k], speed[:, f, k]
            sel = sk < still_speed * scale
            enough = sel.sum() >= max(3, min_samples)
            out[f, k] = _mode_level(yk[sel]) if enough else float(np.percentile(yk, 5))
    if out.shape[0] == 2:
        low = out.min(axis=0)
        out = np.where(out - low > side_tolerance * scale, low, out)
    return out


def _heights(p: np.ndarray, levels: np.ndarray, slope: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """``(..., 2, P)`` heights of positions ``p`` ``(..., 2, P, 3)`` above the plane through
    ``levels`` with ``slope`` about ``origin`` (a flat plane: the heights minus the levels), m."""
    h = p[..., 1] - levels
    return h - (p[..., [0, 2]] - origin) @ slope if slope.any() else h


def _mode_level(c: np.ndarray, bin_m: float = 0.005, window_m: float = 0.01) -> float:
    lo = c.min()
    nb = max(1, int(np.ceil((c.max() - lo) / bin_m)) + 1)
    # the counts of np.histogram(c, bins=nb, range=(lo, lo + nb * bin_m)) (same edges, bins
    # [edge_i, edge_i+1), the last one closed), without its checks and general-case set-up,
    # which cost more than the counting on a few hundred heights (scoring speed)
    edges = np.linspace(lo, lo + nb * bin_m, nb + 1)
    counts = np.bincount(np.minimum(np.searchsorted(edges, c, side="right") - 1, nb - 1), minlength=nb)
    # full convolution trimmed to the bins ("same" mode returns the kernel's length when there
    # are fewer bins than kernel taps, e.g. every height in one bin)
    smooth = np.convolve(counts, [1.0, 2.0, 1.0])[1:-1]
    i = int(np.argmax(smooth))
    centre = 0.5 * (edges[i] + edges[i + 1])
    near = np.abs(c - centre) <= window_m
    return _median(c[near]) if near.any() else float(centre)


def foot_track(
    motion: Motion, config: GroundConfig | None = None, body: BodyIndex | None = None,
    positions: np.ndarray | None = None,
) -> FootTrack:
    """Foot points, their filtered velocities and the ground estimate for ``motion``.

    Args:
        motion: the clip.
        config: ground settings (defaults: :class:`GroundConfig`).
        body: resolved roles (computed if omitted).
        positions: ``(frames, joints, 3)`` world positions to use instead of ``motion.positions``.
    """
    cfg = config or GroundConfig()
    body = body or body_index(motion)
    pos = motion.positions if positions is None else positions
    fp = np.asarray(pos[:, body.foot_points])  # (F, 2, P, 3)
    measured, measured_vel = None, None
    if cfg.measure_cutoff_hz != cfg.cutoff_hz:  # both filtered versions on the grid in one spline
        both = np.stack([lowpass(fp, motion.fps, cfg.cutoff_hz), lowpass(fp, motion.fps, cfg.measure_cutoff_hz)], -1)
        xg, vg, grid_fps, f2g = to_grid(both, motion.fps, cfg.analysis_fps)
        smooth, vel, measured, measured_vel = xg[..., 0], vg[..., 0], xg[..., 1], vg[..., 1]
    else:
        smooth, vel, grid_fps, f2g = to_grid(lowpass(fp, motion.fps, cfg.cutoff_hz), motion.fps, cfg.analysis_fps)
    speed = norm(vel)
    min_samples = int(round(cfg.min_still * grid_fps))
    levels = planted_levels(smooth[..., 1], speed, body.scale, cfg.still_speed, cfg.side_tolerance, min_samples)
    tol = cfg.step_min * body.height  # a riser apart, not a slope's few centimetres
    drop = planted_drop(smooth[..., 1], speed, cfg.still_speed * body.scale) if cfg.local_support else None
    levels = one_tread_levels(levels, drop, tol)  # a foot's points on one tread (unchanged if they agree)
    slope, origin = np.zeros(2), np.zeros(2)
    if cfg.tilt:
        slope, origin = fit_slope(smooth, speed, levels, body.scale, cfg.still_speed, cfg.max_slope)
        for _ in range(2):  # refine: re-level on the detrended heights, refit what is left
            if not slope.any():
                break
            y = smooth[..., 1] - (smooth[..., [0, 2]] - origin) @ slope
            levels = planted_levels(y, speed, body.scale, cfg.still_speed, cfg.side_tolerance, min_samples)
            levels = one_tread_levels(levels, drop, tol)
            extra, _ = fit_slope(smooth, speed, levels, body.scale, cfg.still_speed, cfg.max_slope,
                                 origin=origin, prior=slope)
            slope = slope + extra
    if cfg.level is not None:
        levels = levels - levels.min() + cfg.level
    heights = _heights(fp, levels, slope, origin)
    support, contacts = None, ()
    if cfg.local_support:
        rise = (smooth[..., [0, 2]] - origin) @ slope if slope.any() else 0.0
        one = one_tread_levels(levels, drop, tol)
        if one is not levels:  # a foot's points were levelled on different treads (stairs)
            levels = one
            if cfg.level is not None:
                levels = levels - levels.min() + cfg.level
            heights = _heights(fp, levels, slope, origin)
        above = smooth[..., 1] - levels - rise
        # still horizontally: a planted foot that the whole body drags up or down (a ground
        # error) stays one contact, so the level it ends on is not taken for a new step
        hspeed = norm_xz(vel)
        still = (hspeed < cfg.still_speed * body.scale).any(axis=-1)
        off, contacts = local_support(above, still, grid_fps, cfg.step_min * body.height, cfg.support_min_s,
                                      cfg.support_alone_s, smooth[..., [0, 2]].mean(axis=2),
                                      cfg.support_travel * body.height)
        if off.any():  # a level floor keeps support None: every height is exactly the plane's
            support = off
            heights = heights - off[f2g][..., None]
    return FootTrack(fps=motion.fps, positions=fp, heights=heights, grid_fps=grid_fps, smooth=smooth,
                     velocity=vel, levels=levels, frame_to_grid=f2g, body=body, slope=slope, origin=origin,
                     measured=measured, measured_velocity=measured_vel, support=support, contacts=tuple(contacts))


@dataclass(frozen=True)
class SupportContact:
    """One foot contact as the support model sees it.

    Attributes:
        side: 0 left, 1 right.
        start, end: first and last sample index of the contact (the caller's time base).
        level: touchdown level: median height of the flat foot above the plane over the first
            third of the contact (see :func:`local_support`; same unit as the heights given).
        departs: the support under this contact is not the plane (see :func:`local_support`).
        support: height of the support under this contact above the plane (0 on the plane).
    """

    side: int
    start: int
    end: int
    level: float
    departs: bool
    support: float = 0.0


# long: two thirds of it is the docstring that states the rules (the code is 25 lines)
def local_support(heights: np.ndarray, still: np.ndarray, rate: float, step_min: float,
                  min_s: float = 0.1, alone_s: float = 0.05, xz: np.ndarray | None = None,
                  travel_min: float = 0.0) -> tuple[np.ndarray, list[SupportContact]]:
    """Support height under each foot, contact by contact, above a fitted plane.

    The plane (one level per foot point, :func:`planted_levels`, tilted by :func:`fit_slope`) is
    the support unless the contacts clearly show another. A *contact* is a run of at least
    ``min_s`` seconds in which the foot is still (pauses up to 0.05 s bridged); its *touchdown
    level* is the median height of the foot above the plane over the first third of the
    contact's samples in which the foot is flat (its points within ``step_min / 2`` of each other
    above their planted levels; a heel strike or a toe-off rocks the foot and lifts its lowest
    point; with fewer than 4 flat samples, the foot's lowest point over the first third), its
    *end level* the same over the last third. Contacts are taken in time order; each is compared with the
    contact before it (of either foot: the one standing when this foot lands):

    * it lands within ``step_min`` of where the previous contact stands (its end level): it
      is on the same surface, and its support is that contact's support plus the difference
      between this touchdown and that end level. A foot that sank (or rose) while planted -- a
      ground error, not terrain -- therefore moves no ground: the following contacts are
      measured against the level the sinking foot touched down on;
    * otherwise, if its touchdown is within ``step_min`` of the plane, it is back on the plane;
    * otherwise, if it may set a support of its own, its support is its touchdown level (it
      stepped up or down onto another surface). It may if for at least ``alone_s`` seconds of
      it the other foot was not still (it carried the body alone: a foot held still in the air while the
      other stands never sets a support), and the foot stepped there (in the 0.3 s before
      touchdown it was at least ``travel_min`` away horizontally -- a planted foot that jumps
      up or down in place did not step; a contact within 0.3 s of the clip's start passes);
    * otherwise (a planted foot that jumped up or down in place, a raised foot that never
      carried the body) it keeps the previous contact's support: a ground error, measured.

    The first contact, with none before it, takes the last three rules.
    A support within ``step_min`` of the plane is the plane (and the next contact builds on
    the plane: differences from contact to contact, capture noise on a level floor, never
    accumulate; ground that rises by less than ``step_min`` per step is left to the plane's
    slope).

    Between two contacts of a foot its support changes linearly in time (a swing from one
    tread to the next); before the first and after the last it holds. With no contact off the
    plane the support is 0 everywhere: the plane fit is the exact special case, so a level floor
    gives exactly the plane's heights. Because the touchdown level is the support, a foot that
    lands on a step and sinks into it is measured as penetrating the step.

    Args:
        heights: ``(T, 2, P)`` heights of the foot points above the plane (any length unit).
        still: ``(T, 2)`` whether each foot (left, right) is still.
        rate: samples per second.
        step_min: smallest departure that sets a support (same unit as ``heights``).
        min_s, alone_s: seconds (see above).
        xz: ``(T, 2, 2)`` horizontal position (x, z) of each foot, same unit as ``heights``
            (``None``: the travel test is skipped).
        travel_min: see above (same unit as ``heights``).

    Returns:
        ``(support (T, 2), contacts)``: support height above the plane under each foot (same
        unit; 0 on the plane), and every contact (:class:`SupportContact`), in time order.
    """
    runs = _contact_runs(heights, still, rate, step_min, min_s)
    alone_n = max(1, int(round(alone_s * rate)))
    lookback = max(1, int(round(0.3 * rate)))
    found: list[SupportContact] = []
    prev_raw, prev_end = 0.0, None
    for a, side, b, level, end_level in runs:
        alone = int((~still[a:b + 1, 1 - side]).sum())
        stepped = True
        if xz is not None and a >= lookback:  # how far the foot came from in the 0.3 s before it touched down
            came = xz[max(0, a - lookback):a + 1, side] - xz[a, side]
            stepped = float(np.sqrt((came ** 2).sum(axis=-1)).max()) >= travel_min
        own = abs(level) > step_min and alone >= alone_n and stepped  # may set its own support
        if prev_end is not None and abs(level - prev_end) <= step_min:
            # lands where the standing foot stands: the same surface, carrying over how far that
            # foot had sunk or risen off its own support (a ground error moves no ground)
            raw = prev_raw + (level - prev_end)
        elif abs(level) <= step_min:
            raw = 0.0  # back on the plane
        elif own:
            raw = level  # stepped up or down onto another surface
        else:
            raw = prev_raw  # a jump without a step: a ground error, the ground stays
        support = raw if abs(raw) > step_min else 0.0  # within the threshold of the plane: the plane
        found.append(SupportContact(side, a, b, level, support != 0.0, support))
        prev_raw, prev_end = support, end_level  # rounded: capture noise never accumulates
    return _support_between_contacts(found, heights.shape[0]), found


def _contact_runs(heights: np.ndarray, still: np.ndarray, rate: float, step_min: float,
                  min_s: float) -> list[tuple[int, int, int, float, float]]:
    """``[(start, side, end, touchdown level, end level), ...]`` of the contacts of
    :func:`local_support` (sample indices, levels in the unit of ``heights``), in time order."""
    if heights.shape[-1] == 2:  # ankle and toe: the same numbers without numpy's reductions
        h0, h1 = heights[..., 0], heights[..., 1]
        low, spread, mean = np.minimum(h0, h1), np.abs(h1 - h0), (h0 + h1) / 2
    else:
        low, mean = heights.min(axis=-1), heights.mean(axis=-1)
        spread = heights.max(axis=-1) - low
    min_n = max(2, int(round(min_s * rate)))
    # the foot's level where it is flat (its points equally high above their planted levels: a
    # heel strike or a toe-off rocks the foot, and its lowest point then reads a few cm high)
    flat = spread < 0.5 * step_min
    gap_n = max(1, int(round(0.05 * rate)))
    runs = []
    for side in (0, 1):
        merged: list[list[int]] = []
        for a, stop in zip(*true_runs(still[:, side])):  # a blip of speed does not split a contact
            a, b = int(a), int(stop) - 1
            if merged and a - merged[-1][1] - 1 <= gap_n:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        for a, b in merged:
            if b - a + 1 < min_n:
                continue
            idx = a + np.flatnonzero(flat[a:b + 1, side])
            if idx.size >= 4:
                third = max(2, idx.size // 3)
                level, end = _median(mean[idx[:third], side]), _median(mean[idx[-third:], side])
            else:
                third = max(2, (b - a + 1) // 3)
                level, end = _median(low[a:a + third, side]), _median(low[b + 1 - third:b + 1, side])
            runs.append((a, side, b, float(level), float(end)))
    return sorted(runs)


def _support_between_contacts(found: list[SupportContact], t_n: int) -> np.ndarray:
    """``(T, 2)`` support under each foot: its contact's inside a contact, linear in time
    between two contacts of the foot, held before the first and after the last."""
    out = np.zeros((t_n, 2))
    for side in (0, 1):
        mine = [c for c in found if c.side == side]
        if not any(c.support != 0.0 for c in mine):
            continue
        knots_t, knots_v = [], []
        for c in mine:
            out[c.start:c.end + 1, side] = c.support
            knots_t += [c.start, c.end]
            knots_v += [c.support, c.support]
        gaps = np.ones(t_n, dtype=bool)
        for c in mine:
            gaps[c.start:c.end + 1] = False
        idx = np.flatnonzero(gaps)
        out[idx, side] = np.interp(idx, knots_t, knots_v)
    return out


def planted_drop(y: np.ndarray, speed: np.ndarray, still_speed: float) -> np.ndarray | None:
    """``(2,)`` height of each foot's toe above its ankle while both are still (the median over
    those samples; a property of the rig), or ``None`` without a toe (``P`` = 1). ``y``:
    ``(T, 2, P)`` heights, ``speed``: ``(T, 2, P)`` speeds; NaN for a foot never still."""
    if y.shape[2] != 2:
        return None
    out = np.full(2, np.nan)
    for f in range(2):
        both = (speed[:, f] < still_speed).all(axis=-1)
        if both.sum() >= 3:
            out[f] = _median(y[both, f, 1] - y[both, f, 0])
    return out


def one_tread_levels(levels: np.ndarray, drop: np.ndarray | None, tol: float) -> np.ndarray:
    """Planted levels of a foot's points taken on the same tread.

    Each point's level is the most common height of that point (:func:`planted_levels`); on
    stairs (or a steep slope) the ankle's most common height need not be on the toe's tread, and
    the foot's points then disagree by a riser. The toe's height above the ankle when both are
    still (``drop``, :func:`planted_drop`) is a property of the rig; where the levels of a
    foot's points differ from it by more than ``tol``, the pair is re-levelled from the point
    that gives the lower ankle level. Levels that agree are returned as they are (the same
    object), so a level floor keeps its levels exactly.

    Args:
        levels: ``(2, P)`` planted levels (m or H).
        drop: ``(2,)`` toe above ankle while planted (``None``: no toe; NaN: unknown), same unit.
        tol: largest disagreement left alone (same unit).
    """
    if drop is None or levels.shape[1] != 2:
        return levels
    out = None
    for f in range(2):
        d = drop[f]
        if not np.isfinite(d) or abs(levels[f, 1] - levels[f, 0] - d) <= tol:
            continue
        out = levels.copy() if out is None else out
        ankle = min(levels[f, 0], levels[f, 1] - d)
        out[f] = (ankle, ankle + d)
    return levels if out is None else out


def terrain_heights(feet: np.ndarray, speed: np.ndarray, fps: float, plane_heights: np.ndarray,
                    step_min: float = 0.03, still_speed: float = 0.3 / 1.75, travel: float = 0.1,
                    better: float = 0.75) -> np.ndarray | None:
    """Foot heights above a terrain of level treads, when it fits the contacts far better than a
    plane: the discriminator's view (:func:`evalkit.models.window_features.ground_heights`) of
    :func:`local_support`, for positions in body heights ``H``.

    A least-squares plane fitted to stationary feet takes stairs for a slope and leaves each
    tread a few centimetres above or below it. Here each foot point's planted level
    (:func:`planted_levels`) on a *level* floor is the reference, :func:`local_support` finds
    the treads, and the terrain is used only if some contact departs from the level floor and
    the contacts sit closer to their supports than to the plane: the RMS over contacts of the
    foot's median height above its support (less the median over contacts) is less than
    ``better`` times the same above the plane, and the still feet do not scatter more about
    their supports than about the plane (median absolute deviation of their lowest point; on a
    slope, level treads would tilt every planted foot).

    Args:
        feet: ``(frames, 4, 3)`` left ankle, left toe, right ankle, right toe, H.
        speed: ``(frames, 4)`` their horizontal speeds, H/s.
        fps: frames per second.
        plane_heights: ``(frames, 4)`` their heights above the fitted plane, each less its
            planted level there, H.
        step_min, travel: as ``GroundConfig.step_min`` / ``support_travel``, H; still_speed: a
            foot is still when its slower point is slower than this, H/s.

    Returns:
        ``(frames, 4)`` heights above the support of each contact (0 when planted), H, or
        ``None`` when the plane stays (always on a level floor: no contact departs from it).
    """
    n = feet.shape[0]
    y = feet[..., 1].reshape(n, 2, 2)
    sp = speed.reshape(n, 2, 2)
    levels = planted_levels(y, sp, 1.0 / REFERENCE_HEIGHT_M, still_speed * REFERENCE_HEIGHT_M, 0.05)
    levels = one_tread_levels(levels, planted_drop(y, sp, still_speed), step_min)
    above = y - levels
    still = sp.min(axis=-1) < still_speed
    xz = feet[..., [0, 2]].reshape(n, 2, 2, 2).mean(axis=2)
    support, contacts = local_support(above, still, fps, step_min, xz=xz, travel_min=travel)
    if not support.any():
        return None
    terrain = above - support[..., None]
    plane = plane_heights.reshape(n, 2, 2)

    def spread(h: np.ndarray) -> float:  # how far the contacts sit off the floor (RMS over contacts)
        low = h.min(axis=-1)
        r = np.array([np.median(low[c.start:c.end + 1, c.side]) for c in contacts])
        return float(np.sqrt(np.mean((r - np.median(r)) ** 2)))

    def jitter(h: np.ndarray) -> float:  # how the still feet move about their floor (MAD)
        low = h.min(axis=-1)[still]
        return float(np.median(np.abs(low - np.median(low)))) if low.size else np.inf

    if spread(terrain) >= better * spread(plane) or jitter(terrain) > jitter(plane):
        return None
    return terrain.reshape(n, 4)


def _median(x: np.ndarray) -> float:
    """Median of a short 1-D array (numpy's ``median`` costs more in checks than in sorting here;
    scoring speed counts every call)."""
    v = np.sort(x)
    n = v.size
    return float(v[n // 2]) if n % 2 else float((v[n // 2 - 1] + v[n // 2]) / 2)


def _soft_l1_fit(jac: np.ndarray, h: np.ndarray, f_scale: float, max_iter: int = 100) -> np.ndarray:
    """Parameters ``p`` minimising ``sum(rho(((jac @ p - h) / f_scale)^2))`` with the soft-L1 loss
    ``rho(z) = 2 (sqrt(1 + z) - 1)``: the minimiser ``scipy.optimize.least_squares(...,
    loss="soft_l1", f_scale=f_scale)`` finds. Written here because the model is linear with two
    or three parameters, where ``least_squares`` costs a few hundred microseconds of set-up per
    clip, most of the time of a short clip's ground fit.

    The loss of a linear model is strictly convex in ``p`` (a pseudo-Huber loss), so its one
    minimum is found by Newton's method from the least-squares start: gradient
    ``J^T (w r)`` and Hessian ``J^T diag(w^3) J`` with ``w = 1 / sqrt(1 + (r / f_scale)^2)``,
    each step halved until the loss does not rise. It converges quadratically, in 3 to 12 steps
    on real capture (reweighted least squares, the usual alternative, took 9 to 39) and to the
    minimum within 1e-15 relative, closer than ``least_squares`` at its default tolerances.

    Args:
        jac: ``(n, k)`` design matrix; h: ``(n,)`` observations; f_scale: the loss's scale
            (same unit as ``h``).
    """
    p = np.linalg.lstsq(jac, h, rcond=None)[0]
    r = jac @ p - h
    loss = float(np.sum(np.sqrt(1.0 + (r / f_scale) ** 2)))
    for _ in range(max_iter):
        w = 1.0 / np.sqrt(1.0 + (r / f_scale) ** 2)
        step = np.linalg.solve((jac * (w ** 3)[:, None]).T @ jac, jac.T @ (w * r))
        t = 1.0
        while True:  # a full Newton step almost always; halve it where the loss would rise
            nxt = p - t * step
            r_nxt = jac @ nxt - h
            loss_nxt = float(np.sum(np.sqrt(1.0 + (r_nxt / f_scale) ** 2)))
            if loss_nxt <= loss or t < 1e-6:
                break
            t *= 0.5
        done = np.max(np.abs(nxt - p)) <= 1e-14 * max(1.0, float(np.max(np.abs(nxt))))
        p, r, loss = nxt, r_nxt, loss_nxt
        if done:
            break
    return p


def fit_slope(smooth: np.ndarray, speed: np.ndarray, levels: np.ndarray, scale: float = 1.0,
              still_speed: float = 0.3, max_slope: float = 0.05, origin: np.ndarray | None = None,
              prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Slope of the ground under the still foot points, by a robust plane fit.

    Heights of still, near-ground foot-point samples above their (flat) planted levels are fitted
    by ``a (x − x0) + b (z − z0) + c`` with a soft-L1 loss (1 cm scale; :func:`_soft_l1_fit`),
    so that a minority of raised or sunk frames does not tilt the plane. Only
    directions along which the feet were still over at least 1 m of floor are fitted (the slope
    across a straight walk is unknown and left at 0). The slope is kept only when it is steeper
    than 0.5 % and not steeper than ``max_slope``, and the fit halves the spread of the heights.

    Args:
        smooth: ``(T, 2, P, 3)`` filtered foot-point positions, metres.
        speed: ``(T, 2, P)`` their speeds, m/s.
        levels: ``(2, P)`` planted levels, metres (at ``origin`` when ``prior`` is given).
        origin, prior: refine a previous fit: heights are first detrended by ``prior`` about
            ``origin``, and the returned slope is the correction to add to ``prior`` (its
            acceptance tests then apply to the total).

    Returns:
        ``(slope (2,), origin (2,))`` — zeros when no slope is kept.
    """
    zero = (np.zeros(2), np.zeros(2) if origin is None else origin)
    prior = np.zeros(2) if prior is None else np.asarray(prior, float)
    r = smooth[..., 1] - levels
    if origin is not None:
        r = r - (smooth[..., [0, 2]] - origin) @ prior
    sel = (speed < still_speed * scale) & (np.abs(r) < 0.1 * scale)
    if sel.sum() < 20:
        return zero
    xz = np.stack([smooth[..., 0][sel], smooth[..., 2][sel]], axis=-1)  # without gathering every sample
    h = r[sel]
    origin = np.array([_median(xz[:, 0]), _median(xz[:, 1])]) if origin is None else origin
    d = xz - origin
    # only directions along which the feet planted over >= 1 m are identifiable (a straight walk
    # says nothing about the slope across it): fit in the principal axes of the planted positions
    _, _, axes = np.linalg.svd(d - d.mean(axis=0), full_matrices=False)
    proj = d @ axes.T
    keep = np.ptp(proj, axis=0) >= 1.0
    if not keep.any():
        return zero
    a = proj[:, keep]
    k = a.shape[1]
    jac = np.column_stack([a, np.ones(len(h))])
    slope = _soft_l1_fit(jac, h, 0.01)[:k] @ axes[keep]
    mad_before = _median(np.abs(h - _median(h)))
    resid = h - d @ slope
    mad_after = _median(np.abs(resid - _median(resid)))
    if prior.any():  # a refinement: accept any small correction that keeps the total plausible
        total = float(np.hypot(*(prior + slope)))
        return (slope, origin) if total <= max_slope and mad_after <= mad_before else zero
    steep = float(np.hypot(*slope))
    if steep < 0.005 or steep > max_slope or mad_after > 0.5 * mad_before:
        return zero
    return slope, origin


def to_grid(x: np.ndarray, fps: float, grid_fps: float) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """Interpolate a smooth trajectory onto a finer time grid, with its derivative.

    Args:
        x: ``(frames, ...)`` (already low-passed) samples at ``fps``.
        grid_fps: wanted grid rate, Hz; rates below ``fps`` use ``fps`` (the clip itself), rates
            above ``MAX_UPSAMPLE × fps`` use that (clips below 7.5 fps).

    Returns:
        ``(xg, vg, rate, frame_to_grid)``: ``(G, ...)`` values and ``(G, ...)`` time derivatives
        (units/s) on the grid, the grid rate, and ``(frames,)`` grid index of each frame.
    """
    from scipy.interpolate import CubicSpline

    n = x.shape[0]
    if n < 4:
        return x, derivative(x, fps), float(fps), np.arange(n)
    # the grid is sized by the clip's frames (at most MAX_UPSAMPLE per frame), never by its
    # duration alone: a file claiming 1 fps must not make a 120-samples-per-frame grid
    grid_fps = max(min(grid_fps, MAX_UPSAMPLE * fps), fps)
    t = np.arange(n) / fps
    g = int(np.floor((n - 1) / fps * grid_fps + 1e-9)) + 1
    tg = np.arange(g) / grid_fps
    f2g = np.minimum(np.rint(t * grid_fps).astype(np.int64), g - 1)
    if n <= MATRIX_MAX_FRAMES and _spline_matrix_is_faster(n, g, int(np.prod(x.shape[1:], dtype=np.int64))):
        # short clips: the spline is linear in x, as two cached matrices
        values, slopes, rows = _spline_matrices(n, float(fps), float(grid_fps))
        flat = np.asarray(x, dtype=np.float64).reshape(n, -1)
        shape = (g,) + x.shape[1:]
        if rows is None:
            xg = apply_matrix(values, flat)
        else:  # the grid is the clip's frames: rows of the identity give the samples themselves
            xg = flat.copy()
            xg[rows] = apply_matrix(values[rows], flat)
        return xg.reshape(shape), apply_matrix(slopes, flat).reshape(shape), float(grid_fps), f2g
    spline = CubicSpline(t, x, axis=0)
    return spline(tg), spline(tg, 1), float(grid_fps), f2g


def _spline_matrix_is_faster(frames: int, grid: int, columns: int) -> bool:
    """Whether the spline of ``columns`` signals of ``frames`` samples onto ``grid`` points is
    clearly faster as products with the cached matrices (about ``2 × grid × frames × columns``
    multiply-adds at 10 per ns; on a grid at the clip's own rate only the slopes, the values
    being the samples) than by ``scipy.interpolate.CubicSpline`` (about 250 µs, plus 40 ns per
    sample and 12 ns per grid value). Measured on this project's machine for 40-400 frames,
    12-48 columns and 20-120 fps: matrices win by 2-15x on small grids and lose by up to 4x on
    large ones (a 400-frame clip at 20 fps upsampled to 2,395 grid points)."""
    work = (1 if grid == frames else 2) * grid * frames * columns / 10_000.0
    return work <= 0.5 * (250.0 + 0.04 * frames * columns + 0.012 * grid * columns)


#: Bytes of spline matrices kept per process (a test set of clips of 2-10 s at 20 fps holds
#: about 100 distinct lengths that :func:`_spline_matrix_is_faster` accepts: about 70 MB).
SPLINE_MATRIX_CACHE_BYTES = 96 * 2**20


@bytes_lru_cache(SPLINE_MATRIX_CACHE_BYTES)
def _spline_matrices(n: int, fps: float, grid_fps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(G, n)`` matrices giving the not-a-knot cubic spline through ``n`` samples at ``fps``
    and its derivative on the grid of :func:`to_grid` (the spline of the identity), and the rows
    of the values matrix that are not exactly rows of the identity when it is square and
    nearly all of them are (a grid at the clip's own rate: the spline passes through the samples;
    only rounding at the last knot differs), else ``None``."""
    from scipy.interpolate import CubicSpline

    t = np.arange(n) / fps
    tg = np.arange(int(np.floor((n - 1) / fps * grid_fps + 1e-9)) + 1) / grid_fps
    spline = CubicSpline(t, np.eye(n), axis=0)
    values, slopes = spline(tg), spline(tg, 1)
    values.setflags(write=False)
    slopes.setflags(write=False)
    rows = None
    if values.shape == (n, n):
        off = np.flatnonzero((values != np.eye(n)).any(axis=1))
        if off.size <= n // 8:  # copying the identity rows beats multiplying by them
            rows = off
            rows.setflags(write=False)
    return values, slopes, rows


def lowest_foot_height(track: FootTrack, on_grid: bool = False) -> np.ndarray:
    """Height of the lowest foot point above the ground, metres (negative below).

    Taken from the low-pass filtered trajectories (``GroundConfig.measure_cutoff_hz``), so that
    millimetre capture noise, which a lower frame rate folds into the signal, does not decide
    whether a frame counts as penetrating or floating.

    Returns:
        ``(frames,)`` at the clip's frames, or ``(G,)`` on the analysis grid when ``on_grid``.
    """
    h = track.measured_heights
    low = h.reshape(h.shape[0], -1).min(axis=1)
    return low if on_grid else low[track.frame_to_grid]


def penetration(track: FootTrack, tolerance: float = 0.005, on_grid: bool = False) -> np.ndarray:
    """``(frames,)`` penetration depth: how far the lowest foot point is below the ground beyond
    ``tolerance``, metres (≥ 0). The tolerance absorbs the millimetre jitter of a planted foot
    around its (median) planted level. ``on_grid``: ``(G,)`` on the analysis grid instead."""
    return np.maximum(0.0, -lowest_foot_height(track, on_grid) - tolerance)


def floating(track: FootTrack, tolerance: float = 0.005, on_grid: bool = False) -> np.ndarray:
    """``(frames,)`` floating height: lowest foot point above ground beyond ``tolerance`` m (≥ 0).

    Airborne frames of jumps and runs float too (as in PhysDiff); see
    :func:`evalkit.features.physics.ballistic_error` for whether flight is physically plausible.
    ``on_grid``: ``(G,)`` on the analysis grid instead.
    """
    return np.maximum(0.0, lowest_foot_height(track, on_grid) - tolerance)


def ground_metrics(track: FootTrack, config: GroundConfig | None = None) -> dict[str, float]:
    """Clip-level ground metrics.

    Returns:
        ``penetration_mean`` / ``penetration_max`` (m), ``penetration_frac`` (share of time
        below ground by more than the tolerance), ``floating_mean`` / ``floating_max`` (m),
        ``floating_frac`` (share of time floating), all from the filtered heights on the
        analysis grid, ``ground_y`` (estimated ground, world y, m,
        at the origin of a sloped ground), ``ground_slope`` (rise over run, 0 when flat).
    """
    cfg = config or GroundConfig()
    # time averages on the analysis grid: the same time base at every frame rate
    pen = penetration(track, cfg.float_tolerance, on_grid=True)
    flo = floating(track, cfg.float_tolerance, on_grid=True)
    return {
        "ground_y": track.ground,
        "ground_slope": float(np.hypot(*track.slope)),
        "penetration_mean": float(pen.mean()),
        "penetration_max": float(pen.max()),
        "penetration_frac": float((pen > 0).mean()),
        "floating_mean": float(flo.mean()),
        "floating_max": float(flo.max()),
        "floating_frac": float((flo > 0).mean()),
    }
