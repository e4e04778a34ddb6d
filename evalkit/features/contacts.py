"""Foot contacts: when is each foot planted?

A foot point (ankle or toe joint) is in contact when it is near the ground *and* nearly still
(Ikemoto, Arikan & Forsyth 2006, "Knowing when to put your foot down"; Kovar, Schreiner &
Gleicher 2002, "Footskate cleanup"): its height above its planted level (see
:mod:`evalkit.features.ground`) is below ``height`` and its filtered speed below ``speed``. A foot
is planted when any of its points is in contact (a rolling foot pivots on heel, then toe).
Thresholds are physical (metres, m/s) for a 1.75 m body and scale with body height; short
flickers are cleaned in seconds, so results do not depend on the frame rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.features.ground import FootTrack, GroundConfig, foot_track
from evalkit.features.signal import runs
from evalkit.motion import Motion


@dataclass(frozen=True)
class ContactConfig:
    """Contact thresholds (for a 1.75 m body; scaled by body height).

    Attributes:
        height: a point is near the ground below this height above its planted level, metres.
        speed: ...and still below this speed, m/s.
        min_duration: contacts shorter than this are dropped, seconds.
        max_gap: gaps shorter than this between contacts are filled, seconds.
    """

    height: float = 0.05
    speed: float = 0.4
    min_duration: float = 0.05
    max_gap: float = 0.05


def clean_runs(mask: np.ndarray, fps: float, min_duration: float, max_gap: float) -> np.ndarray:
    """Fill ``False`` gaps shorter than ``max_gap`` s, then drop ``True`` runs shorter than
    ``min_duration`` s, in a 1-D bool array sampled at ``fps``."""
    out = np.asarray(mask, dtype=bool).copy()
    gap = int(round(max_gap * fps))
    if gap > 0:
        starts, stops = runs(~out)
        for a, b in zip(starts, stops):
            if a > 0 and b < out.size and b - a <= gap:
                out[a:b] = True
    short = int(round(min_duration * fps))
    if short > 0:
        starts, stops = runs(out)
        for a, b in zip(starts, stops):
            if b - a < short:
                out[a:b] = False
    return out


def point_contacts(track: FootTrack, config: ContactConfig | None = None) -> np.ndarray:
    """``(G, 2, P)`` bool on the analysis grid: each foot point near the ground and still
    (raw, not cleaned)."""
    cfg = config or ContactConfig()
    s = track.body.scale
    return (track.smooth_heights < cfg.height * s) & (track.speed < cfg.speed * s)


def grid_contacts(track: FootTrack, config: ContactConfig | None = None) -> np.ndarray:
    """``(G, 2)`` bool planted feet on the analysis grid of ``track`` (cleaned)."""
    cfg = config or ContactConfig()
    raw = point_contacts(track, cfg).any(axis=2)
    return np.stack(
        [clean_runs(raw[:, f], track.grid_fps, cfg.min_duration, cfg.max_gap) for f in range(2)], axis=1
    )


def foot_contacts(
    motion: Motion | FootTrack, config: ContactConfig | None = None, ground: GroundConfig | None = None
) -> np.ndarray:
    """``(frames, 2)`` bool: is the left (column 0) / right (column 1) foot planted?

    Args:
        motion: a clip, or a :class:`FootTrack` already computed for it.
        config: contact thresholds.
        ground: ground estimation settings (only used when ``motion`` is a :class:`Motion`).
    """
    track = motion if isinstance(motion, FootTrack) else foot_track(motion, ground)
    return grid_contacts(track, config)[track.frame_to_grid]


def contact_intervals(contacts: np.ndarray) -> list[tuple[int, int, int]]:
    """Contact intervals as ``(foot, start, stop)`` frame indices (stop exclusive), by start.

    Args:
        contacts: ``(frames, feet)`` bool, e.g. from :func:`foot_contacts`.
    """
    out = []
    for f in range(contacts.shape[1]):
        starts, stops = runs(contacts[:, f])
        out.extend((f, int(a), int(b)) for a, b in zip(starts, stops))
    return sorted(out, key=lambda t: (t[1], t[0]))
