"""Praat TextGrid files: a small typed model, read and written by Praat itself.

Reading and writing use Praat (praat-parselmouth), so every variant Praat accepts (long and
short text format, UTF-8/UTF-16, binary) is read exactly as Praat reads it, a malformed file is
reported with a line number, and the files written are Praat's own long text format (stored
as UTF-8, where Praat would choose UTF-16 for non-ASCII text). What evalkit adds is the typed
model and checks with clear messages (overlapping intervals, points outside the domain).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Union

from evalkit.errors import FileFormatError, InputError


@dataclass(frozen=True)
class Interval:
    """A labelled interval, ``start`` and ``end`` in seconds."""

    start: float
    end: float
    text: str = ""


@dataclass(frozen=True)
class Point:
    """A labelled point at ``time`` seconds."""

    time: float
    text: str = ""


@dataclass(frozen=True)
class IntervalTier:
    """A tier of intervals (gaps are filled with empty intervals when written)."""

    name: str
    intervals: tuple[Interval, ...]

    def labelled(self) -> tuple[Interval, ...]:
        """Intervals with a non-blank label."""
        return tuple(i for i in self.intervals if i.text.strip())


@dataclass(frozen=True)
class PointTier:
    """A tier of points (Praat's ``TextTier``)."""

    name: str
    points: tuple[Point, ...]


Tier = Union[IntervalTier, PointTier]


@dataclass(frozen=True)
class TextGrid:
    """Tiers over the time domain ``start``..``end`` seconds."""

    start: float
    end: float
    tiers: tuple[Tier, ...]

    @property
    def tier_names(self) -> list[str]:
        return [t.name for t in self.tiers]

    def tier(self, name: str) -> Tier:
        """The tier called ``name`` (raises :class:`InputError` listing the tiers if absent)."""
        for t in self.tiers:
            if t.name == name:
                return t
        raise InputError(f"no tier named {name!r}; tiers are: {', '.join(self.tier_names) or '(none)'}")


def read_textgrid(path: str | os.PathLike) -> TextGrid:
    """Read a TextGrid file with Praat.

    Raises:
        FileFormatError: not a TextGrid, or malformed (names the file and, where Praat reports
            it, the line).
    """
    import parselmouth
    from parselmouth.praat import call

    p = Path(path)
    if not p.exists():
        raise FileFormatError(p, None, "file not found")
    try:
        obj = parselmouth.read(str(p))
    except parselmouth.PraatError as exc:
        located = _locate_long_format_error(p)
        if located is not None:
            raise FileFormatError(p, located[0], f"not a valid Praat TextGrid: {located[1]}") from None
        msg = str(exc).strip()
        m = re.search(r"\(line (\d+)\)", msg)
        first = msg.splitlines()[0] if msg else "unreadable"
        first = re.sub(r"\s*\(line \d+\)\.?", "", first)
        # Praat reports the line of the token it read *after* the bad one
        where = f" (Praat stopped reading near line {m.group(1)})" if m else ""
        raise FileFormatError(p, None, f"not a valid Praat TextGrid: {first}{where}") from None
    if not isinstance(obj, parselmouth.TextGrid):
        raise FileFormatError(p, None, f"expected a Praat TextGrid, found a {type(obj).__name__}")
    tiers: list[Tier] = []
    for k in range(1, int(call(obj, "Get number of tiers")) + 1):
        name = call(obj, "Get tier name", k)
        if call(obj, "Is interval tier", k):
            n = int(call(obj, "Get number of intervals", k))
            tiers.append(IntervalTier(name, tuple(
                Interval(float(call(obj, "Get start time of interval", k, i)), float(call(obj, "Get end time of interval", k, i)), call(obj, "Get label of interval", k, i))
                for i in range(1, n + 1)
            )))
        else:
            n = int(call(obj, "Get number of points", k))
            tiers.append(PointTier(name, tuple(
                Point(float(call(obj, "Get time of point", k, i)), call(obj, "Get label of point", k, i)) for i in range(1, n + 1)
            )))
    return TextGrid(float(obj.xmin), float(obj.xmax), tuple(tiers))


_LONG_LINE = re.compile(r"^\s*(xmin|xmax|number|size|class|name|text|mark|intervals: size|points: size)\s*=\s*(.*?)\s*$")
_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _locate_long_format_error(path: Path) -> tuple[int, str] | None:
    """Line (1-based) and reason of the first bad ``key = value`` line of a long-format
    TextGrid, found when Praat refuses the file (Praat's own line numbers point past the
    error). ``None`` if nothing is found (e.g. short format, or a structural problem)."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _LONG_LINE.match(lines[i])
        if not m:
            i += 1
            continue
        key, value = m.group(1), m.group(2)
        if key in ("xmin", "xmax", "number"):
            if not _FLOAT.match(value):
                return i + 1, f"{key} = {value!r}: expected a number"
        elif key.endswith("size"):
            if not re.fullmatch(r"\d+", value):
                return i + 1, f"{key} = {value!r}: expected a whole number"
        else:
            if not value.startswith('"'):
                return i + 1, f"{key} = {value!r}: expected a text in double quotes"
            body = value[1:]
            start = i
            while len(re.sub(r'""', "", body).split('"')) < 2:  # string continues on the next line
                i += 1
                if i >= len(lines):
                    return start + 1, f"{key}: text opened with a double quote is never closed"
                body += "\n" + lines[i]
        i += 1
    return None


def _filled(tier: IntervalTier, start: float, end: float) -> list[Interval]:
    """Intervals sorted, gaps (and the domain's edges) filled with empty intervals."""
    out: list[Interval] = []
    t = start
    for iv in sorted(tier.intervals, key=lambda i: i.start):
        if iv.end <= iv.start:
            raise InputError(f"tier {tier.name!r}: interval {iv.start:.6f}-{iv.end:.6f} s is empty or reversed")
        if iv.start < t - 1e-9:
            raise InputError(f"tier {tier.name!r}: interval starting at {iv.start:.6f} s overlaps the previous one (ends {t:.6f} s)")
        if iv.start > t + 1e-9:
            out.append(Interval(t, iv.start, ""))
        out.append(Interval(max(iv.start, t), iv.end, iv.text))
        t = iv.end
    if t > end + 1e-9:
        raise InputError(f"tier {tier.name!r}: interval ends at {t:.6f} s, after the TextGrid's end {end:.6f} s")
    if end > t + 1e-9 or not out:
        out.append(Interval(t, end, ""))
    return out


def _praat_textgrid(tg: TextGrid):
    """``tg`` as a Praat TextGrid object (parselmouth), built with Praat's own commands.

    Raises:
        InputError: no tiers (Praat needs at least one), overlapping, empty or reversed
            intervals, points outside the time domain or two points at one time.
    """
    from parselmouth.praat import call

    if not tg.end > tg.start:
        raise InputError(f"TextGrid time domain {tg.start}-{tg.end} s is empty")
    if not tg.tiers:
        raise InputError("a TextGrid needs at least one tier (Praat cannot write one without tiers)")
    fills = []
    for tier in tg.tiers:  # check everything before Praat is asked for anything
        if isinstance(tier, IntervalTier):
            fills.append(_filled(tier, tg.start, tg.end))
            continue
        times = sorted(p.time for p in tier.points)
        for t in times:
            if not (tg.start <= t <= tg.end):
                raise InputError(f"tier {tier.name!r}: point at {t:.6f} s is outside {tg.start}-{tg.end} s")
        for a, b in zip(times, times[1:]):
            if a == b:
                raise InputError(f"tier {tier.name!r}: two points at {a:.6f} s; a point tier holds one point per time")
        fills.append(None)
    names = [f"t{k}" for k in range(1, len(tg.tiers) + 1)]  # placeholders: Praat splits names at spaces
    point_names = [n for n, t in zip(names, tg.tiers) if isinstance(t, PointTier)]
    obj = call("Create TextGrid", float(tg.start), float(tg.end), " ".join(names), " ".join(point_names))
    for k, (tier, ivs) in enumerate(zip(tg.tiers, fills), 1):
        call(obj, "Set tier name", k, tier.name)
        if ivs is None:
            for p in sorted(tier.points, key=lambda p: p.time):
                call(obj, "Insert point", k, float(p.time), p.text)
            continue
        for iv in ivs[1:]:
            call(obj, "Insert boundary", k, float(iv.start))
        for i, iv in enumerate(ivs, 1):
            if iv.text:
                call(obj, "Set interval text", k, i, iv.text)
    return obj


def textgrid_text(tg: TextGrid) -> str:
    """The TextGrid in Praat's long text format (a string), as Praat itself writes it."""
    import tempfile

    from parselmouth.praat import call

    obj = _praat_textgrid(tg)
    with tempfile.TemporaryDirectory(prefix="evalkit-textgrid-") as tmp:
        f = Path(tmp) / "grid.TextGrid"
        call(obj, "Save as text file", str(f))
        raw = f.read_bytes()
    # Praat writes ASCII when it can and UTF-16 (with a byte-order mark) otherwise
    return raw.decode("utf-16") if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else raw.decode("utf-8")


def write_textgrid(tg: TextGrid, path: str | os.PathLike) -> Path:
    """Write ``tg`` as a long-format TextGrid in UTF-8 (Praat's text, temporary file, then rename)."""
    p = Path(path)
    from evalkit.atomic import write_text

    return write_text(p, textgrid_text(tg), newline="\n")


def tier_times(tg: TextGrid, tier: str) -> tuple[list[float], list[str], list[tuple[float, float] | None]]:
    """Annotated times from a tier: ``(times_s, labels, windows)``.

    A point tier gives its points (window ``None``); an interval tier gives its labelled
    intervals, with the interval's midpoint as time and ``(start, end)`` as window.
    """
    t = tg.tier(tier)
    if isinstance(t, PointTier):
        return [p.time for p in t.points], [p.text for p in t.points], [None] * len(t.points)
    ivs = t.labelled()
    return [0.5 * (i.start + i.end) for i in ivs], [i.text for i in ivs], [(i.start, i.end) for i in ivs]
