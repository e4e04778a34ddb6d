"""The long-format ratings table: one row per answer, the contract every importer produces.

Columns (:data:`RATINGS_COLUMNS`):

============== =============================================================================
participant    rater id (string)
trial          trial index or id within the participant's session (string)
item           the stimulus content rated (e.g. the speech/motion clip id), shared across systems
system_a       the system rated (absolute scales) or the first system of a pair
system_b       the second system of a pair; empty for absolute scales (MUSHRA, ACR)
side_shown     where ``system_a`` was shown: ``left`` / ``right`` (pairs), empty if unknown
raw_answer     the answer as the participant gave it (on-screen label, slider value, ...)
score          signed score: pairwise scales positive = ``system_a`` better; absolute scales
               the rating itself
scale          one of :data:`SCALES` (``cmos5``, ``cmos7``, ``pref3``, ``genea``, ``mushra``,
               ``acr5``, ...)
response_time_s seconds from stimulus onset to answer, empty if unknown
flags          ``;``-separated tokens: ``check`` (attention/catch trial, never analysed),
               ``check_failed`` (a failed check), free-form others
============== =============================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evalkit.errors import FileFormatError, InputError

#: Column order of the long-format table (also the ``ratings_long`` database contract).
RATINGS_COLUMNS = (
    "participant", "trial", "item", "system_a", "system_b", "side_shown", "raw_answer",
    "score", "scale", "response_time_s", "flags",
)
#: Columns a CSV must have; the others are filled with neutral defaults when absent.
REQUIRED_COLUMNS = ("participant", "item", "system_a", "score", "scale")
#: Columns that identify one answer: a participant rates a stimulus (or pair) shown on a side
#: once per trial. Two rows with the same key are the same answer counted twice.
RATING_KEY = ("participant", "trial", "item", "system_a", "system_b", "side_shown")


@dataclass(frozen=True)
class Scale:
    """A rating scale: its kind, value range and answer labels (low to high)."""

    name: str
    kind: str  # "pairwise" or "absolute"
    low: float
    high: float
    integer: bool
    labels: tuple[str, ...] = ()
    description: str = ""

    @property
    def n_levels(self) -> int | None:
        return int(self.high - self.low) + 1 if self.integer else None


#: Known scales. Pairwise scales are symmetric around 0 (positive = system_a better).
SCALES: dict[str, Scale] = {s.name: s for s in (
    Scale("cmos5", "pairwise", -2, 2, True,
          ("A much worse", "A worse", "equal", "A better", "A much better"),
          "5-point comparison mean opinion score (-2..2), as in the thesis' TRUE tests"),
    Scale("cmos7", "pairwise", -3, 3, True,
          ("much worse", "worse", "slightly worse", "about the same", "slightly better", "better",
           "much better"),
          "7-point comparison category rating (ITU-T P.800 CCR, -3..3)"),
    Scale("ccr7", "pairwise", -3, 3, True,
          ("much worse", "worse", "slightly worse", "about the same", "slightly better", "better",
           "much better"),
          "ITU-T P.808 CCR votes (-3..3), processed vs reference"),
    Scale("pref3", "pairwise", -1, 1, True, ("B", "no preference", "A"),
          "forced/unforced preference (-1 B, 0 none, 1 A)"),
    Scale("ab3", "pairwise", -1, 1, True, ("B", "same", "A"),
          "webtest's A / same / B question (-1 B, 0 same, 1 A); same analysis as pref3"),
    Scale("genea", "pairwise", -2, 2, True,
          ("B clearly", "B slightly", "tie", "A slightly", "A clearly"),
          "GENEA leaderboard battles: strong/weak preference or tie (-2..2)"),
    Scale("mushra", "absolute", 0, 100, False, ("bad", "poor", "fair", "good", "excellent"),
          "MUSHRA 0-100 (ITU-R BS.1534)"),
    Scale("acr5", "absolute", 1, 5, True, ("bad", "poor", "fair", "good", "excellent"),
          "absolute category rating 1-5 (ITU-T P.800/P.808 ACR)"),
    Scale("likert7", "absolute", 1, 7, True, (), "7-point Likert rating (1-7)"),
)}


def _blank(series: pd.Series) -> pd.Series:
    return series.isna() | (series.astype(str).str.strip() == "")


def check_duplicates(df: pd.DataFrame, key, source: str | None, lines) -> None:
    """Raise :class:`FileFormatError` at the first row whose ``key`` columns repeat an earlier row.

    ``lines[i]`` is the source line of row ``i``; the message names both lines and the key.
    """
    key = list(key)
    k = df[key].astype(object).where(df[key].notna(), "").astype(str).apply(lambda c: c.str.strip())
    dup = k.duplicated(keep="first").to_numpy()
    if not dup.any():
        return
    i = int(np.flatnonzero(dup)[0])
    same = (k == k.iloc[i]).all(axis=1).to_numpy()
    j = int(np.flatnonzero(same)[0])
    shown = ", ".join(f"{c}={k.iloc[i][c]!r}" for c in key)
    where = "earlier in the same line" if lines[i] == lines[j] else f"line {lines[j]}"
    raise FileFormatError(source, int(lines[i]), f"duplicate rating: {shown} already given at {where}; "
                                                 "each answer must appear once (remove the copy)")


def _check_scale_values(out: pd.DataFrame, fail) -> None:
    """Scores inside each scale's range (integers where the scale has categories); system_b filled
    exactly for pairwise scales and different from system_a. ``fail(row, column, message)`` raises."""
    for name, sc in SCALES.items():
        rows = out["scale"] == name
        if not rows.any():
            continue
        s = out.loc[rows, "score"]
        outside = (s < sc.low) | (s > sc.high)
        if sc.integer:
            outside |= s != np.round(s)
        if outside.any():
            i = outside[outside].index[0]
            kind = "an integer" if sc.integer else "a number"
            fail(i, "score", f"{out['score'][i]:g} is not {kind} in [{sc.low:g}, {sc.high:g}] "
                             f"(scale {name})")
        b = out.loc[rows, "system_b"]
        if sc.kind == "pairwise":
            empty = b == ""
            if empty.any():
                fail(empty[empty].index[0], "system_b", f"is empty but scale {name} is pairwise")
            same = b == out.loc[rows, "system_a"]
            if same.any():
                fail(same[same].index[0], "system_b", "equals system_a (a system compared with itself)")
        else:
            filled = b != ""
            if filled.any():
                fail(filled[filled].index[0], "system_b",
                     f"must be empty for the absolute scale {name}")



def _normalise_side_and_time(out: pd.DataFrame, fail) -> None:
    """``side_shown`` as left/right/empty and ``response_time_s`` as seconds >= 0 (in place)."""
    if "side_shown" not in out.columns:
        out["side_shown"] = ""
    side = out["side_shown"].where(~_blank(out["side_shown"]), "").astype(str).str.strip().str.lower()
    bad = ~side.isin(["", "left", "right"])
    if bad.any():
        i = np.flatnonzero(bad)[0]
        fail(i, "side_shown", f"expected left, right or empty, got {out['side_shown'][i]!r}")
    out["side_shown"] = side

    if "response_time_s" not in out.columns:
        out["response_time_s"] = np.nan
    rt = pd.to_numeric(out["response_time_s"].where(~_blank(out["response_time_s"]), np.nan), errors="coerce")
    bad = (rt.isna() & ~_blank(out["response_time_s"])) | (rt < 0)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        fail(i, "response_time_s", f"expected seconds >= 0 or empty, got {out['response_time_s'][i]!r}")
    out["response_time_s"] = rt.astype(float)


def validate_ratings(df: pd.DataFrame, source: str | None = None, *, line_offset: int = 2,
                     lines=None, names=None) -> pd.DataFrame:
    """Check and normalise a long-format ratings table; return a new DataFrame.

    ``source`` names the file (or table) in error messages; row ``i`` (0-based) of ``df`` is
    reported as line ``lines[i]`` when given, else ``i + line_offset`` (2 = a CSV with one header
    line). Missing optional columns are filled (``trial`` = order within participant,
    ``raw_answer`` = score, others empty). Raises :class:`FileFormatError` naming the row and
    column of the first problem (``names`` maps a column to the source file's own name for it,
    e.g. ``{"score": "rating_score"}``). Two rows with the same :data:`RATING_KEY` (or, without a
    ``trial``, two identical rows) are an error naming both lines.

    >>> import pandas as pd
    >>> t = validate_ratings(pd.DataFrame({"participant": ["p1", "p1"], "item": ["walk", "run"],
    ...                                    "system_a": ["SMG", "SMG"], "system_b": ["BPMG", "BPMG"],
    ...                                    "score": [1, -2], "scale": "cmos5"}))
    >>> t[["item", "score"]].values.tolist()
    [['walk', 1.0], ['run', -2.0]]
    >>> all(c in t.columns for c in RATINGS_COLUMNS)  # optional columns filled
    True
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise FileFormatError(source, 1, f"missing column(s) {', '.join(missing)}; a ratings table "
                                         f"needs {', '.join(REQUIRED_COLUMNS)} "
                                         f"(optional: {', '.join(c for c in RATINGS_COLUMNS if c not in REQUIRED_COLUMNS)})")
    out = df.copy().reset_index(drop=True)
    if len(out) == 0:
        raise FileFormatError(source, None, "no ratings (the table is empty)")

    lines = list(lines) if lines is not None else [i + line_offset for i in range(len(out))]

    names = names or {}

    def fail(i: int, col: str, msg: str):
        raise FileFormatError(source, int(lines[int(i)]), f"column {names.get(col, col)!r}: {msg}")

    for col in ("participant", "item", "system_a", "scale"):
        bad = _blank(out[col])
        if bad.any():
            fail(np.flatnonzero(bad)[0], col, "is empty")
        out[col] = out[col].astype(str).str.strip()
    unknown = ~out["scale"].isin(list(SCALES))
    if unknown.any():
        i = np.flatnonzero(unknown)[0]
        fail(i, "scale", f"unknown scale {out['scale'][i]!r}; expected one of {', '.join(SCALES)}")

    score = pd.to_numeric(out["score"], errors="coerce")
    bad = score.isna()
    if bad.any():
        i = np.flatnonzero(bad)[0]
        got = df["score"].iloc[i]
        fail(i, "score", "is empty (expected a number)" if _blank(df["score"]).iloc[i]
             else f"expected a number, got {got!r}")
    out["score"] = score.astype(float)

    if "system_b" not in out.columns:
        out["system_b"] = ""
    out["system_b"] = out["system_b"].where(~_blank(out["system_b"]), "").astype(str).str.strip()
    _check_scale_values(out, fail)
    _normalise_side_and_time(out, fail)
    if "raw_answer" not in out.columns:
        out["raw_answer"] = out["score"].map(lambda v: f"{v:g}")
    out["raw_answer"] = out["raw_answer"].where(~_blank(out["raw_answer"]), "").astype(str)
    if "flags" not in out.columns:
        out["flags"] = ""
    out["flags"] = out["flags"].where(~_blank(out["flags"]), "").astype(str).str.strip()
    known = ~_blank(out["trial"]) if "trial" in out.columns else pd.Series(False, index=out.index)
    if "trial" not in out.columns:
        out["trial"] = out.groupby("participant", sort=False).cumcount() + 1
    out["trial"] = out["trial"].where(~out["trial"].isna(), "").astype(str).str.strip()
    out = out[list(RATINGS_COLUMNS)]
    # With a trial, the key identifies an answer; without one, only an exact copy of a row is
    # known to be the same answer twice.
    for rows, key in ((known, RATING_KEY), (~known, [c for c in RATINGS_COLUMNS if c != "trial"])):
        idx = np.flatnonzero(rows.to_numpy())
        if len(idx) > 1:
            check_duplicates(out.iloc[idx].reset_index(drop=True), key, source, [lines[i] for i in idx])
    return out


