"""Timeline figure of a clip's per-frame diagnostics (used by ``evalkit plot``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from evalkit.errors import InputError
from evalkit.features.score import ScoreConfig, analyse, score_analysis, traces_table
from evalkit.motion import Motion

FORMATS = (".png", ".pdf", ".svg")


def plot_timeline(motion: Motion, out: str | os.PathLike, config: ScoreConfig | None = None, dpi: int = 120,
                  verdict=None) -> Path:
    """Draw contacts, skate speed, ZMP distance outside support and foot height over time.

    Args:
        motion: the clip.
        out: image path; the format follows the extension (.png, .pdf, .svg).
        config: metric settings (default :class:`ScoreConfig`).
        dpi: resolution of PNG output.
        verdict: a naturalness model's verdict on the clip
            (:class:`evalkit.models.discriminator.MotionScore`: ``naturalness``,
            ``worst_start_s``, ``worst_end_s``, ``worst_naturalness`` and a ``windows`` table of
            ``start_s``, ``end_s``, ``naturalness``, seconds of the clip as given). Adds a panel
            of each window's probability of looking natural and shades the least natural window
            on every panel.

    Returns:
        the written path (written to a temporary file first, then renamed).
    """
    out = Path(out)
    ext = out.suffix.lower()
    if ext not in FORMATS:
        raise InputError(f"{out}: unsupported image format {ext!r}; use {', '.join(FORMATS)}")
    # a Figure of its own (no pyplot, no backend switch): a Jupyter user's backend is left alone
    from matplotlib.figure import Figure

    cfg = config or ScoreConfig()
    an = analyse(motion, cfg)
    tr = traces_table(an)
    row = score_analysis(an)
    t = tr["time_s"].to_numpy()
    s = an.body.scale
    panels = 4 if verdict is None else 5
    fig = Figure(figsize=(11, 7.5 if verdict is None else 9), layout="constrained")
    axes = fig.subplots(panels, 1, sharex=True)
    nan = float("nan")
    title = (f"{motion.name or 'clip'} — {an.motion.n_frames} frames @ {an.motion.fps:g} fps; "
             f"skate {row.get('skate_distance_per_s', nan) * 100:.1f} cm/s, "
             f"skating ratio {row.get('skating_ratio', nan):.3f}, "
             f"penetration {row.get('penetration_mean', nan) * 1000:.1f} mm, "
             f"ZMP outside {row.get('zmp_outside_frac', nan) * 100:.0f}%")
    if an.notes:
        title += "\n" + "; ".join(an.notes)
    if verdict is not None:
        title += _verdict_title(verdict)
    fig.suptitle(title, fontsize=9)

    _contacts_panel(axes[0], t, tr)
    _skate_panel(axes[1], t, tr, cfg.skate.skate_speed * s)
    _zmp_panel(axes[2], t, tr, cfg.physics.zmp_tolerance * s)
    _height_panel(axes[3], t, tr, cfg.ground.float_tolerance * 100)
    if verdict is not None:
        _verdict_panel(axes[4], verdict)
        for a in axes:
            for start, end, shade in _unnatural_spans(verdict):  # overlapping windows add up
                a.axvspan(start, end, color="tab:red", alpha=0.03 + 0.1 * shade, linewidth=0)
            a.axvspan(verdict.worst_start_s, verdict.worst_end_s, fill=False, edgecolor="tab:red",
                      lw=0.8, ls="--")
            for c in getattr(verdict, "cuts_s", ()):
                a.axvline(c, color="k", lw=0.8, ls=":")
            if getattr(verdict, "copies", 1.0) > 1:
                for j in np.arange(1, int(np.ceil(verdict.copies))) * verdict.period_s:
                    a.axvline(j, color="k", lw=0.6, alpha=0.5)
    axes[-1].set_xlabel("time (s)")
    axes[-1].set_xlim(t[0], t[-1] if len(t) > 1 else t[0] + 1)

    from evalkit.atomic import atomic_path

    with atomic_path(out, suffix=ext) as tmp:
        fig.savefig(tmp, dpi=dpi, format=ext[1:])
    return out


def _contacts_panel(ax, t, tr) -> None:
    for k, (name, color) in enumerate((("left", "tab:blue"), ("right", "tab:orange"))):
        c = tr[f"contact_{name}"].to_numpy() == True  # noqa: E712 (NaN when not computed)
        ax.fill_between(t, k + 0.1, k + 0.9, where=c, step="mid", color=color, alpha=0.8, linewidth=0)
    flight = tr["flight"].to_numpy() == True  # noqa: E712
    ax.fill_between(t, 0, 2, where=flight, step="mid", color="0.85", linewidth=0, label="flight")
    ax.set_yticks([0.5, 1.5], ["left", "right"])
    ax.set_ylim(0, 2)
    ax.set_ylabel("planted")
    if flight.any():
        ax.legend(loc="upper right", fontsize=7)


def _skate_panel(ax, t, tr, threshold: float) -> None:
    ax.plot(t, tr["skate_left"], color="tab:blue", lw=1, label="left")
    ax.plot(t, tr["skate_right"], color="tab:orange", lw=1, label="right")
    ax.axhline(threshold, color="tab:red", ls="--", lw=0.8, label="skate threshold")
    ax.set_ylabel("skate speed\n(m/s)")
    ax.legend(loc="upper right", fontsize=7, ncol=3)


def _zmp_panel(ax, t, tr, tolerance: float) -> None:
    ax.plot(t, tr["zmp_outside"], color="tab:purple", lw=1, label="multi-segment")
    ax.plot(t, tr["zmp_cart_outside"], color="tab:green", lw=0.8, alpha=0.7, label="cart-table")
    ax.axhline(tolerance, color="tab:red", ls="--", lw=0.8, label="tolerance")
    ax.set_ylabel("ZMP outside\nsupport (m)")
    ax.legend(loc="upper right", fontsize=7, ncol=3)


def _height_panel(ax, t, tr, tol_cm: float) -> None:
    h = tr["foot_height"].to_numpy() * 100
    ax.plot(t, h, color="0.3", lw=1, label="lowest foot point")
    ax.fill_between(t, 0, h, where=h < 0, color="tab:red", alpha=0.6, label="penetration")
    ax.fill_between(t, tol_cm, h, where=h > tol_cm, color="tab:cyan", alpha=0.4, label="floating")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_ylabel("height above\nground (cm)")
    ax.legend(loc="upper right", fontsize=7, ncol=3)


def _verdict_panel(ax, verdict) -> None:
    w = verdict.windows
    centre = ((w["start_s"] + w["end_s"]) / 2).to_numpy()
    ax.plot(centre, w["naturalness"].to_numpy(), color="tab:green", lw=1.2, marker=".", ms=3,
            label="window (calibrated probability)")
    if "local_naturalness" in w:
        ax.plot(centre, w["local_naturalness"].to_numpy(), color="tab:blue", lw=1.0,
                label="local (stretches around it)")
    ax.axhline(verdict.naturalness, color="tab:green", ls=":", lw=1, label=f"clip {verdict.naturalness:.2f}")
    ax.axhline(0.5, color="0.5", ls="--", lw=0.6)
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("looks natural\n(probability)")
    ax.legend(loc="lower right", fontsize=7, ncol=3)


def _unnatural_spans(verdict) -> list[tuple[float, float, float]]:
    """``(start_s, end_s, shade)`` of every window judged unnatural (local naturalness below 0.5,
    or the window's own where no local value exists), darker the lower it is, so a minute-long
    clip shows all its bad stretches at a glance, not only the worst."""
    w = verdict.windows
    col = "local_naturalness" if "local_naturalness" in w else "naturalness"
    return [(float(a), float(b), float(0.5 - v)) for a, b, v in zip(w["start_s"], w["end_s"], w[col])
            if v < 0.5]


def _verdict_title(verdict) -> str:
    """The title lines of a naturalness verdict (:func:`plot_timeline`'s ``verdict``)."""
    nan = float("nan")
    title = (f"\nnaturalness {verdict.naturalness:.2f}; least natural window "
              f"{verdict.worst_start_s:.2f}–{verdict.worst_end_s:.2f} s ({verdict.worst_naturalness:.2f}); "
              f"worst stretch {getattr(verdict, 'worst_stretch_naturalness', nan):.2f}")
    reliability = getattr(verdict, "reliability", nan)
    if reliability == reliability and reliability < 1.0:  # not NaN
        title += f"; reliability {reliability:.2f} (windows within what the model knows)"
    cuts = getattr(verdict, "cuts_s", ())
    if cuts:
        title += f"; {len(cuts)} cut(s) to a new take (dotted lines), each take judged on its own"
    copies = getattr(verdict, "copies", 1.0)
    if copies > 1:
        title += (f"; {copies:.3g} copies of a {verdict.period_s:.2f}-s stretch: judged on the first "
                  "two and the join between them (solid lines mark the joins)")
    if getattr(verdict, "reasons", ""):
        title += f"\nreasons: {verdict.reasons}"
    return title
