"""Gesture–speech correlation study: apex–PAPT matching, synchrony and intensity rules.

* **Matching**: stroke apexes and pitch-accent peak times (PAPT) are paired one-to-one by the
  Hungarian algorithm on ``|PAPT - apex - expected_offset|``, pairs farther apart than
  ``max_distance_s`` are dropped.
* **Synchrony rule** (thesis Fig. 4.7): the distribution of ``offset = PAPT - apex`` (seconds;
  positive = the apex comes before the accent's peak). The thesis found mean 0.1 s, SD 0.2 s.
* **Intensity rule** (thesis Fig. 4.8): ordinary least squares ``GSI = intercept + slope * PSI``;
  a gesture fits an accent when its GSI lies within ``margin`` of the line. The margin is the
  ``coverage`` quantile (default 90 %) of the absolute residuals.
* **Rules JSON** (:func:`save_rules` / :func:`load_rules`) holds both rules plus provenance, for
  the gesture motion graph. :data:`DEFAULT_RULES` are the thesis' published numbers; the thesis
  text available here gives no numbers for the regression, so the default intensity rule is the
  identity ``GSI = PSI`` with margin 0.2 and says so in its ``source``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from scipy.stats import linregress

from evalkit.atomic import atomic_path, write_text
from evalkit.errors import ConfigError, FileFormatError, InputError
from evalkit.textfile import read_utf8_text

RULES_FORMAT = "evalkit-rules"
RULES_VERSION = 1
OFFSET_DEFINITION = "PAPT minus apex time, seconds; positive = the stroke apex comes before the pitch-accent peak"
#: The one definition of "within the synchrony rule", used by ``evalkit sync`` and the GMG
#: objective report alike: an offset within this many rule standard deviations of the rule's
#: mean (``|offset - mean_s| <= SYNC_MARGIN_SD * sd_s``; with the thesis' rule, 0.1 ± 0.2 s).
SYNC_MARGIN_SD = 1.0


@dataclass(frozen=True)
class SynchronyRule:
    """Distribution of apex–PAPT offsets (``PAPT - apex``, seconds).

    Attributes:
        mean_s, sd_s: mean and standard deviation; median_s: median.
        n: number of pairs it was fitted on (0 = published default).
        source: where the numbers come from.
    """

    mean_s: float = 0.1
    sd_s: float = 0.2
    median_s: float = float("nan")
    n: int = 0
    source: str = "thesis (Fernández-Baena), Fig. 4.7: apex before PAPT by 0.1 s on average, SD 0.2 s"

    def anchor(self, papt: float | np.ndarray) -> float | np.ndarray:
        """Where to put an apex for an accent peaking at ``papt`` (s): ``papt - mean_s``."""
        return np.asarray(papt) - self.mean_s

    def accepts(self, offset: float | np.ndarray, k_sd: float = SYNC_MARGIN_SD) -> np.ndarray:
        """Whether offsets (s) lie within ``k_sd`` standard deviations of the mean (default: the
        project's one definition, :data:`SYNC_MARGIN_SD`)."""
        return np.abs(np.asarray(offset, dtype=float) - self.mean_s) <= k_sd * self.sd_s + 1e-12


@dataclass(frozen=True)
class IntensityRule:
    """``GSI = intercept + slope * PSI``, accepted within ``margin``.

    Attributes:
        intercept, slope: regression line; margin: half-width of the acceptance band.
        coverage: fraction of the fitting pairs inside the band; r: Pearson correlation;
        slope_se: standard error of the slope; n: pairs (0 = default); source: provenance.
    """

    intercept: float = 0.0
    slope: float = 1.0
    margin: float = 0.2
    coverage: float = float("nan")
    r: float = float("nan")
    slope_se: float = float("nan")
    n: int = 0
    source: str = ("assumed default: the thesis reports GSI growing linearly with PSI within an "
                   "experimentally determined margin (Fig. 4.8) but the available text gives no "
                   "numbers; identity line, margin 0.2")

    def predict(self, psi: float | np.ndarray) -> np.ndarray:
        """GSI expected for a PSI."""
        return self.intercept + self.slope * np.asarray(psi, dtype=float)

    def accepts(self, psi: float | np.ndarray, gsi: float | np.ndarray) -> np.ndarray:
        """Whether a gesture of strength ``gsi`` fits an accent of strength ``psi``."""
        return np.abs(np.asarray(gsi, dtype=float) - self.predict(psi)) <= self.margin + 1e-12


@dataclass(frozen=True)
class Rules:
    """Synchrony and intensity rules with provenance.

    Attributes:
        synchrony, intensity: the two rules.
        constructed: fitted on constructed takes (not real capture with its own speech).
        sources: takes or files the rules were fitted on.
        note: free text (e.g. how the takes were constructed).
        psi_scale, gsi_scale: the calibrations (``StrengthScale.to_dict()``) the PSI and GSI
            values were computed with, or ``None`` for the built-in ones.
    """

    synchrony: SynchronyRule = field(default_factory=SynchronyRule)
    intensity: IntensityRule = field(default_factory=IntensityRule)
    constructed: bool = False
    sources: tuple[str, ...] = ()
    note: str = ""
    psi_scale: Mapping[str, Any] | None = None
    gsi_scale: Mapping[str, Any] | None = None

    def to_dict(self) -> dict:
        """JSON-ready dictionary (see the module docstring)."""
        def clean(d: dict) -> dict:
            return {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in d.items()}

        return {
            "format": RULES_FORMAT,
            "version": RULES_VERSION,
            "constructed": bool(self.constructed),
            "note": self.note,
            "sources": list(self.sources),
            "synchrony": {"offset_definition": OFFSET_DEFINITION, **clean(asdict(self.synchrony))},
            "intensity": {"model": "GSI = intercept + slope * PSI; accepted when |GSI - line| <= margin", **clean(asdict(self.intensity))},
            "psi_scale": self.psi_scale,
            "gsi_scale": self.gsi_scale,
        }


#: The thesis' published numbers (synchrony) and the assumed identity intensity rule.
DEFAULT_RULES = Rules()


def _get(d: Mapping, key: str, path: str, kind=float, default=None):
    if key not in d or d[key] is None:
        if default is not None:
            return default
        raise ConfigError(f"{path}: missing key '{key}'")
    try:
        return kind(d[key])
    except (TypeError, ValueError):
        raise ConfigError(f"{path}: key '{key}' must be a {kind.__name__}, got {d[key]!r}") from None


def rules_from_dict(d: Mapping[str, Any], where: str = "rules") -> Rules:
    """Rebuild :class:`Rules` from :meth:`Rules.to_dict` output; errors name the key."""
    if not isinstance(d, Mapping):
        raise ConfigError(f"{where}: expected a JSON object")
    if d.get("format", RULES_FORMAT) != RULES_FORMAT:
        raise ConfigError(f"{where}: 'format' is {d.get('format')!r}, expected {RULES_FORMAT!r}")
    version = d.get("version", RULES_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise ConfigError(f"{where}: 'version' must be an integer, got {version!r}")
    if version > RULES_VERSION:
        raise ConfigError(f"{where}: rules version {d.get('version')} is newer than this evalkit understands ({RULES_VERSION})")
    s = d.get("synchrony")
    i = d.get("intensity")
    if not isinstance(s, Mapping):
        raise ConfigError(f"{where}: missing object 'synchrony'")
    if not isinstance(i, Mapping):
        raise ConfigError(f"{where}: missing object 'intensity'")
    nan = float("nan")
    sync = SynchronyRule(
        mean_s=_get(s, "mean_s", f"{where}: synchrony"),
        sd_s=_get(s, "sd_s", f"{where}: synchrony"),
        median_s=_get(s, "median_s", f"{where}: synchrony", default=nan),
        n=_get(s, "n", f"{where}: synchrony", int, default=0),
        source=str(s.get("source", "")),
    )
    if not sync.sd_s >= 0:
        raise ConfigError(f"{where}: synchrony: 'sd_s' must be >= 0, got {sync.sd_s}")
    inten = IntensityRule(
        intercept=_get(i, "intercept", f"{where}: intensity"),
        slope=_get(i, "slope", f"{where}: intensity"),
        margin=_get(i, "margin", f"{where}: intensity"),
        coverage=_get(i, "coverage", f"{where}: intensity", default=nan),
        r=_get(i, "r", f"{where}: intensity", default=nan),
        slope_se=_get(i, "slope_se", f"{where}: intensity", default=nan),
        n=_get(i, "n", f"{where}: intensity", int, default=0),
        source=str(i.get("source", "")),
    )
    if not inten.margin >= 0:
        raise ConfigError(f"{where}: intensity: 'margin' must be >= 0, got {inten.margin}")
    constructed = d.get("constructed", False)
    if not isinstance(constructed, bool):
        raise ConfigError(f"{where}: 'constructed' must be true or false, got {constructed!r}")
    sources = d.get("sources", [])
    if not isinstance(sources, list):
        raise ConfigError(f"{where}: 'sources' must be a list of take names, got {sources!r}")
    for key in ("psi_scale", "gsi_scale"):
        if d.get(key) is not None and not isinstance(d[key], Mapping):
            raise ConfigError(f"{where}: {key!r} must be an object or null, got {d[key]!r}")
    return Rules(sync, inten, constructed, tuple(map(str, sources)), str(d.get("note", "")),
                 d.get("psi_scale"), d.get("gsi_scale"))


def save_rules(rules: Rules, path: str | os.PathLike) -> Path:
    """Write rules as JSON (temporary file, then rename)."""
    return write_text(Path(path), json.dumps(rules.to_dict(), indent=2, ensure_ascii=False) + "\n")


def load_rules(path: str | os.PathLike | None = None) -> Rules:
    """Read a rules JSON file; ``None`` gives :data:`DEFAULT_RULES`.

    Raises:
        FileFormatError: not JSON (names the line); ConfigError: a key is missing or invalid.
    """
    if path is None:
        return DEFAULT_RULES
    p = Path(path)
    if not p.exists():
        raise FileFormatError(p, None, "file not found")
    try:
        d = json.loads(read_utf8_text(p))
    except json.JSONDecodeError as exc:
        raise FileFormatError(p, exc.lineno, f"not valid JSON: {exc.msg}") from None
    return rules_from_dict(d, str(p))


# --------------------------------------------------------------------------------------------
# Matching and fitting
# --------------------------------------------------------------------------------------------
def match_apexes(apex_times: Sequence[float], papts: Sequence[float], max_distance_s: float = 0.5, expected_offset_s: float = 0.0) -> list[tuple[int, int]]:
    """One-to-one pairs ``(apex index, accent index)`` minimising total ``|PAPT - apex - expected|``.

    Args:
        apex_times: ``(strokes,)`` seconds; papts: ``(accents,)`` seconds.
        max_distance_s: pairs with ``|PAPT - apex - expected_offset_s|`` above this are not made.
        expected_offset_s: centre of the search (0 = nearest in time, as in the thesis).
    """
    a = np.asarray(apex_times, dtype=float)
    p = np.asarray(papts, dtype=float)
    if len(a) == 0 or len(p) == 0:
        return []
    cost = np.abs(p[None, :] - a[:, None] - expected_offset_s)
    big = 1e6
    c = np.where(cost <= max_distance_s, cost, big)
    rows, cols = linear_sum_assignment(c)
    pairs = [(int(i), int(j)) for i, j in zip(rows, cols) if c[i, j] < big]
    return sorted(pairs)


PAIR_COLUMNS = ("take", "stroke", "accent", "apex_time", "papt", "offset_s", "gsi", "psi", "constructed")


def pair_take(gestures, speech, max_distance_s: float = 0.5, expected_offset_s: float = 0.0, take: str = "", constructed: bool = False) -> pd.DataFrame:
    """Apex–PAPT pairs of one take as a DataFrame with columns :data:`PAIR_COLUMNS`.

    Args:
        gestures: a :class:`~evalkit.gesture.GestureAnalysis` (apex times, GSI).
        speech: a :class:`~evalkit.speech.SpeechAnalysis` (PAPTs, PSI).
    """
    apex = gestures.apex_times
    papt = speech.papts
    rows = []
    for i, j in match_apexes(apex, papt, max_distance_s, expected_offset_s):
        rows.append({
            "take": take, "stroke": i, "accent": j, "apex_time": float(apex[i]), "papt": float(papt[j]),
            "offset_s": float(papt[j] - apex[i]), "gsi": float(gestures.gsi[i]), "psi": float(speech.psi[j]),
            "constructed": bool(constructed),
        })
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def fit_synchrony(offsets: Sequence[float], source: str = "fitted") -> SynchronyRule:
    """Mean, SD (ddof 1) and median of apex–PAPT offsets (s)."""
    o = np.asarray(offsets, dtype=float)
    o = o[np.isfinite(o)]
    if len(o) < 2:
        raise InputError(f"need at least 2 apex–PAPT pairs to fit the synchrony rule, got {len(o)}")
    return SynchronyRule(float(o.mean()), float(o.std(ddof=1)), float(np.median(o)), int(len(o)), source)


def fit_intensity(psi: Sequence[float], gsi: Sequence[float], coverage: float = 0.9, source: str = "fitted") -> IntensityRule:
    """OLS line ``GSI = intercept + slope * PSI`` and the margin holding ``coverage`` of the pairs."""
    x = np.asarray(psi, dtype=float)
    y = np.asarray(gsi, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if len(x) < 3:
        raise InputError(f"need at least 3 PSI–GSI pairs to fit the intensity rule, got {len(x)}")
    if np.ptp(x) == 0:
        raise InputError("all PSI values are equal; the PSI–GSI regression is undefined")
    if not 0 < coverage <= 1:
        raise InputError(f"coverage must be in (0, 1], got {coverage}")
    fit = linregress(x, y)
    resid = np.abs(y - (fit.intercept + fit.slope * x))
    margin = float(np.quantile(resid, coverage))
    return IntensityRule(float(fit.intercept), float(fit.slope), margin, float(np.mean(resid <= margin + 1e-12)),
                         float(fit.rvalue), float(fit.stderr), int(len(x)), source)


def fit_rules(pairs: pd.DataFrame, coverage: float = 0.9, note: str = "", psi_scale=None, gsi_scale=None) -> Rules:
    """Both rules from apex–PAPT pairs (columns ``offset_s, psi, gsi``, optional ``take`` and
    ``constructed``). Rules fitted on any constructed pair are marked ``constructed``."""
    for col in ("offset_s", "psi", "gsi"):
        if col not in pairs.columns:
            raise InputError(f"pairs table lacks column {col!r}; has {', '.join(map(str, pairs.columns))}")
    constructed = bool(pairs["constructed"].astype(bool).any()) if "constructed" in pairs.columns and len(pairs) else False
    src = "fitted on constructed takes" if constructed else "fitted on recorded takes"
    takes = tuple(sorted(set(map(str, pairs["take"])))) if "take" in pairs.columns else ()
    return Rules(
        synchrony=fit_synchrony(pairs["offset_s"], f"{src} ({len(pairs)} pairs)"),
        intensity=fit_intensity(pairs["psi"], pairs["gsi"], coverage, f"{src} ({len(pairs)} pairs)"),
        constructed=constructed,
        sources=takes,
        note=note,
        psi_scale=psi_scale,
        gsi_scale=gsi_scale,
    )


# --------------------------------------------------------------------------------------------
# Figures (thesis Figs. 4.7 and 4.8)
# --------------------------------------------------------------------------------------------
def _save_figure(fig, path: Path) -> Path:
    with atomic_path(path, suffix=path.suffix or ".png") as tmp:
        fig.savefig(tmp, dpi=120, bbox_inches="tight")
    return path


def plot_offsets(pairs: pd.DataFrame, path: str | os.PathLike, rule: SynchronyRule | None = None, constructed: bool | None = None, bin_s: float = 0.05) -> Path:
    """Histogram of apex–PAPT offsets with mean and ±SD marked (like the thesis' Fig. 4.7)."""
    from matplotlib.figure import Figure

    o = pairs["offset_s"].to_numpy(dtype=float)
    rule = rule or (fit_synchrony(o) if len(o) >= 2 else None)
    constructed = bool(pairs.get("constructed", pd.Series([False])).astype(bool).any()) if constructed is None else constructed
    fig = Figure(figsize=(6, 3.6))
    ax = fig.subplots()
    lo = min(-0.5, np.floor(o.min() / bin_s) * bin_s) if len(o) else -0.5
    hi = max(0.5, np.ceil(o.max() / bin_s) * bin_s) if len(o) else 0.5
    ax.hist(o, bins=np.arange(lo, hi + bin_s, bin_s), color="#7a9cc6", edgecolor="white")
    if rule is not None:
        ax.axvline(rule.mean_s, color="k", lw=1.5, label=f"mean {rule.mean_s:+.3f} s")
        for s in (-1, 1):
            ax.axvline(rule.mean_s + s * rule.sd_s, color="k", lw=1, ls="--", label="±1 SD" if s > 0 else None)
    ax.axvline(0, color="#999", lw=0.8)
    ax.set_xlabel("PAPT − apex time (s); > 0: apex before the accent peak")
    ax.set_ylabel("pairs")
    title = f"Apex–PAPT offsets (n = {len(o)})"
    if constructed:
        title += " — CONSTRUCTED takes"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return _save_figure(fig, Path(path))


def plot_psi_gsi(pairs: pd.DataFrame, path: str | os.PathLike, rule: IntensityRule | None = None, group: str | None = None, constructed: bool | None = None) -> Path:
    """Scatter of PSI vs GSI with the regression line and the margin band (thesis Fig. 4.8).

    ``group`` names a column (e.g. style) that sets the marker of each point.
    """
    from matplotlib.figure import Figure

    x = pairs["psi"].to_numpy(dtype=float)
    y = pairs["gsi"].to_numpy(dtype=float)
    rule = rule or (fit_intensity(x, y) if len(x) >= 3 and np.ptp(x) > 0 else None)
    constructed = bool(pairs.get("constructed", pd.Series([False])).astype(bool).any()) if constructed is None else constructed
    fig = Figure(figsize=(5, 4.2))
    ax = fig.subplots()
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    if group and group in pairs.columns:
        for k, (name, d) in enumerate(pairs.groupby(group)):
            ax.scatter(d["psi"], d["gsi"], marker=markers[k % len(markers)], facecolors="none", edgecolors=f"C{k}", label=str(name))
    else:
        ax.scatter(x, y, facecolors="none", edgecolors="C0")
    if rule is not None:
        xs = np.linspace(0, 1, 50)
        ax.plot(xs, rule.predict(xs), "k-", lw=1.5, label=f"GSI = {rule.intercept:.2f} + {rule.slope:.2f}·PSI")
        ax.plot(xs, rule.predict(xs) + rule.margin, "k--", lw=1, label=f"margin ±{rule.margin:.2f}")
        ax.plot(xs, rule.predict(xs) - rule.margin, "k--", lw=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("PSI (pitch strength indicator)")
    ax.set_ylabel("GSI (gesture strength indicator)")
    title = f"PSI vs GSI (n = {len(x)})"
    if constructed:
        title += " — CONSTRUCTED takes"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    return _save_figure(fig, Path(path))