def has_flag(flags: pd.Series, token: str) -> pd.Series:
    """Boolean Series: whether each ``;``-separated flags string contains ``token``."""
    return flags.fillna("").astype(str).map(lambda s: token in [t.strip() for t in s.split(";")])


def canonical_pairs(ratings: pd.DataFrame, order: list[str] | None = None) -> pd.DataFrame:
    """Pairwise rows oriented so each unordered pair has one direction; adds ``comparison``.

    Each pair {A, B} is written as ``A vs B`` with A the system earlier in ``order`` (default:
    order of first appearance in ``system_a`` then ``system_b``). Rows stored the other way round
    get their systems swapped, ``score`` negated and ``side_shown`` swapped. Returns a new table.
    """
    systems = order or system_order(ratings)
    rank = {s: i for i, s in enumerate(systems)}
    out = ratings.copy()
    flip = out["system_a"].map(rank) > out["system_b"].map(rank)
    a, b = out["system_a"].copy(), out["system_b"].copy()
    out.loc[flip, "system_a"], out.loc[flip, "system_b"] = b[flip], a[flip]
    out.loc[flip, "score"] = -out.loc[flip, "score"]
    side = out["side_shown"].copy()
    out.loc[flip & (side == "left"), "side_shown"] = "right"
    out.loc[flip & (side == "right"), "side_shown"] = "left"
    out["comparison"] = out["system_a"] + " vs " + out["system_b"]
    return out


def _natural_key(text: str):
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", str(text))]


def system_order(ratings: pd.DataFrame) -> list[str]:
    """All systems named in ``system_a``/``system_b``, in natural sort order (S2 before S10)."""
    names = set()
    for col in ("system_a", "system_b"):
        if col in ratings:
            names.update(s for s in ratings[col] if s)
    return sorted(names, key=_natural_key)
