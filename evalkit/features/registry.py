"""The one registry of ``evalkit score`` columns: each column's name in words, unit, family,
direction and the precision it is shown with.

Reports (tables and figure axes) and the column index of ``docs/metrics.md`` are both written
from :data:`METRICS`, so a column's unit is stated in one place. The index is regenerated with
``python -m evalkit.features.registry --write docs/metrics.md`` (a test fails when the page and
the registry differ, or when ``score`` writes a column the registry does not know).

Stored values keep the column's own unit (metres, seconds, shares 0–1); ``shown_unit``,
``factor`` and ``decimals`` say how a table shows them (e.g. metres as millimetres with one
decimal, shares as per cent): ``value × factor`` rounded to ``decimals`` places.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

#: Families in the order reports and the docs list them.
FAMILIES = ("Naturalness model", "Foot contacts and skate", "Ground contact", "Balance and physics",
            "Kinematics", "Comparison with a reference set", "Kinetic energy", "Beat alignment",
            "Clip facts")


@dataclass(frozen=True)
class MetricInfo:
    """One score column.

    ``column``: its name in the scores table; ``label``: the name in words for tables and axes;
    ``unit``: the stored unit (``""`` for a dimensionless number, ``"share"`` for a fraction
    0–1, ``"count"``); ``family``: one of :data:`FAMILIES`; ``better``: ``"lower"``,
    ``"higher"`` or ``""`` (neither: compare with natural motion); ``shown_unit`` / ``factor`` /
    ``decimals``: how tables show it (value × factor, rounded); ``bookkeeping``: describes the
    clip rather than its quality (summarised, never tested).
    """

    column: str
    label: str
    unit: str
    family: str
    better: str = "lower"
    shown_unit: str | None = None
    factor: float = 1.0
    decimals: int = 3
    bookkeeping: bool = False

    @property
    def display_unit(self) -> str:
        """The unit of the shown value (``""`` when dimensionless)."""
        u = self.unit if self.shown_unit is None else self.shown_unit
        return "" if u in ("", "share", "count", "probability") else u

    @property
    def heading(self) -> str:
        """``label (unit)`` for a table row or an axis, e.g. ``Foot slide per contact, mean (mm)``."""
        return f"{self.label} ({self.display_unit})" if self.display_unit else self.label

    @property
    def resolution(self) -> float:
        """The smallest difference the shown value resolves, in the stored unit."""
        return 10.0 ** -self.decimals / self.factor

    def shown(self, value: float) -> float:
        """``value`` in the shown unit, rounded to the shown precision (NaN stays NaN)."""
        if value is None or not math.isfinite(float(value)):
            return math.nan
        v = round(float(value) * self.factor, self.decimals)
        return 0.0 if v == 0 else v  # no "-0.0"

    def format(self, value: float) -> str:
        """``value`` as table text in the shown unit ("–" when missing)."""
        v = self.shown(value)
        return "–" if math.isnan(v) else f"{v:,.{self.decimals}f}".replace(",", "\u2009")


_MM = dict(shown_unit="mm", factor=1000.0, decimals=1)
_MMS = dict(shown_unit="mm/s", factor=1000.0, decimals=1)
_PCT = dict(shown_unit="%", factor=100.0, decimals=1)


def _m(column, label, unit, family, better="lower", **kw) -> MetricInfo:
    return MetricInfo(column, label, unit, family, better, **kw)


_NAT, _FOOT, _GROUND, _PHYS = FAMILIES[0], FAMILIES[1], FAMILIES[2], FAMILIES[3]
_KIN, _REF, _ENERGY, _BEAT, _CLIP = FAMILIES[4], FAMILIES[5], FAMILIES[6], FAMILIES[7], FAMILIES[8]

#: Every column ``evalkit score`` writes (with ``--reference``, ``--audio`` and ``--model``), in
#: the order of :data:`FAMILIES`.
METRICS: dict[str, MetricInfo] = {m.column: m for m in (
    _m("naturalness", "Naturalness (discriminator)", "probability", _NAT, "higher", decimals=2),
    _m("worst_window_naturalness", "Naturalness of the worst window", "probability", _NAT, "higher", decimals=2),
    _m("worst_stretch_naturalness", "Naturalness of the worst stretch", "probability", _NAT, "higher", decimals=2),
    _m("naturalness_reliability", "Naturalness reliability, share of windows the model knows", "share", _NAT, "",
       **_PCT),
    _m("skate_fraction", "Foot skate, share of planted time", "share", _FOOT, **_PCT),
    _m("skate_speed_mean", "Foot slide speed while planted, mean", "m/s", _FOOT, **_MMS),
    _m("skate_distance_mean", "Foot slide per contact, mean", "m", _FOOT, **_MM),
    _m("skate_distance_max", "Foot slide per contact, max", "m", _FOOT, **_MM),
    _m("skate_distance_per_s", "Foot slide per second of clip", "m/s", _FOOT, **_MMS),
    _m("skating_ratio", "Foot skating ratio (clip rate)", "share", _FOOT, **_PCT),
    _m("skating_ratio_20fps", "Foot skating ratio (20 fps)", "share", _FOOT, **_PCT),
    _m("contact_frac", "Feet planted, share of time", "share", _FOOT, "", **_PCT),
    _m("contacts_per_s", "Foot contacts per second", "1/s", _FOOT, "", decimals=2),
    _m("penetration_mean", "Ground penetration depth, mean", "m", _GROUND, **_MM),
    _m("penetration_max", "Ground penetration depth, max", "m", _GROUND, **_MM),
    _m("penetration_frac", "Ground penetration, share of time", "share", _GROUND, **_PCT),
    _m("floating_mean", "Floating height, mean", "m", _GROUND, **_MM),
    _m("floating_max", "Floating height, max", "m", _GROUND, **_MM),
    _m("floating_frac", "Floating, share of time", "share", _GROUND, **_PCT),
    _m("ground_slope", "Ground slope", "share", _GROUND, "", **_PCT),
    _m("zmp_outside_mean", "ZMP outside support, mean distance", "m", _PHYS, **_MM),
    _m("zmp_outside_max", "ZMP outside support, max distance", "m", _PHYS, **_MM),
    _m("zmp_outside_frac", "ZMP outside support, share of grounded time", "share", _PHYS, **_PCT),
    _m("zmp_cart_outside_mean", "Cart-table ZMP outside support, mean distance", "m", _PHYS, **_MM),
    _m("zmp_cart_outside_max", "Cart-table ZMP outside support, max distance", "m", _PHYS, **_MM),
    _m("zmp_cart_outside_frac", "Cart-table ZMP outside support, share of grounded time", "share",
       _PHYS, **_PCT),
    _m("flight_frac", "Airborne, share of time", "share", _PHYS, "", **_PCT),
    _m("ballistic_error_mean", "Ballistic error in flight, mean", "m/s²", _PHYS, decimals=2),
    _m("accel_mean", "Joint acceleration, mean", "m/s²", _KIN, "", decimals=2),
    _m("jerk_mean", "Joint jerk, mean", "m/s³", _KIN, "", decimals=1),
    _m("accel_mean_hands", "Hand joint acceleration, mean", "m/s²", _KIN, "", decimals=2),
    _m("jerk_mean_hands", "Hand joint jerk, mean", "m/s³", _KIN, "", decimals=1),
    _m("bone_drift_max", "Bone-length drift, max over bones", "share", _KIN, **dict(_PCT, decimals=2)),
    _m("bone_drift_mean", "Bone-length drift, mean over bones", "share", _KIN, **dict(_PCT, decimals=2)),
    _m("hellinger_speed", "Speed histogram distance to reference (Hellinger)", "", _REF),
    _m("hellinger_accel", "Acceleration histogram distance to reference (Hellinger)", "", _REF),
    _m("hellinger_jerk", "Jerk histogram distance to reference (Hellinger)", "", _REF),
    _m("angle_outlier_frac", "Joint angles outside the reference range, share of frames", "share",
       _REF, **_PCT),
    _m("angle_outlier_max_deg", "Joint angle beyond the reference range, max", "°", _REF, decimals=1),
    _m("fmd_ref_mean", "FMDistance to reference clips, mean", "", _REF, decimals=2),
    _m("fmd_ref_min", "FMDistance to the nearest reference clip", "", _REF, decimals=2),
    _m("kinetic_h", "Horizontal kinetic energy per unit mass", "m²/s²", _ENERGY, ""),
    _m("kinetic_v", "Vertical kinetic energy per unit mass", "m²/s²", _ENERGY, ""),
    _m("energy_expenditure", "Energy expenditure (mean acceleration)", "m/s²", _ENERGY, "", decimals=2),
    _m("beat_align", "Beat alignment (σ 0.05 s)", "", _BEAT, "higher"),
    _m("beat_consistency", "Beat consistency (σ 0.1 s)", "", _BEAT, "higher"),
    _m("motion_beats", "Motion beats", "count", _BEAT, "", decimals=0),
    _m("audio_beats", "Audio beats", "count", _BEAT, "", decimals=0),
    _m("frames", "Frames", "count", _CLIP, "", decimals=0, bookkeeping=True),
    _m("fps", "Frame rate", "fps", _CLIP, "", decimals=0, bookkeeping=True),
    _m("duration_s", "Duration", "s", _CLIP, "", decimals=2, bookkeeping=True),
    _m("height_m", "Body height", "m", _CLIP, "", decimals=2, bookkeeping=True),
    _m("dropped_frames", "End frames dropped (pops)", "count", _CLIP, "", decimals=0, bookkeeping=True),
    _m("ground_y", "Ground height", "m", _CLIP, "", decimals=3, bookkeeping=True),
    _m("worst_window_start_s", "Worst window start", "s", _CLIP, "", decimals=2, bookkeeping=True),
    _m("worst_window_end_s", "Worst window end", "s", _CLIP, "", decimals=2, bookkeeping=True),
    _m("worst_stretch_start_s", "Worst stretch start", "s", _CLIP, "", decimals=2, bookkeeping=True),
    _m("worst_stretch_end_s", "Worst stretch end", "s", _CLIP, "", decimals=2, bookkeeping=True),
    _m("cuts", "Cuts to a new take", "count", _CLIP, "", decimals=0, bookkeeping=True),
    _m("copies", "Copies of one stretch", "count", _CLIP, "", decimals=0, bookkeeping=True),
)}


def metric_info(column: str) -> MetricInfo | None:
    """The registry entry of a score column, or None for a column it does not know."""
    return METRICS.get(str(column))


def _unit_text(m: MetricInfo) -> str:
    u = {"": "—", "share": "share (0–1)", "count": "count",
         "probability": "probability (0–1)"}.get(m.unit, m.unit)
    if m.shown_unit and m.shown_unit != m.unit:
        u += f"; shown in {m.shown_unit}"
    return u


INDEX_BEGIN = "<!-- metric-registry:begin (written by python -m evalkit.features.registry --write docs/metrics.md) -->"
INDEX_END = "<!-- metric-registry:end -->"


def markdown_index() -> str:
    """The column index of ``docs/metrics.md``: one row per registry entry, by family."""
    rows = ["| column | in reports | stored unit | family | better |", "|---|---|---|---|---|"]
    for fam in FAMILIES:
        for m in METRICS.values():
            if m.family == fam:
                better = "—" if m.bookkeeping else (m.better or "neither (compare with natural motion)")
                rows.append(f"| `{m.column}` | {m.heading} | {_unit_text(m)} | {fam} | {better} |")
    return "\n".join(rows)


def rewrite_index(text: str) -> str:
    """``text`` (the docs page) with the block between the index markers replaced."""
    try:
        head, rest = text.split(INDEX_BEGIN, 1)
        _, tail = rest.split(INDEX_END, 1)
    except ValueError:
        raise ValueError("the page has no metric-registry markers") from None
    return f"{head}{INDEX_BEGIN}\n{markdown_index()}\n{INDEX_END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """``--write PAGE``: rewrite the page's index; without arguments print the index."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--write"] and len(argv) == 2:
        page = Path(argv[1])
        page.write_text(rewrite_index(page.read_text(encoding="utf-8")), encoding="utf-8")
        return 0
    print(markdown_index())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
